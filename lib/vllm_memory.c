/* vllm_memory.c - vLLM's memory profile: what "Available KV cache memory"
 * will be, before the first launch (shared/reference/vllm-memory-profile.md;
 * section numbers below refer to it).  vLLM measures it; kvplan predicts
 * each term from the model, the GPU and the release, and says so:
 *
 *   requested   ceil(total x util); total as torch sees it, not nvidia-smi's
 *               (lib/gpus.c); util 0.9 before 0.21, 0.92 from 0.21       (3, 4)
 *   weights     what the checkpoint loads on one rank                    (7)
 *   transient   the profiling run's peak: the larger of the forward pass
 *               over max_num_batched_tokens and the dummy sampler over
 *               min(max_num_seqs, max_num_batched_tokens) rows of logits  (1, 8)
 *   non-torch   cuBLAS, allocator and NCCL growth inside the window       (2)
 *   graphs      the CUDA-graph estimate, subtracted from 0.21 unless
 *               --enforce-eager                                          (4, 5)
 *   available   requested - weights - transient - non-torch - graphs
 *
 * The constants below are fitted to the public startup logs in
 * shared/reference/vllm-memory-logs.jsonl (tests/vllm-logs replays them)
 * and are labelled as estimates wherever they are printed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vllm_int.h"
#include "vllm_weights.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MIB (1024ull * 1024ull)

/* What the profile does in each era of releases (section 4).  A release
 * takes the last row whose first minor it has reached. */
static const struct era {
    int from_minor;
    double default_util;
    int graphs_subtracted;     /* #30515's estimate applied by default (0.21) */
    double sampler_bytes;      /* per logit element of the dummy sampler's peak */
} eras[] = {
    /* 0.9.1: memory_profiling and the init snapshot (#19312); the dummy
     * sampler's top-k/top-p sort over float32 logits: 38 B a logit on
     * the gpt-oss-120b (0.10.1, 0.11) and gemma-3-4b (0.10.0) records */
    {9, 0.90, 0, 38.0},
    /* by 0.19 the same dummy run costs 16-22 B a logit (gpt-oss-20b on
     * 0.19.0, Qwen3-8B and Qwen2.5-0.5B on 2026 releases); the release
     * between 0.11 and 0.19 that changed it is not pinned by a log */
    {12, 0.90, 0, 18.0},
    {21, 0.92, 1, 18.0},
};

static const struct era *era_of(int minor)
{
    const struct era *e = &eras[0];
    for (size_t i = 0; i < sizeof eras / sizeof eras[0]; i++)
        if (minor >= eras[i].from_minor)
            e = &eras[i];
    return e;
}

/* Non-torch growth inside the profiling window on one GPU: 0.07-0.16 GiB in
 * the records (section 2); NCCL sits before the snapshot from 0.11-0.13. */
#define NON_TORCH_BYTES (100 * MIB)
/* The CUDA-graph estimate per decoder layer on this rank with the default
 * capture sizes (51 piecewise + 35 full graphs up to 512 tokens): 0.52 GiB
 * for Qwen3-8B's 36 layers (LMCache#3430); fewer capture sizes (a smaller
 * max_num_seqs) shrink it, to an eighth at most. */
#define GRAPH_BYTES_PER_LAYER (15 * MIB)

/* The largest error of each term on the public logs, as tests/vllm-logs
 * measures it (the runner fails when a term's error outgrows its band):
 * weights 0.09 GiB (gpt-oss-120b, Marlin, 0.10.1), the profiling peak 0.46
 * (gemma-3-4b-it on a B200, whose SigLIP dummy batch kvplan does not
 * price), the graph estimate 0.01 (the one record printing it), available
 * 0.42 (the same gemma record). */
#define BAND_WEIGHTS 0.1
#define BAND_PEAK 0.5
#define BAND_GRAPH 0.05
#define BAND_AVAILABLE 0.45

int vllm_minor_of(const char *s)
{
    char *end;
    if (!s || strncmp(s, "0.", 2))
        return -1;
    long n = strtol(s + 2, &end, 10);
    if (end == s + 2 || n < 0 || n > 999 || (*end && *end != '.'))
        return -1;
    return (int)n;
}

