/* cuBLASLt's A and B scale factors as the FP8 kernels read them on the
 * device (kernels/fp8: the tiles' fp8_kernel.cuh and the decode ring's
 * fp8_decode_kernel.cuh): one reading rule, so both scale alike; two forms
 * of it, one factor at a time and a vector's factors without branches. */
#ifndef GS_FP8_SCALES_CUH
#define GS_FP8_SCALES_CUH

/* Factor i of a scale: s[i] for a vector of `extent` factors (vec: one per
 * row of op(A) / column of op(B), OUTER_VEC_32F), else the one factor of
 * the matrix (SCALAR_32F), 1 without a scale. Rows and columns past the
 * matrix (a ragged tile) are never stored: 0 there, nothing read. */
__device__ __forceinline__ float scale_at(const float *s, int vec, int i, int extent)
{
    if (!s)
        return 1.0f;
    return vec ? (i < extent ? __ldg(s + i) : 0.0f) : __ldg(s);
}

/* Factor i of a vector scale, as scale_at reads it (0 past the extent),
 * with no branch: the index is clamped and the value selected, so a warp's
 * loads of many factors issue back to back. The tiles' epilogue reads 64
 * of them a thread, where scale_at's branch-guarded loads, each waited for
 * before its multiply, cost up to 6% of a tile (bench/NOTES.md). */
__device__ __forceinline__ float vec_factor(const float *s, int i, int extent)
{
    const float v = __ldg(s + (i < extent ? i : extent - 1));
    return i < extent ? v : 0.0f;
}

#endif /* GS_FP8_SCALES_CUH */
