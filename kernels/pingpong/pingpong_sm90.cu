/* Hopper (sm_90a) warp-specialized bf16/fp16 GEMMs: a pingpong and a
 * cooperative arrangement of one kernel template.
 *
 * One CTA = one producer warpgroup + two consumer warpgroups, persistent over
 * a grouped tile raster of (tile_m, tile_n, batch).
 *
 *   producer   one thread issues TMA loads of both operands into a STAGES-deep
 *              shared-memory ring (full[]/empty[] mbarriers). It walks the
 *              CTA's tiles in order and runs ahead into the next tiles while
 *              the consumers are in their epilogues: a stage goes back to it
 *              as soon as the wgmmas reading it retire.
 *   pingpong   (GS_PINGPONG_128x128x64) consumer c owns the CTA's tiles c,
 *              c+2, ... with the whole 128x128 fp32 accumulator; the two take
 *              turns on the tensor cores (MATH_TURN barriers), so one runs its
 *              mainloop while the other runs its epilogue.
 *   cooperative (GS_PINGPONG_COOP_256x128x64) both consumers work on every
 *              tile, consumer c on n rows 64c..64c+63 with m64n256 wgmmas.
 *              A 256 (m) x 128 (n) tile moves 48 KB per k-block for 2M MACs,
 *              against 32 KB per 1M MACs for 128x128: the shared-memory
 *              traffic per MAC (TMA writes plus wgmma operand reads) drops by
 *              about a fifth, which is what bounds the 128x128 tile at
 *              large k (H200: 8192^3 went from 0.97 to 1.00 of cuBLAS). No
 *              second consumer hides its epilogue, so half of it is deferred
 *              into the next tile's first k-blocks (deferred_store: H200,
 *              TN 8448x9216, K = 256..2048 +2-4%); at k = 64 it still loses
 *              to the pingpong tile.
 *   pingpong 192 (GS_PINGPONG_192x128x64) the pingpong arrangement on 192 (m)
 *              x 128 (n) tiles: m64n192 wgmmas, 192 accumulators per
 *              consumer thread. Its shared-memory traffic per MAC sits
 *              between the other two tiles' (66 KB per 1M MACs against 80
 *              and 61) while the other consumer still hides its epilogue:
 *              same-run A/B, TN 8448x9216, K = 256..2048, 4-8% faster than
 *              the cooperative tile on the H100 and the H200, 8192^3 TN/NT/TT
 *              +1-5% (bench/NOTES.md). Only the plain epilogue
 *              (PLAIN_EPILOGUE: beta == 0, host scalars, no bias, m stored
 *              by TMA) and no split-K: can_implement refuses the rest.
 *
 * Epilogue (both arrangements). Each consumer warp stores its own 16 rows of
 * C^T independently: per 16 x 128-byte sub-tile it waits only until the TMA
 * store that last used its staging buffer (one of Cfg::EPI_BUFS per warp)
 * has finished READING it, stages the sub-tile (stmatrix for 16-bit C,
 * st.shared for fp32) and issues its TMA store at once; stores are never
 * waited on for completion (a ragged last m tile is stored with plain
 * predicated stores instead). The staging takes 32 KB in all, which is what
 * leaves the cooperative tile four stages; that tile stores half of a 16-bit
 * beta == 0 tile while the next tile's first k-blocks run (deferred_store). The short-K 128x128 variant
 * (Cfg128x128Short) has a buffer per sub-tile of a 16-bit tile and stages
 * all four before one fence and four back-to-back stores: per sub-tile, the
 * fence and the store issue cost ~300 cycles of a ~550-cycle chain (H200
 * clock64 stamps, bench/NOTES.md). At small k the epilogue is the kernel, and
 * its instruction count is what matters: one unrolled copy per EpiMode
 * (ncu at k = 64, alpha = 1, beta = 0: ~655 instructions per consumer warp
 * and tile, mainloop included, down from ~1440). Then the output stream:
 * evict_first stores for outputs larger than the L2. H200, TN 8448x9216x64:
 * 65.7 -> 46.5 us (0.74 -> 1.04x of cuBLAS).
 *
 * Split-K (deep K, few output tiles; plan_split): when the tiles leave at
 * least half the SMs idle, every tile is cut along k into `splits` units, one
 * per CTA, all resident (cooperative launch), and reduced in a fixed order
 * through the workspace (split_epilogue): bitwise reproducible, alpha/beta and
 * the bias applied once. A separate instantiation (SPLIT), so every other
 * shape runs the unsplit kernel as before.
 *
 * Stream-K (the cooperative tile, many tiles, a ragged last wave at most
 * half full; plan_sk, sk_unit): the whole waves run as above, then the
 * ragged tiles' k-blocks are dealt out evenly over every CTA; a tile's
 * first CTA adds the other CTAs' fp32 partials (workspace, CTA order:
 * bitwise reproducible) and stores it. Another instantiation (SK).
 *
 * Bias (cublasLt BIAS epilogue): C(i, j) += bias[i] after alpha and beta,
 * before rounding, in both epilogues.
 *
 * Orientation. C is column-major (m contiguous). The kernel computes the
 * transposed tile  C^T(n x m) = op(B)^T (n x k) * op(A)^T (k x m): wgmma's M
 * runs along n and its N along m, so each thread's accumulator pairs
 * (d[2i], d[2i+1]) are two consecutive m elements, i.e. adjacent in C's
 * memory. That gives a plain (non-transposed) stmatrix epilogue for every
 * layout; the four cuBLAS layouts only change the operand majors:
 *   wgmma A = op(B)^T : K-major when trans_b == N, MN-major when trans_b == T
 *   wgmma B = op(A)^T : K-major when trans_a == T, MN-major when trans_a == N
 * (TN, PyTorch's nn.Linear forward, is K-major on both sides.)
 */
