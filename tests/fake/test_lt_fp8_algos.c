/* FP8 cublasLtMatmul calls and cuBLASLt's own algorithms, against the
 * fake cuBLASLt: each call is built the way torch._scaled_mm or
 * TransformerEngine builds it and made once as the application would (the
 * fake records the descriptors it received), then read by the shim
 * (gs_lt_describe, gs_problem_of_lt) and, where it is of the FP8 subset,
 * run by the cuBLASLt-algorithms family. The family's call must reach the
 * library with what the application's had: types, transposes, scale modes
 * and scale pointers, fast accumulation, bias, every pointer and the
 * stream, only the handle and the algorithm its own. Calls beyond the
 * subset are said so, with a reason, and their classes refused. Dispatch
 * offers an FP8 class to this family alone. Host code only. */
#include "fake_libs.h"
#include "gs_dispatch.h"
#include "gs_family.h"
#include "gs_lt.h"
#include "gs_lt_algos.h"
#include "gs_real.h"
#include "gs_registry.h"
#include "gs_serve.h"
#include "gs_state.h"
#include "gs_test.h"

#include <cublasLt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The fake's descriptor setters, found as the shim finds the library. */
static struct {
    cublasStatus_t (*desc_create)(cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t);
    cublasStatus_t (*desc_set)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void *,
                               size_t);
    cublasStatus_t (*desc_destroy)(cublasLtMatmulDesc_t);
    cublasStatus_t (*layout_create)(cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t,
                                    int64_t);
    cublasStatus_t (*layout_destroy)(cublasLtMatrixLayout_t);
    cublasStatus_t (*create)(cublasLtHandle_t *);
    cublasStatus_t (*destroy)(cublasLtHandle_t);
} lt;

static int find_setters(void)
{
#define GET(field, name) (*(void **)&lt.field = gs_real_symbol(GS_LIB_CUBLASLT, name))
    GET(desc_create, "cublasLtMatmulDescCreate");
    GET(desc_set, "cublasLtMatmulDescSetAttribute");
    GET(desc_destroy, "cublasLtMatmulDescDestroy");
    GET(layout_create, "cublasLtMatrixLayoutCreate");
    GET(layout_destroy, "cublasLtMatrixLayoutDestroy");
    GET(create, "cublasLtCreate");
    GET(destroy, "cublasLtDestroy");
#undef GET
    return lt.desc_create && lt.desc_set && lt.desc_destroy && lt.layout_create &&
           lt.layout_destroy && lt.create && lt.destroy;
}

enum { NO_SCALE = -1 };

typedef struct fp8_call {
    const char *name;
    cudaDataType a, b, c, d;
    int ta, tb;
    int32_t mode_a, mode_b;  /* cuBLASLt's scale modes, NO_SCALE: no pointer set */
    int8_t fast;             /* CUBLASLT_MATMUL_DESC_FAST_ACCUM */
    uint32_t epilogue;
    int device_scalars;
    int32_t compute;
    int d_scale, amax;       /* D's scale pointer, AMAX_D */
    int separate_c;          /* C apart from D (beta 0) */
    int in_subset;           /* cuBLASLt's algorithms take it (lt_algos_only) */
    int class_taken;         /* the family takes its class (the call aside) */
    const char *why;         /* beyond the subset: a reason said */
} fp8_call_t;

#define SCALAR CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F
#define OUTER CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F
#define E4 CUDA_R_8F_E4M3
#define E5 CUDA_R_8F_E5M2
#define BF CUDA_R_16BF
#define DEFAULT CUBLASLT_EPILOGUE_DEFAULT
#define C32 CUBLAS_COMPUTE_32F

