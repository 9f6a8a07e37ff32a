/* A recording fake of libcublas.so.13 / libcublasLt.so.13 for CPU-only tests.
 *
 * Built twice from this file: FAKE_LIB_CUBLAS defines the cuBLAS half,
 * FAKE_LIB_CUBLASLT the cuBLASLt half. Every entry point of GS_ENTRY_POINTS
 * is generated from the X-macro list: it appends one line to the file named
 * by FAKE_CUBLAS_RECORD,
 *     <name> <param>=<hex bytes> <param>=<hex bytes> ...
 * (each parameter's bytes in memory order), and returns the status in
 * FAKE_CUBLAS_RETURN (default 0). A matmul descriptor or matrix layout the
 * fake created is followed by what it holds then, so tests see the
 * descriptors the library received: <param>.attrs=<attribute>:<hex
 * bytes>,... (every attribute set or defaulted, in attribute order). The handle functions keep a small state
 * per handle, like cuBLAS; the getters the shim uses (GS_HELPER_FUNCS) fail
 * with NOT_INITIALIZED on a handle the fake did not create. */
#include <cublas_api.h>
#include <cublasLt.h>
#include <stdint.h>

#include "fake_foreach.h"
#include "fake_lt_defaults.h"
#include "gs_entry_points.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

/* ---- the record ---- */

typedef struct rec {
    char buf[4096];
    size_t len;
} rec_t;

static void rec_put(rec_t *r, const char *s)
{
    size_t n = strlen(s);
    if (r->len + n < sizeof r->buf) {
        memcpy(r->buf + r->len, s, n);
        r->len += n;
    }
}

/* n bytes in hex, in memory order */
static void rec_hex(rec_t *r, const void *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    char tmp[3] = {0};
    for (size_t i = 0; i < n; ++i) {
        unsigned char b = ((const unsigned char *)p)[i];
        tmp[0] = hex[b >> 4];
        tmp[1] = hex[b & 15];
        rec_put(r, tmp);
    }
}

static void rec_arg(rec_t *r, const char *name, const void *p, size_t n)
{
    rec_put(r, " ");
    rec_put(r, name);
    rec_put(r, "=");
    rec_hex(r, p, n);
}

/* One write(2) per line with O_APPEND: lines never interleave. */
static void rec_end(rec_t *r)
{
    const char *path = getenv("FAKE_CUBLAS_RECORD");
    rec_put(r, "\n");
    if (!path || !*path)
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "fake cublas: cannot open FAKE_CUBLAS_RECORD=%s\n", path);
        return;
    }
    if (write(fd, r->buf, r->len) != (ssize_t)r->len)
        fprintf(stderr, "fake cublas: short write to %s\n", path);
    close(fd);
}

static cublasStatus_t fake_status(void)
{
    const char *v = getenv("FAKE_CUBLAS_RETURN");
    return v && *v ? (cublasStatus_t)strtol(v, NULL, 0) : CUBLAS_STATUS_SUCCESS;
}

/* ---- the entry points, generated ---- */

/* A matmul descriptor or layout argument: its pointer, then its
 * attributes (the cuBLASLt half; the cuBLAS half takes none). */
static void rec_attrs(rec_t *r, const char *name, const void *bag);

static void rec_bag_arg(rec_t *r, const char *name, const void *p, size_t n)
{
    rec_arg(r, name, p, n);
    const void *bag;
    memcpy(&bag, p, sizeof bag);
    rec_attrs(r, name, bag);
}

