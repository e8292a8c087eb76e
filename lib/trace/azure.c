/* azure.c - the Azure LLM inference traces (Azure/AzurePublicDataset,
 * AzureLLMInferenceTrace_{code,conv}.csv; CC-BY 4.0): one row per request,
 * TIMESTAMP,ContextTokens,GeneratedTokens.  The trace has lengths and
 * arrivals but no prompt content, so each prompt is one chunk of its own:
 * nothing is shared, and the trace is for --concurrent arrivals and lengths.
 * Timestamps are parsed by hand (no locale, mktime or time zone), exactly to
 * the 100 ns the trace gives. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_int.h"

#define AZURE_HEADER "TIMESTAMP,ContextTokens,GeneratedTokens"
#define TICKS_PER_SEC 10000000ll /* 100 ns, the trace's 7 fractional digits */

typedef struct az_row {
    int64_t ticks;          /* 100 ns since 1970-01-01 00:00:00 */
    uint64_t context, generated;
} az_row;

typedef struct az_ctx {
    az_row *rows;
    size_t n, cap;
    int header_seen;
    uint64_t skipped;       /* rows of 0 context tokens */
    char first_skipped[64]; /* "LINE" of the first, for the note */
} az_ctx;

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (H. Hinnant's days_from_civil), so no time zone or libc table is involved. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int leap(unsigned y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* exactly n digits at *p into *out */
static int digits(const char **p, int n, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (**p < '0' || **p > '9')
            return -1;
        v = v * 10 + (unsigned)(**p - '0');
    }
    *out = v;
    return 0;
}

/* "YYYY-MM-DD HH:MM:SS[.f{1,7}]" (a 'T' also separates) -> 100 ns ticks */
static int parse_time(const char *s, int64_t *ticks)
{
    static const unsigned mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    unsigned y, mo, d, h, mi, sec, frac = 0;
    const char *p = s;
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
        digits(&p, 2, &d) || (*p != ' ' && *p != 'T'))
        return -1;
    p++;
    if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' ||
        digits(&p, 2, &sec))
        return -1;
    if (*p == '.') {
        int n = 0;
        for (p++; *p >= '0' && *p <= '9' && n < 7; p++, n++)
            frac = frac * 10 + (unsigned)(*p - '0');
        if (n == 0)
            return -1;
        for (; n < 7; n++)
            frac *= 10;
    }
    if (*p || y < 1 || mo < 1 || mo > 12 || d < 1 ||
        d > mdays[mo - 1] + (mo == 2 && leap(y)) || h > 23 || mi > 59 || sec > 59)
        return -1;
    int64_t secs = days_from_civil(y, mo, d) * 86400 + (int64_t)(h * 3600 + mi * 60 + sec);
    *ticks = secs * TICKS_PER_SEC + frac;
    return 0;
}

/* a whole number in [0, 2^40]: "negative" and "out of range" told apart */
static int parse_count(const char *s, const char *name, const char *where, uint64_t *out,
                       kvp_error *err)
{
    if (*s == '-' && s[1] >= '0' && s[1] <= '9')
        return kvp_fail(err, KVP_EINPUT, "%s: %s is negative (%s)", where, name, s);
    if (*s < '0' || *s > '9')
        return kvp_fail(err, KVP_EINPUT, "%s: %s is not a whole number (\"%s\")", where, name, s);
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end)
        return kvp_fail(err, KVP_EINPUT, "%s: %s is not a whole number (\"%s\")", where, name, s);
    if (errno || v > KVP_MAX_TOKENS)
        return kvp_fail(err, KVP_EINPUT, "%s: %s %s is out of range (at most 2^40)", where,
                        name, s);
    *out = v;
    return 0;
}

/* strips spaces and tabs around a field in place */
static char *trim(char *s)
{
    s += strspn(s, " \t");
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = 0;
    return s;
}

static int az_header(az_ctx *x, char *line, const char *where, kvp_error *err)
{
    if (!strncmp(line, "\xef\xbb\xbf", 3)) /* a UTF-8 byte-order mark */
        line += 3;
    if (strcmp(line, AZURE_HEADER))
        return kvp_fail(err, KVP_EINPUT, "%s: not an Azure LLM inference trace (the header "
                        "must be " AZURE_HEADER ")", where);
    x->header_seen = 1;
    return 0;
}

