/* Serving one intercepted call, as a pipeline of small stages:
 *
 *   describe   the call as a problem, with its handle's state
 *   check      mode off, unroutable cuBLASLt calls, invalid arguments,
 *              unusable handles: forwarded (cuBLAS answers); NULL scalars
 *              and empty results: answered here
 *   decide     the device, the decision cache, the tuner's hook
 *   plan       the decided family's plan: the kernel, its scratch
 *   workspace  the scratch for (device, stream)
 *   A/B turn   GEMMSHIM_MODE=ab: cuBLAS's turns are forwarded, timed
 *   run        our kernel on the handle's stream
 *   fallback   it did not launch: forwarded
 *
 * Whatever is not served here the caller forwards untouched, then calls
 * gs_forwarded. The log, statistics, verification, timing, the A/B report
 * and the last route are observers (gs_observe.h), called at fixed points
 * of the pipeline; none of them decides anything here. */
#include "gs_serve.h"
#include "gemmshim.h"
#include "gs_compat.h"
#include "gs_decide.h"
#include "gs_hooks.h"
#include "gs_dispatch.h"
#include "gs_lt.h"
#include "gs_log.h"
#include "gs_observe.h"
#include "gs_plugin.h"
#include "gs_state.h"
#include "gs_tune.h"
#include "gs_workspace.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Every observer's callback for a point, in the list's order. */
#define OBSERVE(point, arg)                                                  \
    do {                                                                     \
        for (const gs_observer_t *const *o_ = gs_observers; *o_; ++o_)       \
            if ((*o_)->point)                                                \
                (*o_)->point(arg);                                           \
    } while (0)

/* cublasGetSmCountTarget: optional (a cuBLAS without it: no target). */
static cublasStatus_t (*sm_count_target_getter)(cublasHandle_t, int *);

static void resolve_sm_target(void)
{
    *(void **)&sm_count_target_getter = gs_real_symbol(GS_LIB_CUBLAS, "cublasGetSmCountTarget");
}

/* The real libraries' getters compat/ reads handles and descriptors with. */
static gs_handle_getters_t handle_getters(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, resolve_sm_target);
    const gs_real_table_t *r = gs_real(GS_LIB_CUBLAS);
    gs_handle_getters_t g = {r->cublasGetStream_v2, r->cublasGetPointerMode_v2,
                             r->cublasGetMathMode, sm_count_target_getter};
    return g;
}

static gs_lt_getters_t lt_getters(void)
{
    const gs_real_table_t *r = gs_real(GS_LIB_CUBLASLT);
    gs_lt_getters_t g = {r->cublasLtMatmulDescGetAttribute, r->cublasLtMatrixLayoutGetAttribute};
    return g;
}

/* Events around each call cost a few microseconds of host time: only while
 * logging or recording, and not with GEMMSHIM_LOG_TIMING=0 (timing small
 * calls). */
static int timing_wanted(const gs_config_t *cfg)
{
    return (cfg->log_enabled || cfg->record_path[0]) && cfg->log_timing;
}

/* ---- the outcomes: forwarded, answered here, served ---- */

/* The call goes to cuBLAS: the caller forwards it. why: a reason of its
 * own (a fresh forward decision), or NULL to keep s->dec's (after the
 * reasons a cuBLASLt call was read with: an FP8 call dispatch saw and
 * forwarded says what it is, then why no kernel took it). The observers
 * see why in full (s->why): a cuBLASLt call's reasons outgrow a
 * decision's. */
static gs_served_t forward(gs_serving_t *s, const char *why)
{
    char lt_why[GS_LT_WHY_MAX + sizeof s->dec.reason + 2];
    if (why) {
        gs_decision_t dec = {GS_ROUTE_FORWARD, NULL, 0, 0.0, 0, 0, ""};
        snprintf(dec.reason, sizeof dec.reason, "%s", why);
        s->dec = dec;
    } else if (s->call->lt && s->call->lt_unroutable[0] && gs_cfg()->log_enabled) {
        /* composed only for the log, its one reader (a line per signature) */
        snprintf(lt_why, sizeof lt_why, "%s; %s", s->call->lt_unroutable, s->dec.reason);
        why = lt_why;
    }
    s->why = why ? why : s->dec.reason;
    s->kernel = NULL;
    OBSERVE(on_forward, s);
    gs_served_t out = {0, CUBLAS_STATUS_SUCCESS, s->timing_slot, s->stream, s->ab_sig,
                       s->dec.tuned};
    return out;
}

