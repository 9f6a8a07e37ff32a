/* A/B benchmark: our route (the global cublasGemmEx, i.e. libgemmshim.so,
 * preloaded) against the real cuBLAS (looked up past the shim) in the same
 * process, on the same buffers.
 *
 * Method (see bench/NOTES.md): fresh random data; enough buffer sets that
 * consecutive calls never find their operands in L2; warm-up; then rounds
 * that alternate which side goes first, each side timing a run of calls
 * with CUDA events; the median per side. Speedup = cuBLAS time / our time.
 * Each shape's result is also compared with cuBLAS's (relative Frobenius
 * difference) and the route that served it is read from the shim's log.
 *
 * The memory-bound suites (decode, deepk; any shape with --floor) also time
 * a third side, the floor probe (bench/floor_probe.cu): one kernel that only
 * moves the call's compulsory bytes (A and B read once, C written once; two
 * engines, the faster one's median kept), so
 * each row says how close both GEMMs come to the achievable memory time at
 * that size (ours / floor, cuBLAS / floor) and the TB/s each reaches.
 *
 * --tensor (16-bit rows) also times the tensor probe (bench/tensor_probe.cu):
 * the call's multiply-adds as bf16 / fp16 wgmmas and nothing else, spread
 * evenly over the SMs, in the same rounds, so each row says how far both
 * GEMMs are from the tensor cores at the clock the GPU keeps (cuBLAS /
 * tensor: the most any kernel could gain over cuBLAS on that call; the
 * CSV's tensor_ms). Stream launches, also under --graph.
 *
 * --graph times each side's run of calls captured once into a CUDA graph
 * and replayed (on a stream of its own, cuBLAS given a 32 MiB workspace as
 * PyTorch gives it), as decode servers and torch.compile run GEMMs: kernels
 * of a graph start closer to their predecessors than stream launches do, and
 * the two sides gain unequally (cuBLAS's small decode calls measured
 * 30-50% slower launched back to back on a stream than inside a model's
 * graph; bench/NOTES.md, "Measurement regimes"). The CSV's `timing`
 * column says which (stream / graph).
 *
 * --between puts a small plain kernel before every call, rewriting the head
 * of the call's B (bench/between_op.cu), as a model's other kernels sit
 * between its GEMMs; a run of those kernels alone is timed in every round
 * too and its median taken off both sides. Back to back, a GEMM launched
 * with programmatic dependent launch overlaps the one before it, and
 * cuBLAS's small calls measured 30-50% slower there than between a model's
 * other kernels: the routing table keeps the lowest reading of the ways.
 *
 * usage: bench_ab [--suite sgemm|pingpong|prefill|decode|deepk|all | --shapes FILE]
 *                 [--csv FILE] [--rounds N] [--floor] [--tensor] [--graph] [--between] */
#include "../tests/gpu/gpu_util.h"

/* bench/floor_probe.cu: cudaError_t of the launch; ctas <= 0: one per SM */
int gs_bench_floor_launch(const void *a, size_t a_bytes, const void *b, size_t b_bytes, void *c,
                          size_t c_bytes, int ctas, int chunk_kb, int ring_kb, cudaStream_t stream);

int gs_bench_floor_ldg_launch(const void *a, size_t a_bytes, const void *b, size_t b_bytes,
                              void *c, size_t c_bytes, int ctas, cudaStream_t stream);

/* bench/tensor_probe.cu: cudaError_t of the launch; sink: 256 floats of
 * device memory */
int gs_bench_tensor_probe_16(const void *a, size_t a_bytes, const void *b, size_t b_bytes,
                             int bf16, double flop, float *sink, cudaStream_t stream);

/* bench/between_op.cu: rewrites the head of buf (at most 32 KB), a plain launch */
int gs_bench_between_launch(void *buf, size_t bytes, cudaStream_t stream);

/* The probe's shape (GEMMSHIM_BENCH_FLOOR_CTAS, _CHUNK_KB, _RING_KB; 0: its defaults) */
typedef struct floor_cfg {
    int ctas, chunk_kb, ring_kb;
} floor_cfg_t;


typedef struct shape {
    const char *suite;
    cudaDataType ab, c;
    char layout[3]; /* "TN": transa, transb */
    int m, n, k;
} shape_t;

