/* A cuBLAS handle's state through the real library's getters (gs_compat.h). */
#include "gs_compat.h"

cublasStatus_t gs_handle_state(const gs_handle_getters_t *g, cublasHandle_t h,
                               gs_handle_state_t *out)
{
    if (!h || !g->get_stream || !g->get_pointer_mode || !g->get_math_mode)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    cudaStream_t s = 0;
    cublasPointerMode_t pm = CUBLAS_POINTER_MODE_HOST;
    cublasMath_t mm = CUBLAS_DEFAULT_MATH;
    cublasStatus_t st = g->get_stream(h, &s);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = g->get_pointer_mode(h, &pm);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = g->get_math_mode(h, &mm);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    out->stream = (void *)s;
    out->scalars_on_device = pm == CUBLAS_POINTER_MODE_DEVICE;
    out->math_mode = (int)mm;
    int target = 0;
    out->sm_count_target =
        g->get_sm_count_target && g->get_sm_count_target(h, &target) == CUBLAS_STATUS_SUCCESS &&
                target > 0
            ? target
            : 0;
    return CUBLAS_STATUS_SUCCESS;
}
