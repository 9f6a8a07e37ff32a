/* fp32 correctness sweep through the cuBLAS API, run under the shim:
 * >= 200 random cases (sizes 1..2048 with primes, every transpose incl. C,
 * padded and odd leading dimensions, misaligned base pointers, alpha/beta
 * incl. 0 and negative, host and device pointer mode, NaN-filled C with
 * beta == 0, Sgemm / GemmEx (new and legacy compute spelling) / both strided
 * batched forms / _64 forms) against an OpenBLAS fp64 reference.
 * Checks: relative Frobenius error <= 1e-5; the padding rows of C (between m
 * and ldc) untouched; no NaN leaked. Which route served the calls is checked
 * by the BATS wrapper from the shim's log.
 *
 * Then GEMMSHIM_SWEEP_DEEPK (default 16; 0 when GEMMSHIM_SWEEP_CASES=0, the
 * GPU-presence probe) deep-K cases, the split-K kernel's
 * territory: k up to 131072 with small m and n, all four transposes, padded
 * leading dimensions, misaligned bases, alpha/beta incl. beta == 0 over a
 * NaN-filled C, host and device scalars; each within 1e-5 of fp64 or within
 * 2x the real cuBLAS's error on the same inputs (few outputs of very long
 * sums: cancellation can put one past 1e-5 for cuBLAS too), and called
 * twice through the shim: the two results must be bitwise identical. */
#include "gpu_util.h"

#define CASES_DEFAULT 240
#define TOL 1e-5
#define PAD_SENTINEL 12345.0f

typedef enum { E_SGEMM, E_SGEMM64, E_GEMMEX, E_GEMMEX_LEGACY, E_SGEMM_SB, E_GEMMEX_SB,
               E_SGEMM_SB64, E_COUNT } entry_t;
static const char *entry_names[E_COUNT] = {"Sgemm", "Sgemm_64", "GemmEx", "GemmEx(legacy 32F)",
                                           "SgemmStridedBatched", "GemmStridedBatchedEx",
                                           "SgemmStridedBatched_64"};

static const int primes[] = {1, 2, 3, 7, 13, 31, 61, 127, 251, 509, 1021, 2039};

static int64_t pick_dim(int big)
{
    switch (gu_int(0, big ? 3 : 2)) {
    case 0: return primes[gu_int(0, 9)];
    case 1: return gu_int(1, 96);
    case 2: return gu_int(97, 700);
    default: return big ? gu_int(1500, 2048) : gu_int(1, 300);
    }
}

static const cublasOperation_t ops[3] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
static const float scalars[] = {1.f, 0.f, -1.5f, 0.5f, 2.f, -0.25f};

#define DEEPK_DEFAULT 16

typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                   int, const float *, const float *, int, const float *, int,
                                   const float *, float *, int);

/* The shim's route of this thread's last call ("?" without the API). */
static const char *last_route(void)
{
    static char buf[96];
    typedef int (*route_fn)(char *, size_t);
    route_fn f = (route_fn)dlsym(RTLD_DEFAULT, "gemmshim_last_route");
    if (!f || f(buf, sizeof buf) != 0)
        snprintf(buf, sizeof buf, "?");
    return buf;
}

/* One deep-K case through the shim (cublasSgemm or cublasGemmEx, batch 1).
 * Returns 1 when it passed; *split_routed is set when a split-K kernel
 * served it, *err / *err_cublas to ours / the real cuBLAS's error. */
