/* cuBLAS ABI knowledge: enum values across versions (legacy cudaDataType
 * compute types, math-mode flags) and handle-state queries. */
#ifndef GS_COMPAT_H
#define GS_COMPAT_H

#include "gs_cublas.h"
#include "gs_problem.h"

/* cudaDataType -> the shim's element type. */
gs_dtype_t gs_dtype_from_cuda(int cuda_data_type);

/* cublasLtMatmulMatrixScale_t -> the class's scale mode (GS_SCALE_OTHER for
 * a mode this cuBLAS's headers did not have), and its name as cuBLASLt
 * spells it without the prefix ("SCALAR_32F"). */
gs_scale_mode_t gs_scale_mode_from_lt(int mode);
const char *gs_scale_mode_name(gs_scale_mode_t m);

/* The class's scale mode back as cuBLASLt's cublasLtMatmulMatrixScale_t;
 * -1 for GS_SCALE_NONE (no scale: no pointer, no mode) and GS_SCALE_OTHER. */
int gs_scale_mode_to_lt(gs_scale_mode_t m);

/* Folds a cuBLAS compute type and the handle's math mode into the
 * accumulation semantics. compute_type is a cublasComputeType_t, a legacy
 * cudaDataType value (cuBLAS < 11 spelling, still accepted by the ABI), or
 * GS_COMPUTE_FROM_MATH_MODE for the typed routines (cublasSgemm). */
#define GS_COMPUTE_FROM_MATH_MODE (-1)
gs_compute_t gs_compute_fold(int compute_type, int math_mode, gs_dtype_t a_type);

/* Type alpha and beta point to for a compute type (float for every 32F
 * spelling). */
gs_dtype_t gs_scalar_type(int compute_type, gs_dtype_t a_type);

typedef struct gs_handle_state {
    void *stream;
    int scalars_on_device;
    int math_mode;
    int sm_count_target; /* cublasSetSmCountTarget's value; 0: every SM */
} gs_handle_state_t;

/* The real cuBLAS's handle getters. The shim finds the real library
 * (shim/base/gs_real.h) and passes them in; NULL where it has none. */
typedef struct gs_handle_getters {
    cublasStatus_t (*get_stream)(cublasHandle_t, cudaStream_t *);
    cublasStatus_t (*get_pointer_mode)(cublasHandle_t, cublasPointerMode_t *);
    cublasStatus_t (*get_math_mode)(cublasHandle_t, cublasMath_t *);
    cublasStatus_t (*get_sm_count_target)(cublasHandle_t, int *); /* optional */
} gs_handle_getters_t;

/* Stream, pointer mode, math mode and SM count target of a cuBLAS handle
 * (the target 0 where the library cannot tell), asked of the real
 * library through g. Not CUBLAS_STATUS_SUCCESS: the handle is unusable (let
 * cuBLAS report it), or a getter is missing (NOT_INITIALIZED). */
cublasStatus_t gs_handle_state(const gs_handle_getters_t *g, cublasHandle_t h,
                               gs_handle_state_t *out);

#endif
