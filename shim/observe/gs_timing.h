/* GPU time per call for the log summary, measured with CUDA events recorded
 * on the call's stream and read back later without waiting (the shim never
 * synchronizes the application). Only active while GEMMSHIM_LOG or
 * GEMMSHIM_RECORD is set. */
#ifndef GS_TIMING_H
#define GS_TIMING_H

#include "gs_dispatch.h"
#include "gs_log.h"
#include "gs_record.h"

/* Start timing a call on `stream`; returns a slot, or -1 when not timed
 * (stream capture in progress, pool busy, no device). rec: the call's
 * signature in the record (gs_record.h), which gets its time too; NULL
 * when not recording. */
int gs_timing_begin(void *stream, gs_rec_sig_t *rec);
void gs_timing_end(int slot, void *stream, gs_route_t route, int tuned);
/* The same, for GEMMSHIM_MODE=ab: the time goes to sig's ours or cuBLAS side. */
void gs_timing_end_ab(int slot, void *stream, gs_sig_t *sig, int ours);
/* Drop a started measurement (the call did not run after all). */
void gs_timing_cancel(int slot);

/* CUDA events the pool holds now. */
unsigned gs_timing_events(void);
/* The pool's bound: gs_timing_events() never exceeds it. */
unsigned gs_timing_events_max(void);

/* Collect every finished measurement, waiting for those still in flight
 * (at exit only). */
void gs_timing_flush(void);

/* The same before a summary, report or reset (the callers of the log's and
 * report's writers do it: the log does not call timing back), except in a
 * forked child: no CUDA there, and the timing lock may have been held by a
 * thread the child does not have. */
void gs_timing_settle(void);

#endif
