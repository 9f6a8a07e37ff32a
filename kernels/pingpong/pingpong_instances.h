/* The pingpong family's kernel instances: one translation unit per tile
 * arrangement and input type, so that a build compiles them in parallel
 * (the family's kernels are most of the library's compile time). Each is
 * kernels/pingpong/pingpong_instance.cu built with GS_PP_VARIANT and
 * GS_PP_IN_DTYPE set to one row of this list: the build reads the list from
 * here (CMakeLists.txt, gs_pp_instances), and pingpong_sm90.cu dispatches a
 * plan over it, so a row added here is compiled and reached. */
#ifndef GS_PINGPONG_INSTANCES_H
#define GS_PINGPONG_INSTANCES_H

/* X(PpVariant, gs_dtype_t of A and B), one row a line */
#define GS_PP_INSTANCES(X)                                                                         \
    X(PP_V128, GS_DT_BF16)                                                                         \
    X(PP_V128, GS_DT_F16)                                                                          \
    X(PP_V128_SHORT, GS_DT_BF16)                                                                   \
    X(PP_V128_SHORT, GS_DT_F16)                                                                    \
    X(PP_V256, GS_DT_BF16)                                                                         \
    X(PP_V256, GS_DT_F16)                                                                          \
    X(PP_V192, GS_DT_BF16)                                                                         \
    X(PP_V192, GS_DT_F16)

/* A plan's launch on one instance (C in the input type or fp32). Defined
 * and explicitly instantiated by that instance's translation unit only;
 * the plan's variant and A's type pick the instance (pingpong_sm90.cu). */
template <int VARIANT, int IN_DTYPE>
int pp_launch_instance(const gs_problem_t *p, const gs_device_t *d, const gs_pp::PpPlan &pl);

#endif /* GS_PINGPONG_INSTANCES_H */
