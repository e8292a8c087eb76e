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

/* How requests arrive. */
enum { SERVE_ARRIVE_ALL, SERVE_ARRIVE_TRACE, SERVE_ARRIVE_POISSON };

/* One request's outcome, for figures by pass (serve_api.c). */
typedef struct serve_done {
    double arrival, finish;       /* finish < 0: never finished (rejected) */
    uint64_t hit;                 /* tokens hit at its first admission, both tiers */
} serve_done;

/* What one replay is asked to do.  Zero fields take the runtime's default
 * where one exists (the caller fills them from kvp_vllm_params and --gpu). */
typedef struct serve_config {
    uint64_t num_blocks;          /* vLLM: num_gpu_blocks, the null block included */
    uint32_t block_size;          /* must equal the workload's */
    uint64_t pool_tokens;         /* SGLang: the token pool (max_total_num_tokens) */
    uint32_t max_num_batched_tokens, max_num_seqs;
    uint64_t max_model_len;
    int prefix_caching;           /* 0: --no-enable-prefix-caching */
    int async_scheduling;         /* vLLM's default 1: frees and arrivals a step late */
    int radix_lpm;                /* SGLang: 1 longest-prefix-match, 0 FCFS */
    /* The host tier (§3.5): an LRU of whole prompt blocks, stored as they
     * are computed and loaded back at admission.  Transfers take time only
     * in a timed replay (a cost function): latency plus bytes over the
     * link's sustained rate, one transfer at a time per direction. */
    uint64_t cpu_tier_bytes;      /* 0: no host tier */
    double h2d_bytes_per_s, d2h_bytes_per_s, transfer_latency_s;
    uint64_t kv_block_bytes;      /* one block's KV over all layers */
    serve_done *per_request;      /* out: NULL, or room for each request's outcome */
} serve_config;

/* What a replay reports (schema 1 of `kvplan sim --concurrent --json`). */
typedef struct serve_result {
    double wall_seconds;
    serve_dist ttft, tpot;        /* seconds; tpot over requests with 2+ outputs */
    double prompt_tps, output_tps;
    uint64_t requests, prompt_tokens, output_tokens;
    uint64_t prefill_tokens_computed; /* recomputation after preemption included */
    uint64_t hit_tokens, cpu_hit_tokens, bytes_to_cpu, bytes_from_cpu;
    double hit_rate;              /* vLLM's metric: first admissions only */
    double cpu_hit_rate;          /* host-tier hits / prompt tokens, first admissions */
    uint64_t cpu_blocks;          /* the host tier's capacity, blocks (0: none) */
    uint64_t cpu_stores, cpu_evictions, cpu_skipped_stores, cpu_loads;
    double load_wait_seconds;     /* summed over loads: admission to KV arrived */
    double h2d_busy_seconds, d2h_busy_seconds; /* each link's transfer time */
    uint64_t preemptions, peak_blocks, steps;
} serve_result;

/* Arrival times in seconds, one per request of w: all 0; the trace's
 * timestamps (ms) from its first; or a Poisson process of `rate` requests
 * per second from `seed` (the same seed, the same times). */
int serve_arrivals(const kvp_workload *w, int how, double rate, uint64_t seed, double *out,
                   kvp_error *err);
/* First come, first served: request ids[0..n) sorted by arrival_s[id], ties
 * in workload order.  -1 when out of memory. */
int serve_sort_by_arrival(const double *arrival_s, uint32_t *ids, size_t n);

#endif
