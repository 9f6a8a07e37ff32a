/* The tuner's GPU side; see gs_tune.h. */
#include "gs_tune.h"
#include "gs_as_called.h"
#include "gs_capture.h"
#include "gs_class_map.h"
#include "gs_config.h"
#include "gs_dispatch.h"
#include "gs_facts.h"
#include "gs_hooks.h"
#include "gs_kernels.h"
#include "gs_log.h"
#include "gs_lt.h"
#include "gs_real.h"
#include "gs_registry.h"
#include "gs_spin.h"
#include "gs_state.h"
#include "gs_tune_cache.h"
#include "gs_tune_rule.h"
#include "gs_tune_sustain.h"
#include "gs_verify.h"
#include "gs_workspace.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    SIGS_MAX = 4096,     /* signatures tuned per process */
    PEND_MAX = 16,       /* pairs in flight per signature */
    PAIRS_PER_CALL = 4,  /* pairs one call carries */
    SPIN_NS = 50000,     /* the GPU waits this long ahead of each pair, while the
                            host queues both sides (gs_spin.h) */
    /* A side of a timed pair is a run of back-to-back calls lasting about
     * RUN_TARGET_NS (at most RUN_MAX calls): one call between a flush and an
     * event pair adds the same fixed costs to both sides (the flush's dirty
     * lines written back under the first call's stores, the first wave's
     * ramp), which shrinks a short call's ratio toward 1 (TN 8448x9216x64:
     * 1.04 where back-to-back calls read 1.18). */
    RUN_TARGET_NS = 300000,
    RUN_MAX = 8,
    RUN_HOST_NS = 20000, /* the spin grows by this per extra call of a run and
                            side, so the host queues whole runs ahead of the GPU */
    CMP_SLOTS = 4096,    /* comparisons in flight, process-wide */
    SAVE_EVERY = 16,     /* pairs collected between two progress lines in the cache */
    NAME_MAX_BYTES = 232, /* a candidate's "family/configuration" */
    SUSTAIN_TRIES = 3,   /* challengers given a sustained check, best first */
    /* a progress line's fields: each candidate's name and up to
     * GS_TUNE_PAIRS_MAX samples of at most 12 characters */
    PROGRESS_BYTES = GS_TUNE_CANDS_MAX * (NAME_MAX_BYTES + 16 + 12 * GS_TUNE_PAIRS_MAX) + 64,
};
/* run_of: A and B below this share of a call's bytes (and within twice
 * L2) leave a run representative */
#define RUN_INPUT_SHARE 0.1
/* A signature another process tunes is looked at again (the cache's new
 * lines read, its claimer checked) at most this often. */
#define RECHECK_NS 200000000LL
/* At exit, pairs still on the GPU are waited for this long in all, so the
 * progress saved holds them. */
#define EXIT_WAIT_NS 1000000000LL

typedef enum sig_state {
    SIG_NEW = 0,  /* not claimed yet */
    SIG_TUNING,   /* this process tunes it */
    SIG_WAITING,  /* another process does: the prior serves it meanwhile */
    SIG_DECIDED,
} sig_state_t;

typedef struct pending {
    int cand;
    cudaEvent_t ev[6];   /* each side's start and end [0..3]; after the comparison's
                            copy [4]; the pair's start, ahead of copies, spin and
                            flushes [5]: its whole GPU cost, charged to the budgets */
    int first_is_cand;
    int warmup;          /* a candidate's first pair: compared, not timed (it may
                            load modules lazily, build plans, fill caches) */
    int cmp;             /* pinned comparison slot, -1 if none */
    int run;             /* calls per side: the times are divided by it */
} pending_t;

