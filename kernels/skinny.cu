/* Skinny GEMM for LLM decode: C (m x n) = alpha * A^T * B + beta * C with
 * A stored k x m (TN: weight row i contiguous along k at A[kk + i*lda]),
 * B k x n (token j contiguous along k at B[kk + j*ldb]), n <= 64 tokens,
 * bf16 or fp16 inputs, fp32 accumulation on mma.sync.m16n8k16, optional
 * bias[row] (the cublasLt BIAS epilogue).
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
 * result is bitwise reproducible, with no atomics. (The sm_90a ring may
 * instead split k over co-resident blocks that meet through the shim's
 * workspace, in the same fixed order: choose_ws_split.)
 *
 * Edges: weight rows past m and tokens past n are clamped to the last valid
 * one (their results are never stored), so the loads need no predicate; a
 * chunk that reaches past k is loaded element by element with zeros, in one
 * tail iteration at most.
 *
 * Two kernels. The register-fed one above (skinny_tn) runs everything on
 * sm_80 and, on sm_90, n <= 8 and every shape whose row blocks would need
 * a cluster split of more than 4 (small m). On sm_90 the rest (n > 8,
 * large m) runs skinny_ring_tn: a producer warp streams 64-wide k stages
 * of weights and tokens into a shared-memory ring with the tensor copy
 * engine, so the bytes in flight per SM no longer compete with the
 * accumulators for registers, and one stage of tokens serves a block of
 * 128 or 256 weight rows instead of 16-32 (the register kernel's token
 * re-reads through L2 cost it up to 2x the weight bytes at n = 64). The
 * choice and its measurements: plan_of and bench/notes-sk.md.
 * On compute capability 9.0 the ring runs as skinny_ring_wg_tn
 * (kernels/skinny_sm90.cu, sm_90a): the same ring with wgmma reading both
 * operands from it, and its own cluster rule (choose_cluster_wg), which
 * also takes the ring to m = 4096 (bench/notes-decode.md, v5).
 *
 * Both kernels launch with programmatic dependent launch on sm_90 when
 * p->pdl asks for it (GEMMSHIM_PDL, on by default): their grid may be set
 * up while the previous kernel of the stream drains, and they touch nothing
 * another grid may write or read (operands, device scalars, C, the bias, the
 * workspace) before griddepcontrol.wait.
 *
 * Epilogue, both kernels: C = alpha * acc + beta * C (+ bias[row], the
 * cublasLt BIAS epilogue), rounded once to the output type; beta == 0 never
 * reads C; k == 0 or alpha == 0 reads neither A nor B.
 */
#include <cuda.h> /* CUtensorMap and the driver enums: header only, no libcuda link */
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>

#include <cooperative_groups.h>

#include "gs_kernels.h"
#include "gs_launch_attrs.cuh"
#include "gs_problem.h"
#include "gs_ptx.cuh"
#include "gs_smem_limit.cuh"
#include "skinny_config.h"
#include "skinny_device.cuh"
#include "skinny_sm90.h"

