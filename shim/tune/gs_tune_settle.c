/* The tuner's decisions: the rule's verdict, the sustained check, and the
 * signature's decision, progress and claim in the tune cache; see gs_tune.h
 * and gs_tune_sig.h. */
#include "gs_tune_sig.h"
#include "gs_as_called.h"
#include "gs_config.h"
#include "gs_log.h"
#include "gs_registry.h"
#include "gs_state.h"
#include "gs_tune_cache.h"
#include "gs_tune_sustain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    SUSTAIN_TRIES = 3,   /* challengers given a sustained check, best first */
    /* a progress line's fields: each candidate's name and up to
     * GS_TUNE_PAIRS_MAX samples of at most 12 characters */
    PROGRESS_BYTES = GS_TUNE_CANDS_MAX * (NAME_MAX_BYTES + 16 + 12 * GS_TUNE_PAIRS_MAX) + 64,
};
/* A signature another process tunes is looked at again (the cache's new
 * lines read, its claimer checked) at most this often. */
#define RECHECK_NS 200000000LL


static const char *const state_names[] = {"live", "mismatch", "failed", "pruned"};

static void log_candidates(const tsig_t *s)
{
    for (int i = 0; i < s->rule.n_cand; ++i) {
        const gs_tune_cand_t *c = &s->rule.cand[i];
        double mean = 0.0, lo95 = 0.0;
        const int have = gs_tune_bounds(c, &mean, &lo95);
        gs_log_line("tune:   %-8s %s%s: %d pairs, %.3fx (lower bound %.3f)%s",
                    state_names[c->state & 3], s->name[i], i == s->rule.prior ? " (prior)" : "",
                    c->n, have ? exp(mean) : (c->n ? exp(c->log_ratio[0]) : 0.0),
                    have ? exp(lo95) : 0.0, c->checked ? "" : ", not compared");
    }
}

/* The route as the cache writes it: a candidate's family and
 * configuration, or cuBLAS as called. */
static void route_of(const tsig_t *s, int route, gs_tuned_t *t)
{
    if (route == GS_TUNE_CUBLAS) {
        snprintf(t->family, sizeof t->family, GS_TUNED_CUBLAS);
        snprintf(t->config, sizeof t->config, "as_called");
        return;
    }
    const char *slash = strchr(s->name[route], '/');
    const gs_family_t *f = gs_family_at(s->rule.cand[route].family);
    snprintf(t->family, sizeof t->family, "%s", f->name);
    snprintf(t->config, sizeof t->config, "%s", slash ? slash + 1 : "");
    t->pairs = s->rule.cand[route].n;
}

/* The rule's verdict, the challengers that lost their sustained check
 * left out. Under lock. */
static gs_tune_verdict_t verdict_of(const tsig_t *s, const gs_tune_limits_t *lim)
{
    static gs_tune_sig_t rule; /* large: not on the stack */
    rule = s->rule;
    for (int i = 0; i < rule.n_cand; ++i)
        if (s->unsustained[i] && rule.cand[i].state == GS_CAND_LIVE)
            rule.cand[i].state = GS_CAND_SLOW;
    return gs_tune_decide(&rule, lim);
}

/* Writes verdict v to the cache. why: the prior is kept and why; sustained:
 * the challenger's ratio over the prior in the sustained check (0: none),
 * which is then what the cache records as its gain over the prior. */
