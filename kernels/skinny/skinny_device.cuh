/* Device code both decode ring kernels share: skinny_ring_tn (mma.sync,
 * kernels/skinny/skinny.cu, sm_80 / sm_90 passes) and skinny_ring_wg_tn (wgmma,
 * kernels/skinny/skinny_sm90.cu, sm_90a): element conversions, the C store with
 * alpha/beta/bias, the ring's TMA producer and the cluster's fixed-order
 * reduction. One copy, so both kernels round and reduce identically. */
#ifndef GS_SKINNY_DEVICE_CUH
#define GS_SKINNY_DEVICE_CUH

#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "gs_ptx.cuh"
#include "skinny_config.h"

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(float v) { return v; }
template <class T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half from_float(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ float from_float(float v) { return v; }

/* bias[row] as float (the cublasLt BIAS epilogue's vector). */
__device__ __forceinline__ float load_bias(const skinny_params &prm, int row)
{
    switch (prm.bias_type) {
    case GS_DT_F16: return __half2float(static_cast<const __half *>(prm.bias)[row]);
    case GS_DT_BF16: return __bfloat162float(static_cast<const __nv_bfloat16 *>(prm.bias)[row]);
    default: return static_cast<const float *>(prm.bias)[row];
    }
}

/* Whether the kernel reads A and B: always but at alpha == 0 on a BLAS
 * entry point (skinny_params.reads_at_alpha_zero). */
__device__ __forceinline__ bool skinny_reads_operands(const skinny_params &prm, float alpha)
{
    return alpha != 0.0f || prm.reads_at_alpha_zero;
}

/* Element (r, c) of C: alpha * v + beta * C (+ bias[r]), rounded once. C is
 * read only when beta != 0; without a product (k == 0) alpha * v is left
 * out, so C = beta * C even for alpha = inf. */
template <class Out>
__device__ __forceinline__ void store_c(const skinny_params &prm, Out *C, int r, int c, float v,
                                        float alpha, float beta)
{
    Out *cp = C + r + (int64_t)c * prm.ldc;
    float out = prm.k == 0 ? 0.0f : alpha * v;
    if (beta != 0.0f)
        out = fmaf(beta, to_float(*cp), out);
    if (prm.bias)
        out += load_bias(prm, r);
    *cp = from_float<Out>(out);
}

/* A k split's partial sums, as both meeting places hold them: per block one
 * fragment-ordered tile, [W][MT][NT][32] float4, where frag(mt, nt) gives a
 * consumer lane's four sums of tile (mt, nt). put_fragments writes the
 * calling consumer warp's part of its block's tile at dst. */
template <class Cfg, class Frag>
__device__ __forceinline__ void put_fragments(float4 *dst, int warp, int lane, Frag frag)
{
#pragma unroll
    for (int mt = 0; mt < Cfg::M_TILES; ++mt)
#pragma unroll
        for (int nt = 0; nt < Cfg::N_TILES; ++nt)
            dst[((warp * Cfg::M_TILES + mt) * Cfg::N_TILES + nt) * 32 + lane] = frag(mt, nt);
}

/* Fragments [q_begin, q_end) of `parts` such tiles summed in part order
 * 0..parts-1 (fixed: bitwise reproducible), the block's threads striding
 * over q: load(r, q) gives part r's float4 q (all parts' loads are issued
 * before the sum, they are independent), store(w, mt, nt, lane, sums) takes
 * each sum with the warp, tile and lane it belongs to. */
template <class Cfg, class Load, class Store>
__device__ __forceinline__ void sum_fragments_in_order(int q_begin, int q_end, int parts, Load load,
                                                       Store store)
{
    constexpr int MT = Cfg::M_TILES, NT = Cfg::N_TILES;
    for (int q = q_begin + (int)threadIdx.x; q < q_end; q += Cfg::THREADS) {
        float4 v[SKINNY_MAX_CLUSTER];
#pragma unroll
        for (int r = 0; r < SKINNY_MAX_CLUSTER; ++r)
            if (r < parts)
                v[r] = load(r, q);
        float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int r = 0; r < SKINNY_MAX_CLUSTER; ++r)
            if (r < parts) {
                sum[0] += v[r].x;
                sum[1] += v[r].y;
                sum[2] += v[r].z;
                sum[3] += v[r].w;
            }
        const int l = q % 32, nt = q / 32 % NT, mt = q / 32 / NT % MT, w = q / 32 / NT / MT;
        store(w, mt, nt, l, sum);
    }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 /* only the ring kernels' sm_90 bodies use these */

/* A ring block's set-up, the same in both ring kernels: its shared memory
 * (1024-aligned at the same offset in every block, so the cluster
 * reduction's distributed-shared-memory addresses agree), the ring's full /
 * empty barriers (initialised here by thread 0; the caller's __syncthreads
 * publishes them), its rank in the cluster, its rows and batch, and its share
 * of the k stages (rank r of c takes [r T / c, (r + 1) T / c) of T). The
 * producer lane also prefetches the tensor maps. */
struct RingBlock {
    unsigned char *smem;
    uint64_t *full, *empty;
    int cluster, rank, b, row_block, row0, s_begin, s_end;
};

template <class Cfg, bool CLUSTER>
__device__ __forceinline__ RingBlock ring_block_setup(const skinny_params &prm,
                                                      unsigned char *smem_raw,
                                                      const CUtensorMap *tmap_a,
                                                      const CUtensorMap *tmap_b)
{
    RingBlock r;
    r.smem = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
    r.full = reinterpret_cast<uint64_t *>(r.smem + Cfg::BAR_OFFSET);
    r.empty = r.full + Cfg::STAGES;
    r.cluster = CLUSTER ? prm.cluster : 1;
    r.rank = CLUSTER ? (int)(blockIdx.x % (unsigned)r.cluster) : 0;
    r.row_block = CLUSTER ? (int)(blockIdx.x / (unsigned)r.cluster) : (int)blockIdx.x;
    r.b = (int)blockIdx.y;
    r.row0 = r.row_block * Cfg::BLOCK_M;
    const int total_stages = (prm.k + Cfg::STAGE_K - 1) / Cfg::STAGE_K;
    r.s_begin = (int)((int64_t)r.rank * total_stages / r.cluster);
    r.s_end = (int)((int64_t)(r.rank + 1) * total_stages / r.cluster);
    if (threadIdx.x == 0) {
        for (int i = 0; i < Cfg::STAGES; ++i) {
            mbarrier_init(&r.full[i], 1);
            mbarrier_init(&r.empty[i], Cfg::WARPS); /* one arrival per consumer warp */
        }
        fence_mbarrier_init();
    }
    if (threadIdx.x == Cfg::WARPS * 32 && r.s_end > r.s_begin) { /* the producer warp's lane 0 */
        prefetch_tensormap(tmap_a);
        prefetch_tensormap(tmap_b);
    }
    return r;
}


/* The producer warp's lane 0: stages s_begin .. s_begin + stages - 1 of k
 * into the ring. Weights are read once: evict them first; tokens are read by
 * every row block: keep them. A slot is refilled once its consumers released
 * it (empty[slot] of the previous round). */
template <class Cfg>
__device__ __forceinline__ void ring_produce(unsigned char *smem, uint64_t *full, uint64_t *empty,
                                             const CUtensorMap *tmap_a,
                                             const CUtensorMap *tmap_b, int stages, int s_begin,
                                             int row0, int b)
{
    constexpr int STAGES = Cfg::STAGES;
    const uint64_t evict_first = createpolicy_evict_first();
    const uint64_t evict_last = createpolicy_evict_last();
    for (int s = 0; s < stages; ++s) {
        const int slot = s % STAGES;
        if (s >= STAGES)
            mbarrier_wait_parity(&empty[slot], (uint32_t)((s / STAGES - 1) & 1));
        unsigned char *st = smem + slot * Cfg::STAGE_BYTES;
        const int kk = (s_begin + s) * Cfg::STAGE_K;
        mbarrier_arrive_expect_tx(&full[slot], Cfg::STAGE_BYTES);
        tma_load_3d_hint(st, tmap_a, &full[slot], kk, row0, b, evict_first);
        tma_load_3d_hint(st + Cfg::A_BYTES, tmap_b, &full[slot], kk, 0, b, evict_last);
    }
}

/* The cluster's k split reduced in rank order. Every block leaves its sums
 * in its ring (all stages consumed: no copy in flight once the block barrier
 * passed), fragment-ordered [W][MT][NT][32] float4 (frag(mt, nt) gives a
 * consumer lane's four sums of tile (mt, nt)); rank r then adds slice r of
 * every block's sums in rank order and hands them to store(w, mt, nt, lane,
 * sums). The second cluster barrier keeps each block's shared memory alive
 * until the others have read it. */
template <class Cfg, class Frag, class Store>
__device__ __forceinline__ void cluster_reduce_store(unsigned char *smem, int warp, int lane,
                                                     int rank, int cluster, Frag frag,
                                                     Store store)
{
    constexpr int MT = Cfg::M_TILES, NT = Cfg::N_TILES, W = Cfg::WARPS;
    namespace cg = cooperative_groups;
    cg::cluster_group cl = cg::this_cluster();
    float4 *red = reinterpret_cast<float4 *>(smem);
    __syncthreads();
    if (warp != W) /* the producer warp holds no sums */
        put_fragments<Cfg>(red, warp, lane, frag);
    cl.sync();
    constexpr int Q = W * MT * NT * 32;
    const int per_rank = (Q + cluster - 1) / cluster;
    sum_fragments_in_order<Cfg>(
        rank * per_rank, min(Q, (rank + 1) * per_rank), cluster,
        [&](int r, int q) { return cl.map_shared_rank(red, (unsigned)r)[q]; }, store);
    cl.sync();
}

#endif /* __CUDA_ARCH__ >= 900 */
#endif /* GS_SKINNY_DEVICE_CUH */
