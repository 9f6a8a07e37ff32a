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
#include <time.h>
#include <unistd.h>

/* Deterministic noise in [-1, 1). */
static double noise(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return ((*state >> 8) & 0xffff) / 32768.0 - 1.0;
}

/* Runs the rule to its end: candidate i takes base / speed[i] ms with the
 * given relative jitter (jitter_of[i] when set); cuBLAS takes base;
 * whichever runs first in a pair is slower by `cold` (a position effect),
 * and both sides of a pair share a factor within `drift` of 1 (the GPU's
 * clock, which moves between pairs). Candidate `prior` is the prior (-1:
 * cuBLAS). Returns the verdict. */
static double cold = 0.0, drift = 0.0;
static const double *jitter_of;
static gs_tune_verdict_t tune_prior(const double *speed, int n, double jitter, int mismatch,
                                    int prior, gs_tune_sig_t *s)
{
    const gs_tune_limits_t lim = gs_tune_default_limits();
    gs_tune_init(s);
    for (int i = 0; i < n; ++i)
        gs_tune_add(s, 0, i);
    gs_tune_set_prior(s, prior);
    unsigned st = 7;
    for (int guard = 0; guard < 10000 && !gs_tune_done(s, &lim); ++guard) {
        const int c = gs_tune_next(s, &lim);
        if (c < 0)
            break;
        if (!s->cand[c].checked && s->cand[c].state == GS_CAND_LIVE) {
            if (c == mismatch)
                s->cand[c].state = GS_CAND_MISMATCH;
            else
                s->cand[c].checked = 1;
        }
        const int cand_first = gs_tune_order(s, c);
        gs_tune_enqueued(s, c, cand_first);
        const double j = jitter_of ? jitter_of[c] : jitter;
        const double clock = 1.0 + drift * noise(&st);
        const double t_cub =
            clock * (1.0 + jitter * noise(&st)) * (cand_first ? 1.0 : 1.0 + cold);
        const double t_c = clock / speed[c] * (1.0 + j * noise(&st)) *
                           (cand_first ? 1.0 + cold : 1.0);
        gs_tune_add_pair(s, c, t_cub, t_c, cand_first, &lim);
    }
    return gs_tune_decide(s, &lim);
}

/* The same with cuBLAS as called the prior: the route (-1: cuBLAS). */
static int tune_with(const double *speed, int n, double jitter, int mismatch, gs_tune_sig_t *s,
                     double *gain, double *lo)
{
    const gs_tune_verdict_t v = tune_prior(speed, n, jitter, mismatch, GS_TUNE_CUBLAS, s);
    *gain = v.gain;
    *lo = v.lo95;
    return v.route;
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
        gs_tune_enqueued(&s, 0, gs_tune_order(&s, 0));
    }
    CHECK_EQ_INT(gs_tune_next(&s, &lim), -1);
    CHECK(!gs_tune_done(&s, &lim));
    for (int i = 0; i < lim.min_pairs; ++i)
        gs_tune_add_pair(&s, 0, 1.0, 0.5 + 0.01 * (i % 3), i % 2 == 0, &lim);
    CHECK(gs_tune_done(&s, &lim));
    /* unchecked (never compared) cannot win */
    CHECK_EQ_INT(gs_tune_decide(&s, &lim).route, GS_TUNE_CUBLAS);
    s.cand[0].checked = 1;
    CHECK_EQ_INT(gs_tune_decide(&s, &lim).route, 0);
    /* a spent pair budget ends tuning with what is in */
    gs_tune_init(&s);
    gs_tune_add(&s, 0, 0);
    s.pairs = lim.max_pairs;
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
    snprintf(t.prior, sizeof t.prior, GS_TUNED_CUBLAS);
    t.vs_prior = gain;
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
    CHECK(text && !strncmp(text, "# gemmshim tune cache\nformat 2\nvalidator gpu=X sms=1\nsig\t", 57));
    CHECK_CONTAINS(text, "\tpingpong\tpingpong_128x128x64\tgain=1.0700\t");
    CHECK_CONTAINS(text, "\tprior=cublas\tvs_prior=1.0700\t# shape one\n");
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
        /* the shape comment on the first line only: a compaction keeps it */
        gs_tuned_put(&c, &t, i ? "" : "cublasGemmEx bf16 TN m=300", msg, sizeof msg);
    }
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "v", GS_TUNE_CACHE_WRITE, msg, sizeof msg), 0);
    char *text = slurp(path);
    int lines = 0;
    for (const char *s = text; s && (s = strstr(s, "\nsig\t")); ++s)
        ++lines;
    CHECK_EQ_INT(lines, 1);
    CHECK(text && strstr(text, "\t# cublasGemmEx bf16 TN m=300\n"));
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
    CHECK_EQ_INT(gs_tune_cache_load_buffer("format 3\n", 9, "v", &fresh, &lines, &bad), -1);
    free(text);
    /* format 2: decisions with their prior, a claim, progress */
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/tune_cache/format2", GS_SOURCE_DIR);
    text = slurp(path);
    if (!CHECK(text != NULL))
        return;
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_load_buffer(text, strlen(text), "v", &fresh, &lines, &bad), 0);
    CHECK(fresh == 1 && lines == 5 && bad == 0);
    CHECK_EQ_INT((int)gs_tuned_count(), 2);
    gs_class_t b;
    memset(&b, 0, sizeof b);
    const unsigned char tail[] = {3, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy((unsigned char *)&b + 8, tail, sizeof tail);
    gs_tune_owner_t by;
    char *p = gs_tune_progress_get(&b, &by);
    const char *head = "pairs=14\tus=5321\tcalls=4\tcand=pingpong/";
    CHECK(p && !strncmp(p, head, strlen(head)) && by.pid == 4242 && !strcmp(by.host, "node1"));
    free(p);
    /* the third class was decided after its progress: the decision ends it */
    ((unsigned char *)&b)[0] = 1;
    gs_tuned_t t;
    CHECK(gs_tune_progress_get(&b, NULL) == NULL && gs_tuned_find(&b, &t));
    CHECK_STR_EQ(t.prior, "cublas");
    free(text);
    gs_tuned_reset();
}

/* The prior (the table's or the policy's route) is the incumbent: a
 * candidate replaces it only when it beats it; ties go to it. */
