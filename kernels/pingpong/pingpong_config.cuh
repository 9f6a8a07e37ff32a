/* The pingpong family (kernels/pingpong/pingpong_sm90.cu): tile shapes and
 * their configurations (TileConfig), the shared-memory layout, warpgroup
 * roles, named barriers and the kernel's parameter struct (Params). Device
 * and host code of the family's one translation unit: included only there. */
#ifndef GS_PINGPONG_CONFIG_CUH
#define GS_PINGPONG_CONFIG_CUH

#include "gs_kernels.h"
#include "gs_ptx.cuh"

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
     * everything else, which is why that tile has no deferred epilogue.
     * 64 for the FP8 cooperative 128-wide tile (kernels/fp8), whose
     * consumers keep two 64-register partial sums next to them. */
    static_assert(HALVES_PER_CONSUMER * ACC == 128 || HALVES_PER_CONSUMER * ACC == 192 ||
                      (COOP && HALVES_PER_CONSUMER * ACC == 64),
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
 * and the cooperative tile's 61 (bench/NOTES.md, the shared-memory
 * budget). 40 KB stages: 4 of them next to the 32 KB of staging. A
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
 *   GEMMSHIM_PP_DEFER=0 clears it (developer A/B switch).
 * C_DIRECT: C cannot be stored by TMA (c_direct: its base, ldc or batch
 *   stride not a multiple of 16 bytes): every tile takes the ragged tile's
 *   plain predicated stores (m_ragged is set too, so calls with a TMA-stored
 *   C keep their one test per tile); C_DEFER is cleared. */
enum CFlags { C_EVICT_FIRST = 1, C_DEFER = 2, C_DIRECT = 4 };

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

} // namespace

#endif /* GS_PINGPONG_CONFIG_CUH */