/* Answered here with `status`, nothing run. */
static gs_served_t answer(gs_serving_t *s, cublasStatus_t status, const char *why)
{
    gs_decision_t dec = {GS_ROUTE_QUICK, NULL, 0, 0.0, 0, 0, ""};
    snprintf(dec.reason, sizeof dec.reason, "%s", why);
    s->dec = dec;
    s->why = s->dec.reason;
    OBSERVE(on_answered, s);
    gs_served_t out = {1, status, -1, s->stream, NULL, 0};
    return out;
}

/* ---- the stages ---- */

static gs_op_t op_of(int cublas_op)
{
    return cublas_op == CUBLAS_OP_N ? GS_OP_N : GS_OP_T; /* C == T for real types */
}

/* The descriptor of a call on a handle whose state we know. */
static void problem_of(const gs_call_t *c, const gs_handle_state_t *hs, gs_problem_t *p)
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
    p->sm_count_target = hs->sm_count_target;
    p->stream = hs->stream;
    p->pdl = gs_cfg()->pdl;
    if (c->bias) {
        p->bias = c->bias;
        p->bias_type = gs_dtype_from_cuda(c->bias_type);
    }
    p->scale_a = c->scale_a; /* per call, like the bias: never in the class */
    p->scale_b = c->scale_b;
    p->lt_scales = c->lt_scales;
    p->lt_flags = c->lt_flags;
    gs_problem_classify(p);
}

/* What a cuBLAS handle would hold, as a cublasLtMatmul passes it per call. */
static gs_handle_state_t lt_state(const gs_call_t *c)
{
    gs_handle_state_t hs = {c->lt_stream, c->lt_scalars_on_device, CUBLAS_DEFAULT_MATH, 0};
    return hs;
}

void gs_problem_of_lt(const gs_call_t *c, gs_problem_t *p)
{
    const gs_handle_state_t hs = lt_state(c);
    problem_of(c, &hs, p);
}

/* describe: the handle's state (cuBLASLt passes per call what a cuBLAS
 * handle holds) and the problem. Returns the handle state's status. */
static cublasStatus_t describe(const gs_call_t *c, gs_serving_t *s)
{
    memset(s, 0, sizeof *s);
    s->call = c;
    s->timing_slot = -1;
    gs_handle_state_t hs = {0, 0, 0, 0};
    cublasStatus_t hst = CUBLAS_STATUS_NOT_INITIALIZED;
    if (c->lt) {
        hs = lt_state(c);
        hst = CUBLAS_STATUS_SUCCESS;
    } else if (c->handle) {
        const gs_handle_getters_t g = handle_getters();
        hst = gs_handle_state(&g, c->handle, &hs);
    }
    s->stream = hs.stream;
    problem_of(c, &hs, &s->p);
    return hst;
}

/* A cublasLtMatmul our kernels do not take, forwarded: its reasons as
 * listed, and under tuning, for an FP8 call that cuBLASLt's algorithms
 * do not take either, what keeps it from them where the list does not
 * say (into buf). */
static const char *lt_forward_why(const gs_serving_t *s, char *buf, size_t size)
{
    const gs_call_t *c = s->call;
    if (s->routing.tune == GS_TUNE_OFF || !c->lt_algos_why)
        return c->lt_unroutable;
    snprintf(buf, size, "%s; %s", c->lt_unroutable, c->lt_algos_why);
    return buf;
}

/* A host fp32 alpha of zero. */
static int blas_alpha_zero(const gs_problem_t *p)
{
    float a;
    if (p->scalars_on_device || p->scalar_type != GS_DT_F32 || !p->alpha)
        return 0;
    memcpy(&a, p->alpha, sizeof a); /* a host scalar need not be aligned */
    return a == 0.0f;
}

/* check: 1 when the call was forwarded or answered (*out), 0 to go on. An
 * FP8 call of the subset cuBLASLt's algorithms take goes on (dispatch
 * offers it only to the families that read the scaling contract: the FP8
 * family, cuBLASLt's algorithms under tuning); every other cuBLASLt call
 * our kernels do not take is forwarded here with its reasons. */
