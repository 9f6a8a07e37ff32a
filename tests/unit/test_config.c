/* gs_config_parse from a fake environment table. */
#include "gs_config.h"
#include "gs_registry.h"
#include "gs_kernels.h"
#include "dispatch_fixtures.h"
#include "gs_test.h"

#include <stdarg.h>
#include <stdlib.h>

#define MAX_VARS 8
static const char *env_names[MAX_VARS], *env_values[MAX_VARS];
static int env_count;

static const char *fake_getenv(const char *name)
{
    for (int i = 0; i < env_count; ++i)
        if (!strcmp(env_names[i], name))
            return env_values[i];
    return NULL;
}

/* parse(cfg, "NAME", "value", ..., NULL) */
static int parse_env(gs_config_t *c, ...)
{
    va_list ap;
    va_start(ap, c);
    env_count = 0;
    const char *n;
    while ((n = va_arg(ap, const char *)) && env_count < MAX_VARS) {
        env_names[env_count] = n;
        env_values[env_count] = va_arg(ap, const char *);
        ++env_count;
    }
    va_end(ap);
    return gs_config_parse(c, fake_getenv);
}

/* Every configuration of the three families: what "all" and the default allow. */
#define ALL_KERNELS                                                                         \
    (family_bits("sgemm_simt") | family_bits("pingpong") | family_bits("skinny") |             \
     family_bits("fp8"))

static void default_values(void)
{
    gs_config_t c;
    memset(&c, 0xa5, sizeof c); /* parse must not depend on prior contents */
    CHECK_EQ_INT(parse_env(&c, NULL), 0);
    CHECK_EQ_INT(c.routing.mode, GS_MODE_ON);
    CHECK_EQ_INT(c.log_enabled, 0);
    CHECK_EQ_INT(c.log_to_stderr, 0);
    CHECK_STR_EQ(c.log_path, "");
    CHECK_EQ_INT(c.routing.policy, GS_POLICY_TABLE);
    CHECK(c.routing.allowed == ALL_KERNELS);
    CHECK(c.routing.allowed == gs_candidates_all());
    CHECK_EQ_INT(c.strict, 0);
    CHECK_STR_EQ(c.cublas_path, "");
    CHECK_STR_EQ(c.cublaslt_path, "");
    CHECK_EQ_INT(c.test_device, 0);
    CHECK_EQ_INT(c.test_dev.present, 0);
    CHECK_EQ_INT(c.error, 0);
    CHECK_STR_EQ(c.error_msg, "");
}

