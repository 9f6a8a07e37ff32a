/* The families' plans (dispatch/gs_family.h), host code, no GPU: over a
 * grid of problems and devices, every family's plan is deterministic and
 * decides what the kernel's own planner decides (the kernel name and the
 * workspace of *_name / *_workspace_bytes, the path run took before it read
 * the plan); run refuses a short workspace with GS_RUN_NO_WORKSPACE and a
 * plan it did not make with cudaErrorInvalidValue, before touching the
 * GPU. */
#include "dispatch_fixtures.h"
#include "gs_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ERR_INVALID_VALUE = 1 }; /* cudaErrorInvalidValue */

static int plans, with_ws, refusals;
static int split_plans, streamk_plans, skinny_ws_plans, sgemm_split_plans;

/* A bf16 / fp16 / fp32 problem m x n x k, tight leading dimensions, aligned
 * dummy pointers (nothing is dereferenced), host scalars 1 and 0. */
static gs_problem_t problem(gs_dtype_t in, gs_dtype_t out, gs_op_t ta, gs_op_t tb, int64_t m,
                            int64_t n, int64_t k, int64_t batch)
{
    gs_problem_t p = fp32_nn(m, n, k);
    p.entry = batch > 1 ? GS_EP_GEMMEX_STRIDED : in == GS_DT_F32 ? GS_EP_SGEMM : GS_EP_GEMMEX;
    p.a_type = p.b_type = in;
    p.c_type = out;
    p.compute = GS_CT_F32;
    p.trans_a = ta;
    p.trans_b = tb;
    p.lda = ta == GS_OP_N ? m : k;
    p.ldb = tb == GS_OP_N ? k : n;
    p.ldc = m;
    p.batch = batch;
    p.stride_a = p.lda * (ta == GS_OP_N ? k : m);
    p.stride_b = p.ldb * (tb == GS_OP_N ? n : k);
    p.stride_c = p.ldc * n;
    p.pdl = 1;
    gs_problem_classify(&p);
    return p;
}

/* One plan of f (config) for p on d, from a zeroed plan. */
static gs_plan_t plan_of(const gs_family_t *f, int config, const gs_problem_t *p,
                         const gs_device_t *d)
{
    gs_plan_t pl;
    memset(&pl, 0, sizeof pl);
    pl.family = f;
    pl.config = config;
    f->plan(p, d, &pl);
    return pl;
}

/* What the kernel's own planner says of p: name and workspace. */
static void old_path(const gs_family_t *f, int config, const gs_problem_t *p, const gs_device_t *d,
                     char *name, size_t name_size, size_t *ws)
{
    const char *n = "?";
    if (f == FAMILY_PINGPONG) {
        n = gs_pingpong_kernel_name(p, d, (gs_pingpong_config_t)config);
        *ws = gs_pingpong_workspace_bytes(p, d, (gs_pingpong_config_t)config);
    } else if (f == FAMILY_SKINNY) {
        n = gs_skinny_name(p, d);
        *ws = gs_skinny_workspace_bytes(p, d);
    } else if (f == FAMILY_SGEMM_SIMT) {
        n = gs_sgemm_simt_name(p, d);
        *ws = gs_sgemm_simt_workspace_bytes(p, d);
    }
    snprintf(name, name_size, "%s", n);
}

/* run's refusals, all before any CUDA call. */
static void check_refusals(const gs_family_t *f, const gs_plan_t *pl, const gs_problem_t *p,
                           const gs_device_t *d)
{
    gs_problem_t q = *p;
    /* a plan the family did not make */
    gs_plan_t blank;
    memset(&blank, 0, sizeof blank);
    blank.family = f;
    blank.config = pl->config;
    CHECK_EQ_INT(f->run(&blank, &q, d), ERR_INVALID_VALUE);
    ++refusals;
    if (!pl->workspace_bytes)
        return;
    /* none, one byte short, misaligned: one answer */
    q.workspace = NULL;
    q.workspace_size = 0;
    CHECK_EQ_INT(f->run(pl, &q, d), GS_RUN_NO_WORKSPACE);
    q.workspace = (void *)(uintptr_t)0x7f0000400000ull;
    q.workspace_size = pl->workspace_bytes - 1;
    CHECK_EQ_INT(f->run(pl, &q, d), GS_RUN_NO_WORKSPACE);
    q.workspace = (void *)(uintptr_t)0x7f0000400008ull;
    q.workspace_size = pl->workspace_bytes;
    CHECK_EQ_INT(f->run(pl, &q, d), GS_RUN_NO_WORKSPACE);
    refusals += 3;
}

