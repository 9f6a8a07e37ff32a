/* The experimental FP8 family's launch (kernels/fp8/fp8_tiles.h): tensor
 * maps, the kernel's parameters and the choice of instantiation for a plan
 * of fp8_family.c.
 *
 * Orientation, as in the pingpong family (pingpong_sm90.cu): the kernel
 * computes C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m), wgmma's M
 * along n and its N along m, so the epilogue stores pairs of consecutive m
 * elements. For the TN calls it takes, B (stored k x n) and A (stored
 * k x m) are both K-major: the only layout FP8 wgmma reads. */
#include <cuda.h> /* CUtensorMap and the driver enums: header only, no libcuda link */
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <atomic>
#include <climits>
#include <cstring>
#include <stdint.h>

#include "gs_kernels.h"
#include "gs_launch_attrs.cuh"
#include "gs_smem_limit.cuh"
#include "gs_tensor_map.h"

#include "pingpong_config.cuh"
#include "pingpong_scheduler.cuh"
#include "pingpong_mainloop.cuh"
#include "pingpong_epilogue.cuh"
#include "fp8_kernel.cuh"

namespace {

template <typename Cfg, typename TP, typename TQ, bool PROMOTE, int CLUSTER>
int launch(const gs_problem_t *pr, const gs_device_t *d, const gs_fp8_plan_t &pl)
{
    constexpr int SMEM = smem_bytes<Cfg>();
    auto kernel = fp8_sm90<Cfg, TP, TQ, PROMOTE, CLUSTER>;
    if (pl.cluster != CLUSTER)
        return (int)cudaErrorInvalidValue;
    static std::atomic<uint64_t> smem_done{0};
    if (const cudaError_t e = gs_smem_limit_once(smem_done, d->ordinal, SMEM, kernel))
        return (int)e;

    const uint64_t m = (uint64_t)pr->m, n = (uint64_t)pr->n, k = (uint64_t)pr->k;
    const CUtensorMapDataType u8 = CU_TENSOR_MAP_DATA_TYPE_UINT8; /* TMA moves bytes */
    CUtensorMap tp, tq, tc;
    bool ok = true;
    /* P = op(B)^T (n x k): B stored k x n, k contiguous; a box is one
     * 128-byte swizzle row of k by BLOCK_N rows of n */
    ok &= gs_tensor_map_3d(&tp, u8, 1, pr->B, k, n, 1, pr->ldb, 0, GS_FP8_BLOCK_K, GS_FP8_BLOCK_N);
    /* Q = op(A)^T (k x m): A stored k x m, k contiguous */
    /* clusters: each CTA loads its 1/CLUSTER of the tile's rows of m */
    ok &= gs_tensor_map_3d(&tq, u8, 1, pr->A, k, m, 1, pr->lda, 0, GS_FP8_BLOCK_K,
                           Cfg::BLOCK_M / CLUSTER);
    /* C (bf16): one box per epilogue sub-tile, 128 bytes of m x EPI_ROWS of n */
    const uint64_t box_c = SW128_ROW / sizeof(__nv_bfloat16);
    ok &= gs_tensor_map_3d(&tc, gs_tensor_map_dtype(GS_DT_BF16), sizeof(__nv_bfloat16), pr->C, m, n,
                           1, pr->ldc, 0, (uint32_t)box_c, EPI_ROWS);
    if (!ok)
        return (int)cudaErrorInvalidValue;

    Fp8Params fp;
    memset(&fp, 0, sizeof fp);
    Params &prm = fp.base;
    prm.m = (int)m;
    prm.n = (int)n;
    prm.k = (int)k;
    prm.tiles_m = pl.tiles_m;
    prm.tiles_n = pl.unit_cols; /* the scheduler walks units (a cluster's tiles: one) */
    prm.k_blocks = pl.k_blocks;
    prm.total_tiles = pl.units;
    prm.group_m = pl.group_m;
    prm.alpha = *static_cast<const float *>(pr->alpha); /* host memory: can_implement */
    prm.beta = 0.0f;
    prm.alpha_ptr = prm.beta_ptr = nullptr;
    /* TMA stores whole 16-byte units: a last m tile that ends inside one is
     * stored with the epilogue's predicated stores */
    prm.m_ragged = (m * sizeof(__nv_bfloat16)) % 16 != 0;
    prm.c_flags = (d->l2_bytes > 0 && (double)m * (double)n * 2.0 > (double)d->l2_bytes)
                      ? C_EVICT_FIRST : 0;
    /* the cooperative tiles' fast path defers half its stores (beta is 0;
     * the kernel takes it only without a bias and off the ragged m tile) */
    prm.c_flags |= C_DEFER;
    prm.c = pr->C;
    prm.ldc = pr->ldc;
    prm.stride_c = 0;
    prm.bias = pr->bias;
    prm.bias_kind = pr->bias ? BIAS_BF16 : BIAS_NONE;
    prm.splits = 1;
    prm.total_units = prm.total_tiles;
    prm.counters = nullptr;
    prm.partials = nullptr;
    /* the scales stay in device memory: the kernel reads them */
    fp.scale_a = static_cast<const float *>(pr->scale_a);
    fp.scale_b = static_cast<const float *>(pr->scale_b);
    fp.a_vec = gs_lt_scale_of(pr->lt_scales, GS_LT_SCALE_A) == GS_SCALE_OUTER_VEC_32F;
    fp.b_vec = gs_lt_scale_of(pr->lt_scales, GS_LT_SCALE_B) == GS_SCALE_OUTER_VEC_32F;

    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)pl.grid);
    cfg.blockDim = dim3(NUM_THREADS);
    cfg.dynamicSmemBytes = SMEM;
    cfg.stream = static_cast<cudaStream_t>(pr->stream);
    cudaLaunchAttribute attr[2];
    gs_set_launch_attrs(cfg, attr, false, CLUSTER, pr->pdl != 0);
    cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, tp, tq, tc, fp);
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    return (int)e;
}