static int check(gs_serving_t *s, cublasStatus_t handle_status, gs_served_t *out)
{
    const gs_call_t *c = s->call;
    const int valid = c->lt || gs_check_call(c) == CUBLAS_STATUS_SUCCESS;
    s->described = valid && handle_status == CUBLAS_STATUS_SUCCESS; /* mode off included */
    /* the FP8 subset: the FP8 family (its decode kernels as the table
     * routes them, its tiles with GEMMSHIM_FP8_TILES=1), cuBLASLt's
     * algorithms under tuning */
    const int algos_may = c->lt && c->lt_algos_only;
    char lt_why[GS_LT_WHY_MAX + 64];
    const char *why = NULL;
    if (s->routing.mode == GS_MODE_OFF) {
        why = "GEMMSHIM_MODE=off";
    } else if (c->lt && c->lt_unroutable[0] && !algos_may) {
        /* what it is not, cuBLASLt computes or judges */
        why = lt_forward_why(s, lt_why, sizeof lt_why);
    } else if (!valid) {
        /* cuBLAS 13 dereferences a NULL alpha or beta and crashes the
         * application; the shim answers with the documented status instead. */
        if (c->handle && (!c->alpha || !c->beta)) {
            *out = answer(s, CUBLAS_STATUS_INVALID_VALUE, "NULL alpha or beta: INVALID_VALUE");
            return 1;
        }
        why = "invalid arguments: cuBLAS answers";
    } else if (handle_status != CUBLAS_STATUS_SUCCESS) {
        why = "handle state unavailable";
    } else if (s->p.m == 0 || s->p.n == 0 || s->p.batch == 0) {
        *out = answer(s, CUBLAS_STATUS_SUCCESS, "empty result: nothing to do");
        return 1;
    } else if (!c->lt && blas_alpha_zero(&s->p)) {
        /* cuBLAS's BLAS GEMMs read neither A nor B then (a NaN there never
         * reaches C); not every family of ours skips them */
        why = "alpha 0: cuBLAS reads neither A nor B";
    }
    if (!why)
        return 0;
    *out = forward(s, why);
    return 1;
}

/* decide: the device, then gs_decide. The tuner's hook: a signature not
 * decided yet gets its timing pairs on the stream and goes to cuBLAS;
 * inside graph capture, or when the tuner has no room for another
 * signature, nothing is tuned and the prior decides. */
static void decide(gs_serving_t *s, const gs_hooks_t *hooks)
{
    hooks->device_query(&s->dev); /* on failure dev.present = 0: dispatch forwards */
    if (s->routing.tune != GS_TUNE_OFF && s->dev.present)
        gs_tune_start(&s->dev); /* once: the cache is read before the first decision */
    s->dec = gs_decide(&s->p, &s->dev, &s->routing);
    gs_tune_turn_t turn = GS_TUNE_NOT_HERE;
    if (s->dec.tune_pending) {
        enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
        const int no_tuning = /* inside capture, or nothing runs here */
            !hooks->runs_kernels ||
            cudaStreamIsCapturing((cudaStream_t)s->stream, &cap) != cudaSuccess ||
            cap != cudaStreamCaptureStatusNone;
        /* tuned: pairs on the stream, the call itself to cuBLAS */
        if (!no_tuning)
            turn = gs_tune_call(s->call, &s->p, &s->dev);
        if (turn != GS_TUNE_TIMING) {
            cudaGetLastError();
            gs_routing_t prior = s->routing;
            prior.tune = GS_TUNE_CACHE;
            s->dec = gs_decide(&s->p, &s->dev, &prior);
        }
    }
    s->tuning = s->routing.tune == GS_TUNE_OFF ? GEMMSHIM_TUNING_NONE
                : s->dec.tuned                 ? GEMMSHIM_TUNING_DECIDED
                : turn == GS_TUNE_TIMING       ? GEMMSHIM_TUNING_TIMING
                : turn == GS_TUNE_ELSEWHERE    ? GEMMSHIM_TUNING_ELSEWHERE
                                               : GEMMSHIM_TUNING_UNTUNED;
    OBSERVE(on_decided, s);
}

/* plan: the decided family's plan for p, made once: what runs, what
 * scratch it needs. */
static gs_plan_t plan(const gs_serving_t *s)
{
    gs_plan_t pl = {.family = s->dec.family, .config = s->dec.config};
    s->dec.family->plan(&s->p, &s->dev, &pl);
    return pl;
}

/* workspace: the plan's scratch; 0, or -1 with the reason in why. */
static int workspace(gs_serving_t *s, const gs_plan_t *pl, const gs_hooks_t *hooks, char *why,
                     size_t size)
{
    if (!pl->workspace_bytes || !hooks->runs_kernels)
        return 0;
    return gs_workspace_get(s->dev.ordinal, s->stream, pl->workspace_bytes, &s->p.workspace,
                            &s->p.workspace_size, &s->ws_hold, why, size)
               ? -1
               : 0;
}

