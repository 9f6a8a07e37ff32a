/* The SIMT SGEMM family's host planner: the tile configuration by wave
 * cost, and the stream-K split of deep, narrow problems (make_plan). Pure
 * host code. */
#ifndef GS_SGEMM_SIMT_PLAN_CUH
#define GS_SGEMM_SIMT_PLAN_CUH

#include "sgemm_simt_launch.cuh"

namespace {

/* Estimated time of p under Cfg, in units of one SM-resident block-tile
 * element: full waves of MIN_BLOCKS_PER_SM blocks per SM, each wave costing
 * the tile area that one SM then holds. Smaller tiles fill the machine with
 * fewer idle SMs in the last wave, larger ones move fewer bytes per FMA. */
double wave_cost(sgemm_config c, const gs_problem_t *p, int sm_count)
{
    const cfg_shape s = CFG_SHAPE[c];
    const double blocks = (double)((p->m + s.block_m - 1) / s.block_m) *
                          (double)((p->n + s.block_n - 1) / s.block_n) * (double)p->batch;
    const double slots = (double)(sm_count > 0 ? sm_count : 1) * s.min_blocks_per_sm;
    return ceil(blocks / slots) * s.min_blocks_per_sm * s.block_m * s.block_n;
}

/* Block tiles of C under configuration c (one batch). */
int64_t tiles_of(sgemm_config c, const gs_problem_t *p)
{
    const cfg_shape s = CFG_SHAPE[c];
    return ((p->m + s.block_m - 1) / s.block_m) * ((p->n + s.block_n - 1) / s.block_n);
}

/* A smaller tile must beat the estimate of a larger one by more than this:
 * it does more copies and barriers per FMA, which the wave count ignores
 * (8192x8192x2048 TN on an H200: 128x64 estimated 1.5% faster, ran 8%
 * slower than 128x128). */
constexpr double SMALLER_TILE_MARGIN = 0.9;

/* Copy modes each tile has kernels for. KVEC16 (16-byte k-contiguous
 * vectors staged in registers) measured 2-5% faster than COL4 on the
 * 256x128 and 128x256 tiles (H200, 2048-8192). The other tiles keep to the
 * asynchronous copies: on 128x128 KVEC16 gained 1-3% on sm_90 but its
 * staging registers spill under the 128-register cap on sm_80, and on
 * 128x64 and 64x64 it measured slower. */
constexpr int MODES_256x128_A = MODES_NO_K4, MODES_256x128_B = MODES_ALL;
constexpr int MODES_128x256_A = MODES_K, MODES_128x256_B = MODES_MN;
constexpr int MODES_SMALLER = MODES_ALL4;

/* Which of the wide tiles the layout allows. The 16-wide thread tiles are
 * the fastest per FMA, but 4-byte transposing copies along their 256-long
 * side cost twice as many copies, so that side goes to an operand that is
 * contiguous along it (256 along m when A is not transposed, along n when B
 * is) or that is k-contiguous and 16-byte aligned (KVEC16: 256 along m for
 * a transposed A). With both operands k-contiguous and A unaligned (TN)
 * 128x128 is the largest. */
bool config_allowed(sgemm_config c, const gs_problem_t *p)
{
    switch (c) {
    case CFG_256x128x8:
        return p->trans_a == GS_OP_N || vec4_ok(p->A, p->lda, p->batch, p->stride_a);
    case CFG_128x256x8: return p->trans_a == GS_OP_T && p->trans_b == GS_OP_T;
    default: return true;
    }
}

/* Least estimated time, with the margin above favouring the earlier (larger)
 * tiles. */
sgemm_config choose_config(const gs_problem_t *p, int sm_count)
{
    int best = -1;
    double best_cost = HUGE_VAL;
    for (int c = 0; c < CFG_COUNT; ++c) {
        if (!config_allowed((sgemm_config)c, p))
            continue;
        const double cost = wave_cost((sgemm_config)c, p, sm_count);
        if (best < 0 || cost < SMALLER_TILE_MARGIN * best_cost) {
            best = c;
            best_cost = cost;
        }
    }
    return (sgemm_config)best;
}

/* Split K (stream-K) is for deep, narrow problems: k at least this many
 * times max(m, n), whose block tiles fill at most half the CTA slots of the
 * device. Below that the one-block-per-tile kernel keeps its measured
 * speed (the 1024^3..4096^3 table entries are all unsplit). */
constexpr int64_t SPLIT_MIN_K_RATIO = 4;
/* Each CTA of a split grid gets at least this many k-tiles, so that its
 * pipeline prologue and partial-tile store stay small next to its FFMAs;
 * and at least twice as many CTAs as tiles, or splitting is not worth the
 * second kernel. */
constexpr int64_t SPLIT_MIN_UNITS_PER_CTA = 32;
/* Configurations with split-K kernels (the others are never chosen for
 * it: 128x64 would add kernels for no shape the rule below picks it for). */
constexpr bool CAN_SPLIT[CFG_COUNT] = {true, true, true, false, true};

/* The split decision. The tile is the one of least padded area (largest
 * first, with the same margin as the wave model): with every SM busy
 * through stream-K the time is the FMAs done, wasted edge ones included. A
 * grid of one CTA per slot (SMs x MIN_BLOCKS_PER_SM) runs in one wave;
 * stream-K balances the units across it exactly, however the tiles divide. */
sgemm_plan make_plan(const gs_problem_t *p, int sm_count)
{
    sgemm_plan plan = {choose_config(p, sm_count), 0, 0, 0, 0};
    const int64_t sms = sm_count > 0 ? sm_count : 1;
    const int64_t mn = p->m > p->n ? p->m : p->n;
    if (p->batch != 1 || p->k < SPLIT_MIN_K_RATIO * mn)
        return plan;
    /* TN (both operands contiguous along k): the wide tiles would stage both
     * through registers (KVEC16), exposing HBM latency once per k-tile; the
     * 128x128 tile copies both with 3-stage-deep cp.async instead (H200,
     * 512x512x32768 TN: 0.868x cuBLAS on 256x128, 0.920x on 128x128; NN,
     * NT and TT are faster on the wide tiles). */
    const bool both_k_contiguous = p->trans_a == GS_OP_T && p->trans_b == GS_OP_N;
    int best = -1;
    double best_area = HUGE_VAL;
    for (int c = 0; c < CFG_COUNT; ++c) {
        if (!CAN_SPLIT[c] || !config_allowed((sgemm_config)c, p))
            continue;
        if (both_k_contiguous && c < CFG_128x128x8)
            continue;
        const double area = (double)tiles_of((sgemm_config)c, p) * CFG_SHAPE[c].block_m *
                            CFG_SHAPE[c].block_n;
        if (best < 0 || area < SMALLER_TILE_MARGIN * best_area) {
            best = c;
            best_area = area;
        }
    }
    const sgemm_config c = (sgemm_config)best;
    const int64_t tiles = tiles_of(c, p);
    const int64_t k_tiles = (p->k + SPLIT_BLOCK_K - 1) / SPLIT_BLOCK_K;
    int64_t ctas = sms * CFG_SHAPE[c].min_blocks_per_sm;
    if (2 * tiles > ctas)
        return plan;
    if (ctas > tiles * k_tiles / SPLIT_MIN_UNITS_PER_CTA)
        ctas = tiles * k_tiles / SPLIT_MIN_UNITS_PER_CTA;
    if (ctas < 2 * tiles || tiles * k_tiles > INT32_MAX) /* the kernel counts units in int */
        return plan;
    plan.cfg = c;
    plan.ctas = (int)ctas;
    plan.tiles = (int)tiles;
    plan.k_tiles = (int)k_tiles;
    /* one slot per segment: at most ctas + tiles - 1 (see unit_begin) */
    plan.workspace = GS_WS_FLAG_BYTES + (size_t)(ctas + tiles - 1) * CFG_SHAPE[c].block_m *
                                            CFG_SHAPE[c].block_n * sizeof(float);
    return plan;
}

bool ld_ok(int64_t ld, int64_t rows) { return ld >= 1 && ld >= rows; }

int device_sm_count(const gs_device_t *d)
{
    return d && d->present && d->sm_count > 0 ? d->sm_count : 1;
}

} // namespace

#endif /* GS_SGEMM_SIMT_PLAN_CUH */
