/* The SIMT SGEMM family's mainloop pieces: the operand tile copiers (one
 * per copy mode), the shared-memory ring, the block raster, the C store of
 * the split-K reduction (store_c4) and the main loop of both kernels
 * (tile_product). */
#ifndef GS_SGEMM_SIMT_MAINLOOP_CUH
#define GS_SGEMM_SIMT_MAINLOOP_CUH

#include "sgemm_simt_params.cuh"

namespace {

/* Copies one operand's EXT x BLOCK_K tile (EXT = BLOCK_M for A, BLOCK_N for
 * B) of each k-tile into a shared k-major [BLOCK_K][LD] array. Element (r, kk)
 * of the operand is at base[r + kk*ld] when it is contiguous along r
 * (VEC16/ROW4) and at base[kk + r*ld] when contiguous along k (COL4/KVEC16).
 * KVEC16 is not asynchronous: load() takes the tile into registers, store()
 * writes it transposed, and the kernel spaces the two a k-tile's FFMAs apart.
 * A thread's copies sit at compile-time offsets (dr, dk) from one base
 * (r_t, k_t), so per k-tile it needs only one pointer and one k bound.
 * STREAMED (split-K kernels): KVEC16's loads ask L2 for the whole 256-byte
 * block around each 16 bytes, i.e. the next 7 k-tiles of that row. Deep-K
 * operands stream from HBM with no reuse in L2, and a register-staged load
 * has only one k-tile of FFMAs to land in; with the hint, 7 of 8 land from
 * L2 (H200, 512x512x32768 TT: 0.865x -> 0.913x cuBLAS; unsplit problems
 * mostly hit L2 and keep the plain load). */
template <int MODE, int EXT, int BLOCK_K, int LD, int THREADS, bool STREAMED = false>
struct tile_copier {
    static constexpr int VEC = MODE == COPY_VEC16 || MODE == COPY_KVEC16 ? 4 : 1;
    static constexpr int COPIES = EXT * BLOCK_K / (THREADS * VEC);
    /* VEC16/ROW4: a thread keeps its r and steps along k. */
    static constexpr int R_THREADS = EXT / VEC;
    static constexpr int K_STEP = THREADS / R_THREADS;
    /* COL4: COL4_K lanes along k, the rest along r. */
    static constexpr int COL_R_STEP = THREADS / COL4_K;
    static constexpr int COL_R_ITERS = EXT / COL_R_STEP;
    /* KVEC16: KVEC_LANES lanes along k, the rest along r, BLOCK_K/KVEC_SPAN
     * passes along k. A warp reads 16 rows x 32 bytes (whole sectors) and
     * each of its 4 STS.32 writes 16 consecutive r of two k-rows 4 apart,
     * which the 4-float padding puts 16 banks apart: conflict free. */
    static constexpr int KV_R_STEP = THREADS / KVEC_LANES;
    static constexpr int KV_R_ITERS = EXT / KV_R_STEP;

    static_assert(COPIES >= 1 && EXT * BLOCK_K % (THREADS * VEC) == 0, "copies divide evenly");
    static_assert(MODE == COPY_COL4 || THREADS % R_THREADS == 0, "whole k-rows per pass");
    static_assert(MODE != COPY_COL4 || EXT % COL_R_STEP == 0, "whole columns per pass");
    static_assert(MODE != COPY_KVEC16 || (BLOCK_K % KVEC_SPAN == 0 && EXT % KV_R_STEP == 0),
                  "whole sectors along k and whole rows per pass");
    static_assert(MODE != COPY_KVEC16 || (KVEC_LANES == 2 && (LD - EXT) * KVEC % 32 == 16),
                  "the STS.32 of a warp hit 32 distinct banks");

    /* Kept to the minimum that must live across the main loop (the 128x128
     * tile has no registers to spare): ld and the k-tile step are re-read
     * from the kernel parameters at each use. */
    const float *gptr; /* this thread's (r_t, k_t) in the current k-tile */
    int smem_off;      /* k_t*LD + r_t */
    int k_t;
    uint32_t r_ok;     /* VEC16: bytes of the 4-vector inside the matrix;
                          ROW4/COL4/KVEC16: bit i set when copy i's row is inside */
    float4 staged[MODE == COPY_KVEC16 ? COPIES : 1]; /* KVEC16: load() -> store() */

