/* The sequence phase of offline tuning; see gs_replay_seq.h. */
#define _GNU_SOURCE
#include "gs_replay_seq.h"
#include "gs_class_hex.h"
#include "gs_replay_cache.h"
#include "gs_seq_graph.h"
#include "gs_seq_plan.h"
#include "gs_seq_settle.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Searches of a sequence still slower than its prior after its classes
 * were settled: each measures the classes left against the new state. */
enum { PASSES_MAX = 3 };

/* A block of replays takes about this long: long enough that a graph's
 * launch and the events are noise, short enough for many rounds. */
#define BLOCK_MS 5.0

/* The variants of a comparison: the sequence with the decisions as they
 * stand (the classes settled back to their prior held), with every
 * signature at its prior, or as they stand with one more class held. */
enum { V_STANDING = -1, V_PRIOR = -2 };

typedef struct trial {   /* a class on trial: what it did in each sequence measured */
    size_t *k;           /* plan sequences */
    gs_seq_ctx_t *ctx;
    size_t n, cap;
} trial_t;

typedef struct phase {
    const gs_replay_sigs_t *s;
    const gs_replay_args_t *args;
    gs_replay_gpu_t *g;
    const unsigned char *can;       /* per signature: its call rebuilds */
    const gs_replay_seq_opts_t *o;
    volatile sig_atomic_t *stop;
    int (*hold)(const char *, int);
    gs_seq_plan_t plan;
    gs_tuned_t *dec;                /* per signature: its decision, where have[i] */
    unsigned char *have, *changed, *reverted, *suspect;
    trial_t *trial;                 /* per signature */
    unsigned char *faster, *slower; /* per plan sequence: clearly, against its prior */
    double *ratio, *loss_ms;        /* per plan sequence, at its last comparison: its speed
                                       tuned over its prior, and what it loses over the
                                       recording's replays where it is slower */
    size_t budget;                  /* device memory for one sequence's operands */
    struct timespec t0;
    int failed, out_of_time;
} phase_t;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* 1 when the phase must stop: a signal, or its time is spent (said once). */
static int must_stop(phase_t *ph)
{
    if (*ph->stop)
        return 1;
    if (!ph->out_of_time && seconds_since(&ph->t0) > ph->o->seconds) {
        ph->out_of_time = 1;
        fprintf(stderr, "%s: sequences: the phase's time (%.0f s) is spent: what is not settled "
                        "yet keeps its per-call decision\n", ph->o->who, ph->o->seconds);
    }
    return ph->out_of_time;
}

static void seq_name(const gs_seq_plan_seq_t *q, char *buf, size_t size)
{
    snprintf(buf, size, "sequence %016llx (%zu GEMMs, %llu captures)", q->seq->id, q->seq->n,
             q->seq->captures);
}

/* ---- the cache's decisions ---- */

/* The replay's own reader and writer of the cache (dispatch/gs_tune_cache.c,
 * linked into the replay; the shim preloaded has its own), opened with the
 * file's validator: each decision, and which replace their prior. */
static int load_decisions(phase_t *ph)
{
    char msg[1024] = "";
    if (gs_replay_cache_open_own(ph->o->cache, msg, sizeof msg)) {
        fprintf(stderr, "%s: sequences: %s\n", ph->o->who, msg);
        return -1;
    }
    for (size_t i = 0; i < ph->s->n; ++i) {
        if (!ph->s->sig[i].tunable || !gs_tuned_find(&ph->s->sig[i].cls, &ph->dec[i]))
            continue;
        ph->have[i] = 1;
        ph->changed[i] = gs_replay_verdict_of(&ph->dec[i]) == GS_REPLAY_REPLACED;
    }
    return 0;
}

/* ---- holds and graphs ---- */

static int hold_class(phase_t *ph, size_t i)
{
    char hex[GS_CLASS_HEX_LEN + 1];
    gs_class_hex(&ph->s->sig[i].cls, hex);
    return ph->hold(hex, 1);
}

/* The shim's holds for variant v: none but the classes settled back to
 * their prior; every signature; or those and class v. 0, or -1. */
static int set_holds(phase_t *ph, long v)
{
    int rc = ph->hold(NULL, 0);
    if (v == V_PRIOR)
        return rc || ph->hold(NULL, 1) ? -1 : 0;
    for (size_t i = 0; !rc && i < ph->s->n; ++i)
        if (ph->reverted[i])
            rc = hold_class(ph, i);
    if (!rc && v >= 0)
        rc = hold_class(ph, (size_t)v);
    return rc ? -1 : 0;
}

