/* One instance of the pingpong family (pingpong_instances.h): the kernels
 * of one tile arrangement (GS_PP_VARIANT, a PpVariant) for one input type
 * (GS_PP_IN_DTYPE, a gs_dtype_t), compiled once per row of
 * GS_PP_INSTANCES with those two defined by the build. The kernels are
 * those of the one-file family, instantiation for instantiation: their
 * SASS is unchanged (tests/sass). */
#include "pingpong_family.cuh"

#if !defined(GS_PP_VARIANT) || !defined(GS_PP_IN_DTYPE)
#error "pingpong_instance.cu is built once per row of GS_PP_INSTANCES, with GS_PP_VARIANT and GS_PP_IN_DTYPE set"
#endif

namespace {

template <int VARIANT> struct CfgOf { using type = Cfg128x128; };
template <> struct CfgOf<PP_V128_SHORT> { using type = Cfg128x128Short; };
template <> struct CfgOf<PP_V256> { using type = Cfg256x128; };
template <> struct CfgOf<PP_V192> { using type = Cfg192x128; };

template <int IN_DTYPE> struct InOf;
template <> struct InOf<GS_DT_BF16> { using type = __nv_bfloat16; };
template <> struct InOf<GS_DT_F16> { using type = __half; };

} // namespace

template <int VARIANT, int IN_DTYPE>
int pp_launch_instance(const gs_problem_t *p, const gs_device_t *d, const gs_pp::PpPlan &pl)
{
    return launch_in<typename CfgOf<VARIANT>::type, typename InOf<IN_DTYPE>::type>(p, d, pl);
}

template int pp_launch_instance<GS_PP_VARIANT, GS_PP_IN_DTYPE>(const gs_problem_t *, const gs_device_t *,
                                                              const gs_pp::PpPlan &);
