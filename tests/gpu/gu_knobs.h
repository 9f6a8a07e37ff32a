/* The families' developer knobs (GEMMSHIM_DEV_*) from the environment, for
 * the tests that call a kernel's launch API directly, without the shim (the
 * shim hands them to the families at its start). A bad value is what it is
 * under the shim: a message, and the test stops (exit 2). Needs gs_core. */
#ifndef GU_KNOBS_H
#define GU_KNOBS_H

#include "gs_config.h"
#include "gs_registry.h"

#include <stdio.h>
#include <stdlib.h>

static const char *gu_getenv(const char *name)
{
    return getenv(name);
}

static inline void gu_apply_dev_knobs(void)
{
    gs_config_t c;
    if (gs_config_parse(&c, gu_getenv)) {
        fprintf(stderr, "FAIL: %s\n", c.error_msg);
        exit(2);
    }
    gs_knobs_apply(c.knob_values);
}

#endif