static void good_values(void)
{
    gs_config_t c;
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_MODE", "off", NULL), 0);
    CHECK_EQ_INT(c.routing.mode, GS_MODE_OFF);
    CHECK_EQ_INT(c.error, 0);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_MODE", "on", NULL), 0);
    CHECK_EQ_INT(c.routing.mode, GS_MODE_ON);

    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_LOG", "stderr", NULL), 0);
    CHECK_EQ_INT(c.log_enabled, 1);
    CHECK_EQ_INT(c.log_to_stderr, 1);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_LOG", "/tmp/gs.log", NULL), 0);
    CHECK_EQ_INT(c.log_enabled, 1);
    CHECK_EQ_INT(c.log_to_stderr, 0);
    CHECK_STR_EQ(c.log_path, "/tmp/gs.log");

    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_POLICY", "eligible", NULL), 0);
    CHECK_EQ_INT(c.routing.policy, GS_POLICY_ELIGIBLE);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_POLICY", "table", NULL), 0);
    CHECK_EQ_INT(c.routing.policy, GS_POLICY_TABLE);

    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_STRICT", "1", NULL), 0);
    CHECK_EQ_INT(c.strict, 1);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_STRICT", "0", NULL), 0);
    CHECK_EQ_INT(c.strict, 0);

    /* ab mode and its report */
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_MODE", "ab", "GEMMSHIM_REPORT", "/tmp/r", NULL), 0);
    CHECK_EQ_INT(c.routing.mode, GS_MODE_AB);
    CHECK_STR_EQ(c.report_path, "/tmp/r");
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_REPORT", "", NULL), -1);
    CHECK_CONTAINS(c.error_msg, "GEMMSHIM_REPORT");

    /* the signature file of gemmshim record: a path, never empty */
    CHECK_EQ_INT(parse_env(&c, NULL), 0);
    CHECK_STR_EQ(c.record_path, "");
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_RECORD", "/tmp/app.sigs", NULL), 0);
    CHECK_STR_EQ(c.record_path, "/tmp/app.sigs");
    CHECK_EQ_INT(c.routing.mode, GS_MODE_ON); /* recording changes no route */
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_RECORD", "", NULL), -1);
    CHECK_CONTAINS(c.error_msg, "GEMMSHIM_RECORD: path is empty");

    /* verify mode and its switches */
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_MODE", "verify", NULL), 0);
    CHECK_EQ_INT(c.routing.mode, GS_MODE_VERIFY);
    CHECK_EQ_INT(parse_env(&c, NULL), 0);
    CHECK_EQ_INT(c.verify_fail, GS_VERIFY_REPORT);
    CHECK(c.verify_tol == 0.0);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_VERIFY_FAIL", "abort", NULL), 0);
    CHECK_EQ_INT(c.verify_fail, GS_VERIFY_ABORT);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_VERIFY_FAIL", "exit", NULL), 0);
    CHECK_EQ_INT(c.verify_fail, GS_VERIFY_EXIT);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_VERIFY_FAIL", "crash", NULL), -1);
    CHECK_CONTAINS(c.error_msg, "GEMMSHIM_VERIFY_FAIL");
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_VERIFY_TOL", "1e-3", NULL), 0);
    CHECK(c.verify_tol == 1e-3);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_VERIFY_TOL", "0", NULL), 0);
    CHECK(c.verify_tol < 0.0); /* exact */
    const char *bad_tol[] = {"", "x", "1e-3x", "-1", "2", "nan"};
    for (size_t i = 0; i < sizeof bad_tol / sizeof bad_tol[0]; ++i) {
        CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_VERIFY_TOL", bad_tol[i], NULL), -1);
        CHECK_CONTAINS(c.error_msg, "GEMMSHIM_VERIFY_TOL");
    }

    /* GEMMSHIM_WORKSPACE_MB: split-K scratch cap per (device, stream) */
    CHECK_EQ_INT(parse_env(&c, NULL), 0);
    CHECK(c.workspace_cap == ((size_t)GS_WORKSPACE_MB_DEFAULT << 20));
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_WORKSPACE_MB", "0", NULL), 0);
    CHECK(c.workspace_cap == 0);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_WORKSPACE_MB", "512", NULL), 0);
    CHECK(c.workspace_cap == ((size_t)512 << 20));
    const char *bad_ws[] = {"", "-1", "1.5", "64M", "99999999"};
    for (size_t i = 0; i < sizeof bad_ws / sizeof bad_ws[0]; ++i) {
        CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_WORKSPACE_MB", bad_ws[i], NULL), -1);
        CHECK_CONTAINS(c.error_msg, "GEMMSHIM_WORKSPACE_MB");
        CHECK_EQ_INT(c.routing.mode, GS_MODE_OFF);
    }
    /* GEMMSHIM_TUNE_PAIRS: 6-64 (with 4 pairs the order-balanced rule has 2
     * samples, a t quantile of 12.7: nothing could win); the tuning scratch
     * defaults to 4096 MiB */
    CHECK_EQ_INT(parse_env(&c, NULL), 0);
    CHECK_EQ_INT(c.tune.pairs, 10);
    CHECK(c.tune.scratch_cap == ((size_t)4096 << 20));
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TUNE_PAIRS", "6", NULL), 0);
    CHECK_EQ_INT(c.tune.pairs, 6);
    const char *bad_pairs[] = {"4", "5", "65", "x"};
    for (size_t i = 0; i < sizeof bad_pairs / sizeof bad_pairs[0]; ++i) {
        CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TUNE_PAIRS", bad_pairs[i], NULL), -1);
        CHECK_CONTAINS(c.error_msg, "GEMMSHIM_TUNE_PAIRS");
    }
    /* GEMMSHIM_TUNE_SHARE: a percent, 25 by default, 0 for no limit */
    CHECK_EQ_INT(parse_env(&c, NULL), 0);
    CHECK(c.tune.share == 0.25);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TUNE_SHARE", "0", NULL), 0);
    CHECK(c.tune.share == 0.0);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TUNE_SHARE", "150", NULL), 0);
    CHECK(c.tune.share == 1.5);
    const char *bad_share[] = {"-1", "0.5", "x", "100001"};
    for (size_t i = 0; i < sizeof bad_share / sizeof bad_share[0]; ++i) {
        CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TUNE_SHARE", bad_share[i], NULL), -1);
        CHECK_CONTAINS(c.error_msg, "GEMMSHIM_TUNE_SHARE");
    }
    /* GEMMSHIM_TUNE_SUSTAIN_MS: the sustained check's block, 400 ms by
     * default, 0 turns the check off */
    CHECK_EQ_INT(parse_env(&c, NULL), 0);
    CHECK(c.tune.sustain_ms == 400.0);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TUNE_SUSTAIN_MS", "0", NULL), 0);
    CHECK(c.tune.sustain_ms == 0.0);
    const char *bad_sustain[] = {"-5", "10001", "1.5", "ms"};
    for (size_t i = 0; i < sizeof bad_sustain / sizeof bad_sustain[0]; ++i) {
        CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TUNE_SUSTAIN_MS", bad_sustain[i], NULL), -1);
        CHECK_CONTAINS(c.error_msg, "GEMMSHIM_TUNE_SUSTAIN_MS");
    }
    /* GEMMSHIM_DLSYM: opt-in interception of dlsym look-ups */
    CHECK_EQ_INT(parse_env(&c, NULL), 0);
    CHECK_EQ_INT(c.intercept_dlsym, 0);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_DLSYM", "1", NULL), 0);
    CHECK_EQ_INT(c.intercept_dlsym, 1);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_DLSYM", "on", NULL), -1);
    CHECK_CONTAINS(c.error_msg, "GEMMSHIM_DLSYM");
    /* GEMMSHIM_PDL: programmatic dependent launch, on unless switched off */
    CHECK_EQ_INT(parse_env(&c, NULL), 0);
    CHECK_EQ_INT(c.pdl, 1);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_PDL", "0", NULL), 0);
    CHECK_EQ_INT(c.pdl, 0);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_PDL", "1", NULL), 0);
    CHECK_EQ_INT(c.pdl, 1);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_PDL", "off", NULL), -1);
    CHECK_CONTAINS(c.error_msg, "GEMMSHIM_PDL");
    CHECK_EQ_INT(c.routing.mode, GS_MODE_OFF);

    CHECK_EQ_INT(parse_env(&c, NULL), 0);
    CHECK_EQ_INT(c.log_timing, 1);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_LOG_TIMING", "0", NULL), 0);
    CHECK_EQ_INT(c.log_timing, 0);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_LOG_TIMING", "yes", NULL), -1);
    CHECK_CONTAINS(c.error_msg, "GEMMSHIM_LOG_TIMING");

    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_CUBLAS", "/opt/x/libcublas.so.13",
                           "GEMMSHIM_CUBLASLT", "/opt/y/libcublasLt.so.13", NULL), 0);
    CHECK_STR_EQ(c.cublas_path, "/opt/x/libcublas.so.13");
    CHECK_STR_EQ(c.cublaslt_path, "/opt/y/libcublasLt.so.13");
    CHECK_EQ_INT(c.routing.mode, GS_MODE_ON);
}

