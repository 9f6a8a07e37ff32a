/* A class read back into call arguments; see gs_replay_class.h. */
#include "gs_replay_class.h"

#include <string.h>

/* The element types the shim routes or tunes, by cuBLAS's names. */
static int cuda_type(int32_t t, cudaDataType *out)
{
    switch (t) {
    case GS_DT_F32: *out = CUDA_R_32F; return 0;
    case GS_DT_F16: *out = CUDA_R_16F; return 0;
    case GS_DT_BF16: *out = CUDA_R_16BF; return 0;
    case GS_DT_E4M3: *out = CUDA_R_8F_E4M3; return 0;
    case GS_DT_E5M2: *out = CUDA_R_8F_E5M2; return 0;
    default: return -1;
    }
}

/* One matrix's scale in the FP8 subset: its mode as cuBLASLt spells it
 * (-1 for none) and its vector's bytes (`outer` factors when rowwise). */
static void scale_of(gs_scale_mode_t m, int64_t outer, int32_t *mode, size_t *bytes)
{
    *mode = m == GS_SCALE_SCALAR_32F     ? CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F
            : m == GS_SCALE_OUTER_VEC_32F ? CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F
                                          : -1;
    *bytes = m == GS_SCALE_SCALAR_32F      ? sizeof(float)
             : m == GS_SCALE_OUTER_VEC_32F ? (size_t)outer * sizeof(float)
                                           : 0;
}

/* The offset from a 256-byte boundary that gives a pointer the alignment
 * `align` as the class measures it (the largest power of two dividing the
 * address, capped at `cap`): a multiple of the cap needs none. */
static int offset_of(uint32_t align, uint32_t cap, uint32_t *off)
{
    if (!align) {
        *off = GS_REPLAY_NULL;
        return 0;
    }
    if ((align & (align - 1)) || align > cap)
        return -1;
    *off = align == cap ? 0 : align;
    return 0;
}

/* Bytes from the first element of a rows x cols matrix (leading dimension
 * ld) to the last element of its last batch; -1 for negative sizes or
 * strides, or a span that does not fit in 63 bits. */
static int span(int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride,
                size_t elem, size_t *bytes)
{
    if (rows < 0 || cols < 0 || ld < 0 || batch < 1 || stride < 0)
        return -1;
    *bytes = 0;
    if (!rows || !cols)
        return 0;
    int64_t last, col_part, batch_part;
    if (__builtin_mul_overflow(cols - 1, ld, &col_part) ||
        __builtin_mul_overflow(batch - 1, stride, &batch_part) ||
        __builtin_add_overflow(col_part, batch_part, &last) ||
        __builtin_add_overflow(last, rows, &last) ||
        __builtin_mul_overflow(last, (int64_t)elem, &last))
        return -1;
    *bytes = (size_t)last;
    return 0;
}

/* The compute type cublasGemmEx and cuBLASLt take for the class's
 * accumulation; 0, or -1 for one the class does not name. */
static int compute_of(int32_t compute, cublasComputeType_t *out)
{
    switch (compute) {
    case GS_CT_F32: *out = CUBLAS_COMPUTE_32F; return 0;
    case GS_CT_F32_PEDANTIC: *out = CUBLAS_COMPUTE_32F_PEDANTIC; return 0;
    case GS_CT_F32_TF32: *out = CUBLAS_COMPUTE_32F_FAST_TF32; return 0;
    case GS_CT_F32_FAST_16F: *out = CUBLAS_COMPUTE_32F_FAST_16F; return 0;
    case GS_CT_F32_FAST_16BF: *out = CUBLAS_COMPUTE_32F_FAST_16BF; return 0;
    default: return -1;
    }
}

/* cublasSgemm's accumulation comes from the handle's math mode alone
 * (compat/gs_types.c, from_math_mode); -1 where no mode gives it. */
