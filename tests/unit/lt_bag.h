/* cublasLtMatmul descriptors for the unit tests of compat/gs_lt.c
 * (test_compat.c, test_lt_subset.c): attribute bags holding cuBLASLt's
 * defaults, read through getters the way the shim reads the real
 * library's, and a call the way torch._scaled_mm builds one. */
#ifndef GS_LT_BAG_H
#define GS_LT_BAG_H

#include "gs_lt.h"
#include "../fake/fake_lt_defaults.h"

#include <stdint.h>
#include <string.h>

enum { BAG_ATTRS = 64 };
typedef struct bag {
    unsigned char val[BAG_ATTRS][8];
    size_t size[BAG_ATTRS];
} bag_t;

static inline void bag_put(bag_t *b, int attr, const void *v, size_t n)
{
    memset(b->val[attr], 0, sizeof b->val[attr]);
    memcpy(b->val[attr], v, n);
    b->size[attr] = n;
}

/* bag_put for fake_lt_defaults.h */
static inline void bag_put_any(void *b, int attr, const void *v, size_t n)
{
    bag_put(b, attr, v, n);
}

/* cuBLASLt's answer: the value when asked with its exact size. */
static inline cublasStatus_t bag_get(const bag_t *b, int attr, void *buf, size_t n, size_t *written)
{
    if (attr < 0 || attr >= BAG_ATTRS || !b->size[attr] || n != b->size[attr])
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, b->val[attr], n);
    *written = n;
    return CUBLAS_STATUS_SUCCESS;
}

static inline cublasStatus_t desc_get(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a,
                                      void *buf, size_t n, size_t *written)
{
    return bag_get((const bag_t *)d, (int)a, buf, n, written);
}

static inline cublasStatus_t layout_get(cublasLtMatrixLayout_t l,
                                        cublasLtMatrixLayoutAttribute_t a, void *buf, size_t n,
                                        size_t *written)
{
    return bag_get((const bag_t *)l, (int)a, buf, n, written);
}

/* A cublasLtMatmul the way torch._scaled_mm builds one: A (k x m, T) and
 * B (k x n, N) of type ab, C and D m x n of types c and d; descriptors
 * with cuBLASLt's defaults. */
typedef struct lt_case {
    bag_t desc, la, lb, lc, ld;
    gs_lt_args_t args;
} lt_case_t;

static inline void layout(bag_t *b, int type, uint64_t rows, uint64_t cols)
{
    lt_default_layout(bag_put_any, b, (uint32_t)type, rows, cols, (int64_t)rows);
}

static const float lt_one = 1.0f, lt_zero = 0.0f;

static inline void lt_case(lt_case_t *t, int ab_a, int ab_b, int c, int d)
{
    memset(t, 0, sizeof *t);
    const int32_t op_t = CUBLAS_OP_T;
    lt_default_desc(bag_put_any, &t->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    bag_put(&t->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, 4);
    layout(&t->la, ab_a, 768, 1024);
    layout(&t->lb, ab_b, 768, 512);
    layout(&t->lc, c, 1024, 512);
    layout(&t->ld, d, 1024, 512);
    gs_lt_args_t a = {.desc = (cublasLtMatmulDesc_t)&t->desc,
                      .alpha = &lt_one,
                      .A = (const void *)(uintptr_t)0x1000000,
                      .Adesc = (cublasLtMatrixLayout_t)&t->la,
                      .B = (const void *)(uintptr_t)0x2000000,
                      .Bdesc = (cublasLtMatrixLayout_t)&t->lb,
                      .beta = &lt_zero,
                      .C = (const void *)(uintptr_t)0x3000000,
                      .Cdesc = (cublasLtMatrixLayout_t)&t->lc,
                      .D = (void *)(uintptr_t)0x3000000,
                      .Ddesc = (cublasLtMatrixLayout_t)&t->ld};
    t->args = a;
}

static inline void lt_set_ptr(lt_case_t *t, int attr, uintptr_t v)
{
    const void *p = (const void *)v;
    bag_put(&t->desc, attr, &p, sizeof p);
}

static inline void lt_set_i32(lt_case_t *t, int attr, int32_t v)
{
    bag_put(&t->desc, attr, &v, 4);
}

static inline void lt_describe(const lt_case_t *t, gs_call_t *c)
{
    const gs_lt_getters_t g = {desc_get, layout_get};
    gs_lt_describe(&g, &t->args, c);
}

#endif
