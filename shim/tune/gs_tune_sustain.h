/* The sustained check's GPU side: blocks of back-to-back calls of the
 * prior and of a challenger, timed (why, the plan and the verdict:
 * dispatch/gs_tune_rule.h, "the sustained check"). */
#ifndef GS_TUNE_SUSTAIN_H
#define GS_TUNE_SUSTAIN_H

#include "gs_tune_rule.h"

#include <stddef.h>

/* Enqueues one call of a side on the check's stream (challenger: 1 the
 * challenger, 0 the prior): 0, or nonzero when it could not. */
typedef int (*gs_sustain_call_fn)(void *ctx, int challenger);

/* Runs plan->rounds rounds of one block per side on `stream` (the prior's
 * block first in even rounds), each plan->calls calls of which the last
 * calls - settle are timed, and waits for them. prior_ms[r] and cand_ms[r]
 * get round r's time per call. 0, or -1 with why (a call that could not
 * be enqueued, an event error): then nothing is to be read. */
int gs_tune_sustain_time(void *stream, const gs_sustain_plan_t *plan, gs_sustain_call_fn call,
                         void *ctx, double *prior_ms, double *cand_ms, char *why, size_t why_size);

#endif
