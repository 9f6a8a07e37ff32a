/* The cuBLAS types compat/ and the shim need: the toolkit's headers, types
 * only. libgemmshim.so never links libcublas; it calls the real functions
 * through the table in shim/base/gs_real.h, and hands compat/ the few getters it
 * needs as function pointers (gs_compat.h, gs_lt.h). */
#ifndef GS_CUBLAS_H
#define GS_CUBLAS_H
#include <stdint.h>
#include <cublas_api.h>
#include <cublasLt.h>
#endif
