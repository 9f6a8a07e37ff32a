#include "gs_timing.h"
#include "gs_capture.h"
#include "gs_log.h"

#include <cuda_runtime_api.h>
#include <pthread.h>

#define SLOTS 256

typedef enum { FREE = 0, STARTED, PENDING } slot_state_t;

typedef struct slot {
    slot_state_t state;
    int device;
    int created;
    cudaEvent_t start, stop;
    gs_route_t route;
    gs_sig_t *sig; /* GEMMSHIM_MODE=ab: the signature and side the time is for */
    int ours;
    int tuned;     /* the call's route was a tuned decision */
    gs_rec_sig_t *rec; /* the record's signature, NULL if none */
} slot_t;

static slot_t slots[SLOTS];
static unsigned events; /* created, not destroyed: under the lock */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Caller holds the lock. wait: block on unfinished events (exit only).
 * Querying an event is a prohibited call while any thread captures in global
 * mode, even for an event of another stream: relaxed for it (gs_capture.h). */
static void harvest(int wait)
{
    gs_capture_mode_t mode = gs_capture_relax();
    for (int i = 0; i < SLOTS; ++i) {
        slot_t *s = &slots[i];
        if (s->state != PENDING)
            continue;
        cudaError_t e = wait ? cudaEventSynchronize(s->stop) : cudaEventQuery(s->stop);
        if (e == cudaErrorNotReady)
            continue;
        float ms = 0.f;
        if (e == cudaSuccess && cudaEventElapsedTime(&ms, s->start, s->stop) == cudaSuccess) {
            if (s->sig)
                gs_log_ab_time(s->sig, s->ours, ms);
            else
                gs_log_add_time(s->route, s->tuned, ms);
            if (s->rec)
                gs_record_time(s->rec, ms);
        }
        s->state = FREE;
    }
    gs_capture_restore(mode);
}

int gs_timing_begin(void *stream, gs_rec_sig_t *rec)
{
    enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    int dev = -1;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaStreamIsCapturing((cudaStream_t)stream, &cap) != cudaSuccess ||
        cap != cudaStreamCaptureStatusNone)
        return -1;
    gs_capture_mode_t mode = gs_capture_relax(); /* event creation, too */
    pthread_mutex_lock(&lock);
    harvest(0);
    int found = -1;
    for (int i = 0; i < SLOTS && found < 0; ++i) {
        slot_t *s = &slots[i];
        if (s->state != FREE)
            continue;
        if (s->created && s->device != dev) {
            cudaEventDestroy(s->start);
            cudaEventDestroy(s->stop);
            s->created = 0;
            events -= 2;
        }
        if (!s->created) {
            if (cudaEventCreate(&s->start) != cudaSuccess)
                break;
            if (cudaEventCreate(&s->stop) != cudaSuccess) {
                cudaEventDestroy(s->start);
                break;
            }
            s->created = 1;
            s->device = dev;
            events += 2;
        }
        if (cudaEventRecord(s->start, (cudaStream_t)stream) != cudaSuccess)
            break;
        s->state = STARTED;
        s->rec = rec;
        found = i;
    }
    pthread_mutex_unlock(&lock);
    gs_capture_restore(mode);
    return found;
}

void gs_timing_end(int slot, void *stream, gs_route_t route, int tuned)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&lock);
    slot_t *s = &slots[slot];
    s->route = route;
    s->tuned = tuned;
    s->sig = NULL;
    s->state = cudaEventRecord(s->stop, (cudaStream_t)stream) == cudaSuccess ? PENDING : FREE;
    pthread_mutex_unlock(&lock);
}

void gs_timing_end_ab(int slot, void *stream, gs_sig_t *sig, int ours)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&lock);
    slot_t *s = &slots[slot];
    s->route = ours ? GS_ROUTE_COUNT : GS_ROUTE_FORWARD;
    s->tuned = 0;
    s->sig = sig;
    s->ours = ours;
    s->state = cudaEventRecord(s->stop, (cudaStream_t)stream) == cudaSuccess ? PENDING : FREE;
    pthread_mutex_unlock(&lock);
}

void gs_timing_cancel(int slot)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&lock);
    slots[slot].state = FREE;
    pthread_mutex_unlock(&lock);
}

void gs_timing_flush(void)
{
    pthread_mutex_lock(&lock);
    harvest(1);
    pthread_mutex_unlock(&lock);
}

unsigned gs_timing_events_max(void)
{
    return 2 * SLOTS;
}

unsigned gs_timing_events(void)
{
    pthread_mutex_lock(&lock);
    const unsigned n = events;
    pthread_mutex_unlock(&lock);
    return n;
}

void gs_timing_settle(void)
{
    if (!gs_sink_forked())
        gs_timing_flush();
}
