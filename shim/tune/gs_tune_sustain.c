/* The sustained check's blocks on the GPU; see gs_tune_sustain.h. */
#include "gs_tune_sustain.h"

#include <cuda_runtime_api.h>
#include <stdio.h>

enum { BLOCKS_MAX = 2 * GS_SUSTAIN_ROUNDS * 4 };

int gs_tune_sustain_time(void *stream, const gs_sustain_plan_t *plan, gs_sustain_call_fn call,
                         void *ctx, double *prior_ms, double *cand_ms, char *why, size_t why_size)
{
    const int blocks = 2 * plan->rounds, timed = plan->calls - plan->settle;
    if (plan->calls < 1 || timed < 1 || blocks > BLOCKS_MAX) {
        snprintf(why, why_size, "no sustained plan");
        return -1;
    }
    cudaStream_t st = (cudaStream_t)stream;
    /* each block's timed part: an event after its settling calls, one at its end */
    cudaEvent_t ev[2 * BLOCKS_MAX] = {0};
    int rc = 0;
    for (int i = 0; i < 2 * blocks && !rc; ++i)
        rc = cudaEventCreate(&ev[i]) != cudaSuccess;
    for (int b = 0; b < blocks && !rc; ++b) {
        /* round r = b / 2: the prior first when r is even, so a drift
         * within the check weighs on both sides alike */
        const int round = b / 2, challenger = (b % 2) ^ (round % 2);
        for (int i = 0; i < plan->calls && !rc; ++i) {
            if (i == plan->settle)
                rc = cudaEventRecord(ev[2 * b], st) != cudaSuccess;
            if (!rc && call(ctx, challenger)) {
                snprintf(why, why_size, "the %s could not be enqueued",
                         challenger ? "challenger" : "prior");
                rc = 2;
            }
        }
        if (!rc)
            rc = cudaEventRecord(ev[2 * b + 1], st) != cudaSuccess;
    }
    if (!rc)
        rc = cudaEventSynchronize(ev[2 * blocks - 1]) != cudaSuccess;
    for (int b = 0; b < blocks && !rc; ++b) {
        float ms = 0.f;
        rc = cudaEventElapsedTime(&ms, ev[2 * b], ev[2 * b + 1]) != cudaSuccess;
        const int round = b / 2, challenger = (b % 2) ^ (round % 2);
        (challenger ? cand_ms : prior_ms)[round] = (double)ms / timed;
    }
    if (rc == 1) {
        const cudaError_t e = cudaGetLastError();
        snprintf(why, why_size, "CUDA error %d (%s)", (int)e, cudaGetErrorName(e));
    }
    /* the blocks may still run after an error: destroying an event that
     * work still refers to is allowed (its resources go when it is done) */
    for (int i = 0; i < 2 * blocks; ++i)
        if (ev[i])
            cudaEventDestroy(ev[i]);
    return rc ? -1 : 0;
}
