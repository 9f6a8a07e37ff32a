#include "gs_class_hex.h"

void gs_class_hex(const gs_class_t *c, char out[GS_CLASS_HEX_LEN + 1])
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = (const unsigned char *)c;
    for (size_t i = 0; i < sizeof *c; ++i) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[GS_CLASS_HEX_LEN] = '\0';
}

static int nibble(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

int gs_class_of_hex(const char *s, size_t len, gs_class_t *c)
{
    if (len != 2 * sizeof *c)
        return -1;
    unsigned char *b = (unsigned char *)c;
    for (size_t i = 0; i < sizeof *c; ++i) {
        const int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        b[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}
