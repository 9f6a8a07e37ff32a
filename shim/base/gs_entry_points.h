/* The one list of intercepted cuBLAS entry points.
 *
 * XX(lib, name, params, args): lib is the library that defines it (CUBLAS or
 * CUBLASLT), params its prototype's parameter list, args the same names as a
 * call's argument list. Every entry returns cublasStatus_t. Expanded into:
 *   - the real-function table and the names looked up in the real library
 *     (shim/base/gs_real.h, shim/base/gs_real.c),
 *   - the linker's export list (shim/face/exports.map.in),
 *   - the forwarding tests (tests/fake).
 * Adding an entry point: one line here plus its typed wrapper in
 * shim/face/gs_exports.c.
 *
 * This header includes nothing: the includer brings the cuBLAS types (the
 * export map is generated from it by the bare C preprocessor). */
#ifndef GS_ENTRY_POINTS_H
#define GS_ENTRY_POINTS_H

#define GS_GEMM_PARAMS_COMMON(I) cublasHandle_t handle, cublasOperation_t transa, \
    cublasOperation_t transb, I m, I n, I k

#define GS_ENTRY_POINTS(XX) \
  XX(CUBLAS, cublasSgemm_v2, \
     (GS_GEMM_PARAMS_COMMON(int), const float *alpha, const float *A, int lda, \
      const float *B, int ldb, const float *beta, float *C, int ldc), \
     (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)) \
  XX(CUBLAS, cublasSgemm_v2_64, \
     (GS_GEMM_PARAMS_COMMON(int64_t), const float *alpha, const float *A, int64_t lda, \
      const float *B, int64_t ldb, const float *beta, float *C, int64_t ldc), \
     (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)) \
  XX(CUBLAS, cublasSgemmStridedBatched, \
     (GS_GEMM_PARAMS_COMMON(int), const float *alpha, const float *A, int lda, \
      long long int strideA, const float *B, int ldb, long long int strideB, \
      const float *beta, float *C, int ldc, long long int strideC, int batchCount), \
     (handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, \
      beta, C, ldc, strideC, batchCount)) \
  XX(CUBLAS, cublasSgemmStridedBatched_64, \
     (GS_GEMM_PARAMS_COMMON(int64_t), const float *alpha, const float *A, int64_t lda, \
      long long int strideA, const float *B, int64_t ldb, long long int strideB, \
      const float *beta, float *C, int64_t ldc, long long int strideC, int64_t batchCount), \
     (handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, \
      beta, C, ldc, strideC, batchCount)) \
  XX(CUBLAS, cublasGemmEx, \
     (GS_GEMM_PARAMS_COMMON(int), const void *alpha, const void *A, cudaDataType Atype, \
      int lda, const void *B, cudaDataType Btype, int ldb, const void *beta, void *C, \
      cudaDataType Ctype, int ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo), \
     (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, \
      Ctype, ldc, computeType, algo)) \
  XX(CUBLAS, cublasGemmEx_64, \
     (GS_GEMM_PARAMS_COMMON(int64_t), const void *alpha, const void *A, cudaDataType Atype, \
      int64_t lda, const void *B, cudaDataType Btype, int64_t ldb, const void *beta, void *C, \
      cudaDataType Ctype, int64_t ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo), \
     (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, \
      Ctype, ldc, computeType, algo)) \
  XX(CUBLAS, cublasGemmStridedBatchedEx, \
     (GS_GEMM_PARAMS_COMMON(int), const void *alpha, const void *A, cudaDataType Atype, \
      int lda, long long int strideA, const void *B, cudaDataType Btype, int ldb, \
      long long int strideB, const void *beta, void *C, cudaDataType Ctype, int ldc, \
      long long int strideC, int batchCount, cublasComputeType_t computeType, \
      cublasGemmAlgo_t algo), \
     (handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, \
      strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo)) \
  XX(CUBLAS, cublasGemmStridedBatchedEx_64, \
     (GS_GEMM_PARAMS_COMMON(int64_t), const void *alpha, const void *A, cudaDataType Atype, \
      int64_t lda, long long int strideA, const void *B, cudaDataType Btype, int64_t ldb, \
      long long int strideB, const void *beta, void *C, cudaDataType Ctype, int64_t ldc, \
      long long int strideC, int64_t batchCount, cublasComputeType_t computeType, \
      cublasGemmAlgo_t algo), \
     (handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, \
      strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo)) \
  XX(CUBLAS, cublasGemmBatchedEx, \
     (GS_GEMM_PARAMS_COMMON(int), const void *alpha, const void *const Aarray[], \
      cudaDataType Atype, int lda, const void *const Barray[], cudaDataType Btype, int ldb, \
      const void *beta, void *const Carray[], cudaDataType Ctype, int ldc, int batchCount, \
      cublasComputeType_t computeType, cublasGemmAlgo_t algo), \
     (handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, \
      beta, Carray, Ctype, ldc, batchCount, computeType, algo)) \
  XX(CUBLAS, cublasGemmBatchedEx_64, \
     (GS_GEMM_PARAMS_COMMON(int64_t), const void *alpha, const void *const Aarray[], \
      cudaDataType Atype, int64_t lda, const void *const Barray[], cudaDataType Btype, \
      int64_t ldb, const void *beta, void *const Carray[], cudaDataType Ctype, int64_t ldc, \
      int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo), \
     (handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, \
      beta, Carray, Ctype, ldc, batchCount, computeType, algo)) \
  XX(CUBLASLT, cublasLtMatmul, \
     (cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void *alpha, \
      const void *A, cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc, \
      const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D, \
      cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace, \
      size_t workspaceSizeInBytes, cudaStream_t stream), \
     (lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, \
      workspace, workspaceSizeInBytes, stream))

/* Functions of the real libraries the shim calls itself (handle-state
 * queries); looked up like the entry points, never exported. */
#define GS_HELPER_FUNCS(XX) \
  XX(CUBLAS, cublasGetStream_v2, (cublasHandle_t handle, cudaStream_t *streamId), \
     (handle, streamId)) \
  XX(CUBLAS, cublasGetPointerMode_v2, (cublasHandle_t handle, cublasPointerMode_t *mode), \
     (handle, mode)) \
  XX(CUBLAS, cublasGetMathMode, (cublasHandle_t handle, cublasMath_t *mode), (handle, mode)) \
  XX(CUBLAS, cublasGetVersion_v2, (cublasHandle_t handle, int *version), (handle, version)) \
  XX(CUBLASLT, cublasLtMatmulDescGetAttribute, \
     (cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr, void *buf, \
      size_t sizeInBytes, size_t *sizeWritten), \
     (matmulDesc, attr, buf, sizeInBytes, sizeWritten)) \
  XX(CUBLASLT, cublasLtMatrixLayoutGetAttribute, \
     (cublasLtMatrixLayout_t matLayout, cublasLtMatrixLayoutAttribute_t attr, void *buf, \
      size_t sizeInBytes, size_t *sizeWritten), \
     (matLayout, attr, buf, sizeInBytes, sizeWritten))

#endif /* GS_ENTRY_POINTS_H */
