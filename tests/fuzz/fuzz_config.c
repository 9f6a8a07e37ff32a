/* libFuzzer target: the GEMMSHIM_* environment parser (dispatch/gs_config.c).
 *
 * The input is an environment: records "NAME=VALUE" separated by '\n' or
 * NUL; a NAME that gs_config_parse asks for gets its VALUE (the last record
 * of that name wins, as in an environment), anything else is ignored. Checks,
 * beyond ASan/UBSan: the result and `error` agree; an error turns routing off
 * and says why in one NUL-terminated line; every accepted value is within
 * what its variable allows; a parse depends on the environment alone (the
 * same environment twice gives the same configuration, whatever the struct
 * held before); the test device's numbers are the ones written (not an
 * overflowed sscanf %d). */
#include "gs_config.h"
#include "gs_registry.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(cond)                                                               \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "fuzz_config: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                \
        }                                                                           \
    } while (0)

static const char *const names[] = {
    "GEMMSHIM_LOG",         "GEMMSHIM_MODE",         "GEMMSHIM_POLICY",
    "GEMMSHIM_KERNELS",     "GEMMSHIM_STRICT",       "GEMMSHIM_LOG_TIMING",
    "GEMMSHIM_CUBLAS",      "GEMMSHIM_CUBLASLT",     "GEMMSHIM_VERIFY_FAIL",
    "GEMMSHIM_VERIFY_TOL",  "GEMMSHIM_REPORT",       "GEMMSHIM_TABLE",
    "GEMMSHIM_WORKSPACE_MB", "GEMMSHIM_DLSYM",       "GEMMSHIM_PDL",
    "GEMMSHIM_TEST_DEVICE", "GEMMSHIM_TEST_FAULTS", "GEMMSHIM_PLUGINS",
    "GEMMSHIM_TUNE", "GEMMSHIM_TUNE_CACHE", "GEMMSHIM_TUNE_PAIRS", "GEMMSHIM_TUNE_LT_ALGOS",
    "GEMMSHIM_TUNE_BUDGET_MS", "GEMMSHIM_TUNE_SCRATCH_MB", "GEMMSHIM_TUNE_SHARE",
    "GEMMSHIM_TUNE_SUSTAIN_MS",
    "GEMMSHIM_RECORD",       "GEMMSHIM_FP8_TILES",
    /* the families' developer knobs and their earlier names */
    "GEMMSHIM_DEV_PINGPONG_GROUP", "GEMMSHIM_DEV_PINGPONG_DEFER", "GEMMSHIM_DEV_PINGPONG_MAX_CTAS",
    "GEMMSHIM_DEV_PINGPONG_SK", "GEMMSHIM_DEV_SKINNY_WG", "GEMMSHIM_DEV_SKINNY_CK",
    "GEMMSHIM_DEV_SKINNY_WS", "GEMMSHIM_DEV_FP8_CK", "GEMMSHIM_PP_GROUP", "GEMMSHIM_PP_DEFER", "GEMMSHIM_PP_MAX_CTAS",
    "GEMMSHIM_PP_SK", "GEMMSHIM_SKINNY_WG", "GEMMSHIM_SKINNY_WG_CK", "GEMMSHIM_SKINNY_WS",
};
#define N_NAMES (sizeof names / sizeof names[0])

/* The environment of the current input: one value (a heap copy, exactly
 * its length, so ASan sees any read past it) per name, NULL if unset. */
static char *values[N_NAMES];

static const char *fake_getenv(const char *name)
{
    for (size_t i = 0; i < N_NAMES; ++i)
        if (!strcmp(names[i], name))
            return values[i];
    /* a variable this harness does not know: add it to names[] */
    fprintf(stderr, "fuzz_config: gs_config_parse asked for %s\n", name);
    abort();
}

static void set_env(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < N_NAMES; ++i) {
        free(values[i]);
        values[i] = NULL;
    }
    size_t pos = 0;
    while (pos < size) {
        size_t end = pos;
        while (end < size && data[end] != '\n' && data[end] != '\0')
            ++end;
        const uint8_t *eq = memchr(data + pos, '=', end - pos);
        if (eq) {
            const size_t name_len = (size_t)(eq - (data + pos));
            for (size_t i = 0; i < N_NAMES; ++i)
                if (strlen(names[i]) == name_len && !memcmp(names[i], data + pos, name_len)) {
                    const size_t len = end - (size_t)(eq + 1 - data);
                    free(values[i]);
                    values[i] = malloc(len + 1);
                    memcpy(values[i], eq + 1, len);
                    values[i][len] = '\0';
                }
        }
        pos = end + 1;
    }
}

static int terminated(const char *s, size_t size)
{
    return memchr(s, '\0', size) != NULL;
}

/* "sm_<cc>:<sms>" as written, digits read without overflow: -1 when not of
 * that form or a number does not fit in an int. */
