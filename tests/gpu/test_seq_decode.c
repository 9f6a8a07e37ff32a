/* A Llama-3-8B decode step in a CUDA graph, for graphs tuned as sequences
 * (run_gpu_test.sh tune_seq; docs/TUNING.md, "Graphs tuned as sequences").
 * Each layer's projections, bf16, TN as PyTorch issues them (weights
 * transposed, tokens as columns), each layer its own weights:
 *   qkv  4096 -> 6144     o  4096 -> 4096
 *   gate+up  4096 -> 28672     down  14336 -> 4096
 * for batches of 1, 4, 16 and 64 tokens, one graph per batch.
 *
 *   test_seq_decode record [LAYERS] [REPLAYS]
 *       per batch: the step once eagerly (the warm-up frameworks do), then
 *       captured and its graph replayed REPLAYS times (default 4, 20): what
 *       `gemmshim record` turns into one sequence per batch.
 *   test_seq_decode check [LAYERS] [MIN_RATIO]
 *       under the shim with a tune cache (GEMMSHIM_TUNE=cache): per batch
 *       one graph captured with every signature held at its prior (the
 *       routing table's routes: gemmshim_hold_prior) and one with the
 *       cache's routes, replayed in interleaved rounds (the order
 *       alternating, each round a block of replays of each after an
 *       untimed one); the median over rounds of table / tuned per step
 *       must be at least MIN_RATIO (default 0.99: a graph replay's time
 *       moves by about 1% run to run). Prints both times and the ratio
 *       per batch; exit 1 when a batch is below it.
 * Exit 77 without a GPU. */
#include "gpu_util.h"

#include "gemmshim.h"

enum { HIDDEN = 4096, QKV = 6144, FFN = 14336, BATCHES = 4, ROUNDS = 21, TILE = 1 << 20 };
static const int batches[BATCHES] = {1, 4, 16, 64};

typedef struct layer {
    void *qkv, *o, *gate_up, *down; /* weights, k x m (transposed) */
} layer_t;

typedef struct model {
    int layers;
    layer_t *w;
    void *x, *y_qkv, *attn, *y_o, *h, *y_gu, *act, *y_down; /* activations, 64 tokens */
    cublasHandle_t handle;
    cudaStream_t s;
    void *tile;
} model_t;

/* n bf16 values on the device: a random tile, repeated (random weights of
 * every layer, made in a moment). */
static void *dev_fill(model_t *md, size_t n)
{
    void *d;
    const size_t bytes = n * 2;
    CUDA_OK(cudaMalloc(&d, bytes));
    for (size_t off = 0; off < bytes; off += (size_t)TILE * 2) {
        const size_t len = bytes - off < (size_t)TILE * 2 ? bytes - off : (size_t)TILE * 2;
        CUDA_OK(cudaMemcpy((char *)d + off, md->tile, len, cudaMemcpyDeviceToDevice));
    }
    return d;
}

static void setup(model_t *md, int layers)
{
    memset(md, 0, sizeof *md);
    md->layers = layers;
    gu_seed(12345);
    md->tile = gu_dev_random(TILE, CUDA_R_16BF);
    md->w = calloc((size_t)layers, sizeof *md->w);
    for (int l = 0; l < layers; ++l) {
        md->w[l].qkv = dev_fill(md, (size_t)HIDDEN * QKV);
        md->w[l].o = dev_fill(md, (size_t)HIDDEN * HIDDEN);
        md->w[l].gate_up = dev_fill(md, (size_t)HIDDEN * 2 * FFN);
        md->w[l].down = dev_fill(md, (size_t)FFN * HIDDEN);
    }
    md->x = dev_fill(md, (size_t)HIDDEN * 64);
    md->attn = dev_fill(md, (size_t)HIDDEN * 64);
    md->h = dev_fill(md, (size_t)HIDDEN * 64);
    md->act = dev_fill(md, (size_t)FFN * 64);
    md->y_qkv = dev_fill(md, (size_t)QKV * 64);
    md->y_o = dev_fill(md, (size_t)HIDDEN * 64);
    md->y_gu = dev_fill(md, (size_t)2 * FFN * 64);
    md->y_down = dev_fill(md, (size_t)HIDDEN * 64);
    CUBLAS_OK(cublasCreate(&md->handle));
    CUDA_OK(cudaStreamCreateWithFlags(&md->s, cudaStreamNonBlocking));
    CUBLAS_OK(cublasSetStream(md->handle, md->s));
    /* cuBLAS needs a workspace of its own to be captured without allocating */
    void *ws;
    CUDA_OK(cudaMalloc(&ws, 32 << 20));
    CUBLAS_OK(cublasSetWorkspace(md->handle, ws, 32 << 20));
}

