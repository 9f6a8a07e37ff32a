/* The record's accumulator; see gs_record.h. */
#include "gs_record.h"
#include "gs_class_map.h"
#include "gs_compat.h"
#include "gs_log.h"
#include "gs_tune_cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gs_rec_sig {
    gs_class_key_t key; /* first (gs_class_map.h); ordinal: 0 for calls the class
                           describes, else a hash of why it does not */
    uint64_t calls, captured, timed;
    double ms;
    int warm;           /* its first timed call in this process was left out */
    char why[GS_RECORD_WHY_MAX]; /* why the class does not describe the calls, "" if it does */
};

/* A captured call's place: its capture and signature (indices into caps
 * and pool), in the order the host issued them. */
typedef struct position {
    uint32_t cap, sig;
} position_t;

typedef struct capture {
    unsigned long long id;
    int incomplete;     /* a call of it was not placed */
} capture_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gs_rec_sig_t pool[GS_RECORD_SIGS_MAX]; /* in first-seen order */
static void *slots[GS_RECORD_SIGS_MAX * 2];
static gs_class_map_t sigs = {slots, GS_RECORD_SIGS_MAX * 2, GS_RECORD_SIGS_MAX, 0};
static capture_t caps[GS_RECORD_CAPTURES_MAX];
static uint32_t n_caps;
static position_t *pos; /* grown by doubling up to GS_RECORD_POSITIONS_MAX */
static size_t n_pos, cap_pos;
static uint64_t calls, dropped, unplaced;

/* Under lock. */
static void forget(void)
{
    memset(slots, 0, sizeof slots);
    sigs.count = 0;
    n_caps = 0;
    free(pos);
    pos = NULL;
    n_pos = cap_pos = 0;
    calls = dropped = unplaced = 0;
}

/* A forked child is a process of its own: its lines are its calls only
 * (the parent writes the parent's), and no thread that did not come along
 * holds the lock. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&lock);
}

static void fork_child(void)
{
    forget();
    pthread_mutex_unlock(&lock);
}

static void register_fork(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* A call the class does not describe is kept apart by its reason too:
 * cuBLASLt calls stop being described at their first feature beyond the
 * class, so different calls can leave the same partial class. Nonzero. */
static int32_t why_key(const char *why)
{
    uint32_t h = 2166136261u;
    for (; *why; ++why)
        h = (h ^ (unsigned char)*why) * 16777619u;
    return (int32_t)((h >> 1) | 1);
}

/* Under lock: the signature's record, created on its first call; NULL
 * when the table is full. */
static gs_rec_sig_t *sig_of(const gs_class_t *c, const char *why)
{
    const int32_t outside = why ? why_key(why) : 0;
    void **slot = gs_class_map_slot(&sigs, c, outside);
    if (!slot)
        return NULL;
    if (*slot)
        return *slot;
    gs_rec_sig_t *s = &pool[sigs.count];
    memset(s, 0, sizeof *s);
    s->key.cls = *c;
    s->key.ordinal = outside;
    if (why)
        snprintf(s->why, sizeof s->why, "%s", why);
    gs_class_map_put(&sigs, slot, s);
    return s;
}

/* Under lock: the capture's index, added on its first call; -1 when the
 * table is full. The call's capture is nearly always the latest one. */
static long capture_index(unsigned long long id)
{
    for (uint32_t i = n_caps; i-- > 0;)
        if (caps[i].id == id)
            return (long)i;
    if (n_caps == GS_RECORD_CAPTURES_MAX)
        return -1;
    caps[n_caps].id = id;
    caps[n_caps].incomplete = 0;
    return (long)n_caps++;
}

/* Under lock: s's call takes the next place in the capture's sequence.
 * Growing the array allocates, at most ten times per process, and only
 * while a graph is captured (never on a replay: the shim does not see
 * those). */
static void place(unsigned long long capture, const gs_rec_sig_t *s)
{
    const long ci = capture_index(capture);
    if (ci < 0) {
        ++unplaced;
        return;
    }
    if (!s) {
        caps[ci].incomplete = 1;
        ++unplaced;
        return;
    }
    if (n_pos == cap_pos) {
        const size_t grown = cap_pos ? cap_pos * 2 : 1024;
        position_t *p = grown <= GS_RECORD_POSITIONS_MAX ? realloc(pos, grown * sizeof *p) : NULL;
        if (!p) {
            caps[ci].incomplete = 1;
            ++unplaced;
            return;
        }
        pos = p;
        cap_pos = grown;
    }
    pos[n_pos].cap = (uint32_t)ci;
    pos[n_pos].sig = (uint32_t)(s - pool);
    ++n_pos;
}

