/* The experimental FP8 family (kernels/fp8), host code, no GPU: which
 * calls it takes (every refusal reason of gs_fp8_refusal), its plan (tile
 * counts, grid, shared memory, promotion, kernel name), the class fields
 * the tuner and the decision cache key FP8 calls on, and the opt-in: the
 * family is offered nothing unless GEMMSHIM_FP8_TILES=1. */
#include "dispatch_fixtures.h"
#include "fp8_tiles.h"
#include "gs_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const float one = 1.0f, half = 0.5f;

/* A TN e4m3 x e4m3 -> bf16 cublasLtMatmul, tight leading dimensions, tensorwise
 * scales, host alpha 1 and beta 0, aligned dummy pointers (never read):
 * dispatch_fixtures.h's problem with the FP8 call's fields. */
static gs_problem_t fp8_tn(int64_t m, int64_t n, int64_t k)
{
    gs_problem_t p = fp32_nn(m, n, k);
    p.entry = GS_EP_LT_MATMUL;
    p.a_type = p.b_type = GS_DT_E4M3;
    p.c_type = GS_DT_BF16;
    p.trans_a = GS_OP_T;
    p.lda = k;
    p.lt_scales = GS_SCALE_SCALAR_32F << GS_LT_SCALE_A | GS_SCALE_SCALAR_32F << GS_LT_SCALE_B;
    p.scale_a = (const void *)(uintptr_t)0x40000000;
    p.scale_b = (const void *)(uintptr_t)0x40000100;
    gs_problem_classify(&p);
    return p;
}

static const gs_device_t *h100(void)
{
    static gs_device_t d;
    d = device(9, 0, 132);
    return &d;
}

static const char *why(const gs_problem_t *p)
{
    const char *w = gs_fp8_refusal(&p->cls, h100(), GS_FP8_PINGPONG_128x128x128);
    return w ? w : "(taken)";
}

