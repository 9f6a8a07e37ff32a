/* The offline tuner's replay (tools/replay): a recorded class read back
 * into call arguments whose class, as the shim describes a call, is the
 * same bytes; classes no call can be rebuilt for, refused with why; the
 * signature file read and merged; the cache's verdicts, the facts compared
 * and the summary. The calls are those the recording fake's programs make
 * (tests/fake/sample_calls.c, lt_calls.c) and their variations over every
 * field of the class, the FP8 subset's scales and fast accumulation among
 * them. Pure host code: no GPU, no cuBLAS library. */
#include "gs_class_hex.h"
#include "gs_compat.h"
#include "gs_replay_cache.h"
#include "gs_replay_class.h"
#include "gs_replay_sigs.h"
#include "gs_replay_summary.h"
#include "gs_test.h"
#include "gs_tune_cache.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a call as the shim describes it ---- */

/* Pointers of a call: made-up device addresses, real host scalars. */
typedef struct ptrs {
    void *A, *B, *C, *bias;
    const void *alpha, *beta;
} ptrs_t;

static _Alignas(256) unsigned char host_scalars[512];

/* The address at `off` from a 256-byte boundary in slot `slot` of a
 * made-up device range (NULL for GS_REPLAY_NULL). */
static void *dev_at(int slot, uint32_t off)
{
    return off == GS_REPLAY_NULL ? NULL : (char *)(uintptr_t)0x7f0000000000ull + slot * 65536 + off;
}

/* The class the shim gives a call with arguments a on pointers p: what its
 * typed wrappers (shim/face/gs_exports.c), problem_of (shim/serve/gs_serve.c)
 * and gs_lt_describe (compat/gs_lt.c) do, with the same compat functions. */
static gs_class_t describe(const gs_replay_args_t *a, int compute_type, const ptrs_t *p)
{
    const int lt = a->entry == GS_EP_LT_MATMUL;
    const int math = lt ? CUBLAS_DEFAULT_MATH : (int)a->math_mode;
    gs_problem_t q;
    memset(&q, 0, sizeof q);
    q.entry = a->entry;
    q.is_64 = a->is_64;
    q.a_type = gs_dtype_from_cuda(a->a_type);
    q.b_type = gs_dtype_from_cuda(a->b_type);
    q.c_type = gs_dtype_from_cuda(a->c_type);
    q.compute = gs_compute_fold(compute_type, math, q.a_type);
    q.scalar_type = gs_scalar_type(compute_type, q.a_type);
    q.trans_a = a->transa == CUBLAS_OP_N ? GS_OP_N : GS_OP_T;
    q.trans_b = a->transb == CUBLAS_OP_N ? GS_OP_N : GS_OP_T;
    q.m = a->m, q.n = a->n, q.k = a->k;
    q.A = p->A, q.B = p->B, q.C = p->C;
    q.lda = a->lda, q.ldb = a->ldb, q.ldc = a->ldc;
    q.batch = a->batch;
    q.stride_a = a->stride_a, q.stride_b = a->stride_b, q.stride_c = a->stride_c;
    q.alpha = p->alpha, q.beta = p->beta;
    q.scalars_on_device = a->scalars_on_device;
    q.math_flags = (unsigned)math & ~15u;
    q.sm_count_target = lt ? 0 : a->sm_count_target;
    if (lt && a->bias) {
        q.bias = p->bias;
        q.bias_type = gs_dtype_from_cuda(a->bias_type);
    }
    /* gs_lt_describe's scaling contract: a mode with its pointer set, fast
     * accumulation on FP8 operands */
    const int fp8 = gs_dtype_is_fp8(q.a_type) || gs_dtype_is_fp8(q.b_type);
    if (lt && fp8 && a->scale_mode_a >= 0)
        q.lt_scales |= (unsigned)gs_scale_mode_from_lt(a->scale_mode_a) << GS_LT_SCALE_A;
    if (lt && fp8 && a->scale_mode_b >= 0)
        q.lt_scales |= (unsigned)gs_scale_mode_from_lt(a->scale_mode_b) << GS_LT_SCALE_B;
    if (lt && fp8 && a->fast_accum)
        q.lt_flags |= GS_LT_FAST_ACCUM;
    gs_problem_classify(&q);
    return q.cls;
}

/* The pointers the replay gives rebuilt arguments a (gs_replay_mem.c's
 * placement: each operand at its offset from a 256-byte boundary; host
 * scalars written with their values). */
static ptrs_t place(const gs_replay_args_t *a)
{
    ptrs_t p = {dev_at(0, a->off_a), dev_at(1, a->off_b), dev_at(2, a->off_c),
                dev_at(3, a->off_bias), NULL, NULL};
    if (a->scalars_on_device) {
        p.alpha = dev_at(4, a->off_alpha);
        p.beta = dev_at(5, a->off_beta);
    } else {
        memcpy(host_scalars + a->off_alpha, &a->alpha, sizeof a->alpha);
        memcpy(host_scalars + 256 + a->off_beta, &a->beta, sizeof a->beta);
        p.alpha = host_scalars + a->off_alpha;
        p.beta = host_scalars + 256 + a->off_beta;
    }
    return p;
}

