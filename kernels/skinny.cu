/* Skinny GEMM for LLM decode: C (m x n) = alpha * A^T * B + beta * C with
 * A stored k x m (TN: weight row i contiguous along k at A[kk + i*lda]),
 * B k x n (token j contiguous along k at B[kk + j*ldb]), n <= 64 tokens,
 * bf16 or fp16 inputs, fp32 accumulation on mma.sync.m16n8k16.
 *
 * Why this shape of kernel: the arithmetic intensity is n FLOP per weight
 * byte, so the time floor is the weight bytes over the memory rate, and the
 * kernel's job is to keep enough 16-byte weight loads in flight on every SM.
 * At n = 16..64 plain fp32 FMA could not keep up with 4 TB/s, hence tensor
 * cores, with the weights as the M operand and the tokens as N.
 *
 * Operands go from global memory straight into mma fragments, no shared
 * memory: lane (g = lane/4, t = lane%4) loads 16 bytes (8 consecutive k) of
 * weight rows g and g+8 and of token g at k offset 8t of a 32-wide chunk.
 * The mma's k order is a free permutation as long as A and B agree, so
 * the chunk's first k16 step uses the low 8 bytes of every load and the
 * second the high 8 bytes: logical k {2t, 2t+1} of a step is physical
 * {8t + 4s, 8t + 4s + 1}, logical {2t+8, 2t+9} is {8t + 4s + 2, 8t + 4s + 3}.
 * Four lanes read 64 contiguous bytes of a row; the weight loads bypass L1
 * and ask L2 for 256-byte blocks, the token loads stay in L1 where the
 * other warps of the block on the same k find them.
 *
 * Filling the machine when m is small: the warps of a block split k (and,
 * on sm_90, the blocks of a cluster split it further); partial sums meet in
 * shared (distributed shared) memory and are added in a fixed order, so the
 * result is bitwise reproducible, with no atomics and no global workspace.
 *
 * Edges: weight rows past m and tokens past n are clamped to the last valid
 * one (their results are never stored), so the loads need no predicate; a
 * chunk that reaches past k is loaded element by element with zeros, in one
 * tail iteration at most.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include <cooperative_groups.h>

#include "gs_kernels.h"
#include "gs_problem.h"
#include "gs_ptx.cuh"
#include "skinny_config.h"

namespace {

/* Limit of grid.y, which carries the batch. */
constexpr int64_t MAX_GRID_Y = 65535;

