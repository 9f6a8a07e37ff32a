/* The rules of the sequence phase of offline tuning (docs/TUNING.md,
 * "Graphs tuned as sequences"): how interleaved rounds of graph replays
 * compare, and how a class whose tuned decision loses in some sequence is
 * settled by the sum over every context it appears in. Pure C. */
#ifndef GS_SEQ_SETTLE_H
#define GS_SEQ_SETTLE_H

#include <stddef.h>

/* A difference below this share of a sequence's time is a tie, whatever
 * the rounds say: a graph replay's time moves by about this much between
 * otherwise equal runs. */
#define GS_SEQ_MARGIN 0.005

/* Two graphs timed in the same rounds (each round: one block of replays
 * of each, adjacent in time, their order alternating). */
typedef struct gs_seq_cmp {
    double ratio;    /* median over rounds of (variant / base), per replay: > 1, base faster */
    double noise;    /* half the interquartile range of those ratios */
    double base_ms;  /* median time per replay of the base */
    double var_ms;   /* ... of the variant */
} gs_seq_cmp_t;

/* base[r] and var[r] are round r's times per replay (rounds >= 1).
 * Pairing each round's two times cancels what the GPU's clock does
 * between rounds. */
gs_seq_cmp_t gs_seq_compare(const double *base, const double *var, size_t rounds);

/* 1 when the ratio is beyond the tie: |ratio - 1| exceeds both
 * GS_SEQ_MARGIN and the rounds' noise. */
int gs_seq_clear(const gs_seq_cmp_t *c);

/* One sequence a class was measured in: the sequence with every decision
 * as it stands (base) against the same with the class reverted to its
 * prior (variant). */
typedef struct gs_seq_ctx {
    double weight;   /* replays it stands for: its recorded captures x the replays per capture */
    gs_seq_cmp_t cmp;
} gs_seq_ctx_t;

/* A class whose tuned decision is on trial. */
typedef struct gs_seq_class {
    double eager_ms;  /* recorded GPU time of its calls outside graphs */
    double vs_prior;  /* the cache's speed of its decision over the prior, per call */
    const gs_seq_ctx_t *ctx;
    size_t n_ctx;
} gs_seq_class_t;

typedef struct gs_seq_verdict {
    int keep;         /* 1: the tuned decision stays; 0: the prior replaces it */
    double graph_ms;  /* GPU time its tuned route saves in its sequences over the
                         recording: sum of weight x the time saved per replay, a tie
                         counting 0 (negative: lost) */
    double eager_ms;  /* ... in its eager calls: eager_ms x (1 - 1 / vs_prior) */
    double seq_gain;  /* the sequences' speed with its tuned route over with its prior,
                         weighted by replays (as measured, ties included); 0: none measured */
} gs_seq_verdict_t;

/* The tuned decision stays only when what it saves, summed over every
 * context, is positive: a tie goes to the prior, the incumbent. A class
 * with no sequence measured keeps its decision (nothing shows it loses). */
gs_seq_verdict_t gs_seq_settle(const gs_seq_class_t *c);

/* The last resort for a sequence still clearly slower than its prior after
 * each class was tried alone: a class still changed in it goes back to its
 * prior (1) unless what its eager calls gain (ms over the recording)
 * exceeds what the sequence loses (ms over the recording's replays). */
int gs_seq_fallback_reverts(double seq_loss_ms, double eager_gain_ms);

#endif
