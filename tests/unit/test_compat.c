/* cuBLAS ABI knowledge: compute-type folding, data types, scalar types. */
#include "gs_compat.h"
#include "gs_lt.h"
#include "gs_test.h"
#include "lt_bag.h"

#include <stdint.h>
#include <string.h>

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
    CHECK_EQ_INT(gs_dtype_from_cuda(CUDA_R_8F_E4M3), GS_DT_E4M3);
    CHECK_EQ_INT(gs_dtype_from_cuda(CUDA_R_8F_E5M2), GS_DT_E5M2);
    /* the block-scaled formats' element and scale types are not FP8 GEMM operands here */
    const int other[] = {CUDA_C_32F,      CUDA_C_64F,     CUDA_R_8I,      CUDA_R_32I,
                         CUDA_R_8F_UE8M0, CUDA_R_6F_E2M3, CUDA_R_4F_E2M1, CUDA_C_16F,
                         -1,              999};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; ++i)
        CHECK_EQ_INT(gs_dtype_from_cuda(other[i]), GS_DT_OTHER);

    CHECK_EQ_INT(gs_dtype_size(GS_DT_F32), 4);
    CHECK_EQ_INT(gs_dtype_size(GS_DT_F16), 2);
    CHECK_EQ_INT(gs_dtype_size(GS_DT_BF16), 2);
    CHECK_EQ_INT(gs_dtype_size(GS_DT_F64), 8);
    CHECK_EQ_INT(gs_dtype_size(GS_DT_E4M3), 1);
    CHECK_EQ_INT(gs_dtype_size(GS_DT_E5M2), 1);
    CHECK_EQ_INT(gs_dtype_size(GS_DT_OTHER), 0);
    /* appended: the values classes already recorded hold keep their meaning */
    CHECK_EQ_INT(GS_DT_F64, 4);
    CHECK_EQ_INT(GS_DT_E4M3, 5);
    CHECK_EQ_INT(GS_DT_E5M2, 6);
}