namespace {

/* Limit of grid.y, which carries the batch. */
constexpr int64_t MAX_GRID_Y = 65535;

/* skinny_params: skinny_config.h (shared with kernels/skinny_sm90.cu). */

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
     * iteration's end + STRIDE - KC >= its end). alpha == 0 reads nothing. */
    const int stride = cluster * WK * KC;
    const int first = (rank * WK + wk) * KC;
    const int whole_chunks = prm.k / CHUNK;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    /* Programmatic dependent launch: read nothing before the grid this one
     * depends on is complete (griddepcontrol.wait is a no-op without the
     * launch attribute). The next grid is not triggered early: the implicit
     * trigger as blocks exit measured 2-3% faster at 4096x{1,8}x4096 (H200,
     * session 9); an early trigger lets its waiting blocks take SMs. (An L2
     * prefetch of the first iterations' weights before the wait, one per
     * lane and load, measured 10-17% slower on H200.) */
    griddepcontrol_wait();
#endif
    const float alpha = prm.alpha_ptr ? *prm.alpha_ptr : prm.alpha;
    const float beta = prm.beta_ptr ? *prm.beta_ptr : prm.beta;
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

/* ---------------------------------------------------------------------------
 * sm_90: the shared-memory ring kernel (configurations in skinny_config.h).
 *
 * Block = WARPS consumer warps (warp w owns rows w*WARP_M .. +WARP_M of the
 * block's BLOCK_M weight rows, all tokens, every k) plus one producer warp.
 * The blocks of a cluster split k: rank r takes a contiguous run of the
 * 64-wide stages. Partial sums meet in distributed shared memory and are
 * added in rank order (bitwise reproducible).
 *
 * Ring protocol: full[s] completes when the producer's arrive.expect_tx
 * came and both boxes of stage s landed (out-of-bounds parts of a box are
 * zero-filled and counted: rows past m, tokens past n and k past its end
 * contribute zeros, so there is no tail code); empty[s] completes when all
 * WARPS consumer warps have read it.
 *
 * Shared layout of a stage: the weights box (BLOCK_M rows of 128 bytes),
 * then the tokens box (N_MAX rows), both with the 128-byte swizzle: the
 * 16-byte chunk c of row r sits at chunk c ^ (r % 8), so the eight row
 * addresses of an ldmatrix (rows r..r+7, one chunk) hit eight distinct
 * bank quads.
 * ------------------------------------------------------------------------- */
template <class Cfg, class In, class Out, bool CLUSTER>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::CTAS_PER_SM)
skinny_ring_tn(const skinny_params prm, const __grid_constant__ CUtensorMap tmap_a,
               const __grid_constant__ CUtensorMap tmap_b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int MT = Cfg::M_TILES, NT = Cfg::N_TILES, W = Cfg::WARPS;
    constexpr int STAGES = Cfg::STAGES, RB = Cfg::ROW_BYTES;
    constexpr int PRODUCER = W; /* warp index of the producer */
    extern __shared__ unsigned char smem_raw[];
    const RingBlock rb = ring_block_setup<Cfg, CLUSTER>(prm, smem_raw, &tmap_a, &tmap_b);
    unsigned char *const smem = rb.smem;
    uint64_t *const full = rb.full, *const empty = rb.empty;
    const int cluster = rb.cluster, rank = rb.rank, b = rb.b, row0 = rb.row0;
    const int s_begin = rb.s_begin, s_end = rb.s_end;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    /* Programmatic dependent launch (plan_of): nothing in global memory is
     * read before the previous grid completed. */
    griddepcontrol_wait();
    __syncthreads(); /* barrier initialisation visible to all */

    const float alpha = prm.alpha_ptr ? *prm.alpha_ptr : prm.alpha;
    const float beta = prm.beta_ptr ? *prm.beta_ptr : prm.beta;
    const int stages = alpha != 0.0f ? s_end - s_begin : 0; /* alpha == 0 reads nothing */

    float acc[MT][NT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                acc[mt][nt][e] = 0.0f;

    if (warp == PRODUCER) {
        if (lane == 0 && stages > 0)
            ring_produce<Cfg>(smem, full, empty, &tmap_a, &tmap_b, stages, s_begin, row0, b);
    } else {
        /* ldmatrix row addresses. Weights (m16 x k16 per x4): lanes 0-7
         * give rows 0-7 at k 0, 8-15 rows 8-15 at k 0, 16-23 rows 0-7 at
         * k 8, 24-31 rows 8-15 at k 8 -> registers a0..a3 of the mma.
         * Tokens (n8 x k32 per x4): lane gives token lane%8 at k
         * 8*(lane/8) -> b0, b1 of k step 0, then of step 1. Every row
         * block starts at a multiple of 8 rows, so row % 8 = lane % 8 in
         * the swizzle. */
        const int x = lane & 7;
        const uint32_t a_row = (uint32_t)((warp * Cfg::WARP_M + x + ((lane >> 3) & 1) * 8) * RB);
        const uint32_t b_row = (uint32_t)(Cfg::A_BYTES + x * RB);
        uint32_t a_col[4], b_col[2]; /* swizzled 16-byte chunk offsets per k16 step / k32 */
#pragma unroll
        for (int ks = 0; ks < 4; ++ks)
            a_col[ks] = (uint32_t)(((2 * ks + (lane >> 4)) ^ x) << 4);
#pragma unroll
        for (int kc = 0; kc < 2; ++kc)
            b_col[kc] = (uint32_t)(((4 * kc + (lane >> 3)) ^ x) << 4);
        for (int s = 0; s < stages; ++s) {
            const int slot = s % STAGES;
            mbarrier_wait_parity(&full[slot], (uint32_t)((s / STAGES) & 1));
            const unsigned char *st = smem + slot * Cfg::STAGE_BYTES;
#pragma unroll
            for (int kc = 0; kc < 2; ++kc) { /* two 32-wide chunks */
                uint32_t fa[MT][2][4], fb[NT][4];
#pragma unroll
                for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        ldmatrix_x4(fa[mt][h], st + a_row + mt * 16 * RB + a_col[2 * kc + h]);
#pragma unroll
                for (int nt = 0; nt < NT; ++nt)
                    ldmatrix_x4(fb[nt], st + b_row + nt * 8 * RB + b_col[kc]);
                /* Each chunk's two mma steps start from zero and are added
                 * to acc with a rounded FADD (see the register kernel). */
#pragma unroll
                for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt) {
                        float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
                        for (int h = 0; h < 2; ++h)
                            mma_op<In>::run(part, fa[mt][h][0], fa[mt][h][1], fa[mt][h][2],
                                            fa[mt][h][3], fb[nt][2 * h], fb[nt][2 * h + 1]);
#pragma unroll
                        for (int e = 0; e < 4; ++e)
                            acc[mt][nt][e] += part[e];
                    }
            }
            __syncwarp(); /* every lane's reads of the stage are done */
            if (lane == 0)
                mbarrier_arrive(&empty[slot]);
        }
    }

    /* Epilogue. acc[mt][nt] of lane (g, t) of consumer warp w holds rows
     * w*WARP_M + mt*16 + g (+8) and columns nt*8 + 2t (+1). */
    Out *C = static_cast<Out *>(prm.C) + (int64_t)b * prm.stride_c;
    auto store = [&](int w, int mt, int nt, int l, const float (&v)[4]) {
        const int row = row0 + w * Cfg::WARP_M + mt * 16 + l / 4, col = nt * 8 + 2 * (l % 4);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int r = row + (e >> 1) * 8, c = col + (e & 1);
            if (r < prm.m && c < prm.n)
                store_c<Out>(prm, C, r, c, v[e], alpha, beta);
        }
    };
    if constexpr (!CLUSTER) {
        if (warp != PRODUCER)
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < NT; ++nt)
                    store(warp, mt, nt, lane, acc[mt][nt]);
    } else {
        cluster_reduce_store<Cfg>(
            smem, warp, lane, rank, cluster,
            [&](int mt, int nt) {
                return make_float4(acc[mt][nt][0], acc[mt][nt][1], acc[mt][nt][2], acc[mt][nt][3]);
            },
            store);
    }