/* Every configuration of every built-in family that takes p on d: the plan
 * twice (the same bytes), against the old path. */
static void check_problem(const gs_problem_t *p, const gs_device_t *d)
{
    const gs_family_t *fams[3] = {FAMILY_PINGPONG, FAMILY_SKINNY, FAMILY_SGEMM_SIMT};
    for (int fi = 0; fi < 3; ++fi) {
        const gs_family_t *f = fams[fi];
        if (!CHECK(f != NULL))
            continue;
        for (int c = 0; c < f->n_configs; ++c) {
            if (!f->can_implement(&p->cls, d, c))
                continue;
            const gs_plan_t a = plan_of(f, c, p, d);
            char name_a[96];
            snprintf(name_a, sizeof name_a, "%s", a.kernel ? a.kernel : "(null)");
            const gs_plan_t b = plan_of(f, c, p, d);
            char old_name[96];
            size_t old_ws = 0;
            old_path(f, c, p, d, old_name, sizeof old_name, &old_ws);
            ++plans;
            const int same = CHECK(a.family == f && a.config == c && b.family == f && b.config == c)
                             & CHECK(a.kernel && b.kernel && !strcmp(name_a, b.kernel))
                             & CHECK(a.workspace_bytes == b.workspace_bytes)
                             & CHECK(!memcmp(a.data.bytes, b.data.bytes, sizeof a.data.bytes))
                             & CHECK(!strcmp(name_a, old_name))
                             & CHECK(a.workspace_bytes == old_ws);
            if (!same)
                fprintf(stderr, "    %s config %d, %lldx%lldx%lld batch %lld %c%c on sm_%d%d/%d SMs: "
                                "plan %s %zu, old %s %zu\n",
                        f->name, c, (long long)p->m, (long long)p->n, (long long)p->k,
                        (long long)p->batch, "NT"[p->trans_a == GS_OP_T], "NT"[p->trans_b == GS_OP_T],
                        d->cc_major, d->cc_minor, d->sm_count, name_a, a.workspace_bytes, old_name,
                        old_ws);
            with_ws += a.workspace_bytes > 0;
            split_plans += strstr(name_a, "_splitk") != NULL;
            streamk_plans += f == FAMILY_PINGPONG && strstr(name_a, "_streamk") != NULL;
            skinny_ws_plans += f == FAMILY_SKINNY && a.workspace_bytes > 0;
            sgemm_split_plans += f == FAMILY_SGEMM_SIMT && a.workspace_bytes > 0;
            check_refusals(f, &a, p, d);
        }
    }
}

static const int64_t sizes[] = {1, 8, 16, 24, 32, 48, 64, 100, 128, 256, 512, 1000, 1024,
                                2048, 2304, 4096, 6144, 8192};
static const int64_t deep[] = {64, 256, 1024, 4096, 8192, 16384, 65536};

