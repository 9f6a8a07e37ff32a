/* Tuned routing's pure-C parts: the decision rule (synthetic paired
 * timings), the tune cache (memory, file, validators, torn lines,
 * compaction, concurrent writers, a writer killed mid-run) and dispatch's
 * use of tuned decisions. */
#include "decimal_comma.h"
#include "dispatch_fixtures.h"
#include "gs_class_map.h"
#include "gs_dispatch.h"
#include "gs_registry.h"
#include "gs_test.h"
#include "gs_tune_cache.h"
#include "gs_tune_rule.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Deterministic noise in [-1, 1). */
static double noise(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return ((*state >> 8) & 0xffff) / 32768.0 - 1.0;
}

/* Runs the rule to its end: candidate i takes base / speed[i] ms with the
 * given relative jitter; cuBLAS takes base; whichever runs first in a pair
 * is slower by `cold` (a position effect), and both sides of a pair share a
 * factor within `drift` of 1 (the GPU's clock, which moves between pairs).
 * Returns the winner (-1: cuBLAS). */
static double cold = 0.0, drift = 0.0;
static int tune_with(const double *speed, int n, double jitter, int mismatch, gs_tune_sig_t *s,
                     double *gain, double *lo)
{
    const gs_tune_limits_t lim = gs_tune_default_limits();
    gs_tune_init(s);
    for (int i = 0; i < n; ++i)
        gs_tune_add(s, 0, i);
    unsigned st = 7;
    for (int guard = 0; guard < 10000 && !gs_tune_done(s, &lim); ++guard) {
        const int c = gs_tune_next(s, &lim);
        if (c < 0)
            break;
        ++s->cand[c].enqueued;
        if (!s->cand[c].checked && s->cand[c].state == GS_CAND_LIVE) {
            if (c == mismatch)
                s->cand[c].state = GS_CAND_MISMATCH;
            else
                s->cand[c].checked = 1;
        }
        const int cand_first = gs_tune_order(s, c);
        const double clock = 1.0 + drift * noise(&st);
        const double t_cub =
            clock * (1.0 + jitter * noise(&st)) * (cand_first ? 1.0 : 1.0 + cold);
        const double t_c = clock / speed[c] * (1.0 + jitter * noise(&st)) *
                           (cand_first ? 1.0 + cold : 1.0);
        gs_tune_add_pair(s, c, t_cub, t_c, cand_first, &lim);
    }
    return gs_tune_decide(s, &lim, gain, lo);
}

