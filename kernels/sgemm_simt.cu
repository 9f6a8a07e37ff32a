/* Warp-tiled SIMT fp32 SGEMM (CUTLASS hierarchy: block tile, warp tile,
 * thread tile), column-major, all four transposes, strided batches.
 *
 * Shared memory holds both operands k-major: As[k][m] and Bs[k][n], so that
 * one k step of the inner product reads a thread's A and B fragments as
 * float4 vectors (LDS.128) and does THREAD_M x THREAD_N FFMAs on them.
 *
 * How an operand reaches that layout depends on which of its dimensions is
 * contiguous in global memory (column-major, so A:N and B:T are contiguous
 * along m/n, A:T and B:N along k):
 *   COPY_VEC16  contiguous along m/n and 16-byte aligned: 16-byte cp.async,
 *               a warp reads 512 contiguous bytes;
 *   COPY_ROW4   contiguous along m/n but not 16-byte aligned: 4-byte
 *               cp.async, a warp reads 128 contiguous bytes;
 *   COPY_KVEC16 contiguous along k and 16-byte aligned (256x128 and
 *               128x256 tiles): LDG.128 of 4 consecutive k into registers at the
 *               start of a k-tile, stored as 4 STS.32 into 4 k-rows just
 *               before the k-tile's barrier, so the load latency hides behind
 *               its FFMAs; a quarter of COL4's copy instructions, and the
 *               4-float row padding keeps the stores conflict free;
 *   COPY_COL4   contiguous along k, not aligned (or a smaller tile): 4-byte
 *               cp.async that transposes on the way in; a warp reads 8
 *               consecutive k of 4 rows (4 whole 32-byte sectors) and writes
 *               8 k-rows x 4 columns of shared memory, which the 4-float row
 *               padding spreads over all 32 banks.
 * Every layout runs the same STAGES-deep ring: while stage s is being
 * multiplied, the next STAGES-1 k-tiles are in flight (KVEC16 tiles written
 * STAGES-2 tiles ahead of use instead of STAGES-1).
 *
 * Out-of-range rows and k of the edge tiles are copied with src-size 0 (or
 * fewer than 16 bytes), which zero-fills shared memory without reading global
 * memory, so the inner loop never branches and never reads out of bounds.
 *
 * Deep, narrow problems (few block tiles, long k) split K stream-K style:
 * one CTA per slot of the device (SMs x blocks per SM) and the
 * tiles x k-tiles units dealt out in equal contiguous runs, so every SM is
 * busy however the tiles divide; a run that crosses a tile boundary makes
 * two segments. Each segment stores its fp32 partial tile in the workspace,
 * and a second kernel sums each tile's partials in a fixed order (runs of
 * consecutive slots, then the runs: fixed by the problem and the grid, so
 * bitwise reproducible), applies alpha, beta (C not
 * read when beta == 0) and bias once, and writes C. A second kernel rather
 * than "the last CTA to arrive reduces": on 512x512x32768 that CTA alone
 * would read ~17 partial tiles (2 MB) through one SM while the others idle;
 * the separate reduction spreads those reads over the whole device.
 *
 * The cublasLt BIAS epilogue (fp32 bias) is added in both epilogues after
 * alpha * acc + beta * C.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>
#include <cmath>

#include "gs_kernels.h"
#include "gs_problem.h"
#include "gs_ptx.cuh"
#include "gs_smem_limit.cuh"
#include "sgemm_simt_config.h"

namespace {

enum copy_mode { COPY_VEC16 = 0, COPY_ROW4 = 1, COPY_COL4 = 2, COPY_KVEC16 = 3 };

/* Sets of copy modes (bit 1 << copy_mode) that a launcher instantiates
 * kernels for; a tile leaves out the modes it is never chosen with. */
enum {
    MODES_MN = 1 << COPY_VEC16 | 1 << COPY_ROW4, /* operand contiguous along m/n */
    MODES_K4 = 1 << COPY_COL4,                    /* along k, 4-byte copies only */
    MODES_K = 1 << COPY_COL4 | 1 << COPY_KVEC16,  /* along k, 16-byte when aligned */
    MODES_NO_K4 = MODES_MN | 1 << COPY_KVEC16,    /* no 4-byte transposing copies */
    MODES_ALL4 = MODES_MN | MODES_K4,
    MODES_ALL = MODES_MN | MODES_K
};

/* k-contiguous copies take this many consecutive k per row: 32 bytes, one
 * sector, and with the 4-float padding 8 k-rows cover the 32 banks. */
constexpr int COL4_K = 8;

/* KVEC16 loads this many consecutive k of one row per thread (one LDG.128),
 * KVEC_LANES lanes covering one 32-byte sector of a row. */
constexpr int KVEC = 4;
constexpr int KVEC_LANES = 2;
constexpr int KVEC_SPAN = KVEC * KVEC_LANES;

