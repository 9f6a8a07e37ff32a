/* The application's call, made again on the real cuBLAS with another C;
 * see gs_as_called.h. */
#include "gs_as_called.h"
#include "gs_lt.h"
#include "gs_real.h"

cublasStatus_t gs_cublas_as_called(const gs_call_t *c, void *C)
{
    const gs_real_table_t *r = gs_real(c->lt ? GS_LIB_CUBLASLT : GS_LIB_CUBLAS);
    const cublasOperation_t ta = (cublasOperation_t)c->transa, tb = (cublasOperation_t)c->transb;
    const cudaDataType at = (cudaDataType)c->atype, bt = (cudaDataType)c->btype,
                       ct = (cudaDataType)c->ctype;
    const cublasComputeType_t comp = (cublasComputeType_t)c->compute_type;
    const cublasGemmAlgo_t algo = (cublasGemmAlgo_t)c->algo;
    switch (c->entry) {
    case GS_EP_SGEMM:
        if (c->is_64)
            return r->cublasSgemm_v2_64 ? r->cublasSgemm_v2_64(c->handle, ta, tb, c->m, c->n, c->k,
                                                               c->alpha, c->A, c->lda, c->B, c->ldb,
                                                               c->beta, C, c->ldc)
                                        : CUBLAS_STATUS_NOT_SUPPORTED;
        return r->cublasSgemm_v2 ? r->cublasSgemm_v2(c->handle, ta, tb, (int)c->m, (int)c->n,
                                                     (int)c->k, c->alpha, c->A, (int)c->lda, c->B,
                                                     (int)c->ldb, c->beta, C, (int)c->ldc)
                                 : CUBLAS_STATUS_NOT_SUPPORTED;
    case GS_EP_SGEMM_STRIDED:
        if (c->is_64)
            return r->cublasSgemmStridedBatched_64
                       ? r->cublasSgemmStridedBatched_64(c->handle, ta, tb, c->m, c->n, c->k,
                                                         c->alpha, c->A, c->lda, c->stride_a, c->B,
                                                         c->ldb, c->stride_b, c->beta, C, c->ldc,
                                                         c->stride_c, c->batch)
                       : CUBLAS_STATUS_NOT_SUPPORTED;
        return r->cublasSgemmStridedBatched
                   ? r->cublasSgemmStridedBatched(c->handle, ta, tb, (int)c->m, (int)c->n,
                                                  (int)c->k, c->alpha, c->A, (int)c->lda,
                                                  c->stride_a, c->B, (int)c->ldb, c->stride_b,
                                                  c->beta, C, (int)c->ldc, c->stride_c,
                                                  (int)c->batch)
                   : CUBLAS_STATUS_NOT_SUPPORTED;
    case GS_EP_GEMMEX:
        if (c->is_64)
            return r->cublasGemmEx_64
                       ? r->cublasGemmEx_64(c->handle, ta, tb, c->m, c->n, c->k, c->alpha, c->A,
                                            at, c->lda, c->B, bt, c->ldb, c->beta, C, ct, c->ldc,
                                            comp, algo)
                       : CUBLAS_STATUS_NOT_SUPPORTED;
        return r->cublasGemmEx ? r->cublasGemmEx(c->handle, ta, tb, (int)c->m, (int)c->n,
                                                 (int)c->k, c->alpha, c->A, at, (int)c->lda, c->B,
                                                 bt, (int)c->ldb, c->beta, C, ct, (int)c->ldc,
                                                 comp, algo)
                               : CUBLAS_STATUS_NOT_SUPPORTED;
    case GS_EP_GEMMEX_STRIDED:
        if (c->is_64)
            return r->cublasGemmStridedBatchedEx_64
                       ? r->cublasGemmStridedBatchedEx_64(
                             c->handle, ta, tb, c->m, c->n, c->k, c->alpha, c->A, at, c->lda,
                             c->stride_a, c->B, bt, c->ldb, c->stride_b, c->beta, C, ct, c->ldc,
                             c->stride_c, c->batch, comp, algo)
                       : CUBLAS_STATUS_NOT_SUPPORTED;
        return r->cublasGemmStridedBatchedEx
                   ? r->cublasGemmStridedBatchedEx(
                         c->handle, ta, tb, (int)c->m, (int)c->n, (int)c->k, c->alpha, c->A, at,
                         (int)c->lda, c->stride_a, c->B, bt, (int)c->ldb, c->stride_b, c->beta, C,
                         ct, (int)c->ldc, c->stride_c, (int)c->batch, comp, algo)
                   : CUBLAS_STATUS_NOT_SUPPORTED;
    case GS_EP_LT_MATMUL:
        if (!c->lt || !r->cublasLtMatmul)
            return CUBLAS_STATUS_NOT_SUPPORTED;
        return r->cublasLtMatmul(c->lt->handle, c->lt->desc, c->alpha, c->A, c->lt->Adesc, c->B,
                                 c->lt->Bdesc, c->beta, c->lt->C == c->lt->D ? C : c->lt->C,
                                 c->lt->Cdesc, C, c->lt->Ddesc, c->lt->algo, c->lt->workspace,
                                 c->lt->workspace_size, c->lt->stream);
    default:
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}
