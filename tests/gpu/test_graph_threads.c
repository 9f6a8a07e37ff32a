/* Routed calls inside CUDA graph capture and from several threads at once.
 * Run under the shim with GEMMSHIM_POLICY=eligible and GEMMSHIM_LOG set (so
 * the event timing's capture check is exercised too).
 * 1. Capture: a stream captures fp32, bf16, decode and split-K (deep K) GEMMs
 *    into a graph; replaying it gives bitwise the output of the same calls
 *    made directly (the split-K workspace was allocated by the direct calls).
 * 2. First use inside capture: a split-K call on a stream that has no
 *    workspace yet is forwarded to cuBLAS (no allocation inside capture) and
 *    the replay is still right.
 * 3. Threads: 4 threads, each with its own handle and stream, run GEMMs of
 *    their own shapes concurrently, two of them split-K (each stream its own
 *    workspace); each result matches the real cuBLAS's and repeats bitwise. */
#include "gpu_util.h"

#include <pthread.h>

typedef struct job {
    cudaDataType t;
    int m, n, k;
} job_t;

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
    enum { NJ = 5 };
    static const job_t jobs[NJ] = {{CUDA_R_32F, 1000, 768, 640}, {CUDA_R_16BF, 1024, 512, 768},
                                   {CUDA_R_16BF, 4096, 16, 4096}, {CUDA_R_32F, 512, 512, 32768},
                                   {CUDA_R_16BF, 256, 256, 65536}};
    cublasHandle_t h;
    cudaStream_t s;
    CUBLAS_OK(cublasCreate(&h));
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUBLAS_OK(cublasSetStream(h, s));
    /* cuBLAS needs a user workspace to be capturable without allocating */
    void *ws;
    CUDA_OK(cudaMalloc(&ws, 32 << 20));
    CUBLAS_OK(cublasSetWorkspace(h, ws, 32 << 20));
    void *A[NJ], *B[NJ], *Cd[NJ], *Cg[NJ];
    size_t nc[NJ];
    for (int i = 0; i < NJ; ++i) {
        const job_t *j = &jobs[i];
        A[i] = gu_dev_random((size_t)j->k * j->m, j->t);
        B[i] = gu_dev_random((size_t)j->k * j->n, j->t);
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
    for (int i = 0; i < NJ; ++i)
        CUBLAS_OK(gemm((gemmex_fn)cublasGemmEx, h, &jobs[i], A[i], B[i], Cg[i]));
    CUDA_OK(cudaStreamEndCapture(s, &g));
    CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
    for (int rep = 0; rep < 3; ++rep)
        CUDA_OK(cudaGraphLaunch(ge, s));
    CUDA_OK(cudaStreamSynchronize(s));
    static const char *what[NJ] = {
        "graph replay of the fp32 GEMM differs from the direct call",
        "graph replay of the bf16 GEMM differs from the direct call",
        "graph replay of the decode GEMM differs from the direct call",
        "graph replay of the fp32 deep-K (split-K) GEMM differs from the direct call",
        "graph replay of the bf16 deep-K (split-K) GEMM differs from the direct call"};
    for (int i = 0; i < NJ; ++i) {
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

/* A deep-K call first seen inside capture: the stream has no split-K
 * workspace, and none may be allocated while capturing, so the shim forwards
 * it (GEMMSHIM_LOG says why); the graph must still compute it right. */
static void test_capture_first_use(void)
{
    const job_t j = {CUDA_R_16BF, 256, 256, 65536};
    cublasHandle_t h;
    cudaStream_t s;
    CUBLAS_OK(cublasCreate(&h));
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUBLAS_OK(cublasSetStream(h, s));
    void *ws;
    CUDA_OK(cudaMalloc(&ws, 32 << 20));
    CUBLAS_OK(cublasSetWorkspace(h, ws, 32 << 20));
    void *A = gu_dev_random((size_t)j.k * j.m, j.t), *B = gu_dev_random((size_t)j.k * j.n, j.t), *Cg,
         *Cr;
    size_t nc = (size_t)j.m * j.n * gu_esize(j.t);
    CUDA_OK(cudaMalloc(&Cg, nc));
    CUDA_OK(cudaMalloc(&Cr, nc));
    CUDA_OK(cudaMemset(Cg, 0xff, nc));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    cublasStatus_t st = gemm((gemmex_fn)cublasGemmEx, h, &j, A, B, Cg);
    CUDA_OK(cudaStreamEndCapture(s, &g));
    CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
    CUDA_OK(cudaGraphLaunch(ge, s));
    CUBLAS_OK(gemm((gemmex_fn)gu_real_cublas_sym("cublasGemmEx"), h, &j, A, B, Cr));
    CUDA_OK(cudaStreamSynchronize(s));
    void *hg = malloc(nc), *hr = malloc(nc);
    CUDA_OK(cudaMemcpy(hg, Cg, nc, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(hr, Cr, nc, cudaMemcpyDeviceToHost));
    double rel = gu_rel_diff(hg, hr, nc / 2, j.t);
    char what[160];
    snprintf(what, sizeof what, "deep-K call first seen in capture: status %d, rel. diff vs "
             "cuBLAS %.3g", (int)st, rel);
    count(st == CUBLAS_STATUS_SUCCESS && rel <= 1e-2, what);
    free(hg); free(hr);
    cudaFree(A); cudaFree(B); cudaFree(Cg); cudaFree(Cr); cudaFree(ws);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
    cublasDestroy(h);
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    job_t j = {id & 1 ? CUDA_R_16BF : CUDA_R_32F, 512 + 128 * id, 384 + 64 * id, 256 + 96 * id};
    if (id >= 2) { /* deep K: split-K, each thread's stream its own workspace */
        j.m = j.n = id == 2 ? 512 : 256;
        j.k = id == 2 ? 32768 : 65536;
    }
    cublasHandle_t h;
    cudaStream_t s;
    CUBLAS_OK(cublasCreate(&h));
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUBLAS_OK(cublasSetStream(h, s));
    gemmex_fn real = (gemmex_fn)gu_real_cublas_sym("cublasGemmEx");
    void *A = gu_dev_random((size_t)j.k * j.m, j.t), *B = gu_dev_random((size_t)j.k * j.n, j.t), *C1,
         *C2;
    size_t nc = (size_t)j.m * j.n * gu_esize(j.t);
    CUDA_OK(cudaMalloc(&C1, nc));
    CUDA_OK(cudaMalloc(&C2, nc));
    int ok = 1;
    void *h0 = malloc(nc), *h1 = malloc(nc), *h2 = malloc(nc);
    for (int rep = 0; rep < 20; ++rep) { /* many calls, interleaving with the other threads */
        ok &= gemm((gemmex_fn)cublasGemmEx, h, &j, A, B, C1) == CUBLAS_STATUS_SUCCESS;
        if (rep == 0) {
            CUDA_OK(cudaStreamSynchronize(s));
            CUDA_OK(cudaMemcpy(h0, C1, nc, cudaMemcpyDeviceToHost));
        }
        ok &= gemm(real, h, &j, A, B, C2) == CUBLAS_STATUS_SUCCESS;
    }
    CUDA_OK(cudaStreamSynchronize(s));
    CUDA_OK(cudaMemcpy(h1, C1, nc, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(h2, C2, nc, cudaMemcpyDeviceToHost));
    double rel = gu_rel_diff(h1, h2, nc / gu_esize(j.t), j.t);
    int same = !memcmp(h0, h1, nc);
    char what[160];
    snprintf(what, sizeof what, "thread %d (%dx%dx%d): status %s, rel. diff vs cuBLAS %.3g, "
             "repeat %s", id, j.m, j.n, j.k, ok ? "ok" : "BAD", rel,
             same ? "bitwise equal" : "DIFFERS");
    count(ok && same && rel <= (j.t == CUDA_R_32F ? 1e-5 : 1e-2), what);
    free(h0); free(h1); free(h2);
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
    (void)gu_seed_init();
    /* first: its stream must be new to the shim (a destroyed stream's handle
     * value may come back for a new one, with the old stream's workspace) */
    test_capture_first_use();
    test_capture();
    pthread_t t[4];
    for (int i = 0; i < 4; ++i)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < 4; ++i)
        pthread_join(t[i], NULL);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