/* Plan sequence k rebuilt, a graph captured per variant (var[nv]) and
 * timed: ms[v * rounds + r]. 0, or -1 (said, counted as failed). */
static int measure(phase_t *ph, size_t k, const long *var, size_t nv, double *ms)
{
    const gs_seq_plan_seq_t *q = &ph->plan.s[k];
    char why[512] = "", name[96];
    seq_name(q, name, sizeof name);
    gs_seq_graph_t sg;
    cudaGraphExec_t *ex = calloc(nv, sizeof *ex);
    int rc = -1;
    if (!ex) {
        snprintf(why, sizeof why, "out of memory");
    } else if (!gs_seq_graph_open(&sg, ph->g, q->pos, q->seq->n, ph->args, ph->budget, why,
                                  sizeof why)) {
        rc = 0;
        for (size_t v = 0; !rc && v < nv; ++v) {
            if (set_holds(ph, var[v])) {
                snprintf(why, sizeof why, "gemmshim_hold_prior failed");
                rc = -1;
            } else if (ph->g->simulated) { /* built, neither captured nor timed */
                rc = gs_seq_graph_issue(&sg, why, sizeof why);
            } else {
                rc = gs_seq_graph_capture(&sg, &ex[v], why, sizeof why);
            }
        }
        ph->hold(NULL, 0);
        if (!rc && !ph->g->simulated)
            rc = gs_seq_graph_time(ph->g, ex, nv, ph->o->rounds, BLOCK_MS, ms, why, sizeof why);
        for (size_t v = 0; v < nv; ++v)
            if (ex[v])
                cudaGraphExecDestroy(ex[v]);
        gs_seq_graph_close(&sg);
    }
    free(ex);
    if (rc) {
        fprintf(stderr, "%s: %s: not measured: %s\n", ph->o->who, name, why);
        ph->failed = 1;
    }
    return rc;
}

/* ---- the comparisons ---- */

/* Every timed sequence against its prior: faster[k] where the decisions
 * as they stand make it clearly faster. Returns how many were measured. */
static size_t against_prior(phase_t *ph, const unsigned char *which, const char *when)
{
    const size_t R = ph->o->rounds;
    double *ms = malloc(2 * R * sizeof *ms);
    size_t measured = 0;
    for (size_t k = 0; ms && k < ph->plan.n && !must_stop(ph); ++k) {
        const gs_seq_plan_seq_t *q = &ph->plan.s[k];
        const long var[2] = {V_STANDING, V_PRIOR};
        if (q->skip || !which[k] || measure(ph, k, var, 2, ms))
            continue;
        ++measured;
        char name[96];
        seq_name(q, name, sizeof name);
        if (ph->g->simulated) {
            fprintf(stderr, "%s: %s: built with its %zu changed classes as decided and at "
                            "their prior (simulated device: not timed)\n",
                    ph->o->who, name, q->n_changed);
            continue;
        }
        /* base: as they stand; variant: the prior; ratio > 1: faster tuned */
        const gs_seq_cmp_t c = gs_seq_compare(ms, ms + R, R);
        ph->faster[k] = c.ratio > 1.0 && gs_seq_clear(&c);
        ph->slower[k] = c.ratio < 1.0 && gs_seq_clear(&c);
        ph->ratio[k] = c.ratio;
        ph->loss_ms[k] = ph->slower[k] ? (c.base_ms - c.var_ms) * (double)q->seq->captures *
                                             ph->o->replays
                                       : 0.0;
        fprintf(stderr,
                "%s: %s %s: %.1f us a replay, the prior's %.1f us: %.3fx (noise %.1f%%)%s\n",
                ph->o->who, name, when, 1e3 * c.base_ms, 1e3 * c.var_ms, c.ratio,
                100.0 * c.noise,
                ph->faster[k] ? ": faster" : ph->slower[k] ? ": SLOWER" : ": a tie");
    }
    free(ms);
    return measured;
}

static int trial_put(trial_t *t, size_t k, const gs_seq_ctx_t *c)
{
    for (size_t j = 0; j < t->n; ++j)
        if (t->k[j] == k) { /* measured again (a later pass): the latest holds */
            t->ctx[j] = *c;
            return 0;
        }
    if (t->n == t->cap) {
        const size_t cap = t->cap ? 2 * t->cap : 4;
        size_t *kk = realloc(t->k, cap * sizeof *kk);
        if (kk)
            t->k = kk;
        gs_seq_ctx_t *cc = kk ? realloc(t->ctx, cap * sizeof *cc) : NULL;
        if (!cc)
            return -1;
        t->ctx = cc;
        t->cap = cap;
    }
    t->k[t->n] = k;
    t->ctx[t->n++] = *c;
    return 0;
}

