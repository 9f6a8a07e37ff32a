/* One call signature's tuning state in this process, shared by the
 * tuner's three files: gs_tune.c (the calls: signatures, claims, each
 * call's step), gs_tune_pairs.c (timed pairs on the GPU and their
 * collection) and gs_tune_settle.c (the decision: the rule, the sustained
 * check, progress and claims in the cache). Every gs_tsig_ function runs
 * under the tuner's lock. Private to shim/tune. */
#ifndef GS_TUNE_SIG_H
#define GS_TUNE_SIG_H

#include "gs_call.h"
#include "gs_class_map.h"
#include "gs_problem.h"
#include "gs_tune_rule.h"

#include <cuda_runtime_api.h>
#include <time.h>

enum {
    PEND_MAX = 16,        /* pairs in flight per signature */
    NAME_MAX_BYTES = 232, /* a candidate's "family/configuration" */
};

typedef enum sig_state {
    SIG_NEW = 0,  /* not claimed yet */
    SIG_TUNING,   /* this process tunes it */
    SIG_WAITING,  /* another process does: the prior serves it meanwhile */
    SIG_DECIDED,
} sig_state_t;

typedef struct pending {
    int cand;
    cudaEvent_t ev[6];   /* each side's start and end [0..3]; after the comparison's
                            copy [4]; the pair's start, ahead of copies, spin and
                            flushes [5]: its whole GPU cost, charged to the budgets */
    int first_is_cand;
    int warmup;          /* a candidate's first pair: compared, not timed (it may
                            load modules lazily, build plans, fill caches) */
    int cmp;             /* pinned comparison slot, -1 if none */
    int run;             /* calls per side: the times are divided by it */
} pending_t;

typedef struct tsig {
    gs_class_key_t key;  /* first: the signature table's key (gs_class_map.h) */
    cudaStream_t owner;  /* the one stream that tunes it */
    sig_state_t state;
    long long next_check; /* SIG_WAITING: when to look at the cache again (ns) */
    int unsaved;         /* pairs collected since the last progress line */
    int run;             /* calls per side of a timed pair; 0 until cuBLAS's time
                            is known (run_of) */
    gs_tune_share_t share; /* this process's pairs against its calls (GEMMSHIM_TUNE_SHARE) */
    gs_tune_sig_t rule;
    char prior[NAME_MAX_BYTES]; /* what the shim does untuned: "cublas" or family/config */
    char name[GS_TUNE_CANDS_MAX][NAME_MAX_BYTES]; /* each candidate's family/config */
    double tol;          /* the comparison's tolerance for this signature */
    unsigned char warm[GS_TUNE_CANDS_MAX]; /* the candidate ran in this process */
    unsigned char unsustained[GS_TUNE_CANDS_MAX]; /* won its pairs, lost the sustained check */
    int awaiting_check;  /* decided by its pairs, the sustained check not yet afforded
                            (GEMMSHIM_TUNE_SHARE): the prior serves it meanwhile */
    int needs_compare[GS_TUNE_CANDS_MAX];
    pending_t pend[PEND_MAX];
    int n_pend;
    char *scratch;       /* cudaMallocAsync on owner: two outputs, comparison sums,
                            then the L2 flush area */
    size_t c_bytes, flush_bytes;
    char shape[144];
} tsig_t;

/* GPU time this process has spent tuning (ms): pairs and sustained checks,
 * against GEMMSHIM_TUNE_BUDGET_MS. */
extern double gs_tsig_spent_ms;
/* Signatures this process decided, and of them those whose route is not
 * the prior (the exit summary). */
extern unsigned long long gs_tsig_n_decided, gs_tsig_n_won;

static inline long long gs_tsig_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- gs_tune_pairs.c ---- */

/* The pinned comparison slots, once at start: 0, or -1 (nothing can be
 * compared, so nothing is tuned). */
int gs_tsig_pairs_start(void);
int gs_tsig_pairs_ready(void);
/* The signature's scratch, once: 0, or -1 (it was decided: the prior kept). */
int gs_tsig_scratch_ready(tsig_t *s, const gs_problem_t *p, const gs_device_t *d,
                          cudaStream_t st);
/* Output `which` (0 the candidate's, 1 the reference's) in the scratch,
 * with C's alignment. */
char *gs_tsig_out_of(const tsig_t *s, int which, const void *C);
/* A candidate's run on a scratch output: 0 or an error. */
int gs_tsig_run_candidate(const tsig_t *s, const gs_tune_cand_t *cand, const gs_problem_t *p,
                          const gs_device_t *d, void *out);
/* Reads the pairs that completed, in order. Needs no call: also at exit. */
void gs_tsig_collect(tsig_t *s, const gs_tune_limits_t *lim);
/* One pair on the owner stream: 1 enqueued (or failed once on the GPU), 0
 * no room (nothing enqueued, nothing charged). */
int gs_tsig_enqueue_pair(tsig_t *s, int ci, const gs_call_t *c, const gs_problem_t *p,
                         const gs_device_t *d, const gs_tune_limits_t *lim);

/* ---- gs_tune_settle.c ---- */

/* Decides by the rule (why == NULL) or keeps the prior (why says why). */
void gs_tsig_decide(tsig_t *s, const char *why);
/* Every live pair is in: decides, with the sustained check where it applies. */
void gs_tsig_settle(tsig_t *s, const gs_call_t *c, const gs_problem_t *p, const gs_device_t *d,
                    const gs_tune_limits_t *lim);
/* This process's progress on the signature, into the cache. */
void gs_tsig_save_progress(tsig_t *s);
/* Claims the signature for this process, or leaves it to its holder. */
void gs_tsig_claim(tsig_t *s);

#endif