typedef struct tsig {
    gs_class_key_t key;  /* first: the signature table's key (gs_class_map.h) */
    cudaStream_t owner;  /* the one stream that tunes it */
    sig_state_t state;
    long long next_check; /* SIG_WAITING: when to look at the cache again (ns) */
    int unsaved;         /* pairs collected since the last progress line */
    int run;             /* calls per side of a timed pair; 0 until cuBLAS's time
                            is known (run_of) */
    gs_tune_share_t share; /* this process's pairs against its calls (GEMMSHIM_TUNE_SHARE) */
    gs_tune_sig_t rule;
    char prior[NAME_MAX_BYTES]; /* what the shim does untuned: "cublas" or family/config */
    char name[GS_TUNE_CANDS_MAX][NAME_MAX_BYTES]; /* each candidate's family/config */
    double tol;          /* the comparison's tolerance for this signature */
    unsigned char warm[GS_TUNE_CANDS_MAX]; /* the candidate ran in this process */
    unsigned char unsustained[GS_TUNE_CANDS_MAX]; /* won its pairs, lost the sustained check */
    int awaiting_check;  /* decided by its pairs, the sustained check not yet afforded
                            (GEMMSHIM_TUNE_SHARE): the prior serves it meanwhile */
    int needs_compare[GS_TUNE_CANDS_MAX];
    pending_t pend[PEND_MAX];
    int n_pend;
    char *scratch;       /* cudaMallocAsync on owner: two outputs, comparison sums,
                            then the L2 flush area */
    size_t c_bytes, flush_bytes;
    char shape[144];
} tsig_t;

static void save_at_exit(void);
static int scratch_ready(tsig_t *s, const gs_problem_t *p, const gs_device_t *d, cudaStream_t st);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *sig_slots[SIGS_MAX * 2];
static gs_class_map_t sigs = {sig_slots, SIGS_MAX * 2, SIGS_MAX, 0};
static double spent_ms;
static unsigned long long n_decided, n_won, served_tuned, served_total;
static double (*cmp_sums)[3];  /* pinned */
static int cmp_busy[CMP_SLOTS];
static cudaEvent_t event_pool[PEND_MAX * 64];
static int n_events;
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
                n_decided, n_won, spent_ms, served_tuned, served_total);
    pthread_mutex_unlock(&lock);
}

