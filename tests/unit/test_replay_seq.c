/* The sequence phase of offline tuning, its pure-C parts (tools/replay):
 * "seq" lines read and merged (gs_replay_seqs.c), the plan of what to time
 * and the suspects (gs_seq_plan.c), the comparison of interleaved rounds
 * and the rule that settles a class over every context it appears in
 * (gs_seq_settle.c). No GPU, no cuBLAS library. */
#include "gs_replay_sigs.h"
#include "gs_seq_plan.h"
#include "gs_seq_settle.h"
#include "gs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A "seq" line split at its tabs, as the signature reader gives it. */
static int add_line(gs_replay_seqs_t *q, const char *line)
{
    char buf[4096], *field[16];
    size_t n = 0;
    snprintf(buf, sizeof buf, "%s", line);
    for (char *p = buf; n < 16;) {
        field[n++] = p;
        p = strchr(p, '\t');
        if (!p)
            break;
        *p++ = '\0';
    }
    return gs_replay_seqs_add(q, field, n);
}

static void seq_lines(void)
{
    gs_replay_seqs_t q;
    memset(&q, 0, sizeof q);
    CHECK_EQ_INT(add_line(&q, "seq\tid=00000000000000aa\tcaptures=2\tgemms=3\tcomplete=1\t"
                              "sigs=0000000000000001,0000000000000002,0000000000000001"),
                 0);
    CHECK_EQ_INT(q.n, 1);
    CHECK(q.seq[0].id == 0xaa && q.seq[0].captures == 2 && q.seq[0].n == 3 && q.seq[0].complete);
    CHECK(q.seq[0].sig[0] == 1 && q.seq[0].sig[1] == 2 && q.seq[0].sig[2] == 1);
    /* the same sequence from another process: its captures add up */
    CHECK_EQ_INT(add_line(&q, "seq\tid=00000000000000aa\tcaptures=5\tgemms=3\tcomplete=1\t"
                              "sigs=0000000000000001,0000000000000002,0000000000000001"),
                 0);
    CHECK_EQ_INT(q.n, 1);
    CHECK_EQ_INT(q.seq[0].captures, 7);
    /* another, incomplete */
    CHECK_EQ_INT(add_line(&q, "seq\tid=00000000000000bb\tcaptures=1\tgemms=1\tcomplete=0\t"
                              "sigs=0000000000000003"),
                 0);
    CHECK_EQ_INT(q.n, 2);
    CHECK(!q.seq[1].complete);
    /* malformed: the id's content differs, gemms= not the ids' count, an
     * id too long or not hex, a field missing, no GEMM */
    static const char *const bad[] = {
        "seq\tid=00000000000000aa\tcaptures=1\tgemms=3\tcomplete=1\tsigs=1,2,2",
        "seq\tid=cc\tcaptures=1\tgemms=2\tcomplete=1\tsigs=1,2,3",
        "seq\tid=cc\tcaptures=1\tgemms=3\tcomplete=1\tsigs=1,2",
        "seq\tid=cc\tcaptures=1\tgemms=2\tcomplete=1\tsigs=1,",
        "seq\tid=cc\tcaptures=1\tgemms=1\tcomplete=1\tsigs=00000000000000001",
        "seq\tid=cc\tcaptures=1\tgemms=1\tcomplete=1\tsigs=xyz",
        "seq\tid=cc\tcaptures=1\tgemms=1\tsigs=1",
        "seq\tid=cc\tcaptures=-1\tgemms=1\tcomplete=1\tsigs=1",
        "seq\tid=cc\tcaptures=1\tgemms=0\tcomplete=1\tsigs=",
        "seq\tid=cc\tcaptures=1\tgemms=1\tcomplete=2\tsigs=1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        if (add_line(&q, bad[i]) != GS_REPLAY_SEQ_BAD)
            CHECK(!bad[i]);
    CHECK_EQ_INT(q.n, 2);
    CHECK_EQ_INT(q.seq[0].captures, 7);
    gs_replay_seqs_free(&q);
    CHECK(!q.seq && !q.n);
}

/* Signatures with ids 1..n (and their shapes), as read from a file. */
static void sigs_of(gs_replay_sigs_t *s, size_t n)
{
    memset(s, 0, sizeof *s);
    s->sig = calloc(n, sizeof *s->sig);
    s->n = s->cap = n;
    for (size_t i = 0; i < n; ++i) {
        s->sig[i].id = i + 1;
        s->sig[i].tunable = 1;
        snprintf(s->sig[i].shape, sizeof s->sig[i].shape, "sig%zu", i + 1);
    }
}

static void plan(void)
{
    gs_replay_sigs_t s;
    sigs_of(&s, 5);
    /* 0: ids 1 2 1 3 (1 and 3 changed); 1: incomplete; 2: an id not read;
     * 3: id 4 cannot be rebuilt; 4: only unchanged classes; 5: 3 and 2 */
    static const char *const lines[] = {
        "seq\tid=10\tcaptures=4\tgemms=4\tcomplete=1\tsigs=1,2,1,3",
        "seq\tid=11\tcaptures=1\tgemms=1\tcomplete=0\tsigs=1",
        "seq\tid=12\tcaptures=1\tgemms=2\tcomplete=1\tsigs=1,99",
        "seq\tid=13\tcaptures=1\tgemms=2\tcomplete=1\tsigs=4,1",
        "seq\tid=14\tcaptures=1\tgemms=2\tcomplete=1\tsigs=2,5",
        "seq\tid=15\tcaptures=2\tgemms=3\tcomplete=1\tsigs=3,2,3",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; ++i)
        CHECK_EQ_INT(add_line(&s.seqs, lines[i]), 0);
    const unsigned char can[5] = {1, 1, 1, 0, 1}, changed[5] = {1, 0, 1, 0, 0};
    gs_seq_plan_t p;
    CHECK_EQ_INT(gs_seq_plan_make(&p, &s, can, changed), 0);
    CHECK_EQ_INT(p.n, 6);
    CHECK_EQ_INT(p.timed, 2);
    CHECK(p.s[0].skip == NULL);
    CHECK(p.s[0].pos[0] == 0 && p.s[0].pos[1] == 1 && p.s[0].pos[2] == 0 && p.s[0].pos[3] == 2);
    CHECK_EQ_INT(p.s[0].n_changed, 2); /* 1 and 3, each once, in first-seen order */
    CHECK(p.s[0].changed[0] == 0 && p.s[0].changed[1] == 2);
    CHECK_CONTAINS(p.s[1].skip, "incomplete");
    CHECK_CONTAINS(p.s[2].skip, "not among the signatures read");
    CHECK_CONTAINS(p.s[3].skip, "cannot be rebuilt");
    CHECK_CONTAINS(p.s[4].skip, "keeps its prior");
    CHECK(p.s[5].skip == NULL && p.s[5].n_changed == 1 && p.s[5].changed[0] == 2);
    CHECK(gs_seq_plan_has(&p.s[0], 2) && !gs_seq_plan_has(&p.s[0], 1));
    /* sequence 0 faster tuned, 5 not: 5's changed class (3) is the suspect */
    unsigned char faster[6] = {1, 0, 0, 0, 0, 0}, suspect[5];
    CHECK_EQ_INT(gs_seq_plan_suspects(&p, faster, suspect, 5), 1);
    CHECK(suspect[2] && !suspect[0]);
    /* neither faster: both of 0's, and 5's again (counted once) */
    faster[0] = 0;
    CHECK_EQ_INT(gs_seq_plan_suspects(&p, faster, suspect, 5), 2);
    CHECK(suspect[0] && suspect[2] && !suspect[1]);
    gs_seq_plan_free(&p);
    CHECK(!p.s && !p.n);
    gs_replay_sigs_free(&s);
}

/* rounds of base and variant: the variant `ratio` x the base, the base
 * drifting with the GPU's clock round to round, and small noise */
static gs_seq_cmp_t rounds_of(double base_ms, double ratio, double noise, size_t n)
{
    double b[64], v[64];
    unsigned st = 11;
    for (size_t r = 0; r < n; ++r) {
        st = st * 1103515245u + 12345u;
        const double clock = 1.0 + 0.05 * ((double)((st >> 8) & 0xff) / 255.0 - 0.5);
        const double jitter = noise * ((double)((st >> 16) & 0xff) / 255.0 - 0.5);
        b[r] = base_ms * clock;
        v[r] = base_ms * ratio * clock * (1.0 + jitter);
    }
    return gs_seq_compare(b, v, n);
}

static void compare(void)
{
    /* paired per round: the clock's drift (5%) cancels */
    gs_seq_cmp_t c = rounds_of(1.0, 1.02, 0.002, 15);
    CHECK(fabs(c.ratio - 1.02) < 0.003);
    CHECK(c.noise < 0.002);
    CHECK(gs_seq_clear(&c));
    CHECK(fabs(c.base_ms - 1.0) < 0.03);
    /* within the margin: a tie */
    c = rounds_of(1.0, 1.003, 0.001, 15);
    CHECK(!gs_seq_clear(&c));
    /* beyond the margin but within the rounds' noise: a tie */
    c = rounds_of(1.0, 1.01, 0.08, 15);
    CHECK(c.noise > 0.01);
    CHECK(!gs_seq_clear(&c));
    /* slower is clear too */
    c = rounds_of(2.0, 0.97, 0.001, 9);
    CHECK(c.ratio < 0.975 && gs_seq_clear(&c));
    /* an even count: the median between the middle two */
    const double b[4] = {1, 1, 1, 1}, v[4] = {1.0, 1.1, 1.2, 1.3};
    c = gs_seq_compare(b, v, 4);
    CHECK(fabs(c.ratio - 1.15) < 1e-12);
    CHECK(fabs(c.noise - (1.225 - 1.075) / 2) < 1e-12);
}

static gs_seq_ctx_t ctx(double weight, double base_ms, double ratio)
{
    gs_seq_ctx_t x;
    memset(&x, 0, sizeof x);
    x.weight = weight;
    x.cmp.base_ms = base_ms;
    x.cmp.var_ms = base_ms * ratio;
    x.cmp.ratio = ratio;
    return x;
}

static void settle(void)
{
    /* loses in its one sequence, never called eagerly: the prior */
    gs_seq_ctx_t x[3] = {ctx(6, 1.0, 0.98)};
    gs_seq_class_t c = {0.0, 1.05, x, 1};
    gs_seq_verdict_t v = gs_seq_settle(&c);
    CHECK(!v.keep);
    CHECK(fabs(v.graph_ms - 6 * -0.02) < 1e-12);
    CHECK(fabs(v.seq_gain - 0.98) < 1e-12);
    /* helps there: kept */
    x[0] = ctx(6, 1.0, 1.02);
    v = gs_seq_settle(&c);
    CHECK(v.keep && v.seq_gain > 1.0);
    /* a tie in the sequence and nothing eager: the prior, the incumbent */
    x[0] = ctx(6, 1.0, 1.002);
    v = gs_seq_settle(&c);
    CHECK(!v.keep && v.graph_ms == 0.0);
    /* a tie, and it gains in its eager calls: kept */
    c.eager_ms = 10.0;
    v = gs_seq_settle(&c);
    CHECK(v.keep);
    CHECK(fabs(v.eager_ms - 10.0 * (1 - 1 / 1.05)) < 1e-12);
    /* loses in a sequence by less than the eager calls gain: kept; by more
     * (the sequence replayed often): the prior */
    x[0] = ctx(6, 1.0, 0.98);
    v = gs_seq_settle(&c); /* -0.12 ms against +0.476 ms */
    CHECK(v.keep);
    x[0] = ctx(600, 1.0, 0.98);
    v = gs_seq_settle(&c);
    CHECK(!v.keep);
    /* several sequences, weighted by their replays: the heavy one decides */
    c.eager_ms = 0.0;
    x[0] = ctx(100, 1.0, 0.99);   /* loses 0.01 ms a replay, 100 replays */
    x[1] = ctx(1000, 0.5, 1.004); /* a tie: counts 0 */
    x[2] = ctx(10, 2.0, 1.03);    /* gains 0.06 ms a replay, 10 replays */
    c.ctx = x;
    c.n_ctx = 3;
    v = gs_seq_settle(&c);
    CHECK(!v.keep); /* -1.0 + 0 + 0.6 */
    CHECK(fabs(v.graph_ms - (-1.0 + 0.6)) < 1e-9);
    /* the gain reported is as measured, ties included */
    const double tuned = 100 * 1.0 + 1000 * 0.5 + 10 * 2.0;
    const double prior = 100 * 0.99 + 1000 * 0.5 * 1.004 + 10 * 2.0 * 1.03;
    CHECK(fabs(v.seq_gain - prior / tuned) < 1e-12);
    x[2] = ctx(100, 2.0, 1.03); /* replayed more: +6 */
    v = gs_seq_settle(&c);
    CHECK(v.keep);
    /* measured nowhere: it stays as decided */
    c.n_ctx = 0;
    v = gs_seq_settle(&c);
    CHECK(v.keep && v.seq_gain == 0.0);
}

/* Through the signature reader: sig ids, seq lines merged over files, a
 * malformed seq line counted with the malformed lines. */
static void files(void)
{
    char path[2][64];
    /* a class's hex from the record's encoder is not needed here: the
     * reader checks only that it decodes, so take the smallest valid one,
     * all zeros */
    char hex[2 * sizeof(gs_class_t) + 1];
    memset(hex, '0', sizeof hex - 1);
    hex[sizeof hex - 1] = '\0';
    for (int f = 0; f < 2; ++f) {
        snprintf(path[f], sizeof path[f], "/tmp/gs_test_replay_seq_%d_%d", (int)getpid(), f);
        FILE *out = fopen(path[f], "w");
        fprintf(out, "gemmshim-signatures\tformat=1\tgpu=H200\n"
                     "sig\t%s\tid=00000000000000f1\tcalls=10\tcaptured=8\ttimed=2\tms=1.0\t"
                     "tunable=1\t# a\n"
                     "seq\tid=0000000000000042\tcaptures=3\tgemms=2\tcomplete=1\t"
                     "sigs=00000000000000f1,00000000000000f1\n"
                     "seq\tid=43\tcaptures=1\n",
                hex);
        fclose(out);
    }
    gs_replay_sigs_t s;
    memset(&s, 0, sizeof s);
    char msg[256];
    for (int f = 0; f < 2; ++f)
        CHECK_EQ_INT(gs_replay_sigs_read(&s, path[f], msg, sizeof msg), 0);
    CHECK_EQ_INT(s.n, 1);
    CHECK(s.sig[0].id == 0xf1 && s.sig[0].calls == 20 && s.sig[0].captured == 16);
    CHECK_EQ_INT(s.seqs.n, 1);
    CHECK(s.seqs.seq[0].captures == 6 && s.seqs.seq[0].n == 2);
    CHECK_EQ_INT(s.bad, 2);
    gs_replay_sigs_free(&s);
    for (int f = 0; f < 2; ++f)
        unlink(path[f]);
}

/* The last resort for a sequence still slower after the one-at-a-time
 * reverts: a class goes back unless its eager calls gain more than the
 * sequence loses; a tie goes to the prior. */
static void fallback(void)
{
    CHECK(gs_seq_fallback_reverts(3.6, 0.25));   /* the sequence's loss dominates */
    CHECK(!gs_seq_fallback_reverts(1.0, 11.4));  /* eager calls gain more */
    CHECK(gs_seq_fallback_reverts(1.0, 1.0));    /* a tie: the prior */
    CHECK(gs_seq_fallback_reverts(0.5, -0.2));   /* no eager gain at all */
    CHECK(gs_seq_fallback_reverts(0.5, NAN));    /* unknown: the prior */
}

int main(void)
{
    seq_lines();
    files();
    plan();
    compare();
    settle();
    fallback();
    return GS_TEST_DONE();
}
