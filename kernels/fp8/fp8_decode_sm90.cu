/* The FP8 decode kernels' launch (kernels/fp8/fp8_decode_kernel.cuh): tensor
 * maps, parameters, and the instantiation for a plan of fp8_family.c (its
 * ring, n bucket, cluster split, A's and B's types). Its own translation
 * unit: the FP8 tiles' (fp8_sm90.cu) compile apart from it. */
#include <cuda.h> /* CUtensorMap and the driver enums: header only, no libcuda link */
#include <cuda_runtime.h>

#include <atomic>
#include <cstring>
#include <stdint.h>

#include "gs_kernels.h"
#include "gs_launch_attrs.cuh"
#include "gs_smem_limit.cuh"
#include "gs_tensor_map.h"

#include "fp8_decode_kernel.cuh"
#include "skinny_fill.cuh"

namespace {

/* The parameters both kernels take: the skinny family's (host scalars,
 * beta a host zero, a bf16 bias: can_implement), and the scales, read on
 * the device. */
void fill(skinny_params &prm, skinny_scales &sc, const gs_problem_t *pr, int cluster)
{
    fill_params(prm, pr, cluster);
    sc.a = static_cast<const float *>(pr->scale_a);
    sc.b = static_cast<const float *>(pr->scale_b);
    sc.a_vec = gs_lt_scale_of(pr->lt_scales, GS_LT_SCALE_A) == GS_SCALE_OUTER_VEC_32F;
    sc.b_vec = gs_lt_scale_of(pr->lt_scales, GS_LT_SCALE_B) == GS_SCALE_OUTER_VEC_32F;
}

/* TMA moves bytes: a stage is one 128-byte swizzle row of k by BLOCK_M
 * weight rows (A stored k x m) and by N_MAX token rows (B stored k x n);
 * rows past m or n and k past its end arrive as zeros. */
template <class Cfg>
bool tensor_maps(CUtensorMap *ta, CUtensorMap *tb, const gs_problem_t *pr)
{
    const CUtensorMapDataType u8 = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    const uint64_t m = (uint64_t)pr->m, n = (uint64_t)pr->n, k = (uint64_t)pr->k;
    return gs_tensor_map_3d(ta, u8, 1, pr->A, k, m, 1, pr->lda, 0, Cfg::STAGE_K, Cfg::BLOCK_M) &&
           gs_tensor_map_3d(tb, u8, 1, pr->B, k, n, 1, pr->ldb, 0, Cfg::STAGE_K, Cfg::N_MAX);
}

/* The kernel: the wgmma ring (skinny_ring_wg_tn on fp8_pair) with WG,
 * else the mma.sync ring; CLUSTER: the k split meets in a cluster. */
template <class Cfg, bool AE5, bool BE5, bool WG, bool CLUSTER>
constexpr auto kernel_of()
{
    if constexpr (WG)
        return &skinny_ring_wg_tn<Cfg, fp8_pair<AE5, BE5>, __nv_bfloat16,
                                  CLUSTER ? SPLIT_CLUSTER : SPLIT_NONE>;
    else
        return &skinny_ring_tn<Cfg, fp8_pair<AE5, BE5>, __nv_bfloat16, CLUSTER>;
}

/* WG: the wgmma ring, else the mma.sync one */
template <class Cfg, bool AE5, bool BE5, bool WG>
int launch(const gs_problem_t *pr, const gs_device_t *d, const gs_fp8_plan_t &pl)
{
    const int64_t row_blocks = (pr->m + Cfg::BLOCK_M - 1) / Cfg::BLOCK_M;
    /* a plan of another call or bucket: n past the tokens box would leave
     * columns unwritten */
    if (pr->n > Cfg::N_MAX || pl.tiles_m != row_blocks || pl.smem_bytes != Cfg::SMEM_BYTES ||
        pl.grid != row_blocks * pl.cluster || (WG && Cfg::WARPS % pl.cluster != 0))
        return (int)cudaErrorInvalidValue;
    auto k_plain = kernel_of<Cfg, AE5, BE5, WG, false>();
    auto k_cluster = kernel_of<Cfg, AE5, BE5, WG, true>();
    static std::atomic<uint64_t> smem_done{0};
    if (const cudaError_t e =
            gs_smem_limit_once(smem_done, d->ordinal, Cfg::SMEM_BYTES, k_plain, k_cluster))
        return (int)e;
    CUtensorMap ta, tb;
    if (!tensor_maps<Cfg>(&ta, &tb, pr))
        return (int)cudaErrorInvalidValue;
    skinny_params prm;
    skinny_scales sc;
    fill(prm, sc, pr, pl.cluster);

    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3((unsigned)pl.grid);
    lc.blockDim = dim3(Cfg::THREADS);
    lc.dynamicSmemBytes = Cfg::SMEM_BYTES;
    lc.stream = static_cast<cudaStream_t>(pr->stream);
    cudaLaunchAttribute attr[2];
    gs_set_launch_attrs(lc, attr, false, pl.cluster, pr->pdl != 0);
    cudaError_t e;
    if constexpr (WG) {
        const skinny_ws none = {nullptr, nullptr};
        e = cudaLaunchKernelEx(&lc, pl.cluster > 1 ? k_cluster : k_plain, prm, ta, tb, none, sc);
    } else {
        e = cudaLaunchKernelEx(&lc, pl.cluster > 1 ? k_cluster : k_plain, prm, ta, tb, sc);
    }
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    return (int)e;
}

template <bool AE5, bool BE5>
int launch_bucket(const gs_problem_t *p, const gs_device_t *d, const gs_fp8_plan_t &pl)
{
    const bool wg = pl.config == GS_FP8_DECODE_WG;
    switch (pl.decode_bucket) {
    case 0: return wg ? (int)cudaErrorInvalidValue : launch<Fp8DecN8, AE5, BE5, false>(p, d, pl);
    case 1: return wg ? launch<Fp8DecN16, AE5, BE5, true>(p, d, pl)
                      : launch<Fp8DecN16, AE5, BE5, false>(p, d, pl);
    case 2: return wg ? launch<Fp8DecN32, AE5, BE5, true>(p, d, pl)
                      : launch<Fp8DecN32, AE5, BE5, false>(p, d, pl);
    case 3: return wg ? launch<Fp8DecN64, AE5, BE5, true>(p, d, pl)
                      : launch<Fp8DecN64, AE5, BE5, false>(p, d, pl);
    default: return (int)cudaErrorInvalidValue;
    }
}

} // namespace

/* A decode plan's launch for A's (weights') and B's (tokens') types;
 * can_implement took no e5m2 x e5m2. */
extern "C" int gs_fp8_decode_run_plan(const gs_fp8_plan_t *pl, const gs_problem_t *p,
                                      const gs_device_t *d)
{
    const bool a5 = p->a_type == GS_DT_E5M2, b5 = p->b_type == GS_DT_E5M2;
    if (!a5 && !b5)
        return launch_bucket<false, false>(p, d, *pl);
    if (!a5)
        return launch_bucket<false, true>(p, d, *pl);
    if (!b5)
        return launch_bucket<true, false>(p, d, *pl);
    return (int)cudaErrorInvalidValue;
}
