/* The warp-tiled SIMT SGEMM as a kernel family (dispatch/gs_family.h):
 * one configuration; the tile and the stream-K split are chosen once per
 * call by plan (the kernel's host planner, kernels/sgemm_simt/sgemm_simt_plan.cuh)
 * and carried in the plan to run. */
#include "gs_family.h"
#include "gs_kernels.h"

static const char *config_name(int config)
{
    (void)config;
    return "sgemm_simt";
}

static int can_implement(const gs_class_t *c, const gs_device_t *d, int config)
{
    (void)config;
    return gs_sgemm_simt_can_implement(c, d);
}

static void plan(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *pl)
{
    gs_sgemm_simt_plan(p, d, pl);
}

static int run(const gs_plan_t *pl, const gs_problem_t *p, const gs_device_t *d)
{
    return gs_sgemm_simt_run_plan(pl, p, d);
}

const gs_family_t gs_family_sgemm_simt = {
    .name = "sgemm_simt",
    .n_configs = 1,
    .config_name = config_name,
    .can_implement = can_implement,
    .plan = plan,
    .run = run,
    /* Its readings do not carry to neighbours: of 22 shapes within the
     * table's span of a reading (multiples of 8 from 728 to 5792) that the
     * table routed here, 17 ran at 0.67-0.96x cuBLAS and 5 at 0.97-1.03x;
     * the squares' readings rise and fall between 768 (0.75x), 1024
     * (1.01x) and 1536 (0.85x) (bench/NOTES.md) */
    .reading_shape_only = 1,
};
