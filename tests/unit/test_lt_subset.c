/* The FP8 subset cuBLASLt's own algorithms are tuned on (compat/gs_lt.h):
 * which cublasLtMatmul calls are of it (gs_lt_describe's lt_algos_only),
 * every feature beyond it refused with a reason, the reasons listed as
 * before; its classes (what the tune cache keys) apart for every variant,
 * and the classes of other calls byte for byte what they were; dispatch
 * offering an FP8 class only to a family that reads the contract. */
#include "dispatch_fixtures.h"
#include "gs_class_hex.h"
#include "gs_compat.h"
#include "gs_lt.h"
#include "gs_test.h"
#include "lt_bag.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define E4 CUDA_R_8F_E4M3
#define E5 CUDA_R_8F_E5M2
#define BF CUDA_R_16BF

/* torch._scaled_mm's tensorwise call: A and B scales set (SCALAR_32F, the
 * default mode), D bf16 in place of C. */
static void tensorwise(lt_case_t *t, int a, int b, int d)
{
    lt_case(t, a, b, d, d);
    lt_set_ptr(t, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 0x7100000);
    lt_set_ptr(t, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, 0x7200000);
}

static void fast(lt_case_t *t)
{
    const int8_t on = 1;
    bag_put(&t->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &on, 1);
}

/* The calls of the subset: taken, their reasons as listed before, their
 * scale pointers carried. */
static void subset_calls(void)
{
    lt_case_t t;
    gs_call_t c;
    tensorwise(&t, E4, E4, BF);
    fast(&t);
    lt_describe(&t, &c);
    CHECK_EQ_INT(c.lt_algos_only, 1);
    CHECK(c.lt_algos_why == NULL);
    CHECK_STR_EQ(c.lt_unroutable,
                 "fp8 operands; scale modes A=SCALAR_32F B=SCALAR_32F; fast accumulation on");
    CHECK(c.scale_a == (const void *)(uintptr_t)0x7100000);
    CHECK(c.scale_b == (const void *)(uintptr_t)0x7200000);

    /* rowwise, e5m2 x e4m3 and e4m3 x e5m2, into each output type */
    const int pairs[][2] = {{E4, E4}, {E5, E4}, {E4, E5}};
    const int outs[] = {BF, CUDA_R_16F, CUDA_R_32F};
    for (int i = 0; i < 3; ++i)
        for (int o = 0; o < 3; ++o) {
            tensorwise(&t, pairs[i][0], pairs[i][1], outs[o]);
            lt_set_i32(&t, CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                       CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F);
            lt_set_i32(&t, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                       CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F);
            lt_describe(&t, &c);
            if (!CHECK(c.lt_algos_only == 1))
                fprintf(stderr, "    %d x %d -> %d: %s\n", pairs[i][0], pairs[i][1], outs[o],
                        c.lt_unroutable);
            CHECK_CONTAINS(c.lt_unroutable, "scale modes A=OUTER_VEC_32F B=OUTER_VEC_32F");
        }
    /* no scales at all, or one; the BIAS epilogue; device scalars */
    lt_case(&t, E4, E4, BF, BF);
    lt_describe(&t, &c);
    CHECK_EQ_INT(c.lt_algos_only, 1);
    CHECK_STR_EQ(c.lt_unroutable, "fp8 operands");
    CHECK(c.scale_a == NULL && c.scale_b == NULL);
    tensorwise(&t, E4, E4, BF);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, 0);
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_BIAS_POINTER, 0x7500000);
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_DEVICE);
    lt_describe(&t, &c);
    CHECK_EQ_INT(c.lt_algos_only, 1);
    CHECK(c.scale_a != NULL && c.scale_b == NULL);
    CHECK(c.bias == (const void *)(uintptr_t)0x7500000);
}

/* Each feature beyond the subset, on the tensorwise call: not taken, and
 * a reason says why (listed, or beside the list for what it did not say). */
typedef struct beyond {
    const char *why;
    void (*make)(lt_case_t *t);
} beyond_t;