static int test_device_numbers(const char *v, long long *cc, long long *sms)
{
    if (strncmp(v, "sm_", 3))
        return -1;
    char *end;
    *cc = strtoll(v + 3, &end, 10);
    if (end == v + 3 || *end != ':')
        return -1;
    const char *s = end + 1;
    *sms = strtoll(s, &end, 10);
    if (end == s)
        return -1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    set_env(data, size);
    static gs_config_t c, again;
    memset(&c, 0x5a, sizeof c);
    memset(&again, 0xa5, sizeof again);
    const int rc = gs_config_parse(&c, fake_getenv);
    REQUIRE(rc == 0 || rc == -1);
    REQUIRE((rc == -1) == (c.error != 0));
    REQUIRE(c.error == 0 || c.error == 1);
    REQUIRE(terminated(c.error_msg, sizeof c.error_msg));
    REQUIRE(!strchr(c.error_msg, '\n'));
    if (c.error) {
        REQUIRE(c.error_msg[0] != '\0');
        REQUIRE(c.routing.mode == GS_MODE_OFF);
    } else {
        REQUIRE(c.error_msg[0] == '\0');
    }
    REQUIRE((unsigned)c.routing.mode <= GS_MODE_AB);
    REQUIRE((unsigned)c.routing.policy <= GS_POLICY_ELIGIBLE);
    /* only bits of registered candidates */
    REQUIRE((c.routing.allowed & ~gs_candidates_all()) == 0);
    /* an accepted list allows something unless it is "none" (a rejected
     * GEMMSHIM_KERNELS leaves it 0, mode off) */
    const char *kernels = fake_getenv("GEMMSHIM_KERNELS");
    if (!c.error && !(kernels && !strcmp(kernels, "none")))
        REQUIRE(c.routing.allowed != 0);
    REQUIRE((unsigned)c.verify_fail <= GS_VERIFY_EXIT);
    REQUIRE(c.verify_tol == -1.0 || (c.verify_tol >= 0.0 && c.verify_tol <= 1.0));
    REQUIRE(c.workspace_cap <= ((size_t)65536 << 20));
    REQUIRE(c.log_enabled == 0 || c.log_enabled == 1);
    REQUIRE(c.strict == 0 || c.strict == 1);
    REQUIRE(c.log_timing == 0 || c.log_timing == 1);
    REQUIRE(c.intercept_dlsym == 0 || c.intercept_dlsym == 1);
    REQUIRE(c.pdl == 0 || c.pdl == 1);
    /* the experimental FP8 families: on for "1" alone (unset and "0": off) */
    REQUIRE(c.routing.fp8_tiles == 0 || c.routing.fp8_tiles == 1);
    const char *fp8 = fake_getenv("GEMMSHIM_FP8_TILES");
    if (c.routing.fp8_tiles)
        REQUIRE(fp8 && !strcmp(fp8, "1"));
    if (fp8 && strcmp(fp8, "0") && strcmp(fp8, "1"))
        REQUIRE(c.error);
    const char *paths[] = {c.log_path, c.cublas_path, c.cublaslt_path, c.table_path,
                           c.report_path};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; ++i)
        REQUIRE(terminated(paths[i], GS_PATH_MAX));
    /* a path that was accepted is the value, whole */
    const char *table = fake_getenv("GEMMSHIM_TABLE");
    if (table && c.table_path[0])
        REQUIRE(!strcmp(table, c.table_path));
    if (c.test_device) {
        const char *v = fake_getenv("GEMMSHIM_TEST_DEVICE");
        long long cc, sms;
        REQUIRE(v && test_device_numbers(v, &cc, &sms) == 0);
        REQUIRE(cc >= 10 && cc <= 199 && sms >= 1 && sms <= 4096);
        REQUIRE(c.test_dev.cc_major * 10 + c.test_dev.cc_minor == cc);
        REQUIRE(c.test_dev.sm_count == sms);
    }
    /* the same environment, another prior content: the same configuration */
    REQUIRE(gs_config_parse(&again, fake_getenv) == rc);
    REQUIRE(!memcmp(&c, &again, sizeof c));
    /* the kernel list parser on its own, with the GEMMSHIM_KERNELS value */
    const char *kl = fake_getenv("GEMMSHIM_KERNELS");
    if (kl) {
        gs_routing_t r;
        memset(&r, 0, sizeof r);
        char msg[256];
        memset(msg, 'X', sizeof msg);
        if (gs_parse_kernel_list(&r, kl, msg, sizeof msg) == 0) {
            REQUIRE((r.allowed & ~gs_candidates_all()) == 0);
            REQUIRE(r.allowed != 0 || !strcmp(kl, "none"));
            /* listed back (gemmshim_get_kernels) and parsed again: the same */
            char list[1024];
            gs_format_kernel_list(&r, list, sizeof list);
            gs_routing_t back;
            memset(&back, 0, sizeof back);
            REQUIRE(gs_parse_kernel_list(&back, list, msg, sizeof msg) == 0);
            REQUIRE(back.allowed == r.allowed);
        } else {
            REQUIRE(terminated(msg, sizeof msg) && msg[0] != 'X');
        }
    }
    return 0;
}
