#include "gs_state.h"
#include "gs_class_hex.h"
#include "gs_dispatch.h"
#include "gs_hold_list.h"
#include "gs_hooks.h"
#include "gs_registry.h"
#include "gs_log.h"
#include "gs_lt_algos.h"
#include "gs_plugin.h"
#include "gs_timing.h"
#include "gs_tune_hold.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static gs_config_t config;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The mutable routing: one word each, so a reader never sees half a value. */
static int cur_mode, cur_policy;
static uint64_t cur_allowed;

static const char *env(const char *name)
{
    return getenv(name);
}

/* The log's summary at exit, once the pending GPU times are in. */
static void summary_at_exit(void)
{
    gs_timing_settle();
    gs_log_summary();
}

typedef struct holds {
    int all;
    size_t held, no_room;
} holds_t;

static void hold_one(void *ctx, const gs_class_t *c)
{
    holds_t *h = ctx;
    if (gs_tune_hold(c, 1))
        ++h->no_room;
    else if (c)
        ++h->held;
    else
        h->all = 1;
}

/* GEMMSHIM_HOLD: signatures held at their prior from the start, as
 * gemmshim_hold_prior holds them; entries that are not a class are left
 * out, named in one line, and the rest held. */
static void hold_from_env(const char *v, int tuned)
{
    holds_t h = {0, 0, 0};
    char bad[512];
    const int left_out = gs_hold_list_parse(v, hold_one, &h, bad, sizeof bad);
    if (left_out)
        gs_msg("GEMMSHIM_HOLD: left out %d %s not \"all\" or a class as the tune cache "
               "keys it (%d lower-case hex digits): %s%s",
               left_out, left_out == 1 ? "entry that is" : "entries that are",
               (int)GS_CLASS_HEX_LEN, bad, h.all || h.held ? "; the others are held" : "");
    if (h.no_room)
        gs_msg("GEMMSHIM_HOLD: %zu signatures not held (no room: %d held at most)", h.no_room,
               GS_TUNE_HOLD_MAX);
    const char *off = tuned ? "" : " (tuned routing is off: nothing changes)";
    if (h.all)
        gs_log_line("GEMMSHIM_HOLD: every signature held at its prior%s", off);
    else if (h.held)
        gs_log_line("GEMMSHIM_HOLD: %zu signatures held at their prior%s", gs_tune_hold_count(),
                    off);
}

static void init(void)
{
    char msg[256];
    /* families added at start-up, before the allow-list is parsed */
    if (gs_registry_add(&gs_family_cublaslt, msg, sizeof msg))
        fprintf(stderr, "gemmshim: cuBLASLt algorithms not registered: %s\n", msg);
    /* then plugins: their names are in the registry GEMMSHIM_KERNELS is read against */
    gs_plugins_load(env("GEMMSHIM_PLUGINS"));
    gs_config_parse(&config, env);
    gs_hooks_init(&config);
    gs_knobs_apply(config.knob_values); /* before any family's first call */
    char tmsg[GS_PATH_MAX + 256];
    if (config.table_path[0] && gs_table_load(config.table_path, tmsg, sizeof tmsg)) {
        /* a routing table that cannot be trusted: pass everything through */
        if (!config.error)
            snprintf(config.error_msg, sizeof config.error_msg, "GEMMSHIM_TABLE: %.400s", tmsg);
        config.error = 1;
        config.routing.mode = GS_MODE_OFF;
    }
    cur_mode = config.routing.mode;
    cur_policy = config.routing.policy;
    cur_allowed = config.routing.allowed;
    gs_log_open(&config);
    gs_plugins_report(); /* first: a plugin left out explains a GEMMSHIM_KERNELS error */
    if (config.error)
        gs_msg("%s; the shim passes every call to cuBLAS", config.error_msg);
    /* before any call is decided */
    hold_from_env(env("GEMMSHIM_HOLD"), config.routing.tune != GS_TUNE_OFF);
    if (config.log_enabled)
        atexit(summary_at_exit);
}

const gs_config_t *gs_cfg(void)
{
    pthread_once(&once, init);
    return &config;
}

gs_routing_t gs_routing(void)
{
    gs_cfg();
    gs_routing_t r;
    r.mode = (gs_mode_t)__atomic_load_n(&cur_mode, __ATOMIC_ACQUIRE);
    r.policy = (gs_policy_t)__atomic_load_n(&cur_policy, __ATOMIC_ACQUIRE);
    r.allowed = __atomic_load_n(&cur_allowed, __ATOMIC_ACQUIRE);
    r.tune = config.routing.tune;
    r.fp8_tiles = config.routing.fp8_tiles;
    return r;
}

void gs_set_mode(gs_mode_t mode)
{
    gs_cfg();
    __atomic_store_n(&cur_mode, (int)mode, __ATOMIC_RELEASE);
}

void gs_set_kernels(uint64_t allowed)
{
    gs_cfg();
    __atomic_store_n(&cur_allowed, allowed, __ATOMIC_RELEASE);
}
