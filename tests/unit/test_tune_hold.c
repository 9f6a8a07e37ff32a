/* Signatures held at their prior (dispatch/gs_tune_hold.c, the C API's
 * gemmshim_hold_prior): the set itself (many classes, release inside a probe
 * run, every class at once, threads holding and asking at once), dispatch
 * serving a held signature's prior instead of its tuned decision and never
 * tuning it, nothing changed while tuning is off; and the tune cache's
 * optional seq= and was= fields of a decision settled in sequences. */
#include "dispatch_fixtures.h"
#include "gs_dispatch.h"
#include "gs_registry.h"
#include "gs_test.h"
#include "gs_tune_cache.h"
#include "gs_tune_hold.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static gs_class_t class_n(int64_t m)
{
    gs_problem_t p = fp32_nn(m, 64, 64);
    gs_problem_classify(&p);
    return p.cls;
}

static gs_routing_t routing(gs_tune_mode_t tune)
{
    gs_routing_t r = {.mode = GS_MODE_ON, .policy = GS_POLICY_TABLE, .allowed = gs_candidates_all(), .tune = tune};
    return r;
}

static void test_set(void)
{
    enum { N = 300 };
    gs_tune_hold(NULL, 0);
    const gs_class_t a = class_n(100);
    CHECK(!gs_tune_held(&a));
    unsigned g = gs_tune_hold_generation();
    CHECK_EQ_INT(gs_tune_hold(&a, 1), 0);
    CHECK(gs_tune_held(&a));
    CHECK(gs_tune_hold_generation() != g);
    g = gs_tune_hold_generation();
    CHECK_EQ_INT(gs_tune_hold(&a, 1), 0); /* again: nothing changes */
    CHECK_EQ_INT(gs_tune_hold_generation(), g);
    CHECK_EQ_INT(gs_tune_hold_count(), 1);
    /* many, grown past several sizes; every other one released, the rest
     * still found (removal inside probe runs moves later entries back) */
    for (int i = 0; i < N; ++i) {
        const gs_class_t c = class_n(1000 + i);
        CHECK_EQ_INT(gs_tune_hold(&c, 1), 0);
    }
    CHECK_EQ_INT(gs_tune_hold_count(), N + 1);
    for (int i = 0; i < N; i += 2) {
        const gs_class_t c = class_n(1000 + i);
        gs_tune_hold(&c, 0);
    }
    int right = 1;
    for (int i = 0; i < N; ++i) {
        const gs_class_t c = class_n(1000 + i);
        right &= gs_tune_held(&c) == (i % 2);
    }
    CHECK(right);
    CHECK_EQ_INT(gs_tune_hold_count(), N / 2 + 1);
    const gs_class_t other = class_n(77);
    CHECK(!gs_tune_held(&other));
    /* every class: held, whatever the set; released with it */
    CHECK_EQ_INT(gs_tune_hold(NULL, 1), 0);
    CHECK(gs_tune_held(&other));
    g = gs_tune_hold_generation();
    gs_tune_hold(NULL, 0);
    CHECK(gs_tune_hold_generation() != g);
    CHECK(!gs_tune_held(&other) && !gs_tune_held(&a));
    CHECK_EQ_INT(gs_tune_hold_count(), 0);
    g = gs_tune_hold_generation();
    gs_tune_hold(NULL, 0); /* nothing held: nothing changes */
    gs_tune_hold(&other, 0);
    CHECK_EQ_INT(gs_tune_hold_generation(), g);
}

/* Threads holding, releasing and asking at once (ThreadSanitizer's build
 * runs this too): each thread's own classes read back as it left them. */
static void *churn(void *arg)
{
    const int t = (int)(intptr_t)arg;
    int ok = 1;
    for (int round = 0; round < 200; ++round) {
        const gs_class_t c = class_n(5000 + 100 * t + round % 50);
        gs_tune_hold(&c, 1);
        ok &= gs_tune_held(&c);
        gs_tune_hold(&c, 0);
        ok &= !gs_tune_held(&c);
        (void)gs_tune_hold_generation();
    }
    return (void *)(intptr_t)ok;
}

static void test_threads(void)
{
    enum { T = 4 };
    pthread_t th[T];
    for (int i = 0; i < T; ++i)
        pthread_create(&th[i], NULL, churn, (void *)(intptr_t)i);
    for (int i = 0; i < T; ++i) {
        void *ok;
        pthread_join(th[i], &ok);
        CHECK(ok != NULL);
    }
    CHECK_EQ_INT(gs_tune_hold_count(), 0);
}