static void test_prior_rule(void)
{
    gs_tune_sig_t s;
    const gs_tune_limits_t lim = gs_tune_default_limits();
    /* the table's kernel (candidate 0) reads 1.005x cuBLAS, below the 1.01
     * bar over cuBLAS (the old rule wrote cuBLAS over it); nothing beats
     * it: it is kept, with its gain */
    const double a[] = {1.005, 0.99, 0.97};
    gs_tune_verdict_t v = tune_prior(a, 3, 0.002, -1, 0, &s);
    CHECK_EQ_INT(v.route, 0);
    CHECK(v.kept_prior && !v.prior_unsafe);
    CHECK(fabs(v.gain - 1.005) < 0.003 && v.vs_prior == 1.0);
    /* a candidate as fast as the prior: a tie, the prior stays, wherever
     * it is in the list */
    const double b[] = {1.18, 1.18};
    v = tune_prior(b, 2, 0.01, -1, 0, &s);
    CHECK(v.route == 0 && v.kept_prior);
    v = tune_prior(b, 2, 0.01, -1, 1, &s);
    CHECK(v.route == 1 && v.kept_prior);
    /* surely faster (little noise) but by 0.5%: below the bar over the
     * prior, kept; with cuBLAS the prior both clear it and the faster wins */
    const double c[] = {1.10, 1.1055};
    v = tune_prior(c, 2, 0.001, -1, 0, &s);
    CHECK(v.route == 0 && v.kept_prior);
    v = tune_prior(c, 2, 0.001, -1, GS_TUNE_CUBLAS, &s);
    CHECK_EQ_INT(v.route, 1);
    /* 8% over the prior: replaced; its gain over the prior and over cuBLAS */
    const double d[] = {1.10, 1.188};
    v = tune_prior(d, 2, 0.005, -1, 0, &s);
    CHECK(v.route == 1 && !v.kept_prior);
    CHECK(fabs(v.vs_prior - 1.08) < 0.01 && v.vs_prior_lo95 > 1.01 && fabs(v.gain - 1.188) < 0.01);
    /* a prior slower than cuBLAS is never pruned (the incumbent gets all
     * its pairs), and cuBLAS as called replaces it */
    const double e[] = {0.80, 0.70};
    v = tune_prior(e, 2, 0.005, -1, 0, &s);
    CHECK_EQ_INT(v.route, GS_TUNE_CUBLAS);
    CHECK(!v.kept_prior && fabs(v.vs_prior - 1.25) < 0.02);
    CHECK(s.cand[0].state == GS_CAND_LIVE && s.cand[0].n == lim.min_pairs);
    CHECK_EQ_INT(s.cand[1].state, GS_CAND_SLOW);
    /* ... but on a call shorter than GS_SUSTAIN_MIN_MS such pairs are
     * doubted (the table read that kernel faster in steady state): the
     * prior stays; on a longer call, or with cuBLAS the prior, they stand */
    CHECK(gs_tune_pairs_doubt_prior(&s, GS_SUSTAIN_MIN_MS / 4));
    CHECK(!gs_tune_pairs_doubt_prior(&s, GS_SUSTAIN_MIN_MS));
    CHECK(!gs_tune_pairs_doubt_prior(&s, 0.0));
    /* TN 1024x32x4096: skinny 0.90x cuBLAS in pairs, a cuBLASLt algorithm
     * tying cuBLAS beat it by 1.11x */
    const double e2[] = {0.90, 1.0};
    v = tune_prior(e2, 2, 0.005, -1, 0, &s);
    CHECK(!v.kept_prior && gs_tune_pairs_doubt_prior(&s, 0.005));
    v = tune_prior(e2, 2, 0.005, -1, GS_TUNE_CUBLAS, &s);
    CHECK(!gs_tune_pairs_doubt_prior(&s, 0.005));
    /* short by its bytes: TN 1024x32x4096 bf16 moves 8.5 MB (under 3 us
     * at GS_EST_BYTES_PER_S), 4096x128x14336 122 MB (41 us), a 4096^3 is
     * 137 GFLOP (229 us) */
    gs_class_t k;
    memset(&k, 0, sizeof k);
    k.a_type = k.c_type = GS_DT_BF16;
    k.m = 1024, k.n = 32, k.k = 4096, k.batch = 1;
    CHECK(gs_tune_est_ms(&k) < GS_SUSTAIN_MIN_MS && gs_tune_est_ms(&k) > 0.002);
    k.m = 4096, k.n = 128, k.k = 14336;
    CHECK(gs_tune_est_ms(&k) > GS_SUSTAIN_MIN_MS);
    k.m = k.n = k.k = 4096;
    CHECK(fabs(gs_tune_est_ms(&k) - 1e3 * 2.0 * 4096.0 * 4096 * 4096 / GS_EST_FLOPS_PER_S) < 1e-9);
    /* a prior faster than cuBLAS in its pairs: nothing to doubt */
    v = tune_prior(d, 2, 0.005, -1, 0, &s);
    CHECK(!gs_tune_pairs_doubt_prior(&s, 0.005));
    /* a prior whose result differs from cuBLAS's: cuBLAS stands in for it,
     * and 1.005x over cuBLAS does not replace cuBLAS */
    const double f[] = {1.30, 1.005};
    v = tune_prior(f, 2, 0.002, 0, 0, &s);
    CHECK_EQ_INT(v.route, GS_TUNE_CUBLAS);
    CHECK(v.prior_unsafe && !v.kept_prior);
    /* a noisy prior (30% jitter) and a steady candidate 3% faster: the
     * candidate clears 1.01 over cuBLAS, but Welch's bound counts the
     * prior's noise too: not shown to beat it, kept */
    const double g[] = {1.00, 1.03};
    const double jit[] = {0.30, 0.001};
    jitter_of = jit;
    v = tune_prior(g, 2, 0.001, -1, 0, &s);
    jitter_of = NULL;
    CHECK(v.route == 0 && v.kept_prior);
    double mean, lo;
    CHECK(gs_tune_bounds(&s.cand[1], &mean, &lo) && lo > log(1.01));
    /* a prior that never got its pairs (a budget ran out): nothing can be
     * shown to beat it */
    gs_tune_init(&s);
    gs_tune_add(&s, 0, 0);
    gs_tune_add(&s, 0, 1);
    gs_tune_set_prior(&s, 0);
    s.cand[1].checked = 1;
    for (int i = 0; i < lim.min_pairs; ++i)
        gs_tune_add_pair(&s, 1, 1.5, 1.0, i % 2 == 0, &lim);
    v = gs_tune_decide(&s, &lim);
    CHECK(v.route == 0 && v.kept_prior);
}

/* ---- a simulated process calling one signature ----
 * As shim/tune/gs_tune.c: each call collects the pairs the GPU finished,
 * decides when it can, else enqueues up to 4 pairs while fewer than
 * pend_max are in flight; a candidate's first pair is a warm-up (compared,
 * not timed). The GPU finishes gpu_per_call pairs between two calls, or
 * with gpu_every one pair every gpu_every calls (the host runs ahead of
 * it). Candidate c's k-th timed pair takes a time fixed by (id[c], k), so
 * the same pairs give the same samples however processes split and list
 * them. */
