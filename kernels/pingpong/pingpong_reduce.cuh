/* The pingpong family's split-K and stream-K epilogues: partial tiles
 * through the workspace, reduced in a fixed order (bitwise reproducible),
 * alpha, beta and the bias applied once. */
#ifndef GS_PINGPONG_REDUCE_CUH
#define GS_PINGPONG_REDUCE_CUH

#include "pingpong_epilogue.cuh"

namespace {

/* ---------------------------------------------------------------------------
 * Split-K epilogue (deterministic). Every unit of a tile stores its fp32
 * partial tile in its own workspace slot, then arrives on the tile's
 * semaphore and waits until all `splits` units of the tile have arrived
 * (they are all resident: one unit per CTA, cooperative launch). Then unit s
 * reduces the s-th slice of the tile: each element is the sum of slots
 * 0, 1, ..., splits-1 in that order, whatever the arrival order, so results
 * are bitwise reproducible; alpha, beta and the bias are applied once, by the
 * slice's owner, and C is read only when beta != 0.
 * Why every unit reduces a slice rather than the last to arrive reducing the
 * whole tile: at 256x256x65536 a tile has 33 units, and one SM reading
 * 33 x 64 KB out of L2 would take longer than the whole main loop.
 * The semaphore counts to 2 * splits (arrival, then "past the wait"); the
 * unit that brings it there resets it to zero for the next call.
 *
 * Slot layout: "fragment order", float4 q = (h * ACC/4 + j) * THREADS + tid
 * holds accumulators 4j..4j+3 of M block h of thread tid, so each store
 * instruction of a warp writes 512 contiguous bytes (C's own [n][m] order
 * wrote 8-byte pieces on 8 rows per instruction). The slice reduction copies
 * its S pieces into the (then idle) stage ring with S bulk copies on one
 * mbarrier, so all of them are in flight at once, and sums them from shared
 * memory. H200, 256x256x65536 on 128x128 tiles (33 units per tile): main
 * loop alone 21.5 us, the whole call 28.3 us; the ~7 us left are this
 * epilogue's store, wait and re-read of 8.6 MB of partial tiles through L2.
 * Pre-reducing inside 8-CTA clusters through distributed shared memory was
 * tried and was slower (35.7 us; see bench/notes-pp.md).
 * ------------------------------------------------------------------------- */
template <typename TOut>
__device__ __forceinline__ void store_pair(TOut *dst, float v0, float v1, bool both)
{
    if (both) {
        if constexpr (sizeof(TOut) == 4)
            *reinterpret_cast<float2 *>(dst) = make_float2(v0, v1);
        else
            *reinterpret_cast<uint32_t *>(dst) = pack2(v0, v1, (TOut *)nullptr);
    } else {
        dst[0] = TOut(v0);
    }
}

template <typename TOut>
__device__ __forceinline__ float2 load_pair(const TOut *src, bool both)
{
    if (both) {
        if constexpr (sizeof(TOut) == 4)
            return *reinterpret_cast<const float2 *>(src);
        else
            return unpack2(*reinterpret_cast<const uint32_t *>(src), (TOut *)nullptr);
    }
    return make_float2((float)src[0], 0.0f);
}

/* Arrive on the tile's semaphore and wait for all S units of the tile
 * (one thread per unit). */
__device__ __forceinline__ void split_meet(int *sem, int S)
{
    red_add_release_gpu(sem, 1);
    while (ld_acquire_gpu(sem) < S) {
    }
    if (atom_add_relaxed_gpu(sem, 1) == 2 * S - 1)
        st_relaxed_gpu(sem, 0); /* every unit is past its wait */
}

/* A partial tile into a workspace slot in fragment order: thread tid's
 * float4 (h, j) at (h * F4 + j) * THREADS + tid, so each warp store is 512
 * contiguous bytes; readers index it the same way (split-K, stream-K). */
template <typename Cfg, int THREADS>
__device__ __forceinline__ void store_partial(const float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                              float4 *slot, int tid)
{
    constexpr int F4 = Cfg::ACC / 4;
#pragma unroll
    for (int h = 0; h < Cfg::HALVES_PER_CONSUMER; ++h)
#pragma unroll
        for (int j = 0; j < F4; ++j)
            slot[(h * F4 + j) * THREADS + tid] =
                make_float4(acc[h][4 * j], acc[h][4 * j + 1], acc[h][4 * j + 2], acc[h][4 * j + 3]);
}

template <typename Cfg, typename TOut>
__device__ __forceinline__ void split_epilogue(float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                               const Params &p, const Unit &u, const TileCoord &tc,
                                               int c, int wg_tid, float alpha, float beta,
                                               uint8_t *ring, uint64_t *red_full, uint32_t &red_phase,
                                               int warp, const CUtensorMap *tmap_c,
                                               uint8_t (*bufs)[SUB_BYTES], uint64_t *c_full,
                                               EpiState &epi)
{
    constexpr bool COOP = Cfg::COOPERATIVE;
    constexpr int TILE_ELEMS = Cfg::BLOCK_M * BLOCK_N;
    constexpr int TILE_VECS = TILE_ELEMS / 4;
    constexpr int THREADS = (COOP ? NUM_CONSUMERS : 1) * WARPGROUP_THREADS;
    constexpr int HPC = Cfg::HALVES_PER_CONSUMER;
    constexpr int F4 = Cfg::ACC / 4; /* float4 per thread per M block */
    static_assert(HPC * F4 * THREADS == TILE_VECS, "fragment order covers the tile");
    static_assert(TILE_ELEMS * 4 + 16 * SPLIT_MAX_SLOTS <= Cfg::STAGES * (int)sizeof(typename SharedStorage<Cfg>::Stage),
                  "the slices to reduce fit in the stage ring");
    const int tid = COOP ? c * WARPGROUP_THREADS + wg_tid : wg_tid;
    const uint32_t bar = COOP ? BAR_SPLIT0 : BAR_SPLIT0 + c;
    const int S = p.splits;

    /* 1. This unit's partial tile, in fragment order. */
    float4 *tile_slots = reinterpret_cast<float4 *>(p.partials) + (size_t)u.t * S * TILE_VECS;
    store_partial<Cfg, THREADS>(acc, tile_slots + (size_t)u.s * TILE_VECS, tid);

    /* Whole sub-tiles per slice (few units per tile: HJ / S float4 columns
     * of every thread, a multiple of a sub-tile's JPC): the slice's sums are
     * this thread's own accumulator registers, summed straight from L2 in
     * slot order, and stored by the unsplit epilogue (staged, TMA stores,
     * every mode) for those sub-tiles only. Same sums, same rounding as the
     * ring path below, without its bulk copies and scattered 4-byte stores
     * (H200, 1024^2 x 32768 on 4 coop units per tile: the ring path's land
     * + reduce + store took 5.3 us, bench/NOTES.md). */
    constexpr int HJ = HPC * F4;
    constexpr int JPC = SW128_ROW / (int)sizeof(TOut) / 8;
    if (HJ % S == 0 && (HJ / S) % JPC == 0) {
        named_barrier_sync(bar, THREADS);
        if (tid == 0)
            split_meet(p.counters + u.t, S);
        named_barrier_sync(bar, THREADS); /* every thread after the acquire */
        const int hj0 = u.s * (HJ / S), hj1 = hj0 + HJ / S;
        /* Sub-tile by sub-tile behind a uniform branch, so at most JPC loads
         * are live at once (predicated loads over all HJ columns made ptxas
         * keep them all in registers and spill). */
        for (int r = 0; r < S; ++r) {
            const float4 *src = tile_slots + (size_t)r * TILE_VECS + tid;
#pragma unroll
            for (int cb = 0; cb < HJ / JPC; ++cb) {
                if (cb * JPC < hj0 || cb * JPC >= hj1)
                    continue;
                float4 x[JPC];
#pragma unroll
                for (int jl = 0; jl < JPC; ++jl)
                    x[jl] = __ldcg(src + (cb * JPC + jl) * THREADS); /* L2: other SMs wrote it */
#pragma unroll
                for (int jl = 0; jl < JPC; ++jl) {
                    const int h = (cb * JPC + jl) / F4, j = (cb * JPC + jl) % F4;
                    float *a = &acc[h][4 * j];
                    if (r == 0) {
                        a[0] = x[jl].x; a[1] = x[jl].y; a[2] = x[jl].z; a[3] = x[jl].w;
                    } else {
                        a[0] += x[jl].x; a[1] += x[jl].y; a[2] += x[jl].z; a[3] += x[jl].w;
                    }
                }
            }
        }
        const uint32_t mask = ((1u << ((hj1 - hj0) / JPC)) - 1u) << (hj0 / JPC);
        store_tile_any<Cfg, TOut, true>(acc, p, tc, c, warp, tmap_c, bufs, c_full, epi, alpha,
                                        beta, mask);
        return;
    }

    /* 2. Arrive; wait for the tile's other units; fetch slice s of every slot. */
    const int v0 = (int)((long long)u.s * TILE_VECS / S);
    const int v1 = (int)((long long)(u.s + 1) * TILE_VECS / S);
    const int slice_max = (TILE_VECS + S - 1) / S; /* float4 per slot in the ring */
    named_barrier_sync(bar, THREADS);
    if (tid == 0) {
        split_meet(p.counters + u.t, S);
        fence_proxy_async_global(); /* the other units' stores, now visible, to the bulk copies */
        const uint32_t bytes = (uint32_t)(v1 - v0) * 16u;
        mbarrier_arrive_expect_tx(red_full, bytes * (uint32_t)S);
        for (int r = 0; r < S; ++r)
            bulk_load_g2s(ring + (size_t)r * slice_max * 16, tile_slots + (size_t)r * TILE_VECS + v0,
                          bytes, red_full);
    }
    mbarrier_wait_parity(red_full, red_phase);
    red_phase ^= 1u;

    /* 3. Sum in slot order; alpha, beta, bias; store. */
    const float4 *buf = reinterpret_cast<const float4 *>(ring);
    TOut *cb = static_cast<TOut *>(p.c) + (long long)tc.b * p.stride_c;
    for (int v = v0 + tid; v < v1; v += THREADS) {
        float4 sum = buf[v - v0];
        for (int r = 1; r < S; ++r) {
            const float4 x = buf[(size_t)r * slice_max + (v - v0)];
            sum.x += x.x;
            sum.y += x.y;
            sum.z += x.z;
            sum.w += x.w;
        }
        /* Whose accumulators these are (the inverse of the fragment order). */
        const int hj = v / THREADS, vt = v - hj * THREADS;
        const int h = hj / F4, j = hj - h * F4;
        const int vc = vt / WARPGROUP_THREADS, vw = (vt % WARPGROUP_THREADS) / 32, vl = vt % 32;
        const int gn = tc.n0 + (COOP ? vc : h) * WGMMA_M + vw * 16 + vl / 4;
        const int gm = tc.m0 + 8 * j + 2 * (vl % 4);
        if (gm >= p.m)
            continue;
        const bool both = gm + 1 < p.m;
        float b0 = 0.0f, b1 = 0.0f;
        if (p.bias_kind != BIAS_NONE) {
            b0 = load_bias(p, gm);
            b1 = both ? load_bias(p, gm + 1) : 0.0f;
        }
        const float vals[2][2] = {{sum.x, sum.y}, {sum.z, sum.w}}; /* rows gn, gn + 8 */
#pragma unroll
        for (int q = 0; q < 2; ++q) {
            const int n = gn + 8 * q;
            if (n >= p.n)
                continue;
            TOut *dst = cb + (long long)n * p.ldc + gm;
            float o0 = vals[q][0] * alpha, o1 = vals[q][1] * alpha;
            if (beta != 0.0f) {
                const float2 cv = load_pair<TOut>(dst, both);
                o0 = fmaf(beta, cv.x, o0);
                o1 = fmaf(beta, cv.y, o1);
            }
            store_pair<TOut>(dst, o0 + b0, o1 + b1, both);
        }
    }
    /* The ring is the producer's again only for a next unit, which split-K
     * never gives a CTA (one unit per CTA); keep the slices' readers ahead of
     * any later use regardless. */
    named_barrier_sync(bar, THREADS);
}

/* Stream-K (see sk_unit): a piece that does not start its tile stores its
 * partial tile, in the split epilogue's fragment order, in this CTA's slot
 * and raises the CTA's flag (release, after every thread's stores: the
 * barrier, then one thread's release at gpu scope); a head piece waits for
 * the flags of the CTAs holding the rest of its tile (acquire), clears them
 * for the next call, and adds their partials to its accumulators in CTA
 * order. Both consumer warpgroups hold the tile (cooperative), so they meet
 * on BAR_SPLIT0. */
template <typename Cfg>
__device__ __forceinline__ void sk_tail_store(const float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                              const Params &p, int c, int wg_tid)
{
    constexpr int THREADS = NUM_CONSUMERS * WARPGROUP_THREADS;
    const int tid = c * WARPGROUP_THREADS + wg_tid;
    store_partial<Cfg, THREADS>(acc, reinterpret_cast<float4 *>(p.partials)
                                         + (size_t)blockIdx.x * (Cfg::BLOCK_M * BLOCK_N / 4),
                                tid);
    named_barrier_sync(BAR_SPLIT0, THREADS);
    if (tid == 0)
        red_add_release_gpu(p.counters + blockIdx.x, 1);
}

/* u: the head piece. The CTAs after this one whose ranges start before the
 * tile's end hold the rest of it. */
template <typename Cfg>
__device__ __forceinline__ void sk_head_add(float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                            const Params &p, const Unit &u, int c, int wg_tid)
{
    constexpr int THREADS = NUM_CONSUMERS * WARPGROUP_THREADS;
    constexpr int F4 = Cfg::ACC / 4;
    const int tid = c * WARPGROUP_THREADS + wg_tid;
    const long long tile_end = (long long)(u.t - p.sk_dp_tiles + 1) * p.k_blocks;
    int last = (int)blockIdx.x + 1; /* one past the last CTA holding a piece */
    while (last < (int)gridDim.x && (long long)last * p.sk_iters / gridDim.x < tile_end)
        ++last;
    if (tid == 0)
        for (int from = (int)blockIdx.x + 1; from < last; ++from) {
            while (ld_acquire_gpu(p.counters + from) == 0) {
            }
            st_relaxed_gpu(p.counters + from, 0); /* zero again for the next call */
        }
    named_barrier_sync(BAR_SPLIT0, THREADS); /* every thread after the acquires */
    for (int from = (int)blockIdx.x + 1; from < last; ++from) {
        const float4 *slot = reinterpret_cast<const float4 *>(p.partials)
                             + (size_t)from * (Cfg::BLOCK_M * BLOCK_N / 4) + tid;
#pragma unroll
        for (int h = 0; h < Cfg::HALVES_PER_CONSUMER; ++h)
#pragma unroll
            for (int j = 0; j < F4; ++j) {
                const float4 x = __ldcg(slot + (h * F4 + j) * THREADS); /* L2: another SM wrote it */
                acc[h][4 * j] += x.x;
                acc[h][4 * j + 1] += x.y;
                acc[h][4 * j + 2] += x.z;
                acc[h][4 * j + 3] += x.w;
            }
    }
}

} // namespace

#endif /* GS_PINGPONG_REDUCE_CUH */