static void test_rule(void)
{
    gs_tune_sig_t s;
    double gain, lo;
    /* a clearly faster candidate wins, with its gain */
    const double a[] = {0.95, 1.10, 1.02};
    CHECK_EQ_INT(tune_with(a, 3, 0.01, -1, &s, &gain, &lo), 1);
    CHECK(fabs(gain - 1.10) < 0.02 && lo > 1.01);
    /* 1.005x is below the 1.01 bar: cuBLAS as called stays */
    const double b[] = {1.005, 0.99};
    CHECK_EQ_INT(tune_with(b, 2, 0.002, -1, &s, &gain, &lo), -1);
    CHECK(gain == 1.0 && lo == 1.0);
    /* faster on average but too noisy to be sure: stays */
    const double c[] = {1.03};
    CHECK_EQ_INT(tune_with(c, 1, 0.30, -1, &s, &gain, &lo), -1);
    /* the fastest one mismatched: never chosen, the next one is */
    const double d[] = {1.30, 1.08};
    CHECK_EQ_INT(tune_with(d, 2, 0.01, 0, &s, &gain, &lo), 1);
    /* a much slower one is pruned after 3 pairs, and costs no more */
    const double e[] = {0.50, 1.00};
    tune_with(e, 2, 0.01, -1, &s, &gain, &lo);
    CHECK_EQ_INT(s.cand[0].state, GS_CAND_SLOW);
    CHECK_EQ_INT(s.cand[0].n, 3);
    CHECK_EQ_INT(s.cand[1].n, 10);
    /* the first of a pair 15% slower (cold L2), 1% jitter: the order-balanced
     * samples cancel it: an equal candidate does not win, a 1.06x one does */
    cold = 0.15;
    const double f[] = {1.00};
    CHECK_EQ_INT(tune_with(f, 1, 0.01, -1, &s, &gain, &lo), -1);
    const double g[] = {1.06};
    CHECK_EQ_INT(tune_with(g, 1, 0.01, -1, &s, &gain, &lo), 0);
    CHECK(fabs(gain - 1.06) < 0.01);
    cold = 0.0;
    /* the clock moving 20% between pairs, 0.5% within one: each pair's own
     * ratio cancels it, so a 1.04x candidate still wins and an equal one
     * does not (times compared across pairs would see 20% noise) */
    drift = 0.20;
    const double h[] = {1.04, 1.00};
    CHECK_EQ_INT(tune_with(h, 2, 0.005, -1, &s, &gain, &lo), 0);
    CHECK(fabs(gain - 1.04) < 0.01 && lo > 1.01);
    drift = 0.0;
    /* not done while a pair's times are on their way */
    const gs_tune_limits_t lim = gs_tune_default_limits();
    gs_tune_init(&s);
    gs_tune_add(&s, 0, 0);
    for (int i = 0; i < lim.min_pairs; ++i) {
        CHECK_EQ_INT(gs_tune_next(&s, &lim), 0);
        ++s.cand[0].enqueued;
    }
    CHECK_EQ_INT(gs_tune_next(&s, &lim), -1);
    CHECK(!gs_tune_done(&s, &lim));
    for (int i = 0; i < lim.min_pairs; ++i)
        gs_tune_add_pair(&s, 0, 1.0, 0.5 + 0.01 * (i % 3), gs_tune_order(&s, 0), &lim);
    CHECK(gs_tune_done(&s, &lim));
    /* unchecked (never compared) cannot win */
    CHECK_EQ_INT(gs_tune_decide(&s, &lim, &gain, &lo), -1);
    s.cand[0].checked = 1;
    CHECK_EQ_INT(gs_tune_decide(&s, &lim, &gain, &lo), 0);
    /* a spent call budget ends tuning with what is in */
    gs_tune_init(&s);
    gs_tune_add(&s, 0, 0);
    s.calls = lim.max_calls;
    CHECK_EQ_INT(gs_tune_next(&s, &lim), -1);
    CHECK(gs_tune_done(&s, &lim));
    /* an odd pair count is rounded up: the samples take one pair of each order */
    CHECK_EQ_INT(gs_tune_default_limits_for(7).min_pairs, 8);
    CHECK_EQ_INT(gs_tune_default_limits_for(10).min_pairs, 10);
    /* a bad time drops the pair, not the candidate */
    gs_tune_init(&s);
    gs_tune_add(&s, 0, 0);
    s.cand[0].enqueued = 1;
    gs_tune_add_pair(&s, 0, 0.0, 1.0, 1, &lim);
    CHECK_EQ_INT(s.cand[0].n, 0);
    CHECK_EQ_INT(s.cand[0].enqueued, 0);
    CHECK_EQ_INT(s.cand[0].state, GS_CAND_LIVE);
}

static gs_class_t class_n(int64_t m)
{
    gs_problem_t p = fp32_nn(m, 64, 64);
    gs_problem_classify(&p);
    return p.cls;
}

static gs_tuned_t tuned(const char *family, const char *config, double gain)
{
    gs_tuned_t t;
    memset(&t, 0, sizeof t);
    snprintf(t.family, sizeof t.family, "%s", family);
    snprintf(t.config, sizeof t.config, "%s", config);
    t.gain = gain;
    t.lo95 = gain - 0.01;
    t.pairs = 8;
    t.cost_ms = 1.5;
    return t;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void append_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "ab");
    fputs(text, f);
    fclose(f);
}

