/* Warp-tiled SIMT fp32 SGEMM (CUTLASS hierarchy: block tile, warp tile,
 * thread tile), column-major, all four transposes, strided batches.
 *
 * Shared memory holds both operands k-major: As[k][m] and Bs[k][n], so that
 * one k step of the inner product reads a thread's A and B fragments as
 * float4 vectors (LDS.128) and does THREAD_M x THREAD_N FFMAs on them.
 *
 * How an operand reaches that layout depends on which of its dimensions is
 * contiguous in global memory (column-major, so A:N and B:T are contiguous
 * along m/n, A:T and B:N along k):
 *   COPY_VEC16  contiguous along m/n and 16-byte aligned: 16-byte cp.async,
 *               a warp reads 512 contiguous bytes;
 *   COPY_ROW4   contiguous along m/n but not 16-byte aligned: 4-byte
 *               cp.async, a warp reads 128 contiguous bytes;
 *   COPY_KVEC16 contiguous along k and 16-byte aligned (256x128 and
 *               128x256 tiles): LDG.128 of 4 consecutive k into registers at the
 *               start of a k-tile, stored as 4 STS.32 into 4 k-rows just
 *               before the k-tile's barrier, so the load latency hides behind
 *               its FFMAs; a quarter of COL4's copy instructions, and the
 *               4-float row padding keeps the stores conflict free;
 *   COPY_COL4   contiguous along k, not aligned (or a smaller tile): 4-byte
 *               cp.async that transposes on the way in; a warp reads 8
 *               consecutive k of 4 rows (4 whole 32-byte sectors) and writes
 *               8 k-rows x 4 columns of shared memory, which the 4-float row
 *               padding spreads over all 32 banks.
 * Every layout runs the same STAGES-deep ring: while stage s is being
 * multiplied, the next STAGES-1 k-tiles are in flight (KVEC16 tiles written
 * STAGES-2 tiles ahead of use instead of STAGES-1).
 *
 * Out-of-range rows and k of the edge tiles are copied with src-size 0 (or
 * fewer than 16 bytes), which zero-fills shared memory without reading global
 * memory, so the inner loop never branches and never reads out of bounds.
 *
 * Deep, narrow problems (few block tiles, long k) split K stream-K style:
 * one CTA per slot of the device (SMs x blocks per SM) and the
 * tiles x k-tiles units dealt out in equal contiguous runs, so every SM is
 * busy however the tiles divide; a run that crosses a tile boundary makes
 * two segments. Each segment stores its fp32 partial tile in the workspace,
 * and a second kernel sums each tile's partials in a fixed order (runs of
 * consecutive slots, then the runs: fixed by the problem and the grid, so
 * bitwise reproducible), applies alpha, beta (C not
 * read when beta == 0) and bias once, and writes C. A second kernel rather
 * than "the last CTA to arrive reduces": on 512x512x32768 that CTA alone
 * would read ~17 partial tiles (2 MB) through one SM while the others idle;
 * the separate reduction spreads those reads over the whole device.
 *
 * The cublasLt BIAS epilogue (fp32 bias) is added in both epilogues after
 * alpha * acc + beta * C.
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>
#include <cassert>
#include <cstring>
#include <cmath>

#include "gs_kernels.h"
#include "gs_problem.h"
#include "gs_ptx.cuh"
#include "gs_smem_limit.cuh"
#include "sgemm_simt_config.h"

/* The family's pieces, in this order: one translation unit (no relocatable
 * device code), so every kernel compiles as it did in one file. */
#include "sgemm_simt_params.cuh"
#include "sgemm_simt_mainloop.cuh"
#include "sgemm_simt_kernel.cuh"
#include "sgemm_simt_reduce.cuh"
#include "sgemm_simt_launch.cuh"
#include "sgemm_simt_plan.cuh"

/* ---- C API (gs_kernels.h) ---- */