/* The suspects of sequence k, each reverted alone against the decisions
 * as they stand: their contexts there. */
static void revert_each(phase_t *ph, size_t k)
{
    const gs_seq_plan_seq_t *q = &ph->plan.s[k];
    const size_t R = ph->o->rounds;
    long *var = malloc((q->n_changed + 1) * sizeof *var);
    size_t nv = 0;
    if (!var)
        return;
    var[nv++] = V_STANDING;
    for (size_t c = 0; c < q->n_changed; ++c)
        if (ph->suspect[q->changed[c]] && !ph->reverted[q->changed[c]])
            var[nv++] = (long)q->changed[c];
    double *ms = malloc(nv * R * sizeof *ms);
    if (nv > 1 && ms && !measure(ph, k, var, nv, ms) && !ph->g->simulated) {
        for (size_t v = 1; v < nv; ++v) {
            const gs_seq_ctx_t ctx = {(double)q->seq->captures * ph->o->replays,
                                      gs_seq_compare(ms, ms + v * R, R)};
            if (trial_put(&ph->trial[var[v]], k, &ctx))
                ph->failed = 1;
        }
    }
    free(ms);
    free(var);
}

/* ---- settling ---- */

/* Rewrites class i's decision in the cache: its own route with seq=, or
 * (back) its prior, with seq= and was=. */
static void write_settled(phase_t *ph, size_t i, const gs_seq_verdict_t *v)
{
    const gs_tuned_t *t = &ph->dec[i];
    gs_tuned_t w = *t;
    w.was[0] = '\0';
    if (!v->keep)
        gs_replay_as_prior(t, &w);
    w.seq_gain = v->seq_gain;
    char msg[600];
    if (gs_tuned_put(&ph->s->sig[i].cls, &w, ph->s->sig[i].shape, msg, sizeof msg)) {
        fprintf(stderr, "%s: sequences: %s\n", ph->o->who, msg);
        ph->failed = 1;
    }
}

/* The recorded GPU time of class i's calls outside graphs. */
static double eager_ms_of(const phase_t *ph, size_t i)
{
    const gs_replay_sig_t *e = &ph->s->sig[i];
    const unsigned long long eager = e->calls > e->captured ? e->calls - e->captured : 0;
    return e->timed ? e->ms / (double)e->timed * (double)eager : 0.0;
}

static void settle(phase_t *ph, size_t i)
{
    const gs_replay_sig_t *e = &ph->s->sig[i];
    const trial_t *t = &ph->trial[i];
    const unsigned long long eager = e->calls > e->captured ? e->calls - e->captured : 0;
    const gs_seq_class_t c = {eager_ms_of(ph, i), ph->dec[i].vs_prior, t->ctx, t->n};
    /* settled on every context or not at all: one measured in some of its
     * sequences only (the time ran out, a sequence failed) stays as decided */
    size_t contexts = 0;
    for (size_t k = 0; k < ph->plan.n; ++k)
        contexts += !ph->plan.s[k].skip && gs_seq_plan_has(&ph->plan.s[k], i);
    if (!t->n || t->n < contexts) {
        if (t->n)
            fprintf(stderr, "%s: %s: measured in %zu of its %zu sequences: not settled, it "
                            "stays as decided\n", ph->o->who, e->shape, t->n, contexts);
        return;
    }
    const gs_seq_verdict_t v = gs_seq_settle(&c);
    fprintf(stderr,
            "%s: %s: tuned %s/%s, %.3fx the prior %s per call: %.3fx in %zu sequence%s, "
            "%+.3f ms over the recording's replays (x%g each capture), %+.3f ms in its %llu "
            "eager calls%s: %s\n",
            ph->o->who, e->shape, ph->dec[i].family, ph->dec[i].config, ph->dec[i].vs_prior,
            ph->dec[i].prior, v.seq_gain, t->n, t->n == 1 ? "" : "s", v.graph_ms,
            ph->o->replays, v.eager_ms, eager, e->timed || !eager ? "" : " (not timed: 0)",
            v.keep ? "kept" : "the prior instead (the cache rewritten)");
    ph->reverted[i] = !v.keep;
    write_settled(ph, i, &v);
}

/* One pass: the suspects reverted one at a time wherever they appear,
 * settled, and their sequences compared with their prior again. Returns
 * how many sequences are still clearly slower than their prior (their
 * classes left become the next pass's suspects). */
