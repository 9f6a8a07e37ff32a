/* The signature files of `gemmshim record` (docs/TUNING.md, "Record, then
 * tune offline"), read and merged as bench/gs_signatures.py does: counts
 * and GPU times summed per signature (its class, and why the class does
 * not describe the call), captures summed per sequence (gs_replay_seqs.h).
 * Pure C. */
#ifndef GS_REPLAY_SIGS_H
#define GS_REPLAY_SIGS_H

#include "gs_problem.h"
#include "gs_replay_seqs.h"

#include <stddef.h>

#define GS_REPLAY_HEX_LEN (2 * sizeof(gs_class_t))

typedef struct gs_replay_sig {
    char hex[GS_REPLAY_HEX_LEN + 1];
    gs_class_t cls;
    unsigned long long id; /* what "seq" lines name it by (0: none recorded) */
    int tunable;          /* 0: a cuBLASLt call beyond its class (why says how) */
    char why[96];
    unsigned long long calls, captured, timed;
    double ms;            /* GPU time of the timed calls */
    char shape[256];      /* the shim's shape for people */
} gs_replay_sig_t;

typedef struct gs_replay_sigs {
    gs_replay_sig_t *sig;
    size_t n, cap;
    gs_replay_seqs_t seqs; /* the captured sequences */
    size_t bad;           /* malformed or torn lines skipped */
    char **header;        /* each file's first line, without its newline */
    const char **path;
    size_t files;
} gs_replay_sigs_t;

/* Reads signature file `path` and merges it into s (zeroed before the
 * first): 0, or -1 with one line in msg (unreadable, not a signature file,
 * another format, out of memory). */
int gs_replay_sigs_read(gs_replay_sigs_t *s, const char *path, char *msg, size_t msg_size);

/* Orders the signatures by their recorded GPU time (ms / timed x the calls
 * not captured), then by their FLOPs, largest first: a run cut short has
 * tuned what weighs most. */
void gs_replay_sigs_order(gs_replay_sigs_t *s);

void gs_replay_sigs_free(gs_replay_sigs_t *s);

#endif