static void kernels(void)
{
    gs_config_t c;
    CHECK(family_bits("sgemm_simt") && family_bits("pingpong") && family_bits("skinny"));
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS", "all", NULL), 0);
    CHECK(c.routing.allowed == ALL_KERNELS);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS", "none", NULL), 0);
    CHECK(c.routing.allowed == 0);
    CHECK_EQ_INT(c.routing.mode, GS_MODE_ON);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS", "sgemm_simt", NULL), 0);
    CHECK(c.routing.allowed == family_bits("sgemm_simt"));
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS", "pingpong", NULL), 0);
    CHECK(c.routing.allowed == family_bits("pingpong"));
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS", "skinny", NULL), 0);
    CHECK(c.routing.allowed == family_bits("skinny"));
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS", "sgemm_simt,pingpong,skinny,fp8", NULL), 0);
    CHECK(c.routing.allowed == ALL_KERNELS);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS", "skinny,pingpong,sgemm_simt,fp8", NULL), 0);
    CHECK(c.routing.allowed == ALL_KERNELS);

    /* single pingpong configurations, by the names the kernels run under */
    const uint64_t all_cfgs = pingpong_bit(GS_PINGPONG_128x128x64) |
                              pingpong_bit(GS_PINGPONG_COOP_256x128x64) |
                              pingpong_bit(GS_PINGPONG_192x128x64);
    CHECK(all_cfgs == family_bits("pingpong"));
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS", "pingpong", NULL), 0);
    CHECK(c.routing.allowed == all_cfgs); /* all 3 pingpong candidates, nothing else */
    for (int cfg = 0; cfg < GS_PINGPONG_CONFIG_COUNT; ++cfg) {
        const char *name = gs_pingpong_name((gs_pingpong_config_t)cfg);
        CHECK(strncmp(name, "pingpong_", 9) == 0);
        CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS", name, NULL), 0);
        CHECK(pingpong_bit((gs_pingpong_config_t)cfg) != 0);
        CHECK(c.routing.allowed == pingpong_bit((gs_pingpong_config_t)cfg));
    }
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS",
                           "sgemm_simt,pingpong_128x128x64", NULL), 0);
    CHECK(c.routing.allowed == (family_bits("sgemm_simt") | pingpong_bit(GS_PINGPONG_128x128x64)));
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS", "pingpong_128x128x64,sgemm_simt", NULL), 0);
    CHECK(c.routing.allowed == (family_bits("sgemm_simt") | pingpong_bit(GS_PINGPONG_128x128x64)));
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS", "pingpong_128x128x64,pingpong", NULL), 0);
    CHECK(c.routing.allowed == all_cfgs);

    const char *bad[] = {"bogus", "sgemm_simt,bogus", "pingpong,,sgemm_simt", "SGEMM_SIMT",
                         "sgemm", "sgemm_simt_x", "all,pingpong", ",pingpong",
                         /* regression: these were once accepted silently */
                         "", "sgemm_simt,"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS", bad[i], NULL), -1);
        CHECK_EQ_INT(c.error, 1);
        CHECK_EQ_INT(c.routing.mode, GS_MODE_OFF);
        CHECK_CONTAINS(c.error_msg, "GEMMSHIM_KERNELS");
    }
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_KERNELS", "sgemm_simt,bogus", NULL), -1);
    CHECK_CONTAINS(c.error_msg, "'bogus'");
    /* the known names, from the registry in its order */
    CHECK_CONTAINS(c.error_msg,
                   "(known: skinny, pingpong, pingpong_<tile>, sgemm_simt, fp8, fp8_<tile>, all, none)");
}