static size_t pass(phase_t *ph, int p)
{
    unsigned char *in = calloc(ph->plan.n ? ph->plan.n : 1, 1);
    if (!in)
        return 0;
    for (size_t k = 0; k < ph->plan.n; ++k) {
        const gs_seq_plan_seq_t *q = &ph->plan.s[k];
        for (size_t c = 0; !q->skip && c < q->n_changed; ++c)
            in[k] |= ph->suspect[q->changed[c]] && !ph->reverted[q->changed[c]];
    }
    for (size_t k = 0; k < ph->plan.n && !must_stop(ph); ++k)
        if (in[k])
            revert_each(ph, k);
    for (size_t i = 0; i < ph->s->n && !*ph->stop; ++i)
        if (ph->suspect[i] && !ph->reverted[i])
            settle(ph, i);
    size_t slower = 0;
    if (!ph->g->simulated && !must_stop(ph)) {
        char when[32];
        snprintf(when, sizeof when, "settled (pass %d)", p);
        memset(ph->faster, 0, ph->plan.n);
        memset(ph->slower, 0, ph->plan.n);
        against_prior(ph, in, when);
        memset(ph->suspect, 0, ph->s->n);
        for (size_t k = 0; k < ph->plan.n; ++k) {
            const gs_seq_plan_seq_t *q = &ph->plan.s[k];
            if (!in[k] || !ph->slower[k])
                continue;
            /* still clearly slower: what is left of its changed classes, again
             * (a tie stands: the classes left were each shown to help, or to
             * gain more outside this sequence) */
            size_t left = 0;
            for (size_t c = 0; c < q->n_changed; ++c)
                if (!ph->reverted[q->changed[c]]) {
                    ph->suspect[q->changed[c]] = 1;
                    ++left;
                }
            slower += left > 0;
        }
    }
    free(in);
    return slower;
}

/* After the passes, a sequence still clearly slower than its prior: the
 * one-at-a-time reverts did not find its loss (the classes interact, as
 * neighbouring kernels' launches and tails overlap differently), so every
 * class still changed in it goes back to its prior, unless that class's
 * eager calls gain more than the sequence loses (gs_seq_fallback_reverts),
 * and the sequences are compared again. */
static void fallback(phase_t *ph)
{
    unsigned char *in = calloc(ph->plan.n ? ph->plan.n : 1, 1);
    size_t back = 0;
    for (size_t k = 0; in && k < ph->plan.n; ++k) {
        const gs_seq_plan_seq_t *q = &ph->plan.s[k];
        if (q->skip || !ph->slower[k])
            continue;
        for (size_t c = 0; c < q->n_changed; ++c) {
            const size_t i = q->changed[c];
            if (ph->reverted[i])
                continue;
            const double vp = ph->dec[i].vs_prior > 0.0 ? ph->dec[i].vs_prior : 1.0;
            const double eager_gain = eager_ms_of(ph, i) * (1.0 - 1.0 / vp);
            const int revert = gs_seq_fallback_reverts(ph->loss_ms[k], eager_gain);
            fprintf(stderr, "%s: %s: its sequence still %.3fx its prior (%.3f ms lost over the "
                            "recording's replays), its eager calls gain %+.3f ms: %s\n",
                    ph->o->who, ph->s->sig[i].shape, ph->ratio[k], ph->loss_ms[k], eager_gain,
                    revert ? "the prior instead (the cache rewritten)" : "kept");
            if (!revert)
                continue;
            const gs_seq_verdict_t v = {0, -ph->loss_ms[k], eager_gain, ph->ratio[k]};
            write_settled(ph, i, &v);
            ph->reverted[i] = 1;
            in[k] = 1;
            ++back;
        }
    }
    if (back && !must_stop(ph))
        against_prior(ph, in, "all its changes back");
    free(in);
}

/* ---- the phase ---- */

static void say_plan(const phase_t *ph)
{
    size_t skipped = ph->plan.n - ph->plan.timed;
    fprintf(stderr, "%s: sequences: %zu recorded, %zu to compare with their prior, %zu not\n",
            ph->o->who, ph->plan.n, ph->plan.timed, skipped);
    for (size_t k = 0; k < ph->plan.n; ++k) {
        char name[96];
        seq_name(&ph->plan.s[k], name, sizeof name);
        if (ph->plan.s[k].skip)
            fprintf(stderr, "%s: %s: not compared: %s\n", ph->o->who, name, ph->plan.s[k].skip);
    }
}

