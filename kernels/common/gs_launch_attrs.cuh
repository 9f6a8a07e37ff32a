/* Host side: the launch attributes of a routed kernel, one place for every
 * launcher (cudaLaunchKernelEx). attr must outlive the launch call. */
#ifndef GS_LAUNCH_ATTRS_CUH
#define GS_LAUNCH_ATTRS_CUH

#include <cuda_runtime.h>

/* cooperative: all blocks resident at once (blocks that wait on each other;
 * the launch fails rather than run a grid that cannot fit). cluster > 1: a
 * thread-block cluster of that many blocks along x (never together with
 * cooperative). pdl: programmatic stream serialization, for kernels that
 * execute griddepcontrol.wait before touching global memory. */
static inline void gs_set_launch_attrs(cudaLaunchConfig_t &lc, cudaLaunchAttribute (&attr)[2],
                                       bool cooperative, int cluster, bool pdl)
{
    unsigned na = 0;
    if (cooperative) {
        attr[na].id = cudaLaunchAttributeCooperative;
        attr[na++].val.cooperative = 1;
    } else if (cluster > 1) {
        attr[na].id = cudaLaunchAttributeClusterDimension;
        attr[na].val.clusterDim.x = (unsigned)cluster;
        attr[na].val.clusterDim.y = 1;
        attr[na++].val.clusterDim.z = 1;
    }
    if (pdl) {
        attr[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[na++].val.programmaticStreamSerializationAllowed = 1;
    }
    lc.attrs = na ? attr : nullptr;
    lc.numAttrs = na;
}

#endif /* GS_LAUNCH_ATTRS_CUH */
