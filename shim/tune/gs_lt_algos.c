/* cuBLASLt's own algorithms as a kernel family, for tuned routing only.
 *
 * For a call's class, the equivalent cublasLtMatmul (same types, compute
 * type with the handle's math mode folded in, transposes, batches, pointer
 * mode; for the FP8 subset of gs_lt.h also A's and B's scale modes and
 * fast accumulation, the scale pointers set per call like the bias's)
 * is described once, and the real cuBLASLt heuristic is asked for its
 * first GEMMSHIM_TUNE_LT_ALGOS algorithms with the call's real facts: the
 * operands' actual alignment (its default assumes 256 bytes), the reduction
 * schemes CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION allows, and a
 * workspace no larger than the shim's per-stream buffer less the flag
 * bytes our split-K kernels keep zero (kernels/gs_kernels.h). Configuration
 * i is the heuristic's i-th algorithm for that class; the last slot holds
 * an algorithm rebuilt from the tune cache by its configuration attributes
 * and checked with cublasLtMatmulAlgoCheck. Runs through the real
 * cuBLASLt, on the call's stream, D = C in place. */
#include "gs_lt_algos.h"
#include "gs_class_map.h"
#include "gs_compat.h"
#include "gs_family.h"
#include "gs_kernels.h"
#include "gs_log.h"
#include "gs_real.h"
#include "gs_state.h"

#include <cublasLt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    HEURISTIC_MAX = 8,
    SLOTS = HEURISTIC_MAX + 1, /* the last: an algorithm from the tune cache */
    IMPORTED = HEURISTIC_MAX,
    SIGS_MAX = 8192,
    DEVICES_MAX = 64,
};

/* The real cuBLASLt functions this family calls, looked up once. */
static struct lt_fns {
    cublasStatus_t (*create)(cublasLtHandle_t *);
    cublasStatus_t (*desc_create)(cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t);
    cublasStatus_t (*desc_set)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void *,
                               size_t);
    cublasStatus_t (*layout_create)(cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t,
                                    int64_t);
    cublasStatus_t (*layout_set)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t,
                                 const void *, size_t);
    cublasStatus_t (*pref_create)(cublasLtMatmulPreference_t *);
    cublasStatus_t (*pref_set)(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t,
                               const void *, size_t);
    cublasStatus_t (*pref_destroy)(cublasLtMatmulPreference_t);
    cublasStatus_t (*heuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
                                cublasLtMatmulHeuristicResult_t *, int *);
    cublasStatus_t (*algo_init)(cublasLtHandle_t, cublasComputeType_t, cudaDataType_t,
                                cudaDataType_t, cudaDataType_t, cudaDataType_t, cudaDataType_t,
                                int, cublasLtMatmulAlgo_t *);
    cublasStatus_t (*algo_check)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                 cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                 cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *,
                                 cublasLtMatmulHeuristicResult_t *);
    cublasStatus_t (*cfg_get)(const cublasLtMatmulAlgo_t *, cublasLtMatmulAlgoConfigAttributes_t,
                              void *, size_t, size_t *);
    cublasStatus_t (*cfg_set)(cublasLtMatmulAlgo_t *, cublasLtMatmulAlgoConfigAttributes_t,
                              const void *, size_t);
    int ok;
} fn;

