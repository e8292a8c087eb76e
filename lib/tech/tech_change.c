/* tech_change.c - a technique as a change to the per-layer model and the
 * runtime settings.  Each step rewrites layers the way a model built with
 * the technique would have them (fewer KV heads, a latent instead of K/V,
 * windows, a recurrent state, shared caches) or changes a cache type, and
 * records, per runtime, whether that runtime can price the result at all.
 * The runtimes then do all of the arithmetic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tech.h"

static int is_per_head(kvp_layer_kind k)
{
    return k == KVP_LAYER_FULL || k == KVP_LAYER_SLIDING || k == KVP_LAYER_CHUNKED;
}

static int is_state_kind(kvp_layer_kind k)
{
    return k == KVP_LAYER_LINEAR || k == KVP_LAYER_MAMBA;
}

void tech_census_of(const kvp_model *m, tech_census *c)
{
    memset(c, 0, sizeof *c);
    for (uint32_t i = 0; i < m->n_layers; i++) {
        const kvp_layer *L = &m->layers[i];
        c->per_head += is_per_head(L->kind);
        c->full += L->kind == KVP_LAYER_FULL;
        c->windowed += (L->kind == KVP_LAYER_SLIDING || L->kind == KVP_LAYER_CHUNKED) &&
                       L->window;
        c->mla += L->kind == KVP_LAYER_MLA;
        c->shared += L->kind == KVP_LAYER_SHARED;
        c->state += L->d_inner != 0;
        c->gqa += is_per_head(L->kind) && L->n_kv_heads && L->n_head > L->n_kv_heads;
        c->mha_heads_known += L->kind == KVP_LAYER_MLA && L->mla_heads;
    }
}

/* ---- model changes ------------------------------------------------------------- */

static void set_kv_heads(kvp_model *m, uint64_t heads)
{
    for (uint32_t i = 0; i < m->n_layers; i++) {
        kvp_layer *L = &m->layers[i];
        if (is_per_head(L->kind))
            L->n_kv_heads = heads ? (uint32_t)heads : L->n_head ? L->n_head : m->n_heads;
    }
}

static void unshare(kvp_model *m)
{
    for (uint32_t i = 0; i < m->n_layers; i++) {
        kvp_layer *L = &m->layers[i];
        if (L->kind != KVP_LAYER_SHARED)
            continue;
        int32_t src = L->shared_from;
        if (src >= 0 && (uint32_t)src < m->n_layers &&
            m->layers[src].kind != KVP_LAYER_SHARED) {
            uint32_t heads = L->n_head;
            *L = m->layers[src];
            L->n_head = heads;
        } else {
            L->kind = L->window ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
        }
        L->shared_from = -1;
    }
}

/* Cross-layer sharing (CLA): within each kind and shape of attention layer,
 * the first of every run of f keeps its cache and the others read it. */
static int same_cache_shape(const kvp_layer *a, const kvp_layer *b)
{
    return a->kind == b->kind && a->window == b->window && a->n_kv_heads == b->n_kv_heads &&
           a->head_dim_k == b->head_dim_k && a->head_dim_v == b->head_dim_v;
}

static int share(kvp_model *m, uint64_t f, kvp_error *err)
{
    unsigned char *placed = calloc(m->n_layers ? m->n_layers : 1, 1);
    if (!placed)
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", m->name);
    for (uint32_t i = 0; i < m->n_layers; i++) {
        const kvp_layer *L = &m->layers[i];
        if (placed[i] || (!is_per_head(L->kind) && L->kind != KVP_LAYER_MLA))
            continue;
        uint32_t owner = i;
        uint64_t in_run = 1;
        placed[i] = 1;
        for (uint32_t j = i + 1; j < m->n_layers; j++) {
            kvp_layer *M = &m->layers[j];
            if (placed[j] || !same_cache_shape(M, L))
                continue;
            placed[j] = 1;
            if (in_run == f) {
                owner = j, in_run = 1;
                continue;
            }
            M->kind = KVP_LAYER_SHARED; /* the window stays: it says which cache it reads */
            M->shared_from = (int32_t)owner;
            in_run++;
        }
    }
    free(placed);
    return 0;
}

static int expand_mla(kvp_model *m, kvp_error *err)
{
    for (uint32_t i = 0; i < m->n_layers; i++) {
        kvp_layer *L = &m->layers[i];
        if (L->kind != KVP_LAYER_MLA)
            continue;
        if (!L->mla_heads)
            return kvp_fail(err, KVP_EINPUT, "%s: layer %u's latent has no per-head shape to "
                            "expand to", m->name, i);
        L->kind = KVP_LAYER_FULL;
        L->n_kv_heads = L->mla_heads;
        L->head_dim_k = L->mla_k_head_dim;
        L->head_dim_v = L->mla_v_head_dim;
    }
    return 0;
}

/* A latent of r + rope values replaces every per-head layer's K and V; the
 * per-head shape stays as what an expanding converter would store. */
