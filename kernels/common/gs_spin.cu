/* See gs_spin.h. */
#include "gs_spin.h"

#include <cuda_runtime.h>

namespace {

__global__ void spin_kernel(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

} // namespace

extern "C" int gs_spin_launch(void *stream, unsigned ns)
{
    spin_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(ns);
    return (int)cudaGetLastError();
}
