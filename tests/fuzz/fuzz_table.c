/* libFuzzer target: the routing-table parser (dispatch/gs_table.c).
 *
 * The input is a table file's text, loaded through gs_table_load_buffer
 * (the code gs_table_load runs once it has read the file). Beyond "no
 * crash, no leak, no undefined behaviour" (ASan, UBSan) it checks the
 * contract: 0 or GS_TABLE_ERR_FORMAT; msg one NUL-terminated line, "" on
 * success; a refused text leaves the table in force (same generation).
 * A loaded table is then read by gs_table_ratio for problems whose sizes
 * come from the input's own numbers (so that entries match), for every
 * candidate of the registry (every configuration of every family), type
 * and layout, and the built-in table is put back. */
#include "gs_dispatch.h"
#include "gs_registry.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(cond)                                                              \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "fuzz_table: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                               \
        }                                                                          \
    } while (0)

static const float one = 1.f, zero = 0.f;

/* Up to `max` runs of decimal digits in the text, as sizes (1 .. 2^31-1;
 * longer runs are clamped). */
static size_t numbers_of(const uint8_t *d, size_t n, int64_t *out, size_t max)
{
    size_t count = 0;
    for (size_t i = 0; i < n && count < max;) {
        if (d[i] < '0' || d[i] > '9') {
            ++i;
            continue;
        }
        int64_t v = 0;
        for (; i < n && d[i] >= '0' && d[i] <= '9'; ++i)
            v = v > GS_TABLE_DIM_MAX / 10 ? GS_TABLE_DIM_MAX : v * 10 + (d[i] - '0');
        out[count++] = v < 1 ? 1 : v > GS_TABLE_DIM_MAX ? GS_TABLE_DIM_MAX : v;
    }
    return count;
}

static void read_back(const int64_t *dims, size_t n_dims)
{
    static const gs_dtype_t types[] = {GS_DT_F32, GS_DT_BF16, GS_DT_F16};
    gs_device_t devs[3];
    memset(devs, 0, sizeof devs);
    for (int i = 0; i < 3; ++i) {
        devs[i].present = 1;
        devs[i].cc_major = 9;
        devs[i].sm_count = 132;
        devs[i].smem_optin = 227 * 1024;
        devs[i].l2_bytes = 50u << 20;
    }
    strcpy(devs[0].gpu, "H200");
    strcpy(devs[1].gpu, ""); /* unknown name: the lowest over models */
    devs[2].cc_major = 8;    /* sm_80: the entries of cc 80 */
    strcpy(devs[2].gpu, "H100");
    /* triples of the text's numbers, plus one fixed shape */
    int64_t shapes[5][3] = {{1024, 1024, 1024}};
    size_t n_shapes = 1;
    for (size_t i = 0; i + 3 <= n_dims && n_shapes < 5; i += 3, ++n_shapes)
        memcpy(shapes[n_shapes], dims + i, sizeof shapes[0]);
    for (size_t s = 0; s < n_shapes; ++s)
        for (int c = 0; c < gs_candidate_count(); ++c)
            for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t)
                for (int layout = 0; layout < 4; ++layout)
                    for (int dv = 0; dv < 3; ++dv) {
                        gs_problem_t p;
                        memset(&p, 0, sizeof p);
                        p.entry = GS_EP_GEMMEX;
                        p.a_type = p.b_type = p.c_type = types[t];
                        p.compute = GS_CT_F32;
                        p.scalar_type = GS_DT_F32;
                        p.trans_a = (layout & 2) ? GS_OP_T : GS_OP_N;
                        p.trans_b = (layout & 1) ? GS_OP_T : GS_OP_N;
                        p.m = shapes[s][0];
                        p.n = shapes[s][1];
                        p.k = shapes[s][2];
                        p.lda = p.trans_a == GS_OP_N ? p.m : p.k;
                        p.ldb = p.trans_b == GS_OP_N ? p.k : p.n;
                        p.ldc = p.m;
                        p.batch = 1;
                        p.alpha = &one;
                        p.beta = &zero;
                        gs_problem_classify(&p);
                        int config;
                        const gs_family_t *f = gs_candidate(c, &config);
                        const double r = gs_table_ratio(f, config, &p, &devs[dv]);
                        /* 0 (no entry) or a reading in (0, 100] (scaled down, never up) */
                        REQUIRE(r == 0.0 || (isfinite(r) && r > 0.0 && r <= 100.0));
                    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char msg[600];
    memset(msg, 'X', sizeof msg);
    const unsigned gen = gs_table_generation();
    const int rc = gs_table_load_buffer("fuzz.table", (const char *)data, size, msg, sizeof msg);
    REQUIRE(rc == 0 || rc == GS_TABLE_ERR_FORMAT);
    REQUIRE(memchr(msg, '\0', sizeof msg) != NULL);
    REQUIRE(strchr(msg, '\n') == NULL);
    if (rc != 0) {
        REQUIRE(msg[0] != '\0');
        REQUIRE(!strncmp(msg, "fuzz.table", 10));
        REQUIRE(gs_table_generation() == gen);
        return 0;
    }
    REQUIRE(msg[0] == '\0');
    REQUIRE(gs_table_generation() != gen);
    int64_t dims[12];
    read_back(dims, numbers_of(data, size, dims, sizeof dims / sizeof dims[0]));
    gs_table_use_builtin();
    return 0;
}
