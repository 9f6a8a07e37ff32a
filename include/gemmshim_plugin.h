/* gemmshim plugins: a kernel family in a shared library of your own.
 *
 * EXPERIMENTAL: this ABI may change in any release until tuned routing has
 * extended the family interface; a plugin is accepted only when it was
 * built for exactly the host's GEMMSHIM_PLUGIN_ABI_VERSION.
 *
 * GEMMSHIM_PLUGINS=/path/a.so:/path/b.so makes the shim dlopen each library
 * (RTLD_LOCAL | RTLD_NOW) when it starts, call its gemmshim_plugin_init and
 * add the family it describes after the built-in ones. From then on the
 * plugin's configurations are candidates like the built-in kernels': named
 * in GEMMSHIM_KERNELS (its name selects all its configurations, "all"
 * includes them), chosen under GEMMSHIM_POLICY, checked by
 * GEMMSHIM_MODE=verify, timed by GEMMSHIM_MODE=ab, and named in routing
 * tables (GEMMSHIM_TABLE, gemmshim tune). Under the default policy a call
 * is routed only where a routing table measured the candidate, so an
 * unmeasured plugin is forwarded: route it with GEMMSHIM_POLICY=eligible,
 * or a table with entries for it.
 *
 * A library of the wrong ABI version, without gemmshim_plugin_init, with an
 * incomplete descriptor, or whose name (or a configuration's) is already
 * taken (a built-in family's included) gets one line in the shim's log and
 * is ignored; the other plugins and the shim carry on.
 *
 * Rules for a plugin:
 *  - can_implement and workspace_bytes are pure host code and see the
 *    problem without its pointers (A, B, C, alpha, beta, stream, workspace
 *    are NULL): decide from the other fields only (alignments and beta_kind
 *    say what the pointers would). The shim caches the decision per class of
 *    call; an answer that depended on the addresses would be reused wrongly.
 *  - can_implement returns 1 only when the configuration computes exactly
 *    C = alpha * op(A) * op(B) + beta * C (column-major, as cuBLAS) for the
 *    problem as described, every field of it; 0 otherwise.
 *  - run enqueues the work on `stream` and returns 0, or a cudaError_t
 *    value with nothing enqueued (the shim then forwards the call to cuBLAS).
 *    It never synchronizes, allocates device memory or changes the current
 *    device. With beta_kind == GEMMSHIM_PLUGIN_BETA_ZERO, C must not be read
 *    (it may hold NaN).
 *  - No cuBLAS or cuBLASLt call from inside any of these functions: the shim
 *    refuses such a call (CUBLAS_STATUS_NOT_SUPPORTED, nothing runs), says so
 *    once, and treats the plugin's answer as a failure (can_implement: 0;
 *    run: the call falls back to cuBLAS).
 *  - No C++ exception may leave a plugin function: catch everything and
 *    return an error (the shim treats an escaping exception as a failure
 *    where it can, but that is a last resort, not part of the contract).
 *  - Every string the descriptor points to lives as long as the library.
 *
 * The name, version and build id are part of the key under which the shim
 * remembers its decisions: a rebuilt plugin (a new build id) is never
 * served from an older plugin's decisions.
 *
 * Plain C; no CUDA or cuBLAS header needed. Every struct starts with its
 * size and ABI version, so it can grow: read only the fields that
 * struct_size covers. */
#ifndef GEMMSHIM_PLUGIN_H
#define GEMMSHIM_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GEMMSHIM_PLUGIN_ABI_VERSION 1u

/* Element types. */
typedef enum gemmshim_plugin_dtype {
    GEMMSHIM_PLUGIN_F32 = 1,
    GEMMSHIM_PLUGIN_F16 = 2,
    GEMMSHIM_PLUGIN_BF16 = 3,
} gemmshim_plugin_dtype_t;

/* How products are accumulated (TF32 and other reduced modes are never
 * offered to a plugin: the shim forwards them). */
typedef enum gemmshim_plugin_compute {
    GEMMSHIM_PLUGIN_COMPUTE_F32 = 1,          /* fp32 accumulation */
    GEMMSHIM_PLUGIN_COMPUTE_F32_PEDANTIC = 2, /* fp32, no reduced-precision shortcuts */
    GEMMSHIM_PLUGIN_COMPUTE_F32_FAST_16F = 3, /* fp32, inputs may be rounded to fp16 */
    GEMMSHIM_PLUGIN_COMPUTE_F32_FAST_16BF = 4 /* fp32, inputs may be rounded to bf16 */
} gemmshim_plugin_compute_t;

/* What beta is, known before launch. */
typedef enum gemmshim_plugin_beta {
    GEMMSHIM_PLUGIN_BETA_DEVICE = 0, /* in device memory: known only on the GPU */
    GEMMSHIM_PLUGIN_BETA_ZERO = 1,   /* 0 in host memory: C is never read */
    GEMMSHIM_PLUGIN_BETA_ONE = 2,
    GEMMSHIM_PLUGIN_BETA_OTHER = 3,
} gemmshim_plugin_beta_t;

