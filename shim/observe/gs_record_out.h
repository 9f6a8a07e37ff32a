/* The signature file of `gemmshim record` (GEMMSHIM_RECORD; the format is
 * docs/TUNING.md's, "Record, then tune offline"). Every process appends
 * its own block at exit: a "proc" line (host, pid, routing, this
 * machine's facts, its totals), then the record's "sig" and "seq" lines
 * (gs_record.h). Processes of one run (torchrun ranks) and later runs
 * append to one file: each block is written under an exclusive flock, one
 * write(2) per line, so no line is lost or cut into by another process; a
 * process killed while writing leaves at most a torn last line, which
 * readers skip. The file's first line, written by whoever finds it empty,
 * names the format and the facts of the machine that started it. */
#ifndef GS_RECORD_OUT_H
#define GS_RECORD_OUT_H

#include <stddef.h>

#define GS_RECORD_FORMAT 1
#define GS_RECORD_MAGIC "gemmshim-signatures"

/* At the first recorded call (once per process, from inside a call, so the
 * CUDA runtime is up and exits after us): the machine's facts, and the
 * block appended to the configured file at exit. */
void gs_record_out_start(void);

/* Appends to path: `header` if the file is empty, `proc`, then the
 * record's lines (each text ends in a newline). 0, or -1 with one line in
 * msg. */
int gs_record_append(const char *path, const char *header, const char *proc, char *msg,
                     size_t msg_size);

#endif
