/* The experimental FP8 family (kernels/fp8) through the shim: FP8
 * cublasLtMatmul calls as torch._scaled_mm makes them (TN, e4m3 / e5m2
 * operands, bf16 D in place, beta 0), ragged m, n and k, tensorwise and
 * rowwise scales, fast accumulation on and off, with and without the BIAS
 * epilogue, NaN and Inf in the operands. Run with GEMMSHIM_FP8_TILES=1 GEMMSHIM_POLICY=eligible
 * GEMMSHIM_KERNELS=one of the family's configurations (run_gpu_test.sh
 * fp8_tiles runs each; the decode ring with GEMMSHIM_FP8_TEST_DECODE=1,
 * its own cases). Each case is
 * called twice, D poisoned (NaN) before each: once with the shim off
 * (gemmshim_set_mode: cuBLASLt as called), once on, where the call must be
 * served by the family (gemmshim_last_route). Both are compared with an
 * fp32 host reference of the dequantised operands (the codes' values times
 * their scales, plus the bias). Pass: ours within twice cuBLASLt's own
 * relative (Frobenius) error, or within FLOOR where cuBLASLt is exact to
 * bf16. A call cuBLASLt refuses (m not a multiple of 8) must get cuBLASLt's
 * status from the shim too, with D untouched. Exit 77 without a GPU. */
#include "gpu_util.h"
#include "gu_fp8.h"

#include <cublasLt.h>
#include <dlfcn.h>

#include "gemmshim.h"

#define FLOOR 4e-3 /* bf16 rounding of D: about 2^-9 relative */

typedef struct fp8_case {
    const char *name;
    int a_e5m2, b_e5m2;
    int rowwise; /* OUTER_VEC_32F scales */
    int8_t fast; /* CUBLASLT_MATMUL_DESC_FAST_ACCUM */
    int bias;    /* BIAS epilogue, bf16 */
    int m, n, k;
    int refused; /* cuBLASLt refuses it: the shim must answer the same, D untouched */
    /* a NaN planted in A (row m/3) and in B an Inf (e5m2) or a NaN (column
     * n/2): D's NaN and Inf must sit where cuBLASLt's do, with the same
     * signs; the finite rest is held to the error bound as usual */
    int poison;
    /* alpha = 0 (else 1): cuBLASLt's D is the reference for where a NaN
     * operand still shows (0 * NaN), whatever BLAS would skip */
    int alpha_zero;
    /* A's scale pointer this many floats, the bias this many bf16 values
     * into their allocations (16-byte aligned): cuBLASLt refuses a scale or
     * bias pointer that is not 16-byte aligned (status 15, H200, cuBLAS
     * 13.1), so such a case is a refused one */
    int sa_skew, bias_skew;
} fp8_case_t;

static const fp8_case_t cases[] = {
    {"tensorwise e4m3, promoted, long k", 0, 0, 0, 0, 0, 1000, 520, 4112, 0, 0, 0, 0, 0},
    {"tensorwise e4m3, fast accumulation", 0, 0, 0, 1, 0, 1000, 520, 4112, 0, 0, 0, 0, 0},
    {"rowwise e4m3, promoted, bias", 0, 0, 1, 0, 1, 776, 333, 272, 0, 0, 0, 0, 0},
    {"rowwise e5m2 x e4m3, fast, bias", 1, 0, 1, 1, 1, 136, 129, 16, 0, 0, 0, 0, 0},
    {"tensorwise e4m3 x e5m2, promoted, bias, ragged tile", 0, 1, 0, 0, 1, 1000, 77, 160, 0, 0, 0, 0, 0},
    {"rowwise e4m3, promoted, one column", 0, 0, 1, 0, 0, 4104, 1, 528, 0, 0, 0, 0, 0},
    {"tensorwise e4m3, promoted, many tiles", 0, 0, 0, 0, 0, 4096, 2304, 1024, 0, 0, 0, 0, 0},
    /* m not a multiple of 8: cuBLASLt answers 15, and so must the shim */
    {"tensorwise e4m3, bias, m = 777", 0, 0, 0, 0, 1, 777, 333, 272, 1, 0, 0, 0, 0},
    {"rowwise e4m3, fast, m = 1004", 0, 0, 1, 1, 0, 1004, 64, 128, 1, 0, 0, 0, 0},
    {"tensorwise e4m3 x e5m2, promoted, bias, NaN and Inf planted", 0, 1, 0, 0, 1, 1000, 520, 512,
     0, 1, 0, 0, 0},
    {"rowwise e4m3, fast, bias, alpha 0, NaN planted", 0, 0, 1, 1, 1, 1000, 520, 512, 0, 1, 1, 0, 0},
    {"rowwise e4m3, fast, full tiles, A's scales 4 bytes off 16", 0, 0, 1, 1, 0, 1024, 520, 512,
     1, 0, 0, 1, 0},
    {"tensorwise e4m3, promoted, A's scale 8 bytes off 16", 0, 0, 0, 0, 0, 1024, 520, 512, 1, 0, 0,
     2, 0},
    {"rowwise e4m3, promoted, bias 8 bytes off 16", 0, 0, 1, 0, 1, 1024, 520, 512, 1, 0, 0, 0, 4},
};

