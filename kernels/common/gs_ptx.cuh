/* PTX wrappers, one __device__ __forceinline__ function per instruction,
 * named after it. Every kernel file includes this header; none defines its
 * own inline asm for these instructions. */
#ifndef GS_PTX_CUH
#define GS_PTX_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

/* ---------------------------------------------------------------------------
 * Ampere+ (sm_80): asynchronous global -> shared copies (LDGSTS)
 * ------------------------------------------------------------------------- */

__device__ __forceinline__ uint32_t smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* 16-byte copy; src_bytes < 16 zero-fills the rest (0 = pure zero fill), which
 * is how out-of-range rows and columns of a tile become zeros without a branch
 * around the copy. .cg bypasses L1: tiles are reused from shared memory. */
__device__ __forceinline__ void cp_async_cg_16(void *smem_dst, const void *gmem_src,
                                               int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(smem_u32(smem_dst)), "l"(gmem_src), "r"(src_bytes));
}

/* 4-byte copy (.ca: 4-byte copies must go through L1), for operands whose
 * base or leading dimension rules out 16-byte vectors. */
__device__ __forceinline__ void cp_async_ca_4(void *smem_dst, const void *gmem_src,
                                              int src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"(smem_u32(smem_dst)), "l"(gmem_src), "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_commit_group(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}

/* Wait until at most N committed groups are still in flight. */
template <int N>
__device__ __forceinline__ void cp_async_wait_group(void)
{
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N));
}

/* ---------------------------------------------------------------------------
 * Ampere+ (sm_80): warp-level tensor-core MMA and streaming loads
 * (kernels/skinny/skinny.cu)
 * ------------------------------------------------------------------------- */

/* D(16x8, f32) += A(16x16, row) * B(16x8, col). Per lane (g = lane/4,
 * t = lane%4): a0/a1 hold rows g/g+8 at k 2t..2t+1, a2/a3 the same rows at
 * k 2t+8..2t+9; b0/b1 hold column g at k 2t..2t+1 / 2t+8..2t+9; d0,d1 are
 * row g, columns 2t, 2t+1, and d2,d3 row g+8. */
__device__ __forceinline__ void mma_m16n8k16_f32_bf16(float (&d)[4], uint32_t a0, uint32_t a1,
                                                      uint32_t a2, uint32_t a3, uint32_t b0,
                                                      uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
                 " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void mma_m16n8k16_f32_f16(float (&d)[4], uint32_t a0, uint32_t a1,
                                                     uint32_t a2, uint32_t a3, uint32_t b0,
                                                     uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
                 " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* D(16x8, f32) += A(16x32, row) * B(32x8, col) with 8-bit float operands
 * (sm_89+), A e5m2 if AE5 else e4m3, B likewise. The fragments' bytes sit
 * as m16n8k16's do with 16-bit types (a k32 step is the same 32 bytes of a
 * row): a0/a1 hold rows g/g+8 at k 4t..4t+3, a2/a3 at k 4t+16..4t+19; b0/b1
 * column g at k 4t..4t+3 / 4t+16..4t+19; d as in m16n8k16. So the 16-bit
 * kernels' ldmatrix addressing serves both. */
template <bool AE5, bool BE5>
__device__ __forceinline__ void mma_m16n8k32_f32_fp8(float (&d)[4], uint32_t a0, uint32_t a1,
                                                     uint32_t a2, uint32_t a3, uint32_t b0,
                                                     uint32_t b1)
{
#define GS_MMA_FP8(TA, TB)                                                                    \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." TA "." TB ".f32"                    \
                 " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"       \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                              \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1))
    if constexpr (!AE5 && !BE5)
        GS_MMA_FP8("e4m3", "e4m3");
    else if constexpr (!AE5)
        GS_MMA_FP8("e4m3", "e5m2");
    else if constexpr (!BE5)
        GS_MMA_FP8("e5m2", "e4m3");
    else
        GS_MMA_FP8("e5m2", "e5m2");
#undef GS_MMA_FP8
}

/* 16-byte read-only load that does not allocate in L1 and asks L2 to fetch
 * the whole 256-byte block around it: for operands streamed once (weights),
 * so they neither evict reused data from L1 nor leave DRAM bursts half used.
 * Not volatile: it may be scheduled freely, the data does not change. */
