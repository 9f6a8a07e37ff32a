/* Hopper (sm_90a) warp-specialized bf16/fp16 GEMMs: a pingpong and a
 * cooperative arrangement of one kernel template.
 *
 * One CTA = one producer warpgroup + two consumer warpgroups, persistent over
 * a grouped tile raster of (tile_m, tile_n, batch).
 *
 *   producer   one thread issues TMA loads of both operands into a STAGES-deep
 *              shared-memory ring (full[]/empty[] mbarriers). It walks the
 *              CTA's tiles in order and runs ahead into the next tiles while
 *              the consumers are in their epilogues: a stage goes back to it
 *              as soon as the wgmmas reading it retire.
 *   pingpong   (GS_PINGPONG_128x128x64) consumer c owns the CTA's tiles c,
 *              c+2, ... with the whole 128x128 fp32 accumulator; the two take
 *              turns on the tensor cores (MATH_TURN barriers), so one runs its
 *              mainloop while the other runs its epilogue.
 *   cooperative (GS_PINGPONG_COOP_256x128x64) both consumers work on every
 *              tile, consumer c on n rows 64c..64c+63 with m64n256 wgmmas.
 *              A 256 (m) x 128 (n) tile moves 48 KB per k-block for 2M MACs,
 *              against 32 KB per 1M MACs for 128x128: the shared-memory
 *              traffic per MAC (TMA writes plus wgmma operand reads) drops by
 *              about a fifth, which is what bounds the 128x128 tile at
 *              large k (H200: 8192^3 went from 0.97 to 1.00 of cuBLAS). No
 *              second consumer hides its epilogue, so half of it is deferred
 *              into the next tile's first k-blocks (deferred_store: H200,
 *              TN 8448x9216, K = 256..2048 +2-4%); at k = 64 it still loses
 *              to the pingpong tile.
 *   pingpong 192 (GS_PINGPONG_192x128x64) the pingpong arrangement on 192 (m)
 *              x 128 (n) tiles: m64n192 wgmmas, 192 accumulators per
 *              consumer thread. Its shared-memory traffic per MAC sits
 *              between the other two tiles' (66 KB per 1M MACs against 80
 *              and 61) while the other consumer still hides its epilogue:
 *              same-run A/B, TN 8448x9216, K = 256..2048, 4-8% faster than
 *              the cooperative tile on the H100 and the H200, 8192^3 TN/NT/TT
 *              +1-5% (bench/NOTES.md, session 17). Only the plain epilogue
 *              (PLAIN_EPILOGUE: beta == 0, host scalars, no bias, m stored
 *              by TMA) and no split-K: can_implement refuses the rest.
 *
 * Epilogue (both arrangements). Each consumer warp stores its own 16 rows of
 * C^T independently: per 16 x 128-byte sub-tile it waits only until the TMA
 * store that last used its staging buffer (one of Cfg::EPI_BUFS per warp)
 * has finished READING it, stages the sub-tile (stmatrix for 16-bit C,
 * st.shared for fp32) and issues its TMA store at once; stores are never
 * waited on for completion (a ragged last m tile is stored with plain
 * predicated stores instead). The staging takes 32 KB in all, which is what
 * leaves the cooperative tile four stages; that tile stores half of a 16-bit
 * beta == 0 tile while the next tile's first k-blocks run (deferred_store). The short-K 128x128 variant
 * (Cfg128x128Short) has a buffer per sub-tile of a 16-bit tile and stages
 * all four before one fence and four back-to-back stores: per sub-tile, the
 * fence and the store issue cost ~300 cycles of a ~550-cycle chain (H200
 * clock64 stamps, bench/NOTES.md session 7). At small k the epilogue is the kernel, and
 * its instruction count is what matters: one unrolled copy per EpiMode
 * (ncu at k = 64, alpha = 1, beta = 0: ~655 instructions per consumer warp
 * and tile, mainloop included, down from ~1440). Then the output stream:
 * evict_first stores for outputs larger than the L2. H200, TN 8448x9216x64:
 * 65.7 -> 46.5 us (0.74 -> 1.04x of cuBLAS).
 *
 * Split-K (deep K, few output tiles; plan_split): when the tiles leave at
 * least half the SMs idle, every tile is cut along k into `splits` units, one
 * per CTA, all resident (cooperative launch), and reduced in a fixed order
 * through the workspace (split_epilogue): bitwise reproducible, alpha/beta and
 * the bias applied once. A separate instantiation (SPLIT), so every other
 * shape runs the unsplit kernel as before.
 *
 * Stream-K (the cooperative tile, many tiles, a ragged last wave at most
 * half full; plan_sk, sk_unit): the whole waves run as above, then the
 * ragged tiles' k-blocks are dealt out evenly over every CTA; a tile's
 * first CTA adds the other CTAs' fp32 partials (workspace, CTA order:
 * bitwise reproducible) and stores it. Another instantiation (SK).
 *
 * Bias (cublasLt BIAS epilogue): C(i, j) += bias[i] after alpha and beta,
 * before rounding, in both epilogues.
 *
 * Orientation. C is column-major (m contiguous). The kernel computes the
 * transposed tile  C^T(n x m) = op(B)^T (n x k) * op(A)^T (k x m): wgmma's M
 * runs along n and its N along m, so each thread's accumulator pairs
 * (d[2i], d[2i+1]) are two consecutive m elements, i.e. adjacent in C's
 * memory. That gives a plain (non-transposed) stmatrix epilogue for every
 * layout; the four cuBLAS layouts only change the operand majors:
 *   wgmma A = op(B)^T : K-major when trans_b == N, MN-major when trans_b == T
 *   wgmma B = op(A)^T : K-major when trans_a == T, MN-major when trans_a == N
 * (TN, PyTorch's nn.Linear forward, is K-major on both sides.)
 */
#include <cstdio>
#include <cstdlib>
#include <cuda.h> /* CUtensorMap and the driver enums: header only, no libcuda link */
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <climits>
#include <type_traits>
#include <stdint.h>

#include "gs_kernels.h"
#include "gs_launch_attrs.cuh"
#include "gs_ptx.cuh"
#include "gs_smem_limit.cuh"

namespace {

/* ---------------------------------------------------------------------------
 * Constants shared by every configuration
 * ------------------------------------------------------------------------- */
constexpr int BLOCK_N = 128;       /* C columns (n) per tile = 2 x wgmma M (64) */
constexpr int BLOCK_K = 64;        /* 64 x 2 bytes = one 128-byte swizzle row */
constexpr int NUM_CONSUMERS = 2;
constexpr int MAX_STAGES = 8;

constexpr int WARPGROUP_THREADS = 128;
constexpr int NUM_THREADS = (1 + NUM_CONSUMERS) * WARPGROUP_THREADS;
constexpr int WARPS_PER_WG = WARPGROUP_THREADS / 32;
constexpr int CONSUMER_WARPS = NUM_CONSUMERS * WARPS_PER_WG;

constexpr int WGMMA_M = 64;
constexpr int WGMMA_K = 16;
constexpr int M_HALVES = BLOCK_N / WGMMA_M;           /* wgmma M blocks per tile (2) */
constexpr int K_STEPS = BLOCK_K / WGMMA_K;            /* wgmmas along k per stage (4) */

/* Register split (setmaxnreg): the producer only loops and issues TMA. */
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = 232;

constexpr int IN_BYTES = 2;
constexpr int SW128_ROW = 128;                        /* bytes per swizzled row */
constexpr int SW128_ATOM = 8 * SW128_ROW;             /* the pattern repeats each 8 rows */
constexpr int MN_CHUNK = SW128_ROW / IN_BYTES;        /* 64 elements: MN-major box width */
constexpr int MN_CHUNK_BYTES = MN_CHUNK * BLOCK_K * IN_BYTES; /* 64 x 64 box, 8 KB */
constexpr int P_TILE_BYTES = BLOCK_N * BLOCK_K * IN_BYTES;    /* op(B)^T tile, 16 KB */

/* Epilogue staging: per consumer warp Cfg::EPI_BUFS buffers of one sub-tile,
 * 16 rows (n; a warp's share of a wgmma M block) x 128 bytes of m (one TMA
 * box with 128B swizzle; 64 bf16/fp16 or 32 fp32 elements). Two buffers let
 * a warp fill one while the store of the other is still reading it: 32 KB
 * in all, independent of the output type, which leaves the ring 192 KB.
 * Four (one stage fewer) measured 3-6% slower for the cooperative tile and
 * 1-3% slower for 128x128 at K >= 512, but faster for 128x128 at short K,
 * where they let the epilogue batch its sub-tiles (Cfg128x128Short). */
constexpr int EPI_ROWS = 16;
constexpr int SUB_BYTES = EPI_ROWS * SW128_ROW;        /* 2 KB */

/* Shared memory a CTA may have on sm_90 (227 KB): the design budget. The
 * device's own limit (smem_optin) is checked in can_implement. */
constexpr int SMEM_BUDGET = 227 * 1024;
constexpr int BARRIER_BYTES = 1024; /* barriers, rounded to the struct alignment */
constexpr int ALIGN_SLACK = 1024;   /* dynamic smem base rounded up to 1024 */

static_assert(BLOCK_K * IN_BYTES == SW128_ROW, "one k-block row must be one 128B swizzle row");
static_assert(BLOCK_N % WGMMA_M == 0, "tile vs wgmma shape");
static_assert(NUM_THREADS == 384, "producer + two consumer warpgroups");
static_assert(PRODUCER_REGS * WARPGROUP_THREADS + NUM_CONSUMERS * CONSUMER_REGS * WARPGROUP_THREADS
                  <= 65536, "register split exceeds the register file");
static_assert(PRODUCER_REGS % 8 == 0 && CONSUMER_REGS % 8 == 0 && CONSUMER_REGS <= 256,
              "setmaxnreg takes multiples of 8 in [24, 256]");
static_assert(WGMMA_M == WARPS_PER_WG * EPI_ROWS, "a warp owns 16 rows of each wgmma M block");
static_assert(SUB_BYTES % SW128_ATOM == 0, "staging buffers keep the 1024-byte swizzle alignment");

/* ---------------------------------------------------------------------------
 * Tile configurations (one per gs_pingpong_config_t)
 *   BM          tile extent along m = wgmma N (128, 192 or 256)
 *   COOP        false: pingpong (each consumer owns whole tiles, both M
 *               blocks); true: cooperative (each consumer one M block of
 *               every tile)
 *   GROUP       tile rows (along m) walked together by the raster
 * ------------------------------------------------------------------------- */
template <int BM, bool COOP, int GROUP, int BUFS>
struct TileConfig {
    static constexpr int BLOCK_M = BM;
    static constexpr bool COOPERATIVE = COOP;
    static constexpr int GROUP_M = GROUP;
    static constexpr int WGMMA_N = BM;
    static constexpr int HALVES_PER_CONSUMER = COOP ? 1 : M_HALVES;
    static constexpr int ACC = WGMMA_M * WGMMA_N / WARPGROUP_THREADS; /* fp32 per M block */
    static constexpr int Q_TILE_BYTES = BLOCK_M * BLOCK_K * IN_BYTES;
    static constexpr int STAGE_BYTES = P_TILE_BYTES + Q_TILE_BYTES;
    /* Warps that release each stage: the consumer warpgroup(s) that read it. */
    static constexpr int STAGE_READERS = (COOP ? NUM_CONSUMERS : 1) * WARPS_PER_WG;
    /* Staging buffers per consumer warp (store_tile). */
    static constexpr int EPI_BUFS = BUFS;
    /* The short-K pingpong variant (Cfg128x128Short): its epilogue is the
     * critical path, so the tile's coordinates are computed while the last
     * wgmmas run (kernel). */
    static constexpr bool SHORT_K = !COOP && BUFS > 2;
    /* Split-K instantiations (plan_split) exist for the 128-wide pingpong
     * and the cooperative tile only; the 192-wide tile is for shapes with
     * many tiles, and can_implement refuses the split ones for it. */
    static constexpr bool SPLITTABLE = !SHORT_K && BM != 192;
    /* The 192-wide tile's epilogue has only the EPI_COPY and EPI_SCALE
     * copies: with 192 accumulators live, each of the others (C read,
     * bias, ragged m) made ptxas spill at the consumers' 232 registers
     * (all of them: 580 bytes of stores), so can_implement takes only
     * calls that need neither (host scalars, beta == 0, no bias, m
     * stored by TMA) for it. */
    static constexpr bool PLAIN_EPILOGUE = BM == 192;
    static constexpr int EPI_BYTES = CONSUMER_WARPS * EPI_BUFS * SUB_BYTES;
    static constexpr int STAGES_FIT =
        (SMEM_BUDGET - EPI_BYTES - BARRIER_BYTES - ALIGN_SLACK) / STAGE_BYTES;
    static constexpr int STAGES = STAGES_FIT > MAX_STAGES ? MAX_STAGES : STAGES_FIT;

