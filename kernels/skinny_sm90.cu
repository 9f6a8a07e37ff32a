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
 * reduction. The 8 consumer warps form 2 warpgroups; warpgroup g owns rows
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
#include "gs_ptx.cuh"
#include "skinny_config.h"
#include "skinny_device.cuh"

#include "skinny_sm90.h"

namespace {

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* D(64 x N, f32) (+)= A(64 x 16) * B(16 x N), both K-major from shared
 * memory (128-byte swizzle descriptors); scale_d == 0 overwrites D. */
__device__ __forceinline__ void wg_m64n16k16_bf16(float *d, uint64_t desc_a, uint64_t desc_b, int scale_d)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %10, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16\n"
                 "{%0, %1, %2, %3, %4, %5, %6, %7},\n"
                 " %8, %9, p, 1, 1, 0, 0;\n"
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

__device__ __forceinline__ void wg_m64n16k16_f16(float *d, uint64_t desc_a, uint64_t desc_b, int scale_d)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %10, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16\n"
                 "{%0, %1, %2, %3, %4, %5, %6, %7},\n"
                 " %8, %9, p, 1, 1, 0, 0;\n"
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

__device__ __forceinline__ void wg_m64n32k16_bf16(float *d, uint64_t desc_a, uint64_t desc_b, int scale_d)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %18, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16\n"
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15},\n"
                 " %16, %17, p, 1, 1, 0, 0;\n"
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

__device__ __forceinline__ void wg_m64n32k16_f16(float *d, uint64_t desc_a, uint64_t desc_b, int scale_d)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %18, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16\n"
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15},\n"
                 " %16, %17, p, 1, 1, 0, 0;\n"
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

__device__ __forceinline__ void wg_m64n64k16_bf16(float *d, uint64_t desc_a, uint64_t desc_b, int scale_d)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16\n"
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31},\n"
                 " %32, %33, p, 1, 1, 0, 0;\n"
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

__device__ __forceinline__ void wg_m64n64k16_f16(float *d, uint64_t desc_a, uint64_t desc_b, int scale_d)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16\n"
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31},\n"
                 " %32, %33, p, 1, 1, 0, 0;\n"
                 "}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}
#endif

template <class In, int N> struct wg_op;
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GS_WG_OP(IN, N, SUF)                                                                   \
    template <> struct wg_op<IN, N> {                                                          \
        static __device__ __forceinline__ void run(float *d, uint64_t a, uint64_t b, int s)    \
        {                                                                                      \
            wg_m64n##N##k16_##SUF(d, a, b, s);                                                 \
        }                                                                                      \
    };
GS_WG_OP(__nv_bfloat16, 16, bf16)
GS_WG_OP(__nv_bfloat16, 32, bf16)
GS_WG_OP(__nv_bfloat16, 64, bf16)
GS_WG_OP(__half, 16, f16)
GS_WG_OP(__half, 32, f16)
GS_WG_OP(__half, 64, f16)
#undef GS_WG_OP
#endif


/* K-major, 128-byte swizzled operand: 8-row atoms 1024 bytes apart (SBO);
 * a k16 step moves 32 bytes inside the swizzled row. */
__device__ __forceinline__ uint64_t kmajor_desc(uint32_t addr) { return wgmma_desc_sw128(addr, 16, 1024); }

template <class Cfg, class In, class Out, bool CLUSTER>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::CTAS_PER_SM)
skinny_ring_wg_tn(const skinny_params prm, const __grid_constant__ CUtensorMap tmap_a,
                  const __grid_constant__ CUtensorMap tmap_b)
{
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
    constexpr int MT = Cfg::M_TILES, NT = Cfg::N_TILES, W = Cfg::WARPS;
    constexpr int STAGES = Cfg::STAGES, SK = Cfg::STAGE_K, RB = Cfg::ROW_BYTES;
    constexpr int PRODUCER = W;
    constexpr int WG_ROWS = Cfg::BLOCK_M / (W / 4); /* rows per consumer warpgroup */
    constexpr int ACC = NT * 4;                     /* m64nN accumulators per thread */
    static_assert(W % 4 == 0 && WG_ROWS == 64 * MT, "warpgroups of 4 warps, MT m64 blocks each");
    extern __shared__ unsigned char smem_raw[];
    const RingBlock rb = ring_block_setup<Cfg, CLUSTER>(prm, smem_raw, &tmap_a, &tmap_b);
    unsigned char *const smem = rb.smem;
    uint64_t *const full = rb.full, *const empty = rb.empty;
    const int cluster = rb.cluster, rank = rb.rank, b = rb.b, row0 = rb.row0;
    const int s_begin = rb.s_begin, s_end = rb.s_end;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();

    const float alpha = prm.alpha_ptr ? *prm.alpha_ptr : prm.alpha;
    const float beta = prm.beta_ptr ? *prm.beta_ptr : prm.beta;
    const int stages = alpha != 0.0f ? s_end - s_begin : 0; /* alpha == 0 reads nothing */

    float acc[MT][ACC];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int e = 0; e < ACC; ++e)
            acc[mt][e] = 0.0f;

    if (warp == PRODUCER) {
        if (lane == 0 && stages > 0)
            ring_produce<Cfg>(smem, full, empty, &tmap_a, &tmap_b, stages, s_begin, row0, b);
    } else {
        const int wg = warp / 4;
        const uint32_t ring = smem_u32(smem);
        for (int s = 0; s < stages; ++s) {
            const int slot = s % STAGES;
            mbarrier_wait_parity(&full[slot], (uint32_t)((s / STAGES) & 1));
            const uint32_t st = ring + (uint32_t)(slot * Cfg::STAGE_BYTES);
            float part[MT][ACC];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int e = 0; e < ACC; ++e)
                    wgmma_fence_operand(part[mt][e]);
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < SK / 16; ++ks) {
                const uint64_t db = kmajor_desc(st + Cfg::A_BYTES + ks * 32);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt)
                    wg_op<In, Cfg::N_MAX>::run(
                        part[mt], kmajor_desc(st + (wg * WG_ROWS + mt * 64) * RB + ks * 32), db,
                        ks);
            }
            wgmma_commit_group();
            wgmma_wait_group<0>();
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int e = 0; e < ACC; ++e) {
                    wgmma_fence_operand(part[mt][e]);
                    acc[mt][e] += part[mt][e];
                }
            __syncwarp();
            if (lane == 0)
                mbarrier_arrive(&empty[slot]);
        }
    }

    /* Epilogue: register 4*nt + e of m64 block mt of warp w holds row
     * (w/4)*WG_ROWS + mt*64 + (w%4)*16 + l/4 (+8 for e >= 2), column
     * nt*8 + 2*(l%4) + (e&1). */
    Out *C = static_cast<Out *>(prm.C) + (int64_t)b * prm.stride_c;
    auto store = [&](int w, int mt, int nt, int l, const float (&v)[4]) {
        const int row = row0 + (w / 4) * WG_ROWS + mt * 64 + (w % 4) * 16 + l / 4;
        const int col = nt * 8 + 2 * (l % 4);
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
                for (int nt = 0; nt < NT; ++nt) {
                    const float v[4] = {acc[mt][4 * nt], acc[mt][4 * nt + 1], acc[mt][4 * nt + 2],
                                        acc[mt][4 * nt + 3]};
                    store(warp, mt, nt, lane, v);
                }
    } else {
        cluster_reduce_store<Cfg>(
            smem, warp, lane, rank, cluster,
            [&](int mt, int nt) {
                return make_float4(acc[mt][4 * nt], acc[mt][4 * nt + 1], acc[mt][4 * nt + 2],
                                   acc[mt][4 * nt + 3]);
            },
            store);
    }
