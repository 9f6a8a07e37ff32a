/* The pingpong family's epilogue of unsplit tiles: per-warp sub-tiles
 * staged in shared memory and stored by TMA (or predicated stores for a
 * ragged m), one unrolled copy per EpiMode, and the cooperative tile's
 * deferred stores. The split-K / stream-K reductions: pingpong_reduce.cuh. */
#ifndef GS_PINGPONG_EPILOGUE_CUH
#define GS_PINGPONG_EPILOGUE_CUH

#include "pingpong_mainloop.cuh"
#include "pingpong_timeline.cuh"

#include <type_traits>

namespace {

/* Per-warp epilogue state, kept across tiles. */
struct EpiState {
    uint32_t sub;     /* sub-tiles this warp has staged: picks the buffer */
    uint32_t c_loads; /* C sub-tile loads: c_full parity */
};

/* What the epilogue computes per element. Each mode is its own unrolled
 * copy, chosen once per tile from the call's scalars: a runtime test inside
 * the unrolled loops is if-converted into predicated instructions that issue
 * whatever the predicate. (H200, ncu at k = 64: with one copy, a beta == 0
 * tile still issued the whole C-read path, ~1400 instructions per warp and
 * tile; that, not the stores, held small k at 0.74x of cuBLAS.) */
enum EpiMode {
    EPI_COPY,  /* alpha == 1, beta == 0, no bias: convert and store */
    EPI_SCALE, /* beta == 0, no bias: alpha * acc */
    EPI_BETA,  /* beta != 0, no bias: alpha * acc + beta * C */
    /* beta == 0 with a bias of the output's type, 2-element aligned
     * (nn.Linear through cublasLt): alpha * acc + bias, a lane's two bias
     * elements one load (bias_pair). can_implement refuses any other bias
     * with a beta that may be 0 (unless C is stored directly anyway);
     * called directly, such a call takes EPI_RAGGED's copy for every tile
     * (it reads the type at run time, and stores without TMA). */
    EPI_BIAS,
    EPI_BIAS_BETA, /* beta != 0 with a bias: alpha * acc + beta * C + bias */
    /* The ragged last m tile (m_ragged, see Params), every tile of a C
     * that TMA cannot store (C_DIRECT), or of a direct call whose bias
     * EPI_BIAS does not read (can_implement refuses those): plain
     * predicated stores, beta and the bias tested at run time. Rare tiles, so one copy serves
     * every mode; and the other copies carry no "is this tile ragged" test
     * at all. (A runtime `direct` flag tested per sub-tile made ptxas keep
     * ~60 copies of it as bits of two registers, rebuilt by a chain of ~130
     * dependent instructions at the head of every epilogue: about half of
     * the ~1000-cycle run-up the clock64 stamps measured.) */
    EPI_RAGGED,
};

/* The bias of rows gm and gm + 1 (gm even), of the output's type: one
 * 4-byte (16-bit) or 8-byte (fp32) load, no type switch. Why: load_bias
 * switches on the bias type per element, which the SASS had as a bounds
 * branch and a jump table around each 2-byte load, its add waiting on it
 * (the FP8 scales had the same shape, bench/NOTES.md). gm + 1 < m whenever
 * gm < m: EPI_BIAS runs only on tiles wholly inside m (an interior tile,
 * gm + 1 < m0 + BLOCK_M <= m) or on a last tile when m * sizeof(TOut) is
 * a multiple of 16, m then even (m_ragged, pingpong_launch.cuh). */
template <typename TOut>
__device__ __forceinline__ float2 bias_pair(const Params &p, int gm)
{
    if (gm >= p.m)
        return make_float2(0.0f, 0.0f);
    if constexpr (sizeof(TOut) == 4)
        return __ldg(reinterpret_cast<const float2 *>(p.bias) + gm / 2);
    else
        return unpack2(__ldg(reinterpret_cast<const unsigned *>(p.bias) + gm / 2),
                       (TOut *)nullptr);
}

/* The bias kind of a bias of TOut's type */
template <typename TOut> constexpr int bias_kind_of()
{
    return sizeof(TOut) == 4 ? BIAS_F32 : std::is_same<TOut, __half>::value ? BIAS_F16 : BIAS_BF16;
}

/* One M block (64 rows of C^T) of a finished tile: this warp's 16 rows,
 * sub-tile by sub-tile along m. acc is the M block's accumulator (ACC fp32
 * per thread, wgmma m64nN layout: warp w holds rows 16w..16w+15; lane l holds
 * row l/4 (regs 4j, 4j+1) and row l/4 + 8 (regs 4j+2, 4j+3) at columns
 * 8j + 2(l%4) + {0,1}; rows are n, columns m). */
template <typename Cfg, typename TOut, EpiMode MODE, bool MASKED, bool BATCH>
__device__ __forceinline__ void store_m_block(float (&acc)[Cfg::ACC], const Params &p,
                                              const TileCoord &tc, int row0, int j0,
                                              const CUtensorMap *tmap_c,
                                              uint8_t (*bufs)[SUB_BYTES], uint64_t *c_full,
                                              EpiState &st, float alpha, float beta,
                                              uint64_t policy, uint32_t chunk_mask)
{
    constexpr int OUT_BYTES = (int)sizeof(TOut);
    constexpr int CHUNK_COLS = SW128_ROW / OUT_BYTES; /* m per sub-tile */
    constexpr int CHUNKS = Cfg::BLOCK_M / CHUNK_COLS;
    const int lane = lane_id();
    constexpr bool direct = MODE == EPI_RAGGED;
    static_assert(!(direct && BATCH), "the ragged tile is stored sub-tile by sub-tile");
    /* Compile-time constants except in the ragged tile's copy. */
    const bool read_c = direct ? beta != 0.0f : (MODE == EPI_BETA || MODE == EPI_BIAS_BETA);
    const bool has_bias =
        direct ? p.bias_kind != BIAS_NONE : (MODE == EPI_BIAS || MODE == EPI_BIAS_BETA);
#pragma unroll
    for (int ch = 0; ch < CHUNKS; ++ch) {
        if constexpr (MASKED) /* a split-K slice: only its sub-tiles */
            if (!((chunk_mask >> ch) & 1u))
                continue;
        /* BATCH: the tile's sub-tile j0 + ch has a buffer of its own, free
         * (store_tile waited), and store_tile stores them all. */
        uint8_t *buf = BATCH ? bufs[j0 + ch] : bufs[st.sub % Cfg::EPI_BUFS];
        const uint32_t buf_s = smem_u32(buf);
        GS_TL_EPI_BEGIN(!MASKED && !BATCH && st.sub / 4 == 2, st.sub % 4);
        if (!BATCH)
            ++st.sub;
        const int gm0 = tc.m0 + ch * CHUNK_COLS;
        /* The buffer is free once the store issued EPI_BUFS sub-tiles ago has
         * read it (bulk groups are per thread: lane 0 issued it) and every
         * lane is past its plain accesses to it (__syncwarp). A ragged tile's
         * sub-tiles commit no bulk group, so "all but EPI_BUFS - 1 groups"
         * would no longer name the store that last read this buffer: there
         * every store must have read its buffer (bug: a coop fp32-output
         * sweep case with m = 5582 overwrote a buffer a store was reading;
         * the results differed between two identical calls). */
        if (!BATCH) {
            if (lane == 0) {
                if constexpr (direct)
                    tma_store_wait_read<0>();
                else
                    tma_store_wait_read<Cfg::EPI_BUFS - 1>();
            }
            __syncwarp();
        }
        GS_TL_EPI(1);
        if (read_c) {
            /* C is read only here: beta == 0 never touches it (it may hold NaN). */
            if (lane == 0) {
                mbarrier_arrive_expect_tx(c_full, SUB_BYTES);
                tma_load_3d(buf, tmap_c, c_full, gm0, row0, tc.b);
            }
            mbarrier_wait_parity(c_full, st.c_loads & 1u);
            ++st.c_loads;
        }
        if constexpr (MODE != EPI_COPY) {
#pragma unroll
            for (int jl = 0; jl < CHUNK_COLS / 8; ++jl) {
                const int j = ch * (CHUNK_COLS / 8) + jl;
                /* a lane's two columns (m) are the same in both rows q */
                float2 bp = make_float2(0.0f, 0.0f);
                if constexpr (MODE == EPI_BIAS)
                    bp = bias_pair<TOut>(p, gm0 + 8 * jl + 2 * (lane % 4));
#pragma unroll
                for (int q = 0; q < 2; ++q) {
                    float &v0 = acc[4 * j + 2 * q];
                    float &v1 = acc[4 * j + 2 * q + 1];
                    v0 *= alpha;
                    v1 *= alpha;
                    if (read_c) {
                        const uint32_t src = buf_s + sub_offset<OUT_BYTES>(lane / 4 + 8 * q,
                                                                            8 * jl + 2 * (lane % 4));
                        float2 cv;
                        if constexpr (OUT_BYTES == 4)
                            cv = ld_shared_v2_f32(src);
                        else
                            cv = unpack2(ld_shared_b32(src), (TOut *)nullptr);
                        v0 = fmaf(beta, cv.x, v0);
                        v1 = fmaf(beta, cv.y, v1);
                    }
                    if constexpr (MODE == EPI_BIAS) {
                        v0 += bp.x;
                        v1 += bp.y;
                    } else if (has_bias) {
                        /* Columns past m (ragged last tile) are never stored. */
                        const int gm = gm0 + 8 * jl + 2 * (lane % 4);
                        v0 += gm < p.m ? load_bias(p, gm) : 0.0f;
                        v1 += gm + 1 < p.m ? load_bias(p, gm + 1) : 0.0f;
                    }
                }
            }
        }
        /* The writes below overwrite C values other lanes read above. */
        if (read_c)
            __syncwarp();
        if constexpr (OUT_BYTES == 4) {
#pragma unroll
            for (int jl = 0; jl < CHUNK_COLS / 8; ++jl)
#pragma unroll
                for (int q = 0; q < 2; ++q) {
                    const int j = ch * (CHUNK_COLS / 8) + jl;
                    st_shared_v2_f32(buf_s + sub_offset<4>(lane / 4 + 8 * q, 8 * jl + 2 * (lane % 4)),
                                     acc[4 * j + 2 * q], acc[4 * j + 2 * q + 1]);
                }
        } else {
            /* One stmatrix.x4 stores a 16(n) x 16(m) block: matrices
             * (rows 0-7 | 8-15) x (cols 0-7 | 8-15); lanes 8i..8i+7
             * address the rows of matrix i. */
            const int mat = lane / 8;
            const int row = (lane % 8) + 8 * (mat & 1);
#pragma unroll
            for (int jl = 0; jl < CHUNK_COLS / 16; ++jl) {
                const float *a = &acc[8 * (ch * (CHUNK_COLS / 16) + jl)];
                stmatrix_x4(buf + sub_offset<OUT_BYTES>(row, 16 * jl + 8 * (mat >> 1)),
                            pack2(a[0], a[1], (TOut *)nullptr), pack2(a[2], a[3], (TOut *)nullptr),
                            pack2(a[4], a[5], (TOut *)nullptr), pack2(a[6], a[7], (TOut *)nullptr));
            }
        }
        if constexpr (BATCH)
            continue;
        GS_TL_EPI(2);
        /* Generic-proxy writes -> visible to the TMA store (async proxy). */
        fence_proxy_async_shared_cta();
        __syncwarp();
        GS_TL_EPI(3);
        if constexpr (!direct) {
            if (lane == 0) {
                tma_store_3d_hint(tmap_c, buf, gm0, row0, tc.b, policy);
                tma_store_commit_group();
            }
            GS_TL_EPI(4);
        } else {
            /* Ragged last m tile: exact, predicated stores (coalesced along m),
             * reading the staging buffer through a generic pointer: a rare
             * tile, left simple. */
            TOut *cg = static_cast<TOut *>(p.c) + (long long)tc.b * p.stride_c;
#pragma unroll 4
            for (int idx = lane; idx < EPI_ROWS * CHUNK_COLS; idx += 32) {
                const int r = idx / CHUNK_COLS, col = idx % CHUNK_COLS;
                const int gm = gm0 + col, gn = row0 + r;
                if (gm < p.m && gn < p.n)
                    cg[(long long)gn * p.ldc + gm] =
                        *reinterpret_cast<const TOut *>(buf + sub_offset<OUT_BYTES>(r, col));
            }
        }
    }
}

/* A finished tile: the consumer's M blocks, one mode copy. h is a
 * compile-time index after unrolling, so the accumulators stay in registers.
 * MASKED (split-K): only the sub-tiles whose bit h * CHUNKS + ch is set. */
template <typename Cfg, typename TOut, EpiMode MODE, bool MASKED>
__device__ __forceinline__ void store_tile(float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                           const Params &p, const TileCoord &tc, int c, int warp,
                                           const CUtensorMap *tmap_c, uint8_t (*bufs)[SUB_BYTES],
                                           uint64_t *c_full, EpiState &st, float alpha, float beta,
                                           uint32_t mask)
{
    constexpr int CHUNK_COLS = SW128_ROW / (int)sizeof(TOut);
    constexpr int CHUNKS = Cfg::BLOCK_M / CHUNK_COLS;
    constexpr int HPC = Cfg::HALVES_PER_CONSUMER;
    /* The call's L2 policy for every TMA store of the tile. */
    const uint64_t policy = c_store_policy(p);
    /* This warp's first C^T row (n) of each of the consumer's M blocks. */
    int row0[HPC];
#pragma unroll
    for (int h = 0; h < HPC; ++h)
        row0[h] = tc.n0 + (Cfg::COOPERATIVE ? c : h) * WGMMA_M + warp * EPI_ROWS;
    /* A buffer per sub-tile (pingpong, 16-bit C, TMA-stored tile): stage
     * them all, then one fence and the stores back to back. H200 clock64
     * stamps, TN 8448x9216, one sub-tile at a time: per sub-tile ~85
     * cycles of buffer wait, ~50-200 of proxy fence and ~200-250 of TMA
     * store issue by lane 0 (bench/NOTES.md). */
    constexpr bool BATCHABLE = !MASKED && MODE != EPI_RAGGED && HPC * CHUNKS <= Cfg::EPI_BUFS;
    if constexpr (BATCHABLE) {
        if (lane_id() == 0)
            tma_store_wait_read<0>(); /* the previous tile's stores have read every buffer */
        __syncwarp();
#pragma unroll
        for (int h = 0; h < HPC; ++h)
            store_m_block<Cfg, TOut, MODE, MASKED, true>(acc[h], p, tc, row0[h], h * CHUNKS, tmap_c,
                                                         bufs, c_full, st, alpha, beta, policy,
                                                         mask >> (h * CHUNKS));
        /* Generic-proxy writes -> visible to the TMA stores (async proxy). */
        fence_proxy_async_shared_cta();
        __syncwarp();
        if (lane_id() == 0) {
#pragma unroll
            for (int h = 0; h < HPC; ++h)
#pragma unroll
                for (int ch = 0; ch < CHUNKS; ++ch)
                    tma_store_3d_hint(tmap_c, bufs[h * CHUNKS + ch], tc.m0 + ch * CHUNK_COLS,
                                      row0[h], tc.b, policy);
            tma_store_commit_group();
        }
    } else {
#pragma unroll
        for (int h = 0; h < HPC; ++h)
            store_m_block<Cfg, TOut, MODE, MASKED, false>(acc[h], p, tc, row0[h], h * CHUNKS,
                                                          tmap_c, bufs, c_full, st, alpha, beta,
                                                          policy, mask >> (h * CHUNKS));
    }
}

/* The epilogue mode for this call's scalars and bias, picked once per tile
 * by uniform branches (each mode is its own unrolled copy, see EpiMode). */
template <typename Cfg, typename TOut, bool MASKED>
__device__ __forceinline__ void store_tile_any(float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                               const Params &p, const TileCoord &tc, int c,
                                               int warp, const CUtensorMap *tmap_c,
                                               uint8_t (*bufs)[SUB_BYTES], uint64_t *c_full,
                                               EpiState &st, float alpha, float beta,
                                               uint32_t mask)
{
    if constexpr (Cfg::PLAIN_EPILOGUE) {
        if (alpha != 1.0f)
            store_tile<Cfg, TOut, EPI_SCALE, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full,
                                                     st, alpha, beta, mask);
        else
            store_tile<Cfg, TOut, EPI_COPY, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full,
                                                    st, alpha, beta, mask);
        return;
    }
    /* EPI_BIAS takes a bias of the output's type whose pairs are aligned;
     * another (refused by can_implement at beta == 0 unless C is direct;
     * kept for direct callers) goes to the one copy that reads the type at
     * run time, called from this one site (a second call site inlined a
     * second copy) */
    const bool pair_bias = p.bias_kind == bias_kind_of<TOut>() &&
                           (reinterpret_cast<uintptr_t>(p.bias) & (2 * sizeof(TOut) - 1)) == 0;
    if ((p.m_ragged && (tc.m0 + Cfg::BLOCK_M > p.m || (p.c_flags & C_DIRECT))) ||
        (p.bias_kind != BIAS_NONE && beta == 0.0f && !pair_bias))
        store_tile<Cfg, TOut, EPI_RAGGED, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                                  alpha, beta, mask);
    else if (p.bias_kind != BIAS_NONE && beta != 0.0f)
        store_tile<Cfg, TOut, EPI_BIAS_BETA, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                                     alpha, beta, mask);
    else if (p.bias_kind != BIAS_NONE)
        store_tile<Cfg, TOut, EPI_BIAS, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                                alpha, beta, mask);
    else if (beta != 0.0f)
        store_tile<Cfg, TOut, EPI_BETA, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                                alpha, beta, mask);
    else if (alpha != 1.0f)
        store_tile<Cfg, TOut, EPI_SCALE, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                                 alpha, beta, mask);
    else
        store_tile<Cfg, TOut, EPI_COPY, MASKED>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                                alpha, beta, mask);
}