    __device__ __forceinline__ tile_copier(const float *base, int64_t ld, int r0, int r_extent, int tid)
    {
        int r_t;
        if (MODE == COPY_COL4) {
            k_t = tid % COL4_K;
            r_t = tid / COL4_K;
            gptr = base + (int64_t)(r0 + r_t) * ld + k_t;
        } else if (MODE == COPY_KVEC16) {
            k_t = tid % KVEC_LANES * KVEC;
            r_t = tid / KVEC_LANES;
            gptr = base + (int64_t)(r0 + r_t) * ld + k_t;
        } else {
            r_t = (tid % R_THREADS) * VEC;
            k_t = tid / R_THREADS;
            gptr = base + (r0 + r_t) + (int64_t)k_t * ld;
        }
        smem_off = k_t * LD + r_t;
        const int r_left = r_extent - r0 - r_t;
        if (MODE == COPY_VEC16) {
            r_ok = 4 * max(0, min(VEC, r_left));
        } else {
            r_ok = 0;
#pragma unroll
            for (int i = 0; i < COPIES; ++i)
                if (dr(i) < r_left)
                    r_ok |= 1u << i;
        }
    }

    static __device__ __forceinline__ int dr(int i)
    {
        return MODE == COPY_COL4 ? (i % COL_R_ITERS) * COL_R_STEP
               : MODE == COPY_KVEC16 ? (i % KV_R_ITERS) * KV_R_STEP : 0;
    }
    static __device__ __forceinline__ int dk(int i)
    {
        return MODE == COPY_COL4 ? (i / COL_R_ITERS) * COL4_K
               : MODE == COPY_KVEC16 ? (i / KV_R_ITERS) * KVEC_SPAN : i * K_STEP;
    }

    /* Enqueue this thread's copies of the current k-tile into smem[BLOCK_K][LD];
     * k_left = k - (first k of the tile). */
    __device__ __forceinline__ void copy(float *smem, int64_t ld, int k_left) const
    {
        float *dst = smem + smem_off;
#pragma unroll
        for (int i = 0; i < COPIES; ++i) {
            const bool k_in = k_t + dk(i) < k_left;
            if (MODE == COPY_VEC16) {
                cp_async_cg_16(dst + dk(i) * LD, gptr + dk(i) * ld, k_in ? (int)r_ok : 0);
            } else if (MODE == COPY_ROW4) {
                cp_async_ca_4(dst + dk(i) * LD, gptr + dk(i) * ld,
                              (k_in && (r_ok >> i & 1u)) ? 4 : 0);
            } else {
                cp_async_ca_4(dst + dk(i) * LD + dr(i), gptr + dr(i) * ld + dk(i),
                              (k_in && (r_ok >> i & 1u)) ? 4 : 0);
            }
        }
    }

    /* KVEC16: this thread's vectors of the current k-tile into registers.
     * A vector reaching past k (only in the last k-tile) is read element by
     * element: the row may end at the allocation's end. */
    __device__ __forceinline__ void load(int64_t ld, int k_left)
    {
#pragma unroll
        for (int i = 0; i < COPIES; ++i) {
            const float *src = gptr + dr(i) * ld + dk(i);
            const bool r_in = r_ok >> i & 1u;
            const int k_in = k_left - k_t - dk(i);
            if (r_in && k_in >= KVEC) {
                if constexpr (STREAMED) {
                    const uint4 u = ld_global_nc_na_l2_256_v4(src);
                    staged[i] = make_float4(__uint_as_float(u.x), __uint_as_float(u.y),
                                            __uint_as_float(u.z), __uint_as_float(u.w));
                } else {
                    staged[i] = __ldg(reinterpret_cast<const float4 *>(src));
                }
            } else {
                staged[i].x = r_in && k_in > 0 ? __ldg(src) : 0.0f;
                staged[i].y = r_in && k_in > 1 ? __ldg(src + 1) : 0.0f;
                staged[i].z = r_in && k_in > 2 ? __ldg(src + 2) : 0.0f;
                staged[i].w = 0.0f;
            }
        }
    }

    /* KVEC16: the loaded vectors into smem[BLOCK_K][LD], one k-row each. */
    __device__ __forceinline__ void store(float *smem) const
    {
        float *dst = smem + smem_off;
#pragma unroll
        for (int i = 0; i < COPIES; ++i) {
            float *d = dst + dk(i) * LD + dr(i);
            d[0 * LD] = staged[i].x;
            d[1 * LD] = staged[i].y;
            d[2 * LD] = staged[i].z;
            d[3 * LD] = staged[i].w;
        }
    }