/* Consecutive linear block ids walk down GROUP_M tile-rows before moving to
 * the next tile-column, so the blocks resident at one time share A rows and
 * B columns in L2 instead of streaming a full row of tiles each. */
constexpr int GROUP_M = 8;

/* Limit of grid.y and grid.z. */
constexpr int64_t MAX_GRID_Y = 65535;

struct sgemm_params {
    const float *A;
    const float *B;
    float *C;
    int m, n, k;
    int tiles_m, tiles_n;
    int64_t lda, ldb, ldc;
    int64_t batch, stride_a, stride_b, stride_c;
    float alpha, beta;               /* host pointer mode */
    const float *alpha_ptr, *beta_ptr; /* device pointer mode, else null */
    int c_vec4;                      /* C, ldc and stride_c allow float4 */
    const float *bias;               /* cublasLt BIAS epilogue: m floats, or null */
    /* Split K (stream-K, batch 1 only): `ctas` CTAs share the tiles*k_tiles
     * units (one block tile times one k-tile) in contiguous runs; each run
     * inside one tile (a segment) leaves a column-major BLOCK_M x BLOCK_N
     * fp32 partial tile in `partials`, and a second kernel sums them. */
    float *partials;
    int ctas;
    int k_tiles;
};

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

/* Rows r..r+3 (rows_in of them inside C, all four when >= 4) of one column
 * of C: v = alpha * (sum over k) on entry; then beta * C (C never read when
 * beta == 0), then the bias of each row, and the store. */
__device__ __forceinline__ void store_c4(float *cp, float (&v)[4], int rows_in, bool vec4,
                                         float beta, const float *bias)
{
    if (vec4 && rows_in >= 4) {
        float4 *c4 = reinterpret_cast<float4 *>(cp);
        if (beta != 0.0f) {
            const float4 old = *c4;
            v[0] = fmaf(beta, old.x, v[0]);
            v[1] = fmaf(beta, old.y, v[1]);
            v[2] = fmaf(beta, old.z, v[2]);
            v[3] = fmaf(beta, old.w, v[3]);
        }
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

/* The split kernel's main loop, the same pipeline as sgemm_warptile's
 * (which keeps its own copy, see there) over a range of k-tiles:
 * acc = the product of the block tile at (m0, n0) of batch b over the
 * kt_count k-tiles from k-tile kt0 on. Starts and ends with no cp.async
 * group holding copies still in flight into a stage that is read later;
 * the caller must barrier before the shared memory is written again. */
template <class Cfg, int A_MODE, int B_MODE, bool STREAMED_A, bool STREAMED_B>
__device__ __forceinline__ void tile_product(const sgemm_params &prm, shared_storage<Cfg> &smem,
                                             int64_t b, int m0, int n0, int kt0, int kt_count,
                                             int frag_m, int frag_n,
                                             float (&acc)[Cfg::THREAD_M][Cfg::THREAD_N])
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
            issue_tile(s, k_rem - s * BK);
            store_staged(s);
        }
        cp_async_commit_group();
    }

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
            issue_tile(write_stage, k_rem - k_next * BK);
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
}

/* This lane's first 4-vector inside the block tile; vector v of the A (B)
 * fragment is LANES_M*4 (LANES_N*4) further. */
template <class Cfg>
__device__ __forceinline__ void lane_fragment(int &frag_m, int &frag_n)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    frag_m = (warp % Cfg::WARPS_M) * Cfg::WARP_M + (lane % Cfg::LANES_M) * 4;
    frag_n = (warp / Cfg::WARPS_M) * Cfg::WARP_N + (lane / Cfg::LANES_M) * 4;
}

/* One block per (block tile, batch): the whole k range, then alpha, beta
 * and (HAS_BIAS) the bias straight into C. Its main loop is written out
 * here rather than shared with the split kernel through tile_product: the
 * shared version compiled to a different schedule and register allocation
 * (same instruction counts) that measured 2-4% slower on the TT layouts
 * (H200, 1024^3..4096^3); this way the unsplit kernels' SASS is the tuned
 * one, instruction for instruction. The bias is a compile-time choice for
 * the same reason. */
