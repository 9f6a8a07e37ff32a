/* The registry: the one list of kernel families. */
#include "gs_registry.h"

#include <string.h>

/* In order of preference when nothing measured tells them apart: the decode
 * kernel (it only takes few columns), the Hopper tensor-core kernels, then
 * the SIMT one. A new family: its table (kernels/<family>_family.c) and one
 * line here. */
extern const gs_family_t gs_family_skinny, gs_family_pingpong, gs_family_sgemm_simt;
static const gs_family_t *const families[] = {
    &gs_family_skinny,
    &gs_family_pingpong,
    &gs_family_sgemm_simt,
};
enum { N_FAMILIES = sizeof families / sizeof families[0] };

int gs_family_count(void)
{
    return N_FAMILIES;
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
