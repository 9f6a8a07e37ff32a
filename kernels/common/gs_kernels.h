/* C launch API of every kernel family (extern "C", callable from pure C).
 *
 * Each family exposes:
 *   *_can_implement(c, d)  1 when the kernel computes exactly the problems of
 *                          class c (p->cls: dtype, transposes, alignment,
 *                          strides, sizes; gs_problem_classify) on this
 *                          device (compute capability), 0 otherwise. Reads
 *                          the class only, so a decision keyed on the class
 *                          holds for every call of it. Pure host code: it
 *                          never touches the GPU, so dispatch tests call it
 *                          without one.
 *   *_run(p, d)            enqueue the whole problem (all batches) on
 *                          p->stream; 0 on success, else a cudaError_t value
 *                          and nothing was enqueued, so the caller can forward
 *                          the call to cuBLAS. Never synchronizes, never
 *                          allocates device memory, never changes the current
 *                          device.
 *   *_workspace_bytes(p, d) bytes of scratch *_run needs for p (0: none).
 *                          Pure host code. The shim then hands the stream's
 *                          workspace in p->workspace / p->workspace_size, or
 *                          forwards the call when it cannot (cap exceeded,
 *                          first use inside graph capture).
 *   *_plan(p, d, plan)     the family table's plan (dispatch/gs_family.h) for
 *                          a problem can_implement took: plan->kernel,
 *                          plan->workspace_bytes (as *_name and
 *                          *_workspace_bytes give them) and plan->data, the
 *                          kernel's own plan (tile, split, grid). Pure host
 *                          code.
 *   *_run_plan(plan, p, d) enqueue p as planned, without planning again or
 *                          repeating can_implement: as *_run, and
 *                          GS_RUN_NO_WORKSPACE (cudaErrorMemoryAllocation,
 *                          nothing enqueued) when p's workspace cannot hold
 *                          plan->workspace_bytes. *_run is can_implement,
 *                          *_plan and *_run_plan in one (the direct tests).
 *
 * Workspace contract (shim/base/gs_workspace.c): one buffer per (device, stream),
 * reused by consecutive calls on that stream, so kernels on one stream never
 * share it concurrently; 256-byte aligned. Its first GS_WS_FLAG_BYTES are
 * semaphores/counters: zero when allocated, and every kernel that uses them
 * leaves them zero when it completes (so a captured graph replays, and the
 * next call finds them clean without a memset launch). Partial results live
 * after them, from byte GS_WS_FLAG_BYTES on; their content is undefined
 * between calls. *_workspace_bytes counts the flag bytes too.
 */
#ifndef GS_KERNELS_H
#define GS_KERNELS_H

#include "gs_family.h"
#include "gs_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { GS_WS_FLAG_BYTES = 64 * 1024 }; /* 16384 32-bit counters */

/* ---- warp-tiled SIMT SGEMM (kernels/sgemm_simt/sgemm_simt.cu) ---- */
int gs_sgemm_simt_can_implement(const gs_class_t *c, const gs_device_t *d);
int gs_sgemm_simt_run(const gs_problem_t *p, const gs_device_t *d);
/* tile shape and split in it, as planned for d (one SM when d is NULL or absent) */
const char *gs_sgemm_simt_name(const gs_problem_t *p, const gs_device_t *d);
size_t gs_sgemm_simt_workspace_bytes(const gs_problem_t *p, const gs_device_t *d);
void gs_sgemm_simt_plan(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *plan);
int gs_sgemm_simt_run_plan(const gs_plan_t *plan, const gs_problem_t *p, const gs_device_t *d);

/* ---- Hopper warp-specialized pingpong bf16/fp16 (kernels/pingpong/pingpong_sm90.cu) ---- */
typedef enum gs_pingpong_config {
    GS_PINGPONG_128x128x64 = 0,      /* pingpong, 128 (m) x 128 (n) tiles */
    GS_PINGPONG_COOP_256x128x64 = 1, /* cooperative, 256 (m) x 128 (n) tiles */
    GS_PINGPONG_192x128x64 = 2,      /* pingpong, 192 (m) x 128 (n) tiles */
    GS_PINGPONG_CONFIG_COUNT
} gs_pingpong_config_t;
int gs_pingpong_can_implement(const gs_class_t *c, const gs_device_t *d,
                              gs_pingpong_config_t cfg);
int gs_pingpong_run(const gs_problem_t *p, const gs_device_t *d,
                    gs_pingpong_config_t cfg);
const char *gs_pingpong_name(gs_pingpong_config_t cfg);
/* the configuration's name, with "_splitk<S>" when p is split S ways,
 * "_streamk" when its ragged last wave is dealt out by k-blocks */
