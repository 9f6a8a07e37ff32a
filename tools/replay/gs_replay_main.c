/* gemmshim-replay: the driver of offline tuning (`gemmshim tune --from`).
 *
 * It tunes nothing itself. For each signature of the recorded files it
 * rebuilds a call of exactly that class (gs_replay_class.h) on random
 * operands and issues it again and again, under the shim preloaded with
 * GEMMSHIM_TUNE=online: the shim's own online tuner (its candidates,
 * correctness comparison, budgets, claims and progress in the cache) takes
 * the signature to a decision, and gemmshim_last_tuning says when it has.
 * Processes on several GPUs share one cache: the claims make each
 * signature tuned once; a signature another process holds is come back
 * to later. Killed, a rerun continues: decided signatures are found
 * decided at their first call, undecided ones resume from their progress.
 *
 *   gemmshim-replay --from SIGS [--from SIGS ...] [--cache CACHE]
 *                   [--max-calls N] [--rank R --ranks N] [--lt-workspace-mb N]
 *   gemmshim-replay --sequences --from SIGS [...] --cache CACHE [--graph-replays N]
 *                   [--seq-rounds N] [--seq-seconds N] [--lt-workspace-mb N]
 *   gemmshim-replay --summary --from SIGS [...] --cache CACHE
 *   gemmshim-replay --count-gpus
 *   gemmshim-replay --keep-prior --cache CACHE < "HEX<TAB>comment" lines
 *
 * --keep-prior gives each class listed back to its prior in the cache, as
 * the sequence phase does, with the shim's own cache writer (gemmshim
 * validate uses it); it needs no GPU and no signature file.
 * --sequences is the second phase, once every signature is decided: the
 * recorded CUDA-graph sequences timed with the cache's decisions against
 * their prior, and the decisions that lose there settled (gs_replay_seq.h),
 * under the shim preloaded with GEMMSHIM_TUNE=cache.
 *
 * Exit: 0 every signature it could tune is decided (--sequences: the phase
 * ran); 1 some failed or were not tuned (--sequences: something failed);
 * 2 usage or file errors; 77 no GPU; 128 + the signal when stopped by
 * SIGINT or SIGTERM (the shim saves the progress at exit). */
#define _GNU_SOURCE
#include "gemmshim.h"
#include "gs_replay_cache.h"
#include "gs_replay_call.h"
#include "gs_replay_class.h"
#include "gs_replay_mem.h"
#include "gs_replay_seq.h"
#include "gs_replay_sigs.h"
#include "gs_replay_summary.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_USAGE = 2, EXIT_NO_GPU = 77, FROM_MAX = 64 };

/* While another process tunes a signature, it is looked at again this
 * often (the shim itself rereads the cache at most every 200 ms). */
#define RECHECK_NS 250000000L

typedef struct options {
    const char *from[FROM_MAX];
    int n_from;
    const char *cache;
    long max_calls;
    int rank, ranks;
    long lt_workspace_mb;
    int count_gpus, summary, sequences, keep_prior;
    long graph_replays, seq_rounds, seq_seconds;
} options_t;

static const char usage[] =
    "usage: gemmshim-replay --from SIGS [--from SIGS ...] [--cache CACHE] [--max-calls N]\n"
    "                       [--rank R --ranks N] [--lt-workspace-mb N]\n"
    "       gemmshim-replay --sequences --from SIGS [...] --cache CACHE [--graph-replays N]\n"
    "                       [--seq-rounds N] [--seq-seconds N] [--lt-workspace-mb N]\n"
    "       gemmshim-replay --summary --from SIGS [...] --cache CACHE\n"
    "       gemmshim-replay --count-gpus\n"
    "       gemmshim-replay --keep-prior --cache CACHE  (classes on stdin: HEX<TAB>comment)\n"
    "Run under the shim with GEMMSHIM_TUNE=online, --sequences with GEMMSHIM_TUNE=cache\n"
    "(gemmshim tune --from does).\n";

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

typedef enum outcome {
    O_DECIDED_HERE, /* this process tuned it to its decision */
    O_FOUND,        /* decided at its first call: by an earlier run or another
                       process, or at once (no candidate takes it) */
    O_BY_OTHER,     /* another process held it, and decided it */
    O_ELSEWHERE,    /* another process holds it now: come back later */
    O_UNTUNED,      /* the shim does not tune it here */
    O_REPLAYED,     /* tuning is not on: issued once */
    O_FAILED,
    O_STOPPED,
} outcome_t;