static void scale_modes(void)
{
    CHECK_EQ_INT(gs_scale_mode_from_lt(CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F), GS_SCALE_SCALAR_32F);
    CHECK_EQ_INT(gs_scale_mode_from_lt(CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F),
                 GS_SCALE_OUTER_VEC_32F);
    CHECK_EQ_INT(gs_scale_mode_from_lt(CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F), GS_SCALE_VEC128_32F);
    CHECK_EQ_INT(gs_scale_mode_from_lt(CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F),
                 GS_SCALE_BLK128x128_32F);
    CHECK_EQ_INT(gs_scale_mode_from_lt(CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3),
                 GS_SCALE_VEC16_UE4M3);
    CHECK_EQ_INT(gs_scale_mode_from_lt(CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0),
                 GS_SCALE_VEC32_UE8M0);
    CHECK_EQ_INT(gs_scale_mode_from_lt(CUBLASLT_MATMUL_MATRIX_SCALE_END), GS_SCALE_OTHER);
    CHECK_EQ_INT(gs_scale_mode_from_lt(-1), GS_SCALE_OTHER);
    CHECK_STR_EQ(gs_scale_mode_name(GS_SCALE_SCALAR_32F), "SCALAR_32F");
    CHECK_STR_EQ(gs_scale_mode_name(GS_SCALE_OUTER_VEC_32F), "OUTER_VEC_32F");
    CHECK_STR_EQ(gs_scale_mode_name(GS_SCALE_VEC128_32F), "VEC128_32F");
    CHECK_STR_EQ(gs_scale_mode_name(GS_SCALE_BLK128x128_32F), "BLK128x128_32F");
    CHECK_STR_EQ(gs_scale_mode_name(GS_SCALE_OTHER), "other");
    /* every mode fits the class's four bits */
    CHECK(GS_SCALE_OTHER <= 15 && GS_SCALE_BLK128x128_32F < GS_SCALE_OTHER);
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

/* ---- cublasLtMatmul descriptors (lt_bag.h) ---- */

/* layout_get counting its calls */
static int layout_reads;
static cublasStatus_t counting_layout_get(cublasLtMatrixLayout_t l,
                                          cublasLtMatrixLayoutAttribute_t a, void *buf, size_t n,
                                          size_t *written)
{
    ++layout_reads;
    return layout_get(l, a, buf, n, written);
}

/* One handle for C and D (PyTorch's bias GEMMs): read once, the call
 * described exactly as with two handles holding the same layout. */
static void lt_c_is_d(void)
{
    const gs_lt_getters_t g = {desc_get, counting_layout_get};
    lt_case_t t;
    gs_call_t two, one;
    lt_case(&t, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF);
    layout_reads = 0;
    gs_lt_describe(&g, &t.args, &two);
    const int reads_two = layout_reads;
    t.args.Cdesc = t.args.Ddesc;
    layout_reads = 0;
    gs_lt_describe(&g, &t.args, &one);
    CHECK_EQ_INT(layout_reads * 4, reads_two * 3);
    CHECK_STR_EQ(one.lt_unroutable, two.lt_unroutable);
    CHECK(one.m == two.m && one.n == two.n && one.k == two.k && one.ldc == two.ldc &&
          one.ctype == two.ctype && one.batch == two.batch && one.lt_flags == two.lt_flags);
    /* an FP8 D with a bf16 C cannot share a handle: two handles, the
     * types differ, said */
    lt_case(&t, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_8F_E4M3);
    gs_lt_describe(&g, &t.args, &two);
    CHECK_CONTAINS(two.lt_unroutable, "C and D types differ");
    /* a NULL D layout is said whether or not C shares it */
    t.args.Ddesc = NULL;
    gs_lt_describe(&g, &t.args, &two);
    CHECK_STR_EQ(two.lt_unroutable, "NULL layout");
    t.args.Cdesc = NULL;
    gs_lt_describe(&g, &t.args, &one);
    CHECK_STR_EQ(one.lt_unroutable, "NULL layout");
}

/* torchao's tensorwise FP8 training GEMM, with TransformerEngine's FP8
 * output extras: every reason, in order, and the contract in the call. */
static void lt_fp8_reasons(void)
{
    lt_case_t t;
    gs_call_t c;
    lt_case(&t, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF);
    lt_describe(&t, &c);
    CHECK_STR_EQ(c.lt_unroutable, ""); /* the control: a plain bf16 call is routable */
    CHECK_EQ_INT(c.lt_scales, 0);
    CHECK_EQ_INT(c.lt_flags, 0);

    lt_case(&t, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 0x7100000);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, 0x7200000);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, 0x7300000);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, 0x7400000);
    const int8_t on = 1;
    bag_put(&t.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &on, 1);
    lt_describe(&t, &c);
    CHECK_STR_EQ(c.lt_unroutable, "fp8 operands; scale modes A=SCALAR_32F B=SCALAR_32F; D scale "
                                  "set; AMAX_D set; fast accumulation on");
    CHECK_EQ_INT(c.lt_scales, GS_SCALE_SCALAR_32F << GS_LT_SCALE_A |
                                  GS_SCALE_SCALAR_32F << GS_LT_SCALE_B |
                                  GS_SCALE_SCALAR_32F << GS_LT_SCALE_D);
    CHECK_EQ_INT(c.lt_flags, GS_LT_FAST_ACCUM | GS_LT_AMAX_D);
    /* the rest of the call is read as for any other: a full class */
    CHECK_EQ_INT(c.atype, CUDA_R_8F_E4M3);
    CHECK_EQ_INT(c.ctype, CUDA_R_16BF);
    CHECK(c.m == 1024 && c.n == 512 && c.k == 768 && c.lda == 768 && c.ldb == 768 && c.ldc == 1024);
    CHECK_EQ_INT(c.compute_type, CUBLAS_COMPUTE_32F);

    /* the backward GEMM: e5m2 x e4m3, rowwise, fast accumulation off */
    lt_case(&t, CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 0x7100000);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, 0x7200000);
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F);
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F);
    lt_describe(&t, &c);
    CHECK_STR_EQ(c.lt_unroutable,
                 "fp8 operands; A and B types differ; scale modes A=OUTER_VEC_32F B=OUTER_VEC_32F");
    CHECK_EQ_INT(c.lt_scales, GS_SCALE_OUTER_VEC_32F << GS_LT_SCALE_A |
                                  GS_SCALE_OUTER_VEC_32F << GS_LT_SCALE_B);
    CHECK_EQ_INT(c.lt_flags, 0);

    /* DeepGEMM's scaling: 1x128 activations, 128x128 weights; an FP8 D
     * from a bf16 C (C's type kept in the flags) */
    lt_case(&t, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_8F_E4M3);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 0x7100000);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, 0x7200000);
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F);
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F);
    /* a mode without its pointer scales nothing: not part of the contract */
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_C_SCALE_MODE, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F);
    lt_describe(&t, &c);
    CHECK_STR_EQ(c.lt_unroutable, "fp8 operands; C and D types differ; scale modes A=VEC128_32F "
                                  "B=BLK128x128_32F; C == D with different layouts");
    CHECK_EQ_INT(gs_lt_scale_of(c.lt_scales, GS_LT_SCALE_A), GS_SCALE_VEC128_32F);
    CHECK_EQ_INT(gs_lt_scale_of(c.lt_scales, GS_LT_SCALE_B), GS_SCALE_BLK128x128_32F);
    CHECK_EQ_INT(gs_lt_scale_of(c.lt_scales, GS_LT_SCALE_C), GS_SCALE_NONE);
    CHECK_EQ_INT(c.lt_flags, GS_LT_C_TYPE_DIFFERS | GS_DT_BF16 << GS_LT_C_TYPE_SHIFT);

    /* a scale pointer not 16-byte aligned, A's or B's, tensorwise or
     * rowwise: cuBLASLt refuses the call (status 15, H200), so no kernel of
     * ours nor any of its algorithms may take it; flagged in the class */
    for (int which = 0; which < 4; ++which) {
        lt_case(&t, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF);
        const uint64_t off = which % 2 ? 8 : 4;
        lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 0x7100000 + (which < 2 ? off : 0));
        lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, 0x7200000 + (which < 2 ? 0 : off));
        if (which == 3) {
            lt_set_i32(&t, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F);
            lt_set_i32(&t, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F);
        }
        lt_describe(&t, &c);
        CHECK_CONTAINS(c.lt_unroutable, which < 2 ? "A scale pointer not 16-byte aligned"
                                                  : "B scale pointer not 16-byte aligned");
        CHECK_EQ_INT(c.lt_flags, GS_LT_SCALE_UNALIGNED);
        CHECK_EQ_INT(c.lt_algos_only, 0);
    }

    /* a bias of a type no kernel reads (int32 here): the class would
     * record no bias at all, so no family may take the call */
    lt_case(&t, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 0x7100000);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, 0x7200000);
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_BIAS_POINTER, 0x7500000);
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CUDA_R_32I);
    lt_describe(&t, &c);
    CHECK_CONTAINS(c.lt_unroutable, "bias type not routed");
    CHECK_EQ_INT(c.lt_algos_only, 0);
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, CUDA_R_16BF); /* the control */
    lt_describe(&t, &c);
    CHECK(strstr(c.lt_unroutable, "bias type") == NULL);

    /* fast accumulation on 16-bit operands: cuBLASLt ignores it, and so
     * does the class (such calls keep their class and stay routable) */
    lt_case(&t, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF);
    bag_put(&t.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &on, 1);
    lt_describe(&t, &c);
    CHECK_STR_EQ(c.lt_unroutable, "");
    CHECK_EQ_INT(c.lt_flags, 0);
    /* a scale on 16-bit operands: the old single reason, now named */
    lt_set_ptr(&t, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 0x7100000);
    lt_describe(&t, &c);
    CHECK_STR_EQ(c.lt_unroutable, "scale modes A=SCALAR_32F");

    /* what stops the reading is said alone */
    lt_case(&t, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF);
    const int32_t row = CUBLASLT_ORDER_ROW;
    bag_put(&t.ld, CUBLASLT_MATRIX_LAYOUT_ORDER, &row, 4);
    lt_describe(&t, &c);
    CHECK_STR_EQ(c.lt_unroutable, "non-column-major layout");
    const gs_lt_getters_t none = {NULL, NULL};
    gs_lt_describe(&none, &t.args, &c);
    CHECK_STR_EQ(c.lt_unroutable, "cuBLASLt attribute getters missing");
}

