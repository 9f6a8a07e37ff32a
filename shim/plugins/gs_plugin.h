/* Plugins: kernel families in libraries outside this tree
 * (include/gemmshim_plugin.h, GEMMSHIM_PLUGINS), each wrapped into a
 * gs_family_t and added to the registry at start-up. */
#ifndef GS_PLUGIN_H
#define GS_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

/* Opens the libraries GEMMSHIM_PLUGINS lists (the variable's value; NULL:
 * none) and adds each acceptable one to the registry, in the list's order.
 * Called once, by gs_cfg's initialisation, before the configuration is
 * parsed (GEMMSHIM_KERNELS may name the plugins). A malformed list loads
 * nothing: the configuration rejects it. A library that cannot be used is
 * left out with one line, said by gs_plugins_report. */
void gs_plugins_load(const char *list);

/* One line per library left out, and one per plugin added when logging;
 * called once the log is open. */
void gs_plugins_report(void);

/* The added plugins' names, versions and build ids folded into one word:
 * part of every decision key (0 without plugins). */
uint64_t gs_plugins_key(void);

/* The re-entry guard: 1 when the calling thread is inside one of a
 * plugin's functions, i.e. the plugin is calling cuBLAS. The call is then
 * to be refused without routing or forwarding it; the plugin's answer
 * counts as a failure, and the first time is said once per plugin. */
int gs_plugin_reentered(void);

/* C++ exceptions stop here (shim/plugins/gs_plugin_call.cpp): each calls fn and
 * sets *threw (and returns 0) when an exception escaped it. */
struct gemmshim_plugin_problem;
struct gemmshim_plugin_device;
typedef int (*gs_plugin_int_fn)(const struct gemmshim_plugin_problem *,
                                const struct gemmshim_plugin_device *, int);
typedef size_t (*gs_plugin_size_fn)(const struct gemmshim_plugin_problem *,
                                    const struct gemmshim_plugin_device *, int);
#ifdef __cplusplus
extern "C" {
#endif
int gs_plugin_call_int(gs_plugin_int_fn fn, const struct gemmshim_plugin_problem *p,
                       const struct gemmshim_plugin_device *d, int config, int *threw);
size_t gs_plugin_call_size(gs_plugin_size_fn fn, const struct gemmshim_plugin_problem *p,
                           const struct gemmshim_plugin_device *d, int config, int *threw);
#ifdef __cplusplus
}
#endif

#endif
