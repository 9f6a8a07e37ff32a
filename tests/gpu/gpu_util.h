/* Shared by the GPU tests and the A/B benchmark: GPU presence (skip rules),
 * error checks, random data, host fp64 reference, error norms, the real
 * cuBLAS looked up past the shim, and 16-bit float conversions.
 * Header-only so each test program stays one file. */
#ifndef GS_GPU_UTIL_H
#define GS_GPU_UTIL_H

#define _GNU_SOURCE
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GPU_SKIP 77 /* CTest SKIP_RETURN_CODE */

/* Exit 77 with the reason when there is no usable GPU; with
 * GEMMSHIM_REQUIRE_GPU=1 a missing GPU is a failure instead. */
static inline void gpu_require_or_skip(const char *test)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* a crash must not swallow the last lines */
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess && n > 0)
        return;
    const char *req = getenv("GEMMSHIM_REQUIRE_GPU");
    int strict = req && !strcmp(req, "1");
    printf("%s: %s: no CUDA device (%s)\n", strict ? "FAIL" : "SKIP", test,
           e == cudaSuccess ? "device count 0" : cudaGetErrorString(e));
    exit(strict ? 1 : GPU_SKIP);
}

#define CUDA_OK(x)                                                                    \
    do {                                                                              \
        cudaError_t e_ = (x);                                                         \
        if (e_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                \
                    cudaGetErrorString(e_));                                          \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

#define CUBLAS_OK(x)                                                                  \
    do {                                                                              \
        cublasStatus_t s_ = (x);                                                      \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                            \
            fprintf(stderr, "%s:%d: %s: cublas status %d\n", __FILE__, __LINE__, #x,  \
                    (int)s_);                                                         \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* ---- random numbers: xorshift64*, seeded per run (printed, reproducible) ---- */
static uint64_t gu_rng_state = 0x9E3779B97F4A7C15ull;
static inline void gu_seed(uint64_t s) { gu_rng_state = s ? s : 1; }
static inline uint64_t gu_next(void)
{
    gu_rng_state ^= gu_rng_state >> 12;
    gu_rng_state ^= gu_rng_state << 25;
    gu_rng_state ^= gu_rng_state >> 27;
    return gu_rng_state * 2685821657736338717ull;
}
static inline double gu_uniform(void) /* [-1, 1) */
{
    return (double)(gu_next() >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}
static inline int64_t gu_int(int64_t lo, int64_t hi) /* inclusive */
{
    return lo + (int64_t)(gu_next() % (uint64_t)(hi - lo + 1));
}
static inline uint64_t gu_seed_from_env(void)
{
    const char *s = getenv("GEMMSHIM_SEED");
    if (s)
        return strtoull(s, NULL, 0);
    return (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
}
/* Seeds the generator from GEMMSHIM_SEED (fresh when unset) and returns the
 * seed, for the test to print so a failing run can be repeated. */
static inline uint64_t gu_seed_init(void)
{
    const uint64_t seed = gu_seed_from_env();
    gu_seed(seed);
    return seed;
}
/* An integer setting (e.g. GEMMSHIM_SWEEP_CASES), or its default. */
static inline int gu_env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v ? atoi(v) : dflt;
}
/* n fresh random floats in [-1, 1), kept twice: as the fp32 operand and as
 * its exact fp64 copy for the host reference. */
static inline void gu_fill_f32_f64(float *h, double *d, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        d[i] = h[i] = (float)gu_uniform();
}

/* ---- 16-bit floats (round to nearest even) ---- */
static inline uint16_t gu_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffff) > 0x7f800000)
        return 0x7fc0;
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}
static inline float gu_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline float gu_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, u;
    if (exp == 0x1f)
        u = sign | 0x7f800000 | (man << 13);
    else if (exp)
        u = sign | ((exp + 112) << 23) | (man << 13);
    else if (man) { /* subnormal */
        int e = -1;
        do {
            ++e;
            man <<= 1;
        } while (!(man & 0x400));
        u = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
    } else
        u = sign;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint16_t gu_f32_to_f16(float f)
{
    /* exact for the values we use: search-free via float arithmetic */
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000;
    float a = fabsf(f);
    if (a != a)
        return 0x7e00;
    if (a >= 65520.f)
        return (uint16_t)(sign | 0x7c00);
    if (a < 6.103515625e-05f) { /* subnormal half: multiples of 2^-24 */
        uint32_t m = (uint32_t)lrintf(a * 16777216.f);
        return (uint16_t)(sign | m);
    }
    int e;
    float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    uint32_t mant = (uint32_t)lrintf(m * 2048.f); /* 11 bits incl. the hidden one */
    if (mant == 2048) {
        mant = 1024;
        ++e;
    }
    return (uint16_t)(sign | ((uint32_t)(e + 14) << 10) | (mant & 0x3ff));
}

