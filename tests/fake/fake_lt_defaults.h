/* cuBLASLt's defaults for a new matmul descriptor and matrix layout: one
 * list for the fake cuBLASLt (fake_cublas.c) and for the unit tests'
 * attribute bags (tests/unit/lt_bag.h), so both answer the shim's getters
 * as the real library does and neither drifts from the other.
 * put(bag, attr, value, bytes) stores one attribute. */
#ifndef FAKE_LT_DEFAULTS_H
#define FAKE_LT_DEFAULTS_H

#include <cublasLt.h>
#include <stddef.h>
#include <stdint.h>

typedef void (*lt_default_put_fn)(void *bag, int attr, const void *v, size_t n);

/* cublasLtMatmulDescCreate(compute, scale) */
static inline void lt_default_desc(lt_default_put_fn put, void *bag, int32_t compute,
                                   int32_t scale)
{
    const int32_t zero = 0, bias_type = -1, scalar = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    const uint32_t epi = CUBLASLT_EPILOGUE_DEFAULT;
    const int64_t z64 = 0;
    const int8_t fast_accum = 0;
    const void *null = NULL;
    put(bag, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, 4);
    put(bag, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, 4);
    put(bag, CUBLASLT_MATMUL_DESC_POINTER_MODE, &zero, 4);
    put(bag, CUBLASLT_MATMUL_DESC_TRANSA, &zero, 4);
    put(bag, CUBLASLT_MATMUL_DESC_TRANSB, &zero, 4);
    put(bag, CUBLASLT_MATMUL_DESC_TRANSC, &zero, 4);
    put(bag, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, 4);
    put(bag, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &null, sizeof null);
    put(bag, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &z64, 8);
    put(bag, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, 4);
    const int ptrs[] = {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                        CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
                        CUBLASLT_MATMUL_DESC_AMAX_D_POINTER,
                        CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER};
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; ++i)
        put(bag, ptrs[i], &null, sizeof null);
    put(bag, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, 1);
    const int modes[] = {CUBLASLT_MATMUL_DESC_A_SCALE_MODE, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                         CUBLASLT_MATMUL_DESC_C_SCALE_MODE, CUBLASLT_MATMUL_DESC_D_SCALE_MODE};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i)
        put(bag, modes[i], &scalar, 4);
}

/* cublasLtMatrixLayoutCreate(type, rows, cols, ld): column-major, one matrix */
static inline void lt_default_layout(lt_default_put_fn put, void *bag, uint32_t type,
                                     uint64_t rows, uint64_t cols, int64_t ld)
{
    const int32_t order = CUBLASLT_ORDER_COL, batch = 1;
    const int64_t z64 = 0;
    put(bag, CUBLASLT_MATRIX_LAYOUT_TYPE, &type, 4);
    put(bag, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, 4);
    put(bag, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, 8);
    put(bag, CUBLASLT_MATRIX_LAYOUT_COLS, &cols, 8);
    put(bag, CUBLASLT_MATRIX_LAYOUT_LD, &ld, 8);
    put(bag, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, 4);
    put(bag, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &z64, 8);
    put(bag, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, &z64, 8);
}

#endif /* FAKE_LT_DEFAULTS_H */
