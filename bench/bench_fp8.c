/* FP8 cublasLtMatmul A/B: the calls torch._scaled_mm makes (A the weight,
 * transposed: TN, column-major; e4m3 or e5m2 operands; A and B scales as
 * device pointers; D bf16 in place, beta 0; a 32 MiB workspace; the
 * algorithm left NULL), timed three ways in the same process, on the same
 * buffers:
 *
 *   shim       the global cublasLtMatmul (libgemmshim.so, preloaded), algo
 *              NULL: the shim's decision applies (under GEMMSHIM_TUNE=cache,
 *              a tuned one of cuBLASLt's own algorithms, or the call as made);
 *   as_called  the real cublasLtMatmul (looked up past the shim), algo NULL:
 *              the call as the application made it;
 *   best8      the real cublasLtMatmul with each of the first 8 algorithms
 *              the real cublasLtMatmulAlgoGetHeuristic returns for the same
 *              descriptors (32 MiB workspace), each timed briefly, the
 *              fastest kept (its index in the CSV) and timed in the rounds.
 *
 * Method (bench_ab's, bench/NOTES.md): fresh random FP8 codes (finite,
 * nonzero, |x| in [2^-6, 4]) and scales in [0.5, 2]; as many buffer sets
 * (operands, scales, and a descriptor holding that set's scale pointers) as
 * make 3x the L2, cycled call by call, so operands come from HBM; warm-up;
 * then rounds that rotate which side goes first, each side timing a run of
 * calls (about 2 ms of work, at least one pass over the sets) with CUDA
 * events; the median per side. Speedups are the other side's time over the
 * shim's (shim/as_called = as_called_ms / shim_ms, shim/best8 = best8_ms /
 * shim_ms) and best8/as_called = as_called_ms / best8_ms. The shim's D is
 * compared with as_called's on the same inputs (relative Frobenius
 * difference), and the route that served the shim side is read from the
 * shim's log (the lines it wrote while this row ran). Decode rows (n <= 64)
 * also give each side's weight TB/s (A's bytes over the time).
 *
 * Scale modes (cublasLtMatmulMatrixScale_t; A is the weight, B the
 * activations or the gradient):
 *   tensor   A and B SCALAR_32F: one float each;
 *   row      A and B OUTER_VEC_32F: m floats for A, n for B (cuBLAS >= 12.9);
 *   block    A BLK128x128_32F, B VEC128_32F: DeepSeek-style 128x128 weight
 *            blocks and 1x128 activation blocks, as torch._scaled_mm passes
 *            them (Hopper, cuBLAS >= 12.9);
 *   block-t  A VEC128_32F, B BLK128x128_32F (the orientation of NVIDIA's
 *            LtBlk128x128Fp8Matmul sample);
 *   vec128   A and B VEC128_32F.
 * Scale tensor sizes as NVIDIA's cuBLASLt samples allocate them, for a
 * matrix stored inner x outer (here inner = k for both, outer = m for A
 * and n for B): VEC128 ceil(inner/128) x outer floats, BLK128x128
 * roundup(ceil(inner/128), 4) x ceil(outer/128). The values are random, so
 * their order within the tensor does not matter here. A mode cuBLASLt
 * rejects gives a "skipped" row with its status.
 *
 * Suites: fp8 (Llama-3-8B and -70B projections, forward e4m3 x e4m3 at
 * 4096 / 8192 / 16384 tokens, backward dgrad and wgrad with the gradient
 * in e5m2, each scale mode, fast accumulation on and off: a subset), fp8-decode
 * (n = 1 ... 64 at three weight shapes, tensorwise and rowwise), fp8-all.
 * --shapes FILE: one shape a line, "#" comments,
 *     TYPES SCALES ACCUM M N K
 *   TYPES e4m3 (both), e4m3xe5m2 or e5m2xe4m3 (A x B); SCALES tensor, row,
 *   block, block-t or vec128; ACCUM fast or exact.
 *
 * --shim-only N (the tuning pass of bench/fp8_ab.sh): per row, only the
 * shim side's calls, untimed, until its log says the signature is no
 * longer tuning (decided, or not tunable) or N calls were made.
 *
 * --list prints the rows as such a list (suite and op in its comments) and
 * exits, on any machine.
 *
 * Rows with n > 64 also time the tensor probe (bench/tensor_probe.cu): the
 * call's multiply-adds as FP8 wgmmas and nothing else, spread evenly over
 * the SMs, in the same rounds. tensor_tflops is the most a kernel could
 * reach on that call at the clock the GPU keeps, and ceiling_vs_as_called
 * (as_called_ms / tensor_ms) the most any kernel could gain over cuBLASLt
 * as called.
 *
 * --graph times each side's run of calls as one CUDA graph replay (captured
 * once per row; the CSV's timing column says graph, else stream): what a
 * decode step captured by a serving engine sees, without the host's time
 * per call (host_us columns empty).
 *
 * usage: bench_fp8 [--suite fp8|fp8-decode|fp8-all | --shapes FILE] [--csv FILE]
 *                  [--rounds N] [--shim-only N] [--list] [--graph]
 * Exit 77 without a GPU (or one below compute capability 8.9). */
#include "../tests/gpu/gpu_util.h"
#include "../tests/gpu/gu_fp8.h"

#include <cublasLt.h>
#include <sys/stat.h>

#define WS_BYTES (32u << 20) /* the workspace every side gets, as PyTorch gives cuBLASLt */
#define BEST_OF 8            /* heuristic algorithms tried for best8 */
#define MAX_SETS 32

enum { SC_TENSOR, SC_ROW, SC_BLOCK, SC_BLOCK_T, SC_VEC128, SC_COUNT };

static const struct scales {
    const char *name;
    int32_t a, b; /* cublasLtMatmulMatrixScale_t */
} scale_modes[SC_COUNT] = {
    [SC_TENSOR] = {"tensor", CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
                   CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F},
    [SC_ROW] = {"row", CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F,
                CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F},
    [SC_BLOCK] = {"block", CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F,
                  CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F},
    [SC_BLOCK_T] = {"block-t", CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F,
                    CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F},
    [SC_VEC128] = {"vec128", CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F,
                   CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F},
};

