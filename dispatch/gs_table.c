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
 * An entry marked exact vouches only for calls of its own m and k whose n
 * lies in the same power-of-two bucket (exact_holds): bf16 decode on
 * 70B-class weights reads 0.82-1.11x of cuBLAS between shapes a tenth
 * apart in m or k (cuBLAS changes its split and kernel with the shape;
 * bench/NOTES.md), where no neighbour's reading says anything about the
 * next shape.
 *
 * A family may scale a neighbour's reading to the problem (its
 * reading_scale: the pingpong family's persistent grid keeps fewer SMs busy
 * at some shapes than at the measured one).
 *
 * The built-in table is the text of a table file (gs_table_data.h, written
 * by bench/table_from_csv.py), parsed at first use by the same parser as
 * GEMMSHIM_TABLE files: entries name families and configurations by their
 * stable names, resolved through the registry. */
#define _GNU_SOURCE /* strtod_l (and pthread_rwlock, newlocale, O_CLOEXEC) */
#include "gs_c_locale.h"
#include "gs_dispatch.h"
#include "gs_registry.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct table_entry {
    const gs_family_t *family;
    int config;
    int cc;            /* 90 = sm_90 */
    gs_dtype_t a_type;
    gs_scale_mode_t scales; /* FP8: A's and B's scale mode (both); GS_SCALE_NONE elsewhere */
    char layout[3];    /* "TN": transa, transb */
    double m, n, k;    /* the measured shape */
    double ratio;      /* cuBLAS time / our time, median */
    char gpu[16];      /* measured on this model (gs_gpu_key); "" = any */
    int exact;         /* vouches only for its own m and k and n's bucket (exact_holds) */
} table_entry_t;

#define DIM_SPAN 1.6
#define K_SPAN 1.3
#define DIM_FLOOR 8.0
/* log(1.25): see gs_table_ratio */
#define NEIGHBOUR_MARGIN 0.2231435513142097

static double floored(double x) { return x < DIM_FLOOR ? DIM_FLOOR : x; }

/* x within a factor `span` of e: log distance, or -1 outside (by
 * multiplication: this runs for every entry of every candidate of a call) */
static double span_dist(double x, double e, double span)
{
    if (x * span < e || x > e * span)
        return -1.0;
    return fabs(log(x / e));
}

static const char builtin_text[] =
#include "gs_table_data.h"
    ;
static table_entry_t *builtin; /* parsed from builtin_text at first use */
static size_t builtin_n;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static int parse_text(const char *name, const char *buf, size_t len, table_entry_t **out,
                      size_t *out_n, char *msg, size_t msg_size);

/* A built-in table that does not parse is a build defect (test_table
 * checks it): said on stderr, and nothing is measured, so the default
 * policy forwards everything. */
static void builtin_parse(void)
{
    char msg[256];
    if (parse_text("built-in routing table", builtin_text, sizeof builtin_text - 1, &builtin,
                   &builtin_n, msg, sizeof msg)) {
        fprintf(stderr, "gemmshim: %s\n", msg);
        builtin = NULL;
        builtin_n = 0;
    }
}

size_t gs_table_builtin_entries(void)
{
    pthread_once(&builtin_once, builtin_parse);
    return builtin_n;
}

/* The table in force: the built-in one (NULL here), or one loaded from a
 * file (gs_table_load), swapped under the write lock. */
static table_entry_t *loaded;
static size_t loaded_n;
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

/* e's reading for p, as e's family scales it (on this device: the models
 * measured, H200 and H100, have the same SM count). */
static double reading_for(const table_entry_t *e, const gs_problem_t *p, const gs_device_t *d)
{
    if (!e->family->reading_scale)
        return e->ratio;
    gs_problem_t measured = *p;
    measured.m = (int64_t)e->m;
    measured.n = (int64_t)e->n;
    measured.k = (int64_t)e->k;
    measured.batch = 1; /* measured unbatched */
    return e->ratio * e->family->reading_scale(p, &measured, d, e->config);
}

