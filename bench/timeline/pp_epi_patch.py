# Developer (not shipped): clock64 stamps inside the unsplit epilogue, per
# sub-tile, for consumer warp 0 lane 0 on its third own tile (EpiState.sub
# in [8, 12)) of the per-sub-tile epilogue (store_m_block's !BATCH path:
# 6-stage 128x128 and coop; not the short-K variant's batched one);
# dumped with pp_tile_patch.py's dump (apply that first).
import sys
p=sys.argv[1]; s=open(p).read()
def rep(old,new,cnt=1):
    global s
    assert s.count(old)==cnt, (old[:70], s.count(old))
    s=s.replace(old,new)
rep("""/* Per-warp epilogue state, kept across tiles. */""","""__device__ long long gs_tl_e[132][2][5][5];
__device__ __forceinline__ long long gclk(){ long long t; asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)); return t; }
#define TLE(K, J) do { if (tle_on && threadIdx.x % 128 == 0 && blockIdx.x < 132) gs_tl_e[blockIdx.x][threadIdx.x / 128 - 1][K][J] = gclk(); } while (0)
/* Per-warp epilogue state, kept across tiles. */""")
rep("""        uint8_t *buf = BATCH ? bufs[j0 + ch] : bufs[st.sub % Cfg::EPI_BUFS];
        const uint32_t buf_s = smem_u32(buf);
        if (!BATCH)
            ++st.sub;""","""        uint8_t *buf = BATCH ? bufs[j0 + ch] : bufs[st.sub % Cfg::EPI_BUFS];
        const uint32_t buf_s = smem_u32(buf);
        const bool tle_on = !MASKED && !BATCH && st.sub / 4 == 2;
        const int tk = st.sub % 4;
        TLE(tk, 0);
        if (!BATCH)
            ++st.sub;""")
rep("""                    tma_store_wait_read<Cfg::EPI_BUFS - 1>();
            }
            __syncwarp();
        }""","""                    tma_store_wait_read<Cfg::EPI_BUFS - 1>();
            }
            __syncwarp();
        }
        TLE(tk, 1);""")
rep("""        /* Generic-proxy writes -> visible to the TMA store (async proxy). */
        fence_proxy_async_shared_cta();
        __syncwarp();
        if constexpr (!direct) {""","""        TLE(tk, 2);
        /* Generic-proxy writes -> visible to the TMA store (async proxy). */
        fence_proxy_async_shared_cta();
        __syncwarp();
        TLE(tk, 3);
        if constexpr (!direct) {""")
rep("""                tma_store_3d_hint(tmap_c, buf, gm0, row0, tc.b, policy);
                tma_store_commit_group();
            }""","""                tma_store_3d_hint(tmap_c, buf, gm0, row0, tc.b, policy);
                tma_store_commit_group();
            }
            TLE(tk, 4);""")
rep("""            wgmma_wait_group<0>();
            TLS(3);""","""            wgmma_wait_group<0>();
            TLS(3);
            { const bool tle_on = !SPLIT && epi.sub / 4 == 2; TLE(4, 0); }""")
rep("""            static unsigned long long h[132][64][2][5];""","""            static unsigned long long h[132][64][2][5];
            static long long he[132][2][5][5];
            cudaMemcpyFromSymbol(he, gs_tl_e, sizeof he);
            for (int b = 0; b < 132; ++b)
                for (int c = 0; c < 2; ++c) {
                    fprintf(stderr, "TLE %d %d %lld", b, c, he[b][c][4][0]);
                    for (int k = 0; k < 4; ++k)
                        for (int j = 0; j < 5; ++j) fprintf(stderr, " %lld", he[b][c][k][j]);
                    fprintf(stderr, "\\n");
                }""")
open(p,'w').write(s)
