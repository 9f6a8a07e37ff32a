/* The tuning rule; see gs_tune_rule.h. */
#include "gs_tune_rule.h"

#include <math.h>
#include <string.h>

gs_tune_limits_t gs_tune_default_limits(void)
{
    gs_tune_limits_t l = {10, 1.01, 0.85, 3, 400, 2000.0};
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

static int wants_pairs(const gs_tune_cand_t *c, const gs_tune_limits_t *lim)
{
    return c->state == GS_CAND_LIVE && c->n + c->enqueued < lim->min_pairs;
}

static int budget_spent(const gs_tune_sig_t *s, const gs_tune_limits_t *lim)
{
    return s->calls >= lim->max_calls || s->gpu_ms >= lim->max_gpu_ms;
}

int gs_tune_next(gs_tune_sig_t *s, const gs_tune_limits_t *lim)
{
    if (budget_spent(s, lim))
        return -1;
    for (int i = 0; i < s->n_cand; ++i) {
        const int c = (s->next + i) % s->n_cand;
        if (wants_pairs(&s->cand[c], lim)) {
            s->next = (c + 1) % s->n_cand;
            return c;
        }
    }
    return -1;
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

int gs_tune_bounds(const gs_tune_cand_t *c, double *mean, double *lo)
{
    double x[GS_TUNE_PAIRS_MAX];
    const int n = c->n_cand_first < c->n_cublas_first ? c->n_cand_first : c->n_cublas_first;
    if (n < 2)
        return 0;
    double sum = 0.0, sq = 0.0;
    for (int i = 0; i < n; ++i) {
        x[i] = 0.5 * (c->cand_first[i] + c->cublas_first[i]);
        sum += x[i];
    }
    const double m = sum / n;
    for (int i = 0; i < n; ++i)
        sq += (x[i] - m) * (x[i] - m);
    const double sd = sqrt(sq / (n - 1));
    *mean = m;
    *lo = m - t975(n - 1) * sd / sqrt((double)n);
    return 1;
}

int gs_tune_order(gs_tune_sig_t *s, int cand)
{
    if (cand < 0 || cand >= s->n_cand)
        return 1;
    return s->cand[cand].timed++ % 2 == 0;
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
    c->log_ratio[c->n++] = x;
    if (cand_first)
        c->cand_first[c->n_cand_first++] = x;
    else
        c->cublas_first[c->n_cublas_first++] = x;
    if (c->n == lim->prune_after) {
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

int gs_tune_decide(const gs_tune_sig_t *s, const gs_tune_limits_t *lim, double *gain,
                   double *lo95)
{
    int best = -1;
    double best_mean = 0.0, best_lo = 0.0;
    for (int i = 0; i < s->n_cand; ++i) {
        const gs_tune_cand_t *c = &s->cand[i];
        double mean, lo;
        if (c->state != GS_CAND_LIVE || !c->checked || c->n < lim->min_pairs ||
            !gs_tune_bounds(c, &mean, &lo))
            continue;
        if (lo > log(lim->win_ratio) && (best < 0 || mean > best_mean)) {
            best = i;
            best_mean = mean;
            best_lo = lo;
        }
    }
    *gain = best >= 0 ? exp(best_mean) : 1.0;
    *lo95 = best >= 0 ? exp(best_lo) : 1.0;
    return best;
}