#else
    __trap(); /* sm_90 only; the host never launches it elsewhere */
#endif
}

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

/* The wgmma ring (kernels/skinny_sm90.cu) runs in place of the mma.sync
 * ring on compute capability 9.0 (sm_90a code). Developer knobs,
 * GEMMSHIM_DEV_SKINNY_* (README), set once by the family before its first
 * call (kernels/skinny_family.c, gs_skinny_set_knobs), for A/B measurements
 * with bench_ab: wg 0 keeps the mma.sync ring and its plan; ck = c forces
 * the wgmma ring with clusters of c for every n > 8 (0: the plan's); ws = s
 * the workspace split of s for every n > 8 (0: the plan's). */
struct wg_knobs {
    int mode, ck, ws;
};
wg_knobs wg_knob_values = {1, 0, 0};
const wg_knobs &wg_env()
{
    return wg_knob_values;
}
bool wg_on(const gs_device_t *d)
{
    return d->cc_major == 9 && d->cc_minor == 0 && wg_env().mode >= 1;
}

/* What the host needs of a configuration of either kernel. */
struct cfg_shape {
    int block_m;     /* weight rows per block */
    int k_span;      /* k per iteration (register kernel) or stage (ring) of a block */
    int per_sm;      /* blocks per SM the configuration is built for */
    int smem_bytes;  /* dynamic shared memory (ring) */
    int tile_bytes;  /* a block's fragment-ordered fp32 partial tile (ring; workspace split) */
};
template <class Cfg> constexpr cfg_shape reg_shape_of()
{
    return {Cfg::BLOCK_M, Cfg::WARPS_K * Cfg::WARP_K, Cfg::MIN_BLOCKS_PER_SM, 0, 0};
}
template <class Cfg> constexpr cfg_shape ring_shape_of()
{
    return {Cfg::BLOCK_M, Cfg::STAGE_K, Cfg::CTAS_PER_SM, Cfg::SMEM_BYTES, Cfg::RED_BYTES};
}
cfg_shape reg_shape(n_bucket nb)
{
    switch (nb) {
    case BUCKET_N8: return reg_shape_of<skinny_cfg_n8>();
    case BUCKET_N16: return reg_shape_of<skinny_cfg_n16>();
    case BUCKET_N32: return reg_shape_of<skinny_cfg_n32>();
    default: return reg_shape_of<skinny_cfg_n64>();
    }
}
cfg_shape ring_shape(n_bucket nb)
{
    switch (nb) {
    case BUCKET_N8: /* not chosen (plan_of): the n16 configuration holds it */
    case BUCKET_N16: return ring_shape_of<skinny_ring_n16>();
    case BUCKET_N32: return ring_shape_of<skinny_ring_n32>();
    default: return ring_shape_of<skinny_ring_n64>();
    }
}

