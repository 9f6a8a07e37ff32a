/* Fixtures shared by the dispatch-level unit tests (test_dispatch.c,
 * test_decide.c, test_table.c, test_config.c, test_report.c): the default
 * configuration, hand-filled devices, and the kernel families and
 * candidates of the registry (dispatch/gs_registry.h) by name. */
#ifndef GS_DISPATCH_FIXTURES_H
#define GS_DISPATCH_FIXTURES_H

#include "gs_config.h"
#include "gs_dispatch.h"
#include "gs_kernels.h" /* gs_pingpong_config_t: the pingpong family's config index */
#include "gs_registry.h"

#include <stdint.h>
#include <string.h>

/* The registered families (NULL if one is missing: test_dispatch's
 * registry test fails then), and the routes their calls count under. */
#define FAMILY_SKINNY gs_family_find("skinny")
#define FAMILY_PINGPONG gs_family_find("pingpong")
#define FAMILY_SGEMM_SIMT gs_family_find("sgemm_simt")
#define ROUTE_SKINNY gs_route_of(FAMILY_SKINNY)
#define ROUTE_PINGPONG gs_route_of(FAMILY_PINGPONG)
#define ROUTE_SGEMM_SIMT gs_route_of(FAMILY_SGEMM_SIMT)

/* The allow-list (gs_routing_t.allowed) bits of every configuration of a
 * family, by the family's name; 0 for a name the registry does not know. */
static inline uint64_t family_bits(const char *name)
{
    const gs_family_t *f = gs_family_find(name);
    return f ? gs_candidates_of_family(f) : 0;
}

/* The allow-list bit of one pingpong configuration (0 if not registered). */
static inline uint64_t pingpong_bit(gs_pingpong_config_t cfg)
{
    const int i = gs_candidate_of(FAMILY_PINGPONG, (int)cfg);
    return i >= 0 ? 1ull << i : 0;
}

static inline const char *no_env(const char *name)
{
    (void)name;
    return NULL;
}

/* GEMMSHIM_* all unset. */
static inline gs_config_t defaults(void)
{
    gs_config_t c;
    gs_config_parse(&c, no_env);
    return c;
}

/* A device of that compute capability and SM count (Hopper-sized shared
 * memory and L2). */
static inline gs_device_t device(int major, int minor, int sms)
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
