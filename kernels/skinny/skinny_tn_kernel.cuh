/* The skinny family's register kernel (skinny_tn, mma.sync, sm_80+):
 * operands straight from global memory into fragments, the k split of a
 * cluster reduced through distributed shared memory (finish_block). Part of
 * the family's sm_80/sm_90 translation unit, kernels/skinny/skinny.cu. */
#ifndef GS_SKINNY_TN_KERNEL_CUH
#define GS_SKINNY_TN_KERNEL_CUH

#include "skinny_config.h"
#include "skinny_device.cuh"

namespace {

/* Limit of grid.y, which carries the batch. */
constexpr int64_t MAX_GRID_Y = 65535;

/* skinny_params: skinny_config.h (shared with kernels/skinny/skinny_sm90.cu). */

template <class In> struct mma_op;
template <> struct mma_op<__nv_bfloat16> {
    static __device__ __forceinline__ void run(float (&d)[4], uint32_t a0, uint32_t a1,
                                               uint32_t a2, uint32_t a3, uint32_t b0,
                                               uint32_t b1)
    {
        mma_m16n8k16_f32_bf16(d, a0, a1, a2, a3, b0, b1);
    }
};
template <> struct mma_op<__half> {
    static __device__ __forceinline__ void run(float (&d)[4], uint32_t a0, uint32_t a1,
                                               uint32_t a2, uint32_t a3, uint32_t b0,
                                               uint32_t b1)
    {
        mma_m16n8k16_f32_f16(d, a0, a1, a2, a3, b0, b1);
    }
};


/* 8 consecutive 16-bit elements of which only the first `valid` (0..7) are
 * inside k: element loads, zeros after. Only the one tail chunk of a warp
 * comes here; the row may end at the allocation's end. */
__device__ __forceinline__ uint4 load_partial8(const void *p, int valid)
{
    const unsigned short *e = static_cast<const unsigned short *>(p);
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const uint32_t lo = 2 * i < valid ? e[2 * i] : 0u;
        const uint32_t hi = 2 * i + 1 < valid ? e[2 * i + 1] : 0u;
        w[i] = lo | hi << 16;
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}


/* One iteration's operands of one lane: K_CHUNKS chunks, each with the two
 * weight rows (g, g+8) of every m16 tile and the token g of every n8 tile. */
template <class Cfg>
struct a_fragments {
    uint4 v[Cfg::K_CHUNKS][Cfg::M_TILES][2];
};
template <class Cfg>
struct b_fragments {
    uint4 v[Cfg::K_CHUNKS][Cfg::N_TILES];
};

/* Index of float4 (slot, wm, mt, nt, lane) of the reduction buffer
 * red[RED_SLOTS][WARPS_M][M_TILES][N_TILES][32]. */
template <class Cfg>
__device__ __forceinline__ int red_index(int slot, int wm, int mt, int nt, int lane)
{
    return (((slot * Cfg::WARPS_M + wm) * Cfg::M_TILES + mt) * Cfg::N_TILES + nt) * 32 + lane;
}

/* The end of every kernel: adds the WARPS_K (and cluster) partial sums of
 * each output in a fixed order, applies alpha and beta once, stores C.
 * red is shared memory of Cfg::RED_BYTES that no warp uses any more. */
template <class Cfg, class Out, bool CLUSTER>
__device__ __forceinline__ void finish_block(float (&acc)[Cfg::M_TILES][Cfg::N_TILES][4],
                                             float4 *red, const skinny_params &prm, int wm,
                                             int wk, int lane, int rank, int cluster,
                                             int row_block, int64_t b, float alpha, float beta)
{
    constexpr int MT = Cfg::M_TILES, NT = Cfg::N_TILES, WK = Cfg::WARPS_K;
    /* Split k inside the block: a tree over the WK warps of each row slice,
     * the upper half storing and the lower half adding, in a fixed order. */
#pragma unroll
    for (int half = WK / 2; half >= 1; half /= 2) {
        if (wk >= half && wk < 2 * half)
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < NT; ++nt)
                    red[red_index<Cfg>(wk - half, wm, mt, nt, lane)] = make_float4(
                        acc[mt][nt][0], acc[mt][nt][1], acc[mt][nt][2], acc[mt][nt][3]);
        __syncthreads();
        if (wk < half)
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < NT; ++nt) {
                    const float4 v = red[red_index<Cfg>(wk, wm, mt, nt, lane)];
                    acc[mt][nt][0] += v.x;
                    acc[mt][nt][1] += v.y;
                    acc[mt][nt][2] += v.z;
                    acc[mt][nt][3] += v.w;
                }
        __syncthreads();
    }

    Out *C = static_cast<Out *>(prm.C) + b * prm.stride_c;
    /* Writes float4 q of the block's fragment-ordered sums [WM][MT][NT][32]:
     * lane l of it holds rows g, g+8 and columns 2t, 2t+1 of its tiles. */
    auto store = [&](int q, float4 v) {
        const int l = q % 32, nt = q / 32 % NT, mt = q / 32 / NT % MT, w = q / 32 / NT / MT;
        const int row = row_block * Cfg::BLOCK_M + w * Cfg::WARP_M + mt * 16 + l / 4;
        const int col = nt * 8 + 2 * (l % 4);
        const float vals[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int r = row + (e >> 1) * 8, c = col + (e & 1);
            if (r < prm.m && c < prm.n)
                store_c<Out>(prm, C, r, c, vals[e], alpha, beta);
        }
    };

    if constexpr (!CLUSTER) {
        if (wk == 0)
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < NT; ++nt)
                    store(((wm * MT + mt) * NT + nt) * 32 + lane,
                          make_float4(acc[mt][nt][0], acc[mt][nt][1], acc[mt][nt][2],
                                      acc[mt][nt][3]));
    } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        /* Split k across the cluster: every block leaves its sums in slot 0
         * (warp wk = 0 read its own slot-0 entries last, so it may overwrite
         * them), then block `rank` adds slice `rank` of all blocks' sums in
         * rank order and stores it. The second cluster barrier keeps every
         * block's shared memory alive until the others have read it. */
        namespace cg = cooperative_groups;
        cg::cluster_group cl = cg::this_cluster();
        if (wk == 0)
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < NT; ++nt)
                    red[red_index<Cfg>(0, wm, mt, nt, lane)] = make_float4(acc[mt][nt][0], acc[mt][nt][1],
                                                           acc[mt][nt][2], acc[mt][nt][3]);
        cl.sync();
        constexpr int Q = Cfg::WARPS_M * MT * NT * 32;
        const int per_rank = (Q + cluster - 1) / cluster;
        const int q_end = min(Q, (rank + 1) * per_rank);
        for (int q = rank * per_rank + (int)threadIdx.x; q < q_end; q += Cfg::THREADS) {
            float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            for (int r = 0; r < cluster; ++r) {
                const float4 *remote = cl.map_shared_rank(red, (unsigned)r);
                const float4 v = remote[q];
                sum.x += v.x;
                sum.y += v.y;
                sum.z += v.z;
                sum.w += v.w;
            }
            store(q, sum);
        }
        cl.sync();
