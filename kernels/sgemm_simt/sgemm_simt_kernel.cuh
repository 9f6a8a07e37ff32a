/* The SIMT SGEMM family's kernels: the unsplit warp-tiled kernel (its own
 * copy of the mainloop: see there why) and the stream-K split kernel. */
#ifndef GS_SGEMM_SIMT_KERNEL_CUH
#define GS_SGEMM_SIMT_KERNEL_CUH

#include "sgemm_simt_mainloop.cuh"

namespace {

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

} // namespace

#endif /* GS_SGEMM_SIMT_KERNEL_CUH */
