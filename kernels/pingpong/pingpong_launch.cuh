/* The pingpong family's launch glue: tensor maps (gs_tensor_map.h), the
 * kernel's parameters, the launch attributes, and the ladder from a call's
 * types and layout to the kernel instantiation. */
#ifndef GS_PINGPONG_LAUNCH_CUH
#define GS_PINGPONG_LAUNCH_CUH

#include "gs_launch_attrs.cuh"
#include "gs_launch_scalars.cuh"
#include "gs_smem_limit.cuh"
#include "gs_tensor_map.h"
#include "pingpong_kernel.cuh"
#include "pingpong_plan.cuh"

namespace {

template <typename Cfg, typename TIn, typename TOut, bool P_KMAJOR, bool Q_KMAJOR, bool SPLIT,
          bool SK = false>
int launch(const gs_problem_t *pr, const gs_device_t *d, const PpPlan &pl)
{
    constexpr int OUT_BYTES = (int)sizeof(TOut);
    constexpr int SMEM = smem_bytes<Cfg>();
    auto kernel = pingpong_sm90<Cfg, TIn, TOut, P_KMAJOR, Q_KMAJOR, SPLIT, SK>;

    static std::atomic<uint64_t> smem_done{0};
    if (const cudaError_t e = gs_smem_limit_once(smem_done, d->ordinal, SMEM, kernel))
        return (int)e;

    const size_t ies = gs_dtype_size(pr->a_type);
    const size_t oes = gs_dtype_size(pr->c_type);
    const CUtensorMapDataType idt = gs_tensor_map_dtype(pr->a_type);
    const uint64_t m = (uint64_t)pr->m, n = (uint64_t)pr->n, k = (uint64_t)pr->k;
    const uint64_t batch = (uint64_t)pr->batch;

    CUtensorMap tp, tq, tc;
    bool ok = true;
    /* P = op(B)^T (n x k). */
    if (P_KMAJOR) /* B stored k x n, k contiguous */
        ok &= gs_tensor_map_3d(&tp, idt, ies, pr->B, k, n, batch, pr->ldb, pr->stride_b, BLOCK_K, BLOCK_N);
    else /* B stored n x k, n contiguous */
        ok &= gs_tensor_map_3d(&tp, idt, ies, pr->B, n, k, batch, pr->ldb, pr->stride_b, MN_CHUNK, BLOCK_K);
    /* Q = op(A)^T (k x m). */
    if (Q_KMAJOR) /* A stored k x m, k contiguous */
        ok &= gs_tensor_map_3d(&tq, idt, ies, pr->A, k, m, batch, pr->lda, pr->stride_a, BLOCK_K, Cfg::BLOCK_M);
    else /* A stored m x k, m contiguous */
        ok &= gs_tensor_map_3d(&tq, idt, ies, pr->A, m, k, batch, pr->lda, pr->stride_a, MN_CHUNK, BLOCK_K);
    /* C: one box per epilogue sub-tile (128 bytes of m x EPI_ROWS of n). A C
     * that TMA cannot store (C_DIRECT) is neither stored nor read through
     * its map: the kernel gets a valid one over a box of A's first bytes,
     * which it only prefetches. */
    const bool direct = c_direct(&pr->cls);
    const uint64_t box_c = SW128_ROW / OUT_BYTES;
    if (direct)
        ok &= gs_tensor_map_3d(&tc, gs_tensor_map_dtype(pr->c_type), oes, pr->A, box_c, 1, 1, box_c,
                               box_c, box_c, EPI_ROWS);
    else
        ok &= gs_tensor_map_3d(&tc, gs_tensor_map_dtype(pr->c_type), oes, pr->C, m, n, batch, pr->ldc,
                               pr->stride_c, box_c, EPI_ROWS);
    if (!ok)
        return (int)cudaErrorInvalidValue;

    Params prm;
    prm.m = (int)m;
    prm.n = (int)n;
    prm.k = (int)k;
    prm.tiles_m = (int)((m + Cfg::BLOCK_M - 1) / Cfg::BLOCK_M);
    prm.tiles_n = (int)((n + BLOCK_N - 1) / BLOCK_N);
    prm.k_blocks = (int)k_blocks_of((int64_t)k);
    prm.total_tiles = prm.tiles_m * prm.tiles_n * (int)batch;
    prm.group_m = Cfg::GROUP_M;
    /* Short K: the call is mostly its output stream. Walking all of m per
     * column makes the tiles in flight write whole contiguous column strips
     * of C (C is m-major) instead of 2 KB pieces spread over 16 strips
     * (H200, TN 8448x9216, 128x128: K = 64 46.7 -> 42.0 us, 1.04 -> 1.15x of
     * cuBLAS; K = 128 / 256 +1%; K = 512 -1%, so not there). The operand
     * strips lose their L2 reuse across columns, so only while op(A) fits
     * in a quarter of the L2. */
    if (prm.k_blocks <= RASTER_ALL_M_MAX_KBLOCKS && d->l2_bytes > 0
        && (double)m * (double)k * (double)ies <= (double)d->l2_bytes / 4)
        prm.group_m = prm.tiles_m;
    if (pp_env().group > 0)
        prm.group_m = pp_env().group;
    if (prm.group_m > prm.tiles_m) prm.group_m = prm.tiles_m;
    gs_set_scalars(prm, pr);

    prm.m_ragged = direct || (m * oes) % 16 != 0;
    prm.c_flags = (d->l2_bytes > 0
                   && (double)m * (double)n * (double)batch * (double)oes > (double)d->l2_bytes)
                      ? C_EVICT_FIRST : 0;
    if (direct)
        prm.c_flags |= C_DIRECT;
    else if (pp_env().defer)
        prm.c_flags |= C_DEFER;
    prm.c = pr->C;
    prm.ldc = pr->ldc;
    prm.stride_c = pr->stride_c;
    prm.bias = pr->bias;
    prm.bias_kind = !pr->bias ? BIAS_NONE
                    : pr->bias_type == GS_DT_F32 ? BIAS_F32
                    : pr->bias_type == GS_DT_F16 ? BIAS_F16 : BIAS_BF16;
    if (SK) {
        prm.sk_dp_tiles = pl.sk_dp_tiles;
        prm.sk_iters = pl.sk_iters;
    } else {
        prm.splits = SPLIT ? pl.splits : 1;
        prm.total_units = prm.total_tiles * prm.splits;
    }
    prm.counters = SPLIT || SK ? static_cast<int *>(pr->workspace) : nullptr;
    prm.partials = SPLIT || SK ? reinterpret_cast<float *>(static_cast<uint8_t *>(pr->workspace)
                                                           + GS_WS_FLAG_BYTES)
                               : nullptr;

    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)(SPLIT ? prm.total_units : pl.grid));
    cfg.blockDim = dim3(NUM_THREADS);
    cfg.dynamicSmemBytes = SMEM;
    cfg.stream = static_cast<cudaStream_t>(pr->stream);
    /* Split: one CTA per unit, all resident at once: units wait on each
     * other (tile semaphores), which a cooperative launch makes safe; it
     * fails (and the call falls back) rather than run a grid that cannot
     * fit. Stream-K: a head waits for the next CTAs' pieces, so the same. */
    cudaLaunchAttribute attr[2];
    gs_set_launch_attrs(cfg, attr, SPLIT || SK, 1, pr->pdl != 0);
    cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, tp, tq, tc, prm);
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    GS_TL_DUMP(cfg, prm);
    return (int)e;
}