#define MAX_SHAPES 128
static shape_t shapes[MAX_SHAPES];
static int n_shapes;

static void add(const char *suite, cudaDataType ab, cudaDataType c, const char *layout, int m,
                int n, int k)
{
    shape_t s = {suite, ab, c, {layout[0], layout[1], 0}, m, n, k};
    if (n_shapes < MAX_SHAPES)
        shapes[n_shapes++] = s;
}

static void build(const char *suite)
{
    int all = !strcmp(suite, "all");
    static const char *layouts[4] = {"NN", "NT", "TN", "TT"};
    if (all || !strcmp(suite, "sgemm")) {
        /* squares from 256 to 4096: the classes of the tuning table */
        static const int sq[] = {256, 512, 768, 1024, 1536, 2048, 3072, 4096};
        for (size_t i = 0; i < sizeof sq / sizeof sq[0]; ++i)
            for (int l = 0; l < 4; ++l)
                add("sgemm", CUDA_R_32F, CUDA_R_32F, layouts[l], sq[i], sq[i], sq[i]);
    }
    if (all || !strcmp(suite, "pingpong")) {
        for (int k = 64; k <= 2048; k *= 2)
            add("pingpong-k", CUDA_R_16BF, CUDA_R_16BF, "TN", 8448, 9216, k);
        for (int s = 4096; s <= 8192; s *= 2)
            for (int l = 0; l < 4; ++l)
                add("pingpong-sq", CUDA_R_16BF, CUDA_R_16BF, layouts[l], s, s, s);
    }
    if (all || !strcmp(suite, "decode")) {
        /* nn.Linear in LLM decode: TN, m = out features, n = tokens. The
         * first four m x k are issue 4's targets; 1024 and 14336 rows are
         * Llama-3-8B's k/v (grouped-query) and gate/up projections */
        static const int dm[6] = {4096, 6144, 28672, 4096, 1024, 14336},
                         dk[6] = {4096, 4096, 4096, 14336, 4096, 4096},
                         dn[7] = {1, 8, 16, 32, 64, 128, 256};
        for (int a = 0; a < 6; ++a)
            for (int b = 0; b < 7; ++b)
                add("decode", CUDA_R_16BF, CUDA_R_16BF, "TN", dm[a], dn[b], dk[a]);
    }
    if (all || !strcmp(suite, "deepk")) {
        /* few output tiles, long K: split-K territory (issue 4's targets) */
        for (int l = 0; l < 4; ++l) {
            add("deepk", CUDA_R_16BF, CUDA_R_16BF, layouts[l], 256, 256, 65536);
            add("deepk", CUDA_R_16BF, CUDA_R_16BF, layouts[l], 1024, 1024, 32768);
            add("deepk", CUDA_R_16BF, CUDA_R_32F, layouts[l], 256, 256, 65536);
            add("deepk-f32", CUDA_R_32F, CUDA_R_32F, layouts[l], 512, 512, 32768);
        }
        add("deepk", CUDA_R_16BF, CUDA_R_16BF, "TN", 512, 512, 131072);
        add("deepk", CUDA_R_16BF, CUDA_R_32F, "TN", 512, 512, 131072);
        add("deepk-f32", CUDA_R_32F, CUDA_R_32F, "NN", 256, 256, 131072);
    }
    if (all || !strcmp(suite, "prefill")) {
        static const int ms[3] = {4096, 6144, 28672}, ns[2] = {2048, 8192}, ks[2] = {4096, 14336};
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 2; ++b)
                for (int c = 0; c < 2; ++c)
                    add("prefill", CUDA_R_16BF, CUDA_R_16BF, "TN", ms[a], ns[b], ks[c]);
    }
}

/* One line of a shape list (gemmshim tune), "#" comments cut:
 *     DTYPE LAYOUT M N K      DTYPE: f32 bf16 f16 bf16>f32 f16>f32 (input>output)
 * 0, or -1 with the bad line reported. */