/* each change to the taken call, and the reason it is refused with */
static void refusals(void)
{
    gs_problem_t p = fp8_tn(1000, 520, 4096);
    CHECK_STR_EQ(why(&p), "(taken)");

    /* every type pair but e5m2 x e5m2; fast accumulation either way; every
     * subset scale mode; a bf16 bias */
    const gs_dtype_t pairs[][2] = {{GS_DT_E4M3, GS_DT_E5M2}, {GS_DT_E5M2, GS_DT_E4M3}};
    for (int i = 0; i < 2; ++i) {
        gs_problem_t q = p;
        q.a_type = pairs[i][0];
        q.b_type = pairs[i][1];
        CHECK_STR_EQ(why(classified(&q)), "(taken)");
    }
    const unsigned modes[] = {GS_SCALE_NONE, GS_SCALE_SCALAR_32F, GS_SCALE_OUTER_VEC_32F};
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            gs_problem_t q = p;
            q.lt_scales = modes[a] << GS_LT_SCALE_A | modes[b] << GS_LT_SCALE_B;
            q.lt_flags = (a + b) % 2 ? GS_LT_FAST_ACCUM : 0;
            CHECK_STR_EQ(why(classified(&q)), "(taken)");
        }
    gs_problem_t q = p;
    q.bias = (const void *)(uintptr_t)0x50000000;
    q.bias_type = GS_DT_BF16;
    CHECK_STR_EQ(why(classified(&q)), "(taken)");
    /* ragged m, n and k (k a multiple of 16; ldc whole 16-byte units) */
    q = fp8_tn(8, 1, 16);
    CHECK_STR_EQ(why(&q), "(taken)");
    q = fp8_tn(776, 3, 48);
    q.ldc = 784;
    CHECK_STR_EQ(why(classified(&q)), "(taken)");
    CHECK_STR_EQ(why(&q), "(taken)");
    /* what cuBLASLt refuses stays its own answer (status 15), ld or not */
    q = fp8_tn(777, 3, 48);
    q.ldc = 784;
    CHECK_STR_EQ(why(classified(&q)), "m not a multiple of 8 (cuBLASLt refuses it)");
    q = fp8_tn(1004, 64, 128);
    CHECK_STR_EQ(why(&q), "m not a multiple of 8 (cuBLASLt refuses it)");
    q = fp8_tn(4104, 77, 16 * 9);
    CHECK_STR_EQ(why(&q), "(taken)");

    gs_device_t d = *h100();
    d.cc_major = 8;
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, &d, 0), "not an sm_90 device");
    d = *h100();
    d.present = 0;
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, &d, 0), "not an sm_90 device");
    d = *h100();
    d.smem_optin = 200 * 1024;
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, &d, 0), "shared memory short of the tile's");
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, h100(), GS_FP8_CONFIG_COUNT), "no such configuration");
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, h100(), -1), "no such configuration");

    q = p;
    q.entry = GS_EP_GEMMEX;
    CHECK_STR_EQ(why(classified(&q)), "not a cublasLtMatmul");
    /* outside the subset: e5m2 x e5m2, bf16 operands, compute, C / D
     * scales, AMAX_D, a 128-block scale mode, C of another type */
    q = p;
    q.a_type = q.b_type = GS_DT_E5M2;
    CHECK_STR_EQ(why(classified(&q)), "outside the FP8 subset");
    q = p;
    q.a_type = q.b_type = GS_DT_BF16;
    CHECK_STR_EQ(why(classified(&q)), "outside the FP8 subset");
    q = p;
    q.compute = GS_CT_F32_PEDANTIC;
    CHECK_STR_EQ(why(classified(&q)), "outside the FP8 subset");
    q = p;
    q.lt_scales |= GS_SCALE_SCALAR_32F << GS_LT_SCALE_C;
    CHECK_STR_EQ(why(classified(&q)), "outside the FP8 subset");
    q = p;
    q.lt_scales |= GS_SCALE_SCALAR_32F << GS_LT_SCALE_D;
    CHECK_STR_EQ(why(classified(&q)), "outside the FP8 subset");
    q = p;
    q.lt_flags = GS_LT_AMAX_D;
    CHECK_STR_EQ(why(classified(&q)), "outside the FP8 subset");
    q = p;
    q.lt_scales = GS_SCALE_BLK128x128_32F << GS_LT_SCALE_A;
    CHECK_STR_EQ(why(classified(&q)), "outside the FP8 subset");
    q = p;
    q.lt_flags = GS_LT_C_TYPE_DIFFERS | (unsigned)GS_DT_F16 << GS_LT_C_TYPE_SHIFT;
    CHECK_STR_EQ(why(classified(&q)), "outside the FP8 subset");

    q = p;
    q.c_type = GS_DT_F16;
    CHECK_STR_EQ(why(classified(&q)), "D not bf16");
    q = p;
    q.c_type = GS_DT_F32;
    CHECK_STR_EQ(why(classified(&q)), "D not bf16");

    const gs_op_t ops[][2] = {{GS_OP_N, GS_OP_N}, {GS_OP_T, GS_OP_T}, {GS_OP_N, GS_OP_T}};
    for (int i = 0; i < 3; ++i) {
        q = p;
        q.trans_a = ops[i][0];
        q.trans_b = ops[i][1];
        CHECK_STR_EQ(why(classified(&q)), "not TN");
    }
    q = p;
    q.batch = 2;
    q.stride_a = q.lda * q.m;
    q.stride_b = q.ldb * q.n;
    q.stride_c = q.ldc * q.n;
    CHECK_STR_EQ(why(classified(&q)), "batched");
    q = fp8_tn((int64_t)1 << 31, 8, 16);
    CHECK_STR_EQ(why(&q), "sizes out of range");
    q = fp8_tn(64, 64, 0);
    CHECK_STR_EQ(why(&q), "sizes out of range");
    q = fp8_tn(64, 64, 40);
    CHECK_STR_EQ(why(&q), "k not a multiple of 16");
    q = fp8_tn(1 << 30, 1 << 30, 16); /* 2^46 tiles */
    CHECK_STR_EQ(why(&q), "too many tiles");

    const char *bases[] = {"A", "B", "D"};
    for (int i = 0; i < 3; ++i) {
        q = p;
        if (i == 0)
            q.A = (const char *)q.A + 8;
        else if (i == 1)
            q.B = (const char *)q.B + 8;
        else
            q.C = (char *)q.C + 8;
        if (!CHECK(!strcmp(why(classified(&q)), "A, B or D not 16-byte aligned")))
            fprintf(stderr, "    %s misaligned: %s\n", bases[i], why(&q));
    }
    q = p;
    q.lda = q.k + 8; /* not a 16-byte stride */
    CHECK_STR_EQ(why(classified(&q)), "lda or ldb not a TMA stride");
    q = p;
    q.ldb = q.k - 16;
    CHECK_STR_EQ(why(classified(&q)), "lda or ldb not a TMA stride");
    q = p;
    q.ldb = q.k + 16; /* padded: fine */
    CHECK_STR_EQ(why(classified(&q)), "(taken)");
    q = p;
    q.ldc = q.m + 4; /* 8 bytes of bf16 */
    CHECK_STR_EQ(why(classified(&q)), "ldc not a TMA stride");

    q = p;
    q.beta = &half;
    CHECK_STR_EQ(why(classified(&q)), "beta not a host zero");
    q = p;
    q.beta = &one;
    CHECK_STR_EQ(why(classified(&q)), "beta not a host zero");
    q = p;
    q.scalars_on_device = 1;
    CHECK_STR_EQ(why(classified(&q)), "beta not a host zero");

    q = p;
    q.bias = (const void *)(uintptr_t)0x50000000;
    q.bias_type = GS_DT_F32;
    CHECK_STR_EQ(why(classified(&q)), "bias not a bf16 vector");
    q.bias_type = GS_DT_BF16;
    /* cuBLASLt refuses a bias not 16-byte aligned (status 15): the call
     * must get that answer from it */
    const uintptr_t offsets[] = {1, 2, 4, 8};
    for (int i = 0; i < 4; ++i) {
        q.bias = (const void *)(uintptr_t)(0x50000000 + offsets[i]);
        CHECK_STR_EQ(why(classified(&q)), "bias not 16-byte aligned (cuBLASLt refuses it)");
    }
    q.bias = (const void *)(uintptr_t)0x50000010;
    CHECK_STR_EQ(why(classified(&q)), "(taken)");
    /* a scale pointer cuBLASLt refuses (compat/gs_lt.c flags it) */
    q = p;
    q.lt_flags = GS_LT_SCALE_UNALIGNED;
    CHECK_STR_EQ(why(classified(&q)), "outside the FP8 subset");
}

