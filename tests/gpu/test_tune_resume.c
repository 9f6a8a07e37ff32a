/* The LM head of the Llama prefill workload (bf16 TN m=128256 n=4096
 * k=4096, one call per forward), issued CALLS times in this process, for
 * online tuning that resumes across processes (run_gpu_test.sh
 * tune_resume; docs/TUNING.md, "Online tuning").
 *
 *   test_tune_resume CALLS
 *
 * Under the shim with GEMMSHIM_TUNE=online: prints "test_tune_resume:
 * CALLS calls, decided at call D" where D is the first call a tuned
 * decision served (0: none did). Exit 77 without a GPU, 1 on an error. */
#include "gpu_util.h"

#include "gemmshim.h"

enum { M = 128256, N = 4096, K = 4096 };

static void fill(void *d, size_t n, const uint16_t *h, size_t tile)
{
    for (size_t off = 0; off < n; off += tile) {
        const size_t len = n - off < tile ? n - off : tile;
        CUDA_OK(cudaMemcpy((uint16_t *)d + off, h, 2 * len, cudaMemcpyHostToDevice));
    }
}

int main(int argc, char **argv)
{
    gpu_require_or_skip("test_tune_resume");
    const long calls = argc > 1 ? atol(argv[1]) : 27;
    if (calls < 1) {
        fprintf(stderr, "usage: test_tune_resume CALLS\n");
        return 2;
    }
    /* the shim's, where it is preloaded */
    gemmshim_tuning_t (*last)(void) =
        (gemmshim_tuning_t(*)(void))dlsym(RTLD_DEFAULT, "gemmshim_last_tuning");
    void *A, *B, *C;
    CUDA_OK(cudaMalloc(&A, (size_t)M * K * 2));
    CUDA_OK(cudaMalloc(&B, (size_t)K * N * 2));
    CUDA_OK(cudaMalloc(&C, (size_t)M * N * 2));
    /* random values, one tile repeated (a 1 GB operand filled in a moment);
     * the candidates' results are compared with cuBLAS's */
    const size_t tile = 1 << 20;
    uint16_t *h = malloc(tile * 2);
    if (!h)
        return 1;
    gu_fill_random(h, tile, CUDA_R_16BF);
    fill(A, (size_t)M * K, h, tile);
    fill(B, (size_t)K * N, h, tile);
    cublasHandle_t hd;
    CUBLAS_OK(cublasCreate(&hd));
    const float one = 1.0f, zero = 0.0f;
    long decided = 0;
    for (long i = 1; i <= calls; ++i) {
        /* TN as PyTorch issues a Linear: C (m x n) = W^T (k x m)^T * X (k x n) */
        CUBLAS_OK(cublasGemmEx(hd, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &one, A, CUDA_R_16BF, K, B,
                               CUDA_R_16BF, K, &zero, C, CUDA_R_16BF, M, CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT));
        if (!decided && last && last() == GEMMSHIM_TUNING_DECIDED)
            decided = i;
    }
    CUDA_OK(cudaDeviceSynchronize());
    printf("test_tune_resume: %ld calls, decided at call %ld\n", calls, decided);
    cublasDestroy(hd);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    free(h);
    return 0;
}