void vllm_format_gib(int minor, double gib, char *buf, size_t n)
{
    snprintf(buf, n, "%.2f", gib);
    if (minor < 15)
        return;
    size_t len = strlen(buf); /* repr(round(x, 2)): no trailing zero past one decimal */
    if (len > 3 && buf[len - 1] == '0')
        buf[len - 1] = 0;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* The widest live set of one layer's forward pass over T tokens (section 8):
 * a dense MLP's gate_up, activation and down outputs beside the residual
 * stream; a MoE block's the same per routed expert slot, plus the router's
 * float32 logits. */
static uint64_t forward_bytes(const kvp_model *m, uint64_t T, uint32_t tp)
{
    uint64_t H = m->hidden_size, dense = 0, moe = 0;
    if (m->n_ff)
        dense = mul_sat(T, 3 * m->n_ff / tp + 3 * H) * 2;
    if (m->n_expert && m->n_ff_exp) {
        uint64_t k = m->n_expert_used ? m->n_expert_used : 1;
        moe = mul_sat(mul_sat(T, k), 3 * m->n_ff_exp / tp + H) * 2 + mul_sat(T, m->n_expert) * 4;
    }
    return dense > moe ? dense : moe;
}

/* Weights on the largest rank, as loaded (lib/vllm_weights.c: the
 * checkpoint's quantization, TP/PP sharding, re-layouts), plus the vision or
 * audio tower a multimodal checkpoint loads. */
/* A GGUF (vLLM's --quantization gguf): the ggml blocks are kept as they
 * are (vllm-memory-profile.md 7.2), so the weights are the header's tensor
 * bytes, split evenly over the ranks; no log checks it, so an estimate. */
static int gguf_weights(const kvp_model *m, kvp_vllm_result *r, kvp_error *err)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        if (sum > UINT64_MAX - m->tensors[i].nbytes)
            return kvp_fail(err, KVP_EINPUT, "%s: tensor sizes overflow", m->name);
        sum += m->tensors[i].nbytes;
    }
    r->weights_bytes = sum / ((uint64_t)r->tp * r->pp);
    r->weights_exact = 0;
    KVP_NOTE(r, "weights: the GGUF's %.2f GiB of ggml blocks, as vLLM keeps them%s", sum / GIB,
             r->tp * r->pp > 1 ? ", split evenly over the ranks" : "");
    return 0;
}

static int weights_bytes(const kvp_model *m, const kvp_gpu *g, int minor, kvp_vllm_result *r,
                         kvp_error *err)
{
    kvp_vllm_weights_t w;
    kvp_error e;
    if (m->n_tensors)
        return gguf_weights(m, r, err);
    if (kvp_vllm_weights_at(m, r->tp, r->pp, g->sm, minor, &w, &e))
        return kvp_fail(err, e.code, "%s; give --kv-cache-memory (vLLM's \"Available KV cache "
                        "memory\")", e.msg);
    r->weights_bytes = w.bytes + w.encoder_bytes;
    r->weights_exact = w.exact != KVP_WX_ESTIMATE && (!w.encoder_bytes || w.encoder_exact !=
                       KVP_WX_ESTIMATE) && !w.encoder_uncounted;
    if (w.note[0])
        KVP_NOTE(r, "weights: %s", w.note);
    if (w.encoder_bytes)
        KVP_NOTE(r, "weights include the vision tower vLLM loads (%.2f GiB); text-only mode "
                 "(--limit-mm-per-prompt all 0, --language-model-only) skips it",
                 w.encoder_bytes / GIB);
    else if (w.encoder_uncounted)
        KVP_NOTE(r, "weights leave out the model's vision/audio tower, which kvplan cannot "
                 "count and vLLM loads unless in text-only mode");
    return 0;
}

/* The graph estimate on this rank: per layer, scaled by how many capture
 * sizes max_num_seqs leaves (vLLM captures up to min(2 x max_num_seqs, 512)). */
static uint64_t graph_bytes(const kvp_model *m, const kvp_vllm_result *r)
{
    double cap = 2.0 * r->max_num_seqs;
    double scale = cap >= 512 ? 1.0 : cap / 512 < 0.125 ? 0.125 : cap / 512;
    return (uint64_t)(m->n_layers * (double)GRAPH_BYTES_PER_LAYER * scale);
}

