/* Split-K scratch memory: one buffer per (device, stream), reused by every
 * call on that stream (calls on one stream never overlap, so they can share
 * it), never freed while the process runs (a captured graph may still point
 * at an outgrown buffer). Allocated or grown inside graph capture too: the
 * allocation is not captured, the graph points at the buffer. A graph
 * replayed on another stream while its capture stream runs split-K calls
 * would share the buffer with them, as cuBLAS's own workspace would be
 * shared; replay on the capture stream, or one graph at a time. PyTorch
 * captures every graph on one side stream of its own, so all graphs it
 * captured share one buffer: replaying two of them concurrently on different
 * streams races on it (as it would on cuBLAS's workspace). Contract
 * with the kernels: kernels/gs_kernels.h. */
#ifndef GS_WORKSPACE_H
#define GS_WORKSPACE_H

#include <stddef.h>

/* A buffer of at least `bytes` for `stream` on the current device `device`:
 * 0 and *ptr / *size set, or -1 with a one-line reason in `why` (the caller
 * forwards the call): over GEMMSHIM_WORKSPACE_MB, an invalidated capture,
 * allocation failed, too many streams. Its first GS_WS_FLAG_BYTES are zero
 * when it is new (zeroed on `stream` ahead of the call's kernel; inside
 * capture, zeroed before returning, on a private stream: the only wait,
 * once per buffer). Thread-safe.
 *
 * On 0 the caller holds the buffer (*hold) until gs_workspace_release,
 * which it calls once its call's last launch is enqueued: threads sharing
 * one stream (one cuBLAS handle) would otherwise interleave their launches
 * there, and a call of several launches into the buffer (split-K and its
 * reduction; a packed operand's copies and GEMMs) could find another
 * call's kernel between its own, writing the same scratch (test_load,
 * four threads on one handle, once in 400 calls). Nothing waits on the GPU
 * while held: only enqueueing. */
int gs_workspace_get(int device, void *stream, size_t bytes, void **ptr, size_t *size,
                     void **hold, char *why, size_t why_size);

/* Lets the next call on the buffer's stream have it (hold may be NULL). */
void gs_workspace_release(void *hold);

/* Buffers held now and their bytes (for the log's summary and tests). */
void gs_workspace_usage(int *buffers, size_t *bytes);

#endif
