/* Per-thread decision cache in front of gs_dispatch; see gs_decide.h. */
#include "gs_decide.h"
#include "gs_plugin.h"
#include "gs_state.h"
#include "gs_tune_cache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 64 /* direct-mapped: a thread rarely cycles more signatures */

/* Every input gs_dispatch and the families' can_implement read: the call's
 * class (its bytes), the device, the routing in force, the knobs, the
 * plugins and the table's generation. */
typedef struct key {
    gs_class_t cls;
    gs_device_t dev;
    int32_t mode, policy, tune, reserved;
    uint64_t allowed, knob_key, plugin_key;
    uint64_t table_generation, tuned_generation;
} gs_key_t;

typedef struct slot {
    int used;
    gs_key_t key;
    gs_decision_t dec;
} slot_t;

static __thread slot_t cache[SLOTS];
static __thread unsigned long long hits, misses;

static void make_key(gs_key_t *k, const gs_problem_t *p, const gs_device_t *d,
                     const gs_routing_t *r)
{
    memset(k, 0, sizeof *k); /* padding included: keys compare with memcmp */
    k->cls = p->cls;
    k->dev.present = d->present;
    k->dev.ordinal = d->ordinal;
    k->dev.cc_major = d->cc_major;
    k->dev.cc_minor = d->cc_minor;
    k->dev.sm_count = d->sm_count;
    k->dev.smem_optin = d->smem_optin;
    k->dev.l2_bytes = d->l2_bytes;
    memcpy(k->dev.gpu, d->gpu, sizeof k->dev.gpu);
    k->mode = r->mode;
    k->policy = r->policy;
    k->allowed = r->allowed;
    k->knob_key = gs_cfg()->knob_key;
    k->plugin_key = gs_plugins_key(); /* the plugins' names, versions, build ids */
    k->table_generation = gs_table_generation();
    k->tune = r->tune;
    /* a decision tuned since changes the answer (one bump per signature decided) */
    k->tuned_generation = r->tune != GS_TUNE_OFF ? gs_tuned_generation() : 0;
}

static unsigned slot_of(const gs_key_t *k)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    const unsigned char *b = (const unsigned char *)k;
    for (size_t i = 0; i + 8 <= sizeof *k; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    return (unsigned)(h & (SLOTS - 1));
}

gs_decision_t gs_decide(const gs_problem_t *p, const gs_device_t *d, const gs_routing_t *r)
{
    gs_key_t k;
    make_key(&k, p, d, r);
    slot_t *s = &cache[slot_of(&k)];
    if (s->used && !memcmp(&s->key, &k, sizeof k)) {
        ++hits;
        return s->dec;
    }
    ++misses;
    gs_decision_t dec = gs_dispatch(p, d, r);
    s->key = k;
    s->dec = dec;
    s->used = 1;
    return dec;
}

void gs_decide_counts(unsigned long long *h, unsigned long long *m)
{
    *h = hits;
    *m = misses;
}
