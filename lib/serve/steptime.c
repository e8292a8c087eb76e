/* steptime.c - the step-time model (issue 11; serving-sim-rules.md 4):
 *
 *   t = max(F / (P x MFU), B / (BW x MBU)) + step_s + req_s x requests
 *
 * F: linear layers 2 x active params x T (MoE: top-k routed experts, the
 *    router and shared experts are in the dense count), the LM head
 *    2 x d x vocab for sampled rows only, attention 2 x heads x (dk + dv)
 *    per query token per visible context token, recurrent layers a fixed
 *    state update per token.  A prompt chunk's tokens see the causal mean
 *    context p + (q+1)/2 (we sum it exactly, capped at a sliding window);
 *    vLLM's perf.py counts c for every token, an upper bound.
 * B: the weights once per step (MoE: the experts some token picked, expected
 *    E (1 - (1 - k/E)^T) per layer under uniform routing), the KV of the
 *    context already computed (p for prompt chunks under flash attention,
 *    c for decodes, at most the window), the new tokens' KV, and read + write
 *    of each request's recurrent state.  fp8 KV halves the KV bytes only.
 * P: the dense BF16 rate, FP8 only for w8a8 on a GPU with FP8 tensor cores.
 *
 * The efficiency factors and overhead terms are per engine (versioned: the
 * framework, not the GPU, decides much of a small step) and calibrated on the
 * published points of serving-sim-rules.md 5; bench/steptime_points.c prints
 * the error per point.  Every time here is a model.
 *
 * Left out, on purpose or for now: activation traffic (small against the
 * weights until T is very large), tensor parallelism and its all-reduces
 * (one GPU), MoE routing imbalance (uniform routing), Llama 4's chunked local
 * attention (priced as a window of the chunk size), MLA's absorbed decode
 * (priced in its expanded form), and weights in F32 (served as BF16). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "steptime.h"

/* ---- engines: efficiency and overhead, with their calibration ------------ */

/* Why each figure (serving-sim-rules.md 5; bench/steptime_points.c prints
 * the error they leave per point):
 *  - mbu 0.75: FasterTransformer's 13B decode on an A100 40GB (row 13) reads
 *    25.7 GB per token in 22.0 ms, 0.75 of 1,555 GB/s with no framework
 *    around it; vLLM's kernels are taken to stream weights as well.
 *  - mfu_prefill 0.65 without a framework: the same run's 512-token prefill,
 *    12.9 TFLOP in 63.2 ms (llm-analysis suggests 0.7 for inference); 0.55
 *    in vLLM, whose prompts of a few hundred tokens batch into ~2K-token
 *    steps (rows 1-2's TTFT, row 3's mean TTFT).
 *  - mfu_decode 0.40 on Hopper (0.24 before it, SERVE_PRE_HOPPER_DECODE):
 *    decode tokens batch as skinny matmuls; it only matters past the ridge
 *    point, with hundreds of sequences (rows 3-5 and 7).
 *  - vLLM 0.5.x: 2 ms per step and 100 us per scheduled request per step,
 *    serialised with the GPU (input preparation, sampling, detokenising 256
 *    sequences in Python: the v0.6.0 post's 62 % of time outside the GPU),
 *    and 20 ms per request before its first token (API server, tokenising):
 *    fitted on rows 1-5 together, median |error| 9 %.
 *  - vLLM 0.6.0 multi-step: 0.5 ms and 10 us, the CPU work amortised over
 *    ten steps (row 7).
 *  - vLLM v1: no trusted point measures it; it overlaps the CPU work with
 *    the GPU (async scheduling, a separate API process), so it takes
 *    multi-step's small terms.  An extrapolation, and labelled so. */
static const serve_eff engine_eff[SERVE_ENGINE_COUNT] = {
    [SERVE_ENGINE_VLLM_V1] = {0.55, 0.40, 0.75, 0.5e-3, 10e-6, 0},
    [SERVE_ENGINE_VLLM_V05] = {0.55, 0.40, 0.75, 2e-3, 100e-6, 20e-3},
    [SERVE_ENGINE_VLLM_V06_MULTI] = {0.55, 0.40, 0.75, 0.5e-3, 10e-6, 0},
    [SERVE_ENGINE_GPU_ONLY] = {0.65, 0.40, 0.75, 0, 0, 0},
};

static const char *const engine_names[SERVE_ENGINE_COUNT] = {"vllm-v1", "vllm-0.5",
                                                              "vllm-0.6-multistep", "gpu-only"};

const char *serve_engine_name(serve_engine e)
{
    return (unsigned)e < SERVE_ENGINE_COUNT ? engine_names[e] : "?";
}

int serve_engine_parse(const char *name)
{
    for (int i = 0; name && i < SERVE_ENGINE_COUNT; i++)
        if (!strcmp(name, engine_names[i]))
            return i;
    return -1;
}

