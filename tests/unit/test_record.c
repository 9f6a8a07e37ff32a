/* The record's accumulator and file (shim/observe/gs_record.h, gs_record_out.h):
 * counts and times per signature, the class in the tune cache's encoding,
 * calls beyond their class kept apart by reason, the order of captured
 * sequences (identical ones merged, interleaved ones kept apart), bounds,
 * fork, threads, and the file's header written once. */
#define _GNU_SOURCE
#include "gs_record.h"
#include "gs_log.h"
#include "gs_record_out.h"
#include "gs_test.h"
#include "gs_tune_cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the lines, collected ---- */

typedef struct text {
    char buf[1 << 16];
    size_t len;
    int lines;
} text_t;

static int collect(void *ctx, const char *line, size_t len)
{
    text_t *t = ctx;
    if (t->len + len + 1 > sizeof t->buf)
        return -1;
    memcpy(t->buf + t->len, line, len);
    t->len += len;
    t->buf[t->len] = '\0';
    ++t->lines;
    return 0;
}

static void lines_of_record(text_t *t)
{
    memset(t, 0, sizeof *t);
    CHECK_EQ_INT(gs_record_lines(collect, t), 0);
}

/* The line of t starting with prefix (copied into out), or 0. */
static int line_starting(const text_t *t, const char *prefix, char *out, size_t size)
{
    for (const char *l = t->buf; *l;) {
        const char *nl = strchr(l, '\n');
        const size_t len = nl ? (size_t)(nl - l) : strlen(l);
        if (!strncmp(l, prefix, strlen(prefix))) {
            snprintf(out, size, "%.*s", (int)len, l);
            return 1;
        }
        l += len + (nl ? 1 : 0);
    }
    return 0;
}

/* A field's value ("calls" -> "3") of a tab-separated line, or "". */
static const char *field(const char *line, const char *key)
{
    static char v[4096];
    char pat[64];
    snprintf(pat, sizeof pat, "\t%s=", key);
    const char *p = strstr(line, pat);
    v[0] = '\0';
    if (p) {
        p += strlen(pat);
        snprintf(v, sizeof v, "%.*s", (int)strcspn(p, "\t\n"), p);
    }
    return v;
}

static gs_class_t class_of(int64_t m, int64_t n, int64_t k)
{
    gs_class_t c;
    memset(&c, 0, sizeof c);
    c.entry = GS_EP_GEMMEX;
    c.a_type = c.b_type = c.c_type = GS_DT_BF16;
    c.compute = GS_CT_F32;
    c.scalar_type = GS_DT_F32;
    c.trans_a = GS_OP_T;
    c.m = m, c.n = n, c.k = k;
    c.lda = k, c.ldb = k, c.ldc = m;
    c.batch = 1;
    c.align_a = c.align_b = c.align_c = 256;
    return c;
}

/* "sig\t<hex>\t" of class c: the start of its line */
static void sig_prefix(const gs_class_t *c, char *out, size_t size)
{
    char hex[GS_CLASS_HEX_LEN + 1];
    gs_class_hex(c, hex);
    snprintf(out, size, "sig\t%s\t", hex);
}

/* ---- tests ---- */

