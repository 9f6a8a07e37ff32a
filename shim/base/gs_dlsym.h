/* dlsym as the system defines it, for the shim's own look-ups: the shim
 * exports a dlsym of its own (gs_dlsym.c), which its internal calls must not
 * reach. */
#ifndef GS_DLSYM_H
#define GS_DLSYM_H

void *gs_real_dlsym(void *handle, const char *name);

typedef void *(*gs_dlsym_fn)(void *, const char *);

/* The exported dlsym runs before any sanitizer runtime is initialised: the
 * runtimes look their interceptors' targets up with dlsym(RTLD_NEXT, ...)
 * from their own start-up, and the shim's definition answers. Instrumented
 * code there would touch shadow memory that is not mapped yet, so the path
 * such a look-up takes (dlsym, the switch, finding the system's dlsym) is
 * never instrumented. */
#if defined(__clang__)
#define GS_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))
#else
#define GS_NO_SANITIZE \
    __attribute__((no_sanitize_address, no_sanitize_thread, no_sanitize_undefined))
#endif
/* The system's dlsym itself (cached after the first call), or NULL. */
GS_NO_SANITIZE gs_dlsym_fn gs_find_real_dlsym(void);

#endif
