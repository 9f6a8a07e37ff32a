/* GEMM calls that set every field of a call's class in another way than
 * sample_calls does, for the offline tuner's round trip
 * (tests/bats/67-tune-from.bats): the _64 entry points, math modes and
 * their flag bits, an SM count target, device scalars, a host beta that is
 * neither 0 nor 1, pointers aligned to 2 and 16 bytes, padded leading
 * dimensions, broadcast batch strides; and a pointer-array batch, which
 * the replay skips. Linked to the fake cuBLAS; pointers are made-up device
 * addresses (nothing runs on a simulated device).
 *
 * Exits 0 when every call returned the fake's status. */
#include <cublas_api.h>

#include <stdint.h>
#include <stdio.h>

#define DEV(addr) ((void *)(uintptr_t)(addr))

static int failures;

static void expect(const char *what, cublasStatus_t got)
{
    if (got != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "variety: %s returned %d\n", what, (int)got);
        ++failures;
    }
}

int main(void)
{
    const float one = 1.f, zero = 0.f, half = 0.5f;
    cublasHandle_t h;
    if (cublasCreate_v2(&h) != CUBLAS_STATUS_SUCCESS)
        return 1;
    /* TF32 by the math mode, through the 64-bit entry point */
    expect("cublasSetMathMode", cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
    expect("Sgemm_v2_64 TT", cublasSgemm_v2_64(h, CUBLAS_OP_T, CUBLAS_OP_T, 300, 200, 100, &one,
                                               DEV(0x7f1000000000), 100, DEV(0x7f2000000000),
                                               200, &half, DEV(0x7f3000000000), 304));
    /* pedantic, no reduced-precision reduction, an SM count target */
    expect("cublasSetMathMode",
           cublasSetMathMode(h, (cublasMath_t)(CUBLAS_PEDANTIC_MATH |
                                               CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    expect("cublasSetSmCountTarget", cublasSetSmCountTarget(h, 66));
    expect("Sgemm pedantic", cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 96, 80, 64, &one,
                                            DEV(0x7f1000000000), 96, DEV(0x7f2000000000), 64,
                                            &one, DEV(0x7f3000000000), 96));
    expect("GemmEx_64 fp16 NT fast 16F",
           cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_T, 4096, 16, 4096, &one,
                           DEV(0x7f1000000000), CUDA_R_16F, 4096, DEV(0x7f2000000000),
                           CUDA_R_16F, 16, &zero, DEV(0x7f3000000000), CUDA_R_16F, 4096,
                           CUBLAS_COMPUTE_32F_FAST_16F, CUBLAS_GEMM_DEFAULT));
    expect("cublasSetSmCountTarget", cublasSetSmCountTarget(h, 0));
    expect("cublasSetMathMode", cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    /* scalars in device memory, A at 2 bytes, B at 16, an fp32 output */
    expect("cublasSetPointerMode", cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE));
    expect("GemmEx bf16->f32 device scalars",
           cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 50257, 8, 768, DEV(0x7f4000000000),
                        DEV(0x7f1000000002), CUDA_R_16BF, 800, DEV(0x7f2000000010), CUDA_R_16BF,
                        776, DEV(0x7f4000000100), DEV(0x7f3000000000), CUDA_R_32F, 50264,
                        CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT));
    expect("cublasSetPointerMode", cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST));
    /* batched, the 64-bit entry point, fast 16BF, a padded A, B broadcast */
    expect("GemmStridedBatchedEx_64",
           cublasGemmStridedBatchedEx_64(h, CUBLAS_OP_T, CUBLAS_OP_N, 64, 128, 64, &one,
                                         DEV(0x7f1000000000), CUDA_R_16BF, 64, 64 * 64 + 64,
                                         DEV(0x7f2000000000), CUDA_R_16BF, 64, 0, &one,
                                         DEV(0x7f3000000000), CUDA_R_16BF, 64, 64 * 128, 12,
                                         CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_GEMM_DEFAULT));
    expect("SgemmStridedBatched_64 beta 0.5",
           cublasSgemmStridedBatched_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 32, 32, 32, &one,
                                        DEV(0x7f1000000000), 32, 1024, DEV(0x7f2000000000), 32,
                                        1024, &half, DEV(0x7f3000000000), 32, 1024, 3));
    /* pointer arrays: recorded, never tuned (the replay skips them) */
    expect("GemmBatchedEx",
           cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one,
                               (const void *const *)DEV(0x7f5000000000), CUDA_R_16F, 64,
                               (const void *const *)DEV(0x7f5000000100), CUDA_R_16F, 64, &zero,
                               (void *const *)DEV(0x7f5000000200), CUDA_R_16F, 64, 4,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    cublasDestroy_v2(h);
    printf("variety: %d unexpected statuses\n", failures);
    return failures ? 1 : 0;
}