static const char *const outcome_names[] = {
    "decided here", "decided at its first call", "decided by another process",
    "another process tunes it",
    "not tuned here (the shim serves its prior)", "replayed once (tuning is not on)", "failed",
};

typedef struct run {
    options_t opt;
    gs_replay_sigs_t sigs;
    gs_replay_args_t *args;  /* per signature */
    unsigned char *can;      /* per signature: args holds its call */
    size_t *todo, n_todo;    /* the signatures to tune, in this process's order */
    gs_replay_gpu_t gpu;
    gs_replay_mem_t mem;
    gemmshim_tuning_t (*last_tuning)(void);
    char who[64];
    double gpu_ms, tuned_wall_s;
    long count[O_STOPPED];
    size_t done;
    int facts_said;
    struct timespec t0;
} run_t;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void human_time(double s, char *buf, size_t size)
{
    const long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, size, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        snprintf(buf, size, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, size, "%lds", t);
}

/* ---- options ---- */

static int number(const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    const long n = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || n < lo || n > hi)
        return -1;
    *out = n;
    return 0;
}

static int parse(int argc, char **argv, options_t *o)
{
    memset(o, 0, sizeof *o);
    o->max_calls = 2000;
    o->ranks = 1;
    o->lt_workspace_mb = 32;
    /* a graph captured once is replayed for every step after (every
     * decoded token of a serving run): its GEMMs outweigh a warm-up's eager
     * calls unless the caller says otherwise */
    o->graph_replays = 1000;
    o->seq_rounds = 15;
    o->seq_seconds = 1800;
    o->cache = getenv("GEMMSHIM_TUNE_CACHE");
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        /* the options that take no value */
        const struct {
            const char *name;
            int *on;
        } flags[] = {{"--count-gpus", &o->count_gpus},
                     {"--summary", &o->summary},
                     {"--sequences", &o->sequences},
                     {"--keep-prior", &o->keep_prior}};
        int flag = 0;
        for (size_t f = 0; f < sizeof flags / sizeof flags[0] && !flag; ++f)
            if (!strcmp(a, flags[f].name))
                *flags[f].on = flag = 1;
        if (flag)
            continue;
        if (!v) {
            fprintf(stderr, "gemmshim-replay: %s needs a value\n%s", a, usage);
            return -1;
        }
        ++i;
        if (!strcmp(a, "--from") && o->n_from < FROM_MAX) {
            o->from[o->n_from++] = v;
        } else if (!strcmp(a, "--cache")) {
            o->cache = v;
        } else if (!strcmp(a, "--max-calls") && !number(v, 1, 1000000000, &n)) {
            o->max_calls = n;
        } else if (!strcmp(a, "--rank") && !number(v, 0, 4095, &n)) {
            o->rank = (int)n;
        } else if (!strcmp(a, "--ranks") && !number(v, 1, 4096, &n)) {
            o->ranks = (int)n;
        } else if (!strcmp(a, "--lt-workspace-mb") && !number(v, 0, 65536, &n)) {
            o->lt_workspace_mb = n;
        } else if (!strcmp(a, "--graph-replays") && !number(v, 1, 1000000000, &n)) {
            o->graph_replays = n;
        } else if (!strcmp(a, "--seq-rounds") && !number(v, 3, 1001, &n)) {
            o->seq_rounds = n;
        } else if (!strcmp(a, "--seq-seconds") && !number(v, 1, 86400 * 30, &n)) {
            o->seq_seconds = n;
        } else {
            fprintf(stderr, "gemmshim-replay: bad option or value: %s %s\n%s", a, v, usage);
            return -1;
        }
    }
    if (o->keep_prior) {
        if (o->cache && *o->cache)
            return 0;
        fprintf(stderr, "gemmshim-replay: --keep-prior needs --cache CACHE\n");
        return -1;
    }
    if (!o->count_gpus && !o->n_from) {
        fprintf(stderr, "gemmshim-replay: no --from SIGS given\n%s", usage);
        return -1;
    }
    if (o->rank >= o->ranks) {
        fprintf(stderr, "gemmshim-replay: --rank %d is not below --ranks %d\n", o->rank,
                o->ranks);
        return -1;
    }
    if ((o->summary || o->sequences) && (!o->cache || !*o->cache)) {
        fprintf(stderr, "gemmshim-replay: %s needs --cache CACHE\n",
                o->summary ? "--summary" : "--sequences");
        return -1;
    }
    return 0;
}

/* ---- the GPU ---- */

