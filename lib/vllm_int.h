/* vllm_int.h - what vLLM's two rule files share inside the library: the
 * release a run is for (rt_vllm.c resolves it) and the memory estimate
 * (vllm_memory.c), which rt_vllm.c calls when no --kv-cache-memory is
 * given. */
#ifndef KVP_VLLM_INT_H
#define KVP_VLLM_INT_H

#include "kvp_int.h"

/* "0.N" or "0.N.M" (any further parts ignored) -> N; -1 when s is not one. */
int vllm_minor_of(const char *s);

/* Fills r's estimate (weights, transient peak, non-torch, CUDA graphs,
 * requested, available) for the GPU g at release 0.minor, and appends its
 * notes and the "Model loading took" log line; r->tp, r->pp,
 * r->max_num_batched_tokens and r->max_num_seqs are set before.  -1 when the
 * model's weights cannot be counted. */
int vllm_memory_estimate(const kvp_model *m, const kvp_vllm_params *p, const kvp_gpu *g,
                         int minor, kvp_vllm_result *r, kvp_error *err);

/* Pipeline stage s of pp as vLLM's get_pp_indices cuts n layers: n // pp
 * each, the remainder one each to the stages before the last (rt_vllm.c;
 * the KV pools and the weights per stage both follow it). */
void vllm_stage_range(uint32_t n, uint32_t pp, uint32_t s, uint32_t *first, uint32_t *count);

/* How the release prints "Available KV cache memory: X GiB": "%.2f" before
 * 0.15, Python's round(x, 2) in shortest repr ("21.5") after. */
void vllm_format_gib(int minor, double gib, char *buf, size_t n);

#endif