template <class Cfg, int A_MODE, int B_MODE, bool HAS_BIAS>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS_PER_SM)
sgemm_warptile(const sgemm_params prm)
{
    constexpr int BM = Cfg::BLOCK_M, BN = Cfg::BLOCK_N, BK = Cfg::BLOCK_K;
    constexpr int STAGES = Cfg::STAGES;
    constexpr int TM = Cfg::THREAD_M, TN = Cfg::THREAD_N;
    constexpr int VM = TM / 4, VN = TN / 4; /* float4 vectors per fragment */
    using copier_a = tile_copier<A_MODE, BM, BK, Cfg::A_LD, Cfg::THREADS>;
    using copier_b = tile_copier<B_MODE, BN, BK, Cfg::B_LD, Cfg::THREADS>;

    extern __shared__ float4 smem_raw[];
    shared_storage<Cfg> &smem = *reinterpret_cast<shared_storage<Cfg> *>(smem_raw);

    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int warp_m0 = (warp % Cfg::WARPS_M) * Cfg::WARP_M;
    const int warp_n0 = (warp / Cfg::WARPS_M) * Cfg::WARP_N;
    /* Offsets of this lane's first 4-vector inside the block tile; vector v
     * of the A (B) fragment is LANES_M*4 (LANES_N*4) further. */
    const int frag_m = warp_m0 + (lane % Cfg::LANES_M) * 4;
    const int frag_n = warp_n0 + (lane / Cfg::LANES_M) * 4;

    int tm, tn;
    block_tile(blockIdx.x, prm.tiles_m, prm.tiles_n, tm, tn);
    const int m0 = tm * BM, n0 = tn * BN;

    const float alpha = prm.alpha_ptr ? *prm.alpha_ptr : prm.alpha;
    const float beta = prm.beta_ptr ? *prm.beta_ptr : prm.beta;
    /* alpha == 0 (or k == 0) leaves C = beta*C: A and B are not read. */
    const int k_tiles = alpha == 0.0f ? 0 : (prm.k + BK - 1) / BK;

    /* Batches span grid.y and grid.z (grid.y alone stops at 65535). A loop
     * over batches inside the kernel would cost the registers that keep the
     * 128x128 tile free of spills. */
    const int64_t b = (int64_t)blockIdx.z * MAX_GRID_Y + blockIdx.y;
    if (b >= prm.batch)
        return;
    copier_a ca(prm.A + b * prm.stride_a, prm.lda, m0, prm.m, tid);
    copier_b cb(prm.B + b * prm.stride_b, prm.ldb, n0, prm.n, tid);
    constexpr bool A_STAGED = A_MODE == COPY_KVEC16, B_STAGED = B_MODE == COPY_KVEC16;

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
        if (s < k_tiles) {
            issue_tile(s, prm.k - s * BK);
            store_staged(s);
        }
        cp_async_commit_group();
    }

    float acc[TM][TN];
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
    for (int kt = 0; kt < k_tiles; ++kt) {
        /* Tile kt+STAGES-1 refills the stage of tile kt-1: every warp read
         * its last fragment of that stage before the barrier that ended
         * tile kt-1. */
        const int k_next = kt + STAGES - 1;
        const bool refill = k_next < k_tiles;
        if (refill)
            issue_tile(write_stage, prm.k - k_next * BK);
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
                    if (beta != 0.0f) {
                        const float4 old = *cp;
                        v[0] = fmaf(beta, old.x, v[0]);
                        v[1] = fmaf(beta, old.y, v[1]);
                        v[2] = fmaf(beta, old.z, v[2]);
                        v[3] = fmaf(beta, old.w, v[3]);
                    }
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

/* Split K, first kernel: CTA blockIdx.x walks its run of units (see
 * unit_begin) segment by segment and stores each segment's partial tile,
 * column-major BLOCK_M x BLOCK_N, into slot `cta + tile`. Whole tiles are
 * stored, edge rows and columns included (they hold zeros): every store is
 * a full float4 and the reduction reads only what lies inside C. */
template <class Cfg, int A_MODE, int B_MODE>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS_PER_SM)
sgemm_warptile_streamk(const sgemm_params prm)
{
    constexpr int BM = Cfg::BLOCK_M, BN = Cfg::BLOCK_N;
    constexpr int TM = Cfg::THREAD_M, TN = Cfg::THREAD_N;
    constexpr int VM = TM / 4, VN = TN / 4;

    extern __shared__ float4 smem_raw[];
    shared_storage<Cfg> &smem = *reinterpret_cast<shared_storage<Cfg> *>(smem_raw);

    /* alpha == 0: the reduction writes beta*C (+ bias) without partials. */
    const float alpha = prm.alpha_ptr ? *prm.alpha_ptr : prm.alpha;
    if (alpha == 0.0f)
        return;

    int frag_m, frag_n;
    lane_fragment<Cfg>(frag_m, frag_n);

    /* units < 2^31 (make_plan) */
    const int64_t units = (int64_t)prm.tiles_m * prm.tiles_n * prm.k_tiles;
    int u = (int)unit_begin(blockIdx.x, units, prm.ctas);
    const int u_end = (int)unit_begin(blockIdx.x + 1, units, prm.ctas);
    while (u < u_end) {
        const int t = u / prm.k_tiles;
        const int kt0 = u - t * prm.k_tiles;
        const int count = min(u_end - u, prm.k_tiles - kt0);
        const int tm = t % prm.tiles_m, tn = t / prm.tiles_m;

        float acc[TM][TN];
        tile_product<Cfg, A_MODE, B_MODE, true, false>(prm, smem, 0, tm * BM, tn * BN, kt0, count,
                                                       frag_m, frag_n, acc);

        /* LANES_M lanes store LANES_M*16 contiguous bytes of one column;
         * .cg: the partials are read once, by another SM, from L2. */
        float *slot = prm.partials + (int64_t)(blockIdx.x + t) * (BM * BN) +
                      (int64_t)frag_n * BM + frag_m;
#pragma unroll
        for (int vn = 0; vn < VN; ++vn)
#pragma unroll
            for (int jj = 0; jj < 4; ++jj)
#pragma unroll
                for (int vm = 0; vm < VM; ++vm) {
                    const int j = vn * 4 + jj;
                    __stcg(reinterpret_cast<float4 *>(slot + (vn * Cfg::LANES_N * 4 + jj) * BM +
                                                      vm * Cfg::LANES_M * 4),
                           make_float4(acc[vm * 4 + 0][j], acc[vm * 4 + 1][j],
                                       acc[vm * 4 + 2][j], acc[vm * 4 + 3][j]));
                }
        u += count;
        if (u < u_end) {
            /* The next segment's prologue refills stages other warps may
             * still be reading fragments from. */
            cp_async_wait_group<0>();
            __syncthreads();
        }
    }
}