/* The visible GPUs; 0 with why when there is none. */
static int gpu_count(char *why, size_t size)
{
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(why, size, "%s", cudaGetErrorString(e));
        return 0;
    }
    if (!n)
        snprintf(why, size, "no CUDA device is visible");
    return n;
}

/* ---- one signature ---- */

/* Issues signature i's call until the shim says what became of it. */
static outcome_t run_sig(run_t *r, size_t i, char *why, size_t why_size, long *calls)
{
    gs_replay_call_t c = {.a = &r->args[i]};
    *calls = 0;
    if (gs_replay_mem_place(&r->mem, c.a, &c.ops, why, why_size))
        return O_FAILED;
    if (gs_replay_prepare(&r->gpu, &c, why, why_size) != CUBLAS_STATUS_SUCCESS) {
        gs_replay_release(&c);
        return O_FAILED;
    }
    cudaEvent_t ev[2] = {NULL, NULL};
    const int timed = !r->gpu.simulated && cudaEventCreate(&ev[0]) == cudaSuccess &&
                      cudaEventCreate(&ev[1]) == cudaSuccess &&
                      cudaEventRecord(ev[0], r->gpu.stream) == cudaSuccess;
    outcome_t out = O_FAILED;
    int tuning_here = 0;
    for (;;) {
        if (stop_signal) {
            out = O_STOPPED;
            break;
        }
        const cublasStatus_t st = gs_replay_issue(&r->gpu, &c);
        ++*calls;
        if (st != CUBLAS_STATUS_SUCCESS) {
            snprintf(why, why_size, "the call returned cuBLAS status %d", (int)st);
            break;
        }
        /* One call at a time: its pairs are collected at the next call,
         * and no queue of forwarded calls builds up ahead of them. */
        const cudaError_t e = r->gpu.simulated ? cudaSuccess : cudaStreamSynchronize(r->gpu.stream);
        if (e != cudaSuccess) {
            snprintf(why, why_size, "the GPU failed: %s", cudaGetErrorString(e));
            break;
        }
        const gemmshim_tuning_t t = r->last_tuning ? r->last_tuning() : GEMMSHIM_TUNING_NONE;
        if (t == GEMMSHIM_TUNING_TIMING) {
            tuning_here = 1;
            if (*calls < r->opt.max_calls)
                continue;
            snprintf(why, why_size,
                     "not decided after %ld calls (--max-calls): its progress is in the cache, "
                     "a rerun resumes it", *calls);
            break;
        }
        /* a decision of this process that the shim does not serve (the
         * log says why) is still this process's decision */
        if (tuning_here && (t == GEMMSHIM_TUNING_DECIDED || t == GEMMSHIM_TUNING_UNTUNED))
            out = O_DECIDED_HERE;
        else
            out = t == GEMMSHIM_TUNING_DECIDED    ? O_FOUND
                  : t == GEMMSHIM_TUNING_ELSEWHERE ? O_ELSEWHERE
                  : t == GEMMSHIM_TUNING_UNTUNED   ? O_UNTUNED
                                                   : O_REPLAYED;
        break;
    }
    if (timed) {
        float ms = 0.f;
        if (cudaEventRecord(ev[1], r->gpu.stream) == cudaSuccess &&
            cudaEventSynchronize(ev[1]) == cudaSuccess &&
            cudaEventElapsedTime(&ms, ev[0], ev[1]) == cudaSuccess)
            r->gpu_ms += ms;
    }
    for (int k = 0; k < 2; ++k)
        if (ev[k])
            cudaEventDestroy(ev[k]);
    cudaGetLastError();
    gs_replay_release(&c);
    return out;
}

/* ---- progress ---- */

static void progress(run_t *r, size_t i, outcome_t o, const char *why, long calls, double wall)
{
    char eta[48] = "time left unknown yet", spent[32];
    const size_t left = r->n_todo - r->done;
    const long tuned = r->count[O_DECIDED_HERE];
    if (tuned && left) {
        char t[32];
        human_time(r->tuned_wall_s / (double)tuned * (double)left / r->opt.ranks, t, sizeof t);
        snprintf(eta, sizeof eta, "about %s left", t);
    } else if (!left) {
        snprintf(eta, sizeof eta, "none left");
    }
    human_time(seconds_since(&r->t0), spent, sizeof spent);
    fprintf(stderr,
            "%s: %s: %s%s%s (%ld calls, %.1f s); %zu of %zu done, %zu left; %.1f s of GPU time "
            "in %s, %s\n",
            r->who, r->sigs.sig[i].shape, outcome_names[o], why[0] ? ": " : "", why, calls, wall,
            r->done, r->n_todo, left, r->gpu_ms / 1000.0, spent, eta);
}

