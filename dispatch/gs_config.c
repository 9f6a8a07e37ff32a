/* GEMMSHIM_* environment parsing. Every value is checked; nothing is silently
 * ignored: a bad one makes the whole shim pass-through, with a one-line
 * reason. */
#include "gs_config.h"
#include "gs_registry.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reject(gs_config_t *c, const char *fmt, ...)
{
    if (!c->error) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->error_msg, sizeof c->error_msg, fmt, ap);
        va_end(ap);
    }
    c->error = 1;
}

static int copy_path(gs_config_t *c, const char *var, const char *v, char *dst)
{
    size_t len = strlen(v);
    if (len == 0 || len >= GS_PATH_MAX) {
        reject(c, "%s: path is %s", var, len ? "too long" : "empty");
        return -1;
    }
    memcpy(dst, v, len + 1);
    return 0;
}

static void parse_mode(gs_config_t *c, const char *v)
{
    if (!v || !strcmp(v, "on"))
        c->routing.mode = GS_MODE_ON;
    else if (!strcmp(v, "off"))
        c->routing.mode = GS_MODE_OFF;
    else if (!strcmp(v, "verify"))
        c->routing.mode = GS_MODE_VERIFY;
    else if (!strcmp(v, "ab"))
        c->routing.mode = GS_MODE_AB;
    else
        reject(c, "GEMMSHIM_MODE='%.64s' is not one of: on, off, verify, ab", v);
}

static void parse_log(gs_config_t *c, const char *v)
{
    if (!v)
        return;
    if (!strcmp(v, "stderr")) {
        c->log_enabled = c->log_to_stderr = 1;
        return;
    }
    if (copy_path(c, "GEMMSHIM_LOG", v, c->log_path) == 0)
        c->log_enabled = 1;
}

static void parse_policy(gs_config_t *c, const char *v)
{
    if (!v || !strcmp(v, "table"))
        c->routing.policy = GS_POLICY_TABLE;
    else if (!strcmp(v, "eligible"))
        c->routing.policy = GS_POLICY_ELIGIBLE;
    else
        reject(c, "GEMMSHIM_POLICY='%.64s' is not one of: table, eligible", v);
}

static int parse_bounded(const char *s, long lo, long hi, long *out, char **end);

/* A whole number in [lo, hi] from variable var, or the default. */
static long parse_number(gs_config_t *c, const char *var, const char *v, long lo, long hi,
                         long def)
{
    if (!v)
        return def;
    long x = 0;
    char *end = NULL;
    if (parse_bounded(v, lo, hi, &x, &end) || *end != '\0') {
        reject(c, "%s='%.64s' is not a whole number in [%ld, %ld]", var, v, lo, hi);
        return def;
    }
    return x;
}

static void parse_tune(gs_config_t *c, gs_getenv_fn get)
{
    const char *v = get("GEMMSHIM_TUNE");
    if (!v || !strcmp(v, "off"))
        c->routing.tune = GS_TUNE_OFF;
    else if (!strcmp(v, "online"))
        c->routing.tune = GS_TUNE_ONLINE;
    else if (!strcmp(v, "cache"))
        c->routing.tune = GS_TUNE_CACHE;
    else
        reject(c, "GEMMSHIM_TUNE='%.64s' is not one of: off, online, cache", v);
    const char *p = get("GEMMSHIM_TUNE_CACHE");
    if (p)
        copy_path(c, "GEMMSHIM_TUNE_CACHE", p, c->tune.cache_path);
    if (c->routing.tune == GS_TUNE_CACHE && !c->tune.cache_path[0])
        reject(c, "GEMMSHIM_TUNE=cache needs GEMMSHIM_TUNE_CACHE (the file to read)");
    c->tune.pairs = (int)parse_number(c, "GEMMSHIM_TUNE_PAIRS", get("GEMMSHIM_TUNE_PAIRS"), 6, 64, 10);
    c->tune.lt_algos =
        (int)parse_number(c, "GEMMSHIM_TUNE_LT_ALGOS", get("GEMMSHIM_TUNE_LT_ALGOS"), 0, 8, 8);
    c->tune.budget_ms = (double)parse_number(c, "GEMMSHIM_TUNE_BUDGET_MS",
                                             get("GEMMSHIM_TUNE_BUDGET_MS"), 0, 86400000, 120000);
    c->tune.share = (double)parse_number(c, "GEMMSHIM_TUNE_SHARE", get("GEMMSHIM_TUNE_SHARE"), 0,
                                         100000, 25) / 100.0;
    c->tune.sustain_ms = (double)parse_number(c, "GEMMSHIM_TUNE_SUSTAIN_MS",
                                              get("GEMMSHIM_TUNE_SUSTAIN_MS"), 0, 10000, 400);
    c->tune.scratch_cap = (size_t)parse_number(c, "GEMMSHIM_TUNE_SCRATCH_MB",
                                               get("GEMMSHIM_TUNE_SCRATCH_MB"), 1, 65536, 4096)
                          << 20;
}

