/* A problem's skinny_params: the one filling of the skinny kernels'
 * parameters, for the skinny family's launches (skinny_launch.cuh) and the
 * FP8 decode kernels' (kernels/fp8/fp8_decode_sm90.cu), which run the same
 * ring kernels. */
#ifndef GS_SKINNY_FILL_CUH
#define GS_SKINNY_FILL_CUH

#include "gs_launch_scalars.cuh"
#include "skinny_config.h"

namespace {

void fill_params(skinny_params &prm, const gs_problem_t *p, int cluster)
{
    prm = skinny_params{};
    prm.A = p->A;
    prm.B = p->B;
    prm.C = p->C;
    prm.m = (int)p->m;
    prm.n = (int)p->n;
    prm.k = (int)p->k;
    prm.lda = p->lda;
    prm.ldb = p->ldb;
    prm.ldc = p->ldc;
    prm.stride_a = p->stride_a;
    prm.stride_b = p->stride_b;
    prm.stride_c = p->stride_c;
    prm.cluster = cluster;
    gs_set_scalars(prm, p);
    prm.bias = p->bias;
    prm.bias_type = (int)p->bias_type;
    prm.reads_at_alpha_zero = p->entry == GS_EP_LT_MATMUL;
}

} // namespace

#endif /* GS_SKINNY_FILL_CUH */
