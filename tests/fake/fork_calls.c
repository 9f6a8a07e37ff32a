/* fork() from a process whose other thread is busy inside the shim, for the
 * log tests (tests/bats/35-logs.bats): Python multiprocessing and DataLoader
 * workers fork while the main process keeps issuing GEMMs.
 *
 *   fork_calls [children] [calls]
 *
 * A thread issues calls in a loop, each of a new signature (the shim takes
 * its log lock on every call and writes a log line for each new signature).
 * Meanwhile main forks `children` times (default 6), spaced out over the
 * thread's work; child i issues `calls` calls (default 3) of its own
 * signatures (m = 7000 + i, n = 16 + j, k = 16) and _exit(0)s. Main waits
 * for every child under an alarm: a child that hangs (a lock another thread
 * held at the fork) fails the run after 30 s.
 *
 * The calls pass a NULL handle: the shim forwards them ("invalid arguments:
 * cuBLAS answers") and the fake records them without taking its own handle
 * lock, which the busy thread could hold at the fork (the fake is no more
 * fork-safe than it needs to be). Run with GEMMSHIM_LOG_TIMING=0: no CUDA
 * runtime call in the child either. Prints one "fork_calls: child I pid P"
 * line per child, then "fork_calls: N children, M busy calls"; exits 0 only
 * if every child exited 0. */
#include <cublas_api.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEV(addr) ((void *)(uintptr_t)(addr))
#define MAX_CHILDREN 64

static int stop;       /* main tells the busy thread to end */
static long busy_done; /* calls the busy thread made */
static pid_t kids[MAX_CHILDREN];
static int n_kids;

static cublasStatus_t sgemm(cublasHandle_t h, int m, int n, int k)
{
    const float one = 1.f, zero = 0.f;
    return cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, DEV(0x7f1000000000),
                          m, DEV(0x7f2000000000), k, &zero, DEV(0x7f3000000000), m);
}

static void *busy(void *arg)
{
    (void)arg;
    for (long i = 0; !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); ++i) {
        /* a new signature each time (m, n below 7000: not a child's) */
        sgemm(NULL, 1 + (int)(i % 1000), 1 + (int)(i / 1000 % 1000), 8);
        __atomic_store_n(&busy_done, i + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "fork_calls: timeout: a child did not finish (deadlock?)\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    for (int i = 0; i < n_kids; ++i)
        kill(kids[i], SIGKILL);
    _exit(3);
}

static void wait_busy(long calls)
{
    const struct timespec pause = {0, 100000}; /* 0.1 ms */
    while (__atomic_load_n(&busy_done, __ATOMIC_ACQUIRE) < calls)
        nanosleep(&pause, NULL);
}

int main(int argc, char **argv)
{
    const int children = argc > 1 ? atoi(argv[1]) : 6;
    const int calls = argc > 2 ? atoi(argv[2]) : 3;
    if (children < 1 || children > MAX_CHILDREN || calls < 1 || calls > 1000) {
        fprintf(stderr, "usage: fork_calls [children 1..%d] [calls 1..1000]\n", MAX_CHILDREN);
        return 2;
    }
    signal(SIGALRM, on_alarm);
    alarm(30);
    /* the shim initialises on the first call: before the thread and forks */
    sgemm(NULL, 1, 1, 1);
    pthread_t t;
    if (pthread_create(&t, NULL, busy, NULL)) {
        fprintf(stderr, "fork_calls: pthread_create failed\n");
        return 1;
    }
    fflush(stdout); /* nothing buffered for the children to write again */
    for (int i = 0; i < children; ++i) {
        wait_busy(100L * (i + 1)); /* the thread is mid-work at every fork */
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork_calls: fork");
            break;
        }
        if (pid == 0) {
            int bad = 0;
            for (int j = 0; j < calls; ++j)
                bad |= sgemm(NULL, 7000 + i, 16 + j, 16) != CUBLAS_STATUS_SUCCESS;
            _exit(bad ? 1 : 0);
        }
        kids[n_kids++] = pid;
    }
    int failed = 0;
    for (int i = 0; i < n_kids; ++i) {
        int st = 0;
        if (waitpid(kids[i], &st, 0) != kids[i] || !WIFEXITED(st) || WEXITSTATUS(st)) {
            fprintf(stderr, "fork_calls: child %d (pid %ld) failed (status 0x%x)\n", i,
                    (long)kids[i], st);
            ++failed;
        }
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    alarm(0);
    for (int i = 0; i < n_kids; ++i)
        printf("fork_calls: child %d pid %ld\n", i, (long)kids[i]);
    printf("fork_calls: %d children, %ld busy calls\n", n_kids,
           __atomic_load_n(&busy_done, __ATOMIC_ACQUIRE));
    return failed || n_kids != children ? 1 : 0;
}
