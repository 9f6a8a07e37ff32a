/* The built-in tuning table: for each route and measured shape, our speed
 * relative to cuBLAS on that device (bench/bench_ab.c; the entries are
 * written by bench/table_from_csv.py from its CSV, see bench/NOTES.md).
 *
 * A problem matches an entry of its route, kernel configuration, compute
 * capability, input type and layout when its m, its n and its depth k are
 * each within a factor of the measured shape's (DIM_SPAN, K_SPAN); the
 * nearest such entry (in log distance) gives the ratio. No match means "not
 * measured", which the default policy treats as "do not route". m and n are
 * matched one by one, not as the output size m*n: one output size can be a
 * tall or a wide problem, which the kernels serve with other plans (a
 * 1024x64 decode call, 8 row blocks of 64 tokens, once took the reading of
 * 4096x16, 1.10x, and ran at half cuBLAS's speed). Below DIM_FLOOR a
 * dimension counts as DIM_FLOOR: 1 to 8 tokens run one kernel, and the
 * nearest of their readings ties, so the lower ratio is taken.
 *
 * Entries carry the GPU model they were measured on (gs_gpu_key: "H200",
 * "H100"; "" = any). A device uses the entries of its own model (and the
 * "any" ones) where one matches; a model without a matching entry, or a
 * device whose name is unknown (gpu ""), gets the lowest ratio of the
 * nearest shape over every model. So an H200 picks the configuration that
 * measured fastest on H200s (where an H100 may have ranked another one
 * first), and a GPU the table has never seen gets the most conservative
 * reading.
 *
 * Waves (pingpong route): a neighbour's reading is scaled down by how much
 * less of its persistent grid the problem keeps busy than the measured
 * shape did (gs_pingpong_wave_efficiency; never scaled up). 4096x2304x4096
 * is within the span of 4096x2048x4096 (1.01x) but deals 288 tiles of
 * 256x128 in 3 waves of 132 SMs where 4096x2048 deals 256 in 2: it ran at
 * 0.77x, and its scaled reading is 0.76x (bench/NOTES.md, session 15). */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock */
#include "gs_dispatch.h"
#include "gs_kernels.h" /* configuration names in the generated entries */

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct table_entry {
    gs_route_t route;
    int config;
    int cc;            /* 90 = sm_90 */
    gs_dtype_t a_type;
    char layout[3];    /* "TN": transa, transb */
    double m, n, k;    /* the measured shape */
    double ratio;      /* cuBLAS time / our time, median */
    char gpu[16];      /* measured on this model (gs_gpu_key); "" = any */
} table_entry_t;

#define DIM_SPAN 1.6
#define K_SPAN 1.3
#define DIM_FLOOR 8.0

static double floored(double x) { return x < DIM_FLOOR ? DIM_FLOOR : x; }

/* x within a factor `span` of e: log distance, or -1 outside (by
 * multiplication: this runs for every entry of every candidate of a call) */
static double span_dist(double x, double e, double span)
{
    if (x * span < e || x > e * span)
        return -1.0;
    return fabs(log(x / e));
}

static const table_entry_t builtin[] = {
#include "gs_table_data.h"
};

/* The table in force: the built-in one, or one loaded from a file
 * (gs_table_load), swapped under the write lock. */
static const table_entry_t *table = builtin;
static size_t table_n = sizeof builtin / sizeof builtin[0];
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static unsigned generation; /* bumped by every table swap (decision caches) */

unsigned gs_table_generation(void)
{
    return __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
}

/* The nearest entry seen so far: a nearer one replaces it; one at the same
 * distance (the same shape measured on another model, or with and without a
 * model) keeps the lower ratio. */
typedef struct nearest {
    double dist, ratio;
} nearest_t;

static void nearest_offer(nearest_t *n, double dist, double ratio)
{
    if (dist < n->dist || (dist == n->dist && ratio < n->ratio)) {
        n->dist = dist;
        n->ratio = ratio;
    }
}

/* e's reading for p: scaled by p's wave efficiency over e's shape's (at
 * most 1) on the pingpong route, as it is elsewhere. Both on this device's
 * SM count: the models measured (H200, H100) have the same 132. */