static void to_mla(kvp_model *m, uint64_t r, uint64_t rope)
{
    for (uint32_t i = 0; i < m->n_layers; i++) {
        kvp_layer *L = &m->layers[i];
        if (!is_per_head(L->kind))
            continue;
        L->mla_heads = L->n_kv_heads;
        L->mla_k_head_dim = L->head_dim_k;
        L->mla_v_head_dim = L->head_dim_v;
        L->mla_rope_dim = (uint32_t)rope;
        if (L->kind == KVP_LAYER_FULL)
            L->kind = KVP_LAYER_MLA;
        L->n_kv_heads = 1;
        L->head_dim_k = (uint32_t)(r + rope);
        L->head_dim_v = 0;
    }
}

static void unwindow(kvp_model *m)
{
    for (uint32_t i = 0; i < m->n_layers; i++) {
        kvp_layer *L = &m->layers[i];
        if (L->kind == KVP_LAYER_SLIDING || L->kind == KVP_LAYER_CHUNKED)
            L->kind = KVP_LAYER_FULL;
        if (L->kind == KVP_LAYER_FULL || L->kind == KVP_LAYER_SHARED)
            L->window = 0;
    }
}

static void window(kvp_model *m, uint64_t w, uint64_t every)
{
    uint32_t j = 0;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        kvp_layer *L = &m->layers[i];
        if (L->kind != KVP_LAYER_FULL)
            continue;
        if (!every || (j + 1) % every) {
            L->kind = KVP_LAYER_SLIDING;
            L->window = (uint32_t)w;
        }
        j++;
    }
}

static void clear_state(kvp_layer *L)
{
    L->d_conv = L->d_state = L->n_group = L->n_ssm_heads = 0;
    L->d_inner = 0;
}

/* The attention layer a state layer would become: the model's first full
 * (or MLA) layer, else its first attention layer without the window. */
static const kvp_layer *attention_template(const kvp_model *m)
{
    const kvp_layer *t = NULL;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        const kvp_layer *L = &m->layers[i];
        if ((L->kind == KVP_LAYER_FULL || L->kind == KVP_LAYER_MLA) && !L->d_inner)
            return L;
        if (!t && is_per_head(L->kind))
            t = L;
    }
    return t;
}

static int unhybrid(kvp_model *m, kvp_error *err)
{
    const kvp_layer *t = attention_template(m);
    kvp_layer tmpl;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        kvp_layer *L = &m->layers[i];
        if (!is_state_kind(L->kind)) {
            clear_state(L); /* a parallel mixer (Falcon-H1) drops its state */
            continue;
        }
        if (!t)
            return kvp_fail(err, KVP_EINPUT, "%s: no attention layer to take a shape from (every "
                            "layer holds a state)", m->name);
        tmpl = *t;
        if (tmpl.kind != KVP_LAYER_MLA)
            tmpl.kind = KVP_LAYER_FULL, tmpl.window = 0;
        clear_state(&tmpl);
        *L = tmpl;
    }
    return 0;
}

/* Qwen3.5's Gated DeltaNet state (16 key heads, 32 value heads, head dims
 * 128, conv kernel 4, recurrent state in float32) in place of every
 * attention layer but each `every`-th. */
static void hybrid(kvp_model *m, uint64_t every)
{
    uint32_t j = 0;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        kvp_layer *L = &m->layers[i];
        if (!is_per_head(L->kind) && L->kind != KVP_LAYER_MLA)
            continue;
        if (every && (j++ + 1) % every == 0)
            continue;
        kvp_layer g;
        memset(&g, 0, sizeof g);
        g.kind = KVP_LAYER_LINEAR;
        g.shared_from = -1;
        g.d_conv = 4;
        g.n_group = 16;
        g.d_state = 128;
        g.d_inner = 32 * 128;
        g.n_ssm_heads = 32;
        g.conv_dtype = m->dtype == KVP_F32 ? KVP_BF16 : m->dtype;
        g.ssm_dtype = KVP_F32;
        *L = g;
    }
}

static int change_model(kvp_model *m, const tech_step *s, kvp_error *err)
{
    switch (s->op) {
    case OP_KV_HEADS: set_kv_heads(m, s->a); return 0;
    case OP_UNSHARE: unshare(m); return 0;
    case OP_SHARE: return share(m, s->a < 2 ? 2 : s->a, err);
    case OP_MLA_EXPAND: return expand_mla(m, err);
    case OP_MLA: to_mla(m, s->a, s->b); return 0;
    case OP_UNWINDOW: unwindow(m); return 0;
    case OP_WINDOW: window(m, s->a, s->b); return 0;
    case OP_UNHYBRID: return unhybrid(m, err);
    case OP_HYBRID: hybrid(m, s->b); return 0;
    default: return 0;
    }
}

/* ---- settings changes ------------------------------------------------------------ */

static void no_runtime(int *ok, char *why, size_t n, const char *fmt, const char *arg)
{
    *ok = 0;
    snprintf(why, n, fmt, arg);
}

