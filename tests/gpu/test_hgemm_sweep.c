/* bf16/fp16 correctness sweep through the cuBLAS API, run under the shim with
 * GEMMSHIM_POLICY=eligible: >= 300 random cases over every layout, bf16 and
 * fp16 inputs, same-type and fp32 outputs, the compute-type spellings
 * (COMPUTE_32F, legacy CUDA_R_32F, FAST_16F / FAST_16BF), sizes from 1 to
 * 9000 (primes and non-multiples of every tile dimension), padded leading
 * dimensions, strided batches, alpha/beta incl. 0 and negative, host and
 * device pointer mode, NaN-filled C with beta == 0. Fresh random data for
 * every case. GEMMSHIM_SWEEP_DECODE=1: only the decode layout (TN, n <= 256;
 * the decode kernel takes n <= 64); =deep: the same with k >= 16384 always.
 * Outside decode mode, a quarter of the cases are deep-K (k 8192..131072,
 * m and n small: few output tiles, the pingpong kernel's split-K path), and
 * every case runs our side twice: the two results must be bitwise equal.
 * GEMMSHIM_SWEEP_PLAIN=1: only calls a plain epilogue serves (beta == 0,
 * host scalars, m a multiple of 8, no deep-K cases): what the 192x128
 * pingpong tile takes (its can_implement), so that a sweep forced to it
 * exercises it on every case rather than the few of a mixed sweep.
 *
 * Each case is also run on the real cuBLAS (past the shim) and both are
 * compared with an fp64 host reference on the same (rounded) inputs.
 * Pass: our error <= 2x cuBLAS's, or below the fp32-accumulation noise floor
 * 4 * 2^-24 * sqrt(k) (cases passing only by the floor are counted and
 * printed: small fp32-output problems where cuBLAS splits K and we do not;
 * on shapes neither side splits, cuBLAS's error equals ours, which
 * test_f32out_accuracy pins with no floor); C's padding rows untouched; no
 * NaN. One beta == 0 case in four has a C that TMA cannot store (an odd ldc
 * and batch stride, or C one element past an aligned base: an odd
 * vocabulary's logits), which the pingpong kernels store directly; one
 * case in ten has an odd lda and one in eight B one element off its base
 * (operands TMA cannot load: the backward GEMMs of those logits), which
 * the pingpong kernels pack into their workspace. The summary counts how
 * many of each the shim served (its statistics). */
#include "gpu_util.h"

#include "gemmshim.h"

#define CASES_DEFAULT 320
#define PAD_BITS 0x5a5a5a5au
#define MAX_MNK 1.2e9 /* bounds the host reference's work per case */
#define DEEPK_MAX_ELEMS 1.6e7 /* deep-K cases: bounds (m + n) * k, the host's fill work */

typedef cublasStatus_t (*gemmex_sb_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                       int, int, int, const void *, const void *, cudaDataType,
                                       int, long long, const void *, cudaDataType, int,
                                       long long, const void *, void *, cudaDataType, int,
                                       long long, int, cublasComputeType_t, cublasGemmAlgo_t);

static const int primes[] = {1, 3, 7, 13, 61, 127, 251, 509, 1021, 2039, 4093, 8191};
static const float scalars[] = {1.f, 0.f, -1.5f, 0.5f, 2.f, -0.25f};

static int64_t pick_dim(void)
{
    switch (gu_int(0, 4)) {
    case 0: return primes[gu_int(0, 11)];
    case 1: return gu_int(1, 200);
    case 2: return gu_int(200, 1500);
    case 3: return 64 * gu_int(1, 40) + gu_int(-1, 1) + 1; /* near tile multiples */
    default: return gu_int(1500, 9000);
    }
}

/* padding sentinel: a fixed bit pattern of the element's width */
static int is_pad(const void *p, size_t i, cudaDataType t)
{
    if (t == CUDA_R_32F)
        return ((const uint32_t *)p)[i] == PAD_BITS;
    return ((const uint16_t *)p)[i] == (uint16_t)PAD_BITS;
}
static void set_pad(void *p, size_t i, cudaDataType t)
{
    if (t == CUDA_R_32F)
        ((uint32_t *)p)[i] = PAD_BITS;
    else
        ((uint16_t *)p)[i] = (uint16_t)PAD_BITS;
}