    static_assert(BM == 128 || BM == 256 || (BM == 192 && !COOP), "wgmma N of 128, 192 or 256");
    static_assert(BLOCK_M % MN_CHUNK == 0, "MN-major boxes tile the m extent");
    /* 128 fp32 accumulators per consumer thread, 192 for the 192-wide
     * pingpong tile: with the consumers' CONSUMER_REGS that leaves 40 for
     * everything else, which is why that tile has no deferred epilogue. */
    static_assert(HALVES_PER_CONSUMER * ACC == 128 || HALVES_PER_CONSUMER * ACC == 192,
                  "128 (or 192) fp32 accumulators per consumer thread");
    static_assert(STAGES >= 4, "pipeline too shallow");
};

/* 128x128 pingpong: the tensor cores never wait for an epilogue; 6 stages. */
using Cfg128x128 = TileConfig<128, false, 8, 2>;
/* The same tile for short K (at most SHORT_K_MAX_KBLOCKS k-blocks), where
 * the epilogue is the critical path: 4 staging buffers per warp, so a
 * 16-bit tile's four sub-tiles are staged at once and stored back to back
 * after one fence (store_tile); 5 stages. H200, TN 8448x9216, same run:
 * K = 128 1.04 -> 1.12x of cuBLAS, K = 256 1.02 -> 1.05x, K = 64 -1%;
 * as the only 128x128 kernel it made K = 512 / 1024 / 2048 1-3% slower
 * (the stage it costs), hence a variant. H100: within +-1.5%. */
using Cfg128x128Short = TileConfig<128, false, 8, 4>;
/* 256x128 cooperative: less shared-memory traffic per MAC; 4 stages. A group
 * of 4 tile rows spans the same 1024 rows of m as the 128x128 raster (H200,
 * TN/NN 8192^3 and the prefill set: about 0.7% faster than a group of 8, at
 * the edge of run-to-run noise; 16 and the whole m extent were slower). */
using Cfg256x128 = TileConfig<256, true, 4, 2>;
/* 192x128 pingpong: each consumer owns whole 192 (m) x 128 (n) tiles (two
 * m64n192 wgmmas per k-step, 192 accumulators per thread), so the epilogue
 * hides behind the other consumer's mainloop as on the 128x128 tile, while
 * the shared-memory traffic per MAC (TMA writes 40 KB per 1.5M MACs, wgmma
 * reads 8 KB per 196K) is 66 KB per 1M MACs: between the 128x128 tile's 80
 * and the cooperative tile's 61 (bench/NOTES.md, session 11's budget and
 * session 17). 40 KB stages: 4 of them next to the 32 KB of staging. A
 * group of 6 tile rows spans 1152 rows of m (the others: 1024). */
using Cfg192x128 = TileConfig<192, false, 6, 2>;

template <typename Cfg>
struct SharedStorage {
    static constexpr int STAGES = Cfg::STAGES;
    struct alignas(1024) Stage {
        /* Both operand tiles 1024-aligned: the 128B swizzle (TMA and wgmma)
         * is a function of address bits 4-9. */
        alignas(1024) uint8_t p[P_TILE_BYTES];      /* wgmma A: op(B)^T, n x k */
        alignas(1024) uint8_t q[Cfg::Q_TILE_BYTES]; /* wgmma B: op(A)^T, k x m */
    };
    Stage stage[STAGES];
    alignas(1024) uint8_t c_sub[CONSUMER_WARPS][Cfg::EPI_BUFS][SUB_BYTES]; /* per consumer warp */
    alignas(8) uint64_t full[STAGES];   /* TMA bytes landed: producer -> consumer */
    alignas(8) uint64_t empty[STAGES];  /* wgmma done reading: consumer -> producer */
    alignas(8) uint64_t c_full[CONSUMER_WARPS]; /* beta != 0: C sub-tile landed in c_sub */
    alignas(8) uint64_t red_full; /* split-K: the slices to reduce landed in the stage ring */
};

template <typename Cfg>
constexpr int smem_bytes()
{
    return (int)sizeof(SharedStorage<Cfg>) + ALIGN_SLACK;
}

static_assert(smem_bytes<Cfg128x128>() <= SMEM_BUDGET && smem_bytes<Cfg256x128>() <= SMEM_BUDGET
                  && smem_bytes<Cfg128x128Short>() <= SMEM_BUDGET
                  && smem_bytes<Cfg192x128>() <= SMEM_BUDGET,
              "shared memory over budget");

enum Role { PRODUCER = 0, CONSUMER0 = 1, CONSUMER1 = 2 };

/* Named barrier ids (0 is __syncthreads).
 * MATH_TURN_c (pingpong only): "consumer c may start its mainloop", 256
 *   threads (the waiting warpgroup syncs, the other arrives once its last
 *   wgmmas are issued). It keeps one warpgroup on the tensor cores while the
 *   other runs its epilogue. The epilogue itself is per warp and needs no barrier. */
enum NamedBarrier {
    BAR_MATH_TURN0 = 1,
    BAR_MATH_TURN1 = 2,
    /* SPLIT_c (split-K): the threads that hold one unit's accumulators
     * (pingpong: consumer c's 128; cooperative: both consumers' 256 on
     * SPLIT0) meet around the tile semaphore. */
    BAR_SPLIT0 = 3,
    BAR_SPLIT1 = 4,
};

/* Pingpong tiles of at least this many k-blocks hand the tensor cores to the
 * other consumer before waiting for their last wgmmas (H200, TN
 * 8448x9216xK, same-run A/B: K = 512 / 1024 / 2048 +1 / +2.5 / +1.5%;
 * K = 64 / 128 / 256 5 / 5 / 2% slower, so those hand over after the wait). */
constexpr int EARLY_TURN_MIN_KBLOCKS = 8;

/* Split-K: most units per tile (each slot's slice of a reduction takes up to
 * 16 bytes of rounding in the stage ring). */
constexpr int SPLIT_MAX_SLOTS = 128;

/* Params::c_flags.
 * C_EVICT_FIRST: C is larger than the whole L2: its stores carry an
 *   evict_first policy, so the stream of output lines is what L2 gives up
 *   first, not the operand strips every tile re-reads (H200, TN
 *   8448x9216x64-256, 156 MB of C: 4-8% faster). Outputs that fit keep the
 *   normal policy, so whatever reads C next can still find it in L2.
 * C_DEFER: cooperative tiles with 16-bit C, beta == 0 and no bias store half
 *   of their epilogue during the next tile's first k-blocks (deferred_store);
 *   GEMMSHIM_PP_DEFER=0 clears it (developer A/B switch). */
enum CFlags { C_EVICT_FIRST = 1, C_DEFER = 2 };

/* Bias vector element type (Params::bias_kind). */
enum BiasKind { BIAS_NONE = 0, BIAS_F32 = 1, BIAS_F16 = 2, BIAS_BF16 = 3 };

struct Params {
    int m, n, k;
    int tiles_m, tiles_n, k_blocks;
    int total_tiles; /* tiles_m * tiles_n * batch */
    int group_m;     /* raster: tile rows (along m) walked together */
    float alpha, beta;
    const float *alpha_ptr; /* non-null: scalars in device memory */
    const float *beta_ptr;
    /* TMA stores write whole 16-byte units: when m * sizeof(TOut) is not a
     * multiple of 16, the last m tile would spill into C's ld padding (user
     * memory), so that tile is stored with plain predicated stores. */
    int m_ragged;
    void *c;
    long long ldc, stride_c; /* elements */
    /* cublasLt BIAS epilogue: C(i, j) += bias[i] after alpha/beta. */
    const void *bias;
    int bias_kind; /* BiasKind */
    /* Split-K (kernel instantiations with SPLIT only): `splits` units per
     * tile, unit w = split * total_tiles + tile, split s covering k-blocks
     * [s * k_blocks / splits, (s + 1) * k_blocks / splits). One unit per CTA
     * (the grid is total_units, co-resident: cooperative launch). */
    /* Stream-K (SK instantiations only, never SPLIT; sk_unit): tiles
     * [0, sk_dp_tiles) whole, the k-blocks of the others in sk_iters, cut
     * into one range per CTA; counters[b] is CTA b's "partial stored" flag and
     * partials slot b its partial tile. They share the split fields' words:
     * two more ints made ptxas spill 52-56 bytes in the 16-bit 128x128
     * kernels, which read neither (as C_DEFER did, below). */
    union {
        int splits;
        int sk_dp_tiles;
    };
    union {
        int total_units;
        int sk_iters;
    };
    /* CFlags: how C is stored. One field for both flags: a separate int for
     * C_DEFER made ptxas spill 52-56 bytes in the 16-bit 128x128 kernels,
     * which never read it. */
    int c_flags;
    int *counters;   /* workspace: one semaphore per tile, zero between calls */
    float *partials; /* workspace + GS_WS_FLAG_BYTES: [tile][split][BLOCK_N][BLOCK_M] fp32 */
};

/* Which tile a unit of work is and its k-block range. Without split-K a unit
 * is a whole tile. */
struct Unit {
    int t, s, kb0, kb1;
};

template <bool SPLIT>
__device__ __forceinline__ Unit unit_of(const Params &p, int w)
{
    Unit u;
    if (SPLIT) {
        u.s = w / p.total_tiles;
        u.t = w - u.s * p.total_tiles;
        u.kb0 = (int)((long long)u.s * p.k_blocks / p.splits);
        u.kb1 = (int)((long long)(u.s + 1) * p.k_blocks / p.splits);
    } else {
        u.t = w;
        u.s = 0;
        u.kb0 = 0;
        u.kb1 = p.k_blocks;
    }
    return u;
}

/* Stream-K (the cooperative tile; plan_sk): a persistent grid of P CTAs
 * over T = w * P + r tiles leaves the last wave ragged (r of P SMs busy;
 * 4096x2304 on 256x128 tiles: 288 tiles, 3 wave times for 2.18 waves of
 * work). So the first sk_dp_tiles tiles run whole, round robin as without
 * it (a multiple of P: every CTA the same number), and the k-blocks of the
 * other S tiles, in (tile, k-block) order, are cut into P equal ranges, CTA
 * b taking range b: every CTA ends at the same k-block count. plan_sk deals
 * out only the r ragged tiles (S = r) where a range is long enough, else
 * the last whole wave too (S = P + r, a range at least a tile long): the
 * fewer tiles are dealt out, the fewer CTAs stream the same operands at
 * different k offsets, which the L2 does not absorb (bench/NOTES.md,
 * session 15: S = P + r over K = 14336 ran at 0.62 of whole tiles).
 * A range is at most a tile's tail (its first piece), whole tiles, and a
 * tile's head (k-block 0 on, its last piece); a range shorter than a tile
 * may be a single middle piece. A piece that does not start a tile is the
 * CTA's first: its CTA stores the fp32 partial in its own slot and raises
 * its flag. The head's CTA waits for the flags of the CTAs after it whose
 * ranges start inside the tile, adds their partials to its accumulators in
 * CTA order (bitwise reproducible: the cut is fixed by the problem and the
 * grid) and stores the tile as usual. No deadlock: a CTA waits only at its
 * last piece, for pieces that other CTAs make first, before any wait of
 * theirs; all CTAs are resident (cooperative launch, one per SM). j: the
 * CTA's j-th unit; false past the last. */
__device__ __forceinline__ bool sk_unit(const Params &p, int j, Unit &u)
{
    const int dp = p.sk_dp_tiles / (int)gridDim.x;
    u.s = 0;
    if (j < dp) {
        u.t = (int)blockIdx.x + j * (int)gridDim.x;
        u.kb0 = 0;
        u.kb1 = p.k_blocks;
        return true;
    }
    const long long kb = p.k_blocks;
    const long long end = (long long)(blockIdx.x + 1) * p.sk_iters / gridDim.x;
    long long pos = (long long)blockIdx.x * p.sk_iters / gridDim.x;
    for (int i = dp; i < j; ++i) /* the start of the range's next tile */
        pos = (pos / kb + 1) * kb;
    if (pos >= end)
        return false;
    const long long tl = pos / kb;
    u.t = p.sk_dp_tiles + (int)tl;
    u.kb0 = (int)(pos - tl * kb);
    u.kb1 = (int)((end < (tl + 1) * kb ? end : (tl + 1) * kb) - tl * kb);
    return true;
}

/* The CTA's unit w (its j-th): stream-K's, split-K's or a whole tile;
 * false past the CTA's last stream-K unit. */
template <bool SPLIT, bool SK>
__device__ __forceinline__ bool unit_at(const Params &p, int w, int j, Unit &u)
{
    if constexpr (SK)
        return sk_unit(p, j, u);
    u = unit_of<SPLIT>(p, w);
    return true;
}

__device__ __forceinline__ float load_bias(const Params &p, int i)
{
    switch (p.bias_kind) {
    case BIAS_F32: return static_cast<const float *>(p.bias)[i];
    case BIAS_F16: return __half2float(static_cast<const __half *>(p.bias)[i]);
    case BIAS_BF16: return __bfloat162float(static_cast<const __nv_bfloat16 *>(p.bias)[i]);
    default: return 0.0f;
    }
}

/* The L2 policy of the call's C stores (C_EVICT_FIRST). */
__device__ __forceinline__ uint64_t c_store_policy(const Params &p)
{
    return (p.c_flags & C_EVICT_FIRST) ? createpolicy_evict_first() : createpolicy_evict_normal();
}

/* Ring position `it` counts k-blocks issued by this CTA across its tiles. */
template <int STAGES>
__device__ __forceinline__ int ring_stage(uint32_t it) { return (int)(it % STAGES); }

/* mbarrier phase parity of that use: flips every time the ring wraps. */
template <int STAGES>
__device__ __forceinline__ uint32_t ring_phase(uint32_t it) { return (it / STAGES) & 1u; }

struct TileCoord {
    int m0, n0, b;
};

/* Grouped raster: GROUP_M tile rows (along m) are walked together down n, so
 * the tiles in flight across the grid share A strips and B strips in L2.
 * Unsigned divisions: every operand is non-negative, and a signed division
 * costs a sign fix-up on top (this sits at the head of every epilogue). */
template <typename Cfg>
__device__ __forceinline__ TileCoord tile_coord(const Params &p, int t)
{
    const unsigned per_batch = (unsigned)(p.tiles_m * p.tiles_n);
    const unsigned b = (unsigned)t / per_batch;
    const unsigned r = (unsigned)t - b * per_batch;
    const unsigned span = (unsigned)(p.group_m * p.tiles_n);
    const unsigned g = r / span;
    const unsigned first_m = g * (unsigned)p.group_m;
    const unsigned rows = min((unsigned)p.tiles_m - first_m, (unsigned)p.group_m);
    const unsigned rr = r - g * span;
    const unsigned col = rr / rows;
    TileCoord tc;
    tc.m0 = (int)((first_m + (rr - col * rows)) * Cfg::BLOCK_M);
    tc.n0 = (int)(col * BLOCK_N);
    tc.b = (int)b;
    return tc;
}

/* wgmma descriptors for one k-step of a stage.
 * K-major tile (rows = MN, 128-byte rows of k): 8-row atoms SBO = 1024 apart,
 *   a k-step moves 16 elements = 32 bytes inside the swizzled row; the second
 *   wgmma M block of op(B)^T is 64 rows = 8 KB further.
 * MN-major tile (64-wide MN chunks, each 64 k-rows of 128 bytes): 8-k-row
 *   atoms SBO = 1024 apart, MN chunks LBO = 8 KB apart (a wgmma N of 256
 *   spans four), a k-step is 16 rows = 2 KB. */
template <bool K_MAJOR>
__device__ __forceinline__ uint64_t operand_desc(uint32_t tile_addr, int mn_block64, int kstep)
{
    if (K_MAJOR) {
        return wgmma_desc_sw128(tile_addr + mn_block64 * 64 * SW128_ROW + kstep * WGMMA_K * IN_BYTES,
                                16, SW128_ATOM);
    } else {
        return wgmma_desc_sw128(tile_addr + mn_block64 * MN_CHUNK_BYTES
                                    + kstep * WGMMA_K * SW128_ROW,
                                MN_CHUNK_BYTES, SW128_ATOM);
    }
}

/* Byte offset of element (row, col) of a 16-row staging sub-tile: the 16-byte
 * unit index is XORed with row % 8 (TMA SWIZZLE_128B), which also spreads
 * the 8 rows a stmatrix / st.shared touches over all 32 banks. */
template <int OUT_BYTES>
__device__ __forceinline__ uint32_t sub_offset(int row, int col)
{
    const int byte_in_row = col * OUT_BYTES;
    const int unit = (byte_in_row >> 4) ^ (row & 7);
    return (uint32_t)(row * SW128_ROW + unit * 16 + (byte_in_row & 15));
}

template <typename TIn, int N> struct Mma;
template <> struct Mma<__nv_bfloat16, 128> {
    template <int TA, int TB>
    static __device__ __forceinline__ void run(float *d, uint64_t a, uint64_t b, int scale_d)
    {
        wgmma_m64n128k16_f32_bf16<TA, TB>(d, a, b, scale_d);
    }
};
template <> struct Mma<__half, 128> {
    template <int TA, int TB>
    static __device__ __forceinline__ void run(float *d, uint64_t a, uint64_t b, int scale_d)
    {
        wgmma_m64n128k16_f32_f16<TA, TB>(d, a, b, scale_d);
    }
};
template <> struct Mma<__nv_bfloat16, 192> {
    template <int TA, int TB>
    static __device__ __forceinline__ void run(float *d, uint64_t a, uint64_t b, int scale_d)
    {
        wgmma_m64n192k16_f32_bf16<TA, TB>(d, a, b, scale_d);
    }
};
template <> struct Mma<__half, 192> {
    template <int TA, int TB>
    static __device__ __forceinline__ void run(float *d, uint64_t a, uint64_t b, int scale_d)
    {
        wgmma_m64n192k16_f32_f16<TA, TB>(d, a, b, scale_d);
    }
};
template <> struct Mma<__nv_bfloat16, 256> {
    template <int TA, int TB>
    static __device__ __forceinline__ void run(float *d, uint64_t a, uint64_t b, int scale_d)
    {
        wgmma_m64n256k16_f32_bf16<TA, TB>(d, a, b, scale_d);
    }
};
template <> struct Mma<__half, 256> {
    template <int TA, int TB>
    static __device__ __forceinline__ void run(float *d, uint64_t a, uint64_t b, int scale_d)
    {
        wgmma_m64n256k16_f32_f16<TA, TB>(d, a, b, scale_d);
    }
};

__device__ __forceinline__ uint32_t pack2(float lo, float hi, __nv_bfloat16 *)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
__device__ __forceinline__ uint32_t pack2(float lo, float hi, __half *)
{
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
__device__ __forceinline__ float2 unpack2(uint32_t u, __nv_bfloat16 *)
{
    __nv_bfloat162 v = *reinterpret_cast<__nv_bfloat162 *>(&u);
    return __bfloat1622float2(v);
}
__device__ __forceinline__ float2 unpack2(uint32_t u, __half *)
{
    __half2 v = *reinterpret_cast<__half2 *>(&u);
    return __half22float2(v);
}

__device__ __forceinline__ int lane_id(void) { return (int)(threadIdx.x % 32); }

/* Per-warp epilogue state, kept across tiles. */
struct EpiState {
    uint32_t sub;     /* sub-tiles this warp has staged: picks the buffer */
    uint32_t c_loads; /* C sub-tile loads: c_full parity */
};

/* What the epilogue computes per element. Each mode is its own unrolled
 * copy, chosen once per tile from the call's scalars: a runtime test inside
 * the unrolled loops is if-converted into predicated instructions that issue
 * whatever the predicate. (H200, ncu at k = 64: with one copy, a beta == 0
 * tile still issued the whole C-read path, ~1400 instructions per warp and
 * tile; that, not the stores, held small k at 0.74x of cuBLAS.) */
enum EpiMode {
    EPI_COPY,  /* alpha == 1, beta == 0, no bias: convert and store */
    EPI_SCALE, /* beta == 0, no bias: alpha * acc */
    EPI_BETA,  /* beta != 0, no bias: alpha * acc + beta * C */
    EPI_BIAS,  /* beta == 0 with a bias (nn.Linear through cublasLt): alpha * acc + bias */
    EPI_BIAS_BETA, /* beta != 0 with a bias: alpha * acc + beta * C + bias */
    /* The ragged last m tile (m_ragged, see Params): plain predicated stores,
     * beta and the bias tested at run time. A rare tile, so one copy serves
     * every mode; and the other copies carry no "is this tile ragged" test
     * at all. (A runtime `direct` flag tested per sub-tile made ptxas keep
     * ~60 copies of it as bits of two registers, rebuilt by a chain of ~130
     * dependent instructions at the head of every epilogue: about half of
     * the ~1000-cycle run-up the session-7 clock64 stamps measured.) */
    EPI_RAGGED,
};

/* One M block (64 rows of C^T) of a finished tile: this warp's 16 rows,
 * sub-tile by sub-tile along m. acc is the M block's accumulator (ACC fp32
 * per thread, wgmma m64nN layout: warp w holds rows 16w..16w+15; lane l holds
 * row l/4 (regs 4j, 4j+1) and row l/4 + 8 (regs 4j+2, 4j+3) at columns
 * 8j + 2(l%4) + {0,1}; rows are n, columns m). */
template <typename Cfg, typename TOut, EpiMode MODE, bool MASKED, bool BATCH>
__device__ __forceinline__ void store_m_block(float (&acc)[Cfg::ACC], const Params &p,
                                              const TileCoord &tc, int row0, int j0,
                                              const CUtensorMap *tmap_c,
                                              uint8_t (*bufs)[SUB_BYTES], uint64_t *c_full,
                                              EpiState &st, float alpha, float beta,
                                              uint64_t policy, uint32_t chunk_mask)
{
    constexpr int OUT_BYTES = (int)sizeof(TOut);
    constexpr int CHUNK_COLS = SW128_ROW / OUT_BYTES; /* m per sub-tile */
    constexpr int CHUNKS = Cfg::BLOCK_M / CHUNK_COLS;
    const int lane = lane_id();
    constexpr bool direct = MODE == EPI_RAGGED;
    static_assert(!(direct && BATCH), "the ragged tile is stored sub-tile by sub-tile");
    /* Compile-time constants except in the ragged tile's copy. */
    const bool read_c = direct ? beta != 0.0f : (MODE == EPI_BETA || MODE == EPI_BIAS_BETA);
    const bool has_bias =
        direct ? p.bias_kind != BIAS_NONE : (MODE == EPI_BIAS || MODE == EPI_BIAS_BETA);
#pragma unroll
    for (int ch = 0; ch < CHUNKS; ++ch) {
        if constexpr (MASKED) /* a split-K slice: only its sub-tiles */
            if (!((chunk_mask >> ch) & 1u))
                continue;
        /* BATCH: the tile's sub-tile j0 + ch has a buffer of its own, free
         * (store_tile waited), and store_tile stores them all. */
        uint8_t *buf = BATCH ? bufs[j0 + ch] : bufs[st.sub % Cfg::EPI_BUFS];
        const uint32_t buf_s = smem_u32(buf);
        if (!BATCH)
            ++st.sub;
        const int gm0 = tc.m0 + ch * CHUNK_COLS;
        /* The buffer is free once the store issued EPI_BUFS sub-tiles ago has
         * read it (bulk groups are per thread: lane 0 issued it) and every
         * lane is past its plain accesses to it (__syncwarp). A ragged tile's
         * sub-tiles commit no bulk group, so "all but EPI_BUFS - 1 groups"
         * would no longer name the store that last read this buffer: there
         * every store must have read its buffer (bug: a coop fp32-output
         * sweep case with m = 5582 overwrote a buffer a store was reading;
         * the results differed between two identical calls). */
        if (!BATCH) {
            if (lane == 0) {
                if constexpr (direct)
                    tma_store_wait_read<0>();
                else
                    tma_store_wait_read<Cfg::EPI_BUFS - 1>();
            }
            __syncwarp();
        }
        if (read_c) {
            /* C is read only here: beta == 0 never touches it (it may hold NaN). */
            if (lane == 0) {
                mbarrier_arrive_expect_tx(c_full, SUB_BYTES);
                tma_load_3d(buf, tmap_c, c_full, gm0, row0, tc.b);
            }
            mbarrier_wait_parity(c_full, st.c_loads & 1u);
            ++st.c_loads;
        }
        if constexpr (MODE != EPI_COPY) {
#pragma unroll
            for (int jl = 0; jl < CHUNK_COLS / 8; ++jl) {
                const int j = ch * (CHUNK_COLS / 8) + jl;
#pragma unroll
                for (int q = 0; q < 2; ++q) {
                    float &v0 = acc[4 * j + 2 * q];
                    float &v1 = acc[4 * j + 2 * q + 1];
                    v0 *= alpha;
                    v1 *= alpha;
                    if (read_c) {
                        const uint32_t src = buf_s + sub_offset<OUT_BYTES>(lane / 4 + 8 * q,
                                                                            8 * jl + 2 * (lane % 4));
                        float2 cv;
                        if constexpr (OUT_BYTES == 4)
                            cv = ld_shared_v2_f32(src);
                        else
                            cv = unpack2(ld_shared_b32(src), (TOut *)nullptr);
                        v0 = fmaf(beta, cv.x, v0);
                        v1 = fmaf(beta, cv.y, v1);
                    }
                    if (has_bias) {
                        /* Columns past m (ragged last tile) are never stored. */
                        const int gm = gm0 + 8 * jl + 2 * (lane % 4);
                        v0 += gm < p.m ? load_bias(p, gm) : 0.0f;
                        v1 += gm + 1 < p.m ? load_bias(p, gm + 1) : 0.0f;
                    }
                }
            }
        }
        /* The writes below overwrite C values other lanes read above. */
        if (read_c)
            __syncwarp();
        if constexpr (OUT_BYTES == 4) {
#pragma unroll
            for (int jl = 0; jl < CHUNK_COLS / 8; ++jl)
#pragma unroll
                for (int q = 0; q < 2; ++q) {
                    const int j = ch * (CHUNK_COLS / 8) + jl;
                    st_shared_v2_f32(buf_s + sub_offset<4>(lane / 4 + 8 * q, 8 * jl + 2 * (lane % 4)),
                                     acc[4 * j + 2 * q], acc[4 * j + 2 * q + 1]);
                }
        } else {
            /* One stmatrix.x4 stores a 16(n) x 16(m) block: matrices
             * (rows 0-7 | 8-15) x (cols 0-7 | 8-15); lanes 8i..8i+7
             * address the rows of matrix i. */
            const int mat = lane / 8;
            const int row = (lane % 8) + 8 * (mat & 1);
#pragma unroll
            for (int jl = 0; jl < CHUNK_COLS / 16; ++jl) {
                const float *a = &acc[8 * (ch * (CHUNK_COLS / 16) + jl)];
                stmatrix_x4(buf + sub_offset<OUT_BYTES>(row, 16 * jl + 8 * (mat >> 1)),
                            pack2(a[0], a[1], (TOut *)nullptr), pack2(a[2], a[3], (TOut *)nullptr),
                            pack2(a[4], a[5], (TOut *)nullptr), pack2(a[6], a[7], (TOut *)nullptr));
            }
        }
        if constexpr (BATCH)
            continue;
        /* Generic-proxy writes -> visible to the TMA store (async proxy). */
        fence_proxy_async_shared_cta();
        __syncwarp();
        if constexpr (!direct) {
            if (lane == 0) {
                tma_store_3d_hint(tmap_c, buf, gm0, row0, tc.b, policy);
                tma_store_commit_group();
            }
        } else {
            /* Ragged last m tile: exact, predicated stores (coalesced along m),
             * reading the staging buffer through a generic pointer: a rare
             * tile, left simple. */
            TOut *cg = static_cast<TOut *>(p.c) + (long long)tc.b * p.stride_c;
#pragma unroll 4
            for (int idx = lane; idx < EPI_ROWS * CHUNK_COLS; idx += 32) {
                const int r = idx / CHUNK_COLS, col = idx % CHUNK_COLS;
                const int gm = gm0 + col, gn = row0 + r;
                if (gm < p.m && gn < p.n)
                    cg[(long long)gn * p.ldc + gm] =
                        *reinterpret_cast<const TOut *>(buf + sub_offset<OUT_BYTES>(r, col));
            }
        }
    }
}

/* A finished tile: the consumer's M blocks, one mode copy. h is a
 * compile-time index after unrolling, so the accumulators stay in registers.
 * MASKED (split-K): only the sub-tiles whose bit h * CHUNKS + ch is set. */
template <typename Cfg, typename TOut, EpiMode MODE, bool MASKED>
__device__ __forceinline__ void store_tile(float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                           const Params &p, const TileCoord &tc, int c, int warp,
                                           const CUtensorMap *tmap_c, uint8_t (*bufs)[SUB_BYTES],
                                           uint64_t *c_full, EpiState &st, float alpha, float beta,
                                           uint32_t mask)
{
    constexpr int CHUNK_COLS = SW128_ROW / (int)sizeof(TOut);
    constexpr int CHUNKS = Cfg::BLOCK_M / CHUNK_COLS;
    constexpr int HPC = Cfg::HALVES_PER_CONSUMER;
    /* The call's L2 policy for every TMA store of the tile. */
    const uint64_t policy = c_store_policy(p);
    /* This warp's first C^T row (n) of each of the consumer's M blocks. */
    int row0[HPC];
#pragma unroll
    for (int h = 0; h < HPC; ++h)
        row0[h] = tc.n0 + (Cfg::COOPERATIVE ? c : h) * WGMMA_M + warp * EPI_ROWS;
    /* A buffer per sub-tile (pingpong, 16-bit C, TMA-stored tile): stage
     * them all, then one fence and the stores back to back. H200 clock64
     * stamps, TN 8448x9216, one sub-tile at a time: per sub-tile ~85
     * cycles of buffer wait, ~50-200 of proxy fence and ~200-250 of TMA
     * store issue by lane 0 (bench/NOTES.md, session 7). */
    constexpr bool BATCHABLE = !MASKED && MODE != EPI_RAGGED && HPC * CHUNKS <= Cfg::EPI_BUFS;
    if constexpr (BATCHABLE) {
        if (lane_id() == 0)
            tma_store_wait_read<0>(); /* the previous tile's stores have read every buffer */
        __syncwarp();
#pragma unroll
        for (int h = 0; h < HPC; ++h)
            store_m_block<Cfg, TOut, MODE, MASKED, true>(acc[h], p, tc, row0[h], h * CHUNKS, tmap_c,
                                                         bufs, c_full, st, alpha, beta, policy,
                                                         mask >> (h * CHUNKS));
        /* Generic-proxy writes -> visible to the TMA stores (async proxy). */
        fence_proxy_async_shared_cta();
        __syncwarp();
        if (lane_id() == 0) {
#pragma unroll
            for (int h = 0; h < HPC; ++h)
#pragma unroll
                for (int ch = 0; ch < CHUNKS; ++ch)
                    tma_store_3d_hint(tmap_c, bufs[h * CHUNKS + ch], tc.m0 + ch * CHUNK_COLS,
                                      row0[h], tc.b, policy);
            tma_store_commit_group();
        }
    } else {
#pragma unroll
        for (int h = 0; h < HPC; ++h)
            store_m_block<Cfg, TOut, MODE, MASKED, false>(acc[h], p, tc, row0[h], h * CHUNKS,
                                                          tmap_c, bufs, c_full, st, alpha, beta,
                                                          policy, mask >> (h * CHUNKS));
    }
}

/* The epilogue mode for this call's scalars and bias, picked once per tile
 * by uniform branches (each mode is its own unrolled copy, see EpiMode). */
template <typename Cfg, typename TOut, bool MASKED>
__device__ __forceinline__ void store_tile_any(float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                               const Params &p, const TileCoord &tc, int c,
                                               int warp, const CUtensorMap *tmap_c,
                                               uint8_t (*bufs)[SUB_BYTES], uint64_t *c_full,
                                               EpiState &st, float alpha, float beta,
                                               uint32_t mask)
{
    if constexpr (Cfg::PLAIN_EPILOGUE) {
        if (alpha != 1.0f)
            store_tile<Cfg, TOut, EPI_SCALE, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full,
                                                     st, alpha, beta, mask);
        else
            store_tile<Cfg, TOut, EPI_COPY, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full,
                                                    st, alpha, beta, mask);
        return;
    }
    if (p.m_ragged && tc.m0 + Cfg::BLOCK_M > p.m)
        store_tile<Cfg, TOut, EPI_RAGGED, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                                  alpha, beta, mask);
    else if (p.bias_kind != BIAS_NONE && beta != 0.0f)
        store_tile<Cfg, TOut, EPI_BIAS_BETA, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                                     alpha, beta, mask);
    else if (p.bias_kind != BIAS_NONE)
        store_tile<Cfg, TOut, EPI_BIAS, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                                alpha, beta, mask);
    else if (beta != 0.0f)
        store_tile<Cfg, TOut, EPI_BETA, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                                alpha, beta, mask);
    else if (alpha != 1.0f)
        store_tile<Cfg, TOut, EPI_SCALE, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                                 alpha, beta, mask);
    else
        store_tile<Cfg, TOut, EPI_COPY, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                                alpha, beta, mask);
}