/* elems elements of esize bytes: the largest of 16, 32, 64 and 128 that
 * divides their size, 0 below 16; at most cap (16: a family whose loads do
 * not care for lines) */
static int row_class(int64_t elems, size_t esize, int cap)
{
    const int64_t bytes = elems * (int64_t)esize;
    int c = 0;
    for (int a = 16; a <= cap && bytes % a == 0; a *= 2)
        c = a;
    return c;
}

/* Readings are taken by bench/bench_ab.c (directly, or through gemmshim
 * tune) with tight leading dimensions (each operand's stored rows) and
 * 256-byte aligned operands, unbatched. A call whose operands are 16-byte
 * aligned where the measured shape's were not, or the other way round (an
 * odd leading dimension, an offset pointer, an odd batch stride), runs
 * other load paths than the measurement did: fp32 NN 1023x1025x1027 took
 * 1024^3's reading (1.01x) and ran at 0.79x. Such a reading does not hold
 * for the call. Nor does one whose rows were aligned to another of 16, 32,
 * 64 or 128 bytes than the call's: TMA box rows then straddle lines
 * otherwise, and shapes of whole 16-byte rows that took readings of
 * 128-byte rows (bf16 4872x4096x3448 NN, 8192x1448x4872 TN: rows of 9744
 * bytes) ran at 0.54-0.92x, 192-wide routes with 1456-byte rows (k = 728)
 * that took readings of 1216- and 1728-byte ones (64-byte multiples) at
 * 0.63-0.66x (bench/NOTES.md). */
static int aligned_as_measured(const table_entry_t *e, const gs_problem_t *p)
{
    const int cap = e->family->reading_rows_16 ? 16 : 128;
    const size_t sa = gs_dtype_size(p->a_type), sb = gs_dtype_size(p->b_type),
                 sc = gs_dtype_size(p->c_type);
    const int64_t m = (int64_t)e->m, n = (int64_t)e->n, k = (int64_t)e->k;
    if (row_class(p->lda, sa, cap) != row_class(p->trans_a ? k : m, sa, cap) ||
        row_class(p->ldb, sb, cap) != row_class(p->trans_b ? n : k, sb, cap) ||
        row_class(p->ldc, sc, cap) != row_class(m, sc, cap))
        return 0;
    const uintptr_t ptrs = (uintptr_t)p->A | (uintptr_t)p->B | (uintptr_t)p->C;
    if (ptrs & (uintptr_t)(cap - 1))
        return 0;
    return p->batch <= 1 ||
           (row_class(p->stride_a, sa, cap) == cap && row_class(p->stride_b, sb, cap) == cap &&
            row_class(p->stride_c, sc, cap) == cap);
}

/* The power-of-two bucket of a column count, 8 and below as one: the widths
 * of the decode kernels' tiles (n = 9 to 16 runs the 16-wide plan, 17 to 32
 * the 32-wide one). */
static int n_bucket(double n)
{
    int b = 8;
    while (b < n && b < (1 << 30))
        b *= 2;
    return b;
}

/* An exact entry speaks for calls of its m and k whose n runs the same
 * width of tile. */
static int exact_holds(const table_entry_t *e, const gs_problem_t *p)
{
    return (double)p->m == e->m && (double)p->k == e->k &&
           n_bucket((double)p->n) == n_bucket(e->n);
}

/* Where entry e lies from p: the log distance summed over m, n and k, or -1
 * where e is not p's candidate, model-independent fields included, or lies
 * outside the span, or was measured with other alignments. */
