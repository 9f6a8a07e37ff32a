/* Pass/fail counts that several threads update, for the threaded GPU tests:
 * count(ok, what) records one check and prints "FAIL: what" for a failed
 * one; `passed` and `failed` are read once the threads are joined. */
#ifndef GU_COUNT_H
#define GU_COUNT_H

#include <pthread.h>
#include <stdio.h>

static int passed, failed;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void count(int ok, const char *what)
{
    pthread_mutex_lock(&count_lock);
    if (ok)
        ++passed;
    else {
        ++failed;
        printf("FAIL: %s\n", what);
    }
    pthread_mutex_unlock(&count_lock);
}

#endif