gs_rec_sig_t *gs_record_call(const gs_class_t *c, const char *why, unsigned long long capture)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_fork);
    pthread_mutex_lock(&lock);
    ++calls;
    gs_rec_sig_t *s = sig_of(c, why);
    if (s) {
        ++s->calls;
        s->captured += capture != 0;
    } else {
        ++dropped;
    }
    if (capture)
        place(capture, s);
    pthread_mutex_unlock(&lock);
    return s;
}

void gs_record_time(gs_rec_sig_t *s, double ms)
{
    pthread_mutex_lock(&lock);
    /* A signature's first timed call in a process is left out: its events
     * also hold what the host did between them at a first launch (a lazily
     * loaded module, cuBLAS's first-use set-up), hundreds of times the call
     * itself for a short kernel, and its calls' time weighs decisions
     * (the report's shares, the sequence phase's eager calls). */
    if (!s->warm) {
        s->warm = 1;
        pthread_mutex_unlock(&lock);
        return;
    }
    ++s->timed;
    s->ms += ms;
    pthread_mutex_unlock(&lock);
}

void gs_record_totals(gs_record_totals_t *t)
{
    pthread_mutex_lock(&lock);
    t->calls = calls;
    t->dropped = dropped;
    t->sigs = sigs.count;
    t->captures = n_caps;
    t->unplaced = unplaced;
    pthread_mutex_unlock(&lock);
}

void gs_record_reset(void)
{
    pthread_mutex_lock(&lock);
    forget();
    pthread_mutex_unlock(&lock);
}

/* ---- lines ---- */

/* A signature's id in "seq" lines: the hash every class table uses, of
 * the class and, for calls it does not describe, why. */
static uint64_t id_of(const gs_rec_sig_t *s)
{
    return gs_class_hash(&s->key.cls, (uint64_t)s->key.ordinal);
}

/* The class for people: entry, transposes, types, sizes, leading
 * dimensions, and what else sets it apart. */
static void shape_of(const gs_class_t *c, char *buf, size_t size)
{
    int n = snprintf(buf, size,
                     "%s %c%c %s,%s->%s compute=%s m=%lld n=%lld k=%lld batch=%lld lda=%lld "
                     "ldb=%lld ldc=%lld",
                     gs_entry_name((gs_entry_t)c->entry, c->is_64), c->trans_a ? 'T' : 'N',
                     c->trans_b ? 'T' : 'N', gs_dtype_name((gs_dtype_t)c->a_type),
                     gs_dtype_name((gs_dtype_t)c->b_type), gs_dtype_name((gs_dtype_t)c->c_type),
                     gs_compute_name((gs_compute_t)c->compute), (long long)c->m, (long long)c->n,
                     (long long)c->k, (long long)c->batch, (long long)c->lda, (long long)c->ldb,
                     (long long)c->ldc);
    if (n > 0 && (size_t)n < size && c->batch > 1 && c->entry != GS_EP_GEMMEX_BATCHED)
        n += snprintf(buf + n, size - (size_t)n, " strides=%lld,%lld,%lld",
                      (long long)c->stride_a, (long long)c->stride_b, (long long)c->stride_c);
    /* bias, and cublasLtMatmul's scaling contract: a scaled or FP8 call's
     * own signature */
    if (n > 0 && (size_t)n < size)
        gs_class_extras(c, buf, size);
}

static int sig_line(const gs_rec_sig_t *s, char *buf, size_t size)
{
    char hex[GS_CLASS_HEX_LEN + 1], shape[448], ms[40] = "";
    gs_class_hex(&s->key.cls, hex);
    shape_of(&s->key.cls, shape, sizeof shape);
    if (s->timed)
        snprintf(ms, sizeof ms, "%.6f", s->ms);
    const int n = snprintf(buf, size,
                           "sig\t%s\tid=%016llx\tcalls=%llu\tcaptured=%llu\ttimed=%llu\tms=%s\t"
                           "tunable=%d%s%s\t# %s\n",
                           hex, (unsigned long long)id_of(s), (unsigned long long)s->calls,
                           (unsigned long long)s->captured, (unsigned long long)s->timed, ms,
                           !s->key.ordinal, s->why[0] ? "\twhy=" : "", s->why, shape);
    return n > 0 && (size_t)n < size ? n : -1;
}

