/* The experimental FP8 family (kernels/fp8/fp8_tiles.h) as a kernel family
 * (dispatch/gs_family.h): what it takes (gs_fp8_refusal, every reason
 * named), its plan (tile counts, grid, shared memory, promotion), and its
 * table. Pure host code: the unit tests call all of it without a GPU. */
#include "fp8_tiles.h"
#include "gs_split.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Each configuration's name (its kernel's with fast accumulation off; on,
 * the name says so), tile extent along m, raster group, shared memory and
 * CTAs per cluster (2: along n, sharing A's tile by multicast). The decode
 * rings' (fp8_decode_ring: mma.sync, fp8_decode_wg: wgmma) extent, shared
 * memory and cluster depend on the call's n bucket (decode_* below); their
 * rows hold the least shared memory of any bucket (n <= 32's), the
 * bucket's own is checked in gs_fp8_refusal. */
static const struct fp8_config {
    const char *name, *name_fast;
    int block_m, group_m, smem, cluster, decode;
} configs[GS_FP8_CONFIG_COUNT] = {
    [GS_FP8_PINGPONG_128x128x128] = {"fp8_pingpong_128x128x128",
                                     "fp8_pingpong_128x128x128_fastaccum", GS_FP8_BLOCK_M,
                                     GS_FP8_GROUP_M, GS_FP8_SMEM_BYTES, 1},
    [GS_FP8_COOP_128x128x128] = {"fp8_coop_128x128x128", "fp8_coop_128x128x128_fastaccum",
                                 GS_FP8_BLOCK_M, GS_FP8_GROUP_M, GS_FP8_SMEM_BYTES, 1},
    [GS_FP8_COOP_256x128x128] = {"fp8_coop_256x128x128", "fp8_coop_256x128x128_fastaccum",
                                 GS_FP8_WIDE_BLOCK_M, GS_FP8_WIDE_GROUP_M,
                                 GS_FP8_WIDE_SMEM_BYTES, 1},
    [GS_FP8_COOP_256x128x128_MC2] = {"fp8_coop_256x128x128_mc2",
                                     "fp8_coop_256x128x128_mc2_fastaccum", GS_FP8_WIDE_BLOCK_M,
                                     GS_FP8_WIDE_GROUP_M, GS_FP8_WIDE_SMEM_BYTES, 2},
    [GS_FP8_DECODE_RING] = {"fp8_decode_ring", "fp8_decode_ring", GS_FP8_DECODE_ROWS, 1,
                            GS_FP8_DECODE_SMEM_N32, 1, 1},
    [GS_FP8_DECODE_WG] = {"fp8_decode_wg", "fp8_decode_wg", GS_FP8_DECODE_ROWS, 1,
                          GS_FP8_DECODE_SMEM_N32, 1, 1},
};

/* ---- the decode ring's buckets and split ---- */

/* The bucket of n tokens (n <= GS_FP8_DECODE_MAX_N): n <= 8 << bucket */
static int decode_bucket(int64_t n)
{
    int b = 0;
    while (b < GS_FP8_DECODE_BUCKETS - 1 && n > (int64_t)8 << b)
        ++b;
    return b;
}

/* Per bucket: weight rows per block, blocks per SM the configuration is
 * built for, shared memory, and the share of the GPU's block slots a split
 * fills (1/fill), for the mma.sync ring and for the wgmma ring. Measured on
 * the H200 (bench/results/h200-fp8-decode, split-ab-*.csv, wgfill-*.csv):
 * mma.sync ring, n <= 16: a quarter, about one block per SM (1.10-1.28x
 * faster than half the slots); n = 17..64: half (a quarter: 0.88x, 0.61x).
 * wgmma ring: n <= 16 an eighth (m = 4096 splits 2 ways: 1.04x / 1.05x
 * over 4 ways), n = 17..64 a quarter (4096: 4 ways, 1.28x / 1.46x over 8;
 * 14336: none, 1.11x / 1.03x over 2). */
static const struct decode_shape {
    int rows, per_sm, smem, fill, fill_wg;
} decode_shapes[GS_FP8_DECODE_BUCKETS] = {
    {GS_FP8_DECODE_ROWS, 2, GS_FP8_DECODE_SMEM_N8, 4, 8 /* the wgmma ring takes n >= 9 */},
    {GS_FP8_DECODE_ROWS, 2, GS_FP8_DECODE_SMEM_N16, 4, 8},
    {GS_FP8_DECODE_ROWS, 2, GS_FP8_DECODE_SMEM_N32, 2, 4},
    {GS_FP8_DECODE_ROWS_N64, 1, GS_FP8_DECODE_SMEM_N64, 2, 4},
};

/* A block's stages past which the wgmma ring splits until every SM has a
 * block (decode_cluster) */
enum { DECODE_LONG_STAGES = 64 };

/* GEMMSHIM_DEV_FP8_CK: the decode split forced (1, 2, 4, 8), halved while
 * a block would get fewer than its minimum of stages or a cluster would
 * not fit the GPU; 0: decode_cluster's rule. */
static int forced_ck;

/* Blocks splitting k: doubled while the row blocks times the split, before
 * the doubling, fill at most 1/fill of the GPU's block slots (after it, up
 * to 2/fill) and each block keeps its minimum of
 * stages (gs_split.h, as the skinny family's choose_cluster, with the fill
 * measured per ring and bucket). On 132 SMs, the mma.sync ring at n <= 16: m = 4096
 * splits 4 ways, 6144 two, 14336 not; at n = 17..32: 2048 eight ways,
 * 28672 not. The wgmma ring (long_streams) then doubles again while the
 * blocks fit one per SM with DECODE_LONG_STAGES each. */
static int decode_cluster(int64_t m, int64_t k, const struct decode_shape *sh, int fill,
                          int long_streams, const gs_device_t *d)
{
    const int64_t row_blocks = (m + sh->rows - 1) / sh->rows;
    const int64_t slots = (int64_t)d->sm_count * sh->per_sm;
    const int64_t stages = (k + GS_FP8_DECODE_STAGE_K - 1) / GS_FP8_DECODE_STAGE_K;
    if (forced_ck) {
        int ck = forced_ck;
        while (ck > 1 && (stages < (int64_t)ck * GS_FP8_DECODE_MIN_STAGES || ck > d->sm_count))
            ck /= 2;
        return ck;
    }
    int split = gs_split_doubling(row_blocks, fill, slots, stages, GS_FP8_DECODE_MIN_STAGES,
                                  GS_FP8_DECODE_MAX_CLUSTER);
    /* Long weights: doubled again while the blocks still fit one per SM and
     * each keeps a long stream (m = 8192, k = 28672, n = 16 on the wgmma
     * ring: 64 blocks, half the SMs idle; two ways 4.03 TB/s against 3.92,
     * H200). Not where the blocks would get shorter streams: m = 4096, k =
     * 14336 loses 5% at four ways (28 stages a block). */
    while (long_streams && split < GS_FP8_DECODE_MAX_CLUSTER &&
           row_blocks * split * 2 <= d->sm_count &&
           stages >= (int64_t)split * 2 * DECODE_LONG_STAGES)
        split *= 2;
    return split;
}

/* The decode kernel's name: ring, bucket and split, as the shim logs it */
#define GS_DECODE_BUCKET_NAMES(RING, N)                                                     \
    {"fp8_decode_" RING "_n" N "_ck1", "fp8_decode_" RING "_n" N "_ck2",                      \
     "fp8_decode_" RING "_n" N "_ck4", "fp8_decode_" RING "_n" N "_ck8"}
#define GS_DECODE_NAMES(RING)                                                               \
    {GS_DECODE_BUCKET_NAMES(RING, "8"), GS_DECODE_BUCKET_NAMES(RING, "16"),                  \
     GS_DECODE_BUCKET_NAMES(RING, "32"), GS_DECODE_BUCKET_NAMES(RING, "64")}
static const char *decode_name(int config, int bucket, int cluster)
{
    /* the wgmma ring's n8 names are never planned (can_implement) */
    static const char *const names[2][GS_FP8_DECODE_BUCKETS][4] = {GS_DECODE_NAMES("ring"),
                                                                   GS_DECODE_NAMES("wg")};
    const int c = cluster >= 8 ? 3 : cluster >= 4 ? 2 : cluster >= 2 ? 1 : 0;
    return names[config == GS_FP8_DECODE_WG][bucket][c];
}
#undef GS_DECODE_NAMES
#undef GS_DECODE_BUCKET_NAMES

const char *gs_fp8_name(int cfg)
{
    return cfg >= 0 && cfg < GS_FP8_CONFIG_COUNT ? configs[cfg].name : "fp8_unknown";
}

/* A leading dimension TMA can walk: at least the contiguous extent, and a
 * whole number of 16-byte units (TMA's global strides). */
static int ld_ok(int64_t ld, int64_t extent, size_t es)
{
    return ld >= extent && ((uint64_t)ld * es) % 16 == 0;
}

const char *gs_fp8_refusal(const gs_class_t *c, const gs_device_t *d, int cfg)
{
    const int64_t lim = (int64_t)1 << 31;
    if (!c || !d || cfg < 0 || cfg >= GS_FP8_CONFIG_COUNT)
        return "no such configuration";
    if (!d->present || d->cc_major != 9 || d->cc_minor != 0 || d->sm_count < 1)
        return "not an sm_90 device";
    const struct fp8_config *g = &configs[cfg];
    if (!g->decode && d->smem_optin < (size_t)g->smem)
        return "shared memory short of the tile's";
    if (d->sm_count < g->cluster)
        return "fewer SMs than a cluster";
    if (c->entry != GS_EP_LT_MATMUL)
        return "not a cublasLtMatmul";
    /* e4m3/e5m2 operands (not both e5m2), compute 32F, A/B scales none,
     * tensorwise or rowwise, no C or D scale, no AMAX_D, C of D's type */
    if (!gs_class_fp8_subset(c))
        return "outside the FP8 subset";
    /* D bf16 only: one output type keeps the family to six kernels per
     * configuration while it is slower than cuBLASLt; fp16 and fp32 are a
     * template argument away. */
    if (c->c_type != GS_DT_BF16)
        return "D not bf16";
    /* FP8 wgmma reads both operands K-major from shared memory: TN in
     * cuBLAS terms (op(A) = A^T stored k x m, B stored k x n). */
    if (c->trans_a != GS_OP_T || c->trans_b != GS_OP_N)
        return "not TN";
    if (c->batch != 1)
        return "batched";
    if (c->m < 1 || c->n < 1 || c->k < 1 || c->m >= lim || c->n >= lim || c->k >= lim)
        return "sizes out of range";
    if (g->decode) {
        if (c->n > GS_FP8_DECODE_MAX_N)
            return "n above 64 (the decode ring's)";
        /* the smallest wgmma token width is the n16 bucket's */
        if (cfg == GS_FP8_DECODE_WG && c->n <= 8)
            return "n below 9 (the mma.sync ring's)";
        if (d->smem_optin < (size_t)decode_shapes[decode_bucket(c->n)].smem)
            return "shared memory short of the ring's";
        /* the rings count k's stages in int (skinny_device.cuh) */
        if (c->k > INT32_MAX - GS_FP8_DECODE_STAGE_K)
            return "k too large for the ring's stage count";
        /* routed without a switch: only the scale pairs verified against
         * cuBLASLt on a GPU (tests/gpu/test_fp8_tiles.c sets both alike) */
        if (gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_A) != gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_B))
            return "A and B scale modes differ";
    }
    const int64_t tiles = ((c->m + g->block_m - 1) / g->block_m) *
                          ((c->n + GS_FP8_BLOCK_N - 1) / GS_FP8_BLOCK_N);
    if (tiles >= lim)
        return "too many tiles";
    if (c->k % GS_FP8_K_MULTIPLE != 0)
        return "k not a multiple of 16";
    /* cuBLASLt 13.1 refuses (status 15) every FP8 call whose m is not a
     * multiple of 8 with a bf16 D, whatever ldd, bias or scale mode (H200,
     * m = 776 / 784 / 1000 / 1008 taken; 777 / 780 / 1001 / 1004 refused):
     * serving one would answer success where cuBLASLt answers 15. */
    if (c->m % GS_FP8_M_MULTIPLE != 0)
        return "m not a multiple of 8 (cuBLASLt refuses it)";
    if (c->align_a < GS_FP8_PTR_ALIGN || c->align_b < GS_FP8_PTR_ALIGN ||
        c->align_c < GS_FP8_PTR_ALIGN)
        return "A, B or D not 16-byte aligned";
    if (!ld_ok(c->lda, c->k, 1) || !ld_ok(c->ldb, c->k, 1))
        return "lda or ldb not a TMA stride";
    if (!ld_ok(c->ldc, c->m, gs_dtype_size((gs_dtype_t)c->c_type)))
        return "ldc not a TMA stride";
    /* D is written, never read: beta an fp32 zero in host memory (alpha
     * then in host memory too) */
    if (c->scalar_type != GS_DT_F32 || c->scalars_on_device || c->beta_kind != GS_BETA_ZERO ||
        !c->align_alpha)
        return "beta not a host zero";
    if (c->bias_type != GS_DT_OTHER && c->bias_type != GS_DT_BF16)
        return "bias not a bf16 vector";
    /* cuBLASLt 13.1 refuses (status 15) an FP8 call whose bias is not
     * 16-byte aligned (H200: offsets 2, 4 and 8 bytes; tensorwise with fast
     * accumulation it takes them, and faults at 2 bytes): forwarded, the
     * call gets cuBLASLt's own answer */
    if (c->bias_type != GS_DT_OTHER && c->align_bias < GS_FP8_PTR_ALIGN)
        return "bias not 16-byte aligned (cuBLASLt refuses it)";
    return NULL;
}