static void resolve_fns(void)
{
#define GET(field, name) (*(void **)&fn.field = gs_real_symbol(GS_LIB_CUBLASLT, name))
    GET(create, "cublasLtCreate");
    GET(desc_create, "cublasLtMatmulDescCreate");
    GET(desc_set, "cublasLtMatmulDescSetAttribute");
    GET(layout_create, "cublasLtMatrixLayoutCreate");
    GET(layout_set, "cublasLtMatrixLayoutSetAttribute");
    GET(pref_create, "cublasLtMatmulPreferenceCreate");
    GET(pref_set, "cublasLtMatmulPreferenceSetAttribute");
    GET(pref_destroy, "cublasLtMatmulPreferenceDestroy");
    GET(heuristic, "cublasLtMatmulAlgoGetHeuristic");
    GET(algo_init, "cublasLtMatmulAlgoInit");
    GET(algo_check, "cublasLtMatmulAlgoCheck");
    GET(cfg_get, "cublasLtMatmulAlgoConfigGetAttribute");
    GET(cfg_set, "cublasLtMatmulAlgoConfigSetAttribute");
#undef GET
    fn.ok = fn.create && fn.desc_create && fn.desc_set && fn.layout_create && fn.layout_set &&
            fn.pref_create && fn.pref_set && fn.pref_destroy && fn.heuristic && fn.algo_init &&
            fn.algo_check && fn.cfg_get && fn.cfg_set && gs_real(GS_LIB_CUBLASLT)->cublasLtMatmul;
    if (!fn.ok)
        gs_msg("tune: the real cuBLASLt lacks the matmul heuristic API; its algorithms are not "
               "candidates");
}

static int fns_ready(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, resolve_fns);
    return fn.ok;
}

/* One class's cublasLtMatmul: descriptors and the algorithms listed for it. */
typedef struct lt_sig {
    gs_class_key_t key; /* first: the table's key (gs_class_map.h) */
    int usable; /* descriptors built and the heuristic asked */
    cublasComputeType_t compute;
    cudaDataType_t scale, at, bt, ct;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    pthread_mutex_t call_lock; /* the per-call pointers (the BIAS epilogue's, A's and B's
                                  scales) are set on op for each call; held from there to
                                  the end of cublasLtMatmul, which reads them */
    int n_algos;
    int have[SLOTS];
    cublasLtMatmulAlgo_t algo[SLOTS];
    size_t ws[SLOTS];
} lt_sig_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* entries never freed: plans point at them */
static void *sig_slots[SIGS_MAX];
static gs_class_map_t sigs = {sig_slots, SIGS_MAX, SIGS_MAX / 2, 0};
static cublasLtHandle_t handles[DEVICES_MAX];

static cudaDataType_t cuda_type(int t)
{
    switch (t) {
    case GS_DT_F32: return CUDA_R_32F;
    case GS_DT_F16: return CUDA_R_16F;
    case GS_DT_BF16: return CUDA_R_16BF;
    case GS_DT_F64: return CUDA_R_64F;
    case GS_DT_E4M3: return CUDA_R_8F_E4M3;
    case GS_DT_E5M2: return CUDA_R_8F_E5M2;
    default: return (cudaDataType_t)-1;
    }
}

/* The compute type cuBLAS runs the call with, as cuBLASLt spells it; -1
 * when the shim does not serve it through cuBLASLt. */
static int lt_compute(const gs_class_t *c)
{
    switch (c->compute) {
    case GS_CT_F32: return CUBLAS_COMPUTE_32F;
    case GS_CT_F32_PEDANTIC: return CUBLAS_COMPUTE_32F_PEDANTIC;
    case GS_CT_F32_TF32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case GS_CT_F32_FAST_16F: return CUBLAS_COMPUTE_32F_FAST_16F;
    case GS_CT_F32_FAST_16BF: return CUBLAS_COMPUTE_32F_FAST_16BF;
    default: return -1;
    }
}

/* The scaling contract the family copies, exactly as cuBLASLt specifies
 * it: the FP8 subset (gs_class_fp8_subset). A contract on other types
 * (scales on bf16) is not copied: not taken. */
static int contract_copied(const gs_class_t *c)
{
    return gs_class_fp8(c) ? gs_class_fp8_subset(c) : !gs_class_lt_scaled(c);
}

/* The calls this family takes: one GEMM or strided batches of it (no
 * pointer arrays; cublasLtMatmul's BIAS epilogue), types cuBLASLt runs with
 * fp32 scalars, and the FP8 subset's contract. */