/* gs_format_kernel_list (gemmshim_get_kernels): a family's name where all
 * its configurations are allowed, else the allowed configurations' names,
 * in registry order; "none" when nothing is; parsed back, the same list. */
static void kernel_list_format(void)
{
    static const struct {
        const char *list, *want;
    } cases[] = {
        {"all", "skinny,pingpong,sgemm_simt,fp8"},
        {"none", "none"},
        {"sgemm_simt,pingpong,skinny", "skinny,pingpong,sgemm_simt"},
        {"pingpong", "pingpong"},
        {"pingpong_coop_256x128x64", "pingpong_coop_256x128x64"},
        {"sgemm_simt,pingpong_192x128x64,pingpong_128x128x64",
         "pingpong_128x128x64,pingpong_192x128x64,sgemm_simt"},
        {"pingpong_128x128x64,pingpong_coop_256x128x64,pingpong_192x128x64", "pingpong"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        gs_routing_t r;
        memset(&r, 0, sizeof r);
        char msg[256] = "", buf[256];
        CHECK_EQ_INT(gs_parse_kernel_list(&r, cases[i].list, msg, sizeof msg), 0);
        gs_format_kernel_list(&r, buf, sizeof buf);
        CHECK_STR_EQ(buf, cases[i].want);
        gs_routing_t back;
        memset(&back, 0, sizeof back);
        CHECK_EQ_INT(gs_parse_kernel_list(&back, buf, msg, sizeof msg), 0);
        CHECK(back.allowed == r.allowed);
    }
    /* a parse error leaves r as it was */
    gs_routing_t r;
    memset(&r, 0, sizeof r);
    r.allowed = family_bits("skinny");
    char msg[256] = "";
    CHECK_EQ_INT(gs_parse_kernel_list(&r, "skinny,warp9", msg, sizeof msg), -1);
    CHECK(r.allowed == family_bits("skinny"));
    CHECK_CONTAINS(msg, "'warp9'");
}

/* Values are taken as written: leading blanks are refused as trailing ones
 * always were (strtol skipped them), and a tolerance that underflows to 0
 * is refused rather than read as "bit-exact". */
static void values_as_written(void)
{
    gs_config_t c;
    const struct {
        const char *var, *value;
    } bad[] = {{"GEMMSHIM_WORKSPACE_MB", " 64"},   {"GEMMSHIM_WORKSPACE_MB", "64 "},
               {"GEMMSHIM_WORKSPACE_MB", "\t64"}, {"GEMMSHIM_VERIFY_TOL", " 0.01"},
               {"GEMMSHIM_VERIFY_TOL", "0.01 "},  {"GEMMSHIM_VERIFY_TOL", "1e-400"},
               {"GEMMSHIM_TEST_DEVICE", "sm_ 90:132"}, {"GEMMSHIM_TEST_DEVICE", "sm_90: 132"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        CHECK_EQ_INT(parse_env(&c, bad[i].var, bad[i].value, NULL), -1);
        CHECK_CONTAINS(c.error_msg, bad[i].var);
        CHECK_EQ_INT(c.routing.mode, GS_MODE_OFF);
    }
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_VERIFY_TOL", "0", NULL), 0);
    CHECK(c.verify_tol == -1.0); /* bit-exact, as documented */
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_VERIFY_TOL", "1e-300", NULL), 0);
    CHECK(c.verify_tol == 1e-300);
}

/* The families' developer knobs: declared by each family, read as
 * GEMMSHIM_DEV_<FAMILY>_<NAME>, validated like every setting (they used to
 * be read by the kernels with atoi: GEMMSHIM_PP_SK=5 silently meant the
 * default); their earlier names are refused, naming the new one. */
static int knob_value(const gs_config_t *c, const char *family, const char *name)
{
    for (int i = 0; i < gs_knob_count(); ++i) {
        const gs_family_t *f;
        const gs_knob_t *k = gs_knob_at(i, &f);
        if (!strcmp(f->name, family) && !strcmp(k->name, name))
            return c->knob_values[i];
    }
    return -999;
}

static void dev_knobs(void)
{
    gs_config_t c;
    CHECK_EQ_INT(parse_env(&c, NULL), 0);
    CHECK_EQ_INT(gs_knob_count(), 8);
    CHECK_EQ_INT(knob_value(&c, "pingpong", "SK"), 1); /* the defaults */
    CHECK_EQ_INT(knob_value(&c, "pingpong", "DEFER"), 1);
    CHECK_EQ_INT(knob_value(&c, "pingpong", "MAX_CTAS"), 0);
    CHECK_EQ_INT(knob_value(&c, "skinny", "WG"), 1);
    CHECK_EQ_INT(knob_value(&c, "skinny", "WS"), 0);
    CHECK_EQ_INT(knob_value(&c, "fp8", "CK"), 0);
    const uint64_t default_key = c.knob_key;
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_DEV_PINGPONG_SK", "3", "GEMMSHIM_DEV_PINGPONG_MAX_CTAS",
                           "2", "GEMMSHIM_DEV_SKINNY_WS", "4", "GEMMSHIM_DEV_SKINNY_CK", "8",
                           "GEMMSHIM_DEV_FP8_CK", "4", NULL),
                 0);
    CHECK_EQ_INT(knob_value(&c, "pingpong", "SK"), 3);
    CHECK_EQ_INT(knob_value(&c, "pingpong", "MAX_CTAS"), 2);
    CHECK_EQ_INT(knob_value(&c, "skinny", "WS"), 4);
    CHECK_EQ_INT(knob_value(&c, "skinny", "CK"), 8);
    CHECK_EQ_INT(knob_value(&c, "fp8", "CK"), 4);
    CHECK(c.knob_key != default_key); /* the decision cache keys on them */
    const struct {
        const char *var, *value, *says;
    } bad[] = {{"GEMMSHIM_DEV_PINGPONG_SK", "5", "0 to 3"},
               {"GEMMSHIM_DEV_PINGPONG_SK", "x", "0 to 3"},
               {"GEMMSHIM_DEV_PINGPONG_DEFER", "2", "0 to 1"},
               {"GEMMSHIM_DEV_SKINNY_WS", "3", "0, 2, 4, 8"},
               {"GEMMSHIM_DEV_SKINNY_CK", "16", "0, 1, 2, 4, 8"},
               {"GEMMSHIM_DEV_FP8_CK", "3", "0, 1, 2, 4, 8"},
               {"GEMMSHIM_DEV_PINGPONG_MAX_CTAS", " 2", "0 to 65536"},
               {"GEMMSHIM_PP_SK", "0", "is now GEMMSHIM_DEV_PINGPONG_SK"},
               {"GEMMSHIM_SKINNY_WG_CK", "2", "is now GEMMSHIM_DEV_SKINNY_CK"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        CHECK_EQ_INT(parse_env(&c, bad[i].var, bad[i].value, NULL), -1);
        CHECK_CONTAINS(c.error_msg, bad[i].var);
        CHECK_CONTAINS(c.error_msg, bad[i].says);
        CHECK_EQ_INT(c.routing.mode, GS_MODE_OFF);
    }
}

static void test_faults(void)
{
    gs_config_t c;
    CHECK_EQ_INT(parse_env(&c, NULL), 0);
    CHECK_EQ_INT(c.test_faults, 0);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TEST_FAULTS", "launch", NULL), 0);
    CHECK_EQ_INT(c.test_faults, GS_FAULT_LAUNCH);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TEST_FAULTS", "scratch,workspace,device,launch", NULL),
                 0);
    CHECK_EQ_INT(c.test_faults,
                 GS_FAULT_SCRATCH | GS_FAULT_WORKSPACE | GS_FAULT_DEVICE | GS_FAULT_LAUNCH);
    CHECK_EQ_INT(c.routing.mode, GS_MODE_ON);
    const char *bad[] = {"", "launch,", ",launch", "launch,,device", "Launch", "launch ",
                         "disk", "launchx"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TEST_FAULTS", bad[i], NULL), -1);
        CHECK_EQ_INT(c.test_faults, 0);
        CHECK_EQ_INT(c.routing.mode, GS_MODE_OFF);
        CHECK_CONTAINS(c.error_msg, "GEMMSHIM_TEST_FAULTS");
    }
}

