/* How the shim finds the real cuBLAS when the application is not linked to
 * it. NOT linked to the fake; run with LD_PRELOAD=libgemmshim.so.
 *
 *   test_local_scope local   dlopen the fake with RTLD_LOCAL first (what
 *                            Python does): dlsym(RTLD_NEXT) cannot see it,
 *                            the shim must find the loaded copy.
 *   test_local_scope noload  nothing loaded: the shim opens libcublas.so.13
 *                            itself (LD_LIBRARY_PATH or GEMMSHIM_CUBLAS),
 *                            and that copy must be the fake in FAKE_DIR.
 *   test_local_scope none    no cuBLAS anywhere: prints the status the shim
 *                            returned (compared with EXPECT_STATUS).
 *   test_local_scope probe-none
 *                            precondition for "none": no libcublas can be
 *                            opened by name in this environment.
 *
 * The calls go through dlsym(RTLD_DEFAULT, name): the preloaded shim's. In
 * local and noload modes the record must show each call, with its values,
 * and the returned status must be the fake's (FAKE_CUBLAS_RETURN). */
#define _GNU_SOURCE
#include <cublas_api.h>
#include <cublasLt.h>

#include "fake_record.h"
#include "gs_test.h"

#include <dlfcn.h>

typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                   int, int, const float *, const float *, int, const float *,
                                   int, const float *, float *, int);
typedef cublasStatus_t (*gemmex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                    int, int, const void *, const void *, cudaDataType, int,
                                    const void *, cudaDataType, int, const void *, void *,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*ltmatmul_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                      const void *, cublasLtMatrixLayout_t, const void *,
                                      cublasLtMatrixLayout_t, const void *, const void *,
                                      cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                      const cublasLtMatmulAlgo_t *, void *, size_t,
                                      cudaStream_t);

static const float one = 1.f, zero = 0.f;
static char fake_path[4096], fake_lt_path[4096];

static void *shim_symbol(const char *name)
{
    void *fn = dlsym(RTLD_DEFAULT, name);
    Dl_info info;
    if (!CHECK(fn && dladdr(fn, &info) && strstr(info.dli_fname, "libgemmshim"))) {
        fprintf(stderr, "    %s is not the preloaded shim's (LD_PRELOAD unset?)\n", name);
        exit(GS_TEST_DONE() | 1);
    }
    return fn;
}

static void set_paths(void)
{
    const char *dir = getenv("FAKE_DIR");
    if (!dir || !*dir) {
        fprintf(stderr, "FAKE_DIR is not set\n");
        exit(2);
    }
    snprintf(fake_path, sizeof fake_path, "%s/libcublas.so.13", dir);
    snprintf(fake_lt_path, sizeof fake_lt_path, "%s/libcublasLt.so.13", dir);
}

/* The three calls, through the shim. m = 0x61, n = 0x62, k = 0x63 are looked
 * for in the record. */
static void call_all(cublasHandle_t h, int expected, int with_lt)
{
    sgemm_fn sgemm = (sgemm_fn)shim_symbol("cublasSgemm_v2");
    gemmex_fn gemmex = (gemmex_fn)shim_symbol("cublasGemmEx");
    float *dA = (float *)0x7f1000000000ull, *dC = (float *)0x7f3000000000ull;
    CHECK_EQ_INT(sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 0x61, 0x62, 0x63, &one, dA, 0x61, dA, 0x63,
                       &zero, dC, 0x61),
                 expected);
    CHECK_EQ_INT(gemmex(h, CUBLAS_OP_T, CUBLAS_OP_N, 0x61, 0x62, 0x63, &one, dA, CUDA_R_16BF,
                        0x63, dA, CUDA_R_16BF, 0x63, &zero, dC, CUDA_R_16BF, 0x61,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 expected);
    if (with_lt) {
        ltmatmul_fn lt = (ltmatmul_fn)shim_symbol("cublasLtMatmul");
        CHECK_EQ_INT(lt((cublasLtHandle_t)0x1234, (cublasLtMatmulDesc_t)0x61, &one, dA,
                        (cublasLtMatrixLayout_t)0x62, dA, (cublasLtMatrixLayout_t)0x63, &zero,
                        dC, NULL, dC, NULL, NULL, NULL, 0, NULL),
                     expected);
    }
}