/* One call: for every batch b, C_b = alpha * op(A_b) * op(B_b) + beta * C_b,
 * op(A) m x k, op(B) k x n, C m x n, column-major (element (i, j) of C at
 * C[i + j * ldc]); A_b = A + b * stride_a elements, likewise B and C. */
typedef struct gemmshim_plugin_problem {
    uint32_t struct_size;   /* sizeof as the shim filled it */
    uint32_t abi_version;
    int32_t a_type, b_type, c_type; /* gemmshim_plugin_dtype_t */
    int32_t compute;        /* gemmshim_plugin_compute_t */
    int32_t scalar_type;    /* what alpha and beta point to (F32 with fp32 accumulation) */
    int32_t trans_a, trans_b; /* 0: as stored, 1: transposed */
    int32_t scalars_on_device; /* alpha and beta point to device memory */
    int32_t beta_kind;      /* gemmshim_plugin_beta_t */
    uint32_t math_flags;    /* the cuBLAS handle's math-mode flag bits
                               (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) */
    /* the largest power of two up to 256 dividing each pointer's address,
     * in bytes (0: NULL) */
    uint32_t align_a, align_b, align_c;
    uint32_t reserved;      /* 0 */
    int64_t m, n, k;
    int64_t lda, ldb, ldc;
    int64_t batch;          /* >= 1 */
    int64_t stride_a, stride_b, stride_c; /* elements between batches */
    /* run only (NULL in can_implement and workspace_bytes): */
    const void *A, *B;
    void *C;
    const void *alpha, *beta;
    void *stream;           /* cudaStream_t */
    void *workspace;        /* device scratch of workspace_bytes, 256-byte aligned,
                               its content undefined; NULL when none was asked
                               (run is never called with less than was asked:
                               the shim forwards the call instead) */
    size_t workspace_size;
} gemmshim_plugin_problem_t;

/* The device the call runs on. */
typedef struct gemmshim_plugin_device {
    uint32_t struct_size;
    uint32_t abi_version;
    int32_t ordinal;
    int32_t cc_major, cc_minor;
    int32_t sm_count;
    size_t smem_optin;      /* max dynamic shared memory per block, bytes */
    size_t l2_bytes;
} gemmshim_plugin_device_t;

/* The family a plugin provides. */
typedef struct gemmshim_plugin {
    uint32_t struct_size;   /* sizeof(gemmshim_plugin_t) as the plugin was built */
    uint32_t abi_version;   /* GEMMSHIM_PLUGIN_ABI_VERSION as the plugin was built */
    /* [a-z0-9_], starting with a letter, at most 31 characters: */
    const char *name;       /* the family's name ("mykernels") */
    const char *version;    /* the plugin's version, free text ("1.2.0") */
    const char *build_id;   /* anything that changes with each build (a hash, a date) */
    int32_t n_configs;      /* 1 .. 16 */
    /* each configuration's stable name: the plugin's name, or the plugin's
     * name followed by '_' and more of [a-z0-9_] ("mykernels_64x64"), at
     * most 63 characters */
    const char *const *config_names;
    /* 1 when configuration `config` computes exactly p on d (see above) */
    int (*can_implement)(const gemmshim_plugin_problem_t *p, const gemmshim_plugin_device_t *d,
                         int config);
    /* optional (NULL: none): device scratch run needs for p */
    size_t (*workspace_bytes)(const gemmshim_plugin_problem_t *p,
                              const gemmshim_plugin_device_t *d, int config);
    /* enqueue p on p->stream: 0, or a cudaError_t with nothing enqueued */
    int (*run)(const gemmshim_plugin_problem_t *p, const gemmshim_plugin_device_t *d,
               int config);
} gemmshim_plugin_t;

/* The one symbol a plugin exports. host_abi_version is the shim's
 * GEMMSHIM_PLUGIN_ABI_VERSION; set *out to the plugin's descriptor (static
 * storage) and return 0, or return non-zero to decline (for instance for a
 * host version it does not support). Called once, at the shim's start-up,
 * before any call is served; no CUDA call is needed here. */
#define GEMMSHIM_PLUGIN_INIT_SYMBOL "gemmshim_plugin_init"
typedef int (*gemmshim_plugin_init_fn)(uint32_t host_abi_version, const gemmshim_plugin_t **out);

#if defined(__GNUC__)
#define GEMMSHIM_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define GEMMSHIM_PLUGIN_EXPORT
#endif
#ifdef __cplusplus
#define GEMMSHIM_PLUGIN_EXTERN_C extern "C"
#else
#define GEMMSHIM_PLUGIN_EXTERN_C
#endif

/* Defines the entry point with C linkage and default visibility:
 *   GEMMSHIM_PLUGIN_ENTRY { *out = &my_plugin; return 0; }
 * (host_abi_version and out are its parameters). */
#define GEMMSHIM_PLUGIN_ENTRY                                                          \
    GEMMSHIM_PLUGIN_EXTERN_C GEMMSHIM_PLUGIN_EXPORT int gemmshim_plugin_init(          \
        uint32_t host_abi_version, const gemmshim_plugin_t **out)

#ifdef __cplusplus
}
#endif
#endif /* GEMMSHIM_PLUGIN_H */
