#define _GNU_SOURCE /* strdup */
/* The call log and statistics. One line per distinct call signature keeps
 * the log readable for applications that issue millions of GEMMs; the
 * summary at exit gives calls and GPU-time share per route. Lines go
 * through the sink (gs_sink.c); ab report files are gs_report.c's. */
#include "gs_log.h"
#include "gs_compat.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIG_SLOTS 4096 /* distinct signatures remembered (power of two) */

typedef struct sig {
    uint64_t key;      /* 0 = empty slot */
    uint64_t calls;
    char *line;        /* its log line, kept for the report */
    /* GEMMSHIM_MODE=ab: this signature's turns and what they measured */
    uint64_t ab_turns;
    uint64_t ours_n, cublas_n;
    double ours_ms, cublas_ms;
    double max_err;
    int err_known;
    char kernel[64];
    char shape[160];
    gs_class_t cls;    /* its call class, as the tune cache keys it (ab report) */
} sig_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sig_t sigs[SIG_SLOTS];
static sig_t *sig_order[SIG_SLOTS / 2]; /* insertion order, for the report */
static unsigned n_sigs;
static int sigs_full_said;
static uint64_t route_calls[GS_ROUTE_COUNT];
static uint64_t route_timed[GS_ROUTE_COUNT];
static double route_ms[GS_ROUTE_COUNT];
static double tuned_ms; /* of route_ms: calls a tuned decision routed or forwarded */
static uint64_t fallbacks;
static uint64_t fallback_said[64]; /* kernel+error keys already said */

static const char *const entry_names[GS_EP_COUNT][2] = {
    [GS_EP_SGEMM] = {"cublasSgemm_v2", "cublasSgemm_v2_64"},
    [GS_EP_SGEMM_STRIDED] = {"cublasSgemmStridedBatched", "cublasSgemmStridedBatched_64"},
    [GS_EP_GEMMEX] = {"cublasGemmEx", "cublasGemmEx_64"},
    [GS_EP_GEMMEX_STRIDED] = {"cublasGemmStridedBatchedEx", "cublasGemmStridedBatchedEx_64"},
    [GS_EP_GEMMEX_BATCHED] = {"cublasGemmBatchedEx", "cublasGemmBatchedEx_64"},
    [GS_EP_LT_MATMUL] = {"cublasLtMatmul", "cublasLtMatmul"},
};

const char *gs_entry_name(gs_entry_t e, int is_64)
{
    return (unsigned)e < GS_EP_COUNT ? entry_names[e][is_64 ? 1 : 0] : "?";
}

const char *gs_dtype_name(gs_dtype_t t)
{
    switch (t) {
    case GS_DT_F32: return "f32";
    case GS_DT_F16: return "f16";
    case GS_DT_BF16: return "bf16";
    case GS_DT_F64: return "f64";
    case GS_DT_E4M3: return "e4m3";
    case GS_DT_E5M2: return "e5m2";
    default: return "other";
    }
}

const char *gs_compute_name(gs_compute_t c)
{
    switch (c) {
    case GS_CT_F32: return "32F";
    case GS_CT_F32_PEDANTIC: return "32F_PEDANTIC";
    case GS_CT_F32_TF32: return "32F_FAST_TF32";
    case GS_CT_F32_FAST_16F: return "32F_FAST_16F";
    case GS_CT_F32_FAST_16BF: return "32F_FAST_16BF";
    default: return "other";
    }
}

/* Appends to buf at *n what fmt says, where there is room. */
static void append(char *buf, size_t size, size_t *n, const char *fmt, const char *arg)
{
    if (*n >= size)
        return;
    const int w = snprintf(buf + *n, size - *n, fmt, arg);
    if (w > 0)
        *n += (size_t)w;
}

void gs_class_extras(const gs_class_t *c, char *buf, size_t size)
{
    size_t n = strlen(buf);
    if (c->bias_type)
        append(buf, size, &n, " +bias(%s)", gs_dtype_name((gs_dtype_t)c->bias_type));
    static const char *const modes[] = {" scale_A=%s", " scale_B=%s", " scale_C=%s",
                                        " scale_D=%s"};
    for (int i = 0; i < 4; ++i) {
        const gs_scale_mode_t m = gs_lt_scale_of(c->lt_scales, 4 * i);
        if (m != GS_SCALE_NONE)
            append(buf, size, &n, modes[i], gs_scale_mode_name(m));
    }
    if (c->lt_flags & GS_LT_C_TYPE_DIFFERS)
        append(buf, size, &n, " c_type=%s",
               gs_dtype_name((gs_dtype_t)(c->lt_flags >> GS_LT_C_TYPE_SHIFT & 15u)));
    if (c->lt_flags & GS_LT_AMAX_D)
        append(buf, size, &n, "%s", " amax_d");
    if (c->lt_flags & GS_LT_FAST_ACCUM)
        append(buf, size, &n, "%s", " fast_accum");
}