static const char *scale_name(int32_t mode)
{
    switch (mode) {
    case CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F: return "scalar";
    case CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F: return "outer_vec";
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F: return "vec128";
    case CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F: return "blk128x128";
    default: return "?";
    }
}

/* Floats in the scale tensor of a matrix stored inner x outer (column-major,
 * inner contiguous), as NVIDIA's cuBLASLt samples size them. */
static size_t scale_count(int32_t mode, size_t inner, size_t outer)
{
    const size_t blocks = (inner + 127) / 128;
    switch (mode) {
    case CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F: return outer;
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F: return blocks * outer;
    case CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F:
        return (blocks + 3) / 4 * 4 * ((outer + 127) / 128);
    default: return 1;
    }
}

typedef struct shape {
    const char *suite, *op;
    int a_e5m2, b_e5m2;
    int scales; /* SC_* */
    int8_t fast;
    int m, n, k;
} shape_t;

#define MAX_SHAPES 256
static shape_t shapes[MAX_SHAPES];
static int n_shapes;

static void add(const char *suite, const char *op, int a_e5m2, int b_e5m2, int scales, int fast,
                int m, int n, int k)
{
    const shape_t s = {suite, op, a_e5m2, b_e5m2, scales, (int8_t)fast, m, n, k};
    if (n_shapes < MAX_SHAPES)
        shapes[n_shapes++] = s;
}

/* A Llama-3 linear layer: out and in features */
typedef struct proj {
    const char *name;
    int out, in;
} proj_t;

static const proj_t projs[8] = {
    {"8B.qkv", 6144, 4096},    {"8B.o", 4096, 4096},     {"8B.gate", 14336, 4096},
    {"8B.down", 4096, 14336},  {"70B.qkv", 10240, 8192}, {"70B.o", 8192, 8192},
    {"70B.gate", 28672, 8192}, {"70B.down", 8192, 28672},
};
enum { P8_QKV, P8_O, P8_GATE, P8_DOWN, P70_QKV, P70_O, P70_GATE, P70_DOWN };

/* Forward: m = out features, n = tokens, k = in features, A the weight
 * (e4m3), B the activations (e4m3). Backward, the gradient in e5m2 as B:
 * dgrad (dX = dY W: m = in, n = tokens, k = out, A from the weight) and
 * wgrad (dW = dY^T X: m = in, n = out, k = tokens, A from the activations). */
static void forward(const proj_t *p, int tokens, int scales, int fast)
{
    add("fp8", p->name, 0, 0, scales, fast, p->out, tokens, p->in);
}

static void build(const char *suite)
{
    const int all = !strcmp(suite, "fp8-all");
    if (all || !strcmp(suite, "fp8")) {
        static const char *const dgrad[8] = {"8B.qkv.dgrad", NULL, NULL, "8B.down.dgrad", NULL,
                                             NULL, "70B.gate.dgrad", NULL},
                                 *const wgrad[8] = {"8B.qkv.wgrad", NULL, NULL, "8B.down.wgrad",
                                                    NULL, NULL, "70B.gate.wgrad", NULL};
        /* every projection at 8192 tokens, four of them at 4096 and 16384;
         * tensorwise and rowwise, fast accumulation on and off */
        for (int sc = SC_TENSOR; sc <= SC_ROW; ++sc)
            for (int fast = 1; fast >= 0; --fast) {
                for (int p = 0; p < 8; ++p)
                    forward(&projs[p], 8192, sc, fast);
                static const int some[4] = {P8_QKV, P8_GATE, P70_QKV, P70_DOWN};
                for (int t = 4096; t <= 16384; t *= 4)
                    for (int i = 0; i < 4; ++i)
                        forward(&projs[some[i]], t, sc, fast);
            }
        /* 128-blocks: every projection at 8192 tokens, exact accumulation
         * (torch._scaled_mm refuses fast accumulation with them); two with
         * it on, and the other orientations, to see what cuBLASLt makes of them */
        for (int p = 0; p < 8; ++p)
            forward(&projs[p], 8192, SC_BLOCK, 0);
        forward(&projs[P8_GATE], 8192, SC_BLOCK, 1);
        forward(&projs[P70_GATE], 8192, SC_BLOCK, 1);
        for (int sc = SC_BLOCK_T; sc <= SC_VEC128; ++sc) {
            forward(&projs[P8_GATE], 8192, sc, 0);
            forward(&projs[P70_GATE], 8192, sc, 0);
        }
        /* backward at 8192 tokens: tensorwise and rowwise exact, tensorwise fast */
        for (int p = 0; p < 8; ++p) {
            if (!dgrad[p])
                continue;
            const int T = 8192;
            for (int v = 0; v < 3; ++v) {
                const int sc = v == 1 ? SC_ROW : SC_TENSOR, fast = v == 2;
                add("fp8", dgrad[p], 0, 1, sc, fast, projs[p].in, T, projs[p].out);
                add("fp8", wgrad[p], 0, 1, sc, fast, projs[p].in, projs[p].out, T);
            }
        }
    }
    if (all || !strcmp(suite, "fp8-decode")) {
        static const int dp[3] = {P8_DOWN, P8_GATE, P70_GATE}, dn[5] = {1, 4, 16, 32, 64};
        for (int i = 0; i < 3; ++i)
            for (int sc = SC_TENSOR; sc <= SC_ROW; ++sc)
                for (int fast = 1; fast >= 0; --fast)
                    for (int j = 0; j < 5; ++j)
                        add("fp8-decode", projs[dp[i]].name, 0, 0, sc, fast, projs[dp[i]].out,
                            dn[j], projs[dp[i]].in);
    }
}

/* One line of the --shapes list, "#" comments cut:
 *     TYPES SCALES ACCUM M N K
 * 0, or -1 with the bad line reported. */