#include "pingpong_family.cuh"

/* ---- C API (gs_kernels.h) ---- */

namespace {
/* base, "base_splitk<S>" or "base_streamk", then "_packa<chunks>" or
 * "_packb<chunks>" for a packed operand: base itself or a thread-local
 * buffer, valid until this thread's next name */
const char *kernel_name_of(const char *base, int splits, bool streamk, int32_t pack = PACK_NONE,
                           int chunks = 0)
{
    static __thread char name[80];
    if (splits <= 1 && !streamk && pack == PACK_NONE)
        return base;
    int n = snprintf(name, sizeof name, "%s", base);
    if (splits > 1)
        n += snprintf(name + n, sizeof name - n, "_splitk%d", splits);
    else if (streamk)
        n += snprintf(name + n, sizeof name - n, "_streamk");
    if (pack != PACK_NONE)
        snprintf(name + n, sizeof name - n, "_pack%c%d", pack == PACK_A ? 'a' : 'b', chunks);
    return name;
}
} // namespace

gs_pp::pp_knobs gs_pp::pp_knob_values = {0, 1, 0, 1};

extern "C" void gs_pingpong_set_knobs(int group, int defer, int max_ctas, int sk)
{
    gs_pp::pp_knob_values = pp_knobs{group, defer, max_ctas, sk};
}

