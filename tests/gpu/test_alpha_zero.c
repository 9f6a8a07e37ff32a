/* alpha == 0 through the BLAS entry points with *device* scalars. The BLAS
 * definition: at alpha == 0, A and B are not referenced, C = beta * C; cuBLAS
 * follows it with a host alpha (which the shim forwards). With a device
 * alpha, cuBLAS's answer depends on which of its kernels runs: some compute
 * 0 x the sum, so a NaN or Inf operand reaches C as NaN, some skip. Ours
 * depends on the family, and this test pins it: the skinny and SIMT kernels
 * skip A and B (C = beta * C); the pingpong tiles compute alpha x the sum, as
 * cuBLAS's tile kernels did at every non-split tile shape measured (dropping
 * the products there cost the short tiles 1-3%: bench/NOTES.md). A NaN is
 * planted in row 0 of op(A) and an Inf in column 3 of op(B) (column 0 when
 * n <= 3); each case runs through the shim (GEMMSHIM_POLICY=eligible: our
 * kernels wherever eligible) and on the real cuBLAS, C set to the same
 * random values before each. The statuses must agree; every element of the
 * shim's C must be beta * C exactly (beta is 0 or 1), except, for a
 * pingpong route, NaN in exactly that row and column. cuBLAS's NaN count is
 * printed, and whether the shim's C equals cuBLAS's. */
#include "gpu_util.h"

typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                   int, int, const float *, const float *, int, const float *,
                                   int, const float *, float *, int);
typedef cublasStatus_t (*gemm_sb_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                     int, int, const void *, const void *, cudaDataType, int,
                                     long long, const void *, cudaDataType, int, long long,
                                     const void *, void *, cudaDataType, int, long long, int,
                                     cublasComputeType_t, cublasGemmAlgo_t);
typedef int (*route_fn)(char *, size_t);

typedef struct zcase {
    const char *what;
    int entry; /* 0 GemmEx, 1 GemmStridedBatchedEx, 2 cublasSgemm_v2 */
    cudaDataType t;
    int ta;
    int m, n, k, batch;
    float beta;
} zcase_t;

#define T CUBLAS_OP_T
#define N CUBLAS_OP_N
static const zcase_t cases[] = {
    {"decode n=1", 0, CUDA_R_16BF, T, 4096, 1, 4096, 1, 0.f},
    {"decode n=16", 0, CUDA_R_16BF, T, 4096, 16, 4096, 1, 0.f},
    {"decode n=64 fp16", 0, CUDA_R_16F, T, 4096, 64, 2048, 1, 0.f},
    {"tile", 0, CUDA_R_16BF, T, 1024, 1024, 512, 1, 0.f},
    {"tile, beta 1", 0, CUDA_R_16BF, T, 1024, 1024, 512, 1, 1.f},
    {"tile NN fp16", 0, CUDA_R_16F, N, 2048, 512, 1024, 1, 0.f},
    {"deep k (split)", 0, CUDA_R_16BF, T, 256, 256, 65536, 1, 0.f},
    {"strided batched", 1, CUDA_R_16BF, T, 512, 512, 512, 4, 0.f},
    {"sgemm tile", 2, CUDA_R_32F, N, 1024, 1024, 512, 1, 0.f},
    {"sgemm skinny", 2, CUDA_R_32F, T, 4096, 8, 1024, 1, 0.f},
    {"sgemm deep k", 2, CUDA_R_32F, N, 128, 128, 32768, 1, 0.f},
};
#undef T
#undef N

static int is_nan(const void *p, size_t i, cudaDataType t)
{
    return isnan(gu_get(p, i, t));
}

