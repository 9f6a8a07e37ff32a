/* What the replay reads of the tune cache the shim writes (format 2,
 * docs/TUNING.md): its validator, to compare a signature file's facts with
 * this machine's, and the decisions, for the summary. It never decides
 * what to replay from them: the shim says that (gemmshim_last_tuning).
 * Pure C. */
#ifndef GS_REPLAY_CACHE_H
#define GS_REPLAY_CACHE_H

#include "gs_replay_sigs.h"
#include "gs_tune_cache.h"

#include <stddef.h>
#include <stdio.h>

/* The cache's validator (the text after "validator "): 0, or -1 when the
 * file cannot be read or has none. */
int gs_replay_cache_validator(const char *path, char *out, size_t size);

/* The facts (gpu, sms, cc, driver, cublas, cublaslt, shim) where a
 * signature file's header line differs from the cache's validator, as
 * "gpu=H100 (here H200), driver=13000 (here 13010)"; "" when none does. */
void gs_replay_facts_diff(const char *header, const char *validator, char *out, size_t size);

typedef enum gs_replay_verdict {
    GS_REPLAY_UNDECIDED = 0,
    GS_REPLAY_KEPT_PRIOR,   /* the decision is the prior's own route */
    GS_REPLAY_REPLACED,     /* another route beat the prior */
    GS_REPLAY_DECIDED,      /* a format 1 decision: its prior is not recorded */
} gs_replay_verdict_t;

/* A decision against the prior it records: its own route (KEPT_PRIOR:
 * also cuBLAS where the prior forwards), another (REPLACED), or a format 1
 * decision (DECIDED). */
gs_replay_verdict_t gs_replay_verdict_of(const gs_tuned_t *t);

/* Per signature of s, the cache's decision (the latest line of its class):
 * out[i] for s->sig[i]; seq_gain[i] (when seq_gain is not NULL) the
 * decision's seq= (0: not settled in sequences). 0, or -1 when the file
 * cannot be read. */
int gs_replay_cache_verdicts(const char *path, const gs_replay_sigs_t *s,
                             gs_replay_verdict_t *out, double *seq_gain);

/* Opens the cache for writing with the file's own validator (no GPU
 * needed; nothing of it is replaced as stale), its decisions read into
 * memory (gs_tuned_find). 0, or -1 with msg. */
int gs_replay_cache_open_own(const char *path, char *msg, size_t msg_size);

/* Decision t given back to the prior it records: the prior's route, its
 * gain over cuBLAS derived from t's two (t->gain / t->vs_prior; no pairs,
 * no bound), vs_prior 1, and was= naming t's own route. */
void gs_replay_as_prior(const gs_tuned_t *t, gs_tuned_t *w);

/* Gives each class listed on `in` back to its prior in the cache: lines
 * "HEX<TAB>comment" (the comment becomes the line's "# " text). A class
 * with no decision, or whose decision already is its prior, is left as it
 * is and said so on `err`. 0, or -1 (an unreadable line, a write that
 * failed). */
int gs_replay_keep_prior(const char *path, FILE *in, FILE *err);

#endif
