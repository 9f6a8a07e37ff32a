/* A kernel family, as dispatch and serving see it: one table of operations.
 *
 * Everything above the families reaches a kernel through this table and the
 * registry (dispatch/gs_registry.h); nothing there names a family or one of
 * its configurations. A family has one or more configurations (tile shapes,
 * schedules), each with a stable name that keys routing tables, logs and
 * GEMMSHIM_KERNELS. Adding a family: its table in its own file under
 * kernels/, one line in dispatch/gs_registry.c.
 *
 * For one call: can_implement (may it compute exactly this problem on this
 * device?), then plan (once per call: which kernel runs, with which tile,
 * split and grid, and what scratch it needs), then run(plan, p, d) with
 * that plan and p->workspace of plan.workspace_bytes: run launches what the
 * plan says and decides nothing again. Pure host code up to run: dispatch
 * tests call can_implement and plan without a GPU. */
#ifndef GS_FAMILY_H
#define GS_FAMILY_H

#include "gs_problem.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_family gs_family_t;

/* A developer knob of a family (A/B switches, test settings): read as
 * GEMMSHIM_DEV_<FAMILY>_<NAME> and validated with every other setting
 * (dispatch/gs_config.c); a value it does not take is a bad value. The
 * family gets the values once, before its first call (set_knobs). */
typedef struct gs_knob {
    const char *name;       /* "SK": GEMMSHIM_DEV_PINGPONG_SK */
    const char *legacy;     /* the variable's earlier name, refused with a pointer here; or NULL */
    int def;                /* the value when unset */
    int lo, hi;             /* it takes lo..hi, */
    const int *only;        /* or, where not NULL, only these n_only values */
    int n_only;
} gs_knob_t;

/* Room for a family's own plan in gs_plan_t: what its run launches. */
enum { GS_PLAN_DATA_MAX = 96 };

/* A routed call's plan, made once by the family's plan and passed on to
 * workspace sizing, the log and run. Above the family only the fields
 * before `data` are read; a plan is a plain value (copied by assignment,
 * nothing to free). */
typedef struct gs_plan {
    const gs_family_t *family;
    int config;
    const char *kernel;     /* what runs, tile and split in the name (static storage) */
    size_t workspace_bytes; /* scratch run needs in p->workspace (0: none);
                               the family's workspace contract: kernels/common/gs_kernels.h */
    /* the family's own plan, filled by its plan and read by its run (the
     * tile, the split, the grid: run plans nothing again); zero until then */
    union {
        unsigned char bytes[GS_PLAN_DATA_MAX];
        uint64_t align_u64;
        double align_f64;
        void *align_ptr;
    } data;
} gs_plan_t;

/* run's one answer for a workspace that cannot hold the plan's
 * workspace_bytes (p->workspace NULL, p->workspace_size short, or the
 * buffer not 16-byte aligned): cudaErrorMemoryAllocation, with nothing
 * enqueued, so the caller forwards the call to cuBLAS. Every family gives
 * it, the built-in ones, cuBLASLt's algorithms (shim/tune/gs_lt_algos.c) and
 * plugins (the adapter answers for them, shim/plugins/gs_plugin.c). */
enum { GS_RUN_NO_WORKSPACE = 2 /* cudaErrorMemoryAllocation */ };

/* 1 when p's workspace holds what plan asks for (gs_plan_t.workspace_bytes). */
static inline int gs_plan_workspace_ok(const gs_plan_t *plan, const gs_problem_t *p)
{
    return plan->workspace_bytes == 0
           || (p->workspace && p->workspace_size >= plan->workspace_bytes
               && ((uintptr_t)p->workspace & 15u) == 0);
}

