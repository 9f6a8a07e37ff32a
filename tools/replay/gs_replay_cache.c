/* The tune cache as the replay reads it; see gs_replay_cache.h. */
#define _GNU_SOURCE /* getline */
#include "gs_replay_cache.h"
#include "gs_class_hex.h"

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

int gs_replay_cache_open_own(const char *path, char *msg, size_t msg_size)
{
    char validator[1024];
    if (gs_replay_cache_validator(path, validator, sizeof validator)) {
        snprintf(msg, msg_size, "cannot read the cache %s", path);
        return -1;
    }
    gs_tuned_reset();
    return gs_tune_cache_open(path, validator, GS_TUNE_CACHE_WRITE, msg, msg_size) ? -1 : 0;
}

void gs_replay_as_prior(const gs_tuned_t *t, gs_tuned_t *w)
{
    *w = *t;
    const char *slash = strchr(t->prior, '/');
    snprintf(w->was, sizeof w->was, "%s/%s", t->family, t->config);
    snprintf(w->family, sizeof w->family, "%.*s", slash ? (int)(slash - t->prior) : 31,
             t->prior);
    snprintf(w->config, sizeof w->config, "%s", slash ? slash + 1 : "as_called");
    w->gain = t->vs_prior > 0.0 ? t->gain / t->vs_prior : 1.0;
    w->lo95 = 0.0;
    w->pairs = 0;
    w->vs_prior = 1.0;
}

int gs_replay_keep_prior(const char *path, FILE *in, FILE *err)
{
    char msg[1024] = "";
    if (gs_replay_cache_open_own(path, msg, sizeof msg)) {
        fprintf(err, "gemmshim-replay: %s\n", msg);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    for (ssize_t len; (len = getline(&line, &cap, in)) > 0;) {
        line[strcspn(line, "\n")] = '\0';
        const size_t hl = strcspn(line, "\t");
        const char *comment = line[hl] ? line + hl + 1 : "";
        gs_class_t c;
        gs_tuned_t t, w;
        if (gs_class_of_hex(line, hl, &c)) {
            fprintf(err, "gemmshim-replay: --keep-prior: not a class: %.64s\n", line);
            rc = -1;
        } else if (!gs_tuned_find(&c, &t) || gs_replay_verdict_of(&t) != GS_REPLAY_REPLACED) {
            fprintf(err, "gemmshim-replay: --keep-prior: %s: no decision that replaces its prior; "
                         "left as it is\n", comment);
        } else {
            gs_replay_as_prior(&t, &w);
            if (gs_tuned_put(&c, &w, comment, msg, sizeof msg)) {
                fprintf(err, "gemmshim-replay: %s\n", msg);
                rc = -1;
            }
        }
    }
    free(line);
    gs_tune_cache_close();
    gs_tuned_reset();
    return rc;
}