static void grid(const gs_device_t *d)
{
    const gs_dtype_t ins[3] = {GS_DT_BF16, GS_DT_F16, GS_DT_F32};
    for (int ii = 0; ii < 3; ++ii) {
        const gs_dtype_t in = ins[ii];
        for (int oi = 0; oi < 2; ++oi) {
            const gs_dtype_t out = oi ? GS_DT_F32 : in;
            if (in == GS_DT_F32 && oi)
                continue;
            for (int t = 0; t < 4; ++t) {
                const gs_op_t ta = t & 1 ? GS_OP_T : GS_OP_N, tb = t & 2 ? GS_OP_T : GS_OP_N;
                for (size_t mi = 0; mi < sizeof sizes / sizeof sizes[0]; ++mi)
                    for (size_t ni = 0; ni < sizeof sizes / sizeof sizes[0]; ni += 2)
                        for (size_t ki = 0; ki < sizeof deep / sizeof deep[0]; ++ki) {
                            /* big sizes only with modest k (the grid stays small) */
                            if (sizes[mi] * sizes[ni] > (int64_t)4096 * 4096 && deep[ki] > 8192)
                                continue;
                            const gs_problem_t p =
                                problem(in, out, ta, tb, sizes[mi], sizes[ni], deep[ki], 1);
                            check_problem(&p, d);
                        }
                /* batched */
                const gs_problem_t p = problem(in, out, ta, tb, 512, 32, 4096, 4);
                check_problem(&p, d);
                const gs_problem_t q = problem(in, out, ta, tb, 1024, 1024, 1024, 3);
                check_problem(&q, d);
            }
        }
    }
}

/* A C that TMA cannot store (an odd vocabulary's logits: ldc = 50257, or a
 * base 2 bytes past an aligned one, or an odd batch stride): the 128-row
 * pingpong tiles take it with a host beta of zero, stored directly, and
 * plan whole tiles only; beta != 0, device scalars, the 192-wide tile and
 * a C not aligned to its element are refused. */
static void test_direct_c(const gs_device_t *d)
{
    static const float one = 1.f;
    const gs_pingpong_config_t c128 = GS_PINGPONG_128x128x64, coop = GS_PINGPONG_COOP_256x128x64,
                               c192 = GS_PINGPONG_192x128x64;
    gs_problem_t p = problem(GS_DT_BF16, GS_DT_BF16, GS_OP_T, GS_OP_N, 50257, 8192, 1024, 1);
    p.ldc = 50257;
    CHECK(gs_pingpong_can_implement(class_of(&p), d, c128));
    CHECK(gs_pingpong_can_implement(class_of(&p), d, coop));
    CHECK(!gs_pingpong_can_implement(class_of(&p), d, c192));
    check_problem(&p, d);
    gs_problem_t q = p; /* beta = 1: C would be read through TMA */
    q.beta = &one;
    CHECK(!gs_pingpong_can_implement(class_of(&q), d, c128));
    q = p; /* device scalars: beta unknown at plan time */
    q.scalars_on_device = 1;
    CHECK(!gs_pingpong_can_implement(class_of(&q), d, c128));
    /* tight ldc, the base 2 bytes off: fp32 output is then misaligned to its element */
    q = problem(GS_DT_F16, GS_DT_F16, GS_OP_N, GS_OP_T, 4096, 4096, 4096, 1);
    q.C = (char *)q.C + 2;
    CHECK(gs_pingpong_can_implement(class_of(&q), d, coop));
    check_problem(&q, d);
    q = problem(GS_DT_F16, GS_DT_F32, GS_OP_N, GS_OP_T, 4096, 4096, 4096, 1);
    q.C = (char *)q.C + 2;
    CHECK(!gs_pingpong_can_implement(class_of(&q), d, coop));
    q.C = (char *)q.C + 2;
    CHECK(gs_pingpong_can_implement(class_of(&q), d, coop));
    /* deep k, few tiles: split-K with an aligned C; refused without (whole
     * tiles would run k = 65536 in one accumulation chain per tile) */
    q = problem(GS_DT_BF16, GS_DT_BF16, GS_OP_T, GS_OP_N, 256, 256, 65536, 1);
    gs_plan_t pl = plan_of(FAMILY_PINGPONG, c128, &q, d);
    CHECK(pl.workspace_bytes > 0 && strstr(pl.kernel, "_splitk"));
    q.ldc = 257;
    CHECK(!gs_pingpong_can_implement(class_of(&q), d, c128));
    CHECK(!gs_pingpong_can_implement(class_of(&q), d, coop));
    /* a ragged last wave: stream-K with an aligned C, whole tiles without */
    q = problem(GS_DT_BF16, GS_DT_BF16, GS_OP_T, GS_OP_N, 4096, 2304, 8192, 1);
    pl = plan_of(FAMILY_PINGPONG, coop, &q, d);
    const int had_streamk = pl.kernel && strstr(pl.kernel, "_streamk") != NULL;
    q.ldc = 4097;
    CHECK(gs_pingpong_can_implement(class_of(&q), d, coop));
    pl = plan_of(FAMILY_PINGPONG, coop, &q, d);
    CHECK(pl.workspace_bytes == 0 && !strstr(pl.kernel, "_splitk") && !strstr(pl.kernel, "_streamk"));
    check_problem(&q, d);
    /* batched with an odd batch stride (and so an odd ldc) */
    q = problem(GS_DT_BF16, GS_DT_F32, GS_OP_T, GS_OP_N, 1023, 512, 1024, 3);
    q.ldc = 1023;
    q.stride_c = 1023 * 512 + 1;
    CHECK(gs_pingpong_can_implement(class_of(&q), d, c128));
    check_problem(&q, d);
    /* an aligned base and ldc, only the batch stride odd */
    q = problem(GS_DT_BF16, GS_DT_F32, GS_OP_T, GS_OP_N, 1024, 512, 1024, 3);
    q.stride_c = 1024 * 512 + 1;
    CHECK(gs_pingpong_can_implement(class_of(&q), d, c128));
    CHECK(!gs_pingpong_can_implement(class_of(&q), d, c192));
    check_problem(&q, d);
    CHECK(had_streamk); /* the stream-K case above is one */
}

