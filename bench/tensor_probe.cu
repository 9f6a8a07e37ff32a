/* The tensor cores' speed of light for a GEMM call, measured: one
 * persistent kernel that issues exactly the call's multiply-adds as wgmmas
 * of its input type (FP8 for bench_fp8, bf16 / fp16 for bench_ab --tensor)
 * and does nothing else (no global loads in the loop, no promotion,
 * no epilogue), the work split evenly over every SM (no wave quantisation).
 * The benches time it like the GEMMs (same rounds, interleaved, median), so
 * "cuBLAS / tensor" is the most any kernel could gain over cuBLAS on that
 * call at the clock this GPU holds while its tensor cores are busy: the
 * paper figures (1979 TFLOP/s dense FP8, 989 bf16, on an H100/H200 SXM)
 * assume the boost clock, which high-entropy operands at the power limit do
 * not keep.
 *
 * The operands are the call's own bytes: each CTA copies two k-blocks of
 * A's and B's 128-byte rows into shared memory at the start and cycles
 * through them, so the tensor cores multiply the values the GEMM would (the
 * power, and so the clock, depends on the data). Eight CTAs' worth of
 * distinct bytes (768 KB) is all the probe reads: the other CTAs find them
 * in L2, so the fill costs about a microsecond, not the 25 MB a distinct
 * copy per SM would take from HBM (a few percent of a 0.2 ms call). The
 * widest wgmma (m64n256, k32 for FP8, k16 for 16-bit types) from two
 * warpgroups, two k-blocks in flight each: what the tiles issue. A k-block
 * is one 128-byte row of k either way (128 FP8 or 64 16-bit elements), four
 * wgmmas of 32 bytes. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "../kernels/common/gs_ptx.cuh"

namespace {

constexpr int CONSUMERS = 2;                    /* warpgroups issuing wgmmas */
constexpr int THREADS = CONSUMERS * 128;
constexpr int WG_N = 256;                       /* m64n256 */
constexpr int ACC = WG_N / 2;                   /* f32 accumulators a thread */
constexpr int ROW = 128;                        /* bytes of k per operand row: one swizzle row */
constexpr int K_STEPS = ROW / 32;               /* wgmmas per k-block: 32 bytes of k each */
constexpr uint32_t P_BYTES = 64 * ROW;          /* a warpgroup's 64 rows */
constexpr uint32_t Q_BYTES = WG_N * ROW;        /* the 256 rows both read */
constexpr int STAGES = 2;                       /* distinct k-blocks cycled through */
constexpr int DISTINCT_CTAS = 8;                /* CTAs whose operand bytes differ */
constexpr uint32_t STAGE_BYTES = CONSUMERS * P_BYTES + Q_BYTES;
constexpr size_t SMEM_BYTES = STAGES * STAGE_BYTES + 1024; /* + the 1024-byte alignment */

/* The wgmma of an input type, K-major operands: Mma::run(acc, desc_a,
 * desc_b); Mma::K_PER_ROW elements of k in a 128-byte row. */
template <typename TP, typename TQ> struct Fp8Mma {
    static constexpr int K_PER_ROW = ROW;
    static __device__ __forceinline__ void run(float *acc, uint64_t da, uint64_t db)
    {
        wgmma_m64nNk32_f32_fp8<TP, TQ, WG_N>::run(acc, da, db, 1);
    }
};
template <typename T> struct Mma16 {
    static constexpr int K_PER_ROW = ROW / 2;
    static __device__ __forceinline__ void run(float *acc, uint64_t da, uint64_t db)
    {
        wgmma_m64nNk16_f32<T, WG_N>::template run<0, 0>(acc, da, db, 1);
    }
};
/* One CTA an SM: the 128 accumulators a thread need 40K of the SM's 64K
 * registers; the shared memory only has to fit. */
static_assert(SMEM_BYTES <= 227u * 1024u, "shared memory over an SM's");

/* Bytes [from, from + n) of src into dst, wrapping at src_bytes (a 16-byte
 * multiple); all threads, 16 bytes each. */
__device__ void copy_wrapped(uint8_t *dst, const uint8_t *src, size_t src_bytes, size_t from,
                             uint32_t n)
{
    for (uint32_t i = threadIdx.x * 16u; i < n; i += THREADS * 16u)
        *reinterpret_cast<uint4 *>(dst + i) =
            *reinterpret_cast<const uint4 *>(src + (from + i) % src_bytes);
}

