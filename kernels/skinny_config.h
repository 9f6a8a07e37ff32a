/* Configurations of the skinny (decode) GEMM (kernels/skinny.cu).
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
 * at the same time, so L1 serves the second. This bucket runs at 0.55-0.75x
 * cuBLAS on H200 (token re-reads through L2 and too few weight bytes in
 * flight per register); a shared-memory staged variant with 128-row blocks
 * measured no better and was dropped. n = 17..32 is correct but was not
 * timed. */
using skinny_cfg_n8 = skinny_cfg<1, 1, 1, 8, 4, true, 2>;
using skinny_cfg_n16 = skinny_cfg<2, 2, 1, 8, 2, true, 2>;
using skinny_cfg_n32 = skinny_cfg<4, 1, 1, 8, 2, false, 2>;
using skinny_cfg_n64 = skinny_cfg<8, 1, 2, 4, 1, false, 2>;

/* Largest cluster (blocks splitting k across SMs) that is portable. */
constexpr int SKINNY_MAX_CLUSTER = 8;

#endif /* GS_SKINNY_CONFIG_H */