static double reading_for(const table_entry_t *e, const gs_problem_t *p, const gs_device_t *d,
                          double p_eff)
{
    if (e->route != GS_ROUTE_PINGPONG)
        return e->ratio;
    gs_problem_t q = *p;
    q.m = (int64_t)e->m;
    q.n = (int64_t)e->n;
    q.k = (int64_t)e->k;
    q.batch = 1; /* measured unbatched */
    const double e_eff = gs_pingpong_wave_efficiency(&q, d, (gs_pingpong_config_t)e->config);
    return p_eff < e_eff ? e->ratio * (p_eff / e_eff) : e->ratio;
}

double gs_table_ratio(gs_route_t route, int config, const gs_problem_t *p, const gs_device_t *d)
{
    int cc = d->cc_major * 10 + d->cc_minor;
    char layout[3] = {p->trans_a ? 'T' : 'N', p->trans_b ? 'T' : 'N', 0};
    const double m = floored((double)p->m), n = floored((double)p->n), k = (double)p->k;
    /* the nearest entry of this model (or of none); of every model */
    nearest_t own = {INFINITY, 0.0}, all = {INFINITY, 0.0};
    const double p_eff = route == GS_ROUTE_PINGPONG
                             ? gs_pingpong_wave_efficiency(p, d, (gs_pingpong_config_t)config)
                             : 1.0;
    pthread_rwlock_rdlock(&table_lock);
    for (size_t i = 0; i < table_n; ++i) {
        const table_entry_t *e = &table[i];
        if (e->route != route || e->config != config || e->cc != cc || e->a_type != p->a_type ||
            e->layout[0] != layout[0] || e->layout[1] != layout[1])
            continue;
        if (k < 1)
            continue;
        const double dm = span_dist(m, floored(e->m), DIM_SPAN);
        const double dn = dm < 0 ? -1 : span_dist(n, floored(e->n), DIM_SPAN);
        const double dk = dn < 0 ? -1 : span_dist(k, e->k, K_SPAN);
        if (dk < 0)
            continue;
        const double dist = dm + dn + dk;
        const double ratio = reading_for(e, p, d, p_eff);
        if (d->gpu[0] && (!e->gpu[0] || !strcmp(e->gpu, d->gpu)))
            nearest_offer(&own, dist, ratio);
        nearest_offer(&all, dist, ratio);
    }
    pthread_rwlock_unlock(&table_lock);
    return own.dist < INFINITY ? own.ratio : all.ratio;
}

/* ---- routing table files ----
 * Text, versioned. First line "gemmshim-table 1"; then one entry a line:
 *   ROUTE CONFIG CC DTYPE LAYOUT M N K SPEEDUP [GPU]
 * e.g. "pingpong pingpong_coop_256x128x64 90 bf16 TN 8192 8192 8192 1.000 H200"
 * or   "sgemm_simt - 90 f32 NN 1024 1024 1024 1.027" (no GPU: any model);
 * '#' starts a comment, blank lines are skipped. bench/table_from_csv.py
 * --text writes them. */

static int parse_route(const char *route, const char *config, gs_route_t *r, int *cfg)
{
    if (!strcmp(route, "sgemm_simt") && !strcmp(config, "-")) {
        *r = GS_ROUTE_SGEMM_SIMT;
        *cfg = 0;
        return 0;
    }
    if (!strcmp(route, "skinny") && !strcmp(config, "-")) {
        *r = GS_ROUTE_SKINNY;
        *cfg = 0;
        return 0;
    }
    if (!strcmp(route, "pingpong"))
        for (int c = 0; c < GS_PINGPONG_CONFIG_COUNT; ++c)
            if (!strcmp(config, gs_pingpong_name((gs_pingpong_config_t)c))) {
                *r = GS_ROUTE_PINGPONG;
                *cfg = c;
                return 0;
            }
    return -1;
}

