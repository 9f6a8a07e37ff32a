/* The sm_90a decode kernel (skinny_ring_wg_tn) and its epilogue: the ring
 * kernel of skinny.cu with its math on wgmma (see kernels/skinny/skinny_sm90.cu
 * for why and how). A header so that the FP8 decode unit
 * (kernels/fp8/fp8_decode_sm90.cu) instantiates it for 8-bit operands: the
 * operand type picks the wgmma (wg_ring_mma) and whether cuBLASLt's A/B
 * scales are applied before the epilogue (wg_ring_scales). */
#ifndef GS_SKINNY_RING_WG_KERNEL_CUH
#define GS_SKINNY_RING_WG_KERNEL_CUH

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <cooperative_groups.h>

#include "gs_ptx.cuh"
#include "skinny_config.h"
#include "skinny_device.cuh"
#include "skinny_sm90.h"

namespace {


/* ---------------------------------------------------------------------------
 * Epilogue through shared memory.
 *
 * Why: stored straight from the accumulators, every element is its own
 * 2-byte store, and a warp's store instruction touches 4 columns (4 cache
 * lines, ldc apart). globaltimer stamps per block (H200, bench/NOTES.md)
 * put that epilogue at 4.4 us of a 66 us 28672x64x4096 call, and at 1.9 /
 * 2.5 / 4.2 us of 12-15 us calls at n = 16 / 32 / 64. So the final sums are
 * staged in the idle ring, column by column (C is column-major), and stored
 * 4 rows per lane: a warp instruction writes 8 columns x 16 rows, i.e. 8
 * whole 32-byte sectors.
 *
 * Staging layout: per accumulator owner (warp slot w, m64 block mt) a
 * [N_MAX][EPI_LD] fp32 block, column-major over its 16 rows. EPI_LD = 20
 * (16 + 4 pad) keeps every 4-row group 16-byte aligned and spreads the
 * fragment writes (lanes of columns 2t, 2t+1 and rows g) over all 32 banks.
 * It sits after the cluster reduction's buffer, which the other blocks of a
 * cluster read until the reduction's last cluster barrier.
 * ------------------------------------------------------------------------- */
constexpr int EPI_LD = 20;

template <class Cfg> struct EpiStage {
    static constexpr int OFFSET = (Cfg::RED_BYTES + 1023) / 1024 * 1024;
    static constexpr int BYTES = Cfg::WARPS * Cfg::M_TILES * Cfg::N_MAX * EPI_LD * 4;
    static_assert(OFFSET + BYTES <= Cfg::BAR_OFFSET, "epilogue staging must fit the idle ring");
};

/* Four consecutive rows of C as one vector: 8 bytes of bf16 / fp16 (each
 * element converted as store_c converts it: to_float / from_float in
 * skinny_device.cuh), or a float4 for fp32 output. */
template <class Out> struct Vec4 {
    using T = uint2;
    static __device__ __forceinline__ void unpack(const T &u, float (&o)[4])
    {
        const Out *e = reinterpret_cast<const Out *>(&u);
#pragma unroll
        for (int i = 0; i < 4; ++i)
            o[i] = to_float(e[i]);
    }
    static __device__ __forceinline__ T pack(const float (&o)[4])
    {
        T u;
        Out *e = reinterpret_cast<Out *>(&u);
#pragma unroll
        for (int i = 0; i < 4; ++i)
            e[i] = from_float<Out>(o[i]);
        return u;
    }
};
template <> struct Vec4<float> {
    using T = float4;
    static __device__ __forceinline__ void unpack(const T &u, float (&o)[4]) { o[0] = u.x; o[1] = u.y; o[2] = u.z; o[3] = u.w; }
    static __device__ __forceinline__ T pack(const float (&o)[4]) { return make_float4(o[0], o[1], o[2], o[3]); }
};

/* Four consecutive rows r..r+3 of column c: alpha * v + beta * C (+ bias),
 * rounded once, exactly as store_c does element by element (which the
 * vector path falls back to at the m edge or for a misaligned column). */
template <class Out>
__device__ __forceinline__ void store_c4(const skinny_params &prm, Out *C, int r, int c,
                                         const float4 v, float alpha, float beta)
{
    using V = Vec4<Out>;
    Out *cp = C + r + (int64_t)c * prm.ldc;
    if (r + 3 < prm.m && (reinterpret_cast<uintptr_t>(cp) % sizeof(typename V::T)) == 0) {
        float o[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int e = 0; e < 4; ++e)
            o[e] = prm.k == 0 ? 0.0f : alpha * o[e];
        if (beta != 0.0f) {
            float old[4];
            V::unpack(*reinterpret_cast<const typename V::T *>(cp), old);
#pragma unroll
            for (int e = 0; e < 4; ++e)
                o[e] = fmaf(beta, old[e], o[e]);
        }
        if (prm.bias)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                o[e] += load_bias(prm, r + e);
        *reinterpret_cast<typename V::T *>(cp) = V::pack(o);
        return;
    }
    const float o[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int e = 0; e < 4; ++e)
        if (r + e < prm.m)
            store_c<Out>(prm, C, r + e, c, o[e], alpha, beta);
}

/* Every warp of the block stores warp slots [w_begin, w_end) of the staging
 * (a warp slot is the rows one consumer warp's accumulators cover: rows
 * (w/4)*WG_ROWS + mt*64 + (w%4)*16 + 0..15 of the block). Work unit: one m64
 * block's 16 rows x 8 columns; lane l takes column 8u + l/4, rows 4(l%4)..+3. */
template <class Cfg, class Out, int WG_ROWS>
__device__ __forceinline__ void store_staged(const float *stage, const skinny_params &prm, Out *C,
                                             int row0, int w_begin, int w_end, float alpha,
                                             float beta)
{
    constexpr int MT = Cfg::M_TILES, CG = Cfg::N_MAX / 8, NWARPS = Cfg::THREADS / 32;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int units = (w_end - w_begin) * MT * CG;
    for (int u = warp; u < units; u += NWARPS) {
        const int cg = u % CG, mt = u / CG % MT, w = w_begin + u / CG / MT;
        const int col = cg * 8 + lane / 4, q4 = (lane % 4) * 4;
        if (col >= prm.n)
            continue;
        const float4 v =
            *reinterpret_cast<const float4 *>(stage + ((w * MT + mt) * Cfg::N_MAX + col) * EPI_LD + q4);
        const int row = row0 + (w / 4) * WG_ROWS + mt * 64 + (w % 4) * 16 + q4;
        if (row < prm.m)
            store_c4<Out>(prm, C, row, col, v, alpha, beta);
    }
}

/* How the blocks of a row block that split k meet. */
enum SplitMode {
    SPLIT_NONE = 0,    /* one block per row block */
    SPLIT_CLUSTER = 1, /* a thread block cluster: distributed shared memory */
    SPLIT_WS = 2,      /* co-resident blocks (cooperative launch): the workspace */
};

/* The workspace split, for splits a cluster cannot hold at one wave (H200:
 * at one 200 KB block per SM, clusters of 4 fit 120 of the 132 SMs, so
 * 32 row blocks x 4 would run a second wave). Every block stores its sums
 * to its slot, fragment-ordered (a warp's store = 512 contiguous bytes);
 * the blocks of the row block then count in on its counter and wait for
 * all S (they are co-resident: cooperative launch); rank r sums slice r of
 * the fragments over the slots in slot order 0..S-1 (fixed: bitwise
 * reproducible) and hands each sum to stage(). The counter goes back to
 * zero: each block adds 1 more once past its wait, and the one reaching 2S
 * resets it (every block is past its wait by then). */
template <class Cfg, class Frag, class Stage>
__device__ __forceinline__ void split_ws_reduce(const skinny_ws &ws, int slot, int rank, int S,
                                                Frag frag, Stage stage)
{
    constexpr int MT = Cfg::M_TILES, NT = Cfg::N_TILES, W = Cfg::WARPS;
    constexpr int Q = W * MT * NT * 32;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float4 *tile = static_cast<float4 *>(ws.partials) + (size_t)slot * S * Q;
    if (warp < W)
        put_fragments<Cfg>(tile + (size_t)rank * Q, warp, lane, frag);
    __syncthreads();
    if (threadIdx.x == 0) {
        int *sem = ws.counters + slot;
        red_add_release_gpu(sem, 1);
        while (ld_acquire_gpu(sem) < S) {
        }
        if (atom_add_relaxed_gpu(sem, 1) == 2 * S - 1)
            st_relaxed_gpu(sem, 0);
    }
    __syncthreads();
    const int per_rank = Q / S; /* S divides W (host check) */
    sum_fragments_in_order<Cfg>(
        rank * per_rank, (rank + 1) * per_rank, S,
        [&](int r, int q) { return __ldcg(tile + (size_t)r * Q + q); /* L2: written by other SMs */ },
        stage);
    __syncthreads();
}

/* The operand type's k step and scales. wg_ring_mma<In, N>::run: one
 * 32-byte k step of a stage row (both operands K-major), wgmma m64nNk16 for
 * 16-bit operands; scale_d 0 on a stage's first step starts its partial sum
 * from zero. wg_ring_scales<In>::apply: cuBLASLt's A/B scales on the final
 * sums, nothing for 16-bit operands. The FP8 decode unit specializes both
 * for its 8-bit operand pairs (kernels/fp8/fp8_decode_kernel.cuh). */
template <class In, int N> struct wg_ring_mma {
    static __device__ __forceinline__ void run(float *d, uint64_t desc_a, uint64_t desc_b,
                                               int scale_d)
    {
        wgmma_m64nNk16_f32<In, N>::template run<0, 0>(d, desc_a, desc_b, scale_d);
    }
};
template <class In> struct wg_ring_scales {
    template <class Cfg, int WG_ROWS, class Acc>
    static __device__ __forceinline__ void apply(Acc &, const skinny_params &,
                                                 const skinny_scales &, int, int, int)
    {
    }
};

/* K-major, 128-byte swizzled operand: 8-row atoms 1024 bytes apart (SBO);
 * a k16 step moves 32 bytes inside the swizzled row. */
__device__ __forceinline__ uint64_t kmajor_desc(uint32_t addr) { return wgmma_desc_sw128(addr, 16, 1024); }

template <class Cfg, class In, class Out, int SPLIT>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::CTAS_PER_SM)
skinny_ring_wg_tn(const skinny_params prm, const __grid_constant__ CUtensorMap tmap_a,
                  const __grid_constant__ CUtensorMap tmap_b, const skinny_ws ws,
                  const skinny_scales sc)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr int MT = Cfg::M_TILES, NT = Cfg::N_TILES, W = Cfg::WARPS;
    constexpr int STAGES = Cfg::STAGES, RB = Cfg::ROW_BYTES;
    constexpr int PRODUCER = W;
    constexpr int WG_ROWS = Cfg::BLOCK_M / (W / 4); /* rows per consumer warpgroup */
    constexpr int ACC = NT * 4;                     /* m64nN accumulators per thread */
    static_assert(W % 4 == 0 && WG_ROWS == 64 * MT, "warpgroups of 4 warps, MT m64 blocks each");
    extern __shared__ unsigned char smem_raw[];
    const RingBlock rb = ring_block_setup<Cfg, SPLIT != SPLIT_NONE>(prm, smem_raw, &tmap_a, &tmap_b);
    unsigned char *const smem = rb.smem;
    uint64_t *const full = rb.full, *const empty = rb.empty;
    const int cluster = rb.cluster, rank = rb.rank, b = rb.b, row0 = rb.row0;
    const int s_begin = rb.s_begin, s_end = rb.s_end;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    /* Programmatic dependent launch (a no-op without it): the set-up above
     * touched no global memory; everything after may read what the
     * previous grid on the stream wrote. No early trigger of the next grid:
     * its waiting CTAs would take the SMs this grid leaves idle, which
     * measured 5-33% slower, and a TMA L2 prefetch of the first stages
     * before the wait 3-45% slower (bench/NOTES.md). */
    griddepcontrol_wait();
    __syncthreads();

    const float alpha = prm.alpha_ptr ? *prm.alpha_ptr : prm.alpha;
    const float beta = prm.beta_ptr ? *prm.beta_ptr : prm.beta;
    const int stages = skinny_reads_operands(prm, alpha) ? s_end - s_begin : 0;

    float acc[MT][ACC];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int e = 0; e < ACC; ++e)
            acc[mt][e] = 0.0f;

    if (warp == PRODUCER) {
        if (lane == 0 && stages > 0)
            ring_produce<Cfg>(smem, full, empty, &tmap_a, &tmap_b, stages, s_begin, row0, b);
    } else {
        const int wg = warp / 4;
        const uint32_t ring = smem_u32(smem);
        for (int s = 0; s < stages; ++s) {
            const int slot = s % STAGES;
            mbarrier_wait_parity(&full[slot], (uint32_t)((s / STAGES) & 1));
            const uint32_t st = ring + (uint32_t)(slot * Cfg::STAGE_BYTES);
            float part[MT][ACC];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int e = 0; e < ACC; ++e)
                    wgmma_fence_operand(part[mt][e]);
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < RB / 32; ++ks) { /* 32-byte k steps of a 128-byte row */
                const uint64_t db = kmajor_desc(st + Cfg::A_BYTES + ks * 32);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt)
                    wg_ring_mma<In, Cfg::N_MAX>::run( /* both K-major */
                        part[mt], kmajor_desc(st + (wg * WG_ROWS + mt * 64) * RB + ks * 32), db,
                        ks);
            }
            wgmma_commit_group();
            wgmma_wait_group<0>();
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int e = 0; e < ACC; ++e) {
                    wgmma_fence_operand(part[mt][e]);
                    acc[mt][e] += part[mt][e];
                }
            __syncwarp();
            if (lane == 0)
                mbarrier_arrive(&empty[slot]);
        }
        wg_ring_scales<In>::template apply<Cfg, WG_ROWS>(acc, prm, sc, row0, warp, lane);
    }

    /* Epilogue: register 4*nt + e of m64 block mt of warp w holds row
     * (w/4)*WG_ROWS + mt*64 + (w%4)*16 + l/4 (+8 for e >= 2), column
     * nt*8 + 2*(l%4) + (e&1); stage() puts the four at those places of warp
     * slot w's staging block (see store_staged). */
    Out *C = static_cast<Out *>(prm.C) + (int64_t)b * prm.stride_c;
    float *const stage_buf = reinterpret_cast<float *>(smem + EpiStage<Cfg>::OFFSET);
    auto stage = [&](int w, int mt, int nt, int l, const float (&v)[4]) {
        float *p = stage_buf + ((w * MT + mt) * Cfg::N_MAX + nt * 8 + 2 * (l % 4)) * EPI_LD + l / 4;
        p[0] = v[0];
        p[EPI_LD] = v[1];
        p[8] = v[2];
        p[EPI_LD + 8] = v[3];
    };
    int w_begin = 0, w_end = W;
    auto frag = [&](int mt, int nt) {
        return make_float4(acc[mt][4 * nt], acc[mt][4 * nt + 1], acc[mt][4 * nt + 2],
                           acc[mt][4 * nt + 3]);
    };
    if constexpr (SPLIT == SPLIT_NONE) {
        __syncthreads(); /* every warp is done reading the ring */
        if (warp != PRODUCER)
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < NT; ++nt) {
                    const float v[4] = {acc[mt][4 * nt], acc[mt][4 * nt + 1], acc[mt][4 * nt + 2],
                                        acc[mt][4 * nt + 3]};
                    stage(warp, mt, nt, lane, v);
                }
        __syncthreads();
    } else {
        /* Rank r reduces the fragments of warp slots [r W / c, (r + 1) W / c)
         * (the host launches splits that divide W); the reductions end with
         * a barrier that also orders the staging writes before the stores. */
        if constexpr (SPLIT == SPLIT_CLUSTER)
            cluster_reduce_store<Cfg>(smem, warp, lane, rank, cluster, frag, stage);
        else
            split_ws_reduce<Cfg>(ws, b * (int)(gridDim.x / (unsigned)cluster) + rb.row_block, rank,
                                 cluster, frag, stage); /* slot: (batch, row block) */
        w_begin = rank * W / cluster;
        w_end = (rank + 1) * W / cluster;
    }
    store_staged<Cfg, Out, WG_ROWS>(stage_buf, prm, C, row0, w_begin, w_end, alpha, beta);
#else
    __trap(); /* sm_90a only */
#endif
}

} // namespace

#endif /* GS_SKINNY_RING_WG_KERNEL_CUH */