/* Blocks a cluster splits k into (sm_90; sm_80 has no clusters). The
 * weights are streamed once whatever the split; a split buys blocks for
 * otherwise idle SMs and costs a pass through distributed shared memory
 * plus a shorter pipeline per block, which measured slower than no split
 * whenever the row blocks alone fill the machine (H200: 4-13% at ck2, worse
 * beyond). So: the largest power of two that keeps all blocks resident in
 * one wave at the configuration's design occupancy, and gives each block at
 * least min_iters iterations (stages). */
constexpr int MIN_ITERS_PER_BLOCK = 4;

int choose_cluster(const gs_problem_t *p, const gs_device_t *d, const cfg_shape &cs, int min_iters)
{
    if (d->cc_major < 9)
        return 1;
    const int64_t row_blocks = (p->m + cs.block_m - 1) / cs.block_m * p->batch;
    const int64_t slots = (int64_t)(d->sm_count > 0 ? d->sm_count : 1) * cs.per_sm;
    int cluster = 1;
    while (cluster < SKINNY_MAX_CLUSTER && row_blocks * cluster * 2 <= slots &&
           p->k >= (int64_t)2 * cluster * cs.k_span * min_iters)
        cluster *= 2;
    return cluster;
}

/* Cluster split of the wgmma ring (H200, bench/notes-decode.md, "v5"):
 * fewer, longer blocks than the register kernel's fill-the-waves rule.
 * The largest power of two (at most SKINNY_RING_MAX_CLUSTER, each block
 * SKINNY_RING_MIN_STAGES_PER_CTA stages or more) that keeps the blocks
 * within the configuration's share of the SMs (SKINNY_WG_CTA_PCT*); 0 (not
 * this kernel) when the blocks then occupy fewer than SKINNY_WG_MIN_CTA_PCT
 * percent of the SMs. */
int choose_cluster_wg(const gs_problem_t *p, const gs_device_t *d, n_bucket nb, const cfg_shape &cs)
{
    const int64_t row_blocks = (p->m + cs.block_m - 1) / cs.block_m * p->batch;
    const int64_t sms = d->sm_count > 0 ? d->sm_count : 1;
    const int pct = nb == BUCKET_N32 ? SKINNY_WG_CTA_PCT_N32 : SKINNY_WG_CTA_PCT;
    int cluster = 1;
    while (cluster < SKINNY_RING_MAX_CLUSTER && row_blocks * cluster * 2 * 100 <= pct * sms &&
           p->k >= (int64_t)2 * cluster * cs.k_span * SKINNY_RING_MIN_STAGES_PER_CTA)
        cluster *= 2;
    if (row_blocks * cluster * 100 < SKINNY_WG_MIN_CTA_PCT * sms)
        return 0;
    return cluster;
}