/* Comma-separated kernel families ("pingpong") or single configurations by
 * their stable names ("pingpong_128x128x64"), or "all" / "none". */
static uint64_t item_bits(const char *s, size_t len)
{
    char name[64];
    if (len >= sizeof name)
        return 0;
    memcpy(name, s, len);
    name[len] = '\0';
    const gs_family_t *f = gs_family_find(name);
    if (f)
        return gs_candidates_of_family(f);
    const int i = gs_candidate_find(name);
    return i >= 0 ? 1ull << i : 0;
}

/* Appends to buf (size bytes) at *len, as snprintf does: never past the end. */
static void append(char *buf, size_t size, size_t *len, const char *sep, const char *name)
{
    if (*len < size)
        *len += (size_t)snprintf(buf + *len, size - *len, "%s%s", *len ? sep : "", name);
}

static void known_names(char *buf, size_t size)
{
    size_t len = 0;
    if (size)
        buf[0] = '\0';
    for (int i = 0; i < gs_family_count(); ++i) {
        const gs_family_t *f = gs_family_at(i);
        append(buf, size, &len, ", ", f->name);
        if (f->n_configs > 1) {
            char tiles[80];
            snprintf(tiles, sizeof tiles, "%s_<tile>", f->name);
            append(buf, size, &len, ", ", tiles);
        }
    }
}

int gs_parse_kernel_list(gs_routing_t *out, const char *v, char *msg, size_t msg_size)
{
    gs_routing_t r = *out;
    if (!v || !strcmp(v, "all")) {
        r.allowed = gs_candidates_all();
        *out = r;
        return 0;
    }
    r.allowed = 0;
    if (!strcmp(v, "none")) {
        *out = r;
        return 0;
    }
    for (const char *s = v;;) {
        const size_t len = strcspn(s, ",");
        const uint64_t bits = item_bits(s, len);
        if (!bits) {
            char known[256];
            known_names(known, sizeof known);
            snprintf(msg, msg_size, "GEMMSHIM_KERNELS: unknown kernel '%.*s' (known: %s, all, none)",
                     (int)(len > 64 ? 64 : len), s, known);
            return -1;
        }
        r.allowed |= bits;
        s += len;
        if (!*s)
            break;
        ++s; /* past the comma: an item must follow */
    }
    *out = r;
    return 0;
}

void gs_format_kernel_list(const gs_routing_t *r, char *buf, size_t size)
{
    size_t len = 0;
    if (!size)
        return;
    buf[0] = '\0';
    for (int i = 0; i < gs_family_count(); ++i) {
        const gs_family_t *f = gs_family_at(i);
        const uint64_t mine = gs_candidates_of_family(f), on = r->allowed & mine;
        if (on && on == mine) {
            append(buf, size, &len, ",", f->name);
            continue;
        }
        for (int c = 0; c < f->n_configs; ++c) {
            const int k = gs_candidate_of(f, c);
            if (k >= 0 && (on & (1ull << k)))
                append(buf, size, &len, ",", f->config_name(c));
        }
    }
    if (!len)
        snprintf(buf, size, "none");
}

int gs_parse_plugin_list(const char *v, char (*paths)[GS_PATH_MAX], char *msg, size_t msg_size)
{
    int n = 0;
    for (const char *s = v;; ++n) {
        const size_t len = strcspn(s, ":");
        if (n == GS_PLUGINS_MAX) {
            snprintf(msg, msg_size, "GEMMSHIM_PLUGINS: more than %d libraries", GS_PLUGINS_MAX);
            return -1;
        }
        if (len == 0 || len >= GS_PATH_MAX) {
            snprintf(msg, msg_size, "GEMMSHIM_PLUGINS: library %d: path is %s", n + 1,
                     len ? "too long" : "empty");
            return -1;
        }
        if (paths) {
            memcpy(paths[n], s, len);
            paths[n][len] = '\0';
        }
        s += len;
        if (!*s)
            return n + 1;
        ++s; /* past the ':': a path must follow */
    }
}

static void parse_plugins(gs_config_t *c, const char *v)
{
    /* validated here; the libraries are loaded by the shim before this
     * parse (shim/plugins/gs_plugin.c) */
    char msg[128];
    if (v && gs_parse_plugin_list(v, NULL, msg, sizeof msg) < 0)
        reject(c, "%s", msg);
}

static void parse_kernels(gs_config_t *c, const char *v)
{
    char msg[256];
    if (gs_parse_kernel_list(&c->routing, v, msg, sizeof msg))
        reject(c, "%s", msg);
}