static int eligible(const gs_class_t *c)
{
    if (c->entry == GS_EP_GEMMEX_BATCHED || !contract_copied(c))
        return 0;
    if (c->bias_type != GS_DT_OTHER &&
        ((int)cuda_type(c->bias_type) < 0 || c->bias_type == GS_DT_F64 ||
         c->align_bias < gs_dtype_size(c->bias_type)))
        return 0;
    if (c->scalar_type != GS_DT_F32 || lt_compute(c) < 0)
        return 0;
    if ((int)cuda_type(c->a_type) < 0 || (int)cuda_type(c->b_type) < 0 ||
        (int)cuda_type(c->c_type) < 0 || c->a_type == GS_DT_F64)
        return 0;
    if (!c->align_a || !c->align_b || !c->align_c || !c->align_alpha || !c->align_beta)
        return 0;
    if (c->m < 1 || c->n < 1 || c->k < 1 || c->batch < 1 || c->batch > 0x7fffffff)
        return 0;
    return 1;
}

/* The alignment every column start of an operand keeps: its pointer's,
 * and that of its leading dimension and batch stride in bytes. */
static uint32_t operand_align(uint32_t ptr_align, int64_t ld, int64_t stride, int64_t batch,
                              size_t es)
{
    uint32_t a = ptr_align ? ptr_align : 1;
    uint64_t bytes[2] = {(uint64_t)ld * es, batch > 1 ? (uint64_t)stride * es : 0};
    for (int i = 0; i < 2; ++i)
        while (bytes[i] && a > 1 && bytes[i] % a)
            a >>= 1;
    return a;
}

static cublasLtMatrixLayout_t layout(cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld,
                                     int64_t batch, int64_t stride)
{
    cublasLtMatrixLayout_t l = NULL;
    if (fn.layout_create(&l, t, (uint64_t)rows, (uint64_t)cols, ld) != CUBLAS_STATUS_SUCCESS)
        return NULL;
    if (batch > 1) {
        const int32_t bc = (int32_t)batch;
        fn.layout_set(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc);
        fn.layout_set(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
    }
    return l;
}

static cublasLtHandle_t handle_for(int ordinal)
{
    if (ordinal < 0 || ordinal >= DEVICES_MAX)
        return NULL;
    if (!handles[ordinal] && fn.create(&handles[ordinal]) != CUBLAS_STATUS_SUCCESS)
        handles[ordinal] = NULL;
    return handles[ordinal];
}

/* Stands for a scale pointer while the heuristic is asked: it reads the
 * descriptor on the host only, and sees a scale set where the call had
 * one (a mode comes with its pointer); run sets the call's own pointer
 * before every cublasLtMatmul. Never dereferenced, 256-byte aligned. */
#define SCALE_STAND_IN ((const void *)(uintptr_t)0x100)

/* A's or B's scale as the class has it: its mode (SCALAR_32F is the
 * default, set only where the library knows the attribute) and a pointer
 * standing in for the call's; 0, or -1 when the library refuses them. */
static int copy_scale(cublasLtMatmulDesc_t op, gs_scale_mode_t m,
                      cublasLtMatmulDescAttributes_t pointer, cublasLtMatmulDescAttributes_t mode)
{
    if (m == GS_SCALE_NONE)
        return 0;
    const int32_t lt = gs_scale_mode_to_lt(m);
    const void *stand_in = SCALE_STAND_IN;
    if (m != GS_SCALE_SCALAR_32F &&
        fn.desc_set(op, mode, &lt, sizeof lt) != CUBLAS_STATUS_SUCCESS)
        return -1;
    return fn.desc_set(op, pointer, &stand_in, sizeof stand_in) == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

/* The FP8 contract on op: scale modes and fast accumulation as the call
 * had them; 0, or -1 (the library does not know one: not described). */
static int copy_contract(cublasLtMatmulDesc_t op, const gs_class_t *c)
{
    if (!gs_class_fp8(c))
        return 0;
    const int8_t fast = (c->lt_flags & GS_LT_FAST_ACCUM) ? 1 : 0;
    if (fn.desc_set(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast) !=
        CUBLAS_STATUS_SUCCESS)
        return -1;
    return copy_scale(op, gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_A),
                      CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_A_SCALE_MODE) ||
                   copy_scale(op, gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_B),
                              CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                              CUBLASLT_MATMUL_DESC_B_SCALE_MODE)
               ? -1
               : 0;
}