static int run_phase(phase_t *ph)
{
    if (load_decisions(ph))
        return 1;
    if (gs_seq_plan_make(&ph->plan, ph->s, ph->can, ph->changed)) {
        fprintf(stderr, "%s: sequences: out of memory\n", ph->o->who);
        return 1;
    }
    say_plan(ph);
    if (!ph->plan.timed)
        return 0;
    *(void **)&ph->hold = dlsym(RTLD_DEFAULT, "gemmshim_hold_prior");
    if (!ph->hold) {
        fprintf(stderr, "%s: sequences: the shim is not preloaded (no gemmshim_hold_prior): "
                        "nothing compared\n", ph->o->who);
        return 1;
    }
    if (!ph->g->simulated) {
        /* cuBLAS allocates nothing inside a capture with a workspace of its own */
        if (cublasSetWorkspace_v2(ph->g->h, ph->g->workspace, ph->g->workspace_bytes) !=
            CUBLAS_STATUS_SUCCESS) {
            fprintf(stderr, "%s: sequences: cublasSetWorkspace failed\n", ph->o->who);
            return 1;
        }
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        ph->budget = free_b / 2; /* the rest for the shim's workspaces and cuBLAS */
    }
    unsigned char *all = malloc(ph->plan.n);
    if (!all)
        return 1;
    memset(all, 1, ph->plan.n);
    against_prior(ph, all, "tuned");
    free(all);
    if (!ph->g->simulated) {
        const size_t n = gs_seq_plan_suspects(&ph->plan, ph->faster, ph->suspect, ph->s->n);
        if (n)
            fprintf(stderr, "%s: sequences: %zu classes changed in sequences not clearly faster "
                            "tuned: each reverted alone, in every sequence it appears in\n",
                    ph->o->who, n);
        for (int p = 1; p <= PASSES_MAX && !must_stop(ph); ++p) {
            int any = 0;
            for (size_t i = 0; i < ph->s->n; ++i)
                any |= ph->suspect[i] && !ph->reverted[i];
            if (!any || !pass(ph, p))
                break;
        }
        if (!must_stop(ph))
            fallback(ph);
    }
    size_t kept = 0, back = 0;
    for (size_t i = 0; i < ph->s->n; ++i) {
        back += ph->reverted[i];
        kept += ph->trial[i].n && !ph->reverted[i];
    }
    fprintf(stderr, "%s: sequences: %zu classes settled in their sequences: %zu keep their "
                    "tuned route, %zu went back to the prior; %.1f s\n",
            ph->o->who, kept + back, kept, back, seconds_since(&ph->t0));
    if (*ph->stop)
        return 128 + (int)*ph->stop;
    return ph->failed ? 1 : 0;
}

int gs_replay_sequences(const gs_replay_sigs_t *s, const gs_replay_args_t *args,
                        const unsigned char *can, gs_replay_gpu_t *g,
                        const gs_replay_seq_opts_t *o, volatile sig_atomic_t *stop)
{
    phase_t ph;
    memset(&ph, 0, sizeof ph);
    ph.s = s;
    ph.args = args;
    ph.g = g;
    ph.can = can;
    ph.o = o;
    ph.stop = stop;
    clock_gettime(CLOCK_MONOTONIC, &ph.t0);
    const size_t n = s->n ? s->n : 1, nq = s->seqs.n ? s->seqs.n : 1;
    ph.dec = calloc(n, sizeof *ph.dec);
    ph.have = calloc(n, 1);
    ph.changed = calloc(n, 1);
    ph.reverted = calloc(n, 1);
    ph.suspect = calloc(n, 1);
    ph.trial = calloc(n, sizeof *ph.trial);
    ph.faster = calloc(nq, 1);
    ph.slower = calloc(nq, 1);
    ph.ratio = calloc(nq, sizeof *ph.ratio);
    ph.loss_ms = calloc(nq, sizeof *ph.loss_ms);
    int rc = 1;
    if (ph.dec && ph.have && ph.changed && ph.reverted && ph.suspect && ph.trial && ph.faster &&
        ph.slower && ph.ratio && ph.loss_ms) {
        rc = run_phase(&ph);
    } else {
        fprintf(stderr, "%s: sequences: out of memory\n", o->who);
    }
    if (ph.hold)
        ph.hold(NULL, 0);
    gs_tune_cache_close();
    gs_tuned_reset();
    for (size_t i = 0; ph.trial && i < s->n; ++i) {
        free(ph.trial[i].k);
        free(ph.trial[i].ctx);
    }
    gs_seq_plan_free(&ph.plan);
    free(ph.dec);
    free(ph.have);
    free(ph.changed);
    free(ph.reverted);
    free(ph.suspect);
    free(ph.trial);
    free(ph.faster);
    free(ph.slower);
    free(ph.ratio);
    free(ph.loss_ms);
    return rc;
}
