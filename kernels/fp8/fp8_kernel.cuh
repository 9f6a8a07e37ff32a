/* The FP8 pingpong kernel: the pingpong 128x128 tile's roles, ring and
 * epilogue (kernels/pingpong) with FP8 wgmmas in the mainloop, an optional
 * fp32 promotion of the partial sums, and the A/B scales applied to the
 * accumulators before the pingpong epilogue stores them. */
#ifndef GS_FP8_KERNEL_CUH
#define GS_FP8_KERNEL_CUH

#include "pingpong_epilogue.cuh"
#include "fp8_scales.cuh"
#include "fp8_tiles.h"

namespace {

/* The pingpong 128x128 configuration, reused as it is: a k-block of 128
 * FP8 elements is the 128-byte swizzle row a bf16 k-block of 64 is, so the
 * stage sizes, the TMA boxes in bytes, the K-major wgmma descriptors
 * (operand_desc<true>: a k-step moves 32 bytes inside the row, 16 bf16 or
 * 32 FP8 elements) and the epilogue staging are the same. */
using Fp8Cfg = Cfg128x128;
/* The same tile, cooperative: both consumers work on every tile, each on
 * one 64-row M block (64 accumulators per thread). Its promotion keeps two
 * k-blocks in flight per consumer (two 64-register partial sums), and the
 * two consumers' wgmmas interleave, so the adds of one hide behind the
 * other's tensor-core work instead of stalling it. Same shared memory. */
using Fp8CoopCfg = TileConfig<128, true, 8, 2>;
/* The pingpong family's 256x128 cooperative tile: m64n256 wgmmas, 128
 * accumulators per consumer thread, so its promotion has room for one
 * 64-register partial sum (coop_mainloop_promoted_halves). */
using Fp8WideCfg = Cfg256x128;
/* The wide tile in clusters of two CTAs along n, sharing Q (op(A)^T, 32 KB
 * a stage) by TMA multicast: each CTA loads 16 KB of P and 16 KB of Q a
 * stage instead of 16 + 32, a third less L2 traffic per MAC. */
constexpr int FP8_MC_CLUSTER = 2;
static_assert(GS_FP8_BLOCK_M == Fp8Cfg::BLOCK_M && GS_FP8_BLOCK_N == BLOCK_N, "tile shape");
static_assert(GS_FP8_BLOCK_K * 1 == BLOCK_K * IN_BYTES, "an FP8 k-block is one swizzle row");
static_assert(GS_FP8_WGMMA_K * 1 == WGMMA_K * IN_BYTES, "a k32 step moves the bytes a k16 step does");
static_assert(GS_FP8_PROMOTE_K == GS_FP8_BLOCK_K, "promotion once per k-block");
static_assert(GS_FP8_THREADS == NUM_THREADS, "producer + two consumers");
static_assert(GS_FP8_SMEM_BYTES == smem_bytes<Fp8Cfg>() &&
                  GS_FP8_SMEM_BYTES == smem_bytes<Fp8CoopCfg>(),
              "fp8_tiles.h's shared memory");
static_assert(!Fp8Cfg::COOPERATIVE && Fp8Cfg::HALVES_PER_CONSUMER == M_HALVES,
              "each consumer owns whole tiles");
static_assert(Fp8CoopCfg::COOPERATIVE && Fp8CoopCfg::HALVES_PER_CONSUMER == 1 &&
                  Fp8CoopCfg::ACC == 64,
              "each consumer owns one M block of every tile");
static_assert(Fp8WideCfg::COOPERATIVE && Fp8WideCfg::HALVES_PER_CONSUMER == 1 &&
                  Fp8WideCfg::ACC == 128 && Fp8WideCfg::BLOCK_M == GS_FP8_WIDE_BLOCK_M &&
                  Fp8WideCfg::GROUP_M == GS_FP8_WIDE_GROUP_M &&
                  smem_bytes<Fp8WideCfg>() == GS_FP8_WIDE_SMEM_BYTES,
              "fp8_tiles.h's wide tile");

constexpr int FP8_K_STEPS = GS_FP8_BLOCK_K / GS_FP8_WGMMA_K; /* k32 wgmmas per k-block (4) */

/* The descriptor of k-step ks from that of k-step 0: a k-step moves 32 bytes
 * inside the swizzled row, and the descriptor's address field counts 16-byte
 * units, so it is the k-step 0 descriptor plus 2 ks (the field cannot carry:
 * shared memory addresses stay below 2^18 bytes). The promoted loops (the
 * cooperative 128x128 tile's and the wide tile's halves) build it once per
 * k-block instead of per wgmma: the mask, shift and or of each rebuild are
 * issued by the warps that also add the partial sums. The plain mainloop,
 * whose warps have nothing else to issue, measured slower with it and keeps
 * the per-wgmma build (bench/NOTES.md). */
__device__ __forceinline__ uint64_t desc_at_kstep(uint64_t desc_k0, int ks)
{
    return desc_k0 + (uint64_t)(ks * (GS_FP8_WGMMA_K / 16));
}

struct Fp8Params {
    Params base; /* the pingpong epilogue's and scheduler's (no split, no stream-K) */
    /* cuBLASLt's A_SCALE_POINTER / B_SCALE_POINTER (device memory), NULL for
     * none; *_vec: one factor per row of op(A) (m) / column of op(B) (n),
     * else one for the whole matrix */
    const float *scale_a, *scale_b;
    int a_vec, b_vec;
};

/* Column chunk j of every M block (registers 4j..4j+3) times its column
 * factors sa0, sa1 and its row factors sb (apply_scales' layout). */
template <typename Cfg>
__device__ __forceinline__ void scale_chunk(float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC], int j,
                                            float sa0, float sa1,
                                            const float (&sb)[Cfg::HALVES_PER_CONSUMER][2])
{
#pragma unroll
    for (int h = 0; h < Cfg::HALVES_PER_CONSUMER; ++h)
#pragma unroll
        for (int q = 0; q < 2; ++q) {
            acc[h][4 * j + 2 * q] *= sa0 * sb[h][q];
            acc[h][4 * j + 2 * q + 1] *= sa1 * sb[h][q];
        }
}