__device__ __forceinline__ uint4 ld_global_nc_na_l2_256_v4(const void *p)
{
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];\n"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}

/* ---------------------------------------------------------------------------
 * sm_70+: gpu-scope counters between CTAs (split-K tile semaphores in the
 * workspace). The writer publishes with a release reduction after a CTA
 * barrier (cumulativity carries the other threads' stores, ordered before it
 * by the barrier); the reader spins with acquire loads, then a CTA barrier.
 * ------------------------------------------------------------------------- */

__device__ __forceinline__ void red_add_release_gpu(int *addr, int v)
{
    asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" :: "l"(addr), "r"(v) : "memory");
}

__device__ __forceinline__ int atom_add_relaxed_gpu(int *addr, int v)
{
    int old;
    asm volatile("atom.relaxed.gpu.global.add.s32 %0, [%1], %2;\n"
                 : "=r"(old) : "l"(addr), "r"(v) : "memory");
    return old;
}

__device__ __forceinline__ int ld_acquire_gpu(const int *addr)
{
    int v;
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(v) : "l"(addr) : "memory");
    return v;
}

__device__ __forceinline__ void st_relaxed_gpu(int *addr, int v)
{
    asm volatile("st.relaxed.gpu.global.s32 [%0], %1;\n" :: "l"(addr), "r"(v) : "memory");
}

/* ---------------------------------------------------------------------------
 * Hopper instructions plain sm_90 has (mbarrier, tensor-map prefetch): shared
 * by the sm_90a kernels and by kernels/skinny/skinny.cu, which builds for sm_80 and
 * plain sm_90; hidden from sm_80 device passes.
 * ------------------------------------------------------------------------- */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900

/* ---- mbarrier (transaction-counted, shared::cta) ---- */
__device__ __forceinline__ void mbarrier_init(void *bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n"
                 :: "r"(smem_u32(bar)), "r"(count) : "memory");
}

/* Makes the inits visible to the async proxy (TMA complete_tx) and to the
 * other threads once followed by a CTA barrier. */
__device__ __forceinline__ void fence_mbarrier_init(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ void mbarrier_arrive(void *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n"
                 :: "r"(smem_u32(bar)) : "memory");
}

/* One arrival plus the number of bytes the TMA copies will deliver: the
 * phase completes when every arrival came and every byte landed. */
__device__ __forceinline__ void mbarrier_arrive_expect_tx(void *bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
                 :: "r"(smem_u32(bar)), "r"(bytes) : "memory");
}

/* True once the phase with this parity has completed. */
__device__ __forceinline__ uint32_t mbarrier_try_wait_parity(void *bar, uint32_t parity)
{
    uint32_t ok;
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n"
                 "}\n"
                 : "=r"(ok) : "r"(smem_u32(bar)), "r"(parity) : "memory");
    return ok;
}

__device__ __forceinline__ void mbarrier_wait_parity(void *bar, uint32_t parity)
{
    while (!mbarrier_try_wait_parity(bar, parity)) {
    }
}

__device__ __forceinline__ void prefetch_tensormap(const void *tmap)
{
    asm volatile("prefetch.tensormap [%0];\n" :: "l"(tmap) : "memory");
}

#endif /* !__CUDA_ARCH__ || __CUDA_ARCH__ >= 900 */

/* ---------------------------------------------------------------------------
 * Hopper (sm_90a): TMA, WGMMA, stmatrix, setmaxnreg
 * (kernels/pingpong/pingpong_sm90.cu; guarded so SIMT files compile for sm_80)
 * ------------------------------------------------------------------------- */

/* Visible to the host pass (declarations for kernel bodies) and to sm_90a
 * device passes only: an sm_80 or plain sm_90 pass never sees these
 * instructions, so the SIMT families keep compiling for their targets. */
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)

/* ---- TMA (cp.async.bulk.tensor), tensor map passed as __grid_constant__ ---- */
__device__ __forceinline__ void tma_load_3d(void *smem_dst, const void *tmap, void *bar,
                                            int32_t c0, int32_t c1, int32_t c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];\n"
                 :: "r"(smem_u32(smem_dst)), "l"(tmap), "r"(smem_u32(bar)),
                    "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

