/* Configurations of the skinny (decode) GEMM (kernels/skinny/skinny.cu).
 *
 * A block owns BLOCK_M = WARPS_M * M_TILES * 16 rows of C (weight rows) and
 * all N_TILES * 8 token columns; its WARPS_M * WARPS_K warps split the rows
 * WARPS_M ways and the k range of the block WARPS_K ways. Each iteration a
 * warp takes K_CHUNKS consecutive 32-wide k chunks: per chunk and m16 tile
 * two 16-byte loads of weights (rows g and g+8), per n8 tile one 16-byte
 * load of tokens, and 2 * M_TILES * N_TILES mma.m16n8k16. The loads of the
 * next iteration are in flight while the current one is multiplied.
 *
 * On sm_90 a cluster of up to 8 blocks may split k further (one launch
 * parameter, not part of the configuration): their partial sums meet in
 * distributed shared memory.
 */
#ifndef GS_SKINNY_CONFIG_H
#define GS_SKINNY_CONFIG_H

#include <stdint.h>

template <int N_TILES_, int M_TILES_, int WARPS_M_, int WARPS_K_, int K_CHUNKS_,
          bool PREFETCH_B_, int MIN_BLOCKS_PER_SM_>
struct skinny_cfg {
    static constexpr int N_TILES = N_TILES_;   /* n8 tiles: up to 8*N_TILES tokens */
    static constexpr int M_TILES = M_TILES_;   /* m16 tiles per warp */
    static constexpr int WARPS_M = WARPS_M_;   /* warps on distinct rows, same k (share B in L1) */
    static constexpr int WARPS_K = WARPS_K_;   /* warps on distinct k, same rows */
    static constexpr int K_CHUNKS = K_CHUNKS_; /* 32-wide k chunks per warp per iteration */
    /* Token loads issued an iteration ahead like the weights (true), or at
     * the start of their own iteration, to save their registers (false). */
    static constexpr bool PREFETCH_B = PREFETCH_B_;
    /* Occupancy the register allocation is capped for (__launch_bounds__). */
    static constexpr int MIN_BLOCKS_PER_SM = MIN_BLOCKS_PER_SM_;

    static constexpr int N_MAX = 8 * N_TILES;
    static constexpr int WARP_M = 16 * M_TILES;
    static constexpr int BLOCK_M = WARPS_M * WARP_M;
    static constexpr int THREADS = 32 * WARPS_M * WARPS_K;
    static constexpr int CHUNK_K = 32; /* 4 lanes x 8 elements (16 bytes) */
    static constexpr int WARP_K = K_CHUNKS * CHUNK_K;
    /* The split-k partial sums are added pairwise over a tree of log2(WARPS_K)
     * rounds: the upper half of the warps stores, the lower half adds. */
    static constexpr int RED_SLOTS = WARPS_K > 1 ? WARPS_K / 2 : 1;
    static constexpr int RED_BYTES = RED_SLOTS * WARPS_M * M_TILES * N_TILES * 32 * 16;
    /* Registers of the loads in flight: two iterations of weights, and of
     * tokens two with PREFETCH_B, one without. */
    static constexpr int LOAD_REGISTERS =
        K_CHUNKS * (2 * 2 * M_TILES + (PREFETCH_B ? 2 : 1) * N_TILES) * 4;

    static_assert(N_TILES >= 1 && N_TILES <= 8, "at most 64 tokens");
    static_assert((WARPS_K & (WARPS_K - 1)) == 0, "the reduction tree halves WARPS_K");
    static_assert(THREADS <= 1024, "threads per block");
    static_assert(RED_BYTES <= 48 * 1024, "static shared memory");
    static_assert(LOAD_REGISTERS + 4 * M_TILES * N_TILES <= 200,
                  "two iterations of loads plus the accumulators must fit the registers");
};

/* One configuration per n bucket; a problem takes the smallest that holds n.
 * n <= 8: one m16 tile and 4 chunks per warp: 8 weight loads (128 bytes)
 * per lane in flight, 256 rows-blocks of 16 for m = 4096 (H200: 2-7%
 * faster than 2 m16 tiles x 2 chunks). n <= 16: two m16 tiles share each
 * token load. n = 33..64: two warps on distinct rows read the same tokens
 * at the same time, so L1 serves the second. Above n = 8 the token
 * re-reads through L2 (n/BLOCK_M per weight byte) limit these: 0.59-0.98x
 * cuBLAS on H200 where the ring kernel does not take over (small m).
 * Measured and dropped (H200): 64- and 128-row blocks for n = 9..64 (2, 4
 * or 8 warps on distinct rows sharing tokens through L1): faster where the
 * row blocks fill the machine unsplit (m >= 6144: up to +23% at n = 32,
 * where the ring kernel is faster still), 16-42% slower at m = 4096 (their
 * row blocks need a cluster split of 4-8). */