/* ---- the calls the fake's programs make, and variations ---- */

typedef struct call {
    const char *name;
    gs_replay_args_t a;   /* the application's arguments */
    int compute_type;     /* as it spelled it (GS_COMPUTE_FROM_MATH_MODE for Sgemm) */
    uint32_t off[6];      /* A, B, C, bias, alpha, beta: offsets of its pointers */
    float beta;
} call_t;

static gs_replay_args_t args(gs_entry_t e, int is_64, int ta, int tb, int64_t m, int64_t n,
                             int64_t k, cudaDataType ab, cudaDataType c)
{
    gs_replay_args_t a;
    memset(&a, 0, sizeof a);
    a.entry = e;
    a.is_64 = is_64;
    a.transa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    a.transb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    a.m = m, a.n = n, a.k = k;
    a.lda = ta ? k : m;
    a.ldb = tb ? n : k;
    a.ldc = m;
    a.batch = 1;
    a.a_type = a.b_type = ab;
    a.c_type = c;
    a.math_mode = CUBLAS_DEFAULT_MATH;
    a.alpha = 1.0f;
    a.scale_mode_a = a.scale_mode_b = -1; /* no scale pointers */
    return a;
}

/* An FP8 call's scales (cuBLASLt's modes, -1: none) and fast accumulation. */
static void scaled(gs_replay_args_t *a, cudaDataType at, cudaDataType bt, int32_t mode_a,
                   int32_t mode_b, int fast)
{
    a->a_type = at;
    a->b_type = bt;
    a->scale_mode_a = mode_a;
    a->scale_mode_b = mode_b;
    a->fast_accum = (int8_t)fast;
}

static void batched(gs_replay_args_t *a, int64_t batch)
{
    a->batch = batch;
    a->stride_a = a->lda * (a->transa == CUBLAS_OP_T ? a->m : a->k);
    a->stride_b = a->ldb * (a->transb == CUBLAS_OP_T ? a->k : a->n);
    a->stride_c = a->ldc * a->n;
}

enum { N_CALLS = 28 };