typedef struct sim {
    const double *speed;
    const int *id; /* NULL: the candidate's index */
    int pend_max, gpu_per_call, gpu_every;
    int pend_cand[64], pend_order[64], pend_k[64], n_pend;
    int compared[GS_TUNE_CANDS_MAX];
    int calls, idle_calls, decided;
    gs_tune_verdict_t v;
} sim_t;

static double pair_noise(int cand, int k)
{
    unsigned st = 7919u * (unsigned)cand + 31u * (unsigned)k + 1u;
    noise(&st);
    return noise(&st);
}

static void sim_finish(sim_t *m, gs_tune_sig_t *s, int n, const gs_tune_limits_t *lim)
{
    for (int done = 0; done < n && m->n_pend; ++done) {
        const int c = m->pend_cand[0], order = m->pend_order[0], k = m->pend_k[0];
        --m->n_pend;
        memmove(m->pend_cand, m->pend_cand + 1, (size_t)m->n_pend * sizeof(int));
        memmove(m->pend_order, m->pend_order + 1, (size_t)m->n_pend * sizeof(int));
        memmove(m->pend_k, m->pend_k + 1, (size_t)m->n_pend * sizeof(int));
        if (order < 0) { /* the warm-up: compared, agreed */
            s->cand[c].checked = 1;
            gs_tune_add_pair(s, c, 0.0, 0.0, 1, lim);
            continue;
        }
        const double x = pair_noise(m->id ? m->id[c] : c, k);
        gs_tune_add_pair(s, c, 1.0, (1.0 + 0.01 * x) / m->speed[c], order, lim);
    }
}

static void sim_call(sim_t *m, gs_tune_sig_t *s, const gs_tune_limits_t *lim)
{
    ++m->calls;
    sim_finish(m, s, m->gpu_every ? m->calls % m->gpu_every == 0 : m->gpu_per_call, lim);
    if (gs_tune_done(s, lim)) {
        m->decided = 1;
        m->v = gs_tune_decide(s, lim);
        return;
    }
    int carried = 0;
    for (int i = 0; i < 4; ++i) {
        const int c = gs_tune_next(s, lim);
        if (c < 0 || m->n_pend >= m->pend_max)
            break;
        const gs_tune_cand_t *cd = &s->cand[c];
        const int order = cd->checked || m->compared[c] ? gs_tune_order(s, c) : -1;
        m->compared[c] = 1;
        m->pend_cand[m->n_pend] = c;
        m->pend_order[m->n_pend] = order;
        m->pend_k[m->n_pend++] = cd->timed_cand_first + cd->timed_cublas_first;
        gs_tune_enqueued(s, c, order);
        ++carried;
    }
    m->idle_calls += !carried;
    gs_tune_call_done(s, carried);
}

/* Budgets count pairs and GPU time: a call that carries no pair costs the
 * signature nothing and leaves the rotation where it was. */
static void test_budget_pending(void)
{
    const gs_tune_limits_t lim = gs_tune_default_limits();
    gs_tune_sig_t *s = calloc(1, sizeof *s);
    if (!CHECK(s != NULL))
        return;
    gs_tune_init(s);
    for (int i = 0; i < 3; ++i)
        gs_tune_add(s, 0, i);
    /* a call that found no room (16 pairs pending, no event free) */
    CHECK_EQ_INT(gs_tune_next(s, &lim), 0);
    CHECK_EQ_INT(gs_tune_order(s, 0), 1);
    gs_tune_call_done(s, 0);
    CHECK_EQ_INT(gs_tune_next(s, &lim), 0); /* the rotation did not move */
    CHECK_EQ_INT(gs_tune_order(s, 0), 1);   /* nor the candidate's order */
    CHECK(s->pairs == 0 && s->calls == 0 && s->idle == 1 && s->cand[0].enqueued == 0);
    /* a pair enqueued: charged, and the rotation moves past it */
    gs_tune_enqueued(s, 0, 1);
    gs_tune_call_done(s, 1);
    CHECK(s->pairs == 1 && s->calls == 1 && s->idle == 0 && s->cand[0].enqueued == 1);
    CHECK_EQ_INT(gs_tune_next(s, &lim), 1);
    CHECK_EQ_INT(gs_tune_order(s, 0), 0);
    /* the host far ahead of the GPU (it finishes a pair every 4 calls, a
     * call offers 4; at most 16 in flight), 11 candidates: every candidate
     * gets its pairs, however many calls carried nothing (the old budget,
     * 400 calls, ended such a run with most candidates short) */
    const double speed[] = {1.00, 1.06, 0.95, 0.90, 1.02, 1.12, 0.99, 1.01, 1.08, 0.98, 1.04};
    enum { N = sizeof speed / sizeof speed[0] };
    sim_t m;
    memset(&m, 0, sizeof m);
    m.speed = speed;
    m.pend_max = 16;
    m.gpu_every = 4;
    gs_tune_init(s);
    for (int i = 0; i < N; ++i)
        gs_tune_add(s, 0, i);
    while (!m.decided && m.calls < 100000)
        sim_call(&m, s, &lim);
    CHECK(m.decided);
    int timed = 0, all = 1;
    for (int i = 0; i < N; ++i) {
        timed += s->cand[i].n;
        all &= s->cand[i].n == lim.min_pairs;
    }
    CHECK(all);
    CHECK(m.calls > 400 && m.idle_calls > 0);
    CHECK_EQ_INT(s->pairs, N + timed);                  /* warm-ups and timed pairs, nothing else */
    CHECK_EQ_INT(s->calls, m.calls - m.idle_calls - 1); /* the last call decided */
    CHECK_EQ_INT(m.v.route, 5);
    /* hard bounds: a process that never finds room gives up after
     * max_idle_calls calls in a row, charged nothing */
    memset(&m, 0, sizeof m);
    m.speed = speed;
    gs_tune_init(s);
    gs_tune_add(s, 0, 0);
    while (!m.decided && m.calls < 100000)
        sim_call(&m, s, &lim);
    CHECK(m.decided && m.v.route == GS_TUNE_CUBLAS);
    CHECK_EQ_INT(m.calls, lim.max_idle_calls + 1);
    CHECK_EQ_INT(s->pairs, 0);
    /* ... and the pair and GPU-time budgets end it with what is in */
    gs_tune_init(s);
    gs_tune_add(s, 0, 0);
    s->gpu_ms = lim.max_gpu_ms;
    CHECK(gs_tune_next(s, &lim) < 0 && gs_tune_done(s, &lim));
    CHECK(lim.max_pairs >= GS_TUNE_CANDS_MAX * (lim.min_pairs + 1)); /* room for every candidate */
    free(s);
}

