/* fp32 correctness sweep through the cuBLAS API, run under the shim:
 * >= 200 random cases (sizes 1..2048 with primes, every transpose incl. C,
 * padded and odd leading dimensions, misaligned base pointers, alpha/beta
 * incl. 0 and negative, host and device pointer mode, NaN-filled C with
 * beta == 0, Sgemm / GemmEx (new and legacy compute spelling) / both strided
 * batched forms / _64 forms) against an OpenBLAS fp64 reference.
 * Checks: relative Frobenius error <= 1e-5; the padding rows of C (between m
 * and ldc) untouched; no NaN leaked. Which route served the calls is checked
 * by the BATS wrapper from the shim's log. */
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

int main(void)
{
    gpu_require_or_skip("test_sgemm_sweep");
    uint64_t seed = gu_seed_from_env();
    gu_seed(seed);
    const char *cs = getenv("GEMMSHIM_SWEEP_CASES");
    int cases = cs ? atoi(cs) : CASES_DEFAULT;
    const char *md = getenv("GEMMSHIM_SWEEP_MAX_DIM");
    int64_t max_dim = md ? atoll(md) : 0;
    printf("test_sgemm_sweep: %d cases, GEMMSHIM_SEED=0x%llx, shim %s\n", cases,
           (unsigned long long)seed, gu_shim_present() ? "present" : "ABSENT");
    if (!gu_shim_present()) {
        printf("FAIL: run me with LD_PRELOAD=libgemmshim.so\n");
        return 1;
    }
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
        for (int64_t i = 0; i < na; ++i)
            dA[i] = hA[i] = (float)gu_uniform();
        for (int64_t i = 0; i < nb; ++i)
            dB[i] = hB[i] = (float)gu_uniform();
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
    printf("%d passed, %d failed\n", passed, failed);
    cudaFree(d_scalars);
    cublasDestroy(h);
    return failed ? 1 : 0;
}
