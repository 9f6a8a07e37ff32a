#include "gs_state.h"
#include "gs_log.h"

#include <pthread.h>
#include <stdlib.h>

static gs_config_t config;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *env(const char *name)
{
    return getenv(name);
}

static void init(void)
{
    gs_config_parse(&config, env);
    gs_log_open(&config);
    if (config.error)
        gs_msg("%s; the shim passes every call to cuBLAS", config.error_msg);
    if (config.log_enabled)
        atexit(gs_log_summary);
}

const gs_config_t *gs_cfg(void)
{
    pthread_once(&once, init);
    return &config;
}
