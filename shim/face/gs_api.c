/* The C control API (include/gemmshim.h): thin, thread-safe wrappers over
 * the shim's state (routing settings, statistics, report, routing table). */
#include "gemmshim.h"
#include "gs_class_hex.h"
#include "gs_config.h"
#include "gs_dispatch.h"
#include "gs_log.h"
#include "gs_serve.h"
#include "gs_state.h"
#include "gs_workspace.h"
#include "gs_verify.h"
#include "gs_timing.h"
#include "gs_tune_hold.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define GS_API __attribute__((visibility("default")))

_Static_assert(GEMMSHIM_MODE_OFF != GEMMSHIM_MODE_ON, "modes are distinct");

/* Copy s into buf; GEMMSHIM_ERR_TRUNCATED when it did not fit. */
static int give(char *buf, size_t size, const char *s)
{
    if (!buf || !size)
        return GEMMSHIM_ERR_INVALID;
    int n = snprintf(buf, size, "%s", s);
    return n < 0 || (size_t)n >= size ? GEMMSHIM_ERR_TRUNCATED : GEMMSHIM_OK;
}

GS_API int gemmshim_version(void)
{
    return GEMMSHIM_VERSION;
}

GS_API const char *gemmshim_version_string(void)
{
    return GS_VERSION;
}

GS_API int gemmshim_set_mode(gemmshim_mode_t mode)
{
    switch (mode) {
    case GEMMSHIM_MODE_OFF: gs_set_mode(GS_MODE_OFF); return GEMMSHIM_OK;
    case GEMMSHIM_MODE_ON: gs_set_mode(GS_MODE_ON); return GEMMSHIM_OK;
    case GEMMSHIM_MODE_VERIFY: gs_set_mode(GS_MODE_VERIFY); return GEMMSHIM_OK;
    case GEMMSHIM_MODE_AB: gs_set_mode(GS_MODE_AB); return GEMMSHIM_OK;
    default: return GEMMSHIM_ERR_INVALID;
    }
}

GS_API gemmshim_mode_t gemmshim_get_mode(void)
{
    switch (gs_routing().mode) {
    case GS_MODE_OFF: return GEMMSHIM_MODE_OFF;
    case GS_MODE_VERIFY: return GEMMSHIM_MODE_VERIFY;
    case GS_MODE_AB: return GEMMSHIM_MODE_AB;
    default: return GEMMSHIM_MODE_ON;
    }
}

GS_API int gemmshim_set_kernels(const char *list)
{
    if (!list)
        return GEMMSHIM_ERR_INVALID;
    gs_routing_t r = gs_routing();
    char msg[256];
    if (gs_parse_kernel_list(&r, list, msg, sizeof msg)) {
        gs_msg("gemmshim_set_kernels: %s", msg);
        return GEMMSHIM_ERR_INVALID;
    }
    gs_set_kernels(r.allowed);
    return GEMMSHIM_OK;
}

GS_API int gemmshim_get_kernels(char *buf, size_t size)
{
    gs_routing_t r = gs_routing();
    char list[1024];
    gs_format_kernel_list(&r, list, sizeof list);
    return give(buf, size, list);
}

GS_API int gemmshim_last_route(char *buf, size_t size)
{
    return give(buf, size, gs_last_route());
}

GS_API gemmshim_tuning_t gemmshim_last_tuning(void)
{
    return (gemmshim_tuning_t)gs_last_tuning();
}

GS_API int gemmshim_hold_prior(const char *signature, int on)
{
    gs_class_t c;
    if (signature && gs_class_of_hex(signature, strlen(signature), &c))
        return GEMMSHIM_ERR_INVALID;
    gs_cfg(); /* GEMMSHIM_HOLD first: this call, the later one, wins */
    return gs_tune_hold(signature ? &c : NULL, on) ? GEMMSHIM_ERR_UNSUPPORTED : GEMMSHIM_OK;
}

GS_API int gemmshim_get_stats(gemmshim_stats_t *out)
{
    if (!out)
        return GEMMSHIM_ERR_INVALID;
    uint64_t calls[GS_ROUTE_COUNT], fallbacks;
    gs_log_get_stats(calls, &fallbacks);
    memset(out, 0, sizeof *out);
    for (int r = 0; r < GS_ROUTE_COUNT; ++r)
        out->calls += calls[r];
    for (int r = GS_ROUTE_FAMILY0; r < GS_ROUTE_COUNT; ++r)
        out->routed += calls[r];
    out->forwarded = calls[GS_ROUTE_FORWARD];
    out->quick = calls[GS_ROUTE_QUICK];
    out->fallbacks = fallbacks;
    return GEMMSHIM_OK;
}

GS_API int gemmshim_get_resources(gemmshim_resources_t *out)
{
    if (!out || out->size < offsetof(gemmshim_resources_t, workspace_buffers))
        return GEMMSHIM_ERR_INVALID;
    gs_cfg();
    gemmshim_resources_t r;
    memset(&r, 0, sizeof r);
    int buffers = 0;
    size_t bytes = 0;
    gs_workspace_usage(&buffers, &bytes);
    r.workspace_buffers = (uint64_t)buffers;
    r.workspace_bytes = bytes;
    r.timing_events = gs_timing_events();
    r.timing_events_max = gs_timing_events_max();
    r.verify_in_flight = gs_verify_in_flight();
    const size_t n = out->size < sizeof r ? out->size : sizeof r;
    r.size = n;
    memcpy(out, &r, n);
    return GEMMSHIM_OK;
}

GS_API void gemmshim_reset_stats(void)
{
    gs_timing_settle();
    gs_log_reset_stats();
}

GS_API int gemmshim_write_report(const char *path)
{
    if (!path)
        return GEMMSHIM_ERR_INVALID;
    gs_cfg();
    gs_timing_settle();
    return gs_log_write_report(path) ? GEMMSHIM_ERR_IO : GEMMSHIM_OK;
}

GS_API int gemmshim_load_table(const char *path)
{
    if (!path)
        return GEMMSHIM_ERR_INVALID;
    gs_cfg();
    char msg[GS_PATH_MAX + 256];
    const int rc = gs_table_load(path, msg, sizeof msg);
    if (rc) {
        gs_msg("gemmshim_load_table: %s; the table in force stays", msg);
        return rc == GS_TABLE_ERR_IO ? GEMMSHIM_ERR_IO : GEMMSHIM_ERR_FORMAT;
    }
    return GEMMSHIM_OK;
}
