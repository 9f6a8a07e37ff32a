/* A fixed-size table of per-class entries, keyed by a call's class and a
 * device ordinal: the tuner's signatures (shim/tune/gs_tune.c) and the cuBLASLt
 * family's descriptors (shim/tune/gs_lt_algos.c) are found this way. An entry is
 * the caller's struct whose first member is a gs_class_key_t; the table
 * holds pointers and never frees them (plans may point at entries). Not
 * thread-safe: the caller holds its own lock. Pure C. */
#ifndef GS_CLASS_MAP_H
#define GS_CLASS_MAP_H

#include "gs_problem.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_class_key {
    gs_class_t cls;
    int32_t ordinal;
    int32_t reserved;
} gs_class_key_t;

typedef struct gs_class_map {
    void **slots;     /* cap of them, NULL: empty (open addressing) */
    size_t cap;
    size_t max_count; /* entries it takes (below cap, so probes end) */
    size_t count;
} gs_class_map_t;

/* The slot of (c, ordinal): it holds the entry, or is the empty slot where
 * the entry goes (fill it with gs_class_map_put). NULL when the entry is
 * not there and the table holds max_count entries. */
void **gs_class_map_slot(gs_class_map_t *m, const gs_class_t *c, int ordinal);

/* Puts entry (whose key is set) into the empty slot gs_class_map_slot gave. */
void gs_class_map_put(gs_class_map_t *m, void **slot, void *entry);

#ifdef __cplusplus
}
#endif
#endif /* GS_CLASS_MAP_H */