/* GEMMSHIM_FP8_TEST_DECODE=1 (with GEMMSHIM_KERNELS=fp8_decode_ring or
 * fp8_decode_wg, which takes n >= 9 only): the decode rings' cases instead,
 * n <= 64: every n bucket (8, 16, 32, 64) and k split (1, 2, 4, 8 blocks:
 * fp8_family.c's decode_cluster on 132 SMs; the names give the mma.sync
 * ring's splits),
 * ragged m, n and k, both scale modes, both accumulations, bias, mixed
 * types, and cuBLASLt's refusal. */
static const fp8_case_t decode_cases[] = {
    {"decode tensorwise e4m3, fast, n = 1, split 4", 0, 0, 0, 1, 0, 4096, 1, 14336, 0, 0, 0, 0, 0},
    {"decode rowwise e4m3, promoted, bias, n = 16, split 2", 0, 0, 1, 0, 1, 6144, 16, 4096, 0, 0, 0, 0, 0},
    {"decode rowwise e5m2 x e4m3, fast, ragged m n k", 1, 0, 1, 1, 0, 1000, 13, 272, 0, 0, 0, 0, 0},
    {"decode tensorwise e4m3 x e5m2, promoted, bias, n = 29, split 8", 0, 1, 0, 0, 1, 2048, 29, 4096,
     0, 0, 0, 0, 0},
    {"decode rowwise e4m3, promoted, n = 64, split 4", 0, 0, 1, 0, 0, 4096, 64, 2048, 0, 0, 0, 0, 0},
    {"decode tensorwise e4m3, fast, bias, n = 40", 0, 0, 0, 1, 1, 776, 40, 528, 0, 0, 0, 0, 0},
    {"decode rowwise e4m3, promoted, one column", 0, 0, 1, 0, 0, 4104, 1, 528, 0, 0, 0, 0, 0},
    /* bucket edges (n = 8 | 9, 16 | 17, 32 | 33), ragged k under a split,
     * n = 17..32 unsplit */
    {"decode rowwise e4m3, fast, n = 8", 0, 0, 1, 1, 0, 2048, 8, 512, 0, 0, 0, 0, 0},
    {"decode tensorwise e4m3, promoted, n = 9, ragged k, split 4", 0, 0, 0, 0, 0, 4096, 9, 4112, 0, 0, 0, 0, 0},
    {"decode rowwise e4m3 x e5m2, promoted, bias, n = 17, ragged k, split 4", 0, 1, 1, 0, 1, 4096,
     17, 2064, 0, 0, 0, 0, 0},
    {"decode tensorwise e5m2 x e4m3, fast, n = 33, split 2", 1, 0, 0, 1, 0, 2048, 33, 1040, 0, 0, 0, 0, 0},
    {"decode rowwise e4m3, fast, n = 32, unsplit", 0, 0, 1, 1, 0, 28672, 32, 1024, 0, 0, 0, 0, 0},
    {"decode tensorwise e4m3 x e5m2, promoted, NaN and Inf planted, split", 0, 1, 0, 0, 0, 4096, 16,
     4096, 0, 1, 0, 0, 0},
    {"decode rowwise e4m3, fast, bias, NaN planted, split", 0, 0, 1, 1, 1, 2048, 29, 4096, 0, 1, 0, 0, 0},
    {"decode tensorwise e4m3 x e5m2, promoted, bias, alpha 0, NaN and Inf planted, split", 0, 1, 0,
     0, 1, 4096, 16, 4096, 0, 1, 1, 0, 0},
    {"decode rowwise e4m3, fast, m = 1004", 0, 0, 1, 1, 0, 1004, 64, 128, 1, 0, 0, 0, 0},
    {"decode rowwise e4m3, fast, n = 16, A's scales 4 bytes off 16", 0, 0, 1, 1, 0, 4096, 16,
     14336, 1, 0, 0, 1, 0},
    {"decode rowwise e4m3, promoted, bias 4 bytes off 16", 0, 0, 1, 0, 1, 4096, 16, 4096, 1, 0, 0,
     0, 2},
};