/* The split-K reduction's block: REDUCE_VECS consecutive 4-row vectors of
 * a tile (a warp: 512 contiguous bytes of a slot, one or more columns)
 * times REDUCE_RUNS runs of slots. */
constexpr int REDUCE_VECS = 32;
constexpr int REDUCE_RUNS = 8;
constexpr int REDUCE_THREADS = REDUCE_VECS * REDUCE_RUNS;

/* Split K, second kernel: the partial slots of a tile are cut into
 * REDUCE_RUNS runs of consecutive slots; thread (x, j) sums run j of its 4
 * rows of one column in slot order, and thread (x, 0) then adds the runs in
 * run order and applies alpha, beta and bias. The order is fixed by the
 * problem and the grid, so every call gives the same bits.
 * Why runs: with one running sum per thread, a tile of many slots was one
 * long chain of dependent loads on a few SMs (1 x 1 x 131072: 512 slots of
 * one 64x64 tile, 1024 threads) and each partial was added to a sum ~20x
 * its size; runs spread the loads over REDUCE_RUNS times the threads and
 * shorten the chain (a host model of the two orders puts the median error
 * of that dot product ~1.5x lower; bench/NOTES.md). */
template <class Cfg>
__global__ void __launch_bounds__(REDUCE_THREADS)
sgemm_splitk_reduce(const sgemm_params prm)
{
    constexpr int BM = Cfg::BLOCK_M, BN = Cfg::BLOCK_N;
    constexpr int ROW_VECS = BM / 4;
    constexpr int64_t PER_TILE = (int64_t)ROW_VECS * BN;
    static_assert(PER_TILE % REDUCE_VECS == 0, "a block's vectors lie in one tile");
    __shared__ float4 run_sum[REDUCE_RUNS][REDUCE_VECS];
    const int x = threadIdx.x, j = threadIdx.y;
    const int64_t idx = (int64_t)blockIdx.x * REDUCE_VECS + x;
    const int t = (int)(idx / PER_TILE); /* the same for the whole block */
    if (t >= prm.tiles_m * prm.tiles_n)
        return;
    const int in_tile = (int)(idx - t * PER_TILE);
    const int c = in_tile / ROW_VECS, r = (in_tile % ROW_VECS) * 4;
    const int row = (t % prm.tiles_m) * BM + r, col = (t / prm.tiles_m) * BN + c;
    const bool inside = row < prm.m && col < prm.n;

    const float alpha = prm.alpha_ptr ? *prm.alpha_ptr : prm.alpha;
    const float beta = prm.beta_ptr ? *prm.beta_ptr : prm.beta;
    const int64_t units = (int64_t)prm.tiles_m * prm.tiles_n * prm.k_tiles;
    const int64_t first = (int64_t)t * prm.k_tiles;
    const int g_lo = cta_of_unit(first, units, prm.ctas);
    const int slots = cta_of_unit(first + prm.k_tiles - 1, units, prm.ctas) - g_lo + 1;
    const int run_len = (slots + REDUCE_RUNS - 1) / REDUCE_RUNS;
    const int runs = (slots + run_len - 1) / run_len;
    if (inside && alpha != 0.0f && j < runs) {
        const int s_lo = j * run_len, s_hi = min(s_lo + run_len, slots);
        const float4 *slot = reinterpret_cast<const float4 *>(
            prm.partials + (int64_t)(g_lo + t + s_lo) * (BM * BN) + c * BM + r);
        float4 s = __ldcg(slot);
        /* unrolled so that several independent loads are in flight */
#pragma unroll 8
        for (int g = s_lo + 1; g < s_hi; ++g) {
            slot += BM * BN / 4;
            const float4 v = __ldcg(slot);
            s.x += v.x;
            s.y += v.y;
            s.z += v.z;
            s.w += v.w;
        }
        run_sum[j][x] = s;
    }
    __syncthreads();
    if (!inside || j != 0)
        return;
    float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (alpha != 0.0f) {
        float4 s = run_sum[0][x];
        for (int jj = 1; jj < runs; ++jj) {
            const float4 u = run_sum[jj][x];
            s.x += u.x;
            s.y += u.y;
            s.z += u.z;
            s.w += u.w;
        }
        v[0] = alpha * s.x;
        v[1] = alpha * s.y;
        v[2] = alpha * s.z;
        v[3] = alpha * s.w;
    }
    store_c4(prm.C + (int64_t)col * prm.ldc + row, v, prm.m - row, prm.c_vec4, beta,
             prm.bias ? prm.bias + row : nullptr);
}

