/* See gs_facts.h. */
#include "gs_facts.h"
#include "gs_real.h"

#include <cuda_runtime_api.h>
#include <stdio.h>

#include "gs_build_id.h" /* GS_BUILD_ID: a hash of the sources (cmake/gs_build_id.cmake) */
#ifndef GS_VERSION
#define GS_VERSION "0"
#endif

static void versions(int *cublas, long *cublaslt, int *driver)
{
    cublasStatus_t (*prop)(int, int *) =
        (cublasStatus_t(*)(int, int *))gs_real_symbol(GS_LIB_CUBLAS, "cublasGetProperty");
    size_t (*lt_version)(void) = (size_t(*)(void))gs_real_symbol(GS_LIB_CUBLASLT,
                                                                  "cublasLtGetVersion");
    int maj = 0, min = 0, pat = 0;
    if (prop) {
        prop(0, &maj); /* MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL */
        prop(1, &min);
        prop(2, &pat);
    }
    *cublas = maj * 10000 + min * 100 + pat;
    *cublaslt = lt_version ? (long)lt_version() : 0;
    *driver = 0;
    cudaDriverGetVersion(driver);
}

void gs_facts(const gs_device_t *d, char sep, char *buf, size_t size)
{
    int cublas, driver;
    long cublaslt;
    versions(&cublas, &cublaslt, &driver);
    snprintf(buf, size, "gpu=%s%csms=%d%ccc=%d%d%cdriver=%d%ccublas=%d%ccublaslt=%ld%cshim=%s/%s",
             d->gpu[0] ? d->gpu : "?", sep, d->sm_count, sep, d->cc_major, d->cc_minor, sep,
             driver, sep, cublas, sep, cublaslt, sep, GS_VERSION, GS_BUILD_ID);
}
