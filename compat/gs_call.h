/* One intercepted GEMM call as cuBLAS received it (cuBLAS enums, 64-bit
 * sizes), before it becomes a gs_problem_t. Every typed wrapper fills one. */
#ifndef GS_CALL_H
#define GS_CALL_H

#include "gs_cublas.h"
#include "gs_problem.h"

/* Room for a cublasLtMatmul's reasons, "; " between them: an FP8 call with
 * every scale, AMAX_D and fast accumulation takes about 110 characters. */
#define GS_LT_WHY_MAX 256

typedef struct gs_call {
    gs_entry_t entry;
    int is_64;
    cublasHandle_t handle;
    int transa, transb;        /* cublasOperation_t */
    int64_t m, n, k;
    const void *alpha, *beta;
    const void *A, *B;         /* for GemmBatchedEx: the pointer arrays */
    void *C;
    int64_t lda, ldb, ldc;
    int atype, btype, ctype;   /* cudaDataType */
    int compute_type;          /* cublasComputeType_t, legacy, or GS_COMPUTE_FROM_MATH_MODE */
    int algo;                  /* cublasGemmAlgo_t */
    int64_t batch;
    int64_t stride_a, stride_b, stride_c;

    /* cublasLtMatmul only (entry GS_EP_LT_MATMUL; NULL lt otherwise): the
     * original arguments (forwarding, verify's reference), the state a cuBLAS
     * handle would give (Lt takes stream and pointer mode per call), the BIAS
     * epilogue's vector, the A and B scale pointers, the scaling contract
     * (gs_class_t's lt_scales and lt_flags), and every reason the call
     * cannot be routed ("" if it can; gs_lt.h). */
    const struct gs_lt_args *lt;
    void *lt_stream;
    int lt_scalars_on_device;
    const void *bias;
    int bias_type;             /* cudaDataType */
    const void *scale_a, *scale_b; /* device pointers, as set (NULL: none) */
    unsigned lt_scales, lt_flags;
    char lt_unroutable[GS_LT_WHY_MAX];
    /* The FP8 subset cuBLASLt's own algorithms take, under tuning only
     * (gs_lt.h): 1 when every reason above is one of that subset's (FP8
     * operands, their types, tensorwise or rowwise A/B scales, fast
     * accumulation), so the family can make the very same call. An FP8
     * call outside it that no listed reason excludes names what does in
     * lt_algos_why (static text; NULL otherwise). */
    int lt_algos_only;
    const char *lt_algos_why;
} gs_call_t;

/* The status cuBLAS documents for these arguments: CUBLAS_STATUS_SUCCESS
 * when they are valid, else NOT_INITIALIZED (no handle) or INVALID_VALUE
 * (negative sizes or batch count, unknown transpose, leading dimension too
 * small, NULL alpha or beta). Types and algorithms are not judged here:
 * calls the shim cannot run go to cuBLAS, which answers for them. */
cublasStatus_t gs_check_call(const gs_call_t *c);

#endif
