/* The captured sequences of signature files; see gs_replay_seqs.h. */
#include "gs_replay_seqs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The value of key=value among field[1..n), or NULL. */
static const char *value_of(char *const *field, size_t n, const char *key)
{
    const size_t kl = strlen(key);
    for (size_t i = 1; i < n; ++i)
        if (!strncmp(field[i], key, kl) && field[i][kl] == '=')
            return field[i] + kl + 1;
    return NULL;
}

/* An unsigned number of the base, the whole text: 0 and *out, or -1. */
static int number(const char *v, int base, unsigned long long *out)
{
    char *end;
    if (!v || !*v || *v == '-' || *v == '+' || *v == ' ')
        return -1;
    errno = 0;
    *out = strtoull(v, &end, base);
    return *end || errno ? -1 : 0;
}

/* The ids of "sigs=", comma-separated: n of them into out. 0, or -1. */
static int ids_of(const char *v, size_t n, unsigned long long *out)
{
    for (size_t i = 0; i < n; ++i) {
        char id[17];
        const size_t len = strcspn(v, ",");
        if (!len || len > 16)
            return -1;
        memcpy(id, v, len);
        id[len] = '\0';
        if (number(id, 16, &out[i]))
            return -1;
        v += len;
        if (*v == ',' && i + 1 < n)
            ++v;
        else if (*v || i + 1 < n)
            return -1;
    }
    return 0;
}

int gs_replay_seqs_add(gs_replay_seqs_t *q, char *const *field, size_t n)
{
    unsigned long long id, captures, gemms, complete;
    const char *sigs = value_of(field, n, "sigs");
    if (number(value_of(field, n, "id"), 16, &id) ||
        number(value_of(field, n, "captures"), 10, &captures) ||
        number(value_of(field, n, "gemms"), 10, &gemms) ||
        number(value_of(field, n, "complete"), 10, &complete) || complete > 1 || !gemms ||
        gemms > GS_REPLAY_SEQ_GEMMS_MAX || !sigs)
        return GS_REPLAY_SEQ_BAD;
    unsigned long long *ids = malloc(gemms * sizeof *ids);
    if (!ids)
        return GS_REPLAY_SEQ_NOMEM;
    if (ids_of(sigs, gemms, ids)) {
        free(ids);
        return GS_REPLAY_SEQ_BAD;
    }
    for (size_t i = 0; i < q->n; ++i) {
        gs_replay_seq_t *o = &q->seq[i];
        if (o->id != id)
            continue;
        /* the same content in another process: its captures add up */
        const int same = o->n == gemms && o->complete == (int)complete &&
                         !memcmp(o->sig, ids, gemms * sizeof *ids);
        free(ids);
        if (!same)
            return GS_REPLAY_SEQ_BAD;
        o->captures += captures;
        return 0;
    }
    if (q->n == q->cap) {
        const size_t cap = q->cap ? 2 * q->cap : 16;
        gs_replay_seq_t *grown = realloc(q->seq, cap * sizeof *grown);
        if (!grown) {
            free(ids);
            return GS_REPLAY_SEQ_NOMEM;
        }
        q->seq = grown;
        q->cap = cap;
    }
    q->seq[q->n++] = (gs_replay_seq_t){id, captures, (int)complete, (size_t)gemms, ids};
    return 0;
}

void gs_replay_seqs_free(gs_replay_seqs_t *q)
{
    for (size_t i = 0; i < q->n; ++i)
        free(q->seq[i].sig);
    free(q->seq);
    memset(q, 0, sizeof *q);
}
