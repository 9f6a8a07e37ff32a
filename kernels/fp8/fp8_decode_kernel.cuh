/* The FP8 decode kernels: the skinny family's two shared-memory rings, run
 * unchanged on 8-bit operands. skinny_ring_tn (mma.sync,
 * kernels/skinny/skinny_ring_kernel.cuh) and skinny_ring_wg_tn (wgmma,
 * kernels/skinny/skinny_ring_wg_kernel.cuh) take an operand type; for
 * fp8_pair the specializations below give them FP8 MMAs and cuBLASLt's A and
 * B scales on the final sums. */
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

/* The 8-bit operand pair of the rings: weights (A) e5m2 if AE5 else e4m3,
 * tokens (B) likewise. */
template <bool AE5, bool BE5> struct fp8_pair {
    using TA = typename std::conditional<AE5, __nv_fp8_e5m2, __nv_fp8_e4m3>::type;
    using TB = typename std::conditional<BE5, __nv_fp8_e5m2, __nv_fp8_e4m3>::type;
};

/* The factors of a lane's final sums, which both rings keep in the m16n8
 * fragment layout: row_of(mt, h) is the row of half h (0: g, 1: g + 8) of
 * m16 block mt, and its n8 tile nt has columns nt*8 + 2 (lane % 4) + {0, 1}.
 * Sum (mt, nt, e) takes sa[mt][e >> 1] * sb[nt][e & 1]: four scale reads
 * per block and tile, not two per sum. False (nothing read) without
 * scales. The rings scale each block's sums before a cluster adds them:
 * a cluster's partial sums of one output all take the same factor. */
template <int MT, int NT, class RowOf>
__device__ __forceinline__ bool fragment_scales(float (&sa)[MT][2], float (&sb)[NT][2],
                                                const skinny_params &prm,
                                                const skinny_scales &sc, int lane, RowOf row_of)
{
    if (!sc.a && !sc.b)
        return false;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            sa[mt][h] = scale_at(sc.a, sc.a_vec, row_of(mt, h), prm.m);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int q = 0; q < 2; ++q)
            sb[nt][q] = scale_at(sc.b, sc.b_vec, nt * 8 + 2 * (lane % 4) + q, prm.n);
    return true;
}

/* Each sum times its row's and column's factors. at(mt, nt, e): the sum of
 * m16 block mt, n8 tile nt, fragment element e (rows +8 for e >= 2,
 * columns +1 for odd e), wherever the ring keeps it. */
template <int MT, int NT, class RowOf, class At>
__device__ __forceinline__ void scale_fragments(const skinny_params &prm, const skinny_scales &sc,
                                                int lane, RowOf row_of, At at)
{
    float sa[MT][2], sb[NT][2];
    if (!fragment_scales(sa, sb, prm, sc, lane, row_of))
        return;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                at(mt, nt, e) *= sa[mt][e >> 1] * sb[nt][e & 1];
}

/* The mma.sync ring with 8-bit operands: one 32-byte k step is k32
 * (m16n8k32). Its loop starts each 64-byte chunk's two steps from zero and
 * adds them to fp32 sums, so partial sums are promoted every 64 of k
 * whether or not the call asked for fast accumulation (cuBLASLt's bar is
 * every 128 or better). */
template <bool AE5, bool BE5> struct mma_op<fp8_pair<AE5, BE5>> {
    static __device__ __forceinline__ void run(float (&d)[4], uint32_t a0, uint32_t a1,
                                               uint32_t a2, uint32_t a3, uint32_t b0,
                                               uint32_t b1)
    {
        mma_m16n8k32_f32_fp8<AE5, BE5>(d, a0, a1, a2, a3, b0, b1);
    }
};

/* Its scales: acc[mt][nt] of lane (g, t) of consumer warp w holds rows
 * row0 + w WARP_M + mt 16 + g (+8) (skinny_ring_kernel.cuh). */
template <bool AE5, bool BE5> struct ring_scales<fp8_pair<AE5, BE5>> {
    template <class Cfg>
    static __device__ __forceinline__ void apply(float (&acc)[Cfg::M_TILES][Cfg::N_TILES][4],
                                                 const skinny_params &prm,
                                                 const skinny_scales &sc, int row0, int warp,
                                                 int lane)
    {
        scale_fragments<Cfg::M_TILES, Cfg::N_TILES>(
            prm, sc, lane,
            [&](int mt, int h) { return row0 + warp * Cfg::WARP_M + mt * 16 + lane / 4 + 8 * h; },
            [&](int mt, int nt, int e) -> float & { return acc[mt][nt][e]; });
    }
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

/* The wgmma ring's scales: register 4 nt + e of m64 block mt of consumer
 * warp w holds row (w/4) WG_ROWS + mt 64 + (w%4) 16 + l/4 (+8 for e >= 2),
 * column 8 nt + 2 (l%4) + (e&1) (skinny_ring_wg_kernel.cuh). */
template <bool AE5, bool BE5> struct wg_ring_scales<fp8_pair<AE5, BE5>> {
    template <class Cfg, int WG_ROWS, class Acc>
    static __device__ __forceinline__ void apply(Acc &acc, const skinny_params &prm,
                                                 const skinny_scales &sc, int row0, int warp,
                                                 int lane)
    {
        scale_fragments<Cfg::M_TILES, Cfg::N_TILES>(
            prm, sc, lane,
            [&](int mt, int h) {
                return row0 + (warp / 4) * WG_ROWS + mt * 64 + (warp % 4) * 16 + lane / 4 + 8 * h;
            },
            [&](int mt, int nt, int e) -> float & { return acc[mt][4 * nt + e]; });
    }
};

} // namespace

#endif /* GS_FP8_DECODE_KERNEL_CUH */