static int shape_line(void *ctx, const char *path, int lineno, char *line)
{
    (void)ctx;
    char types[16], sc[16], acc[16], extra[8];
    int m, n, k, bad = 0;
    const int got = sscanf(line, "%15s %15s %15s %d %d %d %7s", types, sc, acc, &m, &n, &k, extra);
    if (got <= 0)
        return 0; /* blank */
    int a5 = 0, b5 = 0, mode = -1;
    if (!strcmp(types, "e4m3xe5m2"))
        b5 = 1;
    else if (!strcmp(types, "e5m2xe4m3"))
        a5 = 1;
    else if (strcmp(types, "e4m3"))
        bad = 1;
    for (int i = 0; i < SC_COUNT; ++i)
        if (!strcmp(sc, scale_modes[i].name))
            mode = i;
    if (bad || got != 6 || mode < 0 || (strcmp(acc, "fast") && strcmp(acc, "exact")) || m < 1 ||
        n < 1 || k < 1) {
        fprintf(stderr, "bench_fp8: %s:%d: expected 'TYPES SCALES ACCUM M N K' (TYPES e4m3, "
                        "e4m3xe5m2 or e5m2xe4m3; SCALES tensor, row, block, block-t or "
                        "vec128; ACCUM fast or exact; sizes >= 1)\n",
                path, lineno);
        return -1;
    }
    if (n_shapes == MAX_SHAPES) {
        fprintf(stderr, "bench_fp8: %s: more than %d shapes\n", path, MAX_SHAPES);
        return -1;
    }
    add("shapes", "shapes", a5, b5, mode, !strcmp(acc, "fast"), m, n, k);
    return 0;
}

static int load_shapes(const char *path)
{
    return gu_each_line(path, shape_line, NULL);
}

/* ---- FP8 codes on the host ---- */

/* A pool of random codes per type (finite, nonzero, |x| in [2^-6, 4]),
 * copied into each buffer from a random offset, as bench_ab fills its own. */
#define POOL_BYTES (1u << 25)
static const uint8_t *pool_for(int e5m2)
{
    static uint8_t *pools[2];
    if (!pools[e5m2]) {
        uint8_t codes[256];
        int n = 0;
        for (int c = 0; c < 256; ++c) {
            const float v = fabsf(gu_fp8_value((uint8_t)c, e5m2));
            if (v == v && v >= 0.015625f && v <= 4.0f)
                codes[n++] = (uint8_t)c;
        }
        pools[e5m2] = malloc((size_t)POOL_BYTES * 2);
        for (size_t i = 0; i < (size_t)POOL_BYTES * 2; ++i)
            pools[e5m2][i] = codes[gu_next() % (uint64_t)n];
    }
    return pools[e5m2];
}

static void fill_fp8(void *d, size_t n, int e5m2)
{
    const uint8_t *pool = pool_for(e5m2);
    for (size_t done = 0; done < n;) {
        const size_t chunk = n - done < POOL_BYTES ? n - done : POOL_BYTES;
        const size_t from = (size_t)gu_int(0, POOL_BYTES - 1);
        CUDA_OK(cudaMemcpy((char *)d + done, pool + from, chunk, cudaMemcpyHostToDevice));
        done += chunk;
    }
}