/* y (m x n) = W^T x: W is k x m, x is k x n. */
static void proj(model_t *md, const void *W, const void *x, void *y, int m, int n, int k)
{
    const float one = 1.f, zero = 0.f;
    CUBLAS_OK(cublasGemmEx(md->handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, W, CUDA_R_16BF, k,
                           x, CUDA_R_16BF, k, &zero, y, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT));
}

/* The shim's gemmshim_last_tuning (check only): counts the GEMMs a tuned
 * decision serves. */
static gemmshim_tuning_t (*last_tuning)(void);

/* One decode step's projections for n tokens; the number a tuned
 * decision served. */
static int step(model_t *md, int n)
{
    int tuned = 0;
    for (int l = 0; l < md->layers; ++l) {
        const layer_t *w = &md->w[l];
        const void *W[4] = {w->qkv, w->o, w->gate_up, w->down};
        const void *x[4] = {md->x, md->attn, md->h, md->act};
        void *y[4] = {md->y_qkv, md->y_o, md->y_gu, md->y_down};
        const int m[4] = {QKV, HIDDEN, 2 * FFN, HIDDEN}, k[4] = {HIDDEN, HIDDEN, HIDDEN, FFN};
        for (int p = 0; p < 4; ++p) {
            proj(md, W[p], x[p], y[p], m[p], n, k[p]);
            tuned += last_tuning && last_tuning() == GEMMSHIM_TUNING_DECIDED;
        }
    }
    return tuned;
}

/* The step once eagerly (modules load, workspaces are made outside the
 * capture; *tuned: its GEMMs a tuned decision served), then captured. */
static cudaGraphExec_t capture(model_t *md, int n, int *tuned)
{
    cudaGraph_t g;
    cudaGraphExec_t ge;
    *tuned = step(md, n);
    CUDA_OK(cudaStreamSynchronize(md->s));
    CUDA_OK(cudaStreamBeginCapture(md->s, cudaStreamCaptureModeThreadLocal));
    step(md, n);
    CUDA_OK(cudaStreamEndCapture(md->s, &g));
    CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
    CUDA_OK(cudaGraphUpload(ge, md->s));
    cudaGraphDestroy(g);
    return ge;
}

static int record(model_t *md, int replays)
{
    for (int b = 0; b < BATCHES; ++b) {
        int tuned;
        cudaGraphExec_t ge = capture(md, batches[b], &tuned);
        for (int r = 0; r < replays; ++r)
            CUDA_OK(cudaGraphLaunch(ge, md->s));
        CUDA_OK(cudaStreamSynchronize(md->s));
        cudaGraphExecDestroy(ge);
        printf("test_seq_decode: batch %d: %d projections captured, replayed %d times\n",
               batches[b], 4 * md->layers, replays);
    }
    return 0;
}