const char *gs_pingpong_kernel_name(const gs_problem_t *p, const gs_device_t *d,
                                    gs_pingpong_config_t cfg);
size_t gs_pingpong_workspace_bytes(const gs_problem_t *p, const gs_device_t *d,
                                   gs_pingpong_config_t cfg);
/* plan->config is the gs_pingpong_config_t */
void gs_pingpong_plan(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *plan);
int gs_pingpong_run_plan(const gs_plan_t *plan, const gs_problem_t *p, const gs_device_t *d);
/* The developer knobs (GEMMSHIM_DEV_PINGPONG_*; kernels/pingpong/pingpong_family.c):
 * raster group (0: the plan's), deferred epilogue (1), a CTA cap (0: none),
 * stream-K mode (0 off, 1 the rule, 2 every ragged wave, 3 as 2 and short
 * ranges too). Set before the first call. */
void gs_pingpong_set_knobs(int group, int defer, int max_ctas, int sk);
/* Share of the SMs' tile slots busy when p's tiles are dealt whole over the
 * persistent grid (1: one full wave per wave; 1 for split-K plans). */
double gs_pingpong_wave_efficiency(const gs_problem_t *p, const gs_device_t *d,
                                   gs_pingpong_config_t cfg);
/* Share of the multiply-adds of p's tiles (whole tiles, whole k-blocks)
 * inside m, n and k. */
double gs_pingpong_tile_fill(const gs_problem_t *p, gs_pingpong_config_t cfg);
/* 1 where p's plan splits k, deals stream-K and packs an operand as
 * measured's would with tight leading dimensions (the routing table's
 * readings hold only so). */
int gs_pingpong_same_plan(const gs_problem_t *p, const gs_problem_t *measured,
                          const gs_device_t *d, gs_pingpong_config_t cfg);

/* ---- verify mode's comparison (kernels/common/verify_compare.cu) ---- */
/* Enqueue on p->stream: out[0..2] (device memory) = sum (ours-ref)^2,
 * sum ref^2, and the count of elements finite on one side only, over p's
 * C windows (c_type, m, n, ldc, batch, stride_c). 0 or a cudaError_t. */
int gs_compare_launch(const gs_problem_t *p, const void *ours, const void *ref, double *out);

/* ---- device properties (kernels/common/gs_device.cu) ---- */
/* Fills d for the calling thread's current device; d->present = 0 (and a
 * cudaError_t returned) when there is none. Cached per device ordinal;
 * does not create or change contexts beyond what a kernel launch would. */
int gs_device_query(gs_device_t *d);

/* The driver's cuTensorMapEncodeTiled (its 12.0 ABI), found through the
 * runtime's entry-point query once per process; NULL where the driver has
 * none. Cast to PFN_cuTensorMapEncodeTiled_v12000 (cudaTypedefs.h).
 * (kernels/common/gs_tensor_map.cu, with the encoding the families share.) */
void *gs_tensor_map_encoder(void);

/* 16-byte alignment of a base address: what TMA boxes and the kernels'
 * vector loads need of every operand they read that way. */
static inline int gs_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* ---- skinny (decode) GEMM on mma.sync, sm_80+ (kernels/skinny/skinny.cu) ----
 * C = alpha * A^T * B + beta * C with A stored k x m (TN, each row of op(A)
 * contiguous along k), n <= GS_SKINNY_N_MAX tokens, bf16 or fp16 inputs,
 * output of the input type or fp32, fp32 accumulation. Bitwise
 * reproducible: split k is reduced in a fixed order, no atomics. */
enum { GS_SKINNY_N_MAX = 64 };
int gs_skinny_can_implement(const gs_class_t *c, const gs_device_t *d);
int gs_skinny_run(const gs_problem_t *p, const gs_device_t *d);
/* the kernel, n bucket and split gs_skinny_run picks on d (sm_80's choice when d is
 * NULL or absent) */
const char *gs_skinny_name(const gs_problem_t *p, const gs_device_t *d);
size_t gs_skinny_workspace_bytes(const gs_problem_t *p, const gs_device_t *d);
void gs_skinny_plan(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *plan);
int gs_skinny_run_plan(const gs_plan_t *plan, const gs_problem_t *p, const gs_device_t *d);
/* The developer knobs (GEMMSHIM_DEV_SKINNY_*; kernels/skinny/skinny_family.c): the
 * wgmma ring on sm_90 (1) or not (0), a forced cluster split (0: the plan's),
 * a forced workspace split (0: the plan's). Set before the first call. */
void gs_skinny_set_knobs(int wg, int ck, int ws);

#ifdef __cplusplus
}
#endif
#endif /* GS_KERNELS_H */