static int parse_dtype(const char *s, gs_dtype_t *t)
{
    *t = !strcmp(s, "f32") ? GS_DT_F32 : !strcmp(s, "bf16") ? GS_DT_BF16
       : !strcmp(s, "f16") ? GS_DT_F16 : GS_DT_OTHER;
    return *t == GS_DT_OTHER ? -1 : 0;
}

static int parse_entry(const char *line, table_entry_t *e, char *why, size_t why_size)
{
    char route[32], config[64], dtype[8], layout[8], gpu[16] = "";
    long long m, n, k;
    int cc, used = 0, used_gpu = 0;
    double ratio;
    if (sscanf(line, "%31s %63s %d %7s %7s %lld %lld %lld %lf %n", route, config, &cc, dtype,
               layout, &m, &n, &k, &ratio, &used) != 9
        || (line[used] != '\0'
            && (sscanf(line + used, "%15s %n", gpu, &used_gpu) != 1
                || line[used + used_gpu] != '\0'))) {
        snprintf(why, why_size,
                 "expected: ROUTE CONFIG CC DTYPE LAYOUT M N K SPEEDUP [GPU] (GPU: one word, "
                 "at most 15 characters)");
        return -1;
    }
    if (parse_route(route, config, &e->route, &e->config)) {
        snprintf(why, why_size, "unknown route/configuration '%s %s'", route, config);
        return -1;
    }
    if (parse_dtype(dtype, &e->a_type)) {
        snprintf(why, why_size, "unknown type '%s' (f32, bf16, f16)", dtype);
        return -1;
    }
    if (strlen(layout) != 2 || !strchr("NT", layout[0]) || !strchr("NT", layout[1])) {
        snprintf(why, why_size, "layout '%s' is not NN, NT, TN or TT", layout);
        return -1;
    }
    if (cc < 10 || cc > 199 || m < 1 || n < 1 || k < 1 || !(ratio > 0.0) || ratio > 100.0) {
        snprintf(why, why_size, "value out of range");
        return -1;
    }
    e->cc = cc;
    memcpy(e->layout, layout, 3);
    e->m = (double)m;
    e->n = (double)n;
    e->k = (double)k;
    e->ratio = ratio;
    memcpy(e->gpu, gpu, sizeof e->gpu);
    return 0;
}

int gs_table_load(const char *path, char *msg, size_t msg_size)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(msg, msg_size, "cannot read routing table '%s'", path);
        return -1;
    }
    char line[512];
    size_t cap = 64, n = 0;
    unsigned lineno = 0;
    table_entry_t *entries = malloc(cap * sizeof *entries);
    int ok = entries != NULL, header = 0;
    while (ok && fgets(line, sizeof line, f)) {
        ++lineno;
        line[strcspn(line, "#\r\n")] = '\0';
        char *s = line + strspn(line, " \t");
        size_t len = strlen(s);
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
            s[--len] = '\0';
        if (!*s)
            continue;
        if (!header) {
            header = 1;
            if (strcmp(s, "gemmshim-table 1")) {
                snprintf(msg, msg_size, "%s:%u: first line must be 'gemmshim-table 1'", path,
                         lineno);
                ok = 0;
            }
            continue;
        }
        if (n == cap) {
            table_entry_t *grown = realloc(entries, 2 * cap * sizeof *entries);
            if (!grown) {
                snprintf(msg, msg_size, "%s: out of memory", path);
                ok = 0;
                break;
            }
            entries = grown;
            cap *= 2;
        }
        char why[160];
        if (parse_entry(s, &entries[n], why, sizeof why)) {
            snprintf(msg, msg_size, "%s:%u: %s", path, lineno, why);
            ok = 0;
        } else {
            ++n;
        }
    }
    fclose(f);
    if (ok && !header) {
        snprintf(msg, msg_size, "%s: empty (no 'gemmshim-table 1' line)", path);
        ok = 0;
    }
    if (!ok) {
        free(entries);
        return -1;
    }
    pthread_rwlock_wrlock(&table_lock);
    const table_entry_t *old = table;
    table = entries;
    table_n = n;
    __atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE);
    pthread_rwlock_unlock(&table_lock);
    if (old != builtin)
        free((void *)old); /* no reader holds it: they hold the lock while reading */
    return 0;
}