/* The same, multicast: the box lands at the same shared-memory offset in
 * every CTA of the cluster whose bit is set in cta_mask, and completes its
 * bytes on the mbarrier at bar's offset in each of them. */
__device__ __forceinline__ void tma_load_3d_multicast(void *smem_dst, const void *tmap, void *bar,
                                                      int32_t c0, int32_t c1, int32_t c2,
                                                      uint16_t cta_mask)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;\n"
                 :: "r"(smem_u32(smem_dst)), "l"(tmap), "r"(smem_u32(bar)),
                    "r"(c0), "r"(c1), "r"(c2), "h"(cta_mask)
                 : "memory");
}

/* ---- thread-block clusters ---- */

/* This CTA's rank in its cluster. */
__device__ __forceinline__ uint32_t cluster_ctarank(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

/* Every thread of every CTA of the cluster: arrive (release: its earlier
 * writes, barrier inits included, visible cluster-wide), then wait
 * (acquire). */
__device__ __forceinline__ void cluster_sync_all(void)
{
    asm volatile("barrier.cluster.arrive.release;\n"
                 "barrier.cluster.wait.acquire;\n" ::: "memory");
}

/* One arrival on the mbarrier at bar's shared-memory offset in CTA `cta` of
 * the cluster (this one's own rank included). Default semantics, no
 * .release.cluster: what the arrival publishes (a stage's wgmma reads are
 * done) wgmma.wait_group already guarantees, and the cluster-scope release
 * costs a GPU-wide memory barrier (MEMBAR.ALL.GPU) before every arrival. */
__device__ __forceinline__ void mbarrier_arrive_cluster(void *bar, uint32_t cta)
{
    asm volatile("{\n"
                 ".reg .b32 remote;\n"
                 "mapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
                 "}\n"
                 :: "r"(smem_u32(bar)), "r"(cta) : "memory");
}

/* Plain (non-tensor) bulk copy of `bytes` (a multiple of 16, both addresses
 * 16-byte aligned) from global to shared memory, completing on an mbarrier. */
__device__ __forceinline__ void bulk_load_g2s(void *smem_dst, const void *gmem_src, uint32_t bytes,
                                              void *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1], %2, [%3];\n"
                 :: "r"(smem_u32(smem_dst)), "l"(gmem_src), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
}

/* Orders this thread's earlier generic-proxy view of global memory (e.g. what
 * an acquire made visible) before its later async-proxy (bulk copy) reads. */
__device__ __forceinline__ void fence_proxy_async_global(void)
{
    asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

__device__ __forceinline__ void tma_store_commit_group(void)
{
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/* Wait until at most N bulk groups of this thread still read shared memory. */
template <int N>
__device__ __forceinline__ void tma_store_wait_read(void)
{
    asm volatile("cp.async.bulk.wait_group.read %0;\n" :: "n"(N) : "memory");
}

/* Wait until at most N bulk groups of this thread are still in flight. */
template <int N>
__device__ __forceinline__ void tma_store_wait_all(void)
{
    asm volatile("cp.async.bulk.wait_group %0;\n" :: "n"(N) : "memory");
}

/* Shared-memory accesses through a 32-bit shared address (a generic pointer
 * the compiler cannot place in shared memory costs a 64-bit generic access). */
__device__ __forceinline__ uint32_t ld_shared_b32(uint32_t addr)
{
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

__device__ __forceinline__ float2 ld_shared_v2_f32(uint32_t addr)
{
    float2 v;
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(v.x), "=f"(v.y) : "r"(addr) : "memory");
    return v;
}

__device__ __forceinline__ void st_shared_v2_f32(uint32_t addr, float a, float b)
{
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" :: "r"(addr), "f"(a), "f"(b) : "memory");
}

/* Generic-proxy shared-memory writes (st.shared, stmatrix) become visible to
 * the async proxy (TMA store, wgmma) only after this fence. */
__device__ __forceinline__ void fence_proxy_async_shared_cta(void)
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* ---- named barriers (id 0 is __syncthreads) ---- */
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t nthreads)
{
    asm volatile("bar.sync %0, %1;\n" :: "r"(id), "r"(nthreads) : "memory");
}

__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t nthreads)
{
    asm volatile("bar.arrive %0, %1;\n" :: "r"(id), "r"(nthreads) : "memory");
}