static void start_once(const gs_device_t *d)
{
    const gs_config_t *cfg = gs_cfg();
    char facts[256];
    gs_facts(d, ' ', facts, sizeof facts);
    char kernels[512];
    gs_routing_t r = gs_routing();
    gs_format_kernel_list(&r, kernels, sizeof kernels);
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
        if (cudaHostAlloc((void **)&cmp_sums, CMP_SLOTS * sizeof *cmp_sums,
                          cudaHostAllocPortable) != cudaSuccess) {
            cudaGetLastError();
            cmp_sums = NULL;
            gs_msg("tune: no pinned memory for comparisons; candidates cannot be checked, "
                   "nothing is tuned");
        }
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
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
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

/* ---- events ---- */

static cudaEvent_t event_get(void)
{
    if (n_events)
        return event_pool[--n_events];
    cudaEvent_t e = NULL;
    if (cudaEventCreate(&e) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return e;
}

static void event_put(cudaEvent_t e)
{
    if (!e)
        return;
    if (n_events < (int)(sizeof event_pool / sizeof event_pool[0]))
        event_pool[n_events++] = e;
    else
        cudaEventDestroy(e);
}

static void pending_release(pending_t *pd)
{
    for (size_t i = 0; i < sizeof pd->ev / sizeof pd->ev[0]; ++i)
        event_put(pd->ev[i]), pd->ev[i] = NULL;
    if (pd->cmp >= 0)
        cmp_busy[pd->cmp] = 0;
    pd->cmp = -1;
}

static int cmp_slot(void)
{
    if (!cmp_sums)
        return -1;
    for (int i = 0; i < CMP_SLOTS; ++i)
        if (!cmp_busy[i]) {
            cmp_busy[i] = 1;
            return i;
        }
    return -1;
}

/* ---- pairs ---- */


/* The two outputs keep C's offset within 256 bytes: the same alignment. */
static char *out_of(const tsig_t *s, int which, const void *C)
{
    const uintptr_t off = (uintptr_t)C & 255u;
    uintptr_t base = ((uintptr_t)s->scratch + 255u) & ~(uintptr_t)255u;
    if (which)
        base = (base + off + s->c_bytes + 255u) & ~(uintptr_t)255u;
    return (char *)(base + off);
}

static double *sums_of(const tsig_t *s)
{
    const uintptr_t end = (uintptr_t)out_of(s, 1, (const void *)(uintptr_t)255) + s->c_bytes;
    return (double *)((end + 255u) & ~(uintptr_t)255u);
}

static size_t scratch_bytes(size_t c_bytes, size_t flush_bytes)
{
    return 4 * 256 + 2 * (c_bytes + 512) + PEND_MAX * 3 * sizeof(double) + flush_bytes;
}

/* Written before each side of a pair: twice the L2, so each side reads its
 * operands from memory (gs_tune_rule.h). */
static char *flush_of(const tsig_t *s)
{
    const uintptr_t end = (uintptr_t)(sums_of(s) + PEND_MAX * 3);
    return (char *)((end + 255u) & ~(uintptr_t)255u);
}

static size_t flush_size(const gs_device_t *d)
{
    const size_t l2 = d->l2_bytes ? d->l2_bytes : (size_t)64 << 20;
    return 2 * l2;
}

/* A candidate's run on the scratch output: 0 or an error. */
static int run_candidate(const tsig_t *s, const gs_tune_cand_t *cand, const gs_problem_t *p,
                         const gs_device_t *d, void *out)
{
    const gs_family_t *f = gs_family_at(cand->family);
    gs_problem_t q = *p;
    q.C = out;
    q.workspace = NULL;
    q.workspace_size = 0;
    gs_plan_t plan = {.family = f, .config = cand->config};
    f->plan(&q, d, &plan);
    void *hold = NULL;
    if (plan.workspace_bytes) {
        char why[112];
        if (gs_workspace_get(d->ordinal, s->owner, plan.workspace_bytes, &q.workspace,
                             &q.workspace_size, &hold, why, sizeof why))
            return GS_RUN_NO_WORKSPACE;
    }
    const int rc = f->run(&plan, &q, d);
    gs_workspace_release(hold);
    return rc;
}

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
    ++n_decided;
    n_won += !v->kept_prior;
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

/* The check's plan for this signature: calls == 0 where none applies. */
static gs_sustain_plan_t sustain_plan_of(const tsig_t *s)
{
    return gs_tune_sustain_plan(s->share.call_ms, gs_tune_intensity(&s->key.cls),
                                gs_cfg()->tune.sustain_ms);
}

/* Decides by the rule (why == NULL) or keeps the prior (why says why),
 * and writes the decision to the cache. A challenger that would need a
 * sustained check it has not had does not replace the prior here. */
static void decide(tsig_t *s, const char *why)
{
    const gs_tune_limits_t lim = gs_tune_default_limits_for(gs_cfg()->tune.pairs);
    const gs_tune_verdict_t keep = {s->rule.prior, 1, 0, 1.0, 1.0, 1.0, 1.0};
    gs_tune_verdict_t v = why ? keep : verdict_of(s, &lim);
    if (!why && !v.kept_prior && !v.prior_unsafe && sustain_plan_of(s).calls) {
        v = keep;
        why = "the tuning budget ran out before the winner's sustained check: the prior kept";
    }
    decide_as(s, &v, why, 0.0);
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
    void *out = out_of(x->s, challenger ? 0 : 1, x->p->C);
    if (who == GS_TUNE_CUBLAS)
        return gs_cublas_as_called(x->c, out) != CUBLAS_STATUS_SUCCESS;
    return run_candidate(x->s, &x->s->rule.cand[who], x->p, x->d, out);
}

/* Every live pair is in: decides, giving each challenger that won its
 * pairs on a long call (best first, SUSTAIN_TRIES of them) the sustained
 * check against the prior. Waits, the prior serving, where the share does
 * not allow the check's cost yet. Under lock, on the owner's stream. */
static void settle(tsig_t *s, const gs_call_t *c, const gs_problem_t *p, const gs_device_t *d,
                   const gs_tune_limits_t *lim)
{
    const gs_config_t *cfg = gs_cfg();
    const gs_sustain_plan_t plan = sustain_plan_of(s);
    for (int tries = 0;; ++tries) {
        gs_tune_verdict_t v = verdict_of(s, lim);
        if (v.kept_prior || v.prior_unsafe || !plan.calls) {
            decide_as(s, &v, tries ? "no challenger held its gain sustained" : NULL, 0.0);
            return;
        }
        if (tries == SUSTAIN_TRIES || spent_ms + plan.cost_ms > cfg->tune.budget_ms) {
            const gs_tune_verdict_t keep = {s->rule.prior, 1, 0, 1.0, 1.0, 1.0, 1.0};
            decide_as(s, &keep,
                      tries == SUSTAIN_TRIES ? "no challenger held its gain sustained"
                                             : "no tuning budget left for the sustained check",
                      0.0);
            return;
        }
        if (!gs_tune_share_allows_ms(&s->share, plan.cost_ms, cfg->tune.share) ||
            scratch_ready(s, p, d, (cudaStream_t)p->stream)) {
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
        double total = 0.0;
        for (int r = 0; r < plan.rounds; ++r)
            total += (prior_ms[r] + cand_ms[r]) * plan.calls;
        spent_ms += rc ? plan.cost_ms : total;
        s->rule.gpu_ms += rc ? plan.cost_ms : total;
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
            const gs_tune_verdict_t keep = {s->rule.prior, 1, 0, 1.0, 1.0, 1.0, 1.0};
            decide_as(s, &keep, "cublas did not hold its gain sustained", 0.0);
            return;
        }
        s->unsustained[v.route] = 1;
    }
}

/* This process's progress on the signature, into the cache, so another
 * process (or this one's next run) resumes it. */
static void save_progress(tsig_t *s)
{
    const char *names[GS_TUNE_CANDS_MAX];
    for (int i = 0; i < s->rule.n_cand; ++i)
        names[i] = s->name[i];
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
    gs_log_line("tune: %s: resumed (%d candidates, %d pairs, %.2f ms GPU so far%s%s, pid %lld)",
                s->shape, n, s->rule.pairs, s->rule.gpu_ms, from ? "; taken over from " : "",
                from ? from->host : "", from ? from->pid : 0LL);
}

/* Claims the signature for this process, or leaves it to the process that
 * holds it (rechecked every RECHECK_NS). Under lock. */
static void claim(tsig_t *s)
{
    gs_tune_owner_t holder;
    memset(&holder, 0, sizeof holder);
    const gs_claim_t c = gs_tune_claim(&s->key.cls, s->prior, s->shape, &holder);
    const sig_state_t was = s->state;
    if (c == GS_CLAIM_DECIDED) {
        s->state = SIG_DECIDED; /* another process decided it: dispatch finds it */
    } else if (c == GS_CLAIM_HELD) {
        s->state = SIG_WAITING;
        s->next_check = now_ns() + RECHECK_NS;
        if (was != SIG_WAITING)
            gs_log_line("tune: %s: tuned by pid %lld on %s; the prior (%s) serves it until its "
                        "decision is in the cache", s->shape, holder.pid, holder.host, s->prior);
    } else {
        s->state = SIG_TUNING;
        resume(s, c == GS_CLAIM_TAKEN_OVER ? &holder : NULL);
    }
}

/* Reads the pairs that completed, in order. Needs no call: also at exit. */
/* Calls per side of a timed pair, from cuBLAS's time for one call (ms):
 * 1 where a run would not read what the application's calls read. The
 * calls of a run share their operands, so a run's later calls find A and B
 * in L2 where they fit there, while the application's calls, between other
 * kernels, read them from memory: a run is taken only where A and B are
 * too large for L2 or a small part of the call's traffic (a short-k call
 * whose C is most of its bytes). */
static int run_of(const tsig_t *s, double t_cub_ms)
{
    const gs_class_t *c = &s->key.cls;
    const double ies = (double)gs_dtype_size((gs_dtype_t)c->a_type),
                 oes = (double)gs_dtype_size((gs_dtype_t)c->c_type);
    const double b = (double)c->batch, in = b * ies * ((double)c->m * c->k + (double)c->k * c->n),
                 out = b * oes * (double)c->m * c->n;
    const double l2 = (double)s->flush_bytes / 2; /* flush_size: twice L2 */
    if (in <= 2.0 * l2 && in > RUN_INPUT_SHARE * (in + out))
        return 1;
    const double n = ceil(RUN_TARGET_NS * 1e-6 / t_cub_ms);
    return n < 1.0 ? 1 : n > RUN_MAX ? RUN_MAX : (int)n;
}

static void collect(tsig_t *s, const gs_tune_limits_t *lim)
{
    int done = 0;
    while (done < s->n_pend) {
        pending_t *pd = &s->pend[done];
        cudaEvent_t last = pd->cmp >= 0 ? pd->ev[4] : pd->ev[3];
        const cudaError_t q = cudaEventQuery(last);
        if (q == cudaErrorNotReady)
            break;
        float t0 = 0.f, t1 = 0.f;
        if (q != cudaSuccess || cudaEventElapsedTime(&t0, pd->ev[0], pd->ev[1]) != cudaSuccess ||
            cudaEventElapsedTime(&t1, pd->ev[2], pd->ev[3]) != cudaSuccess) {
            cudaGetLastError();
            t0 = t1 = 0.f;
        }
        /* the pair's whole GPU time (copies, spin, flushes too), for the budgets */
        float whole = 0.f;
        if (q != cudaSuccess || cudaEventElapsedTime(&whole, pd->ev[5], pd->ev[3]) != cudaSuccess) {
            cudaGetLastError();
            whole = 0.f;
        }
        const double extra = whole > t0 + t1 ? whole - (t0 + t1) : 0.0;
        const double sides_ms = (double)t0 + t1;
        /* per call: each side was a run of pd->run calls */
        const double t_cand = (pd->first_is_cand ? t0 : t1) / pd->run,
                     t_cub = (pd->first_is_cand ? t1 : t0) / pd->run;
        if (!s->run && t_cub > 0.0)
            s->run = run_of(s, t_cub);
        gs_tune_cand_t *c = &s->rule.cand[pd->cand];
        if (pd->cmp >= 0 && q == cudaSuccess) {
            const double *sums = cmp_sums[pd->cmp];
            const double rel = gs_verify_relative(sums);
            if (sums[2] > 0.0 || !isfinite(rel)) {
                s->needs_compare[pd->cand] = 1; /* inconclusive: compare again */
            } else if (rel > s->tol) {
                c->state = GS_CAND_MISMATCH;
                gs_log_line("tune: %s: candidate %s dropped: relative difference to cuBLAS "
                            "%.3g (tolerance %.3g)",
                            s->shape, s->name[pd->cand], rel, s->tol);
            } else {
                c->checked = 1;
            }
        }
        if (pd->warmup) { /* its times are dropped, its cost counted */
            gs_tune_add_pair(&s->rule, pd->cand, 0.0, 0.0, 1, lim);
            s->rule.gpu_ms += sides_ms;
        } else {
            gs_tune_add_pair(&s->rule, pd->cand, t_cub, t_cand, pd->first_is_cand, lim);
            s->rule.gpu_ms += sides_ms - (t_cand + t_cub); /* the runs' other calls */
        }
        s->rule.gpu_ms += extra;
        spent_ms += sides_ms + extra;
        gs_tune_share_pair(&s->share, sides_ms + extra, t_cub);
        pending_release(pd);
        ++done;
    }
    if (done) {
        memmove(s->pend, s->pend + done, (size_t)(s->n_pend - done) * sizeof *s->pend);
        s->n_pend -= done;
        s->unsaved += done;
    }
}

/* One pair on the owner stream: 1 (enqueued; also a candidate that failed
 * to run once its work was on the GPU), or 0 (no room: nothing was
 * enqueued, nothing is charged, the rotation stays). */
static int enqueue_pair(tsig_t *s, int ci, const gs_call_t *c, const gs_problem_t *p,
                        const gs_device_t *d, const gs_tune_limits_t *lim)
{
    if (s->n_pend >= PEND_MAX)
        return 0;
    pending_t *pd = &s->pend[s->n_pend];
    memset(pd, 0, sizeof *pd);
    pd->cand = ci;
    pd->cmp = -1;
    const int compare = s->needs_compare[ci];
    pd->warmup = compare && !s->rule.cand[ci].checked;
    pd->first_is_cand = pd->warmup ? 1 : gs_tune_order(&s->rule, ci);
    /* a compared pair is one call a side: with a beta that reads C, a run
     * would feed each call's C into the next */
    pd->run = compare || !s->run ? 1 : s->run;
    for (int i = 0; i < 6; ++i)
        if ((i != 4 || compare) && !(pd->ev[i] = event_get())) {
            pending_release(pd);
            return 0;
        }
    if (compare && (pd->cmp = cmp_slot()) < 0) {
        pending_release(pd);
        return 0;
    }
    gs_tune_enqueued(&s->rule, ci, pd->warmup ? -1 : pd->first_is_cand);
    cudaStream_t st = s->owner;
    char *cand_out = out_of(s, 0, p->C), *ref_out = out_of(s, 1, p->C);
    cudaEventRecord(pd->ev[5], st);
    /* A candidate resumed from another process's progress runs once
     * untimed before its first pair here: its module loads lazily at its
     * first launch, on the host, while the pair's events would wait. */
    int err = pd->warmup || s->warm[ci] ? 0 : run_candidate(s, &s->rule.cand[ci], p, d, cand_out);
    s->warm[ci] = 1;
    if (s->key.cls.beta_kind != GS_BETA_ZERO) { /* both start from the caller's C */
        cudaMemcpyAsync(cand_out, p->C, s->c_bytes, cudaMemcpyDeviceToDevice, st);
        cudaMemcpyAsync(ref_out, p->C, s->c_bytes, cudaMemcpyDeviceToDevice, st);
    }
    /* L2 flushed before each side, so neither finds the other's operands
     * there; the spin (once, ahead of both) lets the host queue the pair. */
    if (!err)
        err = gs_spin_launch(st, (unsigned)(SPIN_NS + (pd->run - 1) * 2 * RUN_HOST_NS));
    int copying = 0;
    for (int half = 0; half < 2 && !err; ++half) {
        const int cand_now = (half == 0) == pd->first_is_cand;
        err = cudaMemsetAsync(flush_of(s), (s->rule.pairs + half) & 0xff, s->flush_bytes, st);
        if (!err)
            err = cudaEventRecord(pd->ev[2 * half], st);
        for (int r = 0; r < pd->run && !err; ++r)
            err = cand_now ? run_candidate(s, &s->rule.cand[ci], p, d, cand_out)
                           : (gs_cublas_as_called(c, ref_out) != CUBLAS_STATUS_SUCCESS);
        if (!err)
            err = cudaEventRecord(pd->ev[2 * half + 1], st);
    }
    if (!err && compare) {
        gs_problem_t q = *p;
        double *dsums = sums_of(s) + 3 * (s->n_pend % PEND_MAX);
        copying = 1;
        err = gs_compare_launch(&q, cand_out, ref_out, dsums) ||
              cudaMemcpyAsync(cmp_sums[pd->cmp], dsums, 3 * sizeof(double),
                              cudaMemcpyDeviceToHost, st) ||
              cudaEventRecord(pd->ev[4], st);
        if (!err)
            s->needs_compare[ci] = 0;
    }
    if (err) {
        const cudaError_t last = cudaGetLastError();
        gs_log_line("tune: %s: candidate %s failed to run (error %d, %s); dropped", s->shape,
                    s->name[ci], err, cudaGetErrorName(last));
        s->rule.cand[ci].state = GS_CAND_FAILED;
        gs_tune_add_pair(&s->rule, ci, 0.0, 0.0, 1, lim); /* charged, never timed */
        /* what was enqueued still runs; its events are never read. A copy
         * into the pinned comparison slot may be in flight: the slot stays
         * taken (never reused while it can still be written). */
        if (copying)
            pd->cmp = -1;
        pending_release(pd);
        return 1;
    }
    ++s->n_pend;
    return 1;
}

/* Scratch for the signature's pairs, once: 0, or -1 (decided: forwarded). */
static int scratch_ready(tsig_t *s, const gs_problem_t *p, const gs_device_t *d, cudaStream_t st)
{
    if (s->scratch)
        return 0;
    const gs_config_t *cfg = gs_cfg();
    s->c_bytes = gs_c_span_bytes(p);
    s->flush_bytes = flush_size(d);
    const size_t bytes = scratch_bytes(s->c_bytes, s->flush_bytes);
    void *ptr = NULL;
    if (bytes > cfg->tune.scratch_cap || gs_hooks()->alloc_async(&ptr, bytes, st) != cudaSuccess) {
        cudaGetLastError();
        decide(s, bytes > cfg->tune.scratch_cap
                      ? "scratch over GEMMSHIM_TUNE_SCRATCH_MB: the prior kept"
                      : "scratch could not be allocated: the prior kept");
        return -1;
    }
    s->scratch = ptr;
    return 0;
}

/* One call's tuning work on a signature this process tunes. Under lock. */
static void tune_step(tsig_t *s, const gs_call_t *c, const gs_problem_t *p, const gs_device_t *d,
                      const gs_tune_limits_t *lim)
{
    const gs_config_t *cfg = gs_cfg();
    collect(s, lim);
    gs_tune_share_call(&s->share);
    if (s->awaiting_check) {
        settle(s, c, p, d, lim);
    } else if (spent_ms >= cfg->tune.budget_ms && !s->n_pend) {
        if (!said_budget++)
            gs_msg("tune: GEMMSHIM_TUNE_BUDGET_MS (%.0f ms) spent; signatures still tuning are "
                   "decided on what they have", cfg->tune.budget_ms);
        decide(s, NULL);
    } else if (gs_tune_done(&s->rule, lim)) {
        settle(s, c, p, d, lim);
    } else if (spent_ms < cfg->tune.budget_ms && !scratch_ready(s, p, d, (cudaStream_t)p->stream)) {
        int carried = 0;
        for (int i = 0; i < PAIRS_PER_CALL; ++i) {
            if (!gs_tune_share_allows(&s->share, s->n_pend, cfg->tune.share))
                break;
            const int ci = gs_tune_next(&s->rule, lim);
            if (ci < 0 || !enqueue_pair(s, ci, c, p, d, lim))
                break;
            ++carried;
        }
        gs_tune_call_done(&s->rule, carried);
    }
    if (s->state == SIG_TUNING && s->unsaved >= SAVE_EVERY && cfg->tune.cache_path[0])
        save_progress(s);
}

/* A signature new to this process: nothing to tune, or claimed. Under lock. */
static void first_call(tsig_t *s)
{
    if (!s->rule.n_cand)
        decide(s, "no candidate takes this call");
    else if (!cmp_sums)
        decide(s, "no pinned memory for comparisons");
    else
        claim(s);
}

gs_tune_turn_t gs_tune_call(const gs_call_t *c, const gs_problem_t *p, const gs_device_t *d)
{
    cudaStream_t st = (cudaStream_t)p->stream;
    pthread_mutex_lock(&lock);
    tsig_t *s = sig_of(p, d, st);
    if (s && s->state == SIG_NEW)
        first_call(s);
    if (s && s->state == SIG_WAITING && now_ns() >= s->next_check)
        claim(s); /* its decision may be in; its claimer may be gone */
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
    const long long deadline = now_ns() + EXIT_WAIT_NS;
    const gs_tune_limits_t lim = gs_tune_default_limits_for(gs_cfg()->tune.pairs);
    for (size_t i = 0; i < sigs.cap; ++i) {
        tsig_t *s = sigs.slots[i];
        if (!s || s->state != SIG_TUNING)
            continue;
        collect(s, &lim);
        while (s->n_pend && now_ns() < deadline) {
            const struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            collect(s, &lim);
        }
        if (s->unsaved)
            save_progress(s);
    }
    pthread_mutex_unlock(&lock);
}
