/* dist.c - a per-request time's summary (mean and nearest-rank percentiles),
 * as the serving simulator reports TTFT and TPOT. */
#include <math.h>
#include <stdlib.h>

#include "serve.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the smallest value with at least pct percent of the values at or below */
static double rank(const double *v, size_t n, double pct)
{
    size_t k = (size_t)ceil(pct / 100.0 * (double)n);
    return v[k ? k - 1 : 0];
}

void serve_dist_of(double *v, size_t n, serve_dist *out)
{
    *out = (serve_dist){0, 0, 0, 0};
    if (!n)
        return;
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    out->mean = sum / (double)n;
    out->p50 = rank(v, n, 50);
    out->p90 = rank(v, n, 90);
    out->p99 = rank(v, n, 99);
}
