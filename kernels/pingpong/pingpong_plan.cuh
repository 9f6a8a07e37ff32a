/* The pingpong family's host planner: split-K and stream-K plans, the
 * persistent grid, the developer knobs, and the per-configuration limits
 * can_implement checks. Pure host code: the planners read the call's class
 * (gs_class_t), as can_implement does. */
#ifndef GS_PINGPONG_PLAN_CUH
#define GS_PINGPONG_PLAN_CUH

#include "pingpong_config.cuh"

namespace {

/* ---- split-K policy ----
 * Split only when the output tiles leave at least half the SMs idle and K
 * is long: then `splits` units per tile, as many as fill the SMs once
 * (tiles * splits <= sm_count, so every unit has its own resident CTA and
 * the tile semaphores cannot deadlock), each at least SPLIT_MIN_KBLOCKS
 * k-blocks long (the partial store, the wait and the slice reduction cost
 * about as much as a few k-blocks). */
constexpr int SPLIT_MIN_KBLOCKS = 8;

/* Tiles of at most this many k-blocks walk all of m per column (launch). */
constexpr int RASTER_ALL_M_MAX_KBLOCKS = 4;
/* ... and run the 128x128 tile as Cfg128x128Short. */
constexpr int SHORT_K_MAX_KBLOCKS = 4;

/* Developer A/B switches and test knobs, GEMMSHIM_DEV_PINGPONG_* (README),
 * set once by the family before its first call (kernels/pingpong/pingpong_family.c,
 * gs_pingpong_set_knobs); these defaults otherwise:
 * group     the raster group for every call (0: the plan's);
 * defer     0 stores every cooperative tile in line (store_tile) instead
 *           of deferring half of it into the next tile's mainloop
 *           (deferred_store);
 * max_ctas  at most this many CTAs in an unsplit grid, so that small
 *           problems give every CTA several tiles (the persistent paths:
 *           the ring across tiles, the pingpong turns, the deferred
 *           epilogue) under compute-sanitizer (0: no cap); stream-K grids
 *           too;
 * sk        0: no stream-K; 1: plan_sk's rule; 2: stream-K for every
 *           ragged last wave (the thresholds off; A/B runs); 3: as 2, and
 *           the ragged tiles dealt out alone however short the ranges
 *           (tests: small grids). */
struct pp_knobs {
    int group, defer, max_ctas, sk;
};
pp_knobs pp_knob_values = {0, 1, 0, 1};
const pp_knobs &pp_env()
{
    return pp_knob_values;
}

constexpr int SPLIT_MAX = SPLIT_MAX_SLOTS;

/* k-blocks of a problem: the unit of the ring, of split-K and of the
 * short-K / raster thresholds. */
int64_t k_blocks_of(int64_t k) { return (k + BLOCK_K - 1) / BLOCK_K; }

struct SplitPlan {
    int splits;      /* 1: no split */
    int tiles;
    size_t ws_bytes; /* 0 without a split */
};

/* Output tiles of a call of class p on block_m x BLOCK_N tiles, every
 * batch. The planners read the class (can_implement plans the split). */
int64_t tiles_of(const gs_class_t *p, int block_m)
{
    return ((p->m + block_m - 1) / block_m) * ((p->n + BLOCK_N - 1) / BLOCK_N) * p->batch;
}

SplitPlan plan_split(const gs_class_t *p, const gs_device_t *d, int block_m)
{
    SplitPlan sp = {1, 0, 0};
    const int64_t tiles = tiles_of(p, block_m);
    const int64_t kb = k_blocks_of(p->k);
    sp.tiles = (int)(tiles < INT32_MAX ? tiles : INT32_MAX);
    if (d->sm_count < 2 || tiles * 2 > d->sm_count || kb < 2 * SPLIT_MIN_KBLOCKS)
        return sp;
    int64_t s = d->sm_count / tiles;
    if (s > kb / SPLIT_MIN_KBLOCKS)
        s = kb / SPLIT_MIN_KBLOCKS;
    if (s > SPLIT_MAX)
        s = SPLIT_MAX;
    if (s < 2 || tiles > (int64_t)(GS_WS_FLAG_BYTES / sizeof(int)))
        return sp;
    sp.splits = (int)s;
    sp.ws_bytes = (size_t)GS_WS_FLAG_BYTES
                  + (size_t)tiles * (size_t)s * (size_t)block_m * BLOCK_N * sizeof(float);
    return sp;
}

/* The persistent grid of an unsplit (or stream-K) call. */
int grid_of(const gs_class_t *p, const gs_device_t *d, int block_m)
{
    const int64_t tiles = tiles_of(p, block_m);
    int64_t grid = tiles < d->sm_count ? tiles : d->sm_count;
    if (pp_env().max_ctas > 0 && grid > pp_env().max_ctas)
        grid = pp_env().max_ctas;
    return (int)grid;
}

/* ---- stream-K policy (sk_unit) ----
 * For the cooperative tile with a 16-bit output of the input's type, when
 * the ragged last wave is at most SK_MAX_RAGGED full: dealing k-blocks out
 * saves up to the idle rest of that wave, but the CTAs then stream
 * operands at unrelated k offsets, which the L2 does not absorb, so the
 * dealt k-blocks run up to ~2x slower than whole tiles (H200:
 * 6144x1152x8192, 84 of 132 slots, 0.80 of whole tiles' speed; 4096^3,
 * 116, 0.95; 4096x2304x14336, 24, 1.27; 8192x2176x8192, 16, 1.13). The
 * ragged tiles alone are dealt out when each CTA gets at least
 * SK_MIN_PIECE k-blocks of them, else the last whole wave with them
 * (4096x2176x4096, 8 ragged tiles: 1.25). Not for split-K shapes (few
 * tiles), nor below 32 k-blocks, where the partial tiles' traffic takes
 * what the wave gains (2560x1792x1024, 16 k-blocks: H200 1.0, H100 0.91
 * of whole tiles' speed; 32 k-blocks: 1.0-1.12). GEMMSHIM_PP_SK=2 and 3 drop the
 * fullness and K thresholds (A/B runs, tests; pp_env). */
constexpr double SK_MAX_RAGGED = 0.5;
constexpr int SK_MIN_KBLOCKS = 32;
constexpr int SK_MIN_PIECE = 8;

struct SkPlan {
    int dp_tiles, iters; /* iters == 0: no stream-K */
    int grid;
    size_t ws_bytes;
};

SkPlan plan_sk(const gs_class_t *p, const gs_device_t *d, int block_m)
{
    SkPlan sk = {0, 0, 0, 0};
    if (!pp_env().sk || block_m != 256 || p->c_type != p->a_type)
        return sk;
    const int64_t tiles = tiles_of(p, block_m);
    const int64_t kb = k_blocks_of(p->k);
    const int64_t grid = grid_of(p, d, block_m);
    if (grid < 2 || tiles <= grid || tiles % grid == 0 || kb < 4)
        return sk;
    const int64_t ragged = tiles % grid;
    if (pp_env().sk == 1 && (kb < SK_MIN_KBLOCKS || (double)ragged > SK_MAX_RAGGED * (double)grid))
        return sk;
    const int64_t min_piece = pp_env().sk == 3 ? 1 : SK_MIN_PIECE;
    const int64_t dealt = ragged * kb >= min_piece * grid ? ragged : ragged + grid;
    if (dealt * kb > INT_MAX || grid > GS_WS_FLAG_BYTES / (int)sizeof(int))
        return sk;
    sk.dp_tiles = (int)(tiles - dealt);
    sk.iters = (int)(dealt * kb); /* >= grid: every range holds a k-block */
    sk.grid = (int)grid;
    sk.ws_bytes = (size_t)GS_WS_FLAG_BYTES + (size_t)grid * (size_t)block_m * BLOCK_N * sizeof(float);
    return sk;
}


int block_m_of(gs_pingpong_config_t cfg)
{
    switch (cfg) {
    case GS_PINGPONG_COOP_256x128x64: return Cfg256x128::BLOCK_M;
    case GS_PINGPONG_192x128x64: return Cfg192x128::BLOCK_M;
    default: return Cfg128x128::BLOCK_M;
    }
}

int smem_of(gs_pingpong_config_t cfg)
{
    if (cfg == GS_PINGPONG_COOP_256x128x64)
        return smem_bytes<Cfg256x128>();
    if (cfg == GS_PINGPONG_192x128x64)
        return smem_bytes<Cfg192x128>();
    return smem_bytes<Cfg128x128>() > smem_bytes<Cfg128x128Short>() ? smem_bytes<Cfg128x128>()
                                                                  : smem_bytes<Cfg128x128Short>();
}

/* ld (elements) holds the rows and its byte size stays within TMA's 40-bit
 * strides; ld_ok: usable by TMA, a 16-byte multiple too. */
bool ld_fits(int64_t ld, int64_t rows, size_t es)
{
    return ld >= rows && ld >= 1 && (uint64_t)ld * es < (1ull << 40);
}

bool ld_ok(int64_t ld, int64_t rows, size_t es)
{
    return ld_fits(ld, rows, es) && ((uint64_t)ld * es) % 16 == 0;
}

/* The same for a batch stride. */
bool bstride_fits(int64_t s, size_t es)
{
    return s > 0 && (uint64_t)s * es < (1ull << 40);
}

bool bstride_ok(int64_t s, size_t es)
{
    return bstride_fits(s, es) && ((uint64_t)s * es) % 16 == 0;
}

/* C that TMA cannot store (its base, ldc or batch stride not a multiple of
 * 16 bytes: an odd vocabulary's logits, 50257 columns): every tile is then
 * stored with the ragged tile's plain predicated stores (C_DIRECT), whole
 * tiles only (no stream-K plan; can_implement refuses the shapes that would
 * split K), and C is never read (a host beta of zero). */
bool c_direct(const gs_class_t *p)
{
    const size_t oes = gs_dtype_size((gs_dtype_t)p->c_type);
    return p->align_c < 16 || ((uint64_t)p->ldc * oes) % 16 != 0
           || (p->batch > 1 && ((uint64_t)p->stride_c * oes) % 16 != 0);
}

/* ---- a call's plan (gs_plan_t.data) ----
 * What gs_pingpong_run_plan launches: the kernel arrangement, the split-K
 * or stream-K plan and the grid, decided once by pp_plan_of (the family's
 * plan). The launch reads it and decides none of these again. */
enum PpVariant : int32_t {
    PP_V128 = 0,       /* Cfg128x128 */
    PP_V128_SHORT = 1, /* Cfg128x128Short: k <= SHORT_K_MAX_KBLOCKS k-blocks */
    PP_V256 = 2,       /* Cfg256x128, cooperative */
    PP_V192 = 3,       /* Cfg192x128 */
};
constexpr uint32_t PP_PLAN_TAG = 0x50504c31u; /* "PPL1": a plan pp_plan_of made */

struct PpPlan {
    uint32_t tag;
    int32_t config;      /* gs_pingpong_config_t */
    int32_t variant;     /* PpVariant */
    int32_t splits;      /* split-K units per tile; 1: no split */
    int32_t sk_dp_tiles; /* stream-K: tiles dealt whole, */
    int32_t sk_iters;    /* and k-blocks dealt out (0: no stream-K) */
    int32_t grid;        /* CTAs: units of a split, else the persistent grid */
    int32_t pad_;
    uint64_t ws_bytes;   /* workspace, flag bytes included (0: none) */
};
static_assert(sizeof(PpPlan) <= GS_PLAN_DATA_MAX, "the plan fits gs_plan_t.data");

PpPlan pp_plan_of(const gs_class_t *p, const gs_device_t *d, gs_pingpong_config_t cfg)
{
    PpPlan pl = {};
    pl.tag = PP_PLAN_TAG;
    pl.config = (int32_t)cfg;
    pl.variant = cfg == GS_PINGPONG_COOP_256x128x64   ? PP_V256
                 : cfg == GS_PINGPONG_192x128x64      ? PP_V192
                 : k_blocks_of(p->k) <= SHORT_K_MAX_KBLOCKS ? PP_V128_SHORT
                                                            : PP_V128;
    const int bm = block_m_of(cfg);
    if (c_direct(p)) { /* never split (can_implement) */
        pl.splits = 1;
        pl.grid = grid_of(p, d, bm);
        return pl;
    }
    const SplitPlan sp = plan_split(p, d, bm);
    pl.splits = sp.splits;
    if (sp.splits > 1) {
        pl.grid = (int32_t)((int64_t)sp.tiles * sp.splits);
        pl.ws_bytes = sp.ws_bytes;
        return pl;
    }
    const SkPlan sk = plan_sk(p, d, bm);
    if (sk.iters > 0) {
        pl.sk_dp_tiles = sk.dp_tiles;
        pl.sk_iters = sk.iters;
        pl.grid = sk.grid;
        pl.ws_bytes = sk.ws_bytes;
        return pl;
    }
    pl.grid = grid_of(p, d, bm);
    return pl;
}

[[maybe_unused]] bool same_plan(const PpPlan &a, const PpPlan &b)
{
    return a.tag == b.tag && a.config == b.config && a.variant == b.variant && a.splits == b.splits
           && a.sk_dp_tiles == b.sk_dp_tiles && a.sk_iters == b.sk_iters && a.grid == b.grid
           && a.ws_bytes == b.ws_bytes;
}

} // namespace

#endif /* GS_PINGPONG_PLAN_CUH */
