/* Signature files read and merged; see gs_replay_sigs.h. */
#define _GNU_SOURCE /* getline */
#include "gs_replay_sigs.h"
#include "gs_class_hex.h"
#include "gs_replay_class.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIGS_MAGIC "gemmshim-signatures"

/* Splits line (modified) at tabs into at most max fields. */
static size_t split_tabs(char *line, char **field, size_t max)
{
    size_t n = 0;
    for (char *p = line; n < max;) {
        field[n++] = p;
        p = strchr(p, '\t');
        if (!p)
            break;
        *p++ = '\0';
    }
    return n;
}

/* The value of key=value among fields[from..n), or NULL. */
static const char *value_of(char **field, size_t from, size_t n, const char *key)
{
    const size_t kl = strlen(key);
    for (size_t i = from; i < n; ++i)
        if (!strncmp(field[i], key, kl) && field[i][kl] == '=')
            return field[i] + kl + 1;
    return NULL;
}

static int count_of(const char *v, unsigned long long *out)
{
    char *end;
    if (!v || !*v || *v == '-')
        return -1;
    errno = 0;
    *out = strtoull(v, &end, 10);
    return *end || errno ? -1 : 0;
}

static int ms_of(const char *v, double *out)
{
    char *end;
    *out = 0.0;
    if (!v)
        return -1;
    if (!*v) /* nothing of the signature was timed */
        return 0;
    *out = strtod(v, &end);
    return *end || !(*out >= 0.0) ? -1 : 0;
}

/* A "sig" line's fields into e: 0, or -1 when it is malformed. */
static int sig_of(char **field, size_t n, gs_replay_sig_t *e)
{
    memset(e, 0, sizeof *e);
    const char *tunable = value_of(field, 2, n, "tunable");
    const char *why = value_of(field, 2, n, "why");
    if (n < 3 || strlen(field[1]) != GS_REPLAY_HEX_LEN ||
        gs_class_of_hex(field[1], GS_REPLAY_HEX_LEN, &e->cls) || !tunable ||
        (strcmp(tunable, "0") && strcmp(tunable, "1")) ||
        count_of(value_of(field, 2, n, "calls"), &e->calls) ||
        count_of(value_of(field, 2, n, "captured"), &e->captured) ||
        count_of(value_of(field, 2, n, "timed"), &e->timed) ||
        ms_of(value_of(field, 2, n, "ms"), &e->ms))
        return -1;
    const char *id = value_of(field, 2, n, "id");
    char *end;
    e->id = id ? strtoull(id, &end, 16) : 0;
    if (id && (!*id || *end))
        return -1;
    memcpy(e->hex, field[1], GS_REPLAY_HEX_LEN);
    e->tunable = tunable[0] == '1';
    snprintf(e->why, sizeof e->why, "%s", why ? why : "");
    if (field[n - 1][0] == '#')
        snprintf(e->shape, sizeof e->shape, "%s", field[n - 1] + (field[n - 1][1] == ' ' ? 2 : 1));
    return 0;
}

/* Adds e's counts to its signature's (a new one when none matches). */
static int merge(gs_replay_sigs_t *s, const gs_replay_sig_t *e)
{
    for (size_t i = 0; i < s->n; ++i) {
        gs_replay_sig_t *o = &s->sig[i];
        if (o->tunable == e->tunable && !memcmp(&o->cls, &e->cls, sizeof o->cls) &&
            !strcmp(o->why, e->why)) {
            o->calls += e->calls;
            o->captured += e->captured;
            o->timed += e->timed;
            o->ms += e->ms;
            return 0;
        }
    }
    if (s->n == s->cap) {
        const size_t cap = s->cap ? 2 * s->cap : 64;
        gs_replay_sig_t *grown = realloc(s->sig, cap * sizeof *grown);
        if (!grown)
            return -1;
        s->sig = grown;
        s->cap = cap;
    }
    s->sig[s->n++] = *e;
    return 0;
}

static int add_file(gs_replay_sigs_t *s, const char *path, const char *header)
{
    char **h = realloc(s->header, (s->files + 1) * sizeof *h);
    const char **p = h ? realloc(s->path, (s->files + 1) * sizeof *p) : NULL;
    if (h)
        s->header = h;
    if (!p)
        return -1;
    s->path = p;
    if (!(s->header[s->files] = strdup(header)))
        return -1;
    s->path[s->files++] = path;
    return 0;
}