/* ---------------------------------------------------------------------------
 * Deferred epilogue (cooperative tile, 16-bit C, beta == 0, no bias, not the
 * ragged m tile). The cooperative tile has no second consumer to hide its
 * epilogue behind: both warpgroups stop issuing wgmmas while they stage and
 * store the tile (H200, TN 8448x9216x2048: 1.66 us per 21 us tile, bench/
 * NOTES.md), and per warp the third and fourth sub-tiles wait for
 * the TMA stores of the first two to finish reading their staging buffers.
 * So a warp stores its first Defer::NOW sub-tiles at once (their buffer
 * waits are normally satisfied already: the previous tile's deferred stores
 * were issued a k-block or more ago), rounds the rest to 16 bits into
 * registers of their own, starts the next tile's mainloop, and stores one
 * of them after each of that tile's first k-blocks is issued, while those
 * wgmmas run (by then the buffers are free, too). Deferring the whole tile
 * would keep 64 packed registers live next to the 128 accumulators: ptxas
 * spilled ~280 bytes at the consumers' 232 registers (setmaxnreg; the
 * consumer code is compiled for them). Same products, same rounding
 * (acc or alpha * acc, round to nearest) as store_m_block's EPI_COPY /
 * EPI_SCALE: bitwise the same C.
 * ------------------------------------------------------------------------- */
