/* GEMMSHIM_HOLD's list (dispatch/gs_hold_list.c): "all", classes' hex,
 * both; entries that are neither left out and named (empty ones, upper-case
 * hex, a class cut short), the good ones still given; the list of names cut
 * to its buffer, never past it. */
#include "gs_class_hex.h"
#include "gs_hold_list.h"
#include "gs_test.h"

#include <stdio.h>
#include <string.h>

enum { MAX_ITEMS = 8 };

typedef struct got {
    int n, all;
    gs_class_t cls[MAX_ITEMS];
    int is_all[MAX_ITEMS];
} got_t;

static void collect(void *ctx, const gs_class_t *c)
{
    got_t *g = ctx;
    if (g->n == MAX_ITEMS)
        return;
    g->is_all[g->n] = !c;
    if (c)
        g->cls[g->n] = *c;
    else
        ++g->all;
    ++g->n;
}

static gs_class_t class_m(int64_t m)
{
    gs_class_t c;
    memset(&c, 0, sizeof c);
    c.entry = 1;
    c.m = m;
    c.n = c.k = 64;
    return c;
}

static int same(const gs_class_t *a, const gs_class_t *b)
{
    return !memcmp(a, b, sizeof *a);
}

static int parse(const char *v, got_t *g, char *bad, size_t size)
{
    memset(g, 0, sizeof *g);
    return gs_hold_list_parse(v, collect, g, bad, size);
}

static void test_good(void)
{
    got_t g;
    char bad[256];
    CHECK_EQ_INT(parse(NULL, &g, bad, sizeof bad), 0);
    CHECK_EQ_INT(g.n, 0);
    CHECK_STR_EQ(bad, "");
    CHECK_EQ_INT(parse("", &g, bad, sizeof bad), 0); /* empty: nothing held */
    CHECK_EQ_INT(g.n, 0);
    CHECK_EQ_INT(parse("all", &g, bad, sizeof bad), 0);
    CHECK(g.n == 1 && g.is_all[0]);

    const gs_class_t a = class_m(100), b = class_m(200);
    char ha[GS_CLASS_HEX_LEN + 1], hb[GS_CLASS_HEX_LEN + 1];
    gs_class_hex(&a, ha);
    gs_class_hex(&b, hb);
    char list[3 * GS_CLASS_HEX_LEN + 16];
    snprintf(list, sizeof list, "%s,%s", ha, hb);
    CHECK_EQ_INT(parse(list, &g, bad, sizeof bad), 0);
    CHECK_EQ_INT(g.n, 2);
    CHECK(!g.is_all[0] && same(&g.cls[0], &a));
    CHECK(!g.is_all[1] && same(&g.cls[1], &b));
    /* "all" among classes: each given, in order */
    snprintf(list, sizeof list, "%s,all", ha);
    CHECK_EQ_INT(parse(list, &g, bad, sizeof bad), 0);
    CHECK(g.n == 2 && same(&g.cls[0], &a) && g.is_all[1]);
}

static void test_bad(void)
{
    got_t g;
    char bad[256];
    const gs_class_t a = class_m(100);
    char ha[GS_CLASS_HEX_LEN + 1];
    gs_class_hex(&a, ha);
    char list[4 * GS_CLASS_HEX_LEN + 64];
    /* a word, an empty entry, the class, a trailing comma: the class held,
     * three left out and named */
    snprintf(list, sizeof list, "nope,,%s,", ha);
    CHECK_EQ_INT(parse(list, &g, bad, sizeof bad), 3);
    CHECK(g.n == 1 && same(&g.cls[0], &a));
    CHECK_STR_EQ(bad, "'nope', '', ''");
    /* "ALL" and upper-case hex are not taken; a class cut short is named by
     * its start and length */
    char upper[GS_CLASS_HEX_LEN + 1];
    memcpy(upper, ha, sizeof upper);
    for (char *p = upper; *p; ++p)
        if (*p >= 'a' && *p <= 'f')
            *p = (char)(*p - 'a' + 'A');
    snprintf(list, sizeof list, "ALL,%.*s,%s", (int)GS_CLASS_HEX_LEN - 1, ha, upper);
    const int upper_differs = strcmp(upper, ha) != 0;
    CHECK_EQ_INT(parse(list, &g, bad, sizeof bad), 2 + upper_differs);
    CHECK_EQ_INT(g.n, upper_differs ? 0 : 1);
    CHECK_CONTAINS(bad, "'ALL', '");
    char cut[64];
    snprintf(cut, sizeof cut, "'%.16s...' (%d characters)", ha, (int)GS_CLASS_HEX_LEN - 1);
    CHECK_CONTAINS(bad, cut);
    /* " all" is not "all": values are taken as written */
    CHECK_EQ_INT(parse(" all", &g, bad, sizeof bad), 1);
    CHECK_EQ_INT(g.n, 0);
    CHECK_STR_EQ(bad, "' all'");
}

static void test_cut(void)
{
    got_t g;
    /* many bad entries into a small buffer: the list ends with "...", the
     * byte past the buffer untouched; a good entry after them still given */
    const gs_class_t a = class_m(7);
    char ha[GS_CLASS_HEX_LEN + 1];
    gs_class_hex(&a, ha);
    char list[GS_CLASS_HEX_LEN + 64];
    snprintf(list, sizeof list, "aa,bb,cc,dd,ee,%s", ha);
    char bad[17];
    memset(bad, 'x', sizeof bad);
    CHECK_EQ_INT(parse(list, &g, bad, 16), 5);
    CHECK(g.n == 1 && same(&g.cls[0], &a));
    CHECK_EQ_INT(bad[16], 'x');
    CHECK(strlen(bad) < 16);
    CHECK_STR_EQ(bad, "'aa', 'bb', ...");
    char tiny[3] = {'x', 'x', 'x'};
    CHECK_EQ_INT(parse("aa,bb", &g, tiny, 2), 2);
    CHECK_EQ_INT(tiny[2], 'x');
    CHECK(strlen(tiny) < 2);
    CHECK_EQ_INT(parse("aa", &g, NULL, 0), 1); /* no buffer: counted only */
}

int main(void)
{
    test_good();
    test_bad();
    test_cut();
    return GS_TEST_DONE();
}
