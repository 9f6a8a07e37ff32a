/* Properties of the calling thread's current device, read once per device
 * ordinal. Only queries: no context is created or made current here that a
 * kernel launch on the application's stream would not use anyway. */
#include "gs_kernels.h"

#include <cuda_runtime.h>
#include <string.h>

#define GS_MAX_DEVICES 64

static gs_device_t cache[GS_MAX_DEVICES];
static int cached[GS_MAX_DEVICES]; /* 0 unknown, 1 filled (benign race: same values) */

/* The routing table's model key of the device (gs_gpu_key of its name,
 * "NVIDIA H200" -> "H200"), from the full properties query, which the cache
 * above makes a once-per-device cost. A failure leaves the key empty (the
 * table then reads conservatively) and clears the last error it set, as the
 * launch paths do after a failed launch, so that it does not surface in the
 * application's next cudaGetLastError (that also clears an error the
 * application had not fetched yet: the same trade as there). */
static void gpu_key(int dev, char *key, size_t n)
{
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
        gs_gpu_key(prop.name, key, n);
    } else {
        (void)cudaGetLastError();
        key[0] = '\0';
    }
}

extern "C" int gs_device_query(gs_device_t *d)
{
    memset(d, 0, sizeof *d);
    int dev = -1;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return (int)e;
    if (dev >= 0 && dev < GS_MAX_DEVICES && __atomic_load_n(&cached[dev], __ATOMIC_ACQUIRE)) {
        *d = cache[dev];
        return 0;
    }
    int major = 0, minor = 0, sms = 0, smem = 0, l2 = 0;
    if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) ||
        (e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev)) ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) ||
        (e = cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) ||
        (e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev)))
        return (int)e;
    d->present = 1;
    d->ordinal = dev;
    d->cc_major = major;
    d->cc_minor = minor;
    d->sm_count = sms;
    d->smem_optin = (size_t)smem;
    d->l2_bytes = (size_t)l2;
    gpu_key(dev, d->gpu, sizeof d->gpu);
    if (dev >= 0 && dev < GS_MAX_DEVICES) {
        cache[dev] = *d;
        __atomic_store_n(&cached[dev], 1, __ATOMIC_RELEASE);
    }
    return 0;
}
