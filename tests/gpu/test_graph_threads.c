/* Routed calls inside CUDA graph capture and from several threads at once.
 * Run under the shim with GEMMSHIM_POLICY=eligible and GEMMSHIM_LOG set (so
 * the event timing's capture check is exercised too).
 * 1. Capture: a stream captures fp32, bf16, decode and split-K (deep K) GEMMs
 *    into a graph; replaying it gives bitwise the output of the same calls
 *    made directly (the split-K workspace was allocated by the direct calls).
 * 2. First use inside capture: a split-K call on a stream that has no
 *    workspace yet is routed (the workspace is allocated, not captured); the
 *    replay is right, and a direct call on the stream afterwards and a
 *    second replay give the same bits. And a split-K call on a fresh stream
 *    while another stream captures in global mode: routed, and that capture
 *    is not invalidated by the workspace's allocation.
 * 3. Threads: 4 threads, each with its own handle and stream, run GEMMs of
 *    their own shapes concurrently, two of them split-K (each stream its own
 *    workspace); each result matches the real cuBLAS's and repeats bitwise. */
#include "gpu_util.h"
#include "gu_count.h"

#include <dlfcn.h>
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
        CUDA_OK(cudaMemsetAsync(Cg[i], 0xff, nc[i], s));
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

/* The shim's route of this thread's last call ("?" without the API). */
static const char *last_route(void)
{
    static __thread char buf[96];
    typedef int (*route_fn)(char *, size_t);
    route_fn f = (route_fn)dlsym(RTLD_DEFAULT, "gemmshim_last_route");
    if (!f || f(buf, sizeof buf) != 0)
        snprintf(buf, sizeof buf, "?");
    return buf;
}

/* A route that used the split-K workspace (its name says how it split). */
static int splits(const char *route)
{
    return strstr(route, "splitk") || strstr(route, "streamk") || strstr(route, "_ws");
}

/* A split-K call first seen inside capture, on a stream the shim has no
 * workspace for yet: the workspace is allocated (not captured) and zeroed
 * during the capture, and the call is routed. The replay must match cuBLAS;
 * a direct call on the same stream afterwards (the same buffer, its flags
 * left zero by the replay) and a second replay must give the same bits. */