static double entry_dist(const table_entry_t *e, const gs_family_t *f, int config, int cc,
                         gs_dtype_t a_type, const char layout[3], gs_scale_mode_t scales,
                         double m, double n, double k, const gs_problem_t *p)
{
    if (e->family != f || e->config != config || e->cc != cc || e->a_type != a_type ||
        e->layout[0] != layout[0] || e->layout[1] != layout[1] || e->scales != scales)
        return -1;
    if (k < 1)
        return -1;
    const double dm = span_dist(m, floored(e->m), DIM_SPAN);
    const double dn = dm < 0 ? -1 : span_dist(n, floored(e->n), DIM_SPAN);
    const double dk = dn < 0 ? -1 : span_dist(k, e->k, K_SPAN);
    if (dk < 0 || !aligned_as_measured(e, p))
        return -1;
    return dm + dn + dk;
}

/* An entry of d's own model, or of none (d named). */
static int own_model(const table_entry_t *e, const gs_device_t *d)
{
    return d->gpu[0] && (!e->gpu[0] || !strcmp(e->gpu, d->gpu));
}

double gs_table_ratio(const gs_family_t *f, int config, const gs_problem_t *p,
                      const gs_device_t *d)
{
    pthread_once(&builtin_once, builtin_parse);
    /* FP8 entries were measured with B of A's type and scale mode: a mixed
     * pair (e4m3 x e5m2, rowwise x tensorwise) has no reading */
    const gs_scale_mode_t scales = gs_lt_scale_of(p->cls.lt_scales, GS_LT_SCALE_A);
    if ((gs_dtype_is_fp8(p->a_type) && p->b_type != p->a_type) ||
        scales != gs_lt_scale_of(p->cls.lt_scales, GS_LT_SCALE_B))
        return 0.0;
    int cc = d->cc_major * 10 + d->cc_minor;
    char layout[3] = {p->trans_a ? 'T' : 'N', p->trans_b ? 'T' : 'N', 0};
    const double m = floored((double)p->m), n = floored((double)p->n), k = (double)p->k;
    /* the nearest entry of this model (or of none); of every model */
    nearest_t own = {INFINITY, 0.0}, all = {INFINITY, 0.0};
    pthread_rwlock_rdlock(&table_lock);
    const table_entry_t *table = loaded ? loaded : builtin;
    const size_t table_n = loaded ? loaded_n : builtin_n;
    for (size_t i = 0; i < table_n; ++i) {
        const table_entry_t *e = &table[i];
        const double dist = entry_dist(e, f, config, cc, p->a_type, layout, scales, m, n, k, p);
        if (dist < 0 || (e->exact && !exact_holds(e, p)) ||
            (f->reading_shape_only && dist > 0))
            continue;
        const double ratio = reading_for(e, p, d);
        if (own_model(e, d))
            nearest_offer(&own, dist, ratio);
        nearest_offer(&all, dist, ratio);
    }
    /* An unmeasured shape takes the nearest reading only where no other
     * reading about as near says less: speedups over cuBLAS jump between
     * neighbouring shapes where cuBLAS changes its kernel (decode at m =
     * 8192 read 0.89x, at 10240 1.07x; 9216 lies between), and the nearer
     * of two disagreeing readings is no evidence for the shape between
     * them. So the readings within NEIGHBOUR_MARGIN of the nearest
     * distance (of the same set: own model, or every model) bound it, exact
     * entries among them (a reading that vouches for no neighbour is still
     * evidence against one). A measured shape (distance 0) keeps its own
     * reading. */
    const int use_own = own.dist < INFINITY;
    nearest_t *chosen = use_own ? &own : &all;
    if (chosen->dist > 0 && chosen->dist < INFINITY) {
        const double reach = chosen->dist + NEIGHBOUR_MARGIN;
        for (size_t i = 0; i < table_n; ++i) {
            const table_entry_t *e = &table[i];
            if (use_own && !own_model(e, d))
                continue;
            const double dist = entry_dist(e, f, config, cc, p->a_type, layout, scales, m, n, k, p);
            if (dist < 0 || dist > reach)
                continue;
            const double ratio = reading_for(e, p, d);
            if (ratio < chosen->ratio)
                chosen->ratio = ratio;
        }
    }
    pthread_rwlock_unlock(&table_lock);
    return chosen->ratio;
}

