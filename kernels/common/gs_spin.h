/* A kernel that keeps the GPU busy for a given time (the tuner's timing
 * pairs, shim/tune/gs_tune.c): enqueued ahead of a pair, it lets the host queue
 * both sides before either starts, so the events between them time the
 * GPU's work, not the host's launch gaps or lazy module loading. */
#ifndef GS_SPIN_H
#define GS_SPIN_H

#ifdef __cplusplus
extern "C" {
#endif

/* One thread waiting `ns` nanoseconds of %globaltimer on `stream`: 0 or a
 * cudaError_t. */
int gs_spin_launch(void *stream, unsigned ns);

#ifdef __cplusplus
}
#endif
#endif