gs_fp8_plan_t gs_fp8_plan_of(const gs_class_t *c, const gs_device_t *d, int cfg)
{
    gs_fp8_plan_t pl;
    memset(&pl, 0, sizeof pl);
    pl.tag = GS_FP8_PLAN_TAG;
    pl.config = cfg;
    const struct fp8_config *g = &configs[cfg];
    pl.tiles_m = (int32_t)((c->m + g->block_m - 1) / g->block_m);
    pl.tiles_n = (int32_t)((c->n + GS_FP8_BLOCK_N - 1) / GS_FP8_BLOCK_N);
    pl.k_blocks = (int32_t)((c->k + GS_FP8_BLOCK_K - 1) / GS_FP8_BLOCK_K);
    pl.total_tiles = pl.tiles_m * pl.tiles_n;
    /* a cluster's CTAs take one unit of tiles side by side along n (an odd
     * last one computes a tile of TMA's zeros past n, stores nothing) */
    pl.cluster = g->cluster;
    pl.unit_cols = (pl.tiles_n + pl.cluster - 1) / pl.cluster;
    pl.units = pl.tiles_m * pl.unit_cols;
    /* persistent: one CTA per SM at most (one CTA fits an SM: its shared
     * memory), never more CTAs than the units need, whole clusters */
    const int32_t slots = d->sm_count / pl.cluster;
    pl.grid = (pl.units < slots ? pl.units : slots) * pl.cluster;
    pl.smem_bytes = g->smem;
    pl.promote = (c->lt_flags & GS_LT_FAST_ACCUM) ? 0 : 1;
    pl.group_m = pl.tiles_m < g->group_m ? pl.tiles_m : g->group_m;
    if (g->decode) {
        /* one block per BLOCK_M weight rows and all n tokens, a cluster of
         * them splitting k: tiles_m row blocks, grid = row blocks x split */
        pl.decode_bucket = decode_bucket(c->n);
        const struct decode_shape *sh = &decode_shapes[pl.decode_bucket];
        pl.tiles_m = (int32_t)((c->m + sh->rows - 1) / sh->rows);
        pl.tiles_n = 1;
        pl.total_tiles = pl.units = pl.tiles_m;
        pl.unit_cols = 1;
        const int wg = cfg == GS_FP8_DECODE_WG;
        pl.cluster = decode_cluster(c->m, c->k, sh, wg ? sh->fill_wg : sh->fill, wg, d);
        pl.grid = pl.tiles_m * pl.cluster;
        pl.smem_bytes = sh->smem;
        pl.group_m = 1;
    }
    return pl;
}

