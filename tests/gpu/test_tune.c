/* Tuned routing on a GPU (GEMMSHIM_TUNE), as an application sees it.
 *
 *   test_tune online   each case called repeatedly with the shim tuning:
 *                      every result (sampled elements against an fp64 host
 *                      reference) within the case's tolerance, A and B never
 *                      written, C only by the call itself; then several
 *                      threads on their own streams call one new signature
 *                      at once (one stream tunes it, the others forward).
 *   test_tune cache    every case once from the warm cache: prints a hash of
 *                      each C (two runs must print the same), and replays a
 *                      graph captured after tuning, equal to the direct call.
 * The route each case ends on is printed (gemmshim_last_route). */
#include "gpu_util.h"

#include <pthread.h>

typedef struct tcase {
    const char *name;
    int entry;            /* 0 GemmEx, 1 Sgemm, 2 GemmStridedBatchedEx */
    cublasOperation_t ta, tb;
    int m, n, k, batch;
    cudaDataType ab, c;
    int tf32;             /* handle math mode TF32 */
    float alpha, beta;
    int device_scalars;
    double tol;           /* relative to max |C|, per sampled element */
} tcase_t;

static const tcase_t cases[] = {
    {"bf16 TN 4096x4096x1024", 0, CUBLAS_OP_T, CUBLAS_OP_N, 4096, 4096, 1024, 1, CUDA_R_16BF,
     CUDA_R_16BF, 0, 1.0f, 0.0f, 0, 1.6e-2},
    {"fp16 NN 1024x4096x1024 beta=1", 0, CUBLAS_OP_N, CUBLAS_OP_N, 1024, 4096, 1024, 1,
     CUDA_R_16F, CUDA_R_16F, 0, 1.0f, 1.0f, 0, 4e-3},
    {"fp32 NN 1023x1025x1027", 1, CUBLAS_OP_N, CUBLAS_OP_N, 1023, 1025, 1027, 1, CUDA_R_32F,
     CUDA_R_32F, 0, 1.0f, 0.0f, 0, 1e-5},
    {"fp32 TF32 NT 2048x2048x2048", 1, CUBLAS_OP_N, CUBLAS_OP_T, 2048, 2048, 2048, 1, CUDA_R_32F,
     CUDA_R_32F, 1, 1.0f, 0.0f, 0, 5e-3},
    {"bf16 NT 512x512x256 x8 beta=0.5 device scalars", 2, CUBLAS_OP_N, CUBLAS_OP_T, 512, 512, 256,
     8, CUDA_R_16BF, CUDA_R_32F, 0, 0.75f, 0.5f, 1, 1e-4},
};
enum { N_CASES = sizeof cases / sizeof cases[0], SAMPLES = 512 };

typedef struct data {
    void *A, *B, *C, *C0;
    float *dscal; /* alpha, beta on the device */
    size_t a_el, b_el, c_el;
    void *hA, *hB, *hC0;
    uint64_t a_hash, b_hash;
} data_t;

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t dev_hash(const void *d, size_t bytes)
{
    void *h = malloc(bytes);
    CUDA_OK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
    uint64_t x = fnv(h, bytes);
    free(h);
    return x;
}

