/* The sm_90a decode kernel: the ring kernel of skinny.cu (skinny_ring_tn)
 * with its math on wgmma instead of mma.sync.
 *
 * Why: at n = 64 the mma.sync ring is issue-bound (H200, bench/notes-decode.md:
 * 28672x64x4096 streams 3.67 TB/s with the math skipped, 2.95 TB/s with it;
 * per 32 KB stage every consumer warp issues 64 HMMA, 32 ldmatrix and 128
 * FADD). wgmma reads both operands straight from the TMA ring (the 128-byte
 * swizzled boxes are the canonical K-major layout), so a warpgroup issues 4
 * wgmma per 64-row M block and stage, no ldmatrix at all.
 *
 * Layout: the same configurations (skinny_config.h, skinny_ring_n16/32/64),
 * the same producer warp, ring protocol, tensor maps and fixed-order cluster
 * reduction; a k split may also meet through the workspace (split_ws_reduce),
 * and the epilogue stores through shared memory (store_staged). The 8 consumer warps form 2 warpgroups; warpgroup g owns rows
 * g*BLOCK_M/2 .. +BLOCK_M/2 of the block as M_TILES m64 blocks (weights are
 * wgmma's M operand, K-major), the tokens are its N operand (N = N_MAX,
 * K-major). The m64nN accumulator of warp w%4 of a warpgroup holds rows
 * 16*(w%4) + g (+8), columns 8j + 2t (+1) for n8 tile j in registers
 * 4j..4j+3: the mma.m16n8 fragment layout, so the reduction buffer keeps the
 * ring kernel's [W][MT][NT][32] float4 order with another row map.
 *
 * Accuracy: tensor-core accumulation truncates; each stage's 4 k16 steps
 * start from zero (scale_d = 0 on the first) and are added to the running
 * sum with a rounded FADD, as in the other decode kernels (there per 32 k).
 *
 * Built for sm_90a only (gs_kernels_sm90); skinny.cu calls
 * gs_skinny_wg_launch on compute capability 9.0 devices.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <stdint.h>

#include <cooperative_groups.h>

#include "gs_kernels.h"
#include "gs_launch_attrs.cuh"
#include "gs_ptx.cuh"
#include "gs_smem_limit.cuh"
#include "skinny_config.h"
#include "skinny_device.cuh"

#include "skinny_sm90.h"
#include "skinny_ring_wg_kernel.cuh"

namespace {

template <class Cfg, class In, class Out>
cudaError_t wg_launch(const skinny_params *prm, const CUtensorMap *ta, const CUtensorMap *tb,
                      unsigned grid_x, unsigned grid_y, int cluster, const skinny_ws *ws,
                      int pdl, cudaStream_t stream, int ordinal)
{
    auto k_plain = skinny_ring_wg_tn<Cfg, In, Out, SPLIT_NONE>;
    auto k_cluster = skinny_ring_wg_tn<Cfg, In, Out, SPLIT_CLUSTER>;
    auto k_ws = skinny_ring_wg_tn<Cfg, In, Out, SPLIT_WS>;
    static std::atomic<uint64_t> smem_done{0};
    if (const cudaError_t e =
            gs_smem_limit_once(smem_done, ordinal, Cfg::SMEM_BYTES, k_plain, k_cluster, k_ws))
        return e;
    if (cluster < 1 || Cfg::WARPS % cluster != 0) /* store_staged's warp slots per rank */
        return cudaErrorInvalidValue;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(grid_x, grid_y, 1);
    lc.blockDim = dim3(Cfg::THREADS, 1, 1);
    lc.dynamicSmemBytes = Cfg::SMEM_BYTES;
    lc.stream = stream;
    const bool use_ws = cluster > 1 && ws;
    if (use_ws && (!ws->counters || !ws->partials))
        return cudaErrorInvalidValue;
    /* Workspace split: the blocks of a row block wait for each other, so all
     * resident (cooperative), or the launch fails (and the call falls back)
     * instead of hanging. */
    cudaLaunchAttribute attr[2];
    gs_set_launch_attrs(lc, attr, use_ws, cluster, pdl != 0);
    const skinny_scales unscaled = {nullptr, nullptr, 0, 0};
    if (use_ws)
        return cudaLaunchKernelEx(&lc, k_ws, *prm, *ta, *tb, *ws, unscaled);
    const skinny_ws none = {nullptr, nullptr};
    return cudaLaunchKernelEx(&lc, cluster > 1 ? k_cluster : k_plain, *prm, *ta, *tb, none,
                              unscaled);
}

template <class Cfg>
cudaError_t wg_launch_types(const skinny_params *prm, const CUtensorMap *ta, const CUtensorMap *tb,
                            int in_f16, int out_f32, unsigned gx, unsigned gy, int cluster,
                            const skinny_ws *ws, int pdl, cudaStream_t stream, int ordinal)
{
    if (!in_f16)
        return out_f32 ? wg_launch<Cfg, __nv_bfloat16, float>(prm, ta, tb, gx, gy, cluster, ws, pdl, stream, ordinal)
                       : wg_launch<Cfg, __nv_bfloat16, __nv_bfloat16>(prm, ta, tb, gx, gy, cluster, ws, pdl, stream, ordinal);
    return out_f32 ? wg_launch<Cfg, __half, float>(prm, ta, tb, gx, gy, cluster, ws, pdl, stream, ordinal)
                   : wg_launch<Cfg, __half, __half>(prm, ta, tb, gx, gy, cluster, ws, pdl, stream, ordinal);
}

int skinny_ring_cfg_block_m(int n_max)
{
    return n_max == skinny_ring_n16::N_MAX   ? skinny_ring_n16::BLOCK_M
           : n_max == skinny_ring_n32::N_MAX ? skinny_ring_n32::BLOCK_M
                                             : skinny_ring_n64::BLOCK_M;
}

} // namespace

extern "C" int gs_skinny_wg_launch(const skinny_params *prm, const CUtensorMap *ta,
                                   const CUtensorMap *tb, int n_max, int block_m, int in_f16, int out_f32,
                                   unsigned grid_x, unsigned grid_y, int cluster,
                                   const skinny_ws *ws, int pdl, void *stream, int ordinal)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (block_m != skinny_ring_cfg_block_m(n_max))
        return (int)cudaErrorInvalidValue;
    switch (n_max) {
    case skinny_ring_n16::N_MAX:
        return (int)wg_launch_types<skinny_ring_n16>(prm, ta, tb, in_f16, out_f32, grid_x, grid_y, cluster, ws, pdl, s, ordinal);
    case skinny_ring_n32::N_MAX:
        return (int)wg_launch_types<skinny_ring_n32>(prm, ta, tb, in_f16, out_f32, grid_x, grid_y, cluster, ws, pdl, s, ordinal);
    case skinny_ring_n64::N_MAX:
        return (int)wg_launch_types<skinny_ring_n64>(prm, ta, tb, in_f16, out_f32, grid_x, grid_y, cluster, ws, pdl, s, ordinal);
    default:
        return (int)cudaErrorInvalidValue;
    }
}