/* The chunks a packed plan's kernel name gives ("..._packb22"): 0 without. */
static int pack_chunks(const gs_plan_t *pl, char operand)
{
    char tag[8] = "_pack?";
    tag[5] = operand;
    const char *at = pl->kernel ? strstr(pl->kernel, tag) : NULL;
    return at ? atoi(at + 6) : 0;
}

/* An operand TMA cannot load (an odd vocabulary's logits gradient, ld =
 * 50257, read by the two backward GEMMs; a base one element off): the
 * pingpong tiles pack it into the workspace a chunk at a time. The copy
 * lies past the flag bytes and the chunks' split-K scratch, within the
 * default 64 MiB cap; several chunks need a host beta of zero; two such
 * operands, batches, and an operand not aligned to its element are
 * refused. */
static void test_packed_operand(const gs_device_t *d)
{
    static const float one = 1.f;
    const gs_pingpong_config_t c128 = GS_PINGPONG_128x128x64, coop = GS_PINGPONG_COOP_256x128x64,
                               c192 = GS_PINGPONG_192x128x64;
    const size_t cap = (size_t)64 << 20;
    /* dX = dLogits * W: NN, B = dLogits^T (k = 50257 contiguous, ldb odd) */
    gs_problem_t p = problem(GS_DT_BF16, GS_DT_BF16, GS_OP_N, GS_OP_N, 1024, 8192, 50257, 1);
    p.ldb = 50257;
    gs_problem_classify(&p);
    CHECK(gs_pingpong_can_implement(class_of(&p), d, c128));
    CHECK(gs_pingpong_can_implement(class_of(&p), d, coop));
    gs_plan_t pl = plan_of(FAMILY_PINGPONG, c128, &p, d);
    CHECK(pack_chunks(&pl, 'b') > 1 && pack_chunks(&pl, 'a') == 0);
    CHECK(pl.workspace_bytes > (size_t)GS_WS_FLAG_BYTES && pl.workspace_bytes <= cap);
    check_problem(&p, d);
    /* dW^T = X^T * dLogits: NT, B stored n x k with n = 50257 contiguous */
    p = problem(GS_DT_BF16, GS_DT_BF16, GS_OP_N, GS_OP_T, 1024, 50257, 8192, 1);
    p.ldb = 50257;
    p.ldc = 1024;
    gs_problem_classify(&p);
    CHECK(gs_pingpong_can_implement(class_of(&p), d, c128));
    pl = plan_of(FAMILY_PINGPONG, c128, &p, d);
    CHECK(pack_chunks(&pl, 'b') > 1 && pl.workspace_bytes <= cap);
    /* on 132 SMs: 25 chunks of 16 x 8 tiles, one wave each, rather than
     * 17 of 24 x 8 in two */
    if (d->sm_count == 132)
        CHECK_EQ_INT(pack_chunks(&pl, 'b'), 25);
    check_problem(&p, d);
    /* beta = 1 over several chunks: a failed launch after the first would
     * leave C half updated for cuBLAS to update again */
    gs_problem_t q = p;
    q.beta = &one;
    CHECK(!gs_pingpong_can_implement(class_of(&q), d, c128));
    /* one chunk: beta = 1 and device scalars are taken; the copy alone
     * still lies past the flag bytes */
    q = problem(GS_DT_F16, GS_DT_F32, GS_OP_T, GS_OP_N, 1000, 512, 1000, 1);
    q.lda = 1001;
    q.beta = &one;
    gs_problem_classify(&q);
    CHECK(gs_pingpong_can_implement(class_of(&q), d, c128));
    pl = plan_of(FAMILY_PINGPONG, c128, &q, d);
    CHECK(pack_chunks(&pl, 'a') == 1);
    {   /* the chunk's own plan (as the same call with a loadable A), then the copy */
        gs_problem_t r = q;
        r.lda = 1000;
        gs_problem_classify(&r);
        size_t inner = gs_pingpong_workspace_bytes(&r, d, c128);
        inner = inner > (size_t)GS_WS_FLAG_BYTES ? inner : (size_t)GS_WS_FLAG_BYTES;
        CHECK(pl.workspace_bytes == (inner + 255) / 256 * 256 + (size_t)1000 * 1000 * 2);
    }
    check_problem(&q, d);
    q.scalars_on_device = 1;
    gs_problem_classify(&q);
    CHECK(gs_pingpong_can_implement(class_of(&q), d, c128));
    /* A one element past an aligned base (ld fine): packed; one byte: refused */
    q = problem(GS_DT_BF16, GS_DT_BF16, GS_OP_N, GS_OP_T, 4096, 4096, 1024, 1);
    q.A = (const char *)q.A + 2;
    gs_problem_classify(&q);
    CHECK(gs_pingpong_can_implement(class_of(&q), d, coop));
    CHECK(gs_pingpong_can_implement(class_of(&q), d, c192));
    check_problem(&q, d);
    q.A = (const char *)q.A + 1;
    gs_problem_classify(&q);
    CHECK(!gs_pingpong_can_implement(class_of(&q), d, coop));
    /* A packed in chunks of its rows: each chunk sees its own m, so an ldc
     * below the call's m is caught on the call (cuBLAS: invalid value) */
    q = problem(GS_DT_BF16, GS_DT_BF16, GS_OP_N, GS_OP_N, 50257, 8192, 1024, 1);
    CHECK(gs_pingpong_can_implement(class_of(&q), d, c128));
    pl = plan_of(FAMILY_PINGPONG, c128, &q, d);
    CHECK(pack_chunks(&pl, 'a') > 1);
    q.ldc = 40000;
    CHECK(!gs_pingpong_can_implement(class_of(&q), d, c128));
    /* the cooperative tile's chunk scratch (stream-K or split-K partials,
     * up to 17 MB) and its copy stay within the default 64 MiB cap */
    q = problem(GS_DT_F16, GS_DT_F16, GS_OP_N, GS_OP_T, 1024, 30522, 16384, 1);
    CHECK(gs_pingpong_can_implement(class_of(&q), d, coop));
    pl = plan_of(FAMILY_PINGPONG, coop, &q, d);
    CHECK(pack_chunks(&pl, 'b') > 1 && pl.workspace_bytes <= cap);
    /* both operands, or a batch: refused */
    q = problem(GS_DT_BF16, GS_DT_BF16, GS_OP_N, GS_OP_N, 1024, 1024, 1023, 1);
    q.lda = 1025;
    gs_problem_classify(&q);
    CHECK(!gs_pingpong_can_implement(class_of(&q), d, c128));
    q = problem(GS_DT_BF16, GS_DT_BF16, GS_OP_T, GS_OP_N, 1024, 1024, 1024, 2);
    q.lda = 1025;
    q.stride_a = 1025 * 1024;
    gs_problem_classify(&q);
    CHECK(!gs_pingpong_can_implement(class_of(&q), d, c128));
    /* a chunk never splits K with a C stored directly: whole tiles over a
     * deep k are refused chunk by chunk as for any call */
    q = problem(GS_DT_BF16, GS_DT_BF16, GS_OP_N, GS_OP_N, 256, 256, 65536, 1);
    q.ldb = 65537;
    q.ldc = 257;
    gs_problem_classify(&q);
    CHECK(!gs_pingpong_can_implement(class_of(&q), d, c128));
}

