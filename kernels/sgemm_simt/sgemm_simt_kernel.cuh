/* The SIMT SGEMM family's kernels: the unsplit warp-tiled kernel and the
 * stream-K split kernel, both on the main loop of sgemm_simt_mainloop.cuh
 * (tile_product). */
#ifndef GS_SGEMM_SIMT_KERNEL_CUH
#define GS_SGEMM_SIMT_KERNEL_CUH

#include "sgemm_simt_mainloop.cuh"

namespace {

/* This lane's first 4-vector inside the block tile; vector v of the A (B)
 * fragment is LANES_M*4 (LANES_N*4) further. */
template <class Cfg>
__device__ __forceinline__ void lane_fragment(int &frag_m, int &frag_n)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    frag_m = (warp % Cfg::WARPS_M) * Cfg::WARP_M + (lane % Cfg::LANES_M) * 4;
    frag_n = (warp / Cfg::WARPS_M) * Cfg::WARP_N + (lane / Cfg::LANES_M) * 4;
}

/* One block per (block tile, batch): the whole k range, then alpha, beta
 * and (HAS_BIAS) the bias straight into C, both in tile_product (which
 * says why the store to C is there). The bias is a compile-time choice so
 * that the kernels without it keep the tuned SASS. */
template <class Cfg, int A_MODE, int B_MODE, bool HAS_BIAS>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS_PER_SM)
sgemm_warptile(const sgemm_params prm)
{
    constexpr int BM = Cfg::BLOCK_M, BN = Cfg::BLOCK_N, BK = Cfg::BLOCK_K;

    extern __shared__ float4 smem_raw[];
    shared_storage<Cfg> &smem = *reinterpret_cast<shared_storage<Cfg> *>(smem_raw);

    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int warp_m0 = (warp % Cfg::WARPS_M) * Cfg::WARP_M;
    const int warp_n0 = (warp / Cfg::WARPS_M) * Cfg::WARP_N;
    /* Offsets of this lane's first 4-vector inside the block tile; vector v
     * of the A (B) fragment is LANES_M*4 (LANES_N*4) further. */
    const int frag_m = warp_m0 + (lane % Cfg::LANES_M) * 4;
    const int frag_n = warp_n0 + (lane / Cfg::LANES_M) * 4;

    int tm, tn;
    block_tile(blockIdx.x, prm.tiles_m, prm.tiles_n, tm, tn);
    const int m0 = tm * BM, n0 = tn * BN;

    const float alpha = prm.alpha_ptr ? *prm.alpha_ptr : prm.alpha;
    const float beta = prm.beta_ptr ? *prm.beta_ptr : prm.beta;
    /* alpha == 0 (or k == 0) leaves C = beta*C: A and B are not read. */
    const int k_tiles = alpha == 0.0f ? 0 : (prm.k + BK - 1) / BK;

    /* Batches span grid.y and grid.z (grid.y alone stops at 65535). A loop
     * over batches inside the kernel would cost the registers that keep the
     * 128x128 tile free of spills. */
    const int64_t b = (int64_t)blockIdx.z * MAX_GRID_Y + blockIdx.y;
    if (b >= prm.batch)
        return;
    /* TILE_TO_C*: the whole k range, so kt0 = 0 (tile_product counts k from
     * the start there) */
    tile_product<Cfg, A_MODE, B_MODE, false, false, HAS_BIAS ? TILE_TO_C_BIAS : TILE_TO_C>(
        prm, smem, b, m0, n0, 0, k_tiles, frag_m, frag_n, nullptr, alpha, beta);
}

/* Split K, first kernel: CTA blockIdx.x walks its run of units (see
 * unit_begin) segment by segment and stores each segment's partial tile,
 * column-major BLOCK_M x BLOCK_N, into slot `cta + tile`. Whole tiles are
 * stored, edge rows and columns included (they hold zeros): every store is
 * a full float4 and the reduction reads only what lies inside C. */
template <class Cfg, int A_MODE, int B_MODE>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS_PER_SM)
sgemm_warptile_streamk(const sgemm_params prm)
{
    constexpr int BM = Cfg::BLOCK_M, BN = Cfg::BLOCK_N;
    constexpr int TM = Cfg::THREAD_M, TN = Cfg::THREAD_N;
    constexpr int VM = TM / 4, VN = TN / 4;

    extern __shared__ float4 smem_raw[];
    shared_storage<Cfg> &smem = *reinterpret_cast<shared_storage<Cfg> *>(smem_raw);

    /* alpha == 0: the reduction writes beta*C (+ bias) without partials. */
    const float alpha = prm.alpha_ptr ? *prm.alpha_ptr : prm.alpha;
    if (alpha == 0.0f)
        return;

    int frag_m, frag_n;
    lane_fragment<Cfg>(frag_m, frag_n);

    /* units < 2^31 (make_plan) */
    const int64_t units = (int64_t)prm.tiles_m * prm.tiles_n * prm.k_tiles;
    int u = (int)unit_begin(blockIdx.x, units, prm.ctas);
    const int u_end = (int)unit_begin(blockIdx.x + 1, units, prm.ctas);
    while (u < u_end) {
        const int t = u / prm.k_tiles;
        const int kt0 = u - t * prm.k_tiles;
        const int count = min(u_end - u, prm.k_tiles - kt0);
        const int tm = t % prm.tiles_m, tn = t / prm.tiles_m;

        float acc[TM][TN];
        tile_product<Cfg, A_MODE, B_MODE, true, false, TILE_TO_ACC>(prm, smem, 0, tm * BM, tn * BN,
                                                                    kt0, count, frag_m, frag_n,
                                                                    &acc, 0.0f, 0.0f);

        /* LANES_M lanes store LANES_M*16 contiguous bytes of one column;
         * .cg: the partials are read once, by another SM, from L2. */
        float *slot = prm.partials + (int64_t)(blockIdx.x + t) * (BM * BN) +
                      (int64_t)frag_n * BM + frag_m;
#pragma unroll
        for (int vn = 0; vn < VN; ++vn)
#pragma unroll
            for (int jj = 0; jj < 4; ++jj)
#pragma unroll
                for (int vm = 0; vm < VM; ++vm) {
                    const int j = vn * 4 + jj;
                    __stcg(reinterpret_cast<float4 *>(slot + (vn * Cfg::LANES_N * 4 + jj) * BM +
                                                      vm * Cfg::LANES_M * 4),
                           make_float4(acc[vm * 4 + 0][j], acc[vm * 4 + 1][j],
                                       acc[vm * 4 + 2][j], acc[vm * 4 + 3][j]));
                }
        u += count;
        if (u < u_end) {
            /* The next segment's prologue refills stages other warps may
             * still be reading fragments from. */
            cp_async_wait_group<0>();
            __syncthreads();
        }
    }
}

} // namespace

#endif /* GS_SGEMM_SIMT_KERNEL_CUH */
