/* Direct tests of the SIMT SGEMM launch API (gs_sgemm_simt_run, no shim in
 * the way), for what the shim cannot hand it yet or cannot reach:
 *   - the cublasLt BIAS epilogue (fp32 bias: C = alpha*op(A)*op(B) + beta*C,
 *     then + bias[i] on every column), unsplit and split;
 *   - split K (stream-K through a workspace this test allocates with
 *     cudaMalloc + cudaMemset 0): deep K up to 131072, every transpose,
 *     padded and misaligned operands, alpha/beta incl. alpha == 0 and
 *     beta == 0 over a NaN-filled C, host and device scalars; that the
 *     plan really splits; bitwise determinism (the same call twice); the
 *     workspace's counter bytes left zero; and the refusal (non-zero return,
 *     C untouched) with a workspace one byte too small.
 * Every case against an fp64 host reference (relative Frobenius error
 * <= 1e-5, padding rows of C untouched); split cases also run the real
 * cuBLAS on the same inputs and pass as well when within 2x its error: with
 * few outputs the relative error is that of a handful of long sums, which
 * cancellation can push past 1e-5 for cuBLAS too (H200: 1 x 1 x 131072,
 * ours 1.0e-5, cuBLAS 5.1e-6).
 * Cases with fewer than FEW_OUTPUTS outputs take positive operands. With
 * random signs a single output's relative error is set by how close the
 * draw's sum happens to come to zero: a host model of our order and of a
 * pairwise one put it above 1e-5 for ~2% of draws of 1 x 1 x 131072, and
 * the ratio of two orders' errors on one output scatters over 10x: the
 * model fails the 2x rule on 1-2% of draws (H200, one such
 * run: ours 1.13e-5, cuBLAS 2.26e-6) with nothing wrong. With positive
 * terms nothing cancels: the error stays ~1e-7 while a lost or doubled
 * partial (>= 1/512 of the sum) is still a 2e-3 failure. Accuracy under cancellation is checked where the
 * Frobenius norm averages it: every case with 8 or more outputs.
 *
 *   test_sgemm_bias                 the correctness cases (exit 0: all pass)
 *   test_sgemm_bias --quick         small cases only (for compute-sanitizer)
 *   test_sgemm_bias --bench [--csv FILE]
 *                                   time gs_sgemm_simt_run against cublasGemmEx
 *                                   fp32 on the deepk fp32 shapes and 4096^3
 *                                   (bench_ab's method: interleaved, medians
 *                                   of 15, operands rotated past L2)
 */
#include "gpu_util.h"

#include "gs_kernels.h"

#define TOL 1e-5
#define FEW_OUTPUTS 8
#define PAD_SENTINEL 12345.0f

typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                   int, const float *, const float *, int, const float *, int,
                                   const float *, float *, int);

static gs_device_t dev;
static cublasHandle_t handle;
static cudaStream_t stream;
static sgemm_fn real_sgemm;
static gemmex_fn real_gemmex;
static void *workspace;
static size_t workspace_size;
static float *d_scalars;

static gs_problem_t make_problem(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *A,
                                 int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc,
                                 const float *alpha, const float *beta, int dev_mode,
                                 const float *bias)
{
    gs_problem_t p;
    memset(&p, 0, sizeof p);
    p.entry = GS_EP_SGEMM;
    p.a_type = p.b_type = p.c_type = p.scalar_type = GS_DT_F32;
    p.compute = GS_CT_F32;
    p.trans_a = ta ? GS_OP_T : GS_OP_N;
    p.trans_b = tb ? GS_OP_T : GS_OP_N;
    p.m = m;
    p.n = n;
    p.k = k;
    p.A = A;
    p.B = B;
    p.C = C;
    p.lda = lda;
    p.ldb = ldb;
    p.ldc = ldc;
    p.batch = 1;
    p.alpha = alpha;
    p.beta = beta;
    p.scalars_on_device = dev_mode;
    p.stream = stream;
    p.bias = bias;
    p.bias_type = GS_DT_F32;
    gs_problem_classify(&p);
    return p;
}