/* A forked child is a process of its own: no lock held by a thread that
 * did not come along, and statistics that count its calls only (the
 * parent's are the parent's to report). Registered after the sink's
 * handlers, so fork takes this lock before the sink's (the lock order). */
static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

static void fork_child(void)
{
    for (unsigned i = 0; i < n_sigs; ++i)
        free(sig_order[i]->line);
    memset(sigs, 0, sizeof sigs);
    n_sigs = 0;
    sigs_full_said = 0;
    memset(route_calls, 0, sizeof route_calls);
    memset(route_timed, 0, sizeof route_timed);
    memset(route_ms, 0, sizeof route_ms);
    tuned_ms = 0.0;
    fallbacks = 0;
    memset(fallback_said, 0, sizeof fallback_said);
    pthread_mutex_unlock(&lock);
}

void gs_log_open(const gs_config_t *c)
{
    static int registered;
    gs_sink_open(c);
    if (!__atomic_exchange_n(&registered, 1, __ATOMIC_ACQ_REL))
        pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Word-at-a-time mixing (multiply, fold the high half down) over the fields
 * that make a signature: it runs on every intercepted call, so a
 * byte-at-a-time hash would cost more than the rest of the shim's work. */
static uint64_t mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 32);
}

static uint64_t signature(const gs_problem_t *p, const gs_decision_t *d, const char *why)
{
    uint64_t h = 1469598103934665603ull;
    const uint64_t f[] = {p->entry, (uint64_t)p->is_64, p->a_type, p->b_type, p->c_type,
                          p->compute, p->trans_a, p->trans_b, (uint64_t)p->m, (uint64_t)p->n,
                          (uint64_t)p->k, (uint64_t)p->batch, d->route, (uint64_t)d->config};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; ++i)
        h = mix(h, f[i]);
    if (p->bias)
        h = mix(h, 0xb1a5);
    if (p->entry == GS_EP_LT_MATMUL) /* Lt calls differ in more than the shape */
        for (const char *r = why; *r; ++r)
            h = mix(h, (unsigned char)*r);
    return h ? h : 1;
}

/* Find or insert a signature; NULL when the table is full. Caller holds the
 * lock. */
static sig_t *lookup(uint64_t key, int *is_new)
{
    *is_new = 0;
    for (unsigned i = (unsigned)key & (SIG_SLOTS - 1);; i = (i + 1) & (SIG_SLOTS - 1)) {
        if (sigs[i].key == key)
            return &sigs[i];
        if (!sigs[i].key) {
            if (n_sigs >= SIG_SLOTS / 2) {
                if (!sigs_full_said) {
                    sigs_full_said = 1;
                    gs_log_line("more than %d distinct signatures; not listing more",
                                SIG_SLOTS / 2);
                }
                return NULL;
            }
            sigs[i].key = key;
            sig_order[n_sigs++] = &sigs[i];
            *is_new = 1;
            return &sigs[i];
        }
    }
}

void gs_log_call(const gs_problem_t *p, const gs_decision_t *dec, const char *kernel,
                 const char *why)
{
    int is_new;
    pthread_mutex_lock(&lock);
    route_calls[dec->route]++;
    sig_t *sg = lookup(signature(p, dec, why), &is_new);
    if (sg)
        sg->calls++;
    if (is_new) {
        /* cuBLASLt's scaling and accumulation, where the call set any: two
         * signatures of one shape that differ only there get lines that
         * say so (bench_fp8 reads each row's route by them) */
        char lt[160] = "";
        if (p->cls.lt_scales || p->cls.lt_flags) {
            gs_class_t c = p->cls;
            c.bias_type = 0; /* " +bias" below */
            gs_class_extras(&c, lt, sizeof lt);
        }
        char line[640];
        snprintf(line, sizeof line,
                 "%s %c%c %s,%s->%s compute=%s m=%lld n=%lld k=%lld batch=%lld%s%s -> %s (%s)",
                 gs_entry_name(p->entry, p->is_64), p->trans_a ? 'T' : 'N',
                 p->trans_b ? 'T' : 'N', gs_dtype_name(p->a_type), gs_dtype_name(p->b_type),
                 gs_dtype_name(p->c_type), gs_compute_name(p->compute), (long long)p->m,
                 (long long)p->n, (long long)p->k, (long long)p->batch,
                 p->bias ? " +bias" : "", lt,
                 kernel ? kernel : gs_route_name(dec->route), why);
        sg->line = strdup(line);
        gs_log_line("%s", line);
    }
    pthread_mutex_unlock(&lock);
}

