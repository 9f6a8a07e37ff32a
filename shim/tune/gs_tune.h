/* Tuned routing, the GPU side (GEMMSHIM_TUNE; docs/TUNING.md).
 *
 * Under GEMMSHIM_TUNE=online a call signature not decided yet is claimed
 * in the tune cache by one process, which resumes the progress the last
 * claimer left there. In that process the signature is answered by cuBLAS
 * as the application called it, and each such call also carries a few
 * timing pairs on the application's stream: one candidate (the prior, the
 * route the shim takes untuned, and every configuration of a registered
 * family whose can_implement takes the call, cuBLASLt's heuristic
 * algorithms included) and cuBLAS-as-called, back to back between events,
 * in alternating order, on the call's own A and B and scratch outputs with
 * the call's ldc and alignment (never the application's C; a copy of C
 * when beta may be nonzero). A candidate's first result is compared with
 * cuBLAS's; a mismatch drops it. Event times and comparisons are collected
 * at later calls (no waits, no host callbacks, no cudaMalloc: scratch is
 * stream-ordered) and, at exit, waited for briefly and saved as progress.
 * Other processes serve the signature by the prior until the decision is
 * in the cache. The numbers and the rule are dispatch/gs_tune_rule.h;
 * decisions, claims and progress go to the tune cache
 * (dispatch/gs_tune_cache.h), which dispatch reads. */
#ifndef GS_TUNE_H
#define GS_TUNE_H

#include "gs_call.h"
#include "gs_problem.h"

/* Once per process, at the first call under GEMMSHIM_TUNE=online or
 * cache: opens the cache file with this process's validator. */
void gs_tune_start(const gs_device_t *d);

/* What gs_tune_call did with a call. */
typedef enum gs_tune_turn {
    GS_TUNE_NOT_HERE = 0, /* this process does not tune it (no room for another
                             signature, or it is decided): the caller serves the
                             call by the tuned decision or the prior */
    GS_TUNE_TIMING,       /* this process tunes it: the caller forwards the call */
    GS_TUNE_ELSEWHERE,    /* another process holds its claim: the caller serves the
                             call by the prior until the decision is in the cache */
} gs_tune_turn_t;

/* A call of a signature not decided yet (decision.tune_pending): collects
 * finished pairs, decides when it can, else enqueues the next pairs.
 * Serving calls it only after gs_tune_start, never inside stream capture
 * and never from the tuner's own cuBLAS calls (gs_tune_busy): it does not
 * check those again. */
gs_tune_turn_t gs_tune_call(const gs_call_t *c, const gs_problem_t *p, const gs_device_t *d);

/* 1 while this thread runs the tuner's own cuBLAS or kernel calls: an
 * intercepted call arriving then is cuBLAS's own and is forwarded as is. */
int gs_tune_busy(void);

/* A call served by a tuned decision (the exit summary's share). */
void gs_tune_count_served(int tuned);

#endif
