/* Finding the real cuBLAS and cuBLASLt at run time, wherever the application
 * has them, and the table of their functions the shim forwards to. */
#ifndef GS_REAL_H
#define GS_REAL_H

#include "gs_cublas.h"
#include "gs_entry_points.h"

typedef enum gs_lib { GS_LIB_CUBLAS = 0, GS_LIB_CUBLASLT, GS_LIB_COUNT } gs_lib_t;

typedef struct gs_real_table {
#define GS_REAL_SLOT(lib, name, params, args) cublasStatus_t (*name) params;
    GS_ENTRY_POINTS(GS_REAL_SLOT)
    GS_HELPER_FUNCS(GS_REAL_SLOT)
#undef GS_REAL_SLOT
} gs_real_table_t;

/* The table, resolving library `lib` on first use (thread-safe, once).
 * Slots that could not be resolved are NULL and were reported. */
const gs_real_table_t *gs_real(gs_lib_t lib);

/* Path of the library the table's functions of `lib` came from, or NULL. */
const char *gs_real_path(gs_lib_t lib);

/* An optional function of the real library `lib` (the tuner's cuBLASLt
 * calls, version queries), NULL when it has none; never reported. */
void *gs_real_symbol(gs_lib_t lib, const char *name);

/* Called when a needed real function is missing: reports it once, aborts under
 * GEMMSHIM_STRICT=1, and gives the status the wrapper returns. */
cublasStatus_t gs_real_missing(const char *name);

/* Forward a call to the real function, or report it missing. */
#define GS_FORWARD(lib, name, args) \
    (gs_real(lib)->name ? gs_real(lib)->name args : gs_real_missing(#name))

#endif /* GS_REAL_H */
