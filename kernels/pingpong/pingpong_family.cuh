/* The pingpong family's pieces, for each of its translation units
 * (pingpong_sm90.cu, the C API and planner; pingpong_instance.cu, the
 * kernels of one instance): no relocatable device code, so every kernel
 * compiles as it would in one file. */
#ifndef GS_PINGPONG_FAMILY_CUH
#define GS_PINGPONG_FAMILY_CUH

#include <cstdio>
#include <cstdlib>
#include <cuda.h> /* CUtensorMap and the driver enums: header only, no libcuda link */
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cassert>
#include <cstring>
#include <climits>
#include <type_traits>
#include <stdint.h>

#include "gs_kernels.h"
#include "gs_pack.h"

/* in this order */
#include "pingpong_config.cuh"
#include "pingpong_scheduler.cuh"
#include "pingpong_mainloop.cuh"
#include "pingpong_epilogue.cuh"
#include "pingpong_reduce.cuh"
#include "pingpong_kernel.cuh"
#include "pingpong_plan.cuh"
#include "pingpong_launch.cuh"
#include "pingpong_instances.h"

#endif /* GS_PINGPONG_FAMILY_CUH */
