/* Host side: raise kernels' dynamic shared-memory limit once per device.
 * cudaFuncSetAttribute is per device and kernel, and costs a driver call;
 * each launcher keeps one bit per device ordinal in `done` for the kernels
 * it launches. Racing first callers set the same value, which is harmless.
 * Ordinals outside 0..63 are not cached (set on every call). */
#ifndef GS_SMEM_LIMIT_CUH
#define GS_SMEM_LIMIT_CUH

#include <atomic>
#include <stdint.h>

#include <cuda_runtime.h>

template <class... Kernels>
cudaError_t gs_smem_limit_once(std::atomic<uint64_t> &done, int ordinal, int bytes,
                               Kernels... kernels)
{
    const bool cacheable = ordinal >= 0 && ordinal < 64;
    const uint64_t bit = cacheable ? 1ull << ordinal : 0;
    if (cacheable && (done.load(std::memory_order_acquire) & bit))
        return cudaSuccess;
    cudaError_t e = cudaSuccess;
    ((e = e == cudaSuccess
              ? cudaFuncSetAttribute(kernels, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)
              : e),
     ...);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return e;
    }
    if (cacheable)
        done.fetch_or(bit, std::memory_order_acq_rel);
    return cudaSuccess;
}

#endif /* GS_SMEM_LIMIT_CUH */