static void test_cache_file(void)
{
    char path[64], msg[1024];
    snprintf(path, sizeof path, "/tmp/gs_tune_cache_%d", (int)getpid());
    unlink(path);
    gs_tuned_reset();
    const gs_class_t c1 = class_n(100), c2 = class_n(200);
    gs_tuned_t t;
    CHECK(!gs_tuned_find(&c1, &t));
    /* read-only use of a missing file: an error, nothing created */
    CHECK_EQ_INT(gs_tune_cache_open(path, "gpu=X", GS_TUNE_CACHE_READONLY, msg, sizeof msg), -1);
    CHECK(access(path, F_OK) != 0);
    /* tuning use creates it with the header; decisions are appended */
    CHECK_EQ_INT(gs_tune_cache_open(path, "gpu=X sms=1", GS_TUNE_CACHE_WRITE, msg, sizeof msg), 0);
    const unsigned g0 = gs_tuned_generation();
    const gs_tuned_t t1 = tuned("pingpong", "pingpong_128x128x64", 1.07),
                     t2 = tuned(GS_TUNED_CUBLAS, "as_called", 1.0);
    CHECK_EQ_INT(gs_tuned_put(&c1, &t1, "shape one", msg, sizeof msg), 0);
    CHECK_EQ_INT(gs_tuned_put(&c2, &t2, "shape two", msg, sizeof msg), 0);
    CHECK(gs_tuned_generation() != g0);
    char *text = slurp(path);
    CHECK(text && !strncmp(text, "# gemmshim tune cache\nformat 1\nvalidator gpu=X sms=1\nsig\t", 57));
    CHECK_CONTAINS(text, "\tpingpong\tpingpong_128x128x64\tgain=1.0700\t");
    CHECK_CONTAINS(text, "# shape one\n");
    free(text);
    /* a fresh process reads both back */
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "gpu=X sms=1", GS_TUNE_CACHE_READONLY, msg, sizeof msg), 0);
    CHECK_EQ_INT((int)gs_tuned_count(), 2);
    CHECK(gs_tuned_find(&c1, &t) && !strcmp(t.config, "pingpong_128x128x64") &&
          fabs(t.gain - 1.07) < 1e-9 && t.pairs == 8);
    CHECK(gs_tuned_find(&c2, &t) && !strcmp(t.family, GS_TUNED_CUBLAS));
    /* a later line for the same class wins (merge on read) */
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "gpu=X sms=1", GS_TUNE_CACHE_WRITE, msg, sizeof msg), 0);
    const gs_tuned_t t3 = tuned("sgemm_simt", "sgemm_simt", 1.02);
    CHECK_EQ_INT(gs_tuned_put(&c1, &t3, "again", msg, sizeof msg), 0);
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "gpu=X sms=1", GS_TUNE_CACHE_READONLY, msg, sizeof msg), 0);
    CHECK(gs_tuned_find(&c1, &t) && !strcmp(t.family, "sgemm_simt"));
    CHECK_EQ_INT((int)gs_tuned_count(), 2);
    /* a torn last line (its writer killed mid-write) and a garbled line
     * are skipped, said, and the rest holds */
    append_text(path, "sig\tzz\tpingpong\tx\tgain=1\tlo95=1\tpairs=1\tms=1\t#\n");
    append_text(path, "sig\t0011");
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "gpu=X sms=1", GS_TUNE_CACHE_READONLY, msg, sizeof msg), 0);
    CHECK_CONTAINS(msg, "2 malformed lines skipped");
    CHECK_EQ_INT((int)gs_tuned_count(), 2);
    /* another GPU, driver, cuBLAS or build: stale. Read-only: ignored, said */
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "gpu=Y sms=1", GS_TUNE_CACHE_READONLY, msg, sizeof msg), -1);
    CHECK_CONTAINS(msg, "stale");
    CHECK_EQ_INT((int)gs_tuned_count(), 0);
    /* tuning: replaced with this process's header */
    CHECK_EQ_INT(gs_tune_cache_open(path, "gpu=Y sms=1", GS_TUNE_CACHE_WRITE, msg, sizeof msg), 0);
    CHECK_CONTAINS(msg, "replaced");
    text = slurp(path);
    CHECK(text && strstr(text, "validator gpu=Y sms=1\n") && !strstr(text, "\tsig"));
    CHECK(text && !strstr(text, "pingpong"));
    free(text);
    gs_tune_cache_close();
    /* not a cache: never overwritten */
    FILE *f = fopen(path, "wb");
    fputs("my notes\n", f);
    fclose(f);
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "gpu=Y", GS_TUNE_CACHE_WRITE, msg, sizeof msg), -1);
    text = slurp(path);
    CHECK(text && !strcmp(text, "my notes\n"));
    free(text);
    /* a directory is refused */
    CHECK_EQ_INT(gs_tune_cache_open("/tmp", "gpu=Y", GS_TUNE_CACHE_READONLY, msg, sizeof msg), -1);
    unlink(path);
    gs_tuned_reset();
}