static void setup(const tcase_t *t, data_t *d)
{
    const int64_t rows_a = t->ta == CUBLAS_OP_N ? t->m : t->k,
                  cols_a = t->ta == CUBLAS_OP_N ? t->k : t->m;
    const int64_t rows_b = t->tb == CUBLAS_OP_N ? t->k : t->n,
                  cols_b = t->tb == CUBLAS_OP_N ? t->n : t->k;
    d->a_el = (size_t)rows_a * cols_a * t->batch;
    d->b_el = (size_t)rows_b * cols_b * t->batch;
    d->c_el = (size_t)t->m * t->n * t->batch;
    d->hA = malloc(d->a_el * gu_esize(t->ab));
    d->hB = malloc(d->b_el * gu_esize(t->ab));
    d->hC0 = malloc(d->c_el * gu_esize(t->c));
    gu_fill_random(d->hA, d->a_el, t->ab);
    gu_fill_random(d->hB, d->b_el, t->ab);
    gu_fill_random(d->hC0, d->c_el, t->c);
    CUDA_OK(cudaMalloc(&d->A, d->a_el * gu_esize(t->ab)));
    CUDA_OK(cudaMalloc(&d->B, d->b_el * gu_esize(t->ab)));
    CUDA_OK(cudaMalloc(&d->C, d->c_el * gu_esize(t->c)));
    CUDA_OK(cudaMalloc(&d->C0, d->c_el * gu_esize(t->c)));
    CUDA_OK(cudaMalloc((void **)&d->dscal, 2 * sizeof(float)));
    const float sc[2] = {t->alpha, t->beta};
    CUDA_OK(cudaMemcpy(d->dscal, sc, sizeof sc, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d->A, d->hA, d->a_el * gu_esize(t->ab), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d->B, d->hB, d->b_el * gu_esize(t->ab), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d->C0, d->hC0, d->c_el * gu_esize(t->c), cudaMemcpyHostToDevice));
    d->a_hash = fnv(d->hA, d->a_el * gu_esize(t->ab));
    d->b_hash = fnv(d->hB, d->b_el * gu_esize(t->ab));
}

static void teardown(data_t *d)
{
    cudaFree(d->A), cudaFree(d->B), cudaFree(d->C), cudaFree(d->C0), cudaFree(d->dscal);
    free(d->hA), free(d->hB), free(d->hC0);
}

