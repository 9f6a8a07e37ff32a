/* A small, ordinary cuBLAS application: the shim's demo and end-to-end check.
 * It issues GEMMs of the kinds real applications issue, and, when it finds
 * itself running under the shim, also runs each one on the real cuBLAS
 * (looked up past the shim) and prints how far apart the two results are.
 * Exit status: 0 when every call returned the expected status and every
 * result is within tolerance of cuBLAS's.
 *   sample_app [rounds]   each GEMM issued `rounds` times (default 1; the
 *                         ab mode needs a few calls per signature) */
#include "../gpu/gpu_util.h"

typedef cublasStatus_t (*gemmex_sb_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                       int, int, int, const void *, const void *, cudaDataType,
                                       int, long long, const void *, cudaDataType, int,
                                       long long, const void *, void *, cudaDataType, int,
                                       long long, int, cublasComputeType_t, cublasGemmAlgo_t);

typedef struct job {
    const char *what;
    cublasOperation_t ta, tb;
    int m, n, k, batch;
    cudaDataType ab, c;
    cublasComputeType_t compute;
    cublasMath_t math;
    double tol; /* relative to cuBLAS's result */
} job_t;

static const job_t jobs[] = {
    {"fp32 NN", CUBLAS_OP_N, CUBLAS_OP_N, 1024, 1024, 1024, 1, CUDA_R_32F, CUDA_R_32F,
     CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH, 1e-5},
    {"fp32 TN", CUBLAS_OP_T, CUBLAS_OP_N, 2048, 2048, 2048, 1, CUDA_R_32F, CUDA_R_32F,
     CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH, 1e-5},
    {"fp32 NT odd", CUBLAS_OP_N, CUBLAS_OP_T, 1000, 777, 513, 1, CUDA_R_32F, CUDA_R_32F,
     CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH, 1e-5},
    {"fp32 batched", CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, 8, CUDA_R_32F, CUDA_R_32F,
     CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH, 1e-5},
    {"fp32 TF32 math", CUBLAS_OP_N, CUBLAS_OP_N, 1024, 1024, 1024, 1, CUDA_R_32F, CUDA_R_32F,
     CUBLAS_COMPUTE_32F, CUBLAS_TF32_TENSOR_OP_MATH, 1e-5},
    {"bf16 TN (nn.Linear)", CUBLAS_OP_T, CUBLAS_OP_N, 4096, 4096, 4096, 1, CUDA_R_16BF,
     CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH, 1e-2},
    {"bf16 NN fp32 out", CUBLAS_OP_N, CUBLAS_OP_N, 4096, 2048, 4096, 1, CUDA_R_16BF,
     CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH, 1e-2},
    {"fp16 NT batched", CUBLAS_OP_N, CUBLAS_OP_T, 1024, 512, 768, 4, CUDA_R_16F, CUDA_R_16F,
     CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH, 1e-2},
};