static int make_calls(call_t *c)
{
    int n = 0;
    const uint32_t al256[6] = {0, 0, 0, GS_REPLAY_NULL, 0, 0};
#define ADD(nm, ...)                                                   \
    do {                                                               \
        c[n] = (call_t){.name = nm, __VA_ARGS__};                      \
        memcpy(c[n].off, al256, sizeof al256);                         \
        ++n;                                                           \
    } while (0)
    /* sample_calls: Sgemm NN 256^3, GemmEx bf16 TN, GemmEx f32 FAST_TF32,
     * SgemmStridedBatched NT x4 */
    ADD("sgemm", .a = args(GS_EP_SGEMM, 0, 0, 0, 256, 256, 256, CUDA_R_32F, CUDA_R_32F),
        .compute_type = GS_COMPUTE_FROM_MATH_MODE);
    ADD("gemmex bf16 TN", .a = args(GS_EP_GEMMEX, 0, 1, 0, 512, 256, 128, CUDA_R_16BF, CUDA_R_16BF),
        .compute_type = CUBLAS_COMPUTE_32F);
    ADD("gemmex tf32", .a = args(GS_EP_GEMMEX, 0, 0, 0, 128, 128, 128, CUDA_R_32F, CUDA_R_32F),
        .compute_type = CUBLAS_COMPUTE_32F_FAST_TF32);
    ADD("sgemm strided NT", .a = args(GS_EP_SGEMM_STRIDED, 0, 0, 1, 64, 64, 32, CUDA_R_32F, CUDA_R_32F),
        .compute_type = GS_COMPUTE_FROM_MATH_MODE);
    batched(&c[n - 1].a, 4);
    /* lt_calls' tunable scenarios: bf16 TN, with a bias, f32 NN beta 1,
     * TF32, deep K */
    ADD("lt bf16 TN", .a = args(GS_EP_LT_MATMUL, 0, 1, 0, 1024, 512, 768, CUDA_R_16BF, CUDA_R_16BF),
        .compute_type = CUBLAS_COMPUTE_32F);
    ADD("lt bias", .a = args(GS_EP_LT_MATMUL, 0, 1, 0, 1024, 512, 768, CUDA_R_16BF, CUDA_R_16BF),
        .compute_type = CUBLAS_COMPUTE_32F);
    c[n - 1].a.bias = 1, c[n - 1].a.bias_type = CUDA_R_16BF, c[n - 1].off[3] = 0;
    ADD("lt f32 beta 1", .a = args(GS_EP_LT_MATMUL, 0, 0, 0, 1024, 512, 768, CUDA_R_32F, CUDA_R_32F),
        .compute_type = CUBLAS_COMPUTE_32F, .beta = 1.0f);
    ADD("lt tf32", .a = args(GS_EP_LT_MATMUL, 0, 0, 0, 1024, 512, 768, CUDA_R_32F, CUDA_R_32F),
        .compute_type = CUBLAS_COMPUTE_32F_FAST_TF32);
    ADD("lt deep k", .a = args(GS_EP_LT_MATMUL, 0, 1, 0, 256, 256, 65536, CUDA_R_16BF, CUDA_R_16BF),
        .compute_type = CUBLAS_COMPUTE_32F);
    /* every other field: _64 entry points, math modes and flags, SM count
     * targets, device scalars, betas, alignments, strides, fp32 outputs,
     * bias types, a batch stride on one cuBLASLt batch */
    ADD("sgemm_64 TF32 math", .a = args(GS_EP_SGEMM, 1, 1, 1, 300, 200, 100, CUDA_R_32F, CUDA_R_32F),
        .compute_type = GS_COMPUTE_FROM_MATH_MODE);
    c[n - 1].a.math_mode = CUBLAS_TF32_TENSOR_OP_MATH;
    ADD("sgemm pedantic, no reduced precision", .a = args(GS_EP_SGEMM, 0, 0, 0, 96, 80, 64, CUDA_R_32F, CUDA_R_32F),
        .compute_type = GS_COMPUTE_FROM_MATH_MODE);
    c[n - 1].a.math_mode =
        (cublasMath_t)(CUBLAS_PEDANTIC_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
    ADD("sgemm tensor-op math (fast 16F)", .a = args(GS_EP_SGEMM, 0, 0, 0, 96, 80, 64, CUDA_R_32F, CUDA_R_32F),
        .compute_type = GS_COMPUTE_FROM_MATH_MODE);
    c[n - 1].a.math_mode = CUBLAS_TENSOR_OP_MATH;
    ADD("gemmex 32F under TF32 math", .a = args(GS_EP_GEMMEX, 0, 0, 0, 128, 128, 128, CUDA_R_32F, CUDA_R_32F),
        .compute_type = CUBLAS_COMPUTE_32F);
    c[n - 1].a.math_mode = CUBLAS_TF32_TENSOR_OP_MATH;
    ADD("gemmex legacy CUDA_R_32F compute", .a = args(GS_EP_GEMMEX, 0, 1, 1, 64, 32, 16, CUDA_R_16F, CUDA_R_32F),
        .compute_type = CUDA_R_32F);
    ADD("gemmex_64 fp16 NT, SM target, flags", .a = args(GS_EP_GEMMEX, 1, 0, 1, 4096, 16, 4096, CUDA_R_16F, CUDA_R_16F),
        .compute_type = CUBLAS_COMPUTE_32F_FAST_16F);
    c[n - 1].a.sm_count_target = 66;
    c[n - 1].a.math_mode = CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
    ADD("gemmex pedantic, device scalars", .a = args(GS_EP_GEMMEX, 0, 0, 0, 256, 128, 64, CUDA_R_16BF, CUDA_R_32F),
        .compute_type = CUBLAS_COMPUTE_32F_PEDANTIC);
    c[n - 1].a.scalars_on_device = 1;
    ADD("gemmex misaligned, beta 0.25, padded lds", .a = args(GS_EP_GEMMEX, 0, 1, 0, 50257, 8, 768, CUDA_R_16BF, CUDA_R_16BF),
        .compute_type = CUBLAS_COMPUTE_32F, .beta = 0.25f);
    c[n - 1].a.lda = 800, c[n - 1].a.ldb = 776, c[n - 1].a.ldc = 50264;
    c[n - 1].off[0] = 2, c[n - 1].off[1] = 16, c[n - 1].off[2] = 8;
    ADD("strided ex _64, fast 16BF, unpacked strides", .a = args(GS_EP_GEMMEX_STRIDED, 1, 1, 0, 64, 128, 64, CUDA_R_16BF, CUDA_R_16BF),
        .compute_type = CUBLAS_COMPUTE_32F_FAST_16BF);
    batched(&c[n - 1].a, 12);
    c[n - 1].a.stride_a += 64, c[n - 1].a.stride_c = 0; /* padded A; one C for all (broadcast) */
    c[n - 1].a.stride_b = 0;
    ADD("sgemm strided _64, device scalars at 2 bytes", .a = args(GS_EP_SGEMM_STRIDED, 1, 0, 0, 32, 32, 32, CUDA_R_32F, CUDA_R_32F),
        .compute_type = GS_COMPUTE_FROM_MATH_MODE);
    batched(&c[n - 1].a, 3);
    c[n - 1].a.scalars_on_device = 1;
    c[n - 1].off[4] = 2, c[n - 1].off[5] = 1;
    ADD("lt batched, fp32 bias at 16 bytes, device scalars", .a = args(GS_EP_LT_MATMUL, 0, 0, 1, 128, 64, 32, CUDA_R_16F, CUDA_R_32F),
        .compute_type = CUBLAS_COMPUTE_32F);
    batched(&c[n - 1].a, 5);
    c[n - 1].a.bias = 1, c[n - 1].a.bias_type = CUDA_R_32F, c[n - 1].off[3] = 16;
    c[n - 1].a.scalars_on_device = 1;
    ADD("lt one batch with a stride set", .a = args(GS_EP_LT_MATMUL, 0, 1, 0, 512, 512, 512, CUDA_R_16BF, CUDA_R_32F),
        .compute_type = CUBLAS_COMPUTE_32F);
    c[n - 1].a.stride_a = 262144, c[n - 1].a.stride_b = 262144, c[n - 1].a.stride_c = 262144;
    ADD("lt host alpha at 2 bytes, beta at 1", .a = args(GS_EP_LT_MATMUL, 0, 0, 0, 64, 64, 64, CUDA_R_16F, CUDA_R_16F),
        .compute_type = CUBLAS_COMPUTE_32F, .beta = 1.0f);
    c[n - 1].off[4] = 2, c[n - 1].off[5] = 1;
    ADD("gemmex k = 0", .a = args(GS_EP_GEMMEX, 0, 0, 0, 64, 64, 0, CUDA_R_32F, CUDA_R_32F),
        .compute_type = CUBLAS_COMPUTE_32F, .beta = 1.0f);
    c[n - 1].a.lda = 64, c[n - 1].a.ldb = 1;
    /* the FP8 subset cuBLASLt's algorithms are tuned on: lt_calls'
     * torch._scaled_mm calls (tensorwise, fast accumulation; rowwise e5m2 x
     * e4m3), and one scale only, with a bias, into fp16 */
    ADD("lt fp8 tensorwise fast", .a = args(GS_EP_LT_MATMUL, 0, 1, 0, 1024, 512, 768, CUDA_R_8F_E4M3, CUDA_R_16BF),
        .compute_type = CUBLAS_COMPUTE_32F);
    scaled(&c[n - 1].a, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
           CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, 1);
    ADD("lt fp8 rowwise e5m2 x e4m3", .a = args(GS_EP_LT_MATMUL, 0, 1, 0, 1024, 512, 768, CUDA_R_8F_E5M2, CUDA_R_16BF),
        .compute_type = CUBLAS_COMPUTE_32F);
    scaled(&c[n - 1].a, CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F,
           CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, 0);
    ADD("lt fp8 e4m3 x e5m2, A scaled, fp16 bias", .a = args(GS_EP_LT_MATMUL, 0, 1, 0, 256, 64, 512, CUDA_R_8F_E4M3, CUDA_R_16F),
        .compute_type = CUBLAS_COMPUTE_32F);
    scaled(&c[n - 1].a, CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, -1, 0);
    c[n - 1].a.bias = 1, c[n - 1].a.bias_type = CUDA_R_16F, c[n - 1].off[3] = 0;
#undef ADD
    return n;
}

/* The application's call's class: its own pointers, scalars written. */
static gs_class_t original_class(const call_t *c)
{
    gs_replay_args_t a = c->a;
    a.off_a = c->off[0], a.off_b = c->off[1], a.off_c = c->off[2], a.off_bias = c->off[3];
    a.off_alpha = c->off[4], a.off_beta = c->off[5];
    a.beta = c->beta;
    const ptrs_t p = place(&a);
    return describe(&a, c->compute_type, &p);
}

/* The rebuilt call's compute type as the replay passes it. */
static int rebuilt_compute(const gs_replay_args_t *a)
{
    return a->entry == GS_EP_SGEMM || a->entry == GS_EP_SGEMM_STRIDED ? GS_COMPUTE_FROM_MATH_MODE
                                                                       : (int)a->compute;
}

static void every_call_round_trips(void)
{
    call_t calls[N_CALLS];
    const int n = make_calls(calls);
    CHECK(n > 20 && n <= N_CALLS);
    for (int i = 0; i < n; ++i) {
        const gs_class_t want = original_class(&calls[i]);
        char hex[GS_CLASS_HEX_LEN + 1];
        gs_class_hex(&want, hex);
        gs_class_t back;
        CHECK_EQ_INT(gs_class_of_hex(hex, strlen(hex), &back), 0);
        CHECK(!memcmp(&back, &want, sizeof want)); /* the decoder is the encoder's inverse */
        gs_replay_args_t a;
        const char *why = gs_replay_args_of(&back, &a);
        if (!CHECK(why == NULL)) {
            fprintf(stderr, "    %s: %s\n", calls[i].name, why);
            continue;
        }
        const ptrs_t p = place(&a);
        const gs_class_t got = describe(&a, rebuilt_compute(&a), &p);
        if (!CHECK(!memcmp(&got, &want, sizeof want))) {
            char g[GS_CLASS_HEX_LEN + 1];
            gs_class_hex(&got, g);
            fprintf(stderr, "    %s:\n    want %s\n    got  %s\n", calls[i].name, hex, g);
        }
        /* what the class says, the arguments are */
        CHECK_EQ_INT(a.entry, calls[i].a.entry);
        CHECK_EQ_INT(a.is_64, calls[i].a.is_64);
        CHECK_EQ_INT(a.m, calls[i].a.m);
        CHECK_EQ_INT(a.n, calls[i].a.n);
        CHECK_EQ_INT(a.k, calls[i].a.k);
        CHECK_EQ_INT(a.lda, calls[i].a.lda);
        CHECK_EQ_INT(a.ldb, calls[i].a.ldb);
        CHECK_EQ_INT(a.ldc, calls[i].a.ldc);
        CHECK_EQ_INT(a.batch, calls[i].a.batch);
        CHECK_EQ_INT(a.stride_a, calls[i].a.stride_a);
        CHECK_EQ_INT(a.stride_b, calls[i].a.stride_b);
        CHECK_EQ_INT(a.stride_c, calls[i].a.stride_c);
        CHECK_EQ_INT(a.scalars_on_device, calls[i].a.scalars_on_device);
        CHECK_EQ_INT(a.bias, calls[i].a.bias);
        CHECK_EQ_INT(a.off_a, calls[i].off[0]);
        CHECK_EQ_INT(a.off_b, calls[i].off[1]);
        CHECK_EQ_INT(a.off_c, calls[i].off[2]);
        CHECK_EQ_INT(a.off_bias, calls[i].off[3]);
        CHECK_EQ_INT(a.a_type, calls[i].a.a_type);
        CHECK_EQ_INT(a.b_type, calls[i].a.b_type);
        CHECK_EQ_INT(a.scale_mode_a, calls[i].a.scale_mode_a);
        CHECK_EQ_INT(a.scale_mode_b, calls[i].a.scale_mode_b);
        CHECK_EQ_INT(a.fast_accum, calls[i].a.fast_accum);
    }
}

/* Field by field where the replay picks one spelling of several. */
static void spellings(void)
{
    call_t calls[N_CALLS];
    const int n = make_calls(calls);
    for (int i = 0; i < n; ++i) {
        const gs_class_t c = original_class(&calls[i]);
        gs_replay_args_t a;
        if (gs_replay_args_of(&c, &a))
            continue;
        const char *name = calls[i].name;
        if (!strcmp(name, "sgemm_64 TF32 math"))
            CHECK_EQ_INT(a.math_mode, CUBLAS_TF32_TENSOR_OP_MATH);
        if (!strcmp(name, "sgemm pedantic, no reduced precision"))
            CHECK_EQ_INT(a.math_mode,
                         CUBLAS_PEDANTIC_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
        if (!strcmp(name, "gemmex 32F under TF32 math")) { /* the same class, spelled plainly */
            CHECK_EQ_INT(a.compute, CUBLAS_COMPUTE_32F_FAST_TF32);
            CHECK_EQ_INT(a.math_mode, CUBLAS_DEFAULT_MATH);
        }
        if (!strcmp(name, "gemmex_64 fp16 NT, SM target, flags")) {
            CHECK_EQ_INT(a.sm_count_target, 66);
            CHECK_EQ_INT(a.math_mode, CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
            CHECK_EQ_INT(a.compute, CUBLAS_COMPUTE_32F_FAST_16F);
        }
        if (!strcmp(name, "gemmex misaligned, beta 0.25, padded lds")) {
            CHECK(a.beta != 0.0f && a.beta != 1.0f); /* "other" */
            /* A: 768 x 50257 at lda 800, from its first element to its last */
            CHECK_EQ_INT(a.bytes_a, ((50257 - 1) * 800 + 768) * 2);
        }
        if (!strcmp(name, "lt batched, fp32 bias at 16 bytes, device scalars")) {
            CHECK_EQ_INT(a.bias_type, CUDA_R_32F);
            CHECK_EQ_INT(a.bytes_bias, 128 * 4);
            CHECK_EQ_INT(a.bytes_c, (4 * 128 * 64 + 63 * 128 + 128) * 4);
            CHECK(a.beta == 0.0f);
        }
        if (!strcmp(name, "sgemm strided _64, device scalars at 2 bytes")) {
            CHECK_EQ_INT(a.off_alpha, 2);
            CHECK_EQ_INT(a.off_beta, 1);
        }
        if (!strcmp(name, "gemmex k = 0"))
            CHECK_EQ_INT(a.bytes_a, 0);
        /* one byte an element; a factor per tensor, or per row of op(A)
         * and column of op(B) */
        if (!strcmp(name, "lt fp8 tensorwise fast")) {
            CHECK_EQ_INT(a.bytes_a, 768 * 1024);
            CHECK_EQ_INT(a.bytes_scale_a, 4);
            CHECK_EQ_INT(a.bytes_scale_b, 4);
        }
        if (!strcmp(name, "lt fp8 rowwise e5m2 x e4m3")) {
            CHECK_EQ_INT(a.bytes_scale_a, 1024 * 4);
            CHECK_EQ_INT(a.bytes_scale_b, 512 * 4);
        }
        if (!strcmp(name, "lt fp8 e4m3 x e5m2, A scaled, fp16 bias"))
            CHECK_EQ_INT(a.bytes_scale_b, 0);
    }
}

/* Classes no call can be rebuilt for, or that are never tuned: refused,
 * each with its reason, nothing approximated. */
static void refusals(void)
{
    call_t calls[N_CALLS];
    make_calls(calls);
    const gs_class_t base = original_class(&calls[1]); /* bf16 GemmEx TN */
    gs_replay_args_t a;
    CHECK(gs_replay_args_of(&base, &a) == NULL);
    gs_class_t c = base;
    c.entry = GS_EP_GEMMEX_BATCHED;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "pointer-array batches");
    c = base, c.entry = GS_EP_COUNT;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "entry point");
    c = base, c.a_type = c.b_type = c.c_type = GS_DT_F64;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "fp64");
    c = base, c.a_type = c.b_type = GS_DT_OTHER;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "element type");
    /* FP8: the subset cuBLASLt's algorithms are tuned on is rebuilt (the
     * controls), every feature beyond it refused; a contract on 16-bit
     * types is never tuned */
    gs_class_t fp8 = base;
    fp8.entry = GS_EP_LT_MATMUL, fp8.a_type = fp8.b_type = GS_DT_E4M3;
    CHECK(gs_replay_args_of(&fp8, &a) == NULL);
    fp8.lt_scales = GS_SCALE_OUTER_VEC_32F << GS_LT_SCALE_A | GS_SCALE_SCALAR_32F << GS_LT_SCALE_B;
    fp8.lt_flags = GS_LT_FAST_ACCUM;
    CHECK(gs_replay_args_of(&fp8, &a) == NULL);
    c = fp8, c.a_type = c.b_type = GS_DT_E5M2;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "beyond the subset");
    c = fp8, c.c_type = GS_DT_E4M3;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "beyond the subset");
    c = fp8, c.lt_scales = GS_SCALE_VEC128_32F << GS_LT_SCALE_A;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "beyond the subset");
    c = fp8, c.lt_scales |= GS_SCALE_SCALAR_32F << GS_LT_SCALE_D;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "beyond the subset");
    c = fp8, c.lt_flags |= GS_LT_AMAX_D;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "beyond the subset");
    c = fp8, c.entry = GS_EP_GEMMEX;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "beyond the subset");
    c = base, c.entry = GS_EP_LT_MATMUL;
    CHECK(gs_replay_args_of(&c, &a) == NULL); /* the control: a plain bf16 cublasLtMatmul */
    c.lt_flags = GS_LT_FAST_ACCUM;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "cuBLASLt scaling");
    c = base, c.entry = GS_EP_LT_MATMUL, c.lt_scales = GS_SCALE_SCALAR_32F << GS_LT_SCALE_A;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "cuBLASLt scaling");
    c = base, c.entry = GS_EP_LT_MATMUL, c.c_type = GS_DT_E4M3;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "FP8 D");
    c = base, c.compute = GS_CT_OTHER, c.scalar_type = GS_DT_OTHER;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "compute type");
    c = base, c.b_type = GS_DT_F16;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "different types");
    c = base, c.batch = 2;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "unbatched");
    c = base, c.bias_type = GS_DT_BF16, c.align_bias = 256;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "bias outside cuBLASLt");
    c = base, c.beta_kind = GS_BETA_DEVICE;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "host beta");
    c = base, c.align_a = 3;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "alignment");
    c = base, c.lda = -1;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "negative");
    c = base, c.m = (int64_t)INT32_MAX + 1, c.ldc = c.m;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "beyond int");
    c = base, c.is_64 = 1, c.m = (int64_t)INT32_MAX + 1, c.ldc = c.m;
    CHECK(gs_replay_args_of(&c, &a) == NULL); /* the _64 entry point takes it */
    const gs_class_t sg = original_class(&calls[0]);
    c = sg, c.compute = GS_CT_F32_FAST_16BF;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "FAST_16BF");
    c = sg, c.c_type = GS_DT_BF16;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "cublasSgemm with other types");
    const gs_class_t lt = original_class(&calls[4]);
    c = lt, c.sm_count_target = 8;
    CHECK_CONTAINS(gs_replay_args_of(&c, &a), "cuBLASLt with a handle's settings");
    /* a hex that is not a class */
    char hex[GS_CLASS_HEX_LEN + 1];
    gs_class_hex(&base, hex);
    CHECK_EQ_INT(gs_class_of_hex(hex, strlen(hex) - 2, &c), -1);
    hex[7] = 'G';
    CHECK_EQ_INT(gs_class_of_hex(hex, strlen(hex), &c), -1);
}

