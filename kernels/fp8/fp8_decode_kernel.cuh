/* The FP8 decode kernels: the skinny family's two shared-memory rings with
 * 8-bit operands and cuBLASLt's A and B scales. fp8_decode_tn: the mma.sync
 * ring (kernels/skinny/skinny_ring_kernel.cuh: TMA producer warp, consumer
 * warps on mma.sync, the cluster's k split reduced in rank order) with an
 * epilogue of its own. The wgmma ring (skinny_ring_wg_tn,
 * kernels/skinny/skinny_ring_wg_kernel.cuh) runs unchanged on fp8_pair
 * operands: the specializations below give it FP8 wgmmas and the scales. */
#ifndef GS_FP8_DECODE_KERNEL_CUH
#define GS_FP8_DECODE_KERNEL_CUH

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <type_traits>

#include "skinny_ring_kernel.cuh"
#include "skinny_ring_wg_kernel.cuh"
#include "fp8_scales.cuh"
#include "fp8_tiles.h"

namespace {

/* The ring's configurations for 8-bit operands, one per n bucket: the
 * skinny family's bf16 ring blocks byte for byte (a 128-byte stage row holds
 * 128 FP8 elements of k), so each block keeps the same bytes of weights in
 * flight. n <= 8 has a ring of its own here (the bf16 family sends it to
 * the register kernel, which has no 8-bit variant). */
using Fp8DecN8 = skinny_ring_cfg<1, 1, 8, 6, 2, 1>;
using Fp8DecN16 = skinny_ring_cfg<2, 1, 8, 6, 2, 1>;
using Fp8DecN32 = skinny_ring_cfg<4, 1, 8, 5, 2, 1>;
using Fp8DecN64 = skinny_ring_cfg<8, 2, 8, 5, 1, 1>;

/* fp8_tiles.h's copy of these (the host plans with it) */
template <class Cfg, int N_MAX, int ROWS, int PER_SM, int SMEM>
constexpr bool decode_cfg_is()
{
    return Cfg::N_MAX == N_MAX && Cfg::BLOCK_M == ROWS && Cfg::CTAS_PER_SM == PER_SM &&
           Cfg::SMEM_BYTES == SMEM && Cfg::STAGE_K == GS_FP8_DECODE_STAGE_K;
}
static_assert(decode_cfg_is<Fp8DecN8, 8, GS_FP8_DECODE_ROWS, 2, GS_FP8_DECODE_SMEM_N8>() &&
                  decode_cfg_is<Fp8DecN16, 16, GS_FP8_DECODE_ROWS, 2, GS_FP8_DECODE_SMEM_N16>() &&
                  decode_cfg_is<Fp8DecN32, 32, GS_FP8_DECODE_ROWS, 2, GS_FP8_DECODE_SMEM_N32>() &&
                  decode_cfg_is<Fp8DecN64, 64, GS_FP8_DECODE_ROWS_N64, 1,
                                GS_FP8_DECODE_SMEM_N64>(),
              "fp8_tiles.h's decode buckets");
static_assert(GS_FP8_DECODE_BUCKETS == 4 && GS_FP8_DECODE_MAX_N == Fp8DecN64::N_MAX,
              "four buckets, the last one's tokens box the family's limit");
static_assert(GS_FP8_DECODE_MAX_CLUSTER <= SKINNY_MAX_CLUSTER,
              "sum_fragments_in_order adds at most SKINNY_MAX_CLUSTER parts");

/* One k32 step of the ring's consumer loop with 8-bit operands (A: the
 * weights' type, B: the tokens'). The loop starts each 64-wide chunk's two
 * steps from zero and adds them to the fp32 sums, so partial sums are
 * promoted every 64 of k whether or not the call asked for fast
 * accumulation (cuBLASLt's bar is every 128 or better). */
template <bool AE5, bool BE5>
struct fp8_mma {
    static __device__ __forceinline__ void run(float (&d)[4], uint32_t a0, uint32_t a1,
                                               uint32_t a2, uint32_t a3, uint32_t b0,
                                               uint32_t b1)
    {
        mma_m16n8k32_f32_fp8<AE5, BE5>(d, a0, a1, a2, a3, b0, b1);
    }
};

/* The 8-bit operand pair of the wgmma ring: weights (A) e5m2 if AE5 else
 * e4m3, tokens (B) likewise. */
template <bool AE5, bool BE5> struct fp8_pair {
    using TA = typename std::conditional<AE5, __nv_fp8_e5m2, __nv_fp8_e4m3>::type;
    using TB = typename std::conditional<BE5, __nv_fp8_e5m2, __nv_fp8_e4m3>::type;
};

/* One 32-byte k step of the wgmma ring: k32 of 8-bit operands. The ring
 * starts each stage's four steps from zero (scale_d) and adds them to fp32
 * sums: promotion every 128 of k, cuBLASLt's bar for fast accumulation off,
 * whatever the call asked. */
template <bool AE5, bool BE5, int N> struct wg_ring_mma<fp8_pair<AE5, BE5>, N> {
    static __device__ __forceinline__ void run(float *d, uint64_t desc_a, uint64_t desc_b,
                                               int scale_d)
    {
        wgmma_m64nNk32_f32_fp8<typename fp8_pair<AE5, BE5>::TA, typename fp8_pair<AE5, BE5>::TB,
                               N>::run(d, desc_a, desc_b, scale_d);
    }
};

/* The final sums times scale_a(row) * scale_b(column), before the ring's
 * epilogue adds alpha and the bias: register 4 nt + e of m64 block mt of
 * consumer warp w holds row (w/4) WG_ROWS + mt 64 + (w%4) 16 + l/4 (+8 for
 * e >= 2), column 8 nt + 2 (l%4) + (e&1) (skinny_ring_wg_kernel.cuh). A
 * cluster's blocks scale their partial sums before the rank-order sum. */
template <bool AE5, bool BE5> struct wg_ring_scales<fp8_pair<AE5, BE5>> {
    template <class Cfg, int WG_ROWS, class Acc>
    static __device__ __forceinline__ void apply(Acc &acc, const skinny_params &prm,
                                                 const skinny_scales &sc, int row0, int warp,
                                                 int lane)
    {
        if (!sc.a && !sc.b)
            return;
#pragma unroll
        for (int mt = 0; mt < Cfg::M_TILES; ++mt)
#pragma unroll
            for (int nt = 0; nt < Cfg::N_TILES; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int r = row0 + (warp / 4) * WG_ROWS + mt * 64 + (warp % 4) * 16 +
                                  lane / 4 + (e >> 1) * 8;
                    const int c = nt * 8 + 2 * (lane % 4) + (e & 1);
                    acc[mt][4 * nt + e] *=
                        scale_at(sc.a, sc.a_vec, r, prm.m) * scale_at(sc.b, sc.b_vec, c, prm.n);
                }
    }
};

/* Block = WARPS consumer warps + one producer warp on BLOCK_M weight rows
 * and all tokens; a cluster's blocks split k (skinny_ring_kernel.cuh).
 * D(r, c) = alpha * (sum * (scale_a(r) * scale_b(c))) + bias(r), rounded
 * once to bf16, as the FP8 tiles compute it (beta is zero: can_implement). */
template <class Cfg, bool AE5, bool BE5, bool CLUSTER>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::CTAS_PER_SM)
fp8_decode_tn(const skinny_params prm, const __grid_constant__ CUtensorMap tmap_a,
              const __grid_constant__ CUtensorMap tmap_b, const skinny_scales sc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int MT = Cfg::M_TILES, NT = Cfg::N_TILES, W = Cfg::WARPS;
    constexpr int PRODUCER = W; /* warp index of the producer */
    extern __shared__ unsigned char smem_raw[];
    const RingBlock rb = ring_block_setup<Cfg, CLUSTER>(prm, smem_raw, &tmap_a, &tmap_b);
    unsigned char *const smem = rb.smem;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    /* programmatic dependent launch: nothing in global memory is read
     * before the previous grid completed */
    griddepcontrol_wait();
    __syncthreads(); /* barrier initialisation visible to all */

    const float alpha = prm.alpha;
    const int stages = alpha != 0.0f ? rb.s_end - rb.s_begin : 0; /* alpha == 0 reads nothing */

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
            ring_produce<Cfg>(smem, rb.full, rb.empty, &tmap_a, &tmap_b, stages, rb.s_begin,
                              rb.row0, 0);
    } else {
        ring_consume<Cfg, fp8_mma<AE5, BE5>>(acc, smem, rb.full, rb.empty, warp, lane, stages);
    }

    /* acc[mt][nt] of lane (g, t) of consumer warp w holds rows
     * w*WARP_M + mt*16 + g (+8) and columns nt*8 + 2t (+1) */
    __nv_bfloat16 *const C = static_cast<__nv_bfloat16 *>(prm.C);
    const __nv_bfloat16 *const bias = static_cast<const __nv_bfloat16 *>(prm.bias);
    auto store = [&](int w, int mt, int nt, int l, const float (&v)[4]) {
        const int row = rb.row0 + w * Cfg::WARP_M + mt * 16 + l / 4, col = nt * 8 + 2 * (l % 4);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int r = row + (e >> 1) * 8, c = col + (e & 1);
            if (r < prm.m && c < prm.n) {
                const float s =
                    scale_at(sc.a, sc.a_vec, r, prm.m) * scale_at(sc.b, sc.b_vec, c, prm.n);
                float out = alpha * (v[e] * s);
                if (bias)
                    out += __bfloat162float(bias[r]);
                C[r + (int64_t)c * prm.ldc] = __float2bfloat16_rn(out);
            }
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
            smem, warp, lane, rb.rank, rb.cluster,
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

#endif /* GS_FP8_DECODE_KERNEL_CUH */
