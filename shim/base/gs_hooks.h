/* What serving asks of the GPU, behind one table: the device's properties,
 * the shim's own allocations (the per-stream workspace, verify's scratch)
 * and the kernel launch. Serving, the workspace and verify call only these.
 *
 * The table in force is chosen once, from the configuration:
 *   the real device (CUDA);
 *   a simulated one, GEMMSHIM_TEST_DEVICE=sm_<cc>:<SMs>, for tests without a
 *     GPU: its properties are the setting's, and it runs no kernel (a
 *     launch fails, so a routed call falls back; nothing is allocated,
 *     verified or timed);
 *   either of these with chosen entries failing, GEMMSHIM_TEST_FAULTS=
 *     device,workspace,scratch,launch, for the fault-injection tests: the
 *     failure takes the same path a real one would (a forwarded call with
 *     its reason, a fallback, a call not verified).
 * Both test settings are part of every build, so the tests exercise the
 * library users run. */
#ifndef GS_HOOKS_H
#define GS_HOOKS_H

#include "gs_config.h"
#include "gs_problem.h"

#include <stddef.h>

/* Launch results that are no CUDA error: the hooks' own. */
#define GS_HOOK_SIMULATED (-2) /* a simulated device runs no kernel */
#define GS_HOOK_INJECTED (-3)  /* GEMMSHIM_TEST_FAULTS=launch */

typedef struct gs_hooks {
    int runs_kernels; /* 0: a simulated device */
    /* 0 or a cudaError_t; fills d (d->present = 0 on failure) */
    int (*device_query)(gs_device_t *d);
    /* cudaMalloc: the workspace; cudaMallocAsync: verify's scratch */
    int (*alloc)(void **ptr, size_t bytes);
    int (*alloc_async)(void **ptr, size_t bytes, void *stream);
    /* runs run(ctx), the decided kernel's launch: 0 or an error */
    int (*launch)(int (*run)(void *ctx), void *ctx);
} gs_hooks_t;

/* Chooses the table from c; called once, by gs_cfg's initialisation. */
void gs_hooks_init(const gs_config_t *c);

/* The table in force (the real device's before gs_hooks_init). */
const gs_hooks_t *gs_hooks(void);

/* A launch result as the log says it: a CUDA error's name, or the hook's. */
const char *gs_hook_error_name(int err);

#endif