static void decide_as(tsig_t *s, const gs_tune_verdict_t *v, const char *why, double sustained)
{
    gs_tuned_t t;
    memset(&t, 0, sizeof t);
    route_of(s, v->route, &t);
    t.gain = v->gain;
    t.lo95 = v->lo95;
    t.cost_ms = s->rule.gpu_ms;
    t.vs_prior = sustained > 0.0 ? sustained : v->vs_prior;
    snprintf(t.prior, sizeof t.prior, "%s", s->prior);
    s->state = SIG_DECIDED;
    s->awaiting_check = 0;
    ++gs_tsig_n_decided;
    gs_tsig_n_won += !v->kept_prior;
    if (s->scratch) {
        cudaFreeAsync(s->scratch, s->owner);
        s->scratch = NULL;
    }
    char msg[600];
    if (gs_tuned_put(&s->key.cls, &t, s->shape, msg, sizeof msg))
        gs_msg("tune: %s", msg);
    int live = 0;
    for (int i = 0; i < s->rule.n_cand; ++i)
        live += s->rule.cand[i].state == GS_CAND_LIVE;
    char held[64] = "";
    if (sustained > 0.0)
        snprintf(held, sizeof held, ", %.3fx the prior sustained", sustained);
    gs_log_line("tune: %s -> %s %s%s: %.3fx cuBLAS as called (lower 95%% bound %.3f, %d pairs), "
                "%.3fx the prior %s (lower bound %.3f)%s%s; %d candidates (%d live), %d calls "
                "carried %d pairs, %.2f ms GPU, tuned by pid %ld%s%s",
                s->shape, t.family, t.config, v->kept_prior ? " (the prior kept)" : "", t.gain,
                t.lo95, t.pairs, v->vs_prior, s->prior, v->vs_prior_lo95, held,
                v->prior_unsafe ? ", the prior's result differed from cuBLAS's" : "",
                s->rule.n_cand, live, s->rule.calls, s->rule.pairs, s->rule.gpu_ms,
                (long)getpid(), why ? "; " : "", why ? why : "");
    log_candidates(s);
}

/* Writes the prior as the decision, why saying why. */
static void keep_prior(tsig_t *s, const char *why)
{
    const gs_tune_verdict_t keep = {s->rule.prior, 1, 0, 1.0, 1.0, 1.0, 1.0};
    decide_as(s, &keep, why, 0.0);
}

/* The check's plan for this signature: calls == 0 where none applies. */
static gs_sustain_plan_t sustain_plan_of(const tsig_t *s)
{
    return gs_tune_sustain_plan(s->share.call_ms, gs_tune_intensity(&s->key.cls),
                                gs_cfg()->tune.sustain_ms);
}

/* Why the pairs are not trusted over the prior on this signature, or NULL
 * (gs_tune_pairs_doubt_prior). */
static const char *doubted(const tsig_t *s, const gs_tune_verdict_t *v)
{
    if (v->kept_prior || v->prior_unsafe ||
        !gs_tune_pairs_doubt_prior(&s->rule, gs_tune_est_ms(&s->key.cls)))
        return NULL;
    return "the pairs read the routing table's kernel slower than cuBLAS on a call this short, "
           "against the table's steady-state reading: the prior kept";
}

/* Decides by the rule (why == NULL) or keeps the prior (why says why),
 * and writes the decision to the cache. A challenger that would need a
 * sustained check it has not had does not replace the prior here. */
void gs_tsig_decide(tsig_t *s, const char *why)
{
    if (why) {
        keep_prior(s, why);
        return;
    }
    const gs_tune_limits_t lim = gs_tune_default_limits_for(gs_cfg()->tune.pairs);
    const gs_tune_verdict_t v = verdict_of(s, &lim);
    const char *doubt = doubted(s, &v);
    if (doubt)
        keep_prior(s, doubt);
    else if (!v.kept_prior && !v.prior_unsafe && sustain_plan_of(s).calls)
        keep_prior(s, "the tuning budget ran out before the winner's sustained check: the prior "
                      "kept");
    else
        decide_as(s, &v, NULL, 0.0);
}

/* ---- the sustained check ---- */

typedef struct sustain_ctx {
    const tsig_t *s;
    const gs_call_t *c;
    const gs_problem_t *p;
    const gs_device_t *d;
    int side[2]; /* [0] the prior, [1] the challenger: a candidate or GS_TUNE_CUBLAS */
} sustain_ctx_t;

