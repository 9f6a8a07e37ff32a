/* Fixtures shared by the dispatch-level unit tests (test_dispatch.c,
 * test_decide.c): the default configuration and hand-filled devices. */
#ifndef GS_DISPATCH_FIXTURES_H
#define GS_DISPATCH_FIXTURES_H

#include "gs_config.h"

#include <string.h>

static const char *no_env(const char *name)
{
    (void)name;
    return NULL;
}

/* GEMMSHIM_* all unset. */
static gs_config_t defaults(void)
{
    gs_config_t c;
    gs_config_parse(&c, no_env);
    return c;
}

/* A device of that compute capability and SM count (Hopper-sized shared
 * memory and L2). */
static gs_device_t device(int major, int minor, int sms)
{
    gs_device_t d;
    memset(&d, 0, sizeof d);
    d.present = 1;
    d.cc_major = major;
    d.cc_minor = minor;
    d.sm_count = sms;
    d.smem_optin = 227 * 1024;
    d.l2_bytes = 50u << 20;
    return d;
}

#endif
