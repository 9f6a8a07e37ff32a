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

} // namespace

/* Developer A/B switches and test knobs, GEMMSHIM_DEV_PINGPONG_* (README),
 * set once by the family before its first call (kernels/pingpong/pingpong_family.c,
 * gs_pingpong_set_knobs); the defaults (pingpong_sm90.cu) otherwise:
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
 *           (tests: small grids).
 * Outside the anonymous namespace: the family's translation units
 * (pingpong_sm90.cu, which defines the values, and each pingpong_instance.cu
 * build) read one set. */
namespace gs_pp {
struct pp_knobs {
    int group, defer, max_ctas, sk;
};
extern pp_knobs pp_knob_values;
} // namespace gs_pp

namespace {

using gs_pp::pp_knobs;
const pp_knobs &pp_env()
{
    return gs_pp::pp_knob_values;
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

/* ---- packed operands (gs_pack.h) ----
 * An operand TMA cannot load (its base, ld or batch stride not a multiple
 * of 16 bytes: the logits gradient of an odd vocabulary, ld = 50257, read by
 * the two backward GEMMs) is copied into the workspace with a padded ld,
 * a chunk at a time along its dimension other than k (m for A, n for B), and
 * each chunk is a GEMM of its own on the rows or columns of C it makes.
 * Chunks are whole tiles along that dimension (the last one ragged), as
 * many as keep a chunk's copy within PACK_CHUNK_BYTES and, with the
 * chunk's split-K partials, the default 64 MiB workspace cap. Unbatched
 * calls only, one packed operand; several chunks need a host beta of zero,
 * so that a launch failing after the first chunk leaves C for cuBLAS to
 * write whole. */
constexpr size_t PACK_CHUNK_BYTES = (size_t)48 << 20;
/* ... and with the chunk's own scratch at most the default workspace cap
 * (GEMMSHIM_WORKSPACE_MB): the cooperative tile's split-K or stream-K
 * partials take up to 17 MB on 132 SMs */
constexpr size_t PACK_WORKSPACE_BYTES = (size_t)64 << 20;
/* chunk widths tried, from the widest down */
constexpr int64_t PACK_WIDTHS_TRIED = 64;
/* a chunk one tile wide may need more (a very deep k); refused beyond this */
constexpr size_t PACK_MAX_BYTES = (size_t)1 << 30;

enum PackOperand : int32_t { PACK_NONE = 0, PACK_A = 1, PACK_B = 2, PACK_BOTH = 3 };

/* Which operands TMA cannot load as they are. */
int32_t pack_operand_of(const gs_class_t *p)
{
    const size_t es = gs_dtype_size((gs_dtype_t)p->a_type);
    const bool a = p->align_a < 16 || !ld_ok(p->lda, p->trans_a == GS_OP_N ? p->m : p->k, es)
                   || (p->batch > 1 && !bstride_ok(p->stride_a, es));
    const bool b = p->align_b < 16 || !ld_ok(p->ldb, p->trans_b == GS_OP_N ? p->k : p->n, es)
                   || (p->batch > 1 && !bstride_ok(p->stride_b, es));
    return (a ? PACK_A : 0) | (b ? PACK_B : 0);
}

struct PackGeom {
    int32_t operand;   /* PACK_A or PACK_B */
    int32_t chunks;
    int64_t chunk;     /* its m (A) or n (B) per chunk, the last one ragged */
    int64_t last;      /* the last chunk's */
    int64_t ld;        /* the packed copy's leading dimension */
    bool contiguous;   /* the chunked dimension is the stored one's contiguous one */
    size_t bytes;      /* the copy of one chunk */
};

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/* Waves of the persistent grid that `tiles` output tiles take on d, where
 * a chunk of few tiles counts the share of the SMs its split-K fills. */
double chunk_waves(int64_t tiles, const gs_device_t *d)
{
    const int64_t sms = d->sm_count > 0 ? d->sm_count : 1;
    return tiles * 2 <= sms ? (double)tiles / (double)sms : (double)((tiles + sms - 1) / sms);
}

/* A chunk is `segments` runs of `len` elements in the operand's memory:
 * contiguous (A stored m x k, or B stored n x k): k runs of the chunk's
 * length; otherwise the chunk's length of runs of k. Its width, in tiles
 * along the chunked dimension, is the one of up to PACK_CHUNK_BYTES (and at
 * least half that many tiles, so the chunks stay few; PACK_WIDTHS_TRIED
 * widths at most) whose chunks take the fewest waves of the grid: 1024 x 50257 x 8192 (NT) on 128x128 tiles and
 * 132 SMs runs 25 chunks of 16 tiles in one wave each rather than 17 of
 * 24 tiles in two. */
PackGeom pack_geom_of(const gs_class_t *p, int32_t operand, int block_m, const gs_device_t *d)
{
    PackGeom g = {};
    g.operand = operand;
    const bool on_a = operand == PACK_A;
    const int64_t dim = on_a ? p->m : p->n, unit = on_a ? block_m : BLOCK_N;
    const int64_t across = on_a ? (p->n + BLOCK_N - 1) / BLOCK_N : (p->m + block_m - 1) / block_m;
    g.contiguous = on_a ? p->trans_a == GS_OP_N : p->trans_b == GS_OP_T;
    const int64_t kpad = round_up(p->k, 8);
    const uint64_t per_elem = (uint64_t)(g.contiguous ? p->k : kpad) * 2;
    const int64_t units = (dim + unit - 1) / unit;
    /* the chunk's split-K / stream-K scratch: one partial tile per CTA at most */
    const size_t inner = (size_t)GS_WS_FLAG_BYTES + 256
                         + (size_t)(d->sm_count > 0 ? d->sm_count : 1) * (size_t)block_m * BLOCK_N * sizeof(float);
    const size_t budget = PACK_CHUNK_BYTES + inner <= PACK_WORKSPACE_BYTES ? PACK_CHUNK_BYTES
                          : inner < PACK_WORKSPACE_BYTES                   ? PACK_WORKSPACE_BYTES - inner
                                                                           : 0;
    int64_t most = (int64_t)(budget / (per_elem * (uint64_t)unit));
    if (most < 1)
        most = 1;
    if (units <= most) {
        g.chunk = dim;
    } else {
        int64_t best = most;
        double best_waves = -1;
        for (int64_t u = most; u >= 1 && u * 2 >= most && most - u < PACK_WIDTHS_TRIED; --u) {
            const int64_t c = (units + u - 1) / u, last = units - (c - 1) * u;
            const double w = (double)(c - 1) * chunk_waves(u * across, d) + chunk_waves(last * across, d);
            if (best_waves < 0 || w < best_waves - 1e-9) {
                best = u;
                best_waves = w;
            }
        }
        g.chunk = best * unit;
    }
    g.chunks = (int32_t)((dim + g.chunk - 1) / g.chunk);
    g.last = dim - (int64_t)(g.chunks - 1) * g.chunk;
    g.ld = g.contiguous ? round_up(g.chunk, 8) : kpad;
    g.bytes = (size_t)(g.contiguous ? p->k : g.chunk) * (size_t)g.ld * 2;
    return g;
}

/* The class of a chunk of `len`: the packed operand 256-byte aligned with
 * the padded ld. A chunk starts a whole number of tiles (>= 128 elements)
 * in, so C and the bias keep at least the 16-byte alignment can_implement
 * asks of them (the 192-row tile's chunks of A start 384 bytes apart). */
gs_class_t chunk_class(const gs_class_t *p, const PackGeom &g, int64_t len)
{
    gs_class_t c = *p;
    if (g.operand == PACK_A) {
        c.m = len;
        c.lda = g.ld;
        c.align_a = 256;
    } else {
        c.n = len;
        c.ldb = g.ld;
        c.align_b = 256;
    }
    return c;
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

} // namespace

/* Outside the anonymous namespace: the plan crosses from the family's API
 * translation unit to the instance that launches it (pingpong_instances.h). */
namespace gs_pp {
struct PpPlan {
    uint32_t tag;
    int32_t config;      /* gs_pingpong_config_t */
    int32_t variant;     /* PpVariant */
    int32_t splits;      /* split-K units per tile; 1: no split */
    int32_t sk_dp_tiles; /* stream-K: tiles dealt whole, */
    int32_t sk_iters;    /* and k-blocks dealt out (0: no stream-K) */
    int32_t grid;        /* CTAs: units of a split, else the persistent grid */
    int32_t pack;        /* PackOperand: PACK_NONE, or the packed operand; then */
    uint64_t ws_bytes;   /* workspace, flag bytes included (0: none) */
    /* with a packed operand: the fields above are the plan of every chunk
     * but the last, whose own are here; the workspace holds the chunks'
     * split-K / stream-K scratch, then from pack_offset the packed copy */
    int32_t pack_chunks;
    int32_t last_splits, last_sk_dp_tiles, last_sk_iters, last_grid;
    int32_t pad_;
    int64_t pack_chunk, pack_last, pack_ld;
    uint64_t pack_offset;
};
} // namespace gs_pp

namespace {

using gs_pp::PpPlan;
static_assert(sizeof(PpPlan) <= GS_PLAN_DATA_MAX, "the plan fits gs_plan_t.data");

PpPlan pp_plan_of(const gs_class_t *p, const gs_device_t *d, gs_pingpong_config_t cfg);

/* A packed call's plan: each chunk's plan (the operand packed, so planned
 * as any other call), and the workspace for both. The copy starts past the
 * flag bytes, which must stay zero for the next split-K call. */
PpPlan pp_packed_plan_of(const gs_class_t *p, const gs_device_t *d, gs_pingpong_config_t cfg,
                         int32_t operand)
{
    const PackGeom g = pack_geom_of(p, operand, block_m_of(cfg), d);
    const gs_class_t full = chunk_class(p, g, g.chunk), last = chunk_class(p, g, g.last);
    PpPlan pl = pp_plan_of(&full, d, cfg);
    const PpPlan lp = pp_plan_of(&last, d, cfg);
    pl.pack = operand;
    pl.pack_chunks = g.chunks;
    pl.last_splits = lp.splits;
    pl.last_sk_dp_tiles = lp.sk_dp_tiles;
    pl.last_sk_iters = lp.sk_iters;
    pl.last_grid = lp.grid;
    pl.pack_chunk = g.chunk;
    pl.pack_last = g.last;
    pl.pack_ld = g.ld;
    uint64_t inner = pl.ws_bytes > lp.ws_bytes ? pl.ws_bytes : lp.ws_bytes;
    if (inner < GS_WS_FLAG_BYTES)
        inner = GS_WS_FLAG_BYTES;
    pl.pack_offset = (uint64_t)round_up((int64_t)inner, 256);
    pl.ws_bytes = pl.pack_offset + g.bytes;
    return pl;
}

PpPlan pp_plan_of(const gs_class_t *p, const gs_device_t *d, gs_pingpong_config_t cfg)
{
    if (const int32_t operand = pack_operand_of(p))
        return pp_packed_plan_of(p, d, cfg, operand);
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
           && a.ws_bytes == b.ws_bytes && a.pack == b.pack && a.pack_chunks == b.pack_chunks
           && a.last_splits == b.last_splits && a.last_sk_dp_tiles == b.last_sk_dp_tiles
           && a.last_sk_iters == b.last_sk_iters && a.last_grid == b.last_grid
           && a.pack_chunk == b.pack_chunk && a.pack_last == b.pack_last && a.pack_ld == b.pack_ld
           && a.pack_offset == b.pack_offset;
}

} // namespace

#endif /* GS_PINGPONG_PLAN_CUH */
