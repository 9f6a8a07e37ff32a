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

/* An fp32 NN problem m x n x k: tight leading dimensions, 256-byte aligned
 * dummy pointers (nothing is dereferenced), host scalars 1 and 0. */
static inline gs_problem_t fp32_nn(int64_t m, int64_t n, int64_t k)
{
    static const float one = 1.f, zero = 0.f;
    gs_problem_t p;
    memset(&p, 0, sizeof p);
    p.entry = GS_EP_SGEMM;
    p.a_type = p.b_type = p.c_type = GS_DT_F32;
    p.compute = GS_CT_F32;
    p.scalar_type = GS_DT_F32;
    p.trans_a = p.trans_b = GS_OP_N;
    p.m = m;
    p.n = n;
    p.k = k;
    p.A = (const void *)(uintptr_t)0x7f0000100000ull;
    p.B = (const void *)(uintptr_t)0x7f0000200000ull;
    p.C = (void *)(uintptr_t)0x7f0000300000ull;
    p.lda = p.ldc = m;
    p.ldb = k;
    p.batch = 1;
    p.alpha = &one;
    p.beta = &zero;
    gs_problem_classify(&p);
    return p;
}

/* The class of a problem built or changed by hand, classified now (the shim
 * classifies every problem it describes; can_implement reads the class). */
static inline const gs_class_t *class_of(gs_problem_t *p)
{
    gs_problem_classify(p);
    return &p->cls;
}

/* The same, for gs_dispatch: the problem, classified now. */
static inline const gs_problem_t *classified(gs_problem_t *p)
{
    gs_problem_classify(p);
    return p;
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
