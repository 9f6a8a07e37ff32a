/* The registry: the one list of kernel families. */
#include "gs_registry.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* In order of preference when nothing measured tells them apart: the decode
 * kernel (it only takes few columns), the Hopper tensor-core kernels, then
 * the SIMT one; the experimental FP8 tiles take only FP8 calls. A new family: its table (kernels/<family>_family.c) and one
 * line here. */
extern const gs_family_t gs_family_skinny, gs_family_pingpong, gs_family_sgemm_simt, gs_family_fp8;
enum { N_BUILTIN = 4 };

/* The built-in families, then those added at start-up (gs_registry_add:
 * cuBLASLt's algorithms, plugins). Adds happen before the first call is
 * served; the count is published after the slot is written, so a reader
 * never sees a half-added family. */
static const gs_family_t *families[GS_REGISTRY_MAX] = {
    &gs_family_skinny,
    &gs_family_pingpong,
    &gs_family_sgemm_simt,
    /* experimental, opt-in (GEMMSHIM_FP8_TILES=1): last, so the others keep
     * their candidate numbers */
    &gs_family_fp8,
};
static int n_families = N_BUILTIN;
static pthread_mutex_t add_lock = PTHREAD_MUTEX_INITIALIZER;
#define N_FAMILIES __atomic_load_n(&n_families, __ATOMIC_ACQUIRE)

int gs_family_count(void)
{
    return N_FAMILIES;
}

/* The family among the first n whose name or one of whose configuration
 * names is `name`; NULL when none. */
static const gs_family_t *name_owner(const char *name, int n)
{
    for (int i = 0; i < n; ++i) {
        if (!strcmp(families[i]->name, name))
            return families[i];
        for (int c = 0; c < families[i]->n_configs; ++c)
            if (!strcmp(families[i]->config_name(c), name))
                return families[i];
    }
    return NULL;
}

/* The first name of f that is taken, by another family or twice in f
 * itself (a configuration may repeat the family's own name: a family of
 * one configuration names it so); 0 when none, else -1 with msg. */
static int names_clash(const gs_family_t *f, int n, char *msg, size_t msg_size)
{
    for (int c = -1; c < f->n_configs; ++c) {
        const char *name = c < 0 ? f->name : f->config_name(c);
        if (!name || !name[0]) {
            snprintf(msg, msg_size, "family '%s': configuration %d has no name", f->name, c);
            return -1;
        }
        const gs_family_t *owner = name_owner(name, n);
        if (owner) {
            snprintf(msg, msg_size, "name '%s' is taken by family '%s'", name, owner->name);
            return -1;
        }
        for (int d = 0; d < c; ++d)
            if (!strcmp(f->config_name(d), name)) {
                snprintf(msg, msg_size, "family '%s': configuration name '%s' given twice",
                         f->name, name);
                return -1;
            }
    }
    return 0;
}