/* ---------------------------------------------------------------------------
 * Deferred epilogue (cooperative tile, 16-bit C, beta == 0, no bias, not the
 * ragged m tile). The cooperative tile has no second consumer to hide its
 * epilogue behind: both warpgroups stop issuing wgmmas while they stage and
 * store the tile (H200, TN 8448x9216x2048: 1.66 us per 21 us tile, bench/
 * NOTES.md session 8), and per warp the third and fourth sub-tiles wait for
 * the TMA stores of the first two to finish reading their staging buffers.
 * So a warp stores its first Defer::NOW sub-tiles at once (their buffer
 * waits are normally satisfied already: the previous tile's deferred stores
 * were issued a k-block or more ago), rounds the rest to 16 bits into
 * registers of their own, starts the next tile's mainloop, and stores one
 * of them after each of that tile's first k-blocks is issued, while those
 * wgmmas run (by then the buffers are free, too). Deferring the whole tile
 * would keep 64 packed registers live next to the 128 accumulators: ptxas
 * spilled ~280 bytes at the consumers' 232 registers (setmaxnreg; the
 * consumer code is compiled for them). Same products, same rounding
 * (acc or alpha * acc, round to nearest) as store_m_block's EPI_COPY /
 * EPI_SCALE: bitwise the same C.
 * ------------------------------------------------------------------------- */
