/* Routed calls inside CUDA graph capture and from several threads at once.
 * Run under the shim with GEMMSHIM_POLICY=eligible and GEMMSHIM_LOG set (so
 * the event timing's capture check is exercised too).
 * 1. Capture: a stream captures fp32, bf16 and decode GEMMs into a graph; replaying
 *    it gives bitwise the output of the same calls made directly.
 * 2. Threads: 4 threads, each with its own handle and stream, run GEMMs of
 *    their own shapes concurrently; each result matches the real cuBLAS's. */
#include "gpu_util.h"

#include <pthread.h>

typedef struct job {
    cudaDataType t;
    int m, n, k;
} job_t;

static void *dev_random(size_t n, cudaDataType t)
{
    void *h = malloc(n * gu_esize(t)), *d;
    gu_fill_random(h, n, t);
    CUDA_OK(cudaMalloc(&d, n * gu_esize(t)));
    CUDA_OK(cudaMemcpy(d, h, n * gu_esize(t), cudaMemcpyHostToDevice));
    free(h);
    return d;
}

static cublasStatus_t gemm(gemmex_fn f, cublasHandle_t h, const job_t *j, const void *A,
                           const void *B, void *C)
{
    const float one = 1.f, zero = 0.f;
    return f(h, CUBLAS_OP_T, CUBLAS_OP_N, j->m, j->n, j->k, &one, A, j->t, j->k, B, j->t, j->k,
             &zero, C, j->t, j->m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

static int passed, failed;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static void count(int ok, const char *what)
{
    pthread_mutex_lock(&count_lock);
    if (ok)
        ++passed;
    else {
        ++failed;
        printf("FAIL: %s\n", what);
    }
    pthread_mutex_unlock(&count_lock);
}

static void test_capture(void)
{
    /* fp32 (SIMT), bf16 (pingpong), and a decode shape (bf16, 16 tokens: the
     * skinny kernel, whose split-K reduction must be bitwise reproducible) */
    static const job_t jobs[3] = {{CUDA_R_32F, 1000, 768, 640}, {CUDA_R_16BF, 1024, 512, 768},
                                  {CUDA_R_16BF, 4096, 16, 4096}};
    cublasHandle_t h;
    cudaStream_t s;
    CUBLAS_OK(cublasCreate(&h));
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUBLAS_OK(cublasSetStream(h, s));
    /* cuBLAS needs a user workspace to be capturable without allocating */
    void *ws;
    CUDA_OK(cudaMalloc(&ws, 32 << 20));
    CUBLAS_OK(cublasSetWorkspace(h, ws, 32 << 20));
    void *A[3], *B[3], *Cd[3], *Cg[3];
    size_t nc[3];
    for (int i = 0; i < 3; ++i) {
        const job_t *j = &jobs[i];
        A[i] = dev_random((size_t)j->k * j->m, j->t);
        B[i] = dev_random((size_t)j->k * j->n, j->t);
        nc[i] = (size_t)j->m * j->n * gu_esize(j->t);
        CUDA_OK(cudaMalloc(&Cd[i], nc[i]));
        CUDA_OK(cudaMalloc(&Cg[i], nc[i]));
        CUDA_OK(cudaMemset(Cg[i], 0xff, nc[i]));
        CUBLAS_OK(gemm((gemmex_fn)cublasGemmEx, h, j, A[i], B[i], Cd[i]));
    }
    CUDA_OK(cudaStreamSynchronize(s));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < 3; ++i)
        CUBLAS_OK(gemm((gemmex_fn)cublasGemmEx, h, &jobs[i], A[i], B[i], Cg[i]));
    CUDA_OK(cudaStreamEndCapture(s, &g));
    CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
    for (int rep = 0; rep < 3; ++rep)
        CUDA_OK(cudaGraphLaunch(ge, s));
    CUDA_OK(cudaStreamSynchronize(s));
    static const char *what[3] = {"graph replay of the fp32 GEMM differs from the direct call",
                                  "graph replay of the bf16 GEMM differs from the direct call",
                                  "graph replay of the decode GEMM differs from the direct call"};
    for (int i = 0; i < 3; ++i) {
        void *hd = malloc(nc[i]), *hg = malloc(nc[i]);
        CUDA_OK(cudaMemcpy(hd, Cd[i], nc[i], cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(hg, Cg[i], nc[i], cudaMemcpyDeviceToHost));
        count(!memcmp(hd, hg, nc[i]), what[i]);
        free(hd);
        free(hg);
        cudaFree(A[i]); cudaFree(B[i]); cudaFree(Cd[i]); cudaFree(Cg[i]);
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaFree(ws);
    cudaStreamDestroy(s);
    cublasDestroy(h);
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    job_t j = {id & 1 ? CUDA_R_16BF : CUDA_R_32F, 512 + 128 * id, 384 + 64 * id, 256 + 96 * id};
    cublasHandle_t h;
    cudaStream_t s;
    CUBLAS_OK(cublasCreate(&h));
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUBLAS_OK(cublasSetStream(h, s));
    gemmex_fn real = (gemmex_fn)gu_real_cublas_sym("cublasGemmEx");
    void *A = dev_random((size_t)j.k * j.m, j.t), *B = dev_random((size_t)j.k * j.n, j.t), *C1,
         *C2;
    size_t nc = (size_t)j.m * j.n * gu_esize(j.t);
    CUDA_OK(cudaMalloc(&C1, nc));
    CUDA_OK(cudaMalloc(&C2, nc));
    int ok = 1;
    for (int rep = 0; rep < 20; ++rep) { /* many calls, interleaving with the other threads */
        ok &= gemm((gemmex_fn)cublasGemmEx, h, &j, A, B, C1) == CUBLAS_STATUS_SUCCESS;
        ok &= gemm(real, h, &j, A, B, C2) == CUBLAS_STATUS_SUCCESS;
    }
    CUDA_OK(cudaStreamSynchronize(s));
    void *h1 = malloc(nc), *h2 = malloc(nc);
    CUDA_OK(cudaMemcpy(h1, C1, nc, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(h2, C2, nc, cudaMemcpyDeviceToHost));
    double rel = gu_rel_diff(h1, h2, nc / gu_esize(j.t), j.t);
    char what[128];
    snprintf(what, sizeof what, "thread %d: status %s, rel. diff vs cuBLAS %.3g", id,
             ok ? "ok" : "BAD", rel);
    count(ok && rel <= (j.t == CUDA_R_32F ? 1e-5 : 1e-2), what);
    free(h1); free(h2);
    cudaFree(A); cudaFree(B); cudaFree(C1); cudaFree(C2);
    cudaStreamDestroy(s);
    cublasDestroy(h);
    return NULL;
}

int main(void)
{
    gpu_require_or_skip("test_graph_threads");
    if (!gu_shim_present()) {
        printf("FAIL: run me with LD_PRELOAD=libgemmshim.so\n");
        return 1;
    }
    gu_seed(gu_seed_from_env());
    test_capture();
    pthread_t t[4];
    for (int i = 0; i < 4; ++i)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < 4; ++i)
        pthread_join(t[i], NULL);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
