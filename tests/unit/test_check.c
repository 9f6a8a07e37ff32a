/* gs_check_call: the argument rules cuBLAS documents for the gemm family. */
#include "gs_call.h"
#include "gs_test.h"

static const float one = 1.f, zero = 0.f;

/* A valid NN call: m=5, n=7, k=3 with the tightest leading dimensions. */
static gs_call_t base(void)
{
    gs_call_t c;
    memset(&c, 0, sizeof c);
    c.entry = GS_EP_SGEMM;
    c.handle = (cublasHandle_t)(uintptr_t)0x1000;
    c.transa = CUBLAS_OP_N;
    c.transb = CUBLAS_OP_N;
    c.m = 5;
    c.n = 7;
    c.k = 3;
    c.alpha = &one;
    c.beta = &zero;
    c.A = c.B = (const void *)(uintptr_t)0x2000;
    c.C = (void *)(uintptr_t)0x3000;
    c.lda = 5;
    c.ldb = 3;
    c.ldc = 5;
    c.atype = c.btype = c.ctype = CUDA_R_32F;
    c.compute_type = CUBLAS_COMPUTE_32F;
    c.batch = 1;
    return c;
}

#define OK CUBLAS_STATUS_SUCCESS
#define BAD CUBLAS_STATUS_INVALID_VALUE

/* Rows of op(A) stored per column: m for N, k for T and C. */
static int64_t rows_a(const gs_call_t *c) { return c->transa == CUBLAS_OP_N ? c->m : c->k; }
static int64_t rows_b(const gs_call_t *c) { return c->transb == CUBLAS_OP_N ? c->k : c->n; }

static void leading_dimension_boundaries(void)
{
    const int ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
    for (int ia = 0; ia < 3; ++ia) {
        for (int ib = 0; ib < 3; ++ib) {
            gs_call_t c = base();
            c.transa = ops[ia];
            c.transb = ops[ib];
            c.lda = rows_a(&c);
            c.ldb = rows_b(&c);
            c.ldc = c.m;
            CHECK_EQ_INT(gs_check_call(&c), OK);
            gs_call_t d = c;
            d.lda = rows_a(&c) - 1;
            CHECK_EQ_INT(gs_check_call(&d), BAD);
            d = c;
            d.ldb = rows_b(&c) - 1;
            CHECK_EQ_INT(gs_check_call(&d), BAD);
            d = c;
            d.ldc = c.m - 1;
            CHECK_EQ_INT(gs_check_call(&d), BAD);
            d = c; /* larger than needed is fine */
            d.lda += 100;
            d.ldb += 100;
            d.ldc += 100;
            CHECK_EQ_INT(gs_check_call(&d), OK);
        }
    }
    /* The two transposes must pick different dimensions: lda = m = 5 is
     * enough for N but not for T when k = 9. */
    gs_call_t c = base();
    c.k = 9;
    c.ldb = 9;
    c.lda = 5;
    CHECK_EQ_INT(gs_check_call(&c), OK);
    c.transa = CUBLAS_OP_T;
    CHECK_EQ_INT(gs_check_call(&c), BAD);
    c.lda = 9;
    CHECK_EQ_INT(gs_check_call(&c), OK);
    /* ldb: k for N, n for T. */
    c = base();
    c.transb = CUBLAS_OP_T;
    c.ldb = 3; /* = k, but n = 7 */
    CHECK_EQ_INT(gs_check_call(&c), BAD);
    c.ldb = 7;
    CHECK_EQ_INT(gs_check_call(&c), OK);
}

