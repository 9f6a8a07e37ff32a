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
 * Hopper (sm_90a): mbarrier, TMA, WGMMA, stmatrix, setmaxnreg
 * (kernels/pingpong_sm90.cu; guarded so SIMT files compile for sm_80)
 * ------------------------------------------------------------------------- */

#endif /* GS_PTX_CUH */
