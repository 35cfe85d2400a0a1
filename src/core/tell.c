/* tell.c — a formatted line handed to a caller's callback: the library's warnings and notes
 * reach a front end this way, never printed. */
#include "tell.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void tell_line(void (*fn)(void *arg, const char *line), void *arg, const char *fmt, ...)
{
    if (!fn)
        return;
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *line = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!line)
        return;
    va_start(ap, fmt);
    vsnprintf(line, (size_t)len + 1, fmt, ap);
    va_end(ap);
    fn(arg, line);
    free(line);
}