template <typename Cfg, typename TOut>
struct Defer {
    static constexpr int CHUNK_COLS = SW128_ROW / (int)sizeof(TOut);
    static constexpr int CHUNKS = Cfg::BLOCK_M / CHUNK_COLS; /* sub-tiles per warp and tile */
    static constexpr int NOW = CHUNKS / 2;                   /* stored at the tile's end */
    static constexpr int LATER = CHUNKS - NOW;               /* stored in the next mainloop */
    static constexpr int STM = CHUNK_COLS / 16;              /* stmatrix.x4 per sub-tile */
    static constexpr int PK = LATER * STM * 4;               /* packed registers */
};

/* SCALE: EPI_SCALE's alpha * acc, else EPI_COPY's acc as it is (no multiply
 * by 1, which would flush subnormals under -ftz). */
template <typename Cfg, typename TOut, bool SCALE>
__device__ __forceinline__ void deferred_pack(const float (&acc)[Cfg::ACC],
                                              uint32_t (&pk)[Defer<Cfg, TOut>::PK], float alpha)
{
    constexpr int BASE = Defer<Cfg, TOut>::NOW * Defer<Cfg, TOut>::STM * 4;
#pragma unroll
    for (int r = 0; r < Defer<Cfg, TOut>::PK; ++r) {
        const float lo = acc[2 * (BASE + r)], hi = acc[2 * (BASE + r) + 1];
        pk[r] = SCALE ? pack2(alpha * lo, alpha * hi, (TOut *)nullptr) : pack2(lo, hi, (TOut *)nullptr);
    }
}