/* "Model loading took X GiB memory and N seconds" as the release prints it
 * (section 6); the seconds are not predicted. */
static void loading_line(int minor, kvp_vllm_result *r)
{
    char gib[32];
    double w = r->weights_bytes / GIB;
    if (minor < 12)
        snprintf(gib, sizeof gib, "%.4f", w);
    else
        vllm_format_gib(minor, w, gib, sizeof gib);
    snprintf(r->log[r->n_log++], sizeof r->log[0], "Model loading took %s GiB%s and ... seconds",
             gib, minor < 11 ? "" : " memory");
}

int vllm_memory_estimate(const kvp_model *m, const kvp_vllm_params *p, const kvp_gpu *g,
                         int minor, kvp_vllm_result *r, kvp_error *err)
{
    const struct era *e = era_of(minor);
    double util = p->gpu_memory_utilization > 0 ? p->gpu_memory_utilization : e->default_util;
    uint64_t total = (uint64_t)llround(g->torch_total_gib * GIB);
    if (weights_bytes(m, g, minor, r, err))
        return -1;
    r->gpu_memory_utilization = util;
    r->gpu_total_bytes = total;
    r->requested_bytes = (uint64_t)ceil((double)total * util);
    uint64_t rows = r->max_num_seqs < r->max_num_batched_tokens ? r->max_num_seqs
                                                                : r->max_num_batched_tokens;
    r->forward_bytes = forward_bytes(m, r->max_num_batched_tokens, r->tp);
    r->sampler_bytes = (uint64_t)((double)rows * (double)m->n_vocab * e->sampler_bytes);
    r->activation_bytes = r->forward_bytes > r->sampler_bytes ? r->forward_bytes
                                                              : r->sampler_bytes;
    r->non_torch_bytes = NON_TORCH_BYTES;
    r->cudagraph_bytes = p->enforce_eager ? 0 : graph_bytes(m, r);
    r->cudagraph_applied = e->graphs_subtracted && !p->enforce_eager;
    double avail = (double)r->requested_bytes - (double)r->weights_bytes -
                   (double)r->activation_bytes - (double)r->non_torch_bytes -
                   (r->cudagraph_applied ? (double)r->cudagraph_bytes : 0.0);
    r->available_signed_bytes = (int64_t)avail;
    r->kv_cache_memory_bytes = avail > 0 ? (uint64_t)avail : 0;
    r->available_is_estimate = 1;
    r->band_weights_gib = BAND_WEIGHTS;
    r->band_peak_gib = BAND_PEAK;
    r->band_graph_gib = BAND_GRAPH;
    r->band_available_gib = BAND_AVAILABLE;
    loading_line(minor, r);
    KVP_NOTE(r, "available memory is an estimate: %s's %.2f GiB (as torch sees it%s) x %g = "
             "%.2f GiB, minus weights %.2f GiB%s, the profiling peak %.2f GiB (%s), non-torch "
             "%.2f GiB%s", g->name, total / GIB, g->torch_total_seen ? "" : "; not in a public log",
             util, r->requested_bytes / GIB, r->weights_bytes / GIB,
             r->weights_exact ? "" : " (estimated)", r->activation_bytes / GIB,
             r->sampler_bytes >= r->forward_bytes ? "the sampler's logits" : "the forward pass",
             r->non_torch_bytes / GIB,
             r->cudagraph_applied ? " and CUDA graphs" : "");
    if (r->cudagraph_applied)
        KVP_NOTE(r, "CUDA graphs: an estimated %.2f GiB, subtracted as vLLM does since 0.21 "
                 "(--enforce-eager: none); give --kv-cache-memory from vLLM's log line to be "
                 "exact", r->cudagraph_bytes / GIB);
    else
        KVP_NOTE(r, "CUDA graphs: %s; give --kv-cache-memory from vLLM's log line to be exact",
                 p->enforce_eager ? "none (--enforce-eager)"
                                  : "captured after the cache is sized (before 0.21), outside "
                                    "this budget");
    return 0;
}
