/* Reading the fake's record (FAKE_CUBLAS_RECORD) from the test programs. */
#ifndef FAKE_RECORD_H
#define FAKE_RECORD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *fake_record_path(void)
{
    const char *p = getenv("FAKE_CUBLAS_RECORD");
    if (!p || !*p) {
        fprintf(stderr, "FAKE_CUBLAS_RECORD is not set\n");
        exit(2);
    }
    return p;
}

/* Size of the record now (0 when it does not exist yet). */
static long fake_record_size(void)
{
    FILE *f = fopen(fake_record_path(), "rb");
    if (!f)
        return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* The text appended since offset `from` (malloc'd, NUL-terminated) and its
 * number of lines. */
static char *fake_record_since(long from, int *lines)
{
    *lines = 0;
    FILE *f = fopen(fake_record_path(), "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long end = ftell(f);
    long n = end > from ? end - from : 0;
    char *buf = malloc((size_t)n + 1);
    fseek(f, from, SEEK_SET);
    n = (long)fread(buf, 1, (size_t)n, f);
    buf[n] = '\0';
    fclose(f);
    for (long i = 0; i < n; ++i)
        *lines += buf[i] == '\n';
    return buf;
}

/* The status the fake returns (FAKE_CUBLAS_RETURN, default 0). */
static int fake_expected_status(void)
{
    const char *v = getenv("FAKE_CUBLAS_RETURN");
    return v && *v ? (int)strtol(v, NULL, 0) : 0;
}

#endif