static const char *const sim_names[] = {"fam/c0", "fam/c1", "fam/c2", "fam/c3", "fam/c4", "fam/c5",
                                        "fam/c6", "fam/c7", "fam/c8", "fam/c9", "lt/algo=1,x=2"};

/* Candidates in the given order of sim_names' indices; the prior by name. */
static void sim_sig(gs_tune_sig_t *s, const int *order, int n, int prior)
{
    gs_tune_init(s);
    for (int i = 0; i < n; ++i) {
        gs_tune_add(s, 0, order[i]);
        if (order[i] == prior)
            gs_tune_set_prior(s, i);
    }
}

/* Runs processes of `per_process` calls each sharing the cache at path,
 * each resuming the last one's progress, until the signature is decided:
 * the calls made in all. Odd processes list the candidates in reverse. */
static int run_processes(const char *path, const double *speed, int n, int per_process,
                         gs_tune_sig_t *s, gs_tune_verdict_t *v, int *processes)
{
    const gs_tune_limits_t lim = gs_tune_default_limits();
    const gs_class_t cls = class_n(777);
    char msg[1024];
    int total = 0, fwd[GS_TUNE_CANDS_MAX], rev[GS_TUNE_CANDS_MAX];
    for (int i = 0; i < n; ++i)
        fwd[i] = i, rev[i] = n - 1 - i;
    unlink(path);
    for (*processes = 0; *processes < 200; ++*processes) {
        gs_tuned_reset();
        if (gs_tune_cache_open(path, "v", GS_TUNE_CACHE_WRITE, msg, sizeof msg))
            return -1;
        const int *order = *processes % 2 ? rev : fwd;
        const char *names[GS_TUNE_CANDS_MAX];
        for (int i = 0; i < n; ++i)
            names[i] = sim_names[order[i]];
        sim_sig(s, order, n, 0);
        char *text = gs_tune_progress_get(&cls, NULL);
        if (text && gs_tune_progress_apply(s, names, text) < 0)
            return -1;
        free(text);
        sim_t m;
        memset(&m, 0, sizeof m);
        double sp[GS_TUNE_CANDS_MAX];
        for (int i = 0; i < n; ++i)
            sp[i] = speed[order[i]];
        m.speed = sp;
        m.id = order;
        m.pend_max = 16;
        m.gpu_per_call = 4;
        while (!m.decided && m.calls < per_process)
            sim_call(&m, s, &lim);
        total += m.calls;
        if (m.decided) {
            *v = m.v;
            if (v->route >= 0)
                v->route = order[v->route];
            ++*processes;
            return total;
        }
        sim_finish(&m, s, m.n_pend, &lim); /* at exit: the pairs in flight */
        char *fields = malloc(1 << 16);
        if (!fields || gs_tune_progress_format(s, names, fields, 1 << 16) ||
            gs_tune_progress_put(&cls, fields, "sim", msg, sizeof msg)) {
            free(fields);
            return -1;
        }
        free(fields);
    }
    return -1;
}

/* An undecided signature's progress is kept in the cache and the next
 * process resumes it: the calls needed in total do not grow with the
 * number of processes. */
static void test_progress_resume(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/gs_tune_resume_%d", (int)getpid());
    const double speed[] = {1.00, 1.06, 0.95, 0.90, 1.02, 1.12, 0.99, 1.01, 1.08, 0.98, 1.04};
    enum { N = sizeof speed / sizeof speed[0] };
    gs_tune_sig_t *one = calloc(1, sizeof *one), *many = calloc(1, sizeof *many);
    if (!CHECK(one && many))
        return;
    gs_tune_verdict_t v1, vn;
    int procs1 = 0, procs = 0;
    const int calls1 = run_processes(path, speed, N, 1000000, one, &v1, &procs1);
    CHECK_EQ_INT(procs1, 1);
    CHECK_EQ_INT(v1.route, 5);
    for (int per = 1; per <= 9; per += 4) {
        const int calls = run_processes(path, speed, N, per, many, &vn, &procs);
        CHECK(procs > 2);
        CHECK_EQ_INT(calls, calls1);
        CHECK_EQ_INT(vn.route, v1.route);
        CHECK(fabs(vn.gain - v1.gain) < 1e-5 && many->pairs == one->pairs);
    }
    /* the samples are the same pairs' (the last process listed them in
     * reverse when it was odd) */
    const int rev = procs % 2 == 0;
    int same = 1;
    for (int i = 0; i < N; ++i) {
        const gs_tune_cand_t *a = &one->cand[i], *b = &many->cand[rev ? N - 1 - i : i];
        same &= a->n == b->n && a->state == b->state && a->checked == b->checked;
        for (int k = 0; k < a->n && k < b->n; ++k)
            same &= fabs(a->log_ratio[k] - b->log_ratio[k]) < 1e-6 && a->first[k] == b->first[k];
    }
    CHECK(same);
    /* a slow candidate is pruned after 3 pairs: the processes never need
     * more calls than one (pairs in flight at exit are in before the next) */
    const double slow[] = {1.00, 0.60, 1.10, 0.99};
    const int c1 = run_processes(path, slow, 4, 1000000, one, &v1, &procs1);
    const int cn = run_processes(path, slow, 4, 2, many, &vn, &procs);
    CHECK(c1 > 0 && cn > 0 && cn <= c1 && procs > 2);
    CHECK_EQ_INT(vn.route, 2);
    /* a malformed text changes nothing */
    const char *names[] = {"fam/c0"};
    sim_sig(one, (const int[]){0}, 1, 0);
    const char *bad_sample = "pairs=3\tus=10\tcalls=1\tcand=fam/c0:live:1:c5,x7";
    CHECK_EQ_INT(gs_tune_progress_apply(one, names, bad_sample), -1);
    CHECK_EQ_INT(gs_tune_progress_apply(one, names, "pairs=3\tus=10"), -1);
    CHECK(one->cand[0].n == 0 && one->pairs == 0);
    /* a candidate this process does not have is left out; one it has
     * takes its samples, state and comparison */
    const char *other = "pairs=9\tus=2500\tcalls=3\tcand=gone/x:live:1:c1\t"
                        "cand=fam/c0:pruned:1:c-300000,r-250000,c-280000";
    CHECK_EQ_INT(gs_tune_progress_apply(one, names, other), 1);
    CHECK(one->cand[0].n == 3 && one->cand[0].state == GS_CAND_SLOW && one->cand[0].checked);
    CHECK(one->pairs == 9 && fabs(one->gpu_ms - 2.5) < 1e-9 && one->calls == 3);
    CHECK_EQ_INT(gs_tune_order(one, 0), 0); /* 2 candidate-first, 1 cuBLAS-first */
    free(one);
    free(many);
    unlink(path);
    gs_tuned_reset();
}

