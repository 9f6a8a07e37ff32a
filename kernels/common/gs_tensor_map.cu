/* TMA tensor maps, host side (gs_tensor_map.h): the driver's
 * cuTensorMapEncodeTiled, found once per process through the runtime's
 * entry-point query (no libcuda link), and the one 3D encoding the families
 * use. No device code. */
#include "gs_kernels.h"
#include "gs_tensor_map.h"

#include <cudaTypedefs.h>
#include <cuda_runtime.h>

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

bool gs_tensor_map_3d(CUtensorMap *map, CUtensorMapDataType dt, size_t esize, const void *base,
                      uint64_t inner, uint64_t outer, uint64_t batch, uint64_t ld,
                      uint64_t bstride, uint32_t box_inner, uint32_t box_outer)
{
    PFN_cuTensorMapEncodeTiled_v12000 enc =
        reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(gs_tensor_map_encoder());
    if (!enc)
        return false;
    const uint64_t s1 = ld * esize;
    uint64_t s2 = bstride * esize;
    if (batch == 1) /* unused: any legal stride */
        s2 = (s1 * outer < (1ull << 40)) ? s1 * outer : s1;
    cuuint64_t dims[3] = {inner, outer, batch};
    cuuint64_t strides[2] = {s1, s2};
    cuuint32_t box[3] = {box_inner, box_outer, 1};
    cuuint32_t estr[3] = {1, 1, 1};
    return enc(map, dt, 3, const_cast<void *>(base), dims, strides, box, estr,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
        == CUDA_SUCCESS;
}

CUtensorMapDataType gs_tensor_map_dtype(gs_dtype_t t)
{
    switch (t) {
    case GS_DT_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case GS_DT_F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    default: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    }
}