/* ---- register reallocation between warpgroups ---- */
template <uint32_t N>
__device__ __forceinline__ void setmaxnreg_inc(void)
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(N));
}

template <uint32_t N>
__device__ __forceinline__ void setmaxnreg_dec(void)
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(N));
}

/* ---- stmatrix: four 8x8 b16 matrices; lanes 8i..8i+7 give matrix i's rows ---- */
__device__ __forceinline__ void stmatrix_x4(void *smem_dst, uint32_t r0, uint32_t r1,
                                            uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 :: "r"(smem_u32(smem_dst)), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

/* ---- wgmma ---- */
__device__ __forceinline__ void wgmma_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit_group(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int N>
__device__ __forceinline__ void wgmma_wait_group(void)
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}

/* Pins an accumulator register across wgmma_wait_group, so the compiler
 * cannot move reads of it above the wait. */
__device__ __forceinline__ void wgmma_fence_operand(float &r)
{
    asm volatile("" : "+f"(r) :: "memory");
}

/* Shared-memory matrix descriptor: start address, leading and stride byte
 * offsets (all >> 4), and the swizzle mode in bits 62-63 (1 = 128 byte).
 * Base offset 0: every swizzled buffer starts on a 1024-byte boundary. */
__device__ __forceinline__ uint64_t wgmma_desc_sw128(uint32_t smem_addr, uint32_t lbo_bytes,
                                                     uint32_t sbo_bytes)
{
    uint64_t desc = 0;
    desc |= (uint64_t)((smem_addr & 0x3FFFF) >> 4);
    desc |= (uint64_t)((lbo_bytes & 0x3FFFF) >> 4) << 16;
    desc |= (uint64_t)((sbo_bytes & 0x3FFFF) >> 4) << 32;
    desc |= (uint64_t)1 << 62;
    return desc;
}

/* Operand numbering of the wgmma wrappers below. A thread's ACC f32
 * accumulators are asm operands %0..%ACC-1 ("+f"(d[i]): read and written),
 * and the descriptors and scalars follow them (%ACC, %ACC+1, ...): asm
 * numbers outputs before inputs, and the PTX text must spell each number,
 * so the numbers are written out once here, eight at a time.
 * GS_WGMMA_OPS_<i>(F) is F(i, ..., i+7). */
#define GS_WGMMA_OPS_0(F)   F(0, 1, 2, 3, 4, 5, 6, 7)
#define GS_WGMMA_OPS_8(F)   F(8, 9, 10, 11, 12, 13, 14, 15)
#define GS_WGMMA_OPS_16(F)  F(16, 17, 18, 19, 20, 21, 22, 23)
#define GS_WGMMA_OPS_24(F)  F(24, 25, 26, 27, 28, 29, 30, 31)
#define GS_WGMMA_OPS_32(F)  F(32, 33, 34, 35, 36, 37, 38, 39)
#define GS_WGMMA_OPS_40(F)  F(40, 41, 42, 43, 44, 45, 46, 47)
#define GS_WGMMA_OPS_48(F)  F(48, 49, 50, 51, 52, 53, 54, 55)
#define GS_WGMMA_OPS_56(F)  F(56, 57, 58, 59, 60, 61, 62, 63)
#define GS_WGMMA_OPS_64(F)  F(64, 65, 66, 67, 68, 69, 70, 71)
#define GS_WGMMA_OPS_72(F)  F(72, 73, 74, 75, 76, 77, 78, 79)
#define GS_WGMMA_OPS_80(F)  F(80, 81, 82, 83, 84, 85, 86, 87)
#define GS_WGMMA_OPS_88(F)  F(88, 89, 90, 91, 92, 93, 94, 95)
#define GS_WGMMA_OPS_96(F)  F(96, 97, 98, 99, 100, 101, 102, 103)
#define GS_WGMMA_OPS_104(F) F(104, 105, 106, 107, 108, 109, 110, 111)
#define GS_WGMMA_OPS_112(F) F(112, 113, 114, 115, 116, 117, 118, 119)
#define GS_WGMMA_OPS_120(F) F(120, 121, 122, 123, 124, 125, 126, 127)
#define GS_WGMMA_OPS_128(F) F(128, 129, 130, 131, 132, 133, 134, 135)

/* The first ACC operands, eight at a time through F, S() between two groups.
 * F = GS_WGMMA_REGS8 and S = GS_WGMMA_REG_SEP give the PTX register list
 * "%0, %1, ..., %ACC-1"; F = GS_WGMMA_ACCS8 and S = GS_WGMMA_COMMA the
 * constraints "+f"(d[0]), ..., "+f"(d[ACC-1]). */
#define GS_WGMMA_ACC_8(F, S)   GS_WGMMA_OPS_0(F)
#define GS_WGMMA_ACC_16(F, S)  GS_WGMMA_ACC_8(F, S) S() GS_WGMMA_OPS_8(F)
#define GS_WGMMA_ACC_32(F, S)  GS_WGMMA_ACC_16(F, S) S() GS_WGMMA_OPS_16(F) S() GS_WGMMA_OPS_24(F)
#define GS_WGMMA_ACC_64(F, S)  GS_WGMMA_ACC_32(F, S) S() GS_WGMMA_OPS_32(F) S() GS_WGMMA_OPS_40(F) \
                               S() GS_WGMMA_OPS_48(F) S() GS_WGMMA_OPS_56(F)
#define GS_WGMMA_ACC_96(F, S)  GS_WGMMA_ACC_64(F, S) S() GS_WGMMA_OPS_64(F) S() GS_WGMMA_OPS_72(F) \
                               S() GS_WGMMA_OPS_80(F) S() GS_WGMMA_OPS_88(F)
#define GS_WGMMA_ACC_128(F, S) GS_WGMMA_ACC_96(F, S) S() GS_WGMMA_OPS_96(F) S() GS_WGMMA_OPS_104(F) \
                               S() GS_WGMMA_OPS_112(F) S() GS_WGMMA_OPS_120(F)
#define GS_WGMMA_REGS8(i0, i1, i2, i3, i4, i5, i6, i7) \
    "%" #i0 ", %" #i1 ", %" #i2 ", %" #i3 ", %" #i4 ", %" #i5 ", %" #i6 ", %" #i7
#define GS_WGMMA_ACCS8(i0, i1, i2, i3, i4, i5, i6, i7)                                      \
    "+f"(d[i0]), "+f"(d[i1]), "+f"(d[i2]), "+f"(d[i3]), "+f"(d[i4]), "+f"(d[i5]),           \
    "+f"(d[i6]), "+f"(d[i7])
#define GS_WGMMA_REG_SEP() ", "
#define GS_WGMMA_COMMA() ,
/* The operands after the accumulators, through GS_WGMMA_OPS_<ACC>: desc_a,
 * desc_b (the descriptor pair), scale_d, TRANS_A, TRANS_B (the pair). */
#define GS_WGMMA_DESCS(a, b, ...)              "%" #a ", %" #b
#define GS_WGMMA_SCALE_D(a, b, s, ...)         "%" #s
#define GS_WGMMA_TRANS(a, b, s, ta, tb, ...)   "%" #ta ", %" #tb

/* D(64xN, f32) (+)= A(64x16) * B(16xN), both from shared memory: ACC = N / 2
 * accumulator registers per thread. TRANS_A / TRANS_B = 1 select the
 * MN-major ("transposed") operand layout, 0 the K-major one. scale_d == 0
 * overwrites D (first k-step of a tile). GS_WGMMA(N, ACC) defines
 * wgmma_m64n<N>k16_f32_bf16<TRANS_A, TRANS_B> and its _f16 twin, and the
 * same two keyed on the input type for code templated on it and on N:
 * wgmma_m64nNk16_f32<__nv_bfloat16 or __half, N>::run<TRANS_A, TRANS_B>. */
template <class TIn, int N> struct wgmma_m64nNk16_f32;
#define GS_WGMMA_TYPE(N, ACC, TYPE, TIN)                                                    \
template <int TRANS_A, int TRANS_B>                                                         \
__device__ __forceinline__ void wgmma_m64n##N##k16_f32_##TYPE(float *d, uint64_t desc_a,    \
                                                              uint64_t desc_b, int scale_d) \
{                                                                                           \
    asm volatile("{\n"                                                                      \
                 ".reg .pred p;\n"                                                          \
                 "setp.ne.b32 p, " GS_WGMMA_OPS_##ACC(GS_WGMMA_SCALE_D) ", 0;\n"            \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." #TYPE "." #TYPE "\n"     \
                 "{" GS_WGMMA_ACC_##ACC(GS_WGMMA_REGS8, GS_WGMMA_REG_SEP) "},\n"            \
                 " " GS_WGMMA_OPS_##ACC(GS_WGMMA_DESCS) ", p, 1, 1, "                       \
                 GS_WGMMA_OPS_##ACC(GS_WGMMA_TRANS) ";\n"                                   \
                 "}\n"                                                                      \
                 : GS_WGMMA_ACC_##ACC(GS_WGMMA_ACCS8, GS_WGMMA_COMMA)                       \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_A), "n"(TRANS_B));      \
}                                                                                           \
template <> struct wgmma_m64nNk16_f32<TIN, N> {                                             \
    template <int TRANS_A, int TRANS_B>                                                     \
    static __device__ __forceinline__ void run(float *d, uint64_t desc_a, uint64_t desc_b,  \
                                               int scale_d)                                 \
    {                                                                                       \
        wgmma_m64n##N##k16_f32_##TYPE<TRANS_A, TRANS_B>(d, desc_a, desc_b, scale_d);        \
    }                                                                                       \
};
#define GS_WGMMA(N, ACC)                                                                    \
    static_assert((ACC) * 2 == (N), "m64nNk16, f32 accumulators: N / 2 registers a thread"); \
    GS_WGMMA_TYPE(N, ACC, bf16, __nv_bfloat16) GS_WGMMA_TYPE(N, ACC, f16, __half)
/* the narrow N of the decode ring (kernels/skinny/skinny_sm90.cu: weights as
 * A, tokens as B, both K-major) */
GS_WGMMA(16, 8)
GS_WGMMA(32, 16)
GS_WGMMA(64, 32)
/* the pingpong tile widths (kernels/pingpong) */
GS_WGMMA(128, 64)
GS_WGMMA(192, 96)
GS_WGMMA(256, 128)

/* D(64xN, f32) (+)= A(64x32) * B(32xN) for 8-bit floats (e4m3 / e5m2),
 * both operands from shared memory. Unlike the 16-bit forms there are no
 * transpose immediates: FP8 wgmma reads A and B K-major only (one 32-byte
 * k32 step of a 128-byte swizzle row per operand row). The accumulator
 * layout is the 16-bit forms' (ACC = N / 2 f32 per thread). The tensor
 * cores accumulate these products with reduced precision (fewer mantissa
 * bits than fp32 in the running sum): callers that promise cuBLASLt's
 * fast-accumulation-off contract add the results into fp32 registers of
 * their own every few k-steps. GS_WGMMA_FP8(N, ACC, TA, TB) defines
 * wgmma_m64n<N>k32_f32_<TA>_<TB>(d, desc_a, desc_b, scale_d), and
 * wgmma_m64nNk32_f32_fp8<__nv_fp8_e4m3 or __nv_fp8_e5m2 (A),
 * likewise (B), N>::run for code templated on the types. */
template <class TA, class TB, int N> struct wgmma_m64nNk32_f32_fp8;
#define GS_WGMMA_FP8(N, ACC, TA, TB, CA, CB)                                                \
__device__ __forceinline__ void wgmma_m64n##N##k32_f32_##TA##_##TB(float *d, uint64_t desc_a, \
                                                                  uint64_t desc_b,          \
                                                                  int scale_d)              \
{                                                                                           \
    asm volatile("{\n"                                                                      \
                 ".reg .pred p;\n"                                                          \
                 "setp.ne.b32 p, " GS_WGMMA_OPS_##ACC(GS_WGMMA_SCALE_D) ", 0;\n"            \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32." #TA "." #TB "\n"         \
                 "{" GS_WGMMA_ACC_##ACC(GS_WGMMA_REGS8, GS_WGMMA_REG_SEP) "},\n"            \
                 " " GS_WGMMA_OPS_##ACC(GS_WGMMA_DESCS) ", p, 1, 1;\n"                      \
                 "}\n"                                                                      \
                 : GS_WGMMA_ACC_##ACC(GS_WGMMA_ACCS8, GS_WGMMA_COMMA)                       \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                 \
}                                                                                           \
template <> struct wgmma_m64nNk32_f32_fp8<CA, CB, N> {                                      \
    static __device__ __forceinline__ void run(float *d, uint64_t desc_a, uint64_t desc_b,  \
                                               int scale_d)                                 \
    {                                                                                       \
        wgmma_m64n##N##k32_f32_##TA##_##TB(d, desc_a, desc_b, scale_d);                     \
    }                                                                                       \
};
/* the FP8 decode ring's token widths (kernels/fp8/fp8_decode_kernel.cuh):
 * 16, 32, 64 */
GS_WGMMA_FP8(16, 8, e4m3, e4m3, __nv_fp8_e4m3, __nv_fp8_e4m3)
GS_WGMMA_FP8(16, 8, e4m3, e5m2, __nv_fp8_e4m3, __nv_fp8_e5m2)
GS_WGMMA_FP8(16, 8, e5m2, e4m3, __nv_fp8_e5m2, __nv_fp8_e4m3)
GS_WGMMA_FP8(32, 16, e4m3, e4m3, __nv_fp8_e4m3, __nv_fp8_e4m3)
GS_WGMMA_FP8(32, 16, e4m3, e5m2, __nv_fp8_e4m3, __nv_fp8_e5m2)
GS_WGMMA_FP8(32, 16, e5m2, e4m3, __nv_fp8_e5m2, __nv_fp8_e4m3)
GS_WGMMA_FP8(64, 32, e4m3, e4m3, __nv_fp8_e4m3, __nv_fp8_e4m3)
GS_WGMMA_FP8(64, 32, e4m3, e5m2, __nv_fp8_e4m3, __nv_fp8_e5m2)
GS_WGMMA_FP8(64, 32, e5m2, e4m3, __nv_fp8_e5m2, __nv_fp8_e4m3)
/* the FP8 tiles' widths (kernels/fp8): 128, and 256 for the wide tile */
GS_WGMMA_FP8(128, 64, e4m3, e4m3, __nv_fp8_e4m3, __nv_fp8_e4m3)
GS_WGMMA_FP8(128, 64, e4m3, e5m2, __nv_fp8_e4m3, __nv_fp8_e5m2)
GS_WGMMA_FP8(128, 64, e5m2, e4m3, __nv_fp8_e5m2, __nv_fp8_e4m3)
GS_WGMMA_FP8(128, 64, e5m2, e5m2, __nv_fp8_e5m2, __nv_fp8_e5m2)
GS_WGMMA_FP8(256, 128, e4m3, e4m3, __nv_fp8_e4m3, __nv_fp8_e4m3)
GS_WGMMA_FP8(256, 128, e4m3, e5m2, __nv_fp8_e4m3, __nv_fp8_e5m2)
GS_WGMMA_FP8(256, 128, e5m2, e4m3, __nv_fp8_e5m2, __nv_fp8_e4m3)
GS_WGMMA_FP8(256, 128, e5m2, e5m2, __nv_fp8_e5m2, __nv_fp8_e5m2)
#undef GS_WGMMA_FP8
#undef GS_WGMMA
#undef GS_WGMMA_TYPE
#undef GS_WGMMA_OPS_0
#undef GS_WGMMA_OPS_8
#undef GS_WGMMA_OPS_16
#undef GS_WGMMA_OPS_24
#undef GS_WGMMA_OPS_32
#undef GS_WGMMA_OPS_40
#undef GS_WGMMA_OPS_48
#undef GS_WGMMA_OPS_56
#undef GS_WGMMA_OPS_64
#undef GS_WGMMA_OPS_72
#undef GS_WGMMA_OPS_80
#undef GS_WGMMA_OPS_88
#undef GS_WGMMA_OPS_96
#undef GS_WGMMA_OPS_104
#undef GS_WGMMA_OPS_112
#undef GS_WGMMA_OPS_120
#undef GS_WGMMA_OPS_128
#undef GS_WGMMA_ACC_8
#undef GS_WGMMA_ACC_16
#undef GS_WGMMA_ACC_32
#undef GS_WGMMA_ACC_64
#undef GS_WGMMA_ACC_96
#undef GS_WGMMA_ACC_128
#undef GS_WGMMA_REGS8
#undef GS_WGMMA_ACCS8
#undef GS_WGMMA_REG_SEP
#undef GS_WGMMA_COMMA
#undef GS_WGMMA_DESCS
#undef GS_WGMMA_SCALE_D
#undef GS_WGMMA_TRANS

#endif /* !__CUDA_ARCH__ || __CUDA_ARCH_FEAT_SM90_ALL */


/* ---------------------------------------------------------------------------
 * ldmatrix (sm_75+) and Hopper instructions that need only plain sm_90
 * (kernels/skinny/skinny.cu builds for sm_80 and sm_90, so its sm_90 pass does not
 * see the sm_90a block above): TMA loads with L2 cache policies,
 * programmatic dependent launch.
 * ------------------------------------------------------------------------- */

/* Four 8x8 b16 matrices from shared memory: lanes 8i..8i+7 give the row
 * addresses (16 bytes each) of matrix i; register i of lane (g = lane/4,
 * t = lane%4) receives row g, elements 2t and 2t+1 of matrix i, which is
 * the mma.m16n8k16 fragment layout. */
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void *smem_row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_u32(smem_row)) : "memory");
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900

