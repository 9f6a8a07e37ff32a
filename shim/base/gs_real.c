/* Finding the real cuBLAS / cuBLASLt.
 *
 * Order, per library:
 *   1. GEMMSHIM_CUBLAS / GEMMSHIM_CUBLASLT name a file: open that.
 *   2. The next definition in the global scope (dlsym(RTLD_NEXT)): the
 *      application linked cuBLAS directly.
 *   3. A copy already loaded in a local scope, which RTLD_NEXT cannot see
 *      (Python imports PyTorch with RTLD_LOCAL): walk the loaded objects
 *      with dl_iterate_phdr and reopen the match with RTLD_NOLOAD.
 *   4. Not loaded yet: open libcublas.so.13, then .12, then the bare name.
 * Every looked-up address is checked with dladdr: a function that lives in
 * the shim itself is rejected (forwarding to ourselves would recurse). */
#define _GNU_SOURCE
#include "gs_real.h"
#include "gs_dlsym.h"
#include "gs_sink.h"
#include "gs_state.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lib_desc {
    const char *stem;        /* basename prefix, up to and including ".so" */
    const char *probe;       /* a function every version exports */
    const char *fallbacks[3];
} lib_desc_t;

static const lib_desc_t libs[GS_LIB_COUNT] = {
    [GS_LIB_CUBLAS] = {"libcublas.so", "cublasGemmEx",
                       {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}},
    [GS_LIB_CUBLASLT] = {"libcublasLt.so", "cublasLtMatmul",
                         {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}},
};

static gs_real_table_t table[GS_LIB_COUNT];
static char lib_path[GS_LIB_COUNT][GS_PATH_MAX];
static void *lib_handle[GS_LIB_COUNT];
static pthread_once_t once[GS_LIB_COUNT] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};

static void *self_base(void)
{
    static Dl_info self;
    if (!self.dli_fbase)
        dladdr((void *)&self_base, &self);
    return self.dli_fbase;
}

static int is_self(const void *addr)
{
    Dl_info info;
    return addr && dladdr(addr, &info) && info.dli_fbase == self_base();
}

/* Reopen an already loaded object by path: a handle on its local scope. */
static void *reopen_loaded(const char *path)
{
    return dlopen(path, RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
}

static void *via_rtld_next(const lib_desc_t *d)
{
    void *fn = gs_real_dlsym(RTLD_NEXT, d->probe);
    Dl_info info;
    if (!fn || is_self(fn) || !dladdr(fn, &info) || !info.dli_fname)
        return NULL;
    return reopen_loaded(info.dli_fname);
}

struct phdr_search {
    const char *stem;
    char path[GS_PATH_MAX];
};

static int match_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct phdr_search *s = arg;
    const char *name = info->dlpi_name;
    if (!name || !*name || (void *)info->dlpi_addr == self_base())
        return 0;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    size_t n = strlen(s->stem);
    /* "libcublas.so" or "libcublas.so.13..."; not "libcublasLt.so" */
    if (strncmp(base, s->stem, n) || (base[n] != '\0' && base[n] != '.'))
        return 0;
    if (strlen(name) >= sizeof s->path)
        return 0;
    strcpy(s->path, name);
    return 1;
}

static void *via_loaded_objects(const lib_desc_t *d)
{
    struct phdr_search s = {.stem = d->stem, .path = ""};
    if (!dl_iterate_phdr(match_loaded, &s))
        return NULL;
    return reopen_loaded(s.path);
}

/* A library we opened is the real one only if its probe function is not
 * the shim's own (a path or a symlink may point back at libgemmshim.so). */
static void *keep_if_real(void *h, const lib_desc_t *d, const char *name)
{
    if (!h)
        return NULL;
    void *probe = gs_real_dlsym(h, d->probe);
    if (probe && !is_self(probe))
        return h;
    gs_msg("refusing %s: %s", name, probe ? "it is the shim itself" : "no cuBLAS in it");
    dlclose(h);
    return NULL;
}

static void *via_default_names(const lib_desc_t *d)
{
    for (int i = 0; i < 3; ++i) {
        void *h = keep_if_real(dlopen(d->fallbacks[i], RTLD_NOW | RTLD_LOCAL), d,
                               d->fallbacks[i]);
        if (h)
            return h;
    }
    return NULL;
}