/* Once, after the first call (the shim has opened the cache by then): the
 * signature files recorded with other facts than this machine's. */
static void say_facts(const run_t *r)
{
    char validator[1024], diff[1024];
    if (r->opt.rank || !r->opt.cache || gs_replay_cache_validator(r->opt.cache, validator,
                                                                  sizeof validator))
        return;
    for (size_t f = 0; f < r->sigs.files; ++f) {
        gs_replay_facts_diff(r->sigs.header[f], validator, diff, sizeof diff);
        if (diff[0])
            fprintf(stderr, "%s: %s was recorded with %s: tuned anyway, for this machine\n",
                    r->who, r->sigs.path[f], diff);
    }
}

/* ---- the run ---- */

/* Takes signature i through run_sig and counts it; 1 when it waits for
 * another process. */
static int take(run_t *r, size_t i, int again)
{
    char why[256] = "";
    long calls = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    outcome_t o = run_sig(r, i, why, sizeof why, &calls);
    const double wall = seconds_since(&t0);
    if (calls && !r->facts_said++)
        say_facts(r);
    if (o == O_ELSEWHERE || o == O_STOPPED)
        return o == O_ELSEWHERE;
    if (again && o == O_FOUND)
        o = O_BY_OTHER;
    if (o == O_DECIDED_HERE)
        r->tuned_wall_s += wall;
    ++r->count[o];
    ++r->done;
    progress(r, i, o, why, calls, wall);
    return 0;
}

static void tune_all(run_t *r)
{
    size_t *waiting = malloc((r->n_todo ? r->n_todo : 1) * sizeof *waiting), n_wait = 0;
    if (!waiting) {
        fprintf(stderr, "%s: out of memory\n", r->who);
        exit(1);
    }
    /* process R of N starts R/N of the way along: fewer meet on one claim */
    const size_t start = r->n_todo * (size_t)r->opt.rank / (size_t)r->opt.ranks;
    for (size_t j = 0; j < r->n_todo && !stop_signal; ++j) {
        const size_t i = r->todo[(start + j) % r->n_todo];
        if (take(r, i, 0))
            waiting[n_wait++] = i;
    }
    /* the signatures other processes hold: their decisions, or their claims
     * taken over when those processes are gone (the shim's rule) */
    if (n_wait && !stop_signal)
        fprintf(stderr, "%s: %zu signatures are being tuned by other processes; waiting for "
                        "their decisions\n", r->who, n_wait);
    while (n_wait && !stop_signal) {
        const struct timespec pause = {0, RECHECK_NS};
        nanosleep(&pause, NULL);
        size_t kept = 0;
        for (size_t j = 0; j < n_wait && !stop_signal; ++j)
            if (take(r, waiting[j], 1))
                waiting[kept++] = waiting[j];
        n_wait = kept;
    }
    free(waiting);
}

/* The signatures to tune: tunable and rebuilt; the others are the
 * summary's to list. */
static int plan(run_t *r)
{
    r->args = calloc(r->sigs.n ? r->sigs.n : 1, sizeof *r->args);
    r->todo = calloc(r->sigs.n ? r->sigs.n : 1, sizeof *r->todo);
    r->can = calloc(r->sigs.n ? r->sigs.n : 1, 1);
    if (!r->args || !r->todo || !r->can)
        return -1;
    size_t skipped = 0;
    for (size_t i = 0; i < r->sigs.n; ++i) {
        if (r->sigs.sig[i].tunable && !gs_replay_args_of(&r->sigs.sig[i].cls, &r->args[i])) {
            r->can[i] = 1;
            r->todo[r->n_todo++] = i;
        } else {
            ++skipped;
        }
    }
    if (!r->opt.rank && !r->opt.sequences)
        fprintf(stderr, "%s: %zu signatures to tune, %zu skipped (listed at the end)\n", r->who,
                r->n_todo, skipped);
    return 0;
}