static const fp8_call_t calls[] = {
    /* name                     a   b   c     d     ta tb mode_a    mode_b    fast epilogue pmode compute dscale amax sepC subset taken why */
    {"tensorwise, fast",        E4, E4, BF,   BF,   1, 0, SCALAR,   SCALAR,   1, DEFAULT, 0, C32, 0, 0, 0, 1, 1, NULL},
    {"tensorwise, exact",       E4, E4, BF,   BF,   1, 0, SCALAR,   SCALAR,   0, DEFAULT, 0, C32, 0, 0, 0, 1, 1, NULL},
    {"rowwise e5m2 x e4m3",     E5, E4, BF,   BF,   1, 0, OUTER,    OUTER,    0, DEFAULT, 0, C32, 0, 0, 0, 1, 1, NULL},
    {"rowwise e4m3 x e5m2 NT fp32", E4, E5, CUDA_R_32F, CUDA_R_32F, 0, 1, OUTER, OUTER, 1, DEFAULT, 0, C32, 0, 0, 0, 1, 1, NULL},
    {"tensorwise fp16, bias, device scalars", E4, E4, CUDA_R_16F, CUDA_R_16F, 1, 0, SCALAR, SCALAR, 0, CUBLASLT_EPILOGUE_BIAS, 1, C32, 0, 0, 0, 1, 1, NULL},
    {"no scales",               E4, E4, BF,   BF,   1, 0, NO_SCALE, NO_SCALE, 0, DEFAULT, 0, C32, 0, 0, 0, 1, 1, NULL},
    {"one scale, A",            E4, E4, BF,   BF,   1, 0, SCALAR,   NO_SCALE, 1, DEFAULT, 0, C32, 0, 0, 0, 1, 1, NULL},
    /* beyond it */
    {"FP8 D, D scale, AMAX_D (TransformerEngine)", E4, E4, BF, E4, 1, 0, SCALAR, SCALAR, 1, DEFAULT, 0, C32, 1, 1, 1, 0, 0, "D scale set"},
    {"AMAX_D",                  E4, E4, BF,   BF,   1, 0, SCALAR,   SCALAR,   0, DEFAULT, 0, C32, 0, 1, 0, 0, 0, "AMAX_D set"},
    {"D scale",                 E4, E4, BF,   BF,   1, 0, SCALAR,   SCALAR,   0, DEFAULT, 0, C32, 1, 0, 0, 0, 0, "D scale set"},
    {"C apart from D, device beta", E4, E4, BF, BF, 1, 0, SCALAR,   SCALAR,   0, DEFAULT, 1, C32, 0, 0, 1, 0, 1, "C != D with beta != 0"},
    {"C of another type",       E4, E4, CUDA_R_16F, BF, 1, 0, SCALAR, SCALAR, 0, DEFAULT, 0, C32, 0, 0, 0, 0, 0, "C and D types differ"},
    {"VEC128 x BLK128x128",     E4, E4, BF,   BF,   1, 0, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, 0, DEFAULT, 0, C32, 0, 0, 0, 0, 0, "scale modes A=VEC128_32F B=BLK128x128_32F"},
    {"GELU epilogue",           E4, E4, BF,   BF,   1, 0, SCALAR,   SCALAR,   0, CUBLASLT_EPILOGUE_GELU, 0, C32, 0, 0, 0, 0, 1, "epilogue 32 not routed"},
    {"e5m2 x e5m2",             E5, E5, BF,   BF,   1, 0, SCALAR,   SCALAR,   0, DEFAULT, 0, C32, 0, 0, 0, 0, 0, "e5m2 x e5m2"},
    {"pedantic compute",        E4, E4, BF,   BF,   1, 0, SCALAR,   SCALAR,   0, DEFAULT, 0, CUBLAS_COMPUTE_32F_PEDANTIC, 0, 0, 0, 0, 0, "compute type not 32F"},
    /* of the subset again: C apart from D with a host beta of 0 is never read
     * (torch._scaled_mm passes its A there); the family runs on D in place */
    {"C apart from D, host beta 0", E4, E4, BF, BF, 1, 0, SCALAR,   SCALAR,   0, DEFAULT, 0, C32, 0, 0, 1, 1, 1, NULL},
};

enum { M = 1024, N = 512, K = 768 };
static const float one = 1.0f, zero = 0.0f;

/* A made-up device address, distinct per call and per role. */
static const void *addr(int call, int role)
{
    return (const void *)(uintptr_t)(0x10000000ull * (uint64_t)(role + 1) + 0x100000ull * call);
}

/* The descriptors and arguments of one application's call; its scale and
 * bias pointers made up per `variant` (another call of the same class). */
typedef struct built {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc, ld;
    gs_lt_args_t args;
    const void *scale_a, *scale_b, *bias;
} built_t;