int gs_registry_add(const gs_family_t *f, char *msg, size_t msg_size)
{
    if (msg_size)
        msg[0] = '\0';
    if (!f || !f->name || !f->name[0] || f->n_configs < 1 || !f->config_name ||
        !f->can_implement || !f->plan || !f->run) {
        snprintf(msg, msg_size, "family table incomplete");
        return -1;
    }
    pthread_mutex_lock(&add_lock);
    int rc = names_clash(f, n_families, msg, msg_size), n = n_families, configs = 0;
    for (int i = 0; i < n; ++i)
        configs += families[i]->n_configs;
    if (!rc && n >= GS_REGISTRY_MAX) {
        snprintf(msg, msg_size, "registry full (%d families)", GS_REGISTRY_MAX);
        rc = -1;
    }
    if (!rc && configs + f->n_configs > GS_CANDIDATES_MAX) {
        snprintf(msg, msg_size, "too many configurations (%d of at most %d)",
                 configs + f->n_configs, GS_CANDIDATES_MAX);
        rc = -1;
    }
    if (!rc) {
        families[n] = f;
        __atomic_store_n(&n_families, n + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&add_lock);
    return rc;
}

void gs_registry_reset(void)
{
    pthread_mutex_lock(&add_lock);
    __atomic_store_n(&n_families, N_BUILTIN, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&add_lock);
}

const gs_family_t *gs_family_at(int i)
{
    return i >= 0 && i < N_FAMILIES ? families[i] : NULL;
}

const gs_family_t *gs_family_find(const char *name)
{
    for (int i = 0; i < N_FAMILIES; ++i)
        if (!strcmp(families[i]->name, name))
            return families[i];
    return NULL;
}

int gs_candidate_count(void)
{
    int n = 0;
    for (int i = 0; i < N_FAMILIES; ++i)
        n += families[i]->n_configs;
    return n < GS_CANDIDATES_MAX ? n : GS_CANDIDATES_MAX;
}

const gs_family_t *gs_candidate(int i, int *config)
{
    for (int f = 0; f < N_FAMILIES && i >= 0; ++f) {
        if (i < families[f]->n_configs) {
            *config = i;
            return families[f];
        }
        i -= families[f]->n_configs;
    }
    *config = 0;
    return NULL;
}

int gs_candidate_of(const gs_family_t *f, int config)
{
    int base = 0;
    for (int i = 0; i < N_FAMILIES; ++i) {
        if (families[i] == f)
            return config >= 0 && config < f->n_configs && base + config < GS_CANDIDATES_MAX
                       ? base + config
                       : -1;
        base += families[i]->n_configs;
    }
    return -1;
}

const char *gs_candidate_name(int i)
{
    int config;
    const gs_family_t *f = gs_candidate(i, &config);
    return f ? f->config_name(config) : "?";
}

int gs_candidate_find(const char *config_name)
{
    for (int i = 0; i < gs_candidate_count(); ++i)
        if (!strcmp(gs_candidate_name(i), config_name))
            return i;
    return -1;
}

uint64_t gs_candidates_all(void)
{
    const int n = gs_candidate_count();
    return n >= 64 ? ~0ull : (1ull << n) - 1;
}

uint64_t gs_candidates_of_family(const gs_family_t *f)
{
    uint64_t bits = 0;
    for (int c = 0; c < f->n_configs; ++c) {
        const int i = gs_candidate_of(f, c);
        if (i >= 0)
            bits |= 1ull << i;
    }
    return bits;
}

int gs_knob_count(void)
{
    int n = 0;
    for (int i = 0; i < N_FAMILIES; ++i)
        n += families[i]->n_knobs;
    return n < GS_KNOBS_MAX ? n : GS_KNOBS_MAX;
}

const gs_knob_t *gs_knob_at(int i, const gs_family_t **family)
{
    for (int f = 0; f < N_FAMILIES && i >= 0; ++f) {
        if (i < families[f]->n_knobs) {
            *family = families[f];
            return &families[f]->knobs[i];
        }
        i -= families[f]->n_knobs;
    }
    *family = NULL;
    return NULL;
}

void gs_knobs_apply(const int *values)
{
    int base = 0;
    for (int f = 0; f < N_FAMILIES; ++f) {
        const gs_family_t *fam = families[f];
        if (fam->n_knobs && fam->set_knobs && base + fam->n_knobs <= GS_KNOBS_MAX)
            fam->set_knobs(values + base);
        base += fam->n_knobs;
    }
}

const char *gs_family_config_text(const gs_family_t *f, const gs_problem_t *p,
                                  const gs_device_t *d, int config, char *buf, size_t size)
{
    if (f->config_text)
        return f->config_text(p, d, config, buf, size);
    snprintf(buf, size, "%s", f->config_name(config));
    return buf;
}

int gs_family_config_from_text(const gs_family_t *f, const gs_problem_t *p, const gs_device_t *d,
                               const char *text)
{
    if (f->config_from_text)
        return f->config_from_text(p, d, text);
    for (int c = 0; c < f->n_configs; ++c)
        if (!strcmp(f->config_name(c), text))
            return c;
    return -1;
}