extern "C" int gs_pingpong_can_implement(const gs_class_t *p, const gs_device_t *d,
                                         gs_pingpong_config_t cfg)
{
    if (!p || !d || cfg < 0 || cfg >= GS_PINGPONG_CONFIG_COUNT)
        return 0;
    if (p->align_bias) { /* cublasLt BIAS epilogue: one element per row of C */
        const size_t bes = gs_dtype_size((gs_dtype_t)p->bias_type);
        if ((p->bias_type != GS_DT_F32 && p->bias_type != GS_DT_F16 && p->bias_type != GS_DT_BF16)
            || p->align_bias < bes)
            return 0;
        /* With beta == 0 (or a device beta, which may be 0) only a bias of
         * the output's type whose element pairs are aligned has the fast
         * copy (EPI_BIAS's pair loads); any other would send every tile of
         * the call to EPI_RAGGED's stores without TMA, which nothing has
         * measured against cuBLAS: forwarded. A C stored directly
         * (c_direct) takes EPI_RAGGED on every tile whatever the bias, so
         * nothing is lost there. (Of the output's type, the bias element is
         * bes bytes.) */
        const int beta_may_be_zero =
            p->beta_kind == GS_BETA_ZERO || p->beta_kind == GS_BETA_DEVICE;
        if (beta_may_be_zero && (p->bias_type != p->c_type || p->align_bias < 2 * bes) &&
            !c_direct(p))
            return 0;
    }
    if (!d->present || d->cc_major != 9 || d->cc_minor != 0 || d->sm_count < 1)
        return 0;
    if (p->entry == GS_EP_GEMMEX_BATCHED) /* A/B/C are pointer arrays there */
        return 0;
    if (p->a_type != p->b_type || (p->a_type != GS_DT_BF16 && p->a_type != GS_DT_F16))
        return 0;
    if (p->c_type != p->a_type && p->c_type != GS_DT_F32)
        return 0;
    if (!gs_compute_is_f32_accum((gs_compute_t)p->compute))
        return 0;
    if (p->scalar_type != GS_DT_F32 || !p->align_alpha || !p->align_beta)
        return 0;
    if (p->trans_a != GS_OP_N && p->trans_a != GS_OP_T)
        return 0;
    if (p->trans_b != GS_OP_N && p->trans_b != GS_OP_T)
        return 0;
    const int64_t lim = (int64_t)1 << 31;
    if (p->m < 1 || p->n < 1 || p->k < 1 || p->batch < 1)
        return 0;
    if (p->m >= lim || p->n >= lim || p->k >= lim || p->batch >= lim)
        return 0;
    const int64_t bm = block_m_of(cfg);
    const int64_t tiles = ((p->m + bm - 1) / bm) * ((p->n + BLOCK_N - 1) / BLOCK_N);
    if (tiles >= lim || tiles * p->batch >= lim)
        return 0;
    const size_t ies = gs_dtype_size((gs_dtype_t)p->a_type), oes = gs_dtype_size((gs_dtype_t)p->c_type);
    /* An operand TMA cannot load is packed (pack_geom_of): element-aligned,
     * unbatched, the other operand loadable as it is; the call is then its
     * chunks, each a call this family must take as it stands. */
    if (const int32_t operand = pack_operand_of(p)) {
        if (operand == PACK_BOTH || p->batch != 1)
            return 0;
        const bool on_a = operand == PACK_A;
        if ((on_a ? p->align_a : p->align_b) < ies)
            return 0;
        if (on_a ? !ld_fits(p->lda, p->trans_a == GS_OP_N ? p->m : p->k, ies)
                 : !ld_fits(p->ldb, p->trans_b == GS_OP_N ? p->k : p->n, ies))
            return 0;
        /* C whole: a chunk of A's rows sees only its own m */
        if (!ld_fits(p->ldc, p->m, oes))
            return 0;
        const PackGeom g = pack_geom_of(p, operand, (int)bm, d);
        if (g.bytes > PACK_MAX_BYTES || g.ld >= lim)
            return 0;
        if (g.chunks > 1 && p->beta_kind != GS_BETA_ZERO)
            return 0;
        const gs_class_t full = chunk_class(p, g, g.chunk), last = chunk_class(p, g, g.last);
        return gs_pingpong_can_implement(&full, d, cfg) && gs_pingpong_can_implement(&last, d, cfg);
    }
    /* A and B: non-NULL and 16-byte aligned, TMA's base addresses */
    if (p->align_a < 16 || p->align_b < 16)
        return 0;
    if (!ld_ok(p->lda, p->trans_a == GS_OP_N ? p->m : p->k, ies))
        return 0;
    if (!ld_ok(p->ldb, p->trans_b == GS_OP_N ? p->k : p->n, ies))
        return 0;
    /* C: TMA-stored, or stored directly (c_direct) where it is element-
     * aligned, never read (a host beta of zero) and the tile has the ragged
     * tile's epilogue (not the 192-wide tile's plain one) */
    const bool direct = c_direct(p);
    if (direct) {
        if (p->align_c < oes || p->beta_kind != GS_BETA_ZERO || cfg == GS_PINGPONG_192x128x64)
            return 0;
        if (!ld_fits(p->ldc, p->m, oes))
            return 0;
        /* Deep k over few tiles needs split-K (its reduction goes through a
         * TMA-stored tile): whole tiles there would be slow and accumulate
         * the whole k in one chain, less accurate than cuBLAS's split. */
        if (plan_split(p, d, block_m_of(cfg)).splits > 1)
            return 0;
    } else if (!ld_ok(p->ldc, p->m, oes)) {
        return 0;
    }
    if (p->batch > 1) {
        if (!bstride_ok(p->stride_a, ies) || !bstride_ok(p->stride_b, ies))
            return 0;
        if (direct ? !bstride_fits(p->stride_c, oes) : !bstride_ok(p->stride_c, oes))
            return 0;
        if (!gs_class_c_batches_disjoint(p))
            return 0;
    }
    if (d->smem_optin < (size_t)smem_of(cfg))
        return 0;
    if (cfg == GS_PINGPONG_192x128x64) {
        /* No split-K instantiation, and only the plain epilogue
         * (Cfg192x128::PLAIN_EPILOGUE): alpha * acc into a C it never
         * reads (beta an fp32 zero in host memory), stored whole by TMA. */
        if (plan_split(p, d, block_m_of(cfg)).splits > 1)
            return 0;
        if (p->beta_kind != GS_BETA_ZERO || p->scalar_type != GS_DT_F32 || p->scalars_on_device
            || p->align_bias)
            return 0;
        if (((uint64_t)p->m * oes) % 16 != 0)
            return 0;
    }
    return 1;
}

