/* Tuned decisions, claims and progress in memory and in the shared cache
 * file; see gs_tune_cache.h. */
#define _GNU_SOURCE
#include "gs_tune_cache.h"
#include "gs_c_locale.h"
#include "gs_io.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HEADER0 "# gemmshim tune cache"
enum {
    VALIDATOR_MAX = 1024,             /* bytes of a validator, with its NUL */
    HEADER_MAX = VALIDATOR_MAX + 64,  /* the header's three lines */
    PROGRESS_MAX = 60000,             /* bytes of a progress line's fields */
    LINE_MAX_BYTES = PROGRESS_MAX + 1024,
    FIELDS_MAX = 2 * 32 + 16,         /* fields of a line: a progress line's candidates */
};
#define FILE_MAX ((size_t)256 << 20)

typedef struct entry {
    gs_class_t cls;
    int used;
    int decided;             /* t holds a decision */
    gs_tuned_t t;
    int claimed;             /* claim holds the process that tunes the class */
    gs_tune_owner_t claim;
    char *progress;          /* the latest progress fields, NULL if none */
    gs_tune_owner_t progress_by;
    char *shape;             /* the class's comment for people, kept by rewrites; NULL if none */
} entry_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry_t *table;      /* open addressing, cap a power of two */
static size_t cap, count, decided;
static unsigned generation;
static int fd = -1;          /* the file, open for appending (WRITE mode) */
static char path_open[4096];
static char validator_open[VALIDATOR_MAX];
static off_t read_off;       /* the file's bytes read into memory (whole lines) */
static int format_open;      /* the open file's format */

/* ---- memory ---- */

static entry_t *slot_of(entry_t *t, size_t n, const gs_class_t *c)
{
    size_t i = (size_t)gs_class_hash(c, 0) & (n - 1);
    while (t[i].used && memcmp(&t[i].cls, c, sizeof *c))
        i = (i + 1) & (n - 1);
    return &t[i];
}

static int grow(void)
{
    size_t n = cap ? cap * 2 : 256;
    entry_t *t = calloc(n, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < cap; ++i)
        if (table[i].used)
            *slot_of(t, n, &table[i].cls) = table[i];
    free(table);
    table = t;
    cap = n;
    return 0;
}

/* Under lock: class c's entry, made when missing; NULL without memory. */
static entry_t *entry_of(const gs_class_t *c)
{
    if ((count + 1) * 2 > cap && grow())
        return NULL;
    entry_t *e = slot_of(table, cap, c);
    if (!e->used) {
        memset(e, 0, sizeof *e);
        e->used = 1;
        e->cls = *c;
        ++count;
    }
    return e;
}

/* Under lock: the entry of c if there is one. */
static entry_t *entry_find(const gs_class_t *c)
{
    if (!cap)
        return NULL;
    entry_t *e = slot_of(table, cap, c);
    return e->used ? e : NULL;
}

/* Under lock: the comment of class c's lines becomes the n bytes at text,
 * where there are any (a line without one keeps what the entry had). */
static void put_shape(const gs_class_t *c, const char *text, size_t n)
{
    entry_t *e = n ? entry_find(c) : NULL;
    char *copy = e ? strndup(text, n) : NULL;
    if (copy) {
        free(e->shape);
        e->shape = copy;
    }
}

/* The comment of a line of len bytes (after its "\t# "): *n bytes, or NULL. */
static const char *comment_of(const char *line, size_t len, size_t *n)
{
    for (size_t i = 0; i + 3 <= len; ++i)
        if (line[i] == '\t' && line[i + 1] == '#' && line[i + 2] == ' ') {
            *n = len - i - 3;
            while (*n && (line[i + 3 + *n - 1] == '\n' || line[i + 3 + *n - 1] == '\r'))
                --*n;
            return line + i + 3;
        }
    *n = 0;
    return NULL;
}

/* Under lock. A decision ends the tuning of its class. */
static int put_decision(const gs_class_t *c, const gs_tuned_t *t)
{
    entry_t *e = entry_of(c);
    if (!e)
        return -1;
    decided += !e->decided;
    e->decided = 1;
    e->t = *t;
    e->claimed = 0;
    free(e->progress);
    e->progress = NULL;
    __atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
    return 0;
}

static int put_claim(const gs_class_t *c, const gs_tune_owner_t *o)
{
    entry_t *e = entry_of(c);
    if (!e)
        return -1;
    e->claimed = 1;
    e->claim = *o;
    return 0;
}

