/* cublasLtMatmul calls the way applications build them (descriptors and
 * layouts from the fake cuBLASLt), for the routing suite: one call per
 * scenario named on the command line, or all of them. Pointers are made-up
 * values: on a simulated device (GEMMSHIM_TEST_DEVICE) nothing is launched.
 * Each call prints its arguments as the fake records them (the pointers'
 * bytes), so tests can tell the call reached the library unchanged. */
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

/* FP8 calls: a scenario's operand types replaced, scale pointers, modes,
 * AMAX_D and fast accumulation set. */
typedef struct fp8_scenario {
    const char *name;
    cudaDataType a, b, c, d;
    int scales;           /* bit i: the scale pointer of A, B, C, D */
    int32_t mode_a, mode_b;
    int8_t fast_accum;
    int amax_d;
    int separate_c;       /* C != D (beta 0: an FP8 D takes a 16-bit C elsewhere) */
    int m, n, k;          /* 0: bf16-tn's */
    int a_scale_offset;   /* bytes past a 16-byte aligned A scale pointer */
} fp8_scenario_t;

enum { SCALE_A = 1, SCALE_B = 2, SCALE_D = 8 };

static const fp8_scenario_t fp8_scenarios[] = {
    /* torch._scaled_mm, tensorwise, use_fast_accum=True */
    {"fp8-tensorwise", CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF, SCALE_A | SCALE_B,
     CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, 1, 0, 0,
     0, 0, 0, 0},
    /* torch._scaled_mm's rowwise backward: e5m2 gradients x e4m3 weights, exact accumulation */
    {"fp8-rowwise", CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF, SCALE_A | SCALE_B,
     CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, 0, 0, 0,
     0, 0, 0, 0},
    /* TransformerEngine's FP8 output: D e4m3 with its scale and AMAX_D, a bf16 C */
    {"fp8-out", CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_8F_E4M3,
     SCALE_A | SCALE_B | SCALE_D, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
     CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, 1, 1, 1, 0, 0, 0, 0},
    /* rowwise decode: Llama-3-8B's down projection, 16 tokens */
    {"fp8-decode-rowwise", CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF,
     SCALE_A | SCALE_B, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F,
     CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, 1, 0, 0, 4096, 16, 14336, 0},
    /* the same with A's scale vector 4 bytes off 16: cuBLASLt refuses it */
    {"fp8-decode-unaligned", CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF,
     SCALE_A | SCALE_B, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F,
     CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, 1, 0, 0, 4096, 16, 14336, 4},
};

/* One argument as the fake records it: " name=<its bytes in hex>". */
static void print_arg(const char *name, const void *p, size_t n)
{
    printf(" %s=", name);
    for (size_t i = 0; i < n; ++i)
        printf("%02x", ((const unsigned char *)p)[i]);
}

static int set_fp8(cublasLtMatmulDesc_t desc, const fp8_scenario_t *x)
{
    static const cublasLtMatmulDescAttributes_t pointers[4] = {
        CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
        CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER};
    for (int i = 0; i < 4; ++i) {
        const void *scale =
            (const void *)(uintptr_t)(0x7100000 + 0x100000 * i + (i == 0 ? x->a_scale_offset : 0));
        if (x->scales & 1 << i)
            CHECK_ST(cublasLtMatmulDescSetAttribute(desc, pointers[i], &scale, sizeof scale));
    }
    CHECK_ST(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &x->mode_a,
                                            sizeof x->mode_a));
    CHECK_ST(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &x->mode_b,
                                            sizeof x->mode_b));
    CHECK_ST(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &x->fast_accum,
                                            sizeof x->fast_accum));
    if (x->amax_d) {
        const void *amax = (const void *)(uintptr_t)0x7600000;
        CHECK_ST(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &amax,
                                                sizeof amax));
    }
    return 0;
}

static int run(const scenario_t *s, const fp8_scenario_t *x, cublasLtHandle_t lt)
{
    const uint64_t M = x && x->m ? x->m : s->m ? s->m : 1024,
                   N = x && x->n ? x->n : s->n ? s->n : 512, K = x && x->k ? x->k : s->k ? s->k : 768;
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
    if (x && set_fp8(desc, x))
        return 1;
    /* nn.Linear's forward: A = W stored k x m (transa = T), B = x k x n */
    const cudaDataType at = x ? x->a : s->ab, bt = x ? x->b : s->ab;
    const cudaDataType ct = x ? x->c : s->cd, dt = x ? x->d : s->cd;
    CHECK_ST(cublasLtMatrixLayoutCreate(&la, at, s->ta ? K : M, s->ta ? M : K, s->ta ? K : M));
    CHECK_ST(cublasLtMatrixLayoutCreate(&lb, bt, s->tb ? N : K, s->tb ? K : N, s->tb ? N : K));
    CHECK_ST(cublasLtMatrixLayoutCreate(&lc, ct, M, N, M));
    CHECK_ST(cublasLtMatrixLayoutCreate(&ld, dt, M, N, M));
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
    void *C = s->separate_c || (x && x->separate_c) ? (void *)(uintptr_t)0x4000000 : D;
    cublasStatus_t st = cublasLtMatmul(lt, desc, &one, A, la, B, lb, s->beta, C, lc, D, ld, NULL,
                                       NULL, 0, 0);
    printf("%s: status %d", x ? x->name : s->name, (int)st);
    print_arg("computeDesc", &desc, sizeof desc);
    print_arg("A", &A, sizeof A);
    print_arg("Adesc", &la, sizeof la);
    print_arg("B", &B, sizeof B);
    print_arg("Bdesc", &lb, sizeof lb);
    print_arg("C", &C, sizeof C);
    print_arg("Cdesc", &lc, sizeof lc);
    print_arg("D", &D, sizeof D);
    print_arg("Ddesc", &ld, sizeof ld);
    printf("\n");
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
        fails += run(&scenarios[i], NULL, lt);
        ++ran;
    }
    for (size_t i = 0; i < sizeof fp8_scenarios / sizeof fp8_scenarios[0]; ++i) {
        if (argc > 1 && strcmp(argv[1], fp8_scenarios[i].name))
            continue;
        fails += run(&scenarios[0], &fp8_scenarios[i], lt); /* bf16-tn's shape and descriptor */
        ++ran;
    }
    cublasLtDestroy(lt);
    if (!ran) {
        fprintf(stderr, "no scenario named %s\n", argc > 1 ? argv[1] : "?");
        return 2;
    }
    return fails ? 1 : 0;
}