static int shape_line(void *ctx, const char *path, int lineno, char *line)
{
    (void)ctx;
    char dt[16], lay[8], extra[8];
    int m, n, k, bad = 0;
    const int got = sscanf(line, "%15s %7s %d %d %d %7s", dt, lay, &m, &n, &k, extra);
    if (got <= 0)
        return 0; /* blank */
    cudaDataType ab = CUDA_R_32F, c = CUDA_R_32F;
    if (!strcmp(dt, "bf16") || !strcmp(dt, "bf16>f32"))
        ab = CUDA_R_16BF, c = dt[4] ? CUDA_R_32F : CUDA_R_16BF;
    else if (!strcmp(dt, "f16") || !strcmp(dt, "f16>f32"))
        ab = CUDA_R_16F, c = dt[3] ? CUDA_R_32F : CUDA_R_16F;
    else if (strcmp(dt, "f32"))
        bad = 1;
    if (bad || got != 5 || strlen(lay) != 2 || !strchr("NT", lay[0]) ||
        !strchr("NT", lay[1]) || m < 1 || n < 1 || k < 1) {
        fprintf(stderr, "bench_ab: %s:%d: expected 'DTYPE LAYOUT M N K' (DTYPE f32, bf16, "
                        "f16, bf16>f32 or f16>f32; LAYOUT NN/NT/TN/TT; sizes >= 1)\n",
                path, lineno);
        return -1;
    }
    if (n_shapes == MAX_SHAPES) {
        fprintf(stderr, "bench_ab: %s: more than %d shapes\n", path, MAX_SHAPES);
        return -1;
    }
    add("shapes", ab, c, lay, m, n, k);
    return 0;
}

static int load_shapes(const char *path)
{
    return gu_each_line(path, shape_line, NULL);
}

/* Random operands: a pool of fresh random values per element type, copied
 * into each buffer from a random offset (filling gigabytes element by element
 * on the host would cost more device-lease time than the timing itself). */
#define POOL_ELEMS (1u << 24)
static void *pool_for(cudaDataType t)
{
    static void *pools[3];
    int slot = t == CUDA_R_32F ? 0 : t == CUDA_R_16BF ? 1 : 2;
    if (!pools[slot]) {
        pools[slot] = malloc((size_t)POOL_ELEMS * 2 * gu_esize(t));
        for (size_t i = 0; i < (size_t)POOL_ELEMS * 2; ++i) {
            float v = (float)gu_uniform();
            gu_put(pools[slot], i, t, v);
        }
    }
    return pools[slot];
}

static void fill_device(void *d, size_t n, cudaDataType t)
{
    const char *pool = pool_for(t);
    size_t es = gu_esize(t);
    for (size_t done = 0; done < n;) {
        size_t chunk = n - done < POOL_ELEMS ? n - done : POOL_ELEMS;
        size_t from = (size_t)gu_int(0, POOL_ELEMS - 1);
        CUDA_OK(cudaMemcpy((char *)d + done * es, pool + from * es, chunk * es,
                           cudaMemcpyHostToDevice));
        done += chunk;
    }
}


static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

typedef struct sets {
    int count;
    void *A[32], *B[32], *C[32];
} sets_t;