static int ascending(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, ascending);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The graphs' time per replay in interleaved rounds: t[g][round]. */
static void time_pair(model_t *md, cudaGraphExec_t ge[2], double t[2][ROUNDS])
{
    cudaEvent_t ev[4];
    for (int i = 0; i < 4; ++i)
        CUDA_OK(cudaEventCreate(&ev[i]));
    float ms = 0.f;
    for (int g = 0; g < 2; ++g) /* warm */
        CUDA_OK(cudaGraphLaunch(ge[g], md->s));
    CUDA_OK(cudaEventRecord(ev[0], md->s));
    CUDA_OK(cudaGraphLaunch(ge[0], md->s));
    CUDA_OK(cudaEventRecord(ev[1], md->s));
    CUDA_OK(cudaEventSynchronize(ev[1]));
    CUDA_OK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
    /* blocks of about 5 ms */
    const int reps = ms > 0.f ? (int)fmin(1000.0, fmax(1.0, ceil(5.0 / ms))) : 100;
    for (int r = 0; r < ROUNDS; ++r) {
        const int first = r & 1;
        CUDA_OK(cudaGraphLaunch(ge[first], md->s)); /* untimed: the GPU busy while the host queues */
        for (int i = 0; i < 2; ++i) {
            const int g = first ^ i;
            CUDA_OK(cudaEventRecord(ev[2 * g], md->s));
            for (int k = 0; k < reps; ++k)
                CUDA_OK(cudaGraphLaunch(ge[g], md->s));
            CUDA_OK(cudaEventRecord(ev[2 * g + 1], md->s));
        }
        CUDA_OK(cudaStreamSynchronize(md->s));
        for (int g = 0; g < 2; ++g) {
            CUDA_OK(cudaEventElapsedTime(&ms, ev[2 * g], ev[2 * g + 1]));
            t[g][r] = (double)ms / reps;
        }
    }
    for (int i = 0; i < 4; ++i)
        cudaEventDestroy(ev[i]);
}

static int check(model_t *md, double min_ratio)
{
    int (*hold)(const char *, int);
    *(void **)&hold = dlsym(RTLD_DEFAULT, "gemmshim_hold_prior");
    *(void **)&last_tuning = dlsym(RTLD_DEFAULT, "gemmshim_last_tuning");
    if (!hold || !last_tuning) {
        printf("FAIL: test_seq_decode check: run it under the shim with a tune cache "
               "(gemmshim run --cache FILE -- ...)\n");
        return 1;
    }
    int below = 0;
    for (int b = 0; b < BATCHES; ++b) {
        const int n = batches[b];
        cudaGraphExec_t ge[2];
        int tuned;
        if (hold(NULL, 1) != GEMMSHIM_OK) {
            printf("FAIL: gemmshim_hold_prior(NULL, 1)\n");
            return 1;
        }
        ge[0] = capture(md, n, &tuned); /* the table's routes */
        hold(NULL, 0);
        ge[1] = capture(md, n, &tuned); /* the cache's */
        double t[2][ROUNDS], ratio[ROUNDS];
        time_pair(md, ge, t);
        for (int r = 0; r < ROUNDS; ++r)
            ratio[r] = t[0][r] / t[1][r];
        const double rm = median(ratio, ROUNDS);
        const double q1 = ratio[ROUNDS / 4], q3 = ratio[3 * ROUNDS / 4]; /* sorted by median() */
        const double table = median(t[0], ROUNDS), cache = median(t[1], ROUNDS);
        const int ok = rm >= min_ratio;
        below += !ok;
        printf("test_seq_decode: batch %2d: table's routes %8.1f us a step, the cache's %8.1f us: "
               "%.3fx (rounds' quartiles %.3f-%.3f; %d of %d GEMMs served by a tuned decision)%s\n",
               n, 1e3 * table, 1e3 * cache, rm, q1, q3, tuned, 4 * md->layers,
               ok ? "" : "  BELOW the bar");
        cudaGraphExecDestroy(ge[0]);
        cudaGraphExecDestroy(ge[1]);
    }
    printf("%s: test_seq_decode: the cache's graphs at least %.2fx the table's in %d of %d batches\n",
           below ? "FAIL" : "PASS", min_ratio, BATCHES - below, BATCHES);
    return below ? 1 : 0;
}

int main(int argc, char **argv)
{
    gpu_require_or_skip("test_seq_decode");
    if (argc < 2 || (strcmp(argv[1], "record") && strcmp(argv[1], "check"))) {
        fprintf(stderr, "usage: test_seq_decode record [LAYERS] [REPLAYS] | check [LAYERS] [MIN_RATIO]\n");
        return 2;
    }
    const int layers = argc > 2 ? atoi(argv[2]) : 4;
    if (layers < 1 || layers > 32) {
        fprintf(stderr, "test_seq_decode: LAYERS in 1..32\n");
        return 2;
    }
    model_t md;
    setup(&md, layers);
    if (!strcmp(argv[1], "record"))
        return record(&md, argc > 3 ? atoi(argv[3]) : 20);
    return check(&md, argc > 3 ? atof(argv[3]) : 0.99);
}