typedef struct {
    int ta, tb;
    int64_t m, n, k;
    int pad;        /* extra rows of lda/ldb/ldc */
    int off;        /* misalign A, B, C by one float */
    float alpha, beta;
    int dev_mode;
    int bias;
    int want_split; /* 1: the plan must split; 0: must not; -1: either */
} case_t;

static int n_pass, n_fail, n_split, n_by_cublas;
static double worst_err, worst_ratio;

/* One case; returns 1 when it passed. */
static int run_case(const case_t *cs, int verbose)
{
    const int64_t m = cs->m, n = cs->n, k = cs->k, off = cs->off;
    const int64_t ra = cs->ta ? k : m, ca = cs->ta ? m : k, rb = cs->tb ? n : k, cb = cs->tb ? k : n;
    const int64_t lda = (ra > 1 ? ra : 1) + cs->pad, ldb = (rb > 1 ? rb : 1) + cs->pad,
                  ldc = m + cs->pad;
    const int64_t na = off + lda * ca, nb = off + ldb * cb, nc = off + ldc * n;
    float *hA = malloc(sizeof(float) * na), *hB = malloc(sizeof(float) * nb),
          *hC = malloc(sizeof(float) * nc), *hOut = malloc(sizeof(float) * nc),
          *hOut2 = malloc(sizeof(float) * nc), *hBias = malloc(sizeof(float) * m);
    double *dA = malloc(sizeof(double) * na), *dB = malloc(sizeof(double) * nb),
           *dC = malloc(sizeof(double) * nc), *dOut = malloc(sizeof(double) * ldc * n);
    gu_fill_f32_f64(hA, dA, na);
    gu_fill_f32_f64(hB, dB, nb);
    if (m * n < FEW_OUTPUTS) { /* one or a few long dot products: positive terms */
        for (int64_t i = 0; i < na; ++i)
            dA[i] = hA[i] = fabsf(hA[i]);
        for (int64_t i = 0; i < nb; ++i)
            dB[i] = hB[i] = fabsf(hB[i]);
    }
    for (int64_t i = 0; i < nc; ++i)
        hC[i] = cs->beta == 0.f ? NAN : (float)gu_uniform();
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = m; i < ldc; ++i)
            hC[off + i + j * ldc] = PAD_SENTINEL;
    for (int64_t i = 0; i < nc; ++i)
        dC[i] = hC[i];
    for (int64_t i = 0; i < m; ++i)
        hBias[i] = (float)gu_uniform();

    float *A, *B, *C, *bias;
    CUDA_OK(cudaMalloc((void **)&A, sizeof(float) * na));
    CUDA_OK(cudaMalloc((void **)&B, sizeof(float) * nb));
    CUDA_OK(cudaMalloc((void **)&C, sizeof(float) * nc));
    CUDA_OK(cudaMalloc((void **)&bias, sizeof(float) * m));
    CUDA_OK(cudaMemcpy(A, hA, sizeof(float) * na, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(B, hB, sizeof(float) * nb, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(C, hC, sizeof(float) * nc, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(bias, hBias, sizeof(float) * m, cudaMemcpyHostToDevice));
    float s[2] = {cs->alpha, cs->beta};
    CUDA_OK(cudaMemcpy(d_scalars, s, sizeof s, cudaMemcpyHostToDevice));

    gs_problem_t p = make_problem(cs->ta, cs->tb, m, n, k, A + off, lda, B + off, ldb, C + off, ldc,
                                  cs->dev_mode ? d_scalars : &s[0],
                                  cs->dev_mode ? d_scalars + 1 : &s[1], cs->dev_mode,
                                  cs->bias ? bias : NULL);
    const char *why = NULL;
    int ok = 1;
    const size_t need = gs_sgemm_simt_workspace_bytes(&p, &dev);
    const int split = need > 0;
    if (!gs_sgemm_simt_can_implement(&p.cls, &dev)) {
        why = "can_implement = 0";
        ok = 0;
    }
    if (ok && cs->want_split >= 0 && split != cs->want_split) {
        why = split ? "plan splits, expected not" : "plan does not split, expected split";
        ok = 0;
    }
    if (ok && need > workspace_size) {
        why = "workspace larger than the test's buffer";
        ok = 0;
    }
    int refused_ok = 1, det_ok = 1, flags_ok = 1, pad_ok = 1;
    double err = INFINITY, err_cublas = NAN;
    if (ok && split) {
        /* one byte short: refused, nothing enqueued */
        p.workspace = workspace;
        p.workspace_size = need - 1;
        if (gs_sgemm_simt_run(&p, &dev) != GS_RUN_NO_WORKSPACE)
            refused_ok = 0;
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaMemcpy(hOut, C, sizeof(float) * nc, cudaMemcpyDeviceToHost));
        if (memcmp(hOut, hC, sizeof(float) * nc))
            refused_ok = 0;
    }
    if (ok) {
        p.workspace = split ? workspace : NULL;
        p.workspace_size = split ? workspace_size : 0;
        int rc = gs_sgemm_simt_run(&p, &dev);
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaGetLastError());
        if (rc) {
            why = "gs_sgemm_simt_run returned non-zero";
            ok = 0;
        }
    }
    if (ok) {
        CUDA_OK(cudaMemcpy(hOut, C, sizeof(float) * nc, cudaMemcpyDeviceToHost));
        /* the same call again on the same inputs: the same bits */
        CUDA_OK(cudaMemcpy(C, hC, sizeof(float) * nc, cudaMemcpyHostToDevice));
        CUDA_OK(gs_sgemm_simt_run(&p, &dev) == 0 ? cudaSuccess : cudaErrorUnknown);
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaMemcpy(hOut2, C, sizeof(float) * nc, cudaMemcpyDeviceToHost));
        det_ok = !memcmp(hOut, hOut2, sizeof(float) * nc);
        if (split) {
            static uint32_t flags[GS_WS_FLAG_BYTES / 4];
            CUDA_OK(cudaMemcpy(flags, workspace, GS_WS_FLAG_BYTES, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < GS_WS_FLAG_BYTES / 4; ++i)
                flags_ok &= flags[i] == 0;
        }
        /* fp64 reference, bias added after alpha and beta */
        double *rc = dC + off;
        gu_ref_gemm(cs->ta, cs->tb, m, n, k, cs->alpha, dA + off, lda, dB + off, ldb, cs->beta, rc,
                    ldc);
        if (cs->bias)
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < m; ++i)
                    rc[i + j * ldc] += hBias[i];
        for (int64_t i = 0; i < ldc * n; ++i)
            dOut[i] = hOut[off + i];
        err = gu_rel_err(rc, ldc, dOut, ldc, m, n);
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = m; i < ldc; ++i)
                pad_ok &= hOut[off + i + j * ldc] == PAD_SENTINEL;
        if (split) {
            /* cuBLAS's own error on the same inputs (bias added in fp64) */
            CUDA_OK(cudaMemcpy(C, hC, sizeof(float) * nc, cudaMemcpyHostToDevice));
            CUBLAS_OK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
            CUBLAS_OK(real_sgemm(handle, cs->ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                 cs->tb ? CUBLAS_OP_T : CUBLAS_OP_N, (int)m, (int)n, (int)k, &s[0],
                                 A + off, (int)lda, B + off, (int)ldb, &s[1], C + off, (int)ldc));
            CUDA_OK(cudaStreamSynchronize(stream));
            CUDA_OK(cudaMemcpy(hOut2, C, sizeof(float) * nc, cudaMemcpyDeviceToHost));
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < ldc; ++i)
                    dOut[i + j * ldc] =
                        hOut2[off + i + j * ldc] + (cs->bias && i < m ? (double)hBias[i] : 0.0);
            err_cublas = gu_rel_err(rc, ldc, dOut, ldc, m, n);
        }
        const int by_cublas = err > TOL && split && err <= 2.0 * err_cublas;
        n_by_cublas += by_cublas;
        if (err > TOL && !by_cublas)
            why = "error above 1e-5 and above 2x cuBLAS's";
        else if (!pad_ok)
            why = "padding rows of C clobbered";
        else if (!det_ok)
            why = "two identical calls differ";
        else if (!flags_ok)
            why = "workspace counter bytes not zero";
        else if (!refused_ok)
            why = "a too-small workspace was not refused (or C changed)";
        ok = why == NULL;
    }
    if (err < INFINITY && err > worst_err)
        worst_err = err;
    if (split && err_cublas > 0 && err / err_cublas > worst_ratio)
        worst_ratio = err / err_cublas;
    n_split += split;
    if (ok)
        ++n_pass;
    else
        ++n_fail;
    if (!ok || verbose)
        printf("%s %c%c m=%lld n=%lld k=%lld pad=%d off=%d alpha=%g beta=%g %s%s: %s, "
               "ws=%zu err=%.3g cuBLAS err=%.3g%s%s\n",
               ok ? "ok  " : "FAIL", "NT"[cs->ta], "NT"[cs->tb], (long long)m, (long long)n,
               (long long)k, cs->pad, cs->off, cs->alpha, cs->beta,
               cs->dev_mode ? "device" : "host", cs->bias ? " bias" : "",
               gs_sgemm_simt_name(&p, &dev), need, err, err_cublas, why ? ": " : "", why ? why : "");
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(bias);
    free(hA); free(hB); free(hC); free(hOut); free(hOut2); free(hBias);
    free(dA); free(dB); free(dC); free(dOut);
    return ok;
}

