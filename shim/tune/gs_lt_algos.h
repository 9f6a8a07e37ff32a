/* cuBLASLt's own algorithms as a kernel family chosen only by tuning
 * (shim/tune/gs_lt_algos.c); added to the registry at start-up. */
#ifndef GS_LT_ALGOS_H
#define GS_LT_ALGOS_H

#include "gs_family.h"

extern const gs_family_t gs_family_cublaslt;

#endif