/* Where a deferred tile goes: the tile's m origin, this warp's first row (n)
 * of its consumer's M block, the batch. */
struct DeferredTile {
    int m0, row0, b;
};

/* A tile's end under C_DEFER (cooperative tiles, 16-bit C, beta == 0, no
 * bias, not the ragged m tile): sub-tiles [0, NOW) of each warp stored now
 * (alpha applied, or acc as it is at alpha 1), the LATER others packed
 * into pk for deferred_step in the next tile's mainloop; dt and pend say
 * where they go and how many remain. */
template <typename Cfg, typename TOut>
__device__ __forceinline__ void defer_tile(float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                           const Params &p, const TileCoord &tc, int c, int warp,
                                           const CUtensorMap *tmap_c, uint8_t (*bufs)[SUB_BYTES],
                                           uint64_t *c_full, EpiState &st, float alpha,
                                           float beta, uint32_t (&pk)[Defer<Cfg, TOut>::PK],
                                           DeferredTile &dt, int &pend)
{
    constexpr uint32_t NOW = (1u << Defer<Cfg, TOut>::NOW) - 1u;
    if (alpha != 1.0f) {
        store_tile<Cfg, TOut, EPI_SCALE, true>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                               alpha, beta, NOW);
        deferred_pack<Cfg, TOut, true>(acc[0], pk, alpha);
    } else {
        store_tile<Cfg, TOut, EPI_COPY, true>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st,
                                              alpha, beta, NOW);
        deferred_pack<Cfg, TOut, false>(acc[0], pk, alpha);
    }
    dt.m0 = tc.m0;
    dt.row0 = tc.n0 + c * WGMMA_M + warp * EPI_ROWS;
    dt.b = tc.b;
    pend = Defer<Cfg, TOut>::LATER;
}

