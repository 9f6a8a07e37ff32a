/* gemmshim: the C control API.
 *
 * libgemmshim.so intercepts cuBLAS GEMM calls (LD_PRELOAD, or linked ahead
 * of libcublas) and runs each on its own kernels or forwards it to the real
 * cuBLAS. These functions steer it from the application: turn routing off
 * and on around a region, restrict the kernels, ask which route served the
 * calling thread's last GEMM, read and reset statistics, write the report,
 * load a measured routing table.
 *
 * - Plain C, no CUDA headers needed. Every function is thread-safe.
 * - Settings made here override the GEMMSHIM_* environment variables read
 *   at the first intercepted call; the later of the two wins.
 * - An application that only sometimes runs under LD_PRELOAD finds the API
 *   with dlsym(RTLD_DEFAULT, "gemmshim_version") (NULL: no shim loaded).
 * - Functions returning int return GEMMSHIM_OK (0) or a negative
 *   gemmshim_status_t.
 */
#ifndef GEMMSHIM_H
#define GEMMSHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GEMMSHIM_VERSION_MAJOR 0
#define GEMMSHIM_VERSION_MINOR 1
#define GEMMSHIM_VERSION_PATCH 0
/* major * 10000 + minor * 100 + patch, as gemmshim_version() returns it */
#define GEMMSHIM_VERSION \
    (GEMMSHIM_VERSION_MAJOR * 10000 + GEMMSHIM_VERSION_MINOR * 100 + GEMMSHIM_VERSION_PATCH)

typedef enum gemmshim_status {
    GEMMSHIM_OK = 0,
    GEMMSHIM_ERR_INVALID = -1,     /* bad argument (unknown mode or kernel name, NULL) */
    GEMMSHIM_ERR_UNSUPPORTED = -2, /* valid, but not available in this build */
    GEMMSHIM_ERR_IO = -3,          /* a file could not be read or written */
    GEMMSHIM_ERR_FORMAT = -4,      /* a routing table file is malformed */
    GEMMSHIM_ERR_TRUNCATED = -5    /* the answer did not fit the buffer (it holds a prefix) */
} gemmshim_status_t;

typedef enum gemmshim_mode {
    GEMMSHIM_MODE_OFF = 0,   /* everything forwarded to cuBLAS, untouched */
    GEMMSHIM_MODE_ON = 1,    /* route where the tuning table says ours is not slower */
    GEMMSHIM_MODE_VERIFY = 2,/* route as ON, and also run each routed call on cuBLAS into
                                scratch memory and compare (mismatches logged; see
                                GEMMSHIM_VERIFY_FAIL) */
    GEMMSHIM_MODE_AB = 3     /* per call signature: the first call verified, then ours and
                                cuBLAS in turn, each timed; a table at exit, and CSV/JSON
                                at GEMMSHIM_REPORT */
} gemmshim_mode_t;

/* The library's version (GEMMSHIM_VERSION of the build) and its string. */
int gemmshim_version(void);
const char *gemmshim_version_string(void);

/* Mode for every later call in the process; an unknown value gives
 * GEMMSHIM_ERR_INVALID and leaves it unchanged. */
int gemmshim_set_mode(gemmshim_mode_t mode);
gemmshim_mode_t gemmshim_get_mode(void);

/* Kernel allow-list, same syntax as GEMMSHIM_KERNELS: "all", "none", or a
 * comma list of families (sgemm_simt, pingpong) and single configurations
 * (pingpong_128x128x64, ...). An unknown name gives GEMMSHIM_ERR_INVALID and
 * changes nothing. get writes the list in force, in the order of preference, e.g.
 * "pingpong,sgemm_simt"; the experimental fp8 is on it as allowed,
 * though it serves calls only with GEMMSHIM_FP8_TILES=1. */
int gemmshim_set_kernels(const char *list);
int gemmshim_get_kernels(char *buf, size_t size);

/* What served the calling thread's last intercepted GEMM: a kernel name
 * ("sgemm_warptile_256x128x8", "pingpong_coop_256x128x64"), "forward",
 * "fallback" (our kernel could not launch; cuBLAS ran it) or "quick_return";
 * "" before the thread's first call. */
int gemmshim_last_route(char *buf, size_t size);

/* Tuning's part in the calling thread's last intercepted GEMM
 * (GEMMSHIM_TUNE; docs/TUNING.md). gemmshim_last_route says "forward" both
 * for a signature still being tuned and for one decided for cuBLAS as
 * called; this tells them apart, which is how `gemmshim tune --from`
 * replays a signature until it is decided. */
