/* GEMMSHIM_HOLD's list; see gs_hold_list.h. */
#include "gs_hold_list.h"
#include "gs_class_hex.h"

#include <stdio.h>
#include <string.h>

/* An entry longer than this is named by its start and its length. */
enum { SHOWN = 24 };

/* Appends entry s (len bytes) to bad, as gs_hold_list_parse says. */
static void name_bad(char *bad, size_t size, size_t *used, const char *s, size_t len)
{
    if (!size || *used >= size)
        return;
    char item[SHOWN + 48];
    if (len <= SHOWN)
        snprintf(item, sizeof item, "%s'%.*s'", *used ? ", " : "", (int)len, s);
    else
        snprintf(item, sizeof item, "%s'%.16s...' (%zu characters)", *used ? ", " : "", s,
                 len);
    const size_t n = strlen(item);
    if (*used + n < size) {
        memcpy(bad + *used, item, n + 1);
        *used += n;
        return;
    }
    /* no room for it: "..." ends the list where it fits */
    const char *more = *used ? ", ..." : "...";
    const size_t need = strlen(more) + 1;
    const size_t at = *used + need <= size ? *used : (size >= need ? size - need : 0);
    snprintf(bad + at, size - at, "%s", more);
    *used = size;
}

int gs_hold_list_parse(const char *v, gs_hold_item_fn fn, void *ctx, char *bad, size_t bad_size)
{
    size_t used = 0;
    int left_out = 0;
    if (bad_size)
        bad[0] = '\0';
    if (!v || !*v)
        return 0;
    for (const char *s = v;;) {
        const size_t len = strcspn(s, ",");
        gs_class_t c;
        if (len == 3 && !strncmp(s, "all", 3)) {
            fn(ctx, NULL);
        } else if (!gs_class_of_hex(s, len, &c)) {
            fn(ctx, &c);
        } else {
            name_bad(bad, bad_size, &used, s, len);
            ++left_out;
        }
        s += len;
        if (!*s)
            break;
        ++s; /* past the comma: an entry follows, perhaps an empty one */
    }
    return left_out;
}