static void *open_real(gs_lib_t lib, const char **how)
{
    const lib_desc_t *d = &libs[lib];
    const gs_config_t *c = gs_cfg();
    const char *env = lib == GS_LIB_CUBLAS ? c->cublas_path : c->cublaslt_path;
    void *h;
    if (env[0]) {
        /* A value that cannot be used is a bad value: one line, and every
         * call passes through, to the cuBLAS the search below finds (the
         * one the application runs on without the shim). */
        *how = "environment";
        h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        const char *err = h ? NULL : dlerror();
        void *probe = h ? gs_real_dlsym(h, d->probe) : NULL;
        if (probe && !is_self(probe))
            return h;
        gs_msg("refusing %s: %s (named by %s); the shim passes every call to the %s it finds "
               "itself", env, err ? err : probe ? "it is the shim itself" : "no cuBLAS in it",
               lib == GS_LIB_CUBLAS ? "GEMMSHIM_CUBLAS" : "GEMMSHIM_CUBLASLT", d->stem);
        if (h)
            dlclose(h);
        gs_set_mode(GS_MODE_OFF);
    }
    *how = "global scope";
    if ((h = via_rtld_next(d)))
        return h;
    *how = "loaded in a local scope";
    if ((h = via_loaded_objects(d)))
        return h;
    *how = "opened by the shim";
    return via_default_names(d);
}

static void *lookup(void *h, const char *name)
{
    void *fn = h ? gs_real_dlsym(h, name) : NULL;
    if (fn && is_self(fn)) {
        gs_msg("refusing %s: it resolves to the shim itself", name);
        return NULL;
    }
    return fn;
}

static void resolve(gs_lib_t lib)
{
    const char *how = "";
    void *h = open_real(lib, &how);
    lib_handle[lib] = h;
    if (h) {
        Dl_info info;
        void *probe = gs_real_dlsym(h, libs[lib].probe);
        if (probe && dladdr(probe, &info) && info.dli_fname &&
            strlen(info.dli_fname) < GS_PATH_MAX)
            strcpy(lib_path[lib], info.dli_fname);
        gs_log_line("real %s: %s (%s)", libs[lib].stem,
                    lib_path[lib][0] ? lib_path[lib] : "?", how);
    } else {
        gs_msg("cannot find the real %s (set GEMMSHIM_CUBLAS%s)", libs[lib].stem,
               lib == GS_LIB_CUBLAS ? "" : "LT");
    }
    gs_real_table_t *t = &table[lib];
    int missing = !h;
#define GS_RESOLVE(l, name, params, args)                                    \
    if (GS_LIB_##l == lib) {                                                 \
        *(void **)&t->name = lookup(h, #name);                              \
        if (h && !t->name) {                                                 \
            gs_msg("real %s has no %s", libs[lib].stem, #name);             \
            ++missing;                                                       \
        }                                                                    \
    }
    GS_ENTRY_POINTS(GS_RESOLVE)
    GS_HELPER_FUNCS(GS_RESOLVE)
#undef GS_RESOLVE
    if (gs_cfg()->strict && missing) {
        gs_msg("GEMMSHIM_STRICT=1: aborting");
        abort();
    }
}

static void resolve_cublas(void) { resolve(GS_LIB_CUBLAS); }
static void resolve_cublaslt(void) { resolve(GS_LIB_CUBLASLT); }

const gs_real_table_t *gs_real(gs_lib_t lib)
{
    pthread_once(&once[lib], lib == GS_LIB_CUBLAS ? resolve_cublas : resolve_cublaslt);
    return &table[lib];
}

const char *gs_real_path(gs_lib_t lib)
{
    gs_real(lib);
    return lib_path[lib][0] ? lib_path[lib] : NULL;
}

cublasStatus_t gs_real_missing(const char *name)
{
    gs_msg("no real %s to forward to", name);
    if (gs_cfg()->strict) {
        gs_msg("GEMMSHIM_STRICT=1: aborting");
        abort();
    }
    return CUBLAS_STATUS_NOT_INITIALIZED;
}

void *gs_real_symbol(gs_lib_t lib, const char *name)
{
    gs_real(lib); /* resolved once */
    return lookup(lib_handle[lib], name);
}