/* Many duplicate lines are compacted when a tuning process opens the file. */
static void test_compaction(void)
{
    char path[64], msg[1024];
    snprintf(path, sizeof path, "/tmp/gs_tune_compact_%d", (int)getpid());
    unlink(path);
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "v", GS_TUNE_CACHE_WRITE, msg, sizeof msg), 0);
    const gs_class_t c = class_n(300);
    for (int i = 0; i < 200; ++i) {
        const gs_tuned_t t = tuned("pingpong", "pingpong_128x128x64", 1.0 + i / 1000.0);
        gs_tuned_put(&c, &t, "", msg, sizeof msg);
    }
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "v", GS_TUNE_CACHE_WRITE, msg, sizeof msg), 0);
    char *text = slurp(path);
    int lines = 0;
    for (const char *s = text; s && (s = strstr(s, "\nsig\t")); ++s)
        ++lines;
    CHECK_EQ_INT(lines, 1);
    gs_tuned_t t;
    CHECK(gs_tuned_find(&c, &t) && fabs(t.gain - 1.199) < 1e-9);
    free(text);
    /* a write after another process's compaction lands in the new file */
    const gs_class_t c2 = class_n(301);
    const gs_tuned_t t2 = tuned("sgemm_simt", "sgemm_simt", 1.05);
    char tmp[80];
    snprintf(tmp, sizeof tmp, "%s.other", path);
    text = slurp(path);
    FILE *f = fopen(tmp, "wb");
    fputs(text, f);
    fclose(f);
    rename(tmp, path); /* what a compaction elsewhere does */
    free(text);
    CHECK_EQ_INT(gs_tuned_put(&c2, &t2, "after rename", msg, sizeof msg), 0);
    text = slurp(path);
    CHECK(text && strstr(text, "# after rename\n"));
    free(text);
    unlink(path);
    gs_tuned_reset();
}

/* 8 processes append at once, one is killed mid-run: every decision a
 * writer reported done is in the file, and the file reads back clean. */
