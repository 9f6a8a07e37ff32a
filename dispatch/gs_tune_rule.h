/* Online tuning of one call signature, as numbers: its candidates, the
 * paired timings each has collected against cuBLAS as the application
 * called it, the budgets, the rule that decides, and the signature's
 * progress as text (what the tune cache keeps between processes). Pure C:
 * the GPU side (shim/tune/gs_tune.c) enqueues the pairs and feeds the times in;
 * the unit tests feed synthetic ones.
 *
 * A pair is one candidate and cuBLAS-as-called run back to back on the same
 * inputs, L2 flushed before each side (shim/tune/gs_tune.c), so both read their
 * operands from memory, as a call between a model's other kernels mostly
 * does. A pair's sample is log(t_cublas / t_cand) of its own two times (> 0:
 * the candidate is faster): the GPU's clock, which drifts between pairs by
 * more than most gains, is the same for both. Pairs alternate their order,
 * and the statistic's samples are order-balanced: sample k is the mean of
 * the k-th candidate-first and the k-th cuBLAS-first pair's, so what the
 * flush leaves of a position effect cancels.
 *
 * The incumbent is the prior: the route the shim takes for the signature
 * untuned (the routing table's or the policy's choice, itself one of the
 * candidates, or cuBLAS as called where it forwards). A challenger (another
 * candidate, or cuBLAS as called when the prior is a kernel) replaces it
 * only when the lower 95% bound of its speed ratio over the prior, over at
 * least min_pairs pairs of each, exceeds win_ratio; of several the one with
 * the highest mean is taken; otherwise, ties included, the prior is kept.
 * Candidate against prior is derived from the two candidates' samples
 * against cuBLAS (each drift-free within its pairs): the difference of
 * their means with Welch's standard error and degrees of freedom; against
 * cuBLAS itself (mean 0, no variance) that is Student's one-sample bound. */
#ifndef GS_TUNE_RULE_H
#define GS_TUNE_RULE_H

#include "gs_problem.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    GS_TUNE_CANDS_MAX = 32,
    GS_TUNE_PAIRS_MAX = 64,
    GS_TUNE_CUBLAS = -1, /* "candidate" index of cuBLAS as the application called it */
};

typedef enum gs_tune_cand_state {
    GS_CAND_LIVE = 0,
    GS_CAND_MISMATCH, /* its first result differed from cuBLAS's: never chosen */
    GS_CAND_FAILED,   /* it could not be enqueued */
    GS_CAND_SLOW,     /* pruned: clearly slower after the first pairs */
} gs_tune_cand_state_t;

typedef struct gs_tune_cand {
    int family;   /* registry family index */
    int config;   /* its configuration for this signature */
    gs_tune_cand_state_t state;
    int checked;  /* its first result was compared with cuBLAS's and agreed */
    int enqueued; /* pairs enqueued, their times not all in yet */
    int n;        /* pairs whose times are in */
    int timed_cand_first, timed_cublas_first; /* timed pairs enqueued of each order */
    double log_ratio[GS_TUNE_PAIRS_MAX];  /* every pair's, in order (pruning) */
    char first[GS_TUNE_PAIRS_MAX];        /* and its order: 'c' candidate first, 'r' cuBLAS */
    double cand_first[GS_TUNE_PAIRS_MAX]; /* log ratios of the candidate-first pairs */
    double cublas_first[GS_TUNE_PAIRS_MAX]; /* ... and of the cuBLAS-first ones */
    int n_cand_first, n_cublas_first;
} gs_tune_cand_t;

/* The budgets are in work done, never in calls: a call that finds no room
 * for a pair (pairs still in flight, no event or comparison slot) costs the
 * signature nothing. max_pairs and max_gpu_ms carry over between processes
 * with the signature's progress; max_idle_calls is the guard against a
 * process that can never enqueue a pair (then the signature is decided on
 * what it has). */
typedef struct gs_tune_limits {
    int min_pairs;      /* pairs per candidate before it can win */
    double win_ratio;   /* the lower bound over the prior must exceed this (1.01) */
    double prune_ratio; /* after prune_after pairs, a mean below this drops it */
    int prune_after;
    int max_pairs;      /* pairs enqueued for the signature (warm-ups and dropped ones too) */
    double max_gpu_ms;  /* GPU time the signature's pairs may take */
    int max_idle_calls; /* consecutive calls in one process that carried no pair */
} gs_tune_limits_t;

