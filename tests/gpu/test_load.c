/* The shim under load, over a long run, and across fork(). Run under
 * LD_PRELOAD=libgemmshim.so with GEMMSHIM_POLICY=eligible (run_gpu_test.sh
 * load); argv[1] picks the part:
 *
 *   load  20 threads at once: 16 with a cuBLAS handle and a non-blocking
 *         stream of their own, 4 sharing one handle (created by main, its
 *         stream set once by main; they only read it). Each issues
 *         GEMMSHIM_LOAD_ROUNDS (20) rounds of a mix, in an order that turns
 *         with the round and the thread: routed shapes (bf16 TN 512x256x1024
 *         through cublasGemmEx, fp32 NN 384x256x512 with beta 0.5 through
 *         cublasSgemm_v2, a decode-like bf16 TN 4096x16x1024), forwarded ones
 *         (fp16 with CUBLAS_COMPUTE_16F), an fp32 call with an odd lda (301),
 *         a deep-K fp32 call (128x128x16384: split-K, two launches) and a
 *         bf16 call whose A TMA cannot load (lda 1025: its copy, then the
 *         GEMM). The threads on the shared handle share its stream, and so
 *         the shim's workspace there: a call of two launches must not find
 *         another thread's between them (it did, once in 400). Every call is
 *         followed on the same stream by the same call on the real cuBLAS
 *         (past the shim) into another buffer; both are compared on the host
 *         (relative Frobenius difference <= 1e-5 for fp32, 2e-2 for 16-bit).
 *         Every comparison is a check; so are the shim's counters (every call
 *         counted, no fallback) where it exports gemmshim_get_stats.
 *   soak  GEMMSHIM_SOAK_CALLS (1e6) small calls on one thread and stream
 *         (64x64x64 fp32 routed, 128x16x256 bf16 decode-like routed, 32x32x32
 *         fp16 with CUBLAS_COMPUTE_16F forwarded), synchronized every 1000
 *         calls; meant for GEMMSHIM_MODE=verify. Resident host memory and
 *         device memory in use, after a warm-up of 10% of the calls and at
 *         the end, may grow by at most 1% or 4 MiB, whichever is larger
 *         (4 MiB over 900k calls: a leak of 5 bytes a call fails). Then the
 *         shim's counters (calls == N, no fallback) and one comparison of
 *         each shape with the real cuBLAS.
 *   fork  The parent never touches CUDA before fork(): a probe child asks
 *         for a device (exit 77 without one), the parent makes the shim
 *         initialise (gemmshim_get_mode: no CUDA), then forks 3 children;
 *         each initialises CUDA, runs routed GEMMs (bf16 TN 512x256x1024,
 *         fp32 NN 384x256x512) compared with the real cuBLAS, and exits 0 or
 *         1. The parent waits at most 120 s; a child that failed, hung or
 *         crashed fails the test. Then the parent runs a GEMM itself (its
 *         first CUDA use) and checks it. Prints "fork pids: parent P
 *         children C1 C2 C3" for run_gpu_test.sh (one GEMMSHIM_LOG=...%p
 *         file each).
 *
 * Each part exits 77 without a GPU, prints "N passed, M failed" and exits 1
 * on any failure. */
#include "gpu_util.h"
#include "gu_count.h"

#include "gemmshim.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                   int, int, const float *, const float *, int, const float *,
                                   int, const float *, float *, int);
typedef int (*stats_fn)(gemmshim_stats_t *);
typedef gemmshim_mode_t (*mode_fn)(void);
typedef int (*route_fn)(char *, size_t);