using skinny_cfg_n8 = skinny_cfg<1, 1, 1, 8, 4, true, 2>;
using skinny_cfg_n16 = skinny_cfg<2, 2, 1, 8, 2, true, 2>;
using skinny_cfg_n32 = skinny_cfg<4, 1, 1, 8, 2, false, 2>;
using skinny_cfg_n64 = skinny_cfg<8, 1, 2, 4, 1, false, 2>;

/* Largest cluster (blocks splitting k across SMs) that is portable. */
constexpr int SKINNY_MAX_CLUSTER = 8;

/* ---------------------------------------------------------------------------
 * The sm_90 decode kernel (skinny_ring_tn): a producer warp streams 64-wide
 * k stages of the weights (a BLOCK_M x 64 box) and of the tokens (an
 * N_MAX x 64 box) into a ring of STAGES shared-memory buffers with the
 * tensor copy engine (two instructions per stage, 128-byte swizzle, zeros
 * past m, n and k), completing on mbarriers; WARPS consumer warps, each on
 * its own WARP_M weight rows and all N_MAX tokens, read their mma fragments
 * with ldmatrix. The bytes in flight live in shared memory, not registers,
 * so an SM keeps STAGES stages of weights requested whatever n is, and a
 * stage of tokens is fetched once per block of BLOCK_M rows (n/BLOCK_M
 * extra L2 traffic per weight byte) instead of once per warp.
 * ------------------------------------------------------------------------- */
template <int N_TILES_, int M_TILES_, int WARPS_, int STAGES_, int CTAS_PER_SM_,
          int ELEM_BYTES_ = 2>
struct skinny_ring_cfg {
    static constexpr int N_TILES = N_TILES_;  /* n8 tiles: up to 8*N_TILES tokens */
    static constexpr int M_TILES = M_TILES_;  /* m16 tiles per consumer warp */
    static constexpr int WARPS = WARPS_;      /* consumer warps (+1 producer warp) */
    static constexpr int STAGES = STAGES_;    /* ring depth */
    static constexpr int CTAS_PER_SM = CTAS_PER_SM_; /* design occupancy */

    static constexpr int N_MAX = 8 * N_TILES;
    static constexpr int WARP_M = 16 * M_TILES;
    static constexpr int BLOCK_M = WARPS * WARP_M;
    static constexpr int THREADS = 32 * (WARPS + 1);
    /* One 128-byte swizzle span per stage and row: 64 elements of 16 bits,
     * or 128 of 8 (the FP8 decode kernel, kernels/fp8/fp8_decode_kernel.cuh) */
    static constexpr int ELEM_BYTES = ELEM_BYTES_;
    static constexpr int ROW_BYTES = 128;
    static constexpr int STAGE_K = ROW_BYTES / ELEM_BYTES;
    static constexpr int A_BYTES = BLOCK_M * ROW_BYTES; /* weights box */
    static constexpr int B_BYTES = N_MAX * ROW_BYTES;   /* tokens box */
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int RING_BYTES = STAGES * STAGE_BYTES;
    /* Cluster split: every block's partial sums, fragment-ordered, reuse the
     * ring once the main loop is done. */
    static constexpr int RED_BYTES = WARPS * M_TILES * N_TILES * 32 * 16;
    static constexpr int BAR_OFFSET = (RING_BYTES > RED_BYTES ? RING_BYTES : RED_BYTES);
    /* full[], empty[], then slack to align the dynamic base to 1024 bytes
     * (the 128-byte swizzle pattern repeats every 1024). */
    static constexpr int SMEM_BYTES = BAR_OFFSET + 2 * STAGES * 8 + 1024;

    static_assert(N_TILES >= 1 && N_TILES <= 8, "at most 64 tokens");
    static_assert(ELEM_BYTES == 1 || ELEM_BYTES == 2, "8- or 16-bit operands");
    static_assert(BLOCK_M <= 256 && N_MAX <= 256, "a TMA box has at most 256 rows");
    static_assert(A_BYTES % 1024 == 0 && B_BYTES % 1024 == 0, "swizzled boxes 1024-aligned");
    static_assert(STAGES >= 2, "a ring");
    static_assert(THREADS <= 1024, "threads per block");
    /* 228 KB of shared memory per SM, 1 KB of it reserved per block. */
    static_assert(CTAS_PER_SM * (SMEM_BYTES + 1024) <= 228 * 1024, "shared memory per SM");
};

