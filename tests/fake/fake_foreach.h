/* FAKE_FOR_EACH(F, a, b, c) -> F(a) F(b) F(c), for up to 32 arguments:
 * expands an X-macro args list, e.g. (handle, transa, ...), per parameter. */
#ifndef FAKE_FOREACH_H
#define FAKE_FOREACH_H

#define FAKE_NARG(...) FAKE_NARG_(__VA_ARGS__, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, \
                                  20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, \
                                  3, 2, 1)
#define FAKE_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, \
                   _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, \
                   N, ...)                                                                   \
    N
#define FAKE_CAT(a, b) FAKE_CAT_(a, b)
#define FAKE_CAT_(a, b) a##b

#define FAKE_FE_1(F, x) F(x)
#define FAKE_FE_2(F, x, ...) F(x) FAKE_FE_1(F, __VA_ARGS__)
#define FAKE_FE_3(F, x, ...) F(x) FAKE_FE_2(F, __VA_ARGS__)
#define FAKE_FE_4(F, x, ...) F(x) FAKE_FE_3(F, __VA_ARGS__)
#define FAKE_FE_5(F, x, ...) F(x) FAKE_FE_4(F, __VA_ARGS__)
#define FAKE_FE_6(F, x, ...) F(x) FAKE_FE_5(F, __VA_ARGS__)
#define FAKE_FE_7(F, x, ...) F(x) FAKE_FE_6(F, __VA_ARGS__)
#define FAKE_FE_8(F, x, ...) F(x) FAKE_FE_7(F, __VA_ARGS__)
#define FAKE_FE_9(F, x, ...) F(x) FAKE_FE_8(F, __VA_ARGS__)
#define FAKE_FE_10(F, x, ...) F(x) FAKE_FE_9(F, __VA_ARGS__)
#define FAKE_FE_11(F, x, ...) F(x) FAKE_FE_10(F, __VA_ARGS__)
#define FAKE_FE_12(F, x, ...) F(x) FAKE_FE_11(F, __VA_ARGS__)
#define FAKE_FE_13(F, x, ...) F(x) FAKE_FE_12(F, __VA_ARGS__)
#define FAKE_FE_14(F, x, ...) F(x) FAKE_FE_13(F, __VA_ARGS__)
#define FAKE_FE_15(F, x, ...) F(x) FAKE_FE_14(F, __VA_ARGS__)
#define FAKE_FE_16(F, x, ...) F(x) FAKE_FE_15(F, __VA_ARGS__)
#define FAKE_FE_17(F, x, ...) F(x) FAKE_FE_16(F, __VA_ARGS__)
#define FAKE_FE_18(F, x, ...) F(x) FAKE_FE_17(F, __VA_ARGS__)
#define FAKE_FE_19(F, x, ...) F(x) FAKE_FE_18(F, __VA_ARGS__)
#define FAKE_FE_20(F, x, ...) F(x) FAKE_FE_19(F, __VA_ARGS__)
#define FAKE_FE_21(F, x, ...) F(x) FAKE_FE_20(F, __VA_ARGS__)
#define FAKE_FE_22(F, x, ...) F(x) FAKE_FE_21(F, __VA_ARGS__)
#define FAKE_FE_23(F, x, ...) F(x) FAKE_FE_22(F, __VA_ARGS__)
#define FAKE_FE_24(F, x, ...) F(x) FAKE_FE_23(F, __VA_ARGS__)
#define FAKE_FE_25(F, x, ...) F(x) FAKE_FE_24(F, __VA_ARGS__)
#define FAKE_FE_26(F, x, ...) F(x) FAKE_FE_25(F, __VA_ARGS__)
#define FAKE_FE_27(F, x, ...) F(x) FAKE_FE_26(F, __VA_ARGS__)
#define FAKE_FE_28(F, x, ...) F(x) FAKE_FE_27(F, __VA_ARGS__)
#define FAKE_FE_29(F, x, ...) F(x) FAKE_FE_28(F, __VA_ARGS__)
#define FAKE_FE_30(F, x, ...) F(x) FAKE_FE_29(F, __VA_ARGS__)
#define FAKE_FE_31(F, x, ...) F(x) FAKE_FE_30(F, __VA_ARGS__)
#define FAKE_FE_32(F, x, ...) F(x) FAKE_FE_31(F, __VA_ARGS__)

#define FAKE_FOR_EACH(F, ...) FAKE_CAT(FAKE_FE_, FAKE_NARG(__VA_ARGS__))(F, __VA_ARGS__)