/* Stage and store the packed sub-tile NOW + D (store_m_block's buffer
 * discipline: one bulk group per sub-tile, buffer st.sub % EPI_BUFS free once
 * at most EPI_BUFS - 1 groups are pending). */
template <typename Cfg, typename TOut, int D>
__device__ __forceinline__ void deferred_store(const uint32_t (&pk)[Defer<Cfg, TOut>::PK],
                                               const DeferredTile &dt, const Params &p,
                                               const CUtensorMap *tmap_c,
                                               uint8_t (*bufs)[SUB_BYTES], EpiState &st)
{
    using DF = Defer<Cfg, TOut>;
    static_assert(sizeof(TOut) == 2, "stmatrix stores 16-bit elements");
    static_assert(D < DF::LATER, "a deferred sub-tile");
    const int lane = lane_id();
    const int mat = lane / 8;
    const int row = (lane % 8) + 8 * (mat & 1);
    uint8_t *buf = bufs[st.sub % Cfg::EPI_BUFS];
    ++st.sub;
    if (lane == 0)
        tma_store_wait_read<Cfg::EPI_BUFS - 1>();
    __syncwarp();
#pragma unroll
    for (int jl = 0; jl < DF::STM; ++jl) {
        const int r = 4 * (D * DF::STM + jl);
        stmatrix_x4(buf + sub_offset<2>(row, 16 * jl + 8 * (mat >> 1)), pk[r], pk[r + 1], pk[r + 2],
                    pk[r + 3]);
    }
    fence_proxy_async_shared_cta();
    __syncwarp();
    if (lane == 0) {
        tma_store_3d_hint(tmap_c, buf, dt.m0 + (DF::NOW + D) * DF::CHUNK_COLS, dt.row0, dt.b,
                          c_store_policy(p));
        tma_store_commit_group();
    }
}

