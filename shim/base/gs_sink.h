/* The message sink: where "gemmshim: ..." lines go (stderr, the GEMMSHIM_LOG
 * file). Several processes may share one log file (torchrun ranks,
 * DataLoader workers, subprocesses of a script): the file is opened for
 * appending, never truncated, and every line is written with one write(2),
 * so lines of different processes never cut into each other. A "%p" in
 * GEMMSHIM_LOG becomes the process id (one file per process), "%%" a "%".
 * fork() is safe: the sink's lock is taken around it, and a child of a
 * process whose log path has "%p" re-opens a file of its own. */
#ifndef GS_SINK_H
#define GS_SINK_H

#include <stddef.h>

#include "gs_config.h"

/* Open the sink the configuration names (once, at init) and install the
 * fork handlers. Without GEMMSHIM_LOG only gs_msg's stderr lines remain. */
void gs_sink_open(const gs_config_t *c);

/* A log (file or stderr) is configured. */
int gs_sink_on(void);

/* This process is a fork() child of the process that opened the sink (it
 * inherited the shim's state; CUDA is not usable here). */
int gs_sink_forked(void);

/* A problem the user must see (bad setting, missing symbol, fallback):
 * always on stderr, and in the log file too when there is one. */
void gs_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An informational line, written only when GEMMSHIM_LOG is set. */
void gs_log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Several lines written with one write(2), so that another process's lines
 * do not come between them (the summary, the ab table). Each gs_block_add
 * makes one "gemmshim: ..." line; gs_block_emit writes and frees. */
typedef struct gs_block {
    char *buf;
    size_t len, cap;
} gs_block_t;
#define GS_BLOCK_INIT {NULL, 0, 0}
void gs_block_add(gs_block_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
typedef enum {
    GS_TO_LOG,           /* the log, if any (else dropped) */
    GS_TO_LOG_OR_STDERR, /* the log, else stderr */
} gs_sink_to_t;
void gs_block_emit(gs_block_t *b, gs_sink_to_t to);

/* Expand a path pattern: "%p" -> pid, "%%" -> "%", any other "%" kept.
 * Returns 1 if the pattern has "%p", 0 if not, -1 if the result does not
 * fit in size bytes. */
int gs_path_expand(const char *pattern, long pid, char *out, size_t size);

#endif
