/* Status-code parity with the real cuBLAS for bad (and edge) inputs: each
 * case is called through the shim and directly on the real library, with C
 * filled with fresh random values; the statuses must be equal, and where the
 * status is an error C must be bit-for-bit untouched by either. Results of
 * valid calls are the sweep's business (test_sgemm_sweep). */
#include "gpu_util.h"

typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                   int, int, const float *, const float *, int, const float *,
                                   int, const float *, float *, int);
typedef cublasStatus_t (*sgemm_sb_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                      int, int, const float *, const float *, int, long long,
                                      const float *, int, long long, const float *, float *,
                                      int, long long, int);

typedef struct args {
    const char *what;
    int null_handle;
    int ta, tb;
    int m, n, k, lda, ldb, ldc, batch;
    int null_alpha, null_beta;
    int atype, ctype, compute; /* GemmEx only */
} args_t;

#define N 64
#define BASE(w) {w, 0, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, N, N, N, 2, 0, 0, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F}

static args_t cases[64];
static int n_cases;

static args_t *add(const char *what)
{
    args_t base = BASE(what);
    cases[n_cases] = base;
    return &cases[n_cases++];
}

static void build_cases(void)
{
    add("m < 0")->m = -1;
    add("n < 0")->n = -1;
    add("k < 0")->k = -1;
    add("transa invalid")->ta = 7;
    add("transb invalid")->tb = 3;
    add("lda < m (N)")->lda = N - 1;
    { args_t *a = add("lda < k (T)"); a->ta = CUBLAS_OP_T; a->k = N + 5; a->lda = N + 4; a->ldb = N + 5; }
    add("ldb < k (N)")->ldb = N - 1;
    { args_t *a = add("ldb < n (T)"); a->tb = CUBLAS_OP_T; a->ldb = N - 1; }
    add("ldc < m")->ldc = N - 1;
    add("lda = 0")->lda = 0;
    add("batch < 0")->batch = -1;
    add("alpha NULL")->null_alpha = 1;
    add("beta NULL")->null_beta = 1;
    add("handle NULL")->null_handle = 1;
    add("unsupported Atype")->atype = CUDA_R_8I;
    add("bad compute type")->compute = 12345;
    { args_t *a = add("m = 0, lda = 0 (valid, quick return)"); a->m = 0; a->lda = 1; a->ldc = 1; }
    add("n = 0 (valid)")->n = 0;
    add("k = 0 (valid: C = beta*C)")->k = 0;
    add("batch = 0 (valid)")->batch = 0;
    add("all valid")->what = "valid";
}

int main(void)
{
    gpu_require_or_skip("test_status_parity");
    gu_require_shim();
    build_cases();
    cublasHandle_t h;
    CUBLAS_OK(cublasCreate(&h));
    sgemm_fn real_sgemm = (sgemm_fn)gu_real_cublas_sym("cublasSgemm_v2");
    gemmex_fn real_gemmex = (gemmex_fn)gu_real_cublas_sym("cublasGemmEx");
    sgemm_sb_fn real_sb = (sgemm_sb_fn)gu_real_cublas_sym("cublasSgemmStridedBatched");

    size_t ne = (size_t)(N + 8) * (N + 8) * 2 + 64;
    float *hbuf = malloc(ne * sizeof(float)), *hpoison = malloc(ne * sizeof(float));
    gu_seed(7);
    for (size_t i = 0; i < ne; ++i)
        hbuf[i] = (float)gu_uniform();
    float *A, *B, *C;
    CUDA_OK(cudaMalloc((void **)&A, ne * sizeof(float)));
    CUDA_OK(cudaMalloc((void **)&B, ne * sizeof(float)));
    CUDA_OK(cudaMalloc((void **)&C, ne * sizeof(float)));
    CUDA_OK(cudaMemcpy(A, hbuf, ne * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(B, hbuf, ne * sizeof(float), cudaMemcpyHostToDevice));
    float alpha = 1.5f, beta = 0.5f;

    int passed = 0, failed = 0;
    for (int ci = 0; ci < n_cases; ++ci) {
        const args_t *a = &cases[ci];
        for (int entry = 0; entry < 3; ++entry) {
            cublasStatus_t st[2];
            int untouched[2];
            float *outs[2] = {malloc(ne * sizeof(float)), malloc(ne * sizeof(float))};
            /* 0: through the shim, 1: real. cuBLAS 13 crashes on a NULL alpha or
             * beta (it dereferences them); the shim answers the documented
             * INVALID_VALUE, so for those cases only the shim side runs. */
            int sides = a->null_alpha || a->null_beta ? 1 : 2;
            st[1] = CUBLAS_STATUS_INVALID_VALUE;
            untouched[1] = 1;
            for (int side = 0; side < sides; ++side) {
                for (size_t i = 0; i < ne; ++i)
                    hpoison[i] = (float)gu_uniform();
                CUDA_OK(cudaMemcpy(C, hpoison, ne * sizeof(float), cudaMemcpyHostToDevice));
                cublasHandle_t hh = a->null_handle ? NULL : h;
                const float *pa = a->null_alpha ? NULL : &alpha, *pb = a->null_beta ? NULL : &beta;
                if (entry == 0)
                    st[side] = (side ? real_sgemm : (sgemm_fn)cublasSgemm_v2)(
                        hh, a->ta, a->tb, a->m, a->n, a->k, pa, A, a->lda, B, a->ldb, pb, C,
                        a->ldc);
                else if (entry == 1)
                    st[side] = (side ? real_gemmex : (gemmex_fn)cublasGemmEx)(
                        hh, a->ta, a->tb, a->m, a->n, a->k, pa, A, a->atype, a->lda, B,
                        a->atype, a->ldb, pb, C, a->ctype, a->ldc, a->compute,
                        CUBLAS_GEMM_DEFAULT);
                else
                    st[side] = (side ? real_sb : (sgemm_sb_fn)cublasSgemmStridedBatched)(
                        hh, a->ta, a->tb, a->m, a->n, a->k, pa, A, a->lda, 0, B, a->ldb, 0, pb,
                        C, a->ldc, (long long)(N + 8) * (N + 8), a->batch);
                CUDA_OK(cudaDeviceSynchronize());
                CUDA_OK(cudaMemcpy(outs[side], C, ne * sizeof(float), cudaMemcpyDeviceToHost));
                untouched[side] = !memcmp(outs[side], hpoison, ne * sizeof(float));
            }
            static const char *entries[3] = {"cublasSgemm_v2", "cublasGemmEx",
                                             "cublasSgemmStridedBatched"};
            int ok = st[0] == st[1];
            if (a->null_alpha || a->null_beta) /* see below: the real side is not called */
                ok = st[0] == CUBLAS_STATUS_INVALID_VALUE;
            if (st[1] != CUBLAS_STATUS_SUCCESS)
                ok &= untouched[0] && untouched[1];
            if (ok)
                ++passed;
            else
                ++failed;
            printf("%s %-26s %-40s shim=%d real=%d%s\n", ok ? "ok  " : "FAIL", entries[entry],
                   a->what, (int)st[0], (int)st[1],
                   st[1] != CUBLAS_STATUS_SUCCESS && !untouched[0] ? " (shim wrote C)" : "");
            free(outs[0]);
            free(outs[1]);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    cublasDestroy(h);
    return failed ? 1 : 0;
}
