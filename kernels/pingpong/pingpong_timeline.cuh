/* Kernel timing instrumentation of the pingpong family, a developer build
 * option (CMake -DGEMMSHIM_KERNEL_TIMELINE=ON or EPILOGUE; bench/timeline/
 * README.md): stamps written by the kernel into device arrays and printed
 * by the host for one launch. Off (the default), every hook below expands
 * to nothing, so the shipped kernels' SASS does not depend on it (CTest
 * sass_unchanged).
 *
 * GEMMSHIM_KERNEL_TIMELINE >= 1 (ON): %globaltimer per CTA (first 132),
 *   local tile (first 64) and consumer of the unsplit kernels: 0 tile top,
 *   1 tensor-core turn held, 2 first stage landed, 3 mainloop done (wait
 *   0), 4 epilogue done. Printed for the GS_TL_CALL-th unsplit launch
 *   (environment) as "TL b i c s0..s4" lines, after a "TL m= n= ..." header
 *   (bench/timeline/pp_tiles.py reads them).
 * GEMMSHIM_KERNEL_TIMELINE >= 2 (EPILOGUE): as 1, and clock64 stamps inside
 *   the per-sub-tile epilogue (store_m_block's !BATCH path) of consumer
 *   warp 0 lane 0 on its third own tile: per sub-tile buffer wait, staging,
 *   proxy fence, TMA store issue ("TLE b c ..." lines; pp_epi.py). */
#ifndef GS_PINGPONG_TIMELINE_CUH
#define GS_PINGPONG_TIMELINE_CUH

#if defined(GEMMSHIM_KERNEL_TIMELINE) && GEMMSHIM_KERNEL_TIMELINE >= 1

#include <cstdio>
#include <cstdlib>

namespace {

constexpr int TL_CTAS = 132, TL_TILES = 64;

__device__ unsigned long long gs_tl_t[TL_CTAS][TL_TILES][2][5];
__device__ __forceinline__ unsigned long long gs_tl_globaltimer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

#if GEMMSHIM_KERNEL_TIMELINE >= 2
__device__ long long gs_tl_e[TL_CTAS][2][5][5];
__device__ __forceinline__ long long gs_tl_clock()
{
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
    return t;
}
#endif

/* Whether CTA b ran local tile i on consumer c (pingpong: tiles alternate). */
bool gs_tl_ran(int b, int i, int c, int tiles, int grid, bool coop)
{
    const long long w = b + (long long)i * grid;
    if (w >= tiles)
        return false;
    return coop ? true : (i % 2) == c;
}

/* After the GS_TL_CALL-th unsplit launch: wait for it, print its stamps. */
void gs_tl_dump(cudaStream_t stream, unsigned grid_x, int m, int n, int k, int total_tiles, bool coop)
{
    static int calls = 0;
    const char *want = getenv("GS_TL_CALL");
    if (!want || ++calls != atoi(want))
        return;
    static unsigned long long h[TL_CTAS][TL_TILES][2][5];
    cudaStreamSynchronize(stream);
    cudaMemcpyFromSymbol(h, gs_tl_t, sizeof h);
    const int nb = (int)grid_x < TL_CTAS ? (int)grid_x : TL_CTAS;
    unsigned long long t0 = ~0ull;
    for (int b = 0; b < nb; ++b)
        if (h[b][0][0][0] && h[b][0][0][0] < t0)
            t0 = h[b][0][0][0];
    fprintf(stderr, "TL m=%d n=%d k=%d tiles=%d grid=%d coop=%d\n", m, n, k, total_tiles, nb, (int)coop);
    for (int b = 0; b < nb; ++b)
        for (int i = 0; i < TL_TILES; ++i)
            for (int c = 0; c < 2; ++c) {
                if (gs_tl_ran(b, i, c, total_tiles, nb, coop)) {
                    fprintf(stderr, "TL %d %d %d", b, i, c);
                    for (int j = 0; j < 5; ++j)
                        fprintf(stderr, " %lld", (long long)(h[b][i][c][j] - t0));
                    fprintf(stderr, "\n");
                }
            }
#if GEMMSHIM_KERNEL_TIMELINE >= 2
    static long long he[TL_CTAS][2][5][5];
    cudaMemcpyFromSymbol(he, gs_tl_e, sizeof he);
    for (int b = 0; b < TL_CTAS; ++b)
        for (int c = 0; c < 2; ++c) {
            fprintf(stderr, "TLE %d %d %lld", b, c, he[b][c][4][0]);
            for (int kk = 0; kk < 4; ++kk)
                for (int j = 0; j < 5; ++j)
                    fprintf(stderr, " %lld", he[b][c][kk][j]);
            fprintf(stderr, "\n");
        }
#endif
}

} // namespace

/* In the kernel's consumer loop (wg_tid, i: local tile, c: consumer). */
#define GS_TL_TILE(J)                                                                          \
    do {                                                                                       \
        if (!SPLIT && wg_tid == 0 && blockIdx.x < TL_CTAS && i < TL_TILES)                     \
            gs_tl_t[blockIdx.x][i][c][J] = gs_tl_globaltimer();                                \
    } while (0)
#define GS_TL_TILE_IF(COND, J)                                                                 \
    do {                                                                                       \
        if (COND)                                                                              \
            GS_TL_TILE(J);                                                                     \
    } while (0)
/* After the launch (host). */
#define GS_TL_DUMP(cfg, prm)                                                                   \
    do {                                                                                       \
        if (!SPLIT)                                                                            \
            gs_tl_dump((cfg).stream, (cfg).gridDim.x, (prm).m, (prm).n, (prm).k,               \
                       (prm).total_tiles, Cfg::COOPERATIVE);                                   \
    } while (0)
#else
#define GS_TL_TILE(J) ((void)0)
#define GS_TL_TILE_IF(COND, J) ((void)0)
#define GS_TL_DUMP(cfg, prm) ((void)0)
#endif

#if defined(GEMMSHIM_KERNEL_TIMELINE) && GEMMSHIM_KERNEL_TIMELINE >= 2
/* In store_m_block: ON says whether this sub-tile is stamped, K which. */
#define GS_TL_EPI_BEGIN(ON, K)                                                                 \
    const bool gs_tle_on = (ON);                                                               \
    const int gs_tle_k = (K);                                                                  \
    GS_TL_EPI(0)
#define GS_TL_EPI(J)                                                                           \
    do {                                                                                       \
        if (gs_tle_on && threadIdx.x % 128 == 0 && blockIdx.x < TL_CTAS)                       \
            gs_tl_e[blockIdx.x][threadIdx.x / 128 - 1][gs_tle_k][J] = gs_tl_clock();           \
    } while (0)
/* In the kernel: the mainloop's end, the reference of the epilogue stamps. */
#define GS_TL_EPI_MAINLOOP_DONE(ON)                                                            \
    do {                                                                                       \
        if ((ON) && threadIdx.x % 128 == 0 && blockIdx.x < TL_CTAS)                            \
            gs_tl_e[blockIdx.x][threadIdx.x / 128 - 1][4][0] = gs_tl_clock();                  \
    } while (0)
#else
#define GS_TL_EPI_BEGIN(ON, K) ((void)0)
#define GS_TL_EPI(J) ((void)0)
#define GS_TL_EPI_MAINLOOP_DONE(ON) ((void)0)
#endif

#endif /* GS_PINGPONG_TIMELINE_CUH */