/* The header's format field: 0 when it is format 1. */
static int format_ok(const char *header, char *seen, size_t size)
{
    const char *f = strstr(header, "\tformat=");
    snprintf(seen, size, "%.*s", f ? (int)strcspn(f + 8, "\t") : 1, f ? f + 8 : "?");
    return strcmp(seen, "1") ? -1 : 0;
}

int gs_replay_sigs_read(gs_replay_sigs_t *s, const char *path, char *msg, size_t msg_size)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(msg, msg_size, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL, *field[32];
    size_t cap = 0, lineno = 0;
    ssize_t len;
    int rc = 0;
    while (!rc && (len = getline(&line, &cap, f)) >= 0) {
        ++lineno;
        if (!len || line[len - 1] != '\n') { /* torn: its writer died mid-line */
            ++s->bad;
            break;
        }
        line[len - 1] = '\0';
        if (lineno == 1) {
            char seen[32];
            if (strncmp(line, SIGS_MAGIC "\t", sizeof SIGS_MAGIC)) {
                snprintf(msg, msg_size, "%s is not a gemmshim signature file (no '%s' first line)",
                         path, SIGS_MAGIC);
                rc = -1;
            } else if (format_ok(line, seen, sizeof seen)) {
                snprintf(msg, msg_size, "%s: format %s is not one this replay reads (1)", path,
                         seen);
                rc = -1;
            } else if (add_file(s, path, line)) {
                snprintf(msg, msg_size, "out of memory reading %s", path);
                rc = -1;
            }
            continue;
        }
        const size_t n = split_tabs(line, field, sizeof field / sizeof field[0]);
        gs_replay_sig_t e;
        if (!strcmp(field[0], "sig")) {
            if (sig_of(field, n, &e))
                ++s->bad;
            else if (merge(s, &e)) {
                snprintf(msg, msg_size, "out of memory reading %s", path);
                rc = -1;
            }
        } else if (!strcmp(field[0], "seq")) {
            const int q = gs_replay_seqs_add(&s->seqs, field, n);
            if (q == GS_REPLAY_SEQ_BAD)
                ++s->bad;
            if (q == GS_REPLAY_SEQ_NOMEM) {
                snprintf(msg, msg_size, "out of memory reading %s", path);
                rc = -1;
            }
        } else if (strcmp(field[0], "proc") && strcmp(field[0], SIGS_MAGIC)) {
            ++s->bad;
        }
    }
    if (!rc && lineno == 0) {
        snprintf(msg, msg_size, "%s is empty: not a gemmshim signature file", path);
        rc = -1;
    }
    free(line);
    fclose(f);
    return rc;
}

/* What a signature weighs: its recorded GPU time (the untimed calls at the
 * timed ones' mean, captured calls left out: replays are not seen). */
static double time_of(const gs_replay_sig_t *e)
{
    if (!e->timed)
        return 0.0;
    const unsigned long long eager = e->calls > e->captured ? e->calls - e->captured : 0;
    return e->ms / (double)e->timed * (double)eager;
}

static double flops_of(const gs_replay_sig_t *e)
{
    return 2.0 * (double)e->cls.m * (double)e->cls.n * (double)e->cls.k *
           (double)(e->cls.batch > 0 ? e->cls.batch : 1);
}

static int heavier_first(const void *x, const void *y)
{
    const gs_replay_sig_t *a = x, *b = y;
    const double ta = time_of(a), tb = time_of(b);
    if (ta != tb)
        return ta > tb ? -1 : 1;
    const double fa = flops_of(a) * (double)a->calls, fb = flops_of(b) * (double)b->calls;
    if (fa != fb)
        return fa > fb ? -1 : 1;
    return strcmp(a->hex, b->hex); /* the same order in every process */
}

void gs_replay_sigs_order(gs_replay_sigs_t *s)
{
    if (s->n)
        qsort(s->sig, s->n, sizeof *s->sig, heavier_first);
}

void gs_replay_sigs_free(gs_replay_sigs_t *s)
{
    for (size_t i = 0; i < s->files; ++i)
        free(s->header[i]);
    free(s->header);
    free(s->path);
    free(s->sig);
    gs_replay_seqs_free(&s->seqs);
    memset(s, 0, sizeof *s);
}
