/* The cuBLASLt-algorithms family against the fake cuBLASLt, whose
 * heuristic lists several algorithms: candidates per class, workspace
 * plans, configuration text and its rebuild (cublasLtMatmulAlgoCheck), and
 * the calls it refuses. Host code only: nothing runs on a GPU. */
#include "dispatch_fixtures.h"
#include "fake_libs.h"
#include "gs_family.h"
#include "gs_kernels.h"
#include "gs_lt_algos.h"
#include "gs_registry.h"
#include "gs_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int n_ready(const gs_problem_t *p, const gs_device_t *d)
{
    int n = 0;
    for (int c = 0; c < gs_family_cublaslt.n_configs; ++c)
        n += gs_family_cublaslt.can_implement(&p->cls, d, c);
    return n;
}

int main(int argc, char **argv)
{
    if (fake_libs_use(argc, argv, "test_lt_algos"))
        return 2;
    const gs_device_t d = device(9, 0, 132);

    gs_problem_t p = fp32_nn(1000, 1000, 1000);
    gs_problem_classify(&p);
    const gs_family_t *f = &gs_family_cublaslt;
    CHECK(f->tuned_only);
    /* the fake lists three algorithms: configurations 0..2, not 3..7, and
     * the cache slot is empty */
    CHECK_EQ_INT(n_ready(&p, &d), 3);
    CHECK(f->can_implement(&p.cls, &d, 2) && !f->can_implement(&p.cls, &d, 3));
    CHECK(!f->can_implement(&p.cls, &d, f->n_configs - 1));
    /* plans: the flag bytes our kernels keep zero come first */
    gs_plan_t pl = {.family = f, .config = 2};
    f->plan(&p, &d, &pl);
    CHECK_EQ_INT((int)pl.workspace_bytes, GS_WS_FLAG_BYTES + 2 * 1024);
    /* less scratch than planned: the family contract's one answer, nothing run */
    gs_problem_t no_ws = p;
    no_ws.workspace = NULL;
    no_ws.workspace_size = 0;
    CHECK_EQ_INT(f->run(&pl, &no_ws, &d), GS_RUN_NO_WORKSPACE);
    pl.config = 0;
    f->plan(&p, &d, &pl);
    CHECK_EQ_INT((int)pl.workspace_bytes, 0);
    /* configuration text names the algorithm's attributes, and reads back
     * to the heuristic's own slot */
    char text[256];
    f->config_text(&p, &d, 1, text, sizeof text);
    CHECK_STR_EQ(text, "algo=11,tile=21,stages=31,splitk=2,reduction=0,swizzle=0,custom=0,"
                       "inner=0,cluster=0");
    CHECK_EQ_INT(f->config_from_text(&p, &d, text), 1);
    /* an algorithm the heuristic did not list this time is rebuilt, checked
     * and held in the cache slot */
    const int cached = f->config_from_text(
        &p, &d, "algo=42,tile=7,stages=8,splitk=1,reduction=0,swizzle=1,custom=0,inner=0,cluster=0");
    CHECK_EQ_INT(cached, f->n_configs - 1);
    CHECK(f->can_implement(&p.cls, &d, cached));
    f->config_text(&p, &d, cached, text, sizeof text);
    CHECK_STR_EQ(text, "algo=42,tile=7,stages=8,splitk=1,reduction=0,swizzle=1,custom=0,"
                       "inner=0,cluster=0");
    pl.config = cached;
    f->plan(&p, &d, &pl);
    CHECK_EQ_INT((int)pl.workspace_bytes, GS_WS_FLAG_BYTES + 32 * 1024);
    /* one AlgoCheck refuses: dropped (-1), said */
    CHECK_EQ_INT(f->config_from_text(&p, &d, "algo=500,tile=1,stages=1,splitk=1,reduction=0,"
                                             "swizzle=0,custom=0,inner=0,cluster=0"), -1);
    /* text that is not an algorithm's */
    CHECK_EQ_INT(f->config_from_text(&p, &d, "pingpong_128x128x64"), -1);
    CHECK_EQ_INT(f->config_from_text(&p, &d, "algo=11,tile=21"), -1);
    /* through the registry's generic helpers */
    CHECK_EQ_INT(gs_family_config_from_text(f, &p, &d, "algo=10,tile=20,stages=30,splitk=1,"
                                                       "reduction=0,swizzle=0,custom=0,inner=0,"
                                                       "cluster=0"), 0);

    /* calls it does not take */
    gs_problem_t q = p;
    q.entry = GS_EP_GEMMEX_BATCHED; /* pointer arrays */
    gs_problem_classify(&q);
    CHECK_EQ_INT(n_ready(&q, &d), 0);
    q = p; /* cublasLtMatmul's BIAS epilogue is taken, its own class */
    q.entry = GS_EP_LT_MATMUL;
    q.bias = (const void *)(uintptr_t)0x7f0000400000ull;
    q.bias_type = GS_DT_F32;
    gs_problem_classify(&q);
    CHECK_EQ_INT(n_ready(&q, &d), 3);
    q.bias = (const void *)(uintptr_t)0x7f0000400002ull; /* not aligned to its type */
    gs_problem_classify(&q);
    CHECK_EQ_INT(n_ready(&q, &d), 0);
    q = p;
    q.compute = GS_CT_OTHER;
    gs_problem_classify(&q);
    CHECK_EQ_INT(n_ready(&q, &d), 0);
    q = p;
    q.C = NULL;
    gs_problem_classify(&q);
    CHECK_EQ_INT(n_ready(&q, &d), 0);
    gs_device_t none = d;
    none.present = 0;
    CHECK_EQ_INT(n_ready(&p, &none), 0);
    /* TF32 (the application asked for it) and 16-bit types are taken */
    q = p;
    q.compute = GS_CT_F32_TF32;
    gs_problem_classify(&q);
    CHECK_EQ_INT(n_ready(&q, &d), 3);
    q = p;
    q.a_type = q.b_type = q.c_type = GS_DT_BF16;
    gs_problem_classify(&q);
    CHECK_EQ_INT(n_ready(&q, &d), 3);
    /* FP8: the subset of compat/gs_lt.h is taken (e4m3 x e4m3, e5m2 x
     * e4m3, e4m3 x e5m2 into bf16, fp16 or fp32; scales none, tensorwise
     * or rowwise; fast accumulation on or off), against the bf16 control
     * just above; e5m2 x e5m2 and an FP8 D are not */
    const gs_dtype_t fp8[] = {GS_DT_E4M3, GS_DT_E5M2};
    const gs_dtype_t outs[] = {GS_DT_BF16, GS_DT_F16, GS_DT_F32, GS_DT_E4M3, GS_DT_E5M2};
    const unsigned modes[] = {GS_SCALE_NONE, GS_SCALE_SCALAR_32F, GS_SCALE_OUTER_VEC_32F};
    for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b)
            for (int o = 0; o < 5; ++o)
                for (int m = 0; m < 3; ++m)
                    for (int fast = 0; fast < 2; ++fast) {
                        gs_problem_t r = q;
                        r.entry = GS_EP_LT_MATMUL;
                        r.a_type = fp8[a];
                        r.b_type = fp8[b];
                        r.c_type = outs[o];
                        r.lt_scales = modes[m] << GS_LT_SCALE_A | modes[2 - m] << GS_LT_SCALE_B;
                        r.lt_flags = fast ? GS_LT_FAST_ACCUM : 0;
                        gs_problem_classify(&r);
                        const int taken = !(a && b) && o < 3;
                        if (!CHECK(n_ready(&r, &d) == (taken ? 3 : 0)))
                            fprintf(stderr, "    fp8 %d x %d -> %d, scales %x, fast %d\n",
                                    (int)r.a_type, (int)r.b_type, (int)r.c_type, r.lt_scales,
                                    fast);
                    }
    /* each feature beyond the subset, on a taken tensorwise call: refused */
    gs_problem_t t8 = q;
    t8.entry = GS_EP_LT_MATMUL;
    t8.a_type = t8.b_type = GS_DT_E4M3;
    t8.lt_scales = GS_SCALE_SCALAR_32F << GS_LT_SCALE_A | GS_SCALE_SCALAR_32F << GS_LT_SCALE_B;
    gs_problem_classify(&t8);
    CHECK_EQ_INT(n_ready(&t8, &d), 3);
    struct {
        const char *what;
        unsigned scales, flags;
        gs_compute_t compute;
        gs_entry_t entry;
    } beyond[] = {
        {"VEC128_32F A", GS_SCALE_VEC128_32F << GS_LT_SCALE_A, 0, GS_CT_F32, GS_EP_LT_MATMUL},
        {"BLK128x128_32F B", GS_SCALE_BLK128x128_32F << GS_LT_SCALE_B, 0, GS_CT_F32, GS_EP_LT_MATMUL},
        {"MXFP8 A", GS_SCALE_VEC32_UE8M0 << GS_LT_SCALE_A, 0, GS_CT_F32, GS_EP_LT_MATMUL},
        {"a mode not named", GS_SCALE_OTHER << GS_LT_SCALE_B, 0, GS_CT_F32, GS_EP_LT_MATMUL},
        {"C scale", GS_SCALE_SCALAR_32F << GS_LT_SCALE_C, 0, GS_CT_F32, GS_EP_LT_MATMUL},
        {"D scale", GS_SCALE_SCALAR_32F << GS_LT_SCALE_D, 0, GS_CT_F32, GS_EP_LT_MATMUL},
        {"AMAX_D", 0, GS_LT_AMAX_D, GS_CT_F32, GS_EP_LT_MATMUL},
        {"C of another type", 0, GS_LT_C_TYPE_DIFFERS | GS_DT_F16 << GS_LT_C_TYPE_SHIFT,
         GS_CT_F32, GS_EP_LT_MATMUL},
        {"pedantic compute", 0, 0, GS_CT_F32_PEDANTIC, GS_EP_LT_MATMUL},
        {"TF32 compute", 0, 0, GS_CT_F32_TF32, GS_EP_LT_MATMUL},
        {"not cublasLtMatmul", 0, 0, GS_CT_F32, GS_EP_GEMMEX},
    };
    for (size_t i = 0; i < sizeof beyond / sizeof beyond[0]; ++i) {
        gs_problem_t r = t8;
        r.lt_scales |= beyond[i].scales;
        r.lt_flags |= beyond[i].flags;
        r.compute = beyond[i].compute;
        r.entry = beyond[i].entry;
        gs_problem_classify(&r);
        if (!CHECK(n_ready(&r, &d) == 0))
            fprintf(stderr, "    taken with %s\n", beyond[i].what);
    }
    /* a contract on 16-bit operands (scales, fast accumulation): not copied */
    gs_problem_t s16 = q;
    s16.entry = GS_EP_LT_MATMUL;
    s16.lt_scales = GS_SCALE_SCALAR_32F << GS_LT_SCALE_A;
    gs_problem_classify(&s16);
    CHECK_EQ_INT(n_ready(&s16, &d), 0);
    s16.lt_scales = 0;
    s16.lt_flags = GS_LT_FAST_ACCUM;
    gs_problem_classify(&s16);
    CHECK_EQ_INT(n_ready(&s16, &d), 0);
    /* the family says it reads the contract: dispatch offers FP8 to it alone */
    CHECK(f->reads_lt_contract);
    /* each class is asked once and keeps its list: another size, its own */
    setenv("FAKE_LT_ALGOS", "5", 1);
    q = fp32_nn(1000, 1000, 1001);
    gs_problem_classify(&q);
    CHECK_EQ_INT(n_ready(&q, &d), 5);
    CHECK_EQ_INT(n_ready(&p, &d), 4); /* its three, and the cache slot */
    return GS_TEST_DONE();
}