/* Builds s's descriptors and asks the heuristic. Under lock. */
static void describe(lt_sig_t *s)
{
    const gs_class_t *c = &s->key.cls;
    cublasLtHandle_t h = handle_for(s->key.ordinal);
    if (!h)
        return;
    s->compute = (cublasComputeType_t)lt_compute(c);
    s->scale = CUDA_R_32F;
    s->at = cuda_type(c->a_type);
    s->bt = cuda_type(c->b_type);
    s->ct = cuda_type(c->c_type);
    if (fn.desc_create(&s->op, s->compute, s->scale) != CUBLAS_STATUS_SUCCESS)
        return;
    const int32_t ta = c->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                  tb = c->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int32_t pm = c->scalars_on_device ? CUBLASLT_POINTER_MODE_DEVICE
                                            : CUBLASLT_POINTER_MODE_HOST;
    fn.desc_set(s->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    fn.desc_set(s->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    fn.desc_set(s->op, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm);
    if (c->sm_count_target > 0) /* the application's cublasSetSmCountTarget */
        fn.desc_set(s->op, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &c->sm_count_target,
                    sizeof c->sm_count_target);
    if (c->bias_type != GS_DT_OTHER) { /* the pointer is set per call (run) */
        const uint32_t epi = CUBLASLT_EPILOGUE_BIAS;
        const int32_t bt = cuda_type(c->bias_type);
        fn.desc_set(s->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
        fn.desc_set(s->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
    }
    if (copy_contract(s->op, c))
        return; /* a contract not copied would time another product */
    s->a = layout(s->at, c->trans_a ? c->k : c->m, c->trans_a ? c->m : c->k, c->lda, c->batch,
                  c->stride_a);
    s->b = layout(s->bt, c->trans_b ? c->n : c->k, c->trans_b ? c->k : c->n, c->ldb, c->batch,
                  c->stride_b);
    s->c = layout(s->ct, c->m, c->n, c->ldc, c->batch, c->stride_c);
    if (!s->a || !s->b || !s->c)
        return;
    s->usable = 1;
    const int want = gs_cfg()->tune.lt_algos;
    if (want < 1)
        return;
    cublasLtMatmulPreference_t pref;
    if (fn.pref_create(&pref) != CUBLAS_STATUS_SUCCESS)
        return;
    const size_t cap = gs_cfg()->workspace_cap;
    const uint64_t ws = cap > GS_WS_FLAG_BYTES ? cap - GS_WS_FLAG_BYTES : 0;
    fn.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    const size_t aes = gs_dtype_size(c->a_type), bes = gs_dtype_size(c->b_type),
                 ces = gs_dtype_size(c->c_type);
    const uint32_t al_a = operand_align(c->align_a, c->lda, c->stride_a, c->batch, aes),
                   al_b = operand_align(c->align_b, c->ldb, c->stride_b, c->batch, bes),
                   al_c = operand_align(c->align_c, c->ldc, c->stride_c, c->batch, ces);
    fn.pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof al_a);
    fn.pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof al_b);
    fn.pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof al_c);
    fn.pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c, sizeof al_c);
    if ((c->math_flags & CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) ||
        c->entry == GS_EP_LT_MATMUL) {
        /* no reduction in the output type (a cublasLtMatmul caller chose its
         * own algorithm: no reduced-precision reduction it did not ask for) */
        const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_INPLACE |
                              CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
        fn.pref_set(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask);
    }
    cublasLtMatmulHeuristicResult_t res[HEURISTIC_MAX];
    int n = 0;
    if (fn.heuristic(h, s->op, s->a, s->b, s->c, s->c, pref, want, res, &n) !=
        CUBLAS_STATUS_SUCCESS)
        n = 0;
    fn.pref_destroy(pref);
    for (int i = 0; i < n && i < HEURISTIC_MAX; ++i) {
        if (res[i].state != CUBLAS_STATUS_SUCCESS)
            continue;
        s->algo[s->n_algos] = res[i].algo;
        s->ws[s->n_algos] = res[i].workspaceSize;
        s->have[s->n_algos++] = 1;
    }
}

