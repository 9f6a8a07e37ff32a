/* The system's dlsym, for the shim's own look-ups and for the interposer
 * (shim/face/gs_dlsym_export.c), found by symbol version past the shim.
 *
 * About the interposer: opt-in interception of dlsym (GEMMSHIM_DLSYM=1).
 *
 * Libraries that dlopen cuBLAS(Lt) themselves and look its functions up with
 * dlsym on their own handle (XLA does this for cuBLASLt) never reach a
 * preloaded definition. With the switch on, a look-up of an intercepted name
 * on a concrete handle is answered with the shim's entry point when the
 * handle's definition is the very function the shim forwards to (the same
 * library copy); everything else gets exactly what the system's dlsym gives.
 *
 * Pass-through must keep RTLD_NEXT meaning "after the caller": glibc finds
 * the caller from dlsym's return address, so every pass-through there is a
 * tail call (a jump: the caller's return address stays on the stack). The
 * CPU test suite checks it (tests/bats/46-dlsym.bats). The interposer lives
 * in its own object so that programs linking the static core (tests) never
 * pull it in by referring to gs_real_dlsym. */
#define _GNU_SOURCE
#include "gs_dlsym.h"

#include <dlfcn.h>
#include <stddef.h>

static gs_dlsym_fn real_dlsym;

/* glibc >= 2.34 versions dlsym GLIBC_2.34 (in libc); older ones
 * GLIBC_2.2.5 (x86-64) / GLIBC_2.17 (aarch64) in libdl. */
GS_NO_SANITIZE gs_dlsym_fn gs_find_real_dlsym(void)
{
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
    gs_dlsym_fn f = __atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE);
    for (size_t i = 0; !f && i < sizeof versions / sizeof versions[0]; ++i)
        f = (gs_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    if (f)
        __atomic_store_n(&real_dlsym, f, __ATOMIC_RELEASE);
    return f;
}

void *gs_real_dlsym(void *handle, const char *name)
{
    gs_dlsym_fn f = __atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE);
    if (!f && !(f = gs_find_real_dlsym()))
        return NULL;
    return f(handle, name);
}