static gs_plan_t plan_of(const gs_problem_t *p, const gs_device_t *d)
{
    gs_plan_t pl;
    memset(&pl, 0, sizeof pl);
    pl.family = &gs_family_fp8;
    pl.config = GS_FP8_PINGPONG_128x128x128;
    gs_family_fp8.plan(p, d, &pl);
    return pl;
}

static void plans(void)
{
    /* 8 x 5 tiles, 33 k-blocks; fewer tiles than SMs: a CTA per tile */
    gs_problem_t p = fp8_tn(1000, 520, 4096 + 16);
    gs_plan_t pl = plan_of(&p, h100());
    gs_fp8_plan_t fp;
    memcpy(&fp, pl.data.bytes, sizeof fp);
    CHECK_EQ_INT(fp.tag, GS_FP8_PLAN_TAG);
    CHECK_EQ_INT(fp.config, 0);
    CHECK_EQ_INT(fp.tiles_m, 8);
    CHECK_EQ_INT(fp.tiles_n, 5);
    CHECK_EQ_INT(fp.k_blocks, 33);
    CHECK_EQ_INT(fp.total_tiles, 40);
    CHECK_EQ_INT(fp.grid, 40);
    CHECK_EQ_INT(fp.group_m, 8);
    CHECK_EQ_INT(fp.smem_bytes, GS_FP8_SMEM_BYTES);
    CHECK(fp.smem_bytes <= 227 * 1024);
    CHECK_EQ_INT(fp.promote, 1);
    CHECK_EQ_INT((int)pl.workspace_bytes, 0);
    CHECK_STR_EQ(pl.kernel, "fp8_pingpong_128x128x128");

    /* fast accumulation: no promotion, and the name says so */
    p.lt_flags = GS_LT_FAST_ACCUM;
    gs_problem_classify(&p);
    pl = plan_of(&p, h100());
    memcpy(&fp, pl.data.bytes, sizeof fp);
    CHECK_EQ_INT(fp.promote, 0);
    CHECK_STR_EQ(pl.kernel, "fp8_pingpong_128x128x128_fastaccum");

    /* the cooperative configuration: the same plan, its own kernel names */
    gs_plan_t co;
    memset(&co, 0, sizeof co);
    co.family = &gs_family_fp8;
    co.config = GS_FP8_COOP_128x128x128;
    gs_family_fp8.plan(&p, h100(), &co);
    gs_fp8_plan_t cf;
    memcpy(&cf, co.data.bytes, sizeof cf);
    CHECK_EQ_INT(cf.config, GS_FP8_COOP_128x128x128);
    CHECK_EQ_INT(cf.grid, fp.grid);
    CHECK_EQ_INT(cf.smem_bytes, fp.smem_bytes);
    CHECK_STR_EQ(co.kernel, "fp8_coop_128x128x128_fastaccum");
    p.lt_flags = 0;
    gs_problem_classify(&p);
    gs_family_fp8.plan(&p, h100(), &co);
    CHECK_STR_EQ(co.kernel, "fp8_coop_128x128x128");
    CHECK_STR_EQ(gs_family_fp8.config_name(GS_FP8_COOP_128x128x128), "fp8_coop_128x128x128");
    CHECK(gs_candidate_find("fp8_coop_128x128x128") >= 0);

    /* the wide tile: 256 of m per tile, its own group; 4 stages of 48 KB
     * take the shared memory 6 of 32 KB do */
    co.config = GS_FP8_COOP_256x128x128;
    gs_family_fp8.plan(&p, h100(), &co);
    memcpy(&cf, co.data.bytes, sizeof cf);
    CHECK_EQ_INT(cf.tiles_m, 4); /* m = 1000 */
    CHECK_EQ_INT(cf.tiles_n, fp.tiles_n);
    CHECK_EQ_INT(cf.total_tiles, 4 * fp.tiles_n);
    CHECK_EQ_INT(cf.group_m, 4);
    CHECK_EQ_INT(cf.smem_bytes, GS_FP8_WIDE_SMEM_BYTES);
    CHECK(cf.smem_bytes <= 227 * 1024);
    CHECK_STR_EQ(co.kernel, "fp8_coop_256x128x128");
    CHECK(gs_fp8_refusal(&p.cls, h100(), GS_FP8_COOP_256x128x128) == NULL);
    /* the wide tile in clusters of two along n: units are tile pairs (an
     * odd tiles_n leaves the last pair half past n), whole clusters */
    co.config = GS_FP8_COOP_256x128x128_MC2;
    gs_family_fp8.plan(&p, h100(), &co);
    memcpy(&cf, co.data.bytes, sizeof cf);
    CHECK_EQ_INT(cf.cluster, 2);
    CHECK_EQ_INT(cf.tiles_m, 4);
    CHECK_EQ_INT(cf.unit_cols, (fp.tiles_n + 1) / 2);
    CHECK_EQ_INT(cf.units, 4 * ((fp.tiles_n + 1) / 2));
    CHECK_EQ_INT(cf.grid, 2 * cf.units);
    CHECK_EQ_INT(cf.grid % 2, 0);
    CHECK_STR_EQ(co.kernel, "fp8_coop_256x128x128_mc2");
    gs_problem_t big = fp8_tn(8192, 8192, 1024);
    gs_family_fp8.plan(&big, h100(), &co);
    memcpy(&cf, co.data.bytes, sizeof cf);
    CHECK_EQ_INT(cf.units, 32 * 32);
    CHECK_EQ_INT(cf.grid, 132); /* 66 clusters of two */
    co.config = GS_FP8_COOP_256x128x128;
    gs_family_fp8.plan(&big, h100(), &co);
    memcpy(&cf, co.data.bytes, sizeof cf);
    CHECK_EQ_INT(cf.cluster, 1);
    CHECK_EQ_INT(cf.units, 32 * 64);
    CHECK_EQ_INT(cf.unit_cols, 64);
    gs_device_t one = *h100();
    one.sm_count = 1;
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, &one, GS_FP8_COOP_256x128x128_MC2),
                 "fewer SMs than a cluster");
    CHECK(gs_fp8_refusal(&p.cls, &one, GS_FP8_COOP_256x128x128) == NULL);

    gs_device_t small = *h100();
    small.smem_optin = GS_FP8_WIDE_SMEM_BYTES - 1;
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, &small, GS_FP8_COOP_256x128x128),
                 "shared memory short of the tile's");

    /* many tiles: one persistent CTA per SM; few tile rows: the group is them */
    p = fp8_tn(8192, 8192, 8192);
    pl = plan_of(&p, h100());
    memcpy(&fp, pl.data.bytes, sizeof fp);
    CHECK_EQ_INT(fp.total_tiles, 64 * 64);
    CHECK_EQ_INT(fp.grid, 132);
    CHECK_EQ_INT(fp.k_blocks, 64);
    p = fp8_tn(200, 9000, 128);
    pl = plan_of(&p, h100());
    memcpy(&fp, pl.data.bytes, sizeof fp);
    CHECK_EQ_INT(fp.tiles_m, 2);
    CHECK_EQ_INT(fp.group_m, 2);
    CHECK_EQ_INT(fp.k_blocks, 1);
    CHECK_EQ_INT(fp.grid, 132);

    /* deterministic */
    gs_plan_t a = plan_of(&p, h100()), b = plan_of(&p, h100());
    CHECK(!memcmp(a.data.bytes, b.data.bytes, sizeof a.data.bytes));

    /* run refuses a plan it did not make, before any CUDA call */
    gs_plan_t blank;
    memset(&blank, 0, sizeof blank);
    blank.family = &gs_family_fp8;
    CHECK_EQ_INT(gs_family_fp8.run(&blank, &p, h100()), 1 /* cudaErrorInvalidValue */);
}

