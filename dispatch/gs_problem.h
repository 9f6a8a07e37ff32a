/* The problem descriptor: one GEMM call as the shim understood it.
 *
 * It flows shim -> dispatch -> kernel, so each layer sees one thing. It is
 * plain C with no CUDA or cuBLAS headers: dispatch is pure C and unit-tested
 * on machines without a GPU.
 *
 * Semantics (cuBLAS, column-major): for every batch b,
 *     C_b = alpha * op(A_b) * op(B_b) + beta * C_b
 * with op(A) m x k, op(B) k x n, C m x n, element (i, j) of C at
 * C[i + j * ldc]; A_b = A + b * stride_a (in elements), likewise B and C.
 */
#ifndef GS_PROBLEM_H
#define GS_PROBLEM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which intercepted entry point the call came through. */
typedef enum gs_entry {
    GS_EP_SGEMM = 0,          /* cublasSgemm_v2 / _64 */
    GS_EP_SGEMM_STRIDED,      /* cublasSgemmStridedBatched / _64 */
    GS_EP_GEMMEX,             /* cublasGemmEx / _64 */
    GS_EP_GEMMEX_STRIDED,     /* cublasGemmStridedBatchedEx / _64 */
    GS_EP_GEMMEX_BATCHED,     /* cublasGemmBatchedEx / _64 (pointer arrays) */
    GS_EP_LT_MATMUL,          /* cublasLtMatmul */
    GS_EP_COUNT
} gs_entry_t;

typedef enum gs_op { GS_OP_N = 0, GS_OP_T = 1 } gs_op_t;

/* Element types the shim knows; anything else is GS_DT_OTHER and forwarded. */
typedef enum gs_dtype {
    GS_DT_OTHER = 0,
    GS_DT_F32,
    GS_DT_F16,
    GS_DT_BF16,
    GS_DT_F64,
    GS_DT_E4M3,  /* FP8: 4 exponent bits, 3 mantissa bits (CUDA_R_8F_E4M3) */
    GS_DT_E5M2   /* FP8: 5 exponent bits, 2 mantissa bits (CUDA_R_8F_E5M2) */
} gs_dtype_t;

/* How cublasLtMatmul scales one matrix (its *_SCALE_MODE with a scale
 * pointer set), as the class records it; GS_SCALE_NONE without a pointer.
 * One value per cublasLtMatmulMatrixScale_t, plus one for modes newer than
 * this list; four bits each in gs_class_t.lt_scales. */
typedef enum gs_scale_mode {
    GS_SCALE_NONE = 0,
    GS_SCALE_SCALAR_32F,      /* one fp32 factor for the matrix (tensorwise) */
    GS_SCALE_VEC16_UE4M3,     /* a UE4M3 factor per 16 elements (block-scaled FP4) */
    GS_SCALE_VEC32_UE8M0,     /* a UE8M0 factor per 32 elements (MXFP8) */
    GS_SCALE_OUTER_VEC_32F,   /* an fp32 factor per row of op(A) / column of op(B) (rowwise) */
    GS_SCALE_VEC128_32F,      /* an fp32 factor per 128 elements along K */
    GS_SCALE_BLK128x128_32F,  /* an fp32 factor per 128x128 block */
    GS_SCALE_OTHER = 15       /* a mode this list does not name */
} gs_scale_mode_t;

/* gs_class_t.lt_scales: matrix X's gs_scale_mode_t in four bits. */
enum { GS_LT_SCALE_A = 0, GS_LT_SCALE_B = 4, GS_LT_SCALE_C = 8, GS_LT_SCALE_D = 12 };
static inline gs_scale_mode_t gs_lt_scale_of(unsigned lt_scales, int shift)
{
    return (gs_scale_mode_t)((lt_scales >> shift) & 15u);
}

/* gs_class_t.lt_flags: the rest of a cublasLtMatmul's scaling contract. */
enum {
    GS_LT_FAST_ACCUM = 1u << 0,   /* CUBLASLT_MATMUL_DESC_FAST_ACCUM on: FP8 partial
                                     sums are not promoted to fp32 periodically */
    GS_LT_AMAX_D = 1u << 1,       /* AMAX_D_POINTER set: max |D| is written there */
    GS_LT_C_TYPE_DIFFERS = 1u << 2, /* C's type is not D's (c_type); it is in */
    GS_LT_SCALE_UNALIGNED = 1u << 3, /* a scale pointer not 16-byte aligned: cuBLASLt
                                        13.1 refuses such an FP8 call (status 15, H200;
                                        tensorwise and rowwise, fast accumulation on
                                        or off) */
    GS_LT_C_TYPE_SHIFT = 8          /* bits 8-11, a gs_dtype_t */
};