/* 16-byte copies need every (batch, column) start 16-byte aligned. */
bool vec4_ok(const void *base, int64_t ld, int64_t batch, int64_t stride)
{
    return gs_aligned16(base) && ld % 4 == 0 && (batch == 1 || stride % 4 == 0);
}

/* The kernels of one tile configuration and pair of copy modes. */
enum kernel_variant { KV_PLAIN, KV_BIAS, KV_SPLIT };

template <class Cfg, int A_MODE, int B_MODE, int KV>
constexpr void (*kernel_of())(sgemm_params)
{
    if constexpr (KV == KV_SPLIT)
        return sgemm_warptile_streamk<Cfg, A_MODE, B_MODE>;
    else
        return sgemm_warptile<Cfg, A_MODE, B_MODE, KV == KV_BIAS>;
}

/* The dynamic shared-memory limit of one kernel, raised once per device. */
template <class Cfg, int A_MODE, int B_MODE, int KV>
cudaError_t ensure_smem_limit(int device)
{
    static std::atomic<uint64_t> done{0};
    if (Cfg::SMEM_BYTES <= 48 * 1024)
        return cudaSuccess;
    return gs_smem_limit_once(done, device, Cfg::SMEM_BYTES, kernel_of<Cfg, A_MODE, B_MODE, KV>());
}

template <class Cfg, int A_MODE, int B_MODE, int KV>
cudaError_t launch_kernel(const sgemm_params &prm, dim3 grid, int device, cudaStream_t stream)
{
    const cudaError_t err = ensure_smem_limit<Cfg, A_MODE, B_MODE, KV>(device);
    if (err != cudaSuccess)
        return err;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = grid;
    lc.blockDim = dim3(Cfg::THREADS, 1, 1);
    lc.dynamicSmemBytes = Cfg::SMEM_BYTES;
    lc.stream = stream;
    return cudaLaunchKernelEx(&lc, kernel_of<Cfg, A_MODE, B_MODE, KV>(), prm);
}

/* Non-split: one block per (tile, batch). Split: prm.ctas blocks of the
 * stream-K kernel, then the reduction on the same stream. If the reduction
 * fails to launch, the first kernel has written only the workspace, so the
 * caller's fallback to cuBLAS still finds C as it was. */
template <class Cfg, int A_MODE, int B_MODE, bool SPLIT>
cudaError_t launch_modes(const sgemm_params &prm, int device, cudaStream_t stream)
{
    if constexpr (SPLIT) {
        cudaError_t err = launch_kernel<Cfg, A_MODE, B_MODE, KV_SPLIT>(
            prm, dim3((unsigned)prm.ctas, 1, 1), device, stream);
        if (err != cudaSuccess)
            return err;
        const int64_t vecs = (int64_t)prm.tiles_m * prm.tiles_n * Cfg::BLOCK_M * Cfg::BLOCK_N / 4;
        cudaLaunchConfig_t lr = {};
        lr.gridDim = dim3((unsigned)(vecs / REDUCE_VECS), 1, 1);
        lr.blockDim = dim3(REDUCE_VECS, REDUCE_RUNS, 1);
        lr.stream = stream;
        return cudaLaunchKernelEx(&lr, sgemm_splitk_reduce<Cfg>, prm);
    } else {
        const dim3 grid((unsigned)((int64_t)prm.tiles_m * prm.tiles_n),
                        (unsigned)(prm.batch < MAX_GRID_Y ? prm.batch : MAX_GRID_Y),
                        (unsigned)((prm.batch + MAX_GRID_Y - 1) / MAX_GRID_Y));
        return prm.bias ? launch_kernel<Cfg, A_MODE, B_MODE, KV_BIAS>(prm, grid, device, stream)
                        : launch_kernel<Cfg, A_MODE, B_MODE, KV_PLAIN>(prm, grid, device, stream);
    }
}