/* L2 policies: evict_first for data read exactly once (streamed weights),
 * so it does not push out reused operands; evict_last for data other
 * blocks read again soon (tokens). */
__device__ __forceinline__ uint64_t createpolicy_evict_first(void)
{
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}

/* The default priority, as a policy: a cache-hinted access with it behaves
 * as one without a hint, so one code path can serve both. */
__device__ __forceinline__ uint64_t createpolicy_evict_normal(void)
{
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}

__device__ __forceinline__ uint64_t createpolicy_evict_last(void)
{
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}

/* 3-D tensor tile global -> shared with an L2 cache policy, completing on
 * the mbarrier's transaction count (the whole box, out-of-bounds zeros
 * included). */
__device__ __forceinline__ void tma_load_3d_hint(void *smem_dst, const void *tmap, void *bar,
                                                 int32_t c0, int32_t c1, int32_t c2,
                                                 uint64_t policy)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".L2::cache_hint [%0], [%1, {%3, %4, %5}], [%2], %6;\n"
                 :: "r"(smem_u32(smem_dst)), "l"(tmap), "r"(smem_u32(bar)),
                    "r"(c0), "r"(c1), "r"(c2), "l"(policy)
                 : "memory");
}

/* Clipped tensor store (elements of the box outside the tensor are not
 * written) with an L2 cache policy; createpolicy_evict_normal() for none. */
__device__ __forceinline__ void tma_store_3d_hint(const void *tmap, const void *smem_src,
                                                  int32_t c0, int32_t c1, int32_t c2,
                                                  uint64_t policy)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group.L2::cache_hint"
                 " [%0, {%2, %3, %4}], [%1], %5;\n"
                 :: "l"(tmap), "r"(smem_u32(smem_src)), "r"(c0), "r"(c1), "r"(c2), "l"(policy)
                 : "memory");
}

/* Programmatic dependent launch. launch_dependents: the next kernel of the
 * stream (if launched with programmatic stream serialization) may start
 * once every CTA of this grid has issued this or exited. wait: blocks until
 * the grids this one depends on have completed and their memory operations
 * are visible; a no-op when the kernel was launched without the attribute.
 * A kernel launched with it reads nothing another grid may write before
 * the wait. */
__device__ __forceinline__ void griddepcontrol_launch_dependents(void)
{
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

__device__ __forceinline__ void griddepcontrol_wait(void)
{
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
}

#endif /* !__CUDA_ARCH__ || __CUDA_ARCH__ >= 900 */

#endif /* GS_PTX_CUH */
