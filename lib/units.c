/* units.c - token counts and byte sizes as people type them.
 *
 * Lengths use k = 1024 because that is what "32k context" means to every
 * runtime (32k = 32768).  Sizes are taken as written: GB is 10^9, GiB is
 * 2^30; a bare G/M/K is binary, as llama.cpp and most tools read it.
 * Decimal sizes ("54.94GiB") are converted exactly and rounded down. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kvp_int.h"

/* Parses "digits[.digits]" into mantissa and number of decimals; returns a
 * pointer past the number, or NULL. */
static const char *parse_decimal(const char *s, unsigned __int128 *mant, unsigned *decimals)
{
    unsigned __int128 m = 0;
    unsigned d = 0, digits = 0;
    int dot = 0;
    for (; *s; s++) {
        if (*s == '.' && !dot) {
            dot = 1;
            continue;
        }
        if (*s == '_' || *s == ',')
            continue; /* 1_000_000, 400,032 */
        if (!isdigit((unsigned char)*s))
            break;
        if (++digits > 20)
            return NULL;
        m = m * 10 + (unsigned)(*s - '0');
        if (dot)
            d++;
    }
    if (!digits)
        return NULL;
    *mant = m;
    *decimals = d;
    return s;
}

int kvp_parse_tokens(const char *s, uint64_t *out)
{
    unsigned __int128 m;
    unsigned d;
    const char *p = parse_decimal(s, &m, &d);
    if (!p || d)
        return -1;
    unsigned __int128 mult = 1;
    if (*p == 'k' || *p == 'K')
        mult = 1024, p++;
    else if (*p == 'm' || *p == 'M')
        mult = 1024 * 1024, p++;
    if (*p)
        return -1;
    m *= mult;
    if (m == 0 || m > KVP_MAX_TOKENS)
        return -1;
    *out = (uint64_t)m;
    return 0;
}

int kvp_parse_bytes(const char *s, uint64_t *out)
{
    static const struct {
        const char *unit;
        uint64_t mult;
    } units[] = {
        {"", 1}, {"b", 1},
        {"kib", 1ull << 10}, {"mib", 1ull << 20}, {"gib", 1ull << 30}, {"tib", 1ull << 40},
        {"k", 1ull << 10}, {"m", 1ull << 20}, {"g", 1ull << 30}, {"t", 1ull << 40},
        {"kb", 1000ull}, {"mb", 1000000ull}, {"gb", 1000000000ull}, {"tb", 1000000000000ull},
    };
    unsigned __int128 m;
    unsigned d;
    const char *p = parse_decimal(s, &m, &d);
    if (!p)
        return -1;
    while (*p == ' ')
        p++;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcasecmp(p, units[i].unit) != 0)
            continue;
        unsigned __int128 v = m * units[i].mult;
        while (d--)
            v /= 10;
        if (v == 0 || v > (unsigned __int128)UINT64_MAX / 2)
            return -1;
        *out = (uint64_t)v;
        return 0;
    }
    return -1;
}

void kvp_format_thousands(uint64_t v, char *buf, size_t n)
{
    char tmp[32];
    int len = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < len && o + 2 < n; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    if (n)
        buf[o < n ? o : n - 1] = 0;
}
