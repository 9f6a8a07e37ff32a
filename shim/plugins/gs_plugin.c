/* Plugins: loading, checking, and the adapter that makes each a kernel
 * family (dispatch/gs_family.h). See include/gemmshim_plugin.h for the
 * plugin's side and docs/DESIGN.md, "Writing a plugin". */
#include "gs_plugin.h"
#include "gs_config.h"
#include "gs_kernels.h"
#include "gs_registry.h"
#include "gs_sink.h"
#include "gemmshim_plugin.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { NAME_MAX_LEN = 31, CONFIG_NAME_MAX_LEN = 63, PLUGIN_CONFIGS_MAX = 16 };

/* A cudaError_t for a plugin call that broke the rules (called cuBLAS,
 * threw): cudaErrorNotPermitted. */
#define ERR_NOT_PERMITTED 800

typedef struct plugin {
    gs_family_t family;          /* first: plan->family leads back here */
    const gemmshim_plugin_t *d;
    int warned_reentry, warned_throw;
} plugin_t;

static plugin_t plugins[GS_PLUGINS_MAX];
static int n_plugins;
static uint64_t key;
/* what gs_plugins_report says: one line per library */
static char lines[GS_PLUGINS_MAX][GS_PATH_MAX + 256];
static int line_is_problem[GS_PLUGINS_MAX], n_lines;

/* The plugin whose function this thread is in (or that it is loading),
 * and whether it called cuBLAS. */
static __thread plugin_t *inside;
static __thread int loading, reentered;

int gs_plugin_reentered(void)
{
    plugin_t *pl = inside;
    if (!pl && !loading)
        return 0;
    reentered = 1;
    if (!pl) /* from a library being loaded: load_one leaves it out */
        return 1;
    if (!__atomic_exchange_n(&pl->warned_reentry, 1, __ATOMIC_RELAXED))
        gs_msg("plugin '%s' called cuBLAS from inside a call: refused "
               "(CUBLAS_STATUS_NOT_SUPPORTED), and the plugin's answer taken as a failure",
               pl->d->name);
    return 1;
}

static void said_throw(plugin_t *pl)
{
    if (!__atomic_exchange_n(&pl->warned_throw, 1, __ATOMIC_RELAXED))
        gs_msg("plugin '%s' let a C++ exception escape: its answer taken as a failure",
               pl->d->name);
}

/* ---- the views a plugin sees ---- */

static int32_t dtype_of(gs_dtype_t t)
{
    switch (t) {
    case GS_DT_F32: return GEMMSHIM_PLUGIN_F32;
    case GS_DT_F16: return GEMMSHIM_PLUGIN_F16;
    case GS_DT_BF16: return GEMMSHIM_PLUGIN_BF16;
    default: return 0;
    }
}

static int32_t compute_of(gs_compute_t c)
{
    switch (c) {
    case GS_CT_F32: return GEMMSHIM_PLUGIN_COMPUTE_F32;
    case GS_CT_F32_PEDANTIC: return GEMMSHIM_PLUGIN_COMPUTE_F32_PEDANTIC;
    case GS_CT_F32_FAST_16F: return GEMMSHIM_PLUGIN_COMPUTE_F32_FAST_16F;
    case GS_CT_F32_FAST_16BF: return GEMMSHIM_PLUGIN_COMPUTE_F32_FAST_16BF;
    default: return 0;
    }
}

/* A class as the plugin sees it (pointers NULL), or with p, the call:
 * 0, or -1 when ABI version 1 cannot describe it (a type or compute it has
 * no name for, a bias epilogue). */
