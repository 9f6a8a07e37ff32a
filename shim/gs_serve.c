/* Serving one intercepted call: describe it, check it, ask dispatch, then
 * either let the caller forward it untouched or run our kernel on the
 * handle's stream (in verify mode with a cuBLAS reference beside it; in ab
 * mode taking turns with cuBLAS), falling back to cuBLAS when the kernel
 * cannot launch. Every outcome is logged and counted. */
#include "gs_serve.h"
#include "gs_compat.h"
#include "gs_decide.h"
#include "gs_hooks.h"
#include "gs_dispatch.h"
#include "gs_lt.h"
#include "gs_log.h"
#include "gs_plugin.h"
#include "gs_state.h"
#include "gs_timing.h"
#include "gs_tune.h"
#include "gs_verify.h"
#include "gs_workspace.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* What served this thread's last call (gemmshim_last_route). */
static __thread const char *last_route = "";

const char *gs_last_route(void)
{
    return last_route;
}

static gs_op_t op_of(int cublas_op)
{
    return cublas_op == CUBLAS_OP_N ? GS_OP_N : GS_OP_T; /* C == T for real types */
}

/* The descriptor of a checked call on a handle whose state we know. */
static void describe(const gs_call_t *c, const gs_handle_state_t *hs, gs_problem_t *p)
{
    memset(p, 0, sizeof *p);
    p->entry = c->entry;
    p->is_64 = c->is_64;
    p->a_type = gs_dtype_from_cuda(c->atype);
    p->b_type = gs_dtype_from_cuda(c->btype);
    p->c_type = gs_dtype_from_cuda(c->ctype);
    p->compute = gs_compute_fold(c->compute_type, hs->math_mode, p->a_type);
    p->scalar_type = gs_scalar_type(c->compute_type, p->a_type);
    p->trans_a = op_of(c->transa);
    p->trans_b = op_of(c->transb);
    p->m = c->m;
    p->n = c->n;
    p->k = c->k;
    p->A = c->A;
    p->B = c->B;
    p->C = c->C;
    p->lda = c->lda;
    p->ldb = c->ldb;
    p->ldc = c->ldc;
    p->batch = c->batch;
    p->stride_a = c->stride_a;
    p->stride_b = c->stride_b;
    p->stride_c = c->stride_c;
    p->alpha = c->alpha;
    p->beta = c->beta;
    p->scalars_on_device = hs->scalars_on_device;
    p->math_flags = (unsigned)hs->math_mode & ~15u; /* above the mode: its flag bits */
    p->stream = hs->stream;
    p->pdl = gs_cfg()->pdl;
    if (c->bias) {
        p->bias = c->bias;
        p->bias_type = gs_dtype_from_cuda(c->bias_type);
    }
    gs_problem_classify(p);
}

/* Events around each call cost a few microseconds of host time: only while
 * logging, and not with GEMMSHIM_LOG_TIMING=0 (timing small calls). */
static int timing_wanted(const gs_config_t *cfg)
{
    return cfg->log_enabled && cfg->log_timing;
}

static gs_served_t forward(const gs_problem_t *p, const gs_decision_t *dec, void *stream)
{
    gs_log_call(p, dec, NULL);
    last_route = "forward";
    gs_served_t s = {0, CUBLAS_STATUS_SUCCESS, -1, stream, NULL};
    if (timing_wanted(gs_cfg()))
        s.timing_slot = gs_timing_begin(stream);
    return s;
}

static gs_served_t forward_because(const gs_problem_t *p, const char *why, void *stream)
{
    gs_decision_t dec = {GS_ROUTE_FORWARD, NULL, 0, 0.0, 0, 0, ""};
    snprintf(dec.reason, sizeof dec.reason, "%s", why);
    return forward(p, &dec, stream);
}

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

/* The A/B report at exit, registered at the first A/B call: after the CUDA
 * runtime started, so it runs before the runtime's teardown. */
static void ab_report_at_exit(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_ab_report);
}

