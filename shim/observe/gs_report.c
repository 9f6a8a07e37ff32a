/* The ab report writer (see gs_report.h): the table, PREFIX.csv and
 * PREFIX.json, named per process. */
#define _GNU_SOURCE /* O_CLOEXEC */
#include "gs_report.h"
#include "gs_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Open path for writing as a stdio stream (the file is this process's
 * alone, written once at exit). */
static FILE *open_file(const char *path, int flags)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0666);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

int gs_report_create(const char *prefix, long pid, FILE **csv, FILE **json, char *base,
                     size_t size, int *fell_back)
{
    char path[GS_PATH_MAX + 64];
    *csv = *json = NULL;
    *fell_back = 0;
    int per_pid = gs_path_expand(prefix, pid, base, size);
    if (per_pid < 0 || strlen(base) + 6 > sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    snprintf(path, sizeof path, "%s.csv", base);
    /* without "%p": PREFIX.csv is the first process's; later ones take
     * PREFIX.<pid> (which is theirs: written over if a process of the same
     * id left one) */
    *csv = open_file(path, per_pid ? O_TRUNC : O_EXCL);
    if (!*csv && !per_pid && errno == EEXIST) {
        size_t len = strlen(base);
        int n = snprintf(base + len, size - len, ".%ld", pid);
        if (n < 0 || (size_t)n >= size - len || strlen(base) + 6 > sizeof path) {
            base[len] = '\0';
            errno = ENAMETOOLONG;
            return -1;
        }
        *fell_back = 1;
        snprintf(path, sizeof path, "%s.csv", base);
        *csv = open_file(path, O_TRUNC);
    }
    if (!*csv)
        return -1;
    snprintf(path, sizeof path, "%s.json", base);
    *json = open_file(path, O_TRUNC);
    if (!*json) {
        int e = errno;
        fclose(*csv);
        *csv = NULL;
        snprintf(path, sizeof path, "%s.csv", base);
        unlink(path); /* not half a report */
        errno = e;
        return -1;
    }
    return 0;
}

/* JSON string body: the shapes and names hold no quotes or backslashes, but
 * be safe. */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* A number, or null (JSON has no NaN: an unmeasured side). */
static void json_num(FILE *f, const char *fmt, double v)
{
    if (v == v)
        fprintf(f, fmt, v);
    else
        fputs("null", f);
}

/* What each signature weighs: its share of the GEMM time the application
 * spends with cuBLAS (calls x cuBLAS's mean time), and the whole run's
 * effect: cuBLAS's total over ours, over the signatures both sides timed. */
typedef struct weights {
    double total_cublas_us, total_ours_us; /* over rows with both times */
    double all_cublas_us;                  /* over rows with a cuBLAS time */
} weights_t;

static weights_t weigh(const gs_ab_row_t *rows, size_t n)
{
    weights_t w = {0.0, 0.0, 0.0};
    for (size_t i = 0; i < n; ++i) {
        const double c = rows[i].cublas_us * (double)rows[i].calls,
                     o = rows[i].ours_us * (double)rows[i].calls;
        if (c == c)
            w.all_cublas_us += c;
        if (c == c && o == o) {
            w.total_cublas_us += c;
            w.total_ours_us += o;
        }
    }
    return w;
}

static double share_of(const gs_ab_row_t *r, const weights_t *w)
{
    const double c = r->cublas_us * (double)r->calls;
    return c == c && w->all_cublas_us > 0.0 ? c / w->all_cublas_us : NAN;
}

static void write_csv(FILE *f, const gs_ab_row_t *rows, size_t n)
{
    fprintf(f, "signature,calls,ours_us,cublas_us,speedup,max_err,route\n");
    for (size_t i = 0; i < n; ++i) {
        const gs_ab_row_t *r = &rows[i];
        fprintf(f, "\"%s\",%llu,%.3f,%.3f,%.4f,%.3e,%s\n", r->signature,
                (unsigned long long)r->calls, r->ours_us, r->cublas_us, r->speedup, r->max_err,
                r->route);
    }
}

static void write_json(FILE *f, const gs_ab_row_t *rows, size_t n)
{
    const weights_t w = weigh(rows, n);
    fputs("{\"version\": 1, \"rows\": [", f);
    for (size_t i = 0; i < n; ++i) {
        const gs_ab_row_t *r = &rows[i];
        fputs(i ? ",\n  {" : "\n  {", f);
        fputs("\"signature\": ", f);
        json_str(f, r->signature);
        fputs(", \"class\": ", f);
        json_str(f, r->cls);
        fprintf(f, ", \"calls\": %llu", (unsigned long long)r->calls);
        fputs(", \"ours_us\": ", f);
        json_num(f, "%.3f", r->ours_us);
        fputs(", \"cublas_us\": ", f);
        json_num(f, "%.3f", r->cublas_us);
        fputs(", \"speedup\": ", f);
        json_num(f, "%.4f", r->speedup);
        fputs(", \"time_share\": ", f);
        json_num(f, "%.4f", share_of(r, &w));
        fputs(", \"max_err\": ", f);
        json_num(f, "%.3e", r->max_err);
        fputs(", \"route\": ", f);
        json_str(f, r->route);
        fputc('}', f);
    }
    fputs("\n], \"gemm_time\": {\"ours_us\": ", f);
    json_num(f, "%.3f", w.total_ours_us);
    fputs(", \"cublas_us\": ", f);
    json_num(f, "%.3f", w.total_cublas_us);
    fputs(", \"speedup\": ", f);
    json_num(f, "%.4f", w.total_ours_us > 0.0 ? w.total_cublas_us / w.total_ours_us : NAN);
    fputs("}}\n", f);
}

int gs_report_write(const char *prefix, long pid, const gs_ab_row_t *rows, size_t n,
                    char *csv_path, size_t size)
{
    FILE *csv = NULL, *json = NULL;
    char base[GS_PATH_MAX + 32] = "";
    int fell_back = 0, rc = 0;
    if (csv_path && size)
        csv_path[0] = '\0';
    if (prefix && gs_report_create(prefix, pid, &csv, &json, base, sizeof base, &fell_back)) {
        gs_msg("ab: cannot write the report %s.csv/.json (%s)", base[0] ? base : prefix,
               strerror(errno));
        rc = -1;
    }

    gs_block_t b = GS_BLOCK_INIT;
    gs_block_add(&b, "ab report: per call signature, ours vs cuBLAS (mean GPU time per call; "
                     "speedup = cuBLAS / ours)");
    gs_block_add(&b, "  %-64s %7s %10s %10s %8s %6s %9s  %s", "signature", "calls", "ours_us",
                 "cublas_us", "speedup", "share", "max_err", "route");
    const weights_t w = weigh(rows, n);
    for (size_t i = 0; i < n; ++i)
        gs_block_add(&b, "  %-64s %7llu %10.2f %10.2f %7.3fx %5.1f%% %9.2e  %s",
                     rows[i].signature, (unsigned long long)rows[i].calls, rows[i].ours_us,
                     rows[i].cublas_us, rows[i].speedup, 100.0 * share_of(&rows[i], &w),
                     rows[i].max_err, rows[i].route);
    gs_block_add(&b, "ab report: %zu signatures", n);
    if (w.total_ours_us > 0.0) /* share: of the GEMM time with cuBLAS */
        gs_block_add(&b, "ab report: weighted by GEMM time: cuBLAS %.1f us, ours %.1f us over "
                         "the calls both timed: %.3fx",
                     w.total_cublas_us, w.total_ours_us, w.total_cublas_us / w.total_ours_us);
    if (fell_back) {
        char first[GS_PATH_MAX + 32];
        gs_path_expand(prefix, pid, first, sizeof first); /* fits: base is longer */
        gs_block_add(&b, "ab report: %s.csv exists (another process's report): this process's "
                         "(pid %ld) is %s.csv and %s.json",
                     first, pid, base, base);
    }
    gs_block_emit(&b, GS_TO_LOG_OR_STDERR);

    if (csv) {
        write_csv(csv, rows, n);
        write_json(json, rows, n);
        int bad = ferror(csv) | ferror(json);
        bad |= fclose(csv) != 0;
        bad |= fclose(json) != 0;
        if (bad) {
            gs_msg("ab: writing the report %s.csv/.json failed", base);
            rc = -1;
        } else if (csv_path && size) {
            snprintf(csv_path, size, "%s.csv", base);
        }
    }
    return rc;
}

void gs_log_ab_report(const char *prefix)
{
    gs_ab_row_t *rows;
    size_t n = gs_log_ab_rows(&rows);
    /* a forked child starts with no signatures: a report only if it had
     * A/B calls of its own */
    if (n || !gs_sink_forked())
        gs_report_write(prefix, (long)getpid(), rows, n, NULL, 0);
    free(rows);
}
