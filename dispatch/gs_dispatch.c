/* Route choice. The candidates are every configuration of every registered
 * family, in the registry's order of preference; a candidate is taken only
 * when it is allowed (GEMMSHIM_KERNELS), can implement the problem exactly
 * (its can_implement), and, under the default policy, the routing table
 * measured it at least GS_MIN_RATIO of cuBLAS for the problem's class.
 * Otherwise the call is forwarded, with the reason. */
#include "gs_dispatch.h"
#include "gs_registry.h"
#include "gs_tune_cache.h"
#include "gs_tune_hold.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *gs_route_name(gs_route_t r)
{
    if (r == GS_ROUTE_FORWARD)
        return "forward";
    if (r == GS_ROUTE_QUICK)
        return "quick_return";
    const gs_family_t *f = gs_family_at(r - GS_ROUTE_FAMILY0);
    return f ? f->name : "?";
}

gs_route_t gs_route_of(const gs_family_t *f)
{
    for (int i = 0; i < gs_family_count() && i < GS_FAMILIES_MAX; ++i)
        if (gs_family_at(i) == f)
            return GS_ROUTE_FAMILY0 + i;
    return GS_ROUTE_FORWARD;
}

static gs_decision_t forward(const char *fmt, ...)
{
    gs_decision_t dec = {GS_ROUTE_FORWARD, NULL, 0, 0.0, 0, 0, ""};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dec.reason, sizeof dec.reason, fmt, ap);
    va_end(ap);
    return dec;
}

/* Reasons that hold whatever the kernels are: say them plainly. */
static const char *never_routed(const gs_problem_t *p)
{
    if (p->entry == GS_EP_GEMMEX_BATCHED)
        return "pointer-array batches are not routed";
    if (p->a_type == GS_DT_OTHER || p->b_type == GS_DT_OTHER || p->c_type == GS_DT_OTHER ||
        p->a_type == GS_DT_F64)
        return "data type not routed";
    if (p->compute == GS_CT_F32_TF32)
        return "TF32 compute is forwarded";
    if (p->compute == GS_CT_OTHER)
        return "compute type not routed";
    /* The FP8 subset goes on to the families that read its contract: the
     * FP8 family's decode kernels where the table routes them, its tiles
     * with GEMMSHIM_FP8_TILES=1, cuBLASLt's algorithms under tuning. */
    if (gs_class_fp8(&p->cls)) {
        if (!gs_class_fp8_subset(&p->cls))
            return "fp8: cuBLAS as called, or cuBLASLt's algorithms when tuned";
    } else if (gs_class_lt_scaled(&p->cls)) {
        return "cuBLASLt scaling not routed";
    }
    return NULL;
}

/* FP8 operands or a scaling contract: only a family that reads the
 * contract is asked (our kernels would compute an unscaled product); an
 * experimental FP8 family only with GEMMSHIM_FP8_TILES=1. */
static int reads_what_it_needs(const gs_family_t *f, int config, const gs_class_t *c,
                               const gs_routing_t *r)
{
    if (gs_family_opt_in(f, config) && !r->fp8_tiles)
        return 0;
    return f->reads_lt_contract || (!gs_class_lt_scaled(c) && !gs_class_fp8(c));
}

int gs_candidate_takes(const gs_routing_t *r, int cand, const gs_family_t *f, int config,
                       const gs_class_t *c, const gs_device_t *d)
{
    return cand >= 0 && (r->allowed & (1ull << cand)) && reads_what_it_needs(f, config, c, r) &&
           f->can_implement(c, d, config) && (!c->sm_count_target || f->honours_sm_count_target);
}

const char *gs_prior_text(const gs_decision_t *prior, const gs_problem_t *p,
                          const gs_device_t *d, char *buf, size_t size)
{
    if (!prior->family) {
        snprintf(buf, size, GS_TUNED_CUBLAS);
        return buf;
    }
    char config[sizeof ((gs_tuned_t *)0)->config];
    snprintf(buf, size, "%s/%s", prior->family->name,
             gs_family_config_text(prior->family, p, d, prior->config, config, sizeof config));
    return buf;
}

/* The tuned decision for p's class, when there is one that still holds:
 * 1 and *dec; 0 (none, or no longer available here); -1 (decided against
 * another prior: a table or policy since changed). In the last two the
 * prior decides. */
static int tuned_decision(const gs_problem_t *p, const gs_device_t *d, const gs_routing_t *c,
                          const gs_decision_t *prior, gs_decision_t *dec)
{
    gs_tuned_t t;
    char now[sizeof t.prior];
    if (!gs_tuned_find(&p->cls, &t))
        return 0;
    if (!gs_tuned_prior_matches(&t, gs_prior_text(prior, p, d, now, sizeof now)))
        return -1;
    if (!strcmp(t.family, GS_TUNED_CUBLAS)) {
        *dec = forward("tuned: cuBLAS as called (%.3fx the prior)", t.vs_prior);
        dec->tuned = 1;
        return 1;
    }
    const gs_family_t *f = gs_family_find(t.family);
    const int config = f ? gs_family_config_from_text(f, p, d, t.config) : -1;
    const int cand = f && config >= 0 ? gs_candidate_of(f, config) : -1;
    if (!gs_candidate_takes(c, cand, f, config, &p->cls, d))
        return 0;
    gs_decision_t r = {gs_route_of(f), f, config, t.gain, 1, 0, ""};
    snprintf(r.reason, sizeof r.reason,
             "tuned: %.3fx cuBLAS as called (lower 95%% bound %.3f), %.3fx the prior", t.gain,
             t.lo95, t.vs_prior);
    *dec = r;
    return 1;
}

