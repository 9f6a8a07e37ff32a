/* The plan of the sequence phase; see gs_seq_plan.h. */
#include "gs_seq_plan.h"

#include <stdlib.h>
#include <string.h>

typedef struct by_id {
    unsigned long long id;
    size_t sig;
} by_id_t;

static int id_order(const void *x, const void *y)
{
    const by_id_t *a = x, *b = y;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* The signature recorded with id, or -1 (ids sorted). */
static long find(const by_id_t *ids, size_t n, unsigned long long id)
{
    const by_id_t key = {id, 0}, *hit = bsearch(&key, ids, n, sizeof *ids, id_order);
    return hit ? (long)hit->sig : -1;
}

/* Plans one sequence: its positions, its changed classes, or why not. */
static int plan_one(gs_seq_plan_seq_t *q, const gs_replay_seq_t *seq, const by_id_t *ids,
                    size_t n_ids, const unsigned char *can, const unsigned char *changed,
                    unsigned char *seen)
{
    q->seq = seq;
    if (!seq->complete) {
        q->skip = "incomplete when recorded (a call of it was not placed)";
        return 0;
    }
    q->pos = malloc(seq->n * sizeof *q->pos);
    q->changed = malloc(seq->n * sizeof *q->changed);
    if (!q->pos || !q->changed)
        return -1;
    for (size_t i = 0; i < seq->n; ++i) {
        const long s = find(ids, n_ids, seq->sig[i]);
        if (s < 0) {
            q->skip = "a GEMM of it is not among the signatures read";
            break;
        }
        if (!can[s]) {
            q->skip = "a GEMM of it cannot be rebuilt (not tunable, or no call has its class)";
            break;
        }
        q->pos[i] = (size_t)s;
        if (changed[s] && !seen[s]) {
            seen[s] = 1;
            q->changed[q->n_changed++] = (size_t)s;
        }
    }
    for (size_t c = 0; c < q->n_changed; ++c)
        seen[q->changed[c]] = 0;
    if (q->skip)
        q->n_changed = 0;
    else if (!q->n_changed)
        q->skip = "every decision in it keeps its prior: nothing to compare";
    return 0;
}

int gs_seq_plan_make(gs_seq_plan_t *p, const gs_replay_sigs_t *s, const unsigned char *can,
                     const unsigned char *changed)
{
    memset(p, 0, sizeof *p);
    const size_t nq = s->seqs.n;
    by_id_t *ids = malloc((s->n ? s->n : 1) * sizeof *ids);
    unsigned char *seen = calloc(s->n ? s->n : 1, 1);
    p->s = calloc(nq ? nq : 1, sizeof *p->s);
    int rc = ids && seen && p->s ? 0 : -1;
    size_t n_ids = 0;
    for (size_t i = 0; !rc && i < s->n; ++i)
        if (s->sig[i].id) /* untunable signatures have ids too: a sequence names them */
            ids[n_ids++] = (by_id_t){s->sig[i].id, i};
    if (!rc)
        qsort(ids, n_ids, sizeof *ids, id_order);
    for (size_t k = 0; !rc && k < nq; ++k) {
        rc = plan_one(&p->s[k], &s->seqs.seq[k], ids, n_ids, can, changed, seen);
        p->n = k + 1;
        p->timed += !rc && !p->s[k].skip;
    }
    free(ids);
    free(seen);
    if (rc)
        gs_seq_plan_free(p);
    return rc;
}

int gs_seq_plan_has(const gs_seq_plan_seq_t *q, size_t i)
{
    for (size_t c = 0; c < q->n_changed; ++c)
        if (q->changed[c] == i)
            return 1;
    return 0;
}

size_t gs_seq_plan_suspects(const gs_seq_plan_t *p, const unsigned char *faster,
                            unsigned char *suspect, size_t n_sigs)
{
    size_t n = 0;
    memset(suspect, 0, n_sigs);
    for (size_t k = 0; k < p->n; ++k) {
        const gs_seq_plan_seq_t *q = &p->s[k];
        if (q->skip || faster[k])
            continue;
        for (size_t c = 0; c < q->n_changed; ++c)
            if (q->changed[c] < n_sigs && !suspect[q->changed[c]]) {
                suspect[q->changed[c]] = 1;
                ++n;
            }
    }
    return n;
}

void gs_seq_plan_free(gs_seq_plan_t *p)
{
    for (size_t k = 0; k < p->n; ++k) {
        free(p->s[k].pos);
        free(p->s[k].changed);
    }
    free(p->s);
    memset(p, 0, sizeof *p);
}
