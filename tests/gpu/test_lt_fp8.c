/* FP8 cublasLtMatmul through the shim, without torch: the calls
 * torch._scaled_mm makes (A transposed, e4m3 or e5m2 operands, bf16 D in
 * place, beta 0, a cuBLASLt workspace, the algorithm left to cuBLASLt),
 * tensorwise and rowwise (OUTER_VEC_32F, cuBLAS >= 12.9) scales, fast
 * accumulation on and off, one with the BIAS epilogue. Each case is its own
 * signature (sizes apart, so the tuner's log lines are too) and is called
 * GEMMSHIM_LT_FP8_CALLS times (200), so online tuning (run_gpu_test.sh
 * lt_fp8: GEMMSHIM_TUNE=online, GEMMSHIM_MODE=verify) decides it over
 * cuBLASLt's own algorithms and later calls take the decision. Every 25th
 * call and the last are checked against an fp32 host reference of the
 * dequantised operands (the FP8 values times their scales), D poisoned
 * (NaN) before each checked call so it must be written again.
 * Pass: every checked call within 1.5e-2 relative (Frobenius) of the
 * reference, cuBLASLt's status success. Prints the number of signatures
 * for the runner. Exit 77 without a GPU. */
#include "gpu_util.h"
#include "gu_fp8.h"

#include <cublasLt.h>

#define TOL 1.5e-2

typedef struct fp8_case {
    const char *name;
    int a_e5m2, b_e5m2;
    int rowwise;        /* OUTER_VEC_32F scales: one per row of op(A), column of op(B) */
    int8_t fast;        /* CUBLASLT_MATMUL_DESC_FAST_ACCUM */
    int bias;           /* the BIAS epilogue, a bf16 vector */
    int m, n, k;        /* apart per case: each its own signature and log line */
} fp8_case_t;

static const fp8_case_t cases[] = {
    {"tensorwise, fast accumulation", 0, 0, 0, 1, 0, 512, 384, 1024},
    {"tensorwise, exact accumulation", 0, 0, 0, 0, 0, 640, 384, 1024},
    {"tensorwise e5m2 x e4m3, bias", 1, 0, 0, 0, 1, 384, 256, 768},
    {"rowwise, exact accumulation", 0, 0, 1, 0, 0, 768, 256, 512},
    {"rowwise, fast accumulation", 0, 0, 1, 1, 0, 768, 320, 512},
};

typedef struct operands {
    uint8_t *hA, *hB;   /* A: k x m (lda = k, transposed), B: k x n (ldb = k) */
    float *sa, *sb;     /* scales: 1 or m, 1 or n */
    uint16_t *hbias;    /* m bf16 */
    void *A, *B, *D, *bias;
    float *dsa, *dsb;
} operands_t;