static int sustain_call(void *ctx, int challenger)
{
    const sustain_ctx_t *x = ctx;
    const int who = x->side[challenger];
    void *out = gs_tsig_out_of(x->s, challenger ? 0 : 1, x->p->C);
    if (who == GS_TUNE_CUBLAS)
        return gs_cublas_as_called(x->c, out) != CUBLAS_STATUS_SUCCESS;
    return gs_tsig_run_candidate(x->s, &x->s->rule.cand[who], x->p, x->d, out);
}

/* Every live pair is in: decides, giving each challenger that won its
 * pairs on a long call (best first, SUSTAIN_TRIES of them) the sustained
 * check against the prior. Waits, the prior serving, where the share does
 * not allow the check's cost yet. Under lock, on the owner's stream. */
void gs_tsig_settle(tsig_t *s, const gs_call_t *c, const gs_problem_t *p, const gs_device_t *d,
                   const gs_tune_limits_t *lim)
{
    const gs_config_t *cfg = gs_cfg();
    const gs_sustain_plan_t plan = sustain_plan_of(s);
    /* the challengers checked so far, also at earlier calls (a check that
     * waited for the share resumes here) */
    int checked = 0;
    for (int i = 0; i < s->rule.n_cand; ++i)
        checked += s->unsustained[i];
    for (int tries = checked;; ++tries) {
        gs_tune_verdict_t v = verdict_of(s, lim);
        const char *doubt = doubted(s, &v);
        if (doubt) {
            keep_prior(s, doubt);
            return;
        }
        if (v.kept_prior || v.prior_unsafe || !plan.calls) {
            decide_as(s, &v, tries ? "no challenger held its gain sustained" : NULL, 0.0);
            return;
        }
        if (tries == SUSTAIN_TRIES || gs_tsig_spent_ms + plan.cost_ms > cfg->tune.budget_ms) {
            keep_prior(s, tries == SUSTAIN_TRIES ? "no challenger held its gain sustained"
                                                 : "no tuning budget left for the sustained check");
            return;
        }
        if (!gs_tune_share_allows_ms(&s->share, plan.cost_ms, cfg->tune.share) ||
            gs_tsig_scratch_ready(s, p, d, (cudaStream_t)p->stream)) {
            if (s->state == SIG_TUNING && !s->awaiting_check)
                gs_log_line("tune: %s: %s won its pairs; its sustained check (%.0f ms of GPU "
                            "time) waits for GEMMSHIM_TUNE_SHARE, the prior serving",
                            s->shape, v.route == GS_TUNE_CUBLAS ? "cublas" : s->name[v.route],
                            plan.cost_ms);
            s->awaiting_check = s->state == SIG_TUNING;
            return;
        }
        s->awaiting_check = 0;
        const int prior = s->rule.prior >= 0 && !v.prior_unsafe ? s->rule.prior : GS_TUNE_CUBLAS;
        sustain_ctx_t x = {s, c, p, d, {prior, v.route}};
        double prior_ms[GS_SUSTAIN_ROUNDS] = {0}, cand_ms[GS_SUSTAIN_ROUNDS] = {0};
        char why[128] = "";
        const int rc = gs_tune_sustain_time(s->owner, &plan, sustain_call, &x, prior_ms, cand_ms,
                                            why, sizeof why);
        /* its GPU time, charged to the process's budget, the share and the
         * signature alike: what the blocks measured, or the plan's estimate */
        double spent = 0.0;
        for (int r = 0; r < plan.rounds; ++r)
            spent += (prior_ms[r] + cand_ms[r]) * plan.calls;
        spent = rc ? plan.cost_ms : spent;
        gs_tsig_spent_ms += spent;
        s->share.pairs_ms += spent;
        s->rule.gpu_ms += spent;
        const double ratio = rc ? 0.0 : gs_tune_sustain_ratio(prior_ms, cand_ms, plan.rounds);
        const char *name = v.route == GS_TUNE_CUBLAS ? "cublas" : s->name[v.route];
        gs_log_line("tune: %s: sustained check of %s (%.3fx the prior in its pairs): %.3fx the "
                    "prior in %d rounds of %d-call blocks (per call %.4f / %.4f / %.4f ms "
                    "against %.4f / %.4f / %.4f)%s%s",
                    s->shape, name, v.vs_prior, ratio, plan.rounds, plan.calls, cand_ms[0],
                    cand_ms[1], cand_ms[2], prior_ms[0], prior_ms[1], prior_ms[2],
                    rc ? "; failed: " : "", rc ? why : "");
        if (!rc && ratio >= lim->win_ratio) {
            decide_as(s, &v, NULL, ratio);
            return;
        }
        if (v.route == GS_TUNE_CUBLAS) { /* the rule has no state for cuBLAS to drop */
            keep_prior(s, "cublas did not hold its gain sustained");
            return;
        }
        s->unsustained[v.route] = 1;
    }
}

