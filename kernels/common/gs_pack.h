/* Operand packing: a copy of a 16-bit matrix whose leading dimension TMA
 * cannot take (not a multiple of 16 bytes: an odd vocabulary's logits,
 * ld = 50257) into scratch with one it can. Shared by the families that
 * load operands through TMA; they pack in chunks along the operand's other
 * dimension, so the scratch stays within the workspace cap. C linkage. */
#ifndef GS_PACK_H
#define GS_PACK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues on `stream`: for s in [0, segments), the len 2-byte elements at
 * src + s * ld_src go to dst + s * ld_dst. src needs 2-byte alignment only;
 * dst and ld_dst * 2 must be multiples of 16. Launched without programmatic
 * dependent launch, so it starts after the stream's previous kernel has
 * finished (which may still read dst). 0, or a cudaError_t with nothing
 * enqueued. */
int gs_pack16(void *dst, int64_t ld_dst, const void *src, int64_t ld_src, int64_t segments,
              int64_t len, int sm_count, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* GS_PACK_H */