/* acc (this consumer's M blocks of the tile) *= scale_a[m] * scale_b[n],
 * each factor read as scale_at defines it (1 without a scale, the one
 * factor of a SCALAR_32F scale, a vector's factor per row or column).
 * wgmma m64nN layout (pingpong_epilogue.cuh, store_m_block): warp w of the
 * warpgroup holds rows 16w..16w+15 of each M block (rows are n here); lane
 * l holds row l/4 in regs 4j, 4j+1 and row l/4 + 8 in regs 4j+2, 4j+3, at
 * columns (m) 8j + 2(l%4) + {0, 1}. The scalar factors are read once and
 * folded into the row factors, so a tensorwise call multiplies each
 * accumulator once; the products are those scale_a * scale_b would give
 * (x * 1 is exact). Pingpong: M block h is rows 64h of the tile;
 * cooperative: consumer c's one block is rows 64c. */
template <typename Cfg>
__device__ __forceinline__ void apply_scales(float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                             const Fp8Params &fp, const TileCoord &tc, int c,
                                             int warp, int lane)
{
    constexpr int HPC = Cfg::HALVES_PER_CONSUMER;
    if (!fp.scale_a && !fp.scale_b)
        return;
    const bool a_vec = fp.scale_a && fp.a_vec, b_vec = fp.scale_b && fp.b_vec;
    const float k = (fp.scale_a && !fp.a_vec ? __ldg(fp.scale_a) : 1.0f) *
                    (fp.scale_b && !fp.b_vec ? __ldg(fp.scale_b) : 1.0f);
    float sb[HPC][2];
#pragma unroll
    for (int h = 0; h < HPC; ++h)
#pragma unroll
        for (int q = 0; q < 2; ++q) {
            const int row = tc.n0 + (Cfg::COOPERATIVE ? c : h) * WGMMA_M + warp * EPI_ROWS +
                            lane / 4 + 8 * q;
            sb[h][q] = (b_vec ? vec_factor(fp.scale_b, row, fp.base.n) : 1.0f) * k;
        }
    if (!a_vec) { /* uniform: a factor per row (n) only (1 * sb is sb) */
#pragma unroll
        for (int j = 0; j < Cfg::ACC / 4; ++j)
            scale_chunk<Cfg>(acc, j, 1.0f, 1.0f, sb);
        return;
    }
    /* A lane's two columns 2(l%4) + {0, 1} of each 8 are one 8-byte load
     * where the vector is 8-byte aligned and the tile lies inside m (its
     * columns start at an even m): no clamps, constant offsets. One loop per
     * case, so no branch sits between the loads. */
    const float *sa_lane = fp.scale_a + tc.m0 + 2 * (lane % 4);
    if (((reinterpret_cast<uintptr_t>(fp.scale_a) & 7u) == 0) &&
        tc.m0 + Cfg::BLOCK_M <= fp.base.m) {
#pragma unroll
        for (int j = 0; j < Cfg::ACC / 4; ++j) {
            const float2 sa = __ldg(reinterpret_cast<const float2 *>(sa_lane + 8 * j));
            scale_chunk<Cfg>(acc, j, sa.x, sa.y, sb);
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < Cfg::ACC / 4; ++j) {
        const int gm = tc.m0 + 8 * j + 2 * (lane % 4);
        scale_chunk<Cfg>(acc, j, vec_factor(fp.scale_a, gm, fp.base.m),
                         vec_factor(fp.scale_a, gm + 1, fp.base.m), sb);
    }
}

/* A stage read by this warp goes back: one arrival on its empty barrier in
 * every CTA of the cluster (CLUSTER > 1: the producers there multicast
 * into this CTA's copy of the stage, so each waits for every reader). */
template <int CLUSTER>
__device__ __forceinline__ void release_stage(uint64_t *empty)
{
    if constexpr (CLUSTER == 1) {
        mbarrier_arrive(empty);
    } else {
#pragma unroll
        for (uint32_t r = 0; r < (uint32_t)CLUSTER; ++r)
            mbarrier_arrive_cluster(empty, r);
    }
}

/* Unit u's tile for this CTA. CLUSTER > 1: a unit is CLUSTER tiles side by
 * side along n sharing one m range (Params::tiles_n counts units along n),
 * the CTA of rank r taking the r-th. */
template <typename Cfg, int CLUSTER>
__device__ __forceinline__ TileCoord unit_tile(const Params &p, int u, uint32_t rank)
{
    TileCoord tc = tile_coord<Cfg>(p, u);
    if constexpr (CLUSTER > 1)
        tc.n0 = CLUSTER * tc.n0 + (int)rank * BLOCK_N;
    return tc;
}

/* The promoted sums start at zero and every k-block's partial sum is added:
 * one FADD per register. Taking the first k-block's partial as it is
 * instead ("kb > 0 ? acc + part : part") compiles to an FADD and an FSEL
 * per register and k-block, since kb is a run-time value: as many
 * instructions again as the adds, issued by the warps that wait on them. */
template <int ACC>
__device__ __forceinline__ void zero_acc(float (&acc)[ACC])
{
#pragma unroll
    for (int r = 0; r < ACC; ++r)
        acc[r] = 0.0f;
}

/* ---- the cooperative consumer's promoted mainloop ----
 * Per k-block: four k32 wgmmas into a fresh partial sum (scale_d 0 at the
 * first), committed as one group. Two partial sums alternate: while the
 * wgmmas of k-block kb run into one, the other (k-block kb - 1, retired by
 * wait_group<1>) is added into acc in fp32 and its stage goes back to the
 * producer. So the reduced-precision sum never spans more than
 * GS_FP8_PROMOTE_K of k, and the tensor cores always have a group queued. */
template <typename Wgmma, int ACC>
__device__ __forceinline__ void coop_issue(float (&part)[ACC], uint64_t *full, uint32_t p_addr,
                                           uint32_t q_addr, int s, uint32_t phase, int c)
{
    mbarrier_wait_parity(&full[s], phase);
    const uint64_t da = operand_desc<true>(p_addr, c, 0), db = operand_desc<true>(q_addr, 0, 0);
    wgmma_fence(); /* part was read by the adds of an earlier k-block */
#pragma unroll
    for (int ks = 0; ks < FP8_K_STEPS; ++ks)
        Wgmma::run(part, desc_at_kstep(da, ks), desc_at_kstep(db, ks), ks > 0 ? 1 : 0);
    wgmma_commit_group();
}

template <int ACC, int CLUSTER>
__device__ __forceinline__ void coop_retire(float (&acc)[ACC], float (&part)[ACC], uint64_t *empty,
                                            int lane)
{
#pragma unroll
    for (int r = 0; r < ACC; ++r) {
        wgmma_fence_operand(part[r]);
        acc[r] += part[r];
    }
    if (lane == 0)
        release_stage<CLUSTER>(empty); /* every wgmma reading the stage has finished */
}

template <typename Cfg, typename Wgmma, int CLUSTER, typename Smem>
__device__ __forceinline__ void coop_mainloop_promoted(float (&acc)[Cfg::ACC], Smem &ss,
                                                       uint32_t it0, int k_blocks, int c, int lane)
{
    constexpr int STAGES = Cfg::STAGES;
    float part0[Cfg::ACC], part1[Cfg::ACC];
    auto issue = [&](float (&part)[Cfg::ACC], uint32_t it) {
        const int s = ring_stage<STAGES>(it);
        coop_issue<Wgmma, Cfg::ACC>(part, ss.full, smem_u32(ss.stage[s].p), smem_u32(ss.stage[s].q),
                                    s, ring_phase<STAGES>(it), c);
    };
    auto retire = [&](float (&part)[Cfg::ACC], uint32_t it) {
        coop_retire<Cfg::ACC, CLUSTER>(acc, part, &ss.empty[ring_stage<STAGES>(it)], lane);
    };
    zero_acc(acc);
    issue(part0, it0);
    int kb = 1;
    /* k-blocks in pairs, so each partial sum is a fixed set of registers */
    for (; kb + 1 < k_blocks; kb += 2) {
        issue(part1, it0 + kb);
        wgmma_wait_group<1>();
        retire(part0, it0 + kb - 1);
        issue(part0, it0 + kb + 1);
        wgmma_wait_group<1>();
        retire(part1, it0 + kb);
    }
    if (kb < k_blocks) { /* an even count: the last k-block goes into part1 */
        issue(part1, it0 + kb);
        wgmma_wait_group<1>();
        retire(part0, it0 + kb - 1);
        wgmma_wait_group<0>();
        retire(part1, it0 + kb);
    } else {
        wgmma_wait_group<0>();
        retire(part0, it0 + kb - 1);
    }
}

/* ---- the wide cooperative consumer's promoted mainloop ----
 * A consumer's 128 accumulators leave room for one 64-register partial
 * sum, so each k-block is promoted in two m64n128 halves: m columns 0-127
 * of the consumer's m64n256 block, then 128-255 (Q's rows 128h.., and
 * accumulator registers 64h..64h+63: the wgmma layout keeps column chunk j
 * in registers 4j..4j+3). Each half is waited for before its adds; the
 * other consumer's wgmmas keep the tensor cores busy meanwhile. */
template <typename Cfg, typename Wgmma128, int CLUSTER, typename Smem>
__device__ __forceinline__ void coop_mainloop_promoted_halves(float (&acc)[Cfg::ACC], Smem &ss,
                                                              uint32_t it0, int k_blocks, int c,
                                                              int lane)
{
    constexpr int STAGES = Cfg::STAGES;
    constexpr int PART = Cfg::ACC / 2;
    float part[PART];
    zero_acc(acc);
    for (int kb = 0; kb < k_blocks; ++kb) {
        const uint32_t it = it0 + kb;
        const int s = ring_stage<STAGES>(it);
        mbarrier_wait_parity(&ss.full[s], ring_phase<STAGES>(it));
        const uint64_t da = operand_desc<true>(smem_u32(ss.stage[s].p), c, 0);
        const uint32_t q_addr = smem_u32(ss.stage[s].q);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const uint64_t db = operand_desc<true>(q_addr, 2 * h, 0);
            wgmma_fence(); /* part was read by the adds of the other half */
#pragma unroll
            for (int ks = 0; ks < FP8_K_STEPS; ++ks)
                Wgmma128::run(part, desc_at_kstep(da, ks), desc_at_kstep(db, ks), ks > 0 ? 1 : 0);
            wgmma_commit_group();
            wgmma_wait_group<0>();
#pragma unroll
            for (int r = 0; r < PART; ++r) {
                wgmma_fence_operand(part[r]);
                acc[PART * h + r] += part[r];
            }
        }
        if (lane == 0)
            release_stage<CLUSTER>(&ss.empty[s]); /* every wgmma reading the stage has finished */
    }
}