static const float alphas[] = {1.f, -1.5f, 0.5f, 2.f, 0.f};
static const float betas[] = {0.f, 1.f, -0.25f, 0.5f};

static void correctness(int quick)
{
    /* bias, unsplit (small shapes, k = 0 included) */
    for (int c = 0; c < (quick ? 8 : 32); ++c) {
        case_t cs = {(int)gu_int(0, 1), (int)gu_int(0, 1), gu_int(1, 300), gu_int(1, 300),
                     gu_int(0, 9) == 0 ? 0 : gu_int(1, 300), (int)gu_int(0, 5), (int)gu_int(0, 1),
                     alphas[gu_int(0, 4)], betas[gu_int(0, 3)], (int)gu_int(0, 1), 1, 0};
        run_case(&cs, 0);
    }
    /* split K: fixed shapes first (the bench's, each layout, each tile), then random */
    const case_t fixed[] = {
        {0, 0, 512, 512, 32768, 0, 0, 1.f, 0.f, 0, 0, 1},   /* deepk-f32, 256x128 tiles */
        {0, 1, 512, 512, 32768, 0, 0, 1.f, 0.f, 0, 0, 1},
        {1, 0, 512, 512, 32768, 0, 0, 1.f, 0.f, 0, 0, 1},
        {1, 1, 512, 512, 32768, 0, 0, 1.f, 0.f, 0, 0, 1},
        {0, 0, 256, 256, 131072, 0, 0, 1.f, 0.f, 0, 0, 1},
        {1, 1, 512, 512, 40003, 3, 1, -1.5f, 0.5f, 1, 1, 1}, /* misaligned TT: 128x256 */
        {1, 0, 256, 256, 65536, 1, 1, 0.5f, 0.f, 0, 1, 1},  /* misaligned TN: 128x128 */
        {0, 1, 500, 250, 32771, 1, 0, 1.f, 1.f, 0, 1, 1},   /* 256x128 with edge tiles */
        {1, 1, 509, 263, 100003, 3, 1, -1.5f, 0.5f, 1, 1, 1}, /* 64x64 */
        {0, 1, 40, 33, 131072, 2, 0, 2.f, -0.25f, 1, 0, 1}, /* 64x64 */
        {1, 0, 1, 1, 131072, 0, 0, 1.f, 0.f, 0, 1, 1},
        {0, 0, 700, 3, 20000, 5, 1, 1.f, 1.f, 0, 0, 1},
        {1, 1, 2, 600, 9001, 0, 0, 1.f, 0.f, 1, 1, 1},
        {0, 0, 128, 128, 32768, 0, 0, 0.f, 0.5f, 0, 1, 1},  /* alpha == 0: beta*C + bias */
        {0, 0, 128, 128, 32768, 0, 0, 0.f, 0.f, 1, 0, 1},   /* alpha == beta == 0 */
    };
    const case_t quick_fixed[] = {
        {0, 0, 64, 40, 4096, 1, 0, 1.f, 0.f, 0, 1, 1},
        {1, 1, 33, 130, 8192, 0, 1, -1.5f, 0.5f, 1, 0, 1},
        {1, 0, 130, 7, 6000, 2, 0, 0.5f, 0.f, 0, 0, 1},
        {0, 1, 257, 100, 4100, 0, 0, 1.f, 1.f, 0, 1, 1},
        {0, 0, 100, 100, 30000, 0, 0, 0.f, 0.5f, 0, 1, 1},
        /* the reduction's runs: one 64x64 tile in 5 slots (5 runs of 1,
         * 3 of the 8 run threads idle) and one output in 32 slots (8 runs
         * of 4), so the sanitizers see both */
        {0, 0, 64, 64, 1280, 0, 0, 1.f, 0.f, 0, 0, 1},
        {1, 0, 1, 1, 8192, 0, 0, 1.f, 0.f, 1, 1, 1},
    };
    const case_t *list = quick ? quick_fixed : fixed;
    const int count = quick ? (int)(sizeof quick_fixed / sizeof *quick_fixed)
                            : (int)(sizeof fixed / sizeof *fixed);
    for (int c = 0; c < count; ++c)
        run_case(&list[c], 1);
    for (int c = 0; c < (quick ? 0 : 24); ++c) {
        int64_t k = gu_int(0, 2) == 0 ? gu_int(65536, 131072) : gu_int(2048, 40000);
        int64_t cap = k / 4 < 400 ? k / 4 : 400;
        case_t cs = {c & 1, (c >> 1) & 1, gu_int(1, cap), gu_int(1, cap), k, (int)gu_int(0, 9),
                     (int)(gu_int(0, 3) == 0), alphas[gu_int(0, 3)], betas[gu_int(0, 3)],
                     (int)gu_int(0, 1), (int)gu_int(0, 1), -1};
        run_case(&cs, 1);
    }
}