/* ---- host buffers of fp32, bf16 or fp16 elements ---- */
static inline size_t gu_esize(cudaDataType t) { return t == CUDA_R_32F ? 4 : 2; }

static inline double gu_get(const void *p, size_t i, cudaDataType t)
{
    if (t == CUDA_R_32F)
        return ((const float *)p)[i];
    uint16_t h = ((const uint16_t *)p)[i];
    return t == CUDA_R_16BF ? gu_bf16_to_f32(h) : gu_f16_to_f32(h);
}

static inline void gu_put(void *p, size_t i, cudaDataType t, float v)
{
    if (t == CUDA_R_32F)
        ((float *)p)[i] = v;
    else
        ((uint16_t *)p)[i] = t == CUDA_R_16BF ? gu_f32_to_bf16(v) : gu_f32_to_f16(v);
}

/* n fresh uniform values in [-1, 1), rounded to t */
static inline void gu_fill_random(void *p, size_t n, cudaDataType t)
{
    for (size_t i = 0; i < n; ++i)
        gu_put(p, i, t, (float)gu_uniform());
}

/* ||x - ref|| / ||ref|| over n contiguous elements of type t (absolute when
 * ref is all zero); a NaN in x gives INFINITY. */
static inline double gu_rel_diff(const void *x, const void *ref, size_t n, cudaDataType t)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; ++i) {
        double a = gu_get(x, i, t), r = gu_get(ref, i, t);
        if (a != a)
            return INFINITY;
        num += (a - r) * (a - r);
        den += r * r;
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* GEMMSHIM_SWEEP_MAX_DIM: small shapes only (e.g. under compute-sanitizer) */
static inline void gu_cap_dims(int64_t *m, int64_t *n, int64_t *k, int64_t max_dim)
{
    if (!max_dim)
        return;
    *m = *m > max_dim ? max_dim : *m;
    *n = *n > max_dim ? max_dim : *n;
    *k = *k > max_dim ? max_dim : *k;
}

/* ---- host reference: C = alpha*op(A)*op(B) + beta*C in fp64, column-major ---- */
#include <cblas.h>
static inline void gu_ref_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                               const double *A, int64_t lda, const double *B, int64_t ldb,
                               double beta, double *C, int64_t ldc)
{
    if (k == 0 || alpha == 0.0) { /* reference BLAS: A and B not read */
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i)
                C[i + j * ldc] = beta == 0.0 ? 0.0 : beta * C[i + j * ldc];
        return;
    }
    if (beta == 0.0) /* C may hold NaN: never read it */
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i)
                C[i + j * ldc] = 0.0;
    cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (blasint)m, (blasint)n, (blasint)k, alpha, A, (blasint)lda, B, (blasint)ldb,
                beta, C, (blasint)ldc);
}

/* ||X - R||_F / ||R||_F over the m x n window; absolute when R is all zero.
 * NaN anywhere in X gives INFINITY. */
