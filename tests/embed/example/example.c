/* Links gemmshim ahead of cuBLAS, issues one GEMM, asks which route served it. */
#include <gemmshim.h>

#include <cublas_api.h>
#include <stdio.h>

int main(void)
{
    cublasHandle_t h;
    float one = 1.f, zero = 0.f;
    if (cublasCreate_v2(&h) != CUBLAS_STATUS_SUCCESS)
        return 1;
    cublasStatus_t st = cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one,
                                       (const float *)0x1000, 64, (const float *)0x2000, 64,
                                       &zero, (float *)0x3000, 64);
    char route[64];
    gemmshim_last_route(route, sizeof route);
    printf("example: gemmshim %s, status %d, route %s\n", gemmshim_version_string(), (int)st,
           route);
    cublasDestroy_v2(h);
    return st == CUBLAS_STATUS_SUCCESS && route[0] ? 0 : 1;
}
