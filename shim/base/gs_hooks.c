#include "gs_hooks.h"
#include "gs_kernels.h"

#include <cuda_runtime_api.h>
#include <string.h>

/* ---- the real device ---- */

static int real_alloc(void **ptr, size_t bytes)
{
    return (int)cudaMalloc(ptr, bytes);
}

static int real_alloc_async(void **ptr, size_t bytes, void *stream)
{
    return (int)cudaMallocAsync(ptr, bytes, (cudaStream_t)stream);
}

static int real_launch(int (*run)(void *), void *ctx)
{
    return run(ctx);
}

static const gs_hooks_t real_hooks = {1, gs_device_query, real_alloc, real_alloc_async,
                                      real_launch};

/* ---- a simulated device (GEMMSHIM_TEST_DEVICE) ---- */

static gs_device_t simulated; /* written once, before any reader */

static int sim_device_query(gs_device_t *d)
{
    *d = simulated;
    return 0;
}

static int sim_alloc(void **ptr, size_t bytes)
{
    (void)bytes;
    *ptr = NULL;
    return (int)cudaErrorNoDevice;
}

static int sim_alloc_async(void **ptr, size_t bytes, void *stream)
{
    (void)stream;
    return sim_alloc(ptr, bytes);
}

static int sim_launch(int (*run)(void *), void *ctx)
{
    (void)run;
    (void)ctx;
    return GS_HOOK_SIMULATED;
}

static const gs_hooks_t sim_hooks = {0, sim_device_query, sim_alloc, sim_alloc_async,
                                     sim_launch};

/* ---- injected faults (GEMMSHIM_TEST_FAULTS) over either ---- */

static const gs_hooks_t *base = &real_hooks;

static int fault_device_query(gs_device_t *d)
{
    memset(d, 0, sizeof *d);
    return (int)cudaErrorNoDevice;
}

static int fault_alloc(void **ptr, size_t bytes)
{
    (void)bytes;
    *ptr = NULL;
    return (int)cudaErrorMemoryAllocation;
}

static int fault_alloc_async(void **ptr, size_t bytes, void *stream)
{
    (void)stream;
    return fault_alloc(ptr, bytes);
}

static int fault_launch(int (*run)(void *), void *ctx)
{
    (void)run;
    (void)ctx;
    return GS_HOOK_INJECTED;
}

static gs_hooks_t faulty; /* base with the chosen entries replaced */
static const gs_hooks_t *in_force = &real_hooks;

void gs_hooks_init(const gs_config_t *c)
{
    if (c->test_device) {
        simulated = c->test_dev;
        base = &sim_hooks;
    }
    in_force = base;
    if (!c->test_faults)
        return;
    faulty = *base;
    if (c->test_faults & GS_FAULT_DEVICE)
        faulty.device_query = fault_device_query;
    if (c->test_faults & GS_FAULT_WORKSPACE)
        faulty.alloc = fault_alloc;
    if (c->test_faults & GS_FAULT_SCRATCH)
        faulty.alloc_async = fault_alloc_async;
    if (c->test_faults & GS_FAULT_LAUNCH)
        faulty.launch = fault_launch;
    in_force = &faulty;
}

const gs_hooks_t *gs_hooks(void)
{
    return in_force;
}

const char *gs_hook_error_name(int err)
{
    switch (err) {
    case GS_HOOK_SIMULATED: return "GEMMSHIM_TEST_DEVICE: simulated device, not launched";
    case GS_HOOK_INJECTED: return "launch failure injected by GEMMSHIM_TEST_FAULTS";
    default: return cudaGetErrorName((cudaError_t)err);
    }
}