static void call(gemmex_fn f, cublasHandle_t h, const shape_t *s, void *A, void *B, void *C)
{
    const float alpha = 1.f, beta = 0.f;
    cublasOperation_t ta = s->layout[0] == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = s->layout[1] == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
    int lda = ta == CUBLAS_OP_N ? s->m : s->k, ldb = tb == CUBLAS_OP_N ? s->k : s->n;
    CUBLAS_OK(f(h, ta, tb, s->m, s->n, s->k, &alpha, A, s->ab, lda, B, s->ab, ldb, &beta, C,
                s->c, s->m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/* The stream every GEMM and event goes to: the legacy stream, or with
 * --graph a stream of bench_ab's own (the legacy stream cannot be captured). */
static cudaStream_t stream;
static int between; /* --between: a plain kernel before every call */

/* One side's run of calls, as a graph when timing with --graph: captured on
 * first use, replayed after (0: stream launches). f == NULL: the --between
 * kernels alone. */
typedef struct run {
    gemmex_fn f;
    cudaGraphExec_t exec;
    float host_us; /* stream launches: the host's microseconds per call, last run */
} run_t;

static void issue_run(gemmex_fn f, cublasHandle_t h, const shape_t *s, const sets_t *b, int iters)
{
    const size_t b_bytes = (size_t)s->k * s->n * gu_esize(s->ab);
    for (int i = 0; i < iters; ++i) {
        int j = i % b->count;
        if (between)
            CUDA_OK((cudaError_t)gs_bench_between_launch(b->B[j], b_bytes, stream));
        if (f)
            call(f, h, s, b->A[j], b->B[j], b->C[j]);
    }
}

/* ms per call over `iters` calls cycling through the buffer sets; with a
 * graph-timed run (graph != 0), the same calls captured once and replayed */
static float time_run(run_t *r, int graph, cublasHandle_t h, const shape_t *s, const sets_t *b,
                      int iters, cudaEvent_t e0, cudaEvent_t e1)
{
    if (graph && !r->exec) {
        cudaGraph_t g;
        CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        issue_run(r->f, h, s, b, iters);
        CUDA_OK(cudaStreamEndCapture(stream, &g));
        CUDA_OK(cudaGraphInstantiate(&r->exec, g, 0));
        CUDA_OK(cudaGraphDestroy(g));
        CUDA_OK(cudaGraphLaunch(r->exec, stream)); /* its first launch uploads it: untimed */
    }
    CUDA_OK(cudaEventRecord(e0, stream));
    if (graph) {
        CUDA_OK(cudaGraphLaunch(r->exec, stream));
    } else {
        /* how long the host takes to issue the calls: near the GPU time
         * per call, the GPU was waiting for the host (the side is paced by
         * its CPU cost, not measured by its kernels) */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        issue_run(r->f, h, s, b, iters);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        r->host_us = (float)(((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / iters);
    }
    CUDA_OK(cudaEventRecord(e1, stream));
    CUDA_OK(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    return ms / iters;
}

/* One floor-probe call of shape s on (A, B, C): the load engine or the bulk
 * engine with the settings in fc. The launch's error. */
static cudaError_t floor_call(const shape_t *s, void *A, void *B, void *C, const floor_cfg_t *fc,
                              int ldg)
{
    size_t a_bytes = (size_t)s->m * s->k * gu_esize(s->ab), b_bytes = (size_t)s->k * s->n * gu_esize(s->ab);
    size_t c_bytes = (size_t)s->m * s->n * gu_esize(s->c);
    return (cudaError_t)(ldg ? gs_bench_floor_ldg_launch(A, a_bytes, B, b_bytes, C, c_bytes, 0, stream)
                             : gs_bench_floor_launch(A, a_bytes, B, b_bytes, C, c_bytes, fc->ctas,
                                                     fc->chunk_kb, fc->ring_kb, stream));
}

/* ms per floor-probe call, over the same buffer sets as time_run */
static float time_floor(const shape_t *s, const sets_t *b, int iters, const floor_cfg_t *fc,
                        int ldg, cudaEvent_t e0, cudaEvent_t e1)
{
    CUDA_OK(cudaEventRecord(e0, stream));
    for (int i = 0; i < iters; ++i) {
        int j = i % b->count;
        CUDA_OK(floor_call(s, b->A[j], b->B[j], b->C[j], fc, ldg));
    }
    CUDA_OK(cudaEventRecord(e1, stream));
    CUDA_OK(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    return ms / iters;
}

/* One tensor-probe call of shape s on (A, B): the launch's error. */
static cudaError_t tensor_call(const shape_t *s, void *A, void *B, float *sink)
{
    const size_t es = gu_esize(s->ab);
    return (cudaError_t)gs_bench_tensor_probe_16(A, (size_t)s->m * s->k * es, B,
                                                 (size_t)s->k * s->n * es, s->ab == CUDA_R_16BF,
                                                 2.0 * s->m * s->n * s->k, sink, stream);
}

/* ms per tensor-probe call of shape s, over the same buffer sets */
static float time_tensor(const shape_t *s, const sets_t *b, int iters, float *sink,
                         cudaEvent_t e0, cudaEvent_t e1)
{
    CUDA_OK(cudaEventRecord(e0, stream));
    for (int i = 0; i < iters; ++i) {
        const int j = i % b->count;
        CUDA_OK(tensor_call(s, b->A[j], b->B[j], sink));
    }
    CUDA_OK(cudaEventRecord(e1, stream));
    CUDA_OK(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    return ms / iters;
}

/* The route the shim logged for this shape ("?" if the log is elsewhere). */
static void route_of(const char *log, const shape_t *s, char *out, size_t cap)
{
    snprintf(out, cap, "?");
    FILE *f = log ? fopen(log, "r") : NULL;
    if (!f)
        return;
    char line[1024], key[128];
    snprintf(key, sizeof key, " %c%c ", s->layout[0], s->layout[1]);
    char dims[128];
    snprintf(dims, sizeof dims, " m=%d n=%d k=%d ", s->m, s->n, s->k);
    while (fgets(line, sizeof line, f)) {
        char *arrow = strstr(line, "-> ");
        if (!arrow || !strstr(line, key) || !strstr(line, dims))
            continue;
        snprintf(out, cap, "%s", arrow + 3);
        out[strcspn(out, " \n")] = 0;
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    const char *suite = "all", *csv = "bench_ab.csv", *shapes_file = NULL;
    int rounds = 15, floor_all = 0, graph = 0, tensor_all = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--suite") && i + 1 < argc)
            suite = argv[++i];
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            csv = argv[++i];
        else if (!strcmp(argv[i], "--shapes") && i + 1 < argc)
            shapes_file = argv[++i];
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--floor"))
            floor_all = 1;
        else if (!strcmp(argv[i], "--tensor"))
            tensor_all = 1;
        else if (!strcmp(argv[i], "--graph"))
            graph = 1;
        else if (!strcmp(argv[i], "--between"))
            between = 1;
        else {
            fprintf(stderr, "usage: %s [--suite sgemm|pingpong|prefill|decode|deepk|all | "
                            "--shapes FILE] [--csv FILE] [--rounds N] [--floor] [--tensor] "
                            "[--graph] [--between]\n",
                    argv[0]);
            return 2;
        }
    }
    /* a bad shape list is an error on any machine, GPU or not */
    if (shapes_file && load_shapes(shapes_file))
        return 2;
    /* Route everything eligible, so the A side really is our kernel; the
     * log tells which kernel ran. Set before the first cuBLAS call: the shim
     * reads its configuration then. */
    setenv("GEMMSHIM_POLICY", "eligible", 0);
    /* the log is read for routes only: no per-call events on our side */
    setenv("GEMMSHIM_LOG_TIMING", "0", 0);
    const char *log = getenv("GEMMSHIM_LOG");
    if (!log) {
        setenv("GEMMSHIM_LOG", "bench_route.log", 1);
        log = "bench_route.log";
    }
    gpu_require_or_skip("bench_ab");
    if (!gu_shim_present()) {
        fprintf(stderr, "bench_ab: run under LD_PRELOAD=libgemmshim.so\n");
        return 1;
    }
    if (!shapes_file)
        build(suite);
    if (!n_shapes) {
        fprintf(stderr, "bench_ab: unknown suite '%s'\n", suite);
        return 2;
    }
    gu_seed(gu_seed_from_env());
    gemmex_fn ours = (gemmex_fn)cublasGemmEx, real = (gemmex_fn)gu_real_cublas_sym("cublasGemmEx");
    cublasHandle_t h;
    CUBLAS_OK(cublasCreate(&h));
    int dev, l2 = 0;
    struct cudaDeviceProp prop;
    CUDA_OK(cudaGetDevice(&dev));
    CUDA_OK(cudaGetDeviceProperties(&prop, dev));
    CUDA_OK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    void *cublas_ws = NULL;
    if (graph) { /* cuBLAS allocates nothing inside capture given a workspace */
        CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        CUBLAS_OK(cublasSetStream(h, stream));
        CUDA_OK(cudaMalloc(&cublas_ws, 32u << 20));
        CUBLAS_OK(cublasSetWorkspace(h, cublas_ws, 32u << 20));
    }
    FILE *out = fopen(csv, "w");
    if (!out) {
        perror(csv);
        return 1;
    }
    fprintf(out, "gpu,suite,dtype,layout,m,n,k,ours_ms,cublas_ms,speedup,ours_tflops,"
                 "cublas_tflops,rel_diff,route,bytes,floor_ms,floor_engine,timing,ours_host_us,"
                 "cublas_host_us,tensor_ms\n");
    /* The floor probe: off where it cannot run (not sm_90), said once. */
    const char *e_ctas = getenv("GEMMSHIM_BENCH_FLOOR_CTAS"), *e_chunk = getenv("GEMMSHIM_BENCH_FLOOR_CHUNK_KB"),
               *e_ring = getenv("GEMMSHIM_BENCH_FLOOR_RING_KB");
    floor_cfg_t fcfg = {e_ctas ? atoi(e_ctas) : 0, e_chunk ? atoi(e_chunk) : 0, e_ring ? atoi(e_ring) : 0};
    int floor_ok = 1;
    /* The tensor probe (--tensor): off where it cannot run (built for
     * sm_90a), said once */
    int tensor_ok = tensor_all;
    float *tensor_sink = NULL;
    if (tensor_ok)
        CUDA_OK(cudaMalloc((void **)&tensor_sink, 256 * sizeof(float)));
    printf("bench_ab on %s (%d SMs, L2 %d MB), %d rounds, median, %s%s\n", prop.name,
           prop.multiProcessorCount, l2 >> 20, rounds,
           graph ? "each run of calls replayed from a CUDA graph" : "stream launches",
           between ? ", a plain kernel before every call (its own time taken off)" : "");
    printf("%-12s %-8s %-3s %6s %6s %6s %9s %9s %8s %8s %7s %9s  %s\n", "suite", "dtype", "lay",
           "m", "n", "k", "ours_ms", "cublas_ms", "ours_TF", "cubl_TF", "speedup", "rel_diff",
           "route");
    printf("(memory-bound rows: floor_ms = the floor probe, and TB/s of compulsory bytes for "
           "ours / cuBLAS / floor)\n");
    for (int si = 0; si < n_shapes; ++si) {
        const shape_t *s = &shapes[si];
        size_t na = (size_t)s->m * s->k, nb = (size_t)s->k * s->n, nc = (size_t)s->m * s->n;
        size_t set_bytes = (na + nb) * gu_esize(s->ab) + nc * gu_esize(s->c);
        sets_t b;
        b.count = (int)((3.0 * l2) / set_bytes) + 1;
        b.count = b.count < 2 ? 2 : b.count > 32 ? 32 : b.count;
        for (int i = 0; i < b.count; ++i) {
            CUDA_OK(cudaMalloc(&b.A[i], na * gu_esize(s->ab)));
            CUDA_OK(cudaMalloc(&b.B[i], nb * gu_esize(s->ab)));
            CUDA_OK(cudaMalloc(&b.C[i], nc * gu_esize(s->c)));
            fill_device(b.A[i], na, s->ab);
            fill_device(b.B[i], nb, s->ab);
        }
        /* correctness of the A side against cuBLAS on set 0 */
        void *h1 = malloc(nc * gu_esize(s->c)), *h2 = malloc(nc * gu_esize(s->c));
        CUDA_OK(cudaMemset(b.C[0], 0xff, nc * gu_esize(s->c))); /* NaN: unwritten shows */
        CUDA_OK(cudaDeviceSynchronize()); /* fills and memset (legacy stream) before `stream` */
        call(ours, h, s, b.A[0], b.B[0], b.C[0]);
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaMemcpy(h1, b.C[0], nc * gu_esize(s->c), cudaMemcpyDeviceToHost));
        call(real, h, s, b.A[0], b.B[0], b.C[0]);
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaMemcpy(h2, b.C[0], nc * gu_esize(s->c), cudaMemcpyDeviceToHost));
        double rel = gu_rel_diff(h1, h2, nc, s->c);
        free(h1);
        free(h2);
        /* iterations per sample: about 2 ms of work, at least one pass over the sets */
        run_t probe_real = {real, 0, 0.f}, probe_ours = {ours, 0, 0.f};
        float probe = time_run(&probe_real, 0, h, s, &b, b.count, e0, e1);
        time_run(&probe_ours, 0, h, s, &b, b.count, e0, e1);
        int iters = (int)(2.0 / (probe > 1e-4f ? probe : 1e-4f));
        iters = iters < b.count ? b.count : iters > 2000 ? 2000 : iters;
        int with_floor = floor_ok && (floor_all || !strcmp(s->suite, "decode") ||
                                      !strncmp(s->suite, "deepk", 5));
        if (with_floor) { /* each engine tried once; one that cannot run turns the floor off */
            for (int ldg = 0; ldg < 2 && with_floor; ++ldg) {
                cudaError_t e = floor_call(s, b.A[0], b.B[0], b.C[0], &fcfg, ldg);
                if (e == cudaSuccess)
                    e = cudaDeviceSynchronize();
                if (e != cudaSuccess) {
                    printf("(no floor: its %s engine %s: %s)\n", ldg ? "load" : "bulk",
                           e == cudaErrorInvalidValue ? "rejects the GEMMSHIM_BENCH_FLOOR_* settings"
                                                      : "cannot run here",
                           cudaGetErrorString(e));
                    cudaGetLastError();
                    floor_ok = with_floor = 0;
                }
            }
        }
        int with_tensor = tensor_ok && (s->ab == CUDA_R_16BF || s->ab == CUDA_R_16F);
        if (with_tensor) { /* tried once; a probe that cannot run turns itself off */
            cudaError_t e = tensor_call(s, b.A[0], b.B[0], tensor_sink);
            if (e == cudaSuccess)
                e = cudaDeviceSynchronize();
            if (e != cudaSuccess) {
                printf("(no tensor probe: it cannot run here: %s)\n", cudaGetErrorString(e));
                cudaGetLastError();
                tensor_ok = with_tensor = 0;
            }
        }
        float t_ours[64], t_real[64], t_floor[64], t_floor_ldg[64], t_ops[64], h_ours[64],
            h_real[64], h_ops[64], t_tensor[64];
        int r_n = rounds > 64 ? 64 : rounds;
        run_t run_real = {real, 0, 0.f}, run_ours = {ours, 0, 0.f}, run_ops = {NULL, 0, 0.f};
        for (int r = 0; r < r_n; ++r) {
            if (r & 1) {
                t_real[r] = time_run(&run_real, graph, h, s, &b, iters, e0, e1);
                t_ours[r] = time_run(&run_ours, graph, h, s, &b, iters, e0, e1);
            } else {
                t_ours[r] = time_run(&run_ours, graph, h, s, &b, iters, e0, e1);
                t_real[r] = time_run(&run_real, graph, h, s, &b, iters, e0, e1);
            }
            if (between) {
                t_ops[r] = time_run(&run_ops, graph, h, s, &b, iters, e0, e1);
                h_ops[r] = run_ops.host_us;
            }
            h_ours[r] = run_ours.host_us;
            h_real[r] = run_real.host_us;
            if (with_floor) { /* the two engines in alternating order too */
                const int first = r & 1;
                float *t_of[2] = {t_floor, t_floor_ldg};
                t_of[first][r] = time_floor(s, &b, iters, &fcfg, first, e0, e1);
                t_of[!first][r] = time_floor(s, &b, iters, &fcfg, !first, e0, e1);
            }
            if (with_tensor)
                t_tensor[r] = time_tensor(s, &b, iters, tensor_sink, e0, e1);
        }
        qsort(t_ours, r_n, sizeof(float), cmp_float);
        qsort(t_real, r_n, sizeof(float), cmp_float);
        qsort(h_ours, r_n, sizeof(float), cmp_float);
        qsort(h_real, r_n, sizeof(float), cmp_float);
        double mo = t_ours[r_n / 2], mr = t_real[r_n / 2], mf = NAN;
        double ho = h_ours[r_n / 2], hr = h_real[r_n / 2];
        if (between) { /* the kernels between the calls are no side's time */
            qsort(t_ops, r_n, sizeof(float), cmp_float);
            qsort(h_ops, r_n, sizeof(float), cmp_float);
            mo -= t_ops[r_n / 2];
            mr -= t_ops[r_n / 2];
            ho -= h_ops[r_n / 2];
            hr -= h_ops[r_n / 2];
            /* what is left must stand clear of the noise of the two medians
             * it came from: else the row says nan, not a made-up ratio */
            if (!(mo > 0.05 * t_ours[r_n / 2]) || !(mr > 0.05 * t_real[r_n / 2])) {
                printf("%-12s %dx%dx%d: the kernels between the calls take (nearly) all the time; "
                       "no reading\n", s->suite, s->m, s->n, s->k);
                mo = mr = NAN;
            }
        }
        const char *engine = "";
        if (with_floor) { /* the faster engine's median */
            qsort(t_floor, r_n, sizeof(float), cmp_float);
            qsort(t_floor_ldg, r_n, sizeof(float), cmp_float);
            mf = t_floor[r_n / 2];
            engine = "bulk";
            if (t_floor_ldg[r_n / 2] < mf) {
                mf = t_floor_ldg[r_n / 2];
                engine = "load";
            }
        }
        double mt = NAN;
        if (with_tensor) {
            qsort(t_tensor, r_n, sizeof(float), cmp_float);
            mt = t_tensor[r_n / 2];
        }
        /* compulsory bytes: A and B read once, C written once (beta = 0) */
        double bytes = (double)(na + nb) * gu_esize(s->ab) + (double)nc * gu_esize(s->c);
        double flop = 2.0 * s->m * s->n * s->k;
        char route[160];
        route_of(log, s, route, sizeof route);
        /* input type, and ">f32" where a 16-bit product is stored as fp32 */
        const char *dt = s->ab == CUDA_R_32F    ? "f32"
                         : s->ab == CUDA_R_16BF ? (s->c == CUDA_R_32F ? "bf16>f32" : "bf16")
                                                : (s->c == CUDA_R_32F ? "f16>f32" : "f16");
        printf("%-12s %-8s %-3s %6d %6d %6d %9.4f %9.4f %8.1f %8.1f %6.3fx %9.2e  %s\n",
               s->suite, dt, s->layout, s->m, s->n, s->k, mo, mr, flop / mo / 1e9,
               flop / mr / 1e9, mr / mo, rel, route);
        if (with_floor)
            printf("%-12s floor_ms %.4f (%s; bulk %.4f, load %.4f)   TB/s ours %.2f  cuBLAS %.2f  "
                   "floor %.2f   floor/ours %.2f  floor/cuBLAS %.2f\n", "", mf, engine,
                   t_floor[r_n / 2], t_floor_ldg[r_n / 2], bytes / mo / 1e9, bytes / mr / 1e9,
                   bytes / mf / 1e9, mf / mo, mf / mr);
        fprintf(out, "%s,%s,%s,%s,%d,%d,%d,%.6f,%.6f,%.4f,%.2f,%.2f,%.3e,%s,%.0f,", prop.name,
                s->suite, dt, s->layout, s->m, s->n, s->k, mo, mr, mr / mo, flop / mo / 1e9,
                flop / mr / 1e9, rel, route, bytes);
        if (with_floor)
            fprintf(out, "%.6f", mf);
        fprintf(out, ",%s,%s%s,", engine, graph ? "graph" : "stream", between ? "+between" : "");
        if (graph) /* no host time: a replay is one launch */
            fprintf(out, ",");
        else
            fprintf(out, "%.2f,%.2f", ho, hr);
        fprintf(out, ",");
        if (with_tensor)
            fprintf(out, "%.6f", mt);
        fprintf(out, "\n");
        if (with_tensor)
            printf("%-12s tensor_ms %.4f (%.1f TFLOP/s): cuBLAS / tensor %.3f (the most any kernel "
                   "could gain), ours at %.3f of the probe's speed\n",
                   "", mt, flop / mt / 1e9, mr / mt, mt / mo);
        if (!graph)
            printf("%-12s host us per call: ours %.2f, cuBLAS %.2f (GPU us per call %.2f / %.2f)\n", "",
                   ho, hr, 1e3 * mo, 1e3 * mr);
        fflush(out);
        if (run_real.exec)
            cudaGraphExecDestroy(run_real.exec);
        if (run_ours.exec)
            cudaGraphExecDestroy(run_ours.exec);
        if (run_ops.exec)
            cudaGraphExecDestroy(run_ops.exec);
        fflush(stdout);
        for (int i = 0; i < b.count; ++i) {
            cudaFree(b.A[i]);
            cudaFree(b.B[i]);
            cudaFree(b.C[i]);
        }
    }
    fclose(out);
    cudaFree(tensor_sink);
    cublasDestroy(h);
    if (graph) {
        cudaFree(cublas_ws);
        cudaStreamDestroy(stream);
    }
    return 0;
}
