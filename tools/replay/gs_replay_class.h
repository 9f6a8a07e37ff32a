/* A recorded signature's class (gs_class_t, dispatch/gs_problem.h), read
 * back into the arguments of a call whose class is exactly that one: the
 * inverse of what the shim does when it describes a call (the typed
 * wrappers of shim/face/gs_exports.c, problem_of in shim/serve/gs_serve.c,
 * compat/gs_types.c, compat/gs_lt.c). Where several calls have the same
 * class (COMPUTE_32F under TF32 math and COMPUTE_32F_FAST_TF32), any one of
 * them serves: the class is all the shim and its tuner ever see of a call.
 *
 * Pure C: cuBLAS's headers for their enums only, no CUDA call, so it is
 * unit-tested without a GPU (tests/unit/test_replay.c). */
#ifndef GS_REPLAY_CLASS_H
#define GS_REPLAY_CLASS_H

#include "gs_problem.h"

#include <cublasLt.h>
#include <stddef.h>
#include <stdint.h>

/* A pointer the class records as NULL (align 0): the call passes NULL. */
#define GS_REPLAY_NULL UINT32_MAX

typedef struct gs_replay_args {
    gs_entry_t entry;
    int is_64;                   /* the _64 entry point */
    cublasOperation_t transa, transb;
    int64_t m, n, k, lda, ldb, ldc;
    int64_t batch, stride_a, stride_b, stride_c;
    cudaDataType a_type, b_type, c_type;
    cublasComputeType_t compute; /* cublasGemmEx and cuBLASLt's compute type */
    cublasMath_t math_mode;      /* the handle's, its flag bits included */
    int scalars_on_device;       /* CUBLAS_POINTER_MODE_DEVICE / cuBLASLt's DEVICE */
    float alpha, beta;           /* beta of the class's kind (a device beta: 0) */
    int sm_count_target;         /* cublasSetSmCountTarget; 0: every SM */
    int bias;                    /* cublasLtMatmul's BIAS epilogue */
    cudaDataType bias_type;
    /* The FP8 subset (gs_class_fp8_subset): A's and B's scale modes as
     * cuBLASLt spells them (-1: no scale pointer set), fast accumulation,
     * and the scale vectors' bytes (4: one factor; 4 m or 4 n: rowwise). */
    int32_t scale_mode_a, scale_mode_b;
    int8_t fast_accum;
    size_t bytes_scale_a, bytes_scale_b;
    /* Where each pointer lies: its offset from a 256-byte boundary, which
     * gives it the recorded alignment; GS_REPLAY_NULL for NULL. */
    uint32_t off_a, off_b, off_c, off_bias, off_alpha, off_beta;
    /* Bytes from each operand's first element to its last, every batch. */
    size_t bytes_a, bytes_b, bytes_c, bytes_bias;
} gs_replay_args_t;


/* The arguments of a call of class c: NULL and *a filled, or why no call
 * can be rebuilt that has exactly this class (nothing is approximated). */
const char *gs_replay_args_of(const gs_class_t *c, gs_replay_args_t *a);

#endif
