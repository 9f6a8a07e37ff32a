/* GEMMSHIM_HOLD's value: the signatures held at their prior from start-up
 * (gs_tune_hold.h; the C API's gemmshim_hold_prior). "all" stands for
 * every signature; otherwise the value is a comma list of classes as the
 * tune cache keys them (gs_class_hex.h: lower-case hex, taken as written).
 * Parsing only: the caller holds what it is given. Pure C. */
#ifndef GS_HOLD_LIST_H
#define GS_HOLD_LIST_H

#include "gs_problem.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One entry to hold: cls NULL for "all". */
typedef void (*gs_hold_item_fn)(void *ctx, const gs_class_t *cls);

/* Walks list v (NULL or "": nothing) and gives each entry that is "all"
 * or a class's hex to fn, in order. Every other entry (an empty one
 * between commas included) is left out and named in bad: quoted, a long
 * one cut short with its length, separated by ", ", the whole cut to
 * bad_size with "..." (always NUL-terminated when bad_size > 0). Returns
 * the number of entries left out. */
int gs_hold_list_parse(const char *v, gs_hold_item_fn fn, void *ctx, char *bad,
                       size_t bad_size);

#ifdef __cplusplus
}
#endif
#endif /* GS_HOLD_LIST_H */
