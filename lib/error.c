/* error.c - the one-line error every failing call leaves behind. */
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