static void sizes(void)
{
    gs_call_t c = base();
    c.m = -1;
    CHECK_EQ_INT(gs_check_call(&c), BAD);
    c = base();
    c.n = -1;
    CHECK_EQ_INT(gs_check_call(&c), BAD);
    c = base();
    c.k = -1;
    CHECK_EQ_INT(gs_check_call(&c), BAD);
    c = base();
    c.batch = -1;
    CHECK_EQ_INT(gs_check_call(&c), BAD);
    c = base();
    c.m = INT64_MIN;
    CHECK_EQ_INT(gs_check_call(&c), BAD);

    /* Zero sizes are valid (quick return); leading dimensions stay >= 1. */
    c = base();
    c.m = 0;
    CHECK_EQ_INT(gs_check_call(&c), OK);
    c.lda = 1;
    c.ldc = 1;
    CHECK_EQ_INT(gs_check_call(&c), OK);
    c.ldc = 0;
    CHECK_EQ_INT(gs_check_call(&c), BAD);
    c.ldc = 1;
    c.lda = 0;
    CHECK_EQ_INT(gs_check_call(&c), BAD);

    c = base();
    c.n = 0;
    CHECK_EQ_INT(gs_check_call(&c), OK);

    c = base();
    c.k = 0; /* C = beta * C: valid */
    CHECK_EQ_INT(gs_check_call(&c), OK);
    c.transa = CUBLAS_OP_T; /* lda >= max(1, k) = 1 */
    c.lda = 1;
    CHECK_EQ_INT(gs_check_call(&c), OK);
    c.lda = 0;
    CHECK_EQ_INT(gs_check_call(&c), BAD);
    c = base();
    c.k = 0;
    c.ldb = 1; /* NN: ldb >= max(1, k) = 1 */
    CHECK_EQ_INT(gs_check_call(&c), OK);
    c.ldb = 0;
    CHECK_EQ_INT(gs_check_call(&c), BAD);

    c = base();
    c.batch = 0;
    CHECK_EQ_INT(gs_check_call(&c), OK);

    /* 64-bit sizes beyond int range are valid for the _64 entry points. */
    c = base();
    c.is_64 = 1;
    c.m = (int64_t)1 << 33;
    c.lda = c.ldc = c.m;
    CHECK_EQ_INT(gs_check_call(&c), OK);
    c.ldc = c.m - 1;
    CHECK_EQ_INT(gs_check_call(&c), BAD);
}

static void operations(void)
{
    gs_call_t c = base();
    c.transa = CUBLAS_OP_C;
    c.lda = c.k;
    CHECK_EQ_INT(gs_check_call(&c), OK);
    c = base();
    c.transb = CUBLAS_OP_C;
    c.ldb = c.n;
    CHECK_EQ_INT(gs_check_call(&c), OK);

    c = base();
    c.transa = 3;
    c.lda = 100; /* large enough for any reading */
    CHECK_EQ_INT(gs_check_call(&c), BAD);
    c = base();
    c.transb = 3;
    c.ldb = 100;
    CHECK_EQ_INT(gs_check_call(&c), BAD);
    c = base();
    c.transa = -1;
    c.lda = 100;
    CHECK_EQ_INT(gs_check_call(&c), BAD);
    c = base();
    c.transb = 0x7fffffff;
    c.ldb = 100;
    CHECK_EQ_INT(gs_check_call(&c), BAD);
}

static void scalars_and_handle(void)
{
    gs_call_t c = base();
    c.alpha = NULL;
    CHECK_EQ_INT(gs_check_call(&c), BAD);
    c = base();
    c.beta = NULL;
    CHECK_EQ_INT(gs_check_call(&c), BAD);

    c = base();
    c.handle = NULL;
    CHECK_EQ_INT(gs_check_call(&c), CUBLAS_STATUS_NOT_INITIALIZED);
    /* No handle wins over every other error. */
    c.m = -1;
    c.transa = 3;
    c.alpha = NULL;
    CHECK_EQ_INT(gs_check_call(&c), CUBLAS_STATUS_NOT_INITIALIZED);

    /* Types and algorithms are not judged here (cuBLAS answers for them). */
    c = base();
    c.atype = 12345;
    c.compute_type = 9999;
    c.algo = -77;
    CHECK_EQ_INT(gs_check_call(&c), OK);
    /* Pointer-array batches: valid with a positive batch, invalid negative. */
    c = base();
    c.entry = GS_EP_GEMMEX_BATCHED;
    c.batch = 4;
    CHECK_EQ_INT(gs_check_call(&c), OK);
    c.batch = -4;
    CHECK_EQ_INT(gs_check_call(&c), BAD);
}

int main(void)
{
    CHECK_EQ_INT(gs_check_call(&(gs_call_t){0}), CUBLAS_STATUS_NOT_INITIALIZED);
    gs_call_t c = base();
    CHECK_EQ_INT(gs_check_call(&c), OK);
    leading_dimension_boundaries();
    sizes();
    operations();
    scalars_and_handle();
    return GS_TEST_DONE();
}