static cublasStatus_t run(gemmex_fn ex, gemmex_sb_fn sb, cublasHandle_t h, const job_t *j,
                          const void *A, const void *B, void *C, long long sa, long long sb_,
                          long long sc)
{
    const float alpha = 1.0f, beta = 0.0f;
    int lda = j->ta == CUBLAS_OP_N ? j->m : j->k, ldb = j->tb == CUBLAS_OP_N ? j->k : j->n;
    if (j->batch == 1)
        return ex(h, j->ta, j->tb, j->m, j->n, j->k, &alpha, A, j->ab, lda, B, j->ab, ldb, &beta,
                  C, j->c, j->m, j->compute, CUBLAS_GEMM_DEFAULT);
    return sb(h, j->ta, j->tb, j->m, j->n, j->k, &alpha, A, j->ab, lda, sa, B, j->ab, ldb, sb_,
              &beta, C, j->c, j->m, sc, j->batch, j->compute, CUBLAS_GEMM_DEFAULT);
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 1;
    gpu_require_or_skip("sample_app");
    gu_seed(gu_seed_from_env());
    int shim = gu_shim_present();
    printf("sample_app: %s\n", shim ? "running under gemmshim; comparing each call with the "
                                      "real cuBLAS" : "running on plain cuBLAS");
    cublasHandle_t h;
    CUBLAS_OK(cublasCreate(&h));
    gemmex_fn ours = (gemmex_fn)cublasGemmEx, real = (gemmex_fn)gu_real_cublas_sym("cublasGemmEx");
    gemmex_sb_fn ours_sb = (gemmex_sb_fn)cublasGemmStridedBatchedEx,
                 real_sb = (gemmex_sb_fn)gu_real_cublas_sym("cublasGemmStridedBatchedEx");
    int failed = 0;
    for (size_t ji = 0; ji < sizeof jobs / sizeof jobs[0]; ++ji) {
        const job_t *j = &jobs[ji];
        CUBLAS_OK(cublasSetMathMode(h, j->math));
        long long sa = (long long)j->m * j->k, sb = (long long)j->k * j->n,
                  sc = (long long)j->m * j->n;
        size_t na = sa * j->batch, nb = sb * j->batch, nc = sc * j->batch;
        void *hA = malloc(na * gu_esize(j->ab)), *hB = malloc(nb * gu_esize(j->ab)),
             *h1 = malloc(nc * gu_esize(j->c)), *h2 = malloc(nc * gu_esize(j->c));
        gu_fill_random(hA, na, j->ab);
        gu_fill_random(hB, nb, j->ab);
        void *A, *B, *C;
        CUDA_OK(cudaMalloc(&A, na * gu_esize(j->ab)));
        CUDA_OK(cudaMalloc(&B, nb * gu_esize(j->ab)));
        CUDA_OK(cudaMalloc(&C, nc * gu_esize(j->c)));
        CUDA_OK(cudaMemcpy(A, hA, na * gu_esize(j->ab), cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(B, hB, nb * gu_esize(j->ab), cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemset(C, 0xff, nc * gu_esize(j->c))); /* NaN: beta == 0 must not read it */
        cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
        for (int r = 0; r < rounds && st == CUBLAS_STATUS_SUCCESS; ++r) /* beta = 0: the same C */
            st = run(ours, ours_sb, h, j, A, B, C, sa, sb, sc);
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaMemcpy(h1, C, nc * gu_esize(j->c), cudaMemcpyDeviceToHost));
        double diff = 0.0;
        if (shim) {
            CUDA_OK(cudaMemset(C, 0xff, nc * gu_esize(j->c)));
            CUBLAS_OK(run(real, real_sb, h, j, A, B, C, sa, sb, sc));
            CUDA_OK(cudaDeviceSynchronize());
            CUDA_OK(cudaMemcpy(h2, C, nc * gu_esize(j->c), cudaMemcpyDeviceToHost));
            diff = gu_rel_diff(h1, h2, nc, j->c);
        }
        int ok = st == CUBLAS_STATUS_SUCCESS && diff <= j->tol;
        failed += !ok;
        printf("  %-22s m=%-5d n=%-5d k=%-5d batch=%d  status=%d  rel. diff vs cuBLAS %.2e  %s\n",
               j->what, j->m, j->n, j->k, j->batch, (int)st, diff, ok ? "ok" : "FAIL");
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
        free(hA); free(hB); free(h1); free(h2);
    }
    /* a bad call: cuBLAS's status, nothing written */
    float one = 1.f, *C;
    CUDA_OK(cudaMalloc((void **)&C, 64 * sizeof(float)));
    cublasStatus_t bad = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, C, 4, C, 8,
                                     &one, C, 8);
    int bad_ok = bad == CUBLAS_STATUS_INVALID_VALUE;
    failed += !bad_ok;
    printf("  %-22s lda=4 < m=8: status=%d (expected %d)  %s\n", "invalid call", (int)bad,
           (int)CUBLAS_STATUS_INVALID_VALUE, bad_ok ? "ok" : "FAIL");
    cudaFree(C);
    cublasDestroy(h);
    printf("sample_app: %s\n", failed ? "FAILED" : "all calls ok");
    return failed ? 1 : 0;
}
