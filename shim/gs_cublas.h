/* The cuBLAS types the shim needs: the toolkit's headers, types only.
 * libgemmshim.so never links libcublas; it calls the real functions through
 * the table in gs_real.h. */
#ifndef GS_CUBLAS_H
#define GS_CUBLAS_H
#include <stdint.h>
#include <cublas_api.h>
#include <cublasLt.h>
#include "gs_entry_points.h"
#endif