/* GEMMSHIM_FP8_TEST_DEFAULT=1 (no switch, the default policy): decode
 * calls the routing table sends to the decode kernels (Llama-3-8B and -70B
 * weight shapes the table measured, rowwise, and tensorwise where it
 * measured faster), and the refusals. */
static const fp8_case_t default_cases[] = {
    {"default: rowwise e4m3, fast, 8B down, n = 1", 0, 0, 1, 1, 0, 4096, 1, 14336, 0, 0, 0, 0, 0},
    {"default: rowwise e4m3, promoted, bias, 8B down, n = 16", 0, 0, 1, 0, 1, 4096, 16, 14336, 0, 0,
     0, 0, 0},
    {"default: rowwise e4m3, fast, 8B gate, n = 32", 0, 0, 1, 1, 0, 14336, 32, 4096, 0, 0, 0, 0, 0},
    {"default: rowwise e4m3, promoted, 70B down, n = 64", 0, 0, 1, 0, 0, 8192, 64, 28672, 0, 0, 0,
     0, 0},
    {"default: tensorwise e4m3, fast, 8B k/v, n = 4", 0, 0, 0, 1, 0, 1024, 4, 4096, 0, 0, 0, 0, 0},
    {"default: rowwise e4m3, fast, A's scales 4 bytes off 16", 0, 0, 1, 1, 0, 4096, 16, 14336, 1, 0,
     0, 1, 0},
    {"default: rowwise e4m3, promoted, bias 4 bytes off 16", 0, 0, 1, 0, 1, 4096, 16, 14336, 1, 0, 0,
     0, 2},
};

/* GEMMSHIM_FP8_TEST_OURS_ONLY=1: the shim's side only, each case against
 * FLOOR, the largest case left out. compute-sanitizer's racecheck reports
 * hazards inside cuBLASLt's own FP8 kernel, and crashes when that kernel
 * is left out of its instrumentation (--kernel-name; cuBLAS 13.1, H200),
 * so the sanitize suite runs our kernels alone this way. */
static int ours_only;

typedef int (*set_mode_fn)(gemmshim_mode_t);
typedef int (*last_route_fn)(char *, size_t);

/* D = (scale_a * A)^T (scale_b * B) (+ bias) from the codes' values, double
 * sums, column-major m x n. */
static void reference(const fp8_case_t *x, const uint8_t *hA, const uint8_t *hB, const float *sa,
                      const float *sb, const uint16_t *hbias, double *ref)
{
    const int m = x->m, n = x->n, k = x->k;
    float *a = malloc(sizeof(float) * (size_t)k * m), *b = malloc(sizeof(float) * (size_t)k * n);
    for (size_t i = 0; i < (size_t)k * m; ++i)
        a[i] = gu_fp8_value(hA[i], x->a_e5m2);
    for (size_t i = 0; i < (size_t)k * n; ++i)
        b[i] = gu_fp8_value(hB[i], x->b_e5m2);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            double s = 0.0;
            const float *ai = a + (size_t)i * k, *bj = b + (size_t)j * k;
            for (int l = 0; l < k; ++l)
                s += (double)ai[l] * bj[l];
            s *= (double)sa[x->rowwise ? i : 0] * sb[x->rowwise ? j : 0];
            if (x->alpha_zero)
                s *= 0.0;
            if (x->bias)
                s += gu_bf16_to_f32(hbias[i]);
            ref[i + (size_t)j * m] = (float)s;
        }
    free(a);
    free(b);
}

