#include "gs_compat.h"
#include "gs_real.h"

cublasStatus_t gs_handle_state(cublasHandle_t h, gs_handle_state_t *out)
{
    const gs_real_table_t *r = gs_real(GS_LIB_CUBLAS);
    if (!h || !r->cublasGetStream_v2 || !r->cublasGetPointerMode_v2 || !r->cublasGetMathMode)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    cudaStream_t s = 0;
    cublasPointerMode_t pm = CUBLAS_POINTER_MODE_HOST;
    cublasMath_t mm = CUBLAS_DEFAULT_MATH;
    cublasStatus_t st = r->cublasGetStream_v2(h, &s);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = r->cublasGetPointerMode_v2(h, &pm);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = r->cublasGetMathMode(h, &mm);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    out->stream = (void *)s;
    out->scalars_on_device = pm == CUBLAS_POINTER_MODE_DEVICE;
    out->math_mode = (int)mm;
    return CUBLAS_STATUS_SUCCESS;
}
