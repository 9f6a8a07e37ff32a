/* The SIMT SGEMM family's launch glue: copy modes of a call, the
 * instantiation ladder (configuration, copy modes, variant), shared-memory
 * limits, and the parameters of a planned call (sgemm_launch). */
#ifndef GS_SGEMM_SIMT_LAUNCH_CUH
#define GS_SGEMM_SIMT_LAUNCH_CUH

#include "gs_launch_scalars.cuh"
#include "gs_smem_limit.cuh"
#include "sgemm_simt_kernel.cuh"
#include "sgemm_simt_reduce.cuh"

namespace {

/* 16-byte copies need every (batch, column) start 16-byte aligned. */
bool vec4_ok(const void *base, int64_t ld, int64_t batch, int64_t stride)
{
    return gs_aligned16(base) && ld % 4 == 0 && (batch == 1 || stride % 4 == 0);
}

/* The kernels of one tile configuration and pair of copy modes. */
enum kernel_variant { KV_PLAIN, KV_BIAS, KV_SPLIT };

template <class Cfg, int A_MODE, int B_MODE, int KV>
constexpr void (*kernel_of())(sgemm_params)
{
    if constexpr (KV == KV_SPLIT)
        return sgemm_warptile_streamk<Cfg, A_MODE, B_MODE>;
    else
        return sgemm_warptile<Cfg, A_MODE, B_MODE, KV == KV_BIAS>;
}

/* The dynamic shared-memory limit of one kernel, raised once per device. */
template <class Cfg, int A_MODE, int B_MODE, int KV>
cudaError_t ensure_smem_limit(int device)
{
    static std::atomic<uint64_t> done{0};
    if (Cfg::SMEM_BYTES <= 48 * 1024)
        return cudaSuccess;
    return gs_smem_limit_once(done, device, Cfg::SMEM_BYTES, kernel_of<Cfg, A_MODE, B_MODE, KV>());
}

template <class Cfg, int A_MODE, int B_MODE, int KV>
cudaError_t launch_kernel(const sgemm_params &prm, dim3 grid, int device, cudaStream_t stream)
{
    const cudaError_t err = ensure_smem_limit<Cfg, A_MODE, B_MODE, KV>(device);
    if (err != cudaSuccess)
        return err;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = grid;
    lc.blockDim = dim3(Cfg::THREADS, 1, 1);
    lc.dynamicSmemBytes = Cfg::SMEM_BYTES;
    lc.stream = stream;
    return cudaLaunchKernelEx(&lc, kernel_of<Cfg, A_MODE, B_MODE, KV>(), prm);
}

/* Non-split: one block per (tile, batch). Split: prm.ctas blocks of the
 * stream-K kernel, then the reduction on the same stream. If the reduction
 * fails to launch, the first kernel has written only the workspace, so the
 * caller's fallback to cuBLAS still finds C as it was. */
template <class Cfg, int A_MODE, int B_MODE, bool SPLIT>
cudaError_t launch_modes(const sgemm_params &prm, int device, cudaStream_t stream)
{
    if constexpr (SPLIT) {
        cudaError_t err = launch_kernel<Cfg, A_MODE, B_MODE, KV_SPLIT>(
            prm, dim3((unsigned)prm.ctas, 1, 1), device, stream);
        if (err != cudaSuccess)
            return err;
        const int64_t vecs = (int64_t)prm.tiles_m * prm.tiles_n * Cfg::BLOCK_M * Cfg::BLOCK_N / 4;
        cudaLaunchConfig_t lr = {};
        lr.gridDim = dim3((unsigned)(vecs / REDUCE_VECS), 1, 1);
        lr.blockDim = dim3(REDUCE_VECS, REDUCE_RUNS, 1);
        lr.stream = stream;
        return cudaLaunchKernelEx(&lr, sgemm_splitk_reduce<Cfg>, prm);
    } else {
        const dim3 grid((unsigned)((int64_t)prm.tiles_m * prm.tiles_n),
                        (unsigned)(prm.batch < MAX_GRID_Y ? prm.batch : MAX_GRID_Y),
                        (unsigned)((prm.batch + MAX_GRID_Y - 1) / MAX_GRID_Y));
        return prm.bias ? launch_kernel<Cfg, A_MODE, B_MODE, KV_BIAS>(prm, grid, device, stream)
                        : launch_kernel<Cfg, A_MODE, B_MODE, KV_PLAIN>(prm, grid, device, stream);
    }
}

template <class Cfg, int A_MODE, int B_MODES, bool SPLIT>
cudaError_t launch_b(const sgemm_params &prm, int b_mode, int device, cudaStream_t stream)
{
    switch (b_mode) {
    case COPY_VEC16:
        if constexpr ((B_MODES & 1 << COPY_VEC16) != 0)
            return launch_modes<Cfg, A_MODE, COPY_VEC16, SPLIT>(prm, device, stream);
        break;
    case COPY_ROW4:
        if constexpr ((B_MODES & 1 << COPY_ROW4) != 0)
            return launch_modes<Cfg, A_MODE, COPY_ROW4, SPLIT>(prm, device, stream);
        break;
    case COPY_COL4:
        if constexpr ((B_MODES & 1 << COPY_COL4) != 0)
            return launch_modes<Cfg, A_MODE, COPY_COL4, SPLIT>(prm, device, stream);
        break;
    default:
        if constexpr ((B_MODES & 1 << COPY_KVEC16) != 0)
            return launch_modes<Cfg, A_MODE, COPY_KVEC16, SPLIT>(prm, device, stream);
        break;
    }
    return cudaErrorInvalidValue;
}

template <class Cfg, int A_MODES, int B_MODES, bool SPLIT>
cudaError_t launch_a(const sgemm_params &prm, int a_mode, int b_mode, int device,
                     cudaStream_t stream)
{
    switch (a_mode) {
    case COPY_VEC16:
        if constexpr ((A_MODES & 1 << COPY_VEC16) != 0)
            return launch_b<Cfg, COPY_VEC16, B_MODES, SPLIT>(prm, b_mode, device, stream);
        break;
    case COPY_ROW4:
        if constexpr ((A_MODES & 1 << COPY_ROW4) != 0)
            return launch_b<Cfg, COPY_ROW4, B_MODES, SPLIT>(prm, b_mode, device, stream);
        break;
    case COPY_COL4:
        if constexpr ((A_MODES & 1 << COPY_COL4) != 0)
            return launch_b<Cfg, COPY_COL4, B_MODES, SPLIT>(prm, b_mode, device, stream);
        break;
    default:
        if constexpr ((A_MODES & 1 << COPY_KVEC16) != 0)
            return launch_b<Cfg, COPY_KVEC16, B_MODES, SPLIT>(prm, b_mode, device, stream);
        break;
    }
    return cudaErrorInvalidValue;
}

/* Copy mode of an operand: `contiguous_mn` says whether op(X) is contiguous
 * along m/n. 16-byte copies need every (batch, column) start 16-byte
 * aligned; k-contiguous operands take them only where `modes` has KVEC16. */
int copy_mode_of(bool contiguous_mn, bool vec4, int modes)
{
    if (contiguous_mn)
        return vec4 ? COPY_VEC16 : COPY_ROW4;
    return vec4 && (modes & 1 << COPY_KVEC16) != 0 ? COPY_KVEC16 : COPY_COL4;
}

enum sgemm_config {
    CFG_256x128x8,
    CFG_128x256x8,
    CFG_128x128x8,
    CFG_128x64x8,
    CFG_64x64x8,
    CFG_COUNT
};

struct cfg_shape {
    int block_m, block_n, min_blocks_per_sm;
};
template <class Cfg>
constexpr cfg_shape shape_of()
{
    return {Cfg::BLOCK_M, Cfg::BLOCK_N, Cfg::MIN_BLOCKS_PER_SM};
}
constexpr cfg_shape CFG_SHAPE[CFG_COUNT] = {
    shape_of<sgemm_cfg_256x128x8>(), shape_of<sgemm_cfg_128x256x8>(),
    shape_of<sgemm_cfg_128x128x8>(), shape_of<sgemm_cfg_128x64x8>(),
    shape_of<sgemm_cfg_64x64x8>()};
/* Split units are k-tiles of this depth in every configuration. */
constexpr int SPLIT_BLOCK_K = sgemm_cfg_256x128x8::BLOCK_K;
static_assert(sgemm_cfg_128x256x8::BLOCK_K == SPLIT_BLOCK_K &&
                  sgemm_cfg_128x128x8::BLOCK_K == SPLIT_BLOCK_K &&
                  sgemm_cfg_64x64x8::BLOCK_K == SPLIT_BLOCK_K,
              "split configurations share one k-tile depth");

/* How a problem runs: the tile configuration and, for split K, the grid. */
struct sgemm_plan {
    sgemm_config cfg;
    int ctas;          /* split: CTAs of the stream-K grid; 0: no split */
    int tiles;         /* split: block tiles of C */
    int k_tiles;       /* split: k-tiles of SPLIT_BLOCK_K */
    size_t workspace;  /* split: bytes, flags included; 0: none */
};

/* Fills the kernel parameters of p for tile config Cfg and launches; A_MODES
 * and B_MODES are the copy modes it has kernels for, CAN_SPLIT whether it
 * has split-K kernels. */
template <class Cfg, int A_MODES, int B_MODES, bool CAN_SPLIT>
cudaError_t sgemm_launch(const gs_problem_t *p, const gs_device_t *d, const sgemm_plan &plan)
{
    sgemm_params prm = {};
    prm.A = static_cast<const float *>(p->A);
    prm.B = static_cast<const float *>(p->B);
    prm.C = static_cast<float *>(p->C);
    prm.m = (int)p->m;
    prm.n = (int)p->n;
    prm.k = (int)p->k;
    prm.tiles_m = (int)((p->m + Cfg::BLOCK_M - 1) / Cfg::BLOCK_M);
    prm.tiles_n = (int)((p->n + Cfg::BLOCK_N - 1) / Cfg::BLOCK_N);
    prm.lda = p->lda;
    prm.ldb = p->ldb;
    prm.ldc = p->ldc;
    prm.batch = p->batch;
    prm.stride_a = p->stride_a;
    prm.stride_b = p->stride_b;
    prm.stride_c = p->stride_c;
    gs_set_scalars(prm, p);
    prm.c_vec4 = vec4_ok(p->C, p->ldc, p->batch, p->stride_c);
    prm.bias = static_cast<const float *>(p->bias);

    /* Column-major: op(A) is contiguous along m when A is not transposed,
     * op(B) along n when B is transposed. */
    const int a_mode = copy_mode_of(p->trans_a == GS_OP_N,
                                    vec4_ok(p->A, p->lda, p->batch, p->stride_a), A_MODES);
    const int b_mode = copy_mode_of(p->trans_b == GS_OP_T,
                                    vec4_ok(p->B, p->ldb, p->batch, p->stride_b), B_MODES);
    cudaStream_t stream = static_cast<cudaStream_t>(p->stream);
    if (plan.ctas) {
        if constexpr (CAN_SPLIT) {
            prm.partials = reinterpret_cast<float *>(static_cast<char *>(p->workspace) +
                                                     GS_WS_FLAG_BYTES);
            prm.ctas = plan.ctas;
            prm.k_tiles = plan.k_tiles;
            return launch_a<Cfg, A_MODES, B_MODES, true>(prm, a_mode, b_mode, d->ordinal, stream);
        }
        return cudaErrorInvalidValue;
    }
    return launch_a<Cfg, A_MODES, B_MODES, false>(prm, a_mode, b_mode, d->ordinal, stream);
}

} // namespace

#endif /* GS_SGEMM_SIMT_LAUNCH_CUH */