static cublasStatus_t call(cublasHandle_t h, const tcase_t *t, const data_t *d)
{
    const void *alpha = t->device_scalars ? (const void *)d->dscal : (const void *)&t->alpha;
    const void *beta = t->device_scalars ? (const void *)(d->dscal + 1) : (const void *)&t->beta;
    cublasSetPointerMode(h, t->device_scalars ? CUBLAS_POINTER_MODE_DEVICE
                                              : CUBLAS_POINTER_MODE_HOST);
    cublasSetMathMode(h, t->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    const int lda = t->ta == CUBLAS_OP_N ? t->m : t->k, ldb = t->tb == CUBLAS_OP_N ? t->k : t->n;
    switch (t->entry) {
    case 1:
        return cublasSgemm(h, t->ta, t->tb, t->m, t->n, t->k, alpha, d->A, lda, d->B, ldb, beta,
                           d->C, t->m);
    case 2:
        return cublasGemmStridedBatchedEx(
            h, t->ta, t->tb, t->m, t->n, t->k, alpha, d->A, t->ab, lda,
            (long long)lda * (t->ta == CUBLAS_OP_N ? t->k : t->m), d->B, t->ab, ldb,
            (long long)ldb * (t->tb == CUBLAS_OP_N ? t->n : t->k), beta, d->C, t->c, t->m,
            (long long)t->m * t->n, t->batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    default:
        return cublasGemmEx(h, t->ta, t->tb, t->m, t->n, t->k, alpha, d->A, t->ab, lda, d->B,
                            t->ab, ldb, beta, d->C, t->c, t->m, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT);
    }
}

/* Sampled elements of C against fp64 dot products: the largest error
 * relative to the largest sampled |reference|. */
static double check(const tcase_t *t, const data_t *d)
{
    void *hC = malloc(d->c_el * gu_esize(t->c));
    CUDA_OK(cudaMemcpy(hC, d->C, d->c_el * gu_esize(t->c), cudaMemcpyDeviceToHost));
    const int lda = t->ta == CUBLAS_OP_N ? t->m : t->k, ldb = t->tb == CUBLAS_OP_N ? t->k : t->n;
    const size_t sa = (size_t)lda * (t->ta == CUBLAS_OP_N ? t->k : t->m),
                 sb = (size_t)ldb * (t->tb == CUBLAS_OP_N ? t->n : t->k),
                 sc = (size_t)t->m * t->n;
    double worst = 0.0, scale = 0.0;
    for (int s = 0; s < SAMPLES; ++s) {
        const int64_t i = gu_int(0, t->m - 1), j = gu_int(0, t->n - 1), b = gu_int(0, t->batch - 1);
        double acc = 0.0;
        for (int64_t p = 0; p < t->k; ++p) {
            const size_t ai = b * sa + (t->ta == CUBLAS_OP_N ? i + p * lda : p + i * lda);
            const size_t bi = b * sb + (t->tb == CUBLAS_OP_N ? p + j * ldb : j + p * ldb);
            acc += gu_get(d->hA, ai, t->ab) * gu_get(d->hB, bi, t->ab);
        }
        const size_t ci = b * sc + i + j * (size_t)t->m;
        const double ref = t->alpha * acc + (t->beta != 0.0f ? t->beta * gu_get(d->hC0, ci, t->c) : 0.0);
        const double got = gu_get(hC, ci, t->c);
        if (!isfinite(got))
            worst = INFINITY;
        worst = fmax(worst, fabs(got - ref));
        scale = fmax(scale, fabs(ref));
    }
    free(hC);
    return scale > 0.0 ? worst / scale : worst;
}

static int inputs_intact(const tcase_t *t, const data_t *d)
{
    return dev_hash(d->A, d->a_el * gu_esize(t->ab)) == d->a_hash &&
           dev_hash(d->B, d->b_el * gu_esize(t->ab)) == d->b_hash;
}

static void last_route(char *buf, size_t n)
{
    int (*f)(char *, size_t) = (int (*)(char *, size_t))dlsym(RTLD_DEFAULT, "gemmshim_last_route");
    snprintf(buf, n, "?");
    if (f)
        f(buf, n);
}

static int run_online(cublasHandle_t h, int calls)
{
    int fails = 0;
    for (int ci = 0; ci < N_CASES; ++ci) {
        const tcase_t *t = &cases[ci];
        data_t d;
        setup(t, &d);
        double worst = 0.0;
        char route[128] = "";
        for (int it = 0; it < calls; ++it) {
            CUDA_OK(cudaMemcpy(d.C, d.C0, d.c_el * gu_esize(t->c), cudaMemcpyDeviceToDevice));
            CUBLAS_OK(call(h, t, &d));
            last_route(route, sizeof route);
            CUDA_OK(cudaDeviceSynchronize());
            if (it % 8 == 7 || it == calls - 1) /* results while tuning and after */
                worst = fmax(worst, check(t, &d));
        }
        const int intact = inputs_intact(t, &d);
        const int ok = worst <= t->tol && intact;
        printf("%s: online %s: %d calls, worst sampled error %.3g (tolerance %.3g), inputs %s, "
               "route %s\n", ok ? "ok" : "FAIL", t->name, calls, worst, t->tol,
               intact ? "intact" : "WRITTEN", route);
        fails += !ok;
        teardown(&d);
    }
    return fails;
}

typedef struct thr {
    int id, calls, fails;
    double worst;
} thr_t;

static const tcase_t thread_case = {"bf16 TN 2048x2048x512 (threads)", 0, CUBLAS_OP_T, CUBLAS_OP_N,
                                    2048, 2048, 512, 1, CUDA_R_16BF, CUDA_R_16BF, 0, 1.0f, 0.0f, 0,
                                    1.6e-2};
static data_t thread_data;

static void *thread_main(void *arg)
{
    thr_t *me = arg;
    cublasHandle_t h;
    cudaStream_t s;
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUBLAS_OK(cublasCreate(&h));
    CUBLAS_OK(cublasSetStream(h, s));
    data_t d = thread_data; /* shared A, B; an own C */
    CUDA_OK(cudaMalloc(&d.C, d.c_el * gu_esize(thread_case.c)));
    for (int it = 0; it < me->calls; ++it) {
        CUBLAS_OK(call(h, &thread_case, &d));
        if (it % 16 == 15) {
            CUDA_OK(cudaStreamSynchronize(s));
            me->worst = fmax(me->worst, check(&thread_case, &d));
        }
    }
    CUDA_OK(cudaStreamSynchronize(s));
    cudaFree(d.C);
    cublasDestroy(h);
    cudaStreamDestroy(s);
    return NULL;
}

static int run_threads(int n_threads, int calls)
{
    setup(&thread_case, &thread_data);
    pthread_t th[16];
    thr_t st[16];
    for (int i = 0; i < n_threads; ++i) {
        st[i] = (thr_t){i, calls, 0, 0.0};
        pthread_create(&th[i], NULL, thread_main, &st[i]);
    }
    double worst = 0.0;
    for (int i = 0; i < n_threads; ++i) {
        pthread_join(th[i], NULL);
        worst = fmax(worst, st[i].worst);
    }
    const int intact = inputs_intact(&thread_case, &thread_data);
    const int ok = worst <= thread_case.tol && intact;
    printf("%s: online %s: %d threads x %d calls, worst sampled error %.3g, inputs %s\n",
           ok ? "ok" : "FAIL", thread_case.name, n_threads, calls, worst,
           intact ? "intact" : "WRITTEN");
    teardown(&thread_data);
    return !ok;
}

static int run_cache(cublasHandle_t h)
{
    int fails = 0;
    for (int ci = 0; ci < N_CASES; ++ci) {
        const tcase_t *t = &cases[ci];
        data_t d;
        setup(t, &d);
        CUDA_OK(cudaMemcpy(d.C, d.C0, d.c_el * gu_esize(t->c), cudaMemcpyDeviceToDevice));
        CUBLAS_OK(call(h, t, &d));
        char route[128];
        last_route(route, sizeof route);
        CUDA_OK(cudaDeviceSynchronize());
        const double err = check(t, &d);
        const uint64_t direct = dev_hash(d.C, d.c_el * gu_esize(t->c));
        /* the same call captured in a graph and replayed */
        cudaStream_t s;
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        CUBLAS_OK(cublasSetStream(h, s));
        CUDA_OK(cudaMemcpy(d.C, d.C0, d.c_el * gu_esize(t->c), cudaMemcpyDeviceToDevice));
        CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        CUBLAS_OK(call(h, t, &d));
        CUDA_OK(cudaStreamEndCapture(s, &g));
        CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
        CUDA_OK(cudaGraphLaunch(ge, s));
        CUDA_OK(cudaStreamSynchronize(s));
        const uint64_t replay = dev_hash(d.C, d.c_el * gu_esize(t->c));
        cudaGraphExecDestroy(ge);
        cudaGraphDestroy(g);
        CUBLAS_OK(cublasSetStream(h, 0));
        cudaStreamDestroy(s);
        const int ok = err <= t->tol && replay == direct;
        printf("%s: cache %s: error %.3g, route %s, graph replay %s\n", ok ? "ok" : "FAIL",
               t->name, err, route, replay == direct ? "equal" : "DIFFERS");
        printf("hash %s %016llx\n", t->name, (unsigned long long)direct);
        fails += !ok;
        teardown(&d);
    }
    return fails;
}

int main(int argc, char **argv)
{
    gpu_require_or_skip("test_tune");
    const char *what = argc > 1 ? argv[1] : "online";
    gu_seed(0x74756e65ull);
    cublasHandle_t h;
    CUBLAS_OK(cublasCreate(&h));
    int fails;
    if (!strcmp(what, "cache"))
        fails = run_cache(h);
    else
        fails = run_online(h, gu_env_int("TUNE_CALLS", 160)) +
                run_threads(gu_env_int("TUNE_THREADS", 4), gu_env_int("TUNE_THREAD_CALLS", 96));
    cublasDestroy(h);
    printf("test_tune %s: %s\n", what, fails ? "FAILED" : "passed");
    return fails ? 1 : 0;
}