/* The defaults: 10 pairs, 1.01, prune below 0.85 after 3, 512 pairs, 2 s,
 * 10000 idle calls. */
gs_tune_limits_t gs_tune_default_limits(void);
/* The same with min_pairs pairs per candidate (GEMMSHIM_TUNE_PAIRS), an odd
 * count rounded up: the samples take one pair of each order. */
gs_tune_limits_t gs_tune_default_limits_for(int min_pairs);

typedef struct gs_tune_sig {
    gs_tune_cand_t cand[GS_TUNE_CANDS_MAX];
    int n_cand;
    int prior;       /* the candidate that is the prior, or GS_TUNE_CUBLAS */
    int next;        /* round-robin position */
    int calls;       /* calls that carried at least one pair */
    int idle;        /* calls since the last that carried one */
    int pairs;       /* pairs enqueued (the pair budget) */
    double gpu_ms;   /* GPU time of the pairs so far (both sides, flushes, spin) */
    double credit_ms; /* GPU time its calls earned under GEMMSHIM_TUNE_SHARE in
                         earlier processes and did not spend (gs_tune_share_credit):
                         what the sustained check's one lump may draw on */
    double call_ms;  /* cuBLAS's time for one call, as the share last knew it (0:
                        unknown): a resumed process with every pair in knows it */
} gs_tune_sig_t;

/* Empty signature, the prior cuBLAS as called; candidates are added with
 * gs_tune_add (-1 when full). */
void gs_tune_init(gs_tune_sig_t *s);
int gs_tune_add(gs_tune_sig_t *s, int family, int config);
/* Candidate `cand` is the prior: it is the incumbent, and never pruned. */
void gs_tune_set_prior(gs_tune_sig_t *s, int cand);

/* The candidate whose pair goes next (round robin over those still needing
 * pairs), or -1 when none needs one now. Nothing moves until
 * gs_tune_enqueued says the pair was enqueued. */
int gs_tune_next(const gs_tune_sig_t *s, const gs_tune_limits_t *lim);

/* The order of the candidate's next timed pair (1: the candidate runs
 * first): the order it has fewer of. */
int gs_tune_order(const gs_tune_sig_t *s, int cand);

/* A pair of the candidate is on the GPU: the rotation moves past it, the
 * pair budget is charged. order: 1 or 0 for a timed pair (as
 * gs_tune_order said), -1 for one whose times are not used (a warm-up). */
void gs_tune_enqueued(gs_tune_sig_t *s, int cand, int order);

/* The end of one call: `pairs` of them enqueued in it. A call with none
 * costs nothing (it only counts toward max_idle_calls). */
void gs_tune_call_done(gs_tune_sig_t *s, int pairs);

/* What a signature's pairs may cost one process (GEMMSHIM_TUNE_SHARE): the
 * pairs' GPU time, those in flight counted at the last pair's cost, stays
 * within `share` of the GPU time the signature's own calls take there
 * (cuBLAS's time for one call, from the pairs, times its calls), so a
 * tuning run keeps 1 / (1 + share) of plain or better where its GEMMs are
 * what runs. The first pair goes before any time is known. The calls a
 * signature needs in all do not depend on how many processes it takes. */
typedef struct gs_tune_share {
    long long calls; /* the signature's calls in this process while it tunes */
    double pairs_ms; /* GPU time of this process's pairs whose times are in */
    double call_ms;  /* cuBLAS's time for one call: the mean over those pairs */
    double pair_ms;  /* the last of them: its whole GPU time */
    int n;           /* pairs behind call_ms */
    double carried_ms; /* credit from earlier processes (gs_tune_sig_t.credit_ms) */
    double carried_call_ms; /* call_ms from earlier processes, where none is measured here */
} gs_tune_share_t;

/* A call of the signature (whether or not it carries a pair). */
void gs_tune_share_call(gs_tune_share_t *sh);
/* A pair's times came in: its whole GPU time, and cuBLAS's for one call. */
void gs_tune_share_pair(gs_tune_share_t *sh, double whole_ms, double t_cublas_ms);
/* 1 if another pair fits, `in_flight` pairs being on the GPU; share <= 0:
 * no limit. */