/* ---- the family table ---- */

static const char *config_name(int config)
{
    return gs_fp8_name(config);
}

static int can_implement(const gs_class_t *c, const gs_device_t *d, int config)
{
    return gs_fp8_refusal(c, d, config) == NULL;
}

static void plan(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *plan)
{
    const gs_fp8_plan_t pl = gs_fp8_plan_of(&p->cls, d, plan->config);
    _Static_assert(sizeof pl <= GS_PLAN_DATA_MAX, "the plan fits gs_plan_t.data");
    memcpy(plan->data.bytes, &pl, sizeof pl);
    plan->workspace_bytes = 0;
    plan->kernel = configs[pl.config].decode ? decode_name(pl.config, pl.decode_bucket, pl.cluster)
                   : pl.promote             ? configs[pl.config].name
                                            : configs[pl.config].name_fast;
}

/* A plan's launch: the decode ring's unit, or the tiles' */
static int run(const gs_plan_t *plan, const gs_problem_t *p, const gs_device_t *d)
{
    gs_fp8_plan_t pl;
    memcpy(&pl, plan->data.bytes, sizeof pl);
    if (pl.tag == GS_FP8_PLAN_TAG && pl.config == plan->config && pl.config >= 0 &&
        pl.config < GS_FP8_CONFIG_COUNT && configs[pl.config].decode)
        return gs_fp8_decode_run_plan(&pl, p, d);
    return gs_fp8_run_plan(plan, p, d);
}

static const int ck_values[] = {0, 1, 2, 4, 8};
static const gs_knob_t knobs[] = {
    {"CK", NULL, 0, 0, 8, ck_values, sizeof ck_values / sizeof ck_values[0]},
};

static void set_knobs(const int *v)
{
    forced_ck = v[0];
}

const gs_family_t gs_family_fp8 = {
    .name = "fp8",
    .n_configs = GS_FP8_CONFIG_COUNT,
    .config_name = config_name,
    .can_implement = can_implement,
    .plan = plan,
    .run = run,
    .n_knobs = sizeof knobs / sizeof knobs[0],
    .knobs = knobs,
    .set_knobs = set_knobs,
    /* it reads the FP8 types and A/B scales, and carries the scale pointers */
    .reads_lt_contract = 1,
    /* the tiles are experimental, offered only with GEMMSHIM_FP8_TILES=1;
     * the decode kernels are routed where the table measured them faster */
    .fp8_tiles_configs = (1ull << GS_FP8_PINGPONG_128x128x128) |
                         (1ull << GS_FP8_COOP_128x128x128) | (1ull << GS_FP8_COOP_256x128x128) |
                         (1ull << GS_FP8_COOP_256x128x128_MC2),
};