/* The family's plan: the arrangement, split-K / stream-K and the grid
 * (pp_plan_of), once per call; gs_pingpong_run_plan launches it. */
extern "C" void gs_pingpong_plan(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *plan)
{
    const gs_pingpong_config_t cfg = (gs_pingpong_config_t)plan->config;
    const PpPlan pl = pp_plan_of(&p->cls, d, cfg);
    memcpy(plan->data.bytes, &pl, sizeof pl);
    plan->workspace_bytes = (size_t)pl.ws_bytes;
    plan->kernel = kernel_name_of(gs_pingpong_name(cfg), pl.splits, pl.sk_iters > 0, pl.pack,
                                  pl.pack_chunks);
}

namespace {

/* The plan's instance (pingpong_instances.h): its variant, and A's type
 * (bf16, else fp16: can_implement took no other). */
int launch_variant(const gs_problem_t *p, const gs_device_t *d, const PpPlan &pl)
{
    const int in = p->a_type == GS_DT_BF16 ? GS_DT_BF16 : GS_DT_F16;
#define GS_PP_LAUNCH_IF(v, in_dtype)                                                               \
    if (pl.variant == (v) && in == (in_dtype))                                                     \
        return pp_launch_instance<v, in_dtype>(p, d, pl);
    GS_PP_INSTANCES(GS_PP_LAUNCH_IF)
#undef GS_PP_LAUNCH_IF
    return (int)cudaErrorInvalidValue; /* not a variant pp_plan_of plans */
}

/* The chunk [off, off + len) of an operand stored with `ld`, into copy with
 * pack_ld: k runs of the chunk where the chunked dimension is the stored
 * one's contiguous one, else the chunk's runs of k. */
int copy_chunk(void *copy, int64_t pack_ld, const void *src, int64_t ld, bool contiguous, int64_t off,
               int64_t len, const gs_problem_t *p, const gs_device_t *d)
{
    const char *s = (const char *)src;
    const size_t es = gs_dtype_size(p->a_type);
    return contiguous ? gs_pack16(copy, pack_ld, s + off * es, ld, p->k, len, d->sm_count, p->stream)
                      : gs_pack16(copy, pack_ld, s + off * ld * es, ld, len, p->k, d->sm_count, p->stream);
}

/* A packed call (pp_packed_plan_of): per chunk, the copy of the packed
 * operand's chunk into the workspace, then the chunk's GEMM on its rows
 * (A) or columns (B) of C. One copy buffer: each copy starts after the
 * previous chunk's GEMM has finished reading it (gs_pack16 launches
 * without programmatic dependent launch). */
int run_packed(const gs_problem_t *p, const gs_device_t *d, const PpPlan &pl)
{
    const size_t oes = gs_dtype_size(p->c_type);
    const size_t bes = p->bias ? gs_dtype_size(p->bias_type) : 0;
    char *copy = (char *)p->workspace + pl.pack_offset;
    for (int32_t i = 0; i < pl.pack_chunks; ++i) {
        const bool last = i == pl.pack_chunks - 1;
        const int64_t off = (int64_t)i * pl.pack_chunk, len = last ? pl.pack_last : pl.pack_chunk;
        gs_problem_t q = *p;
        int rc;
        if (pl.pack == PACK_A) {
            /* A stored m x k: k runs of the chunk's rows */
            rc = copy_chunk(copy, pl.pack_ld, p->A, p->lda, p->trans_a == GS_OP_N, off, len, p, d);
            q.A = copy;
            q.lda = pl.pack_ld;
            q.m = len;
            q.C = (char *)p->C + off * oes;
            if (p->bias)
                q.bias = (const char *)p->bias + off * bes;
        } else {
            /* B stored n x k: k runs of the chunk's columns */
            rc = copy_chunk(copy, pl.pack_ld, p->B, p->ldb, p->trans_b == GS_OP_T, off, len, p, d);
            q.B = copy;
            q.ldb = pl.pack_ld;
            q.n = len;
            q.C = (char *)p->C + off * p->ldc * oes;
        }
        if (rc)
            return rc;
        /* the chunk's GEMM sees the split-K / stream-K scratch only */
        q.workspace_size = pl.pack_offset;
        gs_problem_classify(&q);
        PpPlan cp = pl;
        cp.pack = PACK_NONE;
        if (last) {
            cp.splits = pl.last_splits;
            cp.sk_dp_tiles = pl.last_sk_dp_tiles;
            cp.sk_iters = pl.last_sk_iters;
            cp.grid = pl.last_grid;
        }
        if ((rc = launch_variant(&q, d, cp)))
            return rc;
    }
    return 0;
}

} // namespace

