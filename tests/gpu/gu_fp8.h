/* FP8 on the host for the GPU tests (test_lt_fp8, test_fp8_tiles): every
 * code's value, the nearest code, a bf16 result's relative error against
 * a double reference, and the cublasLtMatmul descriptors of a TN FP8 call.
 * Include after gpu_util.h. */
#ifndef GU_FP8_H
#define GU_FP8_H

#include <cublasLt.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* e4m3 (the "fn" encoding: no infinities, S.1111.111 is NaN) and e5m2
 * (IEEE-like: exponent 31 is infinity or NaN); NAN for the codes that are
 * not finite. */
static inline float gu_fp8_value(uint8_t code, int e5m2)
{
    const int sign = code >> 7, mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
    const int exp = (code & 0x7f) >> mbits, man = code & ((1 << mbits) - 1);
    if (e5m2 ? exp == 31 : (exp == 15 && man == 7))
        return NAN;
    const float v = exp ? ldexpf(1.0f + (float)man / (1 << mbits), exp - bias)
                        : ldexpf((float)man / (1 << mbits), 1 - bias);
    return sign ? -v : v;
}

/* The finite code nearest v (ties to the lower code: any rounding will do,
 * the references use the code's own value): a binary search over the
 * finite codes sorted by value, built once per format. Test data of tens of
 * millions of codes made this a search of all 256 codes per element before
 * (minutes at m = 4096, k = 14336). Single-threaded callers. */
static inline uint8_t gu_fp8_code(float v, int e5m2)
{
    static float vals[2][256];
    static uint8_t codes[2][256];
    static int count[2];
    const int f = e5m2 ? 1 : 0;
    if (!count[f]) {
        int n = 0;
        for (int c = 0; c < 256; ++c) {
            const float x = gu_fp8_value((uint8_t)c, e5m2);
            if (x != x)
                continue;
            /* insert by value; an equal value (+0 / -0) keeps the lower code first */
            int i = n++;
            while (i > 0 && vals[f][i - 1] > x) {
                vals[f][i] = vals[f][i - 1];
                codes[f][i] = codes[f][i - 1];
                --i;
            }
            vals[f][i] = x;
            codes[f][i] = (uint8_t)c;
        }
        count[f] = n;
    }
    const float *x = vals[f];
    int lo = 0, hi = count[f] - 1; /* the nearest is x[lo] or x[lo + 1] */
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (x[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    /* on a tie the lower value, and of equal values (+0, -0) the first code
     * (the search over all codes kept the lower code number: another code
     * on a tie between a negative pair, harmless, the references decode
     * whatever code was drawn) */
    int best = fabsf(x[hi] - v) < fabsf(x[lo] - v) ? hi : lo;
    while (best > 0 && x[best - 1] == x[best])
        --best;
    return codes[f][best];
}

/* Relative (Frobenius) error of n bf16 results against ref; infinity if
 * any result is NaN (a poisoned element never written). */
static inline double gu_bf16_rel_err(const double *ref, const uint16_t *d, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; ++i) {
        const double v = gu_bf16_to_f32(d[i]);
        if (v != v)
            return INFINITY;
        num += (v - ref[i]) * (v - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* The descriptor and layouts of a TN FP8 cublasLtMatmul as torch._scaled_mm
 * builds them: compute 32F, fast accumulation as asked, A's and B's scale
 * pointers (OUTER_VEC_32F modes when rowwise), a bf16 BIAS epilogue when
 * bias is not NULL; A stored k x m, B k x n (e5m2 where asked, else e4m3),
 * D bf16 m x n with leading dimension ldd. */
static inline void gu_fp8_tn_call(int a_e5m2, int b_e5m2, int rowwise, int8_t fast,
                                  const float *dsa, const float *dsb, const void *bias,
                                  uint64_t m, uint64_t n, uint64_t k, int64_t ldd,
                                  cublasLtMatmulDesc_t *desc, cublasLtMatrixLayout_t *la,
                                  cublasLtMatrixLayout_t *lb, cublasLtMatrixLayout_t *ld)
{
    CUBLAS_OK(cublasLtMatmulDescCreate(desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const int32_t opt = CUBLAS_OP_T, opn = CUBLAS_OP_N;
    CUBLAS_OK(cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_TRANSA, &opt, sizeof opt));
    CUBLAS_OK(cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_TRANSB, &opn, sizeof opn));
    CUBLAS_OK(cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
                                             sizeof fast));
    CUBLAS_OK(cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &dsa,
                                             sizeof dsa));
    CUBLAS_OK(cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &dsb,
                                             sizeof dsb));
    if (rowwise) {
        const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
        CUBLAS_OK(cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode,
                                                 sizeof mode));
        CUBLAS_OK(cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode,
                                                 sizeof mode));
    }
    if (bias) {
        const uint32_t epi = CUBLASLT_EPILOGUE_BIAS;
        const int32_t bt = CUDA_R_16BF;
        CUBLAS_OK(cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
                                                 sizeof epi));
        CUBLAS_OK(cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                 sizeof bias));
        CUBLAS_OK(cublasLtMatmulDescSetAttribute(*desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt,
                                                 sizeof bt));
    }
    const cudaDataType at = a_e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3,
                       bt = b_e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
    CUBLAS_OK(cublasLtMatrixLayoutCreate(la, at, k, m, k));
    CUBLAS_OK(cublasLtMatrixLayoutCreate(lb, bt, k, n, k));
    CUBLAS_OK(cublasLtMatrixLayoutCreate(ld, CUDA_R_16BF, m, n, ldd));
}

#endif /* GU_FP8_H */