typedef enum gemmshim_tuning {
    GEMMSHIM_TUNING_NONE = 0,      /* tuning off, no call yet, or the call was answered or
                                      forwarded before a route was chosen (invalid
                                      arguments, mode off, an unroutable cuBLASLt call) */
    GEMMSHIM_TUNING_DECIDED = 1,   /* its signature's tuned decision served it */
    GEMMSHIM_TUNING_TIMING = 2,    /* this process tunes its signature: cuBLAS as called
                                      served it, with timing pairs or while they run */
    GEMMSHIM_TUNING_ELSEWHERE = 3, /* another process holds its signature's claim: the
                                      prior served it until the decision is in the cache */
    GEMMSHIM_TUNING_UNTUNED = 4    /* not decided and not tuned here (GEMMSHIM_TUNE=cache,
                                      inside stream capture, a device that runs no kernel,
                                      the tuner full or out of budget, a decision that no
                                      longer applies): the prior served it */
} gemmshim_tuning_t;

/* The calling thread's last call, as above; NONE before its first call. */
gemmshim_tuning_t gemmshim_last_tuning(void);

/* Hold a call signature at its prior: while held, its calls are served as
 * the shim serves them untuned (the routing table's or the policy's route,
 * or cuBLAS as called), whatever the tune cache decided for it, and it is
 * not tuned (gemmshim_last_tuning says UNTUNED). `signature` is its class
 * as the tune cache and `gemmshim record` write it (the hex field of their
 * "sig" lines); NULL stands for every signature. on = 1 holds, 0 releases;
 * (NULL, 0) releases everything held. Process-wide, it applies to the next
 * call of every thread (CUDA graphs captured before keep what they
 * captured); nothing changes in the cache, and nothing at all while tuned
 * routing is off. GEMMSHIM_HOLD (all, or a comma list of hex) holds the
 * same way from start-up; a later call here changes what it held.
 * `gemmshim tune --from` uses it to time a recorded CUDA graph with and
 * without some tuned decisions. GEMMSHIM_ERR_INVALID: not
 * a class's hex; GEMMSHIM_ERR_UNSUPPORTED: no room (65536 held, or no
 * memory). */
int gemmshim_hold_prior(const char *signature, int on);

typedef struct gemmshim_stats {
    uint64_t calls;      /* intercepted GEMM calls */
    uint64_t routed;     /* served by a gemmshim kernel */
    uint64_t forwarded;  /* served by cuBLAS (incl. fallbacks) */
    uint64_t fallbacks;  /* routed, failed to launch, forwarded */
    uint64_t quick;      /* nothing to do (m == 0 or n == 0), or rejected by the shim */
} gemmshim_stats_t;

/* Counters since the start or the last reset. */
int gemmshim_get_stats(gemmshim_stats_t *out);

/* The shim's own device resources, for leak checks: each is bounded and
 * reused. Workspaces stay where a warm-up left them; the timing pool's
 * events are its high-water mark of calls timed at once (how far the host
 * ran ahead of the GPU), which a later stretch can raise, never past
 * timing_events_max. The caller sets `size` to sizeof(gemmshim_resources_t);
 * fields past it are not written (so the struct can grow). */
typedef struct gemmshim_resources {
    size_t size;
    uint64_t workspace_buffers; /* split-K workspaces: one per device, stream and thread */
    uint64_t workspace_bytes;
    uint64_t timing_events;     /* CUDA events of the log's timing (a pool, reused) */
    uint64_t verify_in_flight;  /* verify comparisons enqueued, verdict not yet read */
    uint64_t timing_events_max; /* the timing pool's bound */
} gemmshim_resources_t;
int gemmshim_get_resources(gemmshim_resources_t *out);
void gemmshim_reset_stats(void);

/* Write the report: one line per distinct call signature (entry point,
 * types, transposes, sizes, route or reason) with its call count, then the
 * per-route summary. */
int gemmshim_write_report(const char *path);

/* Replace the routing table with a measured one (format: docs/REFERENCE.md,
 * "Routing table files"; versioned, first line "gemmshim-table 1"). A
 * malformed file, or one with no entries, gives GEMMSHIM_ERR_FORMAT with the
 * line on stderr; a path that cannot be read as a regular file (missing,
 * a directory, a FIFO, a device) GEMMSHIM_ERR_IO, at once. Either way the
 * table in force stays. */
int gemmshim_load_table(const char *path);

#ifdef __cplusplus
}
#endif
#endif /* GEMMSHIM_H */
