/* The summary of an offline tuning run; see gs_replay_summary.h. */
#include "gs_replay_summary.h"
#include "gs_replay_cache.h"
#include "gs_replay_class.h"

#include <stdlib.h>
#include <string.h>

enum { REASONS_MAX = 32 };

/* Reasons with their counts, in order of first appearance. */
typedef struct reasons {
    const char *why[REASONS_MAX];
    long count[REASONS_MAX];
    int n;
    long other; /* beyond REASONS_MAX distinct reasons */
    long total;
} reasons_t;

static void add_reason(reasons_t *r, const char *why)
{
    ++r->total;
    for (int i = 0; i < r->n; ++i)
        if (!strcmp(r->why[i], why)) {
            ++r->count[i];
            return;
        }
    if (r->n == REASONS_MAX) {
        ++r->other;
        return;
    }
    r->why[r->n] = why;
    r->count[r->n++] = 1;
}

static void print_reasons(FILE *out, const char *what, const reasons_t *r)
{
    if (!r->total)
        return;
    fprintf(out, "  skipped, %s: %ld\n", what, r->total);
    for (int i = 0; i < r->n; ++i)
        fprintf(out, "    %ld x %s\n", r->count[i], r->why[i]);
    if (r->other)
        fprintf(out, "    %ld x other reasons\n", r->other);
}

int gs_replay_summary(const gs_replay_sigs_t *s, const char *cache, FILE *out)
{
    gs_replay_verdict_t *v = calloc(s->n ? s->n : 1, sizeof *v);
    double *seq = calloc(s->n ? s->n : 1, sizeof *seq);
    if (!v || !seq) {
        free(v);
        free(seq);
        fprintf(out, "gemmshim tune: out of memory\n");
        return 1;
    }
    const int read = gs_replay_cache_verdicts(cache, s, v, seq);
    reasons_t untunable, unbuilt;
    memset(&untunable, 0, sizeof untunable);
    memset(&unbuilt, 0, sizeof unbuilt);
    long n[GS_REPLAY_DECIDED + 1] = {0};
    for (size_t i = 0; i < s->n; ++i) {
        gs_replay_args_t a;
        const char *why = s->sig[i].tunable ? gs_replay_args_of(&s->sig[i].cls, &a) : NULL;
        if (!s->sig[i].tunable)
            add_reason(&untunable, s->sig[i].why[0] ? s->sig[i].why : "(no reason recorded)");
        else if (why)
            add_reason(&unbuilt, why);
        else
            ++n[v[i]];
    }
    const long decided = n[GS_REPLAY_KEPT_PRIOR] + n[GS_REPLAY_REPLACED] + n[GS_REPLAY_DECIDED];
    fprintf(out, "gemmshim tune: %zu signatures: %ld decided (%ld keep the prior, %ld replace it",
            s->n, decided, n[GS_REPLAY_KEPT_PRIOR], n[GS_REPLAY_REPLACED]);
    if (n[GS_REPLAY_DECIDED])
        fprintf(out, ", %ld against a prior not recorded", n[GS_REPLAY_DECIDED]);
    fprintf(out, "), %ld not decided, %ld skipped; cache %s%s\n", n[GS_REPLAY_UNDECIDED],
            untunable.total + unbuilt.total, cache, read ? " (cannot be read)" : "");
    /* settled in the graphs of recorded sequences (gemmshim-replay --sequences) */
    long seq_kept = 0, seq_prior = 0;
    for (size_t i = 0; i < s->n; ++i)
        if (seq[i] > 0.0) {
            seq_kept += v[i] == GS_REPLAY_REPLACED;
            seq_prior += v[i] == GS_REPLAY_KEPT_PRIOR;
        }
    if (seq_kept + seq_prior)
        fprintf(out, "  settled in the CUDA graphs of their recorded sequences: %ld (%ld keep "
                     "their tuned route, %ld went back to the prior there)\n",
                seq_kept + seq_prior, seq_kept, seq_prior);
    print_reasons(out, "not tunable as recorded", &untunable);
    print_reasons(out, "not rebuilt (nothing is approximated)", &unbuilt);
    for (size_t i = 0; i < s->n; ++i) {
        gs_replay_args_t a;
        if (s->sig[i].tunable && !gs_replay_args_of(&s->sig[i].cls, &a) &&
            v[i] == GS_REPLAY_UNDECIDED)
            fprintf(out, "  not decided: %s\n", s->sig[i].shape);
    }
    if (s->bad)
        fprintf(out, "  %zu malformed or torn lines of the signature files skipped\n", s->bad);
    free(v);
    free(seq);
    return n[GS_REPLAY_UNDECIDED] || read ? 1 : 0;
}
