/* Signatures held at their prior; see gs_tune_hold.h. */
#include "gs_tune_hold.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct held {
    gs_class_t cls;
    int used;
} held_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static held_t *table;   /* open addressing, cap a power of two; never shrinks */
static size_t cap, count;
static int all;         /* every class held */
/* nonzero while anything is held: the lock-free answer for everyone else */
static int active;
static unsigned generation;

/* Under lock: c's slot (holding it, or the empty one where it goes). */
static held_t *slot_of(held_t *t, size_t n, const gs_class_t *c)
{
    size_t i = (size_t)gs_class_hash(c, 0) & (n - 1);
    while (t[i].used && memcmp(&t[i].cls, c, sizeof *c))
        i = (i + 1) & (n - 1);
    return &t[i];
}

/* Under lock: room for one more, at most half full so probes end. */
static int grow(void)
{
    if ((count + 1) * 2 <= cap)
        return 0;
    const size_t n = cap ? cap * 2 : 64;
    held_t *t = calloc(n, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < cap; ++i)
        if (table[i].used)
            *slot_of(t, n, &table[i].cls) = table[i];
    free(table);
    table = t;
    cap = n;
    return 0;
}

/* Under lock: removes c, moving later entries of its probe run back so
 * lookups still find them. */
static int release(const gs_class_t *c)
{
    if (!cap)
        return 0;
    held_t *e = slot_of(table, cap, c);
    if (!e->used)
        return 0;
    size_t i = (size_t)(e - table);
    e->used = 0;
    --count;
    for (size_t j = (i + 1) & (cap - 1); table[j].used; j = (j + 1) & (cap - 1)) {
        const held_t moved = table[j];
        table[j].used = 0;
        *slot_of(table, cap, &moved.cls) = moved;
    }
    return 1;
}

int gs_tune_hold(const gs_class_t *c, int on)
{
    int rc = 0, changed = 0;
    pthread_mutex_lock(&lock);
    if (!c) {
        changed = all != !!on || (!on && count);
        all = !!on;
        if (!on && cap) {
            memset(table, 0, cap * sizeof *table);
            count = 0;
        }
    } else if (!on) {
        changed = release(c);
    } else if (!cap || !slot_of(table, cap, c)->used) {
        if (count >= GS_TUNE_HOLD_MAX || grow()) {
            rc = -1;
        } else {
            held_t *e = slot_of(table, cap, c);
            e->cls = *c;
            e->used = 1;
            ++count;
            changed = 1;
        }
    }
    __atomic_store_n(&active, all || count, __ATOMIC_RELEASE);
    if (changed) /* after the set changed: a key made with it sees the new set */
        __atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&lock);
    return rc;
}

int gs_tune_held(const gs_class_t *c)
{
    if (!__atomic_load_n(&active, __ATOMIC_ACQUIRE))
        return 0;
    pthread_mutex_lock(&lock);
    const int held = all || (cap && slot_of(table, cap, c)->used);
    pthread_mutex_unlock(&lock);
    return held;
}

unsigned gs_tune_hold_generation(void)
{
    return __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
}

size_t gs_tune_hold_count(void)
{
    pthread_mutex_lock(&lock);
    const size_t n = count;
    pthread_mutex_unlock(&lock);
    return n;
}
