/* Issuing a rebuilt call; see gs_replay_call.h. */
#include "gs_replay_call.h"

#include <stdio.h>
#include <string.h>

int gs_replay_gpu_open(gs_replay_gpu_t *g, int simulated, size_t workspace_bytes, char *why,
                       size_t why_size)
{
    memset(g, 0, sizeof *g);
    g->simulated = simulated;
    g->workspace_bytes = workspace_bytes;
    cublasStatus_t st = cublasCreate_v2(&g->h);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtCreate(&g->lt);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, why_size, "cannot create a cuBLAS handle (status %d)", (int)st);
        return -1;
    }
    if (simulated) {
        g->workspace = workspace_bytes ? (void *)(uintptr_t)0x7e0000000000ull : NULL;
        return 0;
    }
    cudaError_t e = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking);
    if (!e && workspace_bytes)
        e = cudaMalloc(&g->workspace, workspace_bytes);
    if (e) {
        snprintf(why, why_size, "cannot set up the GPU: %s", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

void gs_replay_gpu_close(gs_replay_gpu_t *g)
{
    if (g->lt)
        cublasLtDestroy(g->lt);
    if (g->h)
        cublasDestroy_v2(g->h);
    if (!g->simulated) {
        if (g->workspace)
            cudaFree(g->workspace);
        if (g->stream)
            cudaStreamDestroy(g->stream);
    }
    memset(g, 0, sizeof *g);
}

/* The alignment a pointer placed at `off` has (gs_replay_mem.c). */
static uint32_t align_of_offset(uint32_t off)
{
    return off == 0 || off == GS_REPLAY_NULL ? 256u : off;
}

#define TRY(step, call)                                                          \
    do {                                                                         \
        const cublasStatus_t st_ = (call);                                       \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                      \
            snprintf(why, why_size, "%s failed (status %d)", step, (int)st_);    \
            return st_;                                                          \
        }                                                                        \
    } while (0)

/* A column-major layout of rows x cols, with the call's batch. */
static cublasStatus_t layout(cublasLtMatrixLayout_t *l, cudaDataType t, int64_t rows,
                             int64_t cols, int64_t ld, int32_t batch, int64_t stride)
{
    cublasStatus_t st = cublasLtMatrixLayoutCreate(l, t, (uint64_t)rows, (uint64_t)cols, ld);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                              sizeof batch);
    /* also for one batch: the class keeps the layout's stride as set */
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                              &stride, sizeof stride);
    return st;
}

/* The heuristic's first algorithm for the call's real alignments and the
 * workspace (none found: cuBLASLt chooses at the call). */
static void pick_algo(gs_replay_gpu_t *g, gs_replay_call_t *c)
{
    const gs_replay_args_t *a = c->a;
    cublasLtMatmulPreference_t pref;
    if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS)
        return;
    const uint64_t ws = g->workspace_bytes;
    const uint32_t al[4] = {align_of_offset(a->off_a), align_of_offset(a->off_b),
                            align_of_offset(a->off_c), align_of_offset(a->off_c)};
    const cublasLtMatmulPreferenceAttributes_t which[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    for (int i = 0; i < 4 && st == CUBLAS_STATUS_SUCCESS; ++i)
        st = cublasLtMatmulPreferenceSetAttribute(pref, which[i], &al[i], sizeof al[i]);
    cublasLtMatmulHeuristicResult_t r;
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS &&
        cublasLtMatmulAlgoGetHeuristic(g->lt, c->desc, c->la, c->lb, c->lc, c->lc, pref, 1, &r,
                                       &found) == CUBLAS_STATUS_SUCCESS &&
        found > 0) {
        c->algo = r.algo;
        c->has_algo = 1;
    }
    cublasLtMatmulPreferenceDestroy(pref);
}

/* One matrix's scale of the FP8 subset: its mode (SCALAR_32F, cuBLASLt's
 * default, set too: a recorded call's mode is what its class says) and
 * pointer; nothing for a matrix without one. */
static cublasStatus_t set_scale(cublasLtMatmulDesc_t d, int32_t mode, const void *ptr,
                                cublasLtMatmulDescAttributes_t mode_attr,
                                cublasLtMatmulDescAttributes_t ptr_attr)
{
    if (mode < 0)
        return CUBLAS_STATUS_SUCCESS;
    cublasStatus_t st = cublasLtMatmulDescSetAttribute(d, mode_attr, &mode, sizeof mode);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulDescSetAttribute(d, ptr_attr, &ptr, sizeof ptr);
    return st;
}