/* The decode ring: n <= 64 only; the n bucket and the k split of each
 * Llama decode shape on 132 SMs (fp8_family.c's decode_cluster), the
 * kernel's name saying both, grid = row blocks x split. */
static void decode_plans(void)
{
    const int cfg = GS_FP8_DECODE_RING;
    gs_plan_t pl;
    memset(&pl, 0, sizeof pl);
    pl.family = &gs_family_fp8;
    pl.config = cfg;
    gs_fp8_plan_t fp;
    CHECK_STR_EQ(gs_family_fp8.config_name(cfg), "fp8_decode_ring");
    CHECK(gs_candidate_find("fp8_decode_ring") >= 0);
    gs_problem_t p = fp8_tn(1000, 520, 4096);
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, h100(), cfg), "n above 64 (the decode ring's)");
    p = fp8_tn(1000, 65, 4096);
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, h100(), cfg), "n above 64 (the decode ring's)");
    /* the tiles' other rules hold for it too */
    p = fp8_tn(1004, 16, 4096);
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, h100(), cfg),
                 "m not a multiple of 8 (cuBLASLt refuses it)");
    const struct {
        int64_t m, n, k;
        int bucket, rows, cluster;
        const char *kernel;
    } shapes[] = {
        {4096, 1, 14336, 0, 128, 4, "fp8_decode_ring_n8_ck4"},      /* 8B down */
        {14336, 16, 4096, 1, 128, 1, "fp8_decode_ring_n16_ck1"},    /* 8B gate */
        {6144, 16, 4096, 1, 128, 2, "fp8_decode_ring_n16_ck2"},     /* 8B qkv */
        {28672, 32, 8192, 2, 128, 1, "fp8_decode_ring_n32_ck1"},    /* 70B gate */
        {2048, 29, 4096, 2, 128, 8, "fp8_decode_ring_n32_ck8"},
        {4096, 64, 14336, 3, 256, 8, "fp8_decode_ring_n64_ck8"},
        {4096, 64, 2048, 3, 256, 4, "fp8_decode_ring_n64_ck4"},     /* 4 stages a block */
        {4104, 1, 528, 0, 128, 1, "fp8_decode_ring_n8_ck1"},        /* 5 stages: no split */
        {1000, 13, 272, 1, 128, 1, "fp8_decode_ring_n16_ck1"},
        {2048, 29, 1024, 2, 128, 2, "fp8_decode_ring_n32_ck2"},
        {776, 40, 528, 3, 256, 1, "fp8_decode_ring_n64_ck1"},
        /* test_fp8_tiles' bucket edges */
        {2048, 8, 512, 0, 128, 1, "fp8_decode_ring_n8_ck1"}, /* 4 stages: no split */
        {4096, 9, 4112, 1, 128, 4, "fp8_decode_ring_n16_ck4"},
        {4096, 17, 2064, 2, 128, 4, "fp8_decode_ring_n32_ck4"}, /* 17 stages: not 8 ways */
        {2048, 33, 1040, 3, 256, 2, "fp8_decode_ring_n64_ck2"},
        {28672, 32, 1024, 2, 128, 1, "fp8_decode_ring_n32_ck1"},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        p = fp8_tn(shapes[i].m, shapes[i].n, shapes[i].k);
        if (!CHECK(gs_fp8_refusal(&p.cls, h100(), cfg) == NULL))
            continue;
        gs_family_fp8.plan(&p, h100(), &pl);
        memcpy(&fp, pl.data.bytes, sizeof fp);
        CHECK_EQ_INT(fp.config, cfg);
        CHECK_EQ_INT(fp.decode_bucket, shapes[i].bucket);
        CHECK_EQ_INT(fp.tiles_m, (shapes[i].m + shapes[i].rows - 1) / shapes[i].rows);
        CHECK_EQ_INT(fp.cluster, shapes[i].cluster);
        CHECK_EQ_INT(fp.grid, fp.tiles_m * fp.cluster);
        CHECK(fp.grid <= 132 * (shapes[i].rows == 256 ? 1 : 2));
        CHECK(fp.smem_bytes <= 227 * 1024);
        CHECK_STR_EQ(pl.kernel, shapes[i].kernel);
        /* fast accumulation changes nothing but the class: the ring
         * promotes either way */
        gs_problem_t q = p;
        q.lt_flags = GS_LT_FAST_ACCUM;
        gs_problem_classify(&q);
        gs_plan_t ql = pl;
        gs_family_fp8.plan(&q, h100(), &ql);
        CHECK_STR_EQ(ql.kernel, pl.kernel);
    }
    /* GEMMSHIM_DEV_FP8_CK forces the split, halved while a block would get
     * fewer than 4 stages of 128; 0 gives the rule back */
    const struct {
        int ck;
        int64_t m, n, k;
        const char *kernel;
    } forced[] = {
        {1, 4096, 1, 14336, "fp8_decode_ring_n8_ck1"},
        {8, 14336, 16, 4096, "fp8_decode_ring_n16_ck8"},
        {8, 2048, 8, 2048, "fp8_decode_ring_n8_ck4"}, /* 16 stages: 4 ways */
        {2, 4104, 1, 528, "fp8_decode_ring_n8_ck1"},  /* 5 stages: none */
        {0, 14336, 16, 4096, "fp8_decode_ring_n16_ck1"},
    };
    gs_device_t four = *h100();
    four.sm_count = 4;
    for (size_t i = 0; i < sizeof forced / sizeof forced[0]; ++i) {
        const int v[1] = {forced[i].ck};
        gs_family_fp8.set_knobs(v);
        p = fp8_tn(forced[i].m, forced[i].n, forced[i].k);
        gs_family_fp8.plan(&p, h100(), &pl);
        memcpy(&fp, pl.data.bytes, sizeof fp);
        CHECK_STR_EQ(pl.kernel, forced[i].kernel);
        CHECK_EQ_INT(fp.grid, fp.tiles_m * fp.cluster);
    }
    /* never a cluster larger than the GPU */
    const int eight[1] = {8};
    gs_family_fp8.set_knobs(eight);
    p = fp8_tn(4096, 1, 14336);
    gs_family_fp8.plan(&p, &four, &pl);
    CHECK_STR_EQ(pl.kernel, "fp8_decode_ring_n8_ck4");
    const int rule[1] = {0};
    gs_family_fp8.set_knobs(rule);
    /* the wgmma ring: n >= 9 (its narrowest wgmma is the n16 bucket's),
     * the same buckets and splits, its own names */
    const int wg = GS_FP8_DECODE_WG;
    CHECK_STR_EQ(gs_family_fp8.config_name(wg), "fp8_decode_wg");
    p = fp8_tn(4096, 8, 14336);
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, h100(), wg), "n below 9 (the mma.sync ring's)");
    p = fp8_tn(4096, 9, 14336);
    if (CHECK(gs_fp8_refusal(&p.cls, h100(), wg) == NULL)) {
        gs_plan_t wl;
        memset(&wl, 0, sizeof wl);
        wl.family = &gs_family_fp8;
        wl.config = wg;
        gs_family_fp8.plan(&p, h100(), &wl);
        memcpy(&fp, wl.data.bytes, sizeof fp);
        CHECK_EQ_INT(fp.config, wg);
        CHECK_EQ_INT(fp.decode_bucket, 1);
        CHECK_STR_EQ(wl.kernel, "fp8_decode_wg_n16_ck2"); /* an eighth of the slots */
    }
    /* n = 17..64: a quarter of the slots (m = 4096: 4 ways, 14336: none) */
    const struct {
        int64_t m, n, k;
        const char *kernel;
    } wgs[] = {
        {4096, 32, 14336, "fp8_decode_wg_n32_ck4"},
        {14336, 32, 4096, "fp8_decode_wg_n32_ck1"},
        {4096, 64, 14336, "fp8_decode_wg_n64_ck4"},
        {14336, 64, 4096, "fp8_decode_wg_n64_ck1"},
        {776, 40, 528, "fp8_decode_wg_n64_ck1"},
        /* n <= 16, long weights: split again while a block per SM keeps
         * 64 stages (70B down: 64 blocks two ways); not at 28 stages or
         * 32, nor past one block per SM */
        {8192, 16, 28672, "fp8_decode_wg_n16_ck2"},
        {4096, 16, 14336, "fp8_decode_wg_n16_ck2"},
        {8192, 16, 8192, "fp8_decode_wg_n16_ck1"},
        {14336, 16, 4096, "fp8_decode_wg_n16_ck1"},
        {28672, 16, 8192, "fp8_decode_wg_n16_ck1"},
        {8192, 32, 28672, "fp8_decode_wg_n32_ck2"},
        /* test_fp8_tiles' bucket edges */
        {4096, 9, 4112, "fp8_decode_wg_n16_ck2"},
        {4096, 17, 2064, "fp8_decode_wg_n32_ck4"},
        {2048, 33, 1040, "fp8_decode_wg_n64_ck2"},
        {28672, 32, 1024, "fp8_decode_wg_n32_ck1"},
    };
    for (size_t i = 0; i < sizeof wgs / sizeof wgs[0]; ++i) {
        p = fp8_tn(wgs[i].m, wgs[i].n, wgs[i].k);
        gs_plan_t wl;
        memset(&wl, 0, sizeof wl);
        wl.family = &gs_family_fp8;
        wl.config = wg;
        if (!CHECK(gs_fp8_refusal(&p.cls, h100(), wg) == NULL))
            continue;
        gs_family_fp8.plan(&p, h100(), &wl);
        CHECK_STR_EQ(wl.kernel, wgs[i].kernel);
    }
    p = fp8_tn(776, 65, 528);
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, h100(), wg), "n above 64 (the decode ring's)");
    /* k whose stage count overflows the rings' int */
    p = fp8_tn(776, 16, ((int64_t)1 << 31) - 64);
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, h100(), wg), "k too large for the ring's stage count");
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, h100(), cfg), "k too large for the ring's stage count");

    /* the largest bucket's shared memory, where a device has less */
    gs_device_t small = *h100();
    small.smem_optin = GS_FP8_DECODE_SMEM_N64 - 1;
    p = fp8_tn(4096, 64, 4096);
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, &small, cfg), "shared memory short of the ring's");
    p = fp8_tn(4096, 32, 4096);
    CHECK(gs_fp8_refusal(&p.cls, &small, cfg) == NULL);
}

