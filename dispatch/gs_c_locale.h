/* The C numeric locale, for the numbers in the shim's text files (routing
 * tables, the tune cache): read and written the same whatever LC_NUMERIC
 * the application set (a decimal-comma locale once made every table
 * refused). */
#ifndef GS_C_LOCALE_H
#define GS_C_LOCALE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* locale_t, newlocale, strtod_l, uselocale */
#endif
#include <locale.h>

/* Created once for the process and never freed; (locale_t)0 if it could
 * not be created (then the callers say so or use the global locale). */
locale_t gs_c_locale(void);

#endif /* GS_C_LOCALE_H */