extern "C" int gs_pingpong_run_plan(const gs_plan_t *plan, const gs_problem_t *p,
                                    const gs_device_t *d)
{
    PpPlan pl;
    memcpy(&pl, plan->data.bytes, sizeof pl);
    if (pl.tag != PP_PLAN_TAG || pl.config != plan->config)
        return (int)cudaErrorInvalidValue; /* not a plan of gs_pingpong_plan */
    /* Enqueue nothing without the workspace: the caller falls back. */
    if (!gs_plan_workspace_ok(plan, p))
        return GS_RUN_NO_WORKSPACE;
    assert(same_plan(pl, pp_plan_of(&p->cls, d, (gs_pingpong_config_t)pl.config)));
    return pl.pack != PACK_NONE ? run_packed(p, d, pl) : launch_variant(p, d, pl);
}

extern "C" int gs_pingpong_run(const gs_problem_t *p, const gs_device_t *d,
                               gs_pingpong_config_t cfg)
{
    if (!p || !gs_pingpong_can_implement(&p->cls, d, cfg))
        return (int)cudaErrorInvalidValue;
    gs_plan_t plan = {};
    plan.config = (int)cfg;
    gs_pingpong_plan(p, d, &plan);
    return gs_pingpong_run_plan(&plan, p, d);
}

extern "C" const char *gs_pingpong_name(gs_pingpong_config_t cfg)
{
    switch (cfg) {
    case GS_PINGPONG_128x128x64: return "pingpong_128x128x64";
    case GS_PINGPONG_COOP_256x128x64: return "pingpong_coop_256x128x64";
    case GS_PINGPONG_192x128x64: return "pingpong_192x128x64";
    default: return "pingpong_unknown";
    }
}

namespace {

/* What the planners say of a class the family takes: split-K units (1:
 * none), stream-K or not, workspace. Worked out from plan_split and plan_sk
 * here rather than by pp_plan_of, so that the plan tests compare two
 * derivations (gs_pingpong_kernel_name, gs_pingpong_workspace_bytes). */
struct PlannersSay {
    int splits;
    bool streamk;
    size_t ws_bytes;
    int32_t pack;
    int chunks;
};

PlannersSay planners_say(const gs_class_t *p, const gs_device_t *d, gs_pingpong_config_t cfg)
{
    if (const int32_t operand = pack_operand_of(p)) {
        /* the chunks' own, then the copy past the flag bytes and their scratch */
        const PackGeom g = pack_geom_of(p, operand, block_m_of(cfg), d);
        const gs_class_t full = chunk_class(p, g, g.chunk), last = chunk_class(p, g, g.last);
        PlannersSay say = planners_say(&full, d, cfg);
        const size_t last_ws = planners_say(&last, d, cfg).ws_bytes;
        size_t inner = say.ws_bytes > last_ws ? say.ws_bytes : last_ws;
        inner = inner > GS_WS_FLAG_BYTES ? inner : GS_WS_FLAG_BYTES;
        say.ws_bytes = (inner + 255) / 256 * 256 + g.bytes;
        say.pack = operand;
        say.chunks = g.chunks;
        return say;
    }
    if (c_direct(p)) /* whole tiles: can_implement refused what would split */
        return {1, false, 0, PACK_NONE, 0};
    const SplitPlan sp = plan_split(p, d, block_m_of(cfg));
    if (sp.splits > 1)
        return {sp.splits, false, sp.ws_bytes, PACK_NONE, 0};
    const SkPlan sk = plan_sk(p, d, block_m_of(cfg));
    return {1, sk.iters > 0, sk.ws_bytes, PACK_NONE, 0};
}

} // namespace

/* The name logged for a call: the configuration, and the split factor when
 * plan_split splits K ("pingpong_128x128x64_splitk33"), and the packed
 * operand with its chunks ("..._packb22"). Thread-local buffer. */