/* ---- routing table files ----
 * Text, versioned. First line "gemmshim-table 1"; then one entry a line:
 *   ROUTE CONFIG CC DTYPE LAYOUT M N K SPEEDUP [GPU] [exact]
 * e.g. "pingpong pingpong_coop_256x128x64 90 bf16 TN 8192 8192 8192 1.000 H200"
 * or   "sgemm_simt - 90 f32 NN 1024 1024 1024 1.027" (no GPU: any model)
 * or   "fp8 fp8_decode_wg 90 e4m3/row TN 4096 16 14336 1.972 H200" (FP8: the
 *      A type and the scale mode of A and B, parse_dtype);
 * or   "skinny - 90 bf16 TN 10240 32 8192 1.081 H200 exact" (the reading
 *      holds for m = 10240 and k = 8192 at n = 17 to 32 only; "exact" is
 *      no GPU name);
 * '#' starts a comment, blank lines are skipped. bench/table_from_csv.py
 * --text writes them.
 *
 * Lines end at '\n' (a '\r' before it, or anywhere, ends the line's text as
 * '#' does); fields are separated by spaces, tabs, '\v' or '\f'. A UTF-8 byte
 * order mark at the start of the file is skipped. Refused, with the file's
 * line: a line longer than GS_TABLE_LINE_MAX bytes, a NUL byte, a field that
 * is not what its column takes. Numbers are read whole, in the C locale
 * whatever LC_NUMERIC the application set: CC 10 to 199, M N K 1 to
 * GS_TABLE_DIM_MAX, SPEEDUP a decimal number in (0, 100]. A file with a
 * header and no entry is refused too: it would route nothing. */

/* Fields are separated by these; a line of nothing else is blank. */
static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

/* ROUTE is a family's name, CONFIG one of its configurations' names ("-"
 * for a family of one configuration). */
static int parse_route(const char *route, const char *config, const gs_family_t **f, int *cfg)
{
    const gs_family_t *family = gs_family_find(route);
    if (!family)
        return -1;
    if (!strcmp(config, "-") && family->n_configs == 1) {
        *f = family;
        *cfg = 0;
        return 0;
    }
    for (int c = 0; c < family->n_configs; ++c)
        if (!strcmp(config, family->config_name(c))) {
            *f = family;
            *cfg = c;
            return 0;
        }
    return -1;
}

/* DTYPE: f32, bf16, f16; or an FP8 type with the scale mode of both A and
 * B, which decides cuBLASLt's speed as much as the shape does (rowwise
 * decode runs at a third of its tensorwise bandwidth): e4m3/tensor,
 * e4m3/row, e4m3/none, and the same for e5m2. */
