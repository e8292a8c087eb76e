/* sched_radix.h - SGLang's scheduler over its radix cache (--policy radix):
 * prefill batches chosen by LPM or FCFS under the PrefillAdder budgets,
 * decode steps for the running batch, retraction when decode runs out of
 * tokens.  Rules: ../shared/reference/serving-sim-rules.md section 2. */
#ifndef KVP_SERVE_SCHED_RADIX_H
#define KVP_SERVE_SCHED_RADIX_H

#include "serve.h"

/* SGLang defaults the replay uses where the config leaves a field 0 */
#define RADIX_MAX_PREFILL_TOKENS 16384u   /* --max-prefill-tokens */
#define RADIX_CHUNKED_PREFILL 8192u       /* --chunked-prefill-size, 35-160 GB GPUs */
#define RADIX_CLIP_MAX_NEW 4096u          /* SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION */
#define RADIX_RETRACT_DECODE_STEPS 20u
#define RADIX_LPM_FALLBACK 128u           /* more waiting than this: lpm runs as fcfs */
#define RADIX_IN_BATCH_THRESHOLD 32u      /* in-batch prefix check / deprioritise */

/* Replays w through c->pool_tokens tokens (block_size must equal w's),
 * arrival_s[i] the arrival of request i in seconds.  Uses pool_tokens,
 * max_num_batched_tokens (SGLang's chunked_prefill_size; 0: 8,192),
 * max_num_seqs (max_running_requests; 0: SGLang's req-pool size),
 * max_model_len (0: no limit), prefix_caching (0: SGLang's ChunkCache,
 * no tree) and radix_lpm (1: lpm, 0: fcfs).  A request with
 * prompt + output >= pool_tokens (or > max_model_len) is skipped: it is not
 * in out->requests or any other figure, and w->n_req - out->requests says
 * how many were.  peak_blocks is the peak of tokens in use (tree + running
 * requests' own) over block_size, rounded up. */
/* SGLang's token pool (ModelRunner.profile_max_num_token, section 2.8):
 * rest = available - gpu x (1 - mem_fraction_static), in bytes (SGLang
 * works in GB, the same up to float rounding), then rest / cell_bytes
 * tokens, cell_bytes the KV of one token over all layers.  available is
 * the free memory after the weights are loaded.  Refuses a fraction
 * outside (0, 1] or a rest of 0 tokens or less. */
int serve_radix_pool_tokens(uint64_t gpu_bytes, uint64_t available_bytes,
                            double mem_fraction_static, uint64_t cell_bytes, uint64_t *tokens,
                            kvp_error *err);

int serve_radix_run(const kvp_workload *w, const double *arrival_s, const serve_config *c,
                    serve_cost_fn cost, void *cost_arg, serve_result *out, kvp_error *err);

#endif
