/* The speed of light of a memory-bound GEMM call, measured: one kernel that
 * moves exactly the call's compulsory bytes (reads op(A) and op(B) once,
 * writes C once; beta = 0 so C is not read) and does nothing else. bench_ab
 * times it like the two GEMMs (same rotated buffer sets, same calls per
 * sample, interleaved rounds, median), so "ours / floor" and "cuBLAS / floor"
 * say how much of the achievable memory time each side spends, at the call's
 * own size, launch gaps and ramp included. A bandwidth figure taken on large
 * buffers (e.g. a 4.25 TB/s device copy) is not reachable by a 12 us call;
 * this is.
 *
 * The reads use the fastest engine Hopper has for a plain stream: bulk
 * copies (cp.async.bulk, the TMA's non-tensor form) of `chunk` bytes into a
 * shared-memory ring of `ring` bytes, one issuing thread per CTA, one CTA per
 * SM. Nobody reads the ring: the bytes only have to arrive. The defaults
 * (64 KB chunks, a 192 KB ring, one CTA per SM) were the fastest of the
 * eight settings tried on an H200 (bench/NOTES.md "Speed of light at size"); bench_ab takes
 * others from GEMMSHIM_BENCH_FLOOR_CTAS / _CHUNK_KB / _RING_KB. The CTA's other warps store C (zeros, 16 bytes a lane) while
 * the stream runs. Built for sm_90a; elsewhere the launch fails and bench_ab
 * reports no floor. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "../kernels/gs_ptx.cuh"

namespace {

constexpr int THREADS = 256;
constexpr int MAX_STAGES = 32;
constexpr size_t MAX_RING = 200u << 10;
constexpr size_t SMEM_BYTES = MAX_RING + MAX_STAGES * sizeof(uint64_t);

/* Bytes of chunk i of an operand of `bytes` bytes: whole chunks, then the
 * rest rounded down to 16 (a bulk copy moves multiples of 16; the last < 16
 * bytes of an operand are left out, at most 15 of millions). */
__device__ __forceinline__ uint32_t chunk_bytes(size_t bytes, size_t i, uint32_t chunk)
{
    const size_t left = bytes - i * chunk;
    return (uint32_t)(left >= chunk ? chunk : left & ~(size_t)15);
}

/* chunk: a multiple of 16; stages * chunk <= MAX_RING, stages <= MAX_STAGES */
__global__ void __launch_bounds__(THREADS) floor_kernel(const char *a, size_t a_bytes,
                                                        const char *b, size_t b_bytes,
                                                        uint4 *c, size_t c_vecs,
                                                        uint32_t chunk, int stages)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(128) unsigned char smem[];
    const size_t CHUNK = chunk;
    const int STAGES = stages;
    uint64_t *full = reinterpret_cast<uint64_t *>(smem + (size_t)STAGES * CHUNK);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s)
            mbarrier_init(&full[s], 1);
        fence_mbarrier_init();
    }
    __syncthreads();

    if (threadIdx.x == 0) {
        /* A's chunks, then B's, dealt to the CTAs in equal contiguous runs. */
        const size_t a_chunks = (a_bytes + CHUNK - 1) / CHUNK;
        const size_t chunks = a_chunks + (b_bytes + CHUNK - 1) / CHUNK;
        const size_t first = chunks * blockIdx.x / gridDim.x;
        const size_t last = chunks * (blockIdx.x + 1) / gridDim.x;
        for (size_t i = first; i < last; ++i) {
            const size_t n = i - first;
            const int slot = (int)(n % STAGES);
            /* The slot's previous copy (n - STAGES) must have landed before
             * it is overwritten: phase (n / STAGES - 1) of its barrier. */
            if (n >= STAGES)
                mbarrier_wait_parity(&full[slot], (uint32_t)((n / STAGES - 1) & 1));
            const bool in_a = i < a_chunks;
            const char *src = in_a ? a + i * CHUNK : b + (i - a_chunks) * CHUNK;
            const uint32_t bytes = in_a ? chunk_bytes(a_bytes, i, chunk) : chunk_bytes(b_bytes, i - a_chunks, chunk);
            mbarrier_arrive_expect_tx(&full[slot], bytes);
            if (bytes)
                bulk_load_g2s(smem + (size_t)slot * CHUNK, src, bytes, &full[slot]);
        }
        /* The copies still in flight land before the CTA may exit. */
        const size_t issued = last - first;
        for (size_t n = issued > STAGES ? issued - STAGES : 0; n < issued; ++n)
            mbarrier_wait_parity(&full[n % STAGES], (uint32_t)((n / STAGES) & 1));
    } else if (threadIdx.x >= 32) {
        const size_t lanes = (size_t)gridDim.x * (THREADS - 32);
        for (size_t v = (size_t)blockIdx.x * (THREADS - 32) + (threadIdx.x - 32); v < c_vecs; v += lanes)
            c[v] = make_uint4(0, 0, 0, 0);
    }
#endif
}

} // namespace

/* Launches the probe on `stream`; ctas <= 0 means one per SM, chunk_kb /
 * ring_kb <= 0 the defaults (64 / 192). Returns the launch's cudaError_t
 * (cudaErrorNoKernelImageForDevice off sm_90, cudaErrorInvalidValue for a
 * ring that does not hold 1..32 chunks or exceeds 200 KB). */
extern "C" int gs_bench_floor_launch(const void *a, size_t a_bytes, const void *b, size_t b_bytes,
                                     void *c, size_t c_bytes, int ctas, int chunk_kb, int ring_kb,
                                     cudaStream_t stream)
{
    const size_t chunk = (size_t)(chunk_kb > 0 ? chunk_kb : 64) << 10;
    const size_t ring = (size_t)(ring_kb > 0 ? ring_kb : 192) << 10;
    const size_t stages = ring / chunk;
    if (stages < 1 || stages > MAX_STAGES || ring > MAX_RING)
        return (int)cudaErrorInvalidValue;
    static int ready = -1, sms = 0;
    if (ready < 0) {
        int dev = 0;
        cudaError_t e = cudaGetDevice(&dev);
        if (e == cudaSuccess)
            e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute(floor_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)SMEM_BYTES);
        ready = e == cudaSuccess;
        if (!ready) {
            cudaGetLastError();
            return (int)e;
        }
    }
    if (!ready)
        return (int)cudaErrorNoKernelImageForDevice;
    /* shared memory sized to the ring, so smaller rings let CTAs share an SM */
    floor_kernel<<<ctas > 0 ? ctas : sms, THREADS, stages * chunk + MAX_STAGES * sizeof(uint64_t), stream>>>(
        static_cast<const char *>(a), a_bytes, static_cast<const char *>(b), b_bytes,
        static_cast<uint4 *>(c), c_bytes / sizeof(uint4), (uint32_t)chunk, (int)stages);
    return (int)cudaGetLastError();
}
