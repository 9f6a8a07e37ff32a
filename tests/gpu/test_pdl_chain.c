/* Dependent GEMMs back to back on one stream, no host synchronisation in
 * between: each call reads (as its B operand, or as C with beta = 1) what the
 * call just before it wrote. Run under the shim with GEMMSHIM_POLICY=eligible
 * (routed kernels are launched with programmatic dependent launch by default,
 * GEMMSHIM_PDL): it pins that a routed kernel reads nothing before the grid
 * it depends on has completed.
 *
 * Before each round every buffer a step writes is poisoned with NaN (0xFF
 * bytes) on the stream, so a step that read its input before its
 * predecessor finished would read NaN or a partly written input; one step
 * overwrites the operand its predecessor read (a write before that read
 * finished would change the predecessor's result). After each round every
 * written buffer is scanned whole for NaN, and every step is checked at 256
 * sampled entries against an fp64 dot product of the step's inputs as they
 * lie in memory after the round (so on what its predecessor really
 * produced), or, for the operand overwritten later in the round, as the host
 * recomputes it from the unmodified inputs of the step that wrote it.
 * The chain runs directly and then as a captured graph (PDL edges inside a
 * graph). A race that never fires in these rounds goes unseen: the test
 * guards the ordering, it cannot prove it.
 *
 * Steps (bf16, TN as nn.Linear issues them, column-major):
 *   decode ring   X1 = W1^T X0, X2 = W2^T X1, X2 += W3^T X1 (beta = 1),
 *                 X1 = W5^T X0 (overwrites what the last call read)
 *   pingpong      Y1 = V1^T Y0, Y2 = V2^T Y1, Y2 += V3^T Y1
 *   split-K       Z1 = U1^T S0 (short K), Z2 = U2^T Z1 (k = 65536), Z2 += U3^T Z1
 *   decode after pingpong   X3 = W4^T Y2[:, 0:16] (Y2's first 16 columns) */
#include "gpu_util.h"

typedef struct step {
    const char *name;
    int m, n, k;
    int a, b, c;   /* buffer indices: A (k x m), B (k x n), C (m x n); lda = ldb = k */
    float beta;
    int pre;       /* beta = 1: the step that wrote C before (its value is recomputed) */
} step_t;

enum { W1, W2, W3, W4, W5, X0, X1, X2, X3, V1, V2, V3, Y0, Y1, Y2, U1, U2, U3, S0, Z1, Z2, NB };

static const step_t steps[] = {
    {"decode 4096x16x4096", 4096, 16, 4096, W1, X0, X1, 0.f, -1},
    {"decode 4096x16x4096 (reads the last output)", 4096, 16, 4096, W2, X1, X2, 0.f, -1},
    {"decode, beta = 1 on the last output", 4096, 16, 4096, W3, X1, X2, 1.f, 1},
    {"decode, overwrites the operand the last call read", 4096, 16, 4096, W5, X0, X1, 0.f, -1},
    {"pingpong 4096x512x4096", 4096, 512, 4096, V1, Y0, Y1, 0.f, -1},
    {"pingpong 4096x512x4096 (reads the last output)", 4096, 512, 4096, V2, Y1, Y2, 0.f, -1},
    {"pingpong, beta = 1 on the last output", 4096, 512, 4096, V3, Y1, Y2, 1.f, 5},
    {"decode 4096x16x4096 on the pingpong output", 4096, 16, 4096, W4, Y2, X3, 0.f, -1},
    {"pingpong 65536x256x256", 65536, 256, 256, U1, S0, Z1, 0.f, -1},
    {"split-K 256x256x65536 (reads the last output)", 256, 256, 65536, U2, Z1, Z2, 0.f, -1},
    {"split-K, beta = 1 on the last output", 256, 256, 65536, U3, Z1, Z2, 1.f, 9},
};
enum { NSTEPS = sizeof steps / sizeof steps[0] };

static size_t elems[NB];
static void *dbuf[NB];
static uint16_t *hbuf[NB];
static uint16_t *recon[NSTEPS]; /* a step's output recomputed on the host, when needed */

