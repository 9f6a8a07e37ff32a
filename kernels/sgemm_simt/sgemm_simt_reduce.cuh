/* The SIMT SGEMM family's split-K reduction: the second kernel that sums
 * the stream-K segments' partial tiles in a fixed order and applies alpha,
 * beta and the bias. */
#ifndef GS_SGEMM_SIMT_REDUCE_CUH
#define GS_SGEMM_SIMT_REDUCE_CUH

#include "sgemm_simt_mainloop.cuh"

namespace {

/* The split-K reduction's block: REDUCE_VECS consecutive 4-row vectors of
 * a tile (a warp: 512 contiguous bytes of a slot, one or more columns)
 * times REDUCE_RUNS runs of slots. */
constexpr int REDUCE_VECS = 32;
constexpr int REDUCE_RUNS = 8;
constexpr int REDUCE_THREADS = REDUCE_VECS * REDUCE_RUNS;

/* Split K, second kernel: the partial slots of a tile are cut into
 * REDUCE_RUNS runs of consecutive slots; thread (x, j) sums run j of its 4
 * rows of one column in slot order, and thread (x, 0) then adds the runs in
 * run order and applies alpha, beta and bias. The order is fixed by the
 * problem and the grid, so every call gives the same bits.
 * Why runs: with one running sum per thread, a tile of many slots was one
 * long chain of dependent loads on a few SMs (1 x 1 x 131072: 512 slots of
 * one 64x64 tile, 1024 threads) and each partial was added to a sum ~20x
 * its size; runs spread the loads over REDUCE_RUNS times the threads and
 * shorten the chain (a host model of the two orders puts the median error
 * of that dot product ~1.5x lower; bench/NOTES.md). */
template <class Cfg>
__global__ void __launch_bounds__(REDUCE_THREADS)
sgemm_splitk_reduce(const sgemm_params prm)
{
    constexpr int BM = Cfg::BLOCK_M, BN = Cfg::BLOCK_N;
    constexpr int ROW_VECS = BM / 4;
    constexpr int64_t PER_TILE = (int64_t)ROW_VECS * BN;
    static_assert(PER_TILE % REDUCE_VECS == 0, "a block's vectors lie in one tile");
    __shared__ float4 run_sum[REDUCE_RUNS][REDUCE_VECS];
    const int x = threadIdx.x, j = threadIdx.y;
    const int64_t idx = (int64_t)blockIdx.x * REDUCE_VECS + x;
    const int t = (int)(idx / PER_TILE); /* the same for the whole block */
    if (t >= prm.tiles_m * prm.tiles_n)
        return;
    const int in_tile = (int)(idx - t * PER_TILE);
    const int c = in_tile / ROW_VECS, r = (in_tile % ROW_VECS) * 4;
    const int row = (t % prm.tiles_m) * BM + r, col = (t / prm.tiles_m) * BN + c;
    const bool inside = row < prm.m && col < prm.n;

    const float alpha = prm.alpha_ptr ? *prm.alpha_ptr : prm.alpha;
    const float beta = prm.beta_ptr ? *prm.beta_ptr : prm.beta;
    const int64_t units = (int64_t)prm.tiles_m * prm.tiles_n * prm.k_tiles;
    const int64_t first = (int64_t)t * prm.k_tiles;
    const int g_lo = cta_of_unit(first, units, prm.ctas);
    const int slots = cta_of_unit(first + prm.k_tiles - 1, units, prm.ctas) - g_lo + 1;
    const int run_len = (slots + REDUCE_RUNS - 1) / REDUCE_RUNS;
    const int runs = (slots + run_len - 1) / run_len;
    if (inside && alpha != 0.0f && j < runs) {
        const int s_lo = j * run_len, s_hi = min(s_lo + run_len, slots);
        const float4 *slot = reinterpret_cast<const float4 *>(
            prm.partials + (int64_t)(g_lo + t + s_lo) * (BM * BN) + c * BM + r);
        float4 s = __ldcg(slot);
        /* unrolled so that several independent loads are in flight */
#pragma unroll 8
        for (int g = s_lo + 1; g < s_hi; ++g) {
            slot += BM * BN / 4;
            const float4 v = __ldcg(slot);
            s.x += v.x;
            s.y += v.y;
            s.z += v.z;
            s.w += v.w;
        }
        run_sum[j][x] = s;
    }
    __syncthreads();
    if (!inside || j != 0)
        return;
    float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (alpha != 0.0f) {
        float4 s = run_sum[0][x];
        for (int jj = 1; jj < runs; ++jj) {
            const float4 u = run_sum[jj][x];
            s.x += u.x;
            s.y += u.y;
            s.z += u.z;
            s.w += u.w;
        }
        v[0] = alpha * s.x;
        v[1] = alpha * s.y;
        v[2] = alpha * s.z;
        v[3] = alpha * s.w;
    }
    store_c4(prm.C + (int64_t)col * prm.ldc + row, v, prm.m - row, prm.c_vec4, beta,
             prm.bias ? prm.bias + row : nullptr);
}

} // namespace

#endif /* GS_SGEMM_SIMT_REDUCE_CUH */