template <typename Cfg, typename TOut>
struct Defer {
    static constexpr int CHUNK_COLS = SW128_ROW / (int)sizeof(TOut);
    static constexpr int CHUNKS = Cfg::BLOCK_M / CHUNK_COLS; /* sub-tiles per warp and tile */
    static constexpr int NOW = CHUNKS / 2;                   /* stored at the tile's end */
    static constexpr int LATER = CHUNKS - NOW;               /* stored in the next mainloop */
    static constexpr int STM = CHUNK_COLS / 16;              /* stmatrix.x4 per sub-tile */
    static constexpr int PK = LATER * STM * 4;               /* packed registers */
};

/* SCALE: EPI_SCALE's alpha * acc, else EPI_COPY's acc as it is (no multiply
 * by 1, which would flush subnormals under -ftz). */
template <typename Cfg, typename TOut, bool SCALE>
__device__ __forceinline__ void deferred_pack(const float (&acc)[Cfg::ACC],
                                              uint32_t (&pk)[Defer<Cfg, TOut>::PK], float alpha)
{
    constexpr int BASE = Defer<Cfg, TOut>::NOW * Defer<Cfg, TOut>::STM * 4;
#pragma unroll
    for (int r = 0; r < Defer<Cfg, TOut>::PK; ++r) {
        const float lo = acc[2 * (BASE + r)], hi = acc[2 * (BASE + r) + 1];
        pk[r] = SCALE ? pack2(alpha * lo, alpha * hi, (TOut *)nullptr) : pack2(lo, hi, (TOut *)nullptr);
    }
}

/* Where a deferred tile goes: the tile's m origin, this warp's first row (n)
 * of its consumer's M block, the batch. */
struct DeferredTile {
    int m0, row0, b;
};

/* Stage and store the packed sub-tile NOW + D (store_m_block's buffer
 * discipline: one bulk group per sub-tile, buffer st.sub % EPI_BUFS free once
 * at most EPI_BUFS - 1 groups are pending). */
template <typename Cfg, typename TOut, int D>
__device__ __forceinline__ void deferred_store(const uint32_t (&pk)[Defer<Cfg, TOut>::PK],
                                               const DeferredTile &dt, const Params &p,
                                               const CUtensorMap *tmap_c,
                                               uint8_t (*bufs)[SUB_BYTES], EpiState &st)
{
    using DF = Defer<Cfg, TOut>;
    static_assert(sizeof(TOut) == 2, "stmatrix stores 16-bit elements");
    static_assert(D < DF::LATER, "a deferred sub-tile");
    const int lane = lane_id();
    const int mat = lane / 8;
    const int row = (lane % 8) + 8 * (mat & 1);
    uint8_t *buf = bufs[st.sub % Cfg::EPI_BUFS];
    ++st.sub;
    if (lane == 0)
        tma_store_wait_read<Cfg::EPI_BUFS - 1>();
    __syncwarp();
#pragma unroll
    for (int jl = 0; jl < DF::STM; ++jl) {
        const int r = 4 * (D * DF::STM + jl);
        stmatrix_x4(buf + sub_offset<2>(row, 16 * jl + 8 * (mat >> 1)), pk[r], pk[r + 1], pk[r + 2],
                    pk[r + 3]);
    }
    fence_proxy_async_shared_cta();
    __syncwarp();
    if (lane == 0) {
        tma_store_3d_hint(tmap_c, buf, dt.m0 + (DF::NOW + D) * DF::CHUNK_COLS, dt.row0, dt.b,
                          c_store_policy(p));
        tma_store_commit_group();
    }
}

/* The next pending sub-tile (pend of them left), if any. */
template <typename Cfg, typename TOut>
__device__ __forceinline__ void deferred_step(const uint32_t (&pk)[Defer<Cfg, TOut>::PK], int &pend,
                                              const DeferredTile &dt, const Params &p,
                                              const CUtensorMap *tmap_c,
                                              uint8_t (*bufs)[SUB_BYTES], EpiState &st)
{
    constexpr int LATER = Defer<Cfg, TOut>::LATER;
    static_assert(LATER >= 1 && LATER <= 3, "deferred_step names up to three sub-tiles");
    if (pend == LATER)
        deferred_store<Cfg, TOut, 0>(pk, dt, p, tmap_c, bufs, st);
    if constexpr (LATER >= 2)
        if (pend == LATER - 1)
            deferred_store<Cfg, TOut, 1>(pk, dt, p, tmap_c, bufs, st);
    if constexpr (LATER >= 3)
        if (pend == LATER - 2)
            deferred_store<Cfg, TOut, 2>(pk, dt, p, tmap_c, bufs, st);
    if (pend > 0)
        --pend;
}

/* ---------------------------------------------------------------------------
 * Split-K epilogue (deterministic). Every unit of a tile stores its fp32
 * partial tile in its own workspace slot, then arrives on the tile's
 * semaphore and waits until all `splits` units of the tile have arrived
 * (they are all resident: one unit per CTA, cooperative launch). Then unit s
 * reduces the s-th slice of the tile: each element is the sum of slots
 * 0, 1, ..., splits-1 in that order, whatever the arrival order, so results
 * are bitwise reproducible; alpha, beta and the bias are applied once, by the
 * slice's owner, and C is read only when beta != 0.
 * Why every unit reduces a slice rather than the last to arrive reducing the
 * whole tile: at 256x256x65536 a tile has 33 units, and one SM reading
 * 33 x 64 KB out of L2 would take longer than the whole main loop.
 * The semaphore counts to 2 * splits (arrival, then "past the wait"); the
 * unit that brings it there resets it to zero for the next call.
 *
 * Slot layout: "fragment order", float4 q = (h * ACC/4 + j) * THREADS + tid
 * holds accumulators 4j..4j+3 of M block h of thread tid, so each store
 * instruction of a warp writes 512 contiguous bytes (C's own [n][m] order
 * wrote 8-byte pieces on 8 rows per instruction). The slice reduction copies
 * its S pieces into the (then idle) stage ring with S bulk copies on one
 * mbarrier, so all of them are in flight at once, and sums them from shared
 * memory. H200, 256x256x65536 on 128x128 tiles (33 units per tile): main
 * loop alone 21.5 us, the whole call 28.3 us; the ~7 us left are this
 * epilogue's store, wait and re-read of 8.6 MB of partial tiles through L2.
 * Pre-reducing inside 8-CTA clusters through distributed shared memory was
 * tried and was slower (35.7 us; see bench/notes-pp.md).
 * ------------------------------------------------------------------------- */
template <typename TOut>
__device__ __forceinline__ void store_pair(TOut *dst, float v0, float v1, bool both)
{
    if (both) {
        if constexpr (sizeof(TOut) == 4)
            *reinterpret_cast<float2 *>(dst) = make_float2(v0, v1);
        else
            *reinterpret_cast<uint32_t *>(dst) = pack2(v0, v1, (TOut *)nullptr);
    } else {
        dst[0] = TOut(v0);
    }
}

