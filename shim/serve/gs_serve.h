/* Route or forward one intercepted GEMM call. */
#ifndef GS_SERVE_H
#define GS_SERVE_H

#include "gs_call.h"
#include "gs_log.h"
#include "gs_real.h"

typedef struct gs_served {
    int done;               /* 1: served here, return `status` */
    cublasStatus_t status;
    int timing_slot;        /* forwarded calls: the GPU-time measurement */
    void *stream;
    gs_sig_t *ab_sig;       /* GEMMSHIM_MODE=ab, cuBLAS's turn: whose time it is */
    int tuned;              /* forwarded by a tuned decision (cuBLAS as called won) */
} gs_served_t;

/* The serving pipeline (gs_serve.c): describes and checks the call, decides
 * its route, runs our kernel when chosen (falling back to cuBLAS if it
 * cannot launch); the observers (gs_observe.h) log, count, verify and time
 * it. When .done is 0 the caller forwards the call untouched, then calls
 * gs_forwarded (the observers' after_forward). */
gs_served_t gs_serve(const gs_call_t *c);
void gs_forwarded(const gs_served_t *s);

/* What served the calling thread's last call: a kernel name, "forward",
 * "fallback", "quick_return", or "" before its first call (kept by an
 * observer, gs_observers.c). */
const char *gs_last_route(void);

/* Tuning's part in the calling thread's last call: a gemmshim_tuning_t
 * (include/gemmshim.h), kept by the same observer. */
int gs_last_tuning(void);

/* cublasLtMatmul: described from its descriptors (compat/gs_lt.c), then
 * served like the cuBLAS entry points; forwarded where it is unroutable. */
struct gs_lt_args;
gs_served_t gs_serve_lt(const struct gs_lt_args *a);

/* The problem a described cublasLtMatmul (compat/gs_lt.h) is served as,
 * classified: what a family's can_implement, plan and run receive for it
 * (tests/fake/test_lt_fp8_algos.c checks what cuBLASLt's algorithms make of it). */
void gs_problem_of_lt(const gs_call_t *c, gs_problem_t *p);

/* The body of every typed wrapper. */
#define GS_SERVE_OR_FORWARD(call, lib, name, args)                \
    do {                                                          \
        gs_served_t served_ = gs_serve(&(call));                  \
        if (served_.done)                                         \
            return served_.status;                                \
        cublasStatus_t status_ = GS_FORWARD(lib, name, args);     \
        gs_forwarded(&served_);                                   \
        return status_;                                           \
    } while (0)

#endif
