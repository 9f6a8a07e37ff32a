/* Skinny GEMM for LLM decode: C (m x n) = alpha * A^T * B + beta * C with
 * A stored k x m (TN: weight row i contiguous along k at A[kk + i*lda]),
 * B k x n (token j contiguous along k at B[kk + j*ldb]), n <= 64 tokens,
 * bf16 or fp16 inputs, fp32 accumulation on mma.sync.m16n8k16, optional
 * bias[row] (the cublasLt BIAS epilogue).
 *
 * Why this shape of kernel: the arithmetic intensity is n FLOP per weight
 * byte, so the time floor is the weight bytes over the memory rate, and the
 * kernel's job is to keep enough 16-byte weight loads in flight on every SM.
 * At n = 16..64 plain fp32 FMA could not keep up with 4 TB/s, hence tensor
 * cores, with the weights as the M operand and the tokens as N.
 *
 * Operands go from global memory straight into mma fragments, no shared
 * memory: lane (g = lane/4, t = lane%4) loads 16 bytes (8 consecutive k) of
 * weight rows g and g+8 and of token g at k offset 8t of a 32-wide chunk.
 * The mma's k order is a free permutation as long as A and B agree, so
 * the chunk's first k16 step uses the low 8 bytes of every load and the
 * second the high 8 bytes: logical k {2t, 2t+1} of a step is physical
 * {8t + 4s, 8t + 4s + 1}, logical {2t+8, 2t+9} is {8t + 4s + 2, 8t + 4s + 3}.
 * Four lanes read 64 contiguous bytes of a row; the weight loads bypass L1
 * and ask L2 for 256-byte blocks, the token loads stay in L1 where the
 * other warps of the block on the same k find them.
 *
 * Filling the machine when m is small: the warps of a block split k (and,
 * on sm_90, the blocks of a cluster split it further); partial sums meet in
 * shared (distributed shared) memory and are added in a fixed order, so the
 * result is bitwise reproducible, with no atomics. (The sm_90a ring may
 * instead split k over co-resident blocks that meet through the shim's
 * workspace, in the same fixed order: choose_ws_split.)
 *
 * Edges: weight rows past m and tokens past n are clamped to the last valid
 * one (their results are never stored), so the loads need no predicate; a
 * chunk that reaches past k is loaded element by element with zeros, in one
 * tail iteration at most.
 *
 * Two kernels. The register-fed one above (skinny_tn) runs everything on
 * sm_80 and, on sm_90, n <= 8 and every shape whose row blocks would need
 * a cluster split of more than 4 (small m). On sm_90 the rest (n > 8,
 * large m) runs skinny_ring_tn: a producer warp streams 64-wide k stages
 * of weights and tokens into a shared-memory ring with the tensor copy
 * engine, so the bytes in flight per SM no longer compete with the
 * accumulators for registers, and one stage of tokens serves a block of
 * 128 or 256 weight rows instead of 16-32 (the register kernel's token
 * re-reads through L2 cost it up to 2x the weight bytes at n = 64). The
 * choice and its measurements: plan_of and bench/notes-sk.md.
 * On compute capability 9.0 the ring runs as skinny_ring_wg_tn
 * (kernels/skinny/skinny_sm90.cu, sm_90a): the same ring with wgmma reading both
 * operands from it, and its own cluster rule (choose_cluster_wg), which
 * also takes the ring to m = 4096 (bench/notes-decode.md, v5).
 *
 * Both kernels launch with programmatic dependent launch on sm_90 when
 * p->pdl asks for it (GEMMSHIM_PDL, on by default): their grid may be set
 * up while the previous kernel of the stream drains, and they touch nothing
 * another grid may write or read (operands, device scalars, C, the bias, the
 * workspace) before griddepcontrol.wait.
 *
 * Epilogue, both kernels: C = alpha * acc + beta * C (+ bias[row], the
 * cublasLt BIAS epilogue), rounded once to the output type; beta == 0 never
 * reads C; k == 0 or alpha == 0 reads neither A nor B (cublasLtMatmul's
 * calls aside, which compute 0 x the sum as cuBLASLt does: skinny_params).
 */
#include <cuda.h> /* CUtensorMap and the driver enums: header only, no libcuda link */
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cassert>
#include <atomic>

#include <cooperative_groups.h>

#include "gs_kernels.h"
#include "gs_launch_attrs.cuh"
#include "gs_problem.h"
#include "gs_ptx.cuh"
#include "gs_smem_limit.cuh"
#include "skinny_config.h"
#include "skinny_device.cuh"
#include "skinny_sm90.h"