static int build(const fp8_call_t *x, int variant, cublasLtHandle_t h, built_t *o)
{
    memset(o, 0, sizeof *o);
    if (lt.desc_create(&o->desc, (cublasComputeType_t)x->compute, CUDA_R_32F))
        return -1;
    const int32_t ta = x->ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = x->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int32_t pm = x->device_scalars ? CUBLASLT_POINTER_MODE_DEVICE : CUBLASLT_POINTER_MODE_HOST;
    int bad = lt.desc_set(o->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) ||
              lt.desc_set(o->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb) ||
              lt.desc_set(o->desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm) ||
              lt.desc_set(o->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &x->epilogue, sizeof x->epilogue) ||
              lt.desc_set(o->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &x->fast, sizeof x->fast);
    if (x->mode_a != NO_SCALE) {
        o->scale_a = addr(variant, 10);
        bad = bad || lt.desc_set(o->desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &x->mode_a, 4) ||
              lt.desc_set(o->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &o->scale_a,
                          sizeof o->scale_a);
    }
    if (x->mode_b != NO_SCALE) {
        o->scale_b = addr(variant, 11);
        bad = bad || lt.desc_set(o->desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &x->mode_b, 4) ||
              lt.desc_set(o->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &o->scale_b,
                          sizeof o->scale_b);
    }
    if (x->epilogue == CUBLASLT_EPILOGUE_BIAS) { /* its type set, as the family sets it */
        const int32_t bt = (int32_t)x->d;
        o->bias = addr(variant, 12);
        bad = bad || lt.desc_set(o->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &o->bias,
                                 sizeof o->bias) ||
              lt.desc_set(o->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
    }
    if (x->d_scale) {
        const void *p = addr(variant, 13);
        bad = bad || lt.desc_set(o->desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &p, sizeof p);
    }
    if (x->amax) {
        const void *p = addr(variant, 14);
        bad = bad || lt.desc_set(o->desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &p, sizeof p);
    }
    bad = bad ||
          lt.layout_create(&o->la, x->a, x->ta ? K : M, x->ta ? M : K, x->ta ? K : M) ||
          lt.layout_create(&o->lb, x->b, x->tb ? N : K, x->tb ? K : N, x->tb ? N : K) ||
          lt.layout_create(&o->lc, x->c, M, N, M) || lt.layout_create(&o->ld, x->d, M, N, M);
    static float dev_scalars[2]; /* never read: the fake runs nothing */
    const void *D = addr(variant, 3);
    gs_lt_args_t a = {.handle = h,
                      .desc = o->desc,
                      .alpha = x->device_scalars ? (const void *)&dev_scalars[0] : &one,
                      .A = addr(variant, 0),
                      .Adesc = o->la,
                      .B = addr(variant, 1),
                      .Bdesc = o->lb,
                      .beta = x->device_scalars ? (const void *)&dev_scalars[1] : &zero,
                      .C = x->separate_c ? addr(variant, 2) : D,
                      .Cdesc = o->lc,
                      .D = (void *)D,
                      .Ddesc = o->ld,
                      .stream = (cudaStream_t)(uintptr_t)0x5100};
    o->args = a;
    return bad ? -1 : 0;
}

static void release(built_t *o)
{
    lt.layout_destroy(o->la);
    lt.layout_destroy(o->lb);
    lt.layout_destroy(o->lc);
    lt.layout_destroy(o->ld);
    lt.desc_destroy(o->desc);
}

/* The fake's record: its last cublasLtMatmul line, and the number of them. */
static const char *record_path;

static int last_matmul(char *line, size_t size)
{
    FILE *f = fopen(record_path, "r");
    int n = 0;
    if (!f)
        return 0;
    static char buf[16384];
    line[0] = '\0';
    while (fgets(buf, sizeof buf, f))
        if (!strncmp(buf, "cublasLtMatmul ", 15)) {
            snprintf(line, size, "%s", buf);
            ++n;
        }
    fclose(f);
    return n;
}

/* " name=value" of a record line, into out; 0 when absent. */
static int field(const char *line, const char *name, char *out, size_t size)
{
    char key[64];
    snprintf(key, sizeof key, " %s=", name);
    const char *p = strstr(line, key);
    if (!p)
        return 0;
    p += strlen(key);
    size_t n = strcspn(p, " \n");
    if (n >= size)
        n = size - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    return 1;
}

/* "attr:<bytes in hex>," for a pointer attribute, as the fake writes it. */
static void ptr_attr(int attr, const void *p, char *out, size_t size)
{
    unsigned char b[sizeof p];
    memcpy(b, &p, sizeof p);
    int n = snprintf(out, size, ",%d:", attr);
    for (size_t i = 0; i < sizeof b && n > 0 && (size_t)n + 3 < size; ++i)
        n += snprintf(out + n, size - (size_t)n, "%02x", b[i]);
    snprintf(out + n, size - (size_t)n, ",");
}

/* What the application's call handed cuBLASLt, the family's call must
 * too: every argument but the handle, the descriptors' addresses and the
 * algorithm, and every attribute of the descriptors. */
static const char *const same[] = {"alpha", "A", "B", "beta", "C", "D", "workspace",
                                   "workspaceSizeInBytes", "stream", "computeDesc.attrs",
                                   "Adesc.attrs", "Bdesc.attrs", "Cdesc.attrs", "Ddesc.attrs"};

/* The family's call is the application's; where the application's C is
 * apart from D (and never read), the family's C is D. */
static void compare(const char *name, const char *app, const char *ours, int separate_c)
{
    if (separate_c) {
        char c[4096], d[4096];
        if (!CHECK(field(ours, "C", c, sizeof c) && field(ours, "D", d, sizeof d) && !strcmp(c, d)))
            fprintf(stderr, "    %s: the family's C is not D\n", name);
    }
    for (size_t i = 0; i < sizeof same / sizeof same[0]; ++i) {
        if (separate_c && !strcmp(same[i], "C"))
            continue;
        char want[4096], got[4096];
        const int have = field(app, same[i], want, sizeof want);
        if (!CHECK(have && field(ours, same[i], got, sizeof got) && !strcmp(want, got)))
            fprintf(stderr, "    %s: %s\n      application's %s\n      family's      %s\n", name,
                    same[i], have ? want : "(none)", got);
    }
}

static void one_call(const fp8_call_t *x, int index, cublasLtHandle_t h, const gs_device_t *d)
{
    const gs_family_t *f = &gs_family_cublaslt;
    const gs_real_table_t *r = gs_real(GS_LIB_CUBLASLT);
    const gs_lt_getters_t g = {r->cublasLtMatmulDescGetAttribute,
                               r->cublasLtMatrixLayoutGetAttribute};
    built_t b;
    if (!CHECK(build(x, index, h, &b) == 0))
        return;
    /* the application's own call */
    const gs_lt_args_t *a = &b.args;
    CHECK_EQ_INT(r->cublasLtMatmul(a->handle, a->desc, a->alpha, a->A, a->Adesc, a->B, a->Bdesc,
                                   a->beta, a->C, a->Cdesc, a->D, a->Ddesc, NULL, NULL, 0,
                                   a->stream),
                 CUBLAS_STATUS_SUCCESS);
    char app[16384];
    const int before = last_matmul(app, sizeof app);

    gs_call_t c;
    gs_lt_describe(&g, a, &c);
    if (!CHECK(c.lt_algos_only == x->in_subset))
        fprintf(stderr, "    %s: reasons '%s', not for the algorithms: %s\n", x->name,
                c.lt_unroutable, c.lt_algos_why ? c.lt_algos_why : "(none)");
    CHECK_CONTAINS(c.lt_unroutable, "fp8 operands"); /* our kernels never take it */
    CHECK(c.scale_a == b.scale_a && c.scale_b == b.scale_b);
    if (x->why) { /* said in the list, or beside it */
        char both[GS_LT_WHY_MAX + 64];
        snprintf(both, sizeof both, "%s; %s", c.lt_unroutable,
                 c.lt_algos_why ? c.lt_algos_why : "");
        if (!CHECK(strstr(both, x->why) != NULL))
            fprintf(stderr, "    %s: '%s' does not say '%s'\n", x->name, both, x->why);
    }
    gs_problem_t p;
    gs_problem_of_lt(&c, &p);
    CHECK(p.scale_a == b.scale_a && p.scale_b == b.scale_b); /* carried beside the class */
    const int taken = f->can_implement(&p.cls, d, 0);
    if (!CHECK(taken == x->class_taken))
        fprintf(stderr, "    %s: the family's verdict on its class\n", x->name);
    /* our own kernels' families are never offered it; under any routing */
    const gs_routing_t routing = gs_routing();
    for (int i = 0; i < gs_candidate_count(); ++i) {
        int config;
        const gs_family_t *fam = gs_candidate(i, &config);
        if (fam != f && !CHECK(!gs_candidate_takes(&routing, i, fam, config, &p.cls, d)))
            fprintf(stderr, "    %s offered to %s\n", x->name, gs_candidate_name(i));
    }
    if (!x->in_subset || !taken) {
        release(&b);
        return;
    }
    CHECK(gs_candidate_takes(&routing, gs_candidate_of(f, 0), f, 0, &p.cls, d));

    /* the family's call, as serving makes it: plan, then run */
    for (int variant = 0; variant < 2; ++variant) {
        if (variant) { /* another call of the class: its own pointers, every run */
            release(&b);
            build(x, index + 100, h, &b);
            a = &b.args;
            gs_lt_describe(&g, a, &c);
            gs_problem_of_lt(&c, &p);
            CHECK(p.scale_a == b.scale_a && p.scale_b == b.scale_b && p.bias == b.bias);
            CHECK_EQ_INT(r->cublasLtMatmul(a->handle, a->desc, a->alpha, a->A, a->Adesc, a->B,
                                           a->Bdesc, a->beta, a->C, a->Cdesc, a->D, a->Ddesc,
                                           NULL, NULL, 0, a->stream),
                         CUBLAS_STATUS_SUCCESS);
            last_matmul(app, sizeof app);
        }
        gs_plan_t pl = {.family = f, .config = 0};
        f->plan(&p, d, &pl);
        CHECK_EQ_INT((int)pl.workspace_bytes, 0); /* the fake's first algorithm needs none */
        CHECK_EQ_INT(f->run(&pl, &p, d), 0);
        char ours[16384];
        CHECK_EQ_INT(last_matmul(ours, sizeof ours), before + 2 * variant + 1);
        compare(x->name, app, ours, x->separate_c);
        /* and, spelled out: the scale pointers of this call */
        char attr[64];
        if (b.scale_a) {
            ptr_attr(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, b.scale_a, attr, sizeof attr);
            CHECK_CONTAINS(ours, attr);
        }
        if (b.scale_b) {
            ptr_attr(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, b.scale_b, attr, sizeof attr);
            CHECK_CONTAINS(ours, attr);
        }
        if (b.bias) {
            ptr_attr(CUBLASLT_MATMUL_DESC_BIAS_POINTER, b.bias, attr, sizeof attr);
            CHECK_CONTAINS(ours, attr);
        }
    }
    /* a problem without the scales its class has: refused, nothing made */
    if (b.scale_a) {
        gs_problem_t q = p;
        q.scale_a = NULL;
        gs_plan_t pl = {.family = f, .config = 0};
        f->plan(&q, d, &pl);
        char ours[16384];
        const int n = last_matmul(ours, sizeof ours);
        CHECK(f->run(&pl, &q, d) != 0);
        CHECK_EQ_INT(last_matmul(ours, sizeof ours), n);
    }
    release(&b);
}

/* Every variant is a class of its own: what the tune cache keys. */
static void classes_apart(const gs_device_t *d, cublasLtHandle_t h)
{
    (void)d;
    const gs_real_table_t *r = gs_real(GS_LIB_CUBLASLT);
    const gs_lt_getters_t g = {r->cublasLtMatmulDescGetAttribute,
                               r->cublasLtMatrixLayoutGetAttribute};
    enum { N_CALLS = sizeof calls / sizeof calls[0] };
    gs_class_t cls[N_CALLS];
    for (int i = 0; i < N_CALLS; ++i) {
        built_t b;
        build(&calls[i], 0, h, &b);
        gs_call_t c;
        gs_lt_describe(&g, &b.args, &c);
        gs_problem_t p;
        gs_problem_of_lt(&c, &p);
        cls[i] = p.cls;
        release(&b);
    }
    /* a C never read is no part of the class */
    CHECK(memcmp(&cls[N_CALLS - 1], &cls[1], sizeof cls[1]) == 0);
    /* the subset's (the first seven), pairwise */
    for (int i = 0; i < N_CALLS && calls[i].in_subset; ++i)
        for (int j = 0; j < i; ++j)
            if (!CHECK(memcmp(&cls[i], &cls[j], sizeof cls[i]) != 0))
                fprintf(stderr, "    '%s' and '%s' share a class\n", calls[i].name,
                        calls[j].name);
}

int main(int argc, char **argv)
{
    if (fake_libs_use(argc, argv, "test_lt_fp8_algos"))
        return 2;
    static char path[] = "/tmp/gs_test_lt_fp8_algos.XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0)
        return 2;
    close(fd);
    record_path = path;
    setenv("FAKE_CUBLAS_RECORD", path, 1);
    gs_cfg(); /* the start-up: the cuBLASLt family in the registry */
    cublasLtHandle_t h = NULL;
    if (!CHECK(find_setters()) || !CHECK(lt.create(&h) == CUBLAS_STATUS_SUCCESS)) {
        unlink(path);
        return GS_TEST_DONE();
    }
    CHECK(gs_family_find("cublaslt") == &gs_family_cublaslt);
    gs_device_t d;
    memset(&d, 0, sizeof d);
    d.present = 1, d.cc_major = 9, d.sm_count = 132, d.smem_optin = 232448;
    d.l2_bytes = 50u << 20;
    snprintf(d.gpu, sizeof d.gpu, "H100");
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i)
        one_call(&calls[i], (int)i, h, &d);
    classes_apart(&d, h);
    lt.destroy(h);
    unlink(path);
    return GS_TEST_DONE();
}
