/* Minimal assertions for the C unit tests.
 *
 * Every CHECK counts as one passed or failed assertion; a failure prints
 * file:line and the failing expression (with the values for the _EQ forms)
 * and the test goes on. GS_TEST_DONE() prints "N passed, M failed" and gives
 * main's exit status: non-zero when anything failed, or when nothing was
 * checked at all (a test that asserts nothing is not a pass). */
#ifndef GS_TEST_H
#define GS_TEST_H

#include <stdio.h>
#include <string.h>

static int gs_test_passed;
static int gs_test_failed;

static inline int gs_test_record(int ok, const char *file, int line, const char *expr)
{
    if (ok) {
        ++gs_test_passed;
    } else {
        ++gs_test_failed;
        fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, expr);
    }
    return ok;
}

#define CHECK(expr) gs_test_record(!!(expr), __FILE__, __LINE__, #expr)

#define CHECK_EQ_INT(a, b)                                                        \
    do {                                                                          \
        long long gs_a_ = (long long)(a), gs_b_ = (long long)(b);                 \
        if (!gs_test_record(gs_a_ == gs_b_, __FILE__, __LINE__, #a " == " #b))    \
            fprintf(stderr, "    left: %lld, right: %lld\n", gs_a_, gs_b_);      \
    } while (0)

#define CHECK_STR_EQ(a, b)                                                        \
    do {                                                                          \
        const char *gs_a_ = (a), *gs_b_ = (b);                                    \
        if (!gs_test_record(gs_a_ && gs_b_ && !strcmp(gs_a_, gs_b_), __FILE__,    \
                            __LINE__, #a " equals " #b))                          \
            fprintf(stderr, "    left: \"%s\", right: \"%s\"\n",                 \
                    gs_a_ ? gs_a_ : "(null)", gs_b_ ? gs_b_ : "(null)");          \
    } while (0)

#define CHECK_CONTAINS(haystack, needle)                                          \
    do {                                                                          \
        const char *gs_h_ = (haystack), *gs_n_ = (needle);                        \
        if (!gs_test_record(gs_h_ && strstr(gs_h_, gs_n_) != NULL, __FILE__,      \
                            __LINE__, #haystack " contains " #needle))            \
            fprintf(stderr, "    \"%s\" does not contain \"%s\"\n",              \
                    gs_h_ ? gs_h_ : "(null)", gs_n_);                             \
    } while (0)

#define GS_TEST_DONE()                                                            \
    (printf("%d passed, %d failed\n", gs_test_passed, gs_test_failed),            \
     (gs_test_failed || !gs_test_passed) ? 1 : 0)

#endif /* GS_TEST_H */
