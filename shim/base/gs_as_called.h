/* cuBLAS as the application called it: the same entry point, handle,
 * types, compute type, algorithm, scalars and stream, with the output in
 * another buffer C of the call's ldc and batch stride (the tuner's
 * reference side of a timing pair). For cublasLtMatmul, C replaces D (and
 * C where the call had them equal); the call's own algorithm and workspace
 * are used. CUBLAS_STATUS_NOT_SUPPORTED for an entry point it does not
 * repeat (pointer-array batches) or a real function that is missing. */
#ifndef GS_AS_CALLED_H
#define GS_AS_CALLED_H

#include "gs_call.h"

cublasStatus_t gs_cublas_as_called(const gs_call_t *c, void *C);

#endif
