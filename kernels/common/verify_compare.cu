/* Verify mode's comparison: how far our C is from cuBLAS's C (computed into
 * scratch memory from the same inputs), as sums over the m x n window of
 * every batch, so the host can form the relative Frobenius error:
 *   out[0] = sum (ours - ref)^2, out[1] = sum ref^2,
 *   out[2] = elements where exactly one side is NaN or Inf (never tolerated).
 * Sums in double with one atomicAdd per block: the order varies, which is
 * fine for a metric and keeps this one launch with no workspace. */
#include "gs_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace {

constexpr int THREADS = 256;
constexpr int MAX_BLOCKS = 1024;

__device__ __forceinline__ double load(const void *p, int64_t i, gs_dtype_t t)
{
    switch (t) {
    case GS_DT_F32: return (double)((const float *)p)[i];
    case GS_DT_BF16: return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
    default: return (double)__half2float(((const __half *)p)[i]);
    }
}

__global__ void __launch_bounds__(THREADS)
compare_kernel(const void *ours, const void *ref, gs_dtype_t t, int64_t m, int64_t n,
               int64_t ldc, int64_t batch, int64_t stride_c, double *out)
{
    __shared__ double s_diff[THREADS], s_ref[THREADS], s_bad[THREADS];
    double diff = 0.0, sum_ref = 0.0, bad = 0.0;
    const int64_t per_batch = m * n, total = per_batch * batch;
    for (int64_t e = blockIdx.x * (int64_t)THREADS + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * THREADS) {
        int64_t b = e / per_batch, r = e - b * per_batch;
        int64_t i = r % m, j = r / m;
        int64_t at = b * stride_c + i + j * ldc;
        double x = load(ours, at, t), y = load(ref, at, t);
        if (isfinite(x) != isfinite(y)) {
            bad += 1.0;
        } else if (isfinite(y)) {
            diff += (x - y) * (x - y);
            sum_ref += y * y;
        }
    }
    s_diff[threadIdx.x] = diff;
    s_ref[threadIdx.x] = sum_ref;
    s_bad[threadIdx.x] = bad;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            s_diff[threadIdx.x] += s_diff[threadIdx.x + half];
            s_ref[threadIdx.x] += s_ref[threadIdx.x + half];
            s_bad[threadIdx.x] += s_bad[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(&out[0], s_diff[0]);
        atomicAdd(&out[1], s_ref[0]);
        atomicAdd(&out[2], s_bad[0]);
    }
}

} // namespace

extern "C" int gs_compare_launch(const gs_problem_t *p, const void *ours, const void *ref,
                                 double *out)
{
    cudaStream_t s = (cudaStream_t)p->stream;
    cudaError_t e = cudaMemsetAsync(out, 0, 3 * sizeof(double), s);
    if (e != cudaSuccess)
        return (int)e;
    int64_t total = p->m * p->n * p->batch;
    int blocks = (int)((total + THREADS - 1) / THREADS);
    blocks = blocks < 1 ? 1 : blocks > MAX_BLOCKS ? MAX_BLOCKS : blocks;
    compare_kernel<<<blocks, THREADS, 0, s>>>(ours, ref, p->c_type, p->m, p->n, p->ldc, p->batch,
                                              p->stride_c, out);
    return (int)cudaGetLastError();
}