/* How the products are accumulated, after folding in the handle's math mode.
 * GS_CT_F32 is plain fp32 FMA semantics (what SIMT SGEMM gives); TF32 and
 * the reduced-precision fast modes are distinct so dispatch can forward them. */
typedef enum gs_compute {
    GS_CT_OTHER = 0,
    GS_CT_F32,          /* CUBLAS_COMPUTE_32F, legacy CUDA_R_32F, default math */
    GS_CT_F32_PEDANTIC, /* CUBLAS_COMPUTE_32F_PEDANTIC or PEDANTIC math mode */
    GS_CT_F32_TF32,     /* TF32 allowed: COMPUTE_32F_FAST_TF32 or TF32 math mode */
    GS_CT_F32_FAST_16F, /* CUBLAS_COMPUTE_32F_FAST_16F */
    GS_CT_F32_FAST_16BF /* CUBLAS_COMPUTE_32F_FAST_16BF */
} gs_compute_t;

/* What a host-memory beta is, known before launch (C is never read when it
 * is zero); a device-memory beta is known only on the GPU. */
typedef enum gs_beta_kind {
    GS_BETA_DEVICE = 0, /* in device memory, or no beta */
    GS_BETA_ZERO,
    GS_BETA_ONE,
    GS_BETA_OTHER,
} gs_beta_kind_t;

/* The class of a call: every fact of it that decides its routing (types,
 * layout, sizes, strides, alignments, scalar kinds, epilogue), and nothing
 * else (no addresses, no stream). can_implement reads only this, and the
 * decision cache and the tuner key on its bytes, so what decides a route
 * and what keys it cannot drift apart. Filled by gs_problem_classify;
 * fixed-width fields without padding, so two classes compare with memcmp. */
typedef struct gs_class {
    /* entry and is_64 were 32 bits each; their values fit 16, and on the
     * little-endian hosts CUDA runs on their low halves come first, so the
     * upper halves hold the cublasLtMatmul scaling contract: a class
     * without one (every call but an FP8 or scaled cublasLtMatmul) keeps
     * the bytes it had, and so its key in tune caches and signature files. */
    int16_t entry;          /* gs_entry_t */
    uint16_t lt_scales;     /* A, B, C, D scale modes (GS_LT_SCALE_*); 0 elsewhere */
    int16_t is_64;
    uint16_t lt_flags;      /* GS_LT_FAST_ACCUM, GS_LT_AMAX_D, C's type; 0 elsewhere */
    int32_t a_type, b_type, c_type, compute, scalar_type;
    int32_t trans_a, trans_b;
    int32_t scalars_on_device;
    int32_t beta_kind;      /* gs_beta_kind_t */
    uint32_t math_flags;    /* the handle's math-mode flag bits above the mode
                               (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) */
    int32_t bias_type;      /* GS_DT_OTHER (0) without a bias */
    /* Alignment of each pointer: the largest power of two up to 256 that
     * divides its address, in bytes (alpha and beta: up to their own size,
     * gs_scalar_align_of); 0 for NULL. */
    uint32_t align_a, align_b, align_c, align_bias, align_alpha, align_beta;
    int32_t sm_count_target; /* the handle's cublasSetSmCountTarget (0: every SM):
                                only cuBLASLt's algorithms honour it */
    int64_t m, n, k;
    int64_t lda, ldb, ldc;
    int64_t batch, stride_a, stride_b, stride_c;
} gs_class_t;
#ifdef __cplusplus
#define GS_CLASS_ASSERT static_assert
#else
#define GS_CLASS_ASSERT _Static_assert
#endif
GS_CLASS_ASSERT(sizeof(gs_class_t) == 20 * 4 + 10 * 8, "gs_class_t has no padding");
GS_CLASS_ASSERT(offsetof(gs_class_t, is_64) == 4 && offsetof(gs_class_t, a_type) == 8,
                "gs_class_t's fields keep their offsets");