/* ---- timing (the deepk fp32 rows of bench_ab, and 4096^3 unsplit) ---- */

#define ROUNDS 15
#define RUN_MS 2.0

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void bench(const char *csv_path)
{
    static const struct { int m, n, k; const char *layout; } shapes[] = {
        {512, 512, 32768, "NN"}, {512, 512, 32768, "NT"}, {512, 512, 32768, "TN"},
        {512, 512, 32768, "TT"}, {256, 256, 131072, "NN"}, {4096, 4096, 4096, "NN"},
        {4096, 4096, 4096, "NT"}, {4096, 4096, 4096, "TN"}, {4096, 4096, 4096, "TT"}};
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv)
        fprintf(csv, "suite,dtype,layout,m,n,k,route,ours_us,cublas_us,speedup,ours_tflops,"
                     "cublas_tflops,rel_diff\n");
    /* a pool of random values; buffers are copied from random offsets in it */
    const size_t pool_n = (size_t)1 << 24;
    float *h_pool = malloc(sizeof(float) * pool_n), *pool;
    for (size_t i = 0; i < pool_n; ++i)
        h_pool[i] = (float)gu_uniform();
    CUDA_OK(cudaMalloc((void **)&pool, sizeof(float) * pool_n));
    CUDA_OK(cudaMemcpy(pool, h_pool, sizeof(float) * pool_n, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    printf("%-10s %-6s %-6s %-7s %-34s %10s %10s %8s %8s %8s %9s\n", "suite", "layout", "m=n", "k",
           "route", "ours_us", "cublas_us", "speedup", "ours_TF", "cublas_TF", "rel_diff");
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; ++s) {
        const int m = shapes[s].m, n = shapes[s].n, k = shapes[s].k;
        const int ta = shapes[s].layout[0] == 'T', tb = shapes[s].layout[1] == 'T';
        const size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
        const size_t set_bytes = sizeof(float) * (na + nb + nc);
        int sets = (int)((3 * dev.l2_bytes + set_bytes - 1) / set_bytes);
        sets = sets < 2 ? 2 : sets;
        float *bufA[8], *bufB[8], *bufC[8];
        sets = sets > 8 ? 8 : sets;
        for (int i = 0; i < sets; ++i) {
            CUDA_OK(cudaMalloc((void **)&bufA[i], sizeof(float) * na));
            CUDA_OK(cudaMalloc((void **)&bufB[i], sizeof(float) * nb));
            CUDA_OK(cudaMalloc((void **)&bufC[i], sizeof(float) * nc));
            float *dst[2] = {bufA[i], bufB[i]};
            size_t cnt[2] = {na, nb};
            for (int t = 0; t < 2; ++t)
                for (size_t o = 0; o < cnt[t]; o += pool_n / 2) {
                    size_t len = cnt[t] - o < pool_n / 2 ? cnt[t] - o : pool_n / 2;
                    size_t from = (size_t)gu_int(0, (int64_t)(pool_n / 2));
                    CUDA_OK(cudaMemcpy(dst[t] + o, pool + from, sizeof(float) * len,
                                       cudaMemcpyDeviceToDevice));
                }
        }
        const float one = 1.f, zero = 0.f;
        const int lda = ta ? k : m, ldb = tb ? n : k;
        gs_problem_t p = make_problem(ta, tb, m, n, k, bufA[0], lda, bufB[0], ldb, bufC[0], m, &one,
                                      &zero, 0, NULL);
        const size_t need = gs_sgemm_simt_workspace_bytes(&p, &dev);
        if (need > workspace_size) {
            printf("%s %s: workspace %zu > %zu, skipped\n", shapes[s].layout, "?", need,
                   workspace_size);
            continue;
        }
        p.workspace = workspace;
        p.workspace_size = workspace_size;
        const char *route = gs_sgemm_simt_name(&p, &dev);
        CUBLAS_OK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
        /* side 0: ours, side 1: cuBLAS; one call on set i */
#define CALL(side, i)                                                                          \
    do {                                                                                       \
        if ((side) == 0) {                                                                     \
            p.A = bufA[i];                                                                     \
            p.B = bufB[i];                                                                     \
            p.C = bufC[i];                                                                     \
            gs_problem_classify(&p);                                                           \
            if (gs_sgemm_simt_run(&p, &dev)) {                                                 \
                fprintf(stderr, "gs_sgemm_simt_run failed\n");                                 \
                exit(1);                                                                       \
            }                                                                                  \
        } else {                                                                               \
            CUBLAS_OK(real_gemmex(handle, ta ? CUBLAS_OP_T : CUBLAS_OP_N,                      \
                                  tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &one, bufA[i],      \
                                  CUDA_R_32F, lda, bufB[i], CUDA_R_32F, ldb, &zero, bufC[i],   \
                                  CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));    \
        }                                                                                      \
    } while (0)
        /* agreement with cuBLAS on set 0 */
        float *h0 = malloc(sizeof(float) * nc), *h1 = malloc(sizeof(float) * nc);
        CALL(0, 0);
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaGetLastError());
        CUDA_OK(cudaMemcpy(h0, bufC[0], sizeof(float) * nc, cudaMemcpyDeviceToHost));
        CALL(1, 0);
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaMemcpy(h1, bufC[0], sizeof(float) * nc, cudaMemcpyDeviceToHost));
        const double rel = gu_rel_diff(h0, h1, nc, CUDA_R_32F);
        free(h0);
        free(h1);
        /* calls per timed run: about RUN_MS, at least one pass over the sets */
        float ms = 0.f;
        CUDA_OK(cudaEventRecord(e0, stream));
        for (int i = 0; i < sets; ++i)
            CALL(1, i);
        CUDA_OK(cudaEventRecord(e1, stream));
        CUDA_OK(cudaEventSynchronize(e1));
        CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
        int calls = (int)(RUN_MS / (ms / sets) + 0.5);
        calls = calls < sets ? sets : calls;
        for (int w = 0; w < calls; ++w) /* warm-up, both sides */
            CALL(w & 1, w % sets);
        double t[2][ROUNDS];
        for (int r = 0; r < ROUNDS; ++r)
            for (int h = 0; h < 2; ++h) {
                const int side = (r + h) & 1; /* alternate which side goes first */
                CUDA_OK(cudaEventRecord(e0, stream));
                for (int c = 0; c < calls; ++c)
                    CALL(side, c % sets);
                CUDA_OK(cudaEventRecord(e1, stream));
                CUDA_OK(cudaEventSynchronize(e1));
                CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
                t[side][r] = 1000.0 * ms / calls;
            }
