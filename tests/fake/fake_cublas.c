/* A recording fake of libcublas.so.13 / libcublasLt.so.13 for CPU-only tests.
 *
 * Built twice from this file: FAKE_LIB_CUBLAS defines the cuBLAS half,
 * FAKE_LIB_CUBLASLT the cuBLASLt half. Every entry point of GS_ENTRY_POINTS
 * is generated from the X-macro list: it appends one line to the file named
 * by FAKE_CUBLAS_RECORD,
 *     <name> <param>=<hex bytes> <param>=<hex bytes> ...
 * (each parameter's bytes in memory order), and returns the status in
 * FAKE_CUBLAS_RETURN (default 0). The handle functions keep a small state
 * per handle, like cuBLAS; the getters the shim uses (GS_HELPER_FUNCS) fail
 * with NOT_INITIALIZED on a handle the fake did not create. */
#include <cublas_api.h>
#include <cublasLt.h>
#include <stdint.h>

#include "fake_foreach.h"
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

static void rec_arg(rec_t *r, const char *name, const void *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    char tmp[3] = {0};
    rec_put(r, " ");
    rec_put(r, name);
    rec_put(r, "=");
    for (size_t i = 0; i < n; ++i) {
        unsigned char b = ((const unsigned char *)p)[i];
        tmp[0] = hex[b >> 4];
        tmp[1] = hex[b & 15];
        rec_put(r, tmp);
    }
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

#define FAKE_REC_ARG(x)                      \
    {                                        \
        __typeof__(x) fake_v_ = (x);         \
        rec_arg(&fake_r_, #x, &fake_v_, sizeof fake_v_); \
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

typedef struct fake_handle {
    cudaStream_t stream;
    cublasPointerMode_t pointer_mode;
    cublasMath_t math_mode;
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
#define FAKE_HELPER_REF(lib, name, params, args) (void (*)(void))name,
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

FAKE_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle)
{
    fake_lt_handle_t *f = (fake_lt_handle_t *)handle;
    if (!f || f->magic != 0x4c74)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    f->magic = 0;
    free(f);
    return CUBLAS_STATUS_SUCCESS;
}

#endif
