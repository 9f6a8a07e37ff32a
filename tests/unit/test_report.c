/* The ab report's per-process naming (shim/observe/gs_report.c) and the sink's path
 * expansion (shim/base/gs_sink.c): without a GPU the shim never takes A/B turns
 * (test devices skip them), so the writer is called directly here, and
 * through gs_log_ab_report from a forked child as a second process would. */
#define _GNU_SOURCE /* mkdtemp */
#include "dispatch_fixtures.h"
#include "gs_log.h"
#include "gs_report.h"
#include "gs_sink.h"
#include "gs_test.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];

/* The whole of a file (static buffer), "" when it cannot be read. */
static const char *slurp(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *slurp(const char *fmt, ...)
{
    static char buf[1 << 16];
    char path[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
    return buf;
}

static int exists(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int exists(const char *fmt, ...)
{
    char path[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    struct stat st;
    return stat(path, &st) == 0;
}

static gs_ab_row_t row(const char *sig, unsigned long long calls, double ours, double cublas,
                       double err)
{
    gs_ab_row_t r;
    memset(&r, 0, sizeof r);
    snprintf(r.signature, sizeof r.signature, "%s", sig);
    snprintf(r.route, sizeof r.route, "sgemm_simt_64x64x8");
    gs_class_t c;
    memset(&c, 0, sizeof c);
    c.m = (int64_t)calls; /* a class of its own per row */
    gs_class_hex(&c, r.cls);
    r.calls = calls;
    r.ours_us = ours;
    r.cublas_us = cublas;
    r.speedup = ours > 0 && cublas > 0 ? cublas / ours : NAN;
    r.max_err = err;
    return r;
}

static void path_expand(void)
{
    char out[64];
    CHECK_EQ_INT(gs_path_expand("/tmp/log", 42, out, sizeof out), 0);
    CHECK_STR_EQ(out, "/tmp/log");
    CHECK_EQ_INT(gs_path_expand("/tmp/log.%p", 42, out, sizeof out), 1);
    CHECK_STR_EQ(out, "/tmp/log.42");
    CHECK_EQ_INT(gs_path_expand("%p-%p", 7, out, sizeof out), 1);
    CHECK_STR_EQ(out, "7-7");
    /* "%%" is a "%"; "%%p" a "%" and a "p"; other "%"s stay */
    CHECK_EQ_INT(gs_path_expand("a%%b%%p%x%", 7, out, sizeof out), 0);
    CHECK_STR_EQ(out, "a%b%p%x%");
    CHECK_EQ_INT(gs_path_expand("", 7, out, sizeof out), 0);
    CHECK_STR_EQ(out, "");
    /* too long: -1, never a cut path */
    CHECK_EQ_INT(gs_path_expand("12345678", 7, out, 8), -1);
    CHECK_EQ_INT(gs_path_expand("1234567", 7, out, 8), 0);
    CHECK_EQ_INT(gs_path_expand("log.%p", 1234567, out, 8), -1);
}

/* Two processes of one run, same prefix: the first writes PREFIX.csv, the
 * second PREFIX.<pid>.csv; neither report is lost or mixed. */
static void two_processes(void)
{
    char prefix[300], used[400];
    snprintf(prefix, sizeof prefix, "%s/ab", dir);
    gs_ab_row_t first[2] = {row("cublasSgemm_v2 NN f32,f32->f32 m=256 n=256 k=256 batch=1", 10,
                                 12.5, 10.0, 3e-7),
                             row("cublasSgemm_v2 NN f32,f32->f32 m=64 n=64 k=64 batch=1", 4,
                                 NAN, 5.0, NAN)};
    gs_ab_row_t second = row("cublasGemmEx TN bf16,bf16->bf16 m=512 n=256 k=128 batch=1", 6,
                             8.0, 9.0, 1e-3);

    CHECK_EQ_INT(gs_report_write(prefix, 1001, first, 2, used, sizeof used), 0);
    char want[400];
    snprintf(want, sizeof want, "%s.csv", prefix);
    CHECK_STR_EQ(used, want);
    const char *csv = slurp("%s.csv", prefix);
    CHECK(!strncmp(csv, "signature,calls,ours_us,cublas_us,speedup,max_err,route\n", 56));
    CHECK_CONTAINS(csv, "\"cublasSgemm_v2 NN f32,f32->f32 m=256 n=256 k=256 batch=1\",10,"
                        "12.500,10.000,0.8000,3.000e-07,sgemm_simt_64x64x8\n");
    CHECK_CONTAINS(csv, "m=64 n=64 k=64 batch=1\",4,nan,5.000,nan,nan,sgemm_simt_64x64x8\n");
    const char *json = slurp("%s.json", prefix);
    CHECK(!strncmp(json, "{\"version\": 1, \"rows\": [", 24));
    /* each signature's share of the GEMM time with cuBLAS (10 x 10 us and
     * 4 x 5 us), and the run's effect over the calls both sides timed */
    CHECK_CONTAINS(json, "\"speedup\": 0.8000, \"time_share\": 0.8333, ");
    /* each row names its class as the tune cache keys it (gemmshim validate) */
    char hex[GS_CLASS_HEX_LEN + 1];
    gs_class_t c10;
    memset(&c10, 0, sizeof c10);
    c10.m = 10;
    gs_class_hex(&c10, hex);
    char want_class[GS_CLASS_HEX_LEN + 64];
    snprintf(want_class, sizeof want_class, "\"class\": \"%s\", \"calls\": 10,", hex);
    CHECK_CONTAINS(json, want_class);
    CHECK_CONTAINS(json, "\"calls\": 4, \"ours_us\": null, \"cublas_us\": 5.000, "
                         "\"speedup\": null, \"time_share\": 0.1667, \"max_err\": null");
    CHECK_CONTAINS(json, "\n], \"gemm_time\": {\"ours_us\": 125.000, \"cublas_us\": 100.000, "
                         "\"speedup\": 0.8000}}\n");

    /* the second process: PREFIX.csv is taken */
    CHECK_EQ_INT(gs_report_write(prefix, 2002, &second, 1, used, sizeof used), 0);
    snprintf(want, sizeof want, "%s.2002.csv", prefix);
    CHECK_STR_EQ(used, want);
    csv = slurp("%s.2002.csv", prefix);
    CHECK_CONTAINS(csv, "signature,calls,");
    CHECK_CONTAINS(csv, "m=512 n=256 k=128");
    CHECK(!strstr(csv, "m=256 n=256"));
    CHECK_CONTAINS(slurp("%s.2002.json", prefix), "m=512 n=256 k=128");
    /* the first report is whole */
    csv = slurp("%s.csv", prefix);
    CHECK_CONTAINS(csv, "m=256 n=256 k=256");
    CHECK(!strstr(csv, "m=512"));
    CHECK(!strstr(slurp("%s.json", prefix), "m=512"));

    /* a third: its own again */
    CHECK_EQ_INT(gs_report_write(prefix, 3003, &second, 1, used, sizeof used), 0);
    CHECK(exists("%s.3003.csv", prefix));
    CHECK(exists("%s.3003.json", prefix));
}

/* "%p" in the prefix: each process's files, written over by the same pid. */
static void per_pid_prefix(void)
{
    char prefix[300], used[400], want[400];
    snprintf(prefix, sizeof prefix, "%s/r%%%%-%%p", dir); /* r%%-%p: r%-<pid> */
    gs_ab_row_t a = row("cublasSgemm_v2 NN f32,f32->f32 m=128 n=128 k=128 batch=1", 2, 4.0,
                        4.0, 0.0);
    gs_ab_row_t b = row("cublasSgemm_v2 NN f32,f32->f32 m=96 n=96 k=96 batch=1", 2, 4.0, 4.0,
                        0.0);
    CHECK_EQ_INT(gs_report_write(prefix, 77, &a, 1, used, sizeof used), 0);
    snprintf(want, sizeof want, "%s/r%%-77.csv", dir);
    CHECK_STR_EQ(used, want);
    CHECK_EQ_INT(gs_report_write(prefix, 77, &b, 1, used, sizeof used), 0);
    CHECK_STR_EQ(used, want); /* no fallback name: the pid's own file */
    CHECK_CONTAINS(slurp("%s", want), "m=96");
    CHECK(!strstr(slurp("%s", want), "m=128"));
    CHECK(exists("%s/r%%-77.json", dir));
    CHECK(!exists("%s/r%%-77.77.csv", dir));
    CHECK_EQ_INT(gs_report_write(prefix, 78, &a, 1, used, sizeof used), 0);
    CHECK(exists("%s/r%%-78.csv", dir));
}

/* An unwritable place: -1, no files, no crash; no prefix: the table only. */
static void cannot_write(void)
{
    char prefix[300], used[400] = "x";
    gs_ab_row_t a = row("cublasSgemm_v2 NN f32,f32->f32 m=8 n=8 k=8 batch=1", 1, 1.0, 1.0, 0.0);
    snprintf(prefix, sizeof prefix, "%s/no/such/dir/ab", dir);
    CHECK_EQ_INT(gs_report_write(prefix, 5, &a, 1, used, sizeof used), -1);
    CHECK_STR_EQ(used, "");
    CHECK_EQ_INT(gs_report_write(NULL, 5, &a, 1, used, sizeof used), 0);
    CHECK_STR_EQ(used, "");
    FILE *csv, *json;
    char base[64];
    int fell_back;
    CHECK_EQ_INT(gs_report_create("/tmp/a-name-far-too-long-for-the-buffer", 5, &csv, &json,
                                  base, sizeof base / 4, &fell_back),
                 -1);
}

static gs_problem_t problem(int64_t m)
{
    gs_problem_t p;
    memset(&p, 0, sizeof p);
    p.entry = GS_EP_SGEMM;
    p.a_type = p.b_type = p.c_type = GS_DT_F32;
    p.compute = GS_CT_F32;
    p.m = m;
    p.n = p.k = 64;
    p.batch = 1;
    gs_problem_classify(&p);
    return p;
}

/* Through the log's own A/B record, from two processes: the parent reports
 * first, then a forked child (which must start with no signatures of the
 * parent's) takes turns of its own and reports at its "exit". */
static void forked_processes(void)
{
    static gs_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.log_enabled = 1;
    snprintf(cfg.log_path, sizeof cfg.log_path, "%s/shim.log", dir);
    gs_log_open(&cfg);
    char prefix[300];
    snprintf(prefix, sizeof prefix, "%s/fork", dir);

    gs_decision_t dec = {ROUTE_SGEMM_SIMT, FAMILY_SGEMM_SIMT, 0, 0.0, 0, 0, "test"};
    gs_problem_t parent_p = problem(1111);
    uint64_t turn = 9;
    gs_sig_t *s = gs_log_ab_turn(&parent_p, &dec, "sgemm_simt_64x64x8", &turn);
    CHECK(s != NULL);
    CHECK_EQ_INT(turn, 0);
    gs_log_ab_turn(&parent_p, &dec, "sgemm_simt_64x64x8", &turn);
    CHECK_EQ_INT(turn, 1);
    gs_log_ab_time(s, 0, 0.010);
    gs_log_ab_time(s, 1, 0.008);
    gs_log_ab_error(s, 1e-6);
    gs_log_ab_report(prefix);
    CHECK_CONTAINS(slurp("%s.csv", prefix), "m=1111 n=64 k=64 batch=1\",2,8.000,10.000,1.2500,");

    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        gs_problem_t child_p = problem(2222);
        uint64_t t = 9;
        gs_sig_t *cs = gs_log_ab_turn(&child_p, &dec, "sgemm_simt_64x64x8", &t);
        gs_log_ab_time(cs, 0, 0.004);
        gs_log_ab_report(prefix);
        /* the child's turn counter started afresh */
        _exit(cs && t == 0 ? 0 : 1);
    }
    int st = -1;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* the parent's report is not overwritten */
    const char *csv = slurp("%s.csv", prefix);
    CHECK_CONTAINS(csv, "m=1111");
    CHECK(!strstr(csv, "m=2222"));
    /* the child's is its own, without the parent's signatures */
    csv = slurp("%s.%ld.csv", prefix, (long)pid);
    CHECK_CONTAINS(csv, "m=2222 n=64 k=64 batch=1\",1,nan,4.000,nan,nan,sgemm_simt_64x64x8");
    CHECK(!strstr(csv, "m=1111"));
    CHECK(exists("%s.%ld.json", prefix, (long)pid));
    /* and the log says where it went, in one line */
    char line[1200];
    snprintf(line, sizeof line,
             "gemmshim: ab report: %s.csv exists (another process's report): this process's "
             "(pid %ld) is %s.%ld.csv and %s.%ld.json\n",
             prefix, (long)pid, prefix, (long)pid, prefix, (long)pid);
    CHECK_CONTAINS(slurp("%s/shim.log", dir), line);
}

/* Lt calls of one shape, routed alike with the same reason, that differ
 * only in scale modes or fast accumulation: a log line each, so a reader
 * (bench_fp8) finds each one's route. Runs after forked_processes, which
 * opened the log. */
static void lt_contracts_apart(void)
{
    gs_decision_t dec = {ROUTE_SGEMM_SIMT, FAMILY_SGEMM_SIMT, 0, 0.0, 0, 0, "test"};
    gs_problem_t p = problem(3333);
    p.entry = GS_EP_LT_MATMUL;
    p.a_type = p.b_type = GS_DT_E4M3;
    p.c_type = GS_DT_BF16;
    gs_problem_classify(&p);
    const unsigned tensorwise = GS_SCALE_SCALAR_32F << GS_LT_SCALE_A | GS_SCALE_SCALAR_32F << GS_LT_SCALE_B;
    const unsigned rowwise = GS_SCALE_OUTER_VEC_32F << GS_LT_SCALE_A | GS_SCALE_OUTER_VEC_32F
                                                                    << GS_LT_SCALE_B;
    const struct {
        unsigned scales, flags;
        const char *says;
    } calls[] = {
        {tensorwise, GS_LT_FAST_ACCUM, "scale_A=SCALAR_32F scale_B=SCALAR_32F fast_accum -> k"},
        {tensorwise, 0, "scale_A=SCALAR_32F scale_B=SCALAR_32F -> k"},
        {rowwise, 0, "scale_A=OUTER_VEC_32F scale_B=OUTER_VEC_32F -> k"},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i) {
        p.cls.lt_scales = (uint16_t)calls[i].scales;
        p.cls.lt_flags = (uint16_t)calls[i].flags;
        gs_log_call(&p, &dec, "k", "eligible");
        gs_log_call(&p, &dec, "k", "eligible"); /* a repeat: no second line */
    }
    fflush(NULL);
    const char *log = slurp("%s/shim.log", dir);
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i) {
        char line[300];
        snprintf(line, sizeof line, "m=3333 n=64 k=64 batch=1 %s (eligible)\n", calls[i].says);
        CHECK_CONTAINS(log, line);
        const char *first = strstr(log, line);
        CHECK(first && !strstr(first + 1, line));
    }
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/gs_test_report.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    path_expand();
    two_processes();
    per_pid_prefix();
    cannot_write();
    forked_processes();
    lt_contracts_apart();
    int rc = GS_TEST_DONE();
    if (!rc) { /* keep the files of a failed run to look at */
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
    } else {
        fprintf(stderr, "files kept in %s\n", dir);
    }
    return rc;
}
