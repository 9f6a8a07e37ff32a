/* Per-thread decision cache in front of gs_dispatch; see gs_decide.h. */
#include "gs_decide.h"
#include "gs_plugin.h"
#include "gs_state.h"
#include "gs_tune_cache.h"
#include "gs_tune_hold.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Set-associative with least-recently-used replacement. An application
 * cycles through its signatures every iteration (a training step, a decode
 * step): a signature evicted before its next turn misses on every call, and
 * a miss asks every kernel's can_implement and the routing table (~13,000
 * instructions, against ~300 for a hit). A direct-mapped table of 64 slots
 * did that to any two signatures whose keys shared a slot: two of the four
 * of the fake cuBLAS's sample application, which is likely among the 20-40
 * signatures of a model. Here a set holds WAYS signatures and the table
 * SETS * WAYS; allocated at a thread's first decision, so threads that
 * never call a GEMM carry none of its ~110 KB. */
#define WAYS 8
#define SETS 32 /* a power of two */

/* Every input gs_dispatch and the families' can_implement read: the call's
 * class (its bytes), the device, the routing in force, the knobs, the
 * plugins, the table's generation, and while tuned routing is on the tuned
 * decisions' and the held signatures' generations. */
typedef struct key {
    gs_class_t cls;
    gs_device_t dev;
    int32_t mode, policy, tune;
    uint32_t hold_generation;
    uint64_t allowed, knob_key, plugin_key;
    uint64_t table_generation, tuned_generation;
} gs_key_t;

typedef struct slot {
    uint64_t used; /* 0: empty; else the thread's decision count when last used */
    gs_key_t key;
    gs_decision_t dec;
} slot_t;

typedef struct thread_cache {
    slot_t set[SETS][WAYS];
    uint64_t clock;
    unsigned long long hits, misses;
} thread_cache_t;

static __thread thread_cache_t *cache;
static __thread int no_cache; /* its allocation failed, or the thread is exiting */

static pthread_key_t exit_key;
static int exit_key_ok;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

/* At the thread's exit: its cache goes, and any later decision of the
 * exiting thread (another destructor's GEMM) is made without one. */
static void thread_exit(void *c)
{
    free(c);
    cache = NULL;
    no_cache = 1;
}

static void exit_key_init(void)
{
    exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

static thread_cache_t *thread_cache(void)
{
    if (cache || no_cache)
        return cache;
    pthread_once(&exit_once, exit_key_init);
    thread_cache_t *c = calloc(1, sizeof *c);
    if (!c || !exit_key_ok || pthread_setspecific(exit_key, c) != 0) {
        free(c); /* never freed at exit otherwise: decide without a cache */
        no_cache = 1;
        return NULL;
    }
    return cache = c;
}

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
    /* a signature held at its prior, or released (gemmshim_hold_prior) */
    k->hold_generation = r->tune != GS_TUNE_OFF ? gs_tune_hold_generation() : 0;
}

static unsigned set_of(const gs_key_t *k)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    const unsigned char *b = (const unsigned char *)k;
    for (size_t i = 0; i + 8 <= sizeof *k; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    return (unsigned)(h & (SETS - 1));
}

gs_decision_t gs_decide(const gs_problem_t *p, const gs_device_t *d, const gs_routing_t *r)
{
    thread_cache_t *c = thread_cache();
    if (!c)
        return gs_dispatch(p, d, r);
    gs_key_t k;
    make_key(&k, p, d, r);
    slot_t *set = c->set[set_of(&k)], *lru = &set[0];
    ++c->clock;
    for (int w = 0; w < WAYS; ++w) {
        slot_t *s = &set[w];
        if (s->used && !memcmp(&s->key, &k, sizeof k)) {
            s->used = c->clock;
            ++c->hits;
            return s->dec;
        }
        if (s->used < lru->used)
            lru = s; /* an empty way (0) first, else the least recently used */
    }
    ++c->misses;
    gs_decision_t dec = gs_dispatch(p, d, r);
    lru->key = k;
    lru->dec = dec;
    lru->used = c->clock;
    return dec;
}

void gs_decide_counts(unsigned long long *h, unsigned long long *m)
{
    *h = cache ? cache->hits : 0;
    *m = cache ? cache->misses : 0;
}
