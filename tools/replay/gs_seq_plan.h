/* What the sequence phase of offline tuning times (docs/TUNING.md, "Graphs
 * tuned as sequences"): each recorded sequence whose GEMMs can all be
 * rebuilt, as the signatures of its GEMMs in order, and the classes in it
 * whose tuned decision replaced the prior (a sequence with none has
 * nothing to compare); then, once each timed sequence has been compared
 * with its prior, the suspects: every class changed in a sequence that
 * the tuned decisions did not make clearly faster, to be reverted one at a
 * time in every timed sequence it appears in. Pure C. */
#ifndef GS_SEQ_PLAN_H
#define GS_SEQ_PLAN_H

#include "gs_replay_sigs.h"

#include <stddef.h>

typedef struct gs_seq_plan_seq {
    const gs_replay_seq_t *seq;  /* the recorded sequence */
    size_t *pos;                 /* seq->n: each GEMM's signature (index into the sigs) */
    size_t *changed;             /* its changed classes, each once, in first-seen order */
    size_t n_changed;
    const char *skip;            /* why it is not timed; NULL: it is */
} gs_seq_plan_seq_t;

typedef struct gs_seq_plan {
    gs_seq_plan_seq_t *s;        /* one per recorded sequence, in the file's order */
    size_t n;
    size_t timed;                /* of them with skip NULL */
} gs_seq_plan_t;

/* Plans the sequences of s. Per signature i: can[i] nonzero when a call of
 * its class can be rebuilt (tunable, gs_replay_args_of), changed[i]
 * nonzero when its decision replaced the prior. 0, or -1 out of memory. */
int gs_seq_plan_make(gs_seq_plan_t *p, const gs_replay_sigs_t *s, const unsigned char *can,
                     const unsigned char *changed);

/* After the first comparisons: faster[k] nonzero when timed sequence k
 * (index into p->s) was clearly faster tuned than under its prior. Sets
 * suspect[i] (n_sigs entries) for every class changed in a timed sequence
 * that was not, and returns how many. */
size_t gs_seq_plan_suspects(const gs_seq_plan_t *p, const unsigned char *faster,
                            unsigned char *suspect, size_t n_sigs);

/* 1 when plan sequence k holds class i among its changed ones. */
int gs_seq_plan_has(const gs_seq_plan_seq_t *q, size_t i);

void gs_seq_plan_free(gs_seq_plan_t *p);

#endif
