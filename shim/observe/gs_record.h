/* What `gemmshim record` keeps of a process's GEMMs (GEMMSHIM_RECORD;
 * docs/TUNING.md, "Record, then tune offline"): per signature (the call's
 * class, as the tune cache keys it) its calls, how many of them were
 * captured into CUDA graphs, and the GPU time of those that were timed; per
 * capture, the order of its GEMMs. Held in memory and bounded, under one
 * lock taken once per call (no I/O on the application's path), and turned
 * into the signature file's lines at exit (gs_record_out.h). A forked child
 * starts empty: its lines are its own calls. No CUDA, no files. */
#ifndef GS_RECORD_H
#define GS_RECORD_H

#include "gs_problem.h"

#include <stddef.h>
#include <stdint.h>

enum {
    GS_RECORD_SIGS_MAX = 4096,        /* signatures kept; later ones' calls are dropped */
    GS_RECORD_CAPTURES_MAX = 4096,    /* captures whose sequence is kept */
    GS_RECORD_POSITIONS_MAX = 1 << 20, /* captured calls placed in sequences, all captures */
    GS_RECORD_WHY_MAX = 256           /* a reason kept, NUL included: a cuBLASLt call's
                                         every reason (compat/gs_call.h's GS_LT_WHY_MAX) */
};

typedef struct gs_rec_sig gs_rec_sig_t;

/* Counts one call of class c. why: NULL when the class describes the call
 * (what a tune cache decision would serve), else why it does not (a
 * cuBLASLt call with features beyond the class): such calls are kept apart
 * by their reason and never tuned. The reason must not hold a tab. capture: the CUDA capture
 * sequence the call was captured into (cudaStreamGetCaptureInfo's id), 0
 * when it ran eagerly. Returns the signature's record for the call's GPU
 * time, or NULL when the table is full (the call is counted as dropped). */
gs_rec_sig_t *gs_record_call(const gs_class_t *c, const char *why, unsigned long long capture);

/* The GPU time of one of s's calls (shim/observe/gs_timing.c, when it finishes). */
void gs_record_time(gs_rec_sig_t *s, double ms);

typedef struct gs_record_totals {
    uint64_t calls;     /* counted since the start (or the fork, or the reset) */
    uint64_t dropped;   /* of them, not kept: the signature table was full */
    uint64_t sigs;      /* signatures kept */
    uint64_t captures;  /* captures kept */
    uint64_t unplaced;  /* captured calls left out of their sequence (bounds) */
} gs_record_totals_t;
void gs_record_totals(gs_record_totals_t *t);

/* The signature file's lines for what is held (format: docs/TUNING.md):
 *   sig <TAB> CLASS-HEX <TAB> id=.. calls=.. captured=.. timed=.. ms=..
 *       tunable=1|0 [why=..] <TAB> # shape   (fields tab-separated)
 * one per signature in first-seen order, then one "seq" line per distinct
 * captured sequence (identical captures merged, their count in captures=):
 *   seq <TAB> id=.. captures=.. gemms=.. complete=1|0 <TAB> sigs=ID,ID,...
 * Each line, newline included, goes to emit (under the record's lock: emit
 * must not call back). 0, or -1 when emit returned nonzero or memory ran
 * out (the lines given so far stand). */
int gs_record_lines(int (*emit)(void *ctx, const char *line, size_t len), void *ctx);

/* Forget everything (tests; a forked child). */
void gs_record_reset(void);

#endif