static void counts_times_and_the_cache_encoding(void)
{
    gs_record_reset();
    const gs_class_t a = class_of(512, 256, 128), b = class_of(4096, 16, 4096);
    gs_rec_sig_t *ra = gs_record_call(&a, NULL, 0);
    CHECK(ra != NULL);
    CHECK(gs_record_call(&a, NULL, 0) == ra);
    CHECK(gs_record_call(&a, NULL, 0) == ra);
    CHECK(gs_record_call(&b, NULL, 0) != ra);
    gs_record_time(ra, 100.0); /* the first: left out (a first launch's set-up) */
    gs_record_time(ra, 1.25);
    gs_record_time(ra, 0.25);
    gs_record_totals_t t;
    gs_record_totals(&t);
    CHECK_EQ_INT(t.calls, 4);
    CHECK_EQ_INT(t.sigs, 2);
    CHECK_EQ_INT(t.dropped, 0);
    CHECK_EQ_INT(t.captures, 0);

    text_t txt;
    lines_of_record(&txt);
    CHECK_EQ_INT(txt.lines, 2); /* no seq line without captures */
    char pre[400], line[2048];
    sig_prefix(&a, pre, sizeof pre);
    CHECK(line_starting(&txt, pre, line, sizeof line));
    CHECK_STR_EQ(field(line, "calls"), "3");
    CHECK_STR_EQ(field(line, "captured"), "0");
    CHECK_STR_EQ(field(line, "timed"), "2");
    CHECK_STR_EQ(field(line, "ms"), "1.500000");
    CHECK_STR_EQ(field(line, "tunable"), "1");
    CHECK(strstr(line, "\twhy=") == NULL);
    CHECK_CONTAINS(line, "\t# cublasGemmEx TN bf16,bf16->bf16 compute=32F m=512 n=256 k=128 "
                         "batch=1 lda=128 ldb=128 ldc=512");
    sig_prefix(&b, pre, sizeof pre);
    CHECK(line_starting(&txt, pre, line, sizeof line));
    CHECK_STR_EQ(field(line, "calls"), "1");
    CHECK_STR_EQ(field(line, "timed"), "0");
    CHECK_STR_EQ(field(line, "ms"), ""); /* untimed: blank, not 0 */
    CHECK_EQ_INT(strlen(field(line, "id")), 16);

    /* the hex is the tune cache's key: a cache line made from the record's
     * class field finds the class's decision */
    sig_prefix(&a, pre, sizeof pre);
    char cache[1024];
    snprintf(cache, sizeof cache,
             "# gemmshim tune cache\nformat 1\nvalidator v\n%spingpong\tpingpong_128x128x64\t"
             "gain=1.2000\tlo95=1.1000\tpairs=10\tms=1.0\t# x\n", pre);
    int fresh = 0;
    size_t lines = 0, bad = 0;
    gs_tuned_reset();
    CHECK_EQ_INT(gs_tune_cache_load_buffer(cache, strlen(cache), "v", &fresh, &lines, &bad), 0);
    CHECK_EQ_INT(bad, 0);
    gs_tuned_t d;
    CHECK_EQ_INT(gs_tuned_find(&a, &d), 1);
    CHECK_STR_EQ(d.family, "pingpong");
    CHECK_EQ_INT(gs_tuned_find(&b, &d), 0);
    gs_tuned_reset();
}

static void calls_beyond_their_class_kept_apart_by_reason(void)
{
    gs_record_reset();
    const gs_class_t a = class_of(1024, 512, 768);
    gs_rec_sig_t *plain = gs_record_call(&a, NULL, 0);
    gs_rec_sig_t *relu = gs_record_call(&a, "epilogue 2 not routed", 0);
    gs_rec_sig_t *vec = gs_record_call(&a, "vector pointer mode not routed", 0);
    CHECK(plain && relu && vec && plain != relu && relu != vec && plain != vec);
    CHECK(gs_record_call(&a, "epilogue 2 not routed", 0) == relu);
    text_t txt;
    lines_of_record(&txt);
    CHECK_EQ_INT(txt.lines, 3);
    CHECK_CONTAINS(txt.buf, "\ttunable=0\twhy=epilogue 2 not routed\t# cublasGemmEx");
    CHECK_CONTAINS(txt.buf, "\tcalls=2\tcaptured=0\ttimed=0\tms=\ttunable=0\twhy=epilogue 2");
    CHECK_CONTAINS(txt.buf, "\ttunable=0\twhy=vector pointer mode not routed\t#");
    CHECK_CONTAINS(txt.buf, "\tcalls=1\tcaptured=0\ttimed=0\tms=\ttunable=1\t# ");
}

/* The id= of class c's line (tunable), as seq lines name it. */
static void id_of_line(const text_t *t, const gs_class_t *c, char *id, size_t size)
{
    char pre[400], line[2048] = "";
    sig_prefix(c, pre, sizeof pre);
    CHECK(line_starting(t, pre, line, sizeof line));
    snprintf(id, size, "%s", field(line, "id"));
}