/* Takes `fields` (malloc'd). Progress is written by the process that
 * holds the claim, so it also stands for the claim. */
static int put_progress(const gs_class_t *c, char *fields, const gs_tune_owner_t *o)
{
    entry_t *e = entry_of(c);
    if (!e) {
        free(fields);
        return -1;
    }
    free(e->progress);
    e->progress = fields;
    e->progress_by = *o;
    e->claimed = 1;
    e->claim = *o;
    return 0;
}

int gs_tuned_find(const gs_class_t *c, gs_tuned_t *out)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    const entry_t *e = entry_find(c);
    if (e && e->decided) {
        *out = e->t;
        found = 1;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

unsigned gs_tuned_generation(void)
{
    return __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
}

size_t gs_tuned_count(void)
{
    pthread_mutex_lock(&lock);
    size_t n = decided;
    pthread_mutex_unlock(&lock);
    return n;
}

int gs_tuned_prior_matches(const gs_tuned_t *t, const char *prior)
{
    if (strcmp(t->prior, GS_TUNED_PRIOR_UNKNOWN))
        return !strcmp(t->prior, prior);
    return strcmp(t->family, GS_TUNED_CUBLAS) || !strcmp(prior, GS_TUNED_CUBLAS);
}

/* ---- owners ---- */

static int same_owner(const gs_tune_owner_t *a, const gs_tune_owner_t *b)
{
    return a->pid == b->pid && a->start == b->start && !strcmp(a->host, b->host);
}

/* Field 22 of /proc/PID/stat (after the command's closing parenthesis,
 * which may itself hold spaces and parentheses): 0 and *start, or -1. */
static int start_time_of(long long pid, unsigned long long *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%lld/stat", pid);
    const int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return -1;
    const ssize_t n = read(f, buf, sizeof buf - 1);
    close(f);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 22; ++field)
        p = strchr(p + 1, ' ');
    if (!p)
        return -1;
    char *end;
    errno = 0;
    *start = strtoull(p + 1, &end, 10);
    return end == p + 1 || errno ? -1 : 0;
}

void gs_tune_owner_self(gs_tune_owner_t *o)
{
    memset(o, 0, sizeof *o);
    if (gethostname(o->host, sizeof o->host - 1))
        snprintf(o->host, sizeof o->host, "?");
    for (char *h = o->host; *h; ++h)
        if ((unsigned char)*h <= ' ' || (unsigned char)*h > '~')
            *h = '_';
    if (!o->host[0])
        snprintf(o->host, sizeof o->host, "?");
    o->pid = (long long)getpid();
    if (start_time_of(o->pid, &o->start))
        o->start = 0;
    o->t = (long long)time(NULL);
}

int gs_tune_owner_alive(const gs_tune_owner_t *o, long long now)
{
    gs_tune_owner_t self;
    gs_tune_owner_self(&self);
    if (same_owner(o, &self))
        return 1;
    if (strcmp(o->host, self.host))
        return now - o->t < GS_TUNE_CLAIM_FOREIGN_S;
    if (o->pid <= 0 || (kill((pid_t)o->pid, 0) && errno == ESRCH))
        return 0;
    unsigned long long start;
    /* a pid that exists but started at another time is another process */
    return start_time_of(o->pid, &start) || start == o->start;
}

/* ---- lines ---- */

static int name_ok(const char *s, size_t len, size_t max)
{
    if (!len || len >= max)
        return 0;
    for (size_t i = 0; i < len; ++i)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] > '~')
            return 0;
    return 1;
}

static int number_field(const char *s, size_t len, const char *key, double *out)
{
    const size_t kl = strlen(key);
    char buf[64];
    if (len <= kl + 1 || len - kl - 1 >= sizeof buf || strncmp(s, key, kl) || s[kl] != '=')
        return -1;
    memcpy(buf, s + kl + 1, len - kl - 1);
    buf[len - kl - 1] = '\0';
    char *end;
    errno = 0;
    const locale_t c = gs_c_locale(); /* whatever LC_NUMERIC the application set */
    const double v = c != (locale_t)0 ? strtod_l(buf, &end, c) : strtod(buf, &end);
    if (*end || errno || !(v >= 0.0) || v > 1e12)
        return -1;
    *out = v;
    return 0;
}

/* "key=<text>" with printable text shorter than max: 0 and the text, or -1. */
static int text_field(const char *s, size_t len, const char *key, char *out, size_t max)
{
    const size_t kl = strlen(key);
    if (len <= kl + 1 || strncmp(s, key, kl) || s[kl] != '=' ||
        !name_ok(s + kl + 1, len - kl - 1, max))
        return -1;
    memcpy(out, s + kl + 1, len - kl - 1);
    out[len - kl - 1] = '\0';
    return 0;
}