/* The class's entry, described on first sight; NULL when it cannot be. */
static lt_sig_t *sig_of(const gs_class_t *c, const gs_device_t *d)
{
    if (!d->present || !eligible(c) || !fns_ready())
        return NULL;
    pthread_mutex_lock(&lock);
    void **slot = gs_class_map_slot(&sigs, c, d->ordinal);
    lt_sig_t *found = slot ? *slot : NULL; /* no slot: full, no more classes */
    if (slot && !found && (found = calloc(1, sizeof *found))) {
        found->key.cls = *c;
        found->key.ordinal = d->ordinal;
        pthread_mutex_init(&found->call_lock, NULL);
        describe(found);
        gs_class_map_put(&sigs, slot, found);
    }
    pthread_mutex_unlock(&lock);
    return found && found->usable ? found : NULL;
}

static int slot_ready(const lt_sig_t *s, int config)
{
    return s && config >= 0 && config < SLOTS && __atomic_load_n(&s->have[config], __ATOMIC_ACQUIRE);
}

/* ---- the family ---- */

static const char *config_name(int config)
{
    static const char *const names[SLOTS] = {"cublaslt_h0", "cublaslt_h1", "cublaslt_h2",
                                             "cublaslt_h3", "cublaslt_h4", "cublaslt_h5",
                                             "cublaslt_h6", "cublaslt_h7", "cublaslt_cached"};
    return config >= 0 && config < SLOTS ? names[config] : "?";
}

static int can_implement(const gs_class_t *c, const gs_device_t *d, int config)
{
    return slot_ready(sig_of(c, d), config);
}

/* The plan's data: the class's entry, found once by plan and used by run. */
enum { LT_PLAN_TAG = 0x4c545031u }; /* "LTP1" */
typedef struct lt_plan {
    uint32_t tag;
    const lt_sig_t *sig;
} lt_plan_t;
_Static_assert(sizeof(lt_plan_t) <= GS_PLAN_DATA_MAX, "the plan fits gs_plan_t.data");

static void plan(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *pl)
{
    const lt_plan_t lp = {LT_PLAN_TAG, sig_of(&p->cls, d)};
    memcpy(pl->data.bytes, &lp, sizeof lp);
    pl->kernel = config_name(pl->config);
    pl->workspace_bytes = slot_ready(lp.sig, pl->config) && lp.sig->ws[pl->config]
                              ? GS_WS_FLAG_BYTES + lp.sig->ws[pl->config]
                              : 0;
}