/* Every reason at once: more than the buffer holds. The list stays within
 * it, in the same order every time, and says that more were left out. */
static void lt_reasons_bounded(void)
{
    lt_case_t t;
    lt_case(&t, CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_8F_E4M3);
    const int ptrs[] = {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                        CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
                        CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER,
                        CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; ++i)
        lt_set_ptr(&t, ptrs[i], 0x7000000 + 0x100000 * i);
    const int modes[] = {CUBLASLT_MATMUL_DESC_A_SCALE_MODE, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                         CUBLASLT_MATMUL_DESC_C_SCALE_MODE, CUBLASLT_MATMUL_DESC_D_SCALE_MODE};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i)
        lt_set_i32(&t, modes[i], CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F);
    const int8_t on = 1;
    bag_put(&t.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &on, 1);
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_GELU);
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_DEVICE_VECTOR);
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_TRANSC, CUBLAS_OP_T);
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_SCALE_TYPE, CUDA_R_16F);
    t.args.C = (const void *)(uintptr_t)0x4000000;
    gs_call_t c, again;
    lt_describe(&t, &c);
    lt_describe(&t, &again);
    const size_t len = strlen(c.lt_unroutable);
    CHECK(len < sizeof c.lt_unroutable);
    CHECK(len > sizeof c.lt_unroutable / 2); /* full, not cut short */
    CHECK_CONTAINS(c.lt_unroutable, "fp8 operands; A and B types differ; C and D types differ; "
                                    "scale modes A=BLK128x128_32F B=BLK128x128_32F; "
                                    "C scale set (BLK128x128_32F); D scale set (BLK128x128_32F); "
                                    "D out scale set; AMAX_D set");
    CHECK(len >= 5 && !strcmp(c.lt_unroutable + len - 5, "; ..."));
    CHECK_STR_EQ(c.lt_unroutable, again.lt_unroutable);
    /* the contract is whole, whatever the text had room for */
    CHECK_EQ_INT(c.lt_flags & (GS_LT_FAST_ACCUM | GS_LT_AMAX_D), GS_LT_FAST_ACCUM | GS_LT_AMAX_D);
    CHECK_EQ_INT(gs_lt_scale_of(c.lt_scales, GS_LT_SCALE_D), GS_SCALE_BLK128x128_32F);
}