template <class Cfg, int A_MODE, int B_MODES, bool SPLIT>
cudaError_t launch_b(const sgemm_params &prm, int b_mode, int device, cudaStream_t stream)
{
    switch (b_mode) {
    case COPY_VEC16:
        if constexpr ((B_MODES & 1 << COPY_VEC16) != 0)
            return launch_modes<Cfg, A_MODE, COPY_VEC16, SPLIT>(prm, device, stream);
        break;
    case COPY_ROW4:
        if constexpr ((B_MODES & 1 << COPY_ROW4) != 0)
            return launch_modes<Cfg, A_MODE, COPY_ROW4, SPLIT>(prm, device, stream);
        break;
    case COPY_COL4:
        if constexpr ((B_MODES & 1 << COPY_COL4) != 0)
            return launch_modes<Cfg, A_MODE, COPY_COL4, SPLIT>(prm, device, stream);
        break;
    default:
        if constexpr ((B_MODES & 1 << COPY_KVEC16) != 0)
            return launch_modes<Cfg, A_MODE, COPY_KVEC16, SPLIT>(prm, device, stream);
        break;
    }
    return cudaErrorInvalidValue;
}

template <class Cfg, int A_MODES, int B_MODES, bool SPLIT>
cudaError_t launch_a(const sgemm_params &prm, int a_mode, int b_mode, int device,
                     cudaStream_t stream)
{
    switch (a_mode) {
    case COPY_VEC16:
        if constexpr ((A_MODES & 1 << COPY_VEC16) != 0)
            return launch_b<Cfg, COPY_VEC16, B_MODES, SPLIT>(prm, b_mode, device, stream);
        break;
    case COPY_ROW4:
        if constexpr ((A_MODES & 1 << COPY_ROW4) != 0)
            return launch_b<Cfg, COPY_ROW4, B_MODES, SPLIT>(prm, b_mode, device, stream);
        break;
    case COPY_COL4:
        if constexpr ((A_MODES & 1 << COPY_COL4) != 0)
            return launch_b<Cfg, COPY_COL4, B_MODES, SPLIT>(prm, b_mode, device, stream);
        break;
    default:
        if constexpr ((A_MODES & 1 << COPY_KVEC16) != 0)
            return launch_b<Cfg, COPY_KVEC16, B_MODES, SPLIT>(prm, b_mode, device, stream);
        break;
    }
    return cudaErrorInvalidValue;
}

/* Copy mode of an operand: `contiguous_mn` says whether op(X) is contiguous
 * along m/n. 16-byte copies need every (batch, column) start 16-byte
 * aligned; k-contiguous operands take them only where `modes` has KVEC16. */
int copy_mode_of(bool contiguous_mn, bool vec4, int modes)
{
    if (contiguous_mn)
        return vec4 ? COPY_VEC16 : COPY_ROW4;
    return vec4 && (modes & 1 << COPY_KVEC16) != 0 ? COPY_KVEC16 : COPY_COL4;
}

enum sgemm_config {
    CFG_256x128x8,
    CFG_128x256x8,
    CFG_128x128x8,
    CFG_128x64x8,
    CFG_64x64x8,
    CFG_COUNT
};

struct cfg_shape {
    int block_m, block_n, min_blocks_per_sm;
};
template <class Cfg>
constexpr cfg_shape shape_of()
{
    return {Cfg::BLOCK_M, Cfg::BLOCK_N, Cfg::MIN_BLOCKS_PER_SM};
}
constexpr cfg_shape CFG_SHAPE[CFG_COUNT] = {
    shape_of<sgemm_cfg_256x128x8>(), shape_of<sgemm_cfg_128x256x8>(),
    shape_of<sgemm_cfg_128x128x8>(), shape_of<sgemm_cfg_128x64x8>(),
    shape_of<sgemm_cfg_64x64x8>()};
/* Split units are k-tiles of this depth in every configuration. */
constexpr int SPLIT_BLOCK_K = sgemm_cfg_256x128x8::BLOCK_K;
static_assert(sgemm_cfg_128x256x8::BLOCK_K == SPLIT_BLOCK_K &&
                  sgemm_cfg_128x128x8::BLOCK_K == SPLIT_BLOCK_K &&
                  sgemm_cfg_64x64x8::BLOCK_K == SPLIT_BLOCK_K,
              "split configurations share one k-tile depth");

