/* libFuzzer target: the cuBLAS argument checks (compat/gs_check.c).
 *
 * The input bytes are decoded into a gs_call_t: handle, transposes (any
 * int: cuBLAS takes the enum from the application), m, n, k, lda, ldb, ldc,
 * batch (each either one of the edge values 0, 1, -1, INT32_MIN/MAX,
 * INT64_MIN/MAX, ... or raw 64-bit), alpha/beta present or not, types,
 * algorithm. Checks, beyond ASan/UBSan (signed overflow in the size
 * arithmetic):
 *   - the status is one that cuBLAS documents for these calls;
 *   - it agrees with the rules written out independently below (the
 *     documented order: no handle first, then every invalid value);
 *   - it does not depend on what the checks do not judge (pointers to the
 *     matrices, types, compute type, algorithm, entry point, strides);
 *   - a valid call stays valid with larger leading dimensions. */
#include "gs_call.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(cond)                                                              \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "fuzz_check: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                               \
        }                                                                          \
    } while (0)

typedef struct reader {
    const uint8_t *d;
    size_t n, pos;
} reader_t;

static uint8_t byte(reader_t *r)
{
    return r->pos < r->n ? r->d[r->pos++] : 0;
}

static uint64_t raw64(reader_t *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v = v << 8 | byte(r);
    return v;
}

/* A size-like value: mostly small or at an edge, sometimes raw. */
static int64_t size_value(reader_t *r)
{
    static const int64_t edges[] = {0,         1,          -1,        2,
                                    3,         7,          8,         64,
                                    INT32_MAX, INT32_MIN,  (int64_t)INT32_MAX + 1,
                                    INT64_MAX, INT64_MIN,  INT64_MAX - 1,
                                    INT64_MIN + 1, (int64_t)1 << 40};
    const uint8_t sel = byte(r);
    if (sel < 128)
        return sel % 32;                   /* small, non-negative */
    if (sel < 128 + 64)
        return edges[sel % (sizeof edges / sizeof edges[0])];
    if (sel < 255)
        return (int64_t)(sel % 16) - 8;    /* small, possibly negative */
    uint64_t u = raw64(r);
    int64_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static int op_value(reader_t *r)
{
    static const int ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C, CUBLAS_OP_CONJG,
                              -1, 3, INT32_MAX, INT32_MIN};
    const uint8_t sel = byte(r);
    if (sel < 240)
        return ops[sel % (sizeof ops / sizeof ops[0])];
    return (int)(uint32_t)raw64(r);
}

/* The documented rules, written out with no shared code: the handle, then
 * transposes, sizes, leading dimensions (at least max(1, rows of the stored
 * matrix)), scalars. */
static cublasStatus_t reference(const gs_call_t *c)
{
    if (c->handle == NULL)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    const int ok_a = c->transa == CUBLAS_OP_N || c->transa == CUBLAS_OP_T || c->transa == CUBLAS_OP_C;
    const int ok_b = c->transb == CUBLAS_OP_N || c->transb == CUBLAS_OP_T || c->transb == CUBLAS_OP_C;
    if (!ok_a || !ok_b)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (c->m < 0 || c->n < 0 || c->k < 0 || c->batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    const int64_t need_a = c->transa == CUBLAS_OP_N ? c->m : c->k;
    const int64_t need_b = c->transb == CUBLAS_OP_N ? c->k : c->n;
    if (c->lda < 1 || c->lda < need_a || c->ldb < 1 || c->ldb < need_b || c->ldc < 1 ||
        c->ldc < c->m)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (c->alpha == NULL || c->beta == NULL)
        return CUBLAS_STATUS_INVALID_VALUE;
    return CUBLAS_STATUS_SUCCESS;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const float one = 1.f, zero = 0.f;
    reader_t r = {data, size, 0};
    gs_call_t c;
    memset(&c, 0, sizeof c);
    const uint8_t flags = byte(&r);
    c.entry = (gs_entry_t)(byte(&r) % GS_EP_COUNT);
    c.is_64 = flags >> 7 & 1;
    c.handle = (flags & 1) ? (cublasHandle_t)(uintptr_t)0x1000 : NULL;
    c.alpha = (flags & 2) ? &one : NULL;
    c.beta = (flags & 4) ? &zero : NULL;
    c.transa = op_value(&r);
    c.transb = op_value(&r);
    c.m = size_value(&r);
    c.n = size_value(&r);
    c.k = size_value(&r);
    c.lda = size_value(&r);
    c.ldb = size_value(&r);
    c.ldc = size_value(&r);
    c.batch = (flags & 8) ? size_value(&r) : 1;
    c.stride_a = size_value(&r);
    c.stride_b = size_value(&r);
    c.stride_c = size_value(&r);
    c.atype = c.btype = c.ctype = byte(&r) - 1;
    c.compute_type = byte(&r);
    c.algo = (int)(int8_t)byte(&r);
    if (flags & 16) {
        c.A = (const void *)(uintptr_t)0x2000;
        c.B = (const void *)(uintptr_t)0x3000;
        c.C = (void *)(uintptr_t)0x4000;
    }

    const cublasStatus_t s = gs_check_call(&c);
    REQUIRE(s == CUBLAS_STATUS_SUCCESS || s == CUBLAS_STATUS_NOT_INITIALIZED ||
            s == CUBLAS_STATUS_INVALID_VALUE);
    REQUIRE(s == reference(&c));

    /* what the checks do not judge does not change the status */
    gs_call_t o = c;
    o.A = o.A ? NULL : (const void *)(uintptr_t)0x5000;
    o.C = o.C ? NULL : (void *)(uintptr_t)0x6000;
    o.atype = o.btype = o.ctype = 0x7fff;
    o.compute_type = -5;
    o.algo = 99;
    o.entry = (gs_entry_t)((c.entry + 1) % GS_EP_COUNT);
    o.is_64 = !c.is_64;
    o.stride_a = ~c.stride_a;
    o.stride_c = INT64_MIN;
    REQUIRE(gs_check_call(&o) == s);

    /* larger leading dimensions keep a valid call valid */
    if (s == CUBLAS_STATUS_SUCCESS) {
        gs_call_t w = c;
        w.lda = c.lda < INT64_MAX ? c.lda + 1 : c.lda;
        w.ldb = INT64_MAX;
        w.ldc = c.ldc < INT64_MAX - 1000 ? c.ldc + 1000 : INT64_MAX;
        REQUIRE(gs_check_call(&w) == CUBLAS_STATUS_SUCCESS);
    }
    return 0;
}
