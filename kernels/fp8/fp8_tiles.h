/* The experimental FP8 family on the Hopper pingpong tiles
 * (kernels/fp8/fp8_sm90.cu): its tile as named constants, its plan, and
 * its C API. Plain C, shared by the family's host code (fp8_family.c, unit-
 * tested without a GPU) and its CUDA translation unit, which checks these
 * constants against the pingpong configuration it reuses.
 *
 * Opt-in tiles: the family is registered, but dispatch offers its tile
 * configurations a call only with GEMMSHIM_FP8_TILES=1
 * (gs_family_t.fp8_tiles_configs; docs/REFERENCE.md). Verified on an H200
 * (tests/gpu/test_fp8_tiles.c), not faster than cuBLASLt there
 * (docs/PERFORMANCE.md), hence opt-in. Its decode kernels (n <= 64) are
 * routed by the routing table where they measured faster (rowwise scales). */
#ifndef GS_FP8_TILES_H
#define GS_FP8_TILES_H

#include "gs_family.h"
#include "gs_problem.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One 128 (m) x 128 (n) tile per CTA, K-blocks of 128 FP8
 * elements: the pingpong 128x128 tile's stage byte for byte (a 128-byte
 * swizzle row of k holds 64 bf16 or 128 FP8 elements), so its shared-
 * memory layout, ring and epilogue staging are reused unchanged. */
enum {
    GS_FP8_BLOCK_M = 128,     /* C rows (m) per tile = wgmma N */
    GS_FP8_BLOCK_N = 128,     /* C columns (n) per tile = 2 x wgmma M (64) */
    GS_FP8_BLOCK_K = 128,     /* FP8 elements = bytes per k-block: one swizzle row */
    GS_FP8_WGMMA_K = 32,      /* wgmma m64nNk32 for 8-bit operands */
    /* Without fast accumulation the wgmma partial sums are added into
     * separate fp32 accumulators after every PROMOTE_K of k (DeepGEMM's
     * promotion): one k-block, four k32 wgmmas. */
    GS_FP8_PROMOTE_K = 128,
    GS_FP8_THREADS = 384,     /* producer warpgroup + two consumer warpgroups */
    /* Alignment the call must have: cuBLASLt's own FP8 rule (k % 16) and
     * TMA's (16-byte base addresses, leading dimensions in 16-byte units). */
    GS_FP8_K_MULTIPLE = 16,
    GS_FP8_PTR_ALIGN = 16,
    /* m: what cuBLASLt itself takes with a bf16 D (fp8_family.c) */
    GS_FP8_M_MULTIPLE = 8,
};

/* The family's configurations: the same 128x128 tile and shared memory,
 * the consumers' arrangement differs (fp8_kernel.cuh). */
typedef enum gs_fp8_config {
    /* each consumer owns whole tiles, mainloops in turn: the epilogue
     * hides behind the other consumer's mainloop */
    GS_FP8_PINGPONG_128x128x128 = 0,
    /* both consumers on every tile, one 64-row block each: the promotion's
     * adds hide behind the other consumer's wgmmas */
    GS_FP8_COOP_128x128x128 = 1,
    /* cooperative, 256 of m per tile (m64n256 wgmmas): a third less operand
     * traffic from L2 per MAC than the 128x128 tile; its own shared memory
     * (4 stages of 48 KB) and raster group */
    GS_FP8_COOP_256x128x128 = 2,
    /* the wide tile in clusters of two CTAs along n sharing A's tile by TMA
     * multicast: a third less L2 traffic per MAC */
    GS_FP8_COOP_256x128x128_MC2 = 3,
    /* decode (n <= 64): the skinny family's TMA ring on mma.sync with 8-bit
     * operands, k split over a cluster where m alone cannot fill the GPU
     * (kernels/fp8/fp8_decode_kernel.cuh) */
    GS_FP8_DECODE_RING = 4,
    /* decode, 9 <= n <= 64: the skinny family's wgmma ring with FP8 wgmmas
     * (no ldmatrix, no per-k32 adds: what holds the mma.sync ring at n >= 32) */
    GS_FP8_DECODE_WG = 5,
    GS_FP8_CONFIG_COUNT
} gs_fp8_config_t;

/* The family's plan, carried in gs_plan_t.data (fp8_family.c fills it,
 * gs_fp8_run_plan launches it). */
