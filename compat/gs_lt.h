/* cublasLtMatmul as a GEMM call: its descriptors read through the real
 * cuBLASLt's getters and checked for what the shim's kernels compute. */
#ifndef GS_LT_H
#define GS_LT_H

#include "gs_call.h"

/* The arguments of one cublasLtMatmul call, as received. */
typedef struct gs_lt_args {
    cublasLtHandle_t handle;
    cublasLtMatmulDesc_t desc;
    const void *alpha;
    const void *A;
    cublasLtMatrixLayout_t Adesc;
    const void *B;
    cublasLtMatrixLayout_t Bdesc;
    const void *beta;
    const void *C;
    cublasLtMatrixLayout_t Cdesc;
    void *D;
    cublasLtMatrixLayout_t Ddesc;
    const cublasLtMatmulAlgo_t *algo;
    void *workspace;
    size_t workspace_size;
    cudaStream_t stream;
} gs_lt_args_t;

/* The real cuBLASLt's attribute getters. The shim finds the real library
 * (shim/base/gs_real.h) and passes them in; NULL where it has none. */
typedef struct gs_lt_getters {
    cublasStatus_t (*desc_get)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void *,
                               size_t, size_t *);
    cublasStatus_t (*layout_get)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t,
                                 void *, size_t, size_t *);
} gs_lt_getters_t;

/* Fill c from a, reading its descriptors through g: D = alpha op(A) op(B)
 * + beta C (+ bias) as a GEMM on D in place (c->C = D), with the scaling
 * contract an FP8 call depends on (scale modes, AMAX_D, fast accumulation,
 * C's type where it is not D's) in c->lt_scales and c->lt_flags, and A's
 * and B's scale pointers in c->scale_a and c->scale_b. Whatever the shim's
 * kernels do not compute exactly the way cuBLASLt would (FP8 operands,
 * scales, other epilogues, row-major orders, C != D with beta != 0, batched
 * bias; unreadable attributes and inconsistent sizes: cuBLASLt judges
 * those) leaves its reason in c->lt_unroutable, every one that applies in
 * a fixed order, "; " between them, bounded (GS_LT_WHY_MAX), and the call
 * is forwarded untouched. Descriptors that cannot be read, or do not
 * describe one product, give that reason alone.
 *
 * c->lt_algos_only marks the FP8 subset that cuBLASLt's own algorithms
 * may take under tuning (shim/tune/gs_lt_algos.c makes the same call with
 * another algorithm): A and B e4m3 or e5m2 (not both e5m2), compute and
 * scale type 32F, A and B scales none, SCALAR_32F or OUTER_VEC_32F, fast
 * accumulation on or off, D bf16, fp16 or fp32 and C the same matrix, the
 * default or BIAS epilogue; no C or D scale, no D out scale, no AMAX_D, no
 * emulation. Its reasons are listed as for any other FP8 call. */
void gs_lt_describe(const gs_lt_getters_t *g, const gs_lt_args_t *a, gs_call_t *c);

#endif