void gs_log_fallback(const gs_problem_t *p, const char *kernel, const char *error)
{
    uint64_t key = 1469598103934665603ull;
    for (const char *s = kernel; *s; ++s)
        key = mix(key, (unsigned char)*s);
    for (const char *s = error; *s; ++s)
        key = mix(key, (unsigned char)*s);
    int say = 1;
    pthread_mutex_lock(&lock);
    ++fallbacks;
    for (int i = 0; i < 64; ++i) {
        if (fallback_said[i] == key) {
            say = 0;
            break;
        }
        if (!fallback_said[i]) {
            fallback_said[i] = key;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    if (say)
        gs_msg("%s on %s failed (%s); forwarded to cuBLAS (said once per kernel and error)",
               gs_entry_name(p->entry, p->is_64), kernel, error);
}

void gs_log_add_time(gs_route_t route, int tuned, double ms)
{
    pthread_mutex_lock(&lock);
    route_timed[route]++;
    route_ms[route] += ms;
    if (tuned)
        tuned_ms += ms;
    pthread_mutex_unlock(&lock);
}

/* The per-route table. Caller holds the lock. */
static void write_summary(gs_block_t *b)
{
    uint64_t calls = 0;
    double ms = 0.0;
    for (int r = 0; r < GS_ROUTE_COUNT; ++r) {
        calls += route_calls[r];
        ms += route_ms[r];
    }
    gs_block_add(b, "summary: %llu calls, %u signatures, %llu fallbacks (pid %ld)",
                 (unsigned long long)calls, n_sigs, (unsigned long long)fallbacks,
                 (long)getpid());
    gs_block_add(b, "  %-14s %10s %7s %10s %10s %7s", "route", "calls", "calls%", "timed",
                 "gpu_ms", "time%");
    for (int r = 0; r < GS_ROUTE_COUNT; ++r) {
        if (!route_calls[r])
            continue;
        gs_block_add(b, "  %-14s %10llu %6.1f%% %10llu %10.3f %6.1f%%",
                     gs_route_name((gs_route_t)r), (unsigned long long)route_calls[r],
                     100.0 * route_calls[r] / (calls ? calls : 1),
                     (unsigned long long)route_timed[r], route_ms[r],
                     ms > 0 ? 100.0 * route_ms[r] / ms : 0.0);
    }
    if (tuned_ms > 0.0)
        gs_block_add(b, "  tuned decisions served %.1f%% of the timed GEMM time (%.3f of %.3f ms)",
                     100.0 * tuned_ms / ms, tuned_ms, ms);
}

/* Calls since the start (or the fork, or the last reset). Caller holds the
 * lock. */
static uint64_t total_calls(void)
{
    uint64_t calls = 0;
    for (int r = 0; r < GS_ROUTE_COUNT; ++r)
        calls += route_calls[r];
    return calls;
}

void gs_log_summary(void)
{
    if (!gs_sink_on())
        return;
    gs_block_t b = GS_BLOCK_INIT;
    pthread_mutex_lock(&lock);
    /* a forked child that made no calls has nothing of its own to sum up */
    if (!gs_sink_forked() || total_calls())
        write_summary(&b);
    pthread_mutex_unlock(&lock);
    gs_block_emit(&b, GS_TO_LOG);
}

int gs_log_write_report(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    gs_block_t b = GS_BLOCK_INIT;
    pthread_mutex_lock(&lock);
    gs_block_add(&b, "report: calls per distinct signature");
    for (unsigned i = 0; i < n_sigs; ++i)
        if (sig_order[i]->calls)
            gs_block_add(&b, "%10llu x %s", (unsigned long long)sig_order[i]->calls,
                         sig_order[i]->line ? sig_order[i]->line : "?");
    write_summary(&b);
    pthread_mutex_unlock(&lock);
    int ok = b.len && fwrite(b.buf, 1, b.len, f) == b.len;
    free(b.buf);
    return fclose(f) == 0 && ok ? 0 : -1;
}

void gs_log_get_stats(uint64_t calls[GS_ROUTE_COUNT], uint64_t *fallback_count)
{
    pthread_mutex_lock(&lock);
    for (int r = 0; r < GS_ROUTE_COUNT; ++r)
        calls[r] = route_calls[r];
    *fallback_count = fallbacks;
    pthread_mutex_unlock(&lock);
}

void gs_log_reset_stats(void)
{
    pthread_mutex_lock(&lock);
    for (int r = 0; r < GS_ROUTE_COUNT; ++r) {
        route_calls[r] = route_timed[r] = 0;
        route_ms[r] = 0.0;
    }
    tuned_ms = 0.0;
    fallbacks = 0;
    for (unsigned i = 0; i < n_sigs; ++i)
        sig_order[i]->calls = 0; /* signatures stay known: not logged again */
    pthread_mutex_unlock(&lock);
}

/* ---- GEMMSHIM_MODE=ab ---- */

gs_sig_t *gs_log_ab_turn(const gs_problem_t *p, const gs_decision_t *dec, const char *kernel,
                         uint64_t *turn)
{
    int is_new;
    pthread_mutex_lock(&lock);
    sig_t *sg = lookup(signature(p, dec, dec->reason), &is_new);
    if (sg) {
        if (!sg->shape[0]) {
            snprintf(sg->shape, sizeof sg->shape, "%s %c%c %s,%s->%s m=%lld n=%lld k=%lld "
                     "batch=%lld", gs_entry_name(p->entry, p->is_64), p->trans_a ? 'T' : 'N',
                     p->trans_b ? 'T' : 'N', gs_dtype_name(p->a_type), gs_dtype_name(p->b_type),
                     gs_dtype_name(p->c_type), (long long)p->m, (long long)p->n, (long long)p->k,
                     (long long)p->batch);
            snprintf(sg->kernel, sizeof sg->kernel, "%s", kernel);
            sg->cls = p->cls;
        }
        *turn = sg->ab_turns++;
    }
    pthread_mutex_unlock(&lock);
    return (gs_sig_t *)sg;
}

void gs_log_ab_time(gs_sig_t *s, int ours, double ms)
{
    sig_t *sg = (sig_t *)s;
    pthread_mutex_lock(&lock);
    if (ours) {
        sg->ours_n++;
        sg->ours_ms += ms;
    } else {
        sg->cublas_n++;
        sg->cublas_ms += ms;
    }
    pthread_mutex_unlock(&lock);
}

void gs_log_ab_error(gs_sig_t *s, double rel)
{
    sig_t *sg = (sig_t *)s;
    pthread_mutex_lock(&lock);
    if (!sg->err_known || rel > sg->max_err)
        sg->max_err = rel;
    sg->err_known = 1;
    pthread_mutex_unlock(&lock);
}

size_t gs_log_ab_rows(gs_ab_row_t **rows)
{
    *rows = NULL;
    pthread_mutex_lock(&lock);
    size_t n = 0;
    for (unsigned i = 0; i < n_sigs; ++i)
        n += sig_order[i]->ab_turns != 0;
    gs_ab_row_t *out = n ? calloc(n, sizeof *out) : NULL;
    n = 0;
    for (unsigned i = 0; out && i < n_sigs; ++i) {
        const sig_t *sg = sig_order[i];
        if (!sg->ab_turns)
            continue;
        gs_ab_row_t *r = &out[n++];
        snprintf(r->signature, sizeof r->signature, "%s", sg->shape);
        snprintf(r->route, sizeof r->route, "%s", sg->kernel);
        gs_class_hex(&sg->cls, r->cls);
        r->calls = sg->ab_turns;
        r->ours_us = sg->ours_n ? 1e3 * sg->ours_ms / sg->ours_n : NAN;
        r->cublas_us = sg->cublas_n ? 1e3 * sg->cublas_ms / sg->cublas_n : NAN;
        r->speedup = r->ours_us > 0 && r->cublas_us > 0 ? r->cublas_us / r->ours_us : NAN;
        r->max_err = sg->err_known ? sg->max_err : NAN;
    }
    pthread_mutex_unlock(&lock);
    *rows = out;
    return out ? n : 0;
}