typedef struct gs_fp8_plan {
    uint32_t tag;        /* GS_FP8_PLAN_TAG: a plan of this family */
    int32_t config;      /* gs_fp8_config_t */
    int32_t tiles_m, tiles_n, k_blocks;
    int32_t total_tiles; /* tiles_m * tiles_n (no batches: can_implement) */
    int32_t grid;        /* persistent CTAs: min(tiles, SMs) */
    int32_t smem_bytes;  /* dynamic shared memory per CTA */
    int32_t promote;     /* 1: fp32 promotion every GS_FP8_PROMOTE_K (fast accumulation off) */
    int32_t group_m;     /* raster: tile rows walked together */
    int32_t cluster;     /* CTAs per cluster (1, or 2 along n sharing A's tile) */
    int32_t units;       /* scheduled units: tiles, or clusters' tile pairs */
    int32_t unit_cols;   /* units along n: tiles_n / cluster, rounded up */
    int32_t decode_bucket; /* the decode rings: n <= 8 << bucket tokens */
} gs_fp8_plan_t;
enum { GS_FP8_PLAN_TAG = 0x46503854u /* "FP8T" */ };

/* Raster group of tile rows (the pingpong 128x128 tile's). */
enum { GS_FP8_GROUP_M = 8 };

/* Dynamic shared memory of the tile: the pingpong 128x128 tile's
 * SharedStorage plus its alignment slack (fp8_sm90.cu asserts they agree). */
enum { GS_FP8_SMEM_BYTES = 6 * 32768 + 8 * 2 * 2048 + 1024 + 1024 };

/* The wide tile (GS_FP8_COOP_256x128x128): the pingpong family's 256x128
 * cooperative tile, likewise. */
enum {
    GS_FP8_WIDE_BLOCK_M = 256,
    GS_FP8_WIDE_GROUP_M = 4,
    GS_FP8_WIDE_SMEM_BYTES = 4 * 49152 + 8 * 2 * 2048 + 1024 + 1024,
};

/* The decode ring's n buckets: bucket b takes n <= 8 << b tokens, blocks
 * of ROWS weight rows (ROWS_N64 in the last), two blocks per SM (one in the
 * last). fp8_decode_kernel.cuh asserts these are its configurations'. */
enum {
    GS_FP8_DECODE_BUCKETS = 4,
    GS_FP8_DECODE_MAX_N = 64,
    GS_FP8_DECODE_STAGE_K = 128, /* k of a ring stage: one 128-byte swizzle row */
    GS_FP8_DECODE_ROWS = 128,
    GS_FP8_DECODE_ROWS_N64 = 256,
    GS_FP8_DECODE_SMEM_N8 = 105568,
    GS_FP8_DECODE_SMEM_N16 = 111712,
    GS_FP8_DECODE_SMEM_N32 = 103504,
    GS_FP8_DECODE_SMEM_N64 = 205904,
    /* the k split: clusters of up to 8 blocks (portable), each with at
     * least 4 stages, doubled while the blocks fill at most a measured
     * share of the GPU's block slots, and on the wgmma ring again while
     * long weights fit a block per SM (fp8_family.c's decode_cluster) */
    GS_FP8_DECODE_MAX_CLUSTER = 8,
    GS_FP8_DECODE_MIN_STAGES = 4,
};

/* NULL when configuration cfg computes exactly every call of class c on d,
 * else why not (static text): can_implement is "no reason". */
const char *gs_fp8_refusal(const gs_class_t *c, const gs_device_t *d, int cfg);
const char *gs_fp8_name(int cfg);

/* The plan of a call gs_fp8_refusal takes (pure host code). */
gs_fp8_plan_t gs_fp8_plan_of(const gs_class_t *c, const gs_device_t *d, int cfg);

/* Launches a plan (kernels/fp8/fp8_sm90.cu): 0 or a cudaError_t with nothing
 * enqueued. */
int gs_fp8_run_plan(const gs_plan_t *plan, const gs_problem_t *p, const gs_device_t *d);
/* Launches a decode plan (kernels/fp8/fp8_decode_sm90.cu), likewise. */
int gs_fp8_decode_run_plan(const gs_fp8_plan_t *pl, const gs_problem_t *p, const gs_device_t *d);

extern const gs_family_t gs_family_fp8;

#ifdef __cplusplus
}
#endif
#endif /* GS_FP8_TILES_H */
