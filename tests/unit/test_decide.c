/* gs_decide (shim/serve/gs_decide.c): the per-thread decision cache answers exactly
 * what gs_dispatch answers, for repeated and for changed problems, and
 * forgets what a table load or a routing change made stale. */
#include "gs_decide.h"
#include "gs_kernels.h"
#include "dispatch_fixtures.h"
#include "gs_test.h"

#include <stdio.h>
#include <stdlib.h>

/* The shim classifies every problem it describes; problems built or
 * changed by hand here are classified just before they are decided. */
static gs_decision_t decide(gs_problem_t *p, const gs_device_t *d, const gs_routing_t *r)
{
    gs_problem_classify(p);
    return gs_decide(p, d, r);
}

static const float one = 1.f, zero = 0.f;

static uint64_t rng = 12345;
static int64_t pick(int64_t lo, int64_t hi)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (int64_t)((rng >> 33) % (uint64_t)(hi - lo + 1));
}

static gs_problem_t random_problem(void)
{
    static const gs_dtype_t types[] = {GS_DT_F32, GS_DT_BF16, GS_DT_F16};
    gs_problem_t p;
    memset(&p, 0, sizeof p);
    p.entry = (gs_entry_t)pick(0, GS_EP_COUNT - 1);
    p.a_type = p.b_type = types[pick(0, 2)];
    p.c_type = pick(0, 1) ? p.a_type : GS_DT_F32;
    p.compute = pick(0, 5) ? GS_CT_F32 : GS_CT_F32_TF32;
    p.scalar_type = GS_DT_F32;
    p.trans_a = (gs_op_t)pick(0, 1);
    p.trans_b = (gs_op_t)pick(0, 1);
    p.m = pick(1, 3) == 1 ? pick(1, 64) : 64 * pick(1, 128);
    p.n = pick(0, 2) ? pick(1, 64) : 64 * pick(1, 128);
    p.k = 64 * pick(1, 1024);
    int64_t ra = p.trans_a ? p.k : p.m, rb = p.trans_b ? p.n : p.k;
    p.lda = ra + 8 * pick(0, 1);
    p.ldb = rb + 8 * pick(0, 1);
    p.ldc = p.m + 8 * pick(0, 1);
    p.batch = pick(1, 2);
    p.stride_a = p.lda * (p.trans_a ? p.m : p.k);
    p.stride_b = p.ldb * (p.trans_b ? p.k : p.n);
    p.stride_c = p.ldc * p.n;
    uintptr_t base = 0x7f0000000000ull;
    p.A = (const void *)(base + 0x100000 + 2 * (uintptr_t)pick(0, 1));
    p.B = (const void *)(base + 0x200000);
    p.C = (void *)(base + 0x300000 + 8 * (uintptr_t)pick(0, 1));
    p.alpha = &one;
    p.beta = pick(0, 3) ? &zero : &one;
    if (p.entry == GS_EP_LT_MATMUL && pick(0, 1)) {
        p.bias = (const void *)(base + 0x400000);
        p.bias_type = p.c_type;
    }
    return p;
}

static int same(const gs_decision_t *a, const gs_decision_t *b)
{
    return a->route == b->route && a->family == b->family && a->config == b->config &&
           a->table_ratio == b->table_ratio && !strcmp(a->reason, b->reason);
}

