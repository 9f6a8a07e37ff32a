/* Host side: a call's alpha and beta into a kernel's parameters, one place
 * for every launcher. Host scalars are copied by value (alpha_ptr and
 * beta_ptr null); device scalars are passed as pointers, which the kernel
 * reads after its griddepcontrol wait (an earlier grid on the stream may
 * write them). Prm: any parameter struct with float alpha, beta and const
 * float *alpha_ptr, *beta_ptr. */
#ifndef GS_LAUNCH_SCALARS_CUH
#define GS_LAUNCH_SCALARS_CUH

#include "gs_problem.h"

template <class Prm>
static inline void gs_set_scalars(Prm &prm, const gs_problem_t *p)
{
    if (p->scalars_on_device) {
        prm.alpha = prm.beta = 0.0f;
        prm.alpha_ptr = static_cast<const float *>(p->alpha);
        prm.beta_ptr = static_cast<const float *>(p->beta);
    } else {
        prm.alpha = *static_cast<const float *>(p->alpha);
        prm.beta = *static_cast<const float *>(p->beta);
        prm.alpha_ptr = prm.beta_ptr = nullptr;
    }
}

#endif /* GS_LAUNCH_SCALARS_CUH */