/* The wgmma ring's split on long weights at n <= 16 (SKINNY_WG_LONG_STAGES):
 * m = 8192 on 132 SMs (64 blocks) splits two ways from k = 16384 on, not
 * below; m = 10240 (80 blocks, two ways would not fit one per SM), n = 64
 * and m = 4096 keep the rule's split. Checked by the plan's name, which
 * says the split (ckN). */
static void test_decode_long_split(const gs_device_t *d)
{
    static const struct {
        int64_t m, n, k;
        const char *split;
    } cases[] = {
        {8192, 16, 28672, "_ck2"}, {8192, 16, 16384, "_ck2"}, {8192, 16, 8192, "_ck1"},
        {10240, 16, 28672, "_ck1"}, {8192, 64, 28672, "_ck2"}, {4096, 16, 4096, "_ck2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        gs_problem_t p = problem(GS_DT_BF16, GS_DT_BF16, GS_OP_T, GS_OP_N, cases[i].m, cases[i].n,
                                 cases[i].k, 1);
        const char *name = gs_skinny_name(&p, d);
        if (!CHECK(name != NULL && strstr(name, cases[i].split) != NULL))
            printf("  %lldx%lldx%lld: %s, expected %s\n", (long long)cases[i].m,
                   (long long)cases[i].n, (long long)cases[i].k, name ? name : "(none)",
                   cases[i].split);
    }
}