int main(void)
{
    gpu_require_or_skip("test_alpha_zero");
    gu_require_shim();
    const route_fn last_route = (route_fn)dlsym(RTLD_DEFAULT, "gemmshim_last_route");
    gemmex_fn real_ex = (gemmex_fn)gu_real_cublas_sym("cublasGemmEx");
    gemm_sb_fn real_sb = (gemm_sb_fn)gu_real_cublas_sym("cublasGemmStridedBatchedEx");
    sgemm_fn real_s = (sgemm_fn)gu_real_cublas_sym("cublasSgemm_v2");
    cublasHandle_t h;
    CUBLAS_OK(cublasCreate(&h));
    float *d_scalars;
    CUDA_OK(cudaMalloc((void **)&d_scalars, 2 * sizeof(float)));
    printf("test_alpha_zero: seed %llu\n", (unsigned long long)gu_seed_init());
    int passed = 0, failed = 0;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        const zcase_t *x = &cases[ci];
        const size_t es = gu_esize(x->t), b = (size_t)x->batch;
        const int lda = x->ta == CUBLAS_OP_T ? x->k : x->m, ldb = x->k, ldc = x->m;
        const size_t na = (size_t)x->m * x->k, nb = (size_t)x->k * x->n, nc = (size_t)x->m * x->n;
        void *hA = malloc(na * b * es), *hB = malloc(nb * b * es), *hC = malloc(nc * b * es);
        void *out[2] = {malloc(nc * b * es), malloc(nc * b * es)};
        gu_fill_random(hA, na * b, x->t);
        gu_fill_random(hB, nb * b, x->t);
        gu_fill_random(hC, nc * b, x->t);
        for (size_t q = 0; q < b; ++q) {
            /* row 0 of op(A): A[0][5] (N: column 5 of row 0; T: element 5 of column 0) */
            gu_put(hA, q * na + (x->ta == CUBLAS_OP_T ? 5 : 5 * (size_t)lda), x->t, NAN);
            gu_put(hB, q * nb + (x->n > 3 ? 3 : 0) * (size_t)ldb + 7, x->t, INFINITY);
        }
        void *A, *B, *C;
        CUDA_OK(cudaMalloc(&A, na * b * es));
        CUDA_OK(cudaMalloc(&B, nb * b * es));
        CUDA_OK(cudaMalloc(&C, nc * b * es));
        CUDA_OK(cudaMemcpy(A, hA, na * b * es, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(B, hB, nb * b * es, cudaMemcpyHostToDevice));
        const float scalars[2] = {0.0f, x->beta};
        CUDA_OK(cudaMemcpy(d_scalars, scalars, sizeof scalars, cudaMemcpyHostToDevice));
        CUBLAS_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
        cublasStatus_t st[2];
        char route[96] = "?";
        for (int side = 0; side < 2; ++side) { /* 0: the shim, 1: cuBLAS */
            CUDA_OK(cudaMemcpy(C, hC, nc * b * es, cudaMemcpyHostToDevice));
            const cublasOperation_t ta = (cublasOperation_t)x->ta, tb = CUBLAS_OP_N;
            if (x->entry == 0)
                st[side] = (side ? real_ex : (gemmex_fn)cublasGemmEx)(
                    h, ta, tb, x->m, x->n, x->k, d_scalars, A, x->t, lda, B, x->t, ldb,
                    d_scalars + 1, C, x->t, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            else if (x->entry == 1)
                st[side] = (side ? real_sb : (gemm_sb_fn)cublasGemmStridedBatchedEx)(
                    h, ta, tb, x->m, x->n, x->k, d_scalars, A, x->t, lda, (long long)na, B,
                    x->t, ldb, (long long)nb, d_scalars + 1, C, x->t, ldc, (long long)nc,
                    x->batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            else
                st[side] = (side ? real_s : (sgemm_fn)cublasSgemm_v2)(
                    h, ta, tb, x->m, x->n, x->k, d_scalars, A, lda, B, ldb, d_scalars + 1, C, ldc);
            CUDA_OK(cudaDeviceSynchronize());
            if (!side && last_route)
                last_route(route, sizeof route);
            CUDA_OK(cudaMemcpy(out[side], C, nc * b * es, cudaMemcpyDeviceToHost));
        }
        CUBLAS_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
        const int computes = !strncmp(route, "pingpong", 8); /* alpha x the sum */
        const size_t inf_col = x->n > 3 ? 3 : 0;
        size_t off = 0, theirs_nan = 0, as_cublas = 0, first_off = (size_t)-1;
        for (size_t i = 0; i < nc * b; ++i) {
            const size_t e = i % nc, row = e % (size_t)ldc, col = e / (size_t)ldc;
            const int n0 = is_nan(out[0], i, x->t), n1 = is_nan(out[1], i, x->t);
            theirs_nan += n1;
            as_cublas += n0 == n1 && (n0 || gu_get(out[0], i, x->t) == gu_get(out[1], i, x->t));
            const int want_nan = computes && (row == 0 || col == inf_col);
            const double want = x->beta == 0.f ? 0.0 : gu_get(hC, i, x->t); /* beta is 0 or 1 */
            const int differ = want_nan ? !n0 : (n0 || gu_get(out[0], i, x->t) != want);
            off += differ;
            if (differ && first_off == (size_t)-1)
                first_off = i;
        }
        const int bad = st[0] != st[1] || off;
        printf("%s: alpha 0 (device), %s, %s %s m=%d n=%d k=%d batch=%d beta=%g, route %s (%s): "
               "status %d/%d, elements off that %zu; cuBLAS's NaN %zu, the shim's C %s cuBLAS's",
               bad ? "FAIL" : "ok", x->what, x->entry == 2 ? "Sgemm" : x->entry ? "GemmSBEx" : "GemmEx",
               x->ta == CUBLAS_OP_T ? "TN" : "NN", x->m, x->n, x->k, x->batch, (double)x->beta, route,
               computes ? "alpha x the sum" : "beta x C", (int)st[0], (int)st[1], off, theirs_nan,
               as_cublas == nc * b ? "equals" : "differs from");
        if (off)
            printf(" (first at %zu: ours %g, cuBLAS %g)", first_off, gu_get(out[0], first_off, x->t),
                   gu_get(out[1], first_off, x->t));
        printf("\n");
        passed += !bad;
        failed += bad;
        cudaFree(A), cudaFree(B), cudaFree(C);
        free(hA), free(hB), free(hC), free(out[0]), free(out[1]);
    }
    printf("test_alpha_zero: %d passed, %d failed\n", passed, failed);
    cudaFree(d_scalars);
    cublasDestroy(h);
    return failed ? 1 : 0;
}