static int run(const gs_plan_t *pl, const gs_problem_t *p, const gs_device_t *d)
{
    (void)d;
    lt_plan_t lp;
    memcpy(&lp, pl->data.bytes, sizeof lp);
    const lt_sig_t *s = lp.sig;
    if (lp.tag != LT_PLAN_TAG || !slot_ready(s, pl->config))
        return 1; /* cudaErrorInvalidValue: not a plan of ours; nothing enqueued */
    if (!gs_plan_workspace_ok(pl, p)) /* workspace_bytes: the flag bytes and ws */
        return GS_RUN_NO_WORKSPACE; /* nothing enqueued (dispatch/gs_family.h) */
    const gs_class_t *c = &s->key.cls;
    const int scale_a = gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_A) != GS_SCALE_NONE,
              scale_b = gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_B) != GS_SCALE_NONE;
    if ((scale_a && !p->scale_a) || (scale_b && !p->scale_b))
        return 1; /* a problem without the scales its class says it has; nothing enqueued */
    cublasLtHandle_t h = handles[s->key.ordinal];
    const size_t ws = s->ws[pl->config];
    void *w = ws ? (char *)p->workspace + GS_WS_FLAG_BYTES : NULL;
    const int bias = c->bias_type != GS_DT_OTHER, per_call = bias || scale_a || scale_b;
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    if (per_call) /* the shared descriptor holds one call's pointers at a time */
        pthread_mutex_lock((pthread_mutex_t *)&s->call_lock);
    if (bias)
        st = fn.desc_set(s->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p->bias, sizeof p->bias);
    if (scale_a && st == CUBLAS_STATUS_SUCCESS)
        st = fn.desc_set(s->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &p->scale_a,
                         sizeof p->scale_a);
    if (scale_b && st == CUBLAS_STATUS_SUCCESS)
        st = fn.desc_set(s->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &p->scale_b,
                         sizeof p->scale_b);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = gs_real(GS_LIB_CUBLASLT)->cublasLtMatmul(
            h, s->op, p->alpha, p->A, s->a, p->B, s->b, p->beta, p->C, s->c, p->C, s->c,
            &s->algo[pl->config], w, ws, (cudaStream_t)p->stream);
    if (per_call)
        pthread_mutex_unlock((pthread_mutex_t *)&s->call_lock);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : 719; /* cudaErrorLaunchFailure */
}

/* The configuration attributes that rebuild an algorithm. */
typedef struct algo_attrs {
    int32_t id, splitk;
    uint32_t tile, red, swizzle, custom, stages;
    uint16_t inner, cluster;
} algo_attrs_t;

static int attrs_of(const cublasLtMatmulAlgo_t *a, algo_attrs_t *t)
{
    size_t w;
    memset(t, 0, sizeof *t);
    return fn.cfg_get(a, CUBLASLT_ALGO_CONFIG_ID, &t->id, sizeof t->id, &w) ||
           fn.cfg_get(a, CUBLASLT_ALGO_CONFIG_TILE_ID, &t->tile, sizeof t->tile, &w) ||
           fn.cfg_get(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &t->splitk, sizeof t->splitk, &w) ||
           fn.cfg_get(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &t->red, sizeof t->red, &w) ||
           fn.cfg_get(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &t->swizzle, sizeof t->swizzle, &w) ||
           fn.cfg_get(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &t->custom, sizeof t->custom, &w) ||
           fn.cfg_get(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &t->stages, sizeof t->stages, &w) ||
           fn.cfg_get(a, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &t->inner, sizeof t->inner, &w) ||
           fn.cfg_get(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &t->cluster, sizeof t->cluster,
                      &w)
               ? -1
               : 0;
}

static const char *config_text(const gs_problem_t *p, const gs_device_t *d, int config, char *buf,
                               size_t size)
{
    const lt_sig_t *s = sig_of(&p->cls, d);
    algo_attrs_t t;
    if (!slot_ready(s, config) || attrs_of(&s->algo[config], &t)) {
        snprintf(buf, size, "%s", config_name(config));
        return buf;
    }
    snprintf(buf, size,
             "algo=%d,tile=%u,stages=%u,splitk=%d,reduction=%u,swizzle=%u,custom=%u,inner=%u,"
             "cluster=%u",
             t.id, t.tile, t.stages, t.splitk, t.red, t.swizzle, t.custom, (unsigned)t.inner,
             (unsigned)t.cluster);
    return buf;
}

/* cublasLtMatmulAlgoCheck on s's descriptor, which run may be setting a
 * call's pointers on meanwhile: under the same lock. */
