/* The C numeric locale; see gs_c_locale.h. */
#include "gs_c_locale.h"

#include <pthread.h>

static locale_t c_locale;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void create(void)
{
    c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

locale_t gs_c_locale(void)
{
    pthread_once(&once, create);
    return c_locale;
}
