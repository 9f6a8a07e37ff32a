/* The pingpong family's kernel: producer warpgroup (TMA ring) and the two
 * consumer warpgroups (wgmma mainloop, epilogue), persistent over the
 * tiles the scheduler deals. */
#ifndef GS_PINGPONG_KERNEL_CUH
#define GS_PINGPONG_KERNEL_CUH

#include "pingpong_reduce.cuh"

namespace {

/* ---------------------------------------------------------------------------
 * The kernel. Cfg: a TileConfig; TIn: bf16/fp16 operands; TOut: bf16/fp16/
 * float output; P_KMAJOR: op(B)^T is K-major (trans_b == N); Q_KMAJOR:
 * op(A)^T is K-major (trans_a == T); SPLIT: split-K units and the reducing
 * epilogue (a separate instantiation, so the unsplit kernel is unchanged);
 * SK: stream-K units (sk_unit; cooperative tile only, another instantiation).
 * ------------------------------------------------------------------------- */
template <typename Cfg, typename TIn, typename TOut, bool P_KMAJOR, bool Q_KMAJOR, bool SPLIT,
          bool SK = false>
__global__ void __launch_bounds__(NUM_THREADS, 1)
pingpong_sm90(const __grid_constant__ CUtensorMap tmap_p, const __grid_constant__ CUtensorMap tmap_q,
              const __grid_constant__ CUtensorMap tmap_c, const Params p)
{
    using Smem = SharedStorage<Cfg>;
    constexpr int STAGES = Cfg::STAGES;
    constexpr bool COOP = Cfg::COOPERATIVE;
    static_assert(!SK || (COOP && !SPLIT), "stream-K: the cooperative tile, not split");

    extern __shared__ __align__(1024) uint8_t gs_pp_smem_raw[];
    Smem &ss = *reinterpret_cast<Smem *>(
        (reinterpret_cast<uintptr_t>(gs_pp_smem_raw) + 1023) & ~(uintptr_t)1023);

    const int role = threadIdx.x / WARPGROUP_THREADS;
    const int wg_tid = threadIdx.x % WARPGROUP_THREADS;

    if (threadIdx.x == 0)
        init_cta<Cfg, true>(ss, &tmap_p, &tmap_q, &tmap_c);
    /* Programmatic dependent launch (a no-op unless the host launched with
     * it, gs_problem_t::pdl): nothing in global memory (operands, scalars,
     * C, the bias, the split counters) is touched before the grid this one
     * depends on completed and its writes are visible; the set-up above
     * (kernel parameters, shared memory) overlaps that grid's drain. This
     * grid never triggers its dependents early (launch_dependents): the
     * implicit trigger as its CTAs exit is what measured fastest (an early
     * trigger lets the next grid's waiting CTAs take SMs; bench/NOTES.md,
     * "Programmatic dependent launch"). */
    griddepcontrol_wait();
    __syncthreads();

    if (role == PRODUCER) {
        setmaxnreg_dec<PRODUCER_REGS>();
        if (wg_tid == 0) {
            uint32_t it = 0;
            const int units = SK ? INT_MAX : SPLIT ? p.total_units : p.total_tiles;
            for (int w = blockIdx.x, j = 0; w < units; w += gridDim.x, ++j) {
                Unit u;
                if (!unit_at<SPLIT, SK>(p, w, j, u))
                    break;
                const TileCoord tc = tile_coord<Cfg>(p, u.t);
                for (int kb = u.kb0; kb < u.kb1; ++kb, ++it) {
                    const int s = ring_stage<STAGES>(it);
                    /* First lap: waiting on the parity before phase 0 returns at once. */
                    mbarrier_wait_parity(&ss.empty[s], ring_phase<STAGES>(it) ^ 1u);
                    /* Out-of-bounds box elements are zero-filled and still counted. */
                    mbarrier_arrive_expect_tx(&ss.full[s], Cfg::STAGE_BYTES);
                    const int k0 = kb * BLOCK_K;
                    if (P_KMAJOR) {
                        tma_load_3d(ss.stage[s].p, &tmap_p, &ss.full[s], k0, tc.n0, tc.b);
                    } else {
                        for (int h = 0; h < BLOCK_N / MN_CHUNK; ++h)
                            tma_load_3d(ss.stage[s].p + h * MN_CHUNK_BYTES, &tmap_p, &ss.full[s],
                                        tc.n0 + h * MN_CHUNK, k0, tc.b);
                    }
                    if (Q_KMAJOR) {
                        tma_load_3d(ss.stage[s].q, &tmap_q, &ss.full[s], k0, tc.m0, tc.b);
                    } else {
                        for (int h = 0; h < Cfg::BLOCK_M / MN_CHUNK; ++h)
                            tma_load_3d(ss.stage[s].q + h * MN_CHUNK_BYTES, &tmap_q, &ss.full[s],
                                        tc.m0 + h * MN_CHUNK, k0, tc.b);
                    }
                }
            }
        }
    } /* PRODUCER */
    else {
        setmaxnreg_inc<CONSUMER_REGS>();
        const int c = role - CONSUMER0;
        const int warp = wg_tid / 32;
        const int lane = wg_tid % 32;
        const int cw = c * WARPS_PER_WG + warp;
        const float alpha = p.alpha_ptr ? *p.alpha_ptr : p.alpha;
        const float beta = p.beta_ptr ? *p.beta_ptr : p.beta;
        EpiState epi = {0u, 0u};
        uint32_t red_phase = 0; /* split-K: red_full parity */

        constexpr int HPC = Cfg::HALVES_PER_CONSUMER;
        float acc[HPC][Cfg::ACC];

        /* Deferred epilogue: the previous tile's packed sub-tiles still to
         * be stored (pend of them) and where they go. */
        constexpr bool DEFER = COOP && !SPLIT && sizeof(TOut) == 2;
        uint32_t pk[DEFER ? Defer<Cfg, TOut>::PK : 1];
        int pend = 0;
        DeferredTile dt = {0, 0, 0};

        /* Pingpong: local tile i (the CTA's i-th tile) belongs to consumer
         * i % 2. Cooperative: both consumers take every tile. */
        constexpr int TILE_STRIDE = COOP ? 1 : NUM_CONSUMERS;
        const int units = SK ? INT_MAX : SPLIT ? p.total_units : p.total_tiles;
        int i = COOP ? 0 : c;
        uint32_t sk_it = 0; /* stream-K: the ring position, counted as the units go */
        for (int w = blockIdx.x + i * gridDim.x; w < units;
             w += TILE_STRIDE * gridDim.x, i += TILE_STRIDE) {
            Unit u;
            if (!unit_at<SPLIT, SK>(p, w, i, u))
                break;
            const int t = u.t;
            /* Ring position of this unit's first k-block: the k-blocks of the
             * CTA's earlier units (all of k_blocks each without a split). */
            uint32_t it = (uint32_t)i * (uint32_t)p.k_blocks;
            if constexpr (SK)
                it = sk_it;
            if (SPLIT) {
                it = 0;
                for (int j = 0; j < i; ++j) {
                    const Unit e = unit_of<SPLIT>(p, blockIdx.x + j * gridDim.x);
                    it += (uint32_t)(e.kb1 - e.kb0);
                }
            }

            /* ---- mainloop (pingpong: in turn with the other consumer) ---- */
            GS_TL_TILE(0);
            if (!COOP && i > 0)
                named_barrier_sync(BAR_MATH_TURN0 + c, 2 * WARPGROUP_THREADS);
            GS_TL_TILE(1);
            for (int kb = u.kb0; kb < u.kb1; ++kb, ++it) {
                const int s = ring_stage<STAGES>(it);
                mbarrier_wait_parity(&ss.full[s], ring_phase<STAGES>(it));
                GS_TL_TILE_IF(kb == u.kb0, 2);
                const uint32_t p_addr = smem_u32(ss.stage[s].p);
                const uint32_t q_addr = smem_u32(ss.stage[s].q);
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < K_STEPS; ++ks) {
                    const uint64_t db = operand_desc<Q_KMAJOR>(q_addr, 0, ks);
#pragma unroll
                    for (int h = 0; h < HPC; ++h) {
                        const uint64_t da = operand_desc<P_KMAJOR>(p_addr, COOP ? c : h, ks);
                        wgmma_m64nNk16_f32<TIn, Cfg::WGMMA_N>::template run<P_KMAJOR ? 0 : 1,
                                                                            Q_KMAJOR ? 0 : 1>(
                            acc[h], da, db, (kb > u.kb0 || ks > 0) ? 1 : 0);
                    }
                }
                wgmma_commit_group();
                /* The previous tile's deferred sub-tiles, one per k-block,
                 * while this k-block's wgmmas run. */
                if constexpr (DEFER)
                    deferred_step<Cfg, TOut>(pk, pend, dt, p, &tmap_c, ss.c_sub[cw], epi);
                /* Keep this k-block's wgmmas in flight; the previous one has
                 * finished reading its stage, which goes back to the producer. */
                wgmma_wait_group<1>();
                if (kb > u.kb0 && lane == 0)
                    mbarrier_arrive(&ss.empty[ring_stage<STAGES>(it - 1)]);
            }
            /* The turn orders issue only (no data is shared), so with long
             * tiles it is handed over as soon as the last wgmmas are issued:
             * the other consumer's first wgmmas queue behind ours and the
             * tensor pipe does not drain between tiles. Short tiles hand it
             * over after the wait: there the epilogue is the critical path,
             * and the other consumer's wgmmas would delay ours. */
            const bool more = !COOP && w + (int)gridDim.x < units; /* the other consumer has local tile i+1 */
            const bool early_turn = p.k_blocks >= EARLY_TURN_MIN_KBLOCKS;
            if (more && early_turn)
                named_barrier_arrive(BAR_MATH_TURN0 + (c ^ 1), 2 * WARPGROUP_THREADS);
            TileCoord tc;
            if constexpr (Cfg::SHORT_K)
                tc = tile_coord<Cfg>(p, t);
            wgmma_wait_group<0>();
            GS_TL_TILE(3);
            GS_TL_EPI_MAINLOOP_DONE(!SPLIT && epi.sub / 4 == 2);
#pragma unroll
            for (int h = 0; h < HPC; ++h)
#pragma unroll
                for (int r = 0; r < Cfg::ACC; ++r)
                    wgmma_fence_operand(acc[h][r]);
            if (lane == 0)
                mbarrier_arrive(&ss.empty[ring_stage<STAGES>(it - 1)]);
            if constexpr (SK)
                sk_it = it;
            if (more && !early_turn)
                named_barrier_arrive(BAR_MATH_TURN0 + (c ^ 1), 2 * WARPGROUP_THREADS);

            /* ---- epilogue, per warp (pingpong: overlaps the other consumer's mainloop) ---- */

            /* Recomputed here rather than kept live across the mainloop:
             * the accumulators leave few registers spare. The short-K
             * variant computes it before the last wgmma wait instead, which
             * takes its integer divisions off the epilogue's path (H200:
             * K = 128 / 256 +1.5%); done for every tile, 128x128 lost 1.5-4%
             * at K >= 1024 (H200, H100; bench/NOTES.md). */
            if constexpr (!Cfg::SHORT_K)
                tc = tile_coord<Cfg>(p, t);
            if constexpr (SPLIT) {
                split_epilogue<Cfg, TOut>(acc, p, u, tc, c, wg_tid, alpha, beta,
                                          reinterpret_cast<uint8_t *>(&ss.stage[0]), &ss.red_full,
                                          red_phase, warp, &tmap_c, ss.c_sub[cw], &ss.c_full[cw],
                                          epi);
            } else {
                if constexpr (SK) {
                    if (u.kb0 > 0) { /* not the tile's start: the partial goes to the head's CTA */
                        sk_tail_store<Cfg>(acc, p, c, wg_tid);
                        continue;
                    }
                    if (u.kb1 < p.k_blocks) /* a head: add the rest, then store as any tile */
                        sk_head_add<Cfg>(acc, p, u, c, wg_tid);
                }
                if constexpr (DEFER)
                    if (defer_tile_if<Cfg, TOut>(acc, p, tc, c, warp, &tmap_c, ss.c_sub[cw],
                                                 &ss.c_full[cw], epi, alpha, beta, pk, dt, pend))
                        continue;
                store_tile_any<Cfg, TOut, false>(acc, p, tc, c, warp, &tmap_c, ss.c_sub[cw],
                                                 &ss.c_full[cw], epi, alpha, beta, ~0u);
            }
            GS_TL_TILE(4);
        }
        if constexpr (DEFER) /* the CTA's last tile */
            deferred_drain<Cfg, TOut>(pk, pend, dt, p, &tmap_c, ss.c_sub[cw], epi);
        /* Shared memory must outlive the reads of the last stores. */
        if (lane == 0)
            tma_store_wait_all<0>();
    } /* CONSUMER0 / CONSUMER1 */
}

} // namespace

#endif /* GS_PINGPONG_KERNEL_CUH */