static void captured_sequences(void)
{
    gs_record_reset();
    const gs_class_t a = class_of(4096, 1, 4096), b = class_of(14336, 1, 4096),
                     c = class_of(4096, 1, 14336);
    /* an eager warm-up: counted, in no sequence */
    gs_record_call(&a, NULL, 0);
    /* two captures of one decode step: a b c b */
    for (unsigned long long cap = 7; cap <= 9; cap += 2) {
        gs_record_call(&a, NULL, cap);
        gs_record_call(&b, NULL, cap);
        gs_record_call(&c, NULL, cap);
        gs_record_call(&b, NULL, cap);
    }
    /* two captures on two threads, interleaved: 11 is c c, 12 is a b */
    gs_record_call(&c, NULL, 11);
    gs_record_call(&a, NULL, 12);
    gs_record_call(&c, NULL, 11);
    gs_record_call(&b, NULL, 12);
    gs_record_totals_t t;
    gs_record_totals(&t);
    CHECK_EQ_INT(t.calls, 13);
    CHECK_EQ_INT(t.captures, 4);
    CHECK_EQ_INT(t.unplaced, 0);

    text_t txt;
    lines_of_record(&txt);
    char ia[32], ib[32], ic[32], line[2048], want[256];
    id_of_line(&txt, &a, ia, sizeof ia);
    id_of_line(&txt, &b, ib, sizeof ib);
    id_of_line(&txt, &c, ic, sizeof ic);
    char pre[400];
    sig_prefix(&a, pre, sizeof pre);
    CHECK(line_starting(&txt, pre, line, sizeof line));
    CHECK_STR_EQ(field(line, "calls"), "4");
    CHECK_STR_EQ(field(line, "captured"), "3");
    sig_prefix(&b, pre, sizeof pre);
    CHECK(line_starting(&txt, pre, line, sizeof line));
    CHECK_STR_EQ(field(line, "calls"), "5");
    CHECK_STR_EQ(field(line, "captured"), "5");

    /* 3 distinct sequences, in the order of their first capture */
    CHECK_EQ_INT(txt.lines, 3 + 3);
    const char *first = strstr(txt.buf, "seq\t");
    CHECK(first != NULL);
    snprintf(line, sizeof line, "%.*s", first ? (int)strcspn(first, "\n") : 0, first ? first : "");
    CHECK_STR_EQ(field(line, "captures"), "2");
    CHECK_STR_EQ(field(line, "gemms"), "4");
    CHECK_STR_EQ(field(line, "complete"), "1");
    snprintf(want, sizeof want, "%s,%s,%s,%s", ia, ib, ic, ib);
    CHECK_STR_EQ(field(line, "sigs"), want);
    CHECK_EQ_INT(strlen(field(line, "id")), 16);
    const char *second = first ? strstr(first + 1, "seq\t") : NULL;
    CHECK(second != NULL);
    snprintf(line, sizeof line, "%.*s", second ? (int)strcspn(second, "\n") : 0,
             second ? second : "");
    CHECK_STR_EQ(field(line, "captures"), "1");
    snprintf(want, sizeof want, "%s,%s", ic, ic);
    CHECK_STR_EQ(field(line, "sigs"), want);
    const char *third = second ? strstr(second + 1, "seq\t") : NULL;
    CHECK(third != NULL);
    snprintf(line, sizeof line, "%.*s", third ? (int)strcspn(third, "\n") : 0, third ? third : "");
    snprintf(want, sizeof want, "%s,%s", ia, ib);
    CHECK_STR_EQ(field(line, "sigs"), want);

    /* the same sequence recorded again by another process: the same id
     * (a reader merges them by summing captures) */
    char id_before[32];
    snprintf(id_before, sizeof id_before, "%s", field(first ? first : "", "id"));
    gs_record_reset();
    for (int i = 0; i < 4; ++i)
        gs_record_call(i & 1 ? &b : i ? &c : &a, NULL, 99);
    lines_of_record(&txt);
    first = strstr(txt.buf, "seq\t");
    CHECK(first != NULL);
    CHECK_STR_EQ(field(first ? first : "", "id"), id_before);
}