static int az_line(void *ctx, char *line, size_t len, const char *where, kvp_error *err)
{
    az_ctx *x = ctx;
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = 0;
    if (memchr(line, 0, len))
        return kvp_fail(err, KVP_EINPUT, "%s: a NUL byte in the line", where);
    if (!x->header_seen)
        return az_header(x, line, where, err);
    char *f[3], *p = line;
    int n = 0;
    for (;;) {
        char *comma = strchr(p, ',');
        if (n < 3)
            f[n] = p;
        n++;
        if (!comma)
            break;
        *comma = 0;
        p = comma + 1;
    }
    if (n != 3)
        return kvp_fail(err, KVP_EINPUT, "%s: %d fields, expected 3 (" AZURE_HEADER ")", where,
                        n);
    az_row r;
    if (parse_time(trim(f[0]), &r.ticks))
        return kvp_fail(err, KVP_EINPUT, "%s: bad TIMESTAMP \"%s\" (YYYY-MM-DD HH:MM:SS.fffffff)",
                        where, f[0]);
    if (parse_count(trim(f[1]), "ContextTokens", where, &r.context, err) ||
        parse_count(trim(f[2]), "GeneratedTokens", where, &r.generated, err))
        return -1;
    if (r.context == 0) { /* nothing to prefill or cache: counted, said in the note */
        if (!x->skipped++)
            snprintf(x->first_skipped, sizeof x->first_skipped, "%s",
                     strrchr(where, ':') ? strrchr(where, ':') + 1 : where);
        return 0;
    }
    if (x->n >= WL_MAX_REQUESTS)
        return kvp_fail(err, KVP_EINPUT, "%s: more than %llu requests", where, WL_MAX_REQUESTS);
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 1024;
        az_row *q = realloc(x->rows, cap * sizeof *q);
        if (!q)
            return kvp_fail(err, KVP_EINPUT, "%s: out of memory", where);
        x->rows = q, x->cap = cap;
    }
    x->rows[x->n++] = r;
    return 0;
}

/* Arrivals in ms from the earliest row (the first, in a trace in order), from
 * the trace's own 100 ns ticks with one rounding. */
static int az_build(az_ctx *x, wl_builder *b, kvp_error *err)
{
    int64_t t0 = x->n ? x->rows[0].ticks : 0;
    for (size_t i = 1; i < x->n; i++)
        if (x->rows[i].ticks < t0)
            t0 = x->rows[i].ticks;
    for (size_t i = 0; i < x->n; i++) {
        /* both ends lie in years 1..9999, so the difference (< 3.2e18 ticks)
         * fits; in ns it might not.  ticks / 1e4 is the same one rounding of
         * the same number as ns / 1e6, the grid kvplan's JSONL keeps. */
        int64_t ticks = x->rows[i].ticks - t0;
        kvp_sim_chunk c = {wl_unique(b), x->rows[i].context};
        if (wl_add(b, &c, 1, x->rows[i].generated, (double)ticks / 1e4, 0, err))
            return -1;
    }
    kvp_workload *w = b->w;
    if (x->skipped)
        snprintf(w->note, sizeof w->note, "no prompt sharing in this trace (lengths and "
                 "arrivals only): use it for --concurrent arrivals; %llu row%s of 0 context "
                 "tokens skipped (the first at line %s)", (unsigned long long)x->skipped,
                 x->skipped == 1 ? "" : "s", x->first_skipped);
    else
        snprintf(w->note, sizeof w->note, "no prompt sharing in this trace (lengths and "
                 "arrivals only): use it for --concurrent arrivals");
    return 0;
}

int wl_read_azure(const char *path, uint32_t bs, kvp_workload *w, kvp_error *err)
{
    az_ctx x = {.rows = NULL};
    wl_builder b;
    wl_init(&b, w, path, "azure", bs);
    int rc = wl_each_line(path, NULL, az_line, &x, err);
    if (!rc && !x.header_seen)
        rc = kvp_fail(err, KVP_EINPUT, "%s: no requests in the trace (the file is empty)", path);
    else if (!rc && x.n == 0 && x.skipped)
        rc = kvp_fail(err, KVP_EINPUT, "%s: no requests in the trace (%llu rows, all of 0 "
                      "context tokens)", path, (unsigned long long)x.skipped);
    else if (!rc && x.n == 0)
        rc = kvp_fail(err, KVP_EINPUT, "%s: no requests in the trace (a header and no rows)",
                      path);
    if (!rc)
        rc = az_build(&x, &b, err);
    free(x.rows);
    /* rows may be out of order: a stable sort keeps equal times in file order */
    return wl_finish(&b, 1, rc, err);
}
