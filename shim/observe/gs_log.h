/* The per-signature call log, the statistics and the exit summary. The
 * lines go through the message sink (gs_sink.h: gs_msg, gs_log_line); the ab
 * report files are written by gs_report.c. */
#ifndef GS_LOG_H
#define GS_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "gs_class_hex.h"
#include "gs_config.h"
#include "gs_dispatch.h"
#include "gs_problem.h"
#include "gs_sink.h"

/* Open the sink named by the configuration (called once by gs_cfg) and make
 * the statistics fork-safe: a forked child starts with its own, empty ones
 * (its summary and report are its own calls only). */
void gs_log_open(const gs_config_t *c);

/* Count a call; the first call of each distinct signature (entry point,
 * types, transposes, sizes, route) writes one line. `kernel` names what ran
 * (a kernel name with its tile shape), NULL for forwarded calls; `why` is
 * the reason the line gives: dec->reason, or for a forwarded cuBLASLt call
 * every reason, which a decision's buffer may not hold. */
void gs_log_call(const gs_problem_t *p, const gs_decision_t *dec, const char *kernel,
                 const char *why);

/* Our route failed at launch and the call went to cuBLAS instead: counted,
 * and said once per distinct kernel and error. */
void gs_log_fallback(const gs_problem_t *p, const char *kernel, const char *error);

/* GPU time of one call, measured with events (shim/observe/gs_timing.c). */
/* tuned: the call was routed (or forwarded) by a tuned decision; the
 * summary then gives the share of GPU time such calls took. */
void gs_log_add_time(gs_route_t route, int tuned, double ms);

/* The summary table (calls and time share per route) as one block in the
 * log; run at exit (by a forked child only if it made calls). */
void gs_log_summary(void);

/* The report (signature lines with call counts, then the summary) to a
 * file; 0 or -1 (cannot write). */
int gs_log_write_report(const char *path);

/* Calls per route and fallbacks since the start or the last reset. */
void gs_log_get_stats(uint64_t calls[GS_ROUTE_COUNT], uint64_t *fallbacks);
void gs_log_reset_stats(void);

/* ---- GEMMSHIM_MODE=ab: per-signature turns, times, errors ---- */
typedef struct gs_sig gs_sig_t;
/* The signature's A/B record and how many turns it had before this one
 * (turn 0: verified, untimed; then odd turns cuBLAS's, even ours). NULL
 * when the signature table is full. */
gs_sig_t *gs_log_ab_turn(const gs_problem_t *p, const gs_decision_t *dec, const char *kernel,
                         uint64_t *turn);
void gs_log_ab_time(gs_sig_t *s, int ours, double ms);
void gs_log_ab_error(gs_sig_t *s, double rel);
/* The table (to the log, else stderr), and PREFIX.csv / PREFIX.json
 * (naming per process: gs_report.h). Defined in gs_report.c. */
void gs_log_ab_report(const char *prefix);

/* One signature's A/B result: times are mean microseconds per timed call,
 * NaN where unmeasured (speedup = cublas_us / ours_us). */
typedef struct gs_ab_row {
    char signature[160];
    char cls[GS_CLASS_HEX_LEN + 1]; /* its class as the tune cache keys it */
    char route[64];
    uint64_t calls;
    double ours_us, cublas_us, speedup, max_err;
} gs_ab_row_t;
/* The signatures that had A/B turns, in first-seen order: an array from
 * malloc (the caller frees) in *rows, its length returned; 0 with *rows
 * NULL when there are none (or no memory). */
size_t gs_log_ab_rows(gs_ab_row_t **rows);

/* "cublasGemmEx_64" etc. */
const char *gs_entry_name(gs_entry_t e, int is_64);
/* "f32", "f16", "bf16", "f64" or "other", as log lines name a type. */
const char *gs_dtype_name(gs_dtype_t t);
/* "32F", "32F_FAST_TF32", ... or "other": the compute type as log lines name it. */
const char *gs_compute_name(gs_compute_t c);
/* Appends to buf (holding a class's shape, strlen(buf) < size) what else
 * sets the class apart: " +bias(TYPE)", each matrix's cublasLtMatmul scale
 * mode (" scale_A=OUTER_VEC_32F"), " c_type=TYPE" where C's differs from
 * D's, " amax_d", " fast_accum". The record's, the tuner's and the log's
 * shapes say it alike, so two classes never read as one. */
void gs_class_extras(const gs_class_t *c, char *buf, size_t size);

#endif