/* This process's progress on the signature, into the cache, so another
 * process (or this one's next run) resumes it. */
void gs_tsig_save_progress(tsig_t *s)
{
    const char *names[GS_TUNE_CANDS_MAX];
    for (int i = 0; i < s->rule.n_cand; ++i)
        names[i] = s->name[i];
    /* the share's credit travels with the progress: a sustained check
     * larger than one process earns is taken in a later one */
    s->rule.credit_ms = gs_tune_share_credit(&s->share, gs_cfg()->tune.share);
    s->rule.call_ms = gs_tune_share_call_ms(&s->share);
    char *text = malloc(PROGRESS_BYTES);
    char msg[600];
    if (text && !gs_tune_progress_format(&s->rule, names, text, PROGRESS_BYTES) &&
        gs_tune_progress_put(&s->key.cls, text, s->shape, msg, sizeof msg))
        gs_msg("tune: %s", msg);
    free(text);
    s->unsaved = 0;
}

/* The signature is this process's to tune: picks up where the last
 * process that tuned it stopped. */
static void resume(tsig_t *s, const gs_tune_owner_t *from)
{
    char *text = gs_tune_progress_get(&s->key.cls, NULL);
    if (!text)
        return;
    const char *names[GS_TUNE_CANDS_MAX];
    for (int i = 0; i < s->rule.n_cand; ++i)
        names[i] = s->name[i];
    const int n = gs_tune_progress_apply(&s->rule, names, text);
    free(text);
    if (n < 0) {
        gs_log_line("tune: %s: the cache's progress is malformed; tuned from the start",
                    s->shape);
        return;
    }
    for (int i = 0; i < s->rule.n_cand; ++i)
        s->needs_compare[i] = !s->rule.cand[i].checked;
    s->share.carried_ms = s->rule.credit_ms;
    s->share.carried_call_ms = s->rule.call_ms;
    gs_log_line("tune: %s: resumed (%d candidates, %d pairs, %.2f ms GPU so far%s%s, pid %lld)",
                s->shape, n, s->rule.pairs, s->rule.gpu_ms, from ? "; taken over from " : "",
                from ? from->host : "", from ? from->pid : 0LL);
}

/* Claims the signature for this process, or leaves it to the process that
 * holds it (rechecked every RECHECK_NS). Under lock. */
void gs_tsig_claim(tsig_t *s)
{
    gs_tune_owner_t holder;
    memset(&holder, 0, sizeof holder);
    const gs_claim_t c = gs_tune_claim(&s->key.cls, s->prior, s->shape, &holder);
    const sig_state_t was = s->state;
    if (c == GS_CLAIM_DECIDED) {
        s->state = SIG_DECIDED; /* another process decided it: dispatch finds it */
    } else if (c == GS_CLAIM_HELD) {
        s->state = SIG_WAITING;
        s->next_check = gs_tsig_now_ns() + RECHECK_NS;
        if (was != SIG_WAITING)
            gs_log_line("tune: %s: tuned by pid %lld on %s; the prior (%s) serves it until its "
                        "decision is in the cache", s->shape, holder.pid, holder.host, s->prior);
    } else {
        s->state = SIG_TUNING;
        resume(s, c == GS_CLAIM_TAKEN_OVER ? &holder : NULL);
    }
}

/* Reads the pairs that completed, in order. Needs no call: also at exit. */
