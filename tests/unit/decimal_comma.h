/* Switch LC_NUMERIC to an installed decimal-comma locale for the tests that
 * pin the shim's text files to the C locale: 1 if one is in force, 0 (the C
 * locale restored, and the caller says it did not test) if none is
 * installed. */
#ifndef DECIMAL_COMMA_H
#define DECIMAL_COMMA_H

#include <locale.h>
#include <stdlib.h>

static inline int set_decimal_comma_locale(void)
{
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
                                        "fr_FR.utf8", "de_DE", "fr_FR"};
    const char *got = NULL;
    for (size_t i = 0; !got && i < sizeof names / sizeof names[0]; ++i)
        got = setlocale(LC_NUMERIC, names[i]);
    if (!got || strtod("1,5", NULL) != 1.5) {
        setlocale(LC_NUMERIC, "C");
        return 0;
    }
    return 1;
}

#endif /* DECIMAL_COMMA_H */
