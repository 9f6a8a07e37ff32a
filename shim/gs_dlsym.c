/* Opt-in interception of dlsym (GEMMSHIM_DLSYM=1).
 *
 * Libraries that dlopen cuBLAS(Lt) themselves and look its functions up with
 * dlsym on their own handle (XLA does this for cuBLASLt) never reach a
 * preloaded definition. With the switch on, a look-up of an intercepted name
 * on a concrete handle is answered with the shim's entry point when the
 * handle's definition is the very function the shim forwards to (the same
 * library copy); everything else gets exactly what the system's dlsym gives.
 *
 * Pass-through must keep RTLD_NEXT meaning "after the caller": glibc finds
 * the caller from dlsym's return address, so every pass-through below is a
 * tail call (a jump: the caller's return address stays on the stack). The
 * CPU test suite checks it (tests/bats/46-dlsym.bats). */
#define _GNU_SOURCE
#include "gs_dlsym.h"
#include "gs_cublas.h"
#include "gs_entry_points.h"
#include "gs_log.h"
#include "gs_real.h"
#include "gs_state.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef void *(*dlsym_fn)(void *, const char *);

static dlsym_fn real_dlsym;

/* glibc >= 2.34 versions dlsym GLIBC_2.34 (in libc); older ones
 * GLIBC_2.2.5 (x86-64) / GLIBC_2.17 (aarch64) in libdl. */
static dlsym_fn find_real(void)
{
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
    dlsym_fn f = real_dlsym;
    for (size_t i = 0; !f && i < sizeof versions / sizeof versions[0]; ++i)
        f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    if (f)
        __atomic_store_n(&real_dlsym, f, __ATOMIC_RELEASE);
    return f;
}

void *gs_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = __atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE);
    if (!f && !(f = find_real()))
        return NULL;
    return f(handle, name);
}

typedef struct intercepted {
    const char *name;
    gs_lib_t lib;
    void *ours;
    int said;
} intercepted_t;

#define GS_DLSYM_ENTRY(lib, name, params, args) {#name, GS_LIB_##lib, (void *)name, 0},
static intercepted_t entries[] = {GS_ENTRY_POINTS(GS_DLSYM_ENTRY)};

/* The real table's slot for entry i (the X-macro list's order). */
static void *real_slot(size_t i)
{
    size_t j = 0;
#define GS_DLSYM_SLOT(lib, name, params, args)                     \
    if (j++ == i)                                                  \
        return (void *)gs_real(GS_LIB_##lib)->name;
    GS_ENTRY_POINTS(GS_DLSYM_SLOT)
#undef GS_DLSYM_SLOT
    return NULL;
}

/* Only a switch read once; the rest of the configuration is parsed when a
 * name matches (dlsym runs early, often inside other libraries' start-up). */
static int switch_on(void)
{
    static int on = -1;
    int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
    if (v < 0) {
        const char *e = getenv("GEMMSHIM_DLSYM");
        v = e && *e && strcmp(e, "0"); /* a bad value: gs_cfg() reports it */
        __atomic_store_n(&on, v, __ATOMIC_RELAXED);
    }
    return v;
}

static void *answer(void *handle, const char *name, void *found)
{
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; ++i) {
        intercepted_t *e = &entries[i];
        if (strcmp(e->name, name))
            continue;
        if (!gs_cfg()->intercept_dlsym || found == e->ours)
            return found;
        void *real = real_slot(i);
        int first = !__atomic_exchange_n(&e->said, 1, __ATOMIC_ACQ_REL);
        if (real != found) {
            if (first)
                gs_log_line("dlsym(%p, %s): not the copy of the library the shim forwards to; "
                            "not intercepted", handle, name);
            return found;
        }
        if (first)
            gs_log_line("dlsym(%p, %s) answered with the shim's entry point (GEMMSHIM_DLSYM=1)",
                        handle, name);
        return e->ours;
    }
    return found;
}

__attribute__((visibility("default"))) void *dlsym(void *handle, const char *name)
{
    dlsym_fn f = __atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE);
    if (!f && !(f = find_real()))
        return NULL;
    if (!switch_on() || handle == RTLD_NEXT || handle == RTLD_DEFAULT ||
        strncmp(name, "cublas", 6))
        return f(handle, name); /* a tail call: see the top of the file */
    void *found = f(handle, name);
    return found ? answer(handle, name, found) : NULL;
}