static void fp8_d(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    bag_t *ld = &t->ld;
    const uint32_t e4 = E4;
    bag_put(ld, CUBLASLT_MATRIX_LAYOUT_TYPE, &e4, 4);
    t->args.C = (const void *)(uintptr_t)0x4000000; /* beta 0: C unread */
}
static void fp8_d_same_c(lt_case_t *t)
{
    tensorwise(t, E4, E4, E4);
}
static void d_scale(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    lt_set_ptr(t, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, 0x7300000);
}
static void c_scale(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    lt_set_ptr(t, CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, 0x7300000);
}
static void d_out_scale(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    lt_set_ptr(t, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, 0x7300000);
}
static void amax(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    lt_set_ptr(t, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, 0x7400000);
}
static void c_type(lt_case_t *t)
{
    lt_case(t, E4, E4, CUDA_R_16F, BF);
    lt_set_ptr(t, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 0x7100000);
}
static void c_apart(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    t->args.C = (const void *)(uintptr_t)0x4000000; /* beta 0: C unread, yet apart */
}
/* beta on the device: it may be nonzero, and C would be read */
static void c_apart_device_beta(lt_case_t *t)
{
    c_apart(t);
    lt_set_i32(t, CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_DEVICE);
}
static void vec128(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    lt_set_i32(t, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F);
}
static void blk128(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    lt_set_i32(t, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
               CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F);
}
static void mxfp8(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    lt_set_i32(t, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0);
    lt_set_i32(t, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0);
}
static void gelu(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    lt_set_i32(t, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_GELU_BIAS);
    lt_set_ptr(t, CUBLASLT_MATMUL_DESC_BIAS_POINTER, 0x7500000);
}
static void e5m2_twice(lt_case_t *t)
{
    tensorwise(t, E5, E5, BF);
}
static void pedantic(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    lt_set_i32(t, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, CUBLAS_COMPUTE_32F_PEDANTIC);
}
static void fp8_by_bf16(lt_case_t *t)
{
    tensorwise(t, E4, BF, BF);
}
static void scale_type(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    lt_set_i32(t, CUBLASLT_MATMUL_DESC_SCALE_TYPE, CUDA_R_16F);
}
static void transc(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    lt_set_i32(t, CUBLASLT_MATMUL_DESC_TRANSC, CUBLAS_OP_T);
}
static void emulation(lt_case_t *t)
{
    tensorwise(t, E4, E4, BF);
    lt_set_ptr(t, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, 0x7600000);
}

static void beyond_the_subset(void)
{
    const beyond_t cases[] = {
        {"C and D types differ", fp8_d},
        {"D neither bf16, fp16 nor fp32", fp8_d_same_c},
        {"D scale set", d_scale},
        {"C scale set", c_scale},
        {"D out scale set", d_out_scale},
        {"AMAX_D set", amax},
        {"C and D types differ", c_type},
        {"C != D with beta != 0", c_apart_device_beta},
        {"scale modes A=VEC128_32F B=SCALAR_32F", vec128},
        {"scale modes A=SCALAR_32F B=BLK128x128_32F", blk128},
        {"scale modes A=VEC32_UE8M0 B=VEC32_UE8M0", mxfp8},
        {"epilogue 36 not routed", gelu},
        {"e5m2 x e5m2", e5m2_twice},
        {"compute type not 32F", pedantic},
        {"A and B types differ", fp8_by_bf16},
        {"scale type not fp32", scale_type},
        {"transc set", transc},
        {"emulation descriptor set", emulation},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        lt_case_t t;
        gs_call_t c;
        cases[i].make(&t);
        lt_describe(&t, &c);
        char both[GS_LT_WHY_MAX + 64];
        snprintf(both, sizeof both, "%s; %s", c.lt_unroutable,
                 c.lt_algos_why ? c.lt_algos_why : "");
        if (!CHECK(c.lt_algos_only == 0) | !CHECK(strstr(both, cases[i].why) != NULL))
            fprintf(stderr, "    '%s': taken %d, said '%s'\n", cases[i].why, c.lt_algos_only,
                    both);
        CHECK_CONTAINS(c.lt_unroutable, "fp8 operands"); /* the list as it always was */
    }
    /* a reason beside the list is only for what the list does not say */
    lt_case_t t;
    gs_call_t c;
    amax(&t);
    lt_describe(&t, &c);
    CHECK(c.lt_algos_why == NULL);
    /* C apart from D with a host beta of 0, as torch._scaled_mm calls (its A
     * as a C never read): of the subset, nothing beside the list */
    c_apart(&t);
    lt_describe(&t, &c);
    CHECK_EQ_INT(c.lt_algos_only, 1);
    CHECK(c.lt_algos_why == NULL);
    CHECK_STR_EQ(c.lt_unroutable, "fp8 operands; scale modes A=SCALAR_32F B=SCALAR_32F");
    /* not FP8: never of the subset, nothing beside the list */
    lt_case(&t, BF, BF, BF, BF);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 0x7100000);
    fast(&t);
    lt_describe(&t, &c);
    CHECK_EQ_INT(c.lt_algos_only, 0);
    CHECK(c.lt_algos_why == NULL);
    CHECK_STR_EQ(c.lt_unroutable, "scale modes A=SCALAR_32F");
    lt_case(&t, BF, BF, BF, BF);
    t.args.C = (const void *)(uintptr_t)0x4000000;
    lt_describe(&t, &c);
    CHECK_EQ_INT(c.lt_algos_only, 0);
    CHECK_STR_EQ(c.lt_unroutable, "");
}

