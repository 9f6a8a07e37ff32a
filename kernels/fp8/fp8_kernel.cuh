/* The FP8 pingpong kernel: the pingpong 128x128 tile's roles, ring and
 * epilogue (kernels/pingpong) with FP8 wgmmas in the mainloop, an optional
 * fp32 promotion of the partial sums, and the A/B scales applied to the
 * accumulators before the pingpong epilogue stores them. */
#ifndef GS_FP8_KERNEL_CUH
#define GS_FP8_KERNEL_CUH

#include "pingpong_epilogue.cuh"
#include "fp8_tiles.h"

namespace {

/* The pingpong 128x128 configuration, reused as it is: a k-block of 128
 * FP8 elements is the 128-byte swizzle row a bf16 k-block of 64 is, so the
 * stage sizes, the TMA boxes in bytes, the K-major wgmma descriptors
 * (operand_desc<true>: a k-step moves 32 bytes inside the row, 16 bf16 or
 * 32 FP8 elements) and the epilogue staging are the same. */
using Fp8Cfg = Cfg128x128;
static_assert(GS_FP8_BLOCK_M == Fp8Cfg::BLOCK_M && GS_FP8_BLOCK_N == BLOCK_N, "tile shape");
static_assert(GS_FP8_BLOCK_K * 1 == BLOCK_K * IN_BYTES, "an FP8 k-block is one swizzle row");
static_assert(GS_FP8_WGMMA_K * 1 == WGMMA_K * IN_BYTES, "a k32 step moves the bytes a k16 step does");
static_assert(GS_FP8_PROMOTE_K == GS_FP8_BLOCK_K, "promotion once per k-block");
static_assert(GS_FP8_THREADS == NUM_THREADS, "producer + two consumers");
static_assert(GS_FP8_SMEM_BYTES == smem_bytes<Fp8Cfg>(), "fp8_tiles.h's shared memory");
static_assert(!Fp8Cfg::COOPERATIVE && Fp8Cfg::HALVES_PER_CONSUMER == M_HALVES,
              "each consumer owns whole tiles");

constexpr int FP8_K_STEPS = GS_FP8_BLOCK_K / GS_FP8_WGMMA_K; /* k32 wgmmas per k-block (4) */

struct Fp8Params {
    Params base; /* the pingpong epilogue's and scheduler's (no split, no stream-K) */
    /* cuBLASLt's A_SCALE_POINTER / B_SCALE_POINTER (device memory), NULL for
     * none; *_vec: one factor per row of op(A) (m) / column of op(B) (n),
     * else one for the whole matrix */
    const float *scale_a, *scale_b;
    int a_vec, b_vec;
};

__device__ __forceinline__ float scale_at(const float *s, int vec, int i, int extent)
{
    if (!s)
        return 1.0f;
    /* rows and columns past the matrix (a ragged tile) are never stored */
    return vec ? (i < extent ? __ldg(s + i) : 0.0f) : __ldg(s);
}

/* acc (both M blocks of this consumer's tile) *= scale_a[m] * scale_b[n].
 * wgmma m64nN layout (pingpong_epilogue.cuh, store_m_block): warp w of the
 * warpgroup holds rows 16w..16w+15 of each M block (rows are n here); lane
 * l holds row l/4 in regs 4j, 4j+1 and row l/4 + 8 in regs 4j+2, 4j+3, at
 * columns (m) 8j + 2(l%4) + {0, 1}. Loop order keeps six scale registers
 * live next to the accumulators. */
__device__ __forceinline__ void apply_scales(float (&acc)[M_HALVES][Fp8Cfg::ACC], const Fp8Params &fp,
                                             const TileCoord &tc, int warp, int lane)
{
    if (!fp.scale_a && !fp.scale_b)
        return;
    float sb[M_HALVES][2];
#pragma unroll
    for (int h = 0; h < M_HALVES; ++h)
#pragma unroll
        for (int q = 0; q < 2; ++q)
            sb[h][q] = scale_at(fp.scale_b, fp.b_vec,
                                tc.n0 + h * WGMMA_M + warp * EPI_ROWS + lane / 4 + 8 * q, fp.base.n);
#pragma unroll
    for (int j = 0; j < Fp8Cfg::ACC / 4; ++j) {
        const int gm = tc.m0 + 8 * j + 2 * (lane % 4);
        const float sa0 = scale_at(fp.scale_a, fp.a_vec, gm, fp.base.m);
        const float sa1 = scale_at(fp.scale_a, fp.a_vec, gm + 1, fp.base.m);
#pragma unroll
        for (int h = 0; h < M_HALVES; ++h)
#pragma unroll
            for (int q = 0; q < 2; ++q) {
                acc[h][4 * j + 2 * q] *= sa0 * sb[h][q];
                acc[h][4 * j + 2 * q + 1] *= sa1 * sb[h][q];
            }
    }
}

/* ---------------------------------------------------------------------------
 * The kernel. TP: wgmma A's element type = B's (wgmma A is op(B)^T, n x k);
 * TQ: wgmma B's = A's (op(A)^T, k x m); both __nv_fp8_e4m3 / _e5m2 and
 * K-major (TN calls only). PROMOTE: fast accumulation off.
 * ------------------------------------------------------------------------- */
template <typename TP, typename TQ, bool PROMOTE>
__global__ void __launch_bounds__(NUM_THREADS, 1)
fp8_pingpong_sm90(const __grid_constant__ CUtensorMap tmap_p, const __grid_constant__ CUtensorMap tmap_q,
                  const __grid_constant__ CUtensorMap tmap_c, const Fp8Params fp)
{
    using Cfg = Fp8Cfg;
    using Smem = SharedStorage<Cfg>;
    using Wgmma = wgmma_m64nNk32_f32_fp8<TP, TQ, Cfg::WGMMA_N>;
    constexpr int STAGES = Cfg::STAGES;
    const Params &p = fp.base;

    extern __shared__ __align__(1024) uint8_t gs_fp8_smem_raw[];
    Smem &ss = *reinterpret_cast<Smem *>(
        (reinterpret_cast<uintptr_t>(gs_fp8_smem_raw) + 1023) & ~(uintptr_t)1023);

    const int role = threadIdx.x / WARPGROUP_THREADS;
    const int wg_tid = threadIdx.x % WARPGROUP_THREADS;

    if (threadIdx.x == 0) {
        prefetch_tensormap(&tmap_p);
        prefetch_tensormap(&tmap_q);
        prefetch_tensormap(&tmap_c);
        for (int s = 0; s < STAGES; ++s) {
            mbarrier_init(&ss.full[s], 1);                   /* the producer's expect_tx arrival */
            mbarrier_init(&ss.empty[s], Cfg::STAGE_READERS); /* one arrival per reading warp */
        }
        for (int w = 0; w < CONSUMER_WARPS; ++w)
            mbarrier_init(&ss.c_full[w], 1);
        fence_mbarrier_init();
    }
    /* Nothing in global memory before the previous grid is done (PDL). */
    griddepcontrol_wait();
    __syncthreads();

    if (role == PRODUCER) {
        setmaxnreg_dec<PRODUCER_REGS>();
        if (wg_tid == 0) {
            uint32_t it = 0;
            for (int t = blockIdx.x; t < p.total_tiles; t += gridDim.x) {
                const TileCoord tc = tile_coord<Cfg>(p, t);
                for (int kb = 0; kb < p.k_blocks; ++kb, ++it) {
                    const int s = ring_stage<STAGES>(it);
                    /* First lap: waiting on the parity before phase 0 returns at once. */
                    mbarrier_wait_parity(&ss.empty[s], ring_phase<STAGES>(it) ^ 1u);
                    /* Out-of-bounds box elements (ragged m, n, k) are zero-filled
                     * and still counted: zeros add nothing to the products. */
                    mbarrier_arrive_expect_tx(&ss.full[s], Cfg::STAGE_BYTES);
                    const int k0 = kb * GS_FP8_BLOCK_K;
                    tma_load_3d(ss.stage[s].p, &tmap_p, &ss.full[s], k0, tc.n0, 0);
                    tma_load_3d(ss.stage[s].q, &tmap_q, &ss.full[s], k0, tc.m0, 0);
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
        EpiState epi = {0u, 0u};

        float acc[M_HALVES][Cfg::ACC];
        /* PROMOTE: one M block's k-block partial sums, added into acc */
        float part[PROMOTE ? Cfg::ACC : 1];

        /* Local tile i (the CTA's i-th) belongs to consumer i % 2. */
        int i = c;
        for (int t = blockIdx.x + i * gridDim.x; t < p.total_tiles;
             t += NUM_CONSUMERS * gridDim.x, i += NUM_CONSUMERS) {
            uint32_t it = (uint32_t)i * (uint32_t)p.k_blocks; /* the ring position of its first k-block */

            /* ---- mainloop, in turn with the other consumer ---- */
            if (i > 0)
                named_barrier_sync(BAR_MATH_TURN0 + c, 2 * WARPGROUP_THREADS);
            for (int kb = 0; kb < p.k_blocks; ++kb, ++it) {
                const int s = ring_stage<STAGES>(it);
                mbarrier_wait_parity(&ss.full[s], ring_phase<STAGES>(it));
                const uint32_t p_addr = smem_u32(ss.stage[s].p);
                const uint32_t q_addr = smem_u32(ss.stage[s].q);
                if constexpr (PROMOTE) {
                    /* One M block at a time into part (a fresh sum per k-block:
                     * scale_d 0 at its first k-step), waited for, then added
                     * into acc in fp32: the reduced-precision sum never spans
                     * more than GS_FP8_PROMOTE_K of k. Two blocks in flight
                     * would need 128 more registers than the 232 a consumer
                     * has next to acc. */
#pragma unroll
                    for (int h = 0; h < M_HALVES; ++h) {
                        wgmma_fence(); /* part was read by the adds below */
#pragma unroll
                        for (int ks = 0; ks < FP8_K_STEPS; ++ks)
                            Wgmma::run(part, operand_desc<true>(p_addr, h, ks),
                                       operand_desc<true>(q_addr, 0, ks), ks > 0 ? 1 : 0);
                        wgmma_commit_group();
                        wgmma_wait_group<0>();
#pragma unroll
                        for (int r = 0; r < Cfg::ACC; ++r) {
                            wgmma_fence_operand(part[r]);
                            acc[h][r] = kb > 0 ? acc[h][r] + part[r] : part[r];
                        }
                    }
                    /* every wgmma reading the stage has finished */
                    if (lane == 0)
                        mbarrier_arrive(&ss.empty[s]);
                } else {
                    wgmma_fence();
#pragma unroll
                    for (int ks = 0; ks < FP8_K_STEPS; ++ks) {
                        const uint64_t db = operand_desc<true>(q_addr, 0, ks);
#pragma unroll
                        for (int h = 0; h < M_HALVES; ++h)
                            Wgmma::run(acc[h], operand_desc<true>(p_addr, h, ks), db,
                                       (kb > 0 || ks > 0) ? 1 : 0);
                    }
                    wgmma_commit_group();
                    /* Keep this k-block's wgmmas in flight; the previous one has
                     * finished reading its stage, which goes back to the producer. */
                    wgmma_wait_group<1>();
                    if (kb > 0 && lane == 0)
                        mbarrier_arrive(&ss.empty[ring_stage<STAGES>(it - 1)]);
                }
            }
            if constexpr (!PROMOTE) {
                wgmma_wait_group<0>();
#pragma unroll
                for (int h = 0; h < M_HALVES; ++h)
#pragma unroll
                    for (int r = 0; r < Cfg::ACC; ++r)
                        wgmma_fence_operand(acc[h][r]);
                if (lane == 0)
                    mbarrier_arrive(&ss.empty[ring_stage<STAGES>(it - 1)]);
            }
            /* The other consumer has local tile i + 1: its turn (after our
             * last wgmmas retired; the pingpong tile's early hand-over for
             * long K is a later tuning step). */
            if (t + (int)gridDim.x < p.total_tiles)
                named_barrier_arrive(BAR_MATH_TURN0 + (c ^ 1), 2 * WARPGROUP_THREADS);

            /* ---- epilogue, per warp (overlaps the other consumer's mainloop) ---- */
            const TileCoord tc = tile_coord<Cfg>(p, t);
            apply_scales(acc, fp, tc, warp, lane);
            /* alpha, the bias and the store: the pingpong epilogue (beta is a
             * host zero: can_implement) */
            store_tile_any<Cfg, __nv_bfloat16, false>(acc, p, tc, c, warp, &tmap_c, ss.c_sub[cw],
                                                      &ss.c_full[cw], epi, p.alpha, 0.0f, ~0u);
        }
        /* Shared memory must outlive the reads of the last stores. */
        if (lane == 0)
            tma_store_wait_all<0>();
    } /* CONSUMER0 / CONSUMER1 */
}

} // namespace

#endif /* GS_FP8_KERNEL_CUH */
