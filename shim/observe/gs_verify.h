/* Verify mode (GEMMSHIM_MODE=verify): every routed call also runs on the
 * real cuBLAS, into scratch memory on the same stream, and the two results
 * are compared on the device; the verdict is read back by a host function on
 * the stream, so the application is never synchronized and its C holds our
 * result, as in mode "on". */
#ifndef GS_VERIFY_H
#define GS_VERIFY_H

#include "gs_call.h"
#include "gs_log.h"

typedef struct gs_verify {
    void *scratch;     /* cuBLAS's C, then 3 doubles of comparison sums */
    size_t c_bytes;
    int slot;
} gs_verify_t;

/* Before our kernel runs: copy C (when beta may be nonzero) and run cuBLAS
 * into scratch. 0 when armed; -1 when this call cannot be verified (graph
 * capture, no memory, no slot): said once per reason, the call still runs. */
int gs_verify_begin(const gs_call_t *c, const gs_problem_t *p, const char *kernel,
                    gs_sig_t *ab_sig, gs_verify_t *v);

/* After our kernel was enqueued: compare, hand the verdict to the host. */
void gs_verify_end(gs_verify_t *v, const gs_problem_t *p);

/* Our kernel did not launch: release what begin took. */
void gs_verify_cancel(gs_verify_t *v, const gs_problem_t *p);

/* What two correct results of p may differ by (relative Frobenius norm),
 * GEMMSHIM_VERIFY_TOL or the per-type default; 0: bit-exact. */
double gs_verify_tolerance(const gs_problem_t *p);

/* The relative Frobenius difference of a comparison's sums (gs_compare_launch:
 * sum (ours-ref)^2, sum ref^2, elements finite on one side only). */
double gs_verify_relative(const double sums[3]);

/* Comparisons enqueued whose verdict has not been read yet. */
unsigned gs_verify_in_flight(void);

/* Calls checked and mismatches so far (verdicts already delivered). */
void gs_verify_counts(unsigned long long *checked, unsigned long long *mismatches);

#endif
