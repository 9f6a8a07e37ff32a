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

/* The index in s of the signature of class hex, or -1. */
static long find(const gs_replay_sigs_t *s, const char *hex)
{
    for (size_t i = 0; i < s->n; ++i)
        if (s->sig[i].tunable && !memcmp(s->sig[i].hex, hex, GS_REPLAY_HEX_LEN))
            return (long)i;
    return -1;
}

/* A decision line's verdict: its route (fields 2 and 3) against prior=. */
static gs_replay_verdict_t verdict_of(char *line)
{
    char *field[16];
    size_t n = 0;
    for (char *p = line; p && n < 16; p = strchr(p, '\t'), p = p ? p + 1 : NULL)
        field[n++] = p;
    if (n < 4)
        return GS_REPLAY_UNDECIDED;
    char route[512];
    snprintf(route, sizeof route, "%.*s/%.*s", (int)strcspn(field[2], "\t"), field[2],
             (int)strcspn(field[3], "\t"), field[3]);
    for (size_t i = 4; i < n; ++i) {
        if (strncmp(field[i], "prior=", 6))
            continue;
        const char *prior = field[i] + 6;
        const size_t pl = strcspn(prior, "\t");
        if (pl == 1 && prior[0] == '?')
            return GS_REPLAY_DECIDED;
        /* the prior forwards ("cublas"), and so does the decision */
        const int forwards = !strncmp(route, "cublas/", 7);
        if ((pl == 6 && !strncmp(prior, "cublas", 6) && forwards) ||
            (strlen(route) == pl && !strncmp(route, prior, pl)))
            return GS_REPLAY_KEPT_PRIOR;
        return GS_REPLAY_REPLACED;
    }
    return GS_REPLAY_DECIDED;
}

int gs_replay_cache_verdicts(const char *path, const gs_replay_sigs_t *s,
                             gs_replay_verdict_t *out)
{
    for (size_t i = 0; i < s->n; ++i)
        out[i] = GS_REPLAY_UNDECIDED;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] != '\n') /* torn: the shim skips it too */
            break;
        line[len - 1] = '\0';
        if (strncmp(line, "sig\t", 4) || (size_t)len < 6 + GS_REPLAY_HEX_LEN ||
            line[4 + GS_REPLAY_HEX_LEN] != '\t')
            continue;
        const long i = find(s, line + 4);
        if (i >= 0) /* a later line wins */
            out[i] = verdict_of(line);
    }
    free(line);
    fclose(f);
    return 0;
}