/* ---- shapes ---------------------------------------------------------------- */

static double dtype_bytes(kvp_dtype d)
{
    return (double)kvp_dtype_block_bytes(d) / (double)kvp_dtype_block(d);
}

/* The FLOPs of one query token against one context token in layer L:
 * QK^T and AV, 2 x heads x (dk + dv).  MLA counts its expanded heads (the
 * prefill form; absorbed decode is of the same order). */
static double attn_flops(const kvp_layer *L)
{
    if (L->kind == KVP_LAYER_MLA)
        return 2.0 * L->mla_heads * (double)(L->mla_k_head_dim + L->mla_v_head_dim);
    if (L->kind == KVP_LAYER_CROSS || L->kind == KVP_LAYER_NONE)
        return 0; /* cross-attention reads a fixed encoder state: in its bytes */
    uint32_t dv = L->head_dim_v ? L->head_dim_v : L->head_dim_k;
    return 2.0 * L->n_head * (double)(L->head_dim_k + dv);
}

/* A recurrent layer's state update and read per token: the state is
 * d_inner x d_state, touched twice (k v^T in, q h out), 2 FLOPs each. */
static double state_flops(const kvp_layer *L)
{
    return 4.0 * (double)L->d_inner * (double)L->d_state;
}

/* The KV and state groups, from kvp_theory's per-token and per-sequence
 * bytes in the cache dtype (it already sums each group's layers). */
static int kv_groups(serve_time *t, const kvp_model *m, kvp_dtype kv, kvp_error *err)
{
    kvp_theory_params tp;
    kvp_theory_result *r = malloc(sizeof *r);
    if (!r)
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    kvp_theory_defaults(&tp);
    tp.n_ctx = 1;
    tp.type_k = tp.type_v = kv;
    if (kvp_theory(m, &tp, r, err)) {
        free(r);
        return -1;
    }
    t->n_groups = r->n_groups;
    for (size_t i = 0; i < r->n_groups; i++) {
        const kvp_theory_group *G = &r->groups[i];
        const kvp_layer *L = &m->layers[G->first];
        serve_time_group *S = &t->groups[i];
        S->n_layers = G->n_layers;
        S->window = (L->kind == KVP_LAYER_SLIDING || L->kind == KVP_LAYER_CHUNKED) ? G->window : 0;
        S->attn_flops = attn_flops(L);
        S->recurrent = G->fixed_bytes_per_seq > 0;
        S->cross = L->kind == KVP_LAYER_CROSS;
        S->state_flops = L->d_inner ? state_flops(L) : 0;
        S->kv_bytes = (double)G->per_token_bytes;
        S->state_bytes = (double)G->fixed_bytes_per_seq;
    }
    free(r);
    return 0;
}

/* A layer whose count holds all E experts is an MoE layer (Jamba's even
 * layers and DeepSeek's leading dense layers are far smaller). */
static int weights(serve_time *t, const kvp_model *m, kvp_error *err)
{
    uint64_t input, output, *layers = calloc(m->n_layers ? m->n_layers : 1, sizeof *layers);
    if (!layers)
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    if (kvp_model_param_layers(m, &input, layers, &output)) {
        free(layers);
        return kvp_fail(err, KVP_EINPUT,
                        "%s: its parameter count is unknown, so no step time can be modelled",
                        m->name);
    }
    uint64_t ff = m->n_ff_exp ? m->n_ff_exp : m->n_ff;
    double one = 3.0 * (double)m->hidden_size * (double)ff, all = one * m->n_expert;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        int moe = m->n_expert > 1 && i >= m->n_layer_dense_lead && (double)layers[i] >= all;
        t->dense_params += (double)layers[i] - (moe ? all : 0);
        t->expert_params += moe ? one : 0;
    }
    free(layers);
    t->n_expert = t->expert_params > 0 ? m->n_expert : 0;
    t->n_expert_used = m->n_expert_used ? m->n_expert_used : 1;
    t->active_params = t->dense_params + t->expert_params * (t->n_expert ? t->n_expert_used : 0);
    /* the head: vocab x d, the embedding itself when tied (input is exactly that) */
    t->head_params = (double)input;
    return 0;
}

