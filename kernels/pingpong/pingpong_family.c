/* The Hopper pingpong bf16/fp16 GEMM as a kernel family
 * (dispatch/gs_family.h): one configuration per tile arrangement
 * (gs_pingpong_config_t); split-K, stream-K and the grid are chosen once
 * per call by plan (the kernel's host planner, kernels/pingpong/pingpong_plan.cuh)
 * and carried in the plan to run. */
#include "gs_family.h"
#include "gs_kernels.h"

static const char *config_name(int config)
{
    return gs_pingpong_name((gs_pingpong_config_t)config);
}

static int can_implement(const gs_class_t *c, const gs_device_t *d, int config)
{
    return gs_pingpong_can_implement(c, d, (gs_pingpong_config_t)config);
}

static void plan(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *pl)
{
    gs_pingpong_plan(p, d, pl);
}

static int run(const gs_plan_t *pl, const gs_problem_t *p, const gs_device_t *d)
{
    return gs_pingpong_run_plan(pl, p, d);
}

/* A reading taken at `measured` holds for p scaled down by how much less of
 * the persistent grid p keeps busy (never scaled up): 4096x2304x4096 is
 * within the table's span of 4096x2048x4096 (1.01x) but deals 288 tiles of
 * 256x128 in 3 waves of 132 SMs where 4096x2048 deals 256 in 2; it ran at
 * 0.77x, and its scaled reading is 0.76x. And by how much more of its
 * tiles' work falls past m, n or k (never up): cooperative routes on n of
 * 864, 1448 and 1720 (6.75, 11.3 and 13.4 columns of tiles) and 192-wide
 * ones at k = 88 and 104 (two k-blocks of 64, the second part empty) took
 * readings of whole-tile shapes and ran at 0.75-0.96x (bench/NOTES.md). */
static double reading_scale(const gs_problem_t *p, const gs_problem_t *measured,
                            const gs_device_t *d, int config)
{
    const gs_pingpong_config_t cfg = (gs_pingpong_config_t)config;
    /* A reading holds only for a call planned as the measured shape was
     * (the same split of k, stream-K or not): deep-K neighbours such as
     * 1216x864x32768 and 1216x1216x32768, split otherwise than the
     * readings they took, ran at 0.87-0.96x (bench/NOTES.md). */
    if (!gs_pingpong_same_plan(p, measured, d, cfg))
        return 0.0;
    const double p_eff = gs_pingpong_wave_efficiency(p, d, cfg);
    const double m_eff = gs_pingpong_wave_efficiency(measured, d, cfg);
    const double p_fill = gs_pingpong_tile_fill(p, cfg),
                 m_fill = gs_pingpong_tile_fill(measured, cfg);
    return (p_eff < m_eff ? p_eff / m_eff : 1.0) * (p_fill < m_fill ? p_fill / m_fill : 1.0);
}

/* GEMMSHIM_DEV_PINGPONG_*: kernels/pingpong/pingpong_sm90.cu says what each does. */
static const gs_knob_t knobs[] = {
    {"GROUP", "GEMMSHIM_PP_GROUP", 0, 0, 65536, NULL, 0},
    {"DEFER", "GEMMSHIM_PP_DEFER", 1, 0, 1, NULL, 0},
    {"MAX_CTAS", "GEMMSHIM_PP_MAX_CTAS", 0, 0, 65536, NULL, 0},
    {"SK", "GEMMSHIM_PP_SK", 1, 0, 3, NULL, 0},
};

static void set_knobs(const int *v)
{
    gs_pingpong_set_knobs(v[0], v[1], v[2], v[3]);
}

const gs_family_t gs_family_pingpong = {
    .name = "pingpong",
    .n_configs = GS_PINGPONG_CONFIG_COUNT,
    .config_name = config_name,
    .can_implement = can_implement,
    .plan = plan,
    .run = run,
    .n_knobs = sizeof knobs / sizeof knobs[0],
    .knobs = knobs,
    .set_knobs = set_knobs,
    .reading_scale = reading_scale,
};
