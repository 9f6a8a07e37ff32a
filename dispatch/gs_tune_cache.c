/* Tuned decisions in memory and in the shared cache file; see gs_tune_cache.h. */
#define _GNU_SOURCE
#include "gs_tune_cache.h"
#include "gs_c_locale.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER0 "# gemmshim tune cache"
enum {
    VALIDATOR_MAX = 1024,             /* bytes of a validator, with its NUL */
    HEADER_MAX = VALIDATOR_MAX + 64,  /* the header's three lines */
};
#define FILE_MAX ((size_t)256 << 20)

typedef struct entry {
    gs_class_t cls;
    gs_tuned_t t;
    int used;
} entry_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry_t *table;      /* open addressing, cap a power of two */
static size_t cap, count;
static unsigned generation;
static int fd = -1;          /* the file, open for appending (WRITE mode) */
static char path_open[4096];

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

/* Under lock. */
static int put_mem(const gs_class_t *c, const gs_tuned_t *t)
{
    if ((count + 1) * 2 > cap && grow())
        return -1;
    entry_t *e = slot_of(table, cap, c);
    if (!e->used) {
        e->used = 1;
        e->cls = *c;
        ++count;
    }
    e->t = *t;
    __atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
    return 0;
}

int gs_tuned_find(const gs_class_t *c, gs_tuned_t *out)
{
    int found = 0;
    pthread_mutex_lock(&lock);
    if (cap) {
        const entry_t *e = slot_of(table, cap, c);
        if (e->used) {
            *out = e->t;
            found = 1;
        }
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
    size_t n = count;
    pthread_mutex_unlock(&lock);
    return n;
}

/* ---- lines ---- */

void gs_class_hex(const gs_class_t *c, char out[GS_CLASS_HEX_LEN + 1])
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = (const unsigned char *)c;
    for (size_t i = 0; i < sizeof *c; ++i) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[GS_CLASS_HEX_LEN] = '\0';
}