int serve_time_init(serve_time *t, const kvp_model *m, const kvp_gpu *g,
                    const serve_time_opts *o, kvp_error *err)
{
    serve_time_opts none = {0, 0, 0, SERVE_ENGINE_VLLM_V1};
    memset(t, 0, sizeof *t);
    o = o ? o : &none;
    if (!g || g->mem_bw_gbs <= 0 || g->bf16_tflops <= 0)
        return kvp_fail(err, KVP_EINPUT, "%s: no bandwidth or tensor rate in the GPU table",
                        g ? g->name : "(no GPU)");
    if ((unsigned)o->engine >= SERVE_ENGINE_COUNT)
        return kvp_fail(err, KVP_EUSAGE, "unknown serving engine %d", (int)o->engine);
    t->gpu = g;
    t->engine = o->engine;
    t->eff = engine_eff[o->engine];
    if (g->sm < 90)
        t->eff.mfu_decode *= SERVE_PRE_HOPPER_DECODE;
    kvp_dtype md = (m->dtype == KVP_F16 || m->dtype == KVP_BF16) ? m->dtype : KVP_BF16;
    t->weight_bytes = o->weight_bytes > 0 ? o->weight_bytes : dtype_bytes(md);
    t->peak_flops = (o->fp8_compute && g->fp8_tflops > 0 ? g->fp8_tflops : g->bf16_tflops) * 1e12;
    t->peak_bw = g->mem_bw_gbs * 1e9;
    if (weights(t, m, err))
        return -1;
    return kv_groups(t, m, o->kv_fp8 ? KVP_FP8 : md, err);
}

void serve_time_peak(serve_time *t)
{
    t->eff = (serve_eff){1, 1, 1, 0, 0, 0};
}

double serve_time_request_s(const serve_time *t) { return t->eff.api_s; }

double serve_time_distinct_experts(uint32_t E, uint32_t k, uint64_t T)
{
    if (!E || !T)
        return 0;
    if (k >= E)
        return E;
    return E * (1.0 - pow(1.0 - (double)k / E, (double)T));
}

/* ---- one step -------------------------------------------------------------- */

/* Sum over the q new tokens (positions p+1 .. p+q, each seeing itself and
 * all before it) of the visible context, capped at w when w > 0. */
static double ctx_sum(uint64_t p, uint64_t q, uint32_t w)
{
    double a = (double)p + 1, b = (double)p + (double)q, W = w;
    if (!w || b <= W)
        return (double)q * (double)p + (double)q * ((double)q + 1) / 2;
    if (a > W)
        return (double)q * W;
    return (W - a + 1) * (a + W) / 2 + (b - W) * W;
}

/* A request's attention FLOPs and KV / state bytes in every group. */
static void slot_cost(const serve_time *t, const serve_slot *s, int decode, serve_step_cost *c,
                      double *flops)
{
    for (size_t i = 0; i < t->n_groups; i++) {
        const serve_time_group *G = &t->groups[i];
        double read = decode ? (double)s->p + 1 : (double)s->p;
        if (G->window && read > G->window)
            read = G->window;
        *flops += G->attn_flops * G->n_layers * ctx_sum(s->p, s->q, G->window);
        *flops += G->state_flops * G->n_layers * (double)s->q;
        c->bytes_kv_read += G->kv_bytes * read;
        c->bytes_kv_write += G->kv_bytes * (double)s->q;
        c->bytes_state += G->recurrent ? (G->cross ? 1 : 2) * G->state_bytes : 0;
    }
}

void serve_time_cost(const serve_time *t, const serve_batch *b, serve_step_cost *c)
{
    memset(c, 0, sizeof *c);
    uint64_t T = 0;
    for (size_t r = 0; r < b->n; r++) {
        const serve_slot *s = &b->slot[r];
        int decode = s->q == 1 && s->p > 0; /* one new token on a context */
        double attn = 0, lin = 2 * t->active_params * (double)s->q;
        double head = s->samples ? 2 * t->head_params : 0;
        slot_cost(t, s, decode, c, &attn);
        c->flops_linear += lin;
        c->flops_head += head;
        c->flops_attn += attn;
        *(decode ? &c->flops_decode : &c->flops_prefill) += lin + head + attn;
        T += s->q;
    }
    c->experts_read = serve_time_distinct_experts(t->n_expert, t->n_expert_used, T);
    c->bytes_weights = b->n ? (t->dense_params + t->head_params +
                               c->experts_read * t->expert_params) * t->weight_bytes
                            : 0;
    const serve_eff *e = &t->eff;
    c->t_compute = c->flops_prefill / (t->peak_flops * e->mfu_prefill) +
                   c->flops_decode / (t->peak_flops * e->mfu_decode);
    c->t_memory = (c->bytes_weights + c->bytes_kv_read + c->bytes_kv_write + c->bytes_state) /
                  (t->peak_bw * e->mbu);
    c->t_overhead = b->n ? e->step_s + e->req_s * (double)b->n : 0;
    c->seconds = (c->t_compute > c->t_memory ? c->t_compute : c->t_memory) + c->t_overhead;
}

double serve_time_step(void *t, const serve_batch *b)
{
    serve_step_cost c;
    serve_time_cost(t, b, &c);
    return c.seconds;
}
