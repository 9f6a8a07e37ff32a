/* Which route serves a problem. Pure C: reads the descriptor, the device's
 * properties, the configuration and the tuning table; never touches the GPU. */
#ifndef GS_DISPATCH_H
#define GS_DISPATCH_H

#include "gs_config.h"
#include "gs_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_route {
    GS_ROUTE_FORWARD = 0,  /* the real cuBLAS */
    GS_ROUTE_QUICK,        /* m == 0 or n == 0: nothing to do */
    GS_ROUTE_SGEMM_SIMT,
    GS_ROUTE_PINGPONG,
    GS_ROUTE_SKINNY,       /* decode shapes: few columns, memory-bound */
    GS_ROUTE_COUNT
} gs_route_t;

typedef struct gs_decision {
    gs_route_t route;
    int config;            /* kernel configuration within the route */
    double table_ratio;    /* measured speed vs cuBLAS for this class, 0 if none */
    char reason[112];      /* why this route: one line, for logs */
} gs_decision_t;

/* Routes below this measured ratio to cuBLAS are not taken (policy table). */
#define GS_MIN_RATIO 0.98

gs_decision_t gs_dispatch(const gs_problem_t *p, const gs_device_t *d, const gs_routing_t *c);

const char *gs_route_name(gs_route_t r);

/* ---- tuning table (dispatch/gs_table.c) ---- */
/* Measured speed of `route`/`config` relative to cuBLAS for p's problem
 * class on device d, or 0 when the table has no entry for that class. */
double gs_table_ratio(gs_route_t route, int config, const gs_problem_t *p, const gs_device_t *d);

/* Replace the table with a routing table file (format in dispatch/gs_table.c
 * and bench/NOTES.md). 0, or -1 with a one-line reason in msg (the table in
 * force stays). Thread-safe. */
int gs_table_load(const char *path, char *msg, size_t msg_size);

/* Changes whenever gs_table_load replaces the table. */
unsigned gs_table_generation(void);

#ifdef __cplusplus
}
#endif
#endif /* GS_DISPATCH_H */
