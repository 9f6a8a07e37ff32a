// An example gemmshim plugin: fp32 GEMM (SIMT, shared-memory tiles of 16x16
// or 32x32 outputs, one per thread), every transpose, any leading dimension,
// strided batches, host or device alpha/beta; C is never read when beta is
// zero. Deliberately plain: it shows the plugin ABI, not a fast kernel
// (expect it to lose to cuBLAS in `GEMMSHIM_MODE=ab`).
#include <gemmshim_plugin.h>

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <new>

namespace {

template <int TILE>
__global__ void sgemm_tiled(int m, int n, int k, int trans_a, int trans_b, const float *A,
                            long long lda, long long stride_a, const float *B, long long ldb,
                            long long stride_b, float *C, long long ldc, long long stride_c,
                            float alpha, float beta, const float *alpha_dev,
                            const float *beta_dev, int beta_zero)
{
    __shared__ float as[TILE][TILE + 1]; // as[kk][i]: op(A)(row0 + i, k0 + kk)
    __shared__ float bs[TILE][TILE + 1]; // bs[j][kk]: op(B)(k0 + kk, col0 + j)
    const int tx = threadIdx.x, ty = threadIdx.y; // tx along m, ty along n
    const long long b = blockIdx.z;
    A += b * stride_a;
    B += b * stride_b;
    C += b * stride_c;
    const int row0 = blockIdx.x * TILE, col0 = blockIdx.y * TILE;
    const int row = row0 + tx, col = col0 + ty;
    float acc = 0.0f;
    for (int k0 = 0; k0 < k; k0 += TILE) {
        // op(A)(i, kk): A[i + kk*lda] (N) or A[kk + i*lda] (T); coalesced either way
        {
            const int i = trans_a ? row0 + ty : row0 + tx, kk = trans_a ? k0 + tx : k0 + ty;
            float v = 0.0f;
            if (i < m && kk < k)
                v = trans_a ? A[kk + (long long)i * lda] : A[i + (long long)kk * lda];
            as[kk - k0][i - row0] = v;
        }
        {
            const int kk = trans_b ? k0 + ty : k0 + tx, j = trans_b ? col0 + tx : col0 + ty;
            float v = 0.0f;
            if (kk < k && j < n)
                v = trans_b ? B[j + (long long)kk * ldb] : B[kk + (long long)j * ldb];
            bs[j - col0][kk - k0] = v;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk)
            acc = fmaf(as[kk][tx], bs[ty][kk], acc);
        __syncthreads();
    }
    if (row >= m || col >= n)
        return;
    const float al = alpha_dev ? *alpha_dev : alpha;
    const float be = beta_dev ? *beta_dev : beta;
    float *c = C + row + (long long)col * ldc;
    // beta == 0: C is not read (it may hold NaN), as in cuBLAS
    *c = (beta_zero || be == 0.0f) ? al * acc : fmaf(be, *c, al * acc);
}

const char *const config_names[] = {"example_sgemm_16x16", "example_sgemm_32x32"};

int can_implement(const gemmshim_plugin_problem_t *p, const gemmshim_plugin_device_t *d,
                  int config) noexcept
{
    (void)config;
    if (d->cc_major < 7)
        return 0;
    if (p->a_type != GEMMSHIM_PLUGIN_F32 || p->b_type != GEMMSHIM_PLUGIN_F32 ||
        p->c_type != GEMMSHIM_PLUGIN_F32 || p->scalar_type != GEMMSHIM_PLUGIN_F32)
        return 0;
    // plain fp32 FMAs: what COMPUTE_32F and its pedantic form ask for
    if (p->compute != GEMMSHIM_PLUGIN_COMPUTE_F32 &&
        p->compute != GEMMSHIM_PLUGIN_COMPUTE_F32_PEDANTIC)
        return 0;
    if (p->align_a < 4 || p->align_b < 4 || p->align_c < 4)
        return 0; // float loads need float-aligned operands
    if (p->m > INT_MAX || p->n > INT_MAX || p->k > INT_MAX || p->batch > 65535)
        return 0;
    if (p->batch > 1 && (p->stride_c < p->ldc * p->n || p->stride_c <= 0))
        return 0; // the batches' C must not overlap
    return 1;
}

int run(const gemmshim_plugin_problem_t *p, const gemmshim_plugin_device_t *d,
        int config) noexcept
{
    (void)d;
    try {
        const float *alpha_dev = p->scalars_on_device ? (const float *)p->alpha : nullptr;
        const float *beta_dev = p->scalars_on_device ? (const float *)p->beta : nullptr;
        const float alpha = p->scalars_on_device ? 0.0f : *(const float *)p->alpha;
        const float beta = p->scalars_on_device ? 0.0f : *(const float *)p->beta;
        const int beta_zero = p->beta_kind == GEMMSHIM_PLUGIN_BETA_ZERO;
        cudaStream_t s = (cudaStream_t)p->stream;
        const int m = (int)p->m, n = (int)p->n, k = (int)p->k;
        (void)cudaGetLastError(); // start clean: a launch error below is ours
        if (config == 0) {
            dim3 grid((m + 15) / 16, (n + 15) / 16, (unsigned)p->batch), block(16, 16);
            sgemm_tiled<16><<<grid, block, 0, s>>>(m, n, k, p->trans_a, p->trans_b,
                (const float *)p->A, p->lda, p->stride_a, (const float *)p->B, p->ldb,
                p->stride_b, (float *)p->C, p->ldc, p->stride_c, alpha, beta, alpha_dev,
                beta_dev, beta_zero);
        } else {
            dim3 grid((m + 31) / 32, (n + 31) / 32, (unsigned)p->batch), block(32, 32);
            sgemm_tiled<32><<<grid, block, 0, s>>>(m, n, k, p->trans_a, p->trans_b,
                (const float *)p->A, p->lda, p->stride_a, (const float *)p->B, p->ldb,
                p->stride_b, (float *)p->C, p->ldc, p->stride_c, alpha, beta, alpha_dev,
                beta_dev, beta_zero);
        }
        return (int)cudaGetLastError(); // 0, or the launch's error: nothing enqueued
    } catch (...) { // no exception may cross the plugin ABI
        return (int)cudaErrorUnknown;
    }
}

#ifndef EXAMPLE_BUILD_ID
#define EXAMPLE_BUILD_ID __DATE__ " " __TIME__
#endif

const gemmshim_plugin_t plugin = {
    sizeof(gemmshim_plugin_t),
    GEMMSHIM_PLUGIN_ABI_VERSION,
    "example_sgemm",
    "1.0.0",
    EXAMPLE_BUILD_ID,
    2,
    config_names,
    can_implement,
    nullptr, // no workspace
    run,
};

} // namespace

GEMMSHIM_PLUGIN_ENTRY
{
    if (host_abi_version != GEMMSHIM_PLUGIN_ABI_VERSION)
        return 1; // built for another ABI: decline
    *out = &plugin;
    return 0;
}
