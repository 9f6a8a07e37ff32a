/* Observers of serving. The pipeline (shim/serve/gs_serve.c) serves a call:
 *
 *   describe -> checks -> decide (with the tuner's hook) -> plan ->
 *   workspace -> A/B turn -> run -> fallback
 *
 * and the record, the log, the statistics, verification, timing, the A/B
 * report and gemmshim_last_route watch it at fixed points, through one list
 * (shim/serve/gs_observers.c). At each point every observer that has a callback
 * for it is called, in the list's order. Observers never change how a call
 * is served; what they need to know (measure this call? compare it with
 * cuBLAS? whose A/B turn is it?) the pipeline decides and writes in the
 * serving record, and they keep their own per-call state there too.
 *
 * The A/B turn is not an observer: whether a call is cuBLAS's turn decides
 * whether our kernel runs at all, so it is a stage of the pipeline (it
 * forwards the call, timed, on cuBLAS's turns). Its times, errors and the
 * report at exit are observers' work. */
#ifndef GS_OBSERVE_H
#define GS_OBSERVE_H

#include "gs_call.h"
#include "gs_dispatch.h"
#include "gs_log.h"
#include "gs_problem.h"
#include "gs_record.h"
#include "gs_serve.h"
#include "gs_verify.h"

/* One call being served. */
typedef struct gs_serving {
    const gs_call_t *call;
    gs_problem_t p;          /* the call, described */
    gs_device_t dev;
    gs_routing_t routing;    /* mode, policy and tuning as read for this call */
    gs_decision_t dec;       /* the route; forwarded or answered: the reason */
    const char *why;         /* forwarded or answered: the reason in full (dec.reason,
                                or a cuBLASLt call's every reason, longer); valid
                                during on_forward and on_answered */
    int tuning;              /* gemmshim_tuning_t: tuning's part in the route
                                (GEMMSHIM_TUNING_NONE until decide) */
    const char *kernel;      /* the plan's kernel name while ours runs, else NULL */
    void *ws_hold;           /* the workspace held from its buffer to the last launch */
    void *stream;
    int launch_error;        /* our kernel did not launch: the hooks' error */
    int fell_back;           /* forwarded because our kernel did not launch */

    /* what the pipeline asks of the observers for this call */
    int timed;               /* measure its GPU time (ours, or the forward's) */
    int verify;              /* compare our result with cuBLAS's */
    gs_sig_t *ab_sig;        /* GEMMSHIM_MODE=ab: the signature whose turn this is */
    int described;           /* its class describes a valid call on a known handle (a
                                cuBLASLt call beyond it: call->lt_unroutable says why,
                                unless call->lt_algos_only) */

    /* the observers' own state for this call */
    gs_rec_sig_t *rec;       /* record: the call's signature record, NULL if none */
    int timing_slot;         /* timing: the measurement in flight, -1 if none */
    int verifying;           /* verify: armed (its reference is enqueued) */
    gs_verify_t verify_state;
} gs_serving_t;

/* The fixed points. Any callback may be NULL. */
typedef struct gs_observer {
    const char *name;
    /* The route is decided (a family, or forward with the reason). */
    void (*on_decided)(gs_serving_t *s);
    /* Answered here without running anything (a quick return). */
    void (*on_answered)(gs_serving_t *s);
    /* The call goes to cuBLAS: the caller forwards it (s->dec: why). */
    void (*on_forward)(gs_serving_t *s);
    /* Our kernel is about to be enqueued, and was enqueued. */
    void (*before_run)(gs_serving_t *s);
    void (*after_run)(gs_serving_t *s);
    /* Our kernel did not launch (s->launch_error); on_forward follows. */
    void (*on_fallback)(gs_serving_t *s);
    /* The caller's forward returned (gs_forwarded); also for calls that
     * were never observed (the tuner's own), whose timing slot is -1. */
    void (*after_forward)(const gs_served_t *s);
} gs_observer_t;

/* The observers, in the order they are called; NULL-terminated. */
extern const gs_observer_t *const gs_observers[];

#endif