#if defined(__BYTE_ORDER__)
GS_CLASS_ASSERT(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "entry and is_64 share their old words with lt_* on little-endian hosts only");
#endif
#undef GS_CLASS_ASSERT

typedef struct gs_problem {
    gs_class_t cls;          /* its class: gs_problem_classify, after the fields below */

    gs_entry_t entry;
    int is_64;               /* came through an _64 entry point */

    gs_dtype_t a_type, b_type, c_type;
    gs_compute_t compute;
    gs_dtype_t scalar_type;  /* type alpha/beta point to (F32 for 32F compute) */

    gs_op_t trans_a, trans_b;
    int64_t m, n, k;

    const void *A;
    const void *B;
    void *C;                 /* read (when beta != 0) and written in place */
    int64_t lda, ldb, ldc;

    int64_t batch;           /* 1 for the non-batched entry points */
    int64_t stride_a, stride_b, stride_c; /* elements between batches */

    const void *alpha;       /* host or device memory, see scalars_on_device */
    const void *beta;
    int scalars_on_device;   /* CUBLAS_POINTER_MODE_DEVICE */
    unsigned math_flags;     /* the handle's math-mode flags (gs_class_t.math_flags) */
    int sm_count_target;     /* the handle's SM count target, 0 if none */
    /* cublasLtMatmul's scaling contract, as gs_class_t records it: 0 for
     * every other entry point and for calls that scale nothing. */
    unsigned lt_scales, lt_flags;

    void *stream;            /* cudaStream_t the handle is bound to */

    /* cublasLtMatmul's BIAS epilogue: when bias != NULL, after alpha and
     * beta, C_b(i, j) += bias[i] for every column j and batch b (one vector
     * of m elements of bias_type, shared by all batches), then C is rounded
     * to c_type. NULL for every other entry point. A kernel whose
     * can_implement does not take a bias returns 0 for such problems. */
    const void *bias;
    gs_dtype_t bias_type;    /* F32, F16 or BF16 */

    /* cublasLtMatmul's A_SCALE_POINTER and B_SCALE_POINTER as the call set
     * them: device memory of fp32 factors (one, or one per row of op(A) /
     * column of op(B), as the class's lt_scales say), read on the GPU by
     * whatever runs the call, never on the host. Per call, like bias and
     * the operands: NULL exactly where the class's mode is GS_SCALE_NONE. */
    const void *scale_a, *scale_b;

    /* Scratch device memory for this call's stream, set by the shim just
     * before the family's run when its plan's workspace_bytes asked for
     * some (dispatch/gs_family.h; kernels/common/gs_kernels.h for its
     * contract); NULL / 0 otherwise. */
    void *workspace;
    size_t workspace_size;

    /* Launch with programmatic dependent launch (GEMMSHIM_PDL, on by
     * default): the kernel's grid may be set up while the previous grid on
     * the stream drains, and waits (griddepcontrol.wait) for that grid's
     * completion and memory before its first global memory access. Kernels
     * that do not wait so ignore it. */
    int pdl;
} gs_problem_t;

/* Bytes of one element of t (0 for GS_DT_OTHER). */
static inline size_t gs_dtype_size(gs_dtype_t t)
{
    switch (t) {
    case GS_DT_F32: return 4;
    case GS_DT_F16: return 2;
    case GS_DT_BF16: return 2;
    case GS_DT_F64: return 8;
    case GS_DT_E4M3: return 1;
    case GS_DT_E5M2: return 1;
    default: return 0;
    }
}

/* Shared by the kernels' can_implement predicates. */

/* The C windows of consecutive batches do not overlap: a batch's last
 * element (ldc*(n-1) + m - 1) lies before the next batch's first. Written
 * without overflow for huge strides; a negative stride never passes. Of a
 * class: can_implement reads only the class. */
static inline int gs_class_c_batches_disjoint(const gs_class_t *c)
{
    if (c->batch <= 1)
        return 1;
    if (c->stride_c <= 0 || c->ldc < 1)
        return 0;
    return (c->stride_c - c->m) / c->ldc >= c->n - 1 && c->stride_c >= c->m;
}

