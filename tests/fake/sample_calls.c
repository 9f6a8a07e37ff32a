/* A small application issuing GEMMs of different kinds, for the BATS
 * routing and log tests. Linked to the fake cuBLAS; device pointers are
 * dummies (nothing runs without a GPU: routed calls fail to launch and fall
 * back to the fake).
 *
 *   sample_calls [rounds]   issue the five calls `rounds` times (default 1)
 *   SAMPLE_ALPHA_ZERO=1     every call with alpha = 0
 *
 * Every call must return FAKE_CUBLAS_RETURN (the fake's status; default 0):
 * forwarded calls and fallbacks both end in the fake. The invalid call
 * (m = -1) is forwarded too, so it gets the fake's status: run with
 * FAKE_CUBLAS_RETURN=7 for cuBLAS's CUBLAS_STATUS_INVALID_VALUE.
 * Exits 0 only if every status was as expected. */
#include <cublas_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define DEV(addr) ((void *)(uintptr_t)(addr)) /* 256-byte aligned dummies */

static int failures, calls;

static void expect(const char *what, cublasStatus_t got, int want)
{
    ++calls;
    if ((int)got != want) {
        fprintf(stderr, "sample: %s returned %d, expected %d\n", what, (int)got, want);
        ++failures;
    }
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 1;
    const char *r = getenv("FAKE_CUBLAS_RETURN");
    const int want = r && *r ? atoi(r) : 0;
    const char *az = getenv("SAMPLE_ALPHA_ZERO");
    const float one = az && *az == '1' ? 0.f : 1.f, zero = 0.f; /* one: alpha */

    cublasHandle_t h;
    if (cublasCreate_v2(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "sample: cublasCreate_v2 failed\n");
        return 1;
    }
    for (int i = 0; i < rounds; ++i) {
        /* fp32 NN: what sgemm_simt takes */
        expect("Sgemm NN 256x256x256",
               cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one,
                              DEV(0x7f1000000000), 256, DEV(0x7f2000000000), 256, &zero,
                              DEV(0x7f3000000000), 256),
               want);
        /* bf16 TN, fp32 accumulation */
        expect("GemmEx bf16 TN 512x256x128",
               cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 512, 256, 128, &one,
                            DEV(0x7f1000000000), CUDA_R_16BF, 128, DEV(0x7f2000000000),
                            CUDA_R_16BF, 128, &zero, DEV(0x7f3000000000), CUDA_R_16BF, 512,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               want);
        /* fp32 allowed to use TF32 */
        expect("GemmEx f32 FAST_TF32 128x128x128",
               cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 128, 128, 128, &one,
                            DEV(0x7f1000000000), CUDA_R_32F, 128, DEV(0x7f2000000000),
                            CUDA_R_32F, 128, &zero, DEV(0x7f3000000000), CUDA_R_32F, 128,
                            CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
               want);
        /* strided batched fp32 */
        expect("SgemmStridedBatched NT 64x64x32 x4",
               cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, 64, 64, 32, &one,
                                         DEV(0x7f1000000000), 64, 64 * 32, DEV(0x7f2000000000),
                                         64, 64 * 32, &zero, DEV(0x7f3000000000), 64, 64 * 64,
                                         4),
               want);
        /* invalid: m = -1 (cuBLAS answers CUBLAS_STATUS_INVALID_VALUE) */
        expect("Sgemm m=-1",
               cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 16, 16, &one,
                              DEV(0x7f1000000000), 16, DEV(0x7f2000000000), 16, &zero,
                              DEV(0x7f3000000000), 16),
               want);
    }
    cublasDestroy_v2(h);
    printf("sample: %d calls, %d unexpected statuses\n", calls, failures);
    return failures ? 1 : 0;
}