static int view_of_class(const gs_class_t *c, const gs_problem_t *p,
                         gemmshim_plugin_problem_t *v)
{
    memset(v, 0, sizeof *v);
    v->struct_size = sizeof *v;
    v->abi_version = GEMMSHIM_PLUGIN_ABI_VERSION;
    v->a_type = dtype_of((gs_dtype_t)c->a_type);
    v->b_type = dtype_of((gs_dtype_t)c->b_type);
    v->c_type = dtype_of((gs_dtype_t)c->c_type);
    v->compute = compute_of((gs_compute_t)c->compute);
    v->scalar_type = dtype_of((gs_dtype_t)c->scalar_type);
    if (!v->a_type || !v->b_type || !v->c_type || !v->compute || !v->scalar_type ||
        c->bias_type != GS_DT_OTHER)
        return -1;
    v->trans_a = c->trans_a;
    v->trans_b = c->trans_b;
    v->scalars_on_device = c->scalars_on_device;
    v->beta_kind = c->beta_kind; /* the same numbering as gs_beta_kind_t */
    v->math_flags = c->math_flags;
    v->align_a = c->align_a;
    v->align_b = c->align_b;
    v->align_c = c->align_c;
    v->m = c->m;
    v->n = c->n;
    v->k = c->k;
    v->lda = c->lda;
    v->ldb = c->ldb;
    v->ldc = c->ldc;
    v->batch = c->batch;
    v->stride_a = c->stride_a;
    v->stride_b = c->stride_b;
    v->stride_c = c->stride_c;
    if (p) {
        v->A = p->A;
        v->B = p->B;
        v->C = p->C;
        v->alpha = p->alpha;
        v->beta = p->beta;
        v->stream = p->stream;
        /* past the flag bytes the built-in kernels keep zero
         * (kernels/gs_kernels.h): a plugin may leave its scratch dirty */
        if (p->workspace && p->workspace_size > GS_WS_FLAG_BYTES) {
            v->workspace = (char *)p->workspace + GS_WS_FLAG_BYTES;
            v->workspace_size = p->workspace_size - GS_WS_FLAG_BYTES;
        }
    }
    return 0;
}

static void device_view_of(const gs_device_t *d, gemmshim_plugin_device_t *v)
{
    memset(v, 0, sizeof *v);
    v->struct_size = sizeof *v;
    v->abi_version = GEMMSHIM_PLUGIN_ABI_VERSION;
    v->ordinal = d->ordinal;
    v->cc_major = d->cc_major;
    v->cc_minor = d->cc_minor;
    v->sm_count = d->sm_count;
    v->smem_optin = d->smem_optin;
    v->l2_bytes = d->l2_bytes;
}

/* ---- the adapter: a plugin as a gs_family_t ---- */

/* The re-entry guard around one call into pl: guard_enter returns the
 * plugin the thread was inside (plugins call no plugins, but the guard
 * nests), guard_leave restores it and says whether the call failed (it
 * called cuBLAS, or threw). */
static plugin_t *guard_enter(plugin_t *pl)
{
    plugin_t *outer = inside;
    inside = pl;
    reentered = 0;
    return outer;
}

static int guard_leave(plugin_t *pl, plugin_t *outer, int threw)
{
    const int failed = reentered || threw;
    reentered = 0;
    inside = outer;
    if (threw)
        said_throw(pl);
    return failed;
}

/* Calls one of pl's int functions under the guard; *failed as guard_leave. */
static int guarded_int(plugin_t *pl, gs_plugin_int_fn fn, const gemmshim_plugin_problem_t *v,
                       const gemmshim_plugin_device_t *dv, int config, int *failed)
{
    int threw = 0;
    plugin_t *outer = guard_enter(pl);
    const int r = gs_plugin_call_int(fn, v, dv, config, &threw);
    *failed = guard_leave(pl, outer, threw);
    return r;
}

static int adapter_can_implement(plugin_t *pl, const gs_class_t *c, const gs_device_t *d,
                                 int config)
{
    gemmshim_plugin_problem_t v;
    gemmshim_plugin_device_t dv;
    if (view_of_class(c, NULL, &v))
        return 0;
    device_view_of(d, &dv);
    int failed;
    const int yes = guarded_int(pl, pl->d->can_implement, &v, &dv, config, &failed);
    return yes == 1 && !failed;
}

static void adapter_plan(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *plan)
{
    plugin_t *pl = (plugin_t *)plan->family;
    plan->kernel = pl->d->config_names[plan->config];
    plan->workspace_bytes = 0;
    if (!pl->d->workspace_bytes)
        return;
    gemmshim_plugin_problem_t v;
    gemmshim_plugin_device_t dv;
    view_of_class(&p->cls, NULL, &v);
    device_view_of(d, &dv);
    int threw = 0;
    plugin_t *outer = guard_enter(pl);
    const size_t bytes = gs_plugin_call_size(pl->d->workspace_bytes, &v, &dv, plan->config, &threw);
    const int failed = guard_leave(pl, outer, threw);
    /* a failed answer asks for more than any cap: the call is forwarded */
    plan->workspace_bytes = failed ? (size_t)-1 / 2 : bytes ? bytes + GS_WS_FLAG_BYTES : 0;
}

