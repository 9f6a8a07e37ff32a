/* The operands of a replayed call: one device arena, reused and grown,
 * where each operand lies at the offset from a 256-byte boundary that
 * gives its pointer the recorded alignment, filled with random values of
 * its type before each signature's calls. Simulated (GEMMSHIM_TEST_DEVICE,
 * the shim's pretended device, where nothing is launched): addresses
 * only, nothing allocated or filled, so the CPU tests replay through the
 * shim and the fake cuBLAS. Host scalars are real memory either way: the
 * shim reads a host beta to know its kind. */
#ifndef GS_REPLAY_MEM_H
#define GS_REPLAY_MEM_H

#include "gs_replay_class.h"

#include <cuda_runtime_api.h>
#include <stddef.h>

typedef struct gs_replay_ops {
    void *A, *B, *C, *bias;
    const void *alpha, *beta;
    void *scale_a, *scale_b;      /* the FP8 subset's scale factors; NULL: none */
} gs_replay_ops_t;

typedef struct gs_replay_mem {
    int simulated;
    cudaStream_t stream;
    char *base;                   /* the device arena */
    size_t cap;
    void *tile[GS_DT_E5M2 + 1];   /* per gs_dtype_t: a device tile of random values */
    struct gs_replay_mem *tiles_from; /* where the tiles are kept when not NULL: arenas
                                         of one sequence share them (gs_seq_graph.c) */
    _Alignas(256) unsigned char host[512]; /* host alpha, then host beta */
} gs_replay_mem_t;

/* Places a's operands (growing the arena when it is too small) and fills
 * them: 0 and *o, or -1 with why (the arena could not be allocated: the
 * operands do not fit in device memory). */
int gs_replay_mem_place(gs_replay_mem_t *m, const gs_replay_args_t *a, gs_replay_ops_t *o,
                        char *why, size_t why_size);

/* The arena bytes a's operands take (what gs_replay_mem_place reserves). */
size_t gs_replay_mem_need(const gs_replay_args_t *a);

void gs_replay_mem_free(gs_replay_mem_t *m);

#endif
