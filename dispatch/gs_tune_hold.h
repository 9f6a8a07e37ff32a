/* Signatures held at their prior: served as the shim serves them untuned
 * (the routing table's or the policy's route, or cuBLAS as called), whatever
 * the tune cache decided for them, and never tuned while held. The offline
 * tuner's sequence phase captures a CUDA graph of a recorded sequence once
 * with the tuned decisions and once with some of them held, to see which
 * decisions lose in context (gemmshim_hold_prior, include/gemmshim.h).
 *
 * Process-wide and thread-safe. While nothing is held (every application
 * that never calls gemmshim_hold_prior) gs_tune_held is one atomic load and
 * decisions are what they were. Pure C. */
#ifndef GS_TUNE_HOLD_H
#define GS_TUNE_HOLD_H

#include "gs_problem.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Classes held at once, at most: far beyond a model's signatures. */
#define GS_TUNE_HOLD_MAX 65536

/* Holds (on != 0) or releases class c. c NULL: every class (on: all held,
 * whatever else is held; off: nothing held any more, the set emptied).
 * 0, or -1 when there is no room (GS_TUNE_HOLD_MAX held, or no memory):
 * nothing changed. */
int gs_tune_hold(const gs_class_t *c, int on);

/* 1 when class c is held. */
int gs_tune_held(const gs_class_t *c);

/* Changes whenever what is held changes: decision caches key on it. */
unsigned gs_tune_hold_generation(void);

/* Classes held one by one (not counting "every class"). */
size_t gs_tune_hold_count(void);

#ifdef __cplusplus
}
#endif
#endif /* GS_TUNE_HOLD_H */