/* What FP8 classes key on (the tune cache, the decision cache, signature
 * files): the scale modes and fast accumulation are in the class; the
 * scale pointers are not. */
static void class_fields(void)
{
    gs_problem_t p = fp8_tn(512, 256, 1024), q = p;
    CHECK(gs_class_fp8(&p.cls) && gs_class_fp8_subset(&p.cls));
    CHECK_EQ_INT(gs_lt_scale_of(p.cls.lt_scales, GS_LT_SCALE_A), GS_SCALE_SCALAR_32F);
    CHECK_EQ_INT(gs_lt_scale_of(p.cls.lt_scales, GS_LT_SCALE_B), GS_SCALE_SCALAR_32F);
    CHECK_EQ_INT(p.cls.lt_flags, 0);
    q.scale_a = (const void *)(uintptr_t)0x48000000;
    q.scale_b = (const void *)(uintptr_t)0x48000100;
    gs_problem_classify(&q);
    CHECK(!memcmp(&p.cls, &q.cls, sizeof p.cls));
    q.lt_flags = GS_LT_FAST_ACCUM;
    gs_problem_classify(&q);
    CHECK(memcmp(&p.cls, &q.cls, sizeof p.cls) != 0);
    CHECK_EQ_INT(q.cls.lt_flags, GS_LT_FAST_ACCUM);
    q = p;
    q.lt_scales = GS_SCALE_OUTER_VEC_32F << GS_LT_SCALE_A | GS_SCALE_SCALAR_32F << GS_LT_SCALE_B;
    gs_problem_classify(&q);
    CHECK(memcmp(&p.cls, &q.cls, sizeof p.cls) != 0);
    CHECK_EQ_INT(gs_lt_scale_of(q.cls.lt_scales, GS_LT_SCALE_A), GS_SCALE_OUTER_VEC_32F);
    CHECK(gs_class_hash(&p.cls, 0) != gs_class_hash(&q.cls, 0));
}