#undef CALL
        CUDA_OK(cudaGetLastError());
        qsort(t[0], ROUNDS, sizeof(double), cmp_double);
        qsort(t[1], ROUNDS, sizeof(double), cmp_double);
        const double ours = t[0][ROUNDS / 2], theirs = t[1][ROUNDS / 2];
        const double flop = 2.0 * m * n * (double)k;
        const char *suite = k > 4 * (m > n ? m : n) ? "deepk-f32" : "sgemm";
        printf("%-10s %-6s %-6d %-7d %-34s %10.1f %10.1f %8.3f %8.1f %8.1f %9.2e\n", suite,
               shapes[s].layout, m, k, route, ours, theirs, theirs / ours, flop / ours * 1e-6,
               flop / theirs * 1e-6, rel);
        if (csv)
            fprintf(csv, "%s,f32,%s,%d,%d,%d,%s,%.2f,%.2f,%.4f,%.2f,%.2f,%.3g\n", suite,
                    shapes[s].layout, m, n, k, route, ours, theirs, theirs / ours,
                    flop / ours * 1e-6, flop / theirs * 1e-6, rel);
        for (int i = 0; i < sets; ++i) {
            cudaFree(bufA[i]);
            cudaFree(bufB[i]);
            cudaFree(bufC[i]);
        }
    }
    if (csv)
        fclose(csv);
    cudaFree(pool);
    free(h_pool);
}

