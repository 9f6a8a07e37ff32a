/* The sequence phase of offline tuning (`gemmshim-replay --sequences`, run
 * by `gemmshim tune --from` once every signature is decided per call;
 * docs/TUNING.md, "Graphs tuned as sequences"). Per recorded sequence
 * whose GEMMs all rebuild and whose tuned decisions replace some prior: a
 * CUDA graph of it captured with the cache's routes and one with every
 * prior (gemmshim_hold_prior), replayed in interleaved rounds. Where the
 * tuned graph is not clearly faster, each changed class in it is reverted
 * alone and timed again, in every sequence it appears in; each such class
 * is settled by the sum over its contexts (gs_seq_settle.h) and its
 * decision rewritten in the cache: the prior where the sum says so (seq=
 * and was= say why), its own route otherwise (with seq=). A sequence still
 * slower than its prior is searched again, over the classes left, a few
 * times at most. Runs under the shim preloaded with GEMMSHIM_TUNE=cache,
 * which serves the decisions and tunes nothing. */
#ifndef GS_REPLAY_SEQ_H
#define GS_REPLAY_SEQ_H

#include "gs_replay_call.h"
#include "gs_replay_sigs.h"

#include <signal.h>

typedef struct gs_replay_seq_opts {
    const char *cache;
    double replays;   /* replays one recorded capture stands for (the record cannot
                         see replays) */
    size_t rounds;    /* timing rounds per comparison */
    double seconds;   /* wall time of the phase, at most */
    const char *who;  /* its lines' prefix */
} gs_replay_seq_opts_t;

/* The phase over the sequences of s, whose signature i rebuilds as
 * args[i] where can[i] is nonzero. Returns the exit status: 0 done (some
 * sequences may be skipped, said why); 1 something failed (the cache, the
 * shim not preloaded, the GPU); 128 + the signal when *stop was set. */
int gs_replay_sequences(const gs_replay_sigs_t *s, const gs_replay_args_t *args,
                        const unsigned char *can, gs_replay_gpu_t *g,
                        const gs_replay_seq_opts_t *o, volatile sig_atomic_t *stop);

#endif