/* Workspace split of the wgmma ring (split_ws_reduce in skinny_sm90.cu):
 * co-resident blocks, one per SM, meeting through the workspace instead of a
 * cluster. H200, same-run A/B against the cluster plan (bench/NOTES.md,
 * decode v6): 4096x32x4096 0.98 -> 1.02x, 4096x32x14336 0.965 -> 1.01x,
 * 4096x16x14336 0.925 -> 0.97x (splits of 4 instead of clusters of 4 / 4 /
 * 2); 4096x16x4096 1% slower (0.995 vs 1.005: k = 4096 leaves each block
 * 16 stages); n = 64 no faster (16 x 8 blocks: 0.77 vs 0.78x); splits of 2
 * slower than clusters of 2 (6144x32x4096 0.91 vs 0.96x). So: n = 17..32,
 * and n = 9..16 with k >= SKINNY_WS_MIN_K_N16, wherever the cluster plan
 * splits and the largest power-of-two split <= 8 that keeps the blocks
 * within one per SM is at least SKINNY_WS_MIN_SPLIT and the cluster's. */
constexpr int SKINNY_WS_MIN_K_N16 = 8192;
constexpr int SKINNY_WS_MIN_SPLIT = 4;

int choose_ws_split(const gs_problem_t *p, const gs_device_t *d, n_bucket nb, const cfg_shape &cs,
                    int cluster)
{
    if (cluster < 2 || nb == BUCKET_N64 || (nb == BUCKET_N16 && p->k < SKINNY_WS_MIN_K_N16))
        return 0;
    const int64_t slots = (p->m + cs.block_m - 1) / cs.block_m * p->batch;
    if (slots > (int64_t)(GS_WS_FLAG_BYTES / sizeof(int)))
        return 0;
    int s = 8;
    while (s > 1 && slots * s > d->sm_count)
        s /= 2;
    return s >= cluster && s >= SKINNY_WS_MIN_SPLIT ? s : 0;
}

/* What a call runs. */
struct skinny_plan {
    bool ring;   /* the sm_90 ring kernel (else the register kernel) */
    int cluster; /* blocks splitting k */
    bool pdl;    /* programmatic dependent launch */
    bool ws;     /* the split meets through the workspace, not a cluster */
};

/* sm_90 choice between the kernels (H200, bench/notes-sk.md): the ring
 * kernel streams at up to 4.0 TB/s and cuts the token traffic, but a block
 * pays a fixed start (barrier setup, descriptor fetch, pipeline fill) and
 * a cluster split adds a reduction: with splits of 8 it ran 0.47-0.80x
 * cuBLAS where the register kernel ran 0.63-1.22x. It takes n > 8 where
 * the row blocks need a split of at most SKINNY_RING_MAX_CLUSTER (large
 * m); the register kernel takes the rest. Both are launched with
 * programmatic dependent launch where p->pdl asks for it (the call's launch
 * overlaps the previous grid's drain: register kernel 5-9% on 10-us calls,
 * ring 4-8% on 12-20 us calls, session 9). Neither triggers the next grid
 * early nor prefetches weights to L2 before its dependency wait: both
 * measured slower (bench/NOTES.md, session 9). */
skinny_plan plan_of(const gs_problem_t *p, const gs_device_t *d, bool ws_ok = true)
{
    const n_bucket nb = bucket_of(p->n);
    const bool pdl = d->cc_major >= 9 && p->pdl;
    skinny_plan pl = {false, 1, pdl, false};
    const cfg_shape rs = ring_shape(nb);
    if (d->cc_major >= 9 && p->n > skinny_cfg_n8::N_MAX && d->smem_optin >= (size_t)rs.smem_bytes) {
        if (wg_on(d)) {
            const int64_t slots = (p->m + rs.block_m - 1) / rs.block_m * p->batch;
            if (ws_ok && wg_env().ws > 0 && slots <= (int64_t)(GS_WS_FLAG_BYTES / sizeof(int)) &&
                slots * wg_env().ws <= (int64_t)d->sm_count * rs.per_sm)
                return {true, wg_env().ws, pdl, true};
            if (wg_env().ck > 0)
                return {true, std::min(wg_env().ck, SKINNY_MAX_CLUSTER), pdl, false};
            const int c = choose_cluster_wg(p, d, nb, rs);
            const int s = ws_ok ? choose_ws_split(p, d, nb, rs, c) : 0;
            if (s > 0)
                return {true, s, pdl, true};
            if (c > 0)
                return {true, c, pdl, false};
        }
        const int c = choose_cluster(p, d, rs, SKINNY_RING_MIN_STAGES_PER_CTA);
        if (c <= SKINNY_RING_MAX_CLUSTER)
            return {true, c, pdl, false};
    }
    pl.cluster = choose_cluster(p, d, reg_shape(nb), MIN_ITERS_PER_BLOCK);
    return pl;
}

