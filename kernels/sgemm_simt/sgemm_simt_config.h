/* Tile configurations of the warp-tiled SIMT SGEMM (kernels/sgemm_simt/sgemm_simt.cu).
 *
 * One block computes a BLOCK_M x BLOCK_N tile of C, stepping along k by
 * BLOCK_K through a STAGES-deep cp.async ring in shared memory. Its warps sit
 * in a WARPS_M x WARPS_N grid, each owning a WARP_M x WARP_N sub-tile; a lane
 * owns THREAD_M x THREAD_N accumulators, held as (THREAD_M/4) x (THREAD_N/4)
 * blocks of 4x4 that are LANES_M*4 (resp. LANES_N*4) elements apart, so that
 * each 4-vector of a fragment is one LDS.128 and the lanes of a warp read
 * one contiguous run of shared memory per vector (no bank conflicts).
 * Everything but the named constants is derived.
 */
#ifndef GS_SGEMM_SIMT_CONFIG_H
#define GS_SGEMM_SIMT_CONFIG_H

template <int BLOCK_M_, int BLOCK_N_, int BLOCK_K_, int WARP_M_, int WARP_N_,
          int THREAD_M_, int THREAD_N_, int STAGES_, int MIN_BLOCKS_PER_SM_>
struct sgemm_tile {
    static constexpr int BLOCK_M = BLOCK_M_;
    static constexpr int BLOCK_N = BLOCK_N_;
    static constexpr int BLOCK_K = BLOCK_K_;
    static constexpr int WARP_M = WARP_M_;
    static constexpr int WARP_N = WARP_N_;
    static constexpr int THREAD_M = THREAD_M_;
    static constexpr int THREAD_N = THREAD_N_;
    static constexpr int STAGES = STAGES_;
    /* Occupancy the register allocation is capped for (__launch_bounds__). */
    static constexpr int MIN_BLOCKS_PER_SM = MIN_BLOCKS_PER_SM_;

    static constexpr int WARPS_M = BLOCK_M / WARP_M;
    static constexpr int WARPS_N = BLOCK_N / WARP_N;
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int LANES_M = WARP_M / THREAD_M;
    static constexpr int LANES_N = WARP_N / THREAD_N;

    /* Rows of the shared tiles are k; each row holds BLOCK_M (BLOCK_N)
     * elements plus 4 floats of padding. The padding keeps rows 16-byte
     * aligned for LDS.128 and shifts row k by 4k banks, so the transposing
     * 4-byte copies (8 consecutive k x 4 consecutive m per warp) hit 32
     * distinct banks. */
    static constexpr int SMEM_PAD = 4;
    static constexpr int A_LD = BLOCK_M + SMEM_PAD;
    static constexpr int B_LD = BLOCK_N + SMEM_PAD;
    static constexpr int STAGE_FLOATS = BLOCK_K * (A_LD + B_LD);
    static constexpr int SMEM_BYTES = STAGES * STAGE_FLOATS * 4;
    static constexpr int ACCUMULATORS = THREAD_M * THREAD_N;

    static_assert(BLOCK_M % WARP_M == 0 && BLOCK_N % WARP_N == 0, "warps tile the block");
    static_assert(WARP_M % THREAD_M == 0 && WARP_N % THREAD_N == 0, "lanes tile the warp");
    static_assert(LANES_M * LANES_N == 32, "a warp is 32 lanes");
    static_assert(THREAD_M % 4 == 0 && THREAD_N % 4 == 0, "fragments are float4 vectors");
    static_assert(LANES_M <= 8 && LANES_N <= 8,
                  "one fragment vector of a warp must fit one 128-byte wavefront");
    static_assert(BLOCK_M % 32 == 0 && BLOCK_N % 32 == 0,
                  "padding of 4 floats gives the 4k bank shift only when a row is 32-bank periodic");
    static_assert(BLOCK_K % 8 == 0, "k-contiguous operands are copied 8 k at a time");
    static_assert(STAGES >= 3, "cp.async ring: one stage computing, at least two in flight");
    static_assert(THREADS <= 1024, "threads per block");
    /* Registers holding a k-tile of both operands between its 16-byte loads
     * and its transposing stores (KVEC16, both operands k-contiguous). */
    static constexpr int STAGED_REGISTERS = (BLOCK_M + BLOCK_N) * BLOCK_K / THREADS;
    /* Accumulators, double-buffered fragments, staged k-tiles and ~24 for
     * addressing must fit both the 255 registers of a thread and the SM's
     * register file at the intended occupancy. */
    static constexpr int REGISTERS_NEEDED =
        ACCUMULATORS + 2 * (THREAD_M + THREAD_N) + STAGED_REGISTERS + 24;
    static_assert(REGISTERS_NEEDED <= 255, "registers per thread");
    static_assert(THREADS * MIN_BLOCKS_PER_SM * REGISTERS_NEEDED <= 65536, "register file");
    static_assert(SMEM_BYTES * MIN_BLOCKS_PER_SM <= 227 * 1024,
                  "shared memory of MIN_BLOCKS_PER_SM blocks within an sm_80/sm_90 SM");
};

/* The largest tiles: 8 warps of 64x64 with 16x8 (8x16) per lane, one block
 * per SM. Sixteen-wide thread tiles do 128 FMAs per 6 LDS.128 instead of 64
 * per 4, which is what closes most of the gap to cuBLAS; 4 stages of 8 k
 * (50 KB, above the 48 KB default). BLOCK_K = 16 (100 KB) measured 2-4%
 * slower in every layout on an H200. */
using sgemm_cfg_256x128x8 = sgemm_tile<256, 128, 8, 64, 64, 16, 8, 4, 1>;
using sgemm_cfg_128x256x8 = sgemm_tile<128, 256, 8, 64, 64, 8, 16, 4, 1>;
/* The main tile where the wide ones do not apply (TN with an unaligned A) or
 * waste a wave: 8 warps of 64x32, 8x8 per lane, two blocks per SM; 4 stages
 * of 8 k (34 KB). BLOCK_K = 16 measured no faster and spills under the
 * 128-register cap in some layouts. */
using sgemm_cfg_128x128x8 = sgemm_tile<128, 128, 8, 64, 32, 8, 8, 4, 2>;
/* For problems whose 128x128 tiles would leave SMs idle: 4 warps of the
 * same 64x32 warp tile, twice as many blocks. */
using sgemm_cfg_128x64x8 = sgemm_tile<128, 64, 8, 64, 32, 8, 8, 4, 3>;
/* For problems too small to fill the SMs even with 128x64 tiles: 4 warps of
 * 32x32, 4x8 per lane. */
using sgemm_cfg_64x64x8 = sgemm_tile<64, 64, 8, 32, 32, 4, 8, 4, 4>;

#endif /* GS_SGEMM_SIMT_CONFIG_H */