/* ---- classes ---- */

static const float one = 1.0f;

/* fp32_nn's problem made the cublasLtMatmul torch._scaled_mm makes: TN,
 * A and B of types a and b, D (in place of C) of type d */
static gs_problem_t lt_problem(gs_dtype_t a, gs_dtype_t b, gs_dtype_t d)
{
    gs_problem_t p = fp32_nn(1024, 512, 768);
    p.entry = GS_EP_LT_MATMUL;
    p.a_type = a, p.b_type = b, p.c_type = d;
    p.trans_a = GS_OP_T;
    p.lda = 768;
    return p;
}

static int class_cmp(const void *x, const void *y)
{
    return memcmp(x, y, sizeof(gs_class_t));
}

/* Types x A's and B's modes x fast accumulation x bias x output: every
 * variant of the subset a class of its own, and of it by the predicate;
 * the scale pointers are no part of it (per call, like the operands). */
static void variants_apart(void)
{
    const gs_dtype_t pairs[][2] = {{GS_DT_E4M3, GS_DT_E4M3},
                                   {GS_DT_E5M2, GS_DT_E4M3},
                                   {GS_DT_E4M3, GS_DT_E5M2}};
    const unsigned modes[] = {GS_SCALE_NONE, GS_SCALE_SCALAR_32F, GS_SCALE_OUTER_VEC_32F};
    const gs_dtype_t biases[] = {GS_DT_OTHER, GS_DT_BF16, GS_DT_F16};
    const gs_dtype_t outs[] = {GS_DT_BF16, GS_DT_F16, GS_DT_F32};
    enum { N = 3 * 3 * 3 * 2 * 3 * 3 };
    static gs_class_t cls[N];
    int n = 0;
    for (int t = 0; t < 3; ++t)
        for (int ma = 0; ma < 3; ++ma)
            for (int mb = 0; mb < 3; ++mb)
                for (int f = 0; f < 2; ++f)
                    for (int b = 0; b < 3; ++b)
                        for (int o = 0; o < 3; ++o) {
                            gs_problem_t p = lt_problem(pairs[t][0], pairs[t][1], outs[o]);
                            p.lt_scales = modes[ma] << GS_LT_SCALE_A | modes[mb] << GS_LT_SCALE_B;
                            p.lt_flags = f ? GS_LT_FAST_ACCUM : 0;
                            if (biases[b]) {
                                p.bias = (const void *)(uintptr_t)0x7f0000400000ull;
                                p.bias_type = biases[b];
                            }
                            p.scale_a = modes[ma] ? (const void *)(uintptr_t)(0x7100000 + n) : NULL;
                            p.scale_b = modes[mb] ? (const void *)(uintptr_t)(0x7200000 + n) : NULL;
                            gs_problem_classify(&p);
                            CHECK(gs_class_fp8_subset(&p.cls) && gs_class_fp8(&p.cls));
                            cls[n++] = p.cls;
                        }
    CHECK_EQ_INT(n, N);
    qsort(cls, N, sizeof cls[0], class_cmp);
    int same = 0;
    for (int i = 1; i < N; ++i)
        same += !memcmp(&cls[i - 1], &cls[i], sizeof cls[i]);
    CHECK_EQ_INT(same, 0);
    /* the scale pointers are not in the class: another call, the same class */
    gs_problem_t p = lt_problem(GS_DT_E4M3, GS_DT_E4M3, GS_DT_BF16);
    p.lt_scales = GS_SCALE_SCALAR_32F << GS_LT_SCALE_A | GS_SCALE_SCALAR_32F << GS_LT_SCALE_B;
    p.scale_a = (const void *)(uintptr_t)0x7100000;
    p.scale_b = (const void *)(uintptr_t)0x7200000;
    gs_problem_classify(&p);
    gs_problem_t q = p;
    q.scale_a = (const void *)(uintptr_t)0x9100004;
    q.scale_b = (const void *)(uintptr_t)0x9200008;
    gs_problem_classify(&q);
    CHECK(!memcmp(&p.cls, &q.cls, sizeof p.cls));
    /* beyond the subset, by the class */
    const struct {
        unsigned scales, flags;
        gs_dtype_t out;
        gs_compute_t compute;
    } beyond[] = {
        {GS_SCALE_VEC128_32F << GS_LT_SCALE_A, 0, GS_DT_BF16, GS_CT_F32},
        {GS_SCALE_BLK128x128_32F << GS_LT_SCALE_B, 0, GS_DT_BF16, GS_CT_F32},
        {GS_SCALE_SCALAR_32F << GS_LT_SCALE_D, 0, GS_DT_BF16, GS_CT_F32},
        {GS_SCALE_SCALAR_32F << GS_LT_SCALE_C, 0, GS_DT_BF16, GS_CT_F32},
        {0, GS_LT_AMAX_D, GS_DT_BF16, GS_CT_F32},
        {0, GS_LT_C_TYPE_DIFFERS | GS_DT_BF16 << GS_LT_C_TYPE_SHIFT, GS_DT_E4M3, GS_CT_F32},
        {0, 0, GS_DT_E4M3, GS_CT_F32},
        {0, 0, GS_DT_BF16, GS_CT_F32_PEDANTIC},
    };
    for (size_t i = 0; i < sizeof beyond / sizeof beyond[0]; ++i) {
        gs_problem_t r = lt_problem(GS_DT_E4M3, GS_DT_E4M3, beyond[i].out);
        r.lt_scales = beyond[i].scales;
        r.lt_flags = beyond[i].flags;
        r.compute = beyond[i].compute;
        gs_problem_classify(&r);
        if (!CHECK(!gs_class_fp8_subset(&r.cls)))
            fprintf(stderr, "    beyond case %zu taken\n", i);
    }
    gs_problem_t e5 = lt_problem(GS_DT_E5M2, GS_DT_E5M2, GS_DT_BF16);
    gs_problem_classify(&e5);
    CHECK(!gs_class_fp8_subset(&e5.cls));
}

