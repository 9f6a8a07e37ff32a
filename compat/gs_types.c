#include "gs_compat.h"

gs_dtype_t gs_dtype_from_cuda(int t)
{
    switch (t) {
    case CUDA_R_32F: return GS_DT_F32;
    case CUDA_R_16F: return GS_DT_F16;
    case CUDA_R_16BF: return GS_DT_BF16;
    case CUDA_R_64F: return GS_DT_F64;
    case CUDA_R_8F_E4M3: return GS_DT_E4M3;
    case CUDA_R_8F_E5M2: return GS_DT_E5M2;
    default: return GS_DT_OTHER;
    }
}

gs_scale_mode_t gs_scale_mode_from_lt(int mode)
{
    switch (mode) {
    case CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F: return GS_SCALE_SCALAR_32F;
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3: return GS_SCALE_VEC16_UE4M3;
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0: return GS_SCALE_VEC32_UE8M0;
    case CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F: return GS_SCALE_OUTER_VEC_32F;
    case CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F: return GS_SCALE_VEC128_32F;
    case CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F: return GS_SCALE_BLK128x128_32F;
    default: return GS_SCALE_OTHER;
    }
}

int gs_scale_mode_to_lt(gs_scale_mode_t m)
{
    switch (m) {
    case GS_SCALE_SCALAR_32F: return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    case GS_SCALE_VEC16_UE4M3: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
    case GS_SCALE_VEC32_UE8M0: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
    case GS_SCALE_OUTER_VEC_32F: return CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    case GS_SCALE_VEC128_32F: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    case GS_SCALE_BLK128x128_32F: return CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    default: return -1;
    }
}

const char *gs_scale_mode_name(gs_scale_mode_t m)
{
    switch (m) {
    case GS_SCALE_NONE: return "none";
    case GS_SCALE_SCALAR_32F: return "SCALAR_32F";
    case GS_SCALE_VEC16_UE4M3: return "VEC16_UE4M3";
    case GS_SCALE_VEC32_UE8M0: return "VEC32_UE8M0";
    case GS_SCALE_OUTER_VEC_32F: return "OUTER_VEC_32F";
    case GS_SCALE_VEC128_32F: return "VEC128_32F";
    case GS_SCALE_BLK128x128_32F: return "BLK128x128_32F";
    default: return "other";
    }
}

/* Legacy spellings: before cuBLAS 11 the compute type was a cudaDataType,
 * whose values (< 64) do not overlap cublasComputeType_t's (>= 64). */
static int is_legacy_compute(int compute_type)
{
    return compute_type >= 0 && compute_type < CUBLAS_COMPUTE_16F;
}

/* The math mode's low nibble is the mode; higher bits are flags
 * (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) that do not change fp32
 * accumulation. */
static gs_compute_t from_math_mode(int math_mode, gs_dtype_t a_type)
{
    switch (math_mode & 0xf) {
    case CUBLAS_DEFAULT_MATH: return GS_CT_F32;
    case CUBLAS_PEDANTIC_MATH: return GS_CT_F32_PEDANTIC;
    case CUBLAS_TF32_TENSOR_OP_MATH:
        return a_type == GS_DT_F32 ? GS_CT_F32_TF32 : GS_CT_F32;
    case CUBLAS_TENSOR_OP_MATH: /* deprecated: means COMPUTE_32F_FAST_16F */
        return a_type == GS_DT_F32 ? GS_CT_F32_FAST_16F : GS_CT_F32;
    default: return GS_CT_OTHER; /* emulation modes and anything newer */
    }
}

gs_compute_t gs_compute_fold(int compute_type, int math_mode, gs_dtype_t a_type)
{
    if (compute_type == GS_COMPUTE_FROM_MATH_MODE ||
        (is_legacy_compute(compute_type) && compute_type == CUDA_R_32F))
        return from_math_mode(math_mode, a_type);
    if (is_legacy_compute(compute_type))
        return GS_CT_OTHER;
    switch (compute_type) {
    case CUBLAS_COMPUTE_32F: {
        gs_compute_t m = from_math_mode(math_mode, a_type);
        return m == GS_CT_F32_PEDANTIC ? GS_CT_F32 : m;
    }
    case CUBLAS_COMPUTE_32F_PEDANTIC: return GS_CT_F32_PEDANTIC;
    case CUBLAS_COMPUTE_32F_FAST_TF32: return GS_CT_F32_TF32;
    case CUBLAS_COMPUTE_32F_FAST_16F: return GS_CT_F32_FAST_16F;
    case CUBLAS_COMPUTE_32F_FAST_16BF: return GS_CT_F32_FAST_16BF;
    default: return GS_CT_OTHER;
    }
}

gs_dtype_t gs_scalar_type(int compute_type, gs_dtype_t a_type)
{
    switch (compute_type) {
    case GS_COMPUTE_FROM_MATH_MODE: return a_type;
    case CUDA_R_32F:
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF: return GS_DT_F32;
    default: return GS_DT_OTHER;
    }
}
