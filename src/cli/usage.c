/* SPDX-License-Identifier: MIT */
/* usage.c: see usage.h. */
#include "usage.h"

#include <stdarg.h>
#include <stdio.h>

int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("gorila: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_USAGE;
}