#else
    __trap(); /* sm_90a only */
#endif
}

template <class Cfg, class In, class Out>
cudaError_t wg_launch(const skinny_params *prm, const CUtensorMap *ta, const CUtensorMap *tb,
                      unsigned grid_x, unsigned grid_y, int cluster, cudaStream_t stream, int ordinal)
{
    auto k_plain = skinny_ring_wg_tn<Cfg, In, Out, false>;
    auto k_cluster = skinny_ring_wg_tn<Cfg, In, Out, true>;
    static std::atomic<uint64_t> attr_done{0};
    const uint64_t bit = 1ull << (ordinal & 63);
    if (!(attr_done.load(std::memory_order_acquire) & bit)) {
        cudaError_t e = cudaFuncSetAttribute(k_plain, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             Cfg::SMEM_BYTES);
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute(k_cluster, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     Cfg::SMEM_BYTES);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return e;
        }
        attr_done.fetch_or(bit, std::memory_order_acq_rel);
    }
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(grid_x, grid_y, 1);
    lc.blockDim = dim3(Cfg::THREADS, 1, 1);
    lc.dynamicSmemBytes = Cfg::SMEM_BYTES;
    lc.stream = stream;
    cudaLaunchAttribute attr[1];
    if (cluster > 1) {
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = (unsigned)cluster;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        lc.attrs = attr;
        lc.numAttrs = 1;
    }
    return cudaLaunchKernelEx(&lc, cluster > 1 ? k_cluster : k_plain, *prm, *ta, *tb);
}

template <class Cfg>
cudaError_t wg_launch_types(const skinny_params *prm, const CUtensorMap *ta, const CUtensorMap *tb,
                            int in_f16, int out_f32, unsigned gx, unsigned gy, int cluster,
                            cudaStream_t stream, int ordinal)
{
    if (!in_f16)
        return out_f32 ? wg_launch<Cfg, __nv_bfloat16, float>(prm, ta, tb, gx, gy, cluster, stream, ordinal)
                       : wg_launch<Cfg, __nv_bfloat16, __nv_bfloat16>(prm, ta, tb, gx, gy, cluster, stream, ordinal);
    return out_f32 ? wg_launch<Cfg, __half, float>(prm, ta, tb, gx, gy, cluster, stream, ordinal)
                   : wg_launch<Cfg, __half, __half>(prm, ta, tb, gx, gy, cluster, stream, ordinal);
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
                                   unsigned grid_x, unsigned grid_y, int cluster, void *stream,
                                   int ordinal)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (block_m != skinny_ring_cfg_block_m(n_max))
        return (int)cudaErrorInvalidValue;
    switch (n_max) {
    case skinny_ring_n16::N_MAX:
        return (int)wg_launch_types<skinny_ring_n16>(prm, ta, tb, in_f16, out_f32, grid_x, grid_y, cluster, s, ordinal);
    case skinny_ring_n32::N_MAX:
        return (int)wg_launch_types<skinny_ring_n32>(prm, ta, tb, in_f16, out_f32, grid_x, grid_y, cluster, s, ordinal);
    case skinny_ring_n64::N_MAX:
        return (int)wg_launch_types<skinny_ring_n64>(prm, ta, tb, in_f16, out_f32, grid_x, grid_y, cluster, s, ordinal);
    default:
        return (int)cudaErrorInvalidValue;
    }
}