static int adapter_run(const gs_plan_t *plan, const gs_problem_t *p, const gs_device_t *d)
{
    plugin_t *pl = (plugin_t *)plan->family;
    /* the family contract's answer (dispatch/gs_family.h): the plugin is
     * never called with less scratch than its workspace_bytes asked */
    if (!gs_plan_workspace_ok(plan, p))
        return GS_RUN_NO_WORKSPACE;
    gemmshim_plugin_problem_t v;
    gemmshim_plugin_device_t dv;
    if (view_of_class(&p->cls, p, &v))
        return ERR_NOT_PERMITTED; /* can_implement took no such problem */
    device_view_of(d, &dv);
    int failed;
    const int err = guarded_int(pl, pl->d->run, &v, &dv, plan->config, &failed);
    return failed && !err ? ERR_NOT_PERMITTED : err;
}

/* Each slot's own config_name and can_implement (the family table's
 * functions get no family argument). */
#define SLOT(i)                                                                         \
    static const char *config_name_##i(int c)                                          \
    {                                                                                   \
        return plugins[i].d->config_names[c];                                           \
    }                                                                                   \
    static int can_implement_##i(const gs_class_t *p, const gs_device_t *d, int c)     \
    {                                                                                   \
        return adapter_can_implement(&plugins[i], p, d, c);                            \
    }
SLOT(0) SLOT(1) SLOT(2) SLOT(3) SLOT(4) SLOT(5) SLOT(6) SLOT(7)
#undef SLOT
_Static_assert(GS_PLUGINS_MAX == 8, "one SLOT per plugin");
static const char *(*const config_name_of[GS_PLUGINS_MAX])(int) = {
    config_name_0, config_name_1, config_name_2, config_name_3,
    config_name_4, config_name_5, config_name_6, config_name_7};
static int (*const can_implement_of[GS_PLUGINS_MAX])(const gs_class_t *, const gs_device_t *,
                                                     int) = {
    can_implement_0, can_implement_1, can_implement_2, can_implement_3,
    can_implement_4, can_implement_5, can_implement_6, can_implement_7};

/* ---- loading ---- */

static void say(int problem, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int problem, const char *fmt, ...)
{
    if (n_lines == GS_PLUGINS_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lines[n_lines], sizeof lines[n_lines], fmt, ap);
    va_end(ap);
    line_is_problem[n_lines++] = problem;
}

/* [a-z0-9_], starting with a letter, 1..max characters */
static int good_name(const char *s, size_t max)
{
    if (!s || !(s[0] >= 'a' && s[0] <= 'z'))
        return 0;
    size_t n = 0;
    for (; s[n]; ++n)
        if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_'))
            return 0;
    return n <= max;
}

/* What is wrong with a descriptor, NULL when nothing is. */
static const char *descriptor_fault(const gemmshim_plugin_t *d, char *why, size_t size)
{
    if (d->abi_version != GEMMSHIM_PLUGIN_ABI_VERSION) {
        snprintf(why, size, "built for plugin ABI version %u, this gemmshim has version %u",
                 d->abi_version, GEMMSHIM_PLUGIN_ABI_VERSION);
        return why;
    }
    if (d->struct_size < sizeof *d)
        return "its descriptor is smaller than ABI version 1's (struct_size)";
    if (!good_name(d->name, NAME_MAX_LEN))
        return "its name is not 1 to 31 of [a-z0-9_], starting with a letter";
    if (!d->version || !d->build_id)
        return "its version or build id is missing (NULL)";
    if (d->n_configs < 1 || d->n_configs > PLUGIN_CONFIGS_MAX || !d->config_names)
        return "it has no configurations, or more than 16";
    if (!d->can_implement || !d->run)
        return "can_implement or run is missing (NULL)";
    const size_t len = strlen(d->name);
    for (int c = 0; c < d->n_configs; ++c) {
        const char *cn = d->config_names[c];
        if (!good_name(cn, CONFIG_NAME_MAX_LEN) || strncmp(cn, d->name, len) ||
            (cn[len] && cn[len] != '_')) {
            snprintf(why, size, "configuration %d's name '%.64s' is not the plugin's name "
                     "or its name followed by '_' and [a-z0-9_] (at most 63 characters)",
                     c, cn ? cn : "(null)");
            return why;
        }
    }
    return NULL;
}

