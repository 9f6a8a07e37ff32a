/* Look-ups the way XLA does them, for the dlsym suite: prints which library
 * answered each look-up ("shim" or "fake").
 *   dlsym_calls next    dlsym(RTLD_NEXT, "cublasSgemm_v2") from the program:
 *                       the next definition after the program is the
 *                       preloaded shim's, with or without interception
 *   dlsym_calls handle  dlopen the (fake) cuBLASLt locally, dlsym
 *                       cublasLtMatmul and cublasLtCreate on its handle,
 *                       then call the cublasLtMatmul found */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static const char *owner(void *fn)
{
    Dl_info info;
    if (!fn)
        return "none";
    if (!dladdr(fn, &info) || !info.dli_fname)
        return "unknown";
    if (strstr(info.dli_fname, "libgemmshim"))
        return "shim";
    if (strstr(info.dli_fname, "fake/libcublas"))
        return "fake";
    return info.dli_fname;
}

/* The header's own prototype, so the signature is not written out again. */
typedef __typeof__(&cublasLtMatmul) lt_matmul_fn;

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (!strcmp(argv[1], "next")) {
        printf("next cublasSgemm_v2: %s\n", owner(dlsym(RTLD_NEXT, "cublasSgemm_v2")));
        return 0;
    }
    if (!strcmp(argv[1], "handle")) {
        void *h = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 1;
        }
        lt_matmul_fn mm = (lt_matmul_fn)dlsym(h, "cublasLtMatmul");
        printf("handle cublasLtMatmul: %s\n", owner((void *)mm));
        printf("handle cublasLtCreate: %s\n", owner(dlsym(h, "cublasLtCreate")));
        if (!mm)
            return 1;
        /* made-up descriptors: forwarded untouched, recorded by the fake */
        cublasStatus_t st = mm((cublasLtHandle_t)0x11, (cublasLtMatmulDesc_t)0x22, NULL, NULL,
                               NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0);
        printf("call status %d\n", (int)st);
        return 0;
    }
    return 2;
}