static void test_capture_first_use(const job_t *j, cudaStream_t s)
{
    cublasHandle_t h;
    CUBLAS_OK(cublasCreate(&h));
    CUBLAS_OK(cublasSetStream(h, s));
    void *ws;
    CUDA_OK(cudaMalloc(&ws, 32 << 20));
    CUBLAS_OK(cublasSetWorkspace(h, ws, 32 << 20));
    void *A = gu_dev_random((size_t)j->k * j->m, j->t), *B = gu_dev_random((size_t)j->k * j->n, j->t),
         *Cg, *Cd, *Cr;
    size_t nc = (size_t)j->m * j->n * gu_esize(j->t);
    CUDA_OK(cudaMalloc(&Cg, nc));
    CUDA_OK(cudaMalloc(&Cd, nc));
    CUDA_OK(cudaMalloc(&Cr, nc));
    CUDA_OK(cudaMemsetAsync(Cg, 0xff, nc, s));
    CUDA_OK(cudaMemsetAsync(Cd, 0xff, nc, s));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cublasStatus_t st = gemm((gemmex_fn)cublasGemmEx, h, j, A, B, Cg);
    char route[96];
    snprintf(route, sizeof route, "%s", last_route());
    CUDA_OK(cudaStreamEndCapture(s, &g));
    CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
    CUDA_OK(cudaGraphLaunch(ge, s));
    CUBLAS_OK(gemm((gemmex_fn)gu_real_cublas_sym("cublasGemmEx"), h, j, A, B, Cr));
    void *hg = malloc(nc), *hd = malloc(nc), *hr = malloc(nc), *hg2 = malloc(nc);
    CUDA_OK(cudaStreamSynchronize(s));
    CUDA_OK(cudaMemcpy(hg, Cg, nc, cudaMemcpyDeviceToHost));
    CUBLAS_OK(gemm((gemmex_fn)cublasGemmEx, h, j, A, B, Cd));
    CUDA_OK(cudaMemsetAsync(Cg, 0xff, nc, s)); /* s is non-blocking: not the legacy stream */
    CUDA_OK(cudaGraphLaunch(ge, s));
    CUDA_OK(cudaStreamSynchronize(s));
    CUDA_OK(cudaMemcpy(hd, Cd, nc, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(hr, Cr, nc, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(hg2, Cg, nc, cudaMemcpyDeviceToHost));
    double rel = gu_rel_diff(hg, hr, nc / gu_esize(j->t), j->t);
    char what[320];
    snprintf(what, sizeof what, "%dx%dx%d %s first seen in capture: status %d, route %s, rel. diff "
             "vs cuBLAS %.3g, direct call after %s, second replay %s", j->m, j->n, j->k,
             j->t == CUDA_R_32F ? "fp32" : "bf16", (int)st, route, rel,
             memcmp(hg, hd, nc) ? "DIFFERS" : "bitwise equal",
             memcmp(hg, hg2, nc) ? "DIFFERS" : "bitwise equal");
    count(st == CUBLAS_STATUS_SUCCESS && splits(route) && rel <= (j->t == CUDA_R_32F ? 1e-5 : 1e-2) &&
              !memcmp(hg, hd, nc) && !memcmp(hg, hg2, nc),
          what);
    printf("%s\n", what);
    free(hg); free(hd); free(hr); free(hg2);
    cudaFree(A); cudaFree(B); cudaFree(Cg); cudaFree(Cd); cudaFree(Cr); cudaFree(ws);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cublasDestroy(h);
}

/* A split-K call on a fresh, non-capturing stream while this thread has a
 * global-mode capture going on another stream (a model capturing one graph
 * while it still runs eager work elsewhere). The workspace's cudaMalloc is a
 * prohibited call under that capture unless the shim relaxes this thread's
 * mode for it: done wrong, the call forwards and, worse, the other capture is
 * invalidated. The call must be routed, right, and the capture still live. */
static void test_capture_elsewhere(cudaStream_t fresh)
{
    const job_t j = {CUDA_R_32F, 512, 512, 32768};
    cublasHandle_t h;
    cudaStream_t cap;
    CUBLAS_OK(cublasCreate(&h));
    CUBLAS_OK(cublasSetStream(h, fresh));
    CUDA_OK(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
    void *A = gu_dev_random((size_t)j.k * j.m, j.t), *B = gu_dev_random((size_t)j.k * j.n, j.t), *C,
         *Cr, *X;
    size_t nc = (size_t)j.m * j.n * gu_esize(j.t);
    CUDA_OK(cudaMalloc(&C, nc));
    CUDA_OK(cudaMalloc(&Cr, nc));
    CUDA_OK(cudaMalloc(&X, 1 << 20));
    CUDA_OK(cudaMemsetAsync(C, 0xff, nc, fresh));
    CUDA_OK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal));
    CUDA_OK(cudaMemsetAsync(X, 1, 1 << 20, cap));
    cublasStatus_t st = gemm((gemmex_fn)cublasGemmEx, h, &j, A, B, C);
    char route[96];
    snprintf(route, sizeof route, "%s", last_route());
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t qe = cudaStreamIsCapturing(cap, &cs);
    cudaGraph_t g = NULL;
    cudaError_t ee = cudaStreamEndCapture(cap, &g);
    cudaGetLastError();
    CUDA_OK(cudaStreamSynchronize(fresh));
    CUBLAS_OK(gemm((gemmex_fn)gu_real_cublas_sym("cublasGemmEx"), h, &j, A, B, Cr));
    CUDA_OK(cudaStreamSynchronize(fresh));
    void *hc = malloc(nc), *hr = malloc(nc);
    CUDA_OK(cudaMemcpy(hc, C, nc, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(hr, Cr, nc, cudaMemcpyDeviceToHost));
    double rel = gu_rel_diff(hc, hr, nc / gu_esize(j.t), j.t);
    char what[320];
    snprintf(what, sizeof what, "%dx%dx%d fp32 on a fresh stream during another stream's global "
             "capture: status %d, route %s, rel. diff vs cuBLAS %.3g, other capture %s, its end %s",
             j.m, j.n, j.k, (int)st, route, rel,
             qe == cudaSuccess && cs == cudaStreamCaptureStatusActive ? "still active" : "BROKEN",
             cudaGetErrorName(ee));
    count(st == CUBLAS_STATUS_SUCCESS && splits(route) && rel <= 1e-5 && qe == cudaSuccess &&
              cs == cudaStreamCaptureStatusActive && ee == cudaSuccess,
          what);
    printf("%s\n", what);
    free(hc); free(hr);
    if (g)
        cudaGraphDestroy(g);
    cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(Cr); cudaFree(X);
    cudaStreamDestroy(cap);
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
    gu_require_shim();
    (void)gu_seed_init();
    /* first: their streams must be new to the shim (a destroyed stream's
     * handle value may come back for a new one, with the old stream's
     * workspace). Deep K on the pingpong and SIMT splits, and a decode shape
     * whose plan splits through the workspace on the H200 (4096x32x4096). */
    static const job_t first[3] = {{CUDA_R_16BF, 256, 256, 65536}, {CUDA_R_32F, 512, 512, 32768},
                                   {CUDA_R_16BF, 4096, 32, 4096}};
    cudaStream_t fresh[4]; /* all alive at once: four distinct handles */
    for (int i = 0; i < 4; ++i)
        CUDA_OK(cudaStreamCreateWithFlags(&fresh[i], cudaStreamNonBlocking));
    for (int i = 0; i < 3; ++i)
        test_capture_first_use(&first[i], fresh[i]);
    test_capture_elsewhere(fresh[3]);
    test_capture();
    pthread_t t[4];
    for (int i = 0; i < 4; ++i)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < 4; ++i)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 4; ++i)
        cudaStreamDestroy(fresh[i]);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