/* A/B turn (GEMMSHIM_MODE=ab, kernels running): a signature's turns
 * alternate between cuBLAS and us. Turn 0 is ours, compared with cuBLAS
 * and not timed; then odd turns are cuBLAS's (1 returned: forward it,
 * timed), even ones ours, timed. This stage changes the route, so it is
 * not an observer. */
static int ab_turn(gs_serving_t *s, const gs_hooks_t *hooks)
{
    if (s->routing.mode != GS_MODE_AB || !hooks->runs_kernels)
        return 0;
    uint64_t turn = 0;
    s->ab_sig = gs_log_ab_turn(&s->p, &s->dec, s->kernel, &turn);
    if (!s->ab_sig)
        return 0; /* the signature table is full: served as in mode on */
    s->timed = turn > 0;
    s->verify = turn == 0;
    if (!(turn & 1))
        return 0;
    s->dec.route = GS_ROUTE_FORWARD;
    snprintf(s->dec.reason, sizeof s->dec.reason, "ab: cuBLAS's turn");
    return 1;
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

/* run, and fallback: our kernel on the stream; if it does not launch, the
 * call goes to cuBLAS (timed as a forwarded call, not as an A/B turn). */
static gs_served_t run(gs_serving_t *s, const gs_plan_t *pl, const gs_hooks_t *hooks)
{
    OBSERVE(before_run, s);
    plan_run_t r = {pl, &s->p, &s->dev};
    int err = hooks->launch(launch_plan, &r);
    gs_workspace_release(s->ws_hold); /* every launch of ours is enqueued */
    s->ws_hold = NULL;
    if (!err) {
        OBSERVE(after_run, s);
        gs_served_t out = {1, CUBLAS_STATUS_SUCCESS, -1, s->stream, NULL, 0};
        return out;
    }
    s->launch_error = err;
    OBSERVE(on_fallback, s);
    char why[112];
    snprintf(why, sizeof why, "fallback: %s failed to launch", s->kernel);
    s->fell_back = 1;
    s->ab_sig = NULL;
    s->timed = timing_wanted(gs_cfg());
    return forward(s, why);
}

/* A plugin calling cuBLAS from inside a call (or while loading): refused,
 * neither routed nor forwarded, with nothing logged but the guard's one
 * line (include/gemmshim_plugin.h). */
static const gs_served_t refused_reentry = {1, CUBLAS_STATUS_NOT_SUPPORTED, -1, NULL, NULL, 0};

/* cuBLAS's own call, made while the tuner runs its pairs: straight through,
 * before anything is described (nothing is timed or logged for it). */
static const gs_served_t tuner_pass_through = {0, CUBLAS_STATUS_SUCCESS, -1, NULL, NULL, 0};

gs_served_t gs_serve(const gs_call_t *c)
{
    if (gs_plugin_reentered())
        return refused_reentry;
    if (gs_tune_busy())
        return tuner_pass_through;
    const gs_config_t *cfg = gs_cfg();
    gs_serving_t s;
    const cublasStatus_t handle_status = describe(c, &s);
    s.routing = gs_routing();
    s.timed = timing_wanted(cfg);
    gs_served_t out;
    if (check(&s, handle_status, &out))
        return out;

    const gs_hooks_t *hooks = gs_hooks();
    decide(&s, hooks);
    if (!s.dec.family)
        return forward(&s, NULL);
    const gs_plan_t pl = plan(&s);
    char why[112];
    if (workspace(&s, &pl, hooks, why, sizeof why))
        return forward(&s, why);
    s.kernel = pl.kernel;
    s.verify = s.routing.mode == GS_MODE_VERIFY && hooks->runs_kernels; /* every call */
    if (ab_turn(&s, hooks)) {
        gs_workspace_release(s.ws_hold);
        return forward(&s, NULL);
    }
    return run(&s, &pl, hooks);
}

void gs_forwarded(const gs_served_t *s)
{
    OBSERVE(after_forward, s);
}

gs_served_t gs_serve_lt(const gs_lt_args_t *a)
{
    if (gs_plugin_reentered())
        return refused_reentry;
    if (gs_tune_busy())
        return tuner_pass_through;
    gs_call_t call;
    const gs_lt_getters_t g = lt_getters();
    gs_lt_describe(&g, a, &call);
    return gs_serve(&call);
}