static int sgemm_math_of(int32_t compute, cublasMath_t *out)
{
    switch (compute) {
    case GS_CT_F32: *out = CUBLAS_DEFAULT_MATH; return 0;
    case GS_CT_F32_PEDANTIC: *out = CUBLAS_PEDANTIC_MATH; return 0;
    case GS_CT_F32_TF32: *out = CUBLAS_TF32_TENSOR_OP_MATH; return 0;
    case GS_CT_F32_FAST_16F: *out = CUBLAS_TENSOR_OP_MATH; return 0;
    default: return -1;
    }
}

/* The scalars: where they live, their values, their alignment. */
static const char *scalars_of(const gs_class_t *c, gs_replay_args_t *a)
{
    a->scalars_on_device = c->scalars_on_device != 0;
    a->alpha = 1.0f;
    if (a->scalars_on_device) {
        if (c->beta_kind != GS_BETA_DEVICE)
            return "a class that no call gives (a device beta of a known value)";
        a->beta = 0.0f; /* known only on the GPU: the shim assumes nothing of it */
    } else {
        switch (c->beta_kind) {
        case GS_BETA_ZERO: a->beta = 0.0f; break;
        case GS_BETA_ONE: a->beta = 1.0f; break;
        case GS_BETA_OTHER: a->beta = 0.5f; break;
        default: return "a class that no call gives (a host beta of no kind)";
        }
    }
    const uint32_t size = (uint32_t)gs_dtype_size(GS_DT_F32);
    if (offset_of(c->align_alpha, size, &a->off_alpha) ||
        offset_of(c->align_beta, size, &a->off_beta) || a->off_alpha == GS_REPLAY_NULL ||
        a->off_beta == GS_REPLAY_NULL)
        return "a class that no call gives (a scalar's alignment)";
    return NULL;
}

/* The operands: types, pointers' offsets, spans. */
static const char *operands_of(const gs_class_t *c, gs_replay_args_t *a)
{
    const size_t ea = gs_dtype_size((gs_dtype_t)c->a_type),
                 eb = gs_dtype_size((gs_dtype_t)c->b_type),
                 ec = gs_dtype_size((gs_dtype_t)c->c_type);
    const int ta = a->transa == CUBLAS_OP_T, tb = a->transb == CUBLAS_OP_T;
    if (span(ta ? c->k : c->m, ta ? c->m : c->k, c->lda, c->batch, c->stride_a, ea,
             &a->bytes_a) ||
        span(tb ? c->n : c->k, tb ? c->k : c->n, c->ldb, c->batch, c->stride_b, eb,
             &a->bytes_b) ||
        span(c->m, c->n, c->ldc, c->batch, c->stride_c, ec, &a->bytes_c))
        return "negative sizes or strides, or operands beyond 2^63 bytes";
    if (offset_of(c->align_a, 256, &a->off_a) || offset_of(c->align_b, 256, &a->off_b) ||
        offset_of(c->align_c, 256, &a->off_c) || offset_of(c->align_bias, 256, &a->off_bias))
        return "a class that no call gives (a pointer's alignment)";
    if (a->off_c == GS_REPLAY_NULL)
        return "a class that no call gives (C is NULL)";
    if (!c->bias_type) {
        if (a->off_bias != GS_REPLAY_NULL)
            return "a class that no call gives (a bias's alignment without a bias)";
        return NULL;
    }
    if (cuda_type(c->bias_type, &a->bias_type) || a->off_bias == GS_REPLAY_NULL)
        return "a class that no call gives (its bias)";
    a->bias = 1;
    a->bytes_bias = (size_t)c->m * gs_dtype_size((gs_dtype_t)c->bias_type);
    return NULL;
}

