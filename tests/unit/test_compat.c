/* cuBLAS ABI knowledge: compute-type folding, data types, scalar types. */
#include "gs_compat.h"
#include "gs_test.h"

#define FOLD gs_compute_fold
#define F32 GS_DT_F32
#define BF16 GS_DT_BF16
#define F16 GS_DT_F16
#define DISALLOW_RRR CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION

static void math_mode_for_typed_routines(void)
{
    const int mm = GS_COMPUTE_FROM_MATH_MODE; /* cublasSgemm */
    CHECK_EQ_INT(DISALLOW_RRR, 0x10);
    CHECK_EQ_INT(FOLD(mm, CUBLAS_DEFAULT_MATH, F32), GS_CT_F32);
    CHECK_EQ_INT(FOLD(mm, CUBLAS_PEDANTIC_MATH, F32), GS_CT_F32_PEDANTIC);
    CHECK_EQ_INT(FOLD(mm, CUBLAS_TF32_TENSOR_OP_MATH, F32), GS_CT_F32_TF32);
    CHECK_EQ_INT(FOLD(mm, CUBLAS_TENSOR_OP_MATH, F32), GS_CT_F32_FAST_16F);
    /* The flag bit does not change the mode. */
    CHECK_EQ_INT(FOLD(mm, CUBLAS_DEFAULT_MATH | DISALLOW_RRR, F32), GS_CT_F32);
    CHECK_EQ_INT(FOLD(mm, CUBLAS_TF32_TENSOR_OP_MATH | DISALLOW_RRR, F32), GS_CT_F32_TF32);
    CHECK_EQ_INT(FOLD(mm, CUBLAS_PEDANTIC_MATH | DISALLOW_RRR, F32), GS_CT_F32_PEDANTIC);
    /* TF32 and TENSOR_OP only concern fp32 inputs. */
    CHECK_EQ_INT(FOLD(mm, CUBLAS_TF32_TENSOR_OP_MATH, BF16), GS_CT_F32);
    CHECK_EQ_INT(FOLD(mm, CUBLAS_TENSOR_OP_MATH, F16), GS_CT_F32);
    /* Emulation modes and unknown modes are not plain fp32. */
    CHECK_EQ_INT(FOLD(mm, CUBLAS_FP32_EMULATED_BF16X9_MATH, F32), GS_CT_OTHER);
    CHECK_EQ_INT(FOLD(mm, 7, F32), GS_CT_OTHER);
}

static void legacy_cuda_r_32f(void)
{
    /* cuBLAS < 11 passed a cudaDataType: CUDA_R_32F is 0 and follows the
     * math mode like the typed routines. */
    CHECK_EQ_INT(CUDA_R_32F, 0);
    CHECK_EQ_INT(FOLD(CUDA_R_32F, CUBLAS_DEFAULT_MATH, F32), GS_CT_F32);
    CHECK_EQ_INT(FOLD(CUDA_R_32F, CUBLAS_PEDANTIC_MATH, F32), GS_CT_F32_PEDANTIC);
    CHECK_EQ_INT(FOLD(CUDA_R_32F, CUBLAS_TF32_TENSOR_OP_MATH, F32), GS_CT_F32_TF32);
    CHECK_EQ_INT(FOLD(CUDA_R_32F, CUBLAS_DEFAULT_MATH | DISALLOW_RRR, BF16), GS_CT_F32);
    /* Other legacy spellings are not fp32 accumulation. */
    CHECK_EQ_INT(FOLD(CUDA_R_16F, CUBLAS_DEFAULT_MATH, F16), GS_CT_OTHER);
    CHECK_EQ_INT(FOLD(CUDA_R_64F, CUBLAS_DEFAULT_MATH, GS_DT_F64), GS_CT_OTHER);
    CHECK_EQ_INT(FOLD(CUDA_C_32F, CUBLAS_DEFAULT_MATH, F32), GS_CT_OTHER);
    CHECK_EQ_INT(FOLD(CUDA_R_32I, CUBLAS_DEFAULT_MATH, F32), GS_CT_OTHER);
}

