/* Issuing a rebuilt call: through exactly the recorded entry point, on a
 * cuBLAS handle set to the signature's pointer mode, math mode and SM count
 * target, or through cublasLtMatmul with descriptors and layouts made from
 * it (the algorithm cuBLASLt's heuristic picks first for its real
 * alignments and the workspace, as PyTorch asks for one). What a class does
 * not hold, the replay sets as most callers do: cublasGemmEx's algorithm
 * CUBLAS_GEMM_DEFAULT, cuBLAS's own workspace, C == D for cuBLASLt. */
#ifndef GS_REPLAY_CALL_H
#define GS_REPLAY_CALL_H

#include "gs_replay_class.h"
#include "gs_replay_mem.h"

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>

typedef struct gs_replay_gpu {
    int simulated;               /* GEMMSHIM_TEST_DEVICE: no CUDA call of the replay's own */
    cublasHandle_t h;
    cublasLtHandle_t lt;
    cudaStream_t stream;         /* every call's, non-blocking */
    void *workspace;             /* cublasLtMatmul's */
    size_t workspace_bytes;
} gs_replay_gpu_t;

/* One signature's call, made ready once and issued many times. */
typedef struct gs_replay_call {
    const gs_replay_args_t *a;
    gs_replay_ops_t ops;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    int has_algo;
} gs_replay_call_t;

/* Handles, the stream and the cuBLASLt workspace: 0, or -1 with why. */
int gs_replay_gpu_open(gs_replay_gpu_t *g, int simulated, size_t workspace_bytes, char *why,
                       size_t why_size);
void gs_replay_gpu_close(gs_replay_gpu_t *g);

/* Sets the handle's state, or makes cuBLASLt's descriptors, for c->a on
 * c->ops: CUBLAS_STATUS_SUCCESS, or the status of the step that failed
 * (named in why). */
cublasStatus_t gs_replay_prepare(gs_replay_gpu_t *g, gs_replay_call_t *c, char *why,
                                 size_t why_size);

/* The handle's state for c again (stream, pointer mode, math mode, SM
 * count target), where calls of several signatures take turns on the one
 * handle, as in a sequence; nothing for cuBLASLt, whose descriptors carry
 * it. CUBLAS_STATUS_SUCCESS or the failing step's status (named in why). */
cublasStatus_t gs_replay_select(const gs_replay_gpu_t *g, const gs_replay_call_t *c, char *why,
                                size_t why_size);

/* The call itself, once, on g's stream. */
cublasStatus_t gs_replay_issue(const gs_replay_gpu_t *g, const gs_replay_call_t *c);

/* Destroys what gs_replay_prepare made. */
void gs_replay_release(gs_replay_call_t *c);

#endif