/* One configuration per n bucket (H200, bench/notes-sk.md). The ring kernel
 * takes n > 8 (plan_of in skinny.cu); n <= 8 goes to the register kernel.
 * n <= 32: 128-row blocks (8 warps x one m16 tile), two blocks per SM, so
 * one block's drain and epilogue overlap the other's streaming; tokens add
 * at most 32/128 = 1/4 to the L2 traffic; 5-6 stages of 18-20 KB each.
 * n = 33..64: 256-row blocks (two m16 tiles per warp: their 64 accumulators
 * leave no room for a second block's registers), one block per SM, 5
 * stages of 40 KB. Measured and dropped: one block per SM with 11-12
 * stages for n <= 16 and 256-row blocks for n <= 32 (3-20% slower),
 * 128-row blocks for n <= 64 (5-28% slower). */
using skinny_ring_n16 = skinny_ring_cfg<2, 1, 8, 6, 2>;
using skinny_ring_n32 = skinny_ring_cfg<4, 1, 8, 5, 2>;
using skinny_ring_n64 = skinny_ring_cfg<8, 2, 8, 5, 1>;

/* Cluster split of the wgmma ring (skinny_sm90.cu, choose_cluster_wg in
 * skinny.cu). H200 (bench/notes-decode.md, v5): the best split left the
 * blocks on 64-96 of the 132 SMs for n <= 16 and n = 33..64 (4096 x 4096:
 * n = 16 ck2 1.01x vs ck4 0.97x; n = 64 ck4 0.78x vs ck8 0.55x; 6144:
 * n = 16 ck2 1.00x vs ck1 0.90x / ck4 0.95x; n = 64 ck4 0.79x vs ck2
 * 0.67x) and on up to all of them for n = 17..32 (4096 x 14336: ck4 0.94x
 * vs ck2 0.91x). Below SKINNY_WG_MIN_CTA_PCT percent of the SMs (small m)
 * the register kernel keeps the call. */
constexpr int SKINNY_WG_CTA_PCT = 75;
constexpr int SKINNY_WG_CTA_PCT_N32 = 100;
constexpr int SKINNY_WG_MIN_CTA_PCT = 45;

/* Long weights at n <= 16: where the share (SKINNY_WG_CTA_PCT) leaves the
 * wgmma ring unsplit and its blocks on at most half the SMs, it splits two
 * ways if each block keeps at least this many stages (choose_cluster_wg).
 * H200, replayed from graphs, two runs each: m = 8192 (64 blocks), k =
 * 28672: 0.963 / 1.014 -> 1.009 / 1.048x of cuBLAS; k = 8192 moved within
 * the noise either way (0.904 -> 0.929, 0.937 -> 0.923), so not there.
 * The FP8 decode ring has the like rule (DECODE_LONG_STAGES). Not at n =
 * 64 (8192 x 64 x 28672: four ways 0.83x against two ways' 1.00x), nor
 * beyond two ways (4096 x 16 x 4096: four ways 0.95x against 1.02x). */
constexpr int SKINNY_WG_LONG_STAGES = 128;

/* A block of a cluster split gets at least this many stages. */
constexpr int SKINNY_RING_MIN_STAGES_PER_CTA = 4;

/* Largest cluster split the ring kernel is used with: beyond it (small m)
 * the register kernel is faster (H200: ring with splits of 8 ran
 * 0.47-0.80x cuBLAS, see plan_of in skinny.cu). */
constexpr int SKINNY_RING_MAX_CLUSTER = 4;

/* Launch parameters of every decode kernel (skinny.cu, skinny_sm90.cu). */
struct skinny_params {
    const void *A;
    const void *B;
    void *C;
    int m, n, k;
    int64_t lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c;
    int cluster;                       /* blocks of a cluster splitting k (1: none) */
    float alpha, beta;                 /* host pointer mode */
    const float *alpha_ptr, *beta_ptr; /* device pointer mode, else null */
    const void *bias;                  /* m elements of bias_type, or null */
    int bias_type;                     /* gs_dtype_t */
    /* cublasLtMatmul's contract: alpha times the sum even at alpha == 0, so
     * a NaN or Inf operand reaches D as NaN (H200, cuBLAS 13.1:
     * tests/gpu/test_lt.c, test_fp8_tiles.c). BLAS entry points (0): the
     * BLAS definition, A and B not read; cuBLAS follows it with a host
     * alpha, with a device alpha only in some of its kernels
     * (tests/gpu/test_alpha_zero.c). In the struct's tail padding: its
     * size, and the register kernel's allocation, stay as they were. */
    int reads_at_alpha_zero;
};

/* cuBLASLt's A and B scale factors where the operands are 8-bit (the FP8
 * decode, kernels/fp8): device pointers (null: none), *_vec: one factor
 * per weight row (m) / token (n), else one for the matrix. A parameter of
 * the ring kernels of its own (skinny_params is the register kernel's too,
 * and a larger one changed its register allocation); {0} for 16-bit
 * calls. */
struct skinny_scales {
    const float *a, *b;
    int a_vec, b_vec;
};

#endif /* GS_SKINNY_CONFIG_H */