struct gs_family {
    const char *name; /* "pingpong" */
    int n_configs;
    /* stable configuration names ("pingpong_128x128x64"); a family of one
     * configuration may give its own name */
    const char *(*config_name)(int config);
    /* 1 when configuration `config` computes exactly every call of class c
     * (p->cls) on d; reads only the class, never touches the GPU */
    int (*can_implement)(const gs_class_t *c, const gs_device_t *d, int config);
    /* fills plan (family and config already set, the rest zero) for a
     * problem can_implement took: kernel, workspace_bytes and data. Pure
     * host code, deterministic: the same p and d give the same plan. */
    void (*plan)(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *plan);
    /* enqueues the problem on p->stream as plan says (plan made by this
     * family's plan for this p and d; run neither plans again nor repeats
     * can_implement): 0, or a cudaError_t with nothing enqueued (the caller
     * falls back to cuBLAS); GS_RUN_NO_WORKSPACE when the workspace is
     * short (gs_plan_workspace_ok). Never synchronizes, allocates or
     * changes the current device. */
    int (*run)(const gs_plan_t *plan, const gs_problem_t *p, const gs_device_t *d);
    /* optional: its developer knobs, and where their values go (one per
     * knob, in order; called once, before the family's first call) */
    int n_knobs;
    const gs_knob_t *knobs;
    void (*set_knobs)(const int *values);
    /* optional (NULL: 1): the share of a routing-table reading measured at
     * `measured` that holds for p (pingpong: the persistent grid's waves) */
    double (*reading_scale)(const gs_problem_t *p, const gs_problem_t *measured,
                            const gs_device_t *d, int config);
    /* optional: how a routing-table reading of this family carries to other
     * calls (dispatch/gs_table.c). reading_rows_16: a reading holds for
     * calls whose leading dimensions are whole 16-byte units where the
     * measured shape's were (0: aligned to the same of 16, 32, 64 and 128
     * bytes, for kernels whose loads slow down when rows straddle lines);
     * reading_shape_only: a reading holds for its own m, n and k only
     * (neighbours measured neither faster nor slower as one) */
    int reading_rows_16;
    int reading_shape_only;
    /* optional: 1 for a family chosen only by tuning (dispatch/gs_tune_cache.h),
     * never by the routing table or the eligible policy (cuBLASLt's own
     * algorithms: their configurations are what its heuristic lists for
     * each problem) */
    int tuned_only;
    /* optional: 1 for a family that runs a call on at most the handle's
     * SM count target (cublasSetSmCountTarget: the application leaves SMs
     * to other work); the others never take a call that has one */
    int honours_sm_count_target;
    /* optional: 1 for a family whose can_implement reads a cublasLtMatmul's
     * scaling contract (gs_class_t's lt_scales and lt_flags) and FP8 types,
     * and whose run carries the scale pointers (gs_problem_t.scale_a/b);
     * dispatch and the tuner offer a class with FP8 operands or a contract
     * to no other family (gs_candidate_takes) */
    int reads_lt_contract;
    /* optional: the experimental configurations (bit 1 << config), offered
     * a call only when GEMMSHIM_FP8_TILES=1 (gs_routing_t.fp8_tiles):
     * registered, named and planned like any, never routed by default (the
     * FP8 family's tiles; its decode kernels are routed by the table) */
    uint64_t fp8_tiles_configs;
    /* optional (NULL: config_name): configuration `config` as it runs p,
     * for logs and the tune cache; printable, no blanks; returns buf */
    const char *(*config_text)(const gs_problem_t *p, const gs_device_t *d, int config,
                               char *buf, size_t size);
    /* optional (NULL: the configuration of that name): the configuration a
     * config_text names for p, or -1 when it no longer runs p */
    int (*config_from_text)(const gs_problem_t *p, const gs_device_t *d, const char *text);
};

/* 1: f's configuration `config` is experimental (offered only with
 * GEMMSHIM_FP8_TILES=1) */
static inline int gs_family_opt_in(const gs_family_t *f, int config)
{
    return config >= 0 && config < 64 && ((f->fp8_tiles_configs >> config) & 1u);
}

#ifdef __cplusplus
}
#endif
#endif /* GS_FAMILY_H */
