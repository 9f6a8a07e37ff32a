/* dlsym as the system defines it, for the shim's own look-ups: the shim
 * exports a dlsym of its own (gs_dlsym.c), which its internal calls must not
 * reach. */
#ifndef GS_DLSYM_H
#define GS_DLSYM_H

void *gs_real_dlsym(void *handle, const char *name);

typedef void *(*gs_dlsym_fn)(void *, const char *);
/* The system's dlsym itself (cached after the first call), or NULL. */
gs_dlsym_fn gs_find_real_dlsym(void);

#endif