template <typename TOut>
__device__ __forceinline__ float2 load_pair(const TOut *src, bool both)
{
    if (both) {
        if constexpr (sizeof(TOut) == 4)
            return *reinterpret_cast<const float2 *>(src);
        else
            return unpack2(*reinterpret_cast<const uint32_t *>(src), (TOut *)nullptr);
    }
    return make_float2((float)src[0], 0.0f);
}

/* Arrive on the tile's semaphore and wait for all S units of the tile
 * (one thread per unit). */
__device__ __forceinline__ void split_meet(int *sem, int S)
{
    red_add_release_gpu(sem, 1);
    while (ld_acquire_gpu(sem) < S) {
    }
    if (atom_add_relaxed_gpu(sem, 1) == 2 * S - 1)
        st_relaxed_gpu(sem, 0); /* every unit is past its wait */
}

/* A partial tile into a workspace slot in fragment order: thread tid's
 * float4 (h, j) at (h * F4 + j) * THREADS + tid, so each warp store is 512
 * contiguous bytes; readers index it the same way (split-K, stream-K). */
template <typename Cfg, int THREADS>
__device__ __forceinline__ void store_partial(const float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                              float4 *slot, int tid)
{
    constexpr int F4 = Cfg::ACC / 4;
#pragma unroll
    for (int h = 0; h < Cfg::HALVES_PER_CONSUMER; ++h)
#pragma unroll
        for (int j = 0; j < F4; ++j)
            slot[(h * F4 + j) * THREADS + tid] =
                make_float4(acc[h][4 * j], acc[h][4 * j + 1], acc[h][4 * j + 2], acc[h][4 * j + 3]);
}

template <typename Cfg, typename TOut>
__device__ __forceinline__ void split_epilogue(float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                               const Params &p, const Unit &u, const TileCoord &tc,
                                               int c, int wg_tid, float alpha, float beta,
                                               uint8_t *ring, uint64_t *red_full, uint32_t &red_phase,
                                               int warp, const CUtensorMap *tmap_c,
                                               uint8_t (*bufs)[SUB_BYTES], uint64_t *c_full,
                                               EpiState &epi)
{
    constexpr bool COOP = Cfg::COOPERATIVE;
    constexpr int TILE_ELEMS = Cfg::BLOCK_M * BLOCK_N;
    constexpr int TILE_VECS = TILE_ELEMS / 4;
    constexpr int THREADS = (COOP ? NUM_CONSUMERS : 1) * WARPGROUP_THREADS;
    constexpr int HPC = Cfg::HALVES_PER_CONSUMER;
    constexpr int F4 = Cfg::ACC / 4; /* float4 per thread per M block */
    static_assert(HPC * F4 * THREADS == TILE_VECS, "fragment order covers the tile");
    static_assert(TILE_ELEMS * 4 + 16 * SPLIT_MAX_SLOTS <= Cfg::STAGES * (int)sizeof(typename SharedStorage<Cfg>::Stage),
                  "the slices to reduce fit in the stage ring");
    const int tid = COOP ? c * WARPGROUP_THREADS + wg_tid : wg_tid;
    const uint32_t bar = COOP ? BAR_SPLIT0 : BAR_SPLIT0 + c;
    const int S = p.splits;

    /* 1. This unit's partial tile, in fragment order. */
    float4 *tile_slots = reinterpret_cast<float4 *>(p.partials) + (size_t)u.t * S * TILE_VECS;
    store_partial<Cfg, THREADS>(acc, tile_slots + (size_t)u.s * TILE_VECS, tid);

    /* Whole sub-tiles per slice (few units per tile: HJ / S float4 columns
     * of every thread, a multiple of a sub-tile's JPC): the slice's sums are
     * this thread's own accumulator registers, summed straight from L2 in
     * slot order, and stored by the unsplit epilogue (staged, TMA stores,
     * every mode) for those sub-tiles only. Same sums, same rounding as the
     * ring path below, without its bulk copies and scattered 4-byte stores
     * (H200, 1024^2 x 32768 on 4 coop units per tile: the ring path's land
     * + reduce + store took 5.3 us, bench/NOTES.md session 6). */
    constexpr int HJ = HPC * F4;
    constexpr int JPC = SW128_ROW / (int)sizeof(TOut) / 8;
    if (HJ % S == 0 && (HJ / S) % JPC == 0) {
        named_barrier_sync(bar, THREADS);
        if (tid == 0)
            split_meet(p.counters + u.t, S);
        named_barrier_sync(bar, THREADS); /* every thread after the acquire */
        const int hj0 = u.s * (HJ / S), hj1 = hj0 + HJ / S;
        /* Sub-tile by sub-tile behind a uniform branch, so at most JPC loads
         * are live at once (predicated loads over all HJ columns made ptxas
         * keep them all in registers and spill). */
        for (int r = 0; r < S; ++r) {
            const float4 *src = tile_slots + (size_t)r * TILE_VECS + tid;
#pragma unroll
            for (int cb = 0; cb < HJ / JPC; ++cb) {
                if (cb * JPC < hj0 || cb * JPC >= hj1)
                    continue;
                float4 x[JPC];
#pragma unroll
                for (int jl = 0; jl < JPC; ++jl)
                    x[jl] = __ldcg(src + (cb * JPC + jl) * THREADS); /* L2: other SMs wrote it */
#pragma unroll
                for (int jl = 0; jl < JPC; ++jl) {
                    const int h = (cb * JPC + jl) / F4, j = (cb * JPC + jl) % F4;
                    float *a = &acc[h][4 * j];
                    if (r == 0) {
                        a[0] = x[jl].x; a[1] = x[jl].y; a[2] = x[jl].z; a[3] = x[jl].w;
                    } else {
                        a[0] += x[jl].x; a[1] += x[jl].y; a[2] += x[jl].z; a[3] += x[jl].w;
                    }
                }
            }
        }
        const uint32_t mask = ((1u << ((hj1 - hj0) / JPC)) - 1u) << (hj0 / JPC);
        store_tile_any<Cfg, TOut, true>(acc, p, tc, c, warp, tmap_c, bufs, c_full, epi, alpha,
                                        beta, mask);
        return;
    }

    /* 2. Arrive; wait for the tile's other units; fetch slice s of every slot. */
    const int v0 = (int)((long long)u.s * TILE_VECS / S);
    const int v1 = (int)((long long)(u.s + 1) * TILE_VECS / S);
    const int slice_max = (TILE_VECS + S - 1) / S; /* float4 per slot in the ring */
    named_barrier_sync(bar, THREADS);
    if (tid == 0) {
        split_meet(p.counters + u.t, S);
        fence_proxy_async_global(); /* the other units' stores, now visible, to the bulk copies */
        const uint32_t bytes = (uint32_t)(v1 - v0) * 16u;
        mbarrier_arrive_expect_tx(red_full, bytes * (uint32_t)S);
        for (int r = 0; r < S; ++r)
            bulk_load_g2s(ring + (size_t)r * slice_max * 16, tile_slots + (size_t)r * TILE_VECS + v0,
                          bytes, red_full);
    }
    mbarrier_wait_parity(red_full, red_phase);
    red_phase ^= 1u;

    /* 3. Sum in slot order; alpha, beta, bias; store. */
    const float4 *buf = reinterpret_cast<const float4 *>(ring);
    TOut *cb = static_cast<TOut *>(p.c) + (long long)tc.b * p.stride_c;
    for (int v = v0 + tid; v < v1; v += THREADS) {
        float4 sum = buf[v - v0];
        for (int r = 1; r < S; ++r) {
            const float4 x = buf[(size_t)r * slice_max + (v - v0)];
            sum.x += x.x;
            sum.y += x.y;
            sum.z += x.z;
            sum.w += x.w;
        }
        /* Whose accumulators these are (the inverse of the fragment order). */
        const int hj = v / THREADS, vt = v - hj * THREADS;
        const int h = hj / F4, j = hj - h * F4;
        const int vc = vt / WARPGROUP_THREADS, vw = (vt % WARPGROUP_THREADS) / 32, vl = vt % 32;
        const int gn = tc.n0 + (COOP ? vc : h) * WGMMA_M + vw * 16 + vl / 4;
        const int gm = tc.m0 + 8 * j + 2 * (vl % 4);
        if (gm >= p.m)
            continue;
        const bool both = gm + 1 < p.m;
        float b0 = 0.0f, b1 = 0.0f;
        if (p.bias_kind != BIAS_NONE) {
            b0 = load_bias(p, gm);
            b1 = both ? load_bias(p, gm + 1) : 0.0f;
        }
        const float vals[2][2] = {{sum.x, sum.y}, {sum.z, sum.w}}; /* rows gn, gn + 8 */
#pragma unroll
        for (int q = 0; q < 2; ++q) {
            const int n = gn + 8 * q;
            if (n >= p.n)
                continue;
            TOut *dst = cb + (long long)n * p.ldc + gm;
            float o0 = vals[q][0] * alpha, o1 = vals[q][1] * alpha;
            if (beta != 0.0f) {
                const float2 cv = load_pair<TOut>(dst, both);
                o0 = fmaf(beta, cv.x, o0);
                o1 = fmaf(beta, cv.y, o1);
            }
            store_pair<TOut>(dst, o0 + b0, o1 + b1, both);
        }
    }
    /* The ring is the producer's again only for a next unit, which split-K
     * never gives a CTA (one unit per CTA); keep the slices' readers ahead of
     * any later use regardless. */
    named_barrier_sync(bar, THREADS);
}

/* Stream-K (see sk_unit): a piece that does not start its tile stores its
 * partial tile, in the split epilogue's fragment order, in this CTA's slot
 * and raises the CTA's flag (release, after every thread's stores: the
 * barrier, then one thread's release at gpu scope); a head piece waits for
 * the flags of the CTAs holding the rest of its tile (acquire), clears them
 * for the next call, and adds their partials to its accumulators in CTA
 * order. Both consumer warpgroups hold the tile (cooperative), so they meet
 * on BAR_SPLIT0. */
template <typename Cfg>
__device__ __forceinline__ void sk_tail_store(const float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                              const Params &p, int c, int wg_tid)
{
    constexpr int THREADS = NUM_CONSUMERS * WARPGROUP_THREADS;
    const int tid = c * WARPGROUP_THREADS + wg_tid;
    store_partial<Cfg, THREADS>(acc, reinterpret_cast<float4 *>(p.partials)
                                         + (size_t)blockIdx.x * (Cfg::BLOCK_M * BLOCK_N / 4),
                                tid);
    named_barrier_sync(BAR_SPLIT0, THREADS);
    if (tid == 0)
        red_add_release_gpu(p.counters + blockIdx.x, 1);
}

/* u: the head piece. The CTAs after this one whose ranges start before the
 * tile's end hold the rest of it. */
template <typename Cfg>
__device__ __forceinline__ void sk_head_add(float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                            const Params &p, const Unit &u, int c, int wg_tid)
{
    constexpr int THREADS = NUM_CONSUMERS * WARPGROUP_THREADS;
    constexpr int F4 = Cfg::ACC / 4;
    const int tid = c * WARPGROUP_THREADS + wg_tid;
    const long long tile_end = (long long)(u.t - p.sk_dp_tiles + 1) * p.k_blocks;
    int last = (int)blockIdx.x + 1; /* one past the last CTA holding a piece */
    while (last < (int)gridDim.x && (long long)last * p.sk_iters / gridDim.x < tile_end)
        ++last;
    if (tid == 0)
        for (int from = (int)blockIdx.x + 1; from < last; ++from) {
            while (ld_acquire_gpu(p.counters + from) == 0) {
            }
            st_relaxed_gpu(p.counters + from, 0); /* zero again for the next call */
        }
    named_barrier_sync(BAR_SPLIT0, THREADS); /* every thread after the acquires */
    for (int from = (int)blockIdx.x + 1; from < last; ++from) {
        const float4 *slot = reinterpret_cast<const float4 *>(p.partials)
                             + (size_t)from * (Cfg::BLOCK_M * BLOCK_N / 4) + tid;
#pragma unroll
        for (int h = 0; h < Cfg::HALVES_PER_CONSUMER; ++h)
#pragma unroll
            for (int j = 0; j < F4; ++j) {
                const float4 x = __ldcg(slot + (h * F4 + j) * THREADS); /* L2: another SM wrote it */
                acc[h][4 * j] += x.x;
                acc[h][4 * j + 1] += x.y;
                acc[h][4 * j + 2] += x.z;
                acc[h][4 * j + 3] += x.w;
            }
    }
}

/* ---------------------------------------------------------------------------
 * The kernel. Cfg: a TileConfig; TIn: bf16/fp16 operands; TOut: bf16/fp16/
 * float output; P_KMAJOR: op(B)^T is K-major (trans_b == N); Q_KMAJOR:
 * op(A)^T is K-major (trans_a == T); SPLIT: split-K units and the reducing
 * epilogue (a separate instantiation, so the unsplit kernel is unchanged);
 * SK: stream-K units (sk_unit; cooperative tile only, another instantiation).
 * ------------------------------------------------------------------------- */
template <typename Cfg, typename TIn, typename TOut, bool P_KMAJOR, bool Q_KMAJOR, bool SPLIT,
          bool SK = false>