/* ---- the files ---- */

static char dir[64];

static const char *write_file(const char *name, const char *text)
{
    static char path[4][128];
    static int turn;
    char *p = path[turn++ % 4];
    snprintf(p, 128, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
    return p;
}

/* A "sig" line of class c. */
static void sig_line(char *out, size_t size, const gs_class_t *c, const char *counts,
                     const char *tail, const char *shape)
{
    char hex[GS_CLASS_HEX_LEN + 1];
    gs_class_hex(c, hex);
    snprintf(out, size, "sig\t%s\tid=0123456789abcdef\t%s\t%s\t# %s\n", hex, counts, tail, shape);
}

static void signature_files(void)
{
    call_t calls[N_CALLS];
    make_calls(calls);
    const gs_class_t sg = original_class(&calls[0]), bf = original_class(&calls[1]);
    char l1[1024], l2[1024], l3[1024], l4[1024], text[8192];
    sig_line(l1, sizeof l1, &sg, "calls=100\tcaptured=0\ttimed=100\tms=1.000000", "tunable=1", "sgemm");
    sig_line(l2, sizeof l2, &bf, "calls=10\tcaptured=0\ttimed=10\tms=30.000000", "tunable=1", "bf16");
    sig_line(l3, sizeof l3, &sg, "calls=50\tcaptured=20\ttimed=0\tms=", "tunable=1", "sgemm");
    sig_line(l4, sizeof l4, &bf, "calls=3\tcaptured=0\ttimed=0\tms=", "tunable=0\twhy=epilogue 2 not routed", "bf16 relu");
    snprintf(text, sizeof text,
             "gemmshim-signatures\tformat=1\tgpu=H100\tsms=132\tcc=90\tdriver=13000\tcublas=130100\t"
             "cublaslt=130100\tshim=0.1.0/abc\n"
             "proc\thost=h\tpid=1\n%s%s%s%sseq\tid=1\tcaptures=1\n"
             "sig\tnot-a-class\tcalls=1\n%.40s",
             l1, l2, l3, l4, l1);
    gs_replay_sigs_t s;
    memset(&s, 0, sizeof s);
    char msg[256];
    CHECK_EQ_INT(gs_replay_sigs_read(&s, write_file("a.sigs", text), msg, sizeof msg), 0);
    CHECK_EQ_INT(s.n, 3); /* sgemm (two lines merged), bf16, bf16 as not tunable */
    CHECK_EQ_INT(s.bad, 3); /* the malformed lines (a sig, a seq without its GEMMs) and the
                               torn last one */
    CHECK_EQ_INT(s.seqs.n, 0);
    CHECK_EQ_INT(s.files, 1);
    gs_replay_sigs_order(&s);
    /* bf16: 30 ms; sgemm: 1 ms; the untimed one last */
    CHECK_STR_EQ(s.sig[0].shape, "bf16");
    CHECK(s.sig[0].tunable);
    CHECK_STR_EQ(s.sig[1].shape, "sgemm");
    CHECK_EQ_INT(s.sig[1].calls, 150);
    CHECK_EQ_INT(s.sig[1].captured, 20);
    CHECK_EQ_INT(s.sig[1].timed, 100);
    CHECK(!memcmp(&s.sig[1].cls, &sg, sizeof sg));
    CHECK(!s.sig[2].tunable);
    CHECK_STR_EQ(s.sig[2].why, "epilogue 2 not routed");
    /* a second file merges in */
    char more[2048];
    snprintf(more, sizeof more, "gemmshim-signatures\tformat=1\tgpu=H200\n%s", l2);
    CHECK_EQ_INT(gs_replay_sigs_read(&s, write_file("b.sigs", more), msg, sizeof msg), 0);
    CHECK_EQ_INT(s.n, 3);
    CHECK_EQ_INT(s.files, 2);
    gs_replay_sigs_order(&s);
    CHECK_EQ_INT(s.sig[0].calls, 20);

    /* the facts: each differing one, as recorded and here */
    char diff[512];
    gs_replay_facts_diff(s.header[0],
                         "gpu=H200 sms=132 cc=90 driver=13010 cublas=130100 cublaslt=130100 "
                         "shim=0.1.0/abc kernels=all",
                         diff, sizeof diff);
    CHECK_STR_EQ(diff, "gpu=H100 (here H200), driver=13000 (here 13010)");
    gs_replay_facts_diff(s.header[0],
                         "gpu=H100 sms=132 cc=90 driver=13000 cublas=130100 cublaslt=130100 "
                         "shim=0.1.0/abc kernels=all",
                         diff, sizeof diff);
    CHECK_STR_EQ(diff, "");

    /* the cache's verdicts, a later line winning; the summary */
    char hs[GS_CLASS_HEX_LEN + 1], hb[GS_CLASS_HEX_LEN + 1], cache[4096];
    gs_class_hex(&sg, hs);
    gs_class_hex(&bf, hb);
    snprintf(cache, sizeof cache,
             "# gemmshim tune cache\nformat 2\nvalidator gpu=H200 sms=132\n"
             "sig\t%s\tpingpong\tpingpong_128x128x64\tgain=1.2\tlo95=1.1\tpairs=10\tms=1\t"
             "prior=cublas\tvs_prior=1.2\t# bf16\n"
             "sig\t%s\tcublas\tas_called\tgain=1.0\tlo95=1.0\tpairs=0\tms=1\tprior=cublas\t"
             "vs_prior=1\t# sgemm\n"
             "sig\t%s\tpingpong\tpingpong_128x128x64\tgain=1.0\tlo95=1.0\tpairs=10\tms=1\t"
             "prior=pingpong/pingpong_128x128x64\tvs_prior=1\t# bf16 again\n",
             hb, hs, hb);
    const char *cpath = write_file("c.cache", cache);
    char validator[256];
    CHECK_EQ_INT(gs_replay_cache_validator(cpath, validator, sizeof validator), 0);
    CHECK_STR_EQ(validator, "gpu=H200 sms=132");
    gs_replay_verdict_t v[3];
    CHECK_EQ_INT(gs_replay_cache_verdicts(cpath, &s, v, NULL), 0);
    for (size_t i = 0; i < s.n; ++i) {
        if (!s.sig[i].tunable)
            CHECK_EQ_INT(v[i], GS_REPLAY_UNDECIDED);
        else /* bf16: the later line keeps its prior; sgemm: cuBLAS, the prior */
            CHECK_EQ_INT(v[i], GS_REPLAY_KEPT_PRIOR);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    CHECK_EQ_INT(gs_replay_summary(&s, cpath, out), 0);
    fclose(out);
    CHECK_CONTAINS(buf, "gemmshim tune: 3 signatures: 2 decided (2 keep the prior, 0 replace it), "
                        "0 not decided, 1 skipped");
    CHECK_CONTAINS(buf, "  skipped, not tunable as recorded: 1\n    1 x epilogue 2 not routed\n");
    free(buf);
    /* without the bf16 decision: not decided, listed, status 1 */
    snprintf(cache, sizeof cache, "# gemmshim tune cache\nformat 2\nvalidator v\n"
             "sig\t%s\tcublaslt\talgo=1\tgain=1.5\tlo95=1.4\tpairs=10\tms=1\tprior=cublas\t"
             "vs_prior=1.5\t# sgemm\n", hs);
    out = open_memstream(&buf, &len);
    CHECK_EQ_INT(gs_replay_summary(&s, write_file("d.cache", cache), out), 1);
    fclose(out);
    CHECK_CONTAINS(buf, "1 decided (0 keep the prior, 1 replace it), 1 not decided");
    CHECK_CONTAINS(buf, "  not decided: bf16\n");
    free(buf);
    gs_replay_sigs_free(&s);

    /* files that are not signature files, or of another format */
    memset(&s, 0, sizeof s);
    CHECK_EQ_INT(gs_replay_sigs_read(&s, write_file("x.sigs", "# gemmshim tune cache\n"), msg,
                                     sizeof msg), -1);
    CHECK_CONTAINS(msg, "is not a gemmshim signature file");
    CHECK_EQ_INT(gs_replay_sigs_read(&s, write_file("y.sigs", "gemmshim-signatures\tformat=2\n"),
                                     msg, sizeof msg), -1);
    CHECK_CONTAINS(msg, "format 2 is not one this replay reads (1)");
    CHECK_EQ_INT(gs_replay_sigs_read(&s, write_file("z.sigs", ""), msg, sizeof msg), -1);
    CHECK_CONTAINS(msg, "is empty");
    CHECK_EQ_INT(gs_replay_sigs_read(&s, "/nonexistent/app.sigs", msg, sizeof msg), -1);
    CHECK_CONTAINS(msg, "cannot read /nonexistent/app.sigs");
    gs_replay_sigs_free(&s);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/gs_test_replay_%d", (int)getpid());
    char cmd[128];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd))
        return 1;
    every_call_round_trips();
    spellings();
    refusals();
    signature_files();
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd))
        fprintf(stderr, "could not remove %s\n", dir);
    return GS_TEST_DONE();
}
