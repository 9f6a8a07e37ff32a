/* The decode (skinny) GEMM as a kernel family (dispatch/gs_family.h): one
 * configuration; the n bucket, the ring (mma.sync or wgmma) and the k split
 * are chosen once per call by plan (the kernel's host planner,
 * kernels/skinny/skinny_plan.cuh) and carried in the plan to run. */
#include "gs_family.h"
#include "gs_kernels.h"

static const char *config_name(int config)
{
    (void)config;
    return "skinny";
}

static int can_implement(const gs_class_t *c, const gs_device_t *d, int config)
{
    (void)config;
    return gs_skinny_can_implement(c, d);
}

static void plan(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *pl)
{
    gs_skinny_plan(p, d, pl);
}

static int run(const gs_plan_t *pl, const gs_problem_t *p, const gs_device_t *d)
{
    return gs_skinny_run_plan(pl, p, d);
}

/* GEMMSHIM_DEV_SKINNY_*: kernels/skinny/skinny.cu says what each does; a forced
 * split is taken only where the sweeps ran it. */
static const int ck_values[] = {0, 1, 2, 4, 8}, ws_values[] = {0, 2, 4, 8};
static const gs_knob_t knobs[] = {
    {"WG", "GEMMSHIM_SKINNY_WG", 1, 0, 1, NULL, 0},
    {"CK", "GEMMSHIM_SKINNY_WG_CK", 0, 0, 8, ck_values, sizeof ck_values / sizeof ck_values[0]},
    {"WS", "GEMMSHIM_SKINNY_WS", 0, 0, 8, ws_values, sizeof ws_values / sizeof ws_values[0]},
};

static void set_knobs(const int *v)
{
    gs_skinny_set_knobs(v[0], v[1], v[2]);
}

const gs_family_t gs_family_skinny = {
    .name = "skinny",
    .n_configs = 1,
    .config_name = config_name,
    .can_implement = can_implement,
    .plan = plan,
    .run = run,
    .n_knobs = sizeof knobs / sizeof knobs[0],
    .knobs = knobs,
    .set_knobs = set_knobs,
    /* its rings read rows of any 16-byte multiple at the same speed: decode
     * shapes with k of 3448 and 4872 (rows of 6896 and 9744 bytes) that
     * took readings of k = 4096 ran at 1.9-3.0x cuBLAS (bench/NOTES.md) */
    .reading_rows_16 = 1,
};