static int parse_dtype(const char *s, gs_dtype_t *t, gs_scale_mode_t *scales)
{
    static const struct {
        const char *name;
        gs_dtype_t type;
        gs_scale_mode_t scales;
    } names[] = {
        {"f32", GS_DT_F32, GS_SCALE_NONE},
        {"bf16", GS_DT_BF16, GS_SCALE_NONE},
        {"f16", GS_DT_F16, GS_SCALE_NONE},
        {"e4m3/tensor", GS_DT_E4M3, GS_SCALE_SCALAR_32F},
        {"e4m3/row", GS_DT_E4M3, GS_SCALE_OUTER_VEC_32F},
        {"e4m3/none", GS_DT_E4M3, GS_SCALE_NONE},
        {"e5m2/tensor", GS_DT_E5M2, GS_SCALE_SCALAR_32F},
        {"e5m2/row", GS_DT_E5M2, GS_SCALE_OUTER_VEC_32F},
        {"e5m2/none", GS_DT_E5M2, GS_SCALE_NONE},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (!strcmp(s, names[i].name)) {
            *t = names[i].type;
            *scales = names[i].scales;
            return 0;
        }
    return -1;
}

/* A whole decimal integer in [lo, hi]: strtoll over the whole field, with
 * overflow (ERANGE) an out-of-range value, not a saturated one. */
static int parse_int(const char *field, const char *s, long long lo, long long hi,
                     long long *out, char *why, size_t why_size)
{
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    if (end == s || *end) {
        snprintf(why, why_size, "%s '%.32s' is not a whole number", field, s);
        return -1;
    }
    if (errno == ERANGE || v < lo || v > hi) {
        snprintf(why, why_size, "value out of range: %s = %.32s (%lld to %lld)", field, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* SPEEDUP: [+-]digits[.digits][e[+-]digits] (or .digits), no "nan", "inf"
 * or hex forms; converted in the C locale (a decimal-comma LC_NUMERIC made
 * sscanf read "1.75" as 1 and the ".75" as the GPU). */
static int parse_ratio(const char *s, locale_t c_locale, double *out, char *why, size_t why_size)
{
    const char *p = s;
    size_t digits = 0;
    if (*p == '+' || *p == '-')
        ++p;
    for (; *p >= '0' && *p <= '9'; ++p)
        ++digits;
    if (*p == '.')
        for (++p; *p >= '0' && *p <= '9'; ++p)
            ++digits;
    if (digits && (*p == 'e' || *p == 'E')) {
        ++p;
        if (*p == '+' || *p == '-')
            ++p;
        if (!(*p >= '0' && *p <= '9'))
            digits = 0;
        while (*p >= '0' && *p <= '9')
            ++p;
    }
    if (!digits || *p) {
        snprintf(why, why_size, "SPEEDUP '%.32s' is not a decimal number", s);
        return -1;
    }
    char *end = NULL;
    errno = 0;
    const double v = strtod_l(s, &end, c_locale);
    if (*end || errno == ERANGE || !(v > 0.0) || v > 100.0) {
        snprintf(why, why_size, "value out of range: SPEEDUP = %.32s (above 0, at most 100)", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* One entry line (modified in place: its fields are cut out of it). */
static int parse_entry(char *line, table_entry_t *e, locale_t c_locale, char *why, size_t why_size)
{
    char *f[12]; /* one more than a line may hold: an extra field is refused */
    int nf = 0;
    for (char *p = line; *p && nf < 12;) {
        while (is_blank(*p))
            ++p;
        if (!*p)
            break;
        f[nf++] = p;
        while (*p && !is_blank(*p))
            ++p;
        if (*p)
            *p++ = '\0';
    }
    /* the optional fields: [GPU] [exact] */
    e->exact = nf > 9 && !strcmp(f[nf - 1], "exact");
    const char *gpu = nf - e->exact == 10 ? f[9] : NULL;
    if (nf < 9 || nf - e->exact > 10 ||
        (gpu && (strlen(gpu) >= sizeof e->gpu || !strcmp(gpu, "exact")))) {
        snprintf(why, why_size,
                 "expected: ROUTE CONFIG CC DTYPE LAYOUT M N K SPEEDUP [GPU] [exact] (GPU: one "
                 "word, at most 15 characters)");
        return -1;
    }
    if (parse_route(f[0], f[1], &e->family, &e->config)) {
        snprintf(why, why_size, "unknown route/configuration '%.40s %.40s'", f[0], f[1]);
        return -1;
    }
    if (parse_dtype(f[3], &e->a_type, &e->scales)) {
        snprintf(why, why_size,
                 "unknown type '%.16s' (f32, bf16, f16; FP8: e4m3 or e5m2 with /tensor, "
                 "/row or /none)", f[3]);
        return -1;
    }
    const char *layout = f[4];
    if (strlen(layout) != 2 || !strchr("NT", layout[0]) || !strchr("NT", layout[1])) {
        snprintf(why, why_size, "layout '%.16s' is not NN, NT, TN or TT", layout);
        return -1;
    }
    long long cc, m, n, k;
    if (parse_int("CC", f[2], 10, 199, &cc, why, why_size) ||
        parse_int("M", f[5], 1, GS_TABLE_DIM_MAX, &m, why, why_size) ||
        parse_int("N", f[6], 1, GS_TABLE_DIM_MAX, &n, why, why_size) ||
        parse_int("K", f[7], 1, GS_TABLE_DIM_MAX, &k, why, why_size) ||
        parse_ratio(f[8], c_locale, &e->ratio, why, why_size))
        return -1;
    e->cc = (int)cc;
    memcpy(e->layout, layout, 3);
    e->m = (double)m;
    e->n = (double)n;
    e->k = (double)k;
    memset(e->gpu, 0, sizeof e->gpu);
    if (gpu)
        memcpy(e->gpu, gpu, strlen(gpu));
    return 0;
}

#define say(...) ((msg) && (msg_size) ? (void)snprintf((msg), (msg_size), __VA_ARGS__) : (void)0)

/* The entries of a table file's text, or -1 with msg set. */
static int parse_text(const char *name, const char *buf, size_t len, table_entry_t **out,
                      size_t *out_n, char *msg, size_t msg_size)
{
    const unsigned char *u = (const unsigned char *)buf;
    if (len >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF))) {
        say("%s: UTF-16 text (byte order mark %02X %02X): save it as UTF-8 or ASCII", name,
            u[0], u[1]);
        return -1;
    }
    size_t pos = len >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3) ? 3 : 0; /* UTF-8 BOM */
    size_t cap = 0, n = 0;
    unsigned lineno = 0;
    table_entry_t *entries = NULL;
    char *line = malloc((len - pos < GS_TABLE_LINE_MAX ? len - pos : GS_TABLE_LINE_MAX) + 1);
    const locale_t c_locale = gs_c_locale();
    int ok = line != NULL && c_locale != (locale_t)0, header = 0;
    if (!ok)
        say("%s: out of memory", name);
    while (ok && pos < len) {
        ++lineno;
        const char *start = buf + pos;
        const char *nl = memchr(start, '\n', len - pos);
        const size_t line_len = nl ? (size_t)(nl - start) : len - pos;
        pos += line_len + (nl != NULL);
        if (line_len > GS_TABLE_LINE_MAX) {
            say("%s:%u: longer than %d bytes", name, lineno, GS_TABLE_LINE_MAX);
            ok = 0;
            break;
        }
        if (memchr(start, '\0', line_len)) {
            say("%s:%u: NUL byte in the line (a binary or UTF-16 file?)", name, lineno);
            ok = 0;
            break;
        }
        memcpy(line, start, line_len);
        line[line_len] = '\0';
        line[strcspn(line, "#\r")] = '\0';
        char *s = line;
        while (is_blank(*s))
            ++s;
        size_t s_len = strlen(s);
        while (s_len && is_blank(s[s_len - 1]))
            s[--s_len] = '\0';
        if (!*s)
            continue;
        if (!header) {
            header = 1;
            if (strcmp(s, "gemmshim-table 1")) {
                say("%s:%u: first line must be 'gemmshim-table 1'", name, lineno);
                ok = 0;
            }
            continue;
        }
        if (n == cap) {
            const size_t new_cap = cap ? 2 * cap : 64;
            table_entry_t *grown = realloc(entries, new_cap * sizeof *entries);
            if (!grown) {
                say("%s: out of memory", name);
                ok = 0;
                break;
            }
            entries = grown;
            cap = new_cap;
        }
        char why[192];
        if (parse_entry(s, &entries[n], c_locale, why, sizeof why)) {
            say("%s:%u: %s", name, lineno, why);
            ok = 0;
        } else {
            ++n;
        }
    }
    free(line);
    if (ok && !header) {
        say("%s: no 'gemmshim-table 1' line (empty, or only comments)", name);
        ok = 0;
    } else if (ok && n == 0) {
        say("%s: no entries: the table would route nothing (GEMMSHIM_MODE=off turns routing off)",
            name);
        ok = 0;
    }
    if (!ok) {
        free(entries);
        return -1;
    }
    *out = entries;
    *out_n = n;
    return 0;
}

/* Make `entries` the table in force (NULL: the built-in one). */
static void install(table_entry_t *entries, size_t n)
{
    pthread_rwlock_wrlock(&table_lock);
    table_entry_t *old = loaded;
    loaded = entries;
    loaded_n = entries ? n : 0;
    __atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE);
    pthread_rwlock_unlock(&table_lock);
    free(old); /* no reader holds it: they hold the lock while reading */
}

int gs_table_load_buffer(const char *name, const char *buf, size_t len, char *msg,
                         size_t msg_size)
{
    table_entry_t *entries = NULL;
    size_t n = 0;
    if (!name)
        name = "routing table";
    if (!buf && len) {
        say("%s: no text", name);
        return GS_TABLE_ERR_FORMAT;
    }
    if (parse_text(name, buf ? buf : "", len, &entries, &n, msg, msg_size))
        return GS_TABLE_ERR_FORMAT;
    install(entries, n);
    say("%s", "");
    return 0;
}

void gs_table_use_builtin(void)
{
    install(NULL, 0);
}

static const char *file_kind(mode_t mode)
{
    return S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device"
         : S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" : "not a file";
}

/* A regular file's bytes, or GS_TABLE_ERR_IO with msg set. Anything else
 * is refused before it is read, and never waited on: open(O_NONBLOCK)
 * returns at once on a FIFO without a writer (fopen blocked there, in the
 * application's first GEMM), and fstat then refuses it. */
static int read_file(const char *path, char **out, size_t *out_len, char *msg, size_t msg_size)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 || fstat(fd, &st)) {
        say("cannot read routing table '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return GS_TABLE_ERR_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            say("cannot read routing table '%s': %s", path, strerror(EISDIR));
        else
            say("cannot read routing table '%s': not a regular file (%s)", path,
                file_kind(st.st_mode));
        close(fd);
        return GS_TABLE_ERR_IO;
    }
    if ((uintmax_t)st.st_size > GS_TABLE_FILE_MAX) {
        say("cannot read routing table '%s': larger than %u MiB", path,
            (unsigned)(GS_TABLE_FILE_MAX >> 20));
        close(fd);
        return GS_TABLE_ERR_IO;
    }
    const int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    /* st_size is a hint (0 for /proc files, a file may grow): read to EOF */
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, len = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : GS_TABLE_ERR_IO;
    if (!buf)
        say("cannot read routing table '%s': out of memory", path);
    while (!rc) {
        if (len == cap) {
            if (cap > GS_TABLE_FILE_MAX) {
                say("cannot read routing table '%s': larger than %u MiB", path,
                    (unsigned)(GS_TABLE_FILE_MAX >> 20));
                rc = GS_TABLE_ERR_IO;
                break;
            }
            const size_t new_cap = 2 * cap < GS_TABLE_FILE_MAX + 1 ? 2 * cap : GS_TABLE_FILE_MAX + 1;
            char *grown = realloc(buf, new_cap);
            if (!grown) {
                say("cannot read routing table '%s': out of memory", path);
                rc = GS_TABLE_ERR_IO;
                break;
            }
            buf = grown;
            cap = new_cap;
        }
        const ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            say("cannot read routing table '%s': %s", path, strerror(errno));
            rc = GS_TABLE_ERR_IO;
        } else if (got == 0) {
            break;
        } else {
            len += (size_t)got;
        }
    }
    close(fd);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *out_len = len;
    return 0;
}

int gs_table_load(const char *path, char *msg, size_t msg_size)
{
    char *buf = NULL;
    size_t len = 0;
    if (!path) {
        say("cannot read routing table: no path");
        return GS_TABLE_ERR_IO;
    }
    const int rc = read_file(path, &buf, &len, msg, msg_size);
    if (rc)
        return rc;
    const int parsed = gs_table_load_buffer(path, buf, len, msg, msg_size);
    free(buf);
    return parsed;
}