__global__ void __launch_bounds__(NUM_THREADS, 1)
pingpong_sm90(const __grid_constant__ CUtensorMap tmap_p, const __grid_constant__ CUtensorMap tmap_q,
              const __grid_constant__ CUtensorMap tmap_c, const Params p)
{
    using Smem = SharedStorage<Cfg>;
    constexpr int STAGES = Cfg::STAGES;
    constexpr bool COOP = Cfg::COOPERATIVE;
    static_assert(!SK || (COOP && !SPLIT), "stream-K: the cooperative tile, not split");

    extern __shared__ __align__(1024) uint8_t gs_pp_smem_raw[];
    Smem &ss = *reinterpret_cast<Smem *>(
        (reinterpret_cast<uintptr_t>(gs_pp_smem_raw) + 1023) & ~(uintptr_t)1023);

    const int role = threadIdx.x / WARPGROUP_THREADS;
    const int wg_tid = threadIdx.x % WARPGROUP_THREADS;

    if (threadIdx.x == 0) {
        prefetch_tensormap(&tmap_p);
        prefetch_tensormap(&tmap_q);
        prefetch_tensormap(&tmap_c);
        for (int s = 0; s < STAGES; ++s) {
            mbarrier_init(&ss.full[s], 1);                    /* the producer's expect_tx arrival */
            mbarrier_init(&ss.empty[s], Cfg::STAGE_READERS);  /* one arrival per reading warp */
        }
        for (int w = 0; w < CONSUMER_WARPS; ++w)
            mbarrier_init(&ss.c_full[w], 1);
        mbarrier_init(&ss.red_full, 1);
        fence_mbarrier_init();
    }
    /* Programmatic dependent launch (a no-op unless the host launched with
     * it, gs_problem_t::pdl): nothing in global memory (operands, scalars,
     * C, the bias, the split counters) is touched before the grid this one
     * depends on completed and its writes are visible; the set-up above
     * (kernel parameters, shared memory) overlaps that grid's drain. This
     * grid never triggers its dependents early (launch_dependents): the
     * implicit trigger as its CTAs exit is what measured fastest (an early
     * trigger lets the next grid's waiting CTAs take SMs; bench/NOTES.md,
     * session 9). */
    griddepcontrol_wait();
    __syncthreads();

    if (role == PRODUCER) {
        setmaxnreg_dec<PRODUCER_REGS>();
        if (wg_tid == 0) {
            uint32_t it = 0;
            const int units = SK ? INT_MAX : SPLIT ? p.total_units : p.total_tiles;
            for (int w = blockIdx.x, j = 0; w < units; w += gridDim.x, ++j) {
                Unit u;
                if (!unit_at<SPLIT, SK>(p, w, j, u))
                    break;
                const TileCoord tc = tile_coord<Cfg>(p, u.t);
                for (int kb = u.kb0; kb < u.kb1; ++kb, ++it) {
                    const int s = ring_stage<STAGES>(it);
                    /* First lap: waiting on the parity before phase 0 returns at once. */
                    mbarrier_wait_parity(&ss.empty[s], ring_phase<STAGES>(it) ^ 1u);
                    /* Out-of-bounds box elements are zero-filled and still counted. */
                    mbarrier_arrive_expect_tx(&ss.full[s], Cfg::STAGE_BYTES);
                    const int k0 = kb * BLOCK_K;
                    if (P_KMAJOR) {
                        tma_load_3d(ss.stage[s].p, &tmap_p, &ss.full[s], k0, tc.n0, tc.b);
                    } else {
                        for (int h = 0; h < BLOCK_N / MN_CHUNK; ++h)
                            tma_load_3d(ss.stage[s].p + h * MN_CHUNK_BYTES, &tmap_p, &ss.full[s],
                                        tc.n0 + h * MN_CHUNK, k0, tc.b);
                    }
                    if (Q_KMAJOR) {
                        tma_load_3d(ss.stage[s].q, &tmap_q, &ss.full[s], k0, tc.m0, tc.b);
                    } else {
                        for (int h = 0; h < Cfg::BLOCK_M / MN_CHUNK; ++h)
                            tma_load_3d(ss.stage[s].q + h * MN_CHUNK_BYTES, &tmap_q, &ss.full[s],
                                        tc.m0 + h * MN_CHUNK, k0, tc.b);
                    }
                }
            }
        }
    } /* PRODUCER */
    else {
        setmaxnreg_inc<CONSUMER_REGS>();
        const int c = role - CONSUMER0;
        const int warp = wg_tid / 32;
        const int lane = wg_tid % 32;
        const int cw = c * WARPS_PER_WG + warp;
        const float alpha = p.alpha_ptr ? *p.alpha_ptr : p.alpha;
        const float beta = p.beta_ptr ? *p.beta_ptr : p.beta;
        EpiState epi = {0u, 0u};
        uint32_t red_phase = 0; /* split-K: red_full parity */

        constexpr int HPC = Cfg::HALVES_PER_CONSUMER;
        float acc[HPC][Cfg::ACC];

        /* Deferred epilogue: the previous tile's packed sub-tiles still to
         * be stored (pend of them) and where they go. */
        constexpr bool DEFER = COOP && !SPLIT && sizeof(TOut) == 2;
        uint32_t pk[DEFER ? Defer<Cfg, TOut>::PK : 1];
        int pend = 0;
        DeferredTile dt = {0, 0, 0};

        /* Pingpong: local tile i (the CTA's i-th tile) belongs to consumer
         * i % 2. Cooperative: both consumers take every tile. */
        constexpr int TILE_STRIDE = COOP ? 1 : NUM_CONSUMERS;
        const int units = SK ? INT_MAX : SPLIT ? p.total_units : p.total_tiles;
        int i = COOP ? 0 : c;
        uint32_t sk_it = 0; /* stream-K: the ring position, counted as the units go */
        for (int w = blockIdx.x + i * gridDim.x; w < units;
             w += TILE_STRIDE * gridDim.x, i += TILE_STRIDE) {
            Unit u;
            if (!unit_at<SPLIT, SK>(p, w, i, u))
                break;
            const int t = u.t;
            /* Ring position of this unit's first k-block: the k-blocks of the
             * CTA's earlier units (all of k_blocks each without a split). */
            uint32_t it = (uint32_t)i * (uint32_t)p.k_blocks;
            if constexpr (SK)
                it = sk_it;
            if (SPLIT) {
                it = 0;
                for (int j = 0; j < i; ++j) {
                    const Unit e = unit_of<SPLIT>(p, blockIdx.x + j * gridDim.x);
                    it += (uint32_t)(e.kb1 - e.kb0);
                }
            }

            /* ---- mainloop (pingpong: in turn with the other consumer) ---- */
            if (!COOP && i > 0)
                named_barrier_sync(BAR_MATH_TURN0 + c, 2 * WARPGROUP_THREADS);
            for (int kb = u.kb0; kb < u.kb1; ++kb, ++it) {
                const int s = ring_stage<STAGES>(it);
                mbarrier_wait_parity(&ss.full[s], ring_phase<STAGES>(it));
                const uint32_t p_addr = smem_u32(ss.stage[s].p);
                const uint32_t q_addr = smem_u32(ss.stage[s].q);
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < K_STEPS; ++ks) {
                    const uint64_t db = operand_desc<Q_KMAJOR>(q_addr, 0, ks);
#pragma unroll
                    for (int h = 0; h < HPC; ++h) {
                        const uint64_t da = operand_desc<P_KMAJOR>(p_addr, COOP ? c : h, ks);
                        Mma<TIn, Cfg::WGMMA_N>::template run<P_KMAJOR ? 0 : 1, Q_KMAJOR ? 0 : 1>(
                            acc[h], da, db, (kb > u.kb0 || ks > 0) ? 1 : 0);
                    }
                }
                wgmma_commit_group();
                /* The previous tile's deferred sub-tiles, one per k-block,
                 * while this k-block's wgmmas run. */
                if constexpr (DEFER)
                    deferred_step<Cfg, TOut>(pk, pend, dt, p, &tmap_c, ss.c_sub[cw], epi);
                /* Keep this k-block's wgmmas in flight; the previous one has
                 * finished reading its stage, which goes back to the producer. */
                wgmma_wait_group<1>();
                if (kb > u.kb0 && lane == 0)
                    mbarrier_arrive(&ss.empty[ring_stage<STAGES>(it - 1)]);
            }
            /* The turn orders issue only (no data is shared), so with long
             * tiles it is handed over as soon as the last wgmmas are issued:
             * the other consumer's first wgmmas queue behind ours and the
             * tensor pipe does not drain between tiles. Short tiles hand it
             * over after the wait: there the epilogue is the critical path,
             * and the other consumer's wgmmas would delay ours. */
            const bool more = !COOP && w + (int)gridDim.x < units; /* the other consumer has local tile i+1 */
            const bool early_turn = p.k_blocks >= EARLY_TURN_MIN_KBLOCKS;
            if (more && early_turn)
                named_barrier_arrive(BAR_MATH_TURN0 + (c ^ 1), 2 * WARPGROUP_THREADS);
            TileCoord tc;
            if constexpr (Cfg::SHORT_K)
                tc = tile_coord<Cfg>(p, t);
            wgmma_wait_group<0>();
#pragma unroll
            for (int h = 0; h < HPC; ++h)
#pragma unroll
                for (int r = 0; r < Cfg::ACC; ++r)
                    wgmma_fence_operand(acc[h][r]);
            if (lane == 0)
                mbarrier_arrive(&ss.empty[ring_stage<STAGES>(it - 1)]);
            if constexpr (SK)
                sk_it = it;
            if (more && !early_turn)
                named_barrier_arrive(BAR_MATH_TURN0 + (c ^ 1), 2 * WARPGROUP_THREADS);

            /* ---- epilogue, per warp (pingpong: overlaps the other consumer's mainloop) ---- */

            /* Recomputed here rather than kept live across the mainloop:
             * the accumulators leave few registers spare. The short-K
             * variant computes it before the last wgmma wait instead, which
             * takes its integer divisions off the epilogue's path (H200:
             * K = 128 / 256 +1.5%); done for every tile, 128x128 lost 1.5-4%
             * at K >= 1024 (H200, H100; bench/NOTES.md session 7). */
            if constexpr (!Cfg::SHORT_K)
                tc = tile_coord<Cfg>(p, t);
            if constexpr (SPLIT) {
                split_epilogue<Cfg, TOut>(acc, p, u, tc, c, wg_tid, alpha, beta,
                                          reinterpret_cast<uint8_t *>(&ss.stage[0]), &ss.red_full,
                                          red_phase, warp, &tmap_c, ss.c_sub[cw], &ss.c_full[cw],
                                          epi);
            } else {
                if constexpr (SK) {
                    if (u.kb0 > 0) { /* not the tile's start: the partial goes to the head's CTA */
                        sk_tail_store<Cfg>(acc, p, c, wg_tid);
                        continue;
                    }
                    if (u.kb1 < p.k_blocks) /* a head: add the rest, then store as any tile */
                        sk_head_add<Cfg>(acc, p, u, c, wg_tid);
                }
                if constexpr (DEFER) {
                    /* Tiles shorter than the deferred sub-tiles left some. */
                    while (pend > 0)
                        deferred_step<Cfg, TOut>(pk, pend, dt, p, &tmap_c, ss.c_sub[cw], epi);
                    if ((p.c_flags & C_DEFER) && beta == 0.0f && p.bias_kind == BIAS_NONE
                        && !(p.m_ragged && tc.m0 + Cfg::BLOCK_M > p.m)) {
                        constexpr uint32_t NOW = (1u << Defer<Cfg, TOut>::NOW) - 1u;
                        if (alpha != 1.0f) {
                            store_tile<Cfg, TOut, EPI_SCALE, true>(acc, p, tc, c, warp, &tmap_c,
                                                                   ss.c_sub[cw], &ss.c_full[cw],
                                                                   epi, alpha, beta, NOW);
                            deferred_pack<Cfg, TOut, true>(acc[0], pk, alpha);
                        } else {
                            store_tile<Cfg, TOut, EPI_COPY, true>(acc, p, tc, c, warp, &tmap_c,
                                                                  ss.c_sub[cw], &ss.c_full[cw],
                                                                  epi, alpha, beta, NOW);
                            deferred_pack<Cfg, TOut, false>(acc[0], pk, alpha);
                        }
                        dt.m0 = tc.m0;
                        dt.row0 = tc.n0 + c * WGMMA_M + warp * EPI_ROWS;
                        dt.b = tc.b;
                        pend = Defer<Cfg, TOut>::LATER;
                        continue;
                    }
                }
                store_tile_any<Cfg, TOut, false>(acc, p, tc, c, warp, &tmap_c, ss.c_sub[cw],
                                                 &ss.c_full[cw], epi, alpha, beta, ~0u);
            }
        }
        if constexpr (DEFER) /* the CTA's last tile */
            while (pend > 0)
                deferred_step<Cfg, TOut>(pk, pend, dt, p, &tmap_c, ss.c_sub[cw], epi);
        /* Shared memory must outlive the reads of the last stores. */
        if (lane == 0)
            tma_store_wait_all<0>();
    } /* CONSUMER0 / CONSUMER1 */
}

/* ---------------------------------------------------------------------------
 * Host side
 * ------------------------------------------------------------------------- */

PFN_cuTensorMapEncodeTiled_v12000 get_encode_tiled(void)
{
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(gs_tensor_map_encoder());
}

