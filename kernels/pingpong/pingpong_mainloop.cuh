/* The pingpong family's mainloop pieces: the ring's set-up, wgmma shared-
 * memory descriptors of a stage (the wgmma of a tile width is gs_ptx.cuh's
 * wgmma_m64nNk16_f32) and the packing of accumulator pairs the epilogue
 * stages. */
#ifndef GS_PINGPONG_MAINLOOP_CUH
#define GS_PINGPONG_MAINLOOP_CUH

#include "pingpong_scheduler.cuh"

namespace {

/* wgmma descriptors for one k-step of a stage.
 * K-major tile (rows = MN, 128-byte rows of k): 8-row atoms SBO = 1024 apart,
 *   a k-step moves 16 elements = 32 bytes inside the swizzled row; the second
 *   wgmma M block of op(B)^T is 64 rows = 8 KB further.
 * MN-major tile (64-wide MN chunks, each 64 k-rows of 128 bytes): 8-k-row
 *   atoms SBO = 1024 apart, MN chunks LBO = 8 KB apart (a wgmma N of 256
 *   spans four), a k-step is 16 rows = 2 KB. */
template <bool K_MAJOR>
__device__ __forceinline__ uint64_t operand_desc(uint32_t tile_addr, int mn_block64, int kstep)
{
    if (K_MAJOR) {
        return wgmma_desc_sw128(tile_addr + mn_block64 * 64 * SW128_ROW + kstep * WGMMA_K * IN_BYTES,
                                16, SW128_ATOM);
    } else {
        return wgmma_desc_sw128(tile_addr + mn_block64 * MN_CHUNK_BYTES
                                    + kstep * WGMMA_K * SW128_ROW,
                                MN_CHUNK_BYTES, SW128_ATOM);
    }
}

/* Byte offset of element (row, col) of a 16-row staging sub-tile: the 16-byte
 * unit index is XORed with row % 8 (TMA SWIZZLE_128B), which also spreads
 * the 8 rows a stmatrix / st.shared touches over all 32 banks. */
template <int OUT_BYTES>
__device__ __forceinline__ uint32_t sub_offset(int row, int col)
{
    const int byte_in_row = col * OUT_BYTES;
    const int unit = (byte_in_row >> 4) ^ (row & 7);
    return (uint32_t)(row * SW128_ROW + unit * 16 + (byte_in_row & 15));
}

__device__ __forceinline__ uint32_t pack2(float lo, float hi, __nv_bfloat16 *)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
__device__ __forceinline__ uint32_t pack2(float lo, float hi, __half *)
{
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
__device__ __forceinline__ float2 unpack2(uint32_t u, __nv_bfloat16 *)
{
    __nv_bfloat162 v = *reinterpret_cast<__nv_bfloat162 *>(&u);
    return __bfloat1622float2(v);
}
__device__ __forceinline__ float2 unpack2(uint32_t u, __half *)
{
    __half2 v = *reinterpret_cast<__half2 *>(&u);
    return __half22float2(v);
}

__device__ __forceinline__ int lane_id(void) { return (int)(threadIdx.x % 32); }

/* Thread 0's set-up of a CTA (the pingpong and FP8 kernels): the tensor
 * maps prefetched; the ring's barriers, the staging barriers and (RED,
 * split-K) the reduction's initialised, then made visible to the async
 * proxy (TMA completes transactions on them). PEERS: the CTAs whose
 * consumers release each stage (a cluster sharing an operand by multicast
 * frees a stage only when every CTA it writes into has read it). */
template <typename Cfg, bool RED, int PEERS = 1, typename Smem>
__device__ __forceinline__ void init_cta(Smem &ss, const CUtensorMap *tmap_p,
                                         const CUtensorMap *tmap_q, const CUtensorMap *tmap_c)
{
    prefetch_tensormap(tmap_p);
    prefetch_tensormap(tmap_q);
    prefetch_tensormap(tmap_c);
    for (int s = 0; s < Cfg::STAGES; ++s) {
        mbarrier_init(&ss.full[s], 1);                   /* the producer's expect_tx arrival */
        mbarrier_init(&ss.empty[s], PEERS * Cfg::STAGE_READERS); /* one arrival per reading warp */
    }
    for (int w = 0; w < CONSUMER_WARPS; ++w)
        mbarrier_init(&ss.c_full[w], 1);
    if (RED)
        mbarrier_init(&ss.red_full, 1);
    fence_mbarrier_init();
}

} // namespace

#endif /* GS_PINGPONG_MAINLOOP_CUH */