static void compute_types(void)
{
    CHECK_EQ_INT(FOLD(CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH, F32), GS_CT_F32);
    CHECK_EQ_INT(FOLD(CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH, BF16), GS_CT_F32);
    CHECK_EQ_INT(FOLD(CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH | DISALLOW_RRR, F32), GS_CT_F32);
    /* The handle's TF32 mode lets COMPUTE_32F use TF32 on fp32 inputs. */
    CHECK_EQ_INT(FOLD(CUBLAS_COMPUTE_32F, CUBLAS_TF32_TENSOR_OP_MATH, F32), GS_CT_F32_TF32);
    CHECK_EQ_INT(FOLD(CUBLAS_COMPUTE_32F, CUBLAS_TF32_TENSOR_OP_MATH, BF16), GS_CT_F32);
    /* Pedantic math on COMPUTE_32F stays exact fp32 (either spelling). */
    int ped = FOLD(CUBLAS_COMPUTE_32F, CUBLAS_PEDANTIC_MATH, F32);
    CHECK(ped == GS_CT_F32 || ped == GS_CT_F32_PEDANTIC);

    /* Explicit compute types ignore the math mode. */
    const int modes[] = {CUBLAS_DEFAULT_MATH, CUBLAS_TF32_TENSOR_OP_MATH, CUBLAS_PEDANTIC_MATH,
                         CUBLAS_TENSOR_OP_MATH | DISALLOW_RRR};
    for (int i = 0; i < 4; ++i) {
        CHECK_EQ_INT(FOLD(CUBLAS_COMPUTE_32F_PEDANTIC, modes[i], F32), GS_CT_F32_PEDANTIC);
        CHECK_EQ_INT(FOLD(CUBLAS_COMPUTE_32F_FAST_TF32, modes[i], F32), GS_CT_F32_TF32);
        CHECK_EQ_INT(FOLD(CUBLAS_COMPUTE_32F_FAST_16F, modes[i], F32), GS_CT_F32_FAST_16F);
        CHECK_EQ_INT(FOLD(CUBLAS_COMPUTE_32F_FAST_16BF, modes[i], F32), GS_CT_F32_FAST_16BF);
    }

    const int other[] = {CUBLAS_COMPUTE_16F,         CUBLAS_COMPUTE_16F_PEDANTIC,
                         CUBLAS_COMPUTE_64F,         CUBLAS_COMPUTE_64F_PEDANTIC,
                         CUBLAS_COMPUTE_32I,         CUBLAS_COMPUTE_32I_PEDANTIC,
                         CUBLAS_COMPUTE_32F_EMULATED_16BFX9, 1000, -2};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; ++i)
        CHECK_EQ_INT(FOLD(other[i], CUBLAS_DEFAULT_MATH, F32), GS_CT_OTHER);
}

static void dtypes(void)
{
    CHECK_EQ_INT(gs_dtype_from_cuda(CUDA_R_32F), GS_DT_F32);
    CHECK_EQ_INT(gs_dtype_from_cuda(CUDA_R_16F), GS_DT_F16);
    CHECK_EQ_INT(gs_dtype_from_cuda(CUDA_R_16BF), GS_DT_BF16);
    CHECK_EQ_INT(gs_dtype_from_cuda(CUDA_R_64F), GS_DT_F64);
    const int other[] = {CUDA_C_32F, CUDA_C_64F, CUDA_R_8I, CUDA_R_32I, CUDA_R_8F_E4M3,
                         CUDA_R_8F_E5M2, CUDA_C_16F, -1, 999};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; ++i)
        CHECK_EQ_INT(gs_dtype_from_cuda(other[i]), GS_DT_OTHER);

    CHECK_EQ_INT(gs_dtype_size(GS_DT_F32), 4);
    CHECK_EQ_INT(gs_dtype_size(GS_DT_F16), 2);
    CHECK_EQ_INT(gs_dtype_size(GS_DT_BF16), 2);
    CHECK_EQ_INT(gs_dtype_size(GS_DT_F64), 8);
    CHECK_EQ_INT(gs_dtype_size(GS_DT_OTHER), 0);
}