/* alpha == 0 on a 16-bit cublasLtMatmul (host scalars): forwarded, since
 * cuBLASLt computes 0 x the sum (a NaN operand reaches D) where our 16-bit
 * kernels read nothing; alpha != 0 and device scalars unchanged. */
static void lt_alpha_zero(void)
{
    static const float zero = 0.0f, half = 0.5f;
    lt_case_t t;
    gs_call_t c;
    lt_case(&t, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF);
    t.args.alpha = &zero;
    lt_describe(&t, &c);
    CHECK_STR_EQ(c.lt_unroutable, "alpha 0: cuBLASLt computes 0 x the sum");
    t.args.alpha = &half;
    lt_describe(&t, &c);
    CHECK_STR_EQ(c.lt_unroutable, "");
    t.args.alpha = &zero; /* device scalars: not read on the host */
    lt_set_i32(&t, CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_DEVICE);
    lt_describe(&t, &c);
    CHECK_STR_EQ(c.lt_unroutable, "");
    /* FP8: our kernels compute 0 x the sum too, nothing added */
    lt_case(&t, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_16BF);
    t.args.alpha = &zero;
    lt_describe(&t, &c);
    CHECK_STR_EQ(c.lt_unroutable, "fp8 operands");
}

/* The class: the contract lives in what were the upper halves of entry's
 * and is_64's words, so a class without one has the bytes it had (tune
 * caches and signature files keep their keys), and an FP8 call is a
 * class of its own. */