/* The family's sm_80/sm_90 pieces, in this order: one translation unit (no
 * relocatable device code), so every kernel compiles as it did in one file.
 * The sm_90a wgmma ring is the other one (skinny_sm90.cu: another
 * architecture target). */
#include "skinny_tn_kernel.cuh"
#include "skinny_ring_kernel.cuh"
#include "skinny_plan.cuh"
#include "skinny_launch.cuh"

/* ---- C API (gs_kernels.h) ---- */

extern "C" void gs_skinny_set_knobs(int wg, int ck, int ws)
{
    wg_knob_values = wg_knobs{wg, ck, ws};
}

extern "C" int gs_skinny_can_implement(const gs_class_t *p, const gs_device_t *d)
{
    if (!p || !d || !d->present || d->cc_major < 8)
        return 0;
    /* cublasLt BIAS epilogue: one vector of m elements, added after alpha
     * and beta (store_c). */
    if (p->align_bias && p->bias_type != GS_DT_F32 && p->bias_type != GS_DT_F16 &&
        p->bias_type != GS_DT_BF16)
        return 0;
    if (p->align_bias && p->align_bias < gs_dtype_size((gs_dtype_t)p->bias_type))
        return 0;
    if (!is_16bit((gs_dtype_t)p->a_type) || p->b_type != p->a_type ||
        (p->c_type != p->a_type && p->c_type != GS_DT_F32) || p->scalar_type != GS_DT_F32)
        return 0;
    if (!gs_compute_is_f32_accum((gs_compute_t)p->compute))
        return 0;
    if (p->trans_a != GS_OP_T || p->trans_b != GS_OP_N)
        return 0;
    if (p->m < 1 || p->n < 1 || p->n > GS_SKINNY_N_MAX || p->k < 0 || p->batch < 1 ||
        p->batch > MAX_GRID_Y)
        return 0;
    if (p->m > SIZE_MAX_32 || p->k > SIZE_MAX_32)
        return 0;
    /* A is k x m and B k x n in memory (column-major), C m x n. */
    if (p->lda < 1 || p->lda < p->k || p->ldb < 1 || p->ldb < p->k || p->ldc < p->m)
        return 0;
    if (!gs_class_c_batches_disjoint(p))
        return 0;
    if (!p->align_alpha || !p->align_beta || !p->align_c)
        return 0;
    /* 16-byte loads (and bulk copies) of 8 elements at every (batch, row)
     * start (A and B may be NULL: k == 0 reads neither). */
    if ((p->align_a && p->align_a < 16) || (p->align_b && p->align_b < 16) || p->lda % 8 != 0
        || p->ldb % 8 != 0)
        return 0;
    if (p->batch > 1 && (p->stride_a % 8 != 0 || p->stride_b % 8 != 0))
        return 0;
    /* 32-bit row offsets inside a block (see the kernel). */
    if (p->lda > OFFSET_MAX / SKINNY_MAX_BLOCK_M || p->ldb > OFFSET_MAX / GS_SKINNY_N_MAX)
        return 0;
    if (p->align_c < gs_dtype_size((gs_dtype_t)p->c_type))
        return 0;
    return 1;
}

/* Workspace of a plan: the flag bytes (one counter per row block), then per
 * row block and split one fragment-ordered fp32 partial tile. */
size_t ws_bytes_of(const gs_problem_t *p, const skinny_plan &pl)
{
    if (!pl.ws)
        return 0;
    const cfg_shape rs = ring_shape(bucket_of(p->n));
    const size_t slots = (size_t)((p->m + rs.block_m - 1) / rs.block_m) * (size_t)p->batch;
    return (size_t)GS_WS_FLAG_BYTES + slots * (size_t)pl.cluster * (size_t)rs.tile_bytes;
}

/* ---- a call's plan (gs_plan_t.data) ----
 * What gs_skinny_run_plan launches: the kernel (register or ring), the k
 * split and whether it meets through the workspace (plan_of), the register
 * kernel's split for the ring's fallback, the workspace. Decided once. */
