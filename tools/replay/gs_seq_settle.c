/* The sequence phase's rules; see gs_seq_settle.h. */
#include "gs_seq_settle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int ascending(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The q-quantile of sorted v[0..n), interpolated. */
static double quantile(const double *v, size_t n, double q)
{
    const double at = q * (double)(n - 1);
    const size_t i = (size_t)at;
    return i + 1 < n ? v[i] + (at - (double)i) * (v[i + 1] - v[i]) : v[n - 1];
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, ascending);
    return quantile(v, n, 0.5);
}

gs_seq_cmp_t gs_seq_compare(const double *base, const double *var, size_t rounds)
{
    gs_seq_cmp_t c;
    memset(&c, 0, sizeof c);
    double *r = malloc(3 * rounds * sizeof *r);
    if (!rounds || !r) {
        free(r);
        c.ratio = 1.0;
        return c;
    }
    double *b = r + rounds, *v = b + rounds;
    size_t n = 0;
    for (size_t i = 0; i < rounds; ++i) {
        b[i] = base[i];
        v[i] = var[i];
        if (base[i] > 0.0)
            r[n++] = var[i] / base[i];
    }
    if (n) {
        c.ratio = median_of(r, n);
        c.noise = (quantile(r, n, 0.75) - quantile(r, n, 0.25)) / 2.0;
    } else {
        c.ratio = 1.0;
    }
    c.base_ms = median_of(b, rounds);
    c.var_ms = median_of(v, rounds);
    free(r);
    return c;
}

int gs_seq_clear(const gs_seq_cmp_t *c)
{
    const double bar = c->noise > GS_SEQ_MARGIN ? c->noise : GS_SEQ_MARGIN;
    return fabs(c->ratio - 1.0) > bar;
}

gs_seq_verdict_t gs_seq_settle(const gs_seq_class_t *c)
{
    gs_seq_verdict_t v;
    memset(&v, 0, sizeof v);
    double with_prior = 0.0, tuned = 0.0;
    for (size_t i = 0; i < c->n_ctx; ++i) {
        const gs_seq_ctx_t *x = &c->ctx[i];
        /* the variant is the sequence with the class at its prior: what
         * the tuned route saves per replay is the variant's extra time */
        const double saved = x->cmp.base_ms * (x->cmp.ratio - 1.0);
        if (gs_seq_clear(&x->cmp))
            v.graph_ms += x->weight * saved;
        tuned += x->weight * x->cmp.base_ms;
        with_prior += x->weight * (x->cmp.base_ms + saved);
    }
    if (c->vs_prior > 0.0)
        v.eager_ms = c->eager_ms * (1.0 - 1.0 / c->vs_prior);
    if (!c->n_ctx || !(tuned > 0.0)) {
        v.keep = 1;
        return v;
    }
    v.seq_gain = with_prior / tuned;
    v.keep = v.graph_ms + v.eager_ms > 0.0;
    return v;
}

int gs_seq_fallback_reverts(double seq_loss_ms, double eager_gain_ms)
{
    return !(eager_gain_ms > seq_loss_ms);
}
