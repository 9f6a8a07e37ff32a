/* cublasLtMatmul calls the way applications build them (descriptors and
 * layouts from the fake cuBLASLt), for the routing suite: one call per
 * scenario named on the command line, or all of them. Pointers are made-up
 * values: on a simulated device (GEMMSHIM_TEST_DEVICE) nothing is launched. */
#include <cublasLt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CHECK_ST(x)                                                        \
    do {                                                                   \
        cublasStatus_t st_ = (x);                                          \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                \
            fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)st_); \
            return 1;                                                      \
        }                                                                  \
    } while (0)

static const float one = 1.0f, zero = 0.0f;

typedef struct scenario {
    const char *name;
    cudaDataType ab, cd;
    cublasComputeType_t compute;
    int ta, tb;
    uint32_t epilogue;
    int32_t pointer_mode;
    int32_t order_d;      /* CUBLASLT_ORDER_COL, or ROW */
    int separate_c;       /* C != D */
    const float *beta;
    int a_scale;          /* set CUBLASLT_MATMUL_DESC_A_SCALE_POINTER */
    int batch;
    int64_t bias_stride;
    int m, n, k;          /* 0: the default 1024 x 512 x 768 */
} scenario_t;

static const scenario_t scenarios[] = {
    /* name          ab          cd          compute                  ta tb epilogue pmode order sepC beta scale batch bstride */
    {"bf16-tn",      CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 0, CUBLASLT_EPILOGUE_DEFAULT, 0, CUBLASLT_ORDER_COL, 0, &zero, 0, 1, 0, 0, 0, 0},
    {"bf16-bias",    CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 0, CUBLASLT_EPILOGUE_BIAS, 0, CUBLASLT_ORDER_COL, 0, &zero, 0, 1, 0, 0, 0, 0},
    {"f32-nn",       CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 0, 0, CUBLASLT_EPILOGUE_DEFAULT, 0, CUBLASLT_ORDER_COL, 0, &one, 0, 1, 0, 0, 0, 0},
    {"relu",         CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 0, CUBLASLT_EPILOGUE_RELU, 0, CUBLASLT_ORDER_COL, 0, &zero, 0, 1, 0, 0, 0, 0},
    {"vector-alpha", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 0, CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_POINTER_MODE_DEVICE_VECTOR, CUBLASLT_ORDER_COL, 0, &zero, 0, 1, 0, 0, 0, 0},
    {"row-major",    CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 0, CUBLASLT_EPILOGUE_DEFAULT, 0, CUBLASLT_ORDER_ROW, 0, &zero, 0, 1, 0, 0, 0, 0},
    {"c-not-d-beta", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 0, CUBLASLT_EPILOGUE_DEFAULT, 0, CUBLASLT_ORDER_COL, 1, &one, 0, 1, 0, 0, 0, 0},
    {"c-not-d-zero", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 0, CUBLASLT_EPILOGUE_DEFAULT, 0, CUBLASLT_ORDER_COL, 1, &zero, 0, 1, 0, 0, 0, 0},
    {"a-scale",      CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 0, CUBLASLT_EPILOGUE_DEFAULT, 0, CUBLASLT_ORDER_COL, 0, &zero, 1, 1, 0, 0, 0, 0},
    {"tf32",         CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 0, 0, CUBLASLT_EPILOGUE_DEFAULT, 0, CUBLASLT_ORDER_COL, 0, &zero, 0, 1, 0, 0, 0, 0},
    {"batched-bias", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 0, CUBLASLT_EPILOGUE_BIAS, 0, CUBLASLT_ORDER_COL, 0, &zero, 0, 3, 1024, 0, 0, 0},
    {"deep-k",       CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 0, CUBLASLT_EPILOGUE_DEFAULT, 0, CUBLASLT_ORDER_COL, 0, &zero, 0, 1, 0, 256, 256, 65536},
};

static int run(const scenario_t *s, cublasLtHandle_t lt)
{
    const uint64_t M = s->m ? s->m : 1024, N = s->n ? s->n : 512, K = s->k ? s->k : 768;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc, ld;
    CHECK_ST(cublasLtMatmulDescCreate(&desc, s->compute, CUDA_R_32F));
    int32_t ta = s->ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    CHECK_ST(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CHECK_ST(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    CHECK_ST(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &s->epilogue,
                                            sizeof s->epilogue));
    CHECK_ST(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE,
                                            &s->pointer_mode, sizeof s->pointer_mode));
    if (s->epilogue & CUBLASLT_EPILOGUE_BIAS) {
        const void *bias = (const void *)(uintptr_t)0x7000000;
        CHECK_ST(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                sizeof bias));
        CHECK_ST(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE,
                                                &s->bias_stride, sizeof s->bias_stride));
    }
    if (s->a_scale) {
        const void *scale = (const void *)(uintptr_t)0x7100000;
        CHECK_ST(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                &scale, sizeof scale));
    }
    /* nn.Linear's forward: A = W stored k x m (transa = T), B = x k x n */
    CHECK_ST(cublasLtMatrixLayoutCreate(&la, s->ab, s->ta ? K : M, s->ta ? M : K, s->ta ? K : M));
    CHECK_ST(cublasLtMatrixLayoutCreate(&lb, s->ab, s->tb ? N : K, s->tb ? K : N, s->tb ? N : K));
    CHECK_ST(cublasLtMatrixLayoutCreate(&lc, s->cd, M, N, M));
    CHECK_ST(cublasLtMatrixLayoutCreate(&ld, s->cd, M, N, M));
    CHECK_ST(cublasLtMatrixLayoutSetAttribute(ld, CUBLASLT_MATRIX_LAYOUT_ORDER, &s->order_d,
                                              sizeof s->order_d));
    cublasLtMatrixLayout_t all[4] = {la, lb, lc, ld};
    int64_t strides[4] = {(int64_t)(M * K), (int64_t)(K * N), (int64_t)(M * N), (int64_t)(M * N)};
    for (int i = 0; i < 4 && s->batch > 1; ++i) {
        int32_t b = s->batch;
        CHECK_ST(cublasLtMatrixLayoutSetAttribute(all[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b,
                                                  sizeof b));
        CHECK_ST(cublasLtMatrixLayoutSetAttribute(
            all[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i], sizeof strides[i]));
    }
    void *A = (void *)(uintptr_t)0x1000000, *B = (void *)(uintptr_t)0x2000000;
    void *D = (void *)(uintptr_t)0x3000000;
    void *C = s->separate_c ? (void *)(uintptr_t)0x4000000 : D;
    cublasStatus_t st = cublasLtMatmul(lt, desc, &one, A, la, B, lb, s->beta, C, lc, D, ld, NULL,
                                       NULL, 0, 0);
    printf("%s: status %d\n", s->name, (int)st);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(desc);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : 1;
}

int main(int argc, char **argv)
{
    cublasLtHandle_t lt;
    CHECK_ST(cublasLtCreate(&lt));
    int fails = 0, ran = 0;
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; ++i) {
        if (argc > 1 && strcmp(argv[1], scenarios[i].name))
            continue;
        fails += run(&scenarios[i], lt);
        ++ran;
    }
    cublasLtDestroy(lt);
    if (!ran) {
        fprintf(stderr, "no scenario named %s\n", argc > 1 ? argv[1] : "?");
        return 2;
    }
    return fails ? 1 : 0;
}