template <typename Mma>
__global__ void __launch_bounds__(THREADS, 1)
tensor_probe(const uint8_t *a, size_t a_bytes, const uint8_t *b, size_t b_bytes, long long groups,
             float *sink)
{
    extern __shared__ uint8_t gs_probe_smem_raw[];
    uint8_t *smem = reinterpret_cast<uint8_t *>(
        (reinterpret_cast<uintptr_t>(gs_probe_smem_raw) + 1023) & ~(uintptr_t)1023);

    /* each CTA its own rows of the call's operands */
    for (int s = 0; s < STAGES; ++s) {
        uint8_t *st = smem + s * STAGE_BYTES;
        const size_t k = (size_t)(blockIdx.x % DISTINCT_CTAS) * STAGES + s;
        copy_wrapped(st, a, a_bytes, k * CONSUMERS * P_BYTES, CONSUMERS * P_BYTES);
        copy_wrapped(st + CONSUMERS * P_BYTES, b, b_bytes, k * Q_BYTES, Q_BYTES);
    }
    fence_proxy_async_shared_cta(); /* st.shared before the wgmmas (async proxy) read it */
    __syncthreads();

    const int c = threadIdx.x / 128;
    const long long wgs = (long long)gridDim.x * CONSUMERS, w = (long long)blockIdx.x * CONSUMERS + c;
    const long long mine = groups / wgs + (w < groups % wgs ? 1 : 0);

    float acc[ACC];
#pragma unroll
    for (int r = 0; r < ACC; ++r)
        acc[r] = 0.0f;
    for (long long g = 0; g < mine; ++g) {
        const uint32_t st = smem_u32(smem + (g % STAGES) * STAGE_BYTES);
        const uint64_t da = wgmma_desc_sw128(st + c * P_BYTES, 16, 1024);
        const uint64_t db = wgmma_desc_sw128(st + CONSUMERS * P_BYTES, 16, 1024);
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < K_STEPS; ++ks)
            Mma::run(acc, da + 2 * ks, db + 2 * ks); /* a step: 32 bytes, 2 units */
        wgmma_commit_group();
        wgmma_wait_group<1>(); /* two k-blocks in flight, as the tiles keep them */
    }
    wgmma_wait_group<0>();
#pragma unroll
    for (int r = 0; r < ACC; ++r)
        wgmma_fence_operand(acc[r]);
    /* never true for finite operands' sums; keeps the sums live */
    if (acc[0] == -1.0e30f)
        sink[threadIdx.x] = acc[ACC - 1];
}

template <typename Mma>
cudaError_t launch(const void *a, size_t a_bytes, const void *b, size_t b_bytes, double flop,
                   float *sink, cudaStream_t stream)
{
    /* one k-block of one warpgroup */
    constexpr double FLOP_PER_GROUP = 2.0 * 64 * WG_N * Mma::K_PER_ROW;
    /* the current device's SMs, read every call (a process may switch
     * devices; the queries cost microseconds against a 0.2 ms or longer call) */
    int dev = 0, sms = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(tensor_probe<Mma>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SMEM_BYTES);
    if (e != cudaSuccess)
        return e;
    const long long groups = (long long)(flop / FLOP_PER_GROUP + 0.5);
    tensor_probe<Mma><<<sms, THREADS, SMEM_BYTES, stream>>>(
        (const uint8_t *)a, a_bytes & ~(size_t)15, (const uint8_t *)b, b_bytes & ~(size_t)15,
        groups, sink);
    return cudaGetLastError();
}

} // namespace

/* One probe call doing `flop` (2 m n k of the call) with A's and B's bytes
 * (each at least 16); a_e5m2 / b_e5m2 pick the wgmma's operand types (A's
 * bytes as the wgmma's A: the tiles put B there, which for a mixed-type
 * call swaps the instruction's type order, not its rate).
 * sink: THREADS floats of device memory, never written for finite operands.
 * cudaError_t of the launch. */
extern "C" int gs_bench_tensor_probe_fp8(const void *a, size_t a_bytes, const void *b,
                                         size_t b_bytes, int a_e5m2, int b_e5m2, double flop,
                                         float *sink, cudaStream_t stream)
{
    using E4 = __nv_fp8_e4m3;
    using E5 = __nv_fp8_e5m2;
    if (a_bytes < 16 || b_bytes < 16)
        return (int)cudaErrorInvalidValue;
    if (a_e5m2)
        return (int)(b_e5m2 ? launch<Fp8Mma<E5, E5>>(a, a_bytes, b, b_bytes, flop, sink, stream)
                            : launch<Fp8Mma<E5, E4>>(a, a_bytes, b, b_bytes, flop, sink, stream));
    return (int)(b_e5m2 ? launch<Fp8Mma<E4, E5>>(a, a_bytes, b, b_bytes, flop, sink, stream)
                        : launch<Fp8Mma<E4, E4>>(a, a_bytes, b, b_bytes, flop, sink, stream));
}

/* The same for a 16-bit call (bench_ab --tensor): bf16 (else fp16) wgmmas
 * with fp32 accumulation on A's and B's bytes. */
extern "C" int gs_bench_tensor_probe_16(const void *a, size_t a_bytes, const void *b,
                                        size_t b_bytes, int bf16, double flop, float *sink,
                                        cudaStream_t stream)
{
    if (a_bytes < 16 || b_bytes < 16)
        return (int)cudaErrorInvalidValue;
    return (int)(bf16 ? launch<Mma16<__nv_bfloat16>>(a, a_bytes, b, b_bytes, flop, sink, stream)
                      : launch<Mma16<__half>>(a, a_bytes, b, b_bytes, flop, sink, stream));
}