/* How a problem runs: the tile configuration and, for split K, the grid. */
struct sgemm_plan {
    sgemm_config cfg;
    int ctas;          /* split: CTAs of the stream-K grid; 0: no split */
    int tiles;         /* split: block tiles of C */
    int k_tiles;       /* split: k-tiles of SPLIT_BLOCK_K */
    size_t workspace;  /* split: bytes, flags included; 0: none */
};

/* Fills the kernel parameters of p for tile config Cfg and launches; A_MODES
 * and B_MODES are the copy modes it has kernels for, CAN_SPLIT whether it
 * has split-K kernels. */
template <class Cfg, int A_MODES, int B_MODES, bool CAN_SPLIT>
cudaError_t sgemm_launch(const gs_problem_t *p, const gs_device_t *d, const sgemm_plan &plan)
{
    sgemm_params prm = {};
    prm.A = static_cast<const float *>(p->A);
    prm.B = static_cast<const float *>(p->B);
    prm.C = static_cast<float *>(p->C);
    prm.m = (int)p->m;
    prm.n = (int)p->n;
    prm.k = (int)p->k;
    prm.tiles_m = (int)((p->m + Cfg::BLOCK_M - 1) / Cfg::BLOCK_M);
    prm.tiles_n = (int)((p->n + Cfg::BLOCK_N - 1) / Cfg::BLOCK_N);
    prm.lda = p->lda;
    prm.ldb = p->ldb;
    prm.ldc = p->ldc;
    prm.batch = p->batch;
    prm.stride_a = p->stride_a;
    prm.stride_b = p->stride_b;
    prm.stride_c = p->stride_c;
    if (p->scalars_on_device) {
        prm.alpha_ptr = static_cast<const float *>(p->alpha);
        prm.beta_ptr = static_cast<const float *>(p->beta);
    } else {
        prm.alpha = *static_cast<const float *>(p->alpha);
        prm.beta = *static_cast<const float *>(p->beta);
    }
    prm.c_vec4 = vec4_ok(p->C, p->ldc, p->batch, p->stride_c);
    prm.bias = static_cast<const float *>(p->bias);

    /* Column-major: op(A) is contiguous along m when A is not transposed,
     * op(B) along n when B is transposed. */
    const int a_mode = copy_mode_of(p->trans_a == GS_OP_N,
                                    vec4_ok(p->A, p->lda, p->batch, p->stride_a), A_MODES);
    const int b_mode = copy_mode_of(p->trans_b == GS_OP_T,
                                    vec4_ok(p->B, p->ldb, p->batch, p->stride_b), B_MODES);
    cudaStream_t stream = static_cast<cudaStream_t>(p->stream);
    if (plan.ctas) {
        if constexpr (CAN_SPLIT) {
            prm.partials = reinterpret_cast<float *>(static_cast<char *>(p->workspace) +
                                                     GS_WS_FLAG_BYTES);
            prm.ctas = plan.ctas;
            prm.k_tiles = plan.k_tiles;
            return launch_a<Cfg, A_MODES, B_MODES, true>(prm, a_mode, b_mode, d->ordinal, stream);
        }
        return cudaErrorInvalidValue;
    }
    return launch_a<Cfg, A_MODES, B_MODES, false>(prm, a_mode, b_mode, d->ordinal, stream);
}

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

extern "C" int gs_sgemm_simt_can_implement(const gs_class_t *p, const gs_device_t *d)
{
    if (!p || !d || !d->present || d->cc_major < 8)
        return 0;
    /* bias: fp32 only (the C type), added after alpha and beta */
    if (p->align_bias && (p->bias_type != GS_DT_F32 || p->align_bias < 4))
        return 0;
    if (p->a_type != GS_DT_F32 || p->b_type != GS_DT_F32 || p->c_type != GS_DT_F32 ||
        p->scalar_type != GS_DT_F32)
        return 0;
    if (p->compute != GS_CT_F32 && p->compute != GS_CT_F32_PEDANTIC)
        return 0;
    if (p->trans_a != GS_OP_N && p->trans_a != GS_OP_T)
        return 0;
    if (p->trans_b != GS_OP_N && p->trans_b != GS_OP_T)
        return 0;
    /* Sizes, rows and tile indices are 32-bit in the kernel (with headroom
     * for a tile past the edge); element offsets are 64-bit. */
    const int64_t size_max = (int64_t)1 << 30, int_max = 0x7fffffff;
    if (p->m < 1 || p->n < 1 || p->k < 0 || p->batch < 1 || p->batch > MAX_GRID_Y * MAX_GRID_Y)
        return 0;
    if (p->m > size_max || p->n > size_max || p->k > size_max)
        return 0;
    const int64_t tiles_m = (p->m + sgemm_cfg_64x64x8::BLOCK_M - 1) / sgemm_cfg_64x64x8::BLOCK_M;
    const int64_t tiles_n = (p->n + sgemm_cfg_64x64x8::BLOCK_N - 1) / sgemm_cfg_64x64x8::BLOCK_N;
    if (tiles_m * tiles_n > int_max)
        return 0;
    if (!ld_ok(p->lda, p->trans_a == GS_OP_N ? p->m : p->k) ||
        !ld_ok(p->ldb, p->trans_b == GS_OP_N ? p->k : p->n) || !ld_ok(p->ldc, p->m))
        return 0;
    if (!gs_class_c_batches_disjoint(p))
        return 0;
    if (!p->align_alpha || !p->align_beta || !p->align_c)
        return 0;
    /* 4-byte aligned (A and B may be NULL: k == 0 reads neither) */
    if ((p->align_a && p->align_a < 4) || (p->align_b && p->align_b < 4) || p->align_c < 4)
        return 0;
    if ((size_t)sgemm_cfg_256x128x8::SMEM_BYTES > d->smem_optin ||
        (size_t)sgemm_cfg_128x256x8::SMEM_BYTES > d->smem_optin ||
        (size_t)sgemm_cfg_128x128x8::SMEM_BYTES > d->smem_optin ||
        (size_t)sgemm_cfg_128x64x8::SMEM_BYTES > d->smem_optin ||
        (size_t)sgemm_cfg_64x64x8::SMEM_BYTES > d->smem_optin)
        return 0;
    return 1;
}