typedef struct seq_key {
    uint64_t hash;
    uint32_t cap;
} seq_key_t;

static int by_hash_then_capture(const void *a, const void *b)
{
    const seq_key_t *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->cap < y->cap ? -1 : x->cap > y->cap;
}

/* One "seq" line: capture c's signatures, in[0..n), standing for `merged`
 * identical captures. */
static int seq_line(uint32_t c, uint64_t hash, uint32_t merged, const uint32_t *in, size_t n,
                    int (*emit)(void *, const char *, size_t), void *ctx)
{
    const size_t size = 128 + 17 * n;
    char *line = malloc(size);
    if (!line)
        return -1;
    size_t len = (size_t)snprintf(line, size,
                                  "seq\tid=%016llx\tcaptures=%u\tgemms=%zu\tcomplete=%d\tsigs=",
                                  (unsigned long long)hash, merged, n, !caps[c].incomplete);
    for (size_t i = 0; i < n; ++i)
        len += (size_t)snprintf(line + len, size - len, "%s%016llx", i ? "," : "",
                                (unsigned long long)id_of(&pool[in[i]]));
    line[len++] = '\n';
    const int rc = emit(ctx, line, len) ? -1 : 0;
    free(line);
    return rc;
}

/* Under lock. The captured sequences: each capture's signatures in the
 * order they were issued (positions bucketed by capture), identical ones
 * merged under their content's hash (two different sequences of one
 * 64-bit hash are not expected among a process's few thousand), one line
 * each, in the order of their first capture. */
static int seq_lines(int (*emit)(void *, const char *, size_t), void *ctx)
{
    if (!n_caps)
        return 0;
    size_t *begin = calloc(n_caps + 1, sizeof *begin); /* capture c: seq[begin[c], begin[c+1]) */
    size_t *fill = calloc(n_caps, sizeof *fill);
    uint32_t *seq = malloc((n_pos ? n_pos : 1) * sizeof *seq);
    uint64_t *hash = malloc(n_caps * sizeof *hash);
    seq_key_t *keys = malloc(n_caps * sizeof *keys);
    uint32_t *merged = calloc(n_caps, sizeof *merged); /* at a first capture: how many */
    int rc = begin && fill && seq && hash && keys && merged ? 0 : -1;
    if (!rc) {
        for (size_t i = 0; i < n_pos; ++i)
            ++begin[pos[i].cap + 1];
        for (uint32_t c = 0; c < n_caps; ++c) {
            begin[c + 1] += begin[c];
            fill[c] = begin[c];
        }
        for (size_t i = 0; i < n_pos; ++i)
            seq[fill[pos[i].cap]++] = pos[i].sig;
        for (uint32_t c = 0; c < n_caps; ++c) {
            uint64_t h = 0x6a09e667f3bcc908ull ^ (uint64_t)caps[c].incomplete;
            for (size_t i = begin[c]; i < begin[c + 1]; ++i) {
                h = (h ^ id_of(&pool[seq[i]])) * 0x9E3779B97F4A7C15ull;
                h ^= h >> 32;
            }
            hash[c] = h;
            keys[c].hash = h;
            keys[c].cap = c;
        }
        qsort(keys, n_caps, sizeof *keys, by_hash_then_capture);
        for (uint32_t i = 0, first = 0; i < n_caps; ++i) {
            if (keys[i].hash != keys[first].hash)
                first = i;
            ++merged[keys[first].cap];
        }
    }
    for (uint32_t c = 0; !rc && c < n_caps; ++c)
        if (merged[c])
            rc = seq_line(c, hash[c], merged[c], seq + begin[c], begin[c + 1] - begin[c], emit,
                          ctx);
    free(begin);
    free(fill);
    free(seq);
    free(hash);
    free(keys);
    free(merged);
    return rc;
}

int gs_record_lines(int (*emit)(void *ctx, const char *line, size_t len), void *ctx)
{
    int rc = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; !rc && i < sigs.count; ++i) {
        /* the hex, the counts, a reason, the shape: each bounded */
        char line[GS_CLASS_HEX_LEN + GS_RECORD_WHY_MAX + 448 + 256];
        const int n = sig_line(&pool[i], line, sizeof line);
        rc = n < 0 || emit(ctx, line, (size_t)n) ? -1 : 0;
    }
    if (!rc)
        rc = seq_lines(emit, ctx);
    pthread_mutex_unlock(&lock);
    return rc;
}
