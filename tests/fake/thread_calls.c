/* Many threads issuing GEMMs through the shim at once, for the load and
 * ThreadSanitizer tests (tests/bats/25-threads.bats).
 *
 *   thread_calls [threads] [rounds] [shared]
 *
 * `threads` workers (default 16) each create their own handle; `shared`
 * more (default 4) share one handle that main created and none of them
 * changes (cuBLAS allows that). Every worker issues `rounds` rounds
 * (default 50) of a mixed set: calls the shim routes on a simulated H100
 * (GEMMSHIM_TEST_DEVICE=sm_90:132 with GEMMSHIM_POLICY=eligible; they cannot
 * launch without a GPU and fall back), calls it forwards, and a bad call.
 * Device pointers are dummies. Every call must return the fake's status,
 * and the fake must record each call exactly once (the test counts).
 * Prints "thread_calls: N calls, M unexpected statuses"; exits 0 only if
 * every status was as expected. */
#include <cublas_api.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define DEV(addr) ((void *)(uintptr_t)(addr))

typedef struct worker {
    cublasHandle_t handle; /* NULL: create one of its own */
    int rounds, id;
    int calls, failures;
} worker_t;

static void expect(worker_t *w, const char *what, cublasStatus_t got)
{
    ++w->calls;
    if (got != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "thread_calls: worker %d: %s returned %d\n", w->id, what, (int)got);
        ++w->failures;
    }
}

static void *work(void *arg)
{
    worker_t *w = arg;
    const float one = 1.f, zero = 0.f;
    cublasHandle_t h = w->handle;
    if (!h && cublasCreate_v2(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "thread_calls: worker %d: cublasCreate_v2 failed\n", w->id);
        ++w->failures;
        return NULL;
    }
    for (int r = 0; r < w->rounds; ++r) {
        /* sizes vary with the worker and round, so signatures are new to
         * the decision cache while other threads fill it */
        const int m = 256 + 64 * ((w->id + r) % 4), k = 128 << (r % 3);
        expect(w, "Sgemm NN",
               cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, m, 256, k, &one, DEV(0x7f1000000000),
                              m, DEV(0x7f2000000000), k, &zero, DEV(0x7f3000000000), m));
        expect(w, "GemmEx bf16 TN",
               cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, 512, k, &one, DEV(0x7f1000000000),
                            CUDA_R_16BF, k, DEV(0x7f2000000000), CUDA_R_16BF, k, &zero,
                            DEV(0x7f3000000000), CUDA_R_16BF, m, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
        /* fp16 with fp16 accumulation: no kernel of ours takes it */
        const uint16_t hone = 0x3c00, hzero = 0; /* fp16 1 and 0 */
        expect(w, "GemmEx f16 compute 16F",
               cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &hone, DEV(0x7f1000000000),
                            CUDA_R_16F, 64, DEV(0x7f2000000000), CUDA_R_16F, 64, &hzero,
                            DEV(0x7f3000000000), CUDA_R_16F, 64, CUBLAS_COMPUTE_16F,
                            CUBLAS_GEMM_DEFAULT));
        expect(w, "SgemmStridedBatched NT",
               cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, 64, 64, 32, &one,
                                         DEV(0x7f1000000000), 64, 64 * 32, DEV(0x7f2000000000),
                                         64, 64 * 32, &zero, DEV(0x7f3000000000), 64, 64 * 64,
                                         3));
        /* odd leading dimension: forwarded */
        expect(w, "Sgemm ld odd",
               cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 255, 255, 255, &one,
                              DEV(0x7f1000000000), 257, DEV(0x7f2000000000), 257, &zero,
                              DEV(0x7f3000000000), 257));
    }
    if (!w->handle)
        cublasDestroy_v2(h);
    return NULL;
}

int main(int argc, char **argv)
{
    const int own = argc > 1 ? atoi(argv[1]) : 16;
    const int rounds = argc > 2 ? atoi(argv[2]) : 50;
    const int shared = argc > 3 ? atoi(argv[3]) : 4;
    if (own < 0 || shared < 0 || own + shared < 1 || own + shared > 256 || rounds < 1) {
        fprintf(stderr, "usage: thread_calls [threads 0..256] [rounds >= 1] [shared]\n");
        return 2;
    }
    cublasHandle_t common = NULL;
    if (shared && cublasCreate_v2(&common) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "thread_calls: cublasCreate_v2 failed\n");
        return 1;
    }
    const int n = own + shared;
    worker_t *w = calloc((size_t)n, sizeof *w);
    pthread_t *t = calloc((size_t)n, sizeof *t);
    if (!w || !t)
        return 1;
    for (int i = 0; i < n; ++i) {
        w[i] = (worker_t){.handle = i < own ? NULL : common, .rounds = rounds, .id = i};
        if (pthread_create(&t[i], NULL, work, &w[i])) {
            fprintf(stderr, "thread_calls: pthread_create failed\n");
            return 1;
        }
    }
    int calls = 0, failures = 0;
    for (int i = 0; i < n; ++i) {
        pthread_join(t[i], NULL);
        calls += w[i].calls;
        failures += w[i].failures;
    }
    if (common)
        cublasDestroy_v2(common);
    free(w);
    free(t);
    printf("thread_calls: %d calls, %d unexpected statuses\n", calls, failures);
    return failures ? 1 : 0;
}