template <typename Cfg, typename TIn, typename TOut, bool SPLIT, bool SK = false>
int launch_split(const gs_problem_t *p, const gs_device_t *d, const PpPlan &pl)
{
    const bool p_kmajor = p->trans_b == GS_OP_N;
    const bool q_kmajor = p->trans_a == GS_OP_T;
    if (p_kmajor && q_kmajor) return launch<Cfg, TIn, TOut, true, true, SPLIT, SK>(p, d, pl);
    if (p_kmajor) return launch<Cfg, TIn, TOut, true, false, SPLIT, SK>(p, d, pl);
    if (q_kmajor) return launch<Cfg, TIn, TOut, false, true, SPLIT, SK>(p, d, pl);
    return launch<Cfg, TIn, TOut, false, false, SPLIT, SK>(p, d, pl);
}

/* The planned instantiation (pp_plan_of): split-K, stream-K or whole tiles.
 * The workspace was checked against the plan before (gs_pingpong_run_plan). */
template <typename Cfg, typename TIn, typename TOut>
int launch_layout(const gs_problem_t *p, const gs_device_t *d, const PpPlan &pl)
{
    if constexpr (!Cfg::SPLITTABLE) {
        /* Short K never splits (plan_split wants >= 2 * SPLIT_MIN_KBLOCKS);
         * can_implement refuses split shapes for the 192-wide tile. */
        if (pl.splits > 1)
            return (int)cudaErrorInvalidValue;
    } else if (pl.splits > 1) {
        return launch_split<Cfg, TIn, TOut, true>(p, d, pl);
    }
    if constexpr (Cfg::COOPERATIVE && std::is_same<TIn, TOut>::value) {
        /* stream-K where plan_sk planned it */
        if (pl.sk_iters > 0)
            return launch_split<Cfg, TIn, TOut, false, true>(p, d, pl);
    } else if (pl.sk_iters > 0) {
        return (int)cudaErrorInvalidValue; /* plan_sk plans none for these */
    }
    return launch_split<Cfg, TIn, TOut, false>(p, d, pl);
}

/* One input type's kernels of one tile configuration: a translation unit
 * of its own (pingpong_instance.cu). C is the input type or fp32. */
template <typename Cfg, typename TIn>
int launch_in(const gs_problem_t *p, const gs_device_t *d, const PpPlan &pl)
{
    if (p->c_type == GS_DT_F32)
        return launch_layout<Cfg, TIn, float>(p, d, pl);
    return launch_layout<Cfg, TIn, TIn>(p, d, pl);
}

} // namespace

#endif /* GS_PINGPONG_LAUNCH_CUH */
