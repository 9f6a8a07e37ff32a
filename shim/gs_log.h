/* Messages, the per-signature call log and the exit summary. */
#ifndef GS_LOG_H
#define GS_LOG_H

#include <stdint.h>

#include "gs_config.h"
#include "gs_dispatch.h"
#include "gs_problem.h"

/* Open the sink named by the configuration (called once by gs_cfg). */
void gs_log_open(const gs_config_t *c);

/* A problem the user must see (bad setting, missing symbol, fallback):
 * always on stderr, and in the log file too when there is one. */
void gs_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An informational line, written only when GEMMSHIM_LOG is set. */
void gs_log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Count a call; the first call of each distinct signature (entry point,
 * types, transposes, sizes, route) writes one line. `kernel` names what ran
 * (a kernel name with its tile shape), NULL for forwarded calls. */
void gs_log_call(const gs_problem_t *p, const gs_decision_t *dec, const char *kernel);

/* Our route failed at launch and the call went to cuBLAS instead: counted,
 * and said once per distinct kernel and error. */
void gs_log_fallback(const gs_problem_t *p, const char *kernel, const char *error);

/* GPU time of one call, measured with events (shim/gs_timing.c). */
void gs_log_add_time(gs_route_t route, double ms);

/* The summary table (calls and time share per route); run at exit. */
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
/* The table (to the log, else stderr), and PREFIX.csv / PREFIX.json. */
void gs_log_ab_report(const char *prefix);

/* "cublasGemmEx_64" etc. */
const char *gs_entry_name(gs_entry_t e, int is_64);

#endif