/* Registered, named, and its tiles offered nothing without
 * GEMMSHIM_FP8_TILES=1; its decode kernels need no switch. */
static void opt_in(void)
{
    const gs_family_t *f = gs_family_find("fp8");
    if (!CHECK(f == &gs_family_fp8))
        return;
    CHECK(f->reads_lt_contract && !f->tuned_only);
    for (int c = 0; c < f->n_configs; ++c)
        CHECK_EQ_INT(gs_family_opt_in(f, c), c != GS_FP8_DECODE_RING && c != GS_FP8_DECODE_WG);
    CHECK(!gs_family_opt_in(f, -1) && !gs_family_opt_in(f, 64));
    CHECK_STR_EQ(f->config_name(0), "fp8_pingpong_128x128x128");
    const int cand = gs_candidate_find("fp8_pingpong_128x128x128");
    CHECK(cand >= 0);
    /* the last family: the others keep their candidate numbers */
    CHECK(gs_family_at(gs_family_count() - 1) == f);

    gs_problem_t p = fp8_tn(1000, 520, 4096);
    gs_routing_t r;
    memset(&r, 0, sizeof r);
    r.mode = GS_MODE_ON;
    r.policy = GS_POLICY_ELIGIBLE;
    r.allowed = gs_candidates_all();
    CHECK(!gs_candidate_takes(&r, cand, f, 0, &p.cls, h100()));
    gs_decision_t dec = gs_dispatch_prior(&p, h100(), &r);
    CHECK_EQ_INT(dec.route, GS_ROUTE_FORWARD);
    CHECK_STR_EQ(dec.reason, "no FP8 kernel takes it (device sm_90; decode kernels: n <= 64; the "
                             "FP8 tiles: GEMMSHIM_FP8_TILES=1)");

    r.fp8_tiles = 1;
    CHECK(gs_candidate_takes(&r, cand, f, 0, &p.cls, h100()));
    dec = gs_dispatch_prior(&p, h100(), &r);
    CHECK(dec.family == f);
    CHECK_EQ_INT(dec.route, gs_route_of(f));
    /* the default policy routes by measurements, and there are none */
    r.policy = GS_POLICY_TABLE;
    dec = gs_dispatch_prior(&p, h100(), &r);
    CHECK_EQ_INT(dec.route, GS_ROUTE_FORWARD);
    /* GEMMSHIM_KERNELS without any of its configurations */
    r.policy = GS_POLICY_ELIGIBLE;
    const int coop = gs_candidate_find("fp8_coop_128x128x128");
    const int wide = gs_candidate_find("fp8_coop_256x128x128");
    const int mc2 = gs_candidate_find("fp8_coop_256x128x128_mc2");
    r.allowed = gs_candidates_all() & ~(1ull << cand) & ~(1ull << coop) & ~(1ull << wide) &
                ~(1ull << mc2);
    CHECK(!gs_candidate_takes(&r, cand, f, 0, &p.cls, h100()));
    dec = gs_dispatch_prior(&p, h100(), &r);
    CHECK_EQ_INT(dec.route, GS_ROUTE_FORWARD);
    /* outside the subset: forwarded as before, switch or not */
    r.allowed = gs_candidates_all();
    gs_problem_t q = p;
    q.lt_flags = GS_LT_AMAX_D;
    gs_problem_classify(&q);
    dec = gs_dispatch_prior(&q, h100(), &r);
    CHECK_EQ_INT(dec.route, GS_ROUTE_FORWARD);
    CHECK_CONTAINS(dec.reason, "fp8:");

    /* no other family takes an FP8 call, switch on */
    for (int i = 0; i < gs_candidate_count(); ++i) {
        int config;
        const gs_family_t *g = gs_candidate(i, &config);
        if (g != f && g->can_implement(&p.cls, h100(), config))
            CHECK(g->reads_lt_contract && g->tuned_only);
    }
    /* the non-FP8 families never see it offered (bf16 calls unchanged) */
    gs_problem_t bf = fp32_nn(256, 256, 256);
    bf.entry = GS_EP_GEMMEX;
    bf.a_type = bf.b_type = bf.c_type = GS_DT_BF16;
    gs_problem_classify(&bf);
    CHECK(!f->can_implement(&bf.cls, h100(), 0));
}

