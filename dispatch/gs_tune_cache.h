/* Tuned decisions, claims and tuning progress per call class, held in
 * memory and, with GEMMSHIM_TUNE_CACHE, in a file that several processes
 * share.
 *
 * The file is text (docs/TUNING.md has the format):
 *     # gemmshim tune cache
 *     format 2
 *     validator gpu=H100 sms=132 ... (what a decision depends on besides the call)
 *     sig<TAB>class<TAB>family<TAB>config<TAB>gain=..<TAB>lo95=..<TAB>pairs=..<TAB>ms=..
 *         <TAB>prior=..<TAB>vs_prior=..[<TAB>seq=..[<TAB>was=..]]<TAB># shape  (one line)
 *     claim<TAB>class<TAB>host=..<TAB>pid=..<TAB>start=..<TAB>t=..<TAB># shape
 *     progress<TAB>class<TAB>host=..<TAB>pid=..<TAB>start=..<TAB>t=..<TAB><fields><TAB># shape
 * Every line is appended as it is made, one write(2) under an exclusive
 * flock, so a process killed at any point loses at most the line it was
 * writing (a torn last line is skipped when read, and the next writer
 * starts a new line after it). Reading merges: the later line for a class
 * wins; a decision ends its class's claim and progress. Format 1 files
 * (decisions without prior= and vs_prior=, nothing else) are still read,
 * their prior unknown. A tuning process compacts a file holding many more
 * lines than classes (temporary file renamed over; writers notice the
 * rename and reopen), keeping decisions, progress and live claims. A file
 * whose validator differs from this process's is stale: ignored (read-only
 * use) or replaced (tuning), with one message. Pure C. */
#ifndef GS_TUNE_CACHE_H
#define GS_TUNE_CACHE_H

#include "gs_class_hex.h" /* the class as the file keys it */
#include "gs_problem.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GS_TUNE_CACHE_FORMAT 2 /* written; format 1 is read too */

typedef struct gs_tuned {
    char family[32];  /* the route's family, or "cublas" (as the application called it) */
    char config[192]; /* its configuration as the family writes it (no tabs) */
    double gain;      /* geometric-mean speed ratio against cuBLAS as called */
    double lo95;      /* its lower 95% bound */
    int pairs;        /* pairs timed for the route (0: not measured) */
    double cost_ms;   /* GPU time the signature's tuning took */
    char prior[232];  /* the prior it was decided against: "cublas", "family/config",
                         or "?" (a format 1 line: not recorded) */
    double vs_prior;  /* its speed ratio over the prior (1 when it is the prior) */
    /* Settled in the CUDA graphs of its recorded sequences (`gemmshim tune
     * --from`'s sequence phase; optional fields seq= and was=): the
     * per-call choice's speed there, weighted over its sequences (0: not
     * settled so), and that choice ("family/config", "" when it is the
     * route above: kept). */
    double seq_gain;
    char was[232];
} gs_tuned_t;

/* The family name of a decision that keeps cuBLAS as called, and the prior
 * of a signature the shim forwards untuned. */
#define GS_TUNED_CUBLAS "cublas"
#define GS_TUNED_PRIOR_UNKNOWN "?"

/* Decision t may serve a signature whose prior is now `prior` ("cublas" or
 * "family/config"): it was decided against that prior. A format 1 decision
 * (prior unknown) serves unless it forwards where the prior now routes to a
 * kernel: the old rule wrote "cublas" whenever nothing beat cuBLAS, also
 * where the prior's kernel was faster. */
int gs_tuned_prior_matches(const gs_tuned_t *t, const char *prior);

enum { GS_TUNE_CACHE_READONLY = 0, GS_TUNE_CACHE_WRITE = 1 };

/* Opens the cache file at path with this process's validator line (no
 * newline) and loads it. WRITE: created when missing, stale replaced, a
 * format 1 file rewritten as format 2, later lines appended. 0, or -1 with
 * one line in msg (unreadable, not a cache, stale in READONLY use); a
 * message that is not an error (malformed lines skipped, stale replaced)
 * is also left in msg with 0 returned. */