int main(void)
{
    const gs_device_t devs[3] = {device(9, 0, 132), device(9, 0, 114), device(8, 0, 108)};
    for (int i = 0; i < 3; ++i)
        grid(&devs[i]);
    test_direct_c(&devs[0]);
    test_packed_operand(&devs[0]);
    test_packed_operand(&devs[1]);
    test_decode_long_split(&devs[0]);
    /* the developer knobs change plans on both paths alike: stream-K for
     * every ragged wave and a CTA cap; a forced workspace split */
    gs_pingpong_set_knobs(0, 1, 16, 3);
    gs_skinny_set_knobs(1, 0, 4);
    grid(&devs[0]);
    gs_pingpong_set_knobs(0, 1, 0, 1);
    gs_skinny_set_knobs(1, 0, 0);
    printf("%d plans (%d with workspace: %d split-K, %d stream-K, %d skinny, %d sgemm), "
           "%d refusals\n",
           plans, with_ws, split_plans, streamk_plans, skinny_ws_plans, sgemm_split_plans, refusals);
    /* the grid reaches every kind of plan */
    CHECK(plans > 1000);
    CHECK(split_plans > 0 && streamk_plans > 0 && skinny_ws_plans > 0 && sgemm_split_plans > 0);
    return GS_TEST_DONE();
}