static float *dev_scales(size_t n)
{
    float *h = malloc(n * sizeof(float)), *d;
    for (size_t i = 0; i < n; ++i)
        h[i] = (float)(1.25 + 0.75 * gu_uniform()); /* 0.5 .. 2 */
    CUDA_OK(cudaMalloc((void **)&d, n * sizeof(float)));
    CUDA_OK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
    free(h);
    return d;
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* ---- the calls ---- */

typedef cublasStatus_t (*lt_matmul_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                       const void *, cublasLtMatrixLayout_t, const void *,
                                       cublasLtMatrixLayout_t, const void *, const void *,
                                       cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                       const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);
typedef cublasStatus_t (*lt_heuristic_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t,
                                          cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                          cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                          cublasLtMatmulPreference_t, int,
                                          cublasLtMatmulHeuristicResult_t *, int *);

/* A row's buffer sets: operands, scales, and a descriptor per set holding
 * its scale pointers (the shapes' other attributes are the same in all). */
typedef struct sets {
    int count;
    void *A[MAX_SETS], *B[MAX_SETS], *D[MAX_SETS];
    float *sa[MAX_SETS], *sb[MAX_SETS];
    cublasLtMatmulDesc_t desc[MAX_SETS];
} sets_t;

typedef struct ctx {
    cublasLtHandle_t lt;
    cublasLtMatrixLayout_t la, lb, ld;
    void *ws;
} ctx_t;

/* One side: which cublasLtMatmul, with which algorithm (NULL: cuBLASLt's
 * or the shim's choice). host_us: the host's microseconds per call, last
 * run (NAN under --graph). exec: under --graph, the row's run of calls
 * captured once and replayed. */
typedef struct side {
    const char *name;
    lt_matmul_fn f;
    const cublasLtMatmulAlgo_t *algo;
    float host_us;
    cudaGraphExec_t exec;
} side_t;

/* The stream every call and event goes to: the legacy stream, or under
 * --graph one of bench_fp8's own (the legacy stream cannot be captured).
 * graph: --graph, each side's run of calls timed as one CUDA graph replay,
 * as a serving engine's decode step runs them: no host time between calls,
 * so a side whose host cost per call exceeds its GPU time (cuBLASLt's
 * heuristic on the smallest decode calls) is timed by its kernels. */
static cudaStream_t stream;
static int graph;

/* The CSV's timing column */
static const char *timing_name(void)
{
    return graph ? "graph" : "stream";
}

static cublasStatus_t call(const side_t *sd, const ctx_t *c, const sets_t *b, int j)
{
    static const float alpha = 1.f, beta = 0.f;
    return sd->f(c->lt, b->desc[j], &alpha, b->A[j], c->la, b->B[j], c->lb, &beta, b->D[j], c->ld,
                 b->D[j], c->ld, sd->algo, c->ws, WS_BYTES, stream);
}

/* A side's graph, if it has one, destroyed (the row's sizes go with it). */
static void drop_graph(side_t *sd)
{
    if (sd->exec)
        cudaGraphExecDestroy(sd->exec);
    sd->exec = NULL;
}

/* bench/tensor_probe.cu: cudaError_t of the launch */
int gs_bench_tensor_probe_fp8(const void *a, size_t a_bytes, const void *b, size_t b_bytes,
                              int a_e5m2, int b_e5m2, double flop, float *sink, cudaStream_t stream);

/* Whether the tensor probe runs here: it is built for sm_90a only, so
 * elsewhere (Ada, Blackwell) large rows are timed without it (main) */
static int probe_on;

/* The row the tensor probe side stands in for: set before its rounds */
static struct probe_row {
    size_t a_bytes, b_bytes;
    int a_e5m2, b_e5m2;
    double flop;
    float *sink;
} probe_row;

/* The tensor probe as a side: a cublasLtMatmul's arguments, of which it
 * takes A and B (their bytes are what it multiplies) and the stream. */
static cublasStatus_t probe_matmul(cublasLtHandle_t lt, cublasLtMatmulDesc_t d, const void *alpha,
                                   const void *A, cublasLtMatrixLayout_t la, const void *B,
                                   cublasLtMatrixLayout_t lb, const void *beta, const void *C,
                                   cublasLtMatrixLayout_t lc, void *D, cublasLtMatrixLayout_t ld,
                                   const cublasLtMatmulAlgo_t *algo, void *ws, size_t ws_bytes,
                                   cudaStream_t stream)
{
    (void)lt, (void)d, (void)alpha, (void)la, (void)lb, (void)beta, (void)C, (void)lc, (void)D,
        (void)ld, (void)algo, (void)ws, (void)ws_bytes;
    const struct probe_row *p = &probe_row;
    return gs_bench_tensor_probe_fp8(A, p->a_bytes, B, p->b_bytes, p->a_e5m2, p->b_e5m2, p->flop,
                                     p->sink, stream) == 0
               ? CUBLAS_STATUS_SUCCESS
               : CUBLAS_STATUS_EXECUTION_FAILED;
}

/* ms per call over `iters` calls cycling through the sets; NAN with *st
 * set if a call failed. as_graph: the run captured into the side's graph
 * on first use (iters fixed from then on: a row's rounds), then replayed. */
static float time_run(side_t *sd, const ctx_t *c, const sets_t *b, int iters, cudaEvent_t e0,
                      cudaEvent_t e1, cublasStatus_t *st, int as_graph)
{
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (as_graph && !sd->exec) {
        cudaGraph_t g;
        CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < iters && s == CUBLAS_STATUS_SUCCESS; ++i)
            s = call(sd, c, b, i % b->count);
        CUDA_OK(cudaStreamEndCapture(stream, &g));
        if (s == CUBLAS_STATUS_SUCCESS)
            CUDA_OK(cudaGraphInstantiate(&sd->exec, g, 0));
        CUDA_OK(cudaGraphDestroy(g));
        if (s != CUBLAS_STATUS_SUCCESS) {
            *st = s;
            return NAN;
        }
        CUDA_OK(cudaGraphLaunch(sd->exec, stream)); /* its first launch uploads it: untimed */
    }
    struct timespec t0, t1;
    CUDA_OK(cudaEventRecord(e0, stream));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (as_graph)
        CUDA_OK(cudaGraphLaunch(sd->exec, stream));
    for (int i = 0; !as_graph && i < iters && s == CUBLAS_STATUS_SUCCESS; ++i)
        s = call(sd, c, b, i % b->count);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CUDA_OK(cudaEventRecord(e1, stream));
    CUDA_OK(cudaEventSynchronize(e1));
    sd->host_us = as_graph ? NAN
                           : (float)(((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) /
                                     1e3 / iters);
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    if (s != CUBLAS_STATUS_SUCCESS) {
        *st = s;
        return NAN;
    }
    return ms / iters;
}

/* ---- the shim's log: the route that served a row ---- */

/* A scale mode as the shim's log spells it (compat/gs_types.c). */
static const char *shim_scale_name(int32_t mode)
{
    switch (mode) {
    case CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F: return "SCALAR_32F";
    case CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F: return "OUTER_VEC_32F";
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F: return "VEC128_32F";
    case CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F: return "BLK128x128_32F";
    default: return "?";
    }
}

static const char *type_name(int e5m2) { return e5m2 ? "e5m2" : "e4m3"; }

static long file_size(const char *path)
{
    struct stat st;
    return path && !stat(path, &st) ? (long)st.st_size : 0;
}

/* What the shim logged about shape s from byte `from` of its log on: the
 * route of its last cublasLtMatmul line (after " -> ") and that line's
 * reason (in parentheses), whether any of those lines said it was tuning,
 * and whether the tuner logged its decision. */
typedef struct logged {
    int lines, tuning, decided;
    char route[256], why[1024];
} logged_t;

static void read_log(const char *log, long from, const shape_t *s, logged_t *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = log ? fopen(log, "r") : NULL;
    if (!f)
        return;
    if (from > 0)
        fseek(f, from, SEEK_SET);
    /* the signature, as the shim's line names it: types, sizes, scale modes
     * and fast accumulation (shim/observe/gs_log.c) */
    char line[2048], dims[96], types[64], modes[96];
    snprintf(dims, sizeof dims, " m=%d n=%d k=%d ", s->m, s->n, s->k);
    snprintf(types, sizeof types, " %s,%s->", type_name(s->a_e5m2), type_name(s->b_e5m2));
    snprintf(modes, sizeof modes, " scale_A=%s scale_B=%s", shim_scale_name(scale_modes[s->scales].a),
             shim_scale_name(scale_modes[s->scales].b));
    while (fgets(line, sizeof line, f)) {
        const char *arrow = strstr(line, " -> ");
        if (!arrow || !strstr(line, "cublasLtMatmul ") || !strstr(line, dims) ||
            !strstr(line, types) || !strstr(line, modes))
            continue;
        /* " fast_accum" before the arrow: the line's own flag, not the reason's words */
        const char *fast = strstr(line, " fast_accum");
        if ((fast && fast < arrow) != (s->fast != 0))
            continue;
        if (strstr(line, "tune: ")) { /* "tune: SHAPE -> FAMILY CONFIG ...": decided */
            out->decided = 1;
            continue;
        }
        ++out->lines;
        snprintf(out->route, sizeof out->route, "%s", arrow + 4);
        out->route[strcspn(out->route, " \n")] = 0;
        const char *open = strchr(arrow + 4, '(');
        snprintf(out->why, sizeof out->why, "%s", open ? open + 1 : "");
        out->why[strcspn(out->why, "\n")] = 0;
        out->tuning |= !strncmp(out->why, "tuning", 6);
    }
    fclose(f);
}

/* The route that served shape s on the shim side: from the lines the shim
 * logged since `from`, else (the same signature logged earlier in this run)
 * from the whole log; "?" without a log. Commas become ';' for the CSV. */
static void route_of(const char *log, long from, const shape_t *s, char *route, size_t cap)
{
    logged_t l;
    read_log(log, from, s, &l);
    if (!l.lines)
        read_log(log, 0, s, &l);
    snprintf(route, cap, "%s", l.lines ? l.route : "?");
    for (char *p = route; *p; ++p)
        if (*p == ',')
            *p = ';';
}

/* ---- a row ---- */


/* A's and B's types as the table prints them */
static const char *types_of(const shape_t *s)
{
    return s->a_e5m2 ? "e5m2xe4m3" : s->b_e5m2 ? "e4m3xe5m2" : "e4m3";
}

static FILE *csv_out;
static const char *gpu_name;

/* A row's CSV columns up to k, and the comma after them */
static void csv_head(const shape_t *s)
{
    const struct scales *sc = &scale_modes[s->scales];
    fprintf(csv_out, "%s,%s,%s,%s,%s,%s,%s,%d,%d,%d,%d,", gpu_name, s->suite, s->op,
            type_name(s->a_e5m2), type_name(s->b_e5m2), scale_name(sc->a), scale_name(sc->b),
            s->fast, s->m, s->n, s->k);
}

/* A row without timings: its status only (no commas in it) */
static void csv_untimed(const shape_t *s, const char *status)
{
    csv_head(s);
    fprintf(csv_out, ",,,,,,,,,,,,,,,,,,,,,,%s,%s\n", status, timing_name());
    fflush(csv_out);
}

/* The row's first columns as the table prints them */
static void print_head(const shape_t *s)
{
    printf("%-10s %-15s %-9s %-7s %-5s %6d %6d %6d ", s->suite, s->op, types_of(s),
           scale_modes[s->scales].name, s->fast ? "fast" : "exact", s->m, s->n, s->k);
}

/* "skipped: ..." on stdout and in the CSV: a row that cannot be timed */
static void skipped(const shape_t *s, const char *what, cublasStatus_t st)
{
    char why[160];
    snprintf(why, sizeof why, "skipped: %s (status %d)", what, (int)st);
    print_head(s);
    printf(" %s\n", why);
    csv_untimed(s, why);
}

static void free_sets(sets_t *b)
{
    for (int i = 0; i < b->count; ++i) {
        cudaFree(b->A[i]);
        cudaFree(b->B[i]);
        cudaFree(b->D[i]);
        cudaFree(b->sa[i]);
        cudaFree(b->sb[i]);
        if (b->desc[i])
            cublasLtMatmulDescDestroy(b->desc[i]);
    }
}

/* The descriptor torch._scaled_mm makes: TN, compute and scale type 32F,
 * fast accumulation, A's and B's scale pointers and (where not the default
 * SCALAR_32F) modes. A failed attribute (an older cuBLASLt) is returned. */
static cublasStatus_t make_desc(const shape_t *s, float *sa, float *sb, cublasLtMatmulDesc_t *out)
{
    cublasLtMatmulDesc_t d;
    cublasStatus_t st = cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    *out = d;
    const int32_t opt = CUBLAS_OP_T, opn = CUBLAS_OP_N;
    const struct scales *sc = &scale_modes[s->scales];
#define SET(attr, val)                                                                            \
    if (st == CUBLAS_STATUS_SUCCESS)                                                              \
    st = cublasLtMatmulDescSetAttribute(d, attr, &(val), sizeof(val))
    SET(CUBLASLT_MATMUL_DESC_TRANSA, opt);
    SET(CUBLASLT_MATMUL_DESC_TRANSB, opn);
    SET(CUBLASLT_MATMUL_DESC_FAST_ACCUM, s->fast);
    SET(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, sa);
    SET(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, sb);
    if (sc->a != CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F)
        SET(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, sc->a);
    if (sc->b != CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F)
        SET(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, sc->b);
#undef SET
    return st;
}

typedef struct opts {
    int rounds, shim_only;
    const char *log;
} opts_t;

/* The shim side alone, untimed (--shim-only N): calls until the tuner has
 * logged its decision for the signature, or N calls; after the first
 * calls, none if the shim's log shows it is not tuning it (not tunable,
 * or decided before). */
static void shim_only(const opts_t *o, side_t *shim, const ctx_t *c, const sets_t *b,
                      const shape_t *s, long log_from)
{
    const int chunk = b->count > 8 ? b->count : 8;
    logged_t l;
    memset(&l, 0, sizeof l);
    int calls = 0;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    while (calls < o->shim_only && st == CUBLAS_STATUS_SUCCESS) {
        for (int i = 0; i < chunk && calls < o->shim_only && st == CUBLAS_STATUS_SUCCESS; ++i)
            st = call(shim, c, b, calls++ % b->count);
        CUDA_OK(cudaDeviceSynchronize());
        read_log(o->log, log_from, s, &l);
        if (l.decided || (l.lines && !l.tuning))
            break;
    }
    if (st != CUBLAS_STATUS_SUCCESS) {
        skipped(s, "the shim's call failed", st);
        return;
    }
    print_head(s);
    printf(" %d calls, %s  %s (%.100s)\n", calls,
           l.decided ? "decided" : l.tuning ? "still tuning" : "not tuned", l.lines ? l.route : "?",
           l.why);
    csv_untimed(s, "shim-only");
}

/* A row's timing on its sets (descriptors made, operands filled): prints
 * the row and writes its CSV line, or a skipped one. */
static void measure(const opts_t *o, const shape_t *s, const ctx_t *c, const sets_t *b,
                    side_t *shim, side_t *asc, side_t *best, lt_heuristic_fn heuristic,
                    long log_from, cudaEvent_t e0, cudaEvent_t e1)
{
    const size_t m = s->m, n = s->n, k = s->k, nd = m * n;
    /* the call as made first: a mode cuBLASLt refuses is skipped */
    cublasStatus_t st;
    CUDA_OK(cudaMemset(b->D[0], 0xff, nd * 2)); /* NaN: unwritten shows */
    if ((st = call(asc, c, b, 0)) != CUBLAS_STATUS_SUCCESS)
        {
        skipped(s, "cuBLASLt refuses the call as made", st);
        return;
    }
    uint16_t *h_shim = malloc(nd * 2), *h_asc = malloc(nd * 2);
    CUDA_OK(cudaMemcpy(h_asc, b->D[0], nd * 2, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemset(b->D[0], 0xff, nd * 2));
    if ((st = call(shim, c, b, 0)) == CUBLAS_STATUS_SUCCESS)
        CUDA_OK(cudaMemcpy(h_shim, b->D[0], nd * 2, cudaMemcpyDeviceToHost));
    const double rel = st == CUBLAS_STATUS_SUCCESS ? gu_rel_diff(h_shim, h_asc, nd, CUDA_R_16BF) : NAN;
    free(h_shim);
    free(h_asc);
    if (st != CUBLAS_STATUS_SUCCESS)
        {
        skipped(s, "the shim's call failed where cuBLASLt's did not", st);
        return;
    }

    /* iterations per sample: about 2 ms of work, at least one pass over the sets */
    const float probe = time_run(asc, c, b, b->count, e0, e1, &st, 0);
    time_run(shim, c, b, b->count, e0, e1, &st, 0);
    if (st != CUBLAS_STATUS_SUCCESS)
        {
        skipped(s, "a timed call failed", st);
        return;
    }
    int iters = (int)(2.0 / (probe > 1e-4f ? probe : 1e-4f));
    iters = iters < b->count ? b->count : iters > 2000 ? 2000 : iters;

    /* best8: the heuristic's first 8 for set 0's descriptor (the others
     * differ only in their scale pointers), each timed briefly (the median
     * of 3 runs), the fastest kept */
    cublasLtMatmulHeuristicResult_t heur[BEST_OF];
    int n_heur = 0, best_i = -1;
    cublasLtMatmulPreference_t pref;
    CUBLAS_OK(cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = WS_BYTES;
    CUBLAS_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                   &ws, sizeof ws));
    memset(heur, 0, sizeof heur);
    if (heuristic(c->lt, b->desc[0], c->la, c->lb, c->ld, c->ld, pref, BEST_OF, heur, &n_heur) !=
        CUBLAS_STATUS_SUCCESS)
        n_heur = 0;
    cublasLtMatmulPreferenceDestroy(pref);
    float best_ms = INFINITY;
    for (int i = 0; i < n_heur; ++i) {
        if (heur[i].state != CUBLAS_STATUS_SUCCESS)
            continue;
        side_t t = {"best8", best->f, &heur[i].algo, 0.f, NULL};
        cublasStatus_t ts = CUBLAS_STATUS_SUCCESS;
        float r[3];
        for (int j = 0; j < 3; ++j)
            r[j] = time_run(&t, c, b, iters, e0, e1, &ts, graph);
        drop_graph(&t);
        if (ts != CUBLAS_STATUS_SUCCESS)
            continue; /* an algorithm that fails to run is no candidate */
        qsort(r, 3, sizeof(float), cmp_float);
        if (r[1] < best_ms) {
            best_ms = r[1];
            best_i = i;
        }
    }
    best->algo = best_i >= 0 ? &heur[best_i].algo : NULL;

    /* the rounds: each side once a round, which goes first rotating (and
     * the order reversed every other cycle); best8 only where an algorithm
     * ran, the tensor probe only on large rows */
    enum { SHIM, ASC, BEST, TENSOR, SIDES };
    side_t tensor = {"tensor", probe_matmul, NULL, 0.f, NULL};
    side_t *sides[SIDES] = {shim, asc, best, &tensor};
    int act[SIDES], n_sides = 0;
    act[n_sides++] = SHIM;
    act[n_sides++] = ASC;
    if (best_i >= 0)
        act[n_sides++] = BEST;
    if (s->n > 64 && probe_on) {
        probe_row = (struct probe_row){m * k, n * k, s->a_e5m2, s->b_e5m2, 2.0 * m * n * k,
                                       (float *)c->ws};
        act[n_sides++] = TENSOR;
    }
    float t[SIDES][64], h[SIDES][64];
    const int r_n = o->rounds > 64 ? 64 : o->rounds;
    for (int r = 0; r < r_n && st == CUBLAS_STATUS_SUCCESS; ++r)
        for (int i = 0; i < n_sides; ++i) {
            const int x = act[(r % n_sides + ((r / n_sides) & 1 ? n_sides - i : i)) % n_sides];
            t[x][r] = time_run(sides[x], c, b, iters, e0, e1, &st, graph);
            h[x][r] = sides[x]->host_us;
        }
    for (int i = 0; i < SIDES; ++i)
        drop_graph(sides[i]);
    best->algo = NULL; /* heur is this function's */
    if (st != CUBLAS_STATUS_SUCCESS)
        {
        skipped(s, "a timed call failed", st);
        return;
    }
    double ms[SIDES] = {NAN, NAN, NAN, NAN}, hus[SIDES] = {NAN, NAN, NAN, NAN};
    for (int i = 0; i < n_sides; ++i) {
        const int x = act[i];
        qsort(t[x], r_n, sizeof(float), cmp_float);
        qsort(h[x], r_n, sizeof(float), cmp_float);
        ms[x] = t[x][r_n / 2];
        hus[x] = h[x][r_n / 2];
    }
    const double flop = 2.0 * m * n * k, wbytes = (double)m * k;
    char route[256];
    route_of(o->log, log_from, s, route, sizeof route);
    print_head(s);
    printf("%8.4f %8.4f %8.4f %7.1f %7.1f %7.1f %6.3f %6.3f %6.3f %2d %8.2e  %s\n", ms[SHIM], ms[ASC], ms[BEST], flop / ms[SHIM] / 1e9, flop / ms[ASC] / 1e9,
           flop / ms[BEST] / 1e9, ms[ASC] / ms[SHIM], ms[BEST] / ms[SHIM], ms[ASC] / ms[BEST],
           best_i, rel, route);
    const int decode = s->n <= 64;
    if (decode)
        printf("%-10s weight TB/s: shim %.2f  as_called %.2f  best8 %.2f   host us per call: shim "
               "%.2f  as_called %.2f\n",
               "", wbytes / ms[SHIM] / 1e9, wbytes / ms[ASC] / 1e9, wbytes / ms[BEST] / 1e9,
               hus[SHIM], hus[ASC]);
    else if (probe_on)
        printf("%-10s tensor probe: %.4f ms, %.1f TFLOP/s; ceiling over as_called %.3f (asc_ms / "
               "tensor_ms), shim at %.3f of the probe's speed\n",
               "", ms[TENSOR], flop / ms[TENSOR] / 1e9, ms[ASC] / ms[TENSOR], ms[TENSOR] / ms[SHIM]);
    csv_head(s);
    fprintf(csv_out, "%.6f,%.6f,%.6f,%.2f,%.2f,%.2f,%.4f,%.4f,%.4f,%d,%d,%.3e,%s,%.0f,", ms[SHIM],
            ms[ASC], ms[BEST], flop / ms[SHIM] / 1e9, flop / ms[ASC] / 1e9, flop / ms[BEST] / 1e9,
            ms[ASC] / ms[SHIM], ms[BEST] / ms[SHIM], ms[ASC] / ms[BEST], best_i, n_heur, rel,
            route, wbytes);
    if (decode)
        fprintf(csv_out, "%.3f,%.3f,%.3f,", wbytes / ms[SHIM] / 1e9, wbytes / ms[ASC] / 1e9,
                wbytes / ms[BEST] / 1e9);
    else
        fprintf(csv_out, ",,,");
    if (graph) /* no host time: a replay is one launch */
        fprintf(csv_out, ",,");
    else
        fprintf(csv_out, "%.2f,%.2f,", hus[SHIM], hus[ASC]);
    if (decode || !probe_on)
        fprintf(csv_out, ",,,");
    else
        fprintf(csv_out, "%.6f,%.2f,%.4f,", ms[TENSOR], flop / ms[TENSOR] / 1e9,
                ms[ASC] / ms[TENSOR]);
    fprintf(csv_out, "ok,%s\n", timing_name());
    fflush(csv_out);
}

/* A row: its buffer sets and descriptors, then the timing (or, with
 * --shim-only, the shim side alone). */
static void run_shape(const opts_t *o, const shape_t *s, ctx_t *c, side_t *shim, side_t *asc,
                      side_t *best, lt_heuristic_fn heuristic, int l2, cudaEvent_t e0,
                      cudaEvent_t e1)
{
    const struct scales *sc = &scale_modes[s->scales];
    const size_t m = s->m, n = s->n, k = s->k, na = m * k, nb = k * n, nd = m * n;
    const size_t nsa = scale_count(sc->a, k, m), nsb = scale_count(sc->b, k, n);
    const size_t set_bytes = na + nb + nd * 2 + (nsa + nsb) * sizeof(float);
    sets_t b;
    memset(&b, 0, sizeof b);
    b.count = (int)((3.0 * l2) / set_bytes) + 1;
    b.count = b.count < 2 ? 2 : b.count > MAX_SETS ? MAX_SETS : b.count;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < b.count; ++i) {
        CUDA_OK(cudaMalloc(&b.A[i], na));
        CUDA_OK(cudaMalloc(&b.B[i], nb));
        CUDA_OK(cudaMalloc(&b.D[i], nd * 2));
        fill_fp8(b.A[i], na, s->a_e5m2);
        fill_fp8(b.B[i], nb, s->b_e5m2);
        b.sa[i] = dev_scales(nsa);
        b.sb[i] = dev_scales(nsb);
        if (st == CUBLAS_STATUS_SUCCESS)
            st = make_desc(s, b.sa[i], b.sb[i], &b.desc[i]);
    }
    const cudaDataType at = s->a_e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3,
                       bt = s->b_e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
    CUBLAS_OK(cublasLtMatrixLayoutCreate(&c->la, at, k, m, k));
    CUBLAS_OK(cublasLtMatrixLayoutCreate(&c->lb, bt, k, n, k));
    CUBLAS_OK(cublasLtMatrixLayoutCreate(&c->ld, CUDA_R_16BF, m, n, m));
    CUDA_OK(cudaDeviceSynchronize()); /* the fills */
    const long log_from = file_size(o->log);
    if (st != CUBLAS_STATUS_SUCCESS)
        skipped(s, "a descriptor attribute refused", st);
    else if (o->shim_only)
        shim_only(o, shim, c, &b, s, log_from);
    else
        measure(o, s, c, &b, shim, asc, best, heuristic, log_from, e0, e1);
    cudaDeviceSynchronize(); /* a failed call may have left work queued */
    cublasLtMatrixLayoutDestroy(c->la);
    cublasLtMatrixLayoutDestroy(c->lb);
    cublasLtMatrixLayoutDestroy(c->ld);
    free_sets(&b);
    fflush(stdout);
}