static long long reaped_pid(void)
{
    const pid_t p = fork();
    if (p == 0)
        _exit(0);
    waitpid(p, NULL, 0);
    return (long long)p;
}

static void append_claim(const char *path, const gs_class_t *c, const char *host, long long pid,
                         unsigned long long start, long long t)
{
    char hex[2 * sizeof *c + 1];
    const unsigned char *b = (const unsigned char *)c;
    for (size_t i = 0; i < sizeof *c; ++i)
        snprintf(hex + 2 * i, 3, "%02x", b[i]);
    char line[1024];
    snprintf(line, sizeof line, "claim\t%s\thost=%s\tpid=%lld\tstart=%llu\tt=%lld\t# by hand\n",
             hex, host, pid, start, t);
    append_text(path, line);
}

/* Processes sharing a cache tune a signature once: a claim names the
 * tuner; the others use the prior until its decision is in, and take the
 * claim over when its process is gone. */
static void test_claims(void)
{
    char path[64], msg[1024];
    snprintf(path, sizeof path, "/tmp/gs_tune_claims_%d", (int)getpid());
    unlink(path);
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "v", GS_TUNE_CACHE_WRITE, msg, sizeof msg), 0);
    gs_tune_owner_t self, holder;
    gs_tune_owner_self(&self);
    CHECK(self.pid == getpid() && self.start > 0 && self.host[0]);
    const gs_class_t x = class_n(501), y = class_n(502);
    /* another process claims x and keeps running */
    int ready[2], go[2];
    CHECK_EQ_INT(pipe(ready), 0);
    CHECK_EQ_INT(pipe(go), 0);
    const pid_t child = fork();
    if (child == 0) {
        char m[1024], c = 0;
        gs_tune_owner_t h;
        gs_tuned_reset();
        if (gs_tune_cache_open(path, "v", GS_TUNE_CACHE_WRITE, m, sizeof m) ||
            gs_tune_claim(&x, GS_TUNED_CUBLAS, "x", &h) != GS_CLAIM_OURS)
            _exit(2);
        if (write(ready[1], "c", 1) != 1 || read(go[0], &c, 1) != 1)
            _exit(3);
        /* then it decides x, against the prior cublas */
        const gs_tuned_t t = tuned("sgemm_simt", "sgemm_simt", 1.05);
        if (gs_tuned_put(&x, &t, "x", m, sizeof m))
            _exit(4);
        if (write(ready[1], "d", 1) != 1)
            _exit(5);
        pause(); /* killed */
        _exit(0);
    }
    char c = 0;
    CHECK(read(ready[0], &c, 1) == 1 && c == 'c');
    /* held: this process leaves x alone (dispatch's prior serves it) */
    memset(&holder, 0, sizeof holder);
    CHECK_EQ_INT(gs_tune_claim(&x, GS_TUNED_CUBLAS, "x", &holder), GS_CLAIM_HELD);
    CHECK(holder.pid == child && !strcmp(holder.host, self.host));
    CHECK(gs_tune_owner_alive(&holder, (long long)time(NULL)));
    /* y is free: ours, and ours again (no second claim line) */
    CHECK_EQ_INT(gs_tune_claim(&y, GS_TUNED_CUBLAS, "y", &holder), GS_CLAIM_OURS);
    CHECK_EQ_INT(gs_tune_claim(&y, GS_TUNED_CUBLAS, "y", &holder), GS_CLAIM_OURS);
    /* the claimer decides: read from the file's tail, x is decided */
    CHECK(write(go[1], "g", 1) == 1);
    CHECK(read(ready[0], &c, 1) == 1 && c == 'd');
    gs_tuned_t t;
    CHECK(!gs_tuned_find(&x, &t));
    CHECK_EQ_INT(gs_tune_cache_refresh(), 0);
    CHECK(gs_tuned_find(&x, &t) && !strcmp(t.family, "sgemm_simt") && !strcmp(t.prior, "cublas"));
    CHECK_EQ_INT(gs_tune_claim(&x, GS_TUNED_CUBLAS, "x", &holder), GS_CLAIM_DECIDED);
    /* a process whose prior for x is another one tunes x again: the
     * decision ended the claim */
    CHECK_EQ_INT(gs_tune_claim(&x, "pingpong/pingpong_128x128x64", "x", &holder), GS_CLAIM_OURS);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    /* a claimer killed before deciding: taken over */
    const gs_class_t z = class_n(503);
    const long long dead = reaped_pid();
    append_claim(path, &z, self.host, dead, 12345, (long long)time(NULL));
    CHECK_EQ_INT(gs_tune_claim(&z, GS_TUNED_CUBLAS, "z", &holder), GS_CLAIM_TAKEN_OVER);
    CHECK_EQ_INT(holder.pid, dead);
    /* a live pid that started at another time is another process: taken over */
    const gs_class_t w = class_n(504);
    append_claim(path, &w, self.host, (long long)getppid(), 999999999999ULL, (long long)time(NULL));
    CHECK_EQ_INT(gs_tune_claim(&w, GS_TUNED_CUBLAS, "w", &holder), GS_CLAIM_TAKEN_OVER);
    /* another host: held while it writes, taken over once silent for
     * GS_TUNE_CLAIM_FOREIGN_S */
    const gs_class_t f1 = class_n(505), f2 = class_n(506);
    const long long now = (long long)time(NULL);
    append_claim(path, &f1, "elsewhere", 4242, 99, now);
    append_claim(path, &f2, "elsewhere", 4242, 99, now - GS_TUNE_CLAIM_FOREIGN_S - 5);
    CHECK_EQ_INT(gs_tune_claim(&f1, GS_TUNED_CUBLAS, "f1", &holder), GS_CLAIM_HELD);
    CHECK(!strcmp(holder.host, "elsewhere"));
    CHECK_EQ_INT(gs_tune_claim(&f2, GS_TUNED_CUBLAS, "f2", &holder), GS_CLAIM_TAKEN_OVER);
    /* the claim lines this process wrote are in the file, with its pid */
    char *text = slurp(path);
    char mine[128];
    snprintf(mine, sizeof mine, "\thost=%s\tpid=%lld\t", self.host, self.pid);
    int claims = 0;
    for (const char *p = text; p && (p = strstr(p, "claim\t")); ++p)
        claims += strstr(p, "\n") > strstr(p, mine) && strstr(p, mine) != NULL;
    CHECK(claims >= 5); /* y, x (again), z, w, f2 */
    free(text);
    close(ready[0]), close(ready[1]), close(go[0]), close(go[1]);
    unlink(path);
    gs_tuned_reset();
}