static void bounds(void)
{
    gs_record_reset();
    for (int i = 0; i < GS_RECORD_SIGS_MAX; ++i) {
        const gs_class_t c = class_of(1 + i, 64, 64);
        CHECK_EQ_INT(gs_record_call(&c, NULL, 0) != NULL, 1);
    }
    const gs_class_t over = class_of(1 << 20, 64, 64), known = class_of(1, 64, 64);
    CHECK(gs_record_call(&over, NULL, 0) == NULL);
    CHECK(gs_record_call(&known, NULL, 5) != NULL); /* a known one still counts */
    CHECK(gs_record_call(&over, NULL, 5) == NULL);  /* its capture is left incomplete */
    gs_record_totals_t t;
    gs_record_totals(&t);
    CHECK_EQ_INT(t.calls, GS_RECORD_SIGS_MAX + 3);
    CHECK_EQ_INT(t.dropped, 2);
    CHECK_EQ_INT(t.sigs, GS_RECORD_SIGS_MAX);
    CHECK_EQ_INT(t.unplaced, 1);
    static text_t big;
    memset(&big, 0, sizeof big);
    /* more than the buffer takes: the emitter's refusal stops the lines */
    CHECK_EQ_INT(gs_record_lines(collect, &big), -1);
    CHECK(big.lines > 0 && big.lines < GS_RECORD_SIGS_MAX);

    gs_record_reset();
    gs_record_call(&known, NULL, 5);
    gs_record_call(&known, NULL, 5);
    text_t txt;
    lines_of_record(&txt);
    CHECK_CONTAINS(txt.buf, "\tcaptures=1\tgemms=2\tcomplete=1\t");
    gs_record_reset();
    gs_record_totals(&t);
    CHECK_EQ_INT(t.calls + t.sigs + t.captures, 0);
    lines_of_record(&txt);
    CHECK_EQ_INT(txt.lines, 0);
}

static void fork_child_starts_empty(void)
{
    gs_record_reset();
    const gs_class_t a = class_of(256, 256, 256);
    gs_record_call(&a, NULL, 0);
    gs_record_call(&a, NULL, 0);
    fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        gs_record_totals_t t;
        gs_record_totals(&t);
        const int ok = t.calls == 0 && t.sigs == 0;
        gs_record_call(&a, NULL, 0);
        gs_record_totals(&t);
        _exit(ok && t.calls == 1 && t.sigs == 1 ? 0 : 1);
    }
    int status = -1;
    CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    gs_record_totals_t t;
    gs_record_totals(&t);
    CHECK_EQ_INT(t.calls, 2); /* the parent's, untouched by the child's */
}

enum { THREADS = 8, CALLS = 5000 };

static void *hammer(void *arg)
{
    const int id = (int)(intptr_t)arg;
    for (int i = 0; i < CALLS; ++i) {
        const gs_class_t c = class_of(64 + i % 16, 64, 64);
        gs_rec_sig_t *s = gs_record_call(&c, NULL, (i & 7) ? 0 : (unsigned long long)(100 + id));
        if (s && !(i & 3))
            gs_record_time(s, 0.5);
    }
    return NULL;
}

static void threads_add_up(void)
{
    gs_record_reset();
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; ++i)
        pthread_create(&th[i], NULL, hammer, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; ++i)
        pthread_join(th[i], NULL);
    gs_record_totals_t t;
    gs_record_totals(&t);
    CHECK_EQ_INT(t.calls, THREADS * CALLS);
    CHECK_EQ_INT(t.sigs, 16);
    CHECK_EQ_INT(t.captures, THREADS);
    text_t txt;
    lines_of_record(&txt);
    long long calls = 0, timed = 0, captured = 0;
    for (const char *l = txt.buf; (l = strstr(l, "sig\t")); ++l) {
        char line[2048];
        snprintf(line, sizeof line, "%.*s", (int)strcspn(l, "\n"), l);
        calls += atoll(field(line, "calls"));
        timed += atoll(field(line, "timed"));
        captured += atoll(field(line, "captured"));
    }
    CHECK_EQ_INT(calls, THREADS * CALLS);
    /* every 4th call timed, over 4 signatures; each one's first left out */
    CHECK_EQ_INT(timed, THREADS * CALLS / 4 - 4);
    CHECK_EQ_INT(captured, THREADS * CALLS / 8);
    /* each thread's capture holds its every 8th call, in its own order:
     * classes 0 and 8 of the cycle alternating, the same in every thread,
     * so the THREADS sequences are one */
    CHECK_CONTAINS(txt.buf, "\tcaptures=8\tgemms=625\tcomplete=1\t");
}