/* The next pending sub-tile (pend of them left), if any. */
template <typename Cfg, typename TOut>
__device__ __forceinline__ void deferred_step(const uint32_t (&pk)[Defer<Cfg, TOut>::PK], int &pend,
                                              const DeferredTile &dt, const Params &p,
                                              const CUtensorMap *tmap_c,
                                              uint8_t (*bufs)[SUB_BYTES], EpiState &st)
{
    constexpr int LATER = Defer<Cfg, TOut>::LATER;
    static_assert(LATER >= 1 && LATER <= 3, "deferred_step names up to three sub-tiles");
    if (pend == LATER)
        deferred_store<Cfg, TOut, 0>(pk, dt, p, tmap_c, bufs, st);
    if constexpr (LATER >= 2)
        if (pend == LATER - 1)
            deferred_store<Cfg, TOut, 1>(pk, dt, p, tmap_c, bufs, st);
    if constexpr (LATER >= 3)
        if (pend == LATER - 2)
            deferred_store<Cfg, TOut, 2>(pk, dt, p, tmap_c, bufs, st);
    if (pend > 0)
        --pend;
}

/* Every pending sub-tile: before a tile's own store (a tile shorter than
 * the deferred sub-tiles left some) and after the CTA's last tile. */
template <typename Cfg, typename TOut>
__device__ __forceinline__ void deferred_drain(const uint32_t (&pk)[Defer<Cfg, TOut>::PK], int &pend,
                                               const DeferredTile &dt, const Params &p,
                                               const CUtensorMap *tmap_c,
                                               uint8_t (*bufs)[SUB_BYTES], EpiState &st)
{
    while (pend > 0)
        deferred_step<Cfg, TOut>(pk, pend, dt, p, tmap_c, bufs, st);
}