static void scalar_types(void)
{
    CHECK_EQ_INT(gs_scalar_type(GS_COMPUTE_FROM_MATH_MODE, F32), GS_DT_F32);
    CHECK_EQ_INT(gs_scalar_type(GS_COMPUTE_FROM_MATH_MODE, GS_DT_F64), GS_DT_F64);
    CHECK_EQ_INT(gs_scalar_type(CUDA_R_32F, BF16), GS_DT_F32);
    const int f32[] = {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC,
                       CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_32F_FAST_16F,
                       CUBLAS_COMPUTE_32F_FAST_16BF};
    for (int i = 0; i < 5; ++i) {
        CHECK_EQ_INT(gs_scalar_type(f32[i], F32), GS_DT_F32);
        CHECK_EQ_INT(gs_scalar_type(f32[i], BF16), GS_DT_F32); /* float scalars for bf16 */
        CHECK_EQ_INT(gs_scalar_type(f32[i], F16), GS_DT_F32);
    }
    /* Scalars that are not float: never taken for float. */
    CHECK(gs_scalar_type(CUBLAS_COMPUTE_16F, F16) != GS_DT_F32);
    CHECK(gs_scalar_type(CUBLAS_COMPUTE_64F, GS_DT_F64) != GS_DT_F32);
    CHECK(gs_scalar_type(CUBLAS_COMPUTE_32I, GS_DT_OTHER) != GS_DT_F32);
}

/* A handle's state through getters the shim passes in: stand-ins here. */
static cublasStatus_t get_stream(cublasHandle_t h, cudaStream_t *s)
{
    (void)h;
    *s = (cudaStream_t)0x1234;
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t get_pm(cublasHandle_t h, cublasPointerMode_t *m)
{
    (void)h;
    *m = CUBLAS_POINTER_MODE_DEVICE;
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t get_mm(cublasHandle_t h, cublasMath_t *m)
{
    (void)h;
    *m = (cublasMath_t)(CUBLAS_TF32_TENSOR_OP_MATH | DISALLOW_RRR);
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t get_target(cublasHandle_t h, int *t)
{
    (void)h;
    *t = 66;
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t get_target_fails(cublasHandle_t h, int *t)
{
    (void)h, (void)t;
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

static void handle_state(void)
{
    cublasHandle_t h = (cublasHandle_t)0x10;
    gs_handle_state_t st;
    gs_handle_getters_t g = {get_stream, get_pm, get_mm, get_target};
    CHECK_EQ_INT(gs_handle_state(&g, h, &st), CUBLAS_STATUS_SUCCESS);
    CHECK(st.stream == (void *)0x1234 && st.scalars_on_device == 1);
    CHECK_EQ_INT(st.math_mode, CUBLAS_TF32_TENSOR_OP_MATH | DISALLOW_RRR);
    CHECK_EQ_INT(st.sm_count_target, 66);
    /* the SM count target is optional: no getter, or one that fails, is 0 */
    g.get_sm_count_target = NULL;
    CHECK_EQ_INT(gs_handle_state(&g, h, &st), CUBLAS_STATUS_SUCCESS);
    CHECK_EQ_INT(st.sm_count_target, 0);
    g.get_sm_count_target = get_target_fails;
    CHECK_EQ_INT(gs_handle_state(&g, h, &st), CUBLAS_STATUS_SUCCESS);
    CHECK_EQ_INT(st.sm_count_target, 0);
    /* the three others are required */
    g.get_math_mode = NULL;
    CHECK_EQ_INT(gs_handle_state(&g, h, &st), CUBLAS_STATUS_NOT_INITIALIZED);
    CHECK_EQ_INT(gs_handle_state(&g, NULL, &st), CUBLAS_STATUS_NOT_INITIALIZED);
}

int main(void)
{
    math_mode_for_typed_routines();
    legacy_cuda_r_32f();
    compute_types();
    dtypes();
    scalar_types();
    handle_state();
    return GS_TEST_DONE();
}
