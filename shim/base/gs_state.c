#include "gs_state.h"
#include "gs_dispatch.h"
#include "gs_hooks.h"
#include "gs_registry.h"
#include "gs_log.h"
#include "gs_lt_algos.h"
#include "gs_plugin.h"
#include "gs_timing.h"

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
