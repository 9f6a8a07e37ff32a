/* The tuner's timed pairs on the GPU: events, scratch, the L2 flush, a
 * pair's two sides, and their collection; see gs_tune.h and gs_tune_sig.h. */
#include "gs_tune_sig.h"
#include "gs_as_called.h"
#include "gs_config.h"
#include "gs_hooks.h"
#include "gs_kernels.h"
#include "gs_log.h"
#include "gs_registry.h"
#include "gs_spin.h"
#include "gs_state.h"
#include "gs_verify.h"
#include "gs_workspace.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum {
    SPIN_NS = 50000,     /* the GPU waits this long ahead of each pair, while the
                            host queues both sides (gs_spin.h) */
    /* A side of a timed pair is a run of back-to-back calls lasting about
     * RUN_TARGET_NS (at most RUN_MAX calls): one call between a flush and an
     * event pair adds the same fixed costs to both sides (the flush's dirty
     * lines written back under the first call's stores, the first wave's
     * ramp), which shrinks a short call's ratio toward 1 (TN 8448x9216x64:
     * 1.04 where back-to-back calls read 1.18). */
    RUN_TARGET_NS = 300000,
    RUN_MAX = 8,
    RUN_HOST_NS = 20000, /* the spin grows by this per extra call of a run and
                            side, so the host queues whole runs ahead of the GPU */
    CMP_SLOTS = 4096,    /* comparisons in flight, process-wide */
};
/* run_of: A and B below this share of a call's bytes leave a run
 * representative */
#define RUN_INPUT_SHARE 0.1

static double (*cmp_sums)[3];  /* pinned */
static int cmp_busy[CMP_SLOTS];
static cudaEvent_t event_pool[PEND_MAX * 64];
static int n_events;

int gs_tsig_pairs_start(void)
{
    if (cudaHostAlloc((void **)&cmp_sums, CMP_SLOTS * sizeof *cmp_sums, cudaHostAllocPortable) !=
        cudaSuccess) {
        cudaGetLastError();
        cmp_sums = NULL;
        return -1;
    }
    return 0;
}

int gs_tsig_pairs_ready(void)
{
    return cmp_sums != NULL;
}

/* ---- events ---- */

