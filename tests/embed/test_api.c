/* The C control API (include/gemmshim.h), in an application that links the
 * shim ahead of cuBLAS (here the recording fake): link-time drop-in.
 * Run with GEMMSHIM_TEST_DEVICE=sm_90:132 (a simulated H100: routed calls
 * are chosen but never launched, so they "fall back") and the default
 * table policy. */
#include "gemmshim.h"

#include <cublas_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int passed, failed;
#define CHECK(e)                                                                  \
    do {                                                                          \
        if (e)                                                                    \
            ++passed;                                                             \
        else {                                                                    \
            ++failed;                                                             \
            printf("%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #e);          \
        }                                                                         \
    } while (0)

static cublasHandle_t h;
static float alpha = 1.f, beta = 0.f;
/* never dereferenced: the fake records, the simulated device launches nothing */
static float *const A = (float *)0x10000, *const B = (float *)0x20000, *const C = (float *)0x30000;

static cublasStatus_t sgemm(int m, const float *a)
{
    return cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, m, 256, 256, a, A, 256, B, 256, &beta, C,
                          256);
}

static const char *route(void)
{
    static char buf[128];
    CHECK(gemmshim_last_route(buf, sizeof buf) == GEMMSHIM_OK);
    return buf;
}

static void *other_thread(void *arg)
{
    (void)arg;
    char buf[64];
    gemmshim_last_route(buf, sizeof buf);
    CHECK(buf[0] == '\0'); /* per thread: nothing ran on this one yet */
    gemmshim_set_kernels("none");
    sgemm(256, &alpha);
    CHECK(!strcmp(route(), "forward"));
    gemmshim_set_kernels("all");
    return NULL;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

int main(void)
{
    char buf[256], path[64];
    gemmshim_stats_t st;

    /* version, and the dlsym way of finding the API */
    CHECK(gemmshim_version() == GEMMSHIM_VERSION);
    snprintf(buf, sizeof buf, "%d.%d.%d", GEMMSHIM_VERSION_MAJOR, GEMMSHIM_VERSION_MINOR,
             GEMMSHIM_VERSION_PATCH);
    CHECK(!strcmp(gemmshim_version_string(), buf));
    CHECK(dlsym(RTLD_DEFAULT, "gemmshim_version") == (void *)gemmshim_version);

    CHECK(cublasCreate_v2(&h) == CUBLAS_STATUS_SUCCESS);
    CHECK(!strcmp(route(), "")); /* before the first call */
    CHECK(gemmshim_last_tuning() == GEMMSHIM_TUNING_NONE);

    /* the built-in table measured 256^3 fp32 NN slower than cuBLAS: forwarded */
    CHECK(gemmshim_get_mode() == GEMMSHIM_MODE_ON);
    CHECK(sgemm(256, &alpha) == CUBLAS_STATUS_SUCCESS);
    CHECK(!strcmp(route(), "forward"));
    CHECK(gemmshim_last_tuning() == GEMMSHIM_TUNING_NONE); /* GEMMSHIM_TUNE is off */

    /* a routing table that says our kernel wins there: chosen (then, on the
     * simulated device, not launched: "fallback") */
    snprintf(path, sizeof path, "/tmp/gs_api_table_%d", (int)getpid());
    write_file(path, "# test table\ngemmshim-table 1\n"
                     "sgemm_simt - 90 f32 NN 256 256 256 1.500  # made up for the test\n");
    CHECK(gemmshim_load_table(path) == GEMMSHIM_OK);
    CHECK(sgemm(256, &alpha) == CUBLAS_STATUS_SUCCESS);
    CHECK(!strcmp(route(), "fallback"));
    /* malformed: refused, the loaded table stays */
    write_file(path, "gemmshim-table 1\nsgemm_simt - 90 f32 NX 256 256 256 1.5\n");
    CHECK(gemmshim_load_table(path) == GEMMSHIM_ERR_FORMAT);
    write_file(path, "gemmshim-table 2\n");
    CHECK(gemmshim_load_table(path) == GEMMSHIM_ERR_FORMAT);
    CHECK(gemmshim_load_table("/nonexistent/table") == GEMMSHIM_ERR_IO);
    /* a directory, and a FIFO (no writer: opening it to read would block
     * forever), are I/O errors, answered at once */
    CHECK(gemmshim_load_table("/tmp") == GEMMSHIM_ERR_IO);
    char fifo[64];
    snprintf(fifo, sizeof fifo, "/tmp/gs_api_fifo_%d", (int)getpid());
    if (mkfifo(fifo, 0600) == 0) {
        alarm(20); /* a hang fails the test rather than stalling it */
        CHECK(gemmshim_load_table(fifo) == GEMMSHIM_ERR_IO);
        alarm(0);
        unlink(fifo);
    } else {
        CHECK(!"mkfifo failed");
    }
    CHECK(gemmshim_load_table(NULL) == GEMMSHIM_ERR_INVALID);
    sgemm(256, &alpha);
    CHECK(!strcmp(route(), "fallback"));
    unlink(path);

    /* mode: off forwards; the reserved modes are refused, mode unchanged */
    CHECK(gemmshim_set_mode(GEMMSHIM_MODE_OFF) == GEMMSHIM_OK);
    CHECK(gemmshim_get_mode() == GEMMSHIM_MODE_OFF);
    sgemm(256, &alpha);
    CHECK(!strcmp(route(), "forward"));
    CHECK(gemmshim_set_mode(GEMMSHIM_MODE_VERIFY) == GEMMSHIM_OK);
    CHECK(gemmshim_get_mode() == GEMMSHIM_MODE_VERIFY);
    sgemm(256, &alpha); /* routed as in ON (simulated device: nothing runs, none verified) */
    CHECK(!strcmp(route(), "fallback"));
    CHECK(gemmshim_set_mode(GEMMSHIM_MODE_AB) == GEMMSHIM_OK);
    CHECK(gemmshim_get_mode() == GEMMSHIM_MODE_AB);
    sgemm(256, &alpha); /* routed as in ON (simulated device: nothing runs, nothing timed) */
    CHECK(!strcmp(route(), "fallback"));
    CHECK(gemmshim_set_mode(GEMMSHIM_MODE_OFF) == GEMMSHIM_OK);
    CHECK(gemmshim_set_mode((gemmshim_mode_t)42) == GEMMSHIM_ERR_INVALID);
    CHECK(gemmshim_get_mode() == GEMMSHIM_MODE_OFF);
    CHECK(gemmshim_set_mode(GEMMSHIM_MODE_ON) == GEMMSHIM_OK);
    sgemm(256, &alpha);
    CHECK(!strcmp(route(), "fallback"));

    /* kernel allow-list */
    CHECK(gemmshim_get_kernels(buf, sizeof buf) == GEMMSHIM_OK);
    /* the registry's order; the allow-list, so the opt-in FP8 family too
     * (it serves calls only with GEMMSHIM_FP8_TILES=1, unset here) */
    CHECK(!strcmp(buf, "skinny,pingpong,sgemm_simt,fp8,cublaslt"));
    CHECK(gemmshim_set_kernels(buf) == GEMMSHIM_OK); /* what get writes, set takes */
    CHECK(gemmshim_set_kernels("bogus") == GEMMSHIM_ERR_INVALID);
    CHECK(gemmshim_set_kernels(NULL) == GEMMSHIM_ERR_INVALID);
    gemmshim_get_kernels(buf, sizeof buf);
    CHECK(!strcmp(buf, "skinny,pingpong,sgemm_simt,fp8,cublaslt")); /* unchanged */
    CHECK(gemmshim_set_kernels("pingpong_coop_256x128x64") == GEMMSHIM_OK);
    gemmshim_get_kernels(buf, sizeof buf);
    CHECK(!strcmp(buf, "pingpong_coop_256x128x64"));
    sgemm(256, &alpha);
    CHECK(!strcmp(route(), "forward")); /* fp32: no allowed kernel */
    CHECK(gemmshim_get_kernels(buf, 4) == GEMMSHIM_ERR_TRUNCATED);
    CHECK(gemmshim_set_kernels("all") == GEMMSHIM_OK);

    /* quick returns and the shim's own answer to a NULL alpha */
    CHECK(sgemm(0, &alpha) == CUBLAS_STATUS_SUCCESS);
    CHECK(!strcmp(route(), "quick_return"));
    CHECK(sgemm(256, NULL) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(!strcmp(route(), "quick_return"));

    /* per-thread route */
    pthread_t t;
    const int created = pthread_create(&t, NULL, other_thread, NULL);
    if (created == 0)
        pthread_join(t, NULL);
    CHECK(created == 0); /* after the join: the counters are not atomic */
    CHECK(!strcmp(route(), "quick_return")); /* this thread's stays */

    /* statistics: reset, then exactly what happened */
    gemmshim_reset_stats();
    CHECK(gemmshim_get_stats(&st) == GEMMSHIM_OK);
    CHECK(st.calls == 0 && st.routed == 0 && st.forwarded == 0 && st.fallbacks == 0);
    sgemm(256, &alpha); /* fallback (counts as forwarded) */
    sgemm(0, &alpha);   /* quick */
    gemmshim_set_mode(GEMMSHIM_MODE_OFF);
    sgemm(256, &alpha); /* forwarded */
    gemmshim_set_mode(GEMMSHIM_MODE_ON);
    CHECK(gemmshim_get_stats(&st) == GEMMSHIM_OK);
    CHECK(st.calls == 3);
    CHECK(st.forwarded == 2);
    CHECK(st.fallbacks == 1);
    CHECK(st.quick == 1);
    CHECK(st.routed == 0); /* nothing runs on a simulated device */
    CHECK(gemmshim_get_stats(NULL) == GEMMSHIM_ERR_INVALID);

    /* the shim's own resources: none on a simulated device; the caller's
     * size bounds what is written (the struct can grow) */
    gemmshim_resources_t res;
    memset(&res, 0xab, sizeof res);
    res.size = sizeof res;
    CHECK(gemmshim_get_resources(&res) == GEMMSHIM_OK);
    CHECK(res.size == sizeof res);
    CHECK(res.workspace_buffers == 0 && res.workspace_bytes == 0);
    CHECK(res.timing_events == 0 && res.verify_in_flight == 0);
    CHECK(res.timing_events_max == 512); /* 256 timing slots of two events */
    memset(&res, 0xab, sizeof res);
    res.size = offsetof(gemmshim_resources_t, timing_events); /* an older, smaller struct */
    CHECK(gemmshim_get_resources(&res) == GEMMSHIM_OK);
    CHECK(res.workspace_buffers == 0);
    CHECK(res.timing_events == 0xababababababababull); /* past its size: untouched */
    res.size = 1;
    CHECK(gemmshim_get_resources(&res) == GEMMSHIM_ERR_INVALID);
    CHECK(gemmshim_get_resources(NULL) == GEMMSHIM_ERR_INVALID);

    /* the report: one line per signature with its count, then the summary */
    snprintf(path, sizeof path, "/tmp/gs_api_report_%d", (int)getpid());
    CHECK(gemmshim_write_report(path) == GEMMSHIM_OK);
    static char report[8192];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(report, 1, sizeof report - 1, f) : 0;
    report[n] = '\0';
    if (f)
        fclose(f);
    CHECK(strstr(report, "         2 x cublasSgemm_v2 NN f32,f32->f32") != NULL);
    CHECK(strstr(report, "summary: 3 calls") != NULL);
    unlink(path);
    CHECK(gemmshim_write_report("/nonexistent/dir/report") == GEMMSHIM_ERR_IO);

    cublasDestroy_v2(h);
    printf("%d passed, %d failed\n", passed, failed);
    return failed || !passed ? 1 : 0;
}
