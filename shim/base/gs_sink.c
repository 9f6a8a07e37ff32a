/* The message sink (see gs_sink.h). No stdio: a FILE's buffer would be
 * copied into a forked child and written twice, and fputs/fprintf of one
 * line may take several write(2)s. Each line is formatted into a buffer and
 * written with one write(2) to a descriptor opened with O_APPEND, which the
 * kernel positions at the end of the file for every write: the lines of
 * processes sharing the file never overwrite or cut into each other. */
#define _GNU_SOURCE /* O_CLOEXEC */
#include "gs_sink.h"
#include "gs_io.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define PREFIX "gemmshim: "
#define PREFIX_LEN (sizeof PREFIX - 1)

/* Held while a line is written and while the descriptor changes; taken
 * around fork() (see fork_prepare). Lock order: gs_log's lock, then this. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int log_on;            /* GEMMSHIM_LOG is set (read without the lock) */
static int log_fd = -1;       /* the log file; -1 with log_on: stderr */
static int per_pid;           /* the path has "%p": a forked child opens its own */
static char pattern[GS_PATH_MAX]; /* GEMMSHIM_LOG as given */
static int forked;            /* a fork() child of the process that opened */

/* Write all of buf: one write(2), unless a signal or a full disk cut it
 * short. errno is left as the application had it. */
static void put(int fd, const char *buf, size_t len)
{
    int saved = errno;
    gs_write_all(fd, buf, len);
    errno = saved;
}

/* "gemmshim: <fmt...>\n" in stack (size bytes) or, if longer, in a buffer
 * from malloc returned through *heap (NULL otherwise; the caller frees).
 * Returns the line and its length. */
static const char *format(char *stack, size_t size, char **heap, size_t *len, const char *fmt,
                          va_list ap)
{
    va_list again;
    va_copy(again, ap);
    *heap = NULL;
    memcpy(stack, PREFIX, PREFIX_LEN);
    int n = vsnprintf(stack + PREFIX_LEN, size - PREFIX_LEN - 1, fmt, ap);
    if (n < 0)
        n = 0;
    char *line = stack;
    if ((size_t)n >= size - PREFIX_LEN - 1) {
        char *big = malloc(PREFIX_LEN + (size_t)n + 2);
        if (big) {
            memcpy(big, PREFIX, PREFIX_LEN);
            vsnprintf(big + PREFIX_LEN, (size_t)n + 1, fmt, again);
            line = *heap = big;
        } else {
            n = (int)(size - PREFIX_LEN - 2); /* cut: the line still ends */
        }
    }
    va_end(again);
    line[PREFIX_LEN + (size_t)n] = '\n';
    *len = PREFIX_LEN + (size_t)n + 1;
    return line;
}

/* Open the log file for pid; on failure log to stderr, said there. Caller
 * holds the lock (or is alone: init, a forked child). */
static void open_log(long pid)
{
    char path[GS_PATH_MAX + 64];
    int r = gs_path_expand(pattern, pid, path, sizeof path);
    per_pid = r == 1;
    int fd = r < 0 ? -1 : open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    int err = r < 0 ? ENAMETOOLONG : errno;
    if (fd >= 0 && fd <= 2) {
        /* the application closed a standard descriptor: keep clear of it */
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
        fd = moved;
        err = errno;
    }
    log_fd = fd;
    if (fd < 0) {
        char line[GS_PATH_MAX + 256];
        int n = snprintf(line, sizeof line,
                         PREFIX "cannot open GEMMSHIM_LOG file '%s' (%s); logging to stderr\n",
                         r < 0 ? pattern : path, strerror(err));
        if (n > 0)
            put(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    }
}

/* fork(): no other thread may hold the lock in the child, and the child
 * must not inherit a half-changed descriptor. */
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
    __atomic_store_n(&forked, 1, __ATOMIC_RELAXED);
    if (per_pid && log_fd >= 0) { /* its own file; else it goes on appending */
        close(log_fd);
        log_fd = -1;
        open_log((long)getpid());
    }
    pthread_mutex_unlock(&lock);
}

void gs_sink_open(const gs_config_t *c)
{
    static int opened;
    pthread_mutex_lock(&lock);
    if (opened) {
        pthread_mutex_unlock(&lock);
        return;
    }
    opened = 1;
    if (c->log_enabled) {
        if (!c->log_to_stderr) {
            snprintf(pattern, sizeof pattern, "%s", c->log_path);
            open_log((long)getpid());
        }
        __atomic_store_n(&log_on, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

int gs_sink_on(void)
{
    return __atomic_load_n(&log_on, __ATOMIC_ACQUIRE);
}

int gs_sink_forked(void)
{
    return __atomic_load_n(&forked, __ATOMIC_RELAXED);
}

/* One line to stderr (to_stderr), to the log file, or both; each with one
 * write under the lock. */
static void emit(int to_stderr, const char *fmt, va_list ap)
{
    char stack[1024], *heap;
    size_t len;
    const char *line = format(stack, sizeof stack, &heap, &len, fmt, ap);
    pthread_mutex_lock(&lock);
    if (to_stderr || log_fd < 0)
        put(2, line, len);
    if (log_fd >= 0)
        put(log_fd, line, len);
    pthread_mutex_unlock(&lock);
    free(heap);
}

void gs_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(1, fmt, ap);
    va_end(ap);
}

void gs_log_line(const char *fmt, ...)
{
    if (!gs_sink_on())
        return;
    va_list ap;
    va_start(ap, fmt);
    emit(0, fmt, ap);
    va_end(ap);
}

void gs_block_add(gs_block_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t need = b->len + PREFIX_LEN + (size_t)n + 2; /* '\n' and vsnprintf's NUL */
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < need)
            cap *= 2;
        char *nb = realloc(b->buf, cap);
        if (!nb)
            return; /* the line is dropped; the block stays whole */
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, PREFIX, PREFIX_LEN);
    va_start(ap, fmt);
    vsnprintf(b->buf + b->len + PREFIX_LEN, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += PREFIX_LEN + (size_t)n;
    b->buf[b->len++] = '\n';
}

void gs_block_emit(gs_block_t *b, gs_sink_to_t to)
{
    if (b->len) {
        pthread_mutex_lock(&lock);
        int fd = log_fd >= 0 ? log_fd : gs_sink_on() || to == GS_TO_LOG_OR_STDERR ? 2 : -1;
        if (fd >= 0)
            put(fd, b->buf, b->len);
        pthread_mutex_unlock(&lock);
    }
    free(b->buf);
    b->buf = NULL;
    b->len = b->cap = 0;
}

int gs_path_expand(const char *pattern_, long pid, char *out, size_t size)
{
    int has_pid = 0;
    size_t o = 0;
    for (const char *s = pattern_; *s; ++s) {
        char num[24];
        const char *piece = num;
        size_t n;
        if (s[0] == '%' && s[1] == 'p') {
            n = (size_t)snprintf(num, sizeof num, "%ld", pid);
            has_pid = 1;
            ++s;
        } else if (s[0] == '%' && s[1] == '%') {
            piece = "%";
            n = 1;
            ++s;
        } else {
            piece = s;
            n = 1;
        }
        if (o + n >= size)
            return -1;
        memcpy(out + o, piece, n);
        o += n;
    }
    if (!size)
        return -1;
    out[o] = '\0';
    return has_pid;
}
