/* Argument checks, as the cuBLAS documentation states them for the gemm
 * family (and as reference BLAS's xerbla checks them), made before any
 * routing. A call that fails them is never run on our kernels. */
#include "gs_call.h"

static int valid_op(int op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static int64_t at_least_one(int64_t v)
{
    return v > 1 ? v : 1;
}

cublasStatus_t gs_check_call(const gs_call_t *c)
{
    if (!c->handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!valid_op(c->transa) || !valid_op(c->transb))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (c->m < 0 || c->n < 0 || c->k < 0 || c->batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    int64_t rows_a = c->transa == CUBLAS_OP_N ? c->m : c->k;
    int64_t rows_b = c->transb == CUBLAS_OP_N ? c->k : c->n;
    if (c->lda < at_least_one(rows_a) || c->ldb < at_least_one(rows_b) ||
        c->ldc < at_least_one(c->m))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!c->alpha || !c->beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}
