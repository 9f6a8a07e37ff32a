/* PTX wrappers, one __device__ __forceinline__ function per instruction,
 * named after it. Every kernel file includes this header; none defines its
 * own inline asm for these instructions. */
#ifndef GS_PTX_CUH
#define GS_PTX_CUH

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

/* D(64x128, f32) (+)= A(64x16) * B(16x128), both from shared memory.
 * TRANS_A / TRANS_B = 1 select the MN-major ("transposed") operand layout.
 * scale_d == 0 overwrites D (first k-step of a tile). */
#define GS_WGMMA_M64N128K16(NAME, TYPE)                                                     \
template <int TRANS_A, int TRANS_B>                                                         \
__device__ __forceinline__ void NAME(float *d, uint64_t desc_a, uint64_t desc_b,            \
                                     int scale_d)                                           \
{                                                                                           \
    asm volatile("{\n"                                                                      \
                 ".reg .pred p;\n"                                                          \
                 "setp.ne.b32 p, %66, 0;\n"                                                 \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE "\n"          \
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63},\n"                                                              \
                 " %64, %65, p, 1, 1, %67, %68;\n"                                          \
                 "}\n"                                                                      \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])                                                                   \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_A), "n"(TRANS_B));      \
}
GS_WGMMA_M64N128K16(wgmma_m64n128k16_f32_bf16, "bf16")
GS_WGMMA_M64N128K16(wgmma_m64n128k16_f32_f16, "f16")
#undef GS_WGMMA_M64N128K16

/* D(64x256, f32) (+)= A(64x16) * B(16x256), both from shared memory: 128
 * accumulator registers per thread. Same operand conventions as m64n128k16. */
#define GS_WGMMA_M64N256K16(NAME, TYPE) \
template <int TRANS_A, int TRANS_B> \
__device__ __forceinline__ void NAME(float *d, uint64_t desc_a, uint64_t desc_b, \
                                     int scale_d) \
{ \
    asm volatile("{\n" \
                 ".reg .pred p;\n" \
                 "setp.ne.b32 p, %130, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE "\n" \
                 "{" \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15," \
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31," \
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47," \
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63," \
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79," \
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95," \
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111," \
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
                 "},\n" \
                 " %128, %129, p, 1, 1, %131, %132;\n" \
                 "}\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
                   "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
                   "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
                   "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
                   "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
                   "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
                   "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
                   "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
                   "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127]) \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_A), "n"(TRANS_B)); \
}
GS_WGMMA_M64N256K16(wgmma_m64n256k16_f32_bf16, "bf16")
GS_WGMMA_M64N256K16(wgmma_m64n256k16_f32_f16, "f16")
#undef GS_WGMMA_M64N256K16

/* D(64x192, f32) (+)= A(64x16) * B(16x192), both from shared memory: 96
 * accumulator registers per thread (the 192-wide pingpong tile). Same
 * operand conventions as m64n128k16. */
#define GS_WGMMA_M64N192K16(NAME, TYPE) \
template <int TRANS_A, int TRANS_B> \
__device__ __forceinline__ void NAME(float *d, uint64_t desc_a, uint64_t desc_b, \
                                     int scale_d) \
{ \
    asm volatile("{\n" \
                 ".reg .pred p;\n" \
                 "setp.ne.b32 p, %98, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n192k16.f32." TYPE "." TYPE "\n" \
                 "{" \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15," \
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31," \
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47," \
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63," \
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79," \
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95" \
                 "},\n" \
                 " %96, %97, p, 1, 1, %99, %100;\n" \
                 "}\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
                   "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
                   "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
                   "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
                   "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]) \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_A), "n"(TRANS_B)); \
}
GS_WGMMA_M64N192K16(wgmma_m64n192k16_f32_bf16, "bf16")
GS_WGMMA_M64N192K16(wgmma_m64n192k16_f32_f16, "f16")
#undef GS_WGMMA_M64N192K16

/* D(64 x N, f32) (+)= A(64x16) * B(16xN) for the narrow N of the decode ring
 * (kernels/skinny/skinny_sm90.cu: weights as A, tokens as B), both K-major from
 * shared memory; scale_d == 0 overwrites D. ACC = N / 2 registers per thread. */
#define GS_WGMMA_M64NK16_KMAJOR(NAME, SHAPE, TYPE, PRED, REGS, DESCS, ...)                  \
__device__ __forceinline__ void NAME(float *d, uint64_t desc_a, uint64_t desc_b, int scale_d) \
{                                                                                           \
    asm volatile("{\n"                                                                      \
                 ".reg .pred p;\n"                                                          \
                 "setp.ne.b32 p, " PRED ", 0;\n"                                            \
                 "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE "\n"           \
                 "{" REGS "},\n"                                                            \
                 " " DESCS ", p, 1, 1, 0, 0;\n"                                             \
                 "}\n"                                                                      \
                 : __VA_ARGS__                                                              \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                 \
}
GS_WGMMA_M64NK16_KMAJOR(wgmma_m64n16k16_f32_bf16_kk, "m64n16k16", "bf16", "%10",
    "%0, %1, %2, %3, %4, %5, %6, %7",
    "%8, %9",
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]))
GS_WGMMA_M64NK16_KMAJOR(wgmma_m64n16k16_f32_f16_kk, "m64n16k16", "f16", "%10",
    "%0, %1, %2, %3, %4, %5, %6, %7",
    "%8, %9",
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]))
GS_WGMMA_M64NK16_KMAJOR(wgmma_m64n32k16_f32_bf16_kk, "m64n32k16", "bf16", "%18",
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15",
    "%16, %17",
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]))
GS_WGMMA_M64NK16_KMAJOR(wgmma_m64n32k16_f32_f16_kk, "m64n32k16", "f16", "%18",
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15",
    "%16, %17",
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]))
GS_WGMMA_M64NK16_KMAJOR(wgmma_m64n64k16_f32_bf16_kk, "m64n64k16", "bf16", "%34",
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31",
    "%32, %33",
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]))
GS_WGMMA_M64NK16_KMAJOR(wgmma_m64n64k16_f32_f16_kk, "m64n64k16", "f16", "%34",
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31",
    "%32, %33",
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]))
#undef GS_WGMMA_M64NK16_KMAJOR

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
