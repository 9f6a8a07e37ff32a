/* One recorded sequence rebuilt on the GPU, for the sequence phase of
 * offline tuning: a call per GEMM in the recorded order (gs_replay_class.h,
 * gs_replay_call.h), each on synthetic operands of its own (as a model's
 * layers each read their own weights) where they fit in the memory given,
 * else classes take turns over as many copies as fit; captured into a CUDA
 * graph under whatever routes the shim serves at capture time (the holds
 * the caller set: gemmshim_hold_prior), and graphs timed against each other
 * in interleaved rounds. On the simulated device (GEMMSHIM_TEST_DEVICE)
 * the calls are only issued, eagerly: nothing is allocated, captured or
 * timed. */
#ifndef GS_SEQ_GRAPH_H
#define GS_SEQ_GRAPH_H

#include "gs_replay_call.h"

#include <stddef.h>

typedef struct gs_seq_graph {
    gs_replay_gpu_t *g;
    size_t n;                /* GEMMs */
    gs_replay_call_t *call;  /* n, prepared */
    gs_replay_mem_t *mem;    /* n_mem operand sets */
    size_t n_mem;
    size_t copies;           /* operand sets per class, at most (n: one per GEMM) */
    size_t bytes;            /* device memory of the operands */
} gs_seq_graph_t;

/* Builds the sequence whose GEMM i is a call of args[pos[i]], on g, its
 * operands within `budget` bytes where one set per class fits. 0, or -1
 * with why (nothing left allocated). */
int gs_seq_graph_open(gs_seq_graph_t *sg, gs_replay_gpu_t *g, const size_t *pos, size_t n,
                      const gs_replay_args_t *args, size_t budget, char *why, size_t why_size);

/* The sequence issued once, eagerly, on g's stream: 0, or -1 with why. */
int gs_seq_graph_issue(gs_seq_graph_t *sg, char *why, size_t why_size);

/* Issued once eagerly (modules load, workspaces are allocated outside the
 * capture), then captured and instantiated: 0 and *out, or -1 with why. */
int gs_seq_graph_capture(gs_seq_graph_t *sg, cudaGraphExec_t *out, char *why, size_t why_size);

/* Times nv graphs in `rounds` rounds: each round one block of `reps`
 * replays of each, back to back, in an order that rotates and reverses
 * round to round; reps makes a block take about block_ms. ms[v * rounds +
 * r]: graph v's time per replay in round r. 0, or -1 with why. */
int gs_seq_graph_time(const gs_replay_gpu_t *g, const cudaGraphExec_t *ex, size_t nv,
                      size_t rounds, double block_ms, double *ms, char *why, size_t why_size);

void gs_seq_graph_close(gs_seq_graph_t *sg);

#endif