#define FAKE_REC_ARG(x)                                                            \
    {                                                                              \
        __typeof__(x) fake_v_ = (x);                                               \
        _Generic((x), cublasLtMatmulDesc_t: rec_bag_arg,                           \
                 cublasLtMatrixLayout_t: rec_bag_arg, default: rec_arg)(           \
            &fake_r_, #x, &fake_v_, sizeof fake_v_);                               \
    }

#define FAKE_DEFINE(name, params, args)                  \
    FAKE_EXPORT cublasStatus_t name params               \
    {                                                    \
        rec_t fake_r_ = {.len = 0};                      \
        rec_put(&fake_r_, #name);                        \
        FAKE_FOR_EACH_ARGS(FAKE_REC_ARG, args)           \
        rec_end(&fake_r_);                               \
        return fake_status();                            \
    }
#define FAKE_NOTHING(name, params, args)

#if defined(FAKE_LIB_CUBLAS)
#define FAKE_IN_CUBLAS FAKE_DEFINE
#define FAKE_IN_CUBLASLT FAKE_NOTHING
#elif defined(FAKE_LIB_CUBLASLT)
#define FAKE_IN_CUBLAS FAKE_NOTHING
#define FAKE_IN_CUBLASLT FAKE_DEFINE
#else
#error "define FAKE_LIB_CUBLAS or FAKE_LIB_CUBLASLT"
#endif

#define FAKE_ENTRY(lib, name, params, args) FAKE_IN_##lib(name, params, args)
GS_ENTRY_POINTS(FAKE_ENTRY)

/* ---- handles ---- */

#if defined(FAKE_LIB_CUBLAS)

static void rec_attrs(rec_t *r, const char *name, const void *bag)
{
    (void)r;
    (void)name;
    (void)bag;
}

typedef struct fake_handle {
    cudaStream_t stream;
    cublasPointerMode_t pointer_mode;
    cublasMath_t math_mode;
    int sm_count_target;
} fake_handle_t;

#define FAKE_MAX_HANDLES 64
static fake_handle_t *handles[FAKE_MAX_HANDLES];
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;

/* The fake's own state for h, or NULL for a handle it did not create (never
 * dereferenced: tests pass made-up handle values). */
static fake_handle_t *find(cublasHandle_t h)
{
    fake_handle_t *found = NULL;
    pthread_mutex_lock(&handles_lock);
    for (int i = 0; i < FAKE_MAX_HANDLES && h; ++i)
        if (handles[i] == (fake_handle_t *)h)
            found = handles[i];
    pthread_mutex_unlock(&handles_lock);
    return found;
}

FAKE_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    fake_handle_t *f = calloc(1, sizeof *f);
    if (!f)
        return CUBLAS_STATUS_ALLOC_FAILED;
    f->pointer_mode = CUBLAS_POINTER_MODE_HOST;
    f->math_mode = CUBLAS_DEFAULT_MATH;
    pthread_mutex_lock(&handles_lock);
    int slot = -1;
    for (int i = 0; i < FAKE_MAX_HANDLES && slot < 0; ++i)
        if (!handles[i])
            slot = i;
    if (slot >= 0)
        handles[slot] = f;
    pthread_mutex_unlock(&handles_lock);
    if (slot < 0) {
        free(f);
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    *handle = (cublasHandle_t)f;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    int found = 0;
    pthread_mutex_lock(&handles_lock);
    for (int i = 0; i < FAKE_MAX_HANDLES; ++i) {
        if (handle && handles[i] == (fake_handle_t *)handle) {
            handles[i] = NULL;
            found = 1;
        }
    }
    pthread_mutex_unlock(&handles_lock);
    if (!found)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

#define FAKE_SETTER(fn, type, field)                                  \
    FAKE_EXPORT cublasStatus_t fn(cublasHandle_t handle, type value)  \
    {                                                                 \
        fake_handle_t *f = find(handle);                              \
        if (!f)                                                       \
            return CUBLAS_STATUS_NOT_INITIALIZED;                     \
        f->field = value;                                             \
        return CUBLAS_STATUS_SUCCESS;                                 \
    }
#define FAKE_GETTER(fn, type, field)                                  \
    FAKE_EXPORT cublasStatus_t fn(cublasHandle_t handle, type *value) \
    {                                                                 \
        fake_handle_t *f = find(handle);                              \
        if (!f)                                                       \
            return CUBLAS_STATUS_NOT_INITIALIZED;                     \
        if (!value)                                                   \
            return CUBLAS_STATUS_INVALID_VALUE;                       \
        *value = f->field;                                            \
        return CUBLAS_STATUS_SUCCESS;                                 \
    }

FAKE_SETTER(cublasSetStream_v2, cudaStream_t, stream)
FAKE_GETTER(cublasGetStream_v2, cudaStream_t, stream)
FAKE_SETTER(cublasSetPointerMode_v2, cublasPointerMode_t, pointer_mode)
FAKE_GETTER(cublasGetPointerMode_v2, cublasPointerMode_t, pointer_mode)
FAKE_SETTER(cublasSetMathMode, cublasMath_t, math_mode)
FAKE_GETTER(cublasGetMathMode, cublasMath_t, math_mode)
FAKE_SETTER(cublasSetSmCountTarget, int, sm_count_target)
FAKE_GETTER(cublasGetSmCountTarget, int, sm_count_target)

/* cuBLAS 13.1.0, as the tune cache's validator reads it */
FAKE_EXPORT cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
    if (!value)
        return CUBLAS_STATUS_INVALID_VALUE;
    *value = type == MAJOR_VERSION ? 13 : type == MINOR_VERSION ? 1 : 0;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    if (!find(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!version)
        return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION;
    return CUBLAS_STATUS_SUCCESS;
}

/* Every helper the shim looks up must exist here: this table references
 * each one, and the library links with --no-undefined. */
#define FAKE_HELPER_REF_CUBLAS(name) (void (*)(void))name,
#define FAKE_HELPER_REF_CUBLASLT(name)
#define FAKE_HELPER_REF(lib, name, params, args) FAKE_HELPER_REF_##lib(name)
__attribute__((used)) static void (*const fake_helpers[])(void) = {
    GS_HELPER_FUNCS(FAKE_HELPER_REF)};

#else /* FAKE_LIB_CUBLASLT */

typedef struct fake_lt_handle {
    int magic;
} fake_lt_handle_t;

FAKE_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    fake_lt_handle_t *f = calloc(1, sizeof *f);
    if (!f)
        return CUBLAS_STATUS_ALLOC_FAILED;
    f->magic = 0x4c74;
    *handle = (cublasLtHandle_t)f;
    return CUBLAS_STATUS_SUCCESS;
}

/* Matmul and layout descriptors: attribute bags with cuBLASLt's defaults,
 * so CPU tests can describe cublasLtMatmul calls the way applications do. */
#define FAKE_ATTRS 64
typedef struct fake_attrs {
    int magic;
    unsigned char val[FAKE_ATTRS][8];
    size_t size[FAKE_ATTRS];
} fake_attrs_t;

/* Descriptors the fake created: others (the forwarding test's made-up
 * pointers) are answered NOT_INITIALIZED, never dereferenced. */
#define FAKE_MAX_DESCS 256
static fake_attrs_t *descs[FAKE_MAX_DESCS];
static pthread_mutex_t descs_lock = PTHREAD_MUTEX_INITIALIZER;

static int desc_track(fake_attrs_t *f, int add)
{
    int found = 0;
    pthread_mutex_lock(&descs_lock);
    for (int i = 0; i < FAKE_MAX_DESCS && !found; ++i) {
        if (add && !descs[i]) {
            descs[i] = f;
            found = 1;
        } else if (!add && descs[i] == f && f) {
            found = 1;
        }
    }
    pthread_mutex_unlock(&descs_lock);
    return found;
}

static void desc_untrack(fake_attrs_t *f)
{
    pthread_mutex_lock(&descs_lock);
    for (int i = 0; i < FAKE_MAX_DESCS; ++i)
        if (descs[i] == f)
            descs[i] = NULL;
    pthread_mutex_unlock(&descs_lock);
}

static void attr_put(fake_attrs_t *f, int attr, const void *v, size_t n)
{
    memset(f->val[attr], 0, 8);
    memcpy(f->val[attr], v, n);
    f->size[attr] = n;
}

/* attr_put for fake_lt_defaults.h */
static void attr_put_any(void *f, int attr, const void *v, size_t n)
{
    attr_put(f, attr, v, n);
}

static cublasStatus_t attr_set(fake_attrs_t *f, int magic, int attr, const void *buf, size_t n)
{
    if (!desc_track(f, 0) || f->magic != magic)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (attr < 0 || attr >= FAKE_ATTRS || !buf || !n || n > 8 ||
        (f->size[attr] && f->size[attr] != n))
        return CUBLAS_STATUS_INVALID_VALUE;
    attr_put(f, attr, buf, n);
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t attr_get(const fake_attrs_t *f, int magic, int attr, void *buf, size_t n,
                               size_t *written)
{
    if (!desc_track((fake_attrs_t *)f, 0) || f->magic != magic)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (attr < 0 || attr >= FAKE_ATTRS || !f->size[attr] || n != f->size[attr] || !buf)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, f->val[attr], n);
    if (written)
        *written = n;
    return CUBLAS_STATUS_SUCCESS;
}

#define DESC_MAGIC 0x4d44
#define LAYOUT_MAGIC 0x4c59

static void rec_attrs(rec_t *r, const char *name, const void *bag)
{
    const fake_attrs_t *f = (const fake_attrs_t *)bag;
    if (!desc_track((fake_attrs_t *)f, 0) || (f->magic != DESC_MAGIC && f->magic != LAYOUT_MAGIC))
        return; /* not one of ours (the forwarding test's made-up values) */
    char key[64];
    snprintf(key, sizeof key, "%s.attrs", name);
    rec_put(r, " ");
    rec_put(r, key);
    rec_put(r, "=");
    for (int a = 0; a < FAKE_ATTRS; ++a) {
        if (!f->size[a])
            continue;
        char id[16];
        snprintf(id, sizeof id, "%d:", a);
        rec_put(r, id);
        rec_hex(r, f->val[a], f->size[a]);
        rec_put(r, ",");
    }
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d,
                                                    cublasComputeType_t compute,
                                                    cudaDataType_t scale)
{
    fake_attrs_t *f = d ? calloc(1, sizeof *f) : NULL;
    if (!f)
        return CUBLAS_STATUS_INVALID_VALUE;
    f->magic = DESC_MAGIC;
    lt_default_desc(attr_put_any, f, (int32_t)compute, (int32_t)scale);
    desc_track(f, 1);
    *d = (cublasLtMatmulDesc_t)f;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    desc_untrack((fake_attrs_t *)d);
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                                          cublasLtMatmulDescAttributes_t a,
                                                          const void *buf, size_t n)
{
    return attr_set((fake_attrs_t *)d, DESC_MAGIC, (int)a, buf, n);
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                                          cublasLtMatmulDescAttributes_t a,
                                                          void *buf, size_t n, size_t *written)
{
    return attr_get((const fake_attrs_t *)d, DESC_MAGIC, (int)a, buf, n, written);
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType t,
                                                      uint64_t rows, uint64_t cols, int64_t ld)
{
    fake_attrs_t *f = l ? calloc(1, sizeof *f) : NULL;
    if (!f)
        return CUBLAS_STATUS_INVALID_VALUE;
    f->magic = LAYOUT_MAGIC;
    lt_default_layout(attr_put_any, f, (uint32_t)t, rows, cols, ld);
    desc_track(f, 1);
    *l = (cublasLtMatrixLayout_t)f;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    desc_untrack((fake_attrs_t *)l);
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                            cublasLtMatrixLayoutAttribute_t a,
                                                            const void *buf, size_t n)
{
    return attr_set((fake_attrs_t *)l, LAYOUT_MAGIC, (int)a, buf, n);
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                            cublasLtMatrixLayoutAttribute_t a,
                                                            void *buf, size_t n,
                                                            size_t *written)
{
    return attr_get((const fake_attrs_t *)l, LAYOUT_MAGIC, (int)a, buf, n, written);
}

#define FAKE_LT_HELPER_REF_CUBLAS(name)
#define FAKE_LT_HELPER_REF_CUBLASLT(name) (void (*)(void))name,
#define FAKE_LT_HELPER_REF(lib, name, params, args) FAKE_LT_HELPER_REF_##lib(name)
__attribute__((used)) static void (*const fake_lt_helpers[])(void) = {
    GS_HELPER_FUNCS(FAKE_LT_HELPER_REF)};

FAKE_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle)
{
    fake_lt_handle_t *f = (fake_lt_handle_t *)handle;
    if (!f || f->magic != 0x4c74)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    f->magic = 0;
    free(f);
    return CUBLAS_STATUS_SUCCESS;
}


/* ---- the matmul heuristic, for the tuner's CPU tests ----
 * Preferences are attribute bags. The heuristic lists FAKE_LT_ALGOS
 * (default 3) algorithms: algorithm i has id 10 + i, tile 20 + i, stages
 * 30 + i, split-K 1 + i and needs i KiB of workspace; a request with a
 * workspace cap below that gets fewer. AlgoCheck accepts ids 10..99. An
 * algorithm's configuration lives in its data words. */
#define PREF_MAGIC 0x5052

FAKE_EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
    fake_attrs_t *f = pref ? calloc(1, sizeof *f) : NULL;
    if (!f)
        return CUBLAS_STATUS_INVALID_VALUE;
    f->magic = PREF_MAGIC;
    desc_track(f, 1);
    *pref = (cublasLtMatmulPreference_t)f;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
    fake_attrs_t *f = (fake_attrs_t *)pref;
    if (!f || f->magic != PREF_MAGIC)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    desc_untrack(f);
    free(f);
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t a, const void *buf,
    size_t n)
{
    return attr_set((fake_attrs_t *)pref, PREF_MAGIC, (int)a, buf, n);
}

