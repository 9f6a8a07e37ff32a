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
 * Two engines; bench_ab times both and keeps the faster per row (neither
 * is a bound by itself: on an H200 our register-load decode kernel beat the
 * bulk engine by 3-8% at 4096x1x4096, 33.5 MB).
 *   bulk: copies (cp.async.bulk, the TMA's non-tensor form) of `chunk` bytes
 *         into a shared-memory ring of `ring` bytes, one issuing thread per
 *         CTA, one CTA per SM; nobody reads the ring, the bytes only have to
 *         arrive. 64 KB chunks in a 192 KB ring were the fastest of eight
 *         settings tried on an H200 (bench/NOTES.md "Speed of light at
 *         size"); GEMMSHIM_BENCH_FLOOR_CTAS / _CHUNK_KB / _RING_KB set others.
 *   load: 16-byte loads straight to registers, 8 in flight per thread, two
 *         CTAs of 512 threads per SM.
 * C is stored as zeros, 16 bytes a lane: in the bulk engine by the CTA's
 * threads that issue no copies, in the load engine by every thread after
 * its loads. Built for sm_90a; elsewhere the bulk launch fails and bench_ab
 * reports no floor. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "../kernels/common/gs_ptx.cuh"

namespace {

constexpr int THREADS = 256;
constexpr int MAX_STAGES = 32;
constexpr size_t MAX_RING = 200u << 10;
constexpr size_t SMEM_BYTES = MAX_RING + MAX_STAGES * sizeof(uint64_t);

/* C as zeros, 16 bytes a lane: lane `lane` of `lanes` storing threads. */
__device__ __forceinline__ void store_zero_c(uint4 *c, size_t c_vecs, size_t lane, size_t lanes)
{
    for (size_t v = lane; v < c_vecs; v += lanes)
        c[v] = make_uint4(0, 0, 0, 0);
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* Bytes of chunk i of an operand of `bytes` bytes: whole chunks, then the
 * rest rounded down to 16 (a bulk copy moves multiples of 16; the last < 16
 * bytes of an operand are left out, at most 15 of millions). */
__device__ __forceinline__ uint32_t chunk_bytes(size_t bytes, size_t i, uint32_t chunk)
{
    const size_t left = bytes - i * chunk;
    return (uint32_t)(left >= chunk ? chunk : left & ~(size_t)15);
}
#endif

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
        store_zero_c(c, c_vecs, (size_t)blockIdx.x * (THREADS - 32) + (threadIdx.x - 32),
                     (size_t)gridDim.x * (THREADS - 32));
    }
#else
    __trap(); /* built for another target: stop bench_ab (a sticky error) rather than time an empty kernel */
#endif
}

/* The load engine: every thread keeps LDG_UNROLL independent 16-byte loads
 * in flight (ld.global.nc, no L1 allocation, 256-byte L2 prefetch), two
 * CTAs of 512 threads per SM, each CTA a contiguous share of A then B. The
 * loaded words are folded into one register that decides a store nobody
 * takes, so the loads cannot be dropped; then every thread stores its share
 * of C. */
constexpr int LDG_THREADS = 512;
constexpr int LDG_UNROLL = 8;

__global__ void __launch_bounds__(LDG_THREADS) floor_ldg_kernel(const uint4 *a, size_t a_vecs,
                                                                const uint4 *b, size_t b_vecs,
                                                                uint4 *c, size_t c_vecs)
{
    const size_t total = a_vecs + b_vecs;
    const size_t first = total * blockIdx.x / gridDim.x, last = total * (blockIdx.x + 1) / gridDim.x;
    uint32_t fold = 0;
    for (size_t v = first + threadIdx.x; v < last; v += (size_t)LDG_THREADS * LDG_UNROLL) {
        uint4 r[LDG_UNROLL];
#pragma unroll
        for (int u = 0; u < LDG_UNROLL; ++u) {
            const size_t i = v + (size_t)u * LDG_THREADS;
            r[u] = i < last ? ld_global_nc_na_l2_256_v4(i < a_vecs ? a + i : b + (i - a_vecs))
                            : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < LDG_UNROLL; ++u)
            fold ^= r[u].x ^ r[u].y ^ r[u].z ^ r[u].w;
    }
    store_zero_c(c, c_vecs, (size_t)blockIdx.x * LDG_THREADS + threadIdx.x,
                 (size_t)gridDim.x * LDG_THREADS);
    if (fold == 0x9e3779b9u && c_vecs) /* practically never; keeps the loads */
        c[0] = make_uint4(fold, 0, 0, 0);
}

/* The current device's SM count, asked once (bench_ab uses one device);
 * 0 with the error in *e when the runtime cannot say. */
int sm_count(cudaError_t *e)
{
    static int sms = 0;
    *e = cudaSuccess;
    if (sms <= 0) {
        int dev = 0;
        *e = cudaGetDevice(&dev);
        if (*e == cudaSuccess)
            *e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    }
    return *e == cudaSuccess ? sms : 0;
}

} // namespace

/* The load engine on `stream`: ctas <= 0 means two per SM. */
extern "C" int gs_bench_floor_ldg_launch(const void *a, size_t a_bytes, const void *b,
                                         size_t b_bytes, void *c, size_t c_bytes, int ctas,
                                         cudaStream_t stream)
{
    cudaError_t e;
    const int sms = sm_count(&e);
    if (e != cudaSuccess)
        return (int)e;
    floor_ldg_kernel<<<ctas > 0 ? ctas : 2 * sms, LDG_THREADS, 0, stream>>>(
        static_cast<const uint4 *>(a), a_bytes / sizeof(uint4), static_cast<const uint4 *>(b),
        b_bytes / sizeof(uint4), static_cast<uint4 *>(c), c_bytes / sizeof(uint4));
    return (int)cudaGetLastError();
}

/* Launches the probe on `stream`; ctas <= 0 means one per SM, chunk_kb /
 * ring_kb <= 0 the defaults (64 / 192). Returns the launch's cudaError_t
 * (cudaErrorNoKernelImageForDevice off sm_90, cudaErrorInvalidValue for a
 * ring that does not hold 1..32 whole chunks within 200 KB). */
extern "C" int gs_bench_floor_launch(const void *a, size_t a_bytes, const void *b, size_t b_bytes,
                                     void *c, size_t c_bytes, int ctas, int chunk_kb, int ring_kb,
                                     cudaStream_t stream)
{
    const size_t chunk = (size_t)(chunk_kb > 0 ? chunk_kb : 64) << 10;
    const size_t ring = (size_t)(ring_kb > 0 ? ring_kb : 192) << 10;
    const size_t stages = ring / chunk;
    if (stages < 1 || stages > MAX_STAGES || stages * chunk > MAX_RING)
        return (int)cudaErrorInvalidValue;
    static int ready = -1;
    cudaError_t e;
    const int sms = sm_count(&e);
    if (ready < 0) {
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