/* cuBLAS's turn in ab mode: forwarded by the caller, timed for the signature. */
static gs_served_t ab_cublas_turn(const gs_problem_t *p, const gs_decision_t *dec, void *stream,
                                  gs_sig_t *ab)
{
    gs_decision_t turn = *dec;
    turn.route = GS_ROUTE_FORWARD;
    snprintf(turn.reason, sizeof turn.reason, "ab: cuBLAS's turn");
    gs_log_call(p, &turn, NULL);
    last_route = "forward";
    gs_served_t s = {0, CUBLAS_STATUS_SUCCESS, gs_timing_begin(stream), stream, ab};
    return s;
}

/* The decided family's plan for p, made once: what runs, what scratch it needs. */
static gs_plan_t plan_of(const gs_problem_t *p, const gs_device_t *d, const gs_decision_t *dec)
{
    gs_plan_t plan = {.family = dec->family, .config = dec->config};
    dec->family->plan(p, d, &plan);
    return plan;
}

/* The plan's launch, as the launch hook takes it. */
typedef struct plan_run {
    const gs_plan_t *plan;
    const gs_problem_t *p;
    const gs_device_t *d;
} plan_run_t;

static int launch_plan(void *ctx)
{
    const plan_run_t *r = ctx;
    return r->plan->family->run(r->plan, r->p, r->d);
}

/* A plugin calling cuBLAS from inside a call (or while loading): refused,
 * neither routed nor forwarded, with nothing logged but the guard's one
 * line (include/gemmshim_plugin.h). */
static const gs_served_t refused_reentry = {1, CUBLAS_STATUS_NOT_SUPPORTED, -1, NULL, NULL};