static void test_concurrent_writers(void)
{
    char path[64], msg[1024];
    snprintf(path, sizeof path, "/tmp/gs_tune_conc_%d", (int)getpid());
    unlink(path);
    enum { WRITERS = 8, EACH = 60, VICTIM = 3 };
    int acks[2];
    CHECK_EQ_INT(pipe(acks), 0);
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; ++w) {
        pids[w] = fork();
        if (pids[w] == 0) {
            close(acks[0]);
            gs_tuned_reset();
            if (gs_tune_cache_open(path, "v", GS_TUNE_CACHE_WRITE, msg, sizeof msg))
                _exit(2);
            for (int i = 0; i < EACH; ++i) {
                const gs_class_t c = class_n(1000 * (w + 1) + i);
                const gs_tuned_t t = tuned("pingpong", "pingpong_128x128x64", 1.01 + w / 100.0);
                if (gs_tuned_put(&c, &t, "w", msg, sizeof msg))
                    _exit(3);
                const int id = w * EACH + i;
                if (write(acks[1], &id, sizeof id) != sizeof id)
                    _exit(4);
                if (w == VICTIM && i == EACH / 2)
                    pause(); /* killed here */
            }
            _exit(0);
        }
    }
    close(acks[1]);
    int acked[WRITERS * EACH] = {0}, id, n_acked = 0, victim_acked = 0;
    while (read(acks[0], &id, sizeof id) == sizeof id) {
        if (id >= 0 && id < WRITERS * EACH && !acked[id]++)
            ++n_acked;
        if (id / EACH == VICTIM && ++victim_acked == EACH / 2 + 1)
            kill(pids[VICTIM], SIGKILL);
    }
    int clean = 1;
    for (int w = 0; w < WRITERS; ++w) {
        int st = 0;
        waitpid(pids[w], &st, 0);
        if (w == VICTIM)
            CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        else
            clean &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    CHECK(clean);
    CHECK_EQ_INT(n_acked, (WRITERS - 1) * EACH + EACH / 2 + 1);
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "v", GS_TUNE_CACHE_READONLY, msg, sizeof msg), 0);
    CHECK_STR_EQ(msg, "");
    int lost = 0;
    for (int i = 0; i < WRITERS * EACH; ++i) {
        gs_tuned_t t;
        const gs_class_t c = class_n(1000 * (i / EACH + 1) + i % EACH);
        if (acked[i] && !gs_tuned_find(&c, &t))
            ++lost;
    }
    CHECK_EQ_INT(lost, 0);
    CHECK_EQ_INT((int)gs_tuned_count(), n_acked);
    close(acks[0]);
    unlink(path);
    gs_tuned_reset();
}

/* The text of a cache, as the file reader parses it (and the fuzzer
 * feeds it): the seed corpus's valid file loads both decisions. */
static void test_load_buffer(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/tune_cache/valid", GS_SOURCE_DIR);
    char *text = slurp(path);
    if (!CHECK(text != NULL))
        return;
    gs_tuned_reset();
    int fresh = -1;
    size_t lines = 0, bad = 0;
    CHECK_EQ_INT(gs_tune_cache_load_buffer(text, strlen(text), "v", &fresh, &lines, &bad), 0);
    CHECK(fresh == 1 && lines == 2 && bad == 0);
    CHECK_EQ_INT((int)gs_tuned_count(), 2);
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_load_buffer(text, strlen(text), "w", &fresh, &lines, &bad), 0);
    CHECK(fresh == 0 && gs_tuned_count() == 0); /* stale: nothing loaded */
    CHECK_EQ_INT(gs_tune_cache_load_buffer("format 2\n", 9, "v", &fresh, &lines, &bad), -1);
    free(text);
    gs_tuned_reset();
}

/* The per-class table the tuner and the cuBLASLt family keep entries in. */
static void test_class_map(void)
{
    typedef struct entry {
        gs_class_key_t key;
        int value;
    } entry_t;
    void *slots[8] = {0};
    gs_class_map_t m = {slots, 8, 3, 0};
    entry_t e[4];
    for (int i = 0; i < 4; ++i) {
        memset(&e[i], 0, sizeof e[i]);
        e[i].key.cls = class_n(10 + i);
        e[i].key.ordinal = 0;
        e[i].value = i;
    }
    void **s0 = gs_class_map_slot(&m, &e[0].key.cls, 0);
    CHECK(s0 && !*s0); /* not there: its empty slot */
    gs_class_map_put(&m, s0, &e[0]);
    CHECK(gs_class_map_slot(&m, &e[0].key.cls, 0) == s0 && *s0 == &e[0]);
    /* the same class on another device is another entry */
    void **s0b = gs_class_map_slot(&m, &e[0].key.cls, 1);
    CHECK(s0b && !*s0b && s0b != s0);
    for (int i = 1; i < 3; ++i)
        gs_class_map_put(&m, gs_class_map_slot(&m, &e[i].key.cls, 0), &e[i]);
    CHECK_EQ_INT((int)m.count, 3);
    /* full (max_count): what is there is found, nothing more is taken */
    CHECK(!gs_class_map_slot(&m, &e[3].key.cls, 0));
    for (int i = 0; i < 3; ++i) {
        void **s = gs_class_map_slot(&m, &e[i].key.cls, 0);
        CHECK(s && *s && ((entry_t *)*s)->value == i);
    }
}