/* A deferring tile's end, the one rule for every kernel with C_DEFER
 * (pingpong's cooperative tile, the FP8 wide tile): the earlier tile's
 * sub-tiles drained, then this tile deferred where it may (C_DEFER, beta
 * == 0, no bias, not the ragged m tile). True: defer_tile took the tile,
 * the caller stores nothing; false: the caller stores it whole. */
template <typename Cfg, typename TOut>
__device__ __forceinline__ bool defer_tile_if(float (&acc)[Cfg::HALVES_PER_CONSUMER][Cfg::ACC],
                                              const Params &p, const TileCoord &tc, int c, int warp,
                                              const CUtensorMap *tmap_c, uint8_t (*bufs)[SUB_BYTES],
                                              uint64_t *c_full, EpiState &st, float alpha,
                                              float beta, uint32_t (&pk)[Defer<Cfg, TOut>::PK],
                                              DeferredTile &dt, int &pend)
{
    deferred_drain<Cfg, TOut>(pk, pend, dt, p, tmap_c, bufs, st);
    if ((p.c_flags & C_DEFER) && beta == 0.0f && p.bias_kind == BIAS_NONE &&
        !(p.m_ragged && tc.m0 + Cfg::BLOCK_M > p.m)) {
        defer_tile<Cfg, TOut>(acc, p, tc, c, warp, tmap_c, bufs, c_full, st, alpha, beta, pk, dt,
                              pend);
        return true;
    }
    return false;
}

} // namespace

#endif /* GS_PINGPONG_EPILOGUE_CUH */