/* Format 1 files are still read (their prior unknown), and a tuning
 * process rewrites them as format 2; compaction keeps decisions,
 * progress and live claims. */
static void test_format1_and_compaction(void)
{
    char path[64], src[512], msg[1024];
    snprintf(path, sizeof path, "/tmp/gs_tune_fmt_%d", (int)getpid());
    snprintf(src, sizeof src, "%s/tests/fuzz/corpus/tune_cache/valid", GS_SOURCE_DIR);
    char *v1 = slurp(src);
    if (!CHECK(v1 && strstr(v1, "\nformat 1\n")))
        return;
    FILE *f = fopen(path, "wb");
    fputs(v1, f);
    fclose(f);
    free(v1);
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "v", GS_TUNE_CACHE_READONLY, msg, sizeof msg), 0);
    CHECK_EQ_INT((int)gs_tuned_count(), 2);
    gs_class_t lt, cub;
    memset(&lt, 0, sizeof lt);
    memset(&cub, 0, sizeof cub);
    ((unsigned char *)&lt)[0] = 2; /* the corpus's two classes differ in their first byte */
    const unsigned char tail[] = {3, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy((unsigned char *)&lt + 8, tail, sizeof tail);
    memcpy((unsigned char *)&cub + 8, tail, sizeof tail);
    gs_tuned_t t;
    CHECK(gs_tuned_find(&lt, &t) && !strcmp(t.family, "cublaslt") && !strcmp(t.prior, "?"));
    /* a kernel decision of unknown prior serves; "cublas" serves only
     * where the prior forwards too */
    CHECK(gs_tuned_prior_matches(&t, "cublas") && gs_tuned_prior_matches(&t, "pingpong/p"));
    CHECK(gs_tuned_find(&cub, &t) && !strcmp(t.family, GS_TUNED_CUBLAS));
    CHECK(gs_tuned_prior_matches(&t, "cublas") && !gs_tuned_prior_matches(&t, "pingpong/p"));
    /* tuning use rewrites it as format 2, decisions kept */
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "v", GS_TUNE_CACHE_WRITE, msg, sizeof msg), 0);
    char *text = slurp(path);
    CHECK(text && strstr(text, "\nformat 2\n") && strstr(text, "\tprior=?\tvs_prior=1.0000\t"));
    free(text);
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "v", GS_TUNE_CACHE_READONLY, msg, sizeof msg), 0);
    CHECK(gs_tuned_count() == 2 && gs_tuned_find(&lt, &t) && !strcmp(t.prior, "?"));
    /* compaction: 200 decisions of one class, progress of another, a live
     * claim (this process), a dead one (another host, long silent) */
    unlink(path);
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "v", GS_TUNE_CACHE_WRITE, msg, sizeof msg), 0);
    const gs_class_t a = class_n(601), b = class_n(602), live = class_n(603), gone = class_n(604);
    for (int i = 0; i < 200; ++i) {
        const gs_tuned_t d = tuned("pingpong", "pingpong_128x128x64", 1.0 + i / 1000.0);
        gs_tuned_put(&a, &d, "", msg, sizeof msg);
    }
    const char *progress = "pairs=12\tus=3400\tcalls=3\tcand=fam/c0:live:1:c1000,r2000";
    CHECK_EQ_INT(gs_tune_progress_put(&b, progress, "b", msg, sizeof msg), 0);
    gs_tune_owner_t holder;
    CHECK_EQ_INT(gs_tune_claim(&live, GS_TUNED_CUBLAS, "live", &holder), GS_CLAIM_OURS);
    append_claim(path, &gone, "elsewhere", 1, 1, 1000);
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "v", GS_TUNE_CACHE_WRITE, msg, sizeof msg), 0);
    text = slurp(path);
    int sigs = 0, progs = 0, claims = 0;
    for (const char *p = text; p && (p = strstr(p, "\nsig\t")); ++p)
        ++sigs;
    for (const char *p = text; p && (p = strstr(p, "\nprogress\t")); ++p)
        ++progs;
    for (const char *p = text; p && (p = strstr(p, "\nclaim\t")); ++p)
        ++claims;
    CHECK(sigs == 1 && progs == 1 && claims == 1);
    if (sigs != 1 || progs != 1 || claims != 1)
        fprintf(stderr, "%s", text);
    CHECK(text && !strstr(text, "host=elsewhere"));
    free(text);
    CHECK(gs_tuned_find(&a, &t) && fabs(t.gain - 1.199) < 1e-9);
    gs_tune_owner_t by;
    char *p = gs_tune_progress_get(&b, &by);
    CHECK(p && !strcmp(p, progress) && by.pid == getpid());
    free(p);
    CHECK_EQ_INT(gs_tune_claim(&live, GS_TUNED_CUBLAS, "live", &holder), GS_CLAIM_OURS);
    CHECK_EQ_INT(gs_tune_claim(&gone, GS_TUNED_CUBLAS, "gone", &holder), GS_CLAIM_TAKEN_OVER);
    /* a decision ends its class's progress (and claim) */
    const gs_tuned_t d = tuned("sgemm_simt", "sgemm_simt", 1.03);
    gs_tuned_put(&b, &d, "b", msg, sizeof msg);
    CHECK(gs_tune_progress_get(&b, NULL) == NULL);
    /* a torn line from a writer that died: the next line starts after it */
    append_text(path, "progress\t00");
    const gs_class_t e = class_n(605);
    CHECK_EQ_INT(gs_tuned_put(&e, &d, "after torn", msg, sizeof msg), 0);
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "v", GS_TUNE_CACHE_READONLY, msg, sizeof msg), 0);
    CHECK(gs_tuned_find(&e, &t));
    CHECK_CONTAINS(msg, "1 malformed lines skipped");
    unlink(path);
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
    gs_routing_t r = {.mode = GS_MODE_ON, .policy = GS_POLICY_TABLE, .allowed = gs_candidates_all(), .tune = tune};
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
    /* decided against another prior (another table or policy since):
     * not reused; the prior serves, and online tuning tunes it again */
    gs_tuned_t other = tuned("sgemm_simt", "sgemm_simt", 1.08);
    snprintf(other.prior, sizeof other.prior, "pingpong/pingpong_128x128x64");
    gs_tuned_put(&p.cls, &other, "", msg, sizeof msg);
    dec = gs_dispatch(&p, &d, &cache);
    CHECK(!dec.family && !dec.tuned);
    dec = gs_dispatch(&p, &d, &online);
    CHECK(dec.tune_pending && !dec.tuned);
    CHECK_CONTAINS(dec.reason, "another prior");
    /* under the eligible policy the prior is a kernel: a decision that
     * forwards is reused only when it was made against that kernel */
    gs_routing_t elig = cache;
    elig.policy = GS_POLICY_ELIGIBLE;
    const gs_decision_t kernel_prior = gs_dispatch_prior(&p, &d, &elig);
    char prior_text[sizeof other.prior];
    CHECK(kernel_prior.family != NULL);
    gs_prior_text(&kernel_prior, &p, &d, prior_text, sizeof prior_text);
    CHECK(kernel_prior.family && !strncmp(prior_text, kernel_prior.family->name,
                                          strlen(kernel_prior.family->name)));
    gs_tuned_t fwd = tuned(GS_TUNED_CUBLAS, "as_called", 1.0);
    gs_tuned_put(&p.cls, &fwd, "", msg, sizeof msg); /* against cublas */
    dec = gs_dispatch(&p, &d, &elig);
    CHECK(dec.family == kernel_prior.family && !dec.tuned);
    snprintf(fwd.prior, sizeof fwd.prior, "%s", prior_text);
    gs_tuned_put(&p.cls, &fwd, "", msg, sizeof msg); /* against the kernel */
    dec = gs_dispatch(&p, &d, &elig);
    CHECK(!dec.family && dec.tuned);
    /* a format 1 decision (prior unknown) that forwards: not over a kernel
     * prior (the old rule wrote it whenever nothing beat cuBLAS) */
    snprintf(fwd.prior, sizeof fwd.prior, GS_TUNED_PRIOR_UNKNOWN);
    gs_tuned_put(&p.cls, &fwd, "", msg, sizeof msg);
    dec = gs_dispatch(&p, &d, &elig);
    CHECK(dec.family == kernel_prior.family && !dec.tuned);
    dec = gs_dispatch(&p, &d, &cache); /* the table forwards: it serves */
    CHECK(!dec.family && dec.tuned);
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

