/* sched_vllm.h - vLLM v1's scheduler replayed step by step over the block
 * pool of lib/sim.c (serving-sim-rules.md §1): running requests first,
 * admissions under the token budget and max_num_seqs, chunked prefill,
 * prefix hits at admission, the whole-prompt admission gate, recompute
 * preemption of the last admitted, and async scheduling's one-step lag. */
#ifndef KVP_SCHED_VLLM_H
#define KVP_SCHED_VLLM_H

#include "serve.h"

/* What serve_result has no field for. */
typedef struct serve_vllm_extra {
    /* requests never scheduled: a prompt + output longer than max_model_len
     * (vLLM refuses them), or a sequence larger than the whole pool (it
     * could never finish); excluded from every other count */
    uint64_t rejected;
    uint64_t max_running;      /* most requests running in one step */
    uint64_t lookup_tokens;    /* vLLM's prefix_cache_queries (first admissions) */
} serve_vllm_extra;

/* Replays w with request i arriving at arrival_s[i] (serve_arrivals).  Zero
 * config fields: max_num_batched_tokens 8,192 and max_num_seqs 256 (vLLM's
 * LLM class on an A100), max_model_len unlimited, block_size the
 * workload's; num_blocks (the null block included) is required.  cost
 * prices each step in seconds (NULL: 0 s).  out gets the report; extra may
 * be NULL. */
int serve_vllm_run_x(const kvp_workload *w, const double *arrival_s, const serve_config *c,
                     serve_cost_fn cost, void *cost_arg, serve_result *out,
                     serve_vllm_extra *extra, kvp_error *err);
int serve_vllm_run(const kvp_workload *w, const double *arrival_s, const serve_config *c,
                   serve_cost_fn cost, void *cost_arg, serve_result *out, kvp_error *err);

#endif
