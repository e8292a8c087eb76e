/* net/util.c - helpers shared by the remote modules (see util.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

int nu_fmt(char *out, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int w = vsnprintf(out, n, f, ap);
    va_end(ap);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

int nu_lower_hex(const char *s, size_t len)
{
    if (strlen(s) != len)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}
