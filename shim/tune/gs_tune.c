/* The tuner's GPU side, its calls: start-up, the signatures, each call's
 * step and the state at exit; see gs_tune.h. The pairs are
 * gs_tune_pairs.c's, the decisions gs_tune_settle.c's (gs_tune_sig.h). */
#include "gs_tune.h"
#include "gs_capture.h"
#include "gs_class_map.h"
#include "gs_config.h"
#include "gs_dispatch.h"
#include "gs_facts.h"
#include "gs_hooks.h"
#include "gs_kernels.h"
#include "gs_log.h"
#include "gs_registry.h"
#include "gs_state.h"
#include "gs_tune_cache.h"
#include "gs_tune_sig.h"
#include "gs_verify.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    SIGS_MAX = 4096,     /* signatures tuned per process */
    PAIRS_PER_CALL = 4,  /* pairs one call carries */
    SAVE_EVERY = 16,     /* pairs collected between two progress lines in the cache */
};
/* At exit, pairs still on the GPU are waited for this long in all, so the
 * progress saved holds them. */
#define EXIT_WAIT_NS 1000000000LL

static void save_at_exit(void);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *sig_slots[SIGS_MAX * 2];
static gs_class_map_t sigs = {sig_slots, SIGS_MAX * 2, SIGS_MAX, 0};
double gs_tsig_spent_ms;
unsigned long long gs_tsig_n_decided, gs_tsig_n_won;
static unsigned long long served_tuned, served_total;
static __thread int busy;
static int said_budget, said_full, started;

int gs_tune_busy(void)
{
    return busy;
}

void gs_tune_count_served(int tuned)
{
    __atomic_add_fetch(&served_total, 1, __ATOMIC_RELAXED);
    if (tuned)
        __atomic_add_fetch(&served_tuned, 1, __ATOMIC_RELAXED);
}

/* ---- start: validator and cache ---- */

static void summary_at_exit(void)
{
    pthread_mutex_lock(&lock);
    gs_log_line("tune: %llu signatures decided (%llu replacing the prior), %.1f ms of GPU time "
                "spent tuning; %llu of %llu calls served by a tuned decision",
                gs_tsig_n_decided, gs_tsig_n_won, gs_tsig_spent_ms, served_tuned, served_total);
    pthread_mutex_unlock(&lock);
}

static void start_once(const gs_device_t *d)
{
    const gs_config_t *cfg = gs_cfg();
    char facts[256];
    gs_facts(d, ' ', facts, sizeof facts);
    char kernels[512];
    gs_routing_t r = gs_routing();
    /* the validator names the kernels that may serve here: the opt-in FP8
     * configurations only with GEMMSHIM_FP8_TILES=1, so a cache decided
     * without them is not taken for one with them (nor the other way round) */
    gs_routing_t serving = r;
    for (int i = 0; i < gs_family_count() && !r.fp8_tiles; ++i) {
        const gs_family_t *f = gs_family_at(i);
        for (int c = 0; c < f->n_configs; ++c) {
            const int cand = gs_candidate_of(f, c);
            if (cand >= 0 && gs_family_opt_in(f, c))
                serving.allowed &= ~(1ull << cand);
        }
    }
    gs_format_kernel_list(&serving, kernels, sizeof kernels);
    char validator[1024];
    snprintf(validator, sizeof validator,
             "%s kernels=%s workspace_mb=%zu pdl=%d knobs=%016llx pairs=%d lt_algos=%d", facts,
             kernels, cfg->workspace_cap >> 20, cfg->pdl,
             (unsigned long long)cfg->knob_key, cfg->tune.pairs, cfg->tune.lt_algos);
    if (cfg->tune.cache_path[0]) {
        char msg[1600];
        const int mode = r.tune == GS_TUNE_ONLINE ? GS_TUNE_CACHE_WRITE : GS_TUNE_CACHE_READONLY;
        const int rc = gs_tune_cache_open(cfg->tune.cache_path, validator, mode, msg, sizeof msg);
        if (msg[0])
            gs_msg("tune: %s", msg);
        if (!rc)
            gs_log_line("tune: cache %s: %zu decisions", cfg->tune.cache_path, gs_tuned_count());
    }
    if (r.tune == GS_TUNE_ONLINE && gs_hooks()->runs_kernels) {
        const gs_capture_mode_t m = gs_capture_relax();
        if (gs_tsig_pairs_start())
            gs_msg("tune: no pinned memory for comparisons; candidates cannot be checked, "
                   "nothing is tuned");
        gs_capture_restore(m);
        if (cfg->tune.cache_path[0])
            atexit(save_at_exit);
    }
    if (cfg->log_enabled)
        atexit(summary_at_exit);
}