static int run_case(cublasLtHandle_t lt, const fp8_case_t *x, set_mode_fn set_mode,
                    last_route_fn last_route, void *ws, size_t ws_size)
{
    const size_t m = x->m, n = x->n, k = x->k, na = x->rowwise ? m : 1, nb = x->rowwise ? n : 1;
    uint8_t *hA = malloc(k * m), *hB = malloc(k * n);
    float *sa = malloc(na * sizeof(float)), *sb = malloc(nb * sizeof(float));
    /* D's leading dimension in whole 16-byte units (the family's TMA stores) */
    const size_t ldd = (m + 7) / 8 * 8;
    uint16_t *hbias = malloc(m * sizeof(uint16_t)), *out = malloc(ldd * n * sizeof(uint16_t));
    double *ref = malloc(m * n * sizeof(double));
    for (size_t i = 0; i < k * m; ++i)
        hA[i] = gu_fp8_code((float)(gu_uniform() * 2.0), x->a_e5m2);
    for (size_t i = 0; i < k * n; ++i)
        hB[i] = gu_fp8_code((float)(gu_uniform() * 2.0), x->b_e5m2);
    for (size_t i = 0; i < na; ++i)
        sa[i] = (float)(1.25 + 0.75 * gu_uniform());
    for (size_t i = 0; i < nb; ++i)
        sb[i] = (float)(1.25 + 0.75 * gu_uniform());
    for (size_t i = 0; i < m; ++i)
        hbias[i] = gu_f32_to_bf16((float)gu_uniform());
    if (x->poison) {
        /* 0x7f is NaN in both formats; 0x7c is e5m2's +Inf (e4m3 has none) */
        hA[(m / 3) * k + 5 % k] = 0x7f;
        hB[(n / 2) * k + 7 % k] = x->b_e5m2 ? 0x7c : 0x7f;
    }
    reference(x, hA, hB, sa, sb, hbias, ref);

    void *A, *B, *D, *bias;
    float *dsa_base, *dsa, *dsb;
    CUDA_OK(cudaMalloc(&A, k * m));
    CUDA_OK(cudaMalloc(&B, k * n));
    CUDA_OK(cudaMalloc(&D, ldd * n * sizeof(uint16_t)));
    CUDA_OK(cudaMalloc(&bias, (m + 8) * sizeof(uint16_t)));
    CUDA_OK(cudaMalloc((void **)&dsa_base, (na + 4) * sizeof(float)));
    dsa = dsa_base + x->sa_skew;
    CUDA_OK(cudaMalloc((void **)&dsb, nb * sizeof(float)));
    CUDA_OK(cudaMemcpy(A, hA, k * m, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(B, hB, k * n, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy((uint16_t *)bias + x->bias_skew, hbias, m * sizeof(uint16_t),
                       cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dsa, sa, na * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dsb, sb, nb * sizeof(float), cudaMemcpyHostToDevice));

    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld;
    gu_fp8_tn_call(x->a_e5m2, x->b_e5m2, x->rowwise, x->fast, dsa, dsb,
                   x->bias ? (uint16_t *)bias + x->bias_skew : NULL, m,
                   n, k, (int64_t)ldd, &desc, &la, &lb, &ld);

    const float alpha = x->alpha_zero ? 0.0f : 1.0f, beta = 0.0f;
    double err[2] = {0.0, 0.0}; /* cuBLASLt's, ours */
    uint16_t *theirs = malloc(m * n * sizeof(uint16_t)); /* cuBLASLt's D, packed */
    size_t mask_off = 0;                                /* non-finite elements out of place */
    cublasStatus_t refused_st = CUBLAS_STATUS_SUCCESS;
    char route[128] = "";
    int bad = 0;
    /* ours only (the sanitize suite): no cuBLASLt side, the FLOOR bound */
    for (int ours = ours_only ? 1 : 0; ours < 2 && !bad; ++ours) {
        set_mode(ours ? GEMMSHIM_MODE_ON : GEMMSHIM_MODE_OFF);
        CUDA_OK(cudaMemset(D, 0xff, ldd * n * sizeof(uint16_t))); /* NaN: D must be written */
        const cublasStatus_t st =
            cublasLtMatmul(lt, desc, &alpha, A, la, B, lb, &beta, D, ld, D, ld, NULL, ws, ws_size, 0);
        if (x->refused) {
            /* cuBLASLt's answer first; then the shim's must be the same,
             * with nothing written */
            if (!ours)
                refused_st = st;
            if (st == CUBLAS_STATUS_SUCCESS || st != refused_st) {
                printf("FAIL: %s: %s answered %d, cuBLASLt %d (a refusal expected)\n", x->name,
                       ours ? "the shim" : "cuBLASLt", (int)st, (int)refused_st);
                bad = 1;
                break;
            }
            CUDA_OK(cudaDeviceSynchronize());
            CUDA_OK(cudaMemcpy(out, D, ldd * n * sizeof(uint16_t), cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < ldd * n && !bad; ++i)
                if (out[i] != 0xffff) {
                    printf("FAIL: %s: D written at %zu by a refused call\n", x->name, i);
                    bad = 1;
                }
            continue;
        }
        if (st != CUBLAS_STATUS_SUCCESS) {
            printf("FAIL: %s: %s: cuBLASLt status %d\n", x->name, ours ? "ours" : "cuBLASLt", (int)st);
            bad = 1;
            break;
        }
        CUDA_OK(cudaDeviceSynchronize());
        if (ours) {
            last_route(route, sizeof route);
            if (strncmp(route, "fp8_", 4) != 0) {
                printf("FAIL: %s: served by '%s', not the FP8 family\n", x->name, route);
                bad = 1;
            }
        }
        CUDA_OK(cudaMemcpy(out, D, ldd * n * sizeof(uint16_t), cudaMemcpyDeviceToHost));
        /* D's m rows, packed (the padding rows past m are never written) */
        for (size_t j = 0; j < n; ++j)
            memmove(out + j * m, out + j * ldd, m * sizeof(uint16_t));
        if (!x->poison) {
            err[ours] = gu_bf16_rel_err(ref, out, m * n);
            continue;
        }
        /* NaN and Inf where cuBLASLt put them (ours alone: where the
         * reference has them); the error over the elements finite there */
        if (!ours)
            memcpy(theirs, out, m * n * sizeof(uint16_t));
        double num = 0.0, den = 0.0;
        for (size_t i = 0; i < m * n; ++i) {
            const double v = gu_bf16_to_f32(out[i]);
            const double want = ours && !ours_only ? gu_bf16_to_f32(theirs[i]) : ref[i];
            if (isfinite(want) != isfinite(v) || isnan(want) != isnan(v) ||
                (isinf(want) && (want > 0) != (v > 0))) {
                mask_off += ours;
                continue;
            }
            if (isfinite(v) && isfinite(ref[i])) {
                num += (v - ref[i]) * (v - ref[i]);
                den += ref[i] * ref[i];
            }
        }
        err[ours] = den > 0.0 ? sqrt(num / den) : sqrt(num);
    }
    free(theirs);
    if (x->poison && !bad && mask_off) {
        printf("FAIL: %s: %zu elements NaN or Inf where cuBLASLt's are not, or the reverse\n",
               x->name, mask_off);
        bad = 1;
    }
    const double limit = 2.0 * err[0] > FLOOR ? 2.0 * err[0] : FLOOR;
    if (x->refused) {
        if (!bad)
            printf("ok: %s: refused by cuBLASLt and by the shim alike (status %d), D untouched\n",
                   x->name, (int)refused_st);
    } else if (!bad && !(err[1] <= limit)) {
        printf("FAIL: %s: m=%zu n=%zu k=%zu: relative error %.3g, cuBLASLt's %.3g (limit %.3g)\n",
               x->name, m, n, k, err[1], err[0], limit);
        bad = 1;
    } else if (!bad)
        printf("ok: %s: m=%zu n=%zu k=%zu, %s: relative error %.3g, cuBLASLt's %.3g\n", x->name, m,
               n, k, route, err[1], err[0]);
    set_mode(GEMMSHIM_MODE_ON);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(desc);
    cudaFree(A), cudaFree(B), cudaFree(D), cudaFree(bias), cudaFree(dsa_base), cudaFree(dsb);
    free(hA), free(hB), free(sa), free(sb), free(hbias), free(out), free(ref);
    return bad;
}

int main(void)
{
    gpu_require_or_skip("test_fp8_tiles");
    const char *oo = getenv("GEMMSHIM_FP8_TEST_OURS_ONLY");
    ours_only = oo && !strcmp(oo, "1");
    const uint64_t seed = gu_seed_init();
    const size_t version = cublasLtGetVersion();
    const int rowwise = version >= 120900;
    printf("test_fp8_tiles: cuBLASLt %zu, GEMMSHIM_SEED=0x%llx\n", version,
           (unsigned long long)seed);
    const set_mode_fn set_mode = (set_mode_fn)dlsym(RTLD_DEFAULT, "gemmshim_set_mode");
    const last_route_fn last_route = (last_route_fn)dlsym(RTLD_DEFAULT, "gemmshim_last_route");
    if (!gu_shim_present_lt() || !set_mode || !last_route) {
        printf("FAIL: run me with LD_PRELOAD=libgemmshim.so\n");
        return 1;
    }
    int dev = 0, major = 0, minor = 0;
    CUDA_OK(cudaGetDevice(&dev));
    CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    if (major != 9 || minor != 0) {
        printf("SKIP: test_fp8_tiles: compute capability %d.%d; the family is sm_90a\n", major,
               minor);
        return GPU_SKIP;
    }
    cublasLtHandle_t lt;
    CUBLAS_OK(cublasLtCreate(&lt));
    const size_t ws_size = 32u << 20;
    void *ws;
    CUDA_OK(cudaMalloc(&ws, ws_size));
    const char *dec = getenv("GEMMSHIM_FP8_TEST_DECODE"), *def = getenv("GEMMSHIM_FP8_TEST_DEFAULT");
    const int decode = dec && !strcmp(dec, "1"), by_default = def && !strcmp(def, "1");
    const fp8_case_t *const list = by_default ? default_cases : decode ? decode_cases : cases;
    const size_t count = by_default ? sizeof default_cases / sizeof default_cases[0]
                         : decode   ? sizeof decode_cases / sizeof decode_cases[0]
                                    : sizeof cases / sizeof cases[0];
    /* GEMMSHIM_FP8_TEST_CASE=I: case I of the list alone (bisecting a
     * failure or a hang) */
    const char *one = getenv("GEMMSHIM_FP8_TEST_CASE");
    const long only = one && *one ? strtol(one, NULL, 10) : -1;
    const char *kernels = getenv("GEMMSHIM_KERNELS");
    const int wg = kernels && !strcmp(kernels, "fp8_decode_wg");
    int failed = 0, ran = 0;
    for (size_t i = 0; i < count; ++i) {
        if (only >= 0 && (long)i != only)
            continue;
        if (wg && list[i].n <= 8) { /* fp8_family.c: the mma.sync ring's */
            printf("skipped: %s: fp8_decode_wg takes n >= 9\n", list[i].name);
            continue;
        }
        if (list[i].rowwise && !rowwise) {
            printf("skipped: %s: rowwise scales need cuBLASLt 12.9 or newer\n", list[i].name);
            continue;
        }
        if (list[i].refused && ours_only)
            continue; /* cuBLASLt's status is the expectation */
        if (ours_only && (double)list[i].m * list[i].n * list[i].k > 4e9) {
            /* racecheck takes minutes over it */
            printf("skipped: %s: GEMMSHIM_FP8_TEST_OURS_ONLY=1 (sanitizer runs) leaves out the "
                   "largest case\n", list[i].name);
            continue;
        }
        ++ran;
        failed += run_case(lt, &list[i], set_mode, last_route, ws, ws_size);
    }
    printf("%d passed, %d failed\n", ran - failed, failed);
    cudaFree(ws);
    cublasLtDestroy(lt);
    return failed || !ran ? 1 : 0;
}