static void the_file(void)
{
    char path[64], msg[256];
    snprintf(path, sizeof path, "/tmp/gs_record_test_%d", (int)getpid());
    unlink(path);
    gs_record_reset();
    const gs_class_t a = class_of(512, 256, 128);
    gs_record_call(&a, NULL, 0);
    const char *header = GS_RECORD_MAGIC "\tformat=1\tgpu=X\n";
    CHECK_EQ_INT(gs_record_append(path, header, "proc\tpid=1\n", msg, sizeof msg), 0);
    CHECK_EQ_INT(gs_record_append(path, header, "proc\tpid=2\n", msg, sizeof msg), 0);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char all[8192] = "";
    const size_t n = f ? fread(all, 1, sizeof all - 1, f) : 0;
    all[n] = '\0';
    if (f)
        fclose(f);
    /* the header once, then each process's block whole */
    CHECK(!strncmp(all, header, strlen(header)));
    CHECK(strstr(all + 1, GS_RECORD_MAGIC) == NULL);
    const char *p1 = strstr(all, "proc\tpid=1\nsig\t"), *p2 = strstr(all, "proc\tpid=2\nsig\t");
    CHECK(p1 != NULL && p2 != NULL && p1 < p2);
    CHECK(n > 0 && all[n - 1] == '\n');
    unlink(path);
    /* not a regular file, or nowhere to write: -1 and why */
    CHECK_EQ_INT(gs_record_append("/dev/null", header, "proc\n", msg, sizeof msg), -1);
    CHECK_CONTAINS(msg, "'/dev/null' is not a regular file");
    CHECK_EQ_INT(gs_record_append("/tmp", header, "proc\n", msg, sizeof msg), -1);
    CHECK_CONTAINS(msg, "cannot open '/tmp'");
    CHECK_EQ_INT(gs_record_append("/nonexistent/dir/sigs", header, "proc\n", msg, sizeof msg), -1);
    CHECK_CONTAINS(msg, "cannot open '/nonexistent/dir/sigs'");
    gs_record_reset();
}

/* What sets a class apart beyond its sizes, said alike by the record, the
 * tuner and the log: bias, each scale mode, fast accumulation; nothing for
 * a plain class; never past the buffer. */
static void class_extras(void)
{
    gs_class_t c;
    memset(&c, 0, sizeof c);
    char buf[256] = "shape";
    gs_class_extras(&c, buf, sizeof buf);
    CHECK_STR_EQ(buf, "shape");
    c.bias_type = GS_DT_BF16;
    c.lt_scales = GS_SCALE_SCALAR_32F << GS_LT_SCALE_A | GS_SCALE_OUTER_VEC_32F << GS_LT_SCALE_B;
    c.lt_flags = GS_LT_FAST_ACCUM;
    gs_class_extras(&c, buf, sizeof buf);
    CHECK_STR_EQ(buf, "shape +bias(bf16) scale_A=SCALAR_32F scale_B=OUTER_VEC_32F fast_accum");
    /* fast accumulation on and off read apart */
    char off[256] = "shape";
    c.lt_flags = 0;
    gs_class_extras(&c, off, sizeof off);
    CHECK(strcmp(buf, off) != 0);
    /* a small buffer: cut, terminated */
    char small[12] = "shape";
    c.lt_flags = GS_LT_FAST_ACCUM | GS_LT_AMAX_D;
    gs_class_extras(&c, small, sizeof small);
    CHECK(strlen(small) < sizeof small);
    CHECK(!strncmp(small, "shape +bias", 11));
}

int main(void)
{
    counts_times_and_the_cache_encoding();
    calls_beyond_their_class_kept_apart_by_reason();
    captured_sequences();
    bounds();
    fork_child_starts_empty();
    threads_add_up();
    the_file();
    class_extras();
    return GS_TEST_DONE();
}