static void test_device(void)
{
    gs_config_t c;
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TEST_DEVICE", "sm_90:132", NULL), 0);
    CHECK_EQ_INT(c.test_device, 1);
    CHECK_EQ_INT(c.test_dev.present, 1);
    CHECK_EQ_INT(c.test_dev.cc_major, 9);
    CHECK_EQ_INT(c.test_dev.cc_minor, 0);
    CHECK_EQ_INT(c.test_dev.sm_count, 132);
    CHECK(c.test_dev.smem_optin > 0);
    CHECK_EQ_INT(c.routing.mode, GS_MODE_ON);

    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TEST_DEVICE", "sm_86:84", NULL), 0);
    CHECK_EQ_INT(c.test_dev.cc_major, 8);
    CHECK_EQ_INT(c.test_dev.cc_minor, 6);
    CHECK_EQ_INT(c.test_dev.sm_count, 84);

    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TEST_DEVICE", "sm_120:170", NULL), 0);
    CHECK_EQ_INT(c.test_dev.cc_major, 12);
    CHECK_EQ_INT(c.test_dev.cc_minor, 0);
    CHECK_EQ_INT(c.test_dev.sm_count, 170);

    const char *bad[] = {"sm_90",    "90:132",     "sm_90:",     "sm_90:0",  "sm_90:-4",
                         "sm_9:132", "sm_200:132", "sm_90:132x", "sm90:132", "sm_90:5000",
                         "",         "gpu"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_TEST_DEVICE", bad[i], NULL), -1);
        CHECK_EQ_INT(c.error, 1);
        CHECK_EQ_INT(c.routing.mode, GS_MODE_OFF);
        CHECK_EQ_INT(c.test_device, 0);
        CHECK_CONTAINS(c.error_msg, "GEMMSHIM_TEST_DEVICE");
    }
}

