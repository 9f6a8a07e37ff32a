/* The tuning rule; see gs_tune_rule.h. */
#include "gs_tune_rule.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gs_tune_limits_t gs_tune_default_limits(void)
{
    gs_tune_limits_t l = {10, 1.01, 0.85, 3, 512, 2000.0, 10000};
    return l;
}

gs_tune_limits_t gs_tune_default_limits_for(int min_pairs)
{
    gs_tune_limits_t l = gs_tune_default_limits();
    /* even: the samples are order-balanced, one of each order; an odd last
     * pair would count for nothing */
    if (min_pairs >= 2 && min_pairs <= GS_TUNE_PAIRS_MAX)
        l.min_pairs = min_pairs + (min_pairs & 1);
    return l;
}

void gs_tune_init(gs_tune_sig_t *s)
{
    memset(s, 0, sizeof *s);
    s->prior = GS_TUNE_CUBLAS;
}

int gs_tune_add(gs_tune_sig_t *s, int family, int config)
{
    if (s->n_cand >= GS_TUNE_CANDS_MAX)
        return -1;
    gs_tune_cand_t *c = &s->cand[s->n_cand];
    memset(c, 0, sizeof *c);
    c->family = family;
    c->config = config;
    return s->n_cand++;
}

void gs_tune_set_prior(gs_tune_sig_t *s, int cand)
{
    s->prior = cand >= 0 && cand < s->n_cand ? cand : GS_TUNE_CUBLAS;
}

static int wants_pairs(const gs_tune_cand_t *c, const gs_tune_limits_t *lim)
{
    return c->state == GS_CAND_LIVE && c->n + c->enqueued < lim->min_pairs;
}

static int budget_spent(const gs_tune_sig_t *s, const gs_tune_limits_t *lim)
{
    return s->pairs >= lim->max_pairs || s->gpu_ms >= lim->max_gpu_ms ||
           s->idle >= lim->max_idle_calls;
}

int gs_tune_next(const gs_tune_sig_t *s, const gs_tune_limits_t *lim)
{
    if (budget_spent(s, lim))
        return -1;
    for (int i = 0; i < s->n_cand; ++i) {
        const int c = (s->next + i) % s->n_cand;
        if (wants_pairs(&s->cand[c], lim))
            return c;
    }
    return -1;
}

int gs_tune_order(const gs_tune_sig_t *s, int cand)
{
    if (cand < 0 || cand >= s->n_cand)
        return 1;
    const gs_tune_cand_t *c = &s->cand[cand];
    return c->timed_cand_first <= c->timed_cublas_first;
}

void gs_tune_enqueued(gs_tune_sig_t *s, int cand, int order)
{
    if (cand < 0 || cand >= s->n_cand)
        return;
    gs_tune_cand_t *c = &s->cand[cand];
    ++c->enqueued;
    if (order > 0)
        ++c->timed_cand_first;
    else if (order == 0)
        ++c->timed_cublas_first;
    ++s->pairs;
    s->next = (cand + 1) % s->n_cand;
}

void gs_tune_call_done(gs_tune_sig_t *s, int pairs)
{
    if (pairs > 0) {
        ++s->calls;
        s->idle = 0;
    } else {
        ++s->idle;
    }
}

void gs_tune_share_call(gs_tune_share_t *sh)
{
    ++sh->calls;
}

void gs_tune_share_pair(gs_tune_share_t *sh, double whole_ms, double t_cublas_ms)
{
    sh->pairs_ms += whole_ms;
    sh->pair_ms = whole_ms;
    if (t_cublas_ms > 0.0) {
        ++sh->n;
        sh->call_ms += (t_cublas_ms - sh->call_ms) / sh->n;
    }
}

double gs_tune_share_call_ms(const gs_tune_share_t *sh)
{
    return sh->n > 0 ? sh->call_ms : sh->carried_call_ms > 0.0 ? sh->carried_call_ms : 0.0;
}

