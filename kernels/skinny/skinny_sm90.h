/* The sm_90a decode kernel (kernels/skinny/skinny_sm90.cu), called from skinny.cu's
 * dispatch on compute capability 9.0 devices only. */
#ifndef GS_SKINNY_SM90_H
#define GS_SKINNY_SM90_H

#include <cuda.h>

#include "skinny_config.h"

/* The workspace of a workspace split (see split_ws_reduce): one counter per
 * row block (zero between calls), then per row block and split a
 * fragment-ordered fp32 partial tile. Kept out of skinny_params, which the
 * register kernel shares (a larger parameter block changed its register
 * allocation into spills). */
struct skinny_ws {
    int *counters;
    void *partials;
};

/* Launches skinny_ring_wg_tn for the ring configuration whose N_MAX is n_max
 * (16, 32 or 64) and BLOCK_M is block_m: grid grid_x (row blocks x cluster) x grid_y (batch),
 * `cluster` blocks splitting k: a thread block cluster, or with ws non-null
 * co-resident blocks meeting through the workspace; with pdl, programmatic
 * dependent launch as well. Returns a cudaError_t. */
extern "C" int gs_skinny_wg_launch(const skinny_params *prm, const CUtensorMap *ta,
                                   const CUtensorMap *tb, int n_max, int block_m, int in_f16, int out_f32,
                                   unsigned grid_x, unsigned grid_y, int cluster,
                                   const skinny_ws *ws, int pdl, void *stream, int ordinal);

#endif /* GS_SKINNY_SM90_H */
