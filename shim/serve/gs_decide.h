/* gs_dispatch with a per-thread memory of recent decisions.
 *
 * A decision depends only on the call's class (gs_class_t: types, layout,
 * sizes, strides, alignments, scalar kinds, epilogue), the device, the
 * routing in force and the table: applications repeat a handful of
 * signatures, so the
 * same answer is found again in a per-thread table (no lock; set-associative,
 * least recently used out, 256 signatures) instead of asking every kernel's
 * can_implement and the tuning table on every call. */
#ifndef GS_DECIDE_H
#define GS_DECIDE_H

#include "gs_dispatch.h"

gs_decision_t gs_decide(const gs_problem_t *p, const gs_device_t *d, const gs_routing_t *r);

/* This thread's cache hits and misses (tests). */
void gs_decide_counts(unsigned long long *hits, unsigned long long *misses);

#endif
