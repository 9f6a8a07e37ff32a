/* The warp-tiled SIMT SGEMM as a kernel family (dispatch/gs_family.h):
 * one configuration; the tile and the stream-K split are chosen per call by
 * the kernel's host code (kernels/sgemm_simt/sgemm_simt.cu). */
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
    pl->kernel = gs_sgemm_simt_name(p);
    pl->workspace_bytes = gs_sgemm_simt_workspace_bytes(p, d);
}

static int run(const gs_plan_t *pl, const gs_problem_t *p, const gs_device_t *d)
{
    (void)pl;
    return gs_sgemm_simt_run(p, d);
}

const gs_family_t gs_family_sgemm_simt = {
    .name = "sgemm_simt",
    .n_configs = 1,
    .config_name = config_name,
    .can_implement = can_implement,
    .plan = plan,
    .run = run,
};
