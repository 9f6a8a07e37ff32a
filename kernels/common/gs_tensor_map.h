/* TMA tensor maps, host side: the one encoder of the families that load
 * through TMA (pingpong, skinny's wgmma ring), so that both describe their
 * operands the same way and find the driver's encoder the same way.
 * Host code only (kernels/common/gs_tensor_map.cu); C++ linkage, for the
 * families' translation units. */
#ifndef GS_TENSOR_MAP_H
#define GS_TENSOR_MAP_H

#include <cuda.h> /* CUtensorMap and the driver enums: header only, no libcuda link */
#include <stddef.h>
#include <stdint.h>

#include "gs_problem.h"

/* A 3D map {inner, outer, batch} of esize-byte elements at base: ld and
 * bstride in elements (bstride unused when batch == 1), boxes of
 * box_inner x box_outer x 1, 128-byte swizzle, 256-byte L2 promotion, zeros
 * out of bounds. false when the driver has no encoder or refuses the map. */
bool gs_tensor_map_3d(CUtensorMap *map, CUtensorMapDataType dt, size_t esize, const void *base,
                      uint64_t inner, uint64_t outer, uint64_t batch, uint64_t ld,
                      uint64_t bstride, uint32_t box_inner, uint32_t box_outer);

/* The map's element type for t: bf16, fp16, else fp32. */
CUtensorMapDataType gs_tensor_map_dtype(gs_dtype_t t);

#endif /* GS_TENSOR_MAP_H */