/* 3D map {inner, outer, batch}; strides in bytes. 128B swizzle, zero fill. */
bool encode_3d(CUtensorMap *map, CUtensorMapDataType dt, size_t esize, const void *base,
               uint64_t inner, uint64_t outer, uint64_t batch, uint64_t ld, uint64_t bstride,
               uint32_t box_inner, uint32_t box_outer)
{
    PFN_cuTensorMapEncodeTiled_v12000 enc = get_encode_tiled();
    if (!enc)
        return false;
    const uint64_t s1 = ld * esize;
    uint64_t s2 = bstride * esize;
    if (batch == 1) /* unused: any legal stride */
        s2 = (s1 * outer < (1ull << 40)) ? s1 * outer : s1;
    cuuint64_t dims[3] = {inner, outer, batch};
    cuuint64_t strides[2] = {s1, s2};
    cuuint32_t box[3] = {box_inner, box_outer, 1};
    cuuint32_t estr[3] = {1, 1, 1};
    return enc(map, dt, 3, const_cast<void *>(base), dims, strides, box, estr,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
        == CUDA_SUCCESS;
}

CUtensorMapDataType tmap_dtype(gs_dtype_t t)
{
    switch (t) {
    case GS_DT_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case GS_DT_F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    default: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    }
}

/* ---- split-K policy ----
 * Split only when the output tiles leave at least half the SMs idle and K
 * is long: then `splits` units per tile, as many as fill the SMs once
 * (tiles * splits <= sm_count, so every unit has its own resident CTA and
 * the tile semaphores cannot deadlock), each at least SPLIT_MIN_KBLOCKS
 * k-blocks long (the partial store, the wait and the slice reduction cost
 * about as much as a few k-blocks). */
constexpr int SPLIT_MIN_KBLOCKS = 8;

/* Tiles of at most this many k-blocks walk all of m per column (launch). */
constexpr int RASTER_ALL_M_MAX_KBLOCKS = 4;
/* ... and run the 128x128 tile as Cfg128x128Short. */
constexpr int SHORT_K_MAX_KBLOCKS = 4;

/* Developer A/B switches and test knobs, GEMMSHIM_DEV_PINGPONG_* (README),
 * set once by the family before its first call (kernels/pingpong_family.c,
 * gs_pingpong_set_knobs); these defaults otherwise:
 * group     the raster group for every call (0: the plan's);
 * defer     0 stores every cooperative tile in line (store_tile) instead
 *           of deferring half of it into the next tile's mainloop
 *           (deferred_store);
 * max_ctas  at most this many CTAs in an unsplit grid, so that small
 *           problems give every CTA several tiles (the persistent paths:
 *           the ring across tiles, the pingpong turns, the deferred
 *           epilogue) under compute-sanitizer (0: no cap); stream-K grids
 *           too;
 * sk        0: no stream-K; 1: plan_sk's rule; 2: stream-K for every
 *           ragged last wave (the thresholds off; A/B runs); 3: as 2, and
 *           the ragged tiles dealt out alone however short the ranges
 *           (tests: small grids). */
struct pp_knobs {
    int group, defer, max_ctas, sk;
};
pp_knobs pp_knob_values = {0, 1, 0, 1};
const pp_knobs &pp_env()
{
    return pp_knob_values;
}

constexpr int SPLIT_MAX = SPLIT_MAX_SLOTS;

/* k-blocks of a problem: the unit of the ring, of split-K and of the
 * short-K / raster thresholds. */
int64_t k_blocks_of(int64_t k) { return (k + BLOCK_K - 1) / BLOCK_K; }

struct SplitPlan {
    int splits;      /* 1: no split */
    int tiles;
    size_t ws_bytes; /* 0 without a split */
};

/* Output tiles of a call of class p on block_m x BLOCK_N tiles, every
 * batch. The planners read the class (can_implement plans the split). */
int64_t tiles_of(const gs_class_t *p, int block_m)
{
    return ((p->m + block_m - 1) / block_m) * ((p->n + BLOCK_N - 1) / BLOCK_N) * p->batch;
}

SplitPlan plan_split(const gs_class_t *p, const gs_device_t *d, int block_m)
{
    SplitPlan sp = {1, 0, 0};
    const int64_t tiles = tiles_of(p, block_m);
    const int64_t kb = k_blocks_of(p->k);
    sp.tiles = (int)(tiles < INT32_MAX ? tiles : INT32_MAX);
    if (d->sm_count < 2 || tiles * 2 > d->sm_count || kb < 2 * SPLIT_MIN_KBLOCKS)
        return sp;
    int64_t s = d->sm_count / tiles;
    if (s > kb / SPLIT_MIN_KBLOCKS)
        s = kb / SPLIT_MIN_KBLOCKS;
    if (s > SPLIT_MAX)
        s = SPLIT_MAX;
    if (s < 2 || tiles > (int64_t)(GS_WS_FLAG_BYTES / sizeof(int)))
        return sp;
    sp.splits = (int)s;
    sp.ws_bytes = (size_t)GS_WS_FLAG_BYTES
                  + (size_t)tiles * (size_t)s * (size_t)block_m * BLOCK_N * sizeof(float);
    return sp;
}

/* The persistent grid of an unsplit (or stream-K) call. */
int grid_of(const gs_class_t *p, const gs_device_t *d, int block_m)
{
    const int64_t tiles = tiles_of(p, block_m);
    int64_t grid = tiles < d->sm_count ? tiles : d->sm_count;
    if (pp_env().max_ctas > 0 && grid > pp_env().max_ctas)
        grid = pp_env().max_ctas;
    return (int)grid;
}

/* ---- stream-K policy (sk_unit) ----
 * For the cooperative tile with a 16-bit output of the input's type, when
 * the ragged last wave is at most SK_MAX_RAGGED full: dealing k-blocks out
 * saves up to the idle rest of that wave, but the CTAs then stream
 * operands at unrelated k offsets, which the L2 does not absorb, so the
 * dealt k-blocks run up to ~2x slower than whole tiles (H200, session 15:
 * 6144x1152x8192, 84 of 132 slots, 0.80 of whole tiles' speed; 4096^3,
 * 116, 0.95; 4096x2304x14336, 24, 1.27; 8192x2176x8192, 16, 1.13). The
 * ragged tiles alone are dealt out when each CTA gets at least
 * SK_MIN_PIECE k-blocks of them, else the last whole wave with them
 * (4096x2176x4096, 8 ragged tiles: 1.25). Not for split-K shapes (few
 * tiles), nor below 32 k-blocks, where the partial tiles' traffic takes
 * what the wave gains (2560x1792x1024, 16 k-blocks: H200 1.0, H100 0.91
 * of whole tiles' speed; 32 k-blocks: 1.0-1.12). GEMMSHIM_PP_SK=2 and 3 drop the
 * fullness and K thresholds (A/B runs, tests; pp_env). */
constexpr double SK_MAX_RAGGED = 0.5;
constexpr int SK_MIN_KBLOCKS = 32;
constexpr int SK_MIN_PIECE = 8;

struct SkPlan {
    int dp_tiles, iters; /* iters == 0: no stream-K */
    int grid;
    size_t ws_bytes;
};

SkPlan plan_sk(const gs_class_t *p, const gs_device_t *d, int block_m)
{
    SkPlan sk = {0, 0, 0, 0};
    if (!pp_env().sk || block_m != 256 || p->c_type != p->a_type)
        return sk;
    const int64_t tiles = tiles_of(p, block_m);
    const int64_t kb = k_blocks_of(p->k);
    const int64_t grid = grid_of(p, d, block_m);
    if (grid < 2 || tiles <= grid || tiles % grid == 0 || kb < 4)
        return sk;
    const int64_t ragged = tiles % grid;
    if (pp_env().sk == 1 && (kb < SK_MIN_KBLOCKS || (double)ragged > SK_MAX_RAGGED * (double)grid))
        return sk;
    const int64_t min_piece = pp_env().sk == 3 ? 1 : SK_MIN_PIECE;
    const int64_t dealt = ragged * kb >= min_piece * grid ? ragged : ragged + grid;
    if (dealt * kb > INT_MAX || grid > GS_WS_FLAG_BYTES / (int)sizeof(int))
        return sk;
    sk.dp_tiles = (int)(tiles - dealt);
    sk.iters = (int)(dealt * kb); /* >= grid: every range holds a k-block */
    sk.grid = (int)grid;
    sk.ws_bytes = (size_t)GS_WS_FLAG_BYTES + (size_t)grid * (size_t)block_m * BLOCK_N * sizeof(float);
    return sk;
}

template <typename Cfg, typename TIn, typename TOut, bool P_KMAJOR, bool Q_KMAJOR, bool SPLIT,
          bool SK = false>
int launch(const gs_problem_t *pr, const gs_device_t *d, const SplitPlan &sp, const SkPlan *skp = nullptr)
{
    constexpr int OUT_BYTES = (int)sizeof(TOut);
    constexpr int SMEM = smem_bytes<Cfg>();
    auto kernel = pingpong_sm90<Cfg, TIn, TOut, P_KMAJOR, Q_KMAJOR, SPLIT, SK>;

    static std::atomic<uint64_t> smem_done{0};
    if (const cudaError_t e = gs_smem_limit_once(smem_done, d->ordinal, SMEM, kernel))
        return (int)e;

    const size_t ies = gs_dtype_size(pr->a_type);
    const size_t oes = gs_dtype_size(pr->c_type);
    const CUtensorMapDataType idt = tmap_dtype(pr->a_type);
    const uint64_t m = (uint64_t)pr->m, n = (uint64_t)pr->n, k = (uint64_t)pr->k;
    const uint64_t batch = (uint64_t)pr->batch;

    CUtensorMap tp, tq, tc;
    bool ok = true;
    /* P = op(B)^T (n x k). */
    if (P_KMAJOR) /* B stored k x n, k contiguous */
        ok &= encode_3d(&tp, idt, ies, pr->B, k, n, batch, pr->ldb, pr->stride_b, BLOCK_K, BLOCK_N);
    else /* B stored n x k, n contiguous */
        ok &= encode_3d(&tp, idt, ies, pr->B, n, k, batch, pr->ldb, pr->stride_b, MN_CHUNK, BLOCK_K);
    /* Q = op(A)^T (k x m). */
    if (Q_KMAJOR) /* A stored k x m, k contiguous */
        ok &= encode_3d(&tq, idt, ies, pr->A, k, m, batch, pr->lda, pr->stride_a, BLOCK_K, Cfg::BLOCK_M);
    else /* A stored m x k, m contiguous */
        ok &= encode_3d(&tq, idt, ies, pr->A, m, k, batch, pr->lda, pr->stride_a, MN_CHUNK, BLOCK_K);
    /* C: one box per epilogue sub-tile (128 bytes of m x EPI_ROWS of n). */
    ok &= encode_3d(&tc, tmap_dtype(pr->c_type), oes, pr->C, m, n, batch, pr->ldc, pr->stride_c,
                    SW128_ROW / OUT_BYTES, EPI_ROWS);
    if (!ok)
        return (int)cudaErrorInvalidValue;

    Params prm;
    prm.m = (int)m;
    prm.n = (int)n;
    prm.k = (int)k;
    prm.tiles_m = (int)((m + Cfg::BLOCK_M - 1) / Cfg::BLOCK_M);
    prm.tiles_n = (int)((n + BLOCK_N - 1) / BLOCK_N);
    prm.k_blocks = (int)k_blocks_of((int64_t)k);
    prm.total_tiles = prm.tiles_m * prm.tiles_n * (int)batch;
    prm.group_m = Cfg::GROUP_M;
    /* Short K: the call is mostly its output stream. Walking all of m per
     * column makes the tiles in flight write whole contiguous column strips
     * of C (C is m-major) instead of 2 KB pieces spread over 16 strips
     * (H200, TN 8448x9216, 128x128: K = 64 46.7 -> 42.0 us, 1.04 -> 1.15x of
     * cuBLAS; K = 128 / 256 +1%; K = 512 -1%, so not there). The operand
     * strips lose their L2 reuse across columns, so only while op(A) fits
     * in a quarter of the L2. */
    if (prm.k_blocks <= RASTER_ALL_M_MAX_KBLOCKS && d->l2_bytes > 0
        && (double)m * (double)k * (double)ies <= (double)d->l2_bytes / 4)
        prm.group_m = prm.tiles_m;
    if (pp_env().group > 0)
        prm.group_m = pp_env().group;
    if (prm.group_m > prm.tiles_m) prm.group_m = prm.tiles_m;
    if (pr->scalars_on_device) {
        prm.alpha = prm.beta = 0.0f;
        prm.alpha_ptr = static_cast<const float *>(pr->alpha);
        prm.beta_ptr = static_cast<const float *>(pr->beta);
    } else {
        prm.alpha = *static_cast<const float *>(pr->alpha);
        prm.beta = *static_cast<const float *>(pr->beta);
        prm.alpha_ptr = prm.beta_ptr = nullptr;
    }

    prm.m_ragged = (m * oes) % 16 != 0;
    prm.c_flags = (d->l2_bytes > 0
                   && (double)m * (double)n * (double)batch * (double)oes > (double)d->l2_bytes)
                      ? C_EVICT_FIRST : 0;
    if (pp_env().defer)
        prm.c_flags |= C_DEFER;
    prm.c = pr->C;
    prm.ldc = pr->ldc;
    prm.stride_c = pr->stride_c;
    prm.bias = pr->bias;
    prm.bias_kind = !pr->bias ? BIAS_NONE
                    : pr->bias_type == GS_DT_F32 ? BIAS_F32
                    : pr->bias_type == GS_DT_F16 ? BIAS_F16 : BIAS_BF16;
    if (SK) {
        prm.sk_dp_tiles = skp->dp_tiles;
        prm.sk_iters = skp->iters;
    } else {
        prm.splits = SPLIT ? sp.splits : 1;
        prm.total_units = prm.total_tiles * prm.splits;
    }
    prm.counters = SPLIT || SK ? static_cast<int *>(pr->workspace) : nullptr;
    prm.partials = SPLIT || SK ? reinterpret_cast<float *>(static_cast<uint8_t *>(pr->workspace)
                                                           + GS_WS_FLAG_BYTES)
                               : nullptr;

    cudaLaunchConfig_t cfg = {};
    const int grid = SK ? skp->grid : grid_of(&pr->cls, d, Cfg::BLOCK_M);
    cfg.gridDim = dim3((unsigned)(SPLIT ? prm.total_units : grid));
    cfg.blockDim = dim3(NUM_THREADS);
    cfg.dynamicSmemBytes = SMEM;
    cfg.stream = static_cast<cudaStream_t>(pr->stream);
    /* Split: one CTA per unit, all resident at once: units wait on each
     * other (tile semaphores), which a cooperative launch makes safe; it
     * fails (and the call falls back) rather than run a grid that cannot
     * fit. Stream-K: a head waits for the next CTAs' pieces, so the same. */
    cudaLaunchAttribute attr[2];
    gs_set_launch_attrs(cfg, attr, SPLIT || SK, 1, pr->pdl != 0);
    cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, tp, tq, tc, prm);
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    return (int)e;
}