static inline double gu_rel_err(const double *R, int64_t ldr, const double *X, int64_t ldx,
                                int64_t m, int64_t n)
{
    double num = 0.0, den = 0.0;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
            double x = X[i + j * ldx], r = R[i + j * ldr];
            if (x != x)
                return INFINITY;
            num += (x - r) * (x - r);
            den += r * r;
        }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* cublasGemmEx's type, for calling either side of an A/B comparison */
typedef cublasStatus_t (*gemmex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                    int, int, const void *, const void *, cudaDataType, int,
                                    const void *, cudaDataType, int, const void *, void *,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

/* ---- the real cuBLAS(Lt), past the shim: dlsym on the library's own
 * handle searches only that library's scope, never the preloaded shim ---- */
static inline void *gu_real_sym(const char *lib13, const char *lib12, const char *name)
{
    void *h = dlopen(lib13, RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        h = dlopen(lib12, RTLD_NOW | RTLD_NOLOAD);
    if (!h) {
        fprintf(stderr, "real %s not loaded\n", lib13);
        exit(1);
    }
    void *f = dlsym(h, name);
    if (!f) {
        fprintf(stderr, "real %s has no %s\n", lib13, name);
        exit(1);
    }
    return f;
}

static inline void *gu_real_cublas_sym(const char *name)
{
    return gu_real_sym("libcublas.so.13", "libcublas.so.12", name);
}

static inline void *gu_real_cublaslt_sym(const char *name)
{
    return gu_real_sym("libcublasLt.so.13", "libcublasLt.so.12", name);
}

/* A device buffer of n fresh random elements of type t (never zeros). */
static inline void *gu_dev_random(size_t n, cudaDataType t)
{
    void *h = malloc(n * gu_esize(t)), *d;
    gu_fill_random(h, n, t);
    CUDA_OK(cudaMalloc(&d, n * gu_esize(t)));
    CUDA_OK(cudaMemcpy(d, h, n * gu_esize(t), cudaMemcpyHostToDevice));
    free(h);
    return d;
}

/* Whether this process runs with libgemmshim.so (preloaded or linked): the
 * global cublasGemmEx then lives outside libcublas. */
static inline int gu_shim_present(void)
{
    Dl_info a, b;
    void *global = dlsym(RTLD_DEFAULT, "cublasGemmEx");
    void *real = gu_real_cublas_sym("cublasGemmEx");
    return global && dladdr(global, &a) && dladdr(real, &b) && a.dli_fbase != b.dli_fbase;
}

/* A test that needs the shim and runs without it fails, saying how to run it. */
static inline void gu_require_shim(void)
{
    if (!gu_shim_present()) {
        printf("FAIL: run me with LD_PRELOAD=libgemmshim.so\n");
        exit(1);
    }
}

/* The same for a program that links only cuBLASLt (libcublas may not be
 * loaded at all): the global cublasLtMatmul then lives outside libcublasLt. */
static inline int gu_shim_present_lt(void)
{
    Dl_info a, b;
    void *global = dlsym(RTLD_DEFAULT, "cublasLtMatmul");
    void *real = gu_real_cublaslt_sym("cublasLtMatmul");
    return global && dladdr(global, &a) && dladdr(real, &b) && a.dli_fbase != b.dli_fbase;
}

/* Each line of a list file (bench_ab's and bench_fp8's --shapes) with its
 * "#" comment cut, to line(ctx, path, lineno, text) until one returns
 * nonzero (having said why). 0, or -1 (the file unreadable, or a line
 * refused). */
typedef int (*gu_line_fn)(void *ctx, const char *path, int lineno, char *text);
static inline int gu_each_line(const char *path, gu_line_fn line, void *ctx)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char buf[256];
    int lineno = 0, rc = 0;
    while (!rc && fgets(buf, sizeof buf, f)) {
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = 0;
        rc = line(ctx, path, ++lineno, buf);
    }
    fclose(f);
    return rc ? -1 : 0;
}

#endif /* GS_GPU_UTIL_H */