static cudaEvent_t event_get(void)
{
    if (n_events)
        return event_pool[--n_events];
    cudaEvent_t e = NULL;
    if (cudaEventCreate(&e) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return e;
}

static void event_put(cudaEvent_t e)
{
    if (!e)
        return;
    if (n_events < (int)(sizeof event_pool / sizeof event_pool[0]))
        event_pool[n_events++] = e;
    else
        cudaEventDestroy(e);
}

static void pending_release(pending_t *pd)
{
    for (size_t i = 0; i < sizeof pd->ev / sizeof pd->ev[0]; ++i)
        event_put(pd->ev[i]), pd->ev[i] = NULL;
    if (pd->cmp >= 0)
        cmp_busy[pd->cmp] = 0;
    pd->cmp = -1;
}

static int cmp_slot(void)
{
    if (!cmp_sums)
        return -1;
    for (int i = 0; i < CMP_SLOTS; ++i)
        if (!cmp_busy[i]) {
            cmp_busy[i] = 1;
            return i;
        }
    return -1;
}

/* ---- pairs ---- */


/* The two outputs keep C's offset within 256 bytes: the same alignment. */
char *gs_tsig_out_of(const tsig_t *s, int which, const void *C)
{
    const uintptr_t off = (uintptr_t)C & 255u;
    uintptr_t base = ((uintptr_t)s->scratch + 255u) & ~(uintptr_t)255u;
    if (which)
        base = (base + off + s->c_bytes + 255u) & ~(uintptr_t)255u;
    return (char *)(base + off);
}

static double *sums_of(const tsig_t *s)
{
    const uintptr_t end = (uintptr_t)gs_tsig_out_of(s, 1, (const void *)(uintptr_t)255) + s->c_bytes;
    return (double *)((end + 255u) & ~(uintptr_t)255u);
}

static size_t scratch_bytes(size_t c_bytes, size_t flush_bytes)
{
    return 4 * 256 + 2 * (c_bytes + 512) + PEND_MAX * 3 * sizeof(double) + flush_bytes;
}

/* Written before each side of a pair: twice the L2, so each side reads its
 * operands from memory (gs_tune_rule.h). */
static char *flush_of(const tsig_t *s)
{
    const uintptr_t end = (uintptr_t)(sums_of(s) + PEND_MAX * 3);
    return (char *)((end + 255u) & ~(uintptr_t)255u);
}

static size_t flush_size(const gs_device_t *d)
{
    const size_t l2 = d->l2_bytes ? d->l2_bytes : (size_t)64 << 20;
    return 2 * l2;
}

/* A candidate's run on the scratch output: 0 or an error. */
int gs_tsig_run_candidate(const tsig_t *s, const gs_tune_cand_t *cand, const gs_problem_t *p,
                         const gs_device_t *d, void *out)
{
    const gs_family_t *f = gs_family_at(cand->family);
    gs_problem_t q = *p;
    q.C = out;
    q.workspace = NULL;
    q.workspace_size = 0;
    gs_plan_t plan = {.family = f, .config = cand->config};
    f->plan(&q, d, &plan);
    void *hold = NULL;
    if (plan.workspace_bytes) {
        char why[112];
        if (gs_workspace_get(d->ordinal, s->owner, plan.workspace_bytes, &q.workspace,
                             &q.workspace_size, &hold, why, sizeof why))
            return GS_RUN_NO_WORKSPACE;
    }
    const int rc = f->run(&plan, &q, d);
    gs_workspace_release(hold);
    return rc;
}

/* Calls per side of a timed pair, from cuBLAS's time for one call (ms):
 * 1 where a run would not read what the application's calls read. The
 * calls of a run share their operands, so a run's later calls find what the
 * call before left in L2, while the application's calls, between other
 * kernels, read A and B from memory. Where A and B fit in L2 that is all of
 * them; where they exceed it, still up to an L2's worth, and which part
 * depends on the order a kernel walks its tiles, so two kernels gain
 * unequally (TN 4096x128x14336, 117 MB of weights: a cuBLASLt algorithm
 * 1.05x cuBLAS in runs, 0.94x in bench_ab's rotated steady state). So a
 * run is taken only where A and B are a small part of the call's traffic
 * (a short-k call whose C is most of its bytes). */
static int run_of(const tsig_t *s, double t_cub_ms)
{
    const gs_class_t *c = &s->key.cls;
    const double ies = (double)gs_dtype_size((gs_dtype_t)c->a_type),
                 oes = (double)gs_dtype_size((gs_dtype_t)c->c_type);
    const double b = (double)c->batch, in = b * ies * ((double)c->m * c->k + (double)c->k * c->n),
                 out = b * oes * (double)c->m * c->n;
    if (in > RUN_INPUT_SHARE * (in + out))
        return 1;
    const double n = ceil(RUN_TARGET_NS * 1e-6 / t_cub_ms);
    return n < 1.0 ? 1 : n > RUN_MAX ? RUN_MAX : (int)n;
}

void gs_tsig_collect(tsig_t *s, const gs_tune_limits_t *lim)
{
    int done = 0;
    while (done < s->n_pend) {
        pending_t *pd = &s->pend[done];
        cudaEvent_t last = pd->cmp >= 0 ? pd->ev[4] : pd->ev[3];
        const cudaError_t q = cudaEventQuery(last);
        if (q == cudaErrorNotReady)
            break;
        float t0 = 0.f, t1 = 0.f;
        if (q != cudaSuccess || cudaEventElapsedTime(&t0, pd->ev[0], pd->ev[1]) != cudaSuccess ||
            cudaEventElapsedTime(&t1, pd->ev[2], pd->ev[3]) != cudaSuccess) {
            cudaGetLastError();
            t0 = t1 = 0.f;
        }
        /* the pair's whole GPU time (copies, spin, flushes too), for the budgets */
        float whole = 0.f;
        if (q != cudaSuccess || cudaEventElapsedTime(&whole, pd->ev[5], pd->ev[3]) != cudaSuccess) {
            cudaGetLastError();
            whole = 0.f;
        }
        const double extra = whole > t0 + t1 ? whole - (t0 + t1) : 0.0;
        const double sides_ms = (double)t0 + t1;
        /* per call: each side was a run of pd->run calls */
        const double t_cand = (pd->first_is_cand ? t0 : t1) / pd->run,
                     t_cub = (pd->first_is_cand ? t1 : t0) / pd->run;
        if (!s->run && t_cub > 0.0)
            s->run = run_of(s, t_cub);
        gs_tune_cand_t *c = &s->rule.cand[pd->cand];
        if (pd->cmp >= 0 && q == cudaSuccess) {
            const double *sums = cmp_sums[pd->cmp];
            const double rel = gs_verify_relative(sums);
            if (sums[2] > 0.0 || !isfinite(rel)) {
                s->needs_compare[pd->cand] = 1; /* inconclusive: compare again */
            } else if (rel > s->tol) {
                c->state = GS_CAND_MISMATCH;
                gs_log_line("tune: %s: candidate %s dropped: relative difference to cuBLAS "
                            "%.3g (tolerance %.3g)",
                            s->shape, s->name[pd->cand], rel, s->tol);
            } else {
                c->checked = 1;
            }
        }
        if (pd->warmup) { /* its times are dropped, its cost counted */
            gs_tune_add_pair(&s->rule, pd->cand, 0.0, 0.0, 1, lim);
            s->rule.gpu_ms += sides_ms;
        } else {
            gs_tune_add_pair(&s->rule, pd->cand, t_cub, t_cand, pd->first_is_cand, lim);
            s->rule.gpu_ms += sides_ms - (t_cand + t_cub); /* the runs' other calls */
        }
        s->rule.gpu_ms += extra;
        gs_tsig_spent_ms += sides_ms + extra;
        gs_tune_share_pair(&s->share, sides_ms + extra, t_cub);
        pending_release(pd);
        ++done;
    }
    if (done) {
        memmove(s->pend, s->pend + done, (size_t)(s->n_pend - done) * sizeof *s->pend);
        s->n_pend -= done;
        s->unsaved += done;
    }
}

/* One pair on the owner stream: 1 (enqueued; also a candidate that failed
 * to run once its work was on the GPU), or 0 (no room: nothing was
 * enqueued, nothing is charged, the rotation stays). */
int gs_tsig_enqueue_pair(tsig_t *s, int ci, const gs_call_t *c, const gs_problem_t *p,
                        const gs_device_t *d, const gs_tune_limits_t *lim)
{
    if (s->n_pend >= PEND_MAX)
        return 0;
    pending_t *pd = &s->pend[s->n_pend];
    memset(pd, 0, sizeof *pd);
    pd->cand = ci;
    pd->cmp = -1;
    const int compare = s->needs_compare[ci];
    pd->warmup = compare && !s->rule.cand[ci].checked;
    pd->first_is_cand = pd->warmup ? 1 : gs_tune_order(&s->rule, ci);
    /* a compared pair is one call a side: with a beta that reads C, a run
     * would feed each call's C into the next */
    pd->run = compare || !s->run ? 1 : s->run;
    for (int i = 0; i < 6; ++i)
        if ((i != 4 || compare) && !(pd->ev[i] = event_get())) {
            pending_release(pd);
            return 0;
        }
    if (compare && (pd->cmp = cmp_slot()) < 0) {
        pending_release(pd);
        return 0;
    }
    gs_tune_enqueued(&s->rule, ci, pd->warmup ? -1 : pd->first_is_cand);
    cudaStream_t st = s->owner;
    char *cand_out = gs_tsig_out_of(s, 0, p->C), *ref_out = gs_tsig_out_of(s, 1, p->C);
    cudaEventRecord(pd->ev[5], st);
    /* A candidate resumed from another process's progress runs once
     * untimed before its first pair here: its module loads lazily at its
     * first launch, on the host, while the pair's events would wait. */
    int err = pd->warmup || s->warm[ci] ? 0 : gs_tsig_run_candidate(s, &s->rule.cand[ci], p, d, cand_out);
    s->warm[ci] = 1;
    if (s->key.cls.beta_kind != GS_BETA_ZERO) { /* both start from the caller's C */
        cudaMemcpyAsync(cand_out, p->C, s->c_bytes, cudaMemcpyDeviceToDevice, st);
        cudaMemcpyAsync(ref_out, p->C, s->c_bytes, cudaMemcpyDeviceToDevice, st);
    }
    /* L2 flushed before each side, so neither finds the other's operands
     * there; the spin (once, ahead of both) lets the host queue the pair. */
    if (!err)
        err = gs_spin_launch(st, (unsigned)(SPIN_NS + (pd->run - 1) * 2 * RUN_HOST_NS));
    int copying = 0;
    for (int half = 0; half < 2 && !err; ++half) {
        const int cand_now = (half == 0) == pd->first_is_cand;
        err = cudaMemsetAsync(flush_of(s), (s->rule.pairs + half) & 0xff, s->flush_bytes, st);
        if (!err)
            err = cudaEventRecord(pd->ev[2 * half], st);
        for (int r = 0; r < pd->run && !err; ++r)
            err = cand_now ? gs_tsig_run_candidate(s, &s->rule.cand[ci], p, d, cand_out)
                           : (gs_cublas_as_called(c, ref_out) != CUBLAS_STATUS_SUCCESS);
        if (!err)
            err = cudaEventRecord(pd->ev[2 * half + 1], st);
    }
    if (!err && compare) {
        gs_problem_t q = *p;
        double *dsums = sums_of(s) + 3 * (s->n_pend % PEND_MAX);
        copying = 1;
        err = gs_compare_launch(&q, cand_out, ref_out, dsums) ||
              cudaMemcpyAsync(cmp_sums[pd->cmp], dsums, 3 * sizeof(double),
                              cudaMemcpyDeviceToHost, st) ||
              cudaEventRecord(pd->ev[4], st);
        if (!err)
            s->needs_compare[ci] = 0;
    }
    if (err) {
        const cudaError_t last = cudaGetLastError();
        gs_log_line("tune: %s: candidate %s failed to run (error %d, %s); dropped", s->shape,
                    s->name[ci], err, cudaGetErrorName(last));
        s->rule.cand[ci].state = GS_CAND_FAILED;
        gs_tune_add_pair(&s->rule, ci, 0.0, 0.0, 1, lim); /* charged, never timed */
        /* what was enqueued still runs; its events are never read. A copy
         * into the pinned comparison slot may be in flight: the slot stays
         * taken (never reused while it can still be written). */
        if (copying)
            pd->cmp = -1;
        pending_release(pd);
        return 1;
    }
    ++s->n_pend;
    return 1;
}

/* Scratch for the signature's pairs, once: 0, or -1 (decided: forwarded). */
int gs_tsig_scratch_ready(tsig_t *s, const gs_problem_t *p, const gs_device_t *d, cudaStream_t st)
{
    if (s->scratch)
        return 0;
    const gs_config_t *cfg = gs_cfg();
    s->c_bytes = gs_c_span_bytes(p);
    s->flush_bytes = flush_size(d);
    const size_t bytes = scratch_bytes(s->c_bytes, s->flush_bytes);
    void *ptr = NULL;
    if (bytes > cfg->tune.scratch_cap || gs_hooks()->alloc_async(&ptr, bytes, st) != cudaSuccess) {
        cudaGetLastError();
        gs_tsig_decide(s, bytes > cfg->tune.scratch_cap
                      ? "scratch over GEMMSHIM_TUNE_SCRATCH_MB: the prior kept"
                      : "scratch could not be allocated: the prior kept");
        return -1;
    }
    s->scratch = ptr;
    return 0;
}