static int algo_slot(int attr)
{
    return attr >= 0 && attr <= 7 ? attr : attr == 8 ? 7 : -1;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulAlgoConfigSetAttribute(
    cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t a, const void *buf, size_t n)
{
    const int s = algo_slot((int)a);
    if (!algo || !buf || s < 0 || n > 4)
        return CUBLAS_STATUS_INVALID_VALUE;
    uint32_t v = 0;
    memcpy(&v, buf, n);
    if (a == CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID)
        algo->data[7] = (algo->data[7] & ~0xffffull) | (v & 0xffff);
    else if (a == CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)
        algo->data[7] = (algo->data[7] & 0xffffull) | ((uint64_t)(v & 0xffff) << 16);
    else
        algo->data[s] = v;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(
    const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t a, void *buf, size_t n,
    size_t *written)
{
    const int s = algo_slot((int)a);
    const size_t want = a == CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID ||
                                a == CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID
                            ? 2
                            : 4;
    if (!algo || !buf || s < 0 || n != want)
        return CUBLAS_STATUS_INVALID_VALUE;
    uint32_t v = (uint32_t)algo->data[s];
    if (a == CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID)
        v = (uint32_t)(algo->data[7] & 0xffff);
    else if (a == CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)
        v = (uint32_t)((algo->data[7] >> 16) & 0xffff);
    memcpy(buf, &v, n);
    if (written)
        *written = n;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulAlgoInit(cublasLtHandle_t h, cublasComputeType_t compute,
                                                  cudaDataType_t scale, cudaDataType_t at,
                                                  cudaDataType_t bt, cudaDataType_t ct,
                                                  cudaDataType_t dt, int id,
                                                  cublasLtMatmulAlgo_t *algo)
{
    (void)compute, (void)scale, (void)at, (void)bt, (void)ct, (void)dt;
    if (!h || !algo)
        return CUBLAS_STATUS_INVALID_VALUE;
    memset(algo, 0, sizeof *algo);
    algo->data[0] = (uint64_t)id;
    algo->data[2] = 1;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulAlgoCheck(cublasLtHandle_t h, cublasLtMatmulDesc_t op,
                                                   cublasLtMatrixLayout_t a,
                                                   cublasLtMatrixLayout_t b,
                                                   cublasLtMatrixLayout_t c,
                                                   cublasLtMatrixLayout_t d,
                                                   const cublasLtMatmulAlgo_t *algo,
                                                   cublasLtMatmulHeuristicResult_t *result)
{
    (void)op, (void)a, (void)b, (void)c, (void)d;
    if (!h || !algo || !result)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (algo->data[0] < 10 || algo->data[0] > 99)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    memset(result, 0, sizeof *result);
    result->algo = *algo;
    result->workspaceSize = (algo->data[0] - 10) * 1024;
    result->wavesCount = 1.0f;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t h, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t *results,
    int *returned)
{
    (void)op, (void)a, (void)b, (void)c, (void)d;
    if (!h || !pref || !results || !returned || requested < 1)
        return CUBLAS_STATUS_INVALID_VALUE;
    const char *env = getenv("FAKE_LT_ALGOS");
    const int have = env ? atoi(env) : 3;
    uint64_t cap = ~0ull;
    fake_attrs_t *f = (fake_attrs_t *)pref;
    if (f->size[CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES] == 8)
        memcpy(&cap, f->val[CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES], 8);
    int n = 0;
    for (int i = 0; i < have && n < requested; ++i) {
        if ((uint64_t)i * 1024 > cap)
            break;
        memset(&results[n], 0, sizeof results[n]);
        cublasLtMatmulAlgo_t *al = &results[n].algo;
        al->data[0] = 10 + (uint64_t)i;
        al->data[1] = 20 + (uint64_t)i;
        al->data[2] = 1 + (uint64_t)i;
        al->data[6] = 30 + (uint64_t)i;
        results[n].workspaceSize = (size_t)i * 1024;
        results[n].wavesCount = 1.0f;
        results[n].state = CUBLAS_STATUS_SUCCESS;
        ++n;
    }
    *returned = n;
    return n ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

FAKE_EXPORT size_t cublasLtGetVersion(void)
{
    return 130100;
}
#endif