/* Bytes from the first element of C's windows to the last (every batch). */
static inline size_t gs_c_span_bytes(const gs_problem_t *p)
{
    const int64_t last = (p->batch - 1) * p->stride_c + (p->n - 1) * p->ldc + p->m;
    return (size_t)last * gs_dtype_size(p->c_type);
}

/* The largest power of two up to 256 dividing ptr's address; 0 for NULL. */
static inline uint32_t gs_align_of(const void *ptr)
{
    uintptr_t a = (uintptr_t)ptr;
    if (!a)
        return 0;
    uint32_t al = 1;
    while (al < 256 && !(a & al))
        al <<= 1;
    return al;
}

/* A scalar's alignment as far as it matters: up to its own size (4 for an
 * fp32 alpha; 16, a double complex's, for types the shim does not name).
 * More would make the class depend on where the caller's stack happens to
 * put a host scalar, which moves with the call site and between processes,
 * so a tuned decision would not be found again. */
static inline uint32_t gs_scalar_align_of(const void *ptr, gs_dtype_t t)
{
    const uint32_t al = gs_align_of(ptr), size = (uint32_t)gs_dtype_size(t);
    const uint32_t cap = size ? size : 16;
    return al > cap ? cap : al;
}

/* The hash every table keyed by class uses, mixed with a seed (a device
 * ordinal): a word at a time (multiply, fold the high half down), since it
 * runs on served calls; the class is 20 whole words with no padding (the
 * size assertion above). */
static inline uint64_t gs_class_hash(const gs_class_t *c, uint64_t seed)
{
    uint64_t h = 1469598103934665603ull ^ seed;
    for (size_t i = 0; i < sizeof *c; i += sizeof(uint64_t)) {
        uint64_t w;
        memcpy(&w, (const char *)c + i, sizeof w);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 32;
    }
    return h;
}

/* Fills p->cls from the problem's other fields; call after setting them
 * (shim: describe; tests: by hand). */
static inline void gs_problem_classify(gs_problem_t *p)
{
    gs_class_t *c = &p->cls;
    memset(c, 0, sizeof *c);
    c->entry = (int16_t)p->entry;
    c->lt_scales = (uint16_t)p->lt_scales;
    c->is_64 = (int16_t)p->is_64;
    c->lt_flags = (uint16_t)p->lt_flags;
    c->a_type = p->a_type;
    c->b_type = p->b_type;
    c->c_type = p->c_type;
    c->compute = p->compute;
    c->scalar_type = p->scalar_type;
    c->trans_a = p->trans_a;
    c->trans_b = p->trans_b;
    c->scalars_on_device = p->scalars_on_device;
    c->math_flags = p->math_flags;
    c->sm_count_target = p->sm_count_target;
    if (!p->scalars_on_device && p->beta && p->scalar_type == GS_DT_F32) {
        float b; /* a host scalar need not be aligned to its type (the class records how) */
        memcpy(&b, p->beta, sizeof b);
        c->beta_kind = b == 0.0f ? GS_BETA_ZERO : b == 1.0f ? GS_BETA_ONE : GS_BETA_OTHER;
    } else if (!p->scalars_on_device && p->beta) {
        c->beta_kind = GS_BETA_OTHER; /* other scalar types: not read here */
    }
    c->bias_type = p->bias ? p->bias_type : GS_DT_OTHER;
    c->align_a = gs_align_of(p->A);
    c->align_b = gs_align_of(p->B);
    c->align_c = gs_align_of(p->C);
    c->align_bias = gs_align_of(p->bias);
    c->align_alpha = gs_scalar_align_of(p->alpha, p->scalar_type);
    c->align_beta = gs_scalar_align_of(p->beta, p->scalar_type);
    c->m = p->m;
    c->n = p->n;
    c->k = p->k;
    c->lda = p->lda;
    c->ldb = p->ldb;
    c->ldc = p->ldc;
    c->batch = p->batch;
    c->stride_a = p->stride_a;
    c->stride_b = p->stride_b;
    c->stride_c = p->stride_c;
}

/* A cublasLtMatmul scaling contract (scales, AMAX_D, fast accumulation, a
 * C of another type). Only a family that says it reads the contract
 * (gs_family_t.reads_lt_contract: cuBLASLt's own algorithms) is offered
 * such a class; dispatch and the tuner offer it to no other, so a class
 * from a tune cache or a signature file never reaches a family that would
 * ignore the contract. */
