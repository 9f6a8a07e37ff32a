/* The skinny family's launch glue: kernel parameters, tensor maps of the
 * ring's operands (gs_tensor_map.h), the launches, and the ladder from a
 * call's types and n bucket to the instantiation. */
#ifndef GS_SKINNY_LAUNCH_CUH
#define GS_SKINNY_LAUNCH_CUH

#include "gs_launch_attrs.cuh"
#include "gs_smem_limit.cuh"
#include "gs_tensor_map.h"
#include "skinny_fill.cuh"
#include "skinny_ring_kernel.cuh"
#include "skinny_plan.cuh"
#include "skinny_sm90.h"

namespace {

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

/* Tensor map of a k-contiguous operand: {k, rows, batch} 16-bit elements,
 * ld and batch stride in elements, boxes of 64 k x box_rows, 128-byte
 * swizzle, zeros out of bounds (the shared encoder, gs_tensor_map.h). */
bool encode_operand(CUtensorMap *map, gs_dtype_t t, const void *base, int64_t k, int64_t rows,
                    int64_t batch, int64_t ld, int64_t bstride, int box_rows)
{
    return gs_tensor_map_3d(map, gs_tensor_map_dtype(t == GS_DT_BF16 ? GS_DT_BF16 : GS_DT_F16), 2,
                            base, (uint64_t)k, (uint64_t)rows, (uint64_t)batch, (uint64_t)ld,
                            (uint64_t)bstride, 64, (uint32_t)box_rows);
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
    const skinny_scales unscaled = {nullptr, nullptr, 0, 0};
    return cudaLaunchKernelEx(&lc, pl.cluster > 1 ? k_cluster : k_plain, prm, ta, tb, unscaled);
}

/* reg_cluster: the register kernel's split where the ring's tensor maps
 * cannot be made (planned with the rest, call_plan_of) */
template <class In, class Out>
cudaError_t launch_bucket(const gs_problem_t *p, const gs_device_t *d, const skinny_plan &plan,
                          int reg_cluster)
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
        pl = {false, reg_cluster, pl.pdl, false};
    }
    switch (nb) {
    case BUCKET_N8: return skinny_launch<skinny_cfg_n8, In, Out>(p, pl);
    case BUCKET_N16: return skinny_launch<skinny_cfg_n16, In, Out>(p, pl);
    case BUCKET_N32: return skinny_launch<skinny_cfg_n32, In, Out>(p, pl);
    default: return skinny_launch<skinny_cfg_n64, In, Out>(p, pl);
    }
}

cudaError_t skinny_dispatch(const gs_problem_t *p, const gs_device_t *d, const skinny_plan &pl,
                            int reg_cluster)
{
    const bool out_f32 = p->c_type == GS_DT_F32;
    if (p->a_type == GS_DT_BF16)
        return out_f32 ? launch_bucket<__nv_bfloat16, float>(p, d, pl, reg_cluster)
                       : launch_bucket<__nv_bfloat16, __nv_bfloat16>(p, d, pl, reg_cluster);
    return out_f32 ? launch_bucket<__half, float>(p, d, pl, reg_cluster)
                   : launch_bucket<__half, __half>(p, d, pl, reg_cluster);
}

} // namespace

#endif /* GS_SKINNY_LAUNCH_CUH */
