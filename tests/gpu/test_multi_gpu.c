/* Routed calls on several GPUs of one process (JAX on a multi-GPU host,
 * PyTorch's DataParallel, a server with a model per GPU). Run under the shim
 * with GEMMSHIM_POLICY=eligible. Needs at least two GPUs; skips (exit 77,
 * saying so) on one.
 * 1. One thread per GPU, at once: each sets its device, makes its own handle
 *    and stream, and runs one call of every kernel family (SIMT SGEMM,
 *    pingpong, the decode kernel, and the three that take the split-K
 *    workspace: pingpong split, SIMT stream-K, the decode kernel's split).
 * 2. One thread going from GPU to GPU, on each GPU's legacy stream (a NULL
 *    stream handle on every device: the workspace is per device as well).
 * Every call: routed (not forwarded, no fallback), within tolerance of the
 * real cuBLAS on the same device, bitwise equal when repeated, and the
 * current device left as the caller set it. */
#include "gpu_util.h"

#include <pthread.h>

typedef struct job {
    cudaDataType t;
    cublasOperation_t ta;
    int m, n, k;
    const char *family; /* what the route's name must contain */
} job_t;

static const job_t jobs[] = {
    {CUDA_R_32F, CUBLAS_OP_N, 1024, 1024, 1024, "sgemm_warptile"},
    {CUDA_R_16BF, CUBLAS_OP_T, 2048, 2048, 2048, "pingpong"},
    {CUDA_R_16BF, CUBLAS_OP_T, 4096, 16, 4096, "skinny"},
    {CUDA_R_16BF, CUBLAS_OP_T, 256, 256, 65536, "splitk"},
    {CUDA_R_32F, CUBLAS_OP_T, 512, 512, 32768, "streamk"},
    {CUDA_R_16BF, CUBLAS_OP_T, 4096, 32, 4096, "_ws"},
};
enum { NJOBS = sizeof jobs / sizeof jobs[0] };

static int passed, failed;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static void count(int ok, const char *what)
{
    pthread_mutex_lock(&count_lock);
    if (ok)
        ++passed;
    else
        ++failed;
    printf("%s%s\n", ok ? "" : "FAIL: ", what);
    pthread_mutex_unlock(&count_lock);
}

static cublasStatus_t gemm(gemmex_fn f, cublasHandle_t h, const job_t *j, const void *A,
                           const void *B, void *C)
{
    const float one = 1.f, zero = 0.f;
    const int lda = j->ta == CUBLAS_OP_T ? j->k : j->m;
    return f(h, j->ta, CUBLAS_OP_N, j->m, j->n, j->k, &one, A, j->t, lda, B, j->t, j->k, &zero, C,
             j->t, j->m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

/* The shim's route of this thread's last call ("?" without the API). */
static const char *last_route(char *buf, size_t size)
{
    typedef int (*route_fn)(char *, size_t);
    route_fn f = (route_fn)dlsym(RTLD_DEFAULT, "gemmshim_last_route");
    if (!f || f(buf, size) != 0)
        snprintf(buf, size, "?");
    return buf;
}

/* Every job on `dev`, on `stream` (NULL: the device's legacy stream). */
static void run_jobs(int dev, cudaStream_t stream, const char *who)
{
    CUDA_OK(cudaSetDevice(dev));
    cublasHandle_t h;
    CUBLAS_OK(cublasCreate(&h));
    CUBLAS_OK(cublasSetStream(h, stream));
    gemmex_fn real = (gemmex_fn)gu_real_cublas_sym("cublasGemmEx");
    for (int i = 0; i < NJOBS; ++i) {
        const job_t *j = &jobs[i];
        void *A = gu_dev_random((size_t)j->m * j->k, j->t);
        void *B = gu_dev_random((size_t)j->k * j->n, j->t);
        const size_t nc = (size_t)j->m * j->n * gu_esize(j->t);
        void *C1, *C2, *Cr;
        CUDA_OK(cudaMalloc(&C1, nc));
        CUDA_OK(cudaMalloc(&C2, nc));
        CUDA_OK(cudaMalloc(&Cr, nc));
        CUDA_OK(cudaMemsetAsync(C1, 0xff, nc, stream)); /* NaN: an unwritten C shows */
        CUDA_OK(cudaMemsetAsync(C2, 0xff, nc, stream));
        cublasStatus_t st1 = gemm((gemmex_fn)cublasGemmEx, h, j, A, B, C1);
        char route[96];
        last_route(route, sizeof route);
        int after = -1;
        CUDA_OK(cudaGetDevice(&after));
        cublasStatus_t st2 = gemm((gemmex_fn)cublasGemmEx, h, j, A, B, C2);
        CUBLAS_OK(gemm(real, h, j, A, B, Cr));
        CUDA_OK(cudaStreamSynchronize(stream));
        void *h1 = malloc(nc), *h2 = malloc(nc), *hr = malloc(nc);
        CUDA_OK(cudaMemcpy(h1, C1, nc, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(h2, C2, nc, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(hr, Cr, nc, cudaMemcpyDeviceToHost));
        const double rel = gu_rel_diff(h1, hr, nc / gu_esize(j->t), j->t);
        const int same = !memcmp(h1, h2, nc);
        const int ok = st1 == CUBLAS_STATUS_SUCCESS && st2 == CUBLAS_STATUS_SUCCESS &&
                       strstr(route, j->family) && after == dev && same &&
                       rel <= (j->t == CUDA_R_32F ? 1e-5 : 1e-2);
        char what[256];
        snprintf(what, sizeof what, "%s, GPU %d: %s %c%c %dx%dx%d: status %d/%d, route %s, "
                 "current device after %d, rel. diff vs cuBLAS %.3g, repeat %s", who, dev,
                 j->t == CUDA_R_32F ? "fp32" : "bf16", j->ta == CUBLAS_OP_T ? 'T' : 'N', 'N',
                 j->m, j->n, j->k, (int)st1, (int)st2, route, after, rel,
                 same ? "bitwise equal" : "DIFFERS");
        count(ok, what);
        free(h1); free(h2); free(hr);
        cudaFree(A); cudaFree(B); cudaFree(C1); cudaFree(C2); cudaFree(Cr);
    }
    cublasDestroy(h);
}

static void *per_gpu(void *arg)
{
    const int dev = (int)(intptr_t)arg;
    CUDA_OK(cudaSetDevice(dev));
    cudaStream_t s;
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    run_jobs(dev, s, "thread per GPU");
    CUDA_OK(cudaSetDevice(dev));
    cudaStreamDestroy(s);
    return NULL;
}

int main(void)
{
    gpu_require_or_skip("test_multi_gpu");
    int n = 0;
    CUDA_OK(cudaGetDeviceCount(&n));
    if (n < 2) {
        printf("SKIP: test_multi_gpu: %d CUDA device, needs 2\n", n);
        return GPU_SKIP;
    }
    gu_require_shim();
    printf("test_multi_gpu: %d GPUs, seed %llu\n", n, (unsigned long long)gu_seed_init());
    if (n > 8)
        n = 8;
    pthread_t t[8];
    for (int d = 0; d < n; ++d)
        pthread_create(&t[d], NULL, per_gpu, (void *)(intptr_t)d);
    for (int d = 0; d < n; ++d)
        pthread_join(t[d], NULL);
    for (int rep = 0; rep < 2; ++rep)
        for (int d = n - 1; d >= 0; --d) /* the other order from the threads' */
            run_jobs(d, NULL, "one thread, GPU to GPU");
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
