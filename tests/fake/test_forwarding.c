/* Every intercepted entry point forwards its arguments untouched.
 *
 * Linked against the fake libcublas.so.13 / libcublasLt.so.13 and run with
 * LD_PRELOAD=libgemmshim.so and GEMMSHIM_KERNELS=none. For each entry point
 * of GS_ENTRY_POINTS and each scenario (valid arguments, invalid ones), it
 * calls the shim's definition (the global symbol) and the fake's own (dlsym
 * on the fake's handle) with the same values, and requires one record line
 * from each, identical, and the fake's status from both. The calls are
 * generated from the X-macro list, so a new entry point is tested with no
 * new code (a new parameter name needs a field in the value structs below,
 * or this file does not compile). */
#define _GNU_SOURCE
#include <cublas_api.h>
#include <cublasLt.h>
#include <stdint.h>

#include "fake_foreach.h"
#include "fake_record.h"
#include "gs_entry_points.h"
#include "gs_test.h"

#include <dlfcn.h>

/* Values for every parameter name of the cuBLAS entry points. */
typedef struct blas_vals {
    cublasHandle_t handle;
    int64_t transa, transb, m, n, k, lda, ldb, ldc, batchCount;
    long long strideA, strideB, strideC;
    const void *alpha, *beta, *A, *B;
    void *C;
    int64_t Atype, Btype, Ctype, computeType, algo;
    const void *const *Aarray, *const *Barray;
    void *const *Carray;
} blas_vals_t;

/* ... and of the cuBLASLt ones. */
typedef struct lt_vals {
    cublasLtHandle_t lightHandle;
    cublasLtMatmulDesc_t computeDesc;
    const void *alpha, *A, *B, *beta, *C;
    cublasLtMatrixLayout_t Adesc, Bdesc, Cdesc, Ddesc;
    void *D, *workspace;
    const cublasLtMatmulAlgo_t *algo;
    size_t workspaceSizeInBytes;
    cudaStream_t stream;
} lt_vals_t;

#define FIELD_CUBLAS(x) VB->x
#define FIELD_CUBLASLT(x) VL->x

typedef cublasStatus_t (*caller_t)(void *fn, const blas_vals_t *VB, const lt_vals_t *VL);