extern "C" int gs_sgemm_simt_can_implement(const gs_class_t *p, const gs_device_t *d)
{
    if (!p || !d || !d->present || d->cc_major < 8)
        return 0;
    /* bias: fp32 only (the C type), added after alpha and beta */
    if (p->align_bias && (p->bias_type != GS_DT_F32 || p->align_bias < 4))
        return 0;
    if (p->a_type != GS_DT_F32 || p->b_type != GS_DT_F32 || p->c_type != GS_DT_F32 ||
        p->scalar_type != GS_DT_F32)
        return 0;
    if (p->compute != GS_CT_F32 && p->compute != GS_CT_F32_PEDANTIC)
        return 0;
    /* cublasLtMatmul computes alpha x the sum even at alpha == 0 (a NaN
     * operand reaches D); these kernels skip A and B at a zero alpha, which
     * a device scalar hides from the host (a host zero is forwarded before:
     * compat/gs_lt.c) */
    if (p->entry == GS_EP_LT_MATMUL && p->scalars_on_device)
        return 0;
    if (p->trans_a != GS_OP_N && p->trans_a != GS_OP_T)
        return 0;
    if (p->trans_b != GS_OP_N && p->trans_b != GS_OP_T)
        return 0;
    /* Sizes, rows and tile indices are 32-bit in the kernel (with headroom
     * for a tile past the edge); element offsets are 64-bit. */
    const int64_t size_max = (int64_t)1 << 30, int_max = 0x7fffffff;
    if (p->m < 1 || p->n < 1 || p->k < 0 || p->batch < 1 || p->batch > MAX_GRID_Y * MAX_GRID_Y)
        return 0;
    if (p->m > size_max || p->n > size_max || p->k > size_max)
        return 0;
    const int64_t tiles_m = (p->m + sgemm_cfg_64x64x8::BLOCK_M - 1) / sgemm_cfg_64x64x8::BLOCK_M;
    const int64_t tiles_n = (p->n + sgemm_cfg_64x64x8::BLOCK_N - 1) / sgemm_cfg_64x64x8::BLOCK_N;
    if (tiles_m * tiles_n > int_max)
        return 0;
    if (!ld_ok(p->lda, p->trans_a == GS_OP_N ? p->m : p->k) ||
        !ld_ok(p->ldb, p->trans_b == GS_OP_N ? p->k : p->n) || !ld_ok(p->ldc, p->m))
        return 0;
    if (!gs_class_c_batches_disjoint(p))
        return 0;
    if (!p->align_alpha || !p->align_beta || !p->align_c)
        return 0;
    /* 4-byte aligned (A and B may be NULL: k == 0 reads neither) */
    if ((p->align_a && p->align_a < 4) || (p->align_b && p->align_b < 4) || p->align_c < 4)
        return 0;
    if ((size_t)sgemm_cfg_256x128x8::SMEM_BYTES > d->smem_optin ||
        (size_t)sgemm_cfg_128x256x8::SMEM_BYTES > d->smem_optin ||
        (size_t)sgemm_cfg_128x128x8::SMEM_BYTES > d->smem_optin ||
        (size_t)sgemm_cfg_128x64x8::SMEM_BYTES > d->smem_optin ||
        (size_t)sgemm_cfg_64x64x8::SMEM_BYTES > d->smem_optin)
        return 0;
    return 1;
}

namespace {

/* ---- a call's plan (gs_plan_t.data) ----
 * What gs_sgemm_simt_run_plan launches: the tile configuration and the
 * stream-K split (make_plan), decided once. */
constexpr uint32_t SGEMM_PLAN_TAG = 0x53474d31u; /* "SGM1": a plan gs_sgemm_simt_plan made */

struct sgemm_call_plan {
    uint32_t tag;
    uint32_t pad_;   /* zero: the plan's bytes hold no padding */
    sgemm_plan plan; /* 4 ints and a size_t: no padding inside */
};
static_assert(sizeof(sgemm_plan) == 4 * sizeof(int) + sizeof(size_t), "sgemm_plan has no padding");
static_assert(sizeof(sgemm_call_plan) <= GS_PLAN_DATA_MAX, "the plan fits gs_plan_t.data");

[[maybe_unused]] bool same_plan(const sgemm_plan &a, const sgemm_plan &b)
{
    return a.cfg == b.cfg && a.ctas == b.ctas && a.tiles == b.tiles && a.k_tiles == b.k_tiles
           && a.workspace == b.workspace;
}

const char *name_of(const sgemm_plan &plan)
{
    switch (plan.cfg) {
    case CFG_256x128x8:
        return plan.ctas ? "sgemm_warptile_256x128x8_streamk" : "sgemm_warptile_256x128x8";
    case CFG_128x256x8:
        return plan.ctas ? "sgemm_warptile_128x256x8_streamk" : "sgemm_warptile_128x256x8";
    case CFG_128x128x8:
        return plan.ctas ? "sgemm_warptile_128x128x8_streamk" : "sgemm_warptile_128x128x8";
    case CFG_128x64x8: return "sgemm_warptile_128x64x8";
    default: return plan.ctas ? "sgemm_warptile_64x64x8_streamk" : "sgemm_warptile_64x64x8";
    }
}

} // namespace