void gs_tune_start(const gs_device_t *d)
{
    if (__atomic_load_n(&started, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&lock);
    if (!started) {
        start_once(d);
        __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
}

/* ---- signatures ---- */

/* For people, and unique enough to tell a log's signatures apart: the
 * compute type where it is not plain fp32 accumulation (an fp32 call with
 * and without TF32 is two signatures). */
static void shape_of(const gs_problem_t *p, char *buf, size_t size)
{
    const int out = p->c_type != p->a_type, plain = p->compute == GS_CT_F32;
    snprintf(buf, size,
             "%s %s%s%s %c%c m=%lld n=%lld k=%lld batch=%lld lda=%lld ldb=%lld ldc=%lld%s%s",
             gs_entry_name(p->entry, p->is_64), gs_dtype_name(p->a_type), out ? "->" : "",
             out ? gs_dtype_name(p->c_type) : "",
             p->trans_a ? 'T' : 'N', p->trans_b ? 'T' : 'N', (long long)p->m, (long long)p->n,
             (long long)p->k, (long long)p->batch, (long long)p->lda, (long long)p->ldb,
             (long long)p->ldc, plain ? "" : " compute=",
             plain ? "" : gs_compute_name((gs_compute_t)p->compute));
    gs_class_extras(&p->cls, buf, size);
}


/* Adds candidate (f, config) with its name; its index, or -1. */
static int add_candidate(tsig_t *s, const gs_family_t *f, int config, const gs_problem_t *p,
                         const gs_device_t *d)
{
    const int ci = gs_tune_add(&s->rule, gs_route_of(f) - GS_ROUTE_FAMILY0, config);
    if (ci >= 0) {
        char text[sizeof ((gs_tuned_t *)0)->config];
        snprintf(s->name[ci], sizeof s->name[ci], "%s/%s", f->name,
                 gs_family_config_text(f, p, d, config, text, sizeof text));
        s->needs_compare[ci] = 1;
    }
    return ci;
}

/* The candidates: the prior first (the incumbent, never left out of a
 * full list), then every other one that takes the call. */
static void add_candidates(tsig_t *s, const gs_problem_t *p, const gs_device_t *d)
{
    const gs_routing_t r = gs_routing();
    busy = 1; /* cuBLASLt's heuristic runs inside the lt family's can_implement */
    const gs_decision_t prior = gs_dispatch_prior(p, d, &r);
    gs_prior_text(&prior, p, d, s->prior, sizeof s->prior);
    if (prior.family)
        gs_tune_set_prior(&s->rule, add_candidate(s, prior.family, prior.config, p, d));
    for (int k = 0; k < gs_candidate_count(); ++k) {
        int config;
        const gs_family_t *f = gs_candidate(k, &config);
        if ((f == prior.family && config == prior.config) ||
            !gs_candidate_takes(&r, k, f, config, &p->cls, d))
            continue;
        add_candidate(s, f, config, p, d);
    }
    busy = 0;
}

/* Under lock: the signature's state, created with its candidates. */
static tsig_t *sig_of(const gs_problem_t *p, const gs_device_t *d, cudaStream_t stream)
{
    void **slot = gs_class_map_slot(&sigs, &p->cls, d->ordinal);
    if (!slot) {
        if (!said_full++)
            gs_msg("tune: %d signatures tuned; later ones keep the prior", SIGS_MAX);
        return NULL;
    }
    if (*slot)
        return *slot;
    tsig_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->key.cls = p->cls;
    s->key.ordinal = d->ordinal;
    s->owner = stream;
    s->tol = gs_verify_tolerance(p);
    gs_tune_init(&s->rule);
    shape_of(p, s->shape, sizeof s->shape);
    add_candidates(s, p, d);
    gs_class_map_put(&sigs, slot, s);
    return s;
}

/* One call's tuning work on a signature this process tunes. Under lock. */
static void tune_step(tsig_t *s, const gs_call_t *c, const gs_problem_t *p, const gs_device_t *d,
                      const gs_tune_limits_t *lim)
{
    const gs_config_t *cfg = gs_cfg();
    gs_tsig_collect(s, lim);
    gs_tune_share_call(&s->share);
    if (s->awaiting_check) {
        gs_tsig_settle(s, c, p, d, lim);
    } else if (gs_tsig_spent_ms >= cfg->tune.budget_ms && !s->n_pend) {
        if (!said_budget++)
            gs_msg("tune: GEMMSHIM_TUNE_BUDGET_MS (%.0f ms) spent; signatures still tuning are "
                   "decided on what they have", cfg->tune.budget_ms);
        gs_tsig_decide(s, NULL);
    } else if (gs_tune_done(&s->rule, lim)) {
        gs_tsig_settle(s, c, p, d, lim);
    } else if (gs_tsig_spent_ms < cfg->tune.budget_ms && !gs_tsig_scratch_ready(s, p, d, (cudaStream_t)p->stream)) {
        int carried = 0;
        for (int i = 0; i < PAIRS_PER_CALL; ++i) {
            if (!gs_tune_share_allows(&s->share, s->n_pend, cfg->tune.share))
                break;
            const int ci = gs_tune_next(&s->rule, lim);
            if (ci < 0 || !gs_tsig_enqueue_pair(s, ci, c, p, d, lim))
                break;
            ++carried;
        }
        gs_tune_call_done(&s->rule, carried);
    }
    if (s->state == SIG_TUNING && s->unsaved >= SAVE_EVERY && cfg->tune.cache_path[0])
        gs_tsig_save_progress(s);
}

/* A signature new to this process: nothing to tune, or claimed. Under lock. */
static void first_call(tsig_t *s)
{
    if (!s->rule.n_cand)
        gs_tsig_decide(s, "no candidate takes this call");
    else if (!gs_tsig_pairs_ready())
        gs_tsig_decide(s, "no pinned memory for comparisons");
    else
        gs_tsig_claim(s);
}

gs_tune_turn_t gs_tune_call(const gs_call_t *c, const gs_problem_t *p, const gs_device_t *d)
{
    cudaStream_t st = (cudaStream_t)p->stream;
    pthread_mutex_lock(&lock);
    tsig_t *s = sig_of(p, d, st);
    if (s && s->state == SIG_NEW)
        first_call(s);
    if (s && s->state == SIG_WAITING && gs_tsig_now_ns() >= s->next_check)
        gs_tsig_claim(s); /* its decision may be in; its claimer may be gone */
    if (!s || s->state != SIG_TUNING || s->owner != st) {
        /* not ours to time now: another stream of this process tunes it
         * (cuBLAS as called, as dispatch said), another process does, or
         * the prior or a decision serves it */
        const gs_tune_turn_t turn = !s                        ? GS_TUNE_NOT_HERE
                                    : s->state == SIG_TUNING  ? GS_TUNE_TIMING
                                    : s->state == SIG_WAITING ? GS_TUNE_ELSEWHERE
                                                              : GS_TUNE_NOT_HERE;
        pthread_mutex_unlock(&lock);
        return turn;
    }
    busy = 1;
    const gs_capture_mode_t mode = gs_capture_relax();
    const gs_tune_limits_t lim = gs_tune_default_limits_for(gs_cfg()->tune.pairs);
    tune_step(s, c, p, d, &lim);
    gs_capture_restore(mode);
    busy = 0;
    /* decided by its pairs, waiting for its sustained check: the prior
     * serves it, as while another process tunes it */
    const gs_tune_turn_t turn = s->state == SIG_TUNING && s->awaiting_check ? GS_TUNE_ELSEWHERE
                                                                           : GS_TUNE_TIMING;
    pthread_mutex_unlock(&lock);
    return turn;
}

/* At exit: the pairs still on the GPU are waited for (EXIT_WAIT_NS in all)
 * and every signature this process was tuning saves its progress, so the
 * next process resumes it without timing anything again. */
static void save_at_exit(void)
{
    pthread_mutex_lock(&lock);
    const long long deadline = gs_tsig_now_ns() + EXIT_WAIT_NS;
    const gs_tune_limits_t lim = gs_tune_default_limits_for(gs_cfg()->tune.pairs);
    for (size_t i = 0; i < sigs.cap; ++i) {
        tsig_t *s = sigs.slots[i];
        if (!s || s->state != SIG_TUNING)
            continue;
        gs_tsig_collect(s, &lim);
        while (s->n_pend && gs_tsig_now_ns() < deadline) {
            const struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            gs_tsig_collect(s, &lim);
        }
        if (s->unsaved || s->awaiting_check) /* its share's credit grew */
            gs_tsig_save_progress(s);
    }
    pthread_mutex_unlock(&lock);
}