void fill_params(skinny_params &prm, const gs_problem_t *p, int cluster)
{
    prm = skinny_params{};
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
    prm.bias = p->bias;
    prm.bias_type = (int)p->bias_type;
}

template <class Cfg, class In, class Out>
cudaError_t skinny_launch(const gs_problem_t *p, const skinny_plan &pl)
{
    skinny_params prm;
    fill_params(prm, p, pl.cluster);
    const int64_t row_blocks = (p->m + Cfg::BLOCK_M - 1) / Cfg::BLOCK_M;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3((unsigned)(row_blocks * pl.cluster), (unsigned)p->batch, 1);
    lc.blockDim = dim3(Cfg::THREADS, 1, 1);
    lc.dynamicSmemBytes = 0;
    lc.stream = static_cast<cudaStream_t>(p->stream);
    cudaLaunchAttribute attr[2];
    gs_set_launch_attrs(lc, attr, false, pl.cluster, pl.pdl);
    return cudaLaunchKernelEx(&lc, pl.cluster > 1 ? skinny_tn<Cfg, In, Out, true>
                                                  : skinny_tn<Cfg, In, Out, false>,
                              prm);
}

PFN_cuTensorMapEncodeTiled_v12000 get_encode_tiled(void)
{
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(gs_tensor_map_encoder());
}

/* Tensor map of a k-contiguous operand: {k, rows, batch} 16-bit elements,
 * ld and batch stride in elements, boxes of 64 k x box_rows, 128-byte
 * swizzle, zeros out of bounds. */