int gs_tune_share_allows_ms(const gs_tune_share_t *sh, double cost_ms, double share)
{
    if (share <= 0.0)
        return 1;
    const double call_ms = gs_tune_share_call_ms(sh);
    return call_ms > 0.0 &&
           sh->pairs_ms + cost_ms <= share * (double)sh->calls * call_ms + sh->carried_ms;
}

double gs_tune_share_credit(const gs_tune_share_t *sh, double share)
{
    if (share <= 0.0)
        return 0.0;
    const double c =
        share * (double)sh->calls * gs_tune_share_call_ms(sh) + sh->carried_ms - sh->pairs_ms;
    return c > 0.0 ? c : 0.0;
}

/* A class's bytes moved (A and B read once, C c_passes times) and flops. */
static double class_bytes(const gs_class_t *c, double c_passes)
{
    const double ies = (double)gs_dtype_size((gs_dtype_t)c->a_type),
                 oes = (double)gs_dtype_size((gs_dtype_t)c->c_type);
    const double m = (double)c->m, n = (double)c->n, k = (double)c->k, b = (double)c->batch;
    return b * (ies * (m * k + k * n) + oes * m * n * c_passes);
}

static double class_flops(const gs_class_t *c)
{
    return 2.0 * (double)c->m * (double)c->n * (double)c->k * (double)c->batch;
}

double gs_tune_intensity(const gs_class_t *c)
{
    const double bytes = class_bytes(c, c->beta_kind == GS_BETA_ZERO ? 1.0 : 2.0);
    return bytes > 0.0 ? class_flops(c) / bytes : 0.0;
}

gs_sustain_plan_t gs_tune_sustain_plan(double call_ms, double intensity, double block_ms)
{
    gs_sustain_plan_t p = {0, 0, GS_SUSTAIN_ROUNDS, 0.0};
    if (!(block_ms > 0.0) || !(call_ms >= GS_SUSTAIN_MIN_MS) ||
        !(intensity >= GS_SUSTAIN_MIN_INTENSITY))
        return p;
    const double n = ceil(block_ms / call_ms);
    p.calls = n < GS_SUSTAIN_MIN_CALLS   ? GS_SUSTAIN_MIN_CALLS
              : n > GS_SUSTAIN_MAX_CALLS ? GS_SUSTAIN_MAX_CALLS
                                         : (int)n;
    p.settle = (int)(GS_SUSTAIN_SETTLE * p.calls);
    p.cost_ms = 2.0 * p.rounds * p.calls * call_ms;
    return p;
}

double gs_tune_est_ms(const gs_class_t *c)
{
    const double t_mem = class_bytes(c, 1.0) / GS_EST_BYTES_PER_S,
                 t_math = class_flops(c) / GS_EST_FLOPS_PER_S;
    return 1e3 * (t_mem > t_math ? t_mem : t_math);
}

