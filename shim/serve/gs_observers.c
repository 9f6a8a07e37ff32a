/* The observers of serving (gs_observe.h), in one list: what each of the
 * record, log, statistics, verify, timing and report modules does at each
 * fixed point of the pipeline. The modules keep their own APIs; this file
 * is the only place serving meets them. */
#include "gs_observe.h"
#include "gs_hooks.h"
#include "gs_log.h"
#include "gs_record.h"
#include "gs_record_out.h"
#include "gs_sink.h"
#include "gs_state.h"
#include "gs_timing.h"
#include "gs_tune.h"
#include "gs_verify.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>

/* ---- record: every call's signature, for gemmshim record ---- */

/* The capture sequence a call on `stream` is captured into, 0 when it runs
 * eagerly or CUDA cannot say (no device; a forked child, where CUDA is not
 * usable). An error of the query is not left for the application's next
 * cudaGetLastError, nor is one of its own cleared. */
static unsigned long long capture_of(void *stream)
{
    if (gs_sink_forked())
        return 0;
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    const cudaError_t before = cudaPeekAtLastError();
#if CUDART_VERSION >= 13000
    const cudaError_t e =
        cudaStreamGetCaptureInfo((cudaStream_t)stream, &status, &id, NULL, NULL, NULL, NULL);
#else
    const cudaError_t e =
        cudaStreamGetCaptureInfo((cudaStream_t)stream, &status, &id, NULL, NULL, NULL);
#endif
    if (e != cudaSuccess) {
        if (before == cudaSuccess)
            cudaGetLastError();
        return 0;
    }
    return status == cudaStreamCaptureStatusActive ? id : 0;
}

/* Once per call that reaches cuBLAS or our kernel: at our kernel's launch,
 * or at the forward (a fallback's forward follows its launch attempt, and
 * is not counted again). Ahead of timing in the list: the timing slot
 * takes the record. Invalid calls, and calls answered here, are no GEMM
 * to tune. A cublasLtMatmul our kernels do not take is recorded with its
 * reasons (not tunable), except the FP8 subset cuBLASLt's algorithms take:
 * its class and per-call pointers describe it, so offline tuning rebuilds
 * and tunes it (tunable, with or without tuning on here). */
_Static_assert(sizeof ((gs_call_t *)0)->lt_unroutable <= GS_RECORD_WHY_MAX,
               "the record keeps a cuBLASLt call's every reason");

static void record_call(gs_serving_t *s)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (!gs_cfg()->record_path[0] || !s->described || s->fell_back)
        return;
    pthread_once(&once, gs_record_out_start);
    const gs_call_t *c = s->call;
    const int beyond = c->lt && c->lt_unroutable[0] && !c->lt_algos_only;
    s->rec = gs_record_call(&s->p.cls, beyond ? c->lt_unroutable : NULL, capture_of(s->stream));
}

static const gs_observer_t record_observer = {
    .name = "record",
    .on_forward = record_call,
    .before_run = record_call,
};

/* ---- A/B report: the table and files at exit ---- */

static void write_ab_report(void)
{
    const gs_config_t *cfg = gs_cfg();
    gs_timing_settle();
    gs_log_ab_report(cfg->report_path[0] ? cfg->report_path : NULL);
}

static void register_ab_report(void)
{
    atexit(write_ab_report);
}

/* Registered at the first A/B turn (ours or cuBLAS's): after the CUDA
 * runtime started, so it runs before the runtime's teardown. Ahead of
 * verify in the list: its exit handler is registered after this one. */
static void ab_report_at_exit(gs_serving_t *s)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (s->ab_sig)
        pthread_once(&once, register_ab_report);
}

static const gs_observer_t report_observer = {
    .name = "ab report",
    .on_forward = ab_report_at_exit,
    .before_run = ab_report_at_exit,
};

/* ---- verify: cuBLAS's result beside ours, compared on the stream ---- */

/* Before our kernel: the reference, into scratch, so our kernel's inputs
 * are the ones cuBLAS saw. */
static void verify_before_run(gs_serving_t *s)
{
    if (s->verify)
        s->verifying = gs_verify_begin(s->call, &s->p, s->kernel, s->ab_sig,
                                       &s->verify_state) == 0;
}

