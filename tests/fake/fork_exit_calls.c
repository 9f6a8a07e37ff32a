/* A process that forks a worker which returns through exit() (atexit
 * handlers run, as in a Python worker that ends normally), for the record
 * tests (tests/bats/80-record.bats): each process must write its own calls
 * only, none twice.
 *
 *   fork_exit_calls
 *
 * The parent issues two 128^3 Sgemm calls, forks, waits for the child,
 * then issues one more. The child issues three 64^3 Sgemm calls on the
 * parent's handle (one thread, so the fake's handle lock is free) and
 * exit(0)s. Pointers are dummies. Prints "fork_exit_calls: child P" and
 * exits 0 only if the child did and every call returned success. */
#include <cublas_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEV(addr) ((void *)(uintptr_t)(addr))

static int sgemm(cublasHandle_t h, int n)
{
    const float one = 1.f, zero = 0.f;
    return cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, DEV(0x7f1000000000), n,
                          DEV(0x7f2000000000), n, &zero, DEV(0x7f3000000000), n) !=
           CUBLAS_STATUS_SUCCESS;
}

int main(void)
{
    cublasHandle_t h;
    if (cublasCreate_v2(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "fork_exit_calls: cublasCreate_v2 failed\n");
        return 1;
    }
    int bad = sgemm(h, 128) + sgemm(h, 128);
    fflush(stdout);
    const pid_t child = fork();
    if (child < 0) {
        perror("fork_exit_calls: fork");
        return 1;
    }
    if (child == 0)
        exit(sgemm(h, 64) + sgemm(h, 64) + sgemm(h, 64) ? 1 : 0);
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
        fprintf(stderr, "fork_exit_calls: child %ld failed (status %d)\n", (long)child, status);
        ++bad;
    }
    printf("fork_exit_calls: child %ld\n", (long)child);
    bad += sgemm(h, 128);
    cublasDestroy_v2(h);
    return bad ? 1 : 0;
}
