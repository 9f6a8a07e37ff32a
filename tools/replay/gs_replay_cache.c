/* The tune cache as the replay reads it; see gs_replay_cache.h. */
#define _GNU_SOURCE /* getline */
#include "gs_replay_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gs_replay_cache_validator(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    int rc = -1;
    for (int i = 0; i < 3 && rc && getline(&line, &cap, f) > 0; ++i) {
        if (!strncmp(line, "validator ", 10)) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(out, size, "%s", line + 10);
            rc = 0;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

/* The value of `key` in text whose fields are key=value separated by
 * `sep`, into out; 0, or -1 when absent. */
static int fact_of(const char *text, char sep, const char *key, char *out, size_t size)
{
    const size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, sep), p = p ? p + 1 : NULL) {
        if (!strncmp(p, key, kl) && p[kl] == '=') {
            const char *v = p + kl + 1;
            snprintf(out, size, "%.*s", (int)strcspn(v, (char[]){sep, '\0'}), v);
            return 0;
        }
    }
    return -1;
}

void gs_replay_facts_diff(const char *header, const char *validator, char *out, size_t size)
{
    static const char *const keys[] = {"gpu", "sms", "cc", "driver", "cublas", "cublaslt", "shim"};
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof keys / sizeof keys[0] && n < size; ++i) {
        char rec[128], here[128];
        if (fact_of(header, '\t', keys[i], rec, sizeof rec) ||
            fact_of(validator, ' ', keys[i], here, sizeof here) || !strcmp(rec, here))
            continue;
        const int w = snprintf(out + n, size - n, "%s%s=%s (here %s)", n ? ", " : "", keys[i],
                               rec, here);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

/* A decision against the prior it records (format 2): its own route, or
 * cuBLAS where the prior forwards too. */
gs_replay_verdict_t gs_replay_verdict_of(const gs_tuned_t *t)
{
    if (!strcmp(t->prior, GS_TUNED_PRIOR_UNKNOWN))
        return GS_REPLAY_DECIDED;
    char route[sizeof t->family + sizeof t->config + 1];
    snprintf(route, sizeof route, "%s/%s", t->family, t->config);
    const int forwards = !strcmp(t->family, GS_TUNED_CUBLAS);
    if ((forwards && !strcmp(t->prior, GS_TUNED_CUBLAS)) || !strcmp(route, t->prior))
        return GS_REPLAY_KEPT_PRIOR;
    return GS_REPLAY_REPLACED;
}

int gs_replay_cache_verdicts(const char *path, const gs_replay_sigs_t *s,
                             gs_replay_verdict_t *out, double *seq_gain)
{
    for (size_t i = 0; i < s->n; ++i) {
        out[i] = GS_REPLAY_UNDECIDED;
        if (seq_gain)
            seq_gain[i] = 0.0;
    }
    /* the shim's own reader (dispatch/gs_tune_cache.c), with the file's
     * own validator: a later line wins, a torn one is skipped */
    char validator[1024];
    FILE *f = fopen(path, "r");
    if (!f || gs_replay_cache_validator(path, validator, sizeof validator)) {
        if (f)
            fclose(f);
        return -1;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    char chunk[65536];
    size_t got;
    while (mem && (got = fread(chunk, 1, sizeof chunk, f)) > 0)
        fwrite(chunk, 1, got, mem);
    fclose(f);
    if (!mem)
        return -1;
    fclose(mem);
    gs_tuned_reset();
    int fresh = 0;
    size_t lines = 0, bad = 0;
    const int rc = gs_tune_cache_load_buffer(text, len, validator, &fresh, &lines, &bad);
    free(text);
    if (rc)
        return -1;
    for (size_t i = 0; i < s->n; ++i) {
        gs_tuned_t t;
        if (s->sig[i].tunable && gs_tuned_find(&s->sig[i].cls, &t)) {
            out[i] = gs_replay_verdict_of(&t);
            if (seq_gain)
                seq_gain[i] = t.seq_gain;
        }
    }
    return 0;
}
