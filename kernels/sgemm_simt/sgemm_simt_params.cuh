/* The SIMT SGEMM family (kernels/sgemm_simt/sgemm_simt.cu): operand copy
 * modes, raster and grid limits, and the kernels' parameter struct
 * (sgemm_params). Part of the family's one translation unit. */
#ifndef GS_SGEMM_SIMT_PARAMS_CUH
#define GS_SGEMM_SIMT_PARAMS_CUH

#include "sgemm_simt_config.h"

namespace {

enum copy_mode { COPY_VEC16 = 0, COPY_ROW4 = 1, COPY_COL4 = 2, COPY_KVEC16 = 3 };

/* Sets of copy modes (bit 1 << copy_mode) that a launcher instantiates
 * kernels for; a tile leaves out the modes it is never chosen with. */
enum {
    MODES_MN = 1 << COPY_VEC16 | 1 << COPY_ROW4, /* operand contiguous along m/n */
    MODES_K4 = 1 << COPY_COL4,                    /* along k, 4-byte copies only */
    MODES_K = 1 << COPY_COL4 | 1 << COPY_KVEC16,  /* along k, 16-byte when aligned */
    MODES_NO_K4 = MODES_MN | 1 << COPY_KVEC16,    /* no 4-byte transposing copies */
    MODES_ALL4 = MODES_MN | MODES_K4,
    MODES_ALL = MODES_MN | MODES_K
};

/* k-contiguous copies take this many consecutive k per row: 32 bytes, one
 * sector, and with the 4-float padding 8 k-rows cover the 32 banks. */
constexpr int COL4_K = 8;

/* KVEC16 loads this many consecutive k of one row per thread (one LDG.128),
 * KVEC_LANES lanes covering one 32-byte sector of a row. */
constexpr int KVEC = 4;
constexpr int KVEC_LANES = 2;
constexpr int KVEC_SPAN = KVEC * KVEC_LANES;

/* Consecutive linear block ids walk down GROUP_M tile-rows before moving to
 * the next tile-column, so the blocks resident at one time share A rows and
 * B columns in L2 instead of streaming a full row of tiles each. */
constexpr int GROUP_M = 8;

/* Limit of grid.y and grid.z. */
constexpr int64_t MAX_GRID_Y = 65535;

struct sgemm_params {
    const float *A;
    const float *B;
    float *C;
    int m, n, k;
    int tiles_m, tiles_n;
    int64_t lda, ldb, ldc;
    int64_t batch, stride_a, stride_b, stride_c;
    float alpha, beta;               /* host pointer mode */
    const float *alpha_ptr, *beta_ptr; /* device pointer mode, else null */
    int c_vec4;                      /* C, ldc and stride_c allow float4 */
    const float *bias;               /* cublasLt BIAS epilogue: m floats, or null */
    /* Split K (stream-K, batch 1 only): `ctas` CTAs share the tiles*k_tiles
     * units (one block tile times one k-tile) in contiguous runs; each run
     * inside one tile (a segment) leaves a column-major BLOCK_M x BLOCK_N
     * fp32 partial tile in `partials`, and a second kernel sums them. */
    float *partials;
    int ctas;
    int k_tiles;
};

} // namespace

#endif /* GS_SGEMM_SIMT_PARAMS_CUH */