extern "C" const char *gs_pingpong_kernel_name(const gs_problem_t *p, const gs_device_t *d,
                                               gs_pingpong_config_t cfg)
{
    const char *base = gs_pingpong_name(cfg);
    if (!p || !d || !gs_pingpong_can_implement(&p->cls, d, cfg))
        return base;
    const PlannersSay say = planners_say(&p->cls, d, cfg);
    return kernel_name_of(base, say.splits, say.streamk, say.pack, say.chunks);
}

/* The share of the persistent grid's tile slots that hold a tile when the
 * tiles are dealt whole: tiles / (waves * SMs). A ragged last wave idles
 * the rest (4096x2304 on 256x128 tiles: 288 tiles in 3 waves of 132, 0.73,
 * where 4096x2048 fills 0.97), and our time follows the waves while
 * cuBLAS's, with tiles of its own choosing, need not: the routing table
 * scales a neighbour's reading by it (gs_table_ratio). Split-K plans fill
 * one wave by construction: 1. Stream-K shapes count as dealt whole, a
 * lower bound (it runs only where it measured faster than that). */
extern "C" double gs_pingpong_wave_efficiency(const gs_problem_t *p, const gs_device_t *d,
                                              gs_pingpong_config_t cfg)
{
    const int bm = block_m_of(cfg);
    if (!p || !d || d->sm_count < 1 || p->m < 1 || p->n < 1 || p->batch < 1)
        return 1.0;
    /* The shape only: the routing table asks this of its measured shapes
     * too, problems it makes from the call's with other sizes and no class. */
    gs_class_t shape = {};
    shape.m = p->m;
    shape.n = p->n;
    shape.k = p->k;
    shape.batch = p->batch;
    if (plan_split(&shape, d, bm).splits > 1)
        return 1.0;
    const double tiles = (double)tiles_of(&shape, bm);
    const double waves = ceil(tiles / d->sm_count);
    return tiles / (waves * d->sm_count);
}

/* The share of p's tiles' multiply-adds that are p's own: a last row or
 * column of tiles past m or n, and a last k-block past k, compute zeros
 * (the routing table scales a neighbour's reading by it too). */
extern "C" double gs_pingpong_tile_fill(const gs_problem_t *p, gs_pingpong_config_t cfg)
{
    const int64_t bm = block_m_of(cfg);
    if (!p || p->m < 1 || p->n < 1 || p->k < 1)
        return 1.0;
    const double tiles_m = (double)((p->m + bm - 1) / bm * bm),
                 tiles_n = (double)((p->n + BLOCK_N - 1) / BLOCK_N * BLOCK_N),
                 blocks_k = (double)(k_blocks_of(p->k) * BLOCK_K);
    return ((double)p->m * (double)p->n * (double)p->k) / (tiles_m * tiles_n * blocks_k);
}

/* Whether p is planned as `measured` would be with tight leading dimensions:
 * the same split of k (or none), stream-K or not, the same packed operand
 * in as many chunks (what the kernel's name says of a plan). */
extern "C" int gs_pingpong_same_plan(const gs_problem_t *p, const gs_problem_t *measured,
                                     const gs_device_t *d, gs_pingpong_config_t cfg)
{
    gs_problem_t mm = *measured;
    mm.lda = mm.trans_a ? mm.k : mm.m;
    mm.ldb = mm.trans_b ? mm.n : mm.k;
    mm.ldc = mm.m;
    gs_problem_classify(&mm);
    const PpPlan a = pp_plan_of(&p->cls, d, cfg), b = pp_plan_of(&mm.cls, d, cfg);
    const bool same_split = (a.splits > 1 || b.splits > 1)
                                ? a.splits == b.splits
                                : (a.sk_iters > 0) == (b.sk_iters > 0);
    return same_split && a.pack == b.pack && (a.pack == PACK_NONE || a.pack_chunks == b.pack_chunks);
}

/* Split-K shapes (few output tiles, long K; see plan_split): the tile
 * semaphores plus one fp32 partial tile per unit. Stream-K shapes (plan_sk):
 * the flags plus one partial tile per CTA (17 MB on 132 SMs). 0 for every
 * other shape. Without it the call is forwarded, as a split one is: these
 * are the shapes whose tiles dealt whole run well below cuBLAS. */
extern "C" size_t gs_pingpong_workspace_bytes(const gs_problem_t *p, const gs_device_t *d,
                                              gs_pingpong_config_t cfg)
{
    if (!p || !gs_pingpong_can_implement(&p->cls, d, cfg))
        return 0;
    return planners_say(&p->cls, d, cfg).ws_bytes;
}