/* The prior of a signature held at it (dispatch/gs_tune_hold.h), saying so. */
static gs_decision_t held(const gs_decision_t *prior)
{
    gs_decision_t dec = *prior;
    snprintf(dec.reason, sizeof dec.reason, "held at its prior: %.92s", prior->reason);
    return dec;
}

gs_decision_t gs_dispatch(const gs_problem_t *p, const gs_device_t *d, const gs_routing_t *c)
{
    if (c->mode == GS_MODE_OFF)
        return forward("GEMMSHIM_MODE=off");
    const gs_decision_t prior = gs_dispatch_prior(p, d, c);
    if (c->tune == GS_TUNE_OFF || !d->present)
        return prior;
    if (gs_tune_held(&p->cls)) /* gemmshim_hold_prior: as untuned, and not tuned */
        return held(&prior);
    gs_decision_t dec;
    const int tuned = tuned_decision(p, d, c, &prior, &dec);
    if (tuned > 0)
        return dec;
    if (c->tune == GS_TUNE_ONLINE) {
        dec = forward(tuned < 0 ? "tuning again (decided against another prior): cuBLAS as "
                                  "called until decided"
                                : "tuning: cuBLAS as called until decided");
        dec.tune_pending = 1;
        return dec;
    }
    return prior;
}

gs_decision_t gs_dispatch_prior(const gs_problem_t *p, const gs_device_t *d,
                                const gs_routing_t *c)
{
    if (c->mode == GS_MODE_OFF)
        return forward("GEMMSHIM_MODE=off");
    const char *why = never_routed(p);
    if (why)
        return forward("%s", why);
    if (!d->present)
        return forward("no CUDA device");

    int eligible = 0, disabled = 0, sm_target = 0, opt_in = 0, pick_config = 0;
    const gs_family_t *pick = NULL, *slow = NULL;
    double pick_ratio = -1.0, best_slow = 0.0;
    for (int i = 0; i < gs_candidate_count(); ++i) {
        int config;
        const gs_family_t *f = gs_candidate(i, &config);
        if (f->tuned_only)
            continue;
        if (gs_family_opt_in(f, config) && !c->fp8_tiles) {
            /* an experimental configuration switched off: would it take it? */
            opt_in += f->can_implement(&p->cls, d, config);
            continue;
        }
        if (!reads_what_it_needs(f, config, &p->cls, c) || !f->can_implement(&p->cls, d, config))
            continue;
        if (p->cls.sm_count_target && !f->honours_sm_count_target) {
            ++sm_target;
            continue;
        }
        if (!(c->allowed & (1ull << i))) {
            ++disabled;
            continue;
        }
        ++eligible;
        const double ratio = gs_table_ratio(f, config, p, d);
        if (c->policy == GS_POLICY_TABLE && ratio < GS_MIN_RATIO) {
            if (!slow || ratio > best_slow) {
                best_slow = ratio;
                slow = f;
            }
            continue;
        }
        if (ratio > pick_ratio) { /* the fastest measured; else the first */
            pick = f;
            pick_config = config;
            pick_ratio = ratio;
        }
    }
    if (pick) {
        gs_decision_t dec = {gs_route_of(pick), pick, pick_config, pick_ratio, 0, 0, ""};
        if (c->policy == GS_POLICY_ELIGIBLE)
            snprintf(dec.reason, sizeof dec.reason, "eligible (GEMMSHIM_POLICY=eligible)");
        else
            snprintf(dec.reason, sizeof dec.reason, "table: %.2fx cuBLAS", pick_ratio);
        return dec;
    }
    if (slow && best_slow > 0.0)
        return forward("%s measured %.2fx cuBLAS for this class", slow->name, best_slow);
    if (slow)
        return forward("%s not measured for this class", slow->name);
    if (disabled && !eligible)
        return forward("eligible kernels disabled by GEMMSHIM_KERNELS");
    if (sm_target && !eligible)
        return forward("the handle's SM count target (%d) is for cuBLAS to honour",
                       p->cls.sm_count_target);
    if (gs_class_fp8(&p->cls))
        return forward("no FP8 kernel takes it (device sm_%d%d; decode kernels: n <= 64%s)",
                       d->cc_major, d->cc_minor,
                       opt_in ? "; the FP8 tiles: GEMMSHIM_FP8_TILES=1" : "");
    return forward("no kernel implements it (device sm_%d%d, alignment or strides)",
                   d->cc_major, d->cc_minor);
}
