/* See gs_class_map.h. */
#include "gs_class_map.h"

#include <string.h>

void **gs_class_map_slot(gs_class_map_t *m, const gs_class_t *c, int ordinal)
{
    size_t i = (size_t)gs_class_hash(c, (uint64_t)ordinal) % m->cap;
    for (size_t probes = 0; probes < m->cap; ++probes, i = (i + 1) % m->cap) {
        const gs_class_key_t *k = m->slots[i];
        if (!k)
            return m->count < m->max_count ? &m->slots[i] : NULL;
        if (k->ordinal == ordinal && !memcmp(&k->cls, c, sizeof *c))
            return &m->slots[i];
    }
    return NULL;
}

void gs_class_map_put(gs_class_map_t *m, void **slot, void *entry)
{
    *slot = entry;
    ++m->count;
}
