/* Stream capture and the shim's own CUDA calls. Under the global capture
 * mode, while this thread *or any other thread* captures in that mode, a
 * "potentially unsafe" call (cudaMalloc, cudaEventQuery, cudaEventSynchronize,
 * ...) fails and invalidates the capture: an application capturing a graph on
 * one stream while it runs eager GEMMs on another would lose its graph to the
 * shim's bookkeeping. The shim makes such calls only for itself (never on a
 * capturing stream), so it relaxes this thread's mode around them and puts
 * the application's mode back. */
#ifndef GS_CAPTURE_H
#define GS_CAPTURE_H

#include <cuda_runtime_api.h>

typedef struct gs_capture_mode {
    enum cudaStreamCaptureMode saved;
    int relaxed; /* 0: the exchange failed, nothing to restore */
} gs_capture_mode_t;

static inline gs_capture_mode_t gs_capture_relax(void)
{
    gs_capture_mode_t m = {cudaStreamCaptureModeRelaxed, 1};
    if (cudaThreadExchangeStreamCaptureMode(&m.saved) != cudaSuccess) {
        cudaGetLastError();
        m.relaxed = 0;
    }
    return m;
}

static inline void gs_capture_restore(gs_capture_mode_t m)
{
    if (m.relaxed)
        cudaThreadExchangeStreamCaptureMode(&m.saved);
}

#endif
