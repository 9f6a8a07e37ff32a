/* The end of `gemmshim tune --from`, for every process at once: per
 * signature of the recorded files what the cache now holds (decided, the
 * prior kept or replaced, not decided) and what was skipped and why (not
 * tunable as recorded, or no call can be rebuilt with its class). */
#ifndef GS_REPLAY_SUMMARY_H
#define GS_REPLAY_SUMMARY_H

#include "gs_replay_sigs.h"

#include <stdio.h>

/* Writes the summary to out: 0 when every signature that could be tuned
 * is decided, 1 otherwise (or the cache cannot be read). */
int gs_replay_summary(const gs_replay_sigs_t *s, const char *cache, FILE *out);

#endif
