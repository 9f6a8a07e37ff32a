#include "gs_verify.h"
#include "gs_as_called.h"
#include "gs_compat.h"
#include "gs_hooks.h"
#include "gs_kernels.h"
#include "gs_log.h"
#include "gs_lt.h"
#include "gs_real.h"
#include "gs_state.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 1024 /* verdicts in flight at once; a call finding none free is not verified */

/* One verdict on its way to the host: the device sums are copied into
 * `sums` (pinned memory) by the stream, then the host function reads them. */
typedef struct verdict {
    double sums[3];
    double tol;
    gs_sig_t *ab_sig; /* GEMMSHIM_MODE=ab: the signature whose error this is */
    int busy;
    char what[200];
} verdict_t;

static verdict_t *verdicts; /* pinned, SLOTS of them */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long checked, mismatches, unverified;
static double worst;
static int said_capture, said_alloc, said_busy, init_failed;

static void report_at_exit(void)
{
    cudaDeviceSynchronize(); /* deliver the verdicts still on their streams */
    pthread_mutex_lock(&lock);
    unsigned long long c = checked, m = mismatches, u = unverified;
    double w = worst;
    pthread_mutex_unlock(&lock);
    gs_msg("verify: %llu routed calls compared with cuBLAS, %llu mismatches, largest relative "
           "difference %.3g; %llu routed calls not compared", c, m, w, u);
    if (m && gs_cfg()->verify_fail == GS_VERIFY_EXIT) {
        fflush(NULL);
        _exit(3); /* GEMMSHIM_VERIFY_FAIL=exit: the process fails */
    }
}

static void verify_init(void)
{
    if (cudaHostAlloc((void **)&verdicts, SLOTS * sizeof *verdicts, cudaHostAllocPortable) !=
        cudaSuccess) {
        verdicts = NULL;
        init_failed = 1;
        return;
    }
    memset(verdicts, 0, SLOTS * sizeof *verdicts);
    /* registered after the CUDA runtime started: runs before its teardown */
    atexit(report_at_exit);
}

static int init_once(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, verify_init);
    return verdicts ? 0 : -1;
}

/* Per output type, what two correct fp32-accumulated results may differ by
 * (relative Frobenius): fp32 accumulation order for fp32 output (growing with
 * sqrt(k)), one rounding of the output for 16-bit types. GEMMSHIM_VERIFY_TOL
 * overrides. */
double gs_verify_relative(const double sums[3])
{
    return sums[1] > 0.0 ? sqrt(sums[0] / sums[1]) : sqrt(sums[0]);
}

/* FP8 operands (the tuner comparing cuBLASLt's algorithms with cuBLASLt
 * as called): their products are exact in fp32, but Hopper's FP8 MMA keeps
 * about 14 bits of its running sum (DeepSeek-V3's measurement) until it is
 * added into fp32 registers: every few MMAs along K, or, with fast
 * accumulation, never. Two algorithms that split K differently then differ
 * by a few such roundings times the square root of the run summed at that
 * precision (all of k with fast accumulation; otherwise assumed at most
 * 128, the promotion interval DeepGEMM uses). */
static double fp8_tolerance(const gs_problem_t *p)
{
    const double k = p->k > 0 ? (double)p->k : 1.0;
    const double run = (p->lt_flags & GS_LT_FAST_ACCUM) || k < 128.0 ? k : 128.0;
    return 8.0 * 6.1e-5 * sqrt(run);
}

static double by_output(const gs_problem_t *p);

double gs_verify_tolerance(const gs_problem_t *p)
{
    double t = gs_cfg()->verify_tol;
    if (t < 0.0)
        return 0.0;
    if (t > 0.0)
        return t;
    t = by_output(p);
    if (gs_dtype_is_fp8(p->a_type) || gs_dtype_is_fp8(p->b_type)) {
        const double f = fp8_tolerance(p);
        return f > t ? f : t;
    }
    return t;
}

/* The per-output-type tolerance (above). */
static double by_output(const gs_problem_t *p)
{
    switch (p->c_type) {
    case GS_DT_F32: {
        /* Two correct fp32 accumulations of k products differ by up to a few
         * sqrt(k) roundings relative to the result (more where the sum
         * cancels): at k ~ 1e5 that exceeds a fixed 1e-4 (seen at k = 118311,
         * fp16 -> fp32: 1.4e-4, both sides within 2x of each other's error
         * against fp64). */
        double by_k = 16.0 * 5.96e-8 * sqrt((double)(p->k > 0 ? p->k : 1));
        double base = p->a_type == GS_DT_F32 ? 1e-5 : 1e-4;
        return by_k > base ? by_k : base;
    }
    case GS_DT_F16: return 5e-3;
    default: return 1e-2;
    }
}

static void CUDART_CB deliver(void *arg)
{
    verdict_t *v = arg;
    double rel = gs_verify_relative(v->sums);
    int bad = v->sums[2] > 0.0 || rel > v->tol;
    pthread_mutex_lock(&lock);
    ++checked;
    if (bad)
        ++mismatches;
    if (rel > worst)
        worst = rel;
    pthread_mutex_unlock(&lock);
    if (v->ab_sig)
        gs_log_ab_error(v->ab_sig, v->sums[2] > 0.0 ? INFINITY : rel);
    if (bad) {
        gs_msg("verify: MISMATCH %s: relative difference to cuBLAS %.3g (tolerance %.3g), %.0f "
               "elements finite on one side only", v->what, rel, v->tol, v->sums[2]);
        if (gs_cfg()->verify_fail == GS_VERIFY_ABORT) {
            gs_msg("GEMMSHIM_VERIFY_FAIL=abort: aborting");
            abort();
        }
    }
    __atomic_store_n(&v->busy, 0, __ATOMIC_RELEASE);
}