struct skinny_params {
    const void *A;
    const void *B;
    void *C;
    int m, n, k;
    int64_t lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c;
    int cluster;                       /* blocks of a cluster splitting k (1: none) */
    float alpha, beta;                 /* host pointer mode */
    const float *alpha_ptr, *beta_ptr; /* device pointer mode, else null */
};

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

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(float v) { return v; }
template <class T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half from_float(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ float from_float(float v) { return v; }

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
    const bool no_product = prm.k == 0; /* C = beta*C, even for alpha = inf */
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
            if (r < prm.m && c < prm.n) {
                Out *cp = C + r + (int64_t)c * prm.ldc;
                float out = no_product ? 0.0f : alpha * vals[e];
                if (beta != 0.0f)
                    out = fmaf(beta, to_float(*cp), out);
                *cp = from_float<Out>(out);
            }
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

    const float alpha = prm.alpha_ptr ? *prm.alpha_ptr : prm.alpha;
    const float beta = prm.beta_ptr ? *prm.beta_ptr : prm.beta;

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
     * iteration's end + STRIDE - KC >= its end). alpha == 0 reads nothing. */
    const int stride = cluster * WK * KC;
    const int first = (rank * WK + wk) * KC;
    const int whole_chunks = prm.k / CHUNK;
    int full_iters = 0;
    bool tail = false;
    if (alpha != 0.0f) {
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

bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* Rows, tokens and k positions are 32-bit in the kernel: a row offset
 * (below OFFSET_MAX) plus a k position (below SIZE_MAX_32 plus one
 * iteration) stays below 2^31. */
constexpr int64_t SIZE_MAX_32 = (int64_t)1 << 29;
constexpr int64_t OFFSET_MAX = (int64_t)1 << 30;

constexpr int SKINNY_MAX_BLOCK_M = 128; /* bound for every configuration's BLOCK_M */
static_assert(skinny_cfg_n8::BLOCK_M <= SKINNY_MAX_BLOCK_M && skinny_cfg_n16::BLOCK_M <= SKINNY_MAX_BLOCK_M &&
                  skinny_cfg_n32::BLOCK_M <= SKINNY_MAX_BLOCK_M && skinny_cfg_n64::BLOCK_M <= SKINNY_MAX_BLOCK_M,
              "32-bit row offsets");

enum n_bucket { BUCKET_N8, BUCKET_N16, BUCKET_N32, BUCKET_N64, BUCKET_COUNT };

n_bucket bucket_of(int64_t n)
{
    return n <= skinny_cfg_n8::N_MAX ? BUCKET_N8
           : n <= skinny_cfg_n16::N_MAX ? BUCKET_N16
           : n <= skinny_cfg_n32::N_MAX ? BUCKET_N32 : BUCKET_N64;
}

int block_m_of(n_bucket nb)
{
    switch (nb) {
    case BUCKET_N8: return skinny_cfg_n8::BLOCK_M;
    case BUCKET_N16: return skinny_cfg_n16::BLOCK_M;
    case BUCKET_N32: return skinny_cfg_n32::BLOCK_M;
    default: return skinny_cfg_n64::BLOCK_M;
    }
}

/* k a block covers per iteration (all its warps). */
int block_k_span_of(n_bucket nb)
{
    switch (nb) {
    case BUCKET_N8: return skinny_cfg_n8::WARPS_K * skinny_cfg_n8::WARP_K;
    case BUCKET_N16: return skinny_cfg_n16::WARPS_K * skinny_cfg_n16::WARP_K;
    case BUCKET_N32: return skinny_cfg_n32::WARPS_K * skinny_cfg_n32::WARP_K;
    default: return skinny_cfg_n64::WARPS_K * skinny_cfg_n64::WARP_K;
    }
}

/* Blocks a cluster splits k into (sm_90; sm_80 has no clusters). The
 * weights are streamed once whatever the split; a split buys blocks for
 * otherwise idle SMs and costs a pass through distributed shared memory
 * plus a shorter pipeline per block, which measured slower than no split
 * whenever the row blocks alone fill the machine (H200: 4-13% at ck2, worse
 * beyond). So: the largest power of two that keeps all blocks resident in
 * one wave at the configuration's design occupancy, and gives each block at
 * least MIN_ITERS_PER_BLOCK iterations. */
constexpr int MIN_ITERS_PER_BLOCK = 4;

int blocks_per_sm_of(n_bucket nb)
{
    switch (nb) {
    case BUCKET_N8: return skinny_cfg_n8::MIN_BLOCKS_PER_SM;
    case BUCKET_N16: return skinny_cfg_n16::MIN_BLOCKS_PER_SM;
    case BUCKET_N32: return skinny_cfg_n32::MIN_BLOCKS_PER_SM;
    default: return skinny_cfg_n64::MIN_BLOCKS_PER_SM;
    }
}

int choose_cluster(const gs_problem_t *p, const gs_device_t *d)
{
    if (d->cc_major < 9)
        return 1;
    const n_bucket nb = bucket_of(p->n);
    const int64_t row_blocks = (p->m + block_m_of(nb) - 1) / block_m_of(nb) * p->batch;
    const int64_t slots = (int64_t)(d->sm_count > 0 ? d->sm_count : 1) * blocks_per_sm_of(nb);
    int cluster = 1;
    while (cluster < SKINNY_MAX_CLUSTER && row_blocks * cluster * 2 <= slots &&
           p->k >= (int64_t)2 * cluster * block_k_span_of(nb) * MIN_ITERS_PER_BLOCK)
        cluster *= 2;
    return cluster;
}

template <class Cfg, class In, class Out>
cudaError_t skinny_launch(const gs_problem_t *p, int cluster)
{
    skinny_params prm = {};
    prm.A = p->A;
    prm.B = p->B;
    prm.C = p->C;
    prm.m = (int)p->m;
    prm.n = (int)p->n;
    prm.k = (int)p->k;
    prm.lda = p->lda;
    prm.ldb = p->ldb;
    prm.ldc = p->ldc;
    prm.stride_a = p->stride_a;
    prm.stride_b = p->stride_b;
    prm.stride_c = p->stride_c;
    prm.cluster = cluster;
    if (p->scalars_on_device) {
        prm.alpha_ptr = static_cast<const float *>(p->alpha);
        prm.beta_ptr = static_cast<const float *>(p->beta);
    } else {
        prm.alpha = *static_cast<const float *>(p->alpha);
        prm.beta = *static_cast<const float *>(p->beta);
    }
    const int64_t row_blocks = (p->m + Cfg::BLOCK_M - 1) / Cfg::BLOCK_M;

    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3((unsigned)(row_blocks * cluster), (unsigned)p->batch, 1);
    lc.blockDim = dim3(Cfg::THREADS, 1, 1);
    lc.dynamicSmemBytes = 0;
    lc.stream = static_cast<cudaStream_t>(p->stream);
    cudaLaunchAttribute attr[1];
    if (cluster > 1) {
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = (unsigned)cluster;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        lc.attrs = attr;
        lc.numAttrs = 1;
    }
    return cluster > 1 ? cudaLaunchKernelEx(&lc, skinny_tn<Cfg, In, Out, true>, prm)
                       : cudaLaunchKernelEx(&lc, skinny_tn<Cfg, In, Out, false>, prm);
}

template <class In, class Out>
cudaError_t launch_bucket(const gs_problem_t *p, int cluster)
{
    switch (bucket_of(p->n)) {
    case BUCKET_N8: return skinny_launch<skinny_cfg_n8, In, Out>(p, cluster);
    case BUCKET_N16: return skinny_launch<skinny_cfg_n16, In, Out>(p, cluster);
    case BUCKET_N32: return skinny_launch<skinny_cfg_n32, In, Out>(p, cluster);
    default: return skinny_launch<skinny_cfg_n64, In, Out>(p, cluster);
    }
}

cudaError_t skinny_dispatch(const gs_problem_t *p, int cluster)
{
    const bool out_f32 = p->c_type == GS_DT_F32;
    if (p->a_type == GS_DT_BF16)
        return out_f32 ? launch_bucket<__nv_bfloat16, float>(p, cluster)
                       : launch_bucket<__nv_bfloat16, __nv_bfloat16>(p, cluster);
    return out_f32 ? launch_bucket<__half, float>(p, cluster)
                   : launch_bucket<__half, __half>(p, cluster);
}

bool is_16bit(gs_dtype_t t) { return t == GS_DT_BF16 || t == GS_DT_F16; }

} // namespace

extern "C" int gs_skinny_can_implement(const gs_problem_t *p, const gs_device_t *d)
{
    if (!p || !d || !d->present || d->cc_major < 8)
        return 0;
    if (p->bias) /* bias epilogue not implemented (yet) */
        return 0;
    if (!is_16bit(p->a_type) || p->b_type != p->a_type ||
        (p->c_type != p->a_type && p->c_type != GS_DT_F32) || p->scalar_type != GS_DT_F32)
        return 0;
    if (!gs_compute_is_f32_accum(p->compute))
        return 0;
    if (p->trans_a != GS_OP_T || p->trans_b != GS_OP_N)
        return 0;
    if (p->m < 1 || p->n < 1 || p->n > GS_SKINNY_N_MAX || p->k < 0 || p->batch < 1 ||
        p->batch > MAX_GRID_Y)
        return 0;
    if (p->m > SIZE_MAX_32 || p->k > SIZE_MAX_32)
        return 0;
    /* A is k x m and B k x n in memory (column-major), C m x n. */
    if (p->lda < 1 || p->lda < p->k || p->ldb < 1 || p->ldb < p->k || p->ldc < p->m)
        return 0;
    if (!gs_c_batches_disjoint(p))
        return 0;
    if (!p->alpha || !p->beta || !p->C)
        return 0;
    /* 16-byte loads of 8 elements at every (batch, row) start. */
    if (!aligned16(p->A) || !aligned16(p->B) || p->lda % 8 != 0 || p->ldb % 8 != 0)
        return 0;
    if (p->batch > 1 && (p->stride_a % 8 != 0 || p->stride_b % 8 != 0))
        return 0;
    /* 32-bit row offsets inside a block (see the kernel). */
    if (p->lda > OFFSET_MAX / SKINNY_MAX_BLOCK_M || p->ldb > OFFSET_MAX / GS_SKINNY_N_MAX)
        return 0;
    if ((uintptr_t)p->C % gs_dtype_size(p->c_type) != 0)
        return 0;
    return 1;
}

extern "C" int gs_skinny_run(const gs_problem_t *p, const gs_device_t *d)
{
    if (!gs_skinny_can_implement(p, d))
        return (int)cudaErrorInvalidValue;
    return (int)skinny_dispatch(p, choose_cluster(p, d));
}

extern "C" const char *gs_skinny_name(const gs_problem_t *p)
{
    gs_device_t d = {};
    if (gs_device_query(&d) != 0 || !d.present) {
        d.cc_major = 8; /* no device: name the sm_80 choice */
        d.sm_count = 1;
    }
    const int cluster = choose_cluster(p, &d);
    const n_bucket nb = bucket_of(p->n);
    static const char *const in_names[2] = {"bf16", "f16"};
    static const int n_max[BUCKET_COUNT] = {skinny_cfg_n8::N_MAX, skinny_cfg_n16::N_MAX,
                                            skinny_cfg_n32::N_MAX, skinny_cfg_n64::N_MAX};
    /* Per thread: the pointer stays valid until this thread's next call. */
    static thread_local char name[64];
    snprintf(name, sizeof name, "skinny_tn_%s%s_n%d_m%d_ck%d", in_names[p->a_type == GS_DT_F16],
             p->c_type == GS_DT_F32 ? "_f32out" : "", n_max[nb], block_m_of(nb), cluster);
    return name;
}

extern "C" size_t gs_skinny_workspace_bytes(const gs_problem_t *p, const gs_device_t *d)
{
    (void)p;
    (void)d;
    return 0; /* no split through the workspace (yet) */
}
