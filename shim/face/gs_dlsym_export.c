/* The exported dlsym: GEMMSHIM_DLSYM=1 answers look-ups of intercepted
 * names on a cuBLAS(Lt) handle with the shim's entry points; see
 * shim/base/gs_dlsym.c for why every pass-through is a tail call. */
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

extern char **environ;

/* Only a switch read once; the rest of the configuration is parsed when a
 * name matches (dlsym runs early, often inside other libraries' start-up).
 * A sanitizer runtime's start-up runs from the program's preinit array,
 * before libc has set the environment: a look-up then is answered as off
 * and the switch is read at a later one. */
GS_NO_SANITIZE static int switch_on(void)
{
    static int on = -1;
    int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
    if (v < 0) {
        if (!environ)
            return 0;
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

__attribute__((visibility("default"))) GS_NO_SANITIZE void *dlsym(void *handle, const char *name)
{
    gs_dlsym_fn f = gs_find_real_dlsym();
    if (!f)
        return NULL;
    if (!switch_on() || handle == RTLD_NEXT || handle == RTLD_DEFAULT ||
        strncmp(name, "cublas", 6))
        return f(handle, name); /* a tail call: see the top of the file */
    void *found = f(handle, name);
    return found ? answer(handle, name, found) : NULL;
}