static gs_routing_t routing(gs_tune_mode_t tune)
{
    gs_routing_t r = {GS_MODE_ON, GS_POLICY_TABLE, gs_candidates_all(), tune};
    return r;
}

static void test_dispatch_tuned(void)
{
    char msg[256];
    gs_tuned_reset();
    const gs_device_t d = device(9, 0, 132);
    gs_problem_t p = fp32_nn(1023, 1025, 1027); /* no table entry routes it */
    gs_problem_classify(&p);
    const gs_routing_t off = routing(GS_TUNE_OFF), online = routing(GS_TUNE_ONLINE),
                       cache = routing(GS_TUNE_CACHE);
    gs_decision_t dec = gs_dispatch(&p, &d, &online);
    CHECK(!dec.family && dec.tune_pending && !dec.tuned);
    CHECK_CONTAINS(dec.reason, "tuning");
    dec = gs_dispatch(&p, &d, &cache); /* cache, nothing decided: the prior */
    CHECK(!dec.tune_pending && !dec.tuned);
    const gs_decision_t prior = gs_dispatch(&p, &d, &off);
    CHECK_EQ_INT(dec.route, prior.route);
    /* tuned: sgemm_simt */
    const gs_tuned_t t = tuned("sgemm_simt", "sgemm_simt", 1.08);
    gs_tuned_put(&p.cls, &t, "", msg, sizeof msg);
    dec = gs_dispatch(&p, &d, &online);
    CHECK(dec.family && !strcmp(dec.family->name, "sgemm_simt") && dec.tuned);
    CHECK_CONTAINS(dec.reason, "tuned: 1.080x");
    dec = gs_dispatch(&p, &d, &cache);
    CHECK(dec.family && dec.tuned);
    /* off: tuned decisions are not read */
    dec = gs_dispatch(&p, &d, &off);
    CHECK(!dec.tuned);
    /* not allowed any more (GEMMSHIM_KERNELS): the prior decides */
    gs_routing_t none = cache;
    none.allowed = 0;
    dec = gs_dispatch(&p, &d, &none);
    CHECK(!dec.family && !dec.tuned);
    /* a choice that no longer implements the call: the prior */
    const gs_tuned_t gone = tuned("pingpong", "pingpong_128x128x64", 1.2);
    gs_tuned_put(&p.cls, &gone, "", msg, sizeof msg);
    dec = gs_dispatch(&p, &d, &cache);
    CHECK(!dec.family && !dec.tuned);
    /* an unknown family name (a plugin not loaded now): the prior */
    const gs_tuned_t unknown = tuned("nosuch", "x", 1.2);
    gs_tuned_put(&p.cls, &unknown, "", msg, sizeof msg);
    dec = gs_dispatch(&p, &d, &cache);
    CHECK(!dec.family && !dec.tuned);
    /* the handle set an SM count target: our kernels leave the call alone
     * (they use every SM), tuned or not; the prior forwards it, saying why */
    gs_problem_t t64 = p;
    t64.sm_count_target = 64;
    gs_problem_classify(&t64);
    dec = gs_dispatch(&t64, &d, &cache);
    CHECK(!dec.family && !dec.tuned); /* another class: nothing tuned for it */
    gs_tuned_put(&t64.cls, &t, "", msg, sizeof msg); /* even a sgemm_simt decision */
    dec = gs_dispatch(&t64, &d, &cache);
    CHECK(!dec.family && !dec.tuned);
    gs_routing_t eligible = off;
    eligible.policy = GS_POLICY_ELIGIBLE;
    dec = gs_dispatch(&t64, &d, &eligible);
    CHECK(!dec.family);
    CHECK_CONTAINS(dec.reason, "SM count target (64)");
    /* cuBLAS as called won: forwarded, counted as tuned */
    const gs_tuned_t cub = tuned(GS_TUNED_CUBLAS, "as_called", 1.0);
    gs_tuned_put(&p.cls, &cub, "", msg, sizeof msg);
    dec = gs_dispatch(&p, &d, &online);
    CHECK(!dec.family && dec.tuned && !dec.tune_pending);
    /* another class is not affected */
    gs_problem_t q = fp32_nn(1023, 1025, 1029);
    gs_problem_classify(&q);
    dec = gs_dispatch(&q, &d, &online);
    CHECK(dec.tune_pending);
    /* the class keys alignment: an offset C is another signature */
    gs_problem_t r = p;
    r.C = (char *)r.C + 4;
    gs_problem_classify(&r);
    dec = gs_dispatch(&r, &d, &online);
    CHECK(dec.tune_pending);
    /* host alpha and beta wherever the caller's stack puts them (a 4-, 16-
     * or 64-aligned float): the same class, so a decision from another
     * process or call site is found */
    _Alignas(256) float scal[2][64];
    for (int off = 1; off < 64; off <<= 2) {
        gs_problem_t h = p;
        scal[0][off] = 1.0f, scal[1][off] = 0.0f;
        h.alpha = &scal[0][off];
        h.beta = &scal[1][off];
        gs_problem_classify(&h);
        CHECK(!memcmp(&h.cls, &p.cls, sizeof h.cls));
        dec = gs_dispatch(&h, &d, &online);
        CHECK(!dec.family && dec.tuned && !dec.tune_pending);
    }
    gs_tuned_reset();
}