int gs_tune_share_allows(const gs_tune_share_t *sh, int in_flight, double share);

/* What a one-off cost (a sustained check, below) may take under the share:
 * this process's pairs and that cost within `share` of the GPU time the
 * signature's calls took here, plus the credit carried from earlier
 * processes. share <= 0: always. A lump larger than one short process
 * earns is so taken in a later one: the calls it needs in all do not grow
 * with the number of processes. */
int gs_tune_share_allows_ms(const gs_tune_share_t *sh, double cost_ms, double share);
/* The credit to carry on: what the calls earned (here and before) less
 * what the pairs and checks spent, at least 0; 0 without a share. */
double gs_tune_share_credit(const gs_tune_share_t *sh, double share);
/* cuBLAS's time for one call as the share knows it: measured here, else
 * carried; 0 when unknown. */
double gs_tune_share_call_ms(const gs_tune_share_t *sh);

/* ---- the sustained check ----
 * A pair times one call of each side after a flush and a short spin: the
 * GPU is below its power limit there and runs at its highest clock. A
 * large compute-bound call that an application issues back to back runs at
 * the clock the power limit allows, and a choice that is faster at the
 * high clock while drawing more power loses there (bench/NOTES.md,
 * "Sustained blocks"). So a challenger that wins its pairs on a
 * compute-bound call (at least GS_SUSTAIN_MIN_INTENSITY flops per byte of
 * its operands and output) of at least GS_SUSTAIN_MIN_MS is run once more
 * against the prior in blocks of back-to-back calls, each block long enough
 * for the clock to settle to that side's own draw, in rounds of
 * alternating order; it replaces the prior only if it wins there too, by
 * the rule's win_ratio. A memory-bound call is left to its pairs: back to
 * back, a decode GEMM hides the ramp and tail that it shows between a
 * model's other kernels, and blocks called skinny kernels' gains 0.99-1.01
 * that the graph of a decode step measured at 1.05-1.09 (bench/NOTES.md). */
#define GS_SUSTAIN_MIN_MS 0.02     /* shorter calls: the pairs stand (their runs, run_of) */
/* flops per byte: far below, memory-bound, left to the pairs. Not the
 * Hopper ridge (~300): TN 4096x128x14336 (123) streams 117 MB of weights
 * in 40 us, and a cuBLASLt algorithm 1.05x cuBLAS in single-call pairs read
 * 0.94x back to back in bench_ab; the skinny shapes the blocks misread are
 * n <= 64 (under 64). */
#define GS_SUSTAIN_MIN_INTENSITY 96.0
#define GS_SUSTAIN_SETTLE 0.4      /* share of a block before its timed part: the clock settles */
enum {
    GS_SUSTAIN_ROUNDS = 3,         /* blocks of each side */
    GS_SUSTAIN_MIN_CALLS = 16,     /* calls per block, at least ... */
    GS_SUSTAIN_MAX_CALLS = 20000,  /* ... and at most (the host enqueues them) */
};

typedef struct gs_sustain_plan {
    int calls;    /* calls per block */
    int settle;   /* of them, untimed ahead of the timed part */
    int rounds;   /* blocks per side; round r runs the prior first when r is even */
    double cost_ms; /* the check's expected GPU time */
} gs_sustain_plan_t;

/* The plan for a call taking call_ms with `intensity` flops per byte and
 * blocks of block_ms; calls == 0 when the check does not apply (block_ms
 * <= 0, a call shorter than GS_SUSTAIN_MIN_MS or below
 * GS_SUSTAIN_MIN_INTENSITY). */
gs_sustain_plan_t gs_tune_sustain_plan(double call_ms, double intensity, double block_ms);

/* A lower bound on a class's GPU time (ms) from its bytes and flops at
 * GS_EST_BYTES_PER_S and GS_EST_FLOPS_PER_S: what "a short call" means to
 * the rule below. A pair's own reading of cuBLAS cannot say it: after the
 * flush, a 3 us call (TN 1024x32x4096) read over 20 us. */
#define GS_EST_BYTES_PER_S 3.0e12
#define GS_EST_FLOPS_PER_S 6.0e14
double gs_tune_est_ms(const gs_class_t *c);