/* The decode kernels need no switch: the default policy routes them where
 * the table measured them faster (rowwise decode, up to 2.5x cuBLASLt on an
 * H200), per scale mode, and forwards the rest. */
/* fp8_tn with A's and B's scales as given (GS_SCALE_*), classified */
static gs_problem_t fp8_scaled(int64_t m, int64_t n, int64_t k, unsigned a, unsigned b)
{
    gs_problem_t p = fp8_tn(m, n, k);
    p.lt_scales = a << GS_LT_SCALE_A | b << GS_LT_SCALE_B;
    gs_problem_classify(&p);
    return p;
}

static void decode_by_table(void)
{
    gs_device_t h200 = *h100();
    strcpy(h200.gpu, "H200");
    gs_routing_t r;
    memset(&r, 0, sizeof r);
    r.mode = GS_MODE_ON;
    r.policy = GS_POLICY_TABLE;
    r.allowed = gs_candidates_all();
    /* Llama-3-8B's down projection, 16 tokens, rowwise: the wgmma ring */
    gs_problem_t p = fp8_scaled(4096, 16, 14336, GS_SCALE_OUTER_VEC_32F, GS_SCALE_OUTER_VEC_32F);
    gs_decision_t dec = gs_dispatch_prior(&p, &h200, &r);
    CHECK(dec.family == &gs_family_fp8);
    CHECK_EQ_INT(dec.config, GS_FP8_DECODE_WG);
    CHECK(dec.table_ratio > 1.5);
    CHECK_CONTAINS(dec.reason, "table: ");
    /* one token: the mma.sync ring (the wgmma one starts at n = 9) */
    p = fp8_scaled(4096, 1, 14336, GS_SCALE_OUTER_VEC_32F, GS_SCALE_OUTER_VEC_32F);
    dec = gs_dispatch_prior(&p, &h200, &r);
    CHECK(dec.family == &gs_family_fp8);
    CHECK_EQ_INT(dec.config, GS_FP8_DECODE_RING);
    /* the same shape tensorwise at 64 tokens: measured slower, forwarded */
    p = fp8_tn(8192, 64, 8192);
    dec = gs_dispatch_prior(&p, &h200, &r);
    CHECK_EQ_INT(dec.route, GS_ROUTE_FORWARD);
    CHECK_CONTAINS(dec.reason, "fp8 measured 0.");
    /* a mixed scale pair (A rowwise, B tensorwise): the decode kernels
     * refuse it (no GPU case verifies it), so no FP8 kernel takes it */
    p = fp8_scaled(4096, 16, 14336, GS_SCALE_OUTER_VEC_32F, GS_SCALE_SCALAR_32F);
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, &h200, GS_FP8_DECODE_WG), "A and B scale modes differ");
    CHECK_STR_EQ(gs_fp8_refusal(&p.cls, &h200, GS_FP8_DECODE_RING), "A and B scale modes differ");
    dec = gs_dispatch_prior(&p, &h200, &r);
    CHECK_EQ_INT(dec.route, GS_ROUTE_FORWARD);
    CHECK_CONTAINS(dec.reason, "no FP8 kernel takes it (device sm_90; decode kernels: n <= 64");
    /* A e4m3 x B e5m2, rowwise: the kernels take it, the table has no
     * reading of a mixed pair (its entries are e4m3 x e4m3) */
    p = fp8_scaled(4096, 16, 14336, GS_SCALE_OUTER_VEC_32F, GS_SCALE_OUTER_VEC_32F);
    p.b_type = GS_DT_E5M2;
    gs_problem_classify(&p);
    CHECK(gs_fp8_refusal(&p.cls, &h200, GS_FP8_DECODE_WG) == NULL);
    dec = gs_dispatch_prior(&p, &h200, &r);
    CHECK_EQ_INT(dec.route, GS_ROUTE_FORWARD);
    CHECK_STR_EQ(dec.reason, "fp8 not measured for this class");
    /* a large shape: the decode kernels cannot, the tiles are opt-in */
    p = fp8_tn(4096, 4096, 4096);
    dec = gs_dispatch_prior(&p, &h200, &r);
    CHECK_EQ_INT(dec.route, GS_ROUTE_FORWARD);
    CHECK_CONTAINS(dec.reason, "GEMMSHIM_FP8_TILES=1");
    /* GEMMSHIM_KERNELS without the decode kernels: forwarded */
    p = fp8_scaled(4096, 16, 14336, GS_SCALE_OUTER_VEC_32F, GS_SCALE_OUTER_VEC_32F);
    r.allowed &= ~(1ull << gs_candidate_of(&gs_family_fp8, GS_FP8_DECODE_WG)) &
                 ~(1ull << gs_candidate_of(&gs_family_fp8, GS_FP8_DECODE_RING));
    dec = gs_dispatch_prior(&p, &h200, &r);
    CHECK_EQ_INT(dec.route, GS_ROUTE_FORWARD);
}

static const char *env_value;
static const char *env_of(const char *name)
{
    return !strcmp(name, "GEMMSHIM_FP8_TILES") ? env_value : NULL;
}

static void setting(void)
{
    gs_config_t c;
    env_value = NULL;
    CHECK_EQ_INT(gs_config_parse(&c, env_of), 0);
    CHECK_EQ_INT(c.routing.fp8_tiles, 0);
    env_value = "1";
    CHECK_EQ_INT(gs_config_parse(&c, env_of), 0);
    CHECK_EQ_INT(c.routing.fp8_tiles, 1);
    env_value = "0";
    CHECK_EQ_INT(gs_config_parse(&c, env_of), 0);
    CHECK_EQ_INT(c.routing.fp8_tiles, 0);
    env_value = "yes please";
    CHECK(gs_config_parse(&c, env_of) != 0);
    CHECK_CONTAINS(c.error_msg, "GEMMSHIM_FP8_TILES");
}

int main(void)
{
    refusals();
    plans();
    decode_plans();
    class_fields();
    opt_in();
    decode_by_table();
    setting();
    return GS_TEST_DONE();
}
