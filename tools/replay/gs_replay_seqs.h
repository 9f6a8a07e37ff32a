/* The captured sequences of a signature file (its "seq" lines; docs/
 * TUNING.md, "Record, then tune offline"): per distinct sequence, the
 * signature ids of its GEMMs in the order the host issued them inside one
 * CUDA stream capture, and how many captures had it. Merged over processes
 * and files by the sequence's id (a hash of its content). Pure C. */
#ifndef GS_REPLAY_SEQS_H
#define GS_REPLAY_SEQS_H

#include <stddef.h>

/* GEMMs of one sequence the replay reads: the record places at most 2^20
 * captured calls in all. */
#define GS_REPLAY_SEQ_GEMMS_MAX (1u << 20)

typedef struct gs_replay_seq {
    unsigned long long id;
    unsigned long long captures; /* identical captures, summed over processes */
    int complete;                /* 0: a call of it was not placed when recorded */
    size_t n;                    /* its GEMMs */
    unsigned long long *sig;     /* n signature ids, in the order issued */
} gs_replay_seq_t;

typedef struct gs_replay_seqs {
    gs_replay_seq_t *seq;        /* in the order first read */
    size_t n, cap;
} gs_replay_seqs_t;

enum { GS_REPLAY_SEQ_BAD = -1, GS_REPLAY_SEQ_NOMEM = -2 };

/* A "seq" line split at its tabs (field[0] is "seq"), merged into q: 0;
 * GS_REPLAY_SEQ_BAD when it is malformed (a field missing or unreadable,
 * gemms= not the ids' count, the same id with other content);
 * GS_REPLAY_SEQ_NOMEM. */
int gs_replay_seqs_add(gs_replay_seqs_t *q, char *const *field, size_t n);

void gs_replay_seqs_free(gs_replay_seqs_t *q);

#endif