/* ---------------------------------------------------------------------------
 * The kernel. Cfg: Fp8Cfg (pingpong: each consumer owns whole tiles, their
 * mainloops in turn), Fp8CoopCfg or Fp8WideCfg (cooperative: both consumers
 * on every tile). TP: wgmma A's element type = B's (wgmma A is op(B)^T, n x k); TQ:
 * wgmma B's = A's (op(A)^T, k x m); both __nv_fp8_e4m3 / _e5m2 and K-major
 * (TN calls only). PROMOTE: fast accumulation off.
 * ------------------------------------------------------------------------- */
template <typename Cfg, typename TP, typename TQ, bool PROMOTE, int CLUSTER>
__global__ void __launch_bounds__(NUM_THREADS, 1)
fp8_sm90(const __grid_constant__ CUtensorMap tmap_p, const __grid_constant__ CUtensorMap tmap_q,
         const __grid_constant__ CUtensorMap tmap_c, const Fp8Params fp)
{
    using Smem = SharedStorage<Cfg>;
    using Wgmma = wgmma_m64nNk32_f32_fp8<TP, TQ, Cfg::WGMMA_N>;
    constexpr int STAGES = Cfg::STAGES;
    constexpr bool COOP = Cfg::COOPERATIVE;
    constexpr int HPC = Cfg::HALVES_PER_CONSUMER;
    const Params &p = fp.base;

    extern __shared__ __align__(1024) uint8_t gs_fp8_smem_raw[];
    Smem &ss = *reinterpret_cast<Smem *>(
        (reinterpret_cast<uintptr_t>(gs_fp8_smem_raw) + 1023) & ~(uintptr_t)1023);

    static_assert(CLUSTER == 1 || (COOP && Cfg::BLOCK_M % (CLUSTER * 8) == 0),
                  "clusters: cooperative tiles, Q split in whole swizzle atoms");
    /* CLUSTER > 1: the CTAs of a cluster work on one unit at a time, tiles
     * side by side along n; each loads its own P and 1/CLUSTER of the Q
     * they share, multicast into all of them. */
    constexpr int Q_PART_ROWS = Cfg::BLOCK_M / CLUSTER;
    constexpr uint32_t Q_PART_BYTES = (uint32_t)Q_PART_ROWS * SW128_ROW;
    static_assert(CLUSTER * Q_PART_BYTES == (uint32_t)Cfg::Q_TILE_BYTES && Q_PART_BYTES % 1024 == 0,
                  "Q's parts tile the stage's Q in whole swizzle atoms");

    const int role = threadIdx.x / WARPGROUP_THREADS;
    const int wg_tid = threadIdx.x % WARPGROUP_THREADS;

    if (threadIdx.x == 0) /* no split-K: no reduction barrier */
        init_cta<Cfg, false, CLUSTER>(ss, &tmap_p, &tmap_q, &tmap_c);
    /* Nothing in global memory before the previous grid is done (PDL). */
    griddepcontrol_wait();
    /* Clusters: no multicast or remote arrival before every CTA's barriers
     * are initialised. */
    if constexpr (CLUSTER > 1)
        cluster_sync_all();
    else
        __syncthreads();

    if (role == PRODUCER) {
        setmaxnreg_dec<PRODUCER_REGS>();
        if (wg_tid == 0) {
            const uint32_t rank = CLUSTER > 1 ? cluster_ctarank() : 0u;
            const unsigned unit0 = blockIdx.x / CLUSTER, unit_step = gridDim.x / CLUSTER;
            uint32_t it = 0;
            for (int u = unit0; u < p.total_tiles; u += unit_step) {
                const TileCoord tc = unit_tile<Cfg, CLUSTER>(p, u, rank);
                for (int kb = 0; kb < p.k_blocks; ++kb, ++it) {
                    const int s = ring_stage<STAGES>(it);
                    /* First lap: waiting on the parity before phase 0 returns at
                     * once. Clusters: every CTA's readers have released it. */
                    mbarrier_wait_parity(&ss.empty[s], ring_phase<STAGES>(it) ^ 1u);
                    /* Out-of-bounds box elements (ragged m, n, k; a cluster's tile
                     * past n) are zero-filled and still counted: zeros add nothing
                     * to the products. Clusters: the other CTAs' parts of Q land
                     * here and count on this barrier too, the whole stage. */
                    mbarrier_arrive_expect_tx(&ss.full[s], Cfg::STAGE_BYTES);
                    const int k0 = kb * GS_FP8_BLOCK_K;
                    tma_load_3d(ss.stage[s].p, &tmap_p, &ss.full[s], k0, tc.n0, 0);
                    if constexpr (CLUSTER > 1)
                        tma_load_3d_multicast(ss.stage[s].q + rank * Q_PART_BYTES, &tmap_q,
                                              &ss.full[s], k0, tc.m0 + (int)rank * Q_PART_ROWS, 0,
                                              (uint16_t)((1u << CLUSTER) - 1u));
                    else
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

        float acc[HPC][Cfg::ACC];
        /* the pingpong tile's promotion: one M block's k-block partial sums */
        float part[PROMOTE && !COOP ? Cfg::ACC : 1];

        /* Deferred epilogue (the pingpong family's, C_DEFER): a cooperative
         * tile stores half its sub-tiles at its end and the other half, packed
         * to bf16 in registers, during the next tile's first k-blocks, so the
         * tensor cores are not idle for all of the store. The wide tile's
         * fast accumulation only: the promoted loops hold partial sums in
         * those registers, and the 128x128 tile (one sub-tile of two
         * deferred) measured no gain (bench/NOTES.md). */
        using OutT = __nv_bfloat16;
        constexpr bool DEFER = COOP && !PROMOTE && Cfg::BLOCK_M == 256;
        uint32_t pk[DEFER ? Defer<Cfg, OutT>::PK : 1];
        int pend = 0;
        DeferredTile dt = {0, 0, 0};

        /* Pingpong: local tile i (the CTA's i-th) belongs to consumer i % 2.
         * Cooperative: both consumers take every tile. */
        constexpr int TILE_STRIDE = COOP ? 1 : NUM_CONSUMERS;
        const uint32_t rank = CLUSTER > 1 ? cluster_ctarank() : 0u;
        const unsigned unit0 = blockIdx.x / CLUSTER, unit_step = gridDim.x / CLUSTER;
        int i = COOP ? 0 : c;
        for (int t = unit0 + i * unit_step; t < p.total_tiles;
             t += TILE_STRIDE * unit_step, i += TILE_STRIDE) {
            uint32_t it = (uint32_t)i * (uint32_t)p.k_blocks; /* the ring position of its first k-block */

            /* ---- mainloop (pingpong: in turn with the other consumer) ---- */
            if (!COOP && i > 0)
                named_barrier_sync(BAR_MATH_TURN0 + c, 2 * WARPGROUP_THREADS);
            if constexpr (!COOP && PROMOTE) {
#pragma unroll
                for (int h = 0; h < HPC; ++h)
                    zero_acc(acc[h]);
            }
            if constexpr (COOP && PROMOTE && Cfg::ACC == 128) {
                coop_mainloop_promoted_halves<Cfg, wgmma_m64nNk32_f32_fp8<TP, TQ, 128>, CLUSTER>(
                    acc[0], ss, it, p.k_blocks, c, lane);
            } else if constexpr (COOP && PROMOTE) {
                coop_mainloop_promoted<Cfg, Wgmma, CLUSTER>(acc[0], ss, it, p.k_blocks, c, lane);
            } else {
                for (int kb = 0; kb < p.k_blocks; ++kb, ++it) {
                    const int s = ring_stage<STAGES>(it);
                    mbarrier_wait_parity(&ss.full[s], ring_phase<STAGES>(it));
                    const uint32_t p_addr = smem_u32(ss.stage[s].p);
                    const uint32_t q_addr = smem_u32(ss.stage[s].q);
                    if constexpr (PROMOTE) {
                        /* Pingpong: one M block at a time into part (a fresh sum
                         * per k-block: scale_d 0 at its first k-step), waited
                         * for, then added into acc in fp32. Two blocks in flight
                         * would need 128 more registers than the 232 a consumer
                         * has next to acc; this serialises the tensor cores
                         * with the adds, which the cooperative tile avoids. */
#pragma unroll
                        for (int h = 0; h < HPC; ++h) {
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
                                acc[h][r] += part[r];
                            }
                        }
                        /* every wgmma reading the stage has finished */
                        if (lane == 0)
                            release_stage<CLUSTER>(&ss.empty[s]);
                    } else {
                        wgmma_fence();
#pragma unroll
                        for (int ks = 0; ks < FP8_K_STEPS; ++ks) {
                            const uint64_t db = operand_desc<true>(q_addr, 0, ks);
#pragma unroll
                            for (int h = 0; h < HPC; ++h)
                                Wgmma::run(acc[h], operand_desc<true>(p_addr, COOP ? c : h, ks), db,
                                           (kb > 0 || ks > 0) ? 1 : 0);
                        }
                        wgmma_commit_group();
                        /* the previous tile's deferred sub-tiles, one per k-block,
                         * while this k-block's wgmmas run */
                        if constexpr (DEFER)
                            deferred_step<Cfg, OutT>(pk, pend, dt, p, &tmap_c, ss.c_sub[cw], epi);
                        /* Keep this k-block's wgmmas in flight; the previous one
                         * has finished reading its stage, which goes back to the
                         * producer. */
                        wgmma_wait_group<1>();
                        if (kb > 0 && lane == 0)
                            release_stage<CLUSTER>(&ss.empty[ring_stage<STAGES>(it - 1)]);
                    }
                }
                if constexpr (!PROMOTE) {
                    wgmma_wait_group<0>();
#pragma unroll
                    for (int h = 0; h < HPC; ++h)
#pragma unroll
                        for (int r = 0; r < Cfg::ACC; ++r)
                            wgmma_fence_operand(acc[h][r]);
                    if (lane == 0)
                        release_stage<CLUSTER>(&ss.empty[ring_stage<STAGES>(it - 1)]);
                }
            }
            /* Pingpong: the other consumer has local tile i + 1: its turn
             * (after our last wgmmas retired). */
            if (!COOP && t + (int)unit_step < p.total_tiles)
                named_barrier_arrive(BAR_MATH_TURN0 + (c ^ 1), 2 * WARPGROUP_THREADS);

            /* ---- epilogue, per warp (pingpong: overlaps the other
             * consumer's mainloop; cooperative: the producer keeps loading
             * the next tile's stages meanwhile) ---- */
            const TileCoord tc = unit_tile<Cfg, CLUSTER>(p, t, rank);
            apply_scales<Cfg>(acc, fp, tc, c, warp, lane);
            if constexpr (DEFER)
                if (defer_tile_if<Cfg, OutT>(acc, p, tc, c, warp, &tmap_c, ss.c_sub[cw],
                                             &ss.c_full[cw], epi, p.alpha, 0.0f, pk, dt, pend))
                    continue;
            /* alpha, the bias and the store: the pingpong epilogue (beta is a
             * host zero: can_implement) */
            store_tile_any<Cfg, OutT, false>(acc, p, tc, c, warp, &tmap_c, ss.c_sub[cw],
                                             &ss.c_full[cw], epi, p.alpha, 0.0f, ~0u);
        }
        if constexpr (DEFER) /* the CTA's last tile */
            deferred_drain<Cfg, OutT>(pk, pend, dt, p, &tmap_c, ss.c_sub[cw], epi);
        /* Shared memory must outlive the reads of the last stores. */
        if (lane == 0)
            tma_store_wait_all<0>();
    } /* CONSUMER0 / CONSUMER1 */
    /* Clusters: no CTA leaves while another may still multicast into its
     * shared memory or arrive on its barriers. */
    if constexpr (CLUSTER > 1)
        cluster_sync_all();
}

} // namespace

#endif /* GS_FP8_KERNEL_CUH */