int main(int argc, char **argv)
{
    gpu_require_or_skip("test_sgemm_bias");
    int quick = 0, do_bench = 0;
    const char *csv = NULL;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--bench"))
            do_bench = 1;
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            csv = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--quick] [--bench [--csv FILE]]\n", argv[0]);
            return 2;
        }
    }
    uint64_t seed = gu_seed_init();
    CUDA_OK((cudaError_t)gs_device_query(&dev));
    printf("test_sgemm_bias: GEMMSHIM_SEED=0x%llx, %d SMs\n", (unsigned long long)seed,
           dev.sm_count);
    CUBLAS_OK(cublasCreate(&handle));
    CUDA_OK(cudaStreamCreate(&stream));
    CUBLAS_OK(cublasSetStream(handle, stream));
    /* the real cuBLAS, never anything that might stand in for it */
    real_sgemm = (sgemm_fn)gu_real_cublas_sym("cublasSgemm_v2");
    real_gemmex = (gemmex_fn)gu_real_cublas_sym("cublasGemmEx");
    CUDA_OK(cudaMalloc((void **)&d_scalars, 2 * sizeof(float)));
    workspace_size = (size_t)64 << 20;
    CUDA_OK(cudaMalloc(&workspace, workspace_size));
    CUDA_OK(cudaMemset(workspace, 0, workspace_size));

    if (do_bench) {
        bench(csv);
    } else {
        correctness(quick);
        printf("test_sgemm_bias: %d split cases; worst relative error %.3g (tolerance %.0e, "
               "or 2x cuBLAS's: %d cases passed by that); worst ours/cuBLAS error ratio on "
               "split cases %.2f\n",
               n_split, worst_err, TOL, n_by_cublas, worst_ratio);
        printf("%d passed, %d failed\n", n_pass, n_fail);
    }
    cudaFree(workspace);
    cudaFree(d_scalars);
    cublasDestroy(handle);
    return n_fail ? 1 : 0;
}