static const char usage[] =
    "usage: %s [--suite fp8|fp8-decode|fp8-all | --shapes FILE] [--csv FILE] [--rounds N] "
    "[--shim-only N] [--list] [--graph]\n";

int main(int argc, char **argv)
{
    const char *suite = "fp8-all", *csv = "bench_fp8.csv", *shapes_file = NULL;
    opts_t o = {15, 0, NULL};
    int list = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--suite") && i + 1 < argc)
            suite = argv[++i];
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            csv = argv[++i];
        else if (!strcmp(argv[i], "--shapes") && i + 1 < argc)
            shapes_file = argv[++i];
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc && atoi(argv[i + 1]) > 0)
            o.rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shim-only") && i + 1 < argc && atoi(argv[i + 1]) > 0)
            o.shim_only = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--list"))
            list = 1;
        else if (!strcmp(argv[i], "--graph"))
            graph = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf(usage, argv[0]);
            return 0;
        } else {
            fprintf(stderr, usage, argv[0]);
            return 2;
        }
    }
    /* a bad shape list or suite is an error on any machine, GPU or not */
    if (shapes_file && load_shapes(shapes_file))
        return 2;
    if (!shapes_file)
        build(suite);
    if (!n_shapes) {
        if (shapes_file)
            fprintf(stderr, "bench_fp8: no shapes in %s\n", shapes_file);
        else
            fprintf(stderr, "bench_fp8: unknown suite '%s'\n", suite);
        fprintf(stderr, usage, argv[0]);
        return 2;
    }
    if (list) { /* the rows as a --shapes list, on any machine */
        for (int i = 0; i < n_shapes; ++i)
            printf("%-9s %-7s %-5s %6d %6d %6d  # %s %s\n", types_of(&shapes[i]),
                   scale_modes[shapes[i].scales].name, shapes[i].fast ? "fast" : "exact",
                   shapes[i].m, shapes[i].n, shapes[i].k, shapes[i].suite, shapes[i].op);
        return 0;
    }
    /* the log is read for routes only: no per-call events on the shim side.
     * Set before the first cublasLtMatmul: the shim reads its configuration then. */
    setenv("GEMMSHIM_LOG_TIMING", "0", 0);
    o.log = getenv("GEMMSHIM_LOG");
    if (!o.log) {
        setenv("GEMMSHIM_LOG", "bench_fp8_route.log", 1);
        o.log = "bench_fp8_route.log";
    }
    if (strchr(o.log, '%')) /* one file per process: not read back */
        o.log = NULL;
    gpu_require_or_skip("bench_fp8");
    if (!gu_shim_present_lt()) {
        fprintf(stderr, "bench_fp8: run under LD_PRELOAD=libgemmshim.so\n");
        return 1;
    }
    int dev, l2 = 0, major = 0, minor = 0;
    struct cudaDeviceProp prop;
    CUDA_OK(cudaGetDevice(&dev));
    CUDA_OK(cudaGetDeviceProperties(&prop, dev));
    CUDA_OK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    if (major * 10 + minor < 89) {
        printf("SKIP: bench_fp8: compute capability %d.%d; cuBLASLt's FP8 GEMMs want 8.9 or newer\n",
               major, minor);
        return GPU_SKIP;
    }
    const uint64_t seed = gu_seed_init();
    gpu_name = prop.name;
    probe_on = major == 9 && minor == 0;
    if (!probe_on)
        printf("(no tensor probe: it is built for sm_90a, this GPU is %d.%d)\n", major, minor);
    ctx_t c;
    memset(&c, 0, sizeof c);
    CUBLAS_OK(cublasLtCreate(&c.lt));
    CUDA_OK(cudaMalloc(&c.ws, WS_BYTES));
    const lt_matmul_fn real = (lt_matmul_fn)gu_real_cublaslt_sym("cublasLtMatmul");
    const lt_heuristic_fn heuristic =
        (lt_heuristic_fn)gu_real_cublaslt_sym("cublasLtMatmulAlgoGetHeuristic");
    side_t shim = {"shim", (lt_matmul_fn)cublasLtMatmul, NULL, 0.f, NULL},
           asc = {"as_called", real, NULL, 0.f, NULL}, best = {"best8", real, NULL, 0.f, NULL};
    cudaEvent_t e0, e1;
    if (graph) /* blocking: the legacy stream's copies and fills stay ordered with it */
        CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    csv_out = fopen(csv, "w");
    if (!csv_out) {
        perror(csv);
        return 1;
    }
    fprintf(csv_out,
            "gpu,suite,op,a_type,b_type,scale_a,scale_b,fast_accum,m,n,k,shim_ms,as_called_ms,"
            "best8_ms,shim_tflops,as_called_tflops,best8_tflops,shim_vs_as_called,shim_vs_best8,"
            "best8_vs_as_called,best8_index,best8_of,rel_diff,route,weight_bytes,shim_weight_tbs,"
            "as_called_weight_tbs,best8_weight_tbs,shim_host_us,as_called_host_us,tensor_ms,"
            "tensor_tflops,ceiling_vs_as_called,status,timing\n");
    printf("bench_fp8 on %s (%d SMs, L2 %d MB), cuBLASLt %zu, %s, GEMMSHIM_SEED=0x%llx\n",
           prop.name, prop.multiProcessorCount, l2 >> 20, cublasLtGetVersion(),
           o.shim_only ? "the shim side alone, untimed (--shim-only)"
           : graph     ? "median of the rounds, each run of calls replayed from a CUDA graph"
                       : "median of the rounds",
           (unsigned long long)seed);
    if (!o.shim_only) {
        printf("%d rounds; s/asc = as_called_ms / shim_ms, s/b8 = best8_ms / shim_ms, b8/asc = "
               "as_called_ms / best8_ms; b8# = the best heuristic algorithm's index\n",
               o.rounds);
        printf("%-10s %-15s %-9s %-7s %-5s %6s %6s %6s %8s %8s %8s %7s %7s %7s %6s %6s %6s %2s %8s  "
               "%s\n",
               "suite", "op", "types", "scales", "acc", "m", "n", "k", "shim_ms", "asc_ms",
               "best8_ms", "shim_TF", "asc_TF", "b8_TF", "s/asc", "s/b8", "b8/asc", "b8#",
               "rel_diff", "route");
    }
    for (int i = 0; i < n_shapes; ++i)
        run_shape(&o, &shapes[i], &c, &shim, &asc, &best, heuristic, l2, e0, e1);
    fclose(csv_out);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    if (stream)
        cudaStreamDestroy(stream);
    cudaFree(c.ws);
    cublasLtDestroy(c.lt);
    return 0;
}
