/* The exported cuBLAS entry points: typed wrappers, one per line of
 * GS_ENTRY_POINTS. Each describes its call as a gs_call_t and hands it to
 * gs_serve; what the shim does not serve goes to the real function with the
 * caller's arguments untouched. */
#include "gs_compat.h"
#include "gs_lt.h"
#include "gs_serve.h"

#define GS_EXPORT __attribute__((visibility("default")))

/* Designated-initializer prefix shared by every wrapper. */
#define GS_CALL_COMMON(ep, wide)                                             \
    .entry = (ep), .is_64 = (wide), .handle = handle, .transa = (int)transa, \
    .transb = (int)transb, .m = m, .n = n, .k = k, .alpha = alpha, .beta = beta

#define GS_SGEMM_TYPES                                                       \
    .atype = CUDA_R_32F, .btype = CUDA_R_32F, .ctype = CUDA_R_32F,           \
    .compute_type = GS_COMPUTE_FROM_MATH_MODE, .algo = CUBLAS_GEMM_DEFAULT

#define GS_EX_TYPES                                                          \
    .atype = (int)Atype, .btype = (int)Btype, .ctype = (int)Ctype,           \
    .compute_type = (int)computeType, .algo = (int)algo

GS_EXPORT cublasStatus_t cublasSgemm_v2(GS_GEMM_PARAMS_COMMON(int), const float *alpha,
                                        const float *A, int lda, const float *B, int ldb,
                                        const float *beta, float *C, int ldc)
{
    gs_call_t c = {GS_CALL_COMMON(GS_EP_SGEMM, 0), GS_SGEMM_TYPES, .A = A, .B = B, .C = C,
                   .lda = lda, .ldb = ldb, .ldc = ldc, .batch = 1};
    GS_SERVE_OR_FORWARD(c, GS_LIB_CUBLAS, cublasSgemm_v2,
                        (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
}

GS_EXPORT cublasStatus_t cublasSgemm_v2_64(GS_GEMM_PARAMS_COMMON(int64_t), const float *alpha,
                                           const float *A, int64_t lda, const float *B,
                                           int64_t ldb, const float *beta, float *C,
                                           int64_t ldc)
{
    gs_call_t c = {GS_CALL_COMMON(GS_EP_SGEMM, 1), GS_SGEMM_TYPES, .A = A, .B = B, .C = C,
                   .lda = lda, .ldb = ldb, .ldc = ldc, .batch = 1};
    GS_SERVE_OR_FORWARD(c, GS_LIB_CUBLAS, cublasSgemm_v2_64,
                        (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
}

GS_EXPORT cublasStatus_t cublasSgemmStridedBatched(
    GS_GEMM_PARAMS_COMMON(int), const float *alpha, const float *A, int lda,
    long long int strideA, const float *B, int ldb, long long int strideB, const float *beta,
    float *C, int ldc, long long int strideC, int batchCount)
{
    gs_call_t c = {GS_CALL_COMMON(GS_EP_SGEMM_STRIDED, 0), GS_SGEMM_TYPES, .A = A, .B = B,
                   .C = C, .lda = lda, .ldb = ldb, .ldc = ldc, .batch = batchCount,
                   .stride_a = strideA, .stride_b = strideB, .stride_c = strideC};
    GS_SERVE_OR_FORWARD(c, GS_LIB_CUBLAS, cublasSgemmStridedBatched,
                        (handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
                         strideB, beta, C, ldc, strideC, batchCount));
}

GS_EXPORT cublasStatus_t cublasSgemmStridedBatched_64(
    GS_GEMM_PARAMS_COMMON(int64_t), const float *alpha, const float *A, int64_t lda,
    long long int strideA, const float *B, int64_t ldb, long long int strideB,
    const float *beta, float *C, int64_t ldc, long long int strideC, int64_t batchCount)
{
    gs_call_t c = {GS_CALL_COMMON(GS_EP_SGEMM_STRIDED, 1), GS_SGEMM_TYPES, .A = A, .B = B,
                   .C = C, .lda = lda, .ldb = ldb, .ldc = ldc, .batch = batchCount,
                   .stride_a = strideA, .stride_b = strideB, .stride_c = strideC};
    GS_SERVE_OR_FORWARD(c, GS_LIB_CUBLAS, cublasSgemmStridedBatched_64,
                        (handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
                         strideB, beta, C, ldc, strideC, batchCount));
}

GS_EXPORT cublasStatus_t cublasGemmEx(GS_GEMM_PARAMS_COMMON(int), const void *alpha,
                                      const void *A, cudaDataType Atype, int lda, const void *B,
                                      cudaDataType Btype, int ldb, const void *beta, void *C,
                                      cudaDataType Ctype, int ldc,
                                      cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    gs_call_t c = {GS_CALL_COMMON(GS_EP_GEMMEX, 0), GS_EX_TYPES, .A = A, .B = B, .C = C,
                   .lda = lda, .ldb = ldb, .ldc = ldc, .batch = 1};
    GS_SERVE_OR_FORWARD(c, GS_LIB_CUBLAS, cublasGemmEx,
                        (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,
                         beta, C, Ctype, ldc, computeType, algo));
}

GS_EXPORT cublasStatus_t cublasGemmEx_64(GS_GEMM_PARAMS_COMMON(int64_t), const void *alpha,
                                         const void *A, cudaDataType Atype, int64_t lda,
                                         const void *B, cudaDataType Btype, int64_t ldb,
                                         const void *beta, void *C, cudaDataType Ctype,
                                         int64_t ldc, cublasComputeType_t computeType,
                                         cublasGemmAlgo_t algo)
{
    gs_call_t c = {GS_CALL_COMMON(GS_EP_GEMMEX, 1), GS_EX_TYPES, .A = A, .B = B, .C = C,
                   .lda = lda, .ldb = ldb, .ldc = ldc, .batch = 1};
    GS_SERVE_OR_FORWARD(c, GS_LIB_CUBLAS, cublasGemmEx_64,
                        (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,
                         beta, C, Ctype, ldc, computeType, algo));
}

GS_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    GS_GEMM_PARAMS_COMMON(int), const void *alpha, const void *A, cudaDataType Atype, int lda,
    long long int strideA, const void *B, cudaDataType Btype, int ldb, long long int strideB,
    const void *beta, void *C, cudaDataType Ctype, int ldc, long long int strideC,
    int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    gs_call_t c = {GS_CALL_COMMON(GS_EP_GEMMEX_STRIDED, 0), GS_EX_TYPES, .A = A, .B = B,
                   .C = C, .lda = lda, .ldb = ldb, .ldc = ldc, .batch = batchCount,
                   .stride_a = strideA, .stride_b = strideB, .stride_c = strideC};
    GS_SERVE_OR_FORWARD(c, GS_LIB_CUBLAS, cublasGemmStridedBatchedEx,
                        (handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,
                         Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount,
                         computeType, algo));
}

GS_EXPORT cublasStatus_t cublasGemmStridedBatchedEx_64(
    GS_GEMM_PARAMS_COMMON(int64_t), const void *alpha, const void *A, cudaDataType Atype,
    int64_t lda, long long int strideA, const void *B, cudaDataType Btype, int64_t ldb,
    long long int strideB, const void *beta, void *C, cudaDataType Ctype, int64_t ldc,
    long long int strideC, int64_t batchCount, cublasComputeType_t computeType,
    cublasGemmAlgo_t algo)
{
    gs_call_t c = {GS_CALL_COMMON(GS_EP_GEMMEX_STRIDED, 1), GS_EX_TYPES, .A = A, .B = B,
                   .C = C, .lda = lda, .ldb = ldb, .ldc = ldc, .batch = batchCount,
                   .stride_a = strideA, .stride_b = strideB, .stride_c = strideC};
    GS_SERVE_OR_FORWARD(c, GS_LIB_CUBLAS, cublasGemmStridedBatchedEx_64,
                        (handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,
                         Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount,
                         computeType, algo));
}

/* Pointer-array batches: described (for checks and logs), always forwarded. */
GS_EXPORT cublasStatus_t cublasGemmBatchedEx(
    GS_GEMM_PARAMS_COMMON(int), const void *alpha, const void *const Aarray[],
    cudaDataType Atype, int lda, const void *const Barray[], cudaDataType Btype, int ldb,
    const void *beta, void *const Carray[], cudaDataType Ctype, int ldc, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    gs_call_t c = {GS_CALL_COMMON(GS_EP_GEMMEX_BATCHED, 0), GS_EX_TYPES, .A = Aarray,
                   .B = Barray, .C = (void *)Carray, .lda = lda, .ldb = ldb, .ldc = ldc,
                   .batch = batchCount};
    GS_SERVE_OR_FORWARD(c, GS_LIB_CUBLAS, cublasGemmBatchedEx,
                        (handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray,
                         Btype, ldb, beta, Carray, Ctype, ldc, batchCount, computeType, algo));
}

GS_EXPORT cublasStatus_t cublasGemmBatchedEx_64(
    GS_GEMM_PARAMS_COMMON(int64_t), const void *alpha, const void *const Aarray[],
    cudaDataType Atype, int64_t lda, const void *const Barray[], cudaDataType Btype,
    int64_t ldb, const void *beta, void *const Carray[], cudaDataType Ctype, int64_t ldc,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    gs_call_t c = {GS_CALL_COMMON(GS_EP_GEMMEX_BATCHED, 1), GS_EX_TYPES, .A = Aarray,
                   .B = Barray, .C = (void *)Carray, .lda = lda, .ldb = ldb, .ldc = ldc,
                   .batch = batchCount};
    GS_SERVE_OR_FORWARD(c, GS_LIB_CUBLAS, cublasGemmBatchedEx_64,
                        (handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray,
                         Btype, ldb, beta, Carray, Ctype, ldc, batchCount, computeType, algo));
}

/* cuBLASLt: routed like cublasGemmStridedBatchedEx where its descriptors
 * ask for what our kernels compute (default or BIAS epilogue, column-major,
 * D computed in place); anything else is forwarded untouched. The handle is
 * never looked into, so a cast cuBLAS handle works as it does in cuBLASLt. */
GS_EXPORT cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
    const void *A, cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
    const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
    size_t workspaceSizeInBytes, cudaStream_t stream)
{
    gs_lt_args_t lt = {lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc,
                       D, Ddesc, algo, workspace, workspaceSizeInBytes, stream};
    gs_served_t served = gs_serve_lt(&lt);
    if (served.done)
        return served.status;
    cublasStatus_t status =
        GS_FORWARD(GS_LIB_CUBLASLT, cublasLtMatmul,
                   (lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D,
                    Ddesc, algo, workspace, workspaceSizeInBytes, stream));
    gs_forwarded(&served);
    return status;
}
