/* The pingpong family's tile scheduler, device side: which tile and k-block
 * range each unit of work is (whole tiles, split-K units, stream-K pieces),
 * the persistent CTA's walk over them, the stage ring's positions and the
 * grouped raster. The host side of the same plans: pingpong_plan.cuh. */
#ifndef GS_PINGPONG_SCHEDULER_CUH
#define GS_PINGPONG_SCHEDULER_CUH

#include "pingpong_config.cuh"

namespace {

/* Which tile a unit of work is and its k-block range. Without split-K a unit
 * is a whole tile. */
struct Unit {
    int t, s, kb0, kb1;
};

template <bool SPLIT>
__device__ __forceinline__ Unit unit_of(const Params &p, int w)
{
    Unit u;
    if (SPLIT) {
        u.s = w / p.total_tiles;
        u.t = w - u.s * p.total_tiles;
        u.kb0 = (int)((long long)u.s * p.k_blocks / p.splits);
        u.kb1 = (int)((long long)(u.s + 1) * p.k_blocks / p.splits);
    } else {
        u.t = w;
        u.s = 0;
        u.kb0 = 0;
        u.kb1 = p.k_blocks;
    }
    return u;
}

/* Stream-K (the cooperative tile; plan_sk): a persistent grid of P CTAs
 * over T = w * P + r tiles leaves the last wave ragged (r of P SMs busy;
 * 4096x2304 on 256x128 tiles: 288 tiles, 3 wave times for 2.18 waves of
 * work). So the first sk_dp_tiles tiles run whole, round robin as without
 * it (a multiple of P: every CTA the same number), and the k-blocks of the
 * other S tiles, in (tile, k-block) order, are cut into P equal ranges, CTA
 * b taking range b: every CTA ends at the same k-block count. plan_sk deals
 * out only the r ragged tiles (S = r) where a range is long enough, else
 * the last whole wave too (S = P + r, a range at least a tile long): the
 * fewer tiles are dealt out, the fewer CTAs stream the same operands at
 * different k offsets, which the L2 does not absorb (bench/NOTES.md,
 * S = P + r over K = 14336 ran at 0.62 of whole tiles).
 * A range is at most a tile's tail (its first piece), whole tiles, and a
 * tile's head (k-block 0 on, its last piece); a range shorter than a tile
 * may be a single middle piece. A piece that does not start a tile is the
 * CTA's first: its CTA stores the fp32 partial in its own slot and raises
 * its flag. The head's CTA waits for the flags of the CTAs after it whose
 * ranges start inside the tile, adds their partials to its accumulators in
 * CTA order (bitwise reproducible: the cut is fixed by the problem and the
 * grid) and stores the tile as usual. No deadlock: a CTA waits only at its
 * last piece, for pieces that other CTAs make first, before any wait of
 * theirs; all CTAs are resident (cooperative launch, one per SM). j: the
 * CTA's j-th unit; false past the last. */
__device__ __forceinline__ bool sk_unit(const Params &p, int j, Unit &u)
{
    const int dp = p.sk_dp_tiles / (int)gridDim.x;
    u.s = 0;
    if (j < dp) {
        u.t = (int)blockIdx.x + j * (int)gridDim.x;
        u.kb0 = 0;
        u.kb1 = p.k_blocks;
        return true;
    }
    const long long kb = p.k_blocks;
    const long long end = (long long)(blockIdx.x + 1) * p.sk_iters / gridDim.x;
    long long pos = (long long)blockIdx.x * p.sk_iters / gridDim.x;
    for (int i = dp; i < j; ++i) /* the start of the range's next tile */
        pos = (pos / kb + 1) * kb;
    if (pos >= end)
        return false;
    const long long tl = pos / kb;
    u.t = p.sk_dp_tiles + (int)tl;
    u.kb0 = (int)(pos - tl * kb);
    u.kb1 = (int)((end < (tl + 1) * kb ? end : (tl + 1) * kb) - tl * kb);
    return true;
}

/* The CTA's unit w (its j-th): stream-K's, split-K's or a whole tile;
 * false past the CTA's last stream-K unit. */
template <bool SPLIT, bool SK>
__device__ __forceinline__ bool unit_at(const Params &p, int w, int j, Unit &u)
{
    if constexpr (SK)
        return sk_unit(p, j, u);
    u = unit_of<SPLIT>(p, w);
    return true;
}

__device__ __forceinline__ float load_bias(const Params &p, int i)
{
    switch (p.bias_kind) {
    case BIAS_F32: return static_cast<const float *>(p.bias)[i];
    case BIAS_F16: return __half2float(static_cast<const __half *>(p.bias)[i]);
    case BIAS_BF16: return __bfloat162float(static_cast<const __nv_bfloat16 *>(p.bias)[i]);
    default: return 0.0f;
    }
}

/* The L2 policy of the call's C stores (C_EVICT_FIRST). */
__device__ __forceinline__ uint64_t c_store_policy(const Params &p)
{
    return (p.c_flags & C_EVICT_FIRST) ? createpolicy_evict_first() : createpolicy_evict_normal();
}

/* Ring position `it` counts k-blocks issued by this CTA across its tiles. */
template <int STAGES>
__device__ __forceinline__ int ring_stage(uint32_t it) { return (int)(it % STAGES); }

/* mbarrier phase parity of that use: flips every time the ring wraps. */
template <int STAGES>
__device__ __forceinline__ uint32_t ring_phase(uint32_t it) { return (it / STAGES) & 1u; }

struct TileCoord {
    int m0, n0, b;
};

/* Grouped raster: GROUP_M tile rows (along m) are walked together down n, so
 * the tiles in flight across the grid share A strips and B strips in L2.
 * Unsigned divisions: every operand is non-negative, and a signed division
 * costs a sign fix-up on top (this sits at the head of every epilogue). */
template <typename Cfg>
__device__ __forceinline__ TileCoord tile_coord(const Params &p, int t)
{
    const unsigned per_batch = (unsigned)(p.tiles_m * p.tiles_n);
    const unsigned b = (unsigned)t / per_batch;
    const unsigned r = (unsigned)t - b * per_batch;
    const unsigned span = (unsigned)(p.group_m * p.tiles_n);
    const unsigned g = r / span;
    const unsigned first_m = g * (unsigned)p.group_m;
    const unsigned rows = min((unsigned)p.tiles_m - first_m, (unsigned)p.group_m);
    const unsigned rr = r - g * span;
    const unsigned col = rr / rows;
    TileCoord tc;
    tc.m0 = (int)((first_m + (rr - col * rows)) * Cfg::BLOCK_M);
    tc.n0 = (int)(col * BLOCK_N);
    tc.b = (int)b;
    return tc;
}

} // namespace

#endif /* GS_PINGPONG_SCHEDULER_CUH */
