/* The fake cuBLAS and cuBLASLt of FAKE_DIR as the real ones the shim finds
 * (GEMMSHIM_CUBLAS, GEMMSHIM_CUBLASLT), for test programs that link the
 * shim's objects and take FAKE_DIR as their first argument. */
#ifndef FAKE_LIBS_H
#define FAKE_LIBS_H

#include <stdio.h>
#include <stdlib.h>

/* 0, or 2 after a usage line naming `prog` when FAKE_DIR is missing. */
static inline int fake_libs_use(int argc, char **argv, const char *prog)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FAKE_DIR\n", prog);
        return 2;
    }
    char lib[4096];
    snprintf(lib, sizeof lib, "%s/libcublasLt.so.13", argv[1]);
    setenv("GEMMSHIM_CUBLASLT", lib, 1);
    snprintf(lib, sizeof lib, "%s/libcublas.so.13", argv[1]);
    setenv("GEMMSHIM_CUBLAS", lib, 1);
    return 0;
}

#endif
