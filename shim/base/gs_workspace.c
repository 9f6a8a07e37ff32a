/* The per-(device, stream) split-K workspace; see gs_workspace.h. */
#include "gs_workspace.h"
#include "gs_capture.h"
#include "gs_hooks.h"
#include "gs_kernels.h"
#include "gs_state.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define MAX_BUFFERS 256    /* (device, stream) pairs; past that, calls forward */
#define MIN_BYTES (8u << 20) /* first allocation: small splits never regrow */

typedef struct buffer {
    int device;
    void *stream;
    uintptr_t thread;      /* cudaStreamPerThread is one handle per thread */
    /* held by one call from its buffer through its last launch: a call of
     * several launches (split-K and its reduction, a packed operand's
     * copies and GEMMs) must not have another thread's launches on the
     * same stream, into the same buffer, between its own */
    pthread_mutex_t hold;
    void *ptr;
    size_t size;
} buffer_t;

static buffer_t buffers[MAX_BUFFERS];
static int n_buffers;
static size_t total_bytes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Two threads passing cudaStreamPerThread (or a NULL stream in a per-thread
 * default-stream build) name different streams with the same handle. */
static uintptr_t thread_key(void *stream)
{
    if (stream == (void *)cudaStreamPerThread)
        return (uintptr_t)pthread_self();
    return 0;
}

static size_t flag_bytes(size_t size) { return GS_WS_FLAG_BYTES < size ? GS_WS_FLAG_BYTES : size; }

/* Zero `bytes` at `p` before returning, on a stream of our own (non-blocking:
 * it neither waits for nor joins the application's streams, captured or not). */
static cudaError_t zero_now(void *p, size_t bytes)
{
    cudaStream_t s;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess)
        return e;
    e = cudaMemsetAsync(p, 0, bytes, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
    return e;
}

static size_t grown_size(size_t bytes, size_t cap)
{
    size_t s = MIN_BYTES;
    while (s < bytes)
        s *= 2;
    return s > cap ? bytes : s;
}

int gs_workspace_get(int device, void *stream, size_t bytes, void **ptr, size_t *size,
                     void **hold, char *why, size_t why_size)
{
    *hold = NULL;
    size_t cap = gs_cfg()->workspace_cap;
    if (bytes > cap) {
        snprintf(why, why_size, "split-K workspace of %zu MiB is over GEMMSHIM_WORKSPACE_MB=%zu",
                 (bytes + (1u << 20) - 1) >> 20, cap >> 20);
        return -1;
    }
    uintptr_t thread = thread_key(stream);
    pthread_mutex_lock(&lock);
    buffer_t *b = NULL;
    for (int i = 0; i < n_buffers; ++i)
        if (buffers[i].device == device && buffers[i].stream == stream &&
            buffers[i].thread == thread) {
            b = &buffers[i];
            break;
        }
    if (!b && n_buffers == MAX_BUFFERS) {
        pthread_mutex_unlock(&lock);
        snprintf(why, why_size, "split-K workspace: more than %d streams", MAX_BUFFERS);
        return -1;
    }
    if (!b) { /* an entry without memory yet; entries are never removed */
        b = &buffers[n_buffers];
        b->device = device;
        b->stream = stream;
        b->thread = thread;
        b->ptr = NULL;
        b->size = 0;
        pthread_mutex_init(&b->hold, NULL);
        ++n_buffers;
    }
    /* the hold first, without the table's lock (another call may hold the
     * buffer while it launches), then the table again */
    pthread_mutex_unlock(&lock);
    pthread_mutex_lock(&b->hold);
    pthread_mutex_lock(&lock);
    if (b->size >= bytes) {
        *ptr = b->ptr;
        *size = b->size;
        *hold = b;
        pthread_mutex_unlock(&lock);
        return 0;
    }
    /* Inside stream capture a cudaMalloc is not captured: it happens now,
     * once, and the graph keeps pointing at the buffer, which is never freed
     * (that is what makes it safe; PyTorch's allocator does the same). Under
     * the global capture mode cudaMalloc is a "potentially unsafe" call while
     * this thread captures *or any other thread* captures in global mode, and
     * making it then invalidates that other capture; so this thread is always
     * relaxed for the allocation (gs_capture.h; only on a buffer's first use
     * or growth). The flags must be zero for a graph's first replay and for
     * direct calls on the stream alike: while this stream captures they are
     * zeroed now, on a private stream, not by a memset node only replays
     * would run; otherwise in stream order on the call's stream. A capture
     * that is already invalidated, or a status that cannot be had, forwards.
     * The lock is held across the allocation: rare, and it keeps two first
     * calls on one stream from allocating twice. */
    enum cudaStreamCaptureStatus cap_status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing((cudaStream_t)stream, &cap_status) != cudaSuccess ||
        cap_status == cudaStreamCaptureStatusInvalidated) {
        cudaGetLastError();
        pthread_mutex_unlock(&lock);
        pthread_mutex_unlock(&b->hold);
        snprintf(why, why_size, "split-K workspace: stream capture status unavailable");
        return -1;
    }
    const int capturing = cap_status == cudaStreamCaptureStatusActive;
    size_t want = grown_size(bytes, cap);
    void *p = NULL;
    gs_capture_mode_t mode = gs_capture_relax();
    cudaError_t e = (cudaError_t)gs_hooks()->alloc(&p, want);
    if (e == cudaSuccess)
        e = capturing ? zero_now(p, flag_bytes(want))
                      : cudaMemsetAsync(p, 0, flag_bytes(want), (cudaStream_t)stream);
    if (e != cudaSuccess && p)
        cudaFree(p);
    gs_capture_restore(mode);
    if (e != cudaSuccess) {
        cudaGetLastError(); /* leave the application's error state as it was */
        pthread_mutex_unlock(&lock);
        pthread_mutex_unlock(&b->hold);
        snprintf(why, why_size, "split-K workspace: %s", cudaGetErrorName(e));
        return -1;
    }
    /* the outgrown buffer stays allocated: graphs captured earlier use it */
    b->ptr = p;
    b->size = want;
    total_bytes += want;
    *ptr = p;
    *size = want;
    *hold = b;
    pthread_mutex_unlock(&lock);
    return 0;
}

void gs_workspace_release(void *hold)
{
    if (hold)
        pthread_mutex_unlock(&((buffer_t *)hold)->hold);
}

void gs_workspace_usage(int *n, size_t *bytes)
{
    pthread_mutex_lock(&lock);
    *n = 0;
    for (int i = 0; i < n_buffers; ++i) /* an entry whose allocation failed holds none */
        *n += buffers[i].ptr != NULL;
    *bytes = total_bytes;
    pthread_mutex_unlock(&lock);
}
