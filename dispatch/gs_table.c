/* The built-in tuning table: for each route and measured shape, our speed
 * relative to cuBLAS on that device (bench/bench_ab.c; the entries are
 * written by bench/table_from_csv.py from its CSV, see bench/NOTES.md).
 *
 * A problem matches an entry of its route, kernel configuration, compute
 * capability, input type and layout when its output size m*n and its depth k
 * are within a factor of the measured shape's (MN_SPAN, K_SPAN); the nearest
 * such entry (in log distance) gives the ratio. No match means "not
 * measured", which the default policy treats as "do not route". */
#include "gs_dispatch.h"
#include "gs_kernels.h" /* configuration names in the generated entries */

#include <math.h>
#include <stdint.h>

typedef struct table_entry {
    gs_route_t route;
    int config;
    int cc;            /* 90 = sm_90 */
    gs_dtype_t a_type;
    char layout[3];    /* "TN": transa, transb */
    double mn, k;      /* the measured shape */
    double ratio;      /* cuBLAS time / our time, median */
} table_entry_t;

#define MN_SPAN 1.6
#define K_SPAN 1.3

static const table_entry_t table[] = {
#include "gs_table_data.h"
};

double gs_table_ratio(gs_route_t route, int config, const gs_problem_t *p, const gs_device_t *d)
{
    int cc = d->cc_major * 10 + d->cc_minor;
    char layout[3] = {p->trans_a ? 'T' : 'N', p->trans_b ? 'T' : 'N', 0};
    double mn = (double)p->m * (double)p->n, k = (double)p->k;
    double best = 0.0, best_dist = INFINITY;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
        const table_entry_t *e = &table[i];
        if (e->route != route || e->config != config || e->cc != cc || e->a_type != p->a_type ||
            e->layout[0] != layout[0] || e->layout[1] != layout[1])
            continue;
        double dmn = fabs(log(mn / e->mn)), dk = fabs(log(k / e->k));
        if (k < 1 || dmn > log(MN_SPAN) || dk > log(K_SPAN))
            continue;
        if (dmn + dk < best_dist) {
            best_dist = dmn + dk;
            best = e->ratio;
        }
    }
    return best;
}