#define DEFINE_CALLER(lib, name, params, args)                                    \
    typedef cublasStatus_t(*name##_fn) params;                                    \
    static cublasStatus_t call_##name(void *fn, const blas_vals_t *VB,            \
                                      const lt_vals_t *VL)                        \
    {                                                                             \
        (void)VB;                                                                 \
        (void)VL;                                                                 \
        return ((name##_fn)fn)(FAKE_LIST_ARGS(FIELD_##lib, args));                \
    }
GS_ENTRY_POINTS(DEFINE_CALLER)

typedef struct entry {
    const char *name;
    int is_lt;
    caller_t call;
    void *shim;      /* the global symbol: the preloaded shim's */
    int exercised;   /* scenarios passed */
} entry_t;

#define IS_LT_CUBLAS 0
#define IS_LT_CUBLASLT 1
#define ENTRY_ROW(lib, name, params, args) {#name, IS_LT_##lib, call_##name, (void *)&name, 0},
static entry_t entries[] = {GS_ENTRY_POINTS(ENTRY_ROW)};
#define N_ENTRIES ((int)(sizeof entries / sizeof entries[0]))

static const char *object_of(const void *fn)
{
    Dl_info info;
    return fn && dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "";
}

static long total_lines;

/* One scenario on one entry point: shim, then fake directly. */
static int run_scenario(entry_t *e, void *fake_fn, const char *scenario, const blas_vals_t *vb,
                        const lt_vals_t *vl)
{
    const int expected = fake_expected_status();
    int lines_shim = 0, lines_fake = 0, failed_before = gs_test_failed;

    long off = fake_record_size();
    int st_shim = e->call(e->shim, vb, vl);
    char *rec_shim = fake_record_since(off, &lines_shim);

    off = fake_record_size();
    int st_fake = e->call(fake_fn, vb, vl);
    char *rec_fake = fake_record_since(off, &lines_fake);
    total_lines += lines_shim + lines_fake;

    CHECK_EQ_INT(lines_shim, 1);
    CHECK_EQ_INT(lines_fake, 1);
    CHECK_STR_EQ(rec_shim, rec_fake);
    /* The line is this entry point's, not a neighbour's (e.g. _64). */
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s ", e->name);
    CHECK(strncmp(rec_shim, prefix, strlen(prefix)) == 0);
    CHECK_EQ_INT(st_shim, expected);
    CHECK_EQ_INT(st_fake, expected);
    if (gs_test_failed != failed_before)
        fprintf(stderr, "    (entry point %s, scenario %s)\n", e->name, scenario);
    free(rec_shim);
    free(rec_fake);
    return gs_test_failed == failed_before;
}

/* A call the shim answers itself with `status`: nothing reaches the fake. */
static void answered_by_shim(entry_t *e, const char *scenario, const blas_vals_t *v,
                             int status)
{
    int lines = 0, failed_before = gs_test_failed;
    long off = fake_record_size();
    int st = e->call(e->shim, v, NULL);
    free(fake_record_since(off, &lines));
    CHECK_EQ_INT(st, status);
    CHECK_EQ_INT(lines, 0);
    if (gs_test_failed != failed_before)
        fprintf(stderr, "    (entry point %s, scenario %s)\n", e->name, scenario);
}

static float alpha_v = 1.5f, beta_v = -0.25f;
static const void *const a_ptrs[3] = {(void *)0xa0001000, (void *)0xa0002000, (void *)0xa0003000};
static const void *const b_ptrs[3] = {(void *)0xb0001000, (void *)0xb0002000, (void *)0xb0003000};
static void *const c_ptrs[3] = {(void *)0xc0001000, (void *)0xc0002000, (void *)0xc0003000};

int main(void)
{
    void *fake = dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD);
    void *fake_lt = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (!CHECK(fake && fake_lt))
        return GS_TEST_DONE();
    /* The fakes are what is loaded under those names: they have our getter
     * behaviour and a recorder, which the real cuBLAS has not. */
    CHECK(dlsym(fake, "cublasGetStream_v2") != NULL);

    cublasHandle_t h = NULL;
    CHECK_EQ_INT(cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
    CHECK(h != NULL);
    /* cublasCreate_v2 is not intercepted: it must be the fake's own. */
    CHECK(strstr(object_of((void *)&cublasCreate_v2), "libcublas.so.13") != NULL);

    /* Distinctive values: 64-bit sizes above 2^32 where the parameter is
     * 64-bit (an int parameter receives the low 32 bits, as any caller's
     * would), valid for the shim's checks with transa = T, transb = N. */
    const blas_vals_t valid = {
        .handle = h,
        .transa = CUBLAS_OP_T,
        .transb = CUBLAS_OP_N,
        .m = 0x100000011ll,
        .n = 0x100000013ll,
        .k = 0x100000017ll,
        .lda = 0x200000101ll, /* >= k */
        .ldb = 0x200000103ll, /* >= k */
        .ldc = 0x200000105ll, /* >= m */
        .batchCount = 0x100000003ll,
        .strideA = 0x123456789all,
        .strideB = 0x23456789abll,
        .strideC = 0x3456789abcll,
        .alpha = &alpha_v,
        .beta = &beta_v,
        .A = (const void *)0xa000000010ull,
        .B = (const void *)0xb000000020ull,
        .C = (void *)0xc000000030ull,
        .Atype = CUDA_R_16BF,
        .Btype = CUDA_R_16F,
        .Ctype = CUDA_R_32F,
        .computeType = CUBLAS_COMPUTE_32F_FAST_16BF,
        .algo = CUBLAS_GEMM_DEFAULT_TENSOR_OP,
        .Aarray = a_ptrs,
        .Barray = b_ptrs,
        .Carray = c_ptrs,
    };
    blas_vals_t neg_m = valid, bad_op = valid, no_handle = valid, op_c = valid,
                small_ld = valid, no_alpha = valid, no_beta = valid, no_handle_no_alpha = valid,
                empty = valid;
    neg_m.m = -1;
    bad_op.transb = 3;
    no_handle.handle = NULL;
    no_alpha.alpha = NULL;
    no_beta.beta = NULL;
    no_handle_no_alpha.handle = NULL;
    no_handle_no_alpha.alpha = NULL;
    empty.m = 0;
    op_c.transa = CUBLAS_OP_C;
    op_c.transb = CUBLAS_OP_C;
    op_c.ldb = 0x200000113ll; /* >= n */
    small_ld.ldc = 1;

    const lt_vals_t lt_valid = {
        .lightHandle = (cublasLtHandle_t)0x1100,
        .computeDesc = (cublasLtMatmulDesc_t)0x2200,
        .alpha = &alpha_v,
        .A = (const void *)0xa000000010ull,
        .B = (const void *)0xb000000020ull,
        .beta = &beta_v,
        .C = (const void *)0xc000000030ull,
        .Adesc = (cublasLtMatrixLayout_t)0x3300,
        .Bdesc = (cublasLtMatrixLayout_t)0x4400,
        .Cdesc = (cublasLtMatrixLayout_t)0x5500,
        .D = (void *)0xd000000040ull,
        .Ddesc = (cublasLtMatrixLayout_t)0x6600,
        .algo = (const cublasLtMatmulAlgo_t *)0x7700,
        .workspace = (void *)0xe000000050ull,
        .workspaceSizeInBytes = 0x123456789ull,
        .stream = (cudaStream_t)0x8800,
    };
    lt_vals_t lt_null = {0};

    struct {
        const char *name;
        const blas_vals_t *blas;
        const lt_vals_t *lt;
    } scenarios[] = {
        {"valid", &valid, &lt_valid},        {"m=-1", &neg_m, &lt_null},
        {"transb=3", &bad_op, &lt_valid},    {"NULL handle", &no_handle, &lt_null},
        {"op C", &op_c, &lt_valid},          {"ldc=1", &small_ld, &lt_valid},
        {"NULL handle and alpha", &no_handle_no_alpha, &lt_null},
    };
    const int n_scenarios = (int)(sizeof scenarios / sizeof scenarios[0]);

    for (int i = 0; i < N_ENTRIES; ++i) {
        entry_t *e = &entries[i];
        void *lib = e->is_lt ? fake_lt : fake;
        void *fake_fn = dlsym(lib, e->name);
        /* Shim and fake are different objects: otherwise this test would
         * compare the fake with itself. */
        CHECK(strstr(object_of(e->shim), "libgemmshim") != NULL);
        CHECK(strstr(object_of(fake_fn), e->is_lt ? "libcublasLt.so.13" : "libcublas.so.13"));
        if (!CHECK(fake_fn && fake_fn != e->shim)) {
            fprintf(stderr, "    (entry point %s)\n", e->name);
            continue;
        }
        for (int s = 0; s < n_scenarios; ++s)
            e->exercised += run_scenario(e, fake_fn, scenarios[s].name, scenarios[s].blas,
                                         scenarios[s].lt);
        if (e->is_lt)
            continue;
        /* Answered by the shim: a NULL alpha or beta on a handle (cuBLAS 13
         * would dereference it), and an empty product (m = 0). */
        answered_by_shim(e, "NULL alpha", &no_alpha, CUBLAS_STATUS_INVALID_VALUE);
        answered_by_shim(e, "NULL beta", &no_beta, CUBLAS_STATUS_INVALID_VALUE);
        answered_by_shim(e, "m=0", &empty, CUBLAS_STATUS_SUCCESS);
    }

    /* Every entry point of the list went through every scenario. */
    for (int i = 0; i < N_ENTRIES; ++i)
        if (!CHECK(entries[i].exercised == n_scenarios))
            fprintf(stderr, "    %s: %d of %d scenarios passed\n", entries[i].name,
                    entries[i].exercised, n_scenarios);
    CHECK(N_ENTRIES > 0);
    CHECK_EQ_INT(total_lines, 2L * N_ENTRIES * n_scenarios);
    CHECK_EQ_INT(cublasDestroy_v2(h), CUBLAS_STATUS_SUCCESS);
    printf("%d entry points x %d scenarios forwarded untouched\n", N_ENTRIES, n_scenarios);
    return GS_TEST_DONE();
}