static int quant(tech_applied *a, const char *s, kvp_error *err)
{
    kvp_theory_params base = a->theory;
    kvp_dtype t;
    if (!strncmp(s, "turboquant_", 11)) {
        if (kvp_vllm_turboquant(a->model, s, &a->theory_model, err))
            return -1;
        a->vllm.kv_cache_dtype = s;
        a->vllm.kv_fp8 = 0;
        no_runtime(&a->llama_ok, a->llama_why, sizeof a->llama_why, "%s",
                   "not a llama.cpp cache type");
        return 0;
    }
    if (kvp_dtype_parse(s, &t))
        return kvp_fail(err, KVP_EUSAGE, "kv-quant=%s: unknown scheme (fp8, q8_0, q4_0, nvfp4, "
                        "kivi2, turboquant_k8v4, turboquant_4bit_nc, turboquant_k3v4_nc, "
                        "turboquant_3bit_nc)", s);
    a->theory.type_k = a->theory.type_v = t;
    a->llama.type_k = a->llama.type_v = t;
    if (t == KVP_FP8 || t == KVP_NVFP4) {
        a->vllm.kv_cache_dtype = kvp_dtype_name(t);
        a->vllm.kv_fp8 = 0;
    } else {
        no_runtime(&a->vllm_ok, a->vllm_why, sizeof a->vllm_why, "%s",
                   "llama.cpp's ggml cache types are not vLLM KV cache dtypes");
    }
    if (t == KVP_FP8 || t == KVP_NVFP4 || t == KVP_KIVI2)
        no_runtime(&a->llama_ok, a->llama_why, sizeof a->llama_why, "%s",
                   "not a llama.cpp cache type");
    if (t == KVP_KIVI2) {
        a->residual = 128; /* the paper's setting: R = 128 recent tokens in full precision */
        a->residual_types = base;
        snprintf(a->vllm_why, sizeof a->vllm_why, "KIVI runs in research code (jy-yuan/KIVI); "
                 "neither vLLM nor llama.cpp has its kernels");
    }
    return 0;
}

int tech_apply(const tech_ctx *c, const tech_step *steps, int n_steps, tech_applied *a,
               kvp_error *err)
{
    memset(a, 0, sizeof *a);
    a->theory = c->theory;
    a->llama = c->llama;
    a->vllm = c->vllm;
    a->llama_ok = a->vllm_ok = 1;
    if (kvp_model_clone(c->m, &a->model, err))
        return -1;
    a->theory_model = a->model;
    /* model changes first: a cache layout (TurboQuant) is laid over the final model */
    for (int i = 0; i < n_steps; i++) {
        if (change_model(a->model, &steps[i], err))
            goto fail;
        if (steps[i].op == OP_WINDOW)
            a->llama.swa_any_arch = 1; /* a model trained with the window honours it */
    }
    for (int i = 0; i < n_steps; i++) {
        const tech_step *s = &steps[i];
        if (s->op == OP_QUANT) {
            if (a->theory_model != a->model) {
                kvp_fail(err, KVP_EUSAGE, "kv-quant: one scheme at a time");
                goto fail;
            }
            if (quant(a, s->s, err))
                goto fail;
        } else if (s->op == OP_EVICT) {
            a->evict_budget = s->a + s->b;
            a->evict_fraction = s->f;
            no_runtime(&a->llama_ok, a->llama_why, sizeof a->llama_why, "%s",
                       "llama.cpp keeps every token of a sequence (no eviction policy)");
            a->vllm_model = 1;
        } else if (s->op == OP_COMPRESS) {
            a->comp_ratio = (uint32_t)s->a;
            a->comp_window = (uint32_t)s->b;
            a->comp_nsa = s->s && !strcmp(s->s, "nsa");
            no_runtime(&a->llama_ok, a->llama_why, sizeof a->llama_why, "%s",
                       "llama.cpp has no compressed-attention cache in kvplan's rules");
            no_runtime(&a->vllm_ok, a->vllm_why, sizeof a->vllm_why, "%s",
                       "compressed attention (DeepSeek-V4, NSA) is not in kvplan's vLLM rules");
        }
    }
    return 0;
fail:
    tech_applied_free(a);
    return -1;
}

void tech_applied_free(tech_applied *a)
{
    if (a->theory_model != a->model)
        kvp_model_free(a->theory_model);
    kvp_model_free(a->model);
    a->model = a->theory_model = NULL;
}

uint64_t tech_held(const tech_applied *a, uint64_t n)
{
    uint64_t h = n;
    if (a->comp_nsa)
        h = n + (n >= 32 ? (n - 32) / 16 + 1 : 0); /* raw tokens and compressed blocks */
    else if (a->comp_ratio)
        h = n / a->comp_ratio + (n < a->comp_window ? n : a->comp_window);
    if (a->evict_budget && h > a->evict_budget)
        h = a->evict_budget;
    if (a->evict_fraction > 0) {
        uint64_t f = (uint64_t)(a->evict_fraction * (double)n);
        if (h > f)
            h = f ? f : 1;
    }
    return h;
}
