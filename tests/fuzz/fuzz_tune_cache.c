/* libFuzzer target: the tune cache's reader (dispatch/gs_tune_cache.c).
 *
 * The input is a cache file's text, read through gs_tune_cache_load_buffer
 * (what gs_tune_cache_open does once it has read the file) with the
 * validator "v". Beyond "no crash, no leak, no undefined behaviour" it
 * checks the contract: 0 or -1; never more decisions held than decision
 * lines read, nor more skipped lines than read; a stale text loads none;
 * every decision held is found again by its class, with a family and a
 * configuration of printable characters and finite, non-negative numbers;
 * every progress held resumes a signature (dispatch/gs_tune_rule.h) or is
 * refused whole, and what it resumes is consistent. */
#include "gs_tune_cache.h"
#include "gs_tune_rule.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(cond)                                                                   \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "fuzz_tune_cache: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                    \
        }                                                                               \
    } while (0)

static int printable(const char *s, size_t max)
{
    const size_t n = strnlen(s, max);
    if (!n || n == max)
        return 0;
    for (size_t i = 0; i < n; ++i)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] > '~')
            return 0;
    return 1;
}

/* A class's progress, applied to a signature of two candidates. */
static void check_progress(const gs_class_t *c)
{
    char *text = gs_tune_progress_get(c, NULL);
    if (!text)
        return;
    static const char *const names[] = {"pingpong/pingpong_128x128x64", "cublaslt/algo=1"};
    static gs_tune_sig_t s;
    gs_tune_init(&s);
    gs_tune_add(&s, 0, 0);
    gs_tune_add(&s, 1, 0);
    const int n = gs_tune_progress_apply(&s, names, text);
    REQUIRE(n >= -1 && n <= 2);
    if (n < 0)
        REQUIRE(s.pairs == 0 && s.cand[0].n == 0 && s.cand[1].n == 0);
    for (int i = 0; i < 2; ++i) {
        const gs_tune_cand_t *k = &s.cand[i];
        REQUIRE(k->n >= 0 && k->n <= GS_TUNE_PAIRS_MAX && (unsigned)k->state <= GS_CAND_SLOW);
        REQUIRE(k->n_cand_first + k->n_cublas_first == k->n);
    }
    REQUIRE(s.pairs >= 0 && s.gpu_ms >= 0.0 && isfinite(s.gpu_ms));
    const gs_tune_limits_t lim = gs_tune_default_limits();
    const gs_tune_verdict_t v = gs_tune_decide(&s, &lim);
    REQUIRE(v.route >= GS_TUNE_CUBLAS && v.route < 2 && isfinite(v.gain));
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gs_tuned_reset();
    int fresh = -1;
    size_t lines = 0, bad = 0;
    const int rc = gs_tune_cache_load_buffer((const char *)data, size, "v", &fresh, &lines, &bad);
    REQUIRE(rc == 0 || rc == -1);
    const size_t held = gs_tuned_count();
    REQUIRE(bad <= lines + 1); /* a torn last line counts as bad without being a line */
    REQUIRE(held <= lines);
    if (rc || !fresh)
        REQUIRE(held == 0);
    /* every decision held reads back whole: parse the hex classes of the
     * input's lines again and look each up */
    for (size_t pos = 0; pos < size;) {
        const uint8_t *nl = memchr(data + pos, '\n', size - pos);
        const size_t ll = nl ? (size_t)(nl - (data + pos)) : size - pos;
        const char *line = (const char *)data + pos;
        pos += ll + (nl ? 1 : 0);
        const int progress = ll >= 9 && !memcmp(line, "progress\t", 9);
        const size_t at = progress ? 9 : 4;
        if (ll < at + 2 * sizeof(gs_class_t) || (!progress && memcmp(line, "sig\t", 4)))
            continue;
        gs_class_t c;
        unsigned char *b = (unsigned char *)&c;
        int ok = 1;
        for (size_t i = 0; i < sizeof c && ok; ++i) {
            unsigned v;
            char hex[3] = {line[at + 2 * i], line[at + 1 + 2 * i], 0};
            ok = sscanf(hex, "%2x", &v) == 1 && hex[0] != ' ' && hex[1] != ' ';
            b[i] = (unsigned char)v;
        }
        if (ok && progress)
            check_progress(&c);
        gs_tuned_t t;
        if (!ok || progress || !gs_tuned_find(&c, &t))
            continue;
        REQUIRE(printable(t.family, sizeof t.family));
        REQUIRE(printable(t.config, sizeof t.config));
        REQUIRE(isfinite(t.gain) && t.gain >= 0.0 && isfinite(t.lo95) && t.lo95 >= 0.0);
        REQUIRE(isfinite(t.cost_ms) && t.cost_ms >= 0.0 && t.pairs >= 0);
        REQUIRE(printable(t.prior, sizeof t.prior) && isfinite(t.vs_prior) && t.vs_prior >= 0.0);
    }
    gs_tuned_reset();
    return 0;
}