static inline int gs_class_lt_scaled(const gs_class_t *c)
{
    return c->lt_scales != 0 || c->lt_flags != 0;
}

static inline int gs_dtype_is_fp8(int32_t t)
{
    return t == GS_DT_E4M3 || t == GS_DT_E5M2;
}

/* FP8 operands (either one): offered, like a scaling contract, only to a
 * family that reads the contract, whether or not the call set scales. */
static inline int gs_class_fp8(const gs_class_t *c)
{
    return gs_dtype_is_fp8(c->a_type) || gs_dtype_is_fp8(c->b_type);
}

/* The FP8 subset cuBLASLt's own algorithms are tuned on (compat/gs_lt.h
 * says which calls give it): a cublasLtMatmul of FP8 A and B (e4m3 or
 * e5m2, not both e5m2), compute 32F, D bf16, fp16 or fp32, A's and B's
 * scales none, per tensor (SCALAR_32F) or per row / column (OUTER_VEC_32F),
 * fast accumulation on or off, nothing else of the contract (no C or D
 * scale, no AMAX_D, C of D's type). What the family copies, and what the
 * offline tuner's replay rebuilds. */
static inline int gs_class_fp8_subset(const gs_class_t *c)
{
    const gs_scale_mode_t a = gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_A),
                          b = gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_B);
    const int a_ok = a == GS_SCALE_NONE || a == GS_SCALE_SCALAR_32F || a == GS_SCALE_OUTER_VEC_32F,
              b_ok = b == GS_SCALE_NONE || b == GS_SCALE_SCALAR_32F || b == GS_SCALE_OUTER_VEC_32F;
    return c->entry == GS_EP_LT_MATMUL && gs_dtype_is_fp8(c->a_type) &&
           gs_dtype_is_fp8(c->b_type) && !(c->a_type == GS_DT_E5M2 && c->b_type == GS_DT_E5M2) &&
           (c->c_type == GS_DT_BF16 || c->c_type == GS_DT_F16 || c->c_type == GS_DT_F32) &&
           c->compute == GS_CT_F32 && a_ok && b_ok &&
           gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_C) == GS_SCALE_NONE &&
           gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_D) == GS_SCALE_NONE &&
           !(c->lt_flags & ~(unsigned)GS_LT_FAST_ACCUM);
}

/* fp32 accumulation with 16-bit inputs: every spelling cuBLAS accepts for it. */
static inline int gs_compute_is_f32_accum(gs_compute_t c)
{
    return c == GS_CT_F32 || c == GS_CT_F32_PEDANTIC || c == GS_CT_F32_FAST_16F ||
           c == GS_CT_F32_FAST_16BF;
}

/* The routing table's GPU key of a device name: the name without a leading
 * "NVIDIA ", up to the first space ("NVIDIA H100 80GB HBM3" -> "H100"),
 * truncated to n - 1 characters. */
static inline void gs_gpu_key(const char *name, char *out, size_t n)
{
    static const char prefix[] = "NVIDIA ";
    size_t i = 0, j = 0;
    if (!n)
        return;
    while (prefix[i] && name && name[i] == prefix[i])
        ++i;
    if (prefix[i]) /* no prefix */
        i = 0;
    while (name && name[i] && name[i] != ' ' && j + 1 < n)
        out[j++] = name[i++];
    out[j] = '\0';
}

/* The device a call would run on, as dispatch and can_implement see it.
 * Filled from the CUDA runtime (kernels/common/gs_device.cu) or, in tests, by hand. */
typedef struct gs_device {
    int present;             /* 0: no usable CUDA device (dispatch forwards) */
    int ordinal;
    int cc_major, cc_minor;
    int sm_count;
    size_t smem_optin;       /* max dynamic shared memory per block, bytes */
    size_t l2_bytes;
    /* The model from the device name without its vendor prefix, up to the
     * first space ("H200", "H100"); "" when unknown. Routing-table entries
     * measured on that model are preferred for it (gs_table_ratio). */
    char gpu[16];
} gs_device_t;

#ifdef __cplusplus
}
#endif
#endif /* GS_PROBLEM_H */