extern "C" void gs_sgemm_simt_plan(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *plan)
{
    sgemm_call_plan cp = {};
    cp.tag = SGEMM_PLAN_TAG;
    cp.plan = make_plan(p, device_sm_count(d));
    memcpy(plan->data.bytes, &cp, sizeof cp);
    plan->workspace_bytes = cp.plan.workspace;
    plan->kernel = name_of(cp.plan);
}

/* A split plan needs p->workspace of plan->workspace_bytes: without it
 * nothing is launched and GS_RUN_NO_WORKSPACE (cudaErrorMemoryAllocation)
 * returned, so the shim forwards the call to cuBLAS. */
extern "C" int gs_sgemm_simt_run_plan(const gs_plan_t *pl, const gs_problem_t *p,
                                      const gs_device_t *d)
{
    sgemm_call_plan cp;
    memcpy(&cp, pl->data.bytes, sizeof cp);
    if (cp.tag != SGEMM_PLAN_TAG)
        return (int)cudaErrorInvalidValue; /* not a plan of gs_sgemm_simt_plan */
    if (!gs_plan_workspace_ok(pl, p))
        return GS_RUN_NO_WORKSPACE;
    const sgemm_plan &plan = cp.plan;
    assert(same_plan(plan, make_plan(p, device_sm_count(d))));
    switch (plan.cfg) {
    case CFG_256x128x8:
        return (int)sgemm_launch<sgemm_cfg_256x128x8, MODES_256x128_A, MODES_256x128_B,
                                 CAN_SPLIT[CFG_256x128x8]>(p, d, plan);
    case CFG_128x256x8:
        return (int)sgemm_launch<sgemm_cfg_128x256x8, MODES_128x256_A, MODES_128x256_B,
                                 CAN_SPLIT[CFG_128x256x8]>(p, d, plan);
    case CFG_128x128x8:
        return (int)sgemm_launch<sgemm_cfg_128x128x8, MODES_SMALLER, MODES_SMALLER,
                                 CAN_SPLIT[CFG_128x128x8]>(p, d, plan);
    case CFG_128x64x8:
        return (int)sgemm_launch<sgemm_cfg_128x64x8, MODES_SMALLER, MODES_SMALLER,
                                 CAN_SPLIT[CFG_128x64x8]>(p, d, plan);
    default:
        return (int)sgemm_launch<sgemm_cfg_64x64x8, MODES_SMALLER, MODES_SMALLER,
                                 CAN_SPLIT[CFG_64x64x8]>(p, d, plan);
    }
}

extern "C" int gs_sgemm_simt_run(const gs_problem_t *p, const gs_device_t *d)
{
    if (!p || !gs_sgemm_simt_can_implement(&p->cls, d))
        return (int)cudaErrorInvalidValue;
    gs_plan_t plan = {};
    gs_sgemm_simt_plan(p, d, &plan);
    return gs_sgemm_simt_run_plan(&plan, p, d);
}

extern "C" const char *gs_sgemm_simt_name(const gs_problem_t *p, const gs_device_t *d)
{
    return name_of(make_plan(p, device_sm_count(d)));
}

/* Split problems: the flag bytes (unused: the reduction is a second kernel,
 * ordered by the stream, so no counters) and one partial tile per
 * segment. Same plan as gs_sgemm_simt_run for the same p and device. */
extern "C" size_t gs_sgemm_simt_workspace_bytes(const gs_problem_t *p, const gs_device_t *d)
{
    if (!p || !gs_sgemm_simt_can_implement(&p->cls, d))
        return 0;
    return make_plan(p, device_sm_count(d)).workspace;
}