gs_served_t gs_serve(const gs_call_t *c)
{
    if (gs_plugin_reentered())
        return refused_reentry;
    const gs_config_t *cfg = gs_cfg();
    gs_problem_t p;
    gs_handle_state_t hs = {0, 0, 0};
    cublasStatus_t hst = CUBLAS_STATUS_NOT_INITIALIZED;
    if (c->lt) { /* cuBLASLt passes per call what a cuBLAS handle holds */
        hs.stream = c->lt_stream;
        hs.scalars_on_device = c->lt_scalars_on_device;
        hs.math_mode = CUBLAS_DEFAULT_MATH;
        hst = CUBLAS_STATUS_SUCCESS;
    } else if (c->handle) {
        hst = gs_handle_state(c->handle, &hs);
    }
    describe(c, &hs, &p);
    if (gs_tune_busy()) { /* cuBLAS's own call, made while the tuner runs its pairs */
        gs_served_t s = {0, CUBLAS_STATUS_SUCCESS, -1, hs.stream, NULL};
        return s;
    }

    gs_routing_t routing = gs_routing();
    if (routing.mode == GS_MODE_OFF)
        return forward_because(&p, "GEMMSHIM_MODE=off", hs.stream);
    if (c->lt && c->lt_unroutable[0]) /* what it is not, cuBLASLt computes or judges */
        return forward_because(&p, c->lt_unroutable, hs.stream);
    if (!c->lt && gs_check_call(c) != CUBLAS_STATUS_SUCCESS) {
        /* cuBLAS 13 dereferences a NULL alpha or beta and crashes the
         * application; the shim answers with the documented status instead. */
        if (c->handle && (!c->alpha || !c->beta)) {
            gs_decision_t dec = {GS_ROUTE_QUICK, NULL, 0, 0.0, 0, 0,
                                 "NULL alpha or beta: INVALID_VALUE"};
            gs_log_call(&p, &dec, NULL);
            last_route = "quick_return";
            gs_served_t s = {1, CUBLAS_STATUS_INVALID_VALUE, -1, hs.stream, NULL};
            return s;
        }
        return forward_because(&p, "invalid arguments: cuBLAS answers", hs.stream);
    }
    if (hst != CUBLAS_STATUS_SUCCESS)
        return forward_because(&p, "handle state unavailable", hs.stream);
    if (p.m == 0 || p.n == 0 || p.batch == 0) {
        gs_decision_t dec = {GS_ROUTE_QUICK, NULL, 0, 0.0, 0, 0,
                             "empty result: nothing to do"};
        gs_log_call(&p, &dec, NULL);
        last_route = "quick_return";
        gs_served_t s = {1, CUBLAS_STATUS_SUCCESS, -1, hs.stream, NULL};
        return s;
    }

    const gs_hooks_t *hooks = gs_hooks();
    gs_device_t dev;
    hooks->device_query(&dev); /* on failure dev.present = 0: dispatch forwards */
    if (routing.tune != GS_TUNE_OFF && dev.present)
        gs_tune_start(&dev); /* once: the cache is read before the first decision */
    gs_decision_t dec = gs_decide(&p, &dev, &routing);
    if (dec.tune_pending) {
        enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
        if (hooks->runs_kernels && cudaStreamIsCapturing((cudaStream_t)hs.stream, &cap) ==
                                       cudaSuccess && cap == cudaStreamCaptureStatusNone) {
            gs_tune_call(c, &p, &dev); /* pairs on the stream; this call goes to cuBLAS */
        } else { /* inside capture nothing is tuned: the prior decides */
            cudaGetLastError();
            gs_routing_t prior = routing;
            prior.tune = GS_TUNE_CACHE;
            dec = gs_decide(&p, &dev, &prior);
        }
    }
    if (routing.tune != GS_TUNE_OFF)
        gs_tune_count_served(dec.tuned);
    if (!dec.family)
        return forward(&p, &dec, hs.stream);
    const gs_plan_t plan = plan_of(&p, &dev, &dec);
    const char *kernel = plan.kernel;
    const size_t ws = plan.workspace_bytes;
    if (ws && hooks->runs_kernels) {
        char why[112];
        if (gs_workspace_get(dev.ordinal, hs.stream, ws, &p.workspace, &p.workspace_size, why,
                             sizeof why))
            return forward_because(&p, why, hs.stream);
    }

    gs_verify_t verify;
    int verifying = 0, timed = timing_wanted(cfg);
    gs_sig_t *ab = NULL;
    if ((routing.mode == GS_MODE_VERIFY || routing.mode == GS_MODE_AB) && hooks->runs_kernels) {
        uint64_t turn = 0;
        if (routing.mode == GS_MODE_AB && (ab = gs_log_ab_turn(&p, &dec, kernel, &turn))) {
            ab_report_at_exit();
            if (turn & 1) /* cuBLAS's turn, timed by the caller's forward */
                return ab_cublas_turn(&p, &dec, hs.stream, ab);
        }
        /* verify mode: every call; ab mode: a signature's first call, untimed,
         * gives its error against cuBLAS */
        if (routing.mode == GS_MODE_VERIFY || (ab && turn == 0))
            verifying = gs_verify_begin(c, &p, kernel, ab, &verify) == 0;
        if (ab)
            timed = turn > 0;
    }
    /* started after the verify's reference work: only our kernel is timed */
    int slot = timed ? gs_timing_begin(hs.stream) : -1;
    plan_run_t run = {&plan, &p, &dev};
    int err = hooks->launch(launch_plan, &run);
    if (verifying && err)
        gs_verify_cancel(&verify, &p);
    else if (verifying)
        gs_verify_end(&verify, &p);
    if (err) {
        gs_timing_cancel(slot);
        gs_log_fallback(&p, kernel, gs_hook_error_name(err));
        char why[112];
        snprintf(why, sizeof why, "fallback: %s failed to launch", kernel);
        gs_served_t s = forward_because(&p, why, hs.stream);
        last_route = "fallback";
        return s;
    }
    if (ab)
        gs_timing_end_ab(slot, hs.stream, ab, 1);
    else
        gs_timing_end(slot, hs.stream, dec.route);
    gs_log_call(&p, &dec, kernel);
    last_route = kernel;
    gs_served_t s = {1, CUBLAS_STATUS_SUCCESS, -1, hs.stream, NULL};
    return s;
}

void gs_forwarded(const gs_served_t *s)
{
    if (s->ab_sig)
        gs_timing_end_ab(s->timing_slot, s->stream, s->ab_sig, 0);
    else
        gs_timing_end(s->timing_slot, s->stream, GS_ROUTE_FORWARD);
}

gs_served_t gs_serve_lt(const gs_lt_args_t *a)
{
    if (gs_plugin_reentered())
        return refused_reentry;
    gs_call_t call;
    gs_lt_describe(a, &call);
    return gs_serve(&call);
}