static cublasStatus_t check_algo(const lt_sig_t *s, cublasLtHandle_t h,
                                 const cublasLtMatmulAlgo_t *a,
                                 cublasLtMatmulHeuristicResult_t *res)
{
    pthread_mutex_lock((pthread_mutex_t *)&s->call_lock);
    const cublasStatus_t st = fn.algo_check(h, s->op, s->a, s->b, s->c, s->c, a, res);
    pthread_mutex_unlock((pthread_mutex_t *)&s->call_lock);
    return st;
}

static int config_from_text(const gs_problem_t *p, const gs_device_t *d, const char *text)
{
    lt_sig_t *s = sig_of(&p->cls, d);
    algo_attrs_t t;
    unsigned inner = 0, cluster = 0;
    int used = 0;
    if (!s || sscanf(text,
                     "algo=%d,tile=%u,stages=%u,splitk=%d,reduction=%u,swizzle=%u,custom=%u,"
                     "inner=%u,cluster=%u%n",
                     &t.id, &t.tile, &t.stages, &t.splitk, &t.red, &t.swizzle, &t.custom, &inner,
                     &cluster, &used) != 9 ||
        text[used])
        return -1;
    t.inner = (uint16_t)inner;
    t.cluster = (uint16_t)cluster;
    /* one of the heuristic's own: the same slot every run */
    for (int i = 0; i < s->n_algos; ++i) {
        algo_attrs_t u;
        if (slot_ready(s, i) && !attrs_of(&s->algo[i], &u) && !memcmp(&u, &t, sizeof t))
            return i;
    }
    pthread_mutex_lock(&lock);
    int rc = -1;
    cublasLtMatmulAlgo_t a;
    cublasLtMatmulHeuristicResult_t res;
    cublasLtHandle_t h = handles[s->key.ordinal];
    if (slot_ready(s, IMPORTED)) {
        algo_attrs_t u;
        if (!attrs_of(&s->algo[IMPORTED], &u) && !memcmp(&u, &t, sizeof t))
            rc = IMPORTED;
    } else if (h &&
               !fn.algo_init(h, s->compute, s->scale, s->at, s->bt, s->ct, s->ct, t.id, &a) &&
               !fn.cfg_set(&a, CUBLASLT_ALGO_CONFIG_TILE_ID, &t.tile, sizeof t.tile) &&
               !fn.cfg_set(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &t.splitk, sizeof t.splitk) &&
               !fn.cfg_set(&a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &t.red, sizeof t.red) &&
               !fn.cfg_set(&a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &t.swizzle, sizeof t.swizzle) &&
               !fn.cfg_set(&a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &t.custom, sizeof t.custom) &&
               !fn.cfg_set(&a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &t.stages, sizeof t.stages) &&
               !fn.cfg_set(&a, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &t.inner, sizeof t.inner) &&
               !fn.cfg_set(&a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &t.cluster, sizeof t.cluster) &&
               !check_algo(s, h, &a, &res) &&
               res.workspaceSize + GS_WS_FLAG_BYTES <= gs_cfg()->workspace_cap) {
        s->algo[IMPORTED] = a;
        s->ws[IMPORTED] = res.workspaceSize;
        __atomic_store_n(&s->have[IMPORTED], 1, __ATOMIC_RELEASE);
        rc = IMPORTED;
    }
    pthread_mutex_unlock(&lock);
    if (rc < 0)
        gs_msg("tune: cuBLASLt algorithm '%s' from the cache no longer runs this call "
               "(cublasLtMatmulAlgoCheck); the prior decides", text);
    return rc;
}

const gs_family_t gs_family_cublaslt = {
    .name = "cublaslt",
    .n_configs = SLOTS,
    .config_name = config_name,
    .can_implement = can_implement,
    .plan = plan,
    .run = run,
    .tuned_only = 1,
    .honours_sm_count_target = 1,
    .reads_lt_contract = 1,
    .config_text = config_text,
    .config_from_text = config_from_text,
};