template <typename Cfg, typename TIn, typename TOut, bool SPLIT, bool SK = false>
int launch_split(const gs_problem_t *p, const gs_device_t *d, const SplitPlan &sp,
                 const SkPlan *skp = nullptr)
{
    const bool p_kmajor = p->trans_b == GS_OP_N;
    const bool q_kmajor = p->trans_a == GS_OP_T;
    if (p_kmajor && q_kmajor) return launch<Cfg, TIn, TOut, true, true, SPLIT, SK>(p, d, sp, skp);
    if (p_kmajor) return launch<Cfg, TIn, TOut, true, false, SPLIT, SK>(p, d, sp, skp);
    if (q_kmajor) return launch<Cfg, TIn, TOut, false, true, SPLIT, SK>(p, d, sp, skp);
    return launch<Cfg, TIn, TOut, false, false, SPLIT, SK>(p, d, sp, skp);
}

/* The split-K / stream-K workspace contract (gs_kernels.h): at least
 * bytes, 16-byte aligned; otherwise the launcher enqueues nothing. */
bool workspace_fits(const gs_problem_t *p, size_t bytes)
{
    return p->workspace && p->workspace_size >= bytes && !((uintptr_t)p->workspace & 15u);
}

template <typename Cfg, typename TIn, typename TOut>
int launch_layout(const gs_problem_t *p, const gs_device_t *d)
{
    const SplitPlan sp = plan_split(&p->cls, d, Cfg::BLOCK_M);
    if constexpr (!Cfg::SPLITTABLE) {
        /* Short K never splits (plan_split wants >= 2 * SPLIT_MIN_KBLOCKS);
         * can_implement refuses split shapes for the 192-wide tile. */
        if (sp.splits > 1)
            return (int)cudaErrorInvalidValue;
    } else if (sp.splits > 1) {
        /* Enqueue nothing without the workspace: the caller falls back. */
        if (!workspace_fits(p, sp.ws_bytes))
            return (int)cudaErrorInvalidValue;
        return launch_split<Cfg, TIn, TOut, true>(p, d, sp);
    }
    if constexpr (Cfg::COOPERATIVE && std::is_same<TIn, TOut>::value) {
        /* Stream-K where plan_sk plans it; the workspace contract as for a
         * split (gs_kernels.h): without it, refused, nothing enqueued. */
        const SkPlan sk = plan_sk(&p->cls, d, Cfg::BLOCK_M);
        if (sk.iters > 0) {
            if (!workspace_fits(p, sk.ws_bytes))
                return (int)cudaErrorInvalidValue;
            return launch_split<Cfg, TIn, TOut, false, true>(p, d, sp, &sk);
        }
    }
    return launch_split<Cfg, TIn, TOut, false>(p, d, sp);
}

template <typename Cfg>
int launch_types(const gs_problem_t *p, const gs_device_t *d)
{
    if (p->a_type == GS_DT_BF16) {
        if (p->c_type == GS_DT_F32)
            return launch_layout<Cfg, __nv_bfloat16, float>(p, d);
        return launch_layout<Cfg, __nv_bfloat16, __nv_bfloat16>(p, d);
    }
    if (p->c_type == GS_DT_F32)
        return launch_layout<Cfg, __half, float>(p, d);
    return launch_layout<Cfg, __half, __half>(p, d);
}

int block_m_of(gs_pingpong_config_t cfg)
{
    switch (cfg) {
    case GS_PINGPONG_COOP_256x128x64: return Cfg256x128::BLOCK_M;
    case GS_PINGPONG_192x128x64: return Cfg192x128::BLOCK_M;
    default: return Cfg128x128::BLOCK_M;
    }
}

int smem_of(gs_pingpong_config_t cfg)
{
    if (cfg == GS_PINGPONG_COOP_256x128x64)
        return smem_bytes<Cfg256x128>();
    if (cfg == GS_PINGPONG_192x128x64)
        return smem_bytes<Cfg192x128>();
    return smem_bytes<Cfg128x128>() > smem_bytes<Cfg128x128Short>() ? smem_bytes<Cfg128x128>()
                                                                  : smem_bytes<Cfg128x128Short>();
}

/* ld (elements) and its byte size are usable by TMA. */
bool ld_ok(int64_t ld, int64_t rows, size_t es)
{
    return ld >= rows && ld >= 1 && ((uint64_t)ld * es) % 16 == 0 && (uint64_t)ld * es < (1ull << 40);
}

bool bstride_ok(int64_t s, size_t es)
{
    return s > 0 && ((uint64_t)s * es) % 16 == 0 && (uint64_t)s * es < (1ull << 40);
}

} // namespace

extern "C" void gs_pingpong_set_knobs(int group, int defer, int max_ctas, int sk)
{
    pp_knob_values = pp_knobs{group, defer, max_ctas, sk};
}

extern "C" int gs_pingpong_can_implement(const gs_class_t *p, const gs_device_t *d,
                                         gs_pingpong_config_t cfg)
{
    if (!p || !d || cfg < 0 || cfg >= GS_PINGPONG_CONFIG_COUNT)
        return 0;
    if (p->align_bias) { /* cublasLt BIAS epilogue: one element per row of C */
        const size_t bes = gs_dtype_size((gs_dtype_t)p->bias_type);
        if ((p->bias_type != GS_DT_F32 && p->bias_type != GS_DT_F16 && p->bias_type != GS_DT_BF16)
            || p->align_bias < bes)
            return 0;
    }
    if (!d->present || d->cc_major != 9 || d->cc_minor != 0 || d->sm_count < 1)
        return 0;
    if (p->entry == GS_EP_GEMMEX_BATCHED) /* A/B/C are pointer arrays there */
        return 0;
    if (p->a_type != p->b_type || (p->a_type != GS_DT_BF16 && p->a_type != GS_DT_F16))
        return 0;
    if (p->c_type != p->a_type && p->c_type != GS_DT_F32)
        return 0;
    if (!gs_compute_is_f32_accum((gs_compute_t)p->compute))
        return 0;
    if (p->scalar_type != GS_DT_F32 || !p->align_alpha || !p->align_beta)
        return 0;
    if (p->trans_a != GS_OP_N && p->trans_a != GS_OP_T)
        return 0;
    if (p->trans_b != GS_OP_N && p->trans_b != GS_OP_T)
        return 0;
    const int64_t lim = (int64_t)1 << 31;
    if (p->m < 1 || p->n < 1 || p->k < 1 || p->batch < 1)
        return 0;
    if (p->m >= lim || p->n >= lim || p->k >= lim || p->batch >= lim)
        return 0;
    const int64_t bm = block_m_of(cfg);
    const int64_t tiles = ((p->m + bm - 1) / bm) * ((p->n + BLOCK_N - 1) / BLOCK_N);
    if (tiles >= lim || tiles * p->batch >= lim)
        return 0;
    /* non-NULL and 16-byte aligned: TMA's base addresses */
    if (p->align_a < 16 || p->align_b < 16 || p->align_c < 16)
        return 0;
    const size_t ies = gs_dtype_size((gs_dtype_t)p->a_type), oes = gs_dtype_size((gs_dtype_t)p->c_type);
    if (!ld_ok(p->lda, p->trans_a == GS_OP_N ? p->m : p->k, ies))
        return 0;
    if (!ld_ok(p->ldb, p->trans_b == GS_OP_N ? p->k : p->n, ies))
        return 0;
    if (!ld_ok(p->ldc, p->m, oes))
        return 0;
    if (p->batch > 1) {
        if (!bstride_ok(p->stride_a, ies) || !bstride_ok(p->stride_b, ies)
            || !bstride_ok(p->stride_c, oes))
            return 0;
        if (!gs_class_c_batches_disjoint(p))
            return 0;
    }
    if (d->smem_optin < (size_t)smem_of(cfg))
        return 0;
    if (cfg == GS_PINGPONG_192x128x64) {
        /* No split-K instantiation, and only the plain epilogue
         * (Cfg192x128::PLAIN_EPILOGUE): alpha * acc into a C it never
         * reads (beta an fp32 zero in host memory), stored whole by TMA. */
        if (plan_split(p, d, block_m_of(cfg)).splits > 1)
            return 0;
        if (p->beta_kind != GS_BETA_ZERO || p->scalar_type != GS_DT_F32 || p->scalars_on_device
            || p->align_bias)
            return 0;
        if (((uint64_t)p->m * oes) % 16 != 0)
            return 0;
    }
    return 1;
}

extern "C" int gs_pingpong_run(const gs_problem_t *p, const gs_device_t *d,
                               gs_pingpong_config_t cfg)
{
    if (!p || !gs_pingpong_can_implement(&p->cls, d, cfg))
        return (int)cudaErrorInvalidValue;
    if (cfg == GS_PINGPONG_COOP_256x128x64)
        return launch_types<Cfg256x128>(p, d);
    if (cfg == GS_PINGPONG_192x128x64)
        return launch_types<Cfg192x128>(p, d);
    if (k_blocks_of(p->k) <= SHORT_K_MAX_KBLOCKS)
        return launch_types<Cfg128x128Short>(p, d);
    return launch_types<Cfg128x128>(p, d);
}

extern "C" const char *gs_pingpong_name(gs_pingpong_config_t cfg)
{
    switch (cfg) {
    case GS_PINGPONG_128x128x64: return "pingpong_128x128x64";
    case GS_PINGPONG_COOP_256x128x64: return "pingpong_coop_256x128x64";
    case GS_PINGPONG_192x128x64: return "pingpong_192x128x64";
    default: return "pingpong_unknown";
    }
}

/* The name logged for a call: the configuration, and the split factor when
 * plan_split splits K ("pingpong_128x128x64_splitk33"). Thread-local buffer. */
extern "C" const char *gs_pingpong_kernel_name(const gs_problem_t *p, const gs_device_t *d,
                                               gs_pingpong_config_t cfg)
{
    static __thread char name[64];
    const char *base = gs_pingpong_name(cfg);
    if (!p || !d || !gs_pingpong_can_implement(&p->cls, d, cfg))
        return base;
    SplitPlan sp = plan_split(&p->cls, d, block_m_of(cfg));
    if (sp.splits <= 1) {
        if (plan_sk(&p->cls, d, block_m_of(cfg)).iters == 0)
            return base;
        snprintf(name, sizeof name, "%s_streamk", base);
        return name;
    }
    snprintf(name, sizeof name, "%s_splitk%d", base, sp.splits);
    return name;
}

/* The share of the persistent grid's tile slots that hold a tile when the
 * tiles are dealt whole: tiles / (waves * SMs). A ragged last wave idles
 * the rest (4096x2304 on 256x128 tiles: 288 tiles in 3 waves of 132, 0.73,
 * where 4096x2048 fills 0.97), and our time follows the waves while
 * cuBLAS's, with tiles of its own choosing, need not: the routing table
 * scales a neighbour's reading by it (gs_table_ratio). Split-K plans fill
 * one wave by construction: 1. Stream-K shapes count as dealt whole, a
 * lower bound (it runs only where it measured faster than that). */
extern "C" double gs_pingpong_wave_efficiency(const gs_problem_t *p, const gs_device_t *d,
                                              gs_pingpong_config_t cfg)
{
    const int bm = block_m_of(cfg);
    if (!p || !d || d->sm_count < 1 || p->m < 1 || p->n < 1 || p->batch < 1)
        return 1.0;
    /* The shape only: the routing table asks this of its measured shapes
     * too, problems it makes from the call's with other sizes and no class. */
    gs_class_t shape = {};
    shape.m = p->m;
    shape.n = p->n;
    shape.k = p->k;
    shape.batch = p->batch;
    if (plan_split(&shape, d, bm).splits > 1)
        return 1.0;
    const double tiles = (double)tiles_of(&shape, bm);
    const double waves = ceil(tiles / d->sm_count);
    return tiles / (waves * d->sm_count);
}

/* Split-K shapes (few output tiles, long K; see plan_split): the tile
 * semaphores plus one fp32 partial tile per unit. Stream-K shapes (plan_sk):
 * the flags plus one partial tile per CTA (17 MB on 132 SMs). 0 for every
 * other shape. Without it the call is forwarded, as a split one is: these
 * are the shapes whose tiles dealt whole run well below cuBLAS. */
extern "C" size_t gs_pingpong_workspace_bytes(const gs_problem_t *p, const gs_device_t *d,
                                              gs_pingpong_config_t cfg)
{
    if (!p || !gs_pingpong_can_implement(&p->cls, d, cfg))
        return 0;
    const SplitPlan sp = plan_split(&p->cls, d, block_m_of(cfg));
    if (sp.splits > 1)
        return sp.ws_bytes;
    return plan_sk(&p->cls, d, block_m_of(cfg)).ws_bytes;
}