static int count_unverified(void)
{
    pthread_mutex_lock(&lock);
    ++unverified;
    pthread_mutex_unlock(&lock);
    return -1;
}

/* A routed call that is not compared: counted, and the reason said once. */
static int say_once(int *flag, const char *what)
{
    count_unverified();
    if (!__atomic_exchange_n(flag, 1, __ATOMIC_ACQ_REL))
        gs_msg("verify: %s (said once)", what);
    return -1;
}


static int compute_for_cublas(const gs_call_t *c, const gs_problem_t *p)
{
    if (c->compute_type != GS_COMPUTE_FROM_MATH_MODE)
        return c->compute_type;
    return p->compute == GS_CT_F32_PEDANTIC ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
}

int gs_verify_begin(const gs_call_t *c, const gs_problem_t *p, const char *kernel,
                    gs_sig_t *ab_sig, gs_verify_t *v)
{
    cudaStream_t s = (cudaStream_t)p->stream;
    enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &cap) != cudaSuccess || cap != cudaStreamCaptureStatusNone)
        return say_once(&said_capture, "calls inside stream capture are not verified");
    if (init_once())
        return say_once(&init_failed, "no pinned memory for verdicts; nothing is verified");
    const gs_real_table_t *real = gs_real(c->lt ? GS_LIB_CUBLASLT : GS_LIB_CUBLAS);
    if (c->lt ? !real->cublasLtMatmul : !real->cublasGemmStridedBatchedEx_64)
        return count_unverified();
    v->slot = -1;
    for (int i = 0; i < SLOTS && v->slot < 0; ++i)
        if (!__atomic_exchange_n(&verdicts[i].busy, 1, __ATOMIC_ACQ_REL))
            v->slot = i;
    if (v->slot < 0)
        return say_once(&said_busy, "too many verdicts in flight; some calls not verified");
    v->c_bytes = gs_c_span_bytes(p);
    size_t bytes = (v->c_bytes + 15) / 16 * 16 + 3 * sizeof(double);
    if (gs_hooks()->alloc_async(&v->scratch, bytes, s) != cudaSuccess) {
        __atomic_store_n(&verdicts[v->slot].busy, 0, __ATOMIC_RELEASE);
        return say_once(&said_alloc, "no device memory for the reference result");
    }
    /* cuBLAS's C starts as the caller's C (beta may be nonzero, or unknown
     * in device pointer mode) */
    cudaMemcpyAsync(v->scratch, p->C, v->c_bytes, cudaMemcpyDeviceToDevice, s);
    cublasStatus_t st;
    if (c->lt) /* the same cuBLASLt call, its D (and C, when it is D) in scratch */
        st = gs_cublas_as_called(c, v->scratch);
    else
        st = real->cublasGemmStridedBatchedEx_64(
        c->handle, (cublasOperation_t)c->transa, (cublasOperation_t)c->transb, c->m, c->n, c->k,
        c->alpha, c->A, (cudaDataType)c->atype, c->lda, c->stride_a, c->B,
        (cudaDataType)c->btype, c->ldb, c->stride_b, c->beta, v->scratch,
        (cudaDataType)c->ctype, c->ldc, c->stride_c, c->batch,
        (cublasComputeType_t)compute_for_cublas(c, p), CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) {
        gs_msg("verify: cuBLAS refused the reference call (status %d); not verified", (int)st);
        gs_verify_cancel(v, p);
        return count_unverified();
    }
    verdict_t *vd = &verdicts[v->slot];
    snprintf(vd->what, sizeof vd->what, "%s %c%c m=%lld n=%lld k=%lld batch=%lld on %s",
             gs_entry_name(p->entry, p->is_64), p->trans_a ? 'T' : 'N', p->trans_b ? 'T' : 'N',
             (long long)p->m, (long long)p->n, (long long)p->k, (long long)p->batch, kernel);
    vd->tol = gs_verify_tolerance(p);
    vd->ab_sig = ab_sig;
    return 0;
}

void gs_verify_end(gs_verify_t *v, const gs_problem_t *p)
{
    cudaStream_t s = (cudaStream_t)p->stream;
    double *sums = (double *)((char *)v->scratch + (v->c_bytes + 15) / 16 * 16);
    verdict_t *vd = &verdicts[v->slot];
    if (gs_compare_launch(p, p->C, v->scratch, sums) ||
        cudaMemcpyAsync(vd->sums, sums, sizeof vd->sums, cudaMemcpyDeviceToHost, s) ||
        cudaLaunchHostFunc(s, deliver, vd)) {
        gs_msg("verify: could not enqueue the comparison; not verified");
        gs_verify_cancel(v, p);
        count_unverified();
        return;
    }
    cudaFreeAsync(v->scratch, s);
}

void gs_verify_cancel(gs_verify_t *v, const gs_problem_t *p)
{
    cudaFreeAsync(v->scratch, (cudaStream_t)p->stream);
    __atomic_store_n(&verdicts[v->slot].busy, 0, __ATOMIC_RELEASE);
}

void gs_verify_counts(unsigned long long *c, unsigned long long *m)
{
    pthread_mutex_lock(&lock);
    *c = checked;
    *m = mismatches;
    pthread_mutex_unlock(&lock);
}

unsigned gs_verify_in_flight(void)
{
    unsigned n = 0;
    if (verdicts)
        for (int i = 0; i < SLOTS; ++i)
            n += __atomic_load_n(&verdicts[i].busy, __ATOMIC_ACQUIRE) != 0;
    return n;
}
