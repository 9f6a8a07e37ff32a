/* The decode kernels' k split over blocks: plain C, shared by the skinny
 * family's plans (kernels/skinny/skinny_plan.cuh) and the FP8 decode rings'
 * (kernels/fp8/fp8_family.c), each with its own fill and unit of work. */
#ifndef GS_SPLIT_H
#define GS_SPLIT_H

#include <stdint.h>

/* The number of blocks splitting k: doubled, up to max, while row_blocks
 * times the doubled split times fill stays within capacity and each block
 * of the doubled split keeps at least unit of the work. */
static inline int gs_split_doubling(int64_t row_blocks, int64_t fill, int64_t capacity,
                                    int64_t work, int64_t unit, int max)
{
    int split = 1;
    while (split < max && row_blocks * split * fill <= capacity && work >= 2 * split * unit)
        split *= 2;
    return split;
}

#endif /* GS_SPLIT_H */
