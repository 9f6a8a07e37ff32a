/* Split-K scratch memory: one buffer per (device, stream), reused by every
 * call on that stream (calls on one stream never overlap, so they can share
 * it), grown only outside graph capture, never freed while the process runs
 * (a captured graph may still point at an outgrown buffer). Contract with the
 * kernels: kernels/gs_kernels.h. */
#ifndef GS_WORKSPACE_H
#define GS_WORKSPACE_H

#include <stddef.h>

/* A buffer of at least `bytes` for `stream` on the current device `device`:
 * 0 and *ptr / *size set, or -1 with a one-line reason in `why` (the caller
 * forwards the call): over GEMMSHIM_WORKSPACE_MB, first use or growth inside
 * stream capture, allocation failed, too many streams. Its first
 * GS_WS_FLAG_BYTES are zero when it is new (zeroed on `stream`, ahead of the
 * call's kernel). Thread-safe; never synchronizes. */
int gs_workspace_get(int device, void *stream, size_t bytes, void **ptr, size_t *size,
                     char *why, size_t why_size);

/* Buffers held now and their bytes (for the log's summary and tests). */
void gs_workspace_usage(int *buffers, size_t *bytes);

#endif