/* A line's tab-separated fields, up to the comment (a field starting '#'). */
typedef struct fields {
    const char *f[FIELDS_MAX];
    size_t len[FIELDS_MAX];
    size_t n;
    int overflow;
} fields_t;

static void split(const char *line, size_t len, fields_t *fs)
{
    size_t start = 0;
    fs->n = 0;
    fs->overflow = 0;
    for (size_t i = 0; i <= len; ++i)
        if (i == len || line[i] == '\t') {
            if (i > start && line[start] == '#')
                return;
            if (fs->n == FIELDS_MAX) {
                fs->overflow = 1;
                return;
            }
            fs->f[fs->n] = line + start;
            fs->len[fs->n++] = i - start;
            start = i + 1;
        }
}

static int is_key(const fields_t *fs, size_t i, const char *key)
{
    return i < fs->n && fs->len[i] == strlen(key) && !strncmp(fs->f[i], key, fs->len[i]);
}

/* A format 2 line's optional fields after vs_prior=: seq=, then was=
 * (a decision settled in its recorded sequences). 0, or -1. */
static int parse_seq_fields(const fields_t *fs, gs_tuned_t *t)
{
    if (fs->n == 10)
        return 0;
    if (number_field(fs->f[10], fs->len[10], "seq", &t->seq_gain) || !(t->seq_gain > 0.0))
        return -1;
    return fs->n == 11 ? 0 : text_field(fs->f[11], fs->len[11], "was", t->was, sizeof t->was);
}

/* A "sig" line's fields: 0 and the decision, or -1. Format 1 has no
 * prior= or vs_prior=; format 2 may end with seq= and was=. */
static int parse_sig(const fields_t *fs, int format, gs_class_t *c, gs_tuned_t *t)
{
    const size_t want = format == 1 ? 8 : 10;
    if (fs->n < want || (format != 1 && fs->n > want + 2))
        return -1;
    memset(t, 0, sizeof *t);
    if (gs_class_of_hex(fs->f[1], fs->len[1], c) || !name_ok(fs->f[2], fs->len[2], sizeof t->family) ||
        !name_ok(fs->f[3], fs->len[3], sizeof t->config))
        return -1;
    memcpy(t->family, fs->f[2], fs->len[2]);
    memcpy(t->config, fs->f[3], fs->len[3]);
    double pairs;
    if (number_field(fs->f[4], fs->len[4], "gain", &t->gain) ||
        number_field(fs->f[5], fs->len[5], "lo95", &t->lo95) ||
        number_field(fs->f[6], fs->len[6], "pairs", &pairs) ||
        number_field(fs->f[7], fs->len[7], "ms", &t->cost_ms) || pairs > 1e6)
        return -1;
    t->pairs = (int)pairs;
    if (format == 1) {
        snprintf(t->prior, sizeof t->prior, GS_TUNED_PRIOR_UNKNOWN);
        t->vs_prior = 1.0;
        return 0;
    }
    return text_field(fs->f[8], fs->len[8], "prior", t->prior, sizeof t->prior) ||
                   number_field(fs->f[9], fs->len[9], "vs_prior", &t->vs_prior) ||
                   parse_seq_fields(fs, t)
               ? -1
               : 0;
}

/* The owner fields of a claim or progress line (fields 2 to 5). */
static int parse_owner(const fields_t *fs, gs_tune_owner_t *o)
{
    double pid, start, t;
    memset(o, 0, sizeof *o);
    if (fs->n < 6 || text_field(fs->f[2], fs->len[2], "host", o->host, sizeof o->host) ||
        number_field(fs->f[3], fs->len[3], "pid", &pid) ||
        number_field(fs->f[4], fs->len[4], "start", &start) ||
        number_field(fs->f[5], fs->len[5], "t", &t) || pid > 4194304.0 * 1024)
        return -1;
    o->pid = (long long)pid;
    o->start = (unsigned long long)start;
    o->t = (long long)t;
    return 0;
}

/* A progress line's fields after the owner, joined by tabs (malloc'd), or
 * NULL: each printable without spaces. */