int main(void)
{
    gs_config_t c = defaults();
    gs_device_t d = device(9, 0, 132);
    gs_routing_t policies[2] = {c.routing, c.routing};
    policies[1].policy = GS_POLICY_ELIGIBLE;

    /* 1. the cache's answer is gs_dispatch's, first and second time */
    int mismatches = 0, routed = 0;
    for (int i = 0; i < 3000; ++i) {
        gs_problem_t p = random_problem();
        const gs_routing_t *r = &policies[i & 1];
        gs_problem_classify(&p);
        gs_decision_t want = gs_dispatch(&p, &d, r);
        gs_decision_t got1 = decide(&p, &d, r), got2 = decide(&p, &d, r);
        mismatches += !same(&want, &got1) || !same(&want, &got2);
        routed += want.route != GS_ROUTE_FORWARD;
    }
    CHECK_EQ_INT(mismatches, 0);
    CHECK(routed > 200); /* the sample does exercise routed decisions (299 of 3000 with
                          * the built-in table, matching m and n one by one) */
    unsigned long long hits, misses;
    gs_decide_counts(&hits, &misses);
    CHECK(hits >= 3000);

    /* 1b. an application's cycle of signatures stays cached: 64 signatures
     * called in turn, three rounds, miss only in the first. (A direct-mapped
     * table of 64 slots missed on every call of two signatures sharing a
     * slot: two of the fake cuBLAS sample application's four.) */
    {
        gs_problem_t cyc[64];
        for (int i = 0; i < 64; ++i) {
            cyc[i] = random_problem();
            cyc[i].m = 1000 + i; /* distinct signatures */
            cyc[i].ldc = cyc[i].m + 8;
            cyc[i].lda = cyc[i].trans_a ? cyc[i].k : cyc[i].m;
            cyc[i].stride_c = cyc[i].ldc * cyc[i].n;
            cyc[i].stride_a = cyc[i].lda * (cyc[i].trans_a ? cyc[i].m : cyc[i].k);
            gs_problem_classify(&cyc[i]);
        }
        unsigned long long h0, m0, h1, m1;
        gs_decide_counts(&h0, &m0);
        int wrong = 0;
        for (int round = 0; round < 3; ++round)
            for (int i = 0; i < 64; ++i) {
                gs_decision_t got = gs_decide(&cyc[i], &d, &policies[1]);
                gs_decision_t want = gs_dispatch(&cyc[i], &d, &policies[1]);
                wrong += !same(&got, &want);
            }
        gs_decide_counts(&h1, &m1);
        CHECK_EQ_INT(wrong, 0);
        CHECK_EQ_INT((int)(m1 - m0), 64);
        CHECK_EQ_INT((int)(h1 - h0), 128);
    }

    /* 2. the same shape with C 8 bytes off 16-byte alignment is another key:
     * with beta != 0 the pingpong kernel (C read by TMA) cannot take it; with
     * beta == 0 it stores that C directly */
    gs_problem_t p;
    memset(&p, 0, sizeof p);
    p.entry = GS_EP_GEMMEX;
    p.a_type = p.b_type = p.c_type = GS_DT_BF16;
    p.compute = GS_CT_F32;
    p.scalar_type = GS_DT_F32;
    p.trans_a = GS_OP_T;
    p.m = p.n = p.k = 4096;
    p.lda = p.ldb = p.ldc = 4096;
    p.batch = 1;
    p.A = (const void *)(uintptr_t)0x7f0000100000ull;
    p.B = (const void *)(uintptr_t)0x7f0000200000ull;
    p.C = (void *)(uintptr_t)0x7f0000300000ull;
    p.alpha = &one;
    p.beta = &zero;
    CHECK_EQ_INT(decide(&p, &d, &policies[1]).route, ROUTE_PINGPONG);
    p.beta = &one;
    gs_decision_t aligned = decide(&p, &d, &policies[1]);
    CHECK_EQ_INT(aligned.route, ROUTE_PINGPONG);
    p.C = (void *)(uintptr_t)0x7f0000300008ull;
    gs_decision_t off = decide(&p, &d, &policies[1]), want = gs_dispatch(&p, &d, &policies[1]);
    CHECK(same(&off, &want));
    CHECK(off.route != ROUTE_PINGPONG);
    p.beta = &zero;
    off = decide(&p, &d, &policies[1]);
    want = gs_dispatch(&p, &d, &policies[1]);
    CHECK(same(&off, &want));
    CHECK_EQ_INT(off.route, ROUTE_PINGPONG);

    /* 3. a routing change (GEMMSHIM_KERNELS) is part of the key */
    p.C = (void *)(uintptr_t)0x7f0000300000ull;
    gs_routing_t no_pingpong = policies[1];
    no_pingpong.allowed &= ~family_bits("pingpong");
    gs_decision_t d2 = decide(&p, &d, &no_pingpong);
    CHECK(d2.route != ROUTE_PINGPONG);

    /* 3b. regression: whether a host beta is zero is part of
     * the key. The 192x128 pingpong tile takes only beta == 0; a beta != 0
     * call of a shape first decided with beta == 0 was sent to it, refused
     * at launch, and fell back (test_pdl_chain with the tile forced). */
    {
        gs_routing_t only192 = policies[1];
        /* every other family still allowed, of pingpong only the 192x128 tile */
        only192.allowed = (only192.allowed & ~family_bits("pingpong")) |
                          pingpong_bit(GS_PINGPONG_192x128x64);
        gs_problem_t q = p;
        q.m = 8448; q.n = 9216; q.k = 512;
        q.lda = q.ldb = 512; q.ldc = 8448;
        float beta_v = 0.f; /* one address, its value changed: as an application does */
        q.beta = &beta_v;
        gs_decision_t z = decide(&q, &d, &only192);
        CHECK_EQ_INT(z.route, ROUTE_PINGPONG);
        CHECK_EQ_INT(z.config, GS_PINGPONG_192x128x64);
        beta_v = 1.f;
        gs_decision_t nz = decide(&q, &d, &only192), nz_want = gs_dispatch(&q, &d, &only192);
        CHECK(same(&nz, &nz_want));
        CHECK(nz.route != ROUTE_PINGPONG);
        beta_v = 0.f; /* and back: the beta == 0 decision again */
        gs_decision_t z2 = decide(&q, &d, &only192);
        CHECK(same(&z, &z2));
    }

    /* 4. a table load forgets decisions made with the old table */
    gs_decision_t before = decide(&p, &d, &policies[0]);
    char path[] = "/tmp/gs_test_decide_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "gemmshim-table 1\npingpong pingpong_128x128x64 90 bf16 TN 4096 4096 4096 1.50\n");
    fclose(f);
    char msg[256];
    CHECK_EQ_INT(gs_table_load(path, msg, sizeof msg), 0);
    remove(path);
    gs_decision_t after = decide(&p, &d, &policies[0]);
    want = gs_dispatch(&p, &d, &policies[0]);
    CHECK(same(&after, &want));
    CHECK_EQ_INT(after.route, ROUTE_PINGPONG);
    CHECK(after.table_ratio == 1.5);
    CHECK(!same(&before, &after));

    return GS_TEST_DONE();
}
