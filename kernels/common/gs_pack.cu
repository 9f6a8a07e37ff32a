/* See gs_pack.h. Each thread moves 8 elements (16 bytes): one aligned
 * 16-byte store, its source read as the one or two aligned 16-byte words
 * that hold it and shifted into place, since a run of an odd leading
 * dimension starts at any even byte. Those words may reach into the gap
 * between runs (the operand's own memory), never outside the operand's
 * first and last byte: the few threads whose words would (the very first
 * and last 16 bytes) read element by element. */
#include "gs_pack.h"

#include <cuda_runtime.h>
#include <stdint.h>

namespace {

constexpr int PACK_THREADS = 256;
constexpr int PACK_ELEMS = 8;                    /* per thread: one 16-byte store */
constexpr int PACK_SPAN = PACK_THREADS * PACK_ELEMS; /* elements of a segment per block */
constexpr int PACK_BLOCKS_PER_SM = 16;           /* grid-stride beyond this */

/* The 16 bytes starting `sh` bytes (even, 0..14) into lo, continuing into hi. */
__device__ __forceinline__ uint4 shifted(uint4 lo, uint4 hi, unsigned sh)
{
    uint32_t w0 = lo.x, w1 = lo.y, w2 = lo.z, w3 = lo.w, w4 = hi.x, w5 = hi.y, w6 = hi.z, w7 = hi.w;
    if (sh & 8) { /* two words over */
        w0 = w2; w1 = w3; w2 = w4; w3 = w5; w4 = w6; w5 = w7;
    }
    if (sh & 4) { /* one word over */
        w0 = w1; w1 = w2; w2 = w3; w3 = w4; w4 = w5;
    }
    if (sh & 2) /* half a word over */
        return make_uint4(__funnelshift_r(w0, w1, 16), __funnelshift_r(w1, w2, 16),
                          __funnelshift_r(w2, w3, 16), __funnelshift_r(w3, w4, 16));
    return make_uint4(w0, w1, w2, w3);
}

__global__ void __launch_bounds__(PACK_THREADS)
pack16_kernel(uint16_t *__restrict__ dst, int64_t ld_dst, const uint16_t *__restrict__ src,
              int64_t ld_src, int64_t len, int64_t spans, int64_t blocks, uintptr_t src_end)
{
    const uintptr_t src_begin = (uintptr_t)src;
    for (int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
        const int64_t seg = b / spans;
        const int64_t x = (b - seg * spans) * PACK_SPAN + (int64_t)threadIdx.x * PACK_ELEMS;
        if (x >= len)
            continue;
        const uint16_t *s = src + seg * ld_src + x;
        uint16_t *o = dst + seg * ld_dst + x;
        const uintptr_t a = (uintptr_t)s & ~(uintptr_t)15;
        const unsigned sh = (unsigned)((uintptr_t)s & 15);
        if (x + PACK_ELEMS <= len && a >= src_begin && a + (sh ? 32 : 16) <= src_end) {
            const uint4 lo = __ldg((const uint4 *)a);
            /* sh > 0: the last bytes wanted lie in the next word */
            const uint4 hi = sh ? __ldg((const uint4 *)a + 1) : lo;
            *(uint4 *)o = shifted(lo, hi, sh);
        } else {
            const int64_t n = len - x < PACK_ELEMS ? len - x : PACK_ELEMS;
            for (int64_t i = 0; i < n; ++i)
                o[i] = s[i];
        }
    }
}

} // namespace

extern "C" int gs_pack16(void *dst, int64_t ld_dst, const void *src, int64_t ld_src,
                         int64_t segments, int64_t len, int sm_count, void *stream)
{
    if (!dst || !src || segments < 0 || len < 0 || ld_dst < len || ld_src < len
        || ((uintptr_t)dst & 15) || ((uintptr_t)src & 1) || (ld_dst * 2) % 16)
        return (int)cudaErrorInvalidValue;
    if (!segments || !len)
        return 0;
    int64_t spans = (len + PACK_SPAN - 1) / PACK_SPAN, blocks = segments * spans;
    const int64_t cap = (int64_t)(sm_count > 0 ? sm_count : 1) * PACK_BLOCKS_PER_SM;
    const unsigned grid = (unsigned)(blocks < cap ? blocks : cap);
    /* launched so that its own error is returned, never one the
     * application has yet to read (cudaGetLastError would take that) */
    uint16_t *d16 = (uint16_t *)dst;
    const uint16_t *s16 = (const uint16_t *)src;
    uintptr_t end = (uintptr_t)(s16 + (segments - 1) * ld_src + len);
    void *args[] = {&d16, &ld_dst, &s16, &ld_src, &len, &spans, &blocks, &end};
    return (int)cudaLaunchKernel((const void *)pack16_kernel, dim3(grid), dim3(PACK_THREADS), args, 0,
                                 (cudaStream_t)stream);
}
