/* A call's class as text: its bytes in lower-case hex, in memory order. The
 * tune cache keys its lines by it, `gemmshim record` writes it, and the
 * offline tuner reads it back into a call. */
#ifndef GS_CLASS_HEX_H
#define GS_CLASS_HEX_H

#include "gs_problem.h"

#include <stddef.h>

#define GS_CLASS_HEX_LEN (2 * sizeof(gs_class_t))

void gs_class_hex(const gs_class_t *c, char out[GS_CLASS_HEX_LEN + 1]);
/* The class `len` hex characters encode: 0, or -1 when they are not one. */
int gs_class_of_hex(const char *hex, size_t len, gs_class_t *c);

#endif
