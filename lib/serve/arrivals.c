/* arrivals.c - when each request of a workload reaches the server: all at
 * once (a burst, as `vllm bench serve --request-rate inf`), at the trace's
 * own timestamps, or as a Poisson process (exponential gaps, as vLLM's
 * benchmark draws them), seeded so a replay is repeatable. */
#include <math.h>
#include <stdlib.h>

#include "serve.h"

/* splitmix64: a seeded stream good enough for arrival gaps */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int serve_arrivals(const kvp_workload *w, int how, double rate, uint64_t seed, double *out,
                   kvp_error *err)
{
    if (how == SERVE_ARRIVE_POISSON && !(rate > 0 && rate < 1e9))
        return kvp_fail(err, KVP_EUSAGE, "--rate must be a positive number of requests per second");
    double t = 0, t0 = w->n_req ? w->req[0].timestamp : 0;
    uint64_t s = seed;
    for (size_t i = 0; i < w->n_req; i++) {
        if (how == SERVE_ARRIVE_TRACE) {
            double ms = w->req[i].timestamp - t0;
            if (!(ms >= 0))
                return kvp_fail(err, KVP_EINPUT, "%s: request %zu arrives before the first "
                                "(timestamps must not decrease)", w->name, i + 1);
            out[i] = ms / 1000.0;
        } else if (how == SERVE_ARRIVE_POISSON) {
            double u = (double)(next_u64(&s) >> 11) * 0x1.0p-53; /* [0, 1) */
            t += -log1p(-u) / rate;
            out[i] = t;
        } else {
            out[i] = 0;
        }
    }
    return 0;
}

typedef struct arrival {
    double t;
    uint32_t id;
} arrival;

static int cmp_arrival(const void *a, const void *b)
{
    const arrival *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

int serve_sort_by_arrival(const double *arrival_s, uint32_t *ids, size_t n)
{
    arrival *a = malloc((n ? n : 1) * sizeof *a);
    if (!a)
        return -1;
    for (size_t i = 0; i < n; i++)
        a[i] = (arrival){arrival_s[ids[i]], ids[i]};
    qsort(a, n, sizeof *a, cmp_arrival);
    for (size_t i = 0; i < n; i++)
        ids[i] = a[i].id;
    free(a);
    return 0;
}