bool encode_operand(CUtensorMap *map, gs_dtype_t t, const void *base, int64_t k, int64_t rows,
                    int64_t batch, int64_t ld, int64_t bstride, int box_rows)
{
    PFN_cuTensorMapEncodeTiled_v12000 enc = get_encode_tiled();
    if (!enc)
        return false;
    const uint64_t s1 = (uint64_t)ld * 2;
    uint64_t s2 = (uint64_t)bstride * 2;
    if (batch == 1) /* unused: any legal stride */
        s2 = s1 * (uint64_t)rows < (1ull << 40) ? s1 * (uint64_t)rows : s1;
    cuuint64_t dims[3] = {(cuuint64_t)k, (cuuint64_t)rows, (cuuint64_t)batch};
    cuuint64_t strides[2] = {s1, s2};
    cuuint32_t box[3] = {64, (cuuint32_t)box_rows, 1};
    cuuint32_t estr[3] = {1, 1, 1};
    return enc(map, t == GS_DT_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
               3, const_cast<void *>(base), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* cudaErrorNotSupported: the tensor maps could not be made (the caller
 * runs the register kernel instead). */
template <class Cfg, class In, class Out>
cudaError_t ring_launch(const gs_problem_t *p, const gs_device_t *d, const skinny_plan &pl)
{
    CUtensorMap ta, tb;
    memset(&ta, 0, sizeof ta);
    memset(&tb, 0, sizeof tb);
    if (p->k > 0 && (!encode_operand(&ta, p->a_type, p->A, p->k, p->m, p->batch, p->lda,
                                     p->stride_a, Cfg::BLOCK_M) ||
                     !encode_operand(&tb, p->a_type, p->B, p->k, p->n, p->batch, p->ldb,
                                     p->stride_b, Cfg::N_MAX)))
        return cudaErrorNotSupported;
    if (wg_on(d)) {
        skinny_params prm;
        fill_params(prm, p, pl.cluster);
        const skinny_ws ws = {static_cast<int *>(p->workspace),
                              static_cast<unsigned char *>(p->workspace) + GS_WS_FLAG_BYTES};
        const int64_t row_blocks = (p->m + Cfg::BLOCK_M - 1) / Cfg::BLOCK_M;
        return (cudaError_t)gs_skinny_wg_launch(
            &prm, &ta, &tb, Cfg::N_MAX, Cfg::BLOCK_M, p->a_type == GS_DT_F16, p->c_type == GS_DT_F32,
            (unsigned)(row_blocks * pl.cluster), (unsigned)p->batch, pl.cluster,
            pl.ws ? &ws : nullptr, pl.pdl ? 1 : 0, p->stream, d->ordinal);
    }
    auto k_plain = skinny_ring_tn<Cfg, In, Out, false>;
    auto k_cluster = skinny_ring_tn<Cfg, In, Out, true>;
    static std::atomic<uint64_t> smem_done{0};
    if (const cudaError_t e = gs_smem_limit_once(smem_done, d->ordinal, Cfg::SMEM_BYTES, k_plain, k_cluster))
        return e;
    skinny_params prm;
    fill_params(prm, p, pl.cluster);
    const int64_t row_blocks = (p->m + Cfg::BLOCK_M - 1) / Cfg::BLOCK_M;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3((unsigned)(row_blocks * pl.cluster), (unsigned)p->batch, 1);
    lc.blockDim = dim3(Cfg::THREADS, 1, 1);
    lc.dynamicSmemBytes = Cfg::SMEM_BYTES;
    lc.stream = static_cast<cudaStream_t>(p->stream);
    cudaLaunchAttribute attr[2];
    gs_set_launch_attrs(lc, attr, false, pl.cluster, pl.pdl);
    return cudaLaunchKernelEx(&lc, pl.cluster > 1 ? k_cluster : k_plain, prm, ta, tb);
}

template <class In, class Out>
cudaError_t launch_bucket(const gs_problem_t *p, const gs_device_t *d, const skinny_plan &plan)
{
    skinny_plan pl = plan;
    const n_bucket nb = bucket_of(p->n);
    if (pl.ring) {
        cudaError_t e;
        switch (nb) {
        case BUCKET_N8: /* not chosen (plan_of): the n16 configuration holds it */
        case BUCKET_N16: e = ring_launch<skinny_ring_n16, In, Out>(p, d, pl); break;
        case BUCKET_N32: e = ring_launch<skinny_ring_n32, In, Out>(p, d, pl); break;
        default: e = ring_launch<skinny_ring_n64, In, Out>(p, d, pl); break;
        }
        if (e != cudaErrorNotSupported)
            return e;
        /* no tensor maps for these operands: the register kernel */
        pl = {false, choose_cluster(p, d, reg_shape(nb), MIN_ITERS_PER_BLOCK), pl.pdl, false};
    }
    switch (nb) {
    case BUCKET_N8: return skinny_launch<skinny_cfg_n8, In, Out>(p, pl);
    case BUCKET_N16: return skinny_launch<skinny_cfg_n16, In, Out>(p, pl);
    case BUCKET_N32: return skinny_launch<skinny_cfg_n32, In, Out>(p, pl);
    default: return skinny_launch<skinny_cfg_n64, In, Out>(p, pl);
    }
}

cudaError_t skinny_dispatch(const gs_problem_t *p, const gs_device_t *d, const skinny_plan &pl)
{
    const bool out_f32 = p->c_type == GS_DT_F32;
    if (p->a_type == GS_DT_BF16)
        return out_f32 ? launch_bucket<__nv_bfloat16, float>(p, d, pl)
                       : launch_bucket<__nv_bfloat16, __nv_bfloat16>(p, d, pl);
    return out_f32 ? launch_bucket<__half, float>(p, d, pl)
                   : launch_bucket<__half, __half>(p, d, pl);
}

bool is_16bit(gs_dtype_t t) { return t == GS_DT_BF16 || t == GS_DT_F16; }

} // namespace

extern "C" void gs_skinny_set_knobs(int wg, int ck, int ws)
{
    wg_knob_values = wg_knobs{wg, ck, ws};
}

extern "C" int gs_skinny_can_implement(const gs_class_t *p, const gs_device_t *d)
{
    if (!p || !d || !d->present || d->cc_major < 8)
        return 0;
    /* cublasLt BIAS epilogue: one vector of m elements, added after alpha
     * and beta (store_c). */
    if (p->align_bias && p->bias_type != GS_DT_F32 && p->bias_type != GS_DT_F16 &&
        p->bias_type != GS_DT_BF16)
        return 0;
    if (p->align_bias && p->align_bias < gs_dtype_size((gs_dtype_t)p->bias_type))
        return 0;
    if (!is_16bit((gs_dtype_t)p->a_type) || p->b_type != p->a_type ||
        (p->c_type != p->a_type && p->c_type != GS_DT_F32) || p->scalar_type != GS_DT_F32)
        return 0;
    if (!gs_compute_is_f32_accum((gs_compute_t)p->compute))
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
    if (!gs_class_c_batches_disjoint(p))
        return 0;
    if (!p->align_alpha || !p->align_beta || !p->align_c)
        return 0;
    /* 16-byte loads (and bulk copies) of 8 elements at every (batch, row)
     * start (A and B may be NULL: k == 0 reads neither). */
    if ((p->align_a && p->align_a < 16) || (p->align_b && p->align_b < 16) || p->lda % 8 != 0
        || p->ldb % 8 != 0)
        return 0;
    if (p->batch > 1 && (p->stride_a % 8 != 0 || p->stride_b % 8 != 0))
        return 0;
    /* 32-bit row offsets inside a block (see the kernel). */
    if (p->lda > OFFSET_MAX / SKINNY_MAX_BLOCK_M || p->ldb > OFFSET_MAX / GS_SKINNY_N_MAX)
        return 0;
    if (p->align_c < gs_dtype_size((gs_dtype_t)p->c_type))
        return 0;
    return 1;
}

/* Workspace of a plan: the flag bytes (one counter per row block), then per
 * row block and split one fragment-ordered fp32 partial tile. */
size_t ws_bytes_of(const gs_problem_t *p, const skinny_plan &pl)
{
    if (!pl.ws)
        return 0;
    const cfg_shape rs = ring_shape(bucket_of(p->n));
    const size_t slots = (size_t)((p->m + rs.block_m - 1) / rs.block_m) * (size_t)p->batch;
    return (size_t)GS_WS_FLAG_BYTES + slots * (size_t)pl.cluster * (size_t)rs.tile_bytes;
}

extern "C" int gs_skinny_run(const gs_problem_t *p, const gs_device_t *d)
{
    if (!p || !gs_skinny_can_implement(&p->cls, d))
        return (int)cudaErrorInvalidValue;
    skinny_plan pl = plan_of(p, d);
    /* without the workspace it needs, the cluster plan */
    if (pl.ws && (!p->workspace || p->workspace_size < ws_bytes_of(p, pl)))
        pl = plan_of(p, d, false);
    return (int)skinny_dispatch(p, d, pl);
}

extern "C" const char *gs_skinny_name(const gs_problem_t *p, const gs_device_t *dev)
{
    gs_device_t d = {};
    if (dev && dev->present) {
        d = *dev;
    } else {
        d.cc_major = 8; /* no device: name the sm_80 choice */
        d.sm_count = 1;
    }
    const skinny_plan pl = plan_of(p, &d);
    const n_bucket nb = bucket_of(p->n);
    static const char *const in_names[2] = {"bf16", "f16"};
    static const int n_max[BUCKET_COUNT] = {skinny_cfg_n8::N_MAX, skinny_cfg_n16::N_MAX,
                                            skinny_cfg_n32::N_MAX, skinny_cfg_n64::N_MAX};
    /* Per thread: the pointer stays valid until this thread's next call. */
    static thread_local char name[80];
    if (pl.ring) {
        const cfg_shape cs = ring_shape(nb);
        snprintf(name, sizeof name, "skinny_ring_%s%s_n%d_m%d_%s%d", in_names[p->a_type == GS_DT_F16],
                 p->c_type == GS_DT_F32 ? "_f32out" : "", n_max[nb], cs.block_m,
                 pl.ws ? "ws" : "ck", pl.cluster);
    } else {
        snprintf(name, sizeof name, "skinny_tn_%s%s_n%d_m%d_ck%d", in_names[p->a_type == GS_DT_F16],
                 p->c_type == GS_DT_F32 ? "_f32out" : "", n_max[nb], reg_shape(nb).block_m,
                 pl.cluster);
    }
    return name;
}

extern "C" size_t gs_skinny_workspace_bytes(const gs_problem_t *p, const gs_device_t *d)
{
    if (!p || !gs_skinny_can_implement(&p->cls, d))
        return 0;
    return ws_bytes_of(p, plan_of(p, d));
}
