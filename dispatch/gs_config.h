/* Environment configuration (GEMMSHIM_*), parsed once. Pure C. */
#ifndef GS_CONFIG_H
#define GS_CONFIG_H

#include "gs_problem.h"
#include "gs_registry.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GS_PATH_MAX 4096
#define GS_WORKSPACE_MB_DEFAULT 64
#define GS_PLUGINS_MAX 8 /* libraries in GEMMSHIM_PLUGINS */

/* on: route by the table; off: forward everything; verify: route, and also
 * run every routed call on cuBLAS into scratch memory and compare; ab: per
 * call signature, alternate our route and cuBLAS and time both. */
typedef enum gs_mode { GS_MODE_ON = 0, GS_MODE_OFF, GS_MODE_VERIFY, GS_MODE_AB } gs_mode_t;

/* What a verify-mode mismatch does besides being logged. */
typedef enum gs_verify_fail { GS_VERIFY_REPORT = 0, GS_VERIFY_ABORT, GS_VERIFY_EXIT } gs_verify_fail_t;

/* table: route only where the built-in tuning table measured our kernel at
 *        least as fast as cuBLAS for the problem's class (the default);
 * eligible: route every call a kernel can implement (A/B runs, benchmarks). */
typedef enum gs_policy { GS_POLICY_TABLE = 0, GS_POLICY_ELIGIBLE } gs_policy_t;

/* off: no tuned routing (the default: a plain run is deterministic);
 * online: each new call signature is served by cuBLAS as called while its
 *         candidates are timed on the application's stream, then by the
 *         winner (shim/tune/gs_tune.h); decisions go to GEMMSHIM_TUNE_CACHE;
 * cache: decisions are read from GEMMSHIM_TUNE_CACHE, nothing is tuned. */
typedef enum gs_tune_mode { GS_TUNE_OFF = 0, GS_TUNE_ONLINE, GS_TUNE_CACHE } gs_tune_mode_t;

/* What dispatch needs to know of the configuration: the part that the C API
 * (include/gemmshim.h) may change while the application runs. */
typedef struct gs_routing {
    gs_mode_t mode;
    gs_policy_t policy;
    uint64_t allowed;              /* bit (1 << candidate): the registry's candidates
                                      (dispatch/gs_registry.h) GEMMSHIM_KERNELS allows */
    gs_tune_mode_t tune;           /* GEMMSHIM_TUNE */
    int fp8_tiles;                 /* GEMMSHIM_FP8_TILES=1: the experimental FP8
                                      configurations (gs_family_t.fp8_tiles_configs)
                                      may take FP8 calls */
} gs_routing_t;

/* GEMMSHIM_TUNE_* settings (docs/TUNING.md). */
typedef struct gs_tune_config {
    char cache_path[GS_PATH_MAX];  /* GEMMSHIM_TUNE_CACHE, "" if unset */
    int pairs;                     /* GEMMSHIM_TUNE_PAIRS: timed pairs per candidate (4..64, 10) */
    int lt_algos;                  /* GEMMSHIM_TUNE_LT_ALGOS: cuBLASLt heuristic results (0..8, 8) */
    double budget_ms;              /* GEMMSHIM_TUNE_BUDGET_MS: tuning GPU time per process */
    double share;                  /* GEMMSHIM_TUNE_SHARE / 100: a signature's pairs' GPU time
                                      against its own calls' in a process (0: no limit) */
    double sustain_ms;             /* GEMMSHIM_TUNE_SUSTAIN_MS: a block of the sustained check
                                      (dispatch/gs_tune_rule.h; 0: no check) */
    size_t scratch_cap;            /* GEMMSHIM_TUNE_SCRATCH_MB: scratch per signature, bytes */
} gs_tune_config_t;

/* Fault injection at the shim's own device calls (shim/base/gs_hooks.h). */
enum {
    GS_FAULT_DEVICE = 1u << 0,    /* the device query fails */
    GS_FAULT_WORKSPACE = 1u << 1, /* the workspace allocation fails */
    GS_FAULT_SCRATCH = 1u << 2,   /* verify's scratch allocation fails */
    GS_FAULT_LAUNCH = 1u << 3,    /* every kernel launch fails */
};

typedef struct gs_config {
    gs_routing_t routing;
    int log_enabled;
    int log_to_stderr;
    char log_path[GS_PATH_MAX];
    int log_timing;                /* GPU time per route in the summary (events) */
    int strict;                    /* unresolved real symbol -> abort */
    char cublas_path[GS_PATH_MAX]; /* GEMMSHIM_CUBLAS, "" if unset */
    char cublaslt_path[GS_PATH_MAX];
    char table_path[GS_PATH_MAX];  /* GEMMSHIM_TABLE, "" if unset */
    char report_path[GS_PATH_MAX]; /* GEMMSHIM_REPORT: ab report prefix, "" if unset */
    char record_path[GS_PATH_MAX]; /* GEMMSHIM_RECORD: the signature file appended to at
                                      exit (gemmshim record), "" if unset */
    gs_verify_fail_t verify_fail;  /* GEMMSHIM_VERIFY_FAIL */
    double verify_tol;             /* GEMMSHIM_VERIFY_TOL, 0: per-type defaults */
    size_t workspace_cap;          /* GEMMSHIM_WORKSPACE_MB, bytes per (device, stream) */
    int intercept_dlsym;           /* GEMMSHIM_DLSYM=1: answer dlsym look-ups of entry points */
    int pdl;                       /* GEMMSHIM_PDL (default 1): programmatic dependent launch */
    int test_device;               /* GEMMSHIM_TEST_DEVICE given */
    gs_device_t test_dev;
    unsigned test_faults;          /* GEMMSHIM_TEST_FAULTS: GS_FAULT_* bits */
    int knob_values[GS_KNOBS_MAX]; /* the families' developer knobs, GEMMSHIM_DEV_*:
                                      knob i of the registry (gs_knob_at) */
    uint64_t knob_key;             /* the knobs' values folded into one word (decision keys) */
    gs_tune_config_t tune;
    int error;                     /* a value was rejected */
    char error_msg[512];           /* the first rejection, one line */
} gs_config_t;

typedef const char *(*gs_getenv_fn)(const char *name);

/* Parse from `get` (getenv in the library, a table in tests). On any bad
 * value: error = 1, error_msg says which and why, and mode falls back to
 * GS_MODE_OFF (pass-through); logging settings that parsed stay, so the
 * error can be logged. Returns 0 if all values were good, -1 otherwise. */
int gs_config_parse(gs_config_t *c, gs_getenv_fn get);

/* Parse a GEMMSHIM_KERNELS-style list (family or configuration names,
 * "all", "none") into r->allowed; 0 on success, -1 (r unchanged, msg says
 * why) otherwise. */
int gs_parse_kernel_list(gs_routing_t *r, const char *list, char *msg, size_t msg_size);

/* A GEMMSHIM_PLUGINS list: shared-library paths separated by ':', each
 * non-empty and shorter than GS_PATH_MAX, at most GS_PLUGINS_MAX. Copies
 * path i into paths[i] when paths is not NULL. The number of paths, or -1
 * (msg says why). */
int gs_parse_plugin_list(const char *list, char (*paths)[GS_PATH_MAX], char *msg,
                         size_t msg_size);

/* r->allowed as a GEMMSHIM_KERNELS list: a family's name where all its
 * configurations are allowed, else the allowed configurations' names;
 * "none" when nothing is. */
void gs_format_kernel_list(const gs_routing_t *r, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* GS_CONFIG_H */