static void test_dispatch(void)
{
    char msg[256];
    gs_tuned_reset();
    gs_tune_hold(NULL, 0);
    const gs_device_t d = device(9, 0, 132);
    gs_problem_t p = fp32_nn(1023, 1025, 1027); /* no table entry routes it: the prior forwards */
    gs_problem_classify(&p);
    const gs_routing_t off = routing(GS_TUNE_OFF), online = routing(GS_TUNE_ONLINE),
                       cache = routing(GS_TUNE_CACHE);
    gs_tuned_t t;
    memset(&t, 0, sizeof t);
    snprintf(t.family, sizeof t.family, "sgemm_simt");
    snprintf(t.config, sizeof t.config, "sgemm_simt");
    t.gain = t.lo95 = t.vs_prior = 1.08;
    snprintf(t.prior, sizeof t.prior, GS_TUNED_CUBLAS);
    gs_tuned_put(&p.cls, &t, "", msg, sizeof msg);
    gs_decision_t dec = gs_dispatch(&p, &d, &cache);
    CHECK(dec.family && dec.tuned);
    /* held: the prior, saying so */
    gs_tune_hold(&p.cls, 1);
    dec = gs_dispatch(&p, &d, &cache);
    CHECK(!dec.family && !dec.tuned && !dec.tune_pending);
    CHECK_CONTAINS(dec.reason, "held at its prior: ");
    const gs_decision_t prior = gs_dispatch_prior(&p, &d, &cache);
    CHECK_EQ_INT(dec.route, prior.route);
    /* tuning online: a held signature is not tuned either */
    gs_problem_t q = fp32_nn(1023, 1025, 1029); /* undecided */
    gs_problem_classify(&q);
    CHECK(gs_dispatch(&q, &d, &online).tune_pending);
    gs_tune_hold(&q.cls, 1);
    dec = gs_dispatch(&q, &d, &online);
    CHECK(!dec.tune_pending && !dec.tuned);
    /* tuning off: nothing to hold; the reason is the prior's own */
    dec = gs_dispatch(&p, &d, &off);
    CHECK(!dec.tuned && !strstr(dec.reason, "held"));
    /* released: the decision serves again; every class held: none does */
    gs_tune_hold(&p.cls, 0);
    CHECK(gs_dispatch(&p, &d, &cache).tuned);
    gs_tune_hold(NULL, 1);
    CHECK(!gs_dispatch(&p, &d, &cache).tuned);
    gs_tune_hold(NULL, 0);
    CHECK(gs_dispatch(&p, &d, &cache).tuned);
    CHECK(gs_dispatch(&q, &d, &online).tune_pending);
    gs_tuned_reset();
}

/* A decision settled in sequences: seq= and was= written after vs_prior=,
 * read back, kept by a rewrite; malformed ones refused. */
static void test_seq_fields(void)
{
    char path[64], msg[512];
    snprintf(path, sizeof path, "/tmp/gs_tune_hold_%d", (int)getpid());
    unlink(path);
    gs_tuned_reset();
    const gs_class_t c1 = class_n(300), c2 = class_n(400);
    CHECK_EQ_INT(gs_tune_cache_open(path, "gpu=X", GS_TUNE_CACHE_WRITE, msg, sizeof msg), 0);
    gs_tuned_t t;
    memset(&t, 0, sizeof t);
    snprintf(t.family, sizeof t.family, "pingpong");
    snprintf(t.config, sizeof t.config, "pingpong_128x128x64");
    t.gain = t.lo95 = 1.02;
    t.vs_prior = 1.0;
    snprintf(t.prior, sizeof t.prior, "pingpong/pingpong_128x128x64");
    t.seq_gain = 0.987;
    snprintf(t.was, sizeof t.was, "cublaslt/algo=31,tile=20");
    CHECK_EQ_INT(gs_tuned_put(&c1, &t, "reverted", msg, sizeof msg), 0);
    t.seq_gain = 1.013;
    t.was[0] = '\0'; /* checked in its sequences and kept: no was= */
    CHECK_EQ_INT(gs_tuned_put(&c2, &t, "kept", msg, sizeof msg), 0);
    FILE *f = fopen(path, "r");
    char text[4096] = "";
    const size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    CHECK_CONTAINS(text, "\tvs_prior=1.0000\tseq=0.9870\twas=cublaslt/algo=31,tile=20\t# reverted\n");
    CHECK_CONTAINS(text, "\tvs_prior=1.0000\tseq=1.0130\t# kept\n");
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_open(path, "gpu=X", GS_TUNE_CACHE_READONLY, msg, sizeof msg), 0);
    gs_tuned_t back;
    CHECK(gs_tuned_find(&c1, &back) && fabs(back.seq_gain - 0.987) < 1e-9 &&
          !strcmp(back.was, "cublaslt/algo=31,tile=20"));
    CHECK(gs_tuned_find(&c2, &back) && fabs(back.seq_gain - 1.013) < 1e-9 && !back.was[0]);
    /* an unknown optional field, a seq of 0, fields out of order: malformed */
    char hex[GS_CLASS_HEX_LEN + 1], buf[2048];
    gs_class_hex(&c1, hex);
    static const char *const bad[] = {"\tseq=1.0\tfoo=1", "\tseq=0", "\twas=x\tseq=1.0",
                                      "\tseq=1.0\twas=a\tseq=1.0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        const int len = snprintf(buf, sizeof buf,
                                 "# gemmshim tune cache\nformat 2\nvalidator gpu=X\nsig\t%s\tcublas\t"
                                 "as_called\tgain=1\tlo95=1\tpairs=0\tms=0\tprior=cublas\tvs_prior=1"
                                 "%s\t# x\n",
                                 hex, bad[i]);
        int fresh = 0;
        size_t lines = 0, skipped = 0;
        gs_tuned_reset();
        CHECK_EQ_INT(gs_tune_cache_load_buffer(buf, (size_t)len, "gpu=X", &fresh, &lines, &skipped),
                     0);
        CHECK_EQ_INT(skipped, 1);
    }
    gs_tuned_reset();
    unlink(path);
}

int main(void)
{
    test_set();
    test_threads();
    test_dispatch();
    test_seq_fields();
    return GS_TEST_DONE();
}
