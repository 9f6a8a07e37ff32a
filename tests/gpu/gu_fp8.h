/* FP8 on the host for the GPU tests (test_lt_fp8, test_fp8_tiles): every
 * code's value, the nearest code, and a bf16 result's relative error
 * against a double reference. Include after gpu_util.h. */
#ifndef GU_FP8_H
#define GU_FP8_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* e4m3 (the "fn" encoding: no infinities, S.1111.111 is NaN) and e5m2
 * (IEEE-like: exponent 31 is infinity or NaN); NAN for the codes that are
 * not finite. */
static inline float gu_fp8_value(uint8_t code, int e5m2)
{
    const int sign = code >> 7, mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
    const int exp = (code & 0x7f) >> mbits, man = code & ((1 << mbits) - 1);
    if (e5m2 ? exp == 31 : (exp == 15 && man == 7))
        return NAN;
    const float v = exp ? ldexpf(1.0f + (float)man / (1 << mbits), exp - bias)
                        : ldexpf((float)man / (1 << mbits), 1 - bias);
    return sign ? -v : v;
}

/* The finite code nearest v (ties to the lower code: any rounding will do,
 * the references use the code's own value). */
static inline uint8_t gu_fp8_code(float v, int e5m2)
{
    uint8_t best = 0;
    float err = INFINITY;
    for (int c = 0; c < 256; ++c) {
        const float x = gu_fp8_value((uint8_t)c, e5m2);
        if (x == x && fabsf(x - v) < err) {
            err = fabsf(x - v);
            best = (uint8_t)c;
        }
    }
    return best;
}

/* Relative (Frobenius) error of n bf16 results against ref; infinity if
 * any result is NaN (a poisoned element never written). */
static inline double gu_bf16_rel_err(const double *ref, const uint16_t *d, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; ++i) {
        const double v = gu_bf16_to_f32(d[i]);
        if (v != v)
            return INFINITY;
        num += (v - ref[i]) * (v - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

#endif /* GU_FP8_H */