/* The sustained check: only calls long enough to load the GPU, blocks of
 * about the asked length within the call bounds, a settle part untimed,
 * and the verdict a median over rounds so one drifting round cannot carry
 * it. */
static void test_sustain(void)
{
    /* off, or a call too short for it */
    CHECK_EQ_INT(gs_tune_sustain_plan(1.0, 500.0, 0.0).calls, 0);
    CHECK_EQ_INT(gs_tune_sustain_plan(GS_SUSTAIN_MIN_MS / 2, 500.0, 400.0).calls, 0);
    CHECK_EQ_INT(gs_tune_sustain_plan(NAN, 500.0, 400.0).calls, 0);
    /* 0.1 ms calls, 400 ms blocks: 4000 calls, 1600 of them settling, three
     * rounds of two blocks */
    gs_sustain_plan_t p = gs_tune_sustain_plan(0.1, 500.0, 400.0);
    CHECK_EQ_INT(p.calls, 4000);
    CHECK_EQ_INT(p.settle, 1600);
    CHECK_EQ_INT(p.rounds, GS_SUSTAIN_ROUNDS);
    CHECK(fabs(p.cost_ms - 2 * GS_SUSTAIN_ROUNDS * 400.0) < 1e-6);
    /* a 100 ms call: the minimum block */
    CHECK_EQ_INT(gs_tune_sustain_plan(100.0, 500.0, 400.0).calls, GS_SUSTAIN_MIN_CALLS);
    /* a call just over the minimum: the maximum */
    CHECK_EQ_INT(gs_tune_sustain_plan(GS_SUSTAIN_MIN_MS, 500.0, 1e4).calls, GS_SUSTAIN_MAX_CALLS);

    /* a memory-bound call: left to its pairs */
    CHECK_EQ_INT(gs_tune_sustain_plan(0.1, GS_SUSTAIN_MIN_INTENSITY - 1, 400.0).calls, 0);
    CHECK(gs_tune_sustain_plan(0.1, GS_SUSTAIN_MIN_INTENSITY, 400.0).calls > 0);
    /* intensity: a decode GEMM (n = 16) is memory-bound, a square one is not;
     * a C that is read counts twice */
    gs_class_t k;
    memset(&k, 0, sizeof k);
    k.a_type = k.c_type = GS_DT_BF16;
    k.m = 14336, k.n = 16, k.k = 4096, k.batch = 1, k.beta_kind = GS_BETA_ZERO;
    CHECK(gs_tune_intensity(&k) < 16.0);
    k.m = k.n = k.k = 4096;
    CHECK(fabs(gs_tune_intensity(&k) - 2.0 * 4096 / 6.0) < 1e-9);
    k.beta_kind = GS_BETA_ONE;
    CHECK(fabs(gs_tune_intensity(&k) - 2.0 * 4096 / 8.0) < 1e-9);
    k.batch = 0;
    CHECK(gs_tune_intensity(&k) == 0.0);

    /* the median of prior / challenger over rounds */
    const double prior[3] = {1.00, 1.00, 1.00}, fast[3] = {0.95, 0.99, 0.90};
    CHECK(fabs(gs_tune_sustain_ratio(prior, fast, 3) - 1.0 / 0.95) < 1e-12);
    /* one round far off does not decide it */
    const double one_off[3] = {1.02, 0.80, 1.01};
    CHECK(gs_tune_sustain_ratio(prior, one_off, 3) < 1.0);
    /* a missing time: no verdict */
    const double missing[3] = {0.9, 0.0, 0.9};
    CHECK(gs_tune_sustain_ratio(prior, missing, 3) == 0.0);
    CHECK(gs_tune_sustain_ratio(prior, fast, 0) == 0.0);
    /* even rounds: the mean of the middle two */
    const double p4[4] = {1, 1, 1, 1}, c4[4] = {0.5, 1.0, 0.8, 2.0};
    CHECK(fabs(gs_tune_sustain_ratio(p4, c4, 4) - 0.5 * (1.0 + 1.25)) < 1e-12);

    /* its cost under the share: nothing before a time is known, then
     * what the calls have earned */
    gs_tune_share_t sh = {0};
    CHECK(gs_tune_share_allows_ms(&sh, 1e9, 0.0));
    CHECK(!gs_tune_share_allows_ms(&sh, 1.0, 0.25));
    gs_tune_share_call(&sh);
    gs_tune_share_pair(&sh, 2.0, 1.0);
    for (int i = 1; i < 100; ++i)
        gs_tune_share_call(&sh);
    CHECK(gs_tune_share_allows_ms(&sh, 23.0, 0.25));  /* 2 + 23 <= 25 */
    CHECK(!gs_tune_share_allows_ms(&sh, 23.5, 0.25));
}

