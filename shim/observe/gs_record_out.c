/* The record's file; see gs_record_out.h. */
#define _GNU_SOURCE /* O_CLOEXEC */
#include "gs_record_out.h"
#include "gs_facts.h"
#include "gs_hooks.h"
#include "gs_io.h"
#include "gs_record.h"
#include "gs_sink.h"
#include "gs_state.h"
#include "gs_timing.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char facts[256]; /* tab-separated; written once, before any reader */

static int emit_line(void *ctx, const char *line, size_t len)
{
    return gs_write_all(*(const int *)ctx, line, len);
}

int gs_record_append(const char *path, const char *header, const char *proc, char *msg,
                     size_t msg_size)
{
    /* O_NONBLOCK: a FIFO named by mistake must not hang the exit */
    const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd < 0) {
        snprintf(msg, msg_size, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    int rc = -1;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        snprintf(msg, msg_size, "'%s' is not a regular file", path);
        goto out;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    while (flock(fd, LOCK_EX)) {
        if (errno != EINTR) {
            snprintf(msg, msg_size, "cannot lock '%s': %s", path, strerror(errno));
            goto out;
        }
    }
    /* the size under the lock: another process may have started the file */
    if (fstat(fd, &st) || (st.st_size == 0 && gs_write_all(fd, header, strlen(header))) ||
        gs_write_all(fd, proc, strlen(proc)) || gs_record_lines(emit_line, (void *)&fd)) {
        snprintf(msg, msg_size, "cannot append to '%s': %s", path, strerror(errno));
    } else {
        rc = 0;
    }
    flock(fd, LOCK_UN);
out:
    close(fd);
    return rc;
}

static const char *mode_name(gs_mode_t m)
{
    static const char *const names[] = {"on", "off", "verify", "ab"};
    return (unsigned)m < sizeof names / sizeof names[0] ? names[m] : "?";
}

static const char *tune_name(gs_tune_mode_t t)
{
    static const char *const names[] = {"off", "online", "cache"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

/* At exit: the GPU times still in flight first, then this process's block
 * (nothing from a process, or a forked child, that recorded no call). */
static void append_at_exit(void)
{
    gs_timing_settle();
    gs_record_totals_t t;
    gs_record_totals(&t);
    if (!t.calls)
        return;
    const gs_config_t *cfg = gs_cfg();
    const gs_routing_t r = gs_routing();
    char host[256] = "?";
    if (gethostname(host, sizeof host - 1))
        snprintf(host, sizeof host, "?");
    char header[512], proc[1024], msg[GS_PATH_MAX + 128];
    snprintf(header, sizeof header, GS_RECORD_MAGIC "\tformat=%d\t%s\n", GS_RECORD_FORMAT, facts);
    snprintf(proc, sizeof proc,
             "proc\thost=%s\tpid=%ld\ttime=%lld\tcalls=%llu\tsigs=%llu\tdropped=%llu\t"
             "captures=%llu\tunplaced=%llu\tmode=%s\tpolicy=%s\ttune=%s\t%s\n",
             host, (long)getpid(), (long long)time(NULL), (unsigned long long)t.calls,
             (unsigned long long)t.sigs, (unsigned long long)t.dropped,
             (unsigned long long)t.captures, (unsigned long long)t.unplaced, mode_name(r.mode),
             r.policy == GS_POLICY_ELIGIBLE ? "eligible" : "table", tune_name(r.tune), facts);
    if (gs_record_append(cfg->record_path, header, proc, msg, sizeof msg))
        gs_msg("record: %s; this process's %llu calls are not in it", msg,
               (unsigned long long)t.calls);
    else
        gs_log_line("record: %llu calls of %llu signatures appended to %s",
                    (unsigned long long)t.calls, (unsigned long long)t.sigs, cfg->record_path);
    if (t.dropped)
        gs_msg("record: more than %d signatures; %llu calls of later ones not recorded",
               GS_RECORD_SIGS_MAX, (unsigned long long)t.dropped);
}

void gs_record_out_start(void)
{
    gs_device_t d;
    memset(&d, 0, sizeof d);
    gs_hooks()->device_query(&d);
    gs_facts(&d, '\t', facts, sizeof facts);
    atexit(append_at_exit);
}