/* The FP8 subset's contract on c's descriptor: A's and B's scales, fast
 * accumulation (set either way, as torch._scaled_mm does). */
static cublasStatus_t prepare_fp8(gs_replay_call_t *c, char *why, size_t why_size)
{
    const gs_replay_args_t *a = c->a;
    const int fp8 = a->a_type == CUDA_R_8F_E4M3 || a->a_type == CUDA_R_8F_E5M2;
    if (!fp8)
        return CUBLAS_STATUS_SUCCESS;
    TRY("A's scale", set_scale(c->desc, a->scale_mode_a, c->ops.scale_a,
                               CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                               CUBLASLT_MATMUL_DESC_A_SCALE_POINTER));
    TRY("B's scale", set_scale(c->desc, a->scale_mode_b, c->ops.scale_b,
                               CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                               CUBLASLT_MATMUL_DESC_B_SCALE_POINTER));
    TRY("fast accumulation",
        cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &a->fast_accum,
                                       sizeof a->fast_accum));
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t prepare_lt(gs_replay_gpu_t *g, gs_replay_call_t *c, char *why,
                                 size_t why_size)
{
    const gs_replay_args_t *a = c->a;
    const int32_t ta = a->transa, tb = a->transb;
    const int32_t pmode = a->scalars_on_device ? CUBLASLT_POINTER_MODE_DEVICE
                                               : CUBLASLT_POINTER_MODE_HOST;
    if (a->batch > INT32_MAX) {
        snprintf(why, why_size, "a batch beyond cuBLASLt's 32-bit count");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    const int32_t batch = (int32_t)a->batch;
    TRY("cublasLtMatmulDescCreate", cublasLtMatmulDescCreate(&c->desc, a->compute, CUDA_R_32F));
    TRY("the matmul descriptor's transposes",
        cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    TRY("the matmul descriptor's transposes",
        cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    TRY("the matmul descriptor's pointer mode",
        cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pmode,
                                       sizeof pmode));
    if (a->bias) {
        const uint32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
        const int32_t bias_type = a->bias_type;
        const void *bias = c->ops.bias;
        TRY("the BIAS epilogue",
            cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                           sizeof epilogue));
        TRY("the bias pointer",
            cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                           sizeof bias));
        TRY("the bias type",
            cublasLtMatmulDescSetAttribute(c->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                           &bias_type, sizeof bias_type));
    }
    const cublasStatus_t st = prepare_fp8(c, why, why_size);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    const int opa = a->transa == CUBLAS_OP_T, opb = a->transb == CUBLAS_OP_T;
    TRY("A's layout", layout(&c->la, a->a_type, opa ? a->k : a->m, opa ? a->m : a->k, a->lda,
                             batch, a->stride_a));
    TRY("B's layout", layout(&c->lb, a->b_type, opb ? a->n : a->k, opb ? a->k : a->n, a->ldb,
                             batch, a->stride_b));
    TRY("C's layout", layout(&c->lc, a->c_type, a->m, a->n, a->ldc, batch, a->stride_c));
    pick_algo(g, c);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t gs_replay_select(const gs_replay_gpu_t *g, const gs_replay_call_t *c, char *why,
                                size_t why_size)
{
    const gs_replay_args_t *a = c->a;
    if (a->entry == GS_EP_LT_MATMUL)
        return CUBLAS_STATUS_SUCCESS; /* its descriptors carry it all */
    TRY("cublasSetStream", cublasSetStream_v2(g->h, g->stream));
    TRY("cublasSetPointerMode",
        cublasSetPointerMode_v2(g->h, a->scalars_on_device ? CUBLAS_POINTER_MODE_DEVICE
                                                           : CUBLAS_POINTER_MODE_HOST));
    TRY("cublasSetMathMode", cublasSetMathMode(g->h, a->math_mode));
    TRY("cublasSetSmCountTarget", cublasSetSmCountTarget(g->h, a->sm_count_target));
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t gs_replay_prepare(gs_replay_gpu_t *g, gs_replay_call_t *c, char *why,
                                 size_t why_size)
{
    if (c->a->entry == GS_EP_LT_MATMUL)
        return prepare_lt(g, c, why, why_size);
    return gs_replay_select(g, c, why, why_size);
}

cublasStatus_t gs_replay_issue(const gs_replay_gpu_t *g, const gs_replay_call_t *c)
{
    const gs_replay_args_t *a = c->a;
    const gs_replay_ops_t *o = &c->ops;
    const cublasOperation_t ta = a->transa, tb = a->transb;
    const cublasGemmAlgo_t algo = CUBLAS_GEMM_DEFAULT;
    /* the unwide entry points take int: gs_replay_args_of kept their classes in range */
    const int m = (int)a->m, n = (int)a->n, k = (int)a->k, lda = (int)a->lda,
              ldb = (int)a->ldb, ldc = (int)a->ldc, batch = (int)a->batch;
    switch (a->entry) {
    case GS_EP_SGEMM:
        return a->is_64 ? cublasSgemm_v2_64(g->h, ta, tb, a->m, a->n, a->k, o->alpha, o->A,
                                            a->lda, o->B, a->ldb, o->beta, o->C, a->ldc)
                        : cublasSgemm_v2(g->h, ta, tb, m, n, k, o->alpha, o->A, lda, o->B, ldb,
                                         o->beta, o->C, ldc);
    case GS_EP_SGEMM_STRIDED:
        return a->is_64 ? cublasSgemmStridedBatched_64(
                              g->h, ta, tb, a->m, a->n, a->k, o->alpha, o->A, a->lda,
                              a->stride_a, o->B, a->ldb, a->stride_b, o->beta, o->C, a->ldc,
                              a->stride_c, a->batch)
                        : cublasSgemmStridedBatched(g->h, ta, tb, m, n, k, o->alpha, o->A, lda,
                                                    a->stride_a, o->B, ldb, a->stride_b,
                                                    o->beta, o->C, ldc, a->stride_c, batch);
    case GS_EP_GEMMEX:
        return a->is_64 ? cublasGemmEx_64(g->h, ta, tb, a->m, a->n, a->k, o->alpha, o->A,
                                          a->a_type, a->lda, o->B, a->b_type, a->ldb, o->beta,
                                          o->C, a->c_type, a->ldc, a->compute, algo)
                        : cublasGemmEx(g->h, ta, tb, m, n, k, o->alpha, o->A, a->a_type, lda,
                                       o->B, a->b_type, ldb, o->beta, o->C, a->c_type, ldc,
                                       a->compute, algo);
    case GS_EP_GEMMEX_STRIDED:
        return a->is_64 ? cublasGemmStridedBatchedEx_64(
                              g->h, ta, tb, a->m, a->n, a->k, o->alpha, o->A, a->a_type, a->lda,
                              a->stride_a, o->B, a->b_type, a->ldb, a->stride_b, o->beta, o->C,
                              a->c_type, a->ldc, a->stride_c, a->batch, a->compute, algo)
                        : cublasGemmStridedBatchedEx(
                              g->h, ta, tb, m, n, k, o->alpha, o->A, a->a_type, lda,
                              a->stride_a, o->B, a->b_type, ldb, a->stride_b, o->beta, o->C,
                              a->c_type, ldc, a->stride_c, batch, a->compute, algo);
    case GS_EP_LT_MATMUL:
        return cublasLtMatmul(g->lt, c->desc, o->alpha, o->A, c->la, o->B, c->lb, o->beta, o->C,
                              c->lc, o->C, c->lc, c->has_algo ? &c->algo : NULL, g->workspace,
                              g->workspace_bytes, g->stream);
    default:
        return CUBLAS_STATUS_NOT_SUPPORTED; /* gs_replay_args_of rebuilds no other */
    }
}

void gs_replay_release(gs_replay_call_t *c)
{
    if (c->la)
        cublasLtMatrixLayoutDestroy(c->la);
    if (c->lb)
        cublasLtMatrixLayoutDestroy(c->lb);
    if (c->lc)
        cublasLtMatrixLayoutDestroy(c->lc);
    if (c->desc)
        cublasLtMatmulDescDestroy(c->desc);
    c->la = c->lb = c->lc = NULL;
    c->desc = NULL;
    c->has_algo = 0;
}