static void parse_bool(gs_config_t *c, const char *var, const char *v, int *out)
{
    if (!v || !strcmp(v, "0"))
        *out = 0;
    else if (!strcmp(v, "1"))
        *out = 1;
    else
        reject(c, "%s='%.64s' is not 0 or 1", var, v);
}

/* A decimal number (as strtol reads it: leading blanks and sign allowed)
 * within [lo, hi]; -1 otherwise, an overflowing one included (sscanf's %d
 * truncated sm_90:4294967298 to 2 SMs). *end: after it. */
static int parse_bounded(const char *s, long lo, long hi, long *out, char **end)
{
    *end = (char *)s;
    if (isspace((unsigned char)*s)) /* strtol would skip it; a value is taken as written */
        return -1;
    errno = 0;
    const long v = strtol(s, end, 10);
    if (*end == s || errno == ERANGE || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* "sm_90:132": pretend a device of that capability and SM count exists
 * (tests on machines without a GPU exercise dispatch and fallback). */
static void parse_test_device(gs_config_t *c, const char *v)
{
    if (!v)
        return;
    long cc = 0, sms = 0;
    char *end = NULL;
    if (strncmp(v, "sm_", 3) || parse_bounded(v + 3, 10, 199, &cc, &end) || *end != ':' ||
        parse_bounded(end + 1, 1, 4096, &sms, &end) || *end != '\0') {
        reject(c, "GEMMSHIM_TEST_DEVICE='%.64s' is not of the form sm_<cc>:<sm count>", v);
        return;
    }
    c->test_device = 1;
    memset(&c->test_dev, 0, sizeof c->test_dev);
    c->test_dev.present = 1;
    c->test_dev.cc_major = (int)(cc / 10);
    c->test_dev.cc_minor = (int)(cc % 10);
    c->test_dev.sm_count = (int)sms;
    c->test_dev.smem_optin = 227 * 1024;
    c->test_dev.l2_bytes = 50u << 20;
}

/* "workspace,launch": the shim's own device calls that fail on purpose
 * (fault-injection tests; shim/base/gs_hooks.h). */
static void parse_test_faults(gs_config_t *c, const char *v)
{
    static const struct {
        const char *name;
        unsigned bit;
    } faults[] = {{"device", GS_FAULT_DEVICE},
                  {"workspace", GS_FAULT_WORKSPACE},
                  {"scratch", GS_FAULT_SCRATCH},
                  {"launch", GS_FAULT_LAUNCH}};
    if (!v)
        return;
    unsigned bits = 0;
    for (const char *s = v;;) {
        const size_t len = strcspn(s, ",");
        size_t i = 0;
        while (i < sizeof faults / sizeof faults[0] &&
               !(strlen(faults[i].name) == len && !strncmp(s, faults[i].name, len)))
            ++i;
        if (i == sizeof faults / sizeof faults[0]) {
            reject(c, "GEMMSHIM_TEST_FAULTS='%.64s' is not a list of: device, workspace, "
                      "scratch, launch", v);
            return;
        }
        bits |= faults[i].bit;
        s += len;
        if (!*s++)
            break;
    }
    c->test_faults = bits;
}

/* The families' developer knobs: GEMMSHIM_DEV_<FAMILY>_<NAME>, a whole
 * number the knob takes; an earlier name of the variable is refused, naming
 * the new one (a silently ignored setting is what this replaces). */
static void parse_knobs(gs_config_t *c, gs_getenv_fn get)
{
    for (int i = 0; i < gs_knob_count(); ++i) {
        const gs_family_t *f;
        const gs_knob_t *k = gs_knob_at(i, &f);
        char var[96];
        size_t len = (size_t)snprintf(var, sizeof var, "GEMMSHIM_DEV_%s_%s", f->name, k->name);
        for (size_t j = 0; j < len && j < sizeof var; ++j)
            var[j] = (char)toupper((unsigned char)var[j]);
        c->knob_values[i] = k->def;
        if (k->legacy && get(k->legacy)) {
            reject(c, "%s is now %s", k->legacy, var);
            continue;
        }
        const char *v = get(var);
        if (!v)
            continue;
        long x = 0;
        char *end = NULL;
        int ok = !parse_bounded(v, k->lo, k->hi, &x, &end) && *end == '\0';
        if (ok && k->only) {
            ok = 0;
            for (int j = 0; j < k->n_only; ++j)
                ok |= k->only[j] == x;
        }
        if (!ok) {
            char takes[96];
            size_t n = 0;
            if (k->only)
                for (int j = 0; j < k->n_only && n < sizeof takes; ++j)
                    n += (size_t)snprintf(takes + n, sizeof takes - n, "%s%d", j ? ", " : "",
                                          k->only[j]);
            else
                snprintf(takes, sizeof takes, "%d to %d", k->lo, k->hi);
            reject(c, "%s='%.32s' is not one of: %s", var, v, takes);
            continue;
        }
        c->knob_values[i] = (int)x;
    }
    c->knob_key = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < gs_knob_count(); ++i)
        c->knob_key = (c->knob_key ^ (uint64_t)(uint32_t)c->knob_values[i]) * 0xff51afd7ed558ccdull;
}

int gs_config_parse(gs_config_t *c, gs_getenv_fn get)
{
    memset(c, 0, sizeof *c);
    parse_log(c, get("GEMMSHIM_LOG"));
    parse_mode(c, get("GEMMSHIM_MODE"));
    parse_policy(c, get("GEMMSHIM_POLICY"));
    parse_plugins(c, get("GEMMSHIM_PLUGINS"));
    parse_kernels(c, get("GEMMSHIM_KERNELS"));
    parse_bool(c, "GEMMSHIM_STRICT", get("GEMMSHIM_STRICT"), &c->strict);
    parse_bool(c, "GEMMSHIM_FP8_TILES", get("GEMMSHIM_FP8_TILES"), &c->routing.fp8_tiles);
    const char *t = get("GEMMSHIM_LOG_TIMING");
    c->log_timing = 1;
    if (t)
        parse_bool(c, "GEMMSHIM_LOG_TIMING", t, &c->log_timing);
    const char *p = get("GEMMSHIM_CUBLAS");
    if (p)
        copy_path(c, "GEMMSHIM_CUBLAS", p, c->cublas_path);
    p = get("GEMMSHIM_CUBLASLT");
    if (p)
        copy_path(c, "GEMMSHIM_CUBLASLT", p, c->cublaslt_path);
    const char *vf = get("GEMMSHIM_VERIFY_FAIL");
    if (!vf || !strcmp(vf, "report"))
        c->verify_fail = GS_VERIFY_REPORT;
    else if (!strcmp(vf, "abort"))
        c->verify_fail = GS_VERIFY_ABORT;
    else if (!strcmp(vf, "exit"))
        c->verify_fail = GS_VERIFY_EXIT;
    else
        reject(c, "GEMMSHIM_VERIFY_FAIL='%.64s' is not one of: report, abort, exit", vf);
    const char *vt = get("GEMMSHIM_VERIFY_TOL");
    if (vt) {
        char *end = NULL;
        errno = 0;
        double tol = strtod(vt, &end);
        /* ERANGE: 1e-400 underflows to 0, which would mean "bit-exact" */
        if (!*vt || isspace((unsigned char)*vt) || *end || errno == ERANGE || !(tol >= 0.0) ||
            tol > 1.0)
            reject(c, "GEMMSHIM_VERIFY_TOL='%.64s' is not a number in [0, 1] (0: bit-exact; "
                      "a positive one at least %g)", vt, DBL_MIN);
        else
            c->verify_tol = tol > 0.0 ? tol : -1.0; /* -1: exact match required */
    }
    p = get("GEMMSHIM_REPORT");
    if (p)
        copy_path(c, "GEMMSHIM_REPORT", p, c->report_path);
    p = get("GEMMSHIM_RECORD");
    if (p)
        copy_path(c, "GEMMSHIM_RECORD", p, c->record_path);
    p = get("GEMMSHIM_TABLE");
    if (p)
        copy_path(c, "GEMMSHIM_TABLE", p, c->table_path);
    c->workspace_cap = (size_t)GS_WORKSPACE_MB_DEFAULT << 20;
    const char *wm = get("GEMMSHIM_WORKSPACE_MB");
    if (wm) {
        char *end = NULL;
        errno = 0;
        long mb = strtol(wm, &end, 10);
        if (!*wm || isspace((unsigned char)*wm) || *end || errno == ERANGE || mb < 0 ||
            mb > 65536)
            reject(c, "GEMMSHIM_WORKSPACE_MB='%.64s' is not a whole number of MiB in [0, 65536]",
                   wm);
        else
            c->workspace_cap = (size_t)mb << 20;
    }
    parse_bool(c, "GEMMSHIM_DLSYM", get("GEMMSHIM_DLSYM"), &c->intercept_dlsym);
    const char *pd = get("GEMMSHIM_PDL");
    c->pdl = 1;
    if (pd)
        parse_bool(c, "GEMMSHIM_PDL", pd, &c->pdl);
    parse_test_device(c, get("GEMMSHIM_TEST_DEVICE"));
    parse_test_faults(c, get("GEMMSHIM_TEST_FAULTS"));
    parse_knobs(c, get);
    parse_tune(c, get);
    if (c->error) {
        c->routing.mode = GS_MODE_OFF;
        return -1;
    }
    return 0;
}
