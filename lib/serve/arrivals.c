/* arrivals.c - when each request of a workload reaches the server: all at
 * once (a burst, as `vllm bench serve --request-rate inf`), at the trace's
 * own timestamps, or as a Poisson process (exponential gaps, as vLLM's
 * benchmark draws them), seeded so a replay is repeatable. */
#include <math.h>

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