/* FAKE_FOR_EACH_ARGS(F, (a, b, c)): the same over a parenthesised list. */
#define FAKE_FOR_EACH_ARGS(F, args) FAKE_FOR_EACH_ARGS_(F, FAKE_UNPAREN args)
#define FAKE_FOR_EACH_ARGS_(F, ...) FAKE_FOR_EACH(F, __VA_ARGS__)
#define FAKE_UNPAREN(...) __VA_ARGS__


/* FAKE_LIST(F, a, b) -> F(a), F(b): the same, comma-separated (an argument list). */
#define FAKE_FEL_1(F, x) F(x)
#define FAKE_FEL_2(F, x, ...) F(x), FAKE_FEL_1(F, __VA_ARGS__)
#define FAKE_FEL_3(F, x, ...) F(x), FAKE_FEL_2(F, __VA_ARGS__)
#define FAKE_FEL_4(F, x, ...) F(x), FAKE_FEL_3(F, __VA_ARGS__)
#define FAKE_FEL_5(F, x, ...) F(x), FAKE_FEL_4(F, __VA_ARGS__)
#define FAKE_FEL_6(F, x, ...) F(x), FAKE_FEL_5(F, __VA_ARGS__)
#define FAKE_FEL_7(F, x, ...) F(x), FAKE_FEL_6(F, __VA_ARGS__)
#define FAKE_FEL_8(F, x, ...) F(x), FAKE_FEL_7(F, __VA_ARGS__)
#define FAKE_FEL_9(F, x, ...) F(x), FAKE_FEL_8(F, __VA_ARGS__)
#define FAKE_FEL_10(F, x, ...) F(x), FAKE_FEL_9(F, __VA_ARGS__)
#define FAKE_FEL_11(F, x, ...) F(x), FAKE_FEL_10(F, __VA_ARGS__)
#define FAKE_FEL_12(F, x, ...) F(x), FAKE_FEL_11(F, __VA_ARGS__)
#define FAKE_FEL_13(F, x, ...) F(x), FAKE_FEL_12(F, __VA_ARGS__)
#define FAKE_FEL_14(F, x, ...) F(x), FAKE_FEL_13(F, __VA_ARGS__)
#define FAKE_FEL_15(F, x, ...) F(x), FAKE_FEL_14(F, __VA_ARGS__)
#define FAKE_FEL_16(F, x, ...) F(x), FAKE_FEL_15(F, __VA_ARGS__)
#define FAKE_FEL_17(F, x, ...) F(x), FAKE_FEL_16(F, __VA_ARGS__)
#define FAKE_FEL_18(F, x, ...) F(x), FAKE_FEL_17(F, __VA_ARGS__)
#define FAKE_FEL_19(F, x, ...) F(x), FAKE_FEL_18(F, __VA_ARGS__)
#define FAKE_FEL_20(F, x, ...) F(x), FAKE_FEL_19(F, __VA_ARGS__)
#define FAKE_FEL_21(F, x, ...) F(x), FAKE_FEL_20(F, __VA_ARGS__)
#define FAKE_FEL_22(F, x, ...) F(x), FAKE_FEL_21(F, __VA_ARGS__)
#define FAKE_FEL_23(F, x, ...) F(x), FAKE_FEL_22(F, __VA_ARGS__)
#define FAKE_FEL_24(F, x, ...) F(x), FAKE_FEL_23(F, __VA_ARGS__)
#define FAKE_FEL_25(F, x, ...) F(x), FAKE_FEL_24(F, __VA_ARGS__)
#define FAKE_FEL_26(F, x, ...) F(x), FAKE_FEL_25(F, __VA_ARGS__)
#define FAKE_FEL_27(F, x, ...) F(x), FAKE_FEL_26(F, __VA_ARGS__)
#define FAKE_FEL_28(F, x, ...) F(x), FAKE_FEL_27(F, __VA_ARGS__)
#define FAKE_FEL_29(F, x, ...) F(x), FAKE_FEL_28(F, __VA_ARGS__)
#define FAKE_FEL_30(F, x, ...) F(x), FAKE_FEL_29(F, __VA_ARGS__)
#define FAKE_FEL_31(F, x, ...) F(x), FAKE_FEL_30(F, __VA_ARGS__)
#define FAKE_FEL_32(F, x, ...) F(x), FAKE_FEL_31(F, __VA_ARGS__)
#define FAKE_LIST(F, ...) FAKE_CAT(FAKE_FEL_, FAKE_NARG(__VA_ARGS__))(F, __VA_ARGS__)
#define FAKE_LIST_ARGS(F, args) FAKE_LIST_ARGS_(F, FAKE_UNPAREN args)
#define FAKE_LIST_ARGS_(F, ...) FAKE_LIST(F, __VA_ARGS__)

#endif
