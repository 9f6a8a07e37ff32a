# Developer timeline for the unsplit pingpong/coop kernels (not shipped):
# %globaltimer stamps per CTA, local tile and consumer, dumped for the
# GS_TL_CALL-th unsplit launch.  Stamps: 0 tile top, 1 turn held, 2 first
# stage landed, 3 mainloop done (wait 0), 4 epilogue done.
import sys
p=sys.argv[1]; s=open(p).read()
def rep(old,new,cnt=1):
    global s
    assert s.count(old)==cnt, (old[:70], s.count(old))
    s=s.replace(old,new)
rep("""template <typename TOut>
__device__ __forceinline__ void store_pair(""","""__device__ unsigned long long gs_tl_t[132][64][2][5];
__device__ __forceinline__ unsigned long long gtime(){ unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
#define TLS(J) do { if (!SPLIT && wg_tid == 0 && blockIdx.x < 132 && i < 64) gs_tl_t[blockIdx.x][i][c][J] = gtime(); } while (0)
template <typename TOut>
__device__ __forceinline__ void store_pair(""")
rep("""            /* ---- mainloop (pingpong: in turn with the other consumer) ---- */
            if (!COOP && i > 0)
                named_barrier_sync(BAR_MATH_TURN0 + c, 2 * WARPGROUP_THREADS);""","""            /* ---- mainloop (pingpong: in turn with the other consumer) ---- */
            TLS(0);
            if (!COOP && i > 0)
                named_barrier_sync(BAR_MATH_TURN0 + c, 2 * WARPGROUP_THREADS);
            TLS(1);""")
rep("""                mbarrier_wait_parity(&ss.full[s], ring_phase<STAGES>(it));
                const uint32_t p_addr = smem_u32(ss.stage[s].p);""","""                mbarrier_wait_parity(&ss.full[s], ring_phase<STAGES>(it));
                if (kb == u.kb0) TLS(2);
                const uint32_t p_addr = smem_u32(ss.stage[s].p);""")
rep("""            wgmma_wait_group<0>();
#pragma unroll
            for (int h = 0; h < HPC; ++h)""","""            wgmma_wait_group<0>();
            TLS(3);
#pragma unroll
            for (int h = 0; h < HPC; ++h)""")
rep("""                store_tile_any<Cfg, TOut, false>(acc, p, tc, c, warp, &tmap_c, ss.c_sub[cw],
                                                 &ss.c_full[cw], epi, alpha, beta, ~0u);
            }""","""                store_tile_any<Cfg, TOut, false>(acc, p, tc, c, warp, &tmap_c, ss.c_sub[cw],
                                                 &ss.c_full[cw], epi, alpha, beta, ~0u);
            }
            TLS(4);""")
rep("""    cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, tp, tq, tc, prm);
    if (e != cudaSuccess)
        (void)cudaGetLastError();""","""    cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, tp, tq, tc, prm);
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    if (!SPLIT) {
        static int calls = 0;
        const char *want = getenv("GS_TL_CALL");
        if (want && ++calls == atoi(want)) {
            static unsigned long long h[132][64][2][5];
            cudaStreamSynchronize(cfg.stream);
            cudaMemcpyFromSymbol(h, gs_tl_t, sizeof h);
            const int nb = (int)cfg.gridDim.x < 132 ? (int)cfg.gridDim.x : 132;
            unsigned long long t0 = ~0ull;
            for (int b = 0; b < nb; ++b) if (h[b][0][0][0] && h[b][0][0][0] < t0) t0 = h[b][0][0][0];
            fprintf(stderr, "TL m=%d n=%d k=%d tiles=%d grid=%d coop=%d\\n", prm.m, prm.n, prm.k, prm.total_tiles, nb, (int)Cfg::COOPERATIVE);
            for (int b = 0; b < nb; ++b)
                for (int i = 0; i < 64; ++i)
                    for (int c = 0; c < 2; ++c) {
                        if (blockIdx_ok(b, i, c, prm.total_tiles, nb, Cfg::COOPERATIVE)) {
                            fprintf(stderr, "TL %d %d %d", b, i, c);
                            for (int j = 0; j < 5; ++j) fprintf(stderr, " %lld", (long long)(h[b][i][c][j] - t0));
                            fprintf(stderr, "\\n");
                        }
                    }
        }
    }""")
rep("""template <typename Cfg, typename TIn, typename TOut, bool SPLIT>
int launch_split(""","""template <typename Cfg, typename TIn, typename TOut, bool SPLIT>
int launch_split(""")
# helper: which (block, local tile, consumer) ran
s = s.replace("""PFN_cuTensorMapEncodeTiled_v12000 get_encode_tiled(void)""","""static bool blockIdx_ok(int b, int i, int c, int tiles, int grid, bool coop)
{
    const long long w = b + (long long)i * grid;
    if (w >= tiles) return false;
    return coop ? true : (i % 2) == c;
}

PFN_cuTensorMapEncodeTiled_v12000 get_encode_tiled(void)""",1)
open(p,'w').write(s)
