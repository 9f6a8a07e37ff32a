/* A plugin's family (shim/plugins/gs_plugin.c's adapter around
 * tests/fake/fake_plugin.c, which takes fp32 NN calls) refuses FP8: ABI
 * version 1 has no name for those types, so the adapter answers for the
 * plugin and never asks it. Host code only: nothing runs on a GPU. */
#include "dispatch_fixtures.h"
#include "gs_family.h"
#include "gs_plugin.h"
#include "gs_registry.h"
#include "gs_test.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_plugin_family FAKE_DIR\n");
        return 2;
    }
    char lib[4096];
    snprintf(lib, sizeof lib, "%s/libfake_plugin.so", argv[1]);
    gs_plugins_load(lib);
    const gs_family_t *f = gs_family_find("fakeplug");
    if (!CHECK(f != NULL))
        return GS_TEST_DONE();
    const gs_device_t d = device(9, 0, 132);
    gs_problem_t p = fp32_nn(1000, 1000, 1000);
    gs_problem_classify(&p);
    CHECK(f->can_implement(&p.cls, &d, 0)); /* the positive control */
    const gs_dtype_t fp8[] = {GS_DT_E4M3, GS_DT_E5M2};
    const gs_dtype_t outs[] = {GS_DT_F32, GS_DT_BF16, GS_DT_E4M3};
    for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b)
            for (int o = 0; o < 3; ++o)
                for (int c = 0; c < f->n_configs; ++c) {
                    gs_problem_t q = p;
                    q.entry = GS_EP_LT_MATMUL;
                    q.a_type = fp8[a];
                    q.b_type = fp8[b];
                    q.c_type = outs[o];
                    gs_problem_classify(&q);
                    CHECK(!f->can_implement(&q.cls, &d, c));
                }
    return GS_TEST_DONE();
}