int main(void)
{
    gpu_require_or_skip("test_hgemm_sweep");
    uint64_t seed = gu_seed_init();
    int cases = gu_env_int("GEMMSHIM_SWEEP_CASES", CASES_DEFAULT);
    const char *dc = getenv("GEMMSHIM_SWEEP_DECODE"); /* 1: decode shapes only */
    int decode = dc && !strcmp(dc, "1");
    /* GEMMSHIM_SWEEP_DECODE=deep: decode shapes, every one with k >= 16384
     * (verify mode's deep-K tolerance is pinned by this) */
    int deep_only = dc && !strcmp(dc, "deep");
    decode |= deep_only;
    const char *pl = getenv("GEMMSHIM_SWEEP_PLAIN");
    int plain = pl && !strcmp(pl, "1");
    const char *md = getenv("GEMMSHIM_SWEEP_MAX_DIM");
    int64_t max_dim = md ? atoll(md) : 0;
    printf("test_hgemm_sweep: %d cases%s, GEMMSHIM_SEED=0x%llx\n", cases,
           plain ? " (plain epilogue only: GEMMSHIM_SWEEP_PLAIN=1)" : "", (unsigned long long)seed);
    gu_require_shim();
    gemmex_fn real = (gemmex_fn)gu_real_cublas_sym("cublasGemmEx");
    gemmex_sb_fn real_sb = (gemmex_sb_fn)gu_real_cublas_sym("cublasGemmStridedBatchedEx");
    cublasHandle_t h;
    CUBLAS_OK(cublasCreate(&h));
    float *d_scalars;
    CUDA_OK(cudaMalloc((void **)&d_scalars, 2 * sizeof(float)));

    typedef int (*stats_fn)(gemmshim_stats_t *);
    stats_fn get_stats = (stats_fn)dlsym(RTLD_DEFAULT, "gemmshim_get_stats");
    int passed = 0, failed = 0, by_floor = 0, deep_cases = 0, deep_floor = 0, nondet = 0;
    int odd_c_cases = 0, odd_c_routed = 0, odd_op_cases = 0, odd_op_routed = 0;
    double worst_ratio = 0.0;
    for (int c = 0; c < cases; ++c) {
        cudaDataType ab = gu_int(0, 1) ? CUDA_R_16BF : CUDA_R_16F;
        cudaDataType ct = gu_int(0, 2) == 0 ? CUDA_R_32F : ab;
        int batched = gu_int(0, 3) == 0;
        int64_t m = pick_dim(), n = pick_dim(), k = pick_dim();
        int64_t batch = batched ? gu_int(1, 4) : 1;
        int deepk = 0;
        if (!decode && !plain && gu_int(0, 3) == 0) { /* deep K, few output tiles: split-K */
            deepk = 1;
            k = (int64_t)(8192.0 * pow(16.0, 0.5 * (gu_uniform() + 1.0))); /* 8192..131072 */
            m = gu_int(0, 2) ? gu_int(1, 320) : 64 * gu_int(1, 4) + gu_int(-1, 1) + 1;
            n = gu_int(0, 2) ? gu_int(1, 320) : 64 * gu_int(1, 4) + gu_int(-1, 1) + 1;
            while ((double)(m + n) * k * batch > DEEPK_MAX_ELEMS || (double)m * n * k * batch > MAX_MNK) {
                int64_t *big = m >= n ? &m : &n; /* keep k deep */
                *big = *big / 2 + 1;
            }
        }
        gu_cap_dims(&m, &n, &k, max_dim);
        while ((double)m * n * k * batch > MAX_MNK) { /* keep the fp64 reference affordable */
            int64_t *big = m >= n && m >= k ? &m : n >= k ? &n : &k;
            *big = *big / 2 + 1;
        }
        if (plain)
            m = (m + 7) / 8 * 8;
        int tA = (int)gu_int(0, 1), tB = (int)gu_int(0, 1);
        if (decode) { /* nn.Linear in decode: TN, 1..256 tokens (the decode kernel takes
                       * n <= GS_SKINNY_N_MAX, cuBLAS the rest), a few long-k cases (up to
                       * 131072: k split across a cluster, with a k tail) */
            tA = 1;
            tB = 0;
            int64_t pick = gu_int(0, 7);
            n = pick == 0 ? primes[gu_int(0, 4)] : pick == 1 ? gu_int(65, 256) : gu_int(1, 64);
            if (gu_int(0, 11) == 0 || deep_only)
                k = gu_int(0, 1) ? 131072 - gu_int(0, 40) : gu_int(16384, 131072);
            while ((double)m * n * k * batch > MAX_MNK && m > 1) /* keep n and the long k */
                m = m / 2 + 1;
        }
        int64_t ra = tA ? k : m, ca = tA ? m : k, rb = tB ? n : k, cb = tB ? k : n;
        /* mostly 16-byte multiples (what TMA needs); sometimes not (forwarded) */
        int odd = gu_int(0, 9) == 0;
        int64_t lda = ((ra + 7) / 8 + gu_int(0, 2)) * 8 + (odd ? 1 : 0);
        int64_t ldb = ((rb + 7) / 8 + gu_int(0, 2)) * 8;
        int64_t ldc = ((m + 7) / 8 + gu_int(0, 1)) * 8;
        int64_t sa = lda * ca + 8 * gu_int(0, 2), sb = ldb * cb + 8 * gu_int(0, 2),
                sc = ldc * n + 8 * gu_int(0, 2);
        float alpha = scalars[gu_int(0, 5)], beta = gu_int(0, 2) ? 0.f : scalars[gu_int(0, 5)];
        /* A C that TMA cannot store: an odd ldc (so, mostly, an odd batch
         * stride), or a base one element past the allocation's. Picked by a
         * draw of its own, never from the main sequence, and only where
         * beta == 0 (that C is filled with NaN, no random numbers): every
         * other case, the seeded regression cases included, stays as it was. */
        uint64_t sel = seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(c + 1));
        sel = (sel ^ (sel >> 31)) * 0xBF58476D1CE4E5B9ull;
        sel ^= sel >> 29;
        const int odd_c = !plain && beta == 0.f && sel % 4 == 0;
        const int64_t c_off = odd_c && ((sel >> 8) & 1) ? 1 : 0;
        if (odd_c && !c_off) {
            const int64_t extra = sc - ldc * n;
            ldc = m + 1 - (m & 1) + 2 * (int64_t)((sel >> 16) & 1);
            sc = ldc * n + extra;
        }
        /* An operand TMA cannot load, beside the odd lda of the main
         * sequence: B one element past its allocation's base (the same
         * data, so no draw moves), one case in eight. */
        const int64_t b_off = ((sel >> 24) & 7) == 0 ? 1 : 0;
        int dev_mode = gu_int(0, 3) == 0;
        if (plain)
            beta = 0.f, dev_mode = 0;
        int spelling = (int)gu_int(0, 2);
        cublasComputeType_t compute =
            spelling == 0 ? CUBLAS_COMPUTE_32F
            : spelling == 1 ? (cublasComputeType_t)CUDA_R_32F
            : ab == CUDA_R_16F ? CUBLAS_COMPUTE_32F_FAST_16F : CUBLAS_COMPUTE_32F_FAST_16BF;

        size_t na = sa * (batch - 1) + lda * ca, nb = sb * (batch - 1) + ldb * cb,
               nc = sc * (batch - 1) + ldc * n;
        void *hA = malloc(na * gu_esize(ab)), *hB = malloc(nb * gu_esize(ab)),
             *hC = malloc(nc * gu_esize(ct)), *ours = malloc(nc * gu_esize(ct)),
             *theirs = malloc(nc * gu_esize(ct)), *again = malloc(nc * gu_esize(ct));
        double *dA = malloc(sizeof(double) * na), *dB = malloc(sizeof(double) * nb),
               *ref = malloc(sizeof(double) * ldc * n), *x = malloc(sizeof(double) * ldc * n);
        for (size_t i = 0; i < na; ++i) {
            gu_put(hA, i, ab, (float)gu_uniform());
            dA[i] = gu_get(hA, i, ab);
        }
        for (size_t i = 0; i < nb; ++i) {
            gu_put(hB, i, ab, (float)gu_uniform());
            dB[i] = gu_get(hB, i, ab);
        }
        for (size_t i = 0; i < nc; ++i) {
            if (beta == 0.f && ct == CUDA_R_32F)
                ((float *)hC)[i] = NAN;
            else if (beta == 0.f)
                ((uint16_t *)hC)[i] = 0x7fff; /* NaN in both 16-bit formats */
            else
                gu_put(hC, i, ct, (float)gu_uniform());
        }
        for (int64_t b = 0; b < batch; ++b)
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = m; i < ldc; ++i)
                    set_pad(hC, b * sc + i + j * ldc, ct);
        void *A, *B, *B_alloc, *C_alloc, *C;
        CUDA_OK(cudaMalloc(&A, na * gu_esize(ab)));
        CUDA_OK(cudaMalloc(&B_alloc, (nb + b_off) * gu_esize(ab)));
        B = (char *)B_alloc + b_off * gu_esize(ab);
        CUDA_OK(cudaMalloc(&C_alloc, (nc + c_off) * gu_esize(ct)));
        C = (char *)C_alloc + c_off * gu_esize(ct);
        CUDA_OK(cudaMemcpy(A, hA, na * gu_esize(ab), cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(B, hB, nb * gu_esize(ab), cudaMemcpyHostToDevice));
        const float *pa = &alpha, *pb = &beta;
        if (dev_mode) {
            float s[2] = {alpha, beta};
            CUDA_OK(cudaMemcpy(d_scalars, s, sizeof s, cudaMemcpyHostToDevice));
            pa = d_scalars;
            pb = d_scalars + 1;
        }
        CUBLAS_OK(cublasSetPointerMode(h, dev_mode ? CUBLAS_POINTER_MODE_DEVICE
                                                    : CUBLAS_POINTER_MODE_HOST));
        cublasOperation_t ta = tA ? CUBLAS_OP_T : CUBLAS_OP_N, tb = tB ? CUBLAS_OP_T : CUBLAS_OP_N;
        cublasStatus_t st[3];
        void *outs[3] = {ours, theirs, again};
        /* side 2 (not in decode mode): our call once more, for bitwise reproducibility */
        gemmshim_stats_t before = {0}, after = {0};
        if (get_stats)
            get_stats(&before);
        for (int side = 0; side < (decode ? 2 : 3); ++side) {
            CUDA_OK(cudaMemcpy(C, hC, nc * gu_esize(ct), cudaMemcpyHostToDevice));
            if (!batched)
                st[side] = (side == 1 ? real : (gemmex_fn)cublasGemmEx)(
                    h, ta, tb, (int)m, (int)n, (int)k, pa, A, ab, (int)lda, B, ab, (int)ldb, pb,
                    C, ct, (int)ldc, compute, CUBLAS_GEMM_DEFAULT);
            else
                st[side] = (side == 1 ? real_sb : (gemmex_sb_fn)cublasGemmStridedBatchedEx)(
                    h, ta, tb, (int)m, (int)n, (int)k, pa, A, ab, (int)lda, sa, B, ab, (int)ldb,
                    sb, pb, C, ct, (int)ldc, sc, (int)batch, compute, CUBLAS_GEMM_DEFAULT);
            CUDA_OK(cudaDeviceSynchronize());
            CUDA_OK(cudaMemcpy(outs[side], C, nc * gu_esize(ct), cudaMemcpyDeviceToHost));
            if (side == 0 && get_stats)
                get_stats(&after);
        }
        odd_c_cases += odd_c;
        odd_c_routed += odd_c && after.routed > before.routed;
        odd_op_cases += odd || b_off;
        odd_op_routed += (odd || b_off) && after.routed > before.routed;
        double e_ours = 0, e_cublas = 0;
        int pad_ok = 1;
        for (int64_t b = 0; b < batch; ++b) {
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < m; ++i)
                    ref[i + j * ldc] = beta == 0.f ? 0.0 : gu_get(hC, b * sc + i + j * ldc, ct);
            gu_ref_gemm(tA, tB, m, n, k, alpha, dA + b * sa, lda, dB + b * sb, ldb, beta, ref, ldc);
            for (int side = 0; side < 2; ++side) {
                for (int64_t i = 0; i < ldc * n; ++i)
                    x[i] = gu_get(outs[side], b * sc + i, ct);
                double e = gu_rel_err(ref, ldc, x, ldc, m, n);
                if (side == 0)
                    e_ours = e > e_ours ? e : e_ours;
                else
                    e_cublas = e > e_cublas ? e : e_cublas;
            }
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = m; i < ldc; ++i)
                    pad_ok &= is_pad(ours, b * sc + i + j * ldc, ct);
        }
        double floor_ = 4.0 * 5.96e-8 * sqrt((double)(k > 0 ? k : 1));
        int within_2x = e_ours <= 2.0 * e_cublas;
        int same = decode || (st[2] == st[0] && !memcmp(ours, again, nc * gu_esize(ct)));
        nondet += !same;
        int ok = st[0] == st[1] && st[0] == CUBLAS_STATUS_SUCCESS && pad_ok && same &&
                 (within_2x || e_ours <= floor_);
        if (ok && !within_2x)
            ++by_floor;
        deep_cases += deepk;
        if (deepk && ok && !within_2x)
            ++deep_floor;
        double ratio = e_cublas > 0 ? e_ours / e_cublas : (e_ours > 0 ? INFINITY : 1.0);
        worst_ratio = ratio > worst_ratio && ratio < INFINITY ? ratio : worst_ratio;
        if (ok)
            ++passed;
        else
            ++failed;
        if (!ok || !within_2x)
            printf("%s case %d: %s %s->%s %c%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld "
                   "batch=%lld alpha=%g beta=%g %s compute=%d: status %d/%d err ours %.3g cuBLAS "
                   "%.3g (x%.2f, floor %.2g) pad %s%s%s%s%s\n",
                   ok ? "floor" : "FAIL", c, batched ? "StridedBatchedEx" : "GemmEx",
                   ab == CUDA_R_16BF ? "bf16" : "f16", ct == CUDA_R_32F ? "f32" : "same",
                   "NT"[tA], "NT"[tB], (long long)m, (long long)n, (long long)k, (long long)lda,
                   (long long)ldb, (long long)ldc, (long long)batch, alpha, beta,
                   dev_mode ? "device" : "host", (int)compute, (int)st[0], (int)st[1], e_ours,
                   e_cublas, ratio, floor_, pad_ok ? "ok" : "CLOBBERED",
                   same ? "" : " NOT BITWISE REPRODUCIBLE", deepk ? " (deep-K)" : "",
                   c_off ? " (C offset by one element)" : "", b_off ? " (B offset by one element)" : "");
        cudaFree(A);
        cudaFree(B_alloc);
        cudaFree(C_alloc);
        free(hA); free(hB); free(hC); free(ours); free(theirs); free(again);
        free(dA); free(dB); free(ref); free(x);
    }
    printf("test_hgemm_sweep: worst error ratio to cuBLAS %.2f; %d passed only by the fp32 "
           "noise floor\n", worst_ratio, by_floor);
    if (!decode)
        printf("test_hgemm_sweep: %d deep-K cases (%d passed only by the floor); %d not bitwise "
               "reproducible\n", deep_cases, deep_floor, nondet);
    printf("test_hgemm_sweep: %d cases with a C that TMA cannot store, %d of them served by the "
           "shim's kernels\n", odd_c_cases, odd_c_routed);
    printf("test_hgemm_sweep: %d cases with an operand TMA cannot load, %d of them served by the "
           "shim's kernels\n", odd_op_cases, odd_op_routed);
    printf("%d passed, %d failed\n", passed, failed);
    cublasDestroy(h);
    return failed ? 1 : 0;
}