static void verify_after_run(gs_serving_t *s)
{
    if (s->verifying)
        gs_verify_end(&s->verify_state, &s->p);
}

static void verify_fallback(gs_serving_t *s)
{
    if (s->verifying)
        gs_verify_cancel(&s->verify_state, &s->p);
}

static const gs_observer_t verify_observer = {
    .name = "verify",
    .before_run = verify_before_run,
    .after_run = verify_after_run,
    .on_fallback = verify_fallback,
};

/* ---- timing: GPU time per call, with events on the call's stream ---- */

/* After verify's reference work: only our kernel (and the comparison
 * verify enqueues after it) is timed. */
static void timing_begin(gs_serving_t *s)
{
    s->timing_slot = s->timed ? gs_timing_begin(s->stream, s->rec) : -1;
}

static void timing_after_run(gs_serving_t *s)
{
    if (s->ab_sig)
        gs_timing_end_ab(s->timing_slot, s->stream, s->ab_sig, 1);
    else
        gs_timing_end(s->timing_slot, s->stream, s->dec.route, s->dec.tuned);
}

static void timing_fallback(gs_serving_t *s)
{
    gs_timing_cancel(s->timing_slot);
    s->timing_slot = -1;
}

static void timing_after_forward(const gs_served_t *s)
{
    if (s->ab_sig)
        gs_timing_end_ab(s->timing_slot, s->stream, s->ab_sig, 0);
    else
        gs_timing_end(s->timing_slot, s->stream, GS_ROUTE_FORWARD, s->tuned);
}

static const gs_observer_t timing_observer = {
    .name = "timing",
    .on_forward = timing_begin,
    .before_run = timing_begin,
    .after_run = timing_after_run,
    .on_fallback = timing_fallback,
    .after_forward = timing_after_forward,
};

/* ---- log: a line per signature, the counters, the summary ---- */

static void log_unrun(gs_serving_t *s)
{
    gs_log_call(&s->p, &s->dec, NULL, s->why);
}

static void log_after_run(gs_serving_t *s)
{
    gs_log_call(&s->p, &s->dec, s->kernel, s->dec.reason);
}

static void log_fallback(gs_serving_t *s)
{
    gs_log_fallback(&s->p, s->kernel, gs_hook_error_name(s->launch_error));
}

static const gs_observer_t log_observer = {
    .name = "log",
    .on_answered = log_unrun,
    .on_forward = log_unrun,
    .after_run = log_after_run,
    .on_fallback = log_fallback,
};

/* ---- last route: what served this thread's last call, and tuning's part ---- */

static __thread const char *last_route = "";
static __thread int last_tuning; /* GEMMSHIM_TUNING_NONE */

const char *gs_last_route(void)
{
    return last_route;
}

int gs_last_tuning(void)
{
    return last_tuning;
}

static void route_answered(gs_serving_t *s)
{
    last_route = "quick_return";
    last_tuning = s->tuning;
}

static void route_forward(gs_serving_t *s)
{
    last_route = s->fell_back ? "fallback" : "forward";
    last_tuning = s->tuning;
}

static void route_after_run(gs_serving_t *s)
{
    last_route = s->kernel;
    last_tuning = s->tuning;
}

static const gs_observer_t route_observer = {
    .name = "last route",
    .on_answered = route_answered,
    .on_forward = route_forward,
    .after_run = route_after_run,
};

/* ---- tuning statistics: the exit summary's share of tuned calls ---- */

/* Only the log's exit summary reads the counts: without a log, two shared
 * atomics per call would be counted for nobody. */
static void stats_decided(gs_serving_t *s)
{
    if (s->routing.tune != GS_TUNE_OFF && gs_cfg()->log_enabled)
        gs_tune_count_served(s->dec.tuned);
}

static const gs_observer_t tune_stats_observer = {
    .name = "tuning statistics",
    .on_decided = stats_decided,
};

const gs_observer_t *const gs_observers[] = {
    &record_observer, &report_observer, &verify_observer, &timing_observer, &log_observer,
    &route_observer,  &tune_stats_observer, NULL,
};