static char *progress_fields(const fields_t *fs)
{
    size_t total = 0;
    if (fs->n < 7 || fs->overflow)
        return NULL;
    for (size_t i = 6; i < fs->n; ++i) {
        if (!name_ok(fs->f[i], fs->len[i], PROGRESS_MAX))
            return NULL;
        total += fs->len[i] + 1;
    }
    if (total > PROGRESS_MAX)
        return NULL;
    char *out = malloc(total), *p = out;
    if (!out)
        return NULL;
    for (size_t i = 6; i < fs->n; ++i) {
        memcpy(p, fs->f[i], fs->len[i]);
        p += fs->len[i];
        *p++ = i + 1 < fs->n ? '\t' : '\0';
    }
    return out;
}

/* A line's fields (fs, of class c) into the table. Under lock. 0, or -1
 * (malformed). */
static int parse_fields(const fields_t *fs, int format, gs_class_t *c)
{
    if (is_key(fs, 0, "sig")) {
        gs_tuned_t t;
        return parse_sig(fs, format, c, &t) ? -1 : put_decision(c, &t);
    }
    gs_tune_owner_t o;
    if (format == 1 || parse_owner(fs, &o))
        return -1;
    if (is_key(fs, 0, "claim"))
        return fs->n == 6 ? put_claim(c, &o) : -1;
    if (is_key(fs, 0, "progress")) {
        char *p = progress_fields(fs);
        return p ? put_progress(c, p, &o) : -1;
    }
    return -1;
}

/* One line after the header, into memory, its comment kept for rewrites.
 * Under lock. 0 or -1 (malformed). */
static int parse_line(const char *line, size_t len, int format)
{
    fields_t fs;
    gs_class_t c;
    split(line, len, &fs);
    if (fs.n < 2 || gs_class_of_hex(fs.f[1], fs.len[1], &c) || parse_fields(&fs, format, &c))
        return -1;
    size_t n;
    const char *shape = comment_of(line, len, &n);
    if (shape)
        put_shape(&c, shape, n);
    return 0;
}

/* The line's start: "sig", "claim" or "progress", the class, and the
 * owner's fields for the last two. */
static int format_owner(char *buf, size_t size, const char *kind, const gs_class_t *c,
                        const gs_tune_owner_t *o)
{
    char hex[GS_CLASS_HEX_LEN + 1];
    gs_class_hex(c, hex);
    const int n = snprintf(buf, size, "%s\t%s\thost=%s\tpid=%lld\tstart=%llu\tt=%lld", kind, hex,
                           o->host, o->pid, o->start, o->t);
    return n > 0 && (size_t)n < size ? n : -1;
}

static int format_entry(const gs_class_t *c, const gs_tuned_t *t, const char *shape, char *buf,
                        size_t size)
{
    char hex[GS_CLASS_HEX_LEN + 1];
    gs_class_hex(c, hex);
    /* numbers in the C locale, as every process reads them */
    const locale_t cl = gs_c_locale(), old = cl != (locale_t)0 ? uselocale(cl) : (locale_t)0;
    /* settled in sequences: seq=, and was= where the per-call choice lost */
    char seq[sizeof t->was + 32] = "";
    if (t->seq_gain > 0.0)
        snprintf(seq, sizeof seq, "\tseq=%.4f%s%s", t->seq_gain, t->was[0] ? "\twas=" : "",
                 t->was);
    int n = snprintf(buf, size,
                     "sig\t%s\t%s\t%s\tgain=%.4f\tlo95=%.4f\tpairs=%d\tms=%.3f\tprior=%s\t"
                     "vs_prior=%.4f%s\t# %s\n",
                     hex, t->family, t->config, t->gain, t->lo95, t->pairs, t->cost_ms,
                     t->prior[0] ? t->prior : GS_TUNED_PRIOR_UNKNOWN, t->vs_prior, seq,
                     shape ? shape : "");
    if (old != (locale_t)0)
        uselocale(old);
    return n > 0 && (size_t)n < size ? n : -1;
}

static int format_claim(const gs_class_t *c, const gs_tune_owner_t *o, const char *shape,
                        char *buf, size_t size)
{
    const int n = format_owner(buf, size, "claim", c, o);
    if (n < 0)
        return -1;
    const int m = snprintf(buf + n, size - (size_t)n, "\t# %s\n", shape ? shape : "");
    return m > 0 && (size_t)m < size - (size_t)n ? n + m : -1;
}

static int format_progress(const gs_class_t *c, const gs_tune_owner_t *o, const char *fields,
                           const char *shape, char *buf, size_t size)
{
    const int n = format_owner(buf, size, "progress", c, o);
    if (n < 0)
        return -1;
    const int m = snprintf(buf + n, size - (size_t)n, "\t%s\t# %s\n", fields, shape ? shape : "");
    return m > 0 && (size_t)m < size - (size_t)n ? n + m : -1;
}