static void size_buffers(void)
{
    for (int i = 0; i < NSTEPS; ++i) {
        const step_t *s = &steps[i];
        size_t a = (size_t)s->k * s->m, b = (size_t)s->k * s->n, c = (size_t)s->m * s->n;
        if (a > elems[s->a]) elems[s->a] = a;
        if (b > elems[s->b]) elems[s->b] = b;
        if (c > elems[s->c]) elems[s->c] = c;
    }
}

static int written(int buf)
{
    for (int i = 0; i < NSTEPS; ++i)
        if (steps[i].c == buf)
            return 1;
    return 0;
}

/* Buffers no step writes are random: activations in [-1, 1), weights (A
 * operands) scaled by sqrt(3 / k), so values stay O(1) along the chain. */
static void fill_inputs(void)
{
    for (int b = 0; b < NB; ++b) {
        hbuf[b] = malloc(elems[b] * 2);
        CUDA_OK(cudaMalloc(&dbuf[b], elems[b] * 2));
        if (written(b))
            continue;
        float scale = 1.f;
        for (int i = 0; i < NSTEPS; ++i)
            if (steps[i].a == b)
                scale = sqrtf(3.f / (float)steps[i].k);
        for (size_t e = 0; e < elems[b]; ++e)
            hbuf[b][e] = gu_f32_to_bf16((float)gu_uniform() * scale);
        CUDA_OK(cudaMemcpy(dbuf[b], hbuf[b], elems[b] * 2, cudaMemcpyHostToDevice));
    }
}