static int finish(run_t *r)
{
    char spent[32];
    human_time(seconds_since(&r->t0), spent, sizeof spent);
    fprintf(stderr, "%s: %ld decided here, %ld at their first call, %ld by other processes, "
                    "%ld not tuned here, %ld failed%s; %.1f s of GPU time in %s\n",
            r->who, r->count[O_DECIDED_HERE], r->count[O_FOUND], r->count[O_BY_OTHER],
            r->count[O_UNTUNED], r->count[O_FAILED],
            r->count[O_REPLAYED] ? " (tuning is not on: each replayed once)" : "",
            r->gpu_ms / 1000.0, spent);
    if (stop_signal) {
        fprintf(stderr, "%s: stopped by signal %d: %zu signatures left; a rerun continues\n",
                r->who, (int)stop_signal, r->n_todo - r->done);
        return 128 + (int)stop_signal;
    }
    return r->count[O_FAILED] || r->count[O_UNTUNED] ? 1 : 0;
}

/* Everything after the options; returns the exit status, leaving what
 * it made in r for main to release. */
static int replay(run_t *r)
{
    char why[512];
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    snprintf(r->who, sizeof r->who, "gemmshim tune");
    if (r->opt.ranks > 1)
        snprintf(r->who, sizeof r->who, "gemmshim tune [gpu %s]",
                 visible && *visible ? visible : "0");
    if (r->opt.count_gpus) {
        const int n = gpu_count(why, sizeof why);
        if (!n) {
            fprintf(stderr, "gemmshim-replay: no GPU here: %s\n", why);
            return EXIT_NO_GPU;
        }
        printf("%d\n", n);
        return 0;
    }
    for (int f = 0; f < r->opt.n_from; ++f) {
        if (gs_replay_sigs_read(&r->sigs, r->opt.from[f], why, sizeof why)) {
            fprintf(stderr, "gemmshim-replay: %s\n", why);
            return EXIT_USAGE;
        }
    }
    gs_replay_sigs_order(&r->sigs);
    if (r->opt.summary)
        return gs_replay_summary(&r->sigs, r->opt.cache, stdout);
    if (plan(r)) {
        fprintf(stderr, "gemmshim-replay: out of memory\n");
        return 1;
    }
    if (r->opt.sequences && !r->sigs.seqs.n) {
        fprintf(stderr, "%s: sequences: none recorded (no CUDA graph was captured)\n", r->who);
        return 0;
    }
    /* the shim's pretended device (tests): nothing of the replay's own runs */
    const char *test_device = getenv("GEMMSHIM_TEST_DEVICE");
    const int simulated = test_device && *test_device;
    if (!simulated && !gpu_count(why, sizeof why)) {
        fprintf(stderr, "gemmshim-replay: no GPU here: %s\n", why);
        return EXIT_NO_GPU;
    }
    *(void **)&r->last_tuning = dlsym(RTLD_DEFAULT, "gemmshim_last_tuning");
    if (!r->last_tuning && !r->opt.rank && !r->opt.sequences)
        fprintf(stderr, "%s: the shim is not preloaded: each signature is replayed once\n",
                r->who);
    if (gs_replay_gpu_open(&r->gpu, simulated, (size_t)r->opt.lt_workspace_mb << 20, why,
                           sizeof why)) {
        fprintf(stderr, "%s: %s\n", r->who, why);
        return 1;
    }
    r->mem.simulated = simulated;
    r->mem.stream = r->gpu.stream;
    /* stop between calls, and leave through exit(): the shim's handlers
     * wait (1 s at most) for the pairs in flight and save the progress.
     * Ctrl-C reaches a replay twice (from the terminal, and forwarded by
     * the launcher), so a second signal does not end it at once. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (r->opt.sequences) {
        const gs_replay_seq_opts_t so = {r->opt.cache, (double)r->opt.graph_replays,
                                         (size_t)r->opt.seq_rounds, (double)r->opt.seq_seconds,
                                         r->who};
        return gs_replay_sequences(&r->sigs, r->args, r->can, &r->gpu, &so, &stop_signal);
    }
    tune_all(r);
    return finish(r);
}

int main(int argc, char **argv)
{
    run_t r;
    memset(&r, 0, sizeof r);
    clock_gettime(CLOCK_MONOTONIC, &r.t0);
    if (parse(argc, argv, &r.opt))
        return EXIT_USAGE;
    if (r.opt.keep_prior) /* no GPU, no signature file: the cache alone */
        return gs_replay_keep_prior(r.opt.cache, stdin, stderr) ? 1 : 0;
    const int rc = replay(&r);
    gs_replay_mem_free(&r.mem);
    gs_replay_gpu_close(&r.gpu);
    free(r.args);
    free(r.can);
    free(r.todo);
    gs_replay_sigs_free(&r.sigs);
    return rc;
}