/* ---- the file ---- */

/* The file's bytes from `from` to its end (NUL-terminated), or NULL. */
static char *read_from(int f, off_t from, size_t *len)
{
    struct stat st;
    if (fstat(f, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > FILE_MAX ||
        st.st_size < from)
        return NULL;
    const size_t want = (size_t)(st.st_size - from);
    char *buf = malloc(want + 1);
    size_t got = 0;
    if (!buf)
        return NULL;
    while (got < want) {
        ssize_t r = pread(f, buf + got, want - got, from + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    *len = got;
    return buf;
}

static void header_of(const char *validator, char *buf, size_t size)
{
    snprintf(buf, size, HEADER0 "\nformat %d\nvalidator %s\n", GS_TUNE_CACHE_FORMAT, validator);
}

typedef struct parsed {
    int header_ok;   /* format line known */
    int format;
    int fresh;       /* validator matches */
    char stale_why[160];
    size_t lines, bad;
    size_t used;     /* bytes up to the end of the last whole line */
} parsed_t;

/* The next line of [buf, buf + len) from *pos: its length, and whether it
 * ends with a newline. */
static size_t next_line(const char *buf, size_t len, size_t *pos, const char **line, int *whole)
{
    *line = buf + *pos;
    const char *nl = memchr(*line, '\n', len - *pos);
    const size_t ll = nl ? (size_t)(nl - *line) : len - *pos;
    *pos += ll + (nl ? 1 : 0);
    *whole = nl != NULL;
    return ll;
}

/* The lines after the header, into memory. Under lock. */
static void parse_body(const char *buf, size_t len, size_t pos, parsed_t *out)
{
    while (pos < len) {
        const char *line;
        int whole;
        const size_t ll = next_line(buf, len, &pos, &line, &whole);
        if (!whole) { /* a torn last line: its writer died mid-write */
            ++out->bad;
            break;
        }
        out->used = pos;
        if (!ll || line[0] == '#')
            continue;
        ++out->lines;
        if (parse_line(line, ll, out->format))
            ++out->bad;
    }
}

static int format_of(const char *line, size_t ll)
{
    for (int f = 1; f <= GS_TUNE_CACHE_FORMAT; ++f) {
        char want[32];
        const int n = snprintf(want, sizeof want, "format %d", f);
        if ((size_t)n == ll && !memcmp(line, want, ll))
            return f;
    }
    return 0;
}

/* Reads buf's lines into memory when its validator matches. Under lock. */
static void parse_file(const char *buf, size_t len, const char *validator, parsed_t *out)
{
    memset(out, 0, sizeof *out);
    size_t pos = 0;
    int seen_format = 0;
    while (pos < len) {
        const char *line;
        int whole;
        const size_t ll = next_line(buf, len, &pos, &line, &whole);
        if (!ll || line[0] == '#')
            continue;
        if (!whole)
            break;
        if (!seen_format) {
            seen_format = 1;
            out->format = format_of(line, ll);
            out->header_ok = out->format != 0;
            if (!out->header_ok)
                return;
            continue;
        }
        const size_t vl = strlen(validator);
        out->fresh = ll == vl + 10 && !memcmp(line, "validator ", 10) &&
                     !memcmp(line + 10, validator, vl);
        if (!out->fresh) {
            snprintf(out->stale_why, sizeof out->stale_why, "%.*s", (int)(ll > 150 ? 150 : ll),
                     line);
            return;
        }
        out->used = pos;
        parse_body(buf, len, pos, out);
        return;
    }
    out->header_ok = out->header_ok && seen_format;
}

int gs_tune_cache_load_buffer(const char *buf, size_t len, const char *validator, int *fresh,
                              size_t *lines, size_t *bad)
{
    parsed_t ps;
    pthread_mutex_lock(&lock);
    parse_file(buf, len, validator, &ps);
    pthread_mutex_unlock(&lock);
    *fresh = ps.fresh;
    *lines = ps.lines;
    *bad = ps.bad;
    return len && !ps.header_ok ? -1 : 0;
}

/* Lines of one entry for a rewrite: its decision, progress and live claim. */
static int rewrite_entry(int t, const entry_t *e, long long now, char *line, size_t size)
{
    int rc = 0, n;
    if (e->decided) {
        n = format_entry(&e->cls, &e->t, e->shape ? e->shape : "", line, size);
        rc = n < 0 ? -1 : gs_write_all(t, line, (size_t)n);
    }
    if (!rc && e->progress) {
        n = format_progress(&e->cls, &e->progress_by, e->progress, e->shape ? e->shape : "",
                            line, size);
        rc = n < 0 ? -1 : gs_write_all(t, line, (size_t)n);
    }
    /* a claim by the progress's writer: the progress line stands for it */
    if (!rc && e->claimed && !(e->progress && same_owner(&e->claim, &e->progress_by)) &&
        gs_tune_owner_alive(&e->claim, now)) {
        n = format_claim(&e->cls, &e->claim, e->shape ? e->shape : "", line, size);
        rc = n < 0 ? -1 : gs_write_all(t, line, (size_t)n);
    }
    return rc;
}

/* Writes the header and everything held to a temporary file renamed over
 * path; *bytes its size. Under lock, with the file's flock held. */
static int rewrite(const char *path, const char *validator, off_t *bytes)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int t = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    char *line = malloc(LINE_MAX_BYTES);
    if (t < 0 || !line) {
        if (t >= 0)
            close(t), unlink(tmp);
        free(line);
        return -1;
    }
    char head[HEADER_MAX];
    header_of(validator, head, sizeof head);
    int rc = gs_write_all(t, head, strlen(head));
    const long long now = (long long)time(NULL);
    for (size_t i = 0; i < cap && !rc; ++i)
        if (table[i].used)
            rc = rewrite_entry(t, &table[i], now, line, LINE_MAX_BYTES);
    free(line);
    struct stat st;
    if (fsync(t) || fstat(t, &st))
        rc = -1;
    else
        *bytes = st.st_size;
    close(t);
    if (!rc && rename(tmp, path))
        rc = -1;
    if (rc)
        unlink(tmp);
    return rc;
}

static int lock_file(int f)
{
    while (flock(f, LOCK_EX)) {
        if (errno != EINTR)
            return -1;
    }
    return 0;
}

/* The file at path_open may have been renamed over by a compaction in
 * another process: our fd then points at the old inode. Reopen, locked
 * (the new file is then read from its start). Under lock. */
static int lock_current(void)
{
    for (int tries = 0; tries < 8; ++tries) {
        if (fd < 0)
            return -1;
        if (lock_file(fd))
            return -1;
        struct stat a, b;
        if (!fstat(fd, &a) && !stat(path_open, &b) && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
            return 0;
        flock(fd, LOCK_UN);
        close(fd);
        fd = open(path_open, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        read_off = 0;
    }
    return -1;
}

/* Reads the lines appended since read_off into memory. Under lock, with
 * the file's flock held. */
static void read_tail(void)
{
    size_t len = 0;
    char *buf = read_from(fd, read_off, &len);
    if (!buf)
        return;
    parsed_t ps;
    if (read_off == 0) {
        parse_file(buf, len, validator_open, &ps);
        if (ps.header_ok)
            format_open = ps.format;
        if (!ps.fresh)
            ps.used = len; /* replaced by a process with another validator: nothing for us */
    } else {
        memset(&ps, 0, sizeof ps);
        ps.format = format_open;
        parse_body(buf, len, 0, &ps);
    }
    read_off += (off_t)ps.used;
    free(buf);
}

/* Appends one line, the file's flock held. A torn line left by a writer
 * that died gets its newline first, so it spoils only itself. Under lock.
 * 0 or -1. */
static int append_held(const char *line, size_t n)
{
    struct stat st;
    char last = '\n';
    int rc = fstat(fd, &st) ? -1 : 0;
    if (!rc && st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1)
        rc = -1;
    if (!rc && last != '\n')
        rc = gs_write_all(fd, "\n", 1);
    if (!rc)
        rc = gs_write_all(fd, line, n);
    if (!rc && !fstat(fd, &st) && read_off == st.st_size - (off_t)n - (last != '\n'))
        read_off = st.st_size; /* nothing unread before it, and our line is in memory */
    return rc;
}

/* Appends one line under the file's lock, after reading what others
 * appended. Under lock. 0 or -1. */
static int append_locked(const char *line, size_t n)
{
    if (lock_current())
        return -1;
    read_tail();
    const int rc = append_held(line, n);
    flock(fd, LOCK_UN);
    return rc;
}

int gs_tune_cache_refresh(void)
{
    pthread_mutex_lock(&lock);
    int rc = -1;
    if (fd >= 0 && !lock_current()) {
        read_tail();
        flock(fd, LOCK_UN);
        rc = 0;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* The WRITE mode's end of gs_tune_cache_open: the header of a new file, or
 * a rewrite (stale, format 1, or many more lines than classes). Under
 * lock, with f's flock held; f is this process's file from then on. 0 or
 * -1 (msg says why). */
static int open_for_writing(int *f, const char *path, const char *validator, size_t len,
                            const parsed_t *ps, char *msg, size_t msg_size)
{
    struct stat st;
    off_t known = !fstat(*f, &st) ? st.st_size : 0;
    snprintf(path_open, sizeof path_open, "%s", path);
    snprintf(validator_open, sizeof validator_open, "%s", validator);
    if (!len) {
        char head[HEADER_MAX];
        header_of(validator, head, sizeof head);
        if (gs_write_all(*f, head, strlen(head))) {
            snprintf(msg, msg_size, "cannot write tune cache '%s': %s", path, strerror(errno));
            return -1;
        }
        known = (off_t)strlen(head);
    } else if (!ps->fresh || ps->format != GS_TUNE_CACHE_FORMAT || ps->lines > 2 * count + 64) {
        if (!ps->fresh)
            snprintf(msg, msg_size, "tune cache '%s' was stale (%s); replaced", path,
                     ps->stale_why);
        const int g =
            rewrite(path, validator, &known) ? -1 : open(path, O_RDWR | O_APPEND | O_CLOEXEC);
        if (g < 0) {
            snprintf(msg, msg_size, "cannot rewrite tune cache '%s': %s", path, strerror(errno));
            return -1;
        }
        /* the renamed file from now on (what was read of it: what we wrote) */
        flock(*f, LOCK_UN);
        close(*f);
        *f = g;
    }
    if (ps->bad && !msg[0])
        snprintf(msg, msg_size, "tune cache '%s': %zu malformed lines skipped", path, ps->bad);
    if (fd >= 0)
        close(fd);
    fd = *f;
    format_open = GS_TUNE_CACHE_FORMAT;
    read_off = known;
    return 0;
}

int gs_tune_cache_open(const char *path, const char *validator, int mode, char *msg,
                       size_t msg_size)
{
    if (msg_size)
        msg[0] = '\0';
    if (!path || !path[0] || strlen(path) >= sizeof path_open ||
        strlen(validator) >= VALIDATOR_MAX) {
        snprintf(msg, msg_size, "tune cache path or validator too long");
        return -1;
    }
    const int f = mode == GS_TUNE_CACHE_WRITE
                      ? open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644)
                      : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f < 0) {
        snprintf(msg, msg_size, "cannot open tune cache '%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(f, &st) || !S_ISREG(st.st_mode)) {
        snprintf(msg, msg_size, "tune cache '%s' is not a regular file", path);
        close(f);
        return -1;
    }
    fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK);
    pthread_mutex_lock(&lock);
    int rc = 0;
    if (lock_file(f)) {
        snprintf(msg, msg_size, "cannot lock tune cache '%s': %s", path, strerror(errno));
        rc = -1;
        goto out;
    }
    size_t len = 0;
    char *buf = read_from(f, 0, &len);
    if (!buf) {
        snprintf(msg, msg_size, "cannot read tune cache '%s'", path);
        rc = -1;
        goto unlock;
    }
    parsed_t ps;
    parse_file(buf, len, validator, &ps);
    free(buf);
    if (len && !ps.header_ok) {
        snprintf(msg, msg_size, "'%s' is not a gemmshim tune cache (format %d); %s", path,
                 GS_TUNE_CACHE_FORMAT, mode == GS_TUNE_CACHE_WRITE ? "not touched" : "ignored");
        rc = -1;
        goto unlock;
    }
    if (len && !ps.fresh && mode != GS_TUNE_CACHE_WRITE) {
        snprintf(msg, msg_size, "tune cache '%s' is stale (%s; this process: validator %s); "
                 "ignored", path, ps.stale_why, validator);
        rc = -1;
        goto unlock;
    }
    if (mode == GS_TUNE_CACHE_WRITE) {
        int g = f;
        rc = open_for_writing(&g, path, validator, len, &ps, msg, msg_size);
        flock(g, LOCK_UN);
        if (rc)
            close(g);
        pthread_mutex_unlock(&lock);
        return rc;
    }
    if (ps.bad)
        snprintf(msg, msg_size, "tune cache '%s': %zu malformed lines skipped", path, ps.bad);
unlock:
    flock(f, LOCK_UN);
out:
    close(f);
    pthread_mutex_unlock(&lock);
    return rc;
}

void gs_tune_cache_close(void)
{
    pthread_mutex_lock(&lock);
    if (fd >= 0)
        close(fd);
    fd = -1;
    path_open[0] = '\0';
    pthread_mutex_unlock(&lock);
}

/* Appends a formatted line when a file is open (n < 0: it did not
 * format). Under lock. 0, or -1 with msg. */
static int append(const char *line, int n, char *msg, size_t msg_size)
{
    if (fd < 0)
        return 0;
    if (n < 0) {
        snprintf(msg, msg_size, "tune cache line too long");
        return -1;
    }
    if (append_locked(line, (size_t)n)) {
        snprintf(msg, msg_size, "cannot append to tune cache '%s': %s", path_open,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int gs_tuned_put(const gs_class_t *c, const gs_tuned_t *t, const char *shape, char *msg,
                 size_t msg_size)
{
    if (msg_size)
        msg[0] = '\0';
    char line[2048];
    const int n = format_entry(c, t, shape, line, sizeof line);
    pthread_mutex_lock(&lock);
    int rc = put_decision(c, t);
    if (!rc && shape)
        put_shape(c, shape, strlen(shape));
    if (!rc)
        rc = append(line, n, msg, msg_size);
    pthread_mutex_unlock(&lock);
    return rc;
}

gs_claim_t gs_tune_claim(const gs_class_t *c, const char *prior, const char *shape,
                         gs_tune_owner_t *holder)
{
    gs_tune_owner_t self;
    gs_tune_owner_self(&self);
    pthread_mutex_lock(&lock);
    const int locked = fd >= 0 && !lock_current();
    if (locked)
        read_tail();
    const entry_t *e = entry_find(c);
    gs_claim_t r = GS_CLAIM_OURS;
    if (e && e->decided && gs_tuned_prior_matches(&e->t, prior)) {
        r = GS_CLAIM_DECIDED;
    } else if (e && e->claimed && !same_owner(&e->claim, &self)) {
        *holder = e->claim;
        r = gs_tune_owner_alive(&e->claim, self.t) ? GS_CLAIM_HELD : GS_CLAIM_TAKEN_OVER;
    }
    if ((r == GS_CLAIM_OURS || r == GS_CLAIM_TAKEN_OVER) &&
        !(e && e->claimed && same_owner(&e->claim, &self))) {
        char line[1024];
        const int n = format_claim(c, &self, shape, line, sizeof line);
        put_claim(c, &self);
        if (locked && n > 0)
            append_held(line, (size_t)n); /* lost: another process may tune it too */
    }
    if (locked)
        flock(fd, LOCK_UN);
    pthread_mutex_unlock(&lock);
    return r;
}

int gs_tune_progress_put(const gs_class_t *c, const char *fields, const char *shape, char *msg,
                         size_t msg_size)
{
    if (msg_size)
        msg[0] = '\0';
    const size_t fl = strlen(fields);
    char *copy = fl < PROGRESS_MAX ? strdup(fields) : NULL;
    char *line = malloc(LINE_MAX_BYTES);
    gs_tune_owner_t self;
    gs_tune_owner_self(&self);
    int rc = -1;
    if (!copy || !line) {
        snprintf(msg, msg_size, "tune progress too long (%zu bytes)", fl);
        free(copy);
        free(line);
        return -1;
    }
    const int n = format_progress(c, &self, fields, shape, line, LINE_MAX_BYTES);
    pthread_mutex_lock(&lock);
    if (!put_progress(c, copy, &self))
        rc = append(line, n, msg, msg_size);
    pthread_mutex_unlock(&lock);
    free(line);
    return rc;
}

char *gs_tune_progress_get(const gs_class_t *c, gs_tune_owner_t *by)
{
    char *out = NULL;
    pthread_mutex_lock(&lock);
    const entry_t *e = entry_find(c);
    if (e && e->progress) {
        out = strdup(e->progress);
        if (by)
            *by = e->progress_by;
    }
    pthread_mutex_unlock(&lock);
    return out;
}

void gs_tuned_reset(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < cap; ++i) {
        free(table[i].progress);
        free(table[i].shape);
    }
    free(table);
    table = NULL;
    cap = count = decided = 0;
    __atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
    if (fd >= 0)
        close(fd);
    fd = -1;
    path_open[0] = '\0';
    read_off = 0;
    pthread_mutex_unlock(&lock);
}