/* The sustained check is one lump (seconds of GPU time) that a short
 * process's calls never earn under the share: the credit they earn and do
 * not spend travels in the progress text, so the check runs after the same
 * total number of calls however they are split into processes. */
static void test_share_credit(void)
{
    const double share = 0.25, call_ms = 5.5, pair_ms = 12.0, lump_ms = 2400.0;
    int single = 0, split = 0, processes = 0;
    for (int mode = 0; mode < 2; ++mode) {
        double carried = 0.0, carried_call = 0.0;
        int total = 0, done = 0;
        while (!done && total < 100000) {
            gs_tune_share_t sh = {0};
            sh.carried_ms = carried;
            sh.carried_call_ms = carried_call;
            const int calls = mode == 0 ? 100000 : 27; /* the LM head: 27 calls a run */
            for (int i = 0; i < calls && !done; ++i) {
                gs_tune_share_call(&sh);
                ++total;
                /* the first process's pairs give the call's time; later
                 * ones carry it (their pairs are all in) */
                if (sh.n == 0 && !(carried_call > 0.0))
                    gs_tune_share_pair(&sh, pair_ms, call_ms);
                if (gs_tune_share_allows_ms(&sh, lump_ms, share))
                    done = 1;
            }
            /* progress saved at exit, through the text and back */
            gs_tune_sig_t sig;
            gs_tune_init(&sig);
            sig.credit_ms = gs_tune_share_credit(&sh, share);
            sig.call_ms = gs_tune_share_call_ms(&sh);
            char text[256];
            const char *const names[1] = {NULL};
            if (!CHECK(!gs_tune_progress_format(&sig, names, text, sizeof text)))
                return;
            gs_tune_sig_t back;
            gs_tune_init(&back);
            CHECK(gs_tune_progress_apply(&back, names, text) == 0);
            CHECK(fabs(back.credit_ms - sig.credit_ms) < 1e-3);
            CHECK(fabs(back.call_ms - call_ms) < 1e-6);
            carried = back.credit_ms;
            carried_call = back.call_ms;
            processes += mode == 1;
        }
        *(mode == 0 ? &single : &split) = total;
    }
    /* 2400 ms at 25% of 5.5 ms calls, plus the first pair: about 1755 calls,
     * however split */
    CHECK(single > 1700 && single < 1800);
    printf("share credit: %d calls in one process, %d over short ones\n", single, split);
    CHECK(split >= single && split <= single + 1);
    CHECK(processes > 50);
    /* no credit without a share; never negative */
    gs_tune_share_t none = {0};
    none.calls = 10;
    none.call_ms = 1.0;
    none.n = 1;
    CHECK(gs_tune_share_credit(&none, 0.0) == 0.0);
    none.pairs_ms = 100.0;
    CHECK(gs_tune_share_credit(&none, 0.25) == 0.0);
    /* a text without credit_us (older progress) reads as no credit */
    gs_tune_sig_t old;
    gs_tune_init(&old);
    old.credit_ms = 7.0;
    const char *const names[1] = {NULL};
    CHECK(gs_tune_progress_apply(&old, names, "pairs=3\tus=100\tcalls=2") == 0);
    CHECK(old.credit_ms == 0.0 && old.pairs == 3);
    CHECK(gs_tune_progress_apply(&old, names, "pairs=3\tus=100\tcalls=2\tcredit_us=x") == -1);
}

/* GEMMSHIM_TUNE_SHARE: a signature's pairs take at most `share` of the GPU
 * time its own calls take in a process, whatever the pairs cost, so a
 * tuning run keeps 1 / (1 + share) of plain; the calls needed in all do not
 * depend on how they are split into processes. */
static void test_share(void)
{
    gs_tune_share_t sh = {0};
    /* no limit */
    CHECK(gs_tune_share_allows(&sh, 5, 0.0));
    /* the first pair goes before anything is known, then nothing until its times are in */
    gs_tune_share_call(&sh);
    CHECK(gs_tune_share_allows(&sh, 0, 0.25));
    CHECK(!gs_tune_share_allows(&sh, 1, 0.25));
    /* calls of 1 ms; a pair costs 2.5 ms (two runs of one call, the flushes,
     * the spin): at 25% it fits after every 10 calls */
    gs_tune_share_pair(&sh, 2.5, 1.0);
    CHECK(!gs_tune_share_allows(&sh, 0, 0.25)); /* 2.5 ms spent on 1 call */
    for (int i = 1; i < 10; ++i)
        gs_tune_share_call(&sh);
    CHECK(gs_tune_share_allows(&sh, 0, 0.25));  /* 10 calls: 2.5 ms allowed */
    CHECK(!gs_tune_share_allows(&sh, 1, 0.25)); /* but not with one in flight */

    /* One process of 4000 calls and ten of 400 tune with the same number
     * of pairs, and the pairs never take more than the share plus one pair. */
    int pairs_one = 0, pairs_ten = 0;
    double worst = 0.0;
    for (int proc = 0; proc < 11; ++proc) {
        gs_tune_share_t p = {0};
        const int calls = proc == 0 ? 4000 : 400;
        int pairs = 0;
        for (int i = 0; i < calls; ++i) {
            gs_tune_share_call(&p);
            while (gs_tune_share_allows(&p, 0, 0.25)) {
                gs_tune_share_pair(&p, 2.5, 1.0);
                ++pairs;
            }
            const double over = p.pairs_ms - 0.25 * (double)p.calls * 1.0;
            worst = over > worst ? over : worst;
        }
        if (proc == 0)
            pairs_one = pairs;
        else
            pairs_ten += pairs;
    }
    CHECK(pairs_one == 401);          /* floor(0.25 * 4000 / 2.5) + the first */
    CHECK(pairs_ten == 10 * 41);      /* the first pair of each process is the only extra */
    CHECK(worst <= 2.5);
}

int main(void)
{
    test_rule();
    test_prior_rule();
    test_budget_pending();
    test_share();
    test_sustain();
    test_share_credit();
    test_progress_resume();
    test_claims();
    test_format1_and_compaction();
    test_cache_file();
    test_cache_numeric_locale();
    test_compaction();
    test_concurrent_writers();
    test_dispatch_tuned();
    test_load_buffer();
    test_class_map();
    return GS_TEST_DONE();
}
