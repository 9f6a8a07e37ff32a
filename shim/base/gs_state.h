/* Process-wide shim state, initialised lazily and once, on the first
 * intercepted call (never in a constructor: CUDA must not be touched while
 * the application is still loading). */
#ifndef GS_STATE_H
#define GS_STATE_H

#include "gs_config.h"

#include <stdint.h>

/* The parsed configuration; the first call parses GEMMSHIM_*, opens the log
 * and reports a rejected value. Thread-safe. */
const gs_config_t *gs_cfg(void);

/* The routing in force: GEMMSHIM_* first, then whatever the C API set since
 * (the later wins). Reads are lock-free; the API's writes are serialized. */
gs_routing_t gs_routing(void);
void gs_set_mode(gs_mode_t mode);
void gs_set_kernels(uint64_t allowed);

#endif
