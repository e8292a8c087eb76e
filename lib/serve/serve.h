/* serve.h - the serving simulator's shared pieces (lib/serve/): what one
 * scheduler step hands the model, how a step is priced, and what a replay
 * reports.  The schedulers (vLLM v1's in sched_vllm.c, SGLang's radix cache
 * in sched_radix.c) decide who runs; the step-time model (steptime.c) says
 * how long it takes; neither knows the other, they meet in serve_batch.
 * Rules: ../shared/reference/serving-sim-rules.md. */
#ifndef KVP_SERVE_H
#define KVP_SERVE_H

#include "../kvp_int.h"

/* One request's share of a step: q new tokens on top of p already computed
 * (its KV is read; c = p + q after the step), and whether the step samples
 * a token for it (a decode, or the chunk that completes its prompt). */
typedef struct serve_slot {
    uint64_t p, q;
    int samples;
} serve_slot;

/* One forward pass: the scheduled requests in the scheduler's order. */
typedef struct serve_batch {
    const serve_slot *slot;
    size_t n;
    uint64_t tokens;       /* sum of q */
    uint32_t sampled;      /* requests that sample */
} serve_batch;

/* The price of a step, in seconds (a model, never a measurement).  NULL
 * cost: every step takes 0 s, and a replay reports tokens only. */
typedef double (*serve_cost_fn)(void *arg, const serve_batch *b);

/* Percentiles of a per-request time, seconds. */
typedef struct serve_dist {
    double mean, p50, p90, p99;
} serve_dist;

/* Summarises n values (sorted in place); all 0 when n is 0.  Percentiles
 * are nearest-rank: the smallest value with at least that share at or
 * below it. */
void serve_dist_of(double *v, size_t n, serve_dist *out);

#endif
