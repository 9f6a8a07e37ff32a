/* Hopper (sm_90a) warp-specialized pingpong GEMM for bf16/fp16 inputs.
 *
 * One CTA = one producer warpgroup + two consumer warpgroups, persistent over
 * a grouped tile raster of (tile_m, tile_n, batch).
 *
 *   producer   one thread issues TMA loads of both operands into a STAGES-deep
 *              shared-memory ring (full[]/empty[] mbarriers). It walks the
 *              CTA's tiles in order, so the ring holds all k-blocks of the
 *              CTA's tile 0 (consumer 0), then tile 1 (consumer 1), ...
 *   consumers  consumer c owns the CTA's tiles c, c+2, c+4, ... Each keeps a
 *              128x128 fp32 accumulator in registers. The two take turns on
 *              the tensor cores (MATH_TURN barriers), so one runs its
 *              mainloop while the other runs its epilogue (stmatrix into its
 *              own swizzled staging buffer, then TMA store).
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
#include <cuda.h> /* CUtensorMap and the driver enums: header only, no libcuda link */
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <mutex>
#include <stdint.h>

#include "gs_kernels.h"
#include "gs_ptx.cuh"

namespace {

/* ---------------------------------------------------------------------------
 * Configuration: GS_PINGPONG_128x128x64
 * ------------------------------------------------------------------------- */
constexpr int BLOCK_M = 128;       /* C rows (m, contiguous in C) per tile = wgmma N */
constexpr int BLOCK_N = 128;       /* C columns (n) per tile = 2 x wgmma M (64) */
constexpr int BLOCK_K = 64;        /* 64 x 2 bytes = one 128-byte swizzle row */
constexpr int NUM_CONSUMERS = 2;
constexpr int MAX_STAGES = 8;
constexpr int GROUP_M = 8;         /* tile rows (along m) walked together: L2 reuse */

constexpr int WARPGROUP_THREADS = 128;
constexpr int NUM_THREADS = (1 + NUM_CONSUMERS) * WARPGROUP_THREADS;
constexpr int WARPS_PER_WG = WARPGROUP_THREADS / 32;

constexpr int WGMMA_M = 64;
constexpr int WGMMA_N = 128;
constexpr int WGMMA_K = 16;
constexpr int M_HALVES = BLOCK_N / WGMMA_M;           /* wgmma M blocks per tile (2) */
constexpr int K_STEPS = BLOCK_K / WGMMA_K;            /* wgmmas along k per stage (4) */
constexpr int ACC_PER_HALF = WGMMA_M * WGMMA_N / WARPGROUP_THREADS; /* 64 fp32 */

/* Register split (setmaxnreg): the producer only loops and issues TMA. */
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = 232;

constexpr int IN_BYTES = 2;
constexpr int SW128_ROW = 128;                        /* bytes per swizzled row */
constexpr int SW128_ATOM = 8 * SW128_ROW;             /* the pattern repeats each 8 rows */
constexpr int MN_CHUNK = SW128_ROW / IN_BYTES;        /* 64 elements: MN-major box width */
constexpr int P_TILE_BYTES = BLOCK_N * BLOCK_K * IN_BYTES;   /* op(B)^T tile, 16 KB */
constexpr int Q_TILE_BYTES = BLOCK_M * BLOCK_K * IN_BYTES;   /* op(A)^T tile, 16 KB */
constexpr int STAGE_BYTES = P_TILE_BYTES + Q_TILE_BYTES;
constexpr int MN_CHUNK_BYTES = MN_CHUNK * BLOCK_K * IN_BYTES; /* 64 x 64 box, 8 KB */

/* Shared memory a CTA may have on sm_90 (227 KB): the design budget. The
 * device's own limit (smem_optin) is checked in can_implement. */
constexpr int SMEM_BUDGET = 227 * 1024;

static_assert(BLOCK_K * IN_BYTES == SW128_ROW, "one k-block row must be one 128B swizzle row");
static_assert(BLOCK_M == WGMMA_N, "wgmma N covers the tile's m extent");
static_assert(BLOCK_N % WGMMA_M == 0 && BLOCK_M % MN_CHUNK == 0, "tile vs wgmma shape");
static_assert(NUM_THREADS == 384, "producer + two consumer warpgroups");
static_assert(PRODUCER_REGS * WARPGROUP_THREADS + NUM_CONSUMERS * CONSUMER_REGS * WARPGROUP_THREADS
                  <= 65536, "register split exceeds the register file");
static_assert(PRODUCER_REGS % 8 == 0 && CONSUMER_REGS % 8 == 0 && CONSUMER_REGS <= 256,
              "setmaxnreg takes multiples of 8 in [24, 256]");

/* Output staging buffer, one per consumer (32 KB each): EPI_ROWS rows of
 * C^T (n) by the tile's 128 m, split along m into 128-byte chunks so that each
 * chunk is one TMA box with 128B swizzle. 16-bit output stages the whole tile
 * in one pass; fp32 output in two passes of 64 rows.
 * Why one buffer per consumer: a TMA store is only known to have finished
 * reading shared memory to the thread that issued it (bulk async-groups are
 * per thread). With a buffer of its own, a consumer waits for its store two
 * tiles later instead of right after issuing it; with one shared tile the
 * store's full read latency sat on the critical path of every epilogue and
 * small-k shapes ran at a third of the write bandwidth. */
constexpr int EPI_BUFFER_BYTES = 32 * 1024;

template <int OUT_BYTES>
struct OutTile {
    static constexpr int EPI_ROWS = EPI_BUFFER_BYTES / (BLOCK_M * OUT_BYTES);
    static constexpr int PASSES = BLOCK_N / EPI_ROWS;
    static constexpr int CHUNK_COLS = SW128_ROW / OUT_BYTES;          /* m per chunk */
    static constexpr int CHUNKS = BLOCK_M / CHUNK_COLS;
    static constexpr int CHUNK_BYTES = EPI_ROWS * SW128_ROW;
    static constexpr int BYTES = CHUNKS * CHUNK_BYTES;
    static_assert(BYTES == EPI_BUFFER_BYTES, "staging buffer size");
    static_assert(EPI_ROWS % WGMMA_M == 0 && BLOCK_N % EPI_ROWS == 0, "passes cover wgmma halves");
};

template <int OUT_BYTES>
struct Stages {
    static constexpr int BARRIER_BYTES = 1024; /* barriers, rounded to the struct alignment */
    static constexpr int ALIGN_SLACK = 1024;   /* dynamic smem base rounded up to 1024 */
    static constexpr int VALUE =
        (SMEM_BUDGET - NUM_CONSUMERS * OutTile<OUT_BYTES>::BYTES - BARRIER_BYTES - ALIGN_SLACK) / STAGE_BYTES
                > MAX_STAGES
            ? MAX_STAGES
            : (SMEM_BUDGET - NUM_CONSUMERS * OutTile<OUT_BYTES>::BYTES - BARRIER_BYTES - ALIGN_SLACK) / STAGE_BYTES;
};

template <int OUT_BYTES>
struct SharedStorage {
    static constexpr int STAGES = Stages<OUT_BYTES>::VALUE;
    struct alignas(1024) Stage {
        /* Both operand tiles 1024-aligned: the 128B swizzle (TMA and wgmma)
         * is a function of address bits 4-9. */
        alignas(1024) uint8_t p[P_TILE_BYTES]; /* wgmma A: op(B)^T, n x k */
        alignas(1024) uint8_t q[Q_TILE_BYTES]; /* wgmma B: op(A)^T, k x m */
    };
    Stage stage[STAGES];
    alignas(1024) uint8_t c_tile[NUM_CONSUMERS][OutTile<OUT_BYTES>::BYTES]; /* one per consumer */
    alignas(8) uint64_t full[STAGES];   /* TMA bytes landed: producer -> consumer */
    alignas(8) uint64_t empty[STAGES];  /* wgmma done reading: consumer -> producer */
    alignas(8) uint64_t c_full[NUM_CONSUMERS]; /* beta != 0: C tile landed in c_tile */
};

template <int OUT_BYTES>
constexpr int smem_bytes()
{
    return (int)sizeof(SharedStorage<OUT_BYTES>) + Stages<OUT_BYTES>::ALIGN_SLACK;
}

static_assert(Stages<2>::VALUE >= 5 && Stages<4>::VALUE >= 5, "pipeline too shallow");
static_assert(smem_bytes<2>() <= SMEM_BUDGET && smem_bytes<4>() <= SMEM_BUDGET,
              "shared memory over budget");

enum Role { PRODUCER = 0, CONSUMER0 = 1, CONSUMER1 = 2 };

/* Named barrier ids (0 is __syncthreads).
 * MATH_TURN_c: "consumer c may start its mainloop", 256 threads (the waiting
 *   warpgroup syncs, the other arrives when its mainloop is done). It keeps
 *   one warpgroup on the tensor cores while the other runs its epilogue.
 * EPI_STORE_c: the 128 threads of consumer c, around its own staging buffer:
 *   once before writing it (its previous TMA store has read it, every thread
 *   is done with it) and once after (all rows written, the store may go).
 * There is no epilogue turn: each consumer has its own staging buffer (see
 * OutTile), so the epilogues need no mutual exclusion, and ordering them
 * anyway measured slower (TN 8448x9216x64 on H200: 94 vs 138 TFLOP/s). */
enum NamedBarrier {
    BAR_MATH_TURN0 = 1,
    BAR_MATH_TURN1 = 2,
    BAR_EPI_STORE0 = 3,
    BAR_EPI_STORE1 = 4,
};

struct Params {
    int m, n, k;
    int tiles_m, tiles_n, k_blocks;
    int total_tiles; /* tiles_m * tiles_n * batch */
    float alpha, beta;
    const float *alpha_ptr; /* non-null: scalars in device memory */
    const float *beta_ptr;
    /* TMA stores write whole 16-byte units: when m * sizeof(TOut) is not a
     * multiple of 16, the last m tile would spill into C's ld padding (user
     * memory), so that tile is stored with plain predicated stores. */
    int m_ragged;
    void *c;
    long long ldc, stride_c; /* elements */
};

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
 * the tiles in flight across the grid share A strips and B strips in L2. */
__device__ __forceinline__ TileCoord tile_coord(const Params &p, int t)
{
    const int per_batch = p.tiles_m * p.tiles_n;
    const int b = t / per_batch;
    const int r = t - b * per_batch;
    const int span = GROUP_M * p.tiles_n;
    const int g = r / span;
    const int first_m = g * GROUP_M;
    const int rows = min(p.tiles_m - first_m, GROUP_M);
    const int rr = r - g * span;
    TileCoord tc;
    tc.m0 = (first_m + rr % rows) * BLOCK_M;
    tc.n0 = (rr / rows) * BLOCK_N;
    tc.b = b;
    return tc;
}

/* wgmma descriptors for one k-step of a stage.
 * K-major tile (rows = MN, 128-byte rows of k): 8-row atoms SBO = 1024 apart,
 *   a k-step moves 16 elements = 32 bytes inside the swizzled row; the second
 *   wgmma M half of op(B)^T is 64 rows = 8 KB further.
 * MN-major tile (64-wide MN chunks, each 64 k-rows of 128 bytes): 8-k-row
 *   atoms SBO = 1024 apart, MN chunks LBO = 8 KB apart, a k-step is 16 rows
 *   = 2 KB. */
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

/* Byte offset of C^T element (row = n, col = m) in the swizzled staging tile:
 * the 16-byte unit index is XORed with row % 8 (TMA SWIZZLE_128B), which also
 * spreads the 8 rows a stmatrix / st.shared touches over all 32 banks. */
template <int OUT_BYTES>
__device__ __forceinline__ uint32_t c_tile_offset(int row, int col)
{
    constexpr int CHUNK_COLS = OutTile<OUT_BYTES>::CHUNK_COLS;
    const int chunk = col / CHUNK_COLS;
    const int byte_in_row = (col % CHUNK_COLS) * OUT_BYTES;
    const int unit = (byte_in_row >> 4) ^ (row & 7);
    return (uint32_t)(chunk * OutTile<OUT_BYTES>::CHUNK_BYTES + row * SW128_ROW + unit * 16
                      + (byte_in_row & 15));
}

template <typename T> struct InType;
template <> struct InType<__nv_bfloat16> {
    template <int TA, int TB>
    static __device__ __forceinline__ void mma(float *d, uint64_t a, uint64_t b, int scale_d)
    {
        wgmma_m64n128k16_f32_bf16<TA, TB>(d, a, b, scale_d);
    }
};
template <> struct InType<__half> {
    template <int TA, int TB>
    static __device__ __forceinline__ void mma(float *d, uint64_t a, uint64_t b, int scale_d)
    {
        wgmma_m64n128k16_f32_f16<TA, TB>(d, a, b, scale_d);
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

/* ---------------------------------------------------------------------------
 * The kernel. TIn: bf16/fp16 operands; TOut: bf16/fp16/float output;
 * P_KMAJOR: op(B)^T is K-major (trans_b == N); Q_KMAJOR: op(A)^T is K-major
 * (trans_a == T).
 * ------------------------------------------------------------------------- */
template <typename TIn, typename TOut, bool P_KMAJOR, bool Q_KMAJOR>
__global__ void __launch_bounds__(NUM_THREADS, 1)
pingpong_128x128x64(const __grid_constant__ CUtensorMap tmap_p,
                    const __grid_constant__ CUtensorMap tmap_q,
                    const __grid_constant__ CUtensorMap tmap_c, const Params p)
{
    constexpr int OUT_BYTES = (int)sizeof(TOut);
    using Smem = SharedStorage<OUT_BYTES>;
    using Out = OutTile<OUT_BYTES>;
    constexpr int STAGES = Smem::STAGES;

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
            mbarrier_init(&ss.full[s], 1);            /* the producer's expect_tx arrival */
            mbarrier_init(&ss.empty[s], WARPS_PER_WG); /* one arrival per consumer warp */
        }
        for (int c = 0; c < NUM_CONSUMERS; ++c)
            mbarrier_init(&ss.c_full[c], 1);
        fence_mbarrier_init();
    }
    __syncthreads();

    if (role == PRODUCER) {
        setmaxnreg_dec<PRODUCER_REGS>();
        if (wg_tid == 0) {
            uint32_t it = 0;
            for (int t = blockIdx.x; t < p.total_tiles; t += gridDim.x) {
                const TileCoord tc = tile_coord(p, t);
                for (int kb = 0; kb < p.k_blocks; ++kb, ++it) {
                    const int s = ring_stage<STAGES>(it);
                    /* First lap: waiting on the parity before phase 0 returns at once. */
                    mbarrier_wait_parity(&ss.empty[s], ring_phase<STAGES>(it) ^ 1u);
                    /* Out-of-bounds box elements are zero-filled and still counted. */
                    mbarrier_arrive_expect_tx(&ss.full[s], STAGE_BYTES);
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
                        for (int h = 0; h < BLOCK_M / MN_CHUNK; ++h)
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
        const float alpha = p.alpha_ptr ? *p.alpha_ptr : p.alpha;
        const float beta = p.beta_ptr ? *p.beta_ptr : p.beta;
        uint32_t c_loads = 0; /* this consumer's C-tile loads: c_full[c] parity */

        float acc[M_HALVES][ACC_PER_HALF];

        /* Local tile i (the CTA's i-th tile) belongs to consumer i % 2. */
        int i = c;
        for (int t = blockIdx.x + c * gridDim.x; t < p.total_tiles;
             t += NUM_CONSUMERS * gridDim.x, i += NUM_CONSUMERS) {
            const bool has_next = t + (int)gridDim.x < p.total_tiles; /* local tile i+1 */
            uint32_t it = (uint32_t)i * (uint32_t)p.k_blocks;

            /* ---- mainloop, in turn with the other consumer ---- */
            if (i > 0)
                named_barrier_sync(BAR_MATH_TURN0 + c, 2 * WARPGROUP_THREADS);
            for (int kb = 0; kb < p.k_blocks; ++kb, ++it) {
                const int s = ring_stage<STAGES>(it);
                mbarrier_wait_parity(&ss.full[s], ring_phase<STAGES>(it));
                const uint32_t p_addr = smem_u32(ss.stage[s].p);
                const uint32_t q_addr = smem_u32(ss.stage[s].q);
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < K_STEPS; ++ks) {
                    const uint64_t db = operand_desc<Q_KMAJOR>(q_addr, 0, ks);
#pragma unroll
                    for (int h = 0; h < M_HALVES; ++h) {
                        const uint64_t da = operand_desc<P_KMAJOR>(p_addr, h, ks);
                        InType<TIn>::template mma<P_KMAJOR ? 0 : 1, Q_KMAJOR ? 0 : 1>(
                            acc[h], da, db, (kb > 0 || ks > 0) ? 1 : 0);
                    }
                }
                wgmma_commit_group();
                /* Keep this k-block's wgmmas in flight; the previous one has
                 * finished reading its stage, which goes back to the producer. */
                wgmma_wait_group<1>();
                if (kb > 0 && lane == 0)
                    mbarrier_arrive(&ss.empty[ring_stage<STAGES>(it - 1)]);
            }
            wgmma_wait_group<0>();
#pragma unroll
            for (int h = 0; h < M_HALVES; ++h)
#pragma unroll
                for (int r = 0; r < ACC_PER_HALF; ++r)
                    wgmma_fence_operand(acc[h][r]);
            if (lane == 0)
                mbarrier_arrive(&ss.empty[ring_stage<STAGES>(it - 1)]);
            if (has_next)
                named_barrier_arrive(BAR_MATH_TURN0 + (c ^ 1), 2 * WARPGROUP_THREADS);

            /* ---- epilogue: overlaps the other consumer's mainloop ---- */

            /* Recomputed here rather than kept live across the mainloop:
             * the accumulators leave few registers spare. */
            const TileCoord tc = tile_coord(p, t);
            uint8_t *ct = ss.c_tile[c];
            const bool direct_store = p.m_ragged && tc.m0 + BLOCK_M > p.m;
#pragma unroll
            for (int pass = 0; pass < Out::PASSES; ++pass) {
                const int row0 = pass * Out::EPI_ROWS; /* first tile row (n) of this pass */
                /* ct is free once this thread's last TMA store out of it has
                 * read it and every thread is past its last plain access
                 * (the ragged-tile copy of the previous pass reads it). */
                if (wg_tid == 0)
                    tma_store_wait_read<0>();
                named_barrier_sync(BAR_EPI_STORE0 + c, WARPGROUP_THREADS);
                if (beta != 0.0f) {
                    /* C is read only here: beta == 0 never touches it (it may hold NaN). */
                    if (wg_tid == 0) {
                        mbarrier_arrive_expect_tx(&ss.c_full[c], Out::BYTES);
                        for (int ch = 0; ch < Out::CHUNKS; ++ch)
                            tma_load_3d(ct + ch * Out::CHUNK_BYTES, &tmap_c, &ss.c_full[c],
                                        tc.m0 + ch * Out::CHUNK_COLS, tc.n0 + row0, tc.b);
                    }
                    mbarrier_wait_parity(&ss.c_full[c], c_loads & 1u);
                    ++c_loads;
                }

                /* Accumulator layout (wgmma m64nN, per warpgroup): warp w holds rows
                 * 16w..16w+15 of each 64-row half; lane l holds row l/4 (regs 4j, 4j+1)
                 * and row l/4 + 8 (regs 4j+2, 4j+3) at columns 8j + 2(l%4) + {0,1}.
                 * Rows are n, columns are m. */
#pragma unroll
                for (int h = 0; h < M_HALVES; ++h) {
                    if (h * WGMMA_M / Out::EPI_ROWS != pass)
                        continue;
                    const int hrow = h * WGMMA_M - row0; /* this half's first row in ct */
#pragma unroll
                    for (int j = 0; j < WGMMA_N / 8; ++j) {
#pragma unroll
                        for (int q = 0; q < 2; ++q) {
                            float &v0 = acc[h][4 * j + 2 * q];
                            float &v1 = acc[h][4 * j + 2 * q + 1];
                            v0 *= alpha;
                            v1 *= alpha;
                            if (beta != 0.0f) {
                                const int row = hrow + warp * 16 + lane / 4 + 8 * q;
                                const int col = 8 * j + 2 * (lane % 4);
                                const uint8_t *src = ct + c_tile_offset<OUT_BYTES>(row, col);
                                float2 cv;
                                if constexpr (OUT_BYTES == 4)
                                    cv = *reinterpret_cast<const float2 *>(src);
                                else
                                    cv = unpack2(*reinterpret_cast<const uint32_t *>(src), (TOut *)nullptr);
                                v0 = fmaf(beta, cv.x, v0);
                                v1 = fmaf(beta, cv.y, v1);
                            }
                        }
                    }
                    /* stmatrix below writes rows other lanes of this warp read above. */
                    __syncwarp();
                    if constexpr (OUT_BYTES == 4) {
#pragma unroll
                        for (int j = 0; j < WGMMA_N / 8; ++j)
#pragma unroll
                            for (int q = 0; q < 2; ++q) {
                                const int row = hrow + warp * 16 + lane / 4 + 8 * q;
                                const int col = 8 * j + 2 * (lane % 4);
                                *reinterpret_cast<float2 *>(ct + c_tile_offset<4>(row, col)) =
                                    make_float2(acc[h][4 * j + 2 * q], acc[h][4 * j + 2 * q + 1]);
                            }
                    } else {
                        /* One stmatrix.x4 stores a 16(n) x 16(m) block: matrices
                         * (rows 0-7 | 8-15) x (cols 0-7 | 8-15); lanes 8i..8i+7
                         * address the rows of matrix i. */
                        const int mat = lane / 8;
                        const int row = hrow + warp * 16 + (lane % 8) + 8 * (mat & 1);
#pragma unroll
                        for (int jj = 0; jj < WGMMA_N / 16; ++jj) {
                            const int col = 16 * jj + 8 * (mat >> 1);
                            const float *a = &acc[h][8 * jj];
                            stmatrix_x4(ct + c_tile_offset<OUT_BYTES>(row, col),
                                        pack2(a[0], a[1], (TOut *)nullptr),
                                        pack2(a[2], a[3], (TOut *)nullptr),
                                        pack2(a[4], a[5], (TOut *)nullptr),
                                        pack2(a[6], a[7], (TOut *)nullptr));
                        }
                    }
                }
                /* Generic-proxy writes -> visible to the TMA store (async proxy). */
                fence_proxy_async_shared_cta();
                named_barrier_sync(BAR_EPI_STORE0 + c, WARPGROUP_THREADS);
                if (!direct_store) {
                    if (wg_tid == 0) {
                        for (int ch = 0; ch < Out::CHUNKS; ++ch)
                            tma_store_3d(&tmap_c, ct + ch * Out::CHUNK_BYTES,
                                         tc.m0 + ch * Out::CHUNK_COLS, tc.n0 + row0, tc.b);
                        tma_store_commit_group();
                    }
                } else {
                    /* Ragged last m tile: exact, predicated stores (coalesced along m). */
                    TOut *cg = static_cast<TOut *>(p.c) + (long long)tc.b * p.stride_c;
                    for (int idx = wg_tid; idx < Out::EPI_ROWS * BLOCK_M; idx += WARPGROUP_THREADS) {
                        const int r = idx / BLOCK_M, col = idx % BLOCK_M;
                        const int gm = tc.m0 + col, gn = tc.n0 + row0 + r;
                        if (gm < p.m && gn < p.n)
                            cg[(long long)gn * p.ldc + gm] =
                                *reinterpret_cast<const TOut *>(ct + c_tile_offset<OUT_BYTES>(r, col));
                    }
                }
            }
        }
        if (wg_tid == 0)
            tma_store_wait_all<0>();
    } /* CONSUMER0 / CONSUMER1 */
}

/* ---------------------------------------------------------------------------
 * Host side
 * ------------------------------------------------------------------------- */

PFN_cuTensorMapEncodeTiled_v12000 get_encode_tiled(void)
{
    static std::once_flag once;
    static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
    std::call_once(once, [] {
        void *ptr = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000,
                                             cudaEnableDefault, &q) == cudaSuccess
            && q == cudaDriverEntryPointSuccess)
            fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(ptr);
    });
    return fn;
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

size_t smem_for(gs_dtype_t c_type)
{
    return c_type == GS_DT_F32 ? (size_t)smem_bytes<4>() : (size_t)smem_bytes<2>();
}

template <typename TIn, typename TOut, bool P_KMAJOR, bool Q_KMAJOR>
int launch(const gs_problem_t *pr, const gs_device_t *d)
{
    constexpr int OUT_BYTES = (int)sizeof(TOut);
    constexpr int SMEM = smem_bytes<OUT_BYTES>();
    auto kernel = pingpong_128x128x64<TIn, TOut, P_KMAJOR, Q_KMAJOR>;

    /* Raise the dynamic smem limit once per device (a bit per ordinal; a
     * racing second call is harmless). */
    static std::atomic<uint64_t> attr_done{0};
    const uint64_t bit = 1ull << (d->ordinal & 63);
    if (!(attr_done.load(std::memory_order_acquire) & bit)) {
        cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return (int)e;
        }
        attr_done.fetch_or(bit, std::memory_order_acq_rel);
    }

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
        ok &= encode_3d(&tq, idt, ies, pr->A, k, m, batch, pr->lda, pr->stride_a, BLOCK_K, BLOCK_M);
    else /* A stored m x k, m contiguous */
        ok &= encode_3d(&tq, idt, ies, pr->A, m, k, batch, pr->lda, pr->stride_a, MN_CHUNK, BLOCK_K);
    ok &= encode_3d(&tc, tmap_dtype(pr->c_type), oes, pr->C, m, n, batch, pr->ldc, pr->stride_c,
                    OutTile<OUT_BYTES>::CHUNK_COLS, OutTile<OUT_BYTES>::EPI_ROWS);
    if (!ok)
        return (int)cudaErrorInvalidValue;

    Params prm;
    prm.m = (int)m;
    prm.n = (int)n;
    prm.k = (int)k;
    prm.tiles_m = (int)((m + BLOCK_M - 1) / BLOCK_M);
    prm.tiles_n = (int)((n + BLOCK_N - 1) / BLOCK_N);
    prm.k_blocks = (int)((k + BLOCK_K - 1) / BLOCK_K);
    prm.total_tiles = prm.tiles_m * prm.tiles_n * (int)batch;
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
    prm.c = pr->C;
    prm.ldc = pr->ldc;
    prm.stride_c = pr->stride_c;

    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)(prm.total_tiles < d->sm_count ? prm.total_tiles : d->sm_count));
    cfg.blockDim = dim3(NUM_THREADS);
    cfg.dynamicSmemBytes = SMEM;
    cfg.stream = static_cast<cudaStream_t>(pr->stream);
    cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, tp, tq, tc, prm);
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    return (int)e;
}

