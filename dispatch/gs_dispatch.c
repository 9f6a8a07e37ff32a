/* Route choice. Candidates are tried in order of preference; a candidate is
 * taken only when it is allowed (GEMMSHIM_KERNELS), can implement the problem
 * exactly (its can_implement), and, under the default policy, the tuning
 * table measured it at least GS_MIN_RATIO of cuBLAS for the problem's class.
 * Otherwise the call is forwarded, with the reason. */
#include "gs_dispatch.h"
#include "gs_kernels.h"

#include <stdarg.h>
#include <stdio.h>

const char *gs_route_name(gs_route_t r)
{
    switch (r) {
    case GS_ROUTE_FORWARD: return "forward";
    case GS_ROUTE_QUICK: return "quick_return";
    case GS_ROUTE_SGEMM_SIMT: return "sgemm_simt";
    case GS_ROUTE_PINGPONG: return "pingpong";
    case GS_ROUTE_SKINNY: return "skinny";
    default: return "?";
    }
}

typedef struct candidate {
    gs_route_t route;
    gs_family_t family;
    int config;
} candidate_t;

/* Every kernel configuration, in order of preference when nothing measured
 * tells them apart: the decode kernel (it only takes few columns), the Hopper
 * tensor-core kernels, then the SIMT one. */
static size_t list_candidates(candidate_t *out, size_t cap)
{
    size_t n = 0;
    if (n < cap)
        out[n++] = (candidate_t){GS_ROUTE_SKINNY, GS_FAMILY_SKINNY, 0};
    for (int cfg = 0; cfg < GS_PINGPONG_CONFIG_COUNT && n < cap; ++cfg)
        out[n++] = (candidate_t){GS_ROUTE_PINGPONG, GS_FAMILY_PINGPONG, cfg};
    if (n < cap)
        out[n++] = (candidate_t){GS_ROUTE_SGEMM_SIMT, GS_FAMILY_SGEMM_SIMT, 0};
    return n;
}

static int can_implement(const candidate_t *k, const gs_problem_t *p, const gs_device_t *d)
{
    switch (k->route) {
    case GS_ROUTE_SGEMM_SIMT: return gs_sgemm_simt_can_implement(p, d);
    case GS_ROUTE_SKINNY: return gs_skinny_can_implement(p, d);
    case GS_ROUTE_PINGPONG:
        return gs_pingpong_can_implement(p, d, (gs_pingpong_config_t)k->config);
    default: return 0;
    }
}

static gs_decision_t forward(const char *fmt, ...)
{
    gs_decision_t dec = {GS_ROUTE_FORWARD, 0, 0.0, ""};
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
    return NULL;
}

gs_decision_t gs_dispatch(const gs_problem_t *p, const gs_device_t *d, const gs_routing_t *c)
{
    if (c->mode == GS_MODE_OFF)
        return forward("GEMMSHIM_MODE=off");
    const char *why = never_routed(p);
    if (why)
        return forward("%s", why);
    if (!d->present)
        return forward("no CUDA device");

    candidate_t cands[GS_PINGPONG_CONFIG_COUNT + 2];
    size_t n = list_candidates(cands, sizeof cands / sizeof cands[0]);
    int eligible = 0, disabled = 0;
    const candidate_t *pick = NULL;
    double pick_ratio = -1.0, best_slow = 0.0;
    const char *slow_name = NULL;
    for (size_t i = 0; i < n; ++i) {
        const candidate_t *k = &cands[i];
        if (!can_implement(k, p, d))
            continue;
        if (!(c->kernel_mask & (1u << k->family)) ||
            (k->route == GS_ROUTE_PINGPONG && !(c->pingpong_configs & (1u << k->config)))) {
            ++disabled;
            continue;
        }
        ++eligible;
        double ratio = gs_table_ratio(k->route, k->config, p, d);
        if (c->policy == GS_POLICY_TABLE && ratio < GS_MIN_RATIO) {
            if (!slow_name || ratio > best_slow) {
                best_slow = ratio;
                slow_name = gs_route_name(k->route);
            }
            continue;
        }
        if (ratio > pick_ratio) { /* the fastest measured; else the first */
            pick = k;
            pick_ratio = ratio;
        }
    }
    if (pick) {
        gs_decision_t dec = {pick->route, pick->config, pick_ratio, ""};
        if (c->policy == GS_POLICY_ELIGIBLE)
            snprintf(dec.reason, sizeof dec.reason, "eligible (GEMMSHIM_POLICY=eligible)");
        else
            snprintf(dec.reason, sizeof dec.reason, "table: %.2fx cuBLAS", pick_ratio);
        return dec;
    }
    if (slow_name && best_slow > 0.0)
        return forward("%s measured %.2fx cuBLAS for this class", slow_name, best_slow);
    if (slow_name)
        return forward("%s not measured for this class", slow_name);
    if (disabled && !eligible)
        return forward("eligible kernels disabled by GEMMSHIM_KERNELS");
    return forward("no kernel implements it (device sm_%d%d, alignment or strides)",
                   d->cc_major, d->cc_minor);
}