template <typename Cfg, typename TP, typename TQ, int CLUSTER = 1>
int launch_accum(const gs_problem_t *p, const gs_device_t *d, const gs_fp8_plan_t &pl)
{
    return pl.promote ? launch<Cfg, TP, TQ, true, CLUSTER>(p, d, pl)
                      : launch<Cfg, TP, TQ, false, CLUSTER>(p, d, pl);
}

template <typename TP, typename TQ>
int launch_config(const gs_problem_t *p, const gs_device_t *d, const gs_fp8_plan_t &pl)
{
    switch (pl.config) {
    case GS_FP8_COOP_128x128x128:
        return launch_accum<Fp8CoopCfg, TP, TQ>(p, d, pl);
    case GS_FP8_COOP_256x128x128:
        return launch_accum<Fp8WideCfg, TP, TQ>(p, d, pl);
    case GS_FP8_COOP_256x128x128_MC2:
        return launch_accum<Fp8WideCfg, TP, TQ, FP8_MC_CLUSTER>(p, d, pl);
    default:
        return launch_accum<Fp8Cfg, TP, TQ>(p, d, pl);
    }
}

} // namespace

/* The instantiation for A's and B's types (wgmma A holds B, wgmma B holds
 * A); can_implement took no e5m2 x e5m2. */
extern "C" int gs_fp8_run_plan(const gs_plan_t *plan, const gs_problem_t *p, const gs_device_t *d)
{
    gs_fp8_plan_t pl;
    memcpy(&pl, plan->data.bytes, sizeof pl);
    if (pl.tag != GS_FP8_PLAN_TAG || pl.config != plan->config)
        return (int)cudaErrorInvalidValue; /* not a plan of this family */
    using E4 = __nv_fp8_e4m3;
    using E5 = __nv_fp8_e5m2;
    const bool a5 = p->a_type == GS_DT_E5M2, b5 = p->b_type == GS_DT_E5M2;
    if (!a5 && !b5)
        return launch_config<E4, E4>(p, d, pl);
    if (!a5)
        return launch_config<E5, E4>(p, d, pl); /* B e5m2 */
    if (!b5)
        return launch_config<E4, E5>(p, d, pl); /* A e5m2 */
    return (int)cudaErrorInvalidValue;
}