int gs_tune_pairs_doubt_prior(const gs_tune_sig_t *s, double call_ms)
{
    double mean, lo;
    if (s->prior < 0 || !(call_ms > 0.0) || call_ms >= GS_SUSTAIN_MIN_MS)
        return 0;
    const gs_tune_cand_state_t st = s->cand[s->prior].state;
    if (st == GS_CAND_MISMATCH || st == GS_CAND_FAILED)
        return 0; /* an unsafe prior goes whatever its speed */
    return gs_tune_bounds(&s->cand[s->prior], &mean, &lo) && mean < 0.0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double gs_tune_sustain_ratio(const double *prior_ms, const double *cand_ms, int rounds)
{
    double r[GS_SUSTAIN_ROUNDS * 4];
    if (rounds < 1 || rounds > (int)(sizeof r / sizeof *r))
        return 0.0;
    for (int i = 0; i < rounds; ++i) {
        if (!(prior_ms[i] > 0.0) || !(cand_ms[i] > 0.0))
            return 0.0;
        r[i] = prior_ms[i] / cand_ms[i];
    }
    qsort(r, (size_t)rounds, sizeof *r, cmp_double);
    return rounds % 2 ? r[rounds / 2] : 0.5 * (r[rounds / 2 - 1] + r[rounds / 2]);
}

int gs_tune_share_allows(const gs_tune_share_t *sh, int in_flight, double share)
{
    if (share <= 0.0)
        return 1;
    if (sh->n == 0) /* no time known yet: the first pair only */
        return in_flight == 0 && sh->pairs_ms == 0.0;
    const double cost = sh->pairs_ms + in_flight * sh->pair_ms;
    return cost <= share * (double)sh->calls * sh->call_ms;
}

/* Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom. */
static double t975(int df)
{
    static const double q[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    return df < 1 ? INFINITY : df <= 30 ? q[df - 1] : 1.96;
}

/* The order-balanced samples' count, mean and variance (n - 1 divisor);
 * 0 when there are fewer than 2. */
static int moments(const gs_tune_cand_t *c, int *n_out, double *mean, double *var)
{
    const int n = c->n_cand_first < c->n_cublas_first ? c->n_cand_first : c->n_cublas_first;
    if (n < 2)
        return 0;
    double sum = 0.0, sq = 0.0;
    for (int i = 0; i < n; ++i)
        sum += 0.5 * (c->cand_first[i] + c->cublas_first[i]);
    const double m = sum / n;
    for (int i = 0; i < n; ++i) {
        const double d = 0.5 * (c->cand_first[i] + c->cublas_first[i]) - m;
        sq += d * d;
    }
    *n_out = n;
    *mean = m;
    *var = sq / (n - 1);
    return 1;
}

int gs_tune_bounds(const gs_tune_cand_t *c, double *mean, double *lo)
{
    int n;
    double var;
    if (!moments(c, &n, mean, &var))
        return 0;
    *lo = *mean - t975(n - 1) * sqrt(var / n);
    return 1;
}

/* What is known of one side of a comparison: cuBLAS as called is exact
 * (mean 0, no variance), a candidate has its samples. */
typedef struct side {
    int n;
    double mean, var;
} side_t;

static const side_t cublas_side = {0, 0.0, 0.0};

/* Lower 95% bound of log(speed of x over speed of y): the difference of
 * the means, Welch's standard error and degrees of freedom (rounded down,
 * the safe side); one exact side makes it Student's one-sample bound. */
static double lower_bound(const side_t *x, const side_t *y)
{
    const double vx = x->n ? x->var / x->n : 0.0, vy = y->n ? y->var / y->n : 0.0;
    const double se2 = vx + vy, diff = x->mean - y->mean;
    if (!(se2 > 0.0))
        return diff;
    const double den = (x->n > 1 ? vx * vx / (x->n - 1) : 0.0) +
                       (y->n > 1 ? vy * vy / (y->n - 1) : 0.0);
    const double df = den > 0.0 ? se2 * se2 / den : 1.0;
    return diff - t975(df > 1e6 ? 1000000 : (int)df) * sqrt(se2);
}

/* A candidate that may take part in a comparison: live, compared, its
 * pairs in. */
static int measured(const gs_tune_cand_t *c, const gs_tune_limits_t *lim, side_t *out)
{
    return c->state == GS_CAND_LIVE && c->checked && c->n >= lim->min_pairs &&
           moments(c, &out->n, &out->mean, &out->var);
}

static void gain_of(const gs_tune_sig_t *s, int route, double *gain, double *lo)
{
    double m, l;
    if (route >= 0 && gs_tune_bounds(&s->cand[route], &m, &l)) {
        *gain = exp(m);
        *lo = exp(l);
    } else {
        *gain = *lo = 1.0;
    }
}

gs_tune_verdict_t gs_tune_decide(const gs_tune_sig_t *s, const gs_tune_limits_t *lim)
{
    gs_tune_verdict_t v = {s->prior, 1, 0, 1.0, 1.0, 1.0, 1.0};
    int incumbent = s->prior;
    side_t ref = cublas_side;
    if (incumbent >= 0) {
        const gs_tune_cand_state_t st = s->cand[incumbent].state;
        if (st == GS_CAND_MISMATCH || st == GS_CAND_FAILED) {
            /* the prior's own result is not to be trusted here: cuBLAS as
             * called stands in for it, and is what stays */
            v.prior_unsafe = 1;
            v.route = incumbent = GS_TUNE_CUBLAS;
        } else if (!measured(&s->cand[incumbent], lim, &ref)) {
            gain_of(s, incumbent, &v.gain, &v.lo95);
            return v; /* not measured: nothing can be shown to beat it */
        }
    }
    const double bar = log(lim->win_ratio);
    double best_mean = 0.0;
    /* cuBLAS as called challenges a prior that is a kernel */
    if (incumbent >= 0 && lower_bound(&cublas_side, &ref) > bar) {
        v.route = GS_TUNE_CUBLAS;
        v.kept_prior = 0;
        v.vs_prior = exp(-ref.mean);
        v.vs_prior_lo95 = exp(lower_bound(&cublas_side, &ref));
        best_mean = 0.0;
    }
    for (int i = 0; i < s->n_cand; ++i) {
        side_t x;
        if (i == incumbent || !measured(&s->cand[i], lim, &x))
            continue;
        const double lo = lower_bound(&x, &ref);
        if (lo > bar && (v.kept_prior || x.mean > best_mean)) {
            v.route = i;
            v.kept_prior = 0;
            v.vs_prior = exp(x.mean - ref.mean);
            v.vs_prior_lo95 = exp(lo);
            best_mean = x.mean;
        }
    }
    if (v.prior_unsafe)
        v.kept_prior = 0;
    gain_of(s, v.route, &v.gain, &v.lo95);
    return v;
}

void gs_tune_add_pair(gs_tune_sig_t *s, int cand, double t_cublas, double t_cand,
                      int cand_first, const gs_tune_limits_t *lim)
{
    if (cand < 0 || cand >= s->n_cand)
        return;
    gs_tune_cand_t *c = &s->cand[cand];
    if (c->enqueued > 0)
        --c->enqueued;
    if (t_cublas > 0.0 && t_cand > 0.0)
        s->gpu_ms += t_cublas + t_cand;
    if (!(t_cublas > 0.0) || !(t_cand > 0.0) || c->n >= GS_TUNE_PAIRS_MAX ||
        c->state != GS_CAND_LIVE)
        return;
    const double x = log(t_cublas / t_cand);
    c->first[c->n] = cand_first ? 'c' : 'r';
    c->log_ratio[c->n++] = x;
    if (cand_first)
        c->cand_first[c->n_cand_first++] = x;
    else
        c->cublas_first[c->n_cublas_first++] = x;
    if (c->n == lim->prune_after && cand != s->prior) { /* the incumbent is never pruned */
        double sum = 0.0;
        for (int i = 0; i < c->n; ++i)
            sum += c->log_ratio[i];
        if (sum / c->n < log(lim->prune_ratio))
            c->state = GS_CAND_SLOW;
    }
}

int gs_tune_done(const gs_tune_sig_t *s, const gs_tune_limits_t *lim)
{
    for (int i = 0; i < s->n_cand; ++i)
        if (s->cand[i].enqueued > 0)
            return 0; /* times still on their way */
    if (budget_spent(s, lim))
        return 1;
    for (int i = 0; i < s->n_cand; ++i)
        if (wants_pairs(&s->cand[i], lim))
            return 0;
    return 1;
}

/* ---- progress ---- */

static const char *const state_names[] = {"live", "mismatch", "failed", "pruned"};

/* Log ratios are written as integers in millionths: no locale, no rounding
 * that matters (a 1% gain is 9950). */
#define SCALE 1e6

typedef struct out {
    char *p;
    size_t left;
    int ok;
} out_t;

static void put(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(out_t *o, const char *fmt, ...)
{
    if (!o->ok)
        return;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(o->p, o->left, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= o->left) {
        o->ok = 0;
        return;
    }
    o->p += n;
    o->left -= (size_t)n;
}

int gs_tune_progress_format(const gs_tune_sig_t *s, const char *const *names, char *buf,
                            size_t size)
{
    out_t o = {buf, size, size > 0};
    put(&o, "pairs=%d\tus=%lld\tcalls=%d", s->pairs, (long long)llround(s->gpu_ms * 1000.0),
        s->calls);
    if (s->credit_ms > 0.0)
        put(&o, "\tcredit_us=%lld", (long long)llround(s->credit_ms * 1000.0));
    if (s->call_ms > 0.0)
        put(&o, "\tcall_ns=%lld", (long long)llround(s->call_ms * 1e6));
    for (int i = 0; i < s->n_cand; ++i) {
        const gs_tune_cand_t *c = &s->cand[i];
        put(&o, "\tcand=%s:%s:%d:", names[i], state_names[c->state & 3], c->checked);
        for (int k = 0; k < c->n; ++k)
            put(&o, "%s%c%lld", k ? "," : "", c->first[k],
                (long long)llround(c->log_ratio[k] * SCALE));
        if (!c->n)
            put(&o, "-");
    }
    return o.ok ? 0 : -1;
}

/* The integer in [s, s + len), within [lo, hi]: 0 and *v, or -1. */
static int int_of(const char *s, size_t len, long long lo, long long hi, long long *v)
{
    char buf[32];
    if (!len || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    const long long x = strtoll(buf, &end, 10);
    if (*end || errno || x < lo || x > hi || !(buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9')))
        return -1;
    *v = x;
    return 0;
}

/* "key=<integer>" in [s, s + len): 0 and *v, or -1. */
static int int_field(const char *s, size_t len, const char *key, long long lo, long long hi,
                     long long *v)
{
    const size_t kl = strlen(key);
    if (len <= kl + 1 || strncmp(s, key, kl) || s[kl] != '=')
        return -1;
    return int_of(s + kl + 1, len - kl - 1, lo, hi, v);
}

/* One candidate's samples "c123,r-45" (or "-") into c. 0 or -1. */
static int parse_samples(const char *s, size_t len, gs_tune_cand_t *c)
{
    if (len == 1 && s[0] == '-')
        return 0;
    const long long bound = 100 * (long long)SCALE; /* a ratio of e^100: nonsense */
    size_t pos = 0;
    for (;;) {
        const char *comma = memchr(s + pos, ',', len - pos);
        const size_t tl = comma ? (size_t)(comma - (s + pos)) : len - pos;
        const char order = tl ? s[pos] : 0;
        long long v;
        if ((order != 'c' && order != 'r') || c->n >= GS_TUNE_PAIRS_MAX ||
            int_of(s + pos + 1, tl - 1, -bound, bound, &v))
            return -1;
        const double x = (double)v / SCALE;
        c->first[c->n] = order;
        c->log_ratio[c->n++] = x;
        if (order == 'c')
            c->cand_first[c->n_cand_first++] = x;
        else
            c->cublas_first[c->n_cublas_first++] = x;
        if (!comma)
            return 0;
        pos += tl + 1;
    }
}

/* "cand=<name>:<state>:<checked>:<samples>": the name (up to the third
 * ':' from the right: a configuration may hold ':') and the rest into c. */
static int parse_cand(const char *s, size_t len, const char **name, size_t *name_len,
                      gs_tune_cand_t *c)
{
    if (len < 5 || strncmp(s, "cand=", 5))
        return -1;
    s += 5;
    len -= 5;
    size_t colon[3];
    int found = 0;
    for (size_t i = len; i-- > 0 && found < 3;)
        if (s[i] == ':')
            colon[found++] = i; /* colon[0] the last */
    if (found < 3 || !colon[2])
        return -1;
    const char *st = s + colon[2] + 1, *ck = s + colon[1] + 1;
    const size_t st_len = colon[1] - colon[2] - 1, ck_len = colon[0] - colon[1] - 1;
    int state = -1;
    for (int i = 0; i < 4; ++i)
        if (strlen(state_names[i]) == st_len && !strncmp(st, state_names[i], st_len))
            state = i;
    if (state < 0 || ck_len != 1 || (ck[0] != '0' && ck[0] != '1'))
        return -1;
    memset(c, 0, sizeof *c);
    c->state = (gs_tune_cand_state_t)state;
    c->checked = ck[0] == '1';
    *name = s;
    *name_len = colon[2];
    return parse_samples(s + colon[0] + 1, len - colon[0] - 1, c);
}

static int find_name(const gs_tune_sig_t *s, const char *const *names, const char *name,
                     size_t len)
{
    for (int i = 0; i < s->n_cand; ++i)
        if (strlen(names[i]) == len && !strncmp(names[i], name, len))
            return i;
    return -1;
}

/* The progress text's fields into r (a copy of the signature). */
static int apply_fields(gs_tune_sig_t *r, const char *const *names, const char *text)
{
    const size_t len = strlen(text);
    size_t pos = 0;
    int field = 0, resumed = 0;
    long long pairs = 0, us = 0, calls = 0, credit_us = 0, call_ns = 0;
    int optional = 3; /* the next field an optional one may take */
    for (;;) {
        const char *tab = memchr(text + pos, '\t', len - pos);
        const size_t fl = tab ? (size_t)(tab - (text + pos)) : len - pos;
        const char *f = text + pos;
        if ((field == 0 && int_field(f, fl, "pairs", 0, INT_MAX, &pairs)) ||
            (field == 1 && int_field(f, fl, "us", 0, (long long)1e15, &us)) ||
            (field == 2 && int_field(f, fl, "calls", 0, INT_MAX, &calls)))
            return -1;
        if (field == optional && fl > 10 && !strncmp(f, "credit_us=", 10)) {
            if (int_field(f, fl, "credit_us", 0, (long long)1e15, &credit_us))
                return -1;
            ++optional;
        } else if (field == optional && fl > 8 && !strncmp(f, "call_ns=", 8)) {
            if (int_field(f, fl, "call_ns", 0, (long long)1e15, &call_ns))
                return -1;
            ++optional;
        } else if (field >= 3) {
            gs_tune_cand_t c;
            const char *name;
            size_t nl;
            if (parse_cand(f, fl, &name, &nl, &c))
                return -1;
            const int i = find_name(r, names, name, nl);
            if (i >= 0 && !r->cand[i].n && !r->cand[i].enqueued) {
                c.family = r->cand[i].family;
                c.config = r->cand[i].config;
                /* the next pairs take the order the samples have fewer of */
                c.timed_cand_first = c.n_cand_first;
                c.timed_cublas_first = c.n_cublas_first;
                r->cand[i] = c;
                ++resumed;
            }
        }
        ++field;
        if (!tab)
            break;
        pos += fl + 1;
    }
    if (field < 3)
        return -1;
    r->pairs = (int)pairs;
    r->gpu_ms = (double)us / 1000.0;
    r->calls = (int)calls;
    r->credit_ms = (double)credit_us / 1000.0;
    r->call_ms = (double)call_ns / 1e6;
    return resumed;
}

int gs_tune_progress_apply(gs_tune_sig_t *s, const char *const *names, const char *text)
{
    /* on a copy, so a malformed text changes nothing (on the heap: tens of
     * kilobytes, and the caller may be on a small application stack) */
    gs_tune_sig_t *r = malloc(sizeof *r);
    if (!r)
        return -1;
    *r = *s;
    const int resumed = apply_fields(r, names, text);
    if (resumed >= 0)
        *s = *r;
    free(r);
    return resumed;
}