/* The cache's numbers are written and read in the C locale whatever the
 * application set: a decimal-comma process wrote "gain=1,0700", which every
 * other process skipped as malformed. Where no such locale is installed,
 * says so. */
static void test_cache_numeric_locale(void)
{
    if (!set_decimal_comma_locale()) {
        printf("cache_numeric_locale: no decimal-comma locale installed, not tested\n");
        return;
    }
    char path[64], msg[1024];
    snprintf(path, sizeof path, "/tmp/gs_tune_cache_lc_%d", (int)getpid());
    unlink(path);
    gs_tuned_reset();
    const gs_class_t c = class_n(300);
    const gs_tuned_t t = tuned("pingpong", "pingpong_128x128x64", 1.07);
    CHECK_EQ_INT(gs_tune_cache_open(path, "gpu=X", GS_TUNE_CACHE_WRITE, msg, sizeof msg), 0);
    CHECK_EQ_INT(gs_tuned_put(&c, &t, "lc", msg, sizeof msg), 0);
    char *text = slurp(path);
    CHECK(text != NULL);
    if (text)
        CHECK_CONTAINS(text, "\tgain=1.0700\tlo95=1.0600\t");
    free(text);
    gs_tuned_reset();
    gs_tuned_t back;
    CHECK_EQ_INT(gs_tune_cache_open(path, "gpu=X", GS_TUNE_CACHE_READONLY, msg, sizeof msg), 0);
    CHECK(gs_tuned_find(&c, &back) && fabs(back.gain - 1.07) < 1e-9);
    setlocale(LC_NUMERIC, "C");
    gs_tuned_reset();
    unlink(path);
}

int main(void)
{
    test_rule();
    test_cache_file();
    test_cache_numeric_locale();
    test_compaction();
    test_concurrent_writers();
    test_dispatch_tuned();
    test_load_buffer();
    test_class_map();
    return GS_TEST_DONE();
}