/* Classes without FP8 or a contract: the very bytes they had before the
 * subset (hex written by the code before it), so tune caches and
 * signature files keep their keys. */
static void others_unchanged(void)
{
    static const char lt_bf16[] =
        "05000000000000000300000003000000030000000100000001000000010000000000000000000000"
        "01000000000000000000000000010000000100000001000000000000040000000400000000000000"
        "00040000000000000002000000000000000300000000000000030000000000000003000000000000"
        "00040000000000000100000000000000000000000000000000000000000000000000000000000000";
    static const char lt_bf16_bias[] =
        "05000000000000000300000003000000030000000100000001000000010000000000000000000000"
        "01000000000000000300000000010000000100000001000000010000040000000400000000000000"
        "00040000000000000002000000000000000300000000000000030000000000000003000000000000"
        "00040000000000000100000000000000000000000000000000000000000000000000000000000000";
    static const char gemmex64_f16[] =
        "02000000010000000200000002000000010000000400000001000000000000000100000000000000"
        "02000000100000000000000010000000000100000001000000000000040000000400000042000000"
        "00100000000000001000000000000000001000000000000000100000000000001000000000000000"
        "00100000000000000100000000000000000000000000000000000000000000000000000000000000";
    char hex[GS_CLASS_HEX_LEN + 1];
    gs_problem_t p = lt_problem(GS_DT_BF16, GS_DT_BF16, GS_DT_BF16);
    gs_problem_classify(&p);
    gs_class_hex(&p.cls, hex);
    CHECK_STR_EQ(hex, lt_bf16);
    p.bias = (const void *)(uintptr_t)0x7f0000400000ull;
    p.bias_type = GS_DT_BF16;
    gs_problem_classify(&p);
    gs_class_hex(&p.cls, hex);
    CHECK_STR_EQ(hex, lt_bf16_bias);
    gs_problem_t q;
    memset(&q, 0, sizeof q);
    q.entry = GS_EP_GEMMEX;
    q.is_64 = 1;
    q.a_type = q.b_type = GS_DT_F16;
    q.c_type = GS_DT_F32;
    q.compute = GS_CT_F32_FAST_16F;
    q.scalar_type = GS_DT_F32;
    q.trans_b = GS_OP_T;
    q.m = 4096, q.n = 16, q.k = 4096;
    q.lda = 4096, q.ldb = 16, q.ldc = 4096;
    q.batch = 1;
    q.A = (const void *)(uintptr_t)0x7f0000100010ull;
    q.B = (const void *)(uintptr_t)0x7f0000200000ull;
    q.C = (void *)(uintptr_t)0x7f0000300000ull;
    q.alpha = &one;
    q.beta = &one;
    q.sm_count_target = 66;
    q.math_flags = 0x10;
    gs_problem_classify(&q);
    gs_class_hex(&q.cls, hex);
    CHECK_STR_EQ(hex, gemmex64_f16);
    CHECK(!gs_class_fp8(&p.cls) && !gs_class_fp8_subset(&p.cls));
}

