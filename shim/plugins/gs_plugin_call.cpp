// The plugin functions are called through here so that a C++ exception a
// plugin lets escape (against its contract, include/gemmshim_plugin.h)
// ends as a failed call instead of unwinding through the shim's C frames.
#include <cstddef>

#include "gs_plugin.h"

extern "C" int gs_plugin_call_int(gs_plugin_int_fn fn, const gemmshim_plugin_problem *p,
                                  const gemmshim_plugin_device *d, int config, int *threw)
{
    try {
        return fn(p, d, config);
    } catch (...) {
        *threw = 1;
        return 0;
    }
}

extern "C" size_t gs_plugin_call_size(gs_plugin_size_fn fn, const gemmshim_plugin_problem *p,
                                      const gemmshim_plugin_device *d, int config, int *threw)
{
    try {
        return fn(p, d, config);
    } catch (...) {
        *threw = 1;
        return 0;
    }
}