/* A split problem needs p->workspace of gs_sgemm_simt_workspace_bytes:
 * without it nothing is launched and cudaErrorMemoryAllocation returned, so
 * the shim forwards the call to cuBLAS. */
extern "C" int gs_sgemm_simt_run(const gs_problem_t *p, const gs_device_t *d)
{
    if (!p || !gs_sgemm_simt_can_implement(&p->cls, d))
        return (int)cudaErrorInvalidValue;
    const sgemm_plan plan = make_plan(p, device_sm_count(d));
    if (plan.ctas && (!p->workspace || p->workspace_size < plan.workspace ||
                      ((uintptr_t)p->workspace & 15u)))
        return (int)cudaErrorMemoryAllocation;
    switch (plan.cfg) {
    case CFG_256x128x8:
        return (int)sgemm_launch<sgemm_cfg_256x128x8, MODES_256x128_A, MODES_256x128_B,
                                 CAN_SPLIT[CFG_256x128x8]>(p, d, plan);
    case CFG_128x256x8:
        return (int)sgemm_launch<sgemm_cfg_128x256x8, MODES_128x256_A, MODES_128x256_B,
                                 CAN_SPLIT[CFG_128x256x8]>(p, d, plan);
    case CFG_128x128x8:
        return (int)sgemm_launch<sgemm_cfg_128x128x8, MODES_SMALLER, MODES_SMALLER,
                                 CAN_SPLIT[CFG_128x128x8]>(p, d, plan);
    case CFG_128x64x8:
        return (int)sgemm_launch<sgemm_cfg_128x64x8, MODES_SMALLER, MODES_SMALLER,
                                 CAN_SPLIT[CFG_128x64x8]>(p, d, plan);
    default:
        return (int)sgemm_launch<sgemm_cfg_64x64x8, MODES_SMALLER, MODES_SMALLER,
                                 CAN_SPLIT[CFG_64x64x8]>(p, d, plan);
    }
}

extern "C" const char *gs_sgemm_simt_name(const gs_problem_t *p)
{
    gs_device_t d = {};
    const int sm_count = gs_device_query(&d) == 0 && d.present ? d.sm_count : 1;
    const sgemm_plan plan = make_plan(p, sm_count);
    switch (plan.cfg) {
    case CFG_256x128x8:
        return plan.ctas ? "sgemm_warptile_256x128x8_streamk" : "sgemm_warptile_256x128x8";
    case CFG_128x256x8:
        return plan.ctas ? "sgemm_warptile_128x256x8_streamk" : "sgemm_warptile_128x256x8";
    case CFG_128x128x8:
        return plan.ctas ? "sgemm_warptile_128x128x8_streamk" : "sgemm_warptile_128x128x8";
    case CFG_128x64x8: return "sgemm_warptile_128x64x8";
    default: return plan.ctas ? "sgemm_warptile_64x64x8_streamk" : "sgemm_warptile_64x64x8";
    }
}

/* Split problems: the flag bytes (unused: the reduction is a second kernel,
 * ordered by the stream, so no counters) and one partial tile per
 * segment. Same plan as gs_sgemm_simt_run for the same p and device. */
extern "C" size_t gs_sgemm_simt_workspace_bytes(const gs_problem_t *p, const gs_device_t *d)
{
    if (!p || !gs_sgemm_simt_can_implement(&p->cls, d))
        return 0;
    return make_plan(p, device_sm_count(d)).workspace;
}