/* ---- dispatch ---- */

static int takes_all(const gs_class_t *c, const gs_device_t *d, int config)
{
    (void)c, (void)d, (void)config;
    return 1;
}

/* An FP8 class goes only to a family that reads the contract, tuned or
 * not; the prior forwards it, saying where it may go. */
static void offered_to_readers_only(void)
{
    gs_device_t h100 = device(9, 0, 132);
    gs_config_t cfg = defaults();
    gs_routing_t r = cfg.routing;
    r.allowed = ~0ull;
    gs_family_t reader = {.name = "reader", .n_configs = 1, .can_implement = takes_all,
                          .reads_lt_contract = 1};
    gs_family_t other = reader;
    other.reads_lt_contract = 0;
    gs_problem_t p = lt_problem(GS_DT_E4M3, GS_DT_E4M3, GS_DT_BF16);
    gs_problem_classify(&p); /* FP8 without scales or fast accumulation */
    CHECK(gs_candidate_takes(&r, 0, &reader, 0, &p.cls, &h100));
    CHECK(!gs_candidate_takes(&r, 0, &other, 0, &p.cls, &h100));
    p.lt_scales = GS_SCALE_OUTER_VEC_32F << GS_LT_SCALE_A | GS_SCALE_OUTER_VEC_32F << GS_LT_SCALE_B;
    p.lt_flags = GS_LT_FAST_ACCUM;
    gs_problem_classify(&p);
    CHECK(gs_candidate_takes(&r, 0, &reader, 0, &p.cls, &h100));
    CHECK(!gs_candidate_takes(&r, 0, &other, 0, &p.cls, &h100));
    gs_problem_t b = lt_problem(GS_DT_BF16, GS_DT_BF16, GS_DT_BF16); /* the control */
    gs_problem_classify(&b);
    CHECK(gs_candidate_takes(&r, 0, &other, 0, &b.cls, &h100));
    CHECK(gs_candidate_takes(&r, 0, &reader, 0, &b.cls, &h100));
    /* not allowed (GEMMSHIM_KERNELS): not offered, reader or not */
    r.allowed = 0;
    CHECK(!gs_candidate_takes(&r, 0, &reader, 0, &p.cls, &h100));
    /* the prior: forwarded, by every policy */
    for (int pol = 0; pol < 2; ++pol) {
        gs_routing_t rr = cfg.routing;
        rr.policy = pol ? GS_POLICY_ELIGIBLE : GS_POLICY_TABLE;
        const gs_decision_t dec = gs_dispatch_prior(&p, &h100, &rr);
        CHECK_EQ_INT(dec.route, GS_ROUTE_FORWARD);
        CHECK_STR_EQ(dec.reason, "no FP8 kernel takes it (device sm_90; decode kernels: n <= 64; "
                                 "the FP8 tiles: GEMMSHIM_FP8_TILES=1)");
    }
}

int main(void)
{
    subset_calls();
    beyond_the_subset();
    variants_apart();
    others_unchanged();
    offered_to_readers_only();
    return GS_TEST_DONE();
}