template <typename TIn, typename TOut>
int launch_layout(const gs_problem_t *p, const gs_device_t *d)
{
    const bool p_kmajor = p->trans_b == GS_OP_N;
    const bool q_kmajor = p->trans_a == GS_OP_T;
    if (p_kmajor && q_kmajor) return launch<TIn, TOut, true, true>(p, d);
    if (p_kmajor) return launch<TIn, TOut, true, false>(p, d);
    if (q_kmajor) return launch<TIn, TOut, false, true>(p, d);
    return launch<TIn, TOut, false, false>(p, d);
}

bool aligned16(const void *ptr) { return ((uintptr_t)ptr & 15u) == 0; }

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

extern "C" int gs_pingpong_can_implement(const gs_problem_t *p, const gs_device_t *d,
                                         gs_pingpong_config_t cfg)
{
    if (!p || !d || cfg != GS_PINGPONG_128x128x64)
        return 0;
    if (!d->present || d->cc_major != 9 || d->cc_minor != 0 || d->sm_count < 1)
        return 0;
    if (p->entry == GS_EP_GEMMEX_BATCHED) /* A/B/C are pointer arrays there */
        return 0;
    if (p->a_type != p->b_type || (p->a_type != GS_DT_BF16 && p->a_type != GS_DT_F16))
        return 0;
    if (p->c_type != p->a_type && p->c_type != GS_DT_F32)
        return 0;
    switch (p->compute) {
    case GS_CT_F32:
    case GS_CT_F32_PEDANTIC:
    case GS_CT_F32_FAST_16F:
    case GS_CT_F32_FAST_16BF:
        break;
    default:
        return 0;
    }
    if (p->scalar_type != GS_DT_F32 || !p->alpha || !p->beta)
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
    const int64_t tiles = ((p->m + BLOCK_M - 1) / BLOCK_M) * ((p->n + BLOCK_N - 1) / BLOCK_N);
    if (tiles >= lim || tiles * p->batch >= lim)
        return 0;
    if (!p->A || !p->B || !p->C || !aligned16(p->A) || !aligned16(p->B) || !aligned16(p->C))
        return 0;
    const size_t ies = gs_dtype_size(p->a_type), oes = gs_dtype_size(p->c_type);
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
        if (p->stride_c < p->ldc * (p->n - 1) + p->m) /* C batches overlap */
            return 0;
    }
    if (d->smem_optin < smem_for(p->c_type))
        return 0;
    return 1;
}

extern "C" int gs_pingpong_run(const gs_problem_t *p, const gs_device_t *d,
                               gs_pingpong_config_t cfg)
{
    if (!gs_pingpong_can_implement(p, d, cfg))
        return (int)cudaErrorInvalidValue;
    if (p->a_type == GS_DT_BF16) {
        if (p->c_type == GS_DT_F32)
            return launch_layout<__nv_bfloat16, float>(p, d);
        return launch_layout<__nv_bfloat16, __nv_bfloat16>(p, d);
    }
    if (p->c_type == GS_DT_F32)
        return launch_layout<__half, float>(p, d);
    return launch_layout<__half, __half>(p, d);
}

extern "C" const char *gs_pingpong_name(gs_pingpong_config_t cfg)
{
    switch (cfg) {
    case GS_PINGPONG_128x128x64: return "pingpong_128x128x64";
    default: return "pingpong_unknown";
    }
}
