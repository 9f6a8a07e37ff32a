/* Process-wide shim state, initialised lazily and once, on the first
 * intercepted call (never in a constructor: CUDA must not be touched while
 * the application is still loading). */
#ifndef GS_STATE_H
#define GS_STATE_H

#include "gs_config.h"

/* The parsed configuration; the first call parses GEMMSHIM_*, opens the log
 * and reports a rejected value. Thread-safe. */
const gs_config_t *gs_cfg(void);

#endif