/* Pairs of one call a side on a call shorter than GS_SUSTAIN_MIN_MS time
 * launches and ramps as much as the kernels, and a route of several
 * kernels (a split-K pass and its reduction) pays its extra launch there
 * where a stream or a graph hides it. Where such pairs read the prior, a
 * routing-table kernel, slower than cuBLAS as called, they contradict the
 * table's own steady-state reading of that kernel (bench_ab: TN 1024x32x4096,
 * the table's skinny kernel 1.8-2.4x cuBLAS; its pairs 0.90x, so a cuBLASLt
 * algorithm that tied cuBLAS "beat" it by 1.11x and served at 1.13x). 1 when
 * s's pairs do that on a call of call_ms (cuBLAS's time for one call): the
 * prior then stays, whatever beat it. call_ms: gs_tune_est_ms of the class. */
int gs_tune_pairs_doubt_prior(const gs_tune_sig_t *s, double call_ms);

/* A class's flops per byte moved: A and B read once, C written (and read
 * too where beta may be nonzero). */
double gs_tune_intensity(const gs_class_t *c);

/* The challenger's speed ratio over the prior from each round's per-call
 * times (ms): the median over rounds of prior / challenger (adjacent
 * blocks share the clock's drift); 0 when a time is missing. */
double gs_tune_sustain_ratio(const double *prior_ms, const double *cand_ms, int rounds);

/* A pair's times (milliseconds) and its order; a non-positive time drops
 * the pair. */
void gs_tune_add_pair(gs_tune_sig_t *s, int cand, double t_cublas, double t_cand,
                      int cand_first, const gs_tune_limits_t *lim);

/* 1 when the signature can be decided now: every live candidate has its
 * pairs (and none in flight), or a budget is spent. */
int gs_tune_done(const gs_tune_sig_t *s, const gs_tune_limits_t *lim);

typedef struct gs_tune_verdict {
    int route;       /* the candidate to serve the signature, or GS_TUNE_CUBLAS */
    int kept_prior;  /* 1: nothing beat the prior, the route is the prior's */
    int prior_unsafe; /* the prior mismatched or failed: cuBLAS stood in for it */
    double gain, lo95; /* the route against cuBLAS as called: geometric mean ratio and
                          lower 95% bound; 1, 1 for cuBLAS or a prior not measured */
    double vs_prior, vs_prior_lo95; /* against the prior: 1, 1 when kept */
} gs_tune_verdict_t;

/* The rule (see the top of this file). */
gs_tune_verdict_t gs_tune_decide(const gs_tune_sig_t *s, const gs_tune_limits_t *lim);

/* One candidate's mean log ratio over its order-balanced samples and the
 * lower 95% bound (Student's t); 0 when it has fewer than 2 such samples. */
int gs_tune_bounds(const gs_tune_cand_t *c, double *mean, double *lo);

/* ---- progress, for the tune cache ----
 * Text fields separated by tabs, no newline, nothing below '!' but the
 * tabs: pairs=<enqueued> us=<GPU us> calls=<calls>, credit_us=<credit>
 * and call_ns=<cuBLAS's time for one call> where known (both optional when
 * read), and per candidate
 *     cand=<name>:<live|mismatch|failed|pruned>:<checked 0|1>:<samples>
 * with the samples in order, each 'c' (candidate first) or 'r' (cuBLAS
 * first) and its log ratio, separated by commas ("-" when none). names[i]
 * is candidate i's name: "family/configuration", without tabs or spaces. */

/* 0 and the text in buf, or -1 when it does not fit. */
int gs_tune_progress_format(const gs_tune_sig_t *s, const char *const *names, char *buf,
                            size_t size);

/* Resumes s (candidates added, nothing timed) from text: every candidate
 * found by name takes its recorded pairs, state and comparison; the
 * budgets go on from the recorded ones. Candidates of the text that s does
 * not have are left out. The number of candidates resumed, or -1 when the
 * text is malformed (then s is as it was). */
int gs_tune_progress_apply(gs_tune_sig_t *s, const char *const *names, const char *text);

#ifdef __cplusplus
}
#endif
#endif /* GS_TUNE_RULE_H */