const char *gs_replay_args_of(const gs_class_t *c, gs_replay_args_t *a)
{
    memset(a, 0, sizeof *a);
    a->entry = (gs_entry_t)c->entry;
    const int sgemm = c->entry == GS_EP_SGEMM || c->entry == GS_EP_SGEMM_STRIDED;
    const int lt = c->entry == GS_EP_LT_MATMUL;
    const int strided = c->entry == GS_EP_SGEMM_STRIDED || c->entry == GS_EP_GEMMEX_STRIDED || lt;
    if (c->entry == GS_EP_GEMMEX_BATCHED)
        return "pointer-array batches (cublasGemmBatchedEx): never tuned, and the class "
               "keeps no alignment of the matrices the arrays point to";
    if (!sgemm && !lt && c->entry != GS_EP_GEMMEX && c->entry != GS_EP_GEMMEX_STRIDED)
        return "an entry point this replay does not know";
    if (c->a_type == GS_DT_F64 || c->c_type == GS_DT_F64)
        return "fp64 (never routed)";
    const int fp8 = gs_class_fp8(c);
    if (fp8 ? !gs_class_fp8_subset(c) : gs_class_lt_scaled(c))
        return "fp8 or cuBLASLt scaling beyond the subset cuBLASLt's algorithms are tuned on "
               "(never routed)";
    if (gs_dtype_is_fp8(c->c_type))
        return "a class that no call gives (an FP8 D from 16-bit operands)";
    if (cuda_type(c->a_type, &a->a_type) || cuda_type(c->b_type, &a->b_type) ||
        cuda_type(c->c_type, &a->c_type))
        return "an element type the class does not name (int8, complex, ...)";
    if (c->scalar_type != GS_DT_F32 || compute_of(c->compute, &a->compute))
        return "a compute type the class does not name (16F, 64F, 32I, ...)";
    if (c->a_type != c->b_type && !fp8)
        return "a class that no call gives (A and B of different types)";
    if (sgemm && (c->a_type != GS_DT_F32 || c->c_type != GS_DT_F32))
        return "a class that no call gives (cublasSgemm with other types)";
    if ((unsigned)c->trans_a > 1 || (unsigned)c->trans_b > 1 || (unsigned)c->is_64 > 1)
        return "a class that no call gives (a transpose)";
    if (!strided && (c->batch != 1 || c->stride_a || c->stride_b || c->stride_c))
        return "a class that no call gives (a batch on an unbatched entry point)";
    if (lt && (c->is_64 || c->math_flags || c->sm_count_target))
        return "a class that no call gives (cuBLASLt with a handle's settings)";
    if (!lt && c->bias_type)
        return "a class that no call gives (a bias outside cuBLASLt)";
    if (c->m < 1 || c->n < 1 || c->k < 0 || c->batch < 1)
        return "a class that no call gives (an empty result)";
    if (c->sm_count_target < 0)
        return "a class that no call gives (a negative SM count target)";
    if (!c->is_64 && !lt &&
        (c->m > INT32_MAX || c->n > INT32_MAX || c->k > INT32_MAX || c->lda > INT32_MAX ||
         c->ldb > INT32_MAX || c->ldc > INT32_MAX || c->batch > INT32_MAX))
        return "a class that no call gives (sizes beyond int on an int entry point)";

    a->is_64 = c->is_64;
    a->transa = c->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    a->transb = c->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    a->m = c->m;
    a->n = c->n;
    a->k = c->k;
    a->lda = c->lda;
    a->ldb = c->ldb;
    a->ldc = c->ldc;
    a->batch = c->batch;
    a->stride_a = c->stride_a;
    a->stride_b = c->stride_b;
    a->stride_c = c->stride_c;
    a->sm_count_target = c->sm_count_target;
    cublasMath_t mode = CUBLAS_DEFAULT_MATH;
    if (sgemm && sgemm_math_of(c->compute, &mode))
        return "a class that no call gives (cublasSgemm with FAST_16BF compute)";
    a->math_mode = (cublasMath_t)((unsigned)mode | c->math_flags);
    /* rowwise: one factor per row of op(A), per column of op(B); a vector
     * per batch allowed for (more than a batch-shared one needs) */
    scale_of(gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_A), c->m * c->batch, &a->scale_mode_a,
             &a->bytes_scale_a);
    scale_of(gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_B), c->n * c->batch, &a->scale_mode_b,
             &a->bytes_scale_b);
    a->fast_accum = (c->lt_flags & GS_LT_FAST_ACCUM) ? 1 : 0;
    const char *why = scalars_of(c, a);
    return why ? why : operands_of(c, a);
}