static void load_one(const char *path)
{
    dlerror();
    void *lib = dlopen(path, RTLD_LOCAL | RTLD_NOW);
    if (!lib) {
        const char *e = dlerror();
        say(1, "plugin %s ignored: cannot load it: %s", path, e ? e : "dlopen failed");
        return;
    }
    gemmshim_plugin_init_fn init;
    *(void **)&init = dlsym(lib, GEMMSHIM_PLUGIN_INIT_SYMBOL);
    if (!init) {
        say(1, "plugin %s ignored: it has no %s (not a gemmshim plugin)", path,
            GEMMSHIM_PLUGIN_INIT_SYMBOL);
        dlclose(lib);
        return;
    }
    /* A library whose initialisation ran stays loaded whatever comes next
     * (its destructors are not run early); it is only never called again. */
    const gemmshim_plugin_t *d = NULL;
    const int rc = init(GEMMSHIM_PLUGIN_ABI_VERSION, &d);
    if (reentered) {
        say(1, "plugin %s ignored: it called cuBLAS while loading", path);
        return;
    }
    if (rc || !d) {
        say(1, "plugin %s ignored: %s declined (returned %d) for plugin ABI version %u", path,
            GEMMSHIM_PLUGIN_INIT_SYMBOL, rc, GEMMSHIM_PLUGIN_ABI_VERSION);
        return;
    }
    char why[256];
    const char *fault = descriptor_fault(d, why, sizeof why);
    if (fault) {
        say(1, "plugin %s ignored: %s", path, fault);
        return;
    }
    const int i = n_plugins;
    plugin_t *pl = &plugins[i];
    memset(pl, 0, sizeof *pl);
    pl->d = d;
    pl->family.name = d->name;
    pl->family.n_configs = d->n_configs;
    pl->family.config_name = config_name_of[i];
    pl->family.can_implement = can_implement_of[i];
    pl->family.plan = adapter_plan;
    pl->family.run = adapter_run;
    char msg[256];
    if (gs_registry_add(&pl->family, msg, sizeof msg)) {
        say(1, "plugin %s ignored: %s", path, msg);
        return;
    }
    ++n_plugins; /* the library stays loaded for the process's life */
    say(0, "plugin '%s' %s (build %s) from %s: %d configuration%s", d->name, d->version,
        d->build_id, path, d->n_configs, d->n_configs == 1 ? "" : "s");
    const char *parts[3] = {d->name, d->version, d->build_id};
    for (int k = 0; k < 3; ++k) {
        for (const char *s = parts[k]; *s; ++s)
            key = (key ^ (unsigned char)*s) * 0x100000001b3ull;
        key = (key ^ 0xff) * 0x100000001b3ull; /* a separator: "ab"+"c" is not "a"+"bc" */
    }
}

void gs_plugins_load(const char *list)
{
    static char paths[GS_PLUGINS_MAX][GS_PATH_MAX];
    char msg[128];
    if (!list)
        return;
    const int n = gs_parse_plugin_list(list, paths, msg, sizeof msg);
    key = 0xcbf29ce484222325ull;
    loading = 1; /* a cuBLAS call from a constructor or the init is refused */
    for (int i = 0; i < n; ++i) {
        reentered = 0;
        load_one(paths[i]);
    }
    loading = 0;
    reentered = 0;
}

void gs_plugins_report(void)
{
    for (int i = 0; i < n_lines; ++i) {
        if (line_is_problem[i])
            gs_msg("%s", lines[i]);
        else
            gs_log_line("%s", lines[i]);
    }
}

uint64_t gs_plugins_key(void)
{
    return n_plugins ? key : 0;
}
