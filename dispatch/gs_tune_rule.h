/* Online tuning of one call signature, as numbers: its candidates, the
 * paired timings each has collected against cuBLAS as the application
 * called it, and the rule that decides. Pure C: the GPU side
 * (shim/tune/gs_tune.c) enqueues the pairs and feeds the times in; the unit tests
 * feed synthetic ones.
 *
 * A pair is one candidate and cuBLAS-as-called run back to back on the same
 * inputs, L2 flushed before each side (shim/tune/gs_tune.c), so both read their
 * operands from memory, as a call between a model's other kernels mostly
 * does. A pair's sample is log(t_cublas / t_cand) of its own two times (> 0:
 * the candidate is faster): the GPU's clock, which drifts between pairs by
 * more than most gains, is the same for both. Pairs alternate their order,
 * and the statistic's samples are order-balanced: sample k is the mean of
 * the k-th candidate-first and the k-th cuBLAS-first pair's, so what the
 * flush leaves of a position effect cancels. A candidate wins only when the
 * lower 95% bound (Student's t) of the mean of those samples, over at least
 * min_pairs pairs, exceeds log(win_ratio); of several winners the one with
 * the highest mean is taken. Otherwise the signature stays with cuBLAS as
 * called. */
#ifndef GS_TUNE_RULE_H
#define GS_TUNE_RULE_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
    GS_TUNE_CANDS_MAX = 32,
    GS_TUNE_PAIRS_MAX = 64,
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
    int timed;    /* timed pairs enqueued so far (their order alternates with it) */
    double log_ratio[GS_TUNE_PAIRS_MAX];  /* every pair's, in order (pruning) */
    double cand_first[GS_TUNE_PAIRS_MAX]; /* log ratios of the candidate-first pairs */
    double cublas_first[GS_TUNE_PAIRS_MAX]; /* ... and of the cuBLAS-first ones */
    int n_cand_first, n_cublas_first;
} gs_tune_cand_t;

typedef struct gs_tune_limits {
    int min_pairs;      /* pairs per candidate before it can win */
    double win_ratio;   /* the lower bound must exceed this (1.01) */
    double prune_ratio; /* after prune_after pairs, a mean below this drops it */
    int prune_after;
    int max_calls;      /* calls of the signature that may carry tuning work */
    double max_gpu_ms;  /* GPU time the signature's pairs may take */
} gs_tune_limits_t;

/* The defaults: 10 pairs, 1.01, prune below 0.85 after 3, 400 calls, 2 s. */
gs_tune_limits_t gs_tune_default_limits(void);
/* The same with min_pairs pairs per candidate (GEMMSHIM_TUNE_PAIRS), an odd
 * count rounded up: the samples take one pair of each order. */
gs_tune_limits_t gs_tune_default_limits_for(int min_pairs);

typedef struct gs_tune_sig {
    gs_tune_cand_t cand[GS_TUNE_CANDS_MAX];
    int n_cand;
    int next;        /* round-robin position */
    int calls;       /* calls that carried tuning work */
    double gpu_ms;   /* GPU time of the pairs so far (both sides) */
} gs_tune_sig_t;

/* Empty signature; candidates are added with gs_tune_add (-1 when full). */
void gs_tune_init(gs_tune_sig_t *s);
int gs_tune_add(gs_tune_sig_t *s, int family, int config);

/* The candidate whose next pair should be enqueued (round robin over those
 * still needing pairs), or -1 when none needs one now. */
int gs_tune_next(gs_tune_sig_t *s, const gs_tune_limits_t *lim);

/* The order of the candidate's next timed pair (1: the candidate runs
 * first), counted as enqueued. */
int gs_tune_order(gs_tune_sig_t *s, int cand);

/* A pair's times (milliseconds) and its order; a non-positive time drops
 * the pair. */
void gs_tune_add_pair(gs_tune_sig_t *s, int cand, double t_cublas, double t_cand,
                      int cand_first, const gs_tune_limits_t *lim);

/* 1 when the signature can be decided now: every live candidate has its
 * pairs (and none in flight), or a budget is spent. */
int gs_tune_done(const gs_tune_sig_t *s, const gs_tune_limits_t *lim);

/* The winning candidate's index, or -1 (cuBLAS as called). gain: its
 * geometric-mean ratio; lo95: the lower bound (both 1 when -1). */
int gs_tune_decide(const gs_tune_sig_t *s, const gs_tune_limits_t *lim, double *gain,
                   double *lo95);

/* One candidate's mean log ratio over its order-balanced samples and the
 * lower 95% bound (Student's t); 0 when it has fewer than 2 such samples. */
int gs_tune_bounds(const gs_tune_cand_t *c, double *mean, double *lo);

#ifdef __cplusplus
}
#endif
#endif /* GS_TUNE_RULE_H */