static void class_layout(void)
{
    gs_problem_t p;
    memset(&p, 0, sizeof p);
    p.entry = GS_EP_LT_MATMUL;
    p.is_64 = 0;
    p.a_type = p.b_type = GS_DT_BF16;
    p.c_type = GS_DT_BF16;
    p.m = 1024;
    p.n = 512;
    p.k = 768;
    p.batch = 1;
    gs_problem_classify(&p);
    unsigned char b[8];
    memcpy(b, &p.cls, sizeof b);
    /* the old layout: int32 entry, int32 is_64 (little-endian) */
    const unsigned char old[8] = {GS_EP_LT_MATMUL, 0, 0, 0, 0, 0, 0, 0};
    CHECK(!memcmp(b, old, sizeof old));
    int32_t a_type;
    memcpy(&a_type, (const char *)&p.cls + 8, sizeof a_type);
    CHECK_EQ_INT(a_type, GS_DT_BF16);
    gs_problem_t w = p;
    w.entry = GS_EP_GEMMEX;
    w.is_64 = 1;
    gs_problem_classify(&w);
    const unsigned char wide[8] = {GS_EP_GEMMEX, 0, 0, 0, 1, 0, 0, 0};
    memcpy(b, &w.cls, sizeof b);
    CHECK(!memcmp(b, wide, sizeof wide));

    gs_problem_t f = p;
    f.a_type = f.b_type = GS_DT_E4M3;
    gs_problem_classify(&f);
    CHECK(memcmp(&f.cls, &p.cls, sizeof p.cls) != 0); /* FP8: its own class */
    gs_problem_t s = f;
    s.lt_scales = GS_SCALE_SCALAR_32F << GS_LT_SCALE_A | GS_SCALE_SCALAR_32F << GS_LT_SCALE_B;
    s.lt_flags = GS_LT_FAST_ACCUM;
    gs_problem_classify(&s);
    CHECK_EQ_INT(s.cls.lt_scales, 0x11);
    CHECK_EQ_INT(s.cls.lt_flags, GS_LT_FAST_ACCUM);
    CHECK_EQ_INT(s.cls.entry, GS_EP_LT_MATMUL);
    CHECK_EQ_INT(s.cls.is_64, 0);
    memcpy(b, &s.cls, sizeof b);
    const unsigned char contract[8] = {GS_EP_LT_MATMUL, 0, 0x11, 0, 0, 0, GS_LT_FAST_ACCUM, 0};
    CHECK(!memcmp(b, contract, sizeof contract));
    CHECK(gs_class_hash(&s.cls, 0) != gs_class_hash(&f.cls, 0));
    gs_problem_t exact = s; /* fast accumulation off: another contract */
    exact.lt_flags = 0;
    gs_problem_classify(&exact);
    CHECK(memcmp(&exact.cls, &s.cls, sizeof s.cls) != 0);
    CHECK(gs_class_lt_scaled(&s.cls) && gs_class_lt_scaled(&exact.cls));
    CHECK(!gs_class_lt_scaled(&f.cls) && !gs_class_lt_scaled(&p.cls));
}

int main(void)
{
    math_mode_for_typed_routines();
    legacy_cuda_r_32f();
    compute_types();
    dtypes();
    scale_modes();
    scalar_types();
    handle_state();
    lt_fp8_reasons();
    lt_c_is_d();
    lt_reasons_bounded();
    lt_alpha_zero();
    class_layout();
    return GS_TEST_DONE();
}
