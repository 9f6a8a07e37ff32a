/* A host-only gemmshim plugin for the CPU tests (tests/bats/55-plugins.bats),
 * built in several variants (tests/fake/CMakeLists.txt):
 *   (default)          "fakeplug": fp32 NN calls only, configurations
 *                      fakeplug_nn and fakeplug_nn_wide
 *   FAKE_PLUGIN_ABI    a descriptor claiming that ABI version
 *   FAKE_PLUGIN_NAME   another name (a built-in family's, to be refused)
 *   FAKE_PLUGIN_NO_INIT  no gemmshim_plugin_init at all
 *   FAKE_PLUGIN_THROW  (compiled as C++) can_implement throws
 * can_implement prints one line per call on stderr ("fake_plugin: ..."),
 * and checks what the ABI promises of its view: pointers NULL, sizes set.
 * With FAKE_PLUGIN_REENTER=1 it calls cublasSgemm_v2 (found with dlsym) and
 * prints the status it got. Under the fake cuBLAS nothing is launched, so
 * run is never reached; it would return an error. */
#include <gemmshim_plugin.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef FAKE_PLUGIN_ABI
#define FAKE_PLUGIN_ABI GEMMSHIM_PLUGIN_ABI_VERSION
#endif
#ifndef FAKE_PLUGIN_NAME
#define FAKE_PLUGIN_NAME "fakeplug"
#endif

typedef int (*sgemm_fn)(void *, int, int, int, int, int, const float *, const float *, int,
                        const float *, int, const float *, float *, int);

static int can_implement(const gemmshim_plugin_problem_t *p, const gemmshim_plugin_device_t *d,
                         int config)
{
#ifdef FAKE_PLUGIN_THROW
    throw 42;
#endif
    const int pointers = p->A || p->B || p->C || p->alpha || p->beta || p->stream;
    fprintf(stderr, "fake_plugin: can_implement config %d m=%lld n=%lld k=%lld sm_%d%d%s%s\n",
            config, (long long)p->m, (long long)p->n, (long long)p->k, d->cc_major,
            d->cc_minor, pointers ? " POINTERS SET" : "",
            p->struct_size != sizeof *p || d->struct_size != sizeof *d ? " BAD SIZES" : "");
    const char *re = getenv("FAKE_PLUGIN_REENTER");
    if (re && re[0] == '1') {
        sgemm_fn f = (sgemm_fn)dlsym(RTLD_DEFAULT, "cublasSgemm_v2");
        const float one = 1.f;
        int st = f ? f(NULL, 0, 0, 8, 8, 8, &one, NULL, 8, NULL, 8, &one, NULL, 8) : -1;
        fprintf(stderr, "fake_plugin: cublasSgemm_v2 from inside can_implement returned %d\n",
                st);
    }
    return p->a_type == GEMMSHIM_PLUGIN_F32 && p->c_type == GEMMSHIM_PLUGIN_F32 &&
           p->compute == GEMMSHIM_PLUGIN_COMPUTE_F32 && !p->trans_a && !p->trans_b;
}

static int run(const gemmshim_plugin_problem_t *p, const gemmshim_plugin_device_t *d, int config)
{
    (void)p;
    (void)d;
    (void)config;
    return 1; /* cudaErrorInvalidValue: nothing enqueued */
}

static const char *const names[] = {FAKE_PLUGIN_NAME "_nn", FAKE_PLUGIN_NAME "_nn_wide"};

static const gemmshim_plugin_t plugin = {
    sizeof(gemmshim_plugin_t), FAKE_PLUGIN_ABI, FAKE_PLUGIN_NAME, "0.1", "test-build",
    2, names, can_implement, NULL, run,
};

#ifndef FAKE_PLUGIN_NO_INIT
GEMMSHIM_PLUGIN_ENTRY
{
    (void)host_abi_version;
    *out = &plugin;
    return 0;
}
#else
GEMMSHIM_PLUGIN_EXPORT const gemmshim_plugin_t *fake_plugin_descriptor(void)
{
    return &plugin;
}
#endif
