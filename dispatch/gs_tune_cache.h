/* Tuned decisions: per call class, the candidate that won its tuning (or
 * cuBLAS as called), held in memory and, with GEMMSHIM_TUNE_CACHE, in a
 * file that several processes share.
 *
 * The file is text (docs/TUNING.md has the format):
 *     # gemmshim tune cache
 *     format 1
 *     validator gpu=H100 sms=132 ... (what a decision depends on besides the call)
 *     sig<TAB>class<TAB>family<TAB>config<TAB>gain=..<TAB>lo95=..<TAB>pairs=..<TAB>ms=..<TAB># shape
 * Each decision is appended as it is made, one write(2) per line under an
 * exclusive flock, so a process killed at any point loses at most the
 * decision it was writing (a torn last line is skipped when read). Reading
 * merges (a later line for the same class wins) and compacts the file
 * (rewritten to a temporary file, renamed over) when it holds many more
 * lines than decisions; writers notice the rename and reopen. A file whose
 * validator differs from this process's is stale: ignored (read-only use)
 * or replaced (tuning), with one message. Pure C. */
#ifndef GS_TUNE_CACHE_H
#define GS_TUNE_CACHE_H

#include "gs_problem.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GS_TUNE_CACHE_FORMAT 1

typedef struct gs_tuned {
    char family[32];  /* the winner's family, or "cublas" (as the application called it) */
    char config[192]; /* its configuration as the family writes it (no tabs) */
    double gain;      /* geometric-mean speed ratio against cuBLAS as called */
    double lo95;      /* its lower 95% bound */
    int pairs;        /* pairs timed for the winner */
    double cost_ms;   /* GPU time the signature's tuning took */
} gs_tuned_t;

/* The family name of a decision that keeps cuBLAS as called. */
#define GS_TUNED_CUBLAS "cublas"

enum { GS_TUNE_CACHE_READONLY = 0, GS_TUNE_CACHE_WRITE = 1 };

/* Opens the cache file at path with this process's validator line (no
 * newline) and loads its decisions. WRITE: created when missing, stale
 * replaced, later gs_tuned_put calls appended. 0, or -1 with one line in
 * msg (unreadable, not a cache, stale in READONLY use); a message that is
 * not an error (malformed lines skipped, stale replaced) is also left in msg
 * with 0 returned. */
int gs_tune_cache_open(const char *path, const char *validator, int mode, char *msg,
                       size_t msg_size);

/* What gs_tune_cache_open does with a file's text once read (len bytes,
 * NULs included), without a file: the decisions of a text whose validator
 * is `validator` go into memory. 0: a cache text (fresh or stale: *fresh
 * says which), *lines its decision lines, *bad those skipped (malformed or
 * torn); -1: not a cache text (wrong or missing "format" line). Tests and
 * the fuzzer. */
int gs_tune_cache_load_buffer(const char *buf, size_t len, const char *validator, int *fresh,
                              size_t *lines, size_t *bad);

/* Stops writing to the file (tests; the process's end closes it too). */
void gs_tune_cache_close(void);

/* The decision for class c: 1 and *out, or 0. */
int gs_tuned_find(const gs_class_t *c, gs_tuned_t *out);

/* Records a decision (in memory; and appended to the file when one is open
 * for writing). 0, or -1 when the file write failed (msg says why; the
 * decision is still held in memory). `shape` is a comment for people. */
int gs_tuned_put(const gs_class_t *c, const gs_tuned_t *t, const char *shape, char *msg,
                 size_t msg_size);

/* A class as the file keys it: its bytes in lower-case hex, in memory
 * order (the signature file of `gemmshim record` uses the same encoding). */
#define GS_CLASS_HEX_LEN (2 * sizeof(gs_class_t))
void gs_class_hex(const gs_class_t *c, char out[GS_CLASS_HEX_LEN + 1]);

/* Changes whenever a decision is added (decision caches key on it). */
unsigned gs_tuned_generation(void);

/* Decisions held. */
size_t gs_tuned_count(void);

/* Forget every decision and close the file (tests). */
void gs_tuned_reset(void);

#ifdef __cplusplus
}
#endif
#endif /* GS_TUNE_CACHE_H */