    __device__ __forceinline__ void next_tile(int64_t ld)
    {
        gptr += k_offset(ld, BLOCK_K);
    }

    /* Elements between element (r, k0) and (r, k0 + k) of the operand. */
    static __device__ __forceinline__ int64_t k_offset(int64_t ld, int k)
    {
        return MODE == COPY_COL4 || MODE == COPY_KVEC16 ? (int64_t)k : (int64_t)k * ld;
    }
};

template <class Cfg>
struct shared_storage {
    alignas(16) float a[Cfg::STAGES][Cfg::BLOCK_K][Cfg::A_LD];
    alignas(16) float b[Cfg::STAGES][Cfg::BLOCK_K][Cfg::B_LD];
};

__device__ __forceinline__ float4 lds128(const float *p)
{
    return *reinterpret_cast<const float4 *>(p);
}

/* Tile position of linear block id, grouped along m (see GROUP_M). */
__device__ __forceinline__ void block_tile(int id, int tiles_m, int tiles_n, int &tm, int &tn)
{
    const int per_group = GROUP_M * tiles_n;
    const int group = id / per_group;
    const int first_m = group * GROUP_M;
    const int group_m = min(tiles_m - first_m, GROUP_M);
    const int in_group = id - group * per_group;
    tm = first_m + in_group % group_m;
    tn = in_group / group_m;
}

/* Stream-K partition (split kernels): CTA g of G takes units
 * [g*U/G, (g+1)*U/G) of the U = tiles*k_tiles units, ordered tile by tile
 * and along k inside a tile. With G <= U every CTA gets at least one unit,
 * so walking the segments in unit order, each next segment either moves to
 * the next CTA or to the next tile (or both): `cta + tile` grows strictly,
 * which makes it the segment's partial slot (G + tiles - 1 slots at most),
 * and the segments of tile t are the consecutive slots
 * cta_of_unit(t*k_tiles) + t .. cta_of_unit((t+1)*k_tiles - 1) + t. */
__host__ __device__ __forceinline__ int64_t unit_begin(int64_t g, int64_t units, int64_t ctas)
{
    return g * units / ctas;
}
/* The CTA whose run holds unit u: the largest g with g*U/G <= u. */
__host__ __device__ __forceinline__ int cta_of_unit(int64_t u, int64_t units, int64_t ctas)
{
    return (int)(((u + 1) * ctas - 1) / units);
}

/* v += beta * old, four rows of one column of C read as one vector. */
__device__ __forceinline__ void add_beta_c4(float (&v)[4], const float4 old, float beta)
{
    v[0] = fmaf(beta, old.x, v[0]);
    v[1] = fmaf(beta, old.y, v[1]);
    v[2] = fmaf(beta, old.z, v[2]);
    v[3] = fmaf(beta, old.w, v[3]);
}

/* Rows r..r+3 (rows_in of them inside C, all four when >= 4) of one column
 * of C: v = alpha * (sum over k) on entry; then beta * C (C never read when
 * beta == 0), then the bias of each row, and the store. */
__device__ __forceinline__ void store_c4(float *cp, float (&v)[4], int rows_in, bool vec4,
                                         float beta, const float *bias)
{
    if (vec4 && rows_in >= 4) {
        float4 *c4 = reinterpret_cast<float4 *>(cp);
        if (beta != 0.0f)
            add_beta_c4(v, *c4, beta);
        if (bias) {
#pragma unroll
            for (int ii = 0; ii < 4; ++ii)
                v[ii] += __ldg(bias + ii);
        }
        *c4 = make_float4(v[0], v[1], v[2], v[3]);
    } else {
#pragma unroll
        for (int ii = 0; ii < 4; ++ii) {
            if (ii < rows_in) {
                float x = beta != 0.0f ? fmaf(beta, cp[ii], v[ii]) : v[ii];
                if (bias)
                    x += __ldg(bias + ii);
                cp[ii] = x;
            }
        }
    }
}

/* Where tile_product's product goes. */
enum tile_to {
    TILE_TO_ACC,    /* *acc_out (the split kernel's partial tile) */
    TILE_TO_C,      /* C = alpha * product + beta * C (the unsplit kernel) */
    TILE_TO_C_BIAS, /* the same, then + bias[row] */
};

/* The main loop of both kernels: the product of the block tile at (m0, n0)
 * of batch b over the kt_count k-tiles from k-tile kt0 on, into *acc_out
 * (TILE_TO_ACC) or, over the whole k range (kt0 = 0), into C with alpha,
 * beta and the bias (TILE_TO_C*; acc_out unused). Starts and ends with no
 * cp.async group holding copies still in flight into a stage that is read
 * later; the caller must barrier before the shared memory is written again.
 *
 * The unsplit kernel's store to C is written here, in the function that
 * declares the accumulators: done by the caller on acc, or by a functor
 * called here, it changes the order in which the compiler numbers the
 * accumulator registers, and with it ptxas's register allocation and
 * schedule of the unsplit kernels (tests/sass checks their SASS; an earlier
 * shared main loop with another schedule measured 2-4% slower on the TT
 * layouts, H200 1024^3..4096^3, bench/notes-simt-splitk.md). For the same
 * reason TILE_TO_C re-reads k from prm at each use instead of keeping k_rem
 * in a register. */
template <class Cfg, int A_MODE, int B_MODE, bool STREAMED_A, bool STREAMED_B, int TO>
__device__ __forceinline__ void tile_product(const sgemm_params &prm, shared_storage<Cfg> &smem,
                                             int64_t b, int m0, int n0, int kt0, int kt_count,
                                             int frag_m, int frag_n,
                                             float (*acc_out)[Cfg::THREAD_M][Cfg::THREAD_N],
                                             float alpha, float beta)
{
    constexpr int BK = Cfg::BLOCK_K;
    constexpr int STAGES = Cfg::STAGES;
    constexpr int TM = Cfg::THREAD_M, TN = Cfg::THREAD_N;
    constexpr int VM = TM / 4, VN = TN / 4; /* float4 vectors per fragment */
    using copier_a = tile_copier<A_MODE, Cfg::BLOCK_M, BK, Cfg::A_LD, Cfg::THREADS, STREAMED_A>;
    using copier_b = tile_copier<B_MODE, Cfg::BLOCK_N, BK, Cfg::B_LD, Cfg::THREADS, STREAMED_B>;

    const int tid = threadIdx.x;
    const int k0 = kt0 * BK;
    /* k from the first k of this range to the end of the matrix: the copies
     * zero-fill past it only in the matrix's last k-tile. */
    const int k_rem = prm.k - k0;
    copier_a ca(prm.A + b * prm.stride_a + copier_a::k_offset(prm.lda, k0), prm.lda, m0, prm.m,
                tid);
    copier_b cb(prm.B + b * prm.stride_b + copier_b::k_offset(prm.ldb, k0), prm.ldb, n0, prm.n,
                tid);
    constexpr bool A_STAGED = A_MODE == COPY_KVEC16, B_STAGED = B_MODE == COPY_KVEC16;
    constexpr bool TO_C = TO != TILE_TO_ACC;

    /* Starts the copies of the k-tile with k_left = k - (its first k): the
     * asynchronous ones straight into smem stage `stage`, the register-staged
     * ones (KVEC16) into registers, for store_staged to write later. */
    auto issue_tile = [&](int stage, int k_left) {
        if constexpr (A_STAGED)
            ca.load(prm.lda, k_left);
        else
            ca.copy(&smem.a[stage][0][0], prm.lda, k_left);
        if constexpr (B_STAGED)
            cb.load(prm.ldb, k_left);
        else
            cb.copy(&smem.b[stage][0][0], prm.ldb, k_left);
        ca.next_tile(prm.lda);
        cb.next_tile(prm.ldb);
    };
    auto store_staged = [&](int stage) {
        if constexpr (A_STAGED)
            ca.store(&smem.a[stage][0][0]);
        if constexpr (B_STAGED)
            cb.store(&smem.b[stage][0][0]);
    };

    /* Prologue: STAGES-1 k-tiles in flight (register-staged ones are
     * stored at once). Groups are committed even when empty so that
     * wait_group<STAGES-2> always means "the tile about to be multiplied
     * has landed". */
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < kt_count) {
            issue_tile(s, (TO_C ? prm.k : k_rem) - s * BK);
            store_staged(s);
        }
        cp_async_commit_group();
    }

    float acc_c[TM][TN];
    float (&acc)[TM][TN] = TO_C ? acc_c : *acc_out;
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;

    /* Fragments are double-buffered in registers: the FFMAs of step kk
     * run while the vectors of step kk+1 load, and the first vectors of
     * tile kt+1 are loaded before the last FFMAs of tile kt, so
     * shared-memory latency stays hidden across the barrier too. */
    float4 av[2][VM], bv[2][VN];
    auto load_frags = [&](int buf, int stage, int kk) {
        const float *As = &smem.a[stage][kk][frag_m];
        const float *Bs = &smem.b[stage][kk][frag_n];
#pragma unroll
        for (int v = 0; v < VM; ++v)
            av[buf][v] = lds128(As + v * Cfg::LANES_M * 4);
#pragma unroll
        for (int v = 0; v < VN; ++v)
            bv[buf][v] = lds128(Bs + v * Cfg::LANES_N * 4);
    };

    cp_async_wait_group<STAGES - 2>();
    __syncthreads();
    load_frags(0, 0, 0);

    int read_stage = 0, write_stage = STAGES - 1;
    for (int kt = 0; kt < kt_count; ++kt) {
        /* Tile kt+STAGES-1 refills the stage of tile kt-1: every warp read
         * its last fragment of that stage before the barrier that ended
         * tile kt-1. */
        const int k_next = kt + STAGES - 1;
        const bool refill = k_next < kt_count;
        if (refill)
            issue_tile(write_stage, (TO_C ? prm.k : k_rem) - k_next * BK);
        cp_async_commit_group();

#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            const int cur = kk & 1;
            if (kk == BK - 1) {
                /* Register-staged vectors of tile k_next, loaded BK-1 steps
                 * of FFMAs ago, go to the stage no warp reads any more; the
                 * barriers before tile k_next is read publish them. */
                if (refill)
                    store_staged(write_stage);
                /* One barrier per k-tile: tile kt+1 has landed and is
                 * visible to all warps, and all reads of tile kt are
                 * done (its last vectors are already in registers). */
                cp_async_wait_group<STAGES - 2>();
                __syncthreads();
                read_stage = read_stage == STAGES - 1 ? 0 : read_stage + 1;
                write_stage = write_stage == STAGES - 1 ? 0 : write_stage + 1;
            }
            load_frags(cur ^ 1, read_stage, kk == BK - 1 ? 0 : kk + 1);
            const float *a = reinterpret_cast<const float *>(av[cur]);
            const float *bf = reinterpret_cast<const float *>(bv[cur]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] = fmaf(a[i], bf[j], acc[i][j]);
        }
    }
    if constexpr (TO_C) {
        constexpr bool HAS_BIAS = TO == TILE_TO_C_BIAS;
        /* Epilogue: each 4-vector of the thread tile is 4 consecutive rows of
         * one column of C; LANES_M lanes write LANES_M*16 contiguous bytes.
         * Everything is relative to the thread's first element, so only one
         * pointer and two bounds live across the main loop. */
        const int rows_left = prm.m - (m0 + frag_m);
        const int cols_left = prm.n - (n0 + frag_n);
        float *Cthr = prm.C + b * prm.stride_c + (int64_t)(n0 + frag_n) * prm.ldc + (m0 + frag_m);
#pragma unroll
        for (int vn = 0; vn < VN; ++vn) {
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) {
                const int c = vn * Cfg::LANES_N * 4 + jj;
                if (c >= cols_left)
                    continue;
                float *Ccol = Cthr + c * prm.ldc;
#pragma unroll
                for (int vm = 0; vm < VM; ++vm) {
                    const int r0 = vm * Cfg::LANES_M * 4;
                    const int j = vn * 4 + jj;
                    float v[4];
#pragma unroll
                    for (int ii = 0; ii < 4; ++ii)
                        v[ii] = alpha * acc[vm * 4 + ii][j];
                    if (prm.c_vec4 && r0 + 3 < rows_left) {
                        float4 *cp = reinterpret_cast<float4 *>(Ccol + r0);
                        if (beta != 0.0f)
                            add_beta_c4(v, *cp, beta);
                        if constexpr (HAS_BIAS) {
#pragma unroll
                            for (int ii = 0; ii < 4; ++ii)
                                v[ii] += __ldg(prm.bias + (m0 + frag_m + r0 + ii));
                        }
                        *cp = make_float4(v[0], v[1], v[2], v[3]);
                    } else {
#pragma unroll
                        for (int ii = 0; ii < 4; ++ii) {
                            if (r0 + ii < rows_left) {
                                float *cp = Ccol + r0 + ii;
                                float x = beta != 0.0f ? fmaf(beta, *cp, v[ii]) : v[ii];
                                if constexpr (HAS_BIAS)
                                    x += __ldg(prm.bias + (m0 + frag_m + r0 + ii));
                                *cp = x;
                            }
                        }
                    }
                }
            }
        }
    }
}

} // namespace

#endif /* GS_SGEMM_SIMT_MAINLOOP_CUH */
