/* Properties of the calling thread's current device, read once per device
 * ordinal. Only queries: no context is created or made current here that a
 * kernel launch on the application's stream would not use anyway. */
#include "gs_kernels.h"

#include <cuda_runtime.h>
#include <string.h>

#define GS_MAX_DEVICES 64

static gs_device_t cache[GS_MAX_DEVICES];
static int cached[GS_MAX_DEVICES]; /* 0 unknown, 1 filled (benign race: same values) */

/* The device's name ("NVIDIA H200"): the full properties query, which the
 * cache above makes a once-per-device cost (the routing table keys its
 * measurements on the model, gs_gpu_key). A failure leaves the name empty
 * and clears the error it set. */
static const char *gpu_name(int dev)
{
    static __thread char name[256];
    cudaDeviceProp prop;
    name[0] = '\0';
    if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
        strncpy(name, prop.name, sizeof name - 1);
        name[sizeof name - 1] = '\0';
    } else {
        (void)cudaGetLastError();
    }
    return name;
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
    gs_gpu_key(gpu_name(dev), d->gpu, sizeof d->gpu);
    if (dev >= 0 && dev < GS_MAX_DEVICES) {
        cache[dev] = *d;
        __atomic_store_n(&cached[dev], 1, __ATOMIC_RELEASE);
    }
    return 0;
}

extern "C" void *gs_tensor_map_encoder(void)
{
    /* A function-local static: initialized once, thread-safe. */
    static void *const fn = [] {
        void *ptr = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000,
                                             cudaEnableDefault, &q) != cudaSuccess
            || q != cudaDriverEntryPointSuccess)
            ptr = nullptr;
        return ptr;
    }();
    return fn;
}
