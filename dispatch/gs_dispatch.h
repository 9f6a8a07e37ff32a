/* Which route serves a problem. Pure C: reads the descriptor, the device's
 * properties, the configuration and the tuning table; never touches the GPU. */
#ifndef GS_DISPATCH_H
#define GS_DISPATCH_H

#include "gs_config.h"
#include "gs_family.h"
#include "gs_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a call went, as counted and logged: forwarded to cuBLAS, answered
 * at once (an empty result, a NULL scalar), or served by a kernel family
 * (GS_ROUTE_FAMILY0 + its index in the registry). */
typedef int gs_route_t;
enum {
    GS_ROUTE_FORWARD = 0,
    GS_ROUTE_QUICK = 1,
    GS_ROUTE_FAMILY0 = 2,
    GS_FAMILIES_MAX = 16,
    GS_ROUTE_COUNT = GS_ROUTE_FAMILY0 + GS_FAMILIES_MAX,
};

typedef struct gs_decision {
    gs_route_t route;
    const gs_family_t *family; /* the kernel family, NULL unless routed */
    int config;                /* its configuration */
    double table_ratio;        /* measured speed vs cuBLAS for this class, 0 if none;
                                  for a tuned decision, its measured gain */
    int tuned;                 /* decided by tuning (GEMMSHIM_TUNE) */
    int tune_pending;          /* GEMMSHIM_TUNE=online, not decided yet: forwarded
                                  while the tuner times candidates (shim/tune/gs_tune.h) */
    char reason[112];          /* why this route: one line, for logs */
} gs_decision_t;

/* Routes below this measured ratio to cuBLAS are not taken (policy table). */
#define GS_MIN_RATIO 0.98

gs_decision_t gs_dispatch(const gs_problem_t *p, const gs_device_t *d, const gs_routing_t *c);

/* The prior: what gs_dispatch decides for p with no tuned decision (the
 * routing table's or the policy's choice, or forwarding), whatever c->tune
 * says. What a tuned decision has to beat (dispatch/gs_tune_rule.h). */
gs_decision_t gs_dispatch_prior(const gs_problem_t *p, const gs_device_t *d,
                                const gs_routing_t *c);

/* A prior as the tune cache records it: "cublas" where it forwards, else
 * "family/configuration" (the configuration as the family writes it). */
const char *gs_prior_text(const gs_decision_t *prior, const gs_problem_t *p,
                          const gs_device_t *d, char *buf, size_t size);

/* "forward", "quick_return", or the family's name */
const char *gs_route_name(gs_route_t r);
gs_route_t gs_route_of(const gs_family_t *f);

/* Candidate cand (family f, configuration config) may serve class c on d:
 * allowed by the routing, reads the class's cuBLASLt scaling contract if
 * it has FP8 operands or one (gs_family_t.reads_lt_contract), implements
 * it, and honours the handle's SM count target if it has one. What
 * dispatch, tuned decisions and the tuner's candidate list all ask. */
int gs_candidate_takes(const gs_routing_t *r, int cand, const gs_family_t *f, int config,
                       const gs_class_t *c, const gs_device_t *d);

/* ---- tuning table (dispatch/gs_table.c) ---- */
/* Measured speed of family f's configuration `config` relative to cuBLAS
 * for p's problem class on device d, or 0 when the table has no entry for
 * that class. */
double gs_table_ratio(const gs_family_t *f, int config, const gs_problem_t *p,
                      const gs_device_t *d);

/* Replace the table with a routing table file (format in dispatch/gs_table.c
 * and bench/NOTES.md). Thread-safe. Returns
 *   0                    loaded; msg is "" (a file with a header and no
 *                        entry is not loaded: GS_TABLE_ERR_FORMAT)
 *   GS_TABLE_ERR_FORMAT  the text is not a routing table (the line and why
 *                        in msg: "PATH:LINE: why")
 *   GS_TABLE_ERR_IO      the file could not be read: missing, unreadable,
 *                        a directory, a FIFO or device (refused, never
 *                        waited on), larger than GS_TABLE_FILE_MAX
 *                        ("cannot read routing table 'PATH': why")
 * On any error the table in force stays and msg holds one line (msg may be
 * NULL when msg_size is 0). */
enum {
    GS_TABLE_ERR_FORMAT = -1,
    GS_TABLE_ERR_IO = -2,
};
#define GS_TABLE_LINE_MAX 65536             /* bytes of one line, without its '\n' */
#define GS_TABLE_FILE_MAX ((size_t)64 << 20) /* bytes of a whole file */
#define GS_TABLE_DIM_MAX 2147483647LL        /* M, N, K: what every kernel takes */
int gs_table_load(const char *path, char *msg, size_t msg_size);

/* The same from text in memory (len bytes, NULs included; name stands for
 * the file in messages): what gs_table_load does once it has read the file.
 * 0 or GS_TABLE_ERR_FORMAT. */
int gs_table_load_buffer(const char *name, const char *buf, size_t len, char *msg,
                         size_t msg_size);

/* Entries of the built-in table (0: it did not parse, a build defect). */
size_t gs_table_builtin_entries(void);

/* Put the built-in table back in force (tests, fuzzing). */
void gs_table_use_builtin(void);

/* Changes whenever gs_table_load replaces the table. */
unsigned gs_table_generation(void);

#ifdef __cplusplus
}
#endif
#endif /* GS_DISPATCH_H */
