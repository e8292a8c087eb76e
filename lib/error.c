/* error.c - the one-line error every failing call leaves behind, and the
 * notes (warnings, caveats) a runtime attaches to a result. */
#include <stdarg.h>
#include <stdio.h>

#include "kvp_int.h"

int kvp_fail(kvp_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
        /* one line, always */
        for (char *p = err->msg; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
    }
    return -1;
}

void kvp_note_add(char *notes, size_t width, size_t cap, size_t *n, const char *fmt, ...)
{
    va_list ap;
    if (*n >= cap)
        return;
    va_start(ap, fmt);
    vsnprintf(notes + *n * width, width, fmt, ap);
    va_end(ap);
    (*n)++;
}