static void check_record(const char *rec, int lines, int with_lt)
{
    CHECK_EQ_INT(lines, with_lt ? 3 : 2);
    CHECK(strncmp(rec, "cublasSgemm_v2 ", 15) == 0);
    CHECK_CONTAINS(rec, "\ncublasGemmEx ");
    /* int m = 0x61, n = 0x62, k = 0x63 as little-endian bytes */
    CHECK_CONTAINS(rec, " m=61000000 n=62000000 k=63000000 ");
    if (with_lt) {
        CHECK_CONTAINS(rec, "\ncublasLtMatmul ");
        CHECK_CONTAINS(rec, " computeDesc=6100000000000000 ");
    }
}

static int mode_local(void)
{
    set_paths();
    void *fake = dlopen(fake_path, RTLD_NOW | RTLD_LOCAL);
    void *fake_lt = dlopen(fake_lt_path, RTLD_NOW | RTLD_LOCAL);
    if (!CHECK(fake && fake_lt)) {
        fprintf(stderr, "    dlopen: %s\n", dlerror());
        return GS_TEST_DONE();
    }
    /* Local scope: invisible to global lookups, as in Python. */
    CHECK(dlsym(RTLD_DEFAULT, "cublasCreate_v2") == NULL);
    CHECK(dlsym(RTLD_DEFAULT, "cublasGetStream_v2") == NULL);
    cublasStatus_t (*create)(cublasHandle_t *) =
        (cublasStatus_t (*)(cublasHandle_t *))dlsym(fake, "cublasCreate_v2");
    cublasHandle_t h = NULL;
    CHECK(create && create(&h) == CUBLAS_STATUS_SUCCESS);
    CHECK(dlsym(fake, "cublasSgemm_v2") != dlsym(RTLD_DEFAULT, "cublasSgemm_v2"));

    long off = fake_record_size();
    call_all(h, fake_expected_status(), 1);
    int lines = 0;
    char *rec = fake_record_since(off, &lines);
    check_record(rec, lines, 1);
    free(rec);
    return GS_TEST_DONE();
}

static int mode_noload(void)
{
    set_paths();
    CHECK(dlopen(fake_path, RTLD_NOW | RTLD_NOLOAD) == NULL);
    CHECK(dlopen("libcublas.so.13", RTLD_NOW | RTLD_NOLOAD) == NULL);
    long off = fake_record_size();
    /* A handle the fake did not create: the shim cannot read its state and
     * forwards (the fake records any handle). */
    call_all((cublasHandle_t)0x4242, fake_expected_status(), 0);
    int lines = 0;
    char *rec = fake_record_since(off, &lines);
    check_record(rec, lines, 0);
    free(rec);
    /* The copy the shim opened is the fake in FAKE_DIR. */
    CHECK(dlopen(fake_path, RTLD_NOW | RTLD_NOLOAD) != NULL);
    return GS_TEST_DONE();
}

static int mode_none(void)
{
    const char *e = getenv("EXPECT_STATUS");
    if (!e) {
        fprintf(stderr, "EXPECT_STATUS is not set\n");
        return 2;
    }
    sgemm_fn sgemm = (sgemm_fn)shim_symbol("cublasSgemm_v2");
    float *d = (float *)0x7f1000000000ull;
    int st = sgemm((cublasHandle_t)0x4242, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, d, 8, d, 8,
                   &zero, d, 8);
    printf("status=%d\n", st);
    CHECK_EQ_INT(st, strtol(e, NULL, 0));
    return GS_TEST_DONE();
}

static int mode_probe_none(void)
{
    const char *names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                           "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
    for (int i = 0; i < 6; ++i) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!CHECK(h == NULL))
            fprintf(stderr, "    %s can be opened here\n", names[i]);
    }
    return GS_TEST_DONE();
}

/* api: an application not linked to the shim looks its C API up, as
 * include/gemmshim.h documents; 0 when found and answering, 3 when absent. */
static int mode_api(void)
{
    int (*version)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gemmshim_version");
    if (!version) {
        printf("gemmshim_version not found\n");
        return 3;
    }
    printf("gemmshim_version found: %d\n", version());
    return version() > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "local"))
        return mode_local();
    if (!strcmp(mode, "noload"))
        return mode_noload();
    if (!strcmp(mode, "none"))
        return mode_none();
    if (!strcmp(mode, "probe-none"))
        return mode_probe_none();
    if (!strcmp(mode, "api"))
        return mode_api();
    fprintf(stderr, "usage: %s local|noload|none|probe-none|api\n", argv[0]);
    return 2;
}