static void bad_values(void)
{
    struct {
        const char *var, *value;
    } bad[] = {
        {"GEMMSHIM_MODE", "ON"},       {"GEMMSHIM_MODE", "1"},
        {"GEMMSHIM_MODE", ""},         {"GEMMSHIM_MODE", "on "},
        {"GEMMSHIM_POLICY", "fast"},   {"GEMMSHIM_POLICY", ""},
        {"GEMMSHIM_STRICT", "2"},      {"GEMMSHIM_STRICT", "true"},
        {"GEMMSHIM_STRICT", ""},       {"GEMMSHIM_LOG", ""},
        {"GEMMSHIM_CUBLAS", ""},       {"GEMMSHIM_CUBLASLT", ""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        gs_config_t c;
        /* MODE=on given explicitly where it is not the variable under test:
         * a bad value elsewhere still turns the shim off. */
        int r = strcmp(bad[i].var, "GEMMSHIM_MODE")
                    ? parse_env(&c, "GEMMSHIM_MODE", "on", bad[i].var, bad[i].value, NULL)
                    : parse_env(&c, bad[i].var, bad[i].value, NULL);
        if (!CHECK(r == -1))
            fprintf(stderr, "    %s='%s' was accepted\n", bad[i].var, bad[i].value);
        CHECK_EQ_INT(c.error, 1);
        CHECK_EQ_INT(c.routing.mode, GS_MODE_OFF);
        CHECK_CONTAINS(c.error_msg, bad[i].var);
        CHECK(strchr(c.error_msg, '\n') == NULL);
    }

    /* The first rejection is the one reported. */
    gs_config_t c;
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_MODE", "maybe", "GEMMSHIM_POLICY", "fast", NULL), -1);
    CHECK_CONTAINS(c.error_msg, "GEMMSHIM_MODE");
    CHECK(strstr(c.error_msg, "GEMMSHIM_POLICY") == NULL);

    /* Logging that parsed stays on so the error can be logged. */
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_LOG", "stderr", "GEMMSHIM_POLICY", "x", NULL), -1);
    CHECK_EQ_INT(c.log_enabled, 1);
    CHECK_EQ_INT(c.log_to_stderr, 1);
    CHECK_EQ_INT(c.routing.mode, GS_MODE_OFF);

    /* A huge bad value: the message stays bounded and one line. */
    static char huge[8192];
    memset(huge, 'z', sizeof huge - 1);
    CHECK_EQ_INT(parse_env(&c, "GEMMSHIM_POLICY", huge, NULL), -1);
    CHECK(strlen(c.error_msg) < sizeof c.error_msg);
    CHECK(strlen(c.error_msg) < 200);
    CHECK_CONTAINS(c.error_msg, "GEMMSHIM_POLICY");
}

static void paths(void)
{
    static char path[GS_PATH_MAX + 1];
    const char *vars[] = {"GEMMSHIM_CUBLAS", "GEMMSHIM_CUBLASLT", "GEMMSHIM_LOG",
                          "GEMMSHIM_RECORD"};
    for (int v = 0; v < 4; ++v) {
        gs_config_t c;
        /* GS_PATH_MAX - 1 characters fit; GS_PATH_MAX do not. */
        memset(path, 0, sizeof path);
        path[0] = '/';
        memset(path + 1, 'p', GS_PATH_MAX - 2);
        CHECK_EQ_INT(strlen(path), GS_PATH_MAX - 1);
        CHECK_EQ_INT(parse_env(&c, vars[v], path, NULL), 0);
        const char *stored = v == 0   ? c.cublas_path
                             : v == 1 ? c.cublaslt_path
                             : v == 2 ? c.log_path
                                      : c.record_path;
        CHECK_STR_EQ(stored, path);

        path[GS_PATH_MAX - 1] = 'p';
        CHECK_EQ_INT(strlen(path), GS_PATH_MAX);
        CHECK_EQ_INT(parse_env(&c, vars[v], path, NULL), -1);
        CHECK_EQ_INT(c.error, 1);
        CHECK_EQ_INT(c.routing.mode, GS_MODE_OFF);
        CHECK_CONTAINS(c.error_msg, vars[v]);
        CHECK_CONTAINS(c.error_msg, "too long");

        CHECK_EQ_INT(parse_env(&c, vars[v], "", NULL), -1);
        CHECK_CONTAINS(c.error_msg, vars[v]);
        CHECK_CONTAINS(c.error_msg, "empty");
    }
}

int main(void)
{
    default_values();
    good_values();
    kernels();
    kernel_list_format();
    test_device();
    test_faults();
    values_as_written();
    dev_knobs();
    bad_values();
    paths();
    /* the families' names (gs_family_name before the registry) */
    CHECK_STR_EQ(FAMILY_SGEMM_SIMT ? FAMILY_SGEMM_SIMT->name : NULL, "sgemm_simt");
    CHECK_STR_EQ(FAMILY_PINGPONG ? FAMILY_PINGPONG->name : NULL, "pingpong");
    CHECK(gs_family_at(gs_family_count()) == NULL);
    return GS_TEST_DONE();
}
