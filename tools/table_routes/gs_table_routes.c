/* table_routes: what the default policy decides for shapes, on the CPU.
 *
 * For each "DTYPE LAYOUT M N K" line on stdin (f32, bf16 or f16; NN, NT,
 * TN or TT; tight leading dimensions and 256-byte aligned operands, as a
 * fresh allocation has them), or for every shape of a grid (--grid), the
 * decision gs_dispatch makes on a GPU of that model with the routing table
 * (the built-in one, or --table FILE) and nothing else configured, printed
 * as "DTYPE LAYOUT M N K ROUTE READING". ROUTE is the configuration that
 * would serve the call or "forward"; READING the table's speedup for it.
 *
 * What it is for: a table change decides shapes nobody measured (the
 * table's readings carry to neighbours, dispatch/gs_table.c). Diff this
 * tool's output over the grid before and after the change, sample the
 * routed shapes that have no reading of their own, and time them with
 * bench_ab --shapes under GEMMSHIM_POLICY=table (bench/NOTES.md, "Never
 * slower on shapes no list has").
 *
 * usage: table_routes [--gpu H200|H100] [--table FILE] [--grid] < shapes
 * The grid: the three types, four layouts, m, n and k from 64 to 65536 by
 * 2^(1/4) (rounded to multiples of 8), n also 1, 8, 16, 24, 32 and 48,
 * m * n * k <= 2^41. */
#include "gs_dispatch.h"
#include "gs_registry.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* No GEMMSHIM_* variable: the default policy, every family allowed. */
static const char *no_env(const char *name)
{
    (void)name;
    return NULL;
}

static gs_device_t hopper(const char *gpu)
{
    gs_device_t d;
    memset(&d, 0, sizeof d);
    d.present = 1;
    d.cc_major = 9;
    d.sm_count = 132;
    d.smem_optin = 227 * 1024;
    d.l2_bytes = 50u << 20;
    snprintf(d.gpu, sizeof d.gpu, "%s", gpu);
    return d;
}

static int parse_type(const char *s, gs_dtype_t *t)
{
    if (!strcmp(s, "f32"))
        *t = GS_DT_F32;
    else if (!strcmp(s, "bf16"))
        *t = GS_DT_BF16;
    else if (!strcmp(s, "f16"))
        *t = GS_DT_F16;
    else
        return -1;
    return 0;
}

/* One shape's decision, printed; -1 for a line it cannot read. */
static int decide(const char *type, const char *layout, int64_t m, int64_t n, int64_t k,
                  const gs_device_t *d, const gs_routing_t *r)
{
    static const float one = 1.f, zero = 0.f;
    gs_problem_t p;
    memset(&p, 0, sizeof p);
    if (parse_type(type, &p.a_type) || strlen(layout) != 2 || !strchr("NT", layout[0]) ||
        !strchr("NT", layout[1]) || m < 1 || n < 1 || k < 1)
        return -1;
    p.b_type = p.c_type = p.a_type;
    p.entry = p.a_type == GS_DT_F32 ? GS_EP_SGEMM : GS_EP_GEMMEX;
    p.compute = GS_CT_F32;
    p.scalar_type = GS_DT_F32;
    p.trans_a = layout[0] == 'T' ? GS_OP_T : GS_OP_N;
    p.trans_b = layout[1] == 'T' ? GS_OP_T : GS_OP_N;
    p.m = m;
    p.n = n;
    p.k = k;
    p.lda = p.trans_a ? k : m;
    p.ldb = p.trans_b ? n : k;
    p.ldc = m;
    p.A = (const void *)(uintptr_t)0x7f0000100000ull;
    p.B = (const void *)(uintptr_t)0x7f1000100000ull;
    p.C = (void *)(uintptr_t)0x7f2000100000ull;
    p.batch = 1;
    p.alpha = &one;
    p.beta = &zero;
    gs_problem_classify(&p);
    const gs_decision_t dec = gs_dispatch(&p, d, r);
    printf("%s %s %lld %lld %lld %s %.3f\n", type, layout, (long long)m, (long long)n,
           (long long)k, dec.family ? dec.family->config_name(dec.config) : "forward",
           dec.table_ratio);
    return 0;
}

static void grid(const gs_device_t *d, const gs_routing_t *r)
{
    static const char *const types[] = {"f32", "bf16", "f16"};
    static const char *const layouts[] = {"NN", "NT", "TN", "TT"};
    static const int64_t decode_n[] = {1, 8, 16, 24, 32, 48};
    int64_t v[48];
    int nv = 0;
    for (int e = 24; e <= 64; ++e) {
        const int64_t x = (int64_t)llround(pow(2.0, e / 4.0) / 8.0) * 8;
        if (nv == 0 || v[nv - 1] != x)
            v[nv++] = x;
    }
    int64_t ns[64];
    int nn = 0;
    for (int i = 0; i < nv; ++i)
        ns[nn++] = v[i];
    for (size_t i = 0; i < sizeof decode_n / sizeof decode_n[0]; ++i)
        ns[nn++] = decode_n[i];
    for (int t = 0; t < 3; ++t)
        for (int l = 0; l < 4; ++l)
            for (int a = 0; a < nv; ++a)
                for (int b = 0; b < nn; ++b)
                    for (int c = 0; c < nv; ++c)
                        if ((double)v[a] * (double)ns[b] * (double)v[c] <= 2199023255552.0)
                            (void)decide(types[t], layouts[l], v[a], ns[b], v[c], d, r);
}

int main(int argc, char **argv)
{
    const char *gpu = "H200", *table = NULL;
    int use_grid = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--gpu") && i + 1 < argc)
            gpu = argv[++i];
        else if (!strcmp(argv[i], "--table") && i + 1 < argc)
            table = argv[++i];
        else if (!strcmp(argv[i], "--grid"))
            use_grid = 1;
        else {
            fprintf(stderr, "usage: %s [--gpu H200|H100] [--table FILE] [--grid] < shapes\n",
                    argv[0]);
            return 2;
        }
    }
    if (table) {
        char msg[512];
        if (gs_table_load(table, msg, sizeof msg)) {
            fprintf(stderr, "table_routes: %s\n", msg);
            return 1;
        }
    }
    const gs_device_t d = hopper(gpu);
    gs_config_t c;
    gs_config_parse(&c, no_env);
    if (use_grid) {
        grid(&d, &c.routing);
        return 0;
    }
    char line[256];
    int lineno = 0, bad = 0;
    while (fgets(line, sizeof line, stdin)) {
        ++lineno;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char type[16], layout[8];
        long long m, n, k;
        const int got = sscanf(line, "%15s %7s %lld %lld %lld", type, layout, &m, &n, &k);
        if (got <= 0)
            continue;
        if (got != 5 || decide(type, layout, m, n, k, &d, &c.routing)) {
            fprintf(stderr, "table_routes: line %d: expected DTYPE LAYOUT M N K\n", lineno);
            bad = 1;
        }
    }
    return bad;
}
