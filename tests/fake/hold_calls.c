/* gemmshim_hold_prior through the shim preloaded, against the recording
 * fake cuBLAS on a simulated H100 (tests/bats/68-sequences.bats).
 *
 *   hold_calls                 one Sgemm NN 256^3, nothing checked (to record its class)
 *   hold_calls CLASS-HEX       the checks below
 *
 * Run with GEMMSHIM_TUNE=cache and a cache deciding sgemm_simt for that
 * class, whose prior forwards (the built-in table measured it 0.63x): the
 * decision serves it ("fallback": a simulated device launches nothing);
 * held, the prior does ("forward", UNTUNED); released, the decision again;
 * every signature held and released likewise; a bad hex is refused. Then
 * threads call while another holds and releases: every call returns the
 * fake's status and is served by one of the two routes. Prints "N passed,
 * M failed"; exits 0 only when nothing failed. */
#include "gemmshim.h"

#include <cublas_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;
#define CHECK(e)                                                                  \
    do {                                                                          \
        if (e)                                                                    \
            __atomic_add_fetch(&passed, 1, __ATOMIC_RELAXED);                     \
        else {                                                                    \
            __atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);                     \
            printf("%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #e);          \
        }                                                                         \
    } while (0)

typedef int (*hold_fn)(const char *, int);
typedef int (*route_fn)(char *, size_t);
typedef gemmshim_tuning_t (*tuning_fn)(void);

static hold_fn hold;
static route_fn last_route;
static tuning_fn last_tuning;

static cublasStatus_t sgemm(cublasHandle_t h)
{
    static const float one = 1.f, zero = 0.f;
    return cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one,
                          (const float *)(uintptr_t)0x7f1000000000ull, 256,
                          (const float *)(uintptr_t)0x7f2000000000ull, 256, &zero,
                          (float *)(uintptr_t)0x7f3000000000ull, 256);
}

/* The route of this thread's call, checked to have succeeded. */
static const char *served(cublasHandle_t h)
{
    static __thread char buf[64];
    CHECK(sgemm(h) == CUBLAS_STATUS_SUCCESS);
    buf[0] = '\0';
    last_route(buf, sizeof buf);
    return buf;
}

static volatile int stop;

static void *caller(void *arg)
{
    cublasHandle_t h;
    (void)arg;
    if (cublasCreate_v2(&h) != CUBLAS_STATUS_SUCCESS) {
        CHECK(!"cublasCreate_v2");
        return NULL;
    }
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        const char *r = served(h);
        CHECK(!strcmp(r, "forward") || !strcmp(r, "fallback"));
    }
    cublasDestroy_v2(h);
    return NULL;
}

int main(int argc, char **argv)
{
    cublasHandle_t h;
    if (cublasCreate_v2(&h) != CUBLAS_STATUS_SUCCESS || sgemm(h) != CUBLAS_STATUS_SUCCESS) {
        printf("hold_calls: the call failed\n");
        return 1;
    }
    if (argc < 2)
        return 0;
    const char *hex = argv[1];
    *(void **)&hold = dlsym(RTLD_DEFAULT, "gemmshim_hold_prior");
    *(void **)&last_route = dlsym(RTLD_DEFAULT, "gemmshim_last_route");
    *(void **)&last_tuning = dlsym(RTLD_DEFAULT, "gemmshim_last_tuning");
    if (!hold || !last_route || !last_tuning) {
        printf("hold_calls: the shim is not preloaded\n");
        return 1;
    }
    /* the decision, then held, released */
    CHECK(!strcmp(served(h), "fallback"));
    CHECK(last_tuning() == GEMMSHIM_TUNING_DECIDED);
    CHECK(hold(hex, 1) == GEMMSHIM_OK);
    CHECK(!strcmp(served(h), "forward"));
    CHECK(last_tuning() == GEMMSHIM_TUNING_UNTUNED);
    CHECK(hold(hex, 0) == GEMMSHIM_OK);
    CHECK(!strcmp(served(h), "fallback"));
    /* every signature */
    CHECK(hold(NULL, 1) == GEMMSHIM_OK);
    CHECK(!strcmp(served(h), "forward"));
    CHECK(hold(NULL, 0) == GEMMSHIM_OK);
    CHECK(!strcmp(served(h), "fallback"));
    /* refused: not a class's hex (cut short, not hex); nothing changes */
    char cut[1024];
    snprintf(cut, sizeof cut, "%.*s", (int)strlen(hex) - 2, hex);
    CHECK(hold(cut, 1) == GEMMSHIM_ERR_INVALID);
    CHECK(hold("zz", 1) == GEMMSHIM_ERR_INVALID);
    CHECK(!strcmp(served(h), "fallback"));
    /* threads calling while this one holds and releases */
    enum { T = 4 };
    pthread_t th[T];
    for (int i = 0; i < T; ++i)
        pthread_create(&th[i], NULL, caller, NULL);
    for (int round = 0; round < 2000; ++round)
        CHECK(hold(round % 3 ? hex : NULL, round % 2) == GEMMSHIM_OK);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < T; ++i)
        pthread_join(th[i], NULL);
    hold(NULL, 0);
    CHECK(!strcmp(served(h), "fallback"));
    cublasDestroy_v2(h);
    printf("%d passed, %d failed\n", passed, failed);
    return failed || !passed;
}