static int summary(void)
{
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* The shim's route of this thread's last call ("-" without the shim). */
static const char *last_route(void)
{
    static __thread char buf[96];
    route_fn f = (route_fn)dlsym(RTLD_DEFAULT, "gemmshim_last_route");
    if (!f || f(buf, sizeof buf) != 0)
        snprintf(buf, sizeof buf, "-");
    return buf;
}

/* ---------------- one GEMM: its shape, its buffers, both calls ---------------- */

typedef struct op_def {
    const char *name;
    int sgemm; /* cublasSgemm_v2; else cublasGemmEx */
    cudaDataType t;
    cublasComputeType_t compute;
    cublasOperation_t ta, tb;
    int m, n, k;
    int lda_pad; /* lda = rows of A + lda_pad */
    float beta;  /* nonzero: C starts as a fixed random matrix */
} op_def_t;

#define OP_N CUBLAS_OP_N
#define OP_T CUBLAS_OP_T
static const op_def_t load_ops[] = {
    {"bf16 TN 512x256x1024 cublasGemmEx", 0, CUDA_R_16BF, CUBLAS_COMPUTE_32F, OP_T, OP_N, 512, 256,
     1024, 0, 0.f},
    {"fp32 NN 384x256x512 beta 0.5 cublasSgemm_v2", 1, CUDA_R_32F, CUBLAS_COMPUTE_32F, OP_N, OP_N,
     384, 256, 512, 0, 0.5f},
    {"bf16 TN 4096x16x1024 (decode) cublasGemmEx", 0, CUDA_R_16BF, CUBLAS_COMPUTE_32F, OP_T, OP_N,
     4096, 16, 1024, 0, 0.f},
    {"fp16 NN 256x192x320 COMPUTE_16F cublasGemmEx", 0, CUDA_R_16F, CUBLAS_COMPUTE_16F, OP_N,
     OP_N, 256, 192, 320, 0, 0.f},
    {"fp32 NN 300x200x250 lda 301 cublasSgemm_v2", 1, CUDA_R_32F, CUBLAS_COMPUTE_32F, OP_N, OP_N,
     300, 200, 250, 1, 0.f},
    {"fp32 NN 128x128x16384 (split-K) cublasSgemm_v2", 1, CUDA_R_32F, CUBLAS_COMPUTE_32F, OP_N,
     OP_N, 128, 128, 16384, 0, 0.f},
    {"bf16 NN 1024x512x2048 lda 1025 (packed A) cublasGemmEx", 0, CUDA_R_16BF, CUBLAS_COMPUTE_32F,
     OP_N, OP_N, 1024, 512, 2048, 1, 0.f},
};
enum { N_LOAD_OPS = sizeof load_ops / sizeof load_ops[0] };

static const op_def_t soak_ops[] = {
    {"fp32 NN 64x64x64 cublasSgemm_v2", 1, CUDA_R_32F, CUBLAS_COMPUTE_32F, OP_N, OP_N, 64, 64, 64,
     0, 0.f},
    {"bf16 TN 128x16x256 (decode) cublasGemmEx", 0, CUDA_R_16BF, CUBLAS_COMPUTE_32F, OP_T, OP_N,
     128, 16, 256, 0, 0.f},
    {"fp16 NN 32x32x32 COMPUTE_16F cublasGemmEx", 0, CUDA_R_16F, CUBLAS_COMPUTE_16F, OP_N, OP_N,
     32, 32, 32, 0, 0.f},
};
enum { N_SOAK_OPS = sizeof soak_ops / sizeof soak_ops[0] };

/* The fork part's GEMMs: the first two of the load mix, beta 0 */
static const op_def_t fork_ops[] = {
    {"bf16 TN 512x256x1024 cublasGemmEx", 0, CUDA_R_16BF, CUBLAS_COMPUTE_32F, OP_T, OP_N, 512, 256,
     1024, 0, 0.f},
    {"fp32 NN 384x256x512 cublasSgemm_v2", 1, CUDA_R_32F, CUBLAS_COMPUTE_32F, OP_N, OP_N, 384, 256,
     512, 0, 0.f},
};
enum { N_FORK_OPS = sizeof fork_ops / sizeof fork_ops[0] };

typedef struct api {
    gemmex_fn gemmex;
    sgemm_fn sgemm;
} api_t;

static api_t shim_api(void) /* the global symbols: the shim's under LD_PRELOAD */
{
    api_t a = {(gemmex_fn)cublasGemmEx, (sgemm_fn)cublasSgemm_v2};
    return a;
}

static api_t real_api(void)
{
    api_t a = {(gemmex_fn)gu_real_cublas_sym("cublasGemmEx"),
               (sgemm_fn)gu_real_cublas_sym("cublasSgemm_v2")};
    return a;
}

typedef struct gemm {
    const op_def_t *op;
    int lda, ldb, ldc;
    size_t nc;        /* elements of C (ldc == m: contiguous) */
    size_t c_bytes;
    void *A, *B, *C0; /* C0: the starting C when beta != 0 */
    void *Cs, *Cr;    /* the shim's result, cuBLAS's */
    void *hs, *hr;    /* host copies */
} gemm_t;

/* Buffers with fresh random operands from the generator (the caller holds
 * whatever lock guards it). */
static void gemm_init(gemm_t *g, const op_def_t *op)
{
    memset(g, 0, sizeof *g);
    g->op = op;
    const int rows_a = op->ta == OP_N ? op->m : op->k, cols_a = op->ta == OP_N ? op->k : op->m;
    const int rows_b = op->tb == OP_N ? op->k : op->n, cols_b = op->tb == OP_N ? op->n : op->k;
    g->lda = rows_a + op->lda_pad;
    g->ldb = rows_b;
    g->ldc = op->m;
    g->nc = (size_t)op->m * op->n;
    g->c_bytes = g->nc * gu_esize(op->t);
    g->A = gu_dev_random((size_t)g->lda * cols_a, op->t);
    g->B = gu_dev_random((size_t)g->ldb * cols_b, op->t);
    if (op->beta != 0.f)
        g->C0 = gu_dev_random(g->nc, op->t);
    CUDA_OK(cudaMalloc(&g->Cs, g->c_bytes));
    CUDA_OK(cudaMalloc(&g->Cr, g->c_bytes));
    g->hs = malloc(g->c_bytes);
    g->hr = malloc(g->c_bytes);
    if (!g->hs || !g->hr) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
}

static void gemm_free(gemm_t *g)
{
    cudaFree(g->A);
    cudaFree(g->B);
    cudaFree(g->C0);
    cudaFree(g->Cs);
    cudaFree(g->Cr);
    free(g->hs);
    free(g->hr);
}

/* The call, through api, into C. */
static cublasStatus_t gemm_call(const api_t *api, cublasHandle_t h, const gemm_t *g, void *C)
{
    const op_def_t *o = g->op;
    if (o->sgemm) {
        const float alpha = 1.f, beta = o->beta;
        return api->sgemm(h, o->ta, o->tb, o->m, o->n, o->k, &alpha, g->A, g->lda, g->B, g->ldb,
                          &beta, C, g->ldc);
    }
    if (o->compute == CUBLAS_COMPUTE_16F) { /* the scalars are halves */
        const uint16_t alpha = gu_f32_to_f16(1.f), beta = gu_f32_to_f16(o->beta);
        return api->gemmex(h, o->ta, o->tb, o->m, o->n, o->k, &alpha, g->A, o->t, g->lda, g->B,
                           o->t, g->ldb, &beta, C, o->t, g->ldc, o->compute, CUBLAS_GEMM_DEFAULT);
    }
    const float alpha = 1.f, beta = o->beta;
    return api->gemmex(h, o->ta, o->tb, o->m, o->n, o->k, &alpha, g->A, o->t, g->lda, g->B, o->t,
                       g->ldb, &beta, C, o->t, g->ldc, o->compute, CUBLAS_GEMM_DEFAULT);
}

/* C's starting value on stream s: the fixed random C0 (beta != 0), else
 * NaN everywhere (0xff bytes are NaN in all three types) so that a call
 * that wrote nothing cannot pass. */
static void gemm_reset_c(const gemm_t *g, void *C, cudaStream_t s)
{
    if (g->C0)
        CUDA_OK(cudaMemcpyAsync(C, g->C0, g->c_bytes, cudaMemcpyDeviceToDevice, s));
    else
        CUDA_OK(cudaMemsetAsync(C, 0xff, g->c_bytes, s));
}

/* Both calls on stream s (h's stream): the shim's into Cs, then the real
 * cuBLAS's into Cr. Returns whether both returned success; *route gets the
 * shim's route when not NULL. */
static int gemm_both(const api_t *shim, const api_t *real, cublasHandle_t h, cudaStream_t s,
                     const gemm_t *g, char *route, size_t route_size)
{
    gemm_reset_c(g, g->Cs, s);
    gemm_reset_c(g, g->Cr, s);
    const cublasStatus_t a = gemm_call(shim, h, g, g->Cs);
    if (route)
        snprintf(route, route_size, "%s", last_route());
    const cublasStatus_t b = gemm_call(real, h, g, g->Cr);
    return a == CUBLAS_STATUS_SUCCESS && b == CUBLAS_STATUS_SUCCESS;
}

static double tolerance_of(cudaDataType t) { return t == CUDA_R_32F ? 1e-5 : 2e-2; }

/* After the stream is synchronized: the relative difference of the two
 * results (INFINITY for a NaN in the shim's). */
static double gemm_diff(gemm_t *g)
{
    CUDA_OK(cudaMemcpy(g->hs, g->Cs, g->c_bytes, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(g->hr, g->Cr, g->c_bytes, cudaMemcpyDeviceToHost));
    return gu_rel_diff(g->hs, g->hr, g->nc, g->op->t);
}

/* The shim's counters, if it exports them (0: not there). */
static int shim_stats(gemmshim_stats_t *st)
{
    stats_fn f = (stats_fn)dlsym(RTLD_DEFAULT, "gemmshim_get_stats");
    return f && f(st) == GEMMSHIM_OK;
}

/* ---------------- part 1: load ---------------- */

enum { OWN_THREADS = 16, SHARED_THREADS = 4, LOAD_THREADS = OWN_THREADS + SHARED_THREADS };

static int load_rounds;
static uint64_t load_seed;
static cublasHandle_t shared_handle;
static pthread_barrier_t load_start;
static pthread_mutex_t rng_lock = PTHREAD_MUTEX_INITIALIZER; /* gu_* generator: one state */

/* A handle of its own on a non-blocking stream of its own. */
static void handle_on_stream(cublasHandle_t *h, cudaStream_t *s)
{
    CUBLAS_OK(cublasCreate(h));
    CUDA_OK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
    CUBLAS_OK(cublasSetStream(*h, *s));
}

/* merged over all threads, under count_lock */
static double worst[N_LOAD_OPS];
static long compared[N_LOAD_OPS];
static char route_seen[N_LOAD_OPS][96];
static unsigned long long shim_calls_made;

static void *load_worker(void *arg)
{
    const int id = (int)(intptr_t)arg, own = id < OWN_THREADS;
    const api_t shim = shim_api(), real = real_api();
    cublasHandle_t h = shared_handle;
    cudaStream_t s;
    if (own) {
        handle_on_stream(&h, &s);
    } else {
        CUBLAS_OK(cublasGetStream(h, &s)); /* set once by main; read only */
    }
    gemm_t g[N_LOAD_OPS];
    pthread_mutex_lock(&rng_lock);
    gu_seed(load_seed + 0x1000 * (uint64_t)(id + 1));
    for (int i = 0; i < N_LOAD_OPS; ++i)
        gemm_init(&g[i], &load_ops[i]);
    pthread_mutex_unlock(&rng_lock);

    double my_worst[N_LOAD_OPS] = {0};
    char route[N_LOAD_OPS][96] = {{0}};
    unsigned long long calls = 0;
    pthread_barrier_wait(&load_start); /* every thread's calls at once */
    for (int r = 0; r < load_rounds; ++r) {
        int ok[N_LOAD_OPS];
        /* the whole round queued on the stream, in an order that turns with
         * the round and the thread, before one synchronization */
        for (int j = 0; j < N_LOAD_OPS; ++j) {
            const int i = (j + r + id) % N_LOAD_OPS;
            ok[i] = gemm_both(&shim, &real, h, s, &g[i], route[i], sizeof route[i]);
            ++calls;
        }
        CUDA_OK(cudaStreamSynchronize(s));
        for (int i = 0; i < N_LOAD_OPS; ++i) {
            const double rel = gemm_diff(&g[i]);
            const int good = ok[i] && rel <= tolerance_of(load_ops[i].t);
            if (rel > my_worst[i] || rel != rel)
                my_worst[i] = rel;
            if (good) {
                count(1, NULL);
            } else {
                char what[320];
                snprintf(what, sizeof what, "load: thread %d (%s handle), round %d, %s: status %s, "
                         "route %s, rel. diff vs cuBLAS %.3g (tolerance %.0e)", id,
                         own ? "own" : "shared", r, load_ops[i].name, ok[i] ? "ok" : "BAD",
                         route[i], rel, tolerance_of(load_ops[i].t));
                count(0, what);
            }
        }
    }
    pthread_mutex_lock(&count_lock);
    for (int i = 0; i < N_LOAD_OPS; ++i) {
        if (my_worst[i] > worst[i] || my_worst[i] != my_worst[i])
            worst[i] = my_worst[i];
        compared[i] += load_rounds;
        if (!route_seen[i][0])
            memcpy(route_seen[i], route[i], sizeof route_seen[i]); /* both 96, NUL-ended */
    }
    shim_calls_made += calls;
    pthread_mutex_unlock(&count_lock);
    for (int i = 0; i < N_LOAD_OPS; ++i)
        gemm_free(&g[i]);
    if (own) {
        cublasDestroy(h);
        cudaStreamDestroy(s);
    }
    return NULL;
}

static int part_load(void)
{
    gpu_require_or_skip("test_load load");
    load_rounds = gu_env_int("GEMMSHIM_LOAD_ROUNDS", 20);
    if (load_rounds < 1)
        load_rounds = 1;
    load_seed = gu_seed_init();
    printf("load: %d threads with their own handle and stream, %d sharing one handle; %d rounds "
           "of %d calls each (seed 0x%llx)\n", OWN_THREADS, SHARED_THREADS, load_rounds,
           N_LOAD_OPS, (unsigned long long)load_seed);
    gemmshim_stats_t before = {0}, after = {0};
    const int have_stats = shim_stats(&before);

    cudaStream_t shared_stream;
    handle_on_stream(&shared_handle, &shared_stream);
    pthread_barrier_init(&load_start, NULL, LOAD_THREADS);
    pthread_t t[LOAD_THREADS];
    for (int i = 0; i < LOAD_THREADS; ++i)
        if (pthread_create(&t[i], NULL, load_worker, (void *)(intptr_t)i)) {
            fprintf(stderr, "pthread_create failed\n");
            exit(1);
        }
    for (int i = 0; i < LOAD_THREADS; ++i)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&load_start);

    for (int i = 0; i < N_LOAD_OPS; ++i)
        printf("load: %-48s %5ld comparisons, worst rel. diff %.3g (tolerance %.0e), route %s\n",
               load_ops[i].name, compared[i], worst[i], tolerance_of(load_ops[i].t),
               route_seen[i]);
    if (have_stats && shim_stats(&after)) {
        const unsigned long long calls = after.calls - before.calls;
        printf("load: shim counters: %llu calls (%llu made), %llu routed, %llu forwarded, "
               "%llu fallbacks\n", calls, shim_calls_made,
               (unsigned long long)(after.routed - before.routed),
               (unsigned long long)(after.forwarded - before.forwarded),
               (unsigned long long)(after.fallbacks - before.fallbacks));
        count(calls == shim_calls_made, "load: the shim's call count is not the number of calls made");
        count(after.routed > before.routed, "load: the shim routed no call");
        count(after.fallbacks == before.fallbacks, "load: some routed calls fell back to cuBLAS");
    } else {
        printf("load: the shim's counters are not available (gemmshim_get_stats not found)\n");
    }
    cublasDestroy(shared_handle);
    cudaStreamDestroy(shared_stream);
    return summary();
}

/* ---------------- part 2: soak ---------------- */

typedef struct mem {
    size_t host;      /* resident set */
    size_t dev;       /* device memory in use (total - free), the pool trimmed */
    uint64_t pool;    /* bytes allocated from the stream-ordered pool */
} mem_t;

static mem_t mem_now(void)
{
    mem_t m = {0, 0, 0};
    CUDA_OK(cudaDeviceSynchronize());
    /* Memory the stream-ordered pool keeps for reuse is not in use: trimmed
     * first, so what is left is what is allocated. */
    int dev;
    cudaMemPool_t pool;
    CUDA_OK(cudaGetDevice(&dev));
    if (cudaDeviceGetMemPool(&pool, dev) == cudaSuccess) {
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &m.pool);
        cudaMemPoolTrimTo(pool, 0);
    }
    cudaGetLastError();
    size_t free_b, total_b;
    CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
    m.dev = total_b - free_b;
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (!f || fscanf(f, "%lu %lu", &size, &resident) != 2) {
        fprintf(stderr, "cannot read /proc/self/statm\n");
        exit(1);
    }
    fclose(f);
    m.host = (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
    return m;
}

/* The shim's own resources (gemmshim_get_resources), where it exports it. */
typedef int (*resources_fn)(gemmshim_resources_t *);
static int shim_resources(gemmshim_resources_t *r)
{
    resources_fn f = (resources_fn)dlsym(RTLD_DEFAULT, "gemmshim_get_resources");
    memset(r, 0, sizeof *r);
    r->size = sizeof *r;
    return f && f(r) == 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define MIB (1024.0 * 1024.0)

static void check_growth(const char *what, size_t before, size_t after)
{
    const size_t slack_floor = (size_t)4 << 20;
    const size_t slack = before / 100 > slack_floor ? before / 100 : slack_floor;
    const double grew = ((double)after - (double)before) / MIB;
    char line[256];
    snprintf(line, sizeof line, "soak: %s: %.1f MiB after the warm-up, %.1f MiB at the end: "
             "%+.2f MiB (%+.3f%%; allowed %.1f MiB)", what, before / MIB, after / MIB, grew,
             before ? 100.0 * grew * MIB / (double)before : 0.0, slack / MIB);
    printf("%s\n", line);
    count(after <= before + slack, line);
}

static int part_soak(void)
{
    gpu_require_or_skip("test_load soak");
    long n = gu_env_int("GEMMSHIM_SOAK_CALLS", 1000000);
    if (n < 10)
        n = 10;
    const long warm = n / 10;
    const uint64_t seed = gu_seed_init();
    const char *mode = getenv("GEMMSHIM_MODE");
    printf("soak: %ld calls on one thread and stream (GEMMSHIM_MODE=%s), synchronized every 1000; "
           "memory measured after %ld and at the end (seed 0x%llx)\n", n, mode ? mode : "(unset)",
           warm, (unsigned long long)seed);
    const api_t shim = shim_api(), real = real_api();
    cublasHandle_t h;
    cudaStream_t s;
    handle_on_stream(&h, &s);
    gemm_t g[N_SOAK_OPS];
    for (int i = 0; i < N_SOAK_OPS; ++i)
        gemm_init(&g[i], &soak_ops[i]);
    for (int i = 0; i < N_SOAK_OPS; ++i)
        gemm_reset_c(&g[i], g[i].Cs, s);
    gemmshim_stats_t before = {0}, after = {0};
    const int have_stats = shim_stats(&before);

    long bad = 0;
    mem_t m0 = {0, 0, 0};
    gemmshim_resources_t r0, r1;
    int have_res = 0;
    double t0 = now_s(), t_warm = t0;
    for (long c = 0; c < n; ++c) {
        const gemm_t *x = &g[c % N_SOAK_OPS];
        if (gemm_call(&shim, h, x, x->Cs) != CUBLAS_STATUS_SUCCESS && bad++ < 5)
            printf("FAIL: soak: call %ld (%s) did not return success\n", c, x->op->name);
        if ((c + 1) % 1000 == 0)
            CUDA_OK(cudaStreamSynchronize(s));
        if (c + 1 == warm) {
            CUDA_OK(cudaStreamSynchronize(s));
            m0 = mem_now();
            have_res = shim_resources(&r0);
            t_warm = now_s();
            printf("soak: warm-up of %ld calls in %.1f s (%.0f calls/s); host %.1f MiB, device "
                   "%.1f MiB in use\n", warm, t_warm - t0, warm / (t_warm - t0), m0.host / MIB,
                   m0.dev / MIB);
        }
    }
    CUDA_OK(cudaStreamSynchronize(s));
    const double t1 = now_s();
    const mem_t m1 = mem_now();
    if (have_res && shim_resources(&r1)) {
        /* the shim's own: bounded and reused, so where the warm-up left them;
         * every verdict read once the stream is synchronized */
        printf("soak: the shim's resources after the warm-up / at the end: workspaces %llu / %llu "
               "(%.1f / %.1f MiB), timing events %llu / %llu (pool of %llu), verdicts in flight %llu / %llu\n",
               (unsigned long long)r0.workspace_buffers, (unsigned long long)r1.workspace_buffers,
               r0.workspace_bytes / MIB, r1.workspace_bytes / MIB,
               (unsigned long long)r0.timing_events, (unsigned long long)r1.timing_events,
               (unsigned long long)r1.timing_events_max, (unsigned long long)r0.verify_in_flight, (unsigned long long)r1.verify_in_flight);
        count(r1.workspace_buffers == r0.workspace_buffers &&
                  r1.workspace_bytes == r0.workspace_bytes,
              "soak: the shim's workspaces grew after the warm-up");
        /* the pool's high-water mark follows how far the host ran ahead of
         * the GPU: bounded, not fixed by the warm-up */
        count(r1.timing_events_max > 0 && r1.timing_events <= r1.timing_events_max,
              "soak: the shim's timing events outgrew their pool");
        count(r1.verify_in_flight == 0, "soak: verdicts still in flight after a synchronize");
    } else {
        printf("soak: the shim's resources are not available (gemmshim_get_resources not found)\n");
    }
    printf("soak: %ld calls in %.1f s (%.0f calls/s after the warm-up)\n", n, t1 - t0,
           n > warm ? (n - warm) / (t1 - t_warm) : 0.0);
    char what[160];
    snprintf(what, sizeof what, "soak: %ld of %ld calls did not return success", bad, n);
    count(bad == 0, what);
    check_growth("resident host memory", m0.host, m1.host);
    check_growth("device memory in use", m0.dev, m1.dev);
    printf("soak: stream-ordered pool: %.2f MiB allocated after the warm-up, %.2f MiB at the end\n",
           m0.pool / MIB, m1.pool / MIB);
    if (have_stats && shim_stats(&after)) {
        const unsigned long long calls = after.calls - before.calls;
        printf("soak: shim counters: %llu calls, %llu routed, %llu forwarded, %llu fallbacks\n",
               calls, (unsigned long long)(after.routed - before.routed),
               (unsigned long long)(after.forwarded - before.forwarded),
               (unsigned long long)(after.fallbacks - before.fallbacks));
        snprintf(what, sizeof what, "soak: the shim counted %llu calls, %ld were made", calls, n);
        count(calls == (unsigned long long)n, what);
        count(after.fallbacks == before.fallbacks, "soak: some routed calls fell back to cuBLAS");
    } else {
        printf("soak: the shim's counters are not available (gemmshim_get_stats not found)\n");
    }
    /* the results are still right: each shape once more, against cuBLAS */
    for (int i = 0; i < N_SOAK_OPS; ++i) {
        char route[96];
        const int ok = gemm_both(&shim, &real, h, s, &g[i], route, sizeof route);
        CUDA_OK(cudaStreamSynchronize(s));
        const double rel = gemm_diff(&g[i]);
        char line[256];
        snprintf(line, sizeof line, "soak: %s after the soak: status %s, route %s, rel. diff vs "
                 "cuBLAS %.3g", g[i].op->name, ok ? "ok" : "BAD", route, rel);
        printf("%s\n", line);
        count(ok && rel <= tolerance_of(g[i].op->t), line);
    }
    for (int i = 0; i < N_SOAK_OPS; ++i)
        gemm_free(&g[i]);
    cublasDestroy(h);
    cudaStreamDestroy(s);
    return summary();
}

/* ---------------- part 3: fork ---------------- */

/* A process's GEMMs compared with the real cuBLAS; returns the failures. */
static int fork_gemms(const char *who, uint64_t seed, int n_ops)
{
    const api_t shim = shim_api(), real = real_api();
    cublasHandle_t h;
    cudaStream_t s;
    handle_on_stream(&h, &s);
    gu_seed(seed);
    int fails = 0;
    for (int i = 0; i < n_ops; ++i) {
        gemm_t g;
        gemm_init(&g, &fork_ops[i]);
        char route[96];
        int ok = 1;
        for (int rep = 0; rep < 3; ++rep) /* the last one's result is compared */
            ok &= gemm_both(&shim, &real, h, s, &g, route, sizeof route);
        CUDA_OK(cudaStreamSynchronize(s));
        const double rel = gemm_diff(&g);
        const int good = ok && rel <= tolerance_of(g.op->t);
        printf("%s%s (pid %ld): %s: status %s, route %s, rel. diff vs cuBLAS %.3g\n",
               good ? "" : "FAIL: ", who, (long)getpid(), g.op->name, ok ? "ok" : "BAD", route,
               rel);
        fails += !good;
        gemm_free(&g);
    }
    cublasDestroy(h);
    cudaStreamDestroy(s);
    return fails;
}

enum { FORK_CHILDREN = 3, FORK_TIMEOUT_S = 120 };

/* The children not reaped yet (0: reaped). At the timeout the alarm kills
 * them, so the parent's waitpid returns whatever they were doing. */
static volatile pid_t kids_alive[FORK_CHILDREN];
static volatile sig_atomic_t alarm_rang;
static void on_alarm(int sig)
{
    (void)sig;
    alarm_rang = 1;
    for (int i = 0; i < FORK_CHILDREN; ++i)
        if (kids_alive[i] > 0)
            kill(kids_alive[i], SIGKILL); /* async-signal-safe */
}

static int part_fork(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* Is there a GPU? Asked in a child: CUDA initialised in the parent
     * would not work in the children it forks. */
    fflush(NULL);
    pid_t probe = fork();
    if (probe < 0) {
        perror("fork");
        return 1;
    }
    if (probe == 0) {
        gpu_require_or_skip("test_load fork"); /* exits 77 (or 1) without a GPU */
        fflush(NULL);
        _exit(0);
    }
    int st;
    while (waitpid(probe, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return WIFEXITED(st) && WEXITSTATUS(st) == GPU_SKIP ? GPU_SKIP : 1;

    const uint64_t seed = gu_seed_init();
    /* the shim's lazy initialisation (configuration, log file) without CUDA */
    mode_fn get_mode = (mode_fn)dlsym(RTLD_DEFAULT, "gemmshim_get_mode");
    if (get_mode)
        printf("fork: the shim initialised in the parent (mode %d), no CUDA yet (seed 0x%llx)\n",
               (int)get_mode(), (unsigned long long)seed);
    else
        printf("fork: no shim loaded (gemmshim_get_mode not found): plain cuBLAS (seed 0x%llx)\n",
               (unsigned long long)seed);

    pid_t kids[FORK_CHILDREN];
    for (int i = 0; i < FORK_CHILDREN; ++i) {
        fflush(NULL);
        kids[i] = fork();
        if (kids[i] < 0) {
            perror("fork");
            return 1;
        }
        if (kids[i] == 0) {
            char who[32];
            snprintf(who, sizeof who, "fork: child %d", i);
            const int fails = fork_gemms(who, seed + 0x100 * (uint64_t)(i + 1), N_FORK_OPS);
            printf("fork: child %d (pid %ld): %d passed, %d failed\n", i, (long)getpid(),
                   N_FORK_OPS - fails, fails);
            fflush(NULL);
            _exit(fails ? 1 : 0);
        }
    }
    printf("fork pids: parent %ld children", (long)getpid());
    for (int i = 0; i < FORK_CHILDREN; ++i)
        printf(" %ld", (long)kids[i]);
    printf("\n");

    /* wait for all, at most FORK_TIMEOUT_S in all: then the alarm kills
     * those still running (hung) */
    for (int i = 0; i < FORK_CHILDREN; ++i)
        kids_alive[i] = kids[i];
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm(FORK_TIMEOUT_S);
    for (int i = 0; i < FORK_CHILDREN; ++i) {
        int s = -1;
        pid_t r;
        while ((r = waitpid(kids[i], &s, 0)) < 0 && errno == EINTR)
            ;
        kids_alive[i] = 0;
        char what[160];
        if (r != kids[i])
            snprintf(what, sizeof what, "fork: child %d (pid %ld): no exit status (%s)", i,
                     (long)kids[i], strerror(errno));
        else if (WIFEXITED(s))
            snprintf(what, sizeof what, "fork: child %d (pid %ld) exited with %d", i,
                     (long)kids[i], WEXITSTATUS(s));
        else if (WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL && alarm_rang)
            snprintf(what, sizeof what, "fork: child %d (pid %ld) still running after %d s: "
                     "hung, killed", i, (long)kids[i], FORK_TIMEOUT_S);
        else if (WIFSIGNALED(s))
            snprintf(what, sizeof what, "fork: child %d (pid %ld) killed by signal %d (%s)", i,
                     (long)kids[i], WTERMSIG(s), strsignal(WTERMSIG(s)));
        else
            snprintf(what, sizeof what, "fork: child %d (pid %ld): status 0x%x", i,
                     (long)kids[i], s);
        printf("%s\n", what);
        count(r == kids[i] && WIFEXITED(s) && WEXITSTATUS(s) == 0, what);
    }
    alarm(0);

    /* the parent's first CUDA use, after its children's; a hang here is
     * ended by the alarm's default action (the test fails) */
    signal(SIGALRM, SIG_DFL);
    alarm(FORK_TIMEOUT_S);
    const int fails = fork_gemms("fork: parent", seed, 1);
    alarm(0);
    count(!fails, "fork: the parent's GEMM after its children's");
    return summary();
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *part = argc > 1 ? argv[1] : "";
    if (!strcmp(part, "load"))
        return part_load();
    if (!strcmp(part, "soak"))
        return part_soak();
    if (!strcmp(part, "fork"))
        return part_fork();
    fprintf(stderr, "usage: %s load|soak|fork\n", argv[0]);
    return 2;
}