int gs_tune_cache_open(const char *path, const char *validator, int mode, char *msg,
                       size_t msg_size);

/* What gs_tune_cache_open does with a file's text once read (len bytes,
 * NULs included), without a file: the lines of a text whose validator is
 * `validator` go into memory. 0: a cache text (fresh or stale: *fresh
 * says which), *lines its lines after the header, *bad those skipped
 * (malformed or torn); -1: not a cache text (wrong or missing "format"
 * line). Tests and the fuzzer. */
int gs_tune_cache_load_buffer(const char *buf, size_t len, const char *validator, int *fresh,
                              size_t *lines, size_t *bad);

/* Reads what other processes appended since this one last read (a
 * compaction elsewhere: the whole new file). 0, or -1 when no file is
 * open for writing. */
int gs_tune_cache_refresh(void);

/* Stops writing to the file (tests; the process's end closes it too). */
void gs_tune_cache_close(void);

/* The decision for class c: 1 and *out, or 0. */
int gs_tuned_find(const gs_class_t *c, gs_tuned_t *out);

/* Records a decision (in memory; and appended to the file when one is open
 * for writing); it ends the class's claim and progress. 0, or -1 when the
 * file write failed (msg says why; the decision is still held in memory).
 * `shape` is a comment for people. */
int gs_tuned_put(const gs_class_t *c, const gs_tuned_t *t, const char *shape, char *msg,
                 size_t msg_size);


/* Changes whenever a decision is added (decision caches key on it). */
unsigned gs_tuned_generation(void);

/* Decisions held. */
size_t gs_tuned_count(void);

/* Forget everything held and close the file (tests). */
void gs_tuned_reset(void);

/* ---- claims and progress: one process tunes a signature ---- */

typedef struct gs_tune_owner {
    char host[64];            /* gethostname, no spaces */
    long long pid;
    unsigned long long start; /* the process's start, clock ticks after boot (/proc) */
    long long t;              /* when it last wrote a claim or progress line (Unix time) */
} gs_tune_owner_t;

/* A claim from another host without a line for this long is taken over
 * (its process cannot be checked from here). */
#define GS_TUNE_CLAIM_FOREIGN_S 600

/* This process (its pid and start time read again after a fork). */
void gs_tune_owner_self(gs_tune_owner_t *o);

/* 1 when the owner may still be running: this process; on this host, its
 * pid is alive with the same start time; on another, it wrote within
 * GS_TUNE_CLAIM_FOREIGN_S of now (Unix time). */
int gs_tune_owner_alive(const gs_tune_owner_t *o, long long now);

typedef enum gs_claim {
    GS_CLAIM_OURS = 0,      /* unclaimed (or already this process's): now this process's */
    GS_CLAIM_TAKEN_OVER,    /* its claimer is gone (*holder): now this process's */
    GS_CLAIM_HELD,          /* a live process (*holder) tunes it: use the prior meanwhile */
    GS_CLAIM_DECIDED,       /* a decision against `prior` is in: nothing to tune */
} gs_claim_t;

/* Under the file's lock, after reading what others appended: the claim on
 * class c for this process (a claim line appended), unless a decision
 * against `prior` is in or a live process holds it. Without a file, the
 * claim is held in memory. */
gs_claim_t gs_tune_claim(const gs_class_t *c, const char *prior, const char *shape,
                         gs_tune_owner_t *holder);

/* Records this process's progress on class c (its fields:
 * gs_tune_progress_format, dispatch/gs_tune_rule.h), in memory and
 * appended to the file. 0, or -1 (too long, malformed, or the write
 * failed: msg says why). */
int gs_tune_progress_put(const gs_class_t *c, const char *fields, const char *shape, char *msg,
                         size_t msg_size);

/* The latest progress recorded for class c (malloc'd, the caller frees),
 * or NULL; *by (when not NULL) its writer. */
char *gs_tune_progress_get(const gs_class_t *c, gs_tune_owner_t *by);

#ifdef __cplusplus
}
#endif
#endif /* GS_TUNE_CACHE_H */