#endif
    }
}

template <class Cfg, class In, class Out, bool CLUSTER>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS_PER_SM)
skinny_tn(const skinny_params prm)
{
    constexpr int MT = Cfg::M_TILES, NT = Cfg::N_TILES, KC = Cfg::K_CHUNKS;
    constexpr int WM = Cfg::WARPS_M, WK = Cfg::WARPS_K, CHUNK = Cfg::CHUNK_K;
    using a_frag_t = a_fragments<Cfg>;
    using b_frag_t = b_fragments<Cfg>;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    if constexpr (CLUSTER) {
        __trap(); /* clusters need sm_90; the host never launches this here */
        return;
    }
#endif
    __shared__ float4 red[Cfg::RED_SLOTS][WM][MT][NT][32];

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    /* Warps of one k range are adjacent, so they load the same tokens at
     * about the same time and L1 serves all but the first. */
    const int wm = warp % WM, wk = warp / WM;
    const int g = lane / 4, t = lane % 4;
    const int cluster = CLUSTER ? prm.cluster : 1;
    const int rank = CLUSTER ? (int)(blockIdx.x % (unsigned)cluster) : 0;
    const int row_block = CLUSTER ? (int)(blockIdx.x / (unsigned)cluster) : (int)blockIdx.x;
    const int64_t b = blockIdx.y;

    /* One 64-bit base per operand and 32-bit element offsets per row
     * (can_implement bounds BLOCK_M*lda and N_MAX*ldb below 2^31): the
     * offsets of all rows cost fewer registers than pointers would. */
    const int row0 = row_block * Cfg::BLOCK_M + wm * Cfg::WARP_M;
    const int row_base = min(row_block * Cfg::BLOCK_M, prm.m - 1);
    const In *A = static_cast<const In *>(prm.A) + b * prm.stride_a + (int64_t)row_base * prm.lda;
    const In *B = static_cast<const In *>(prm.B) + b * prm.stride_b;
    int a_off[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            a_off[mt][h] =
                (min(row0 + mt * 16 + h * 8 + g, prm.m - 1) - row_base) * (int)prm.lda + t * 8;
    int b_off[NT];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
        b_off[nt] = min(nt * 8 + g, prm.n - 1) * (int)prm.ldb + t * 8;

    /* Chunks of k are dealt round robin: iteration i of warp (rank, wk)
     * takes chunks first + i*STRIDE .. + KC-1, so at any time the warps of
     * a cluster read one contiguous stretch of each weight row. An
     * iteration is full when its last chunk ends inside k; only the one
     * after the full ones can be partial (it starts past the last full
     * iteration's end + STRIDE - KC >= its end). alpha == 0 reads nothing
     * (a cublasLtMatmul call aside: skinny_params). */
    const int stride = cluster * WK * KC;
    const int first = (rank * WK + wk) * KC;
    const int whole_chunks = prm.k / CHUNK;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    /* Programmatic dependent launch: read nothing before the grid this one
     * depends on is complete (griddepcontrol.wait is a no-op without the
     * launch attribute). The next grid is not triggered early: the implicit
     * trigger as blocks exit measured 2-3% faster at 4096x{1,8}x4096 (H200,
     * ); an early trigger lets its waiting blocks take SMs. (An L2
     * prefetch of the first iterations' weights before the wait, one per
     * lane and load, measured 10-17% slower on H200.) */
    griddepcontrol_wait();
#endif
    const float alpha = prm.alpha_ptr ? *prm.alpha_ptr : prm.alpha;
    const float beta = prm.beta_ptr ? *prm.beta_ptr : prm.beta;
    int full_iters = 0;
    bool tail = false;
    if (skinny_reads_operands(prm, alpha)) {
        full_iters = whole_chunks >= first + KC ? (whole_chunks - first - KC) / stride + 1 : 0;
        tail = (int64_t)(full_iters * (int64_t)stride + first) * CHUNK < prm.k;
    }

    auto load_a = [&](a_frag_t &f, int chunk0, bool check_k) {
#pragma unroll
        for (int c = 0; c < KC; ++c) {
            const int koff = (chunk0 + c) * CHUNK;
            const int valid = prm.k - koff - t * 8; /* elements of this lane's 8 inside k */
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const In *p = A + (a_off[mt][h] + koff);
                    if (!check_k || valid >= 8)
                        f.v[c][mt][h] = ld_global_nc_na_l2_256_v4(p);
                    else
                        f.v[c][mt][h] = load_partial8(p, max(valid, 0));
                }
        }
    };
    auto load_b = [&](b_frag_t &f, int chunk0, bool check_k) {
#pragma unroll
        for (int c = 0; c < KC; ++c) {
            const int koff = (chunk0 + c) * CHUNK;
            const int valid = prm.k - koff - t * 8;
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                const In *p = B + (b_off[nt] + koff);
                if (!check_k || valid >= 8)
                    f.v[c][nt] = __ldg(reinterpret_cast<const uint4 *>(p));
                else
                    f.v[c][nt] = load_partial8(p, max(valid, 0));
            }
        }
    };

    float acc[MT][NT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                acc[mt][nt][e] = 0.0f;

    /* Step s of a chunk uses words 2s, 2s+1 of each load (see the k
     * permutation at the top of the file). Each iteration's 2*KC steps
     * accumulate from zero into `part`, which is then added to acc with a
     * plain (round-to-nearest) FADD: the tensor cores' fp32 accumulation
     * truncates, and over a chain of hundreds of steps its bias grew the
     * fp32-output error to 5-12x cuBLAS's at k = 4103 (H200); chains of 2*KC
     * steps keep it at the level of an FMA loop. */
    auto multiply = [&](const a_frag_t &fa, const b_frag_t &fb) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
                for (int c = 0; c < KC; ++c)
#pragma unroll
                    for (int s = 0; s < 2; ++s) {
                        const uint4 &a_lo = fa.v[c][mt][0], &a_hi = fa.v[c][mt][1];
                        const uint4 &bb = fb.v[c][nt];
                        mma_op<In>::run(part, s ? a_lo.z : a_lo.x, s ? a_hi.z : a_hi.x,
                                        s ? a_lo.w : a_lo.y, s ? a_hi.w : a_hi.y,
                                        s ? bb.z : bb.x, s ? bb.w : bb.y);
                    }
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    acc[mt][nt][e] += part[e];
            }
    };

    /* Two register buffers for the weights: the loads of iteration i+1 are
     * issued before the mma of iteration i. Tokens come from L1/L2, not
     * DRAM: with PREFETCH_B they are double-buffered too, otherwise (many
     * tokens, where their registers would crowd out weight loads) they are
     * loaded at the start of their own iteration. */
    constexpr bool PB = Cfg::PREFETCH_B;
    a_frag_t fa0, fa1;
    b_frag_t fb0, fb1;
    if (full_iters > 0) {
        load_a(fa0, first, false);
        if (PB)
            load_b(fb0, first, false);
    }
    for (int i = 0; i < full_iters; i += 2) {
        if (i + 1 < full_iters) {
            load_a(fa1, first + (i + 1) * stride, false);
            if (PB)
                load_b(fb1, first + (i + 1) * stride, false);
        }
        if (!PB)
            load_b(fb0, first + i * stride, false);
        multiply(fa0, fb0);
        if (i + 1 >= full_iters)
            break;
        if (i + 2 < full_iters) {
            load_a(fa0, first + (i + 2) * stride, false);
            if (PB)
                load_b(fb0, first + (i + 2) * stride, false);
        }
        if (!PB)
            load_b(PB ? fb1 : fb0, first + (i + 1) * stride, false);
        multiply(fa1, PB ? fb1 : fb0);
    }
    if (tail) {
        load_a(fa0, first + full_iters * stride, true);
        load_b(fb0, first + full_iters * stride, true);
        multiply(fa0, fb0);
    }

    finish_block<Cfg, Out, CLUSTER>(acc, &red[0][0][0][0][0], prm, wm, wk, lane, rank, cluster,
                                    row_block, b, alpha, beta);
}

} // namespace

#endif /* GS_SKINNY_TN_KERNEL_CUH */