namespace {

constexpr uint32_t SKINNY_PLAN_TAG = 0x534b4e31u; /* "SKN1": a plan call_plan_of made */

struct skinny_call_plan {
    uint32_t tag;
    int32_t reg_cluster; /* the register kernel's split where the ring's
                            tensor maps cannot be made (launch_bucket) */
    skinny_plan pl;
    uint64_t ws_bytes;   /* ws_bytes_of(pl) */
};
static_assert(sizeof(skinny_call_plan) == 8 + sizeof(skinny_plan) + 8,
              "skinny_call_plan has no padding");
static_assert(sizeof(skinny_call_plan) <= GS_PLAN_DATA_MAX, "the plan fits gs_plan_t.data");

skinny_call_plan call_plan_of(const gs_problem_t *p, const gs_device_t *d, bool ws_ok = true)
{
    skinny_call_plan cp = {};
    cp.tag = SKINNY_PLAN_TAG;
    cp.pl = plan_of(p, d, ws_ok);
    cp.reg_cluster = choose_cluster(p, d, reg_shape(bucket_of(p->n)), MIN_ITERS_PER_BLOCK);
    cp.ws_bytes = ws_bytes_of(p, cp.pl);
    return cp;
}

[[maybe_unused]] bool same_plan(const skinny_call_plan &a, const skinny_call_plan &b)
{
    return a.tag == b.tag && a.reg_cluster == b.reg_cluster && a.pl.ring == b.pl.ring
           && a.pl.cluster == b.pl.cluster && a.pl.pdl == b.pl.pdl && a.pl.ws == b.pl.ws
           && a.ws_bytes == b.ws_bytes;
}

/* The kernel, n bucket and split of a plan, for logs: per thread, valid
 * until this thread's next name. */
const char *name_of(const gs_problem_t *p, const skinny_plan &pl)
{
    const n_bucket nb = bucket_of(p->n);
    static const char *const in_names[2] = {"bf16", "f16"};
    static const int n_max[BUCKET_COUNT] = {skinny_cfg_n8::N_MAX, skinny_cfg_n16::N_MAX,
                                            skinny_cfg_n32::N_MAX, skinny_cfg_n64::N_MAX};
    static thread_local char name[80];
    if (pl.ring) {
        const cfg_shape cs = ring_shape(nb);
        snprintf(name, sizeof name, "skinny_ring_%s%s_n%d_m%d_%s%d", in_names[p->a_type == GS_DT_F16],
                 p->c_type == GS_DT_F32 ? "_f32out" : "", n_max[nb], cs.block_m,
                 pl.ws ? "ws" : "ck", pl.cluster);
    } else {
        snprintf(name, sizeof name, "skinny_tn_%s%s_n%d_m%d_ck%d", in_names[p->a_type == GS_DT_F16],
                 p->c_type == GS_DT_F32 ? "_f32out" : "", n_max[nb], reg_shape(nb).block_m,
                 pl.cluster);
    }
    return name;
}

void store_plan(const gs_problem_t *p, const skinny_call_plan &cp, gs_plan_t *plan)
{
    memcpy(plan->data.bytes, &cp, sizeof cp);
    plan->workspace_bytes = (size_t)cp.ws_bytes;
    plan->kernel = name_of(p, cp.pl);
}

} // namespace

extern "C" void gs_skinny_plan(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *plan)
{
    store_plan(p, call_plan_of(p, d), plan);
}

extern "C" int gs_skinny_run_plan(const gs_plan_t *plan, const gs_problem_t *p, const gs_device_t *d)
{
    skinny_call_plan cp;
    memcpy(&cp, plan->data.bytes, sizeof cp);
    if (cp.tag != SKINNY_PLAN_TAG)
        return (int)cudaErrorInvalidValue; /* not a plan of gs_skinny_plan */
    /* Enqueue nothing without the workspace: the caller falls back. */
    if (!gs_plan_workspace_ok(plan, p))
        return GS_RUN_NO_WORKSPACE;
    assert(same_plan(cp, call_plan_of(p, d)) || same_plan(cp, call_plan_of(p, d, false)));
    return (int)skinny_dispatch(p, d, cp.pl, cp.reg_cluster);
}

/* Without the workspace a workspace split needs, the cluster plan (the
 * family's run refuses instead: the shim gets the workspace or forwards). */
extern "C" int gs_skinny_run(const gs_problem_t *p, const gs_device_t *d)
{
    if (!p || !gs_skinny_can_implement(&p->cls, d))
        return (int)cudaErrorInvalidValue;
    gs_plan_t plan = {};
    store_plan(p, call_plan_of(p, d), &plan);
    if (!gs_plan_workspace_ok(&plan, p))
        store_plan(p, call_plan_of(p, d, false), &plan);
    return gs_skinny_run_plan(&plan, p, d);
}

extern "C" const char *gs_skinny_name(const gs_problem_t *p, const gs_device_t *dev)
{
    gs_device_t d = {};
    if (dev && dev->present) {
        d = *dev;
    } else {
        d.cc_major = 8; /* no device: name the sm_80 choice */
        d.sm_count = 1;
    }
    return name_of(p, plan_of(p, &d));
}

extern "C" size_t gs_skinny_workspace_bytes(const gs_problem_t *p, const gs_device_t *d)
{
    if (!p || !gs_skinny_can_implement(&p->cls, d))
        return 0;
    return ws_bytes_of(p, plan_of(p, d));
}