static int deep_case(cublasHandle_t h, cudaStream_t stream, float *d_scalars, int c,
                     int64_t max_dim, int *split_routed, double *err_out, double *err_cublas_out)
{
    int64_t k = gu_int(0, 2) == 0 ? gu_int(65536, 131072) : gu_int(4096, 40000);
    if (c == 0)
        k = 131072;
    int64_t cap = k / 4 < 300 ? k / 4 : 300;
    int64_t m = gu_int(1, cap), n = gu_int(1, cap);
    if (max_dim) { /* under compute-sanitizer: still deep, but small */
        k = k > 16 * max_dim ? 16 * max_dim : k;
        m = m > max_dim / 4 ? max_dim / 4 : m;
        n = n > max_dim / 4 ? max_dim / 4 : n;
        m = m < 1 ? 1 : m;
        n = n < 1 ? 1 : n;
    }
    cublasOperation_t ta = ops[c & 1], tb = ops[(c >> 1) & 1];
    if (gu_int(0, 7) == 0)
        ta = CUBLAS_OP_C; /* conjugate = transpose for real types */
    int tA = ta != CUBLAS_OP_N, tB = tb != CUBLAS_OP_N;
    int64_t ra = tA ? k : m, ca = tA ? m : k, rb = tB ? n : k, cb = tB ? k : n;
    int64_t lda = ra + (gu_int(0, 1) ? gu_int(1, 17) : 0);
    int64_t ldb = rb + (gu_int(0, 1) ? gu_int(1, 17) : 0);
    int64_t ldc = m + (gu_int(0, 1) ? gu_int(1, 9) : 0);
    int64_t off = gu_int(0, 3) == 0 ? 1 : 0;
    float alpha = scalars[gu_int(0, 5)], beta = gu_int(0, 2) == 0 ? 0.f : scalars[gu_int(0, 5)];
    if (alpha == 0.f && gu_int(0, 1))
        alpha = 1.f; /* keep most cases about the product */
    int dev_mode = gu_int(0, 3) == 0, gemmex = gu_int(0, 1);

    int64_t na = off + lda * ca, nb = off + ldb * cb, nc = off + ldc * n;
    float *hA = malloc(sizeof(float) * na), *hB = malloc(sizeof(float) * nb),
          *hC = malloc(sizeof(float) * nc), *hOut = malloc(sizeof(float) * nc),
          *hOut2 = malloc(sizeof(float) * nc);
    double *dA = malloc(sizeof(double) * na), *dB = malloc(sizeof(double) * nb),
           *dC = malloc(sizeof(double) * nc), *dOut = malloc(sizeof(double) * ldc * n);
    gu_fill_f32_f64(hA, dA, na);
    gu_fill_f32_f64(hB, dB, nb);
    for (int64_t i = 0; i < nc; ++i)
        hC[i] = beta == 0.f ? NAN : (float)gu_uniform();
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = m; i < ldc; ++i)
            hC[off + i + j * ldc] = PAD_SENTINEL;
    for (int64_t i = 0; i < nc; ++i)
        dC[i] = hC[i];
    float *A, *B, *C;
    CUDA_OK(cudaMalloc((void **)&A, sizeof(float) * na));
    CUDA_OK(cudaMalloc((void **)&B, sizeof(float) * nb));
    CUDA_OK(cudaMalloc((void **)&C, sizeof(float) * nc));
    CUDA_OK(cudaMemcpy(A, hA, sizeof(float) * na, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(B, hB, sizeof(float) * nb, cudaMemcpyHostToDevice));
    const float *pa = &alpha, *pb = &beta;
    if (dev_mode) {
        float sc[2] = {alpha, beta};
        CUDA_OK(cudaMemcpy(d_scalars, sc, sizeof sc, cudaMemcpyHostToDevice));
        pa = d_scalars;
        pb = d_scalars + 1;
    }
    CUBLAS_OK(cublasSetPointerMode(h, dev_mode ? CUBLAS_POINTER_MODE_DEVICE
                                                : CUBLAS_POINTER_MODE_HOST));
    const float *a0 = A + off, *b0 = B + off;
    float *c0 = C + off;
    cublasStatus_t st[2];
    char route[96] = "";
    for (int rep = 0; rep < 2; ++rep) { /* the same call twice: the same bits */
        CUDA_OK(cudaMemcpy(C, hC, sizeof(float) * nc, cudaMemcpyHostToDevice));
        if (gemmex)
            st[rep] = cublasGemmEx(h, ta, tb, (int)m, (int)n, (int)k, pa, a0, CUDA_R_32F, (int)lda,
                                   b0, CUDA_R_32F, (int)ldb, pb, c0, CUDA_R_32F, (int)ldc,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        else
            st[rep] = cublasSgemm(h, ta, tb, (int)m, (int)n, (int)k, pa, a0, (int)lda, b0,
                                  (int)ldb, pb, c0, (int)ldc);
        if (rep == 0)
            snprintf(route, sizeof route, "%s", last_route());
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaMemcpy(rep ? hOut2 : hOut, C, sizeof(float) * nc, cudaMemcpyDeviceToHost));
    }
    int same = !memcmp(hOut, hOut2, sizeof(float) * nc);
    *split_routed = strstr(route, "streamk") != NULL;

    double *rc = dC + off;
    gu_ref_gemm(tA, tB, m, n, k, alpha, dA + off, lda, dB + off, ldb, beta, rc, ldc);
    for (int64_t i = 0; i < ldc * n; ++i)
        dOut[i] = hOut[off + i];
    double err = gu_rel_err(rc, ldc, dOut, ldc, m, n);
    int pad_ok = 1;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = m; i < ldc; ++i)
            pad_ok &= hOut[off + i + j * ldc] == PAD_SENTINEL;

    /* the real cuBLAS on the same inputs, for its own error */
    static sgemm_fn real_sgemm;
    if (!real_sgemm)
        real_sgemm = (sgemm_fn)gu_real_cublas_sym("cublasSgemm_v2");
    CUDA_OK(cudaMemcpy(C, hC, sizeof(float) * nc, cudaMemcpyHostToDevice));
    CUBLAS_OK(real_sgemm(h, ta, tb, (int)m, (int)n, (int)k, pa, a0, (int)lda, b0, (int)ldb, pb,
                         c0, (int)ldc));
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaMemcpy(hOut2, C, sizeof(float) * nc, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < ldc * n; ++i)
        dOut[i] = hOut2[off + i];
    double err_cublas = gu_rel_err(rc, ldc, dOut, ldc, m, n);

    int ok = st[0] == CUBLAS_STATUS_SUCCESS && st[1] == CUBLAS_STATUS_SUCCESS &&
             (err <= TOL || err <= 2.0 * err_cublas) && pad_ok && same;
    printf("%s deep-K %d: %s %c%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld off=%lld "
           "alpha=%g beta=%g %s -> %s: err=%.3g cuBLAS err=%.3g%s%s\n",
           ok ? "ok  " : "FAIL", c, gemmex ? "GemmEx" : "Sgemm", "NTC"[ta], "NTC"[tb],
           (long long)m, (long long)n, (long long)k, (long long)lda, (long long)ldb,
           (long long)ldc, (long long)off, alpha, beta, dev_mode ? "device" : "host", route, err,
           err_cublas, pad_ok ? "" : " pad CLOBBERED", same ? "" : " NOT DETERMINISTIC");
    *err_out = err;
    *err_cublas_out = err_cublas;
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    free(hA); free(hB); free(hC); free(hOut); free(hOut2);
    free(dA); free(dB); free(dC); free(dOut);
    return ok;
}