static void enqueue_round(cublasHandle_t h, cudaStream_t s)
{
    for (int b = 0; b < NB; ++b)
        if (written(b))
            CUDA_OK(cudaMemsetAsync(dbuf[b], 0xFF, elems[b] * 2, s)); /* bf16 NaN */
    for (int i = 0; i < NSTEPS; ++i) {
        const step_t *st = &steps[i];
        const float one = 1.f;
        CUBLAS_OK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, st->m, st->n, st->k, &one,
                               dbuf[st->a], CUDA_R_16BF, st->k, dbuf[st->b], CUDA_R_16BF,
                               st->k, &st->beta, dbuf[st->c], CUDA_R_16BF,
                               st->m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
}

static double bf(const uint16_t *p, size_t i) { return gu_bf16_to_f32(p[i]); }

static int overwritten_after(int buf, int step)
{
    for (int l = step + 1; l < NSTEPS; ++l)
        if (steps[l].c == buf)
            return 1;
    return 0;
}

/* Step s's product at (i, j) from its inputs as it read them, and the sum
 * of |terms| (the scale its rounding error is measured against). */
static double dot(int s, const uint16_t *B, int i, int j, double *abs_sum)
{
    const step_t *st = &steps[s];
    const uint16_t *A = hbuf[st->a];
    double acc = 0, sa = 0;
    for (int kk = 0; kk < st->k; ++kk) {
        const double t = bf(A, (size_t)i * st->k + kk) * bf(B, (size_t)j * st->k + kk);
        acc += t;
        sa += fabs(t);
    }
    *abs_sum = sa;
    return acc;
}

/* Step w's output (beta = 0, inputs never written in the round), rounded
 * to bf16 as the kernel stores it, over the whole m x n. */
static const uint16_t *recompute(int w)
{
    const step_t *st = &steps[w];
    if (recon[w])
        return recon[w]; /* this round's, already computed */
    recon[w] = malloc((size_t)st->m * st->n * 2);
    if (!recon[w]) {
        printf("FAIL: out of host memory\n");
        exit(1);
    }
    double abs_sum;
    for (int j = 0; j < st->n; ++j)
        for (int i = 0; i < st->m; ++i)
            recon[w][(size_t)j * st->m + i] =
                gu_f32_to_bf16((float)dot(w, hbuf[st->b], i, j, &abs_sum));
    return recon[w];
}

/* Step s's B operand as the step read it: the buffer after the round, or,
 * where a later step overwrote it, its writer's output recomputed. */
static const uint16_t *b_as_read(int s)
{
    const int b = steps[s].b;
    if (!overwritten_after(b, s))
        return hbuf[b];
    int w = -1;
    for (int l = 0; l < s; ++l)
        if (steps[l].c == b)
            w = l;
    if (w < 0 || steps[w].beta != 0.f || written(steps[w].a) || written(steps[w].b)) {
        printf("FAIL: test design: step %d's operand cannot be recomputed\n", s);
        exit(1);
    }
    return recompute(w);
}


static int passed, failed;

static void check_round(const char *how, int round)
{
    for (int b = 0; b < NB; ++b)
        if (written(b))
            CUDA_OK(cudaMemcpy(hbuf[b], dbuf[b], elems[b] * 2, cudaMemcpyDeviceToHost));
    /* every written element: a read of the poison anywhere leaves NaN */
    for (int b = 0; b < NB; ++b) {
        if (!written(b))
            continue;
        size_t nans = 0;
        for (size_t e = 0; e < elems[b]; ++e)
            nans += (size_t)(isnan(bf(hbuf[b], e)) != 0);
        if (nans) {
            ++failed;
            printf("FAIL: %s round %d: %zu NaN in output buffer %d\n", how, round, nans, b);
        } else {
            ++passed;
        }
    }
    for (int s = 0; s < NSTEPS; ++s)
        if (recon[s]) {
            free(recon[s]);
            recon[s] = NULL;
        }
    for (int i = 0; i < NSTEPS; ++i) {
        const step_t *st = &steps[i];
        /* a step whose output a later step overwrote is checked through the
         * steps that read it (against its recomputed value) or through the
         * beta = 1 step that added to it */
        if (overwritten_after(st->c, i))
            continue;
        const uint16_t *B = b_as_read(i);
        const uint16_t *Bpre = st->beta != 0.f ? b_as_read(st->pre) : NULL;
        int bad = 0, nan = 0;
        double worst = 0;
        for (int smp = 0; smp < 256; ++smp) {
            const int r = (int)gu_int(0, st->m - 1), c = (int)gu_int(0, st->n - 1);
            double sa, sb = 0, prev = 0;
            double ref = dot(i, B, r, c, &sa);
            if (st->beta != 0.f) {
                /* C before this step: the predecessor's product, rounded to
                 * bf16 (the kernel's rounding may land on the neighbouring
                 * value: one bf16 step of it is in the tolerance) */
                prev = gu_bf16_to_f32(gu_f32_to_bf16((float)dot(st->pre, Bpre, r, c, &sb)));
                ref += prev;
            }
            const double got = bf(hbuf[st->c], (size_t)c * st->m + r);
            const double tol = (fabs(ref) + fabs(prev)) * (1.0 / 128) + (sa + sb) * (1.0 / 4096) + 1e-30;
            if (isnan(got))
                ++nan;
            const double e = fabs(got - ref) / tol;
            if (!(e <= 1.0))
                ++bad;
            if (e > worst || isnan(e))
                worst = isnan(e) ? INFINITY : e;
        }
        if (bad) {
            ++failed;
            printf("FAIL: %s round %d, %s: %d of 256 sampled entries off (%d NaN), worst %.3g of "
                   "the tolerance\n", how, round, st->name, bad, nan, worst);
        } else {
            ++passed;
        }
    }
}

int main(void)
{
    gpu_require_or_skip("test_pdl_chain");
    const uint64_t seed = gu_seed_init();
    const int rounds = gu_env_int("GEMMSHIM_PDL_ROUNDS", 4);
    printf("test_pdl_chain: seed 0x%llx, %d rounds direct + %d graph replays\n",
           (unsigned long long)seed, rounds, rounds);
    size_buffers();
    fill_inputs();
    cublasHandle_t h;
    cudaStream_t s;
    CUBLAS_OK(cublasCreate(&h));
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUBLAS_OK(cublasSetStream(h, s));
    void *ws; /* cuBLAS needs a user workspace to be capturable */
    CUDA_OK(cudaMalloc(&ws, 32 << 20));
    CUBLAS_OK(cublasSetWorkspace(h, ws, 32 << 20));

    for (int r = 0; r < rounds; ++r) {
        enqueue_round(h, s);
        CUDA_OK(cudaStreamSynchronize(s));
        check_round("direct", r);
    }
    /* the same round captured (the split-K workspace exists by now) */
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    enqueue_round(h, s);
    CUDA_OK(cudaStreamEndCapture(s, &g));
    CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < rounds; ++r) {
        CUDA_OK(cudaGraphLaunch(ge, s));
        CUDA_OK(cudaStreamSynchronize(s));
        check_round("graph", r);
    }
    CUDA_OK(cudaGraphExecDestroy(ge));
    CUDA_OK(cudaGraphDestroy(g));
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
