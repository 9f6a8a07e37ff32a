/* The skinny family's host planner: size limits, n buckets, the developer
 * knobs, and the choice of kernel, cluster split and workspace split per
 * call (plan_of). Pure host code. */
#ifndef GS_SKINNY_PLAN_CUH
#define GS_SKINNY_PLAN_CUH

#include "gs_split.h"
#include "skinny_config.h"

namespace {

/* Rows, tokens and k positions are 32-bit in the kernel: a row offset
 * (below OFFSET_MAX) plus a k position (below SIZE_MAX_32 plus one
 * iteration) stays below 2^31. */
constexpr int64_t SIZE_MAX_32 = (int64_t)1 << 29;
constexpr int64_t OFFSET_MAX = (int64_t)1 << 30;

constexpr int SKINNY_MAX_BLOCK_M = 128; /* bound for every configuration's BLOCK_M */
static_assert(skinny_cfg_n8::BLOCK_M <= SKINNY_MAX_BLOCK_M && skinny_cfg_n16::BLOCK_M <= SKINNY_MAX_BLOCK_M &&
                  skinny_cfg_n32::BLOCK_M <= SKINNY_MAX_BLOCK_M && skinny_cfg_n64::BLOCK_M <= SKINNY_MAX_BLOCK_M,
              "32-bit row offsets");

enum n_bucket { BUCKET_N8, BUCKET_N16, BUCKET_N32, BUCKET_N64, BUCKET_COUNT };

n_bucket bucket_of(int64_t n)
{
    return n <= skinny_cfg_n8::N_MAX ? BUCKET_N8
           : n <= skinny_cfg_n16::N_MAX ? BUCKET_N16
           : n <= skinny_cfg_n32::N_MAX ? BUCKET_N32 : BUCKET_N64;
}

/* The wgmma ring (kernels/skinny/skinny_sm90.cu) runs in place of the mma.sync
 * ring on compute capability 9.0 (sm_90a code). Developer knobs,
 * GEMMSHIM_DEV_SKINNY_* (README), set once by the family before its first
 * call (kernels/skinny/skinny_family.c, gs_skinny_set_knobs), for A/B measurements
 * with bench_ab: wg 0 keeps the mma.sync ring and its plan; ck = c forces
 * the wgmma ring with clusters of c for every n > 8 (0: the plan's); ws = s
 * the workspace split of s for every n > 8 (0: the plan's). */
struct wg_knobs {
    int mode, ck, ws;
};
wg_knobs wg_knob_values = {1, 0, 0};
const wg_knobs &wg_env()
{
    return wg_knob_values;
}
bool wg_on(const gs_device_t *d)
{
    return d->cc_major == 9 && d->cc_minor == 0 && wg_env().mode >= 1;
}

/* What the host needs of a configuration of either kernel. */
struct cfg_shape {
    int block_m;     /* weight rows per block */
    int k_span;      /* k per iteration (register kernel) or stage (ring) of a block */
    int per_sm;      /* blocks per SM the configuration is built for */
    int smem_bytes;  /* dynamic shared memory (ring) */
    int tile_bytes;  /* a block's fragment-ordered fp32 partial tile (ring; workspace split) */
};
template <class Cfg> constexpr cfg_shape reg_shape_of()
{
    return {Cfg::BLOCK_M, Cfg::WARPS_K * Cfg::WARP_K, Cfg::MIN_BLOCKS_PER_SM, 0, 0};
}
template <class Cfg> constexpr cfg_shape ring_shape_of()
{
    return {Cfg::BLOCK_M, Cfg::STAGE_K, Cfg::CTAS_PER_SM, Cfg::SMEM_BYTES, Cfg::RED_BYTES};
}
cfg_shape reg_shape(n_bucket nb)
{
    switch (nb) {
    case BUCKET_N8: return reg_shape_of<skinny_cfg_n8>();
    case BUCKET_N16: return reg_shape_of<skinny_cfg_n16>();
    case BUCKET_N32: return reg_shape_of<skinny_cfg_n32>();
    default: return reg_shape_of<skinny_cfg_n64>();
    }
}
cfg_shape ring_shape(n_bucket nb)
{
    switch (nb) {
    case BUCKET_N8: /* not chosen (plan_of): the n16 configuration holds it */
    case BUCKET_N16: return ring_shape_of<skinny_ring_n16>();
    case BUCKET_N32: return ring_shape_of<skinny_ring_n32>();
    default: return ring_shape_of<skinny_ring_n64>();
    }
}

/* Blocks a cluster splits k into (sm_90; sm_80 has no clusters). The
 * weights are streamed once whatever the split; a split buys blocks for
 * otherwise idle SMs and costs a pass through distributed shared memory
 * plus a shorter pipeline per block, which measured slower than no split
 * whenever the row blocks alone fill the machine (H200: 4-13% at ck2, worse
 * beyond). So: the largest power of two that keeps all blocks resident in
 * one wave at the configuration's design occupancy, and gives each block at
 * least min_iters iterations (stages). */
constexpr int MIN_ITERS_PER_BLOCK = 4;

int choose_cluster(const gs_problem_t *p, const gs_device_t *d, const cfg_shape &cs, int min_iters)
{
    if (d->cc_major < 9)
        return 1;
    const int64_t row_blocks = (p->m + cs.block_m - 1) / cs.block_m * p->batch;
    const int64_t slots = (int64_t)(d->sm_count > 0 ? d->sm_count : 1) * cs.per_sm;
    return gs_split_doubling(row_blocks, 2, slots, p->k, (int64_t)cs.k_span * min_iters,
                             SKINNY_MAX_CLUSTER);
}

/* Cluster split of the wgmma ring (H200, bench/notes-decode.md, "v5"):
 * fewer, longer blocks than the register kernel's fill-the-waves rule.
 * The largest power of two (at most SKINNY_RING_MAX_CLUSTER, each block
 * SKINNY_RING_MIN_STAGES_PER_CTA stages or more) that keeps the blocks
 * within the configuration's share of the SMs (SKINNY_WG_CTA_PCT*), at
 * n <= 16 two where that leaves long weights unsplit on at most half the
 * SMs (SKINNY_WG_LONG_STAGES); 0 (not
 * this kernel) when the blocks then occupy fewer than SKINNY_WG_MIN_CTA_PCT
 * percent of the SMs. */
int choose_cluster_wg(const gs_problem_t *p, const gs_device_t *d, n_bucket nb, const cfg_shape &cs)
{
    const int64_t row_blocks = (p->m + cs.block_m - 1) / cs.block_m * p->batch;
    const int64_t sms = d->sm_count > 0 ? d->sm_count : 1;
    const int pct = nb == BUCKET_N32 ? SKINNY_WG_CTA_PCT_N32 : SKINNY_WG_CTA_PCT;
    int cluster =
        gs_split_doubling(row_blocks, 2 * 100, pct * sms, p->k,
                          (int64_t)cs.k_span * SKINNY_RING_MIN_STAGES_PER_CTA, SKINNY_RING_MAX_CLUSTER);
    if (nb == BUCKET_N16 && cluster == 1 && row_blocks * 2 <= sms &&
        p->k >= (int64_t)cs.k_span * 2 * SKINNY_WG_LONG_STAGES)
        cluster = 2;
    if (row_blocks * cluster * 100 < SKINNY_WG_MIN_CTA_PCT * sms)
        return 0;
    return cluster;
}

/* Workspace split of the wgmma ring (split_ws_reduce in skinny_sm90.cu):
 * co-resident blocks, one per SM, meeting through the workspace instead of a
 * cluster. H200, same-run A/B against the cluster plan (bench/NOTES.md,
 * decode v6): 4096x32x4096 0.98 -> 1.02x, 4096x32x14336 0.965 -> 1.01x,
 * 4096x16x14336 0.925 -> 0.97x (splits of 4 instead of clusters of 4 / 4 /
 * 2); 4096x16x4096 1% slower (0.995 vs 1.005: k = 4096 leaves each block
 * 16 stages); n = 64 no faster (16 x 8 blocks: 0.77 vs 0.78x); splits of 2
 * slower than clusters of 2 (6144x32x4096 0.91 vs 0.96x). So: n = 17..32,
 * and n = 9..16 with k >= SKINNY_WS_MIN_K_N16, wherever the cluster plan
 * splits and the largest power-of-two split <= 8 that keeps the blocks
 * within one per SM is at least SKINNY_WS_MIN_SPLIT and the cluster's. */
constexpr int SKINNY_WS_MIN_K_N16 = 8192;
constexpr int SKINNY_WS_MIN_SPLIT = 4;

int choose_ws_split(const gs_problem_t *p, const gs_device_t *d, n_bucket nb, const cfg_shape &cs,
                    int cluster)
{
    if (cluster < 2 || nb == BUCKET_N64 || (nb == BUCKET_N16 && p->k < SKINNY_WS_MIN_K_N16))
        return 0;
    const int64_t slots = (p->m + cs.block_m - 1) / cs.block_m * p->batch;
    if (slots > (int64_t)(GS_WS_FLAG_BYTES / sizeof(int)))
        return 0;
    int s = 8;
    while (s > 1 && slots * s > d->sm_count)
        s /= 2;
    return s >= cluster && s >= SKINNY_WS_MIN_SPLIT ? s : 0;
}

/* What a call runs. */
/* Whole 32-bit fields, no padding: a plan is copied into gs_plan_t.data
 * byte for byte, and two plans of one call compare equal there. */
struct skinny_plan {
    int32_t ring;    /* the sm_90 ring kernel (else the register kernel) */
    int32_t cluster; /* blocks splitting k */
    int32_t pdl;     /* programmatic dependent launch */
    int32_t ws;      /* the split meets through the workspace, not a cluster */
};
static_assert(sizeof(skinny_plan) == 16, "skinny_plan has no padding");

/* sm_90 choice between the kernels (H200, bench/notes-sk.md): the ring
 * kernel streams at up to 4.0 TB/s and cuts the token traffic, but a block
 * pays a fixed start (barrier setup, descriptor fetch, pipeline fill) and
 * a cluster split adds a reduction: with splits of 8 it ran 0.47-0.80x
 * cuBLAS where the register kernel ran 0.63-1.22x. It takes n > 8 where
 * the row blocks need a split of at most SKINNY_RING_MAX_CLUSTER (large
 * m); the register kernel takes the rest. Both are launched with
 * programmatic dependent launch where p->pdl asks for it (the call's launch
 * overlaps the previous grid's drain: register kernel 5-9% on 10-us calls,
 * ring 4-8% on 12-20 us calls). Neither triggers the next grid
 * early nor prefetches weights to L2 before its dependency wait: both
 * measured slower (bench/NOTES.md). */
skinny_plan plan_of(const gs_problem_t *p, const gs_device_t *d, bool ws_ok = true)
{
    const n_bucket nb = bucket_of(p->n);
    const bool pdl = d->cc_major >= 9 && p->pdl;
    skinny_plan pl = {false, 1, pdl, false};
    const cfg_shape rs = ring_shape(nb);
    if (d->cc_major >= 9 && p->n > skinny_cfg_n8::N_MAX && d->smem_optin >= (size_t)rs.smem_bytes) {
        if (wg_on(d)) {
            const int64_t slots = (p->m + rs.block_m - 1) / rs.block_m * p->batch;
            if (ws_ok && wg_env().ws > 0 && slots <= (int64_t)(GS_WS_FLAG_BYTES / sizeof(int)) &&
                slots * wg_env().ws <= (int64_t)d->sm_count * rs.per_sm)
                return {true, wg_env().ws, pdl, true};
            if (wg_env().ck > 0)
                return {true, std::min(wg_env().ck, SKINNY_MAX_CLUSTER), pdl, false};
            const int c = choose_cluster_wg(p, d, nb, rs);
            const int s = ws_ok ? choose_ws_split(p, d, nb, rs, c) : 0;
            if (s > 0)
                return {true, s, pdl, true};
            if (c > 0)
                return {true, c, pdl, false};
        }
        const int c = choose_cluster(p, d, rs, SKINNY_RING_MIN_STAGES_PER_CTA);
        if (c <= SKINNY_RING_MAX_CLUSTER)
            return {true, c, pdl, false};
    }
    pl.cluster = choose_cluster(p, d, reg_shape(nb), MIN_ITERS_PER_BLOCK);
    return pl;
}


bool is_16bit(gs_dtype_t t) { return t == GS_DT_BF16 || t == GS_DT_F16; }

} // namespace

#endif /* GS_SKINNY_PLAN_CUH */