static int nibble(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

static int class_of_hex(const char *s, size_t len, gs_class_t *c)
{
    if (len != 2 * sizeof *c)
        return -1;
    unsigned char *b = (unsigned char *)c;
    for (size_t i = 0; i < sizeof *c; ++i) {
        const int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        b[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

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

/* One "sig" line (without its newline): 0 and the decision, or -1. */
static int parse_entry(const char *line, size_t len, gs_class_t *c, gs_tuned_t *t)
{
    const char *f[9];
    size_t fl[9];
    size_t nf = 0, start = 0;
    for (size_t i = 0; i <= len && nf < 9; ++i)
        if (i == len || line[i] == '\t') {
            f[nf] = line + start;
            fl[nf++] = i - start;
            start = i + 1;
        }
    if (nf < 8 || fl[0] != 3 || strncmp(f[0], "sig", 3))
        return -1;
    memset(t, 0, sizeof *t);
    if (class_of_hex(f[1], fl[1], c) || !name_ok(f[2], fl[2], sizeof t->family) ||
        !name_ok(f[3], fl[3], sizeof t->config))
        return -1;
    memcpy(t->family, f[2], fl[2]);
    memcpy(t->config, f[3], fl[3]);
    double pairs;
    if (number_field(f[4], fl[4], "gain", &t->gain) ||
        number_field(f[5], fl[5], "lo95", &t->lo95) ||
        number_field(f[6], fl[6], "pairs", &pairs) ||
        number_field(f[7], fl[7], "ms", &t->cost_ms) || pairs > 1e6)
        return -1;
    t->pairs = (int)pairs;
    return 0;
}

static int format_entry(const gs_class_t *c, const gs_tuned_t *t, const char *shape, char *buf,
                        size_t size)
{
    char hex[GS_CLASS_HEX_LEN + 1];
    gs_class_hex(c, hex);
    /* numbers in the C locale, as every process reads them */
    const locale_t cl = gs_c_locale(), old = cl != (locale_t)0 ? uselocale(cl) : (locale_t)0;
    int n = snprintf(buf, size, "sig\t%s\t%s\t%s\tgain=%.4f\tlo95=%.4f\tpairs=%d\tms=%.3f\t# %s\n",
                     hex, t->family, t->config, t->gain, t->lo95, t->pairs, t->cost_ms,
                     shape ? shape : "");
    if (old != (locale_t)0)
        uselocale(old);
    return n > 0 && (size_t)n < size ? n : -1;
}

/* ---- the file ---- */

static int write_all(int f, const char *buf, size_t len)
{
    while (len) {
        ssize_t w = write(f, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

static char *read_fd(int f, size_t *len)
{
    struct stat st;
    if (fstat(f, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > FILE_MAX)
        return NULL;
    char *buf = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    if (!buf)
        return NULL;
    while (got < (size_t)st.st_size) {
        ssize_t r = pread(f, buf + got, (size_t)st.st_size - got, (off_t)got);
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
    int fresh;       /* validator matches */
    char stale_why[160];
    size_t lines, bad;
} parsed_t;

/* Reads buf's decisions into memory when its validator matches. Under lock. */
static void parse_file(const char *buf, size_t len, const char *validator, parsed_t *out)
{
    memset(out, 0, sizeof *out);
    size_t pos = 0;
    int seen_format = 0, seen_validator = 0;
    while (pos < len) {
        const char *line = buf + pos;
        const char *nl = memchr(line, '\n', len - pos);
        const size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + (nl ? 1 : 0);
        if (!ll || line[0] == '#')
            continue;
        if (!nl) { /* a torn last line: its writer died mid-write */
            ++out->bad;
            continue;
        }
        if (!seen_format) {
            char want[32];
            const int n = snprintf(want, sizeof want, "format %d", GS_TUNE_CACHE_FORMAT);
            seen_format = 1;
            out->header_ok = (size_t)n == ll && !memcmp(line, want, ll);
            if (!out->header_ok)
                return;
            continue;
        }
        if (!seen_validator) {
            seen_validator = 1;
            const size_t vl = strlen(validator);
            out->fresh = ll == vl + 10 && !memcmp(line, "validator ", 10) &&
                         !memcmp(line + 10, validator, vl);
            if (!out->fresh) {
                snprintf(out->stale_why, sizeof out->stale_why, "%.*s",
                         (int)(ll > 150 ? 150 : ll), line);
                return;
            }
            continue;
        }
        gs_class_t c;
        gs_tuned_t t;
        ++out->lines;
        if (parse_entry(line, ll, &c, &t) || put_mem(&c, &t))
            ++out->bad;
    }
    if (!seen_validator)
        out->fresh = 0, out->header_ok = out->header_ok && seen_format;
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

/* Writes the header and every decision held to a temporary file renamed
 * over path. Under lock, with the file's flock held. */
static int rewrite(const char *path, const char *validator)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int t = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (t < 0)
        return -1;
    char head[HEADER_MAX];
    header_of(validator, head, sizeof head);
    int rc = write_all(t, head, strlen(head));
    for (size_t i = 0; i < cap && !rc; ++i) {
        char line[1024];
        if (!table[i].used)
            continue;
        const int n = format_entry(&table[i].cls, &table[i].t, "", line, sizeof line);
        rc = n < 0 ? -1 : write_all(t, line, (size_t)n);
    }
    if (fsync(t))
        rc = -1;
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
 * another process: our fd then points at the old inode. Reopen, locked.
 * Under lock. */
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
    }
    return -1;
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
    char *buf = read_fd(f, &len);
    if (!buf) {
        snprintf(msg, msg_size, "cannot read tune cache '%s'", path);
        rc = -1;
        goto unlock;
    }
    parsed_t ps;
    parse_file(buf, len, validator, &ps);
    free(buf);
    if (len && !ps.header_ok && mode != GS_TUNE_CACHE_WRITE) {
        snprintf(msg, msg_size, "'%s' is not a gemmshim tune cache (format %d); ignored", path,
                 GS_TUNE_CACHE_FORMAT);
        rc = -1;
        goto unlock;
    }
    if (len && !ps.header_ok) {
        snprintf(msg, msg_size, "'%s' is not a gemmshim tune cache (format %d); not touched",
                 path, GS_TUNE_CACHE_FORMAT);
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
        snprintf(path_open, sizeof path_open, "%s", path);
        if (!len) {
            char head[HEADER_MAX];
            header_of(validator, head, sizeof head);
            if (write_all(f, head, strlen(head))) {
                snprintf(msg, msg_size, "cannot write tune cache '%s': %s", path,
                         strerror(errno));
                rc = -1;
                goto unlock;
            }
        } else if (!ps.fresh || ps.lines > 2 * count + 64) {
            if (!ps.fresh)
                snprintf(msg, msg_size, "tune cache '%s' was stale (%s); replaced", path,
                         ps.stale_why);
            if (rewrite(path, validator)) {
                snprintf(msg, msg_size, "cannot rewrite tune cache '%s': %s", path,
                         strerror(errno));
                rc = -1;
                goto unlock;
            }
        }
        if (!rc && ps.bad && !msg[0])
            snprintf(msg, msg_size, "tune cache '%s': %zu malformed lines skipped", path, ps.bad);
        flock(f, LOCK_UN);
        if (fd >= 0)
            close(fd);
        fd = f;
        pthread_mutex_unlock(&lock);
        return 0;
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

int gs_tuned_put(const gs_class_t *c, const gs_tuned_t *t, const char *shape, char *msg,
                 size_t msg_size)
{
    if (msg_size)
        msg[0] = '\0';
    char line[1024];
    const int n = format_entry(c, t, shape, line, sizeof line);
    pthread_mutex_lock(&lock);
    int rc = put_mem(c, t);
    if (!rc && fd >= 0 && n > 0) {
        if (lock_current()) {
            snprintf(msg, msg_size, "cannot lock tune cache '%s'", path_open);
            rc = -1;
        } else {
            if (write_all(fd, line, (size_t)n)) {
                snprintf(msg, msg_size, "cannot append to tune cache '%s': %s", path_open,
                         strerror(errno));
                rc = -1;
            }
            flock(fd, LOCK_UN);
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void gs_tuned_reset(void)
{
    pthread_mutex_lock(&lock);
    free(table);
    table = NULL;
    cap = count = 0;
    __atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
    if (fd >= 0)
        close(fd);
    fd = -1;
    path_open[0] = '\0';
    pthread_mutex_unlock(&lock);
}