int main(void)
{
    gpu_require_or_skip("test_sgemm_sweep");
    uint64_t seed = gu_seed_init();
    int cases = gu_env_int("GEMMSHIM_SWEEP_CASES", CASES_DEFAULT);
    const char *md = getenv("GEMMSHIM_SWEEP_MAX_DIM");
    int64_t max_dim = md ? atoll(md) : 0;
    printf("test_sgemm_sweep: %d cases, GEMMSHIM_SEED=0x%llx, shim %s\n", cases,
           (unsigned long long)seed, gu_shim_present() ? "present" : "ABSENT");
    gu_require_shim();
    cublasHandle_t h;
    CUBLAS_OK(cublasCreate(&h));
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    CUBLAS_OK(cublasSetStream(h, stream));
    float *d_scalars;
    CUDA_OK(cudaMalloc((void **)&d_scalars, 2 * sizeof(float)));

    int passed = 0, failed = 0;
    double worst = 0.0;
    for (int c = 0; c < cases; ++c) {
        entry_t e = (entry_t)gu_int(0, E_COUNT - 1);
        int batched = e == E_SGEMM_SB || e == E_GEMMEX_SB || e == E_SGEMM_SB64;
        int big = gu_int(0, 5) == 0 && !batched;
        int64_t m = pick_dim(big), n = pick_dim(big), k = pick_dim(big);
        if (gu_int(0, 19) == 0)
            k = 0;
        gu_cap_dims(&m, &n, &k, max_dim);
        cublasOperation_t ta = ops[gu_int(0, 2)], tb = ops[gu_int(0, 2)];
        int tA = ta != CUBLAS_OP_N, tB = tb != CUBLAS_OP_N;
        int64_t ra = tA ? k : m, ca = tA ? m : k, rb = tB ? n : k, cb = tB ? k : n;
        int64_t lda = (ra > 1 ? ra : 1) + (gu_int(0, 2) ? gu_int(0, 17) : 0);
        int64_t ldb = (rb > 1 ? rb : 1) + (gu_int(0, 2) ? gu_int(0, 17) : 0);
        int64_t ldc = m + (gu_int(0, 2) ? gu_int(1, 9) : 0);
        int64_t batch = batched ? gu_int(1, 5) : 1;
        int64_t sa = lda * ca + gu_int(0, 8), sb = ldb * cb + gu_int(0, 8), sc = ldc * n + gu_int(0, 8);
        if (batched && gu_int(0, 5) == 0)
            sa = 0; /* broadcast A */
        int64_t off = gu_int(0, 3) == 0 ? 1 : 0; /* misalign the bases by one float */
        float alpha = scalars[gu_int(0, 5)], beta = scalars[gu_int(0, 5)];
        if (gu_int(0, 3) == 0)
            beta = 0.f;
        int dev_mode = gu_int(0, 3) == 0;

        int64_t na = off + sa * (batch - 1) + lda * ca, nb = off + sb * (batch - 1) + ldb * cb,
                nc = off + sc * (batch - 1) + ldc * n;
        float *hA = malloc(sizeof(float) * na), *hB = malloc(sizeof(float) * nb),
              *hC = malloc(sizeof(float) * nc), *hOut = malloc(sizeof(float) * nc);
        double *dA = malloc(sizeof(double) * na), *dB = malloc(sizeof(double) * nb),
               *dC = malloc(sizeof(double) * nc), *dOut = malloc(sizeof(double) * nc);
        gu_fill_f32_f64(hA, dA, na);
        gu_fill_f32_f64(hB, dB, nb);
        for (int64_t i = 0; i < nc; ++i)
            hC[i] = beta == 0.f ? NAN : (float)gu_uniform();
        /* the rows between m and ldc must stay as they are */
        for (int64_t b = 0; b < batch; ++b)
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = m; i < ldc; ++i)
                    hC[off + b * sc + i + j * ldc] = PAD_SENTINEL;
        for (int64_t i = 0; i < nc; ++i)
            dC[i] = hC[i];

        float *A, *B, *C;
        CUDA_OK(cudaMalloc((void **)&A, sizeof(float) * na));
        CUDA_OK(cudaMalloc((void **)&B, sizeof(float) * nb));
        CUDA_OK(cudaMalloc((void **)&C, sizeof(float) * nc));
        CUDA_OK(cudaMemcpy(A, hA, sizeof(float) * na, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(B, hB, sizeof(float) * nb, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(C, hC, sizeof(float) * nc, cudaMemcpyHostToDevice));
        const float *pa = &alpha, *pb = &beta;
        if (dev_mode) {
            float s[2] = {alpha, beta};
            CUDA_OK(cudaMemcpy(d_scalars, s, sizeof s, cudaMemcpyHostToDevice));
            pa = d_scalars;
            pb = d_scalars + 1;
        }
        CUBLAS_OK(cublasSetPointerMode(h, dev_mode ? CUBLAS_POINTER_MODE_DEVICE
                                                    : CUBLAS_POINTER_MODE_HOST));
        const float *a0 = A + off, *b0 = B + off;
        float *c0 = C + off;
        cublasStatus_t st = CUBLAS_STATUS_INTERNAL_ERROR;
        switch (e) {
        case E_SGEMM:
            st = cublasSgemm(h, ta, tb, (int)m, (int)n, (int)k, pa, a0, (int)lda, b0, (int)ldb,
                             pb, c0, (int)ldc);
            break;
        case E_SGEMM64:
            st = cublasSgemm_64(h, ta, tb, m, n, k, pa, a0, lda, b0, ldb, pb, c0, ldc);
            break;
        case E_GEMMEX:
        case E_GEMMEX_LEGACY:
            st = cublasGemmEx(h, ta, tb, (int)m, (int)n, (int)k, pa, a0, CUDA_R_32F, (int)lda,
                              b0, CUDA_R_32F, (int)ldb, pb, c0, CUDA_R_32F, (int)ldc,
                              e == E_GEMMEX ? CUBLAS_COMPUTE_32F
                                            : (cublasComputeType_t)CUDA_R_32F,
                              CUBLAS_GEMM_DEFAULT);
            break;
        case E_SGEMM_SB:
            st = cublasSgemmStridedBatched(h, ta, tb, (int)m, (int)n, (int)k, pa, a0, (int)lda,
                                           sa, b0, (int)ldb, sb, pb, c0, (int)ldc, sc,
                                           (int)batch);
            break;
        case E_SGEMM_SB64:
            st = cublasSgemmStridedBatched_64(h, ta, tb, m, n, k, pa, a0, lda, sa, b0, ldb, sb,
                                              pb, c0, ldc, sc, batch);
            break;
        case E_GEMMEX_SB:
            st = cublasGemmStridedBatchedEx(h, ta, tb, (int)m, (int)n, (int)k, pa, a0,
                                            CUDA_R_32F, (int)lda, sa, b0, CUDA_R_32F, (int)ldb,
                                            sb, pb, c0, CUDA_R_32F, (int)ldc, sc, (int)batch,
                                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            break;
        default: break;
        }
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaMemcpy(hOut, C, sizeof(float) * nc, cudaMemcpyDeviceToHost));

        double err = 0.0;
        int pad_ok = 1;
        for (int64_t b = 0; b < batch; ++b) {
            double *rc = dC + off + b * sc;
            gu_ref_gemm(tA, tB, m, n, k, alpha, dA + off + b * sa, lda, dB + off + b * sb, ldb,
                        beta, rc, ldc);
            for (int64_t i = 0; i < ldc * n; ++i)
                dOut[i] = hOut[off + b * sc + i];
            double eb = gu_rel_err(rc, ldc, dOut, ldc, m, n);
            err = eb > err ? eb : err;
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = m; i < ldc; ++i)
                    pad_ok &= hOut[off + b * sc + i + j * ldc] == PAD_SENTINEL;
        }
        int ok = st == CUBLAS_STATUS_SUCCESS && err <= TOL && pad_ok;
        worst = err > worst ? err : worst;
        if (ok)
            ++passed;
        else {
            ++failed;
            printf("FAIL case %d: %s %c%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld "
                   "batch=%lld off=%lld alpha=%g beta=%g %s: status=%d err=%.3g pad=%s\n",
                   c, entry_names[e], "NTC"[ta], "NTC"[tb], (long long)m, (long long)n,
                   (long long)k, (long long)lda, (long long)ldb, (long long)ldc,
                   (long long)batch, (long long)off, alpha, beta, dev_mode ? "device" : "host",
                   (int)st, err, pad_ok ? "ok" : "CLOBBERED");
        }
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
        free(hA); free(hB); free(hC); free(hOut);
        free(dA); free(dB); free(dC); free(dOut);
    }
    printf("test_sgemm_sweep: worst relative error %.3g (tolerance %.0e)\n", worst, TOL);

    const char *dk = getenv("GEMMSHIM_SWEEP_DEEPK");
    int deep = dk ? atoi(dk) : cases ? DEEPK_DEFAULT : 0, deep_split = 0;
    double deep_worst = 0.0, deep_worst_cublas = 0.0, deep_ratio = 0.0;
    for (int c = 0; c < deep; ++c) {
        int split = 0;
        double e = 0.0, ec = 0.0;
        if (deep_case(h, stream, d_scalars, c, max_dim, &split, &e, &ec))
            ++passed;
        else
            ++failed;
        deep_split += split;
        deep_worst = e > deep_worst ? e : deep_worst;
        deep_worst_cublas = ec > deep_worst_cublas ? ec : deep_worst_cublas;
        if (ec > 0.0 && e / ec > deep_ratio)
            deep_ratio = e / ec;
    }
    if (deep)
        printf("test_sgemm_sweep: deep-K %d cases, %d served by a split-K kernel; worst error "
               "%.3g (cuBLAS's worst %.3g, worst ratio ours/cuBLAS %.2f)\n",
               deep, deep_split, deep_worst, deep_worst_cublas, deep_ratio);
    printf("%d passed, %d failed\n", passed, failed);
    cudaFree(d_scalars);
    cublasDestroy(h);
    return failed ? 1 : 0;
}