static void make(const fp8_case_t *x, operands_t *o)
{
    const size_t m = x->m, n = x->n, k = x->k, na = x->rowwise ? m : 1, nb = x->rowwise ? n : 1;
    o->hA = malloc(k * m);
    o->hB = malloc(k * n);
    o->sa = malloc(na * sizeof(float));
    o->sb = malloc(nb * sizeof(float));
    o->hbias = malloc(m * sizeof(uint16_t));
    for (size_t i = 0; i < k * m; ++i)
        o->hA[i] = gu_fp8_code((float)(gu_uniform() * 2.0), x->a_e5m2);
    for (size_t i = 0; i < k * n; ++i)
        o->hB[i] = gu_fp8_code((float)(gu_uniform() * 2.0), x->b_e5m2);
    for (size_t i = 0; i < na; ++i)
        o->sa[i] = (float)(1.25 + 0.75 * gu_uniform()); /* 0.5 .. 2 */
    for (size_t i = 0; i < nb; ++i)
        o->sb[i] = (float)(1.25 + 0.75 * gu_uniform());
    for (size_t i = 0; i < m; ++i)
        o->hbias[i] = gu_f32_to_bf16((float)gu_uniform());
    CUDA_OK(cudaMalloc(&o->A, k * m));
    CUDA_OK(cudaMalloc(&o->B, k * n));
    CUDA_OK(cudaMalloc(&o->D, m * n * sizeof(uint16_t)));
    CUDA_OK(cudaMalloc(&o->bias, m * sizeof(uint16_t)));
    CUDA_OK(cudaMalloc((void **)&o->dsa, na * sizeof(float)));
    CUDA_OK(cudaMalloc((void **)&o->dsb, nb * sizeof(float)));
    CUDA_OK(cudaMemcpy(o->A, o->hA, k * m, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(o->B, o->hB, k * n, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(o->bias, o->hbias, m * sizeof(uint16_t), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(o->dsa, o->sa, na * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(o->dsb, o->sb, nb * sizeof(float), cudaMemcpyHostToDevice));
}

static void unmake(operands_t *o)
{
    cudaFree(o->A), cudaFree(o->B), cudaFree(o->D), cudaFree(o->bias);
    cudaFree(o->dsa), cudaFree(o->dsb);
    free(o->hA), free(o->hB), free(o->sa), free(o->sb), free(o->hbias);
}

/* D = (scale_a * A)^T (scale_b * B) (+ bias), from the codes' values, in
 * fp32 (double sums): column-major m x n. */
static void reference(const fp8_case_t *x, const operands_t *o, double *ref)
{
    const int m = x->m, n = x->n, k = x->k;
    float *a = malloc(sizeof(float) * (size_t)k * m), *b = malloc(sizeof(float) * (size_t)k * n);
    for (size_t i = 0; i < (size_t)k * m; ++i)
        a[i] = gu_fp8_value(o->hA[i], x->a_e5m2);
    for (size_t i = 0; i < (size_t)k * n; ++i)
        b[i] = gu_fp8_value(o->hB[i], x->b_e5m2);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            double s = 0.0;
            for (int l = 0; l < k; ++l)
                s += (double)a[l + (size_t)i * k] * b[l + (size_t)j * k];
            s *= (double)o->sa[x->rowwise ? i : 0] * o->sb[x->rowwise ? j : 0];
            if (x->bias)
                s += gu_bf16_to_f32(o->hbias[i]);
            ref[i + (size_t)j * m] = (float)s;
        }
    free(a);
    free(b);
}

/* One case: its descriptors as torch._scaled_mm sets them, then its calls. */
static int run_case(cublasLtHandle_t lt, const fp8_case_t *x, int calls, void *ws, size_t ws_size)
{
    operands_t o;
    make(x, &o);
    const size_t mn = (size_t)x->m * x->n;
    double *ref = malloc(sizeof(double) * mn);
    uint16_t *out = malloc(sizeof(uint16_t) * mn);
    reference(x, &o, ref);

    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld;
    gu_fp8_tn_call(x->a_e5m2, x->b_e5m2, x->rowwise, x->fast, o.dsa, o.dsb,
                   x->bias ? o.bias : NULL, x->m, x->n, x->k, x->m, &desc, &la, &lb, &ld);

    const float alpha = 1.0f, beta = 0.0f;
    double worst = 0.0;
    int checked = 0, bad = 0;
    for (int c = 0; c < calls && !bad; ++c) {
        const int check = c % 25 == 0 || c == calls - 1;
        if (check) /* NaN in bf16: the call must write all of D */
            CUDA_OK(cudaMemset(o.D, 0xff, mn * sizeof(uint16_t)));
        const cublasStatus_t st = cublasLtMatmul(lt, desc, &alpha, o.A, la, o.B, lb, &beta, o.D,
                                                 ld, o.D, ld, NULL, ws, ws_size, 0);
        if (st != CUBLAS_STATUS_SUCCESS) {
            printf("FAIL: %s: call %d: cuBLASLt status %d\n", x->name, c, (int)st);
            bad = 1;
            break;
        }
        if (!check)
            continue;
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaMemcpy(out, o.D, mn * sizeof(uint16_t), cudaMemcpyDeviceToHost));
        const double e = gu_bf16_rel_err(ref, out, mn);
        worst = e > worst ? e : worst;
        ++checked;
        if (!(e <= TOL)) {
            printf("FAIL: %s: call %d: relative error %.3g over %.3g\n", x->name, c, e, TOL);
            bad = 1;
        }
    }
    if (!bad)
        printf("ok: %s: m=%d n=%d k=%d, %d calls, %d checked, worst relative error %.3g\n",
               x->name, x->m, x->n, x->k, calls, checked, worst);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(desc);
    unmake(&o);
    free(ref);
    free(out);
    return bad;
}

int main(void)
{
    gpu_require_or_skip("test_lt_fp8");
    const uint64_t seed = gu_seed_init();
    const int calls = gu_env_int("GEMMSHIM_LT_FP8_CALLS", 200);
    const size_t version = cublasLtGetVersion();
    const int rowwise = version >= 120900;
    printf("test_lt_fp8: %d calls a case, cuBLASLt %zu, GEMMSHIM_SEED=0x%llx\n", calls, version,
           (unsigned long long)seed);
    if (!gu_shim_present_lt()) { /* this program links cuBLASLt alone */
        printf("FAIL: run me with LD_PRELOAD=libgemmshim.so\n");
        return 1;
    }
    int dev = 0, major = 0;
    CUDA_OK(cudaGetDevice(&dev));
    CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    if (major < 9) { /* cuBLASLt runs FP8 GEMMs from Hopper (and Ada's 8.9) on */
        printf("SKIP: test_lt_fp8: compute capability %d.x; the test wants 9.0 or newer\n",
               major);
        return GPU_SKIP;
    }
    cublasLtHandle_t lt;
    CUBLAS_OK(cublasLtCreate(&lt));
    const size_t ws_size = 32u << 20;
    void *ws;
    CUDA_OK(cudaMalloc(&ws, ws_size));
    int failed = 0, signatures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        if (cases[i].rowwise && !rowwise) {
            printf("skipped: %s: rowwise scales need cuBLASLt 12.9 or newer\n", cases[i].name);
            continue;
        }
        ++signatures;
        failed += run_case(lt, &cases[i], calls, ws, ws_size);
    }
    printf("test_lt_fp8: %d signatures\n", signatures);
    printf("%d passed, %d failed\n", signatures - failed, failed);
    cudaFree(ws);
    cublasLtDestroy(lt);
    return failed ? 1 : 0;
}
