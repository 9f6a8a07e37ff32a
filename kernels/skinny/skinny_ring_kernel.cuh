/* The skinny family's shared-memory ring kernel on sm_90 (skinny_ring_tn:
 * TMA ring, mma.sync). The wgmma ring is the sm_90a translation unit,
 * kernels/skinny/skinny_sm90.cu. */
#ifndef GS_SKINNY_RING_KERNEL_CUH
#define GS_SKINNY_RING_KERNEL_CUH

#include "skinny_tn_kernel.cuh"

namespace {

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
/* The consumer warps' main loop: stages 0 .. stages-1 of the ring into acc,
 * each released to the producer once the warp has read it. Mma::run(part,
 * a0..a3, b0, b1) multiplies one 32-byte k step of a row: k16 of 16-bit
 * operands (mma_op), k32 of 8-bit ones (the FP8 decode kernel); the
 * fragments' bytes sit alike, so one addressing serves both. */
template <class Cfg, class Mma>
__device__ __forceinline__ void ring_consume(float (&acc)[Cfg::M_TILES][Cfg::N_TILES][4],
                                             const unsigned char *smem, uint64_t *full,
                                             uint64_t *empty, int warp, int lane, int stages)
{
    constexpr int MT = Cfg::M_TILES, NT = Cfg::N_TILES;
    constexpr int STAGES = Cfg::STAGES, RB = Cfg::ROW_BYTES;
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
        for (int kc = 0; kc < 2; ++kc) { /* two 64-byte chunks: k32 of 16-bit, k64 of 8-bit */
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
                        Mma::run(part, fa[mt][h][0], fa[mt][h][1], fa[mt][h][2], fa[mt][h][3],
                                 fb[nt][2 * h], fb[nt][2 * h + 1]);
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

/* cuBLASLt's A/B scales on the final sums (acc[mt][nt] of lane (g, t) of
 * consumer warp w: rows row0 + w*WARP_M + mt*16 + g (+8), columns nt*8 +
 * 2t (+1)): nothing for 16-bit operands; the FP8 decode unit specializes it
 * for its 8-bit operand pairs (kernels/fp8/fp8_decode_kernel.cuh), with
 * mma_op. */
template <class In> struct ring_scales {
    template <class Cfg>
    static __device__ __forceinline__ void apply(float (&)[Cfg::M_TILES][Cfg::N_TILES][4],
                                                 const skinny_params &, const skinny_scales &,
                                                 int, int, int)
    {
    }
};

template <class Cfg, class In, class Out, bool CLUSTER>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::CTAS_PER_SM)
skinny_ring_tn(const skinny_params prm, const __grid_constant__ CUtensorMap tmap_a,
               const __grid_constant__ CUtensorMap tmap_b, const skinny_scales sc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int MT = Cfg::M_TILES, NT = Cfg::N_TILES, W = Cfg::WARPS;
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
    const int stages = skinny_reads_operands(prm, alpha) ? s_end - s_begin : 0;

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
        ring_consume<Cfg, mma_op<In>>(acc, smem, full, empty, warp, lane, stages);
        ring_scales<In>::template apply<Cfg>(acc, prm, sc, row0, warp, lane);
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

} // namespace

#endif /* GS_SKINNY_RING_KERNEL_CUH */
