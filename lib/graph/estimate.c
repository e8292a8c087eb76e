/* estimate.c - a sizing allowance for the compute buffer of an
 * architecture whose graph kvplan does not rebuild (llamacpp-memory-rules.md
 * 3.3): the graph's inputs, which live from the start, plus the largest of
 * three stages (the output rows, one layer's FFN or experts, one layer's
 * attention), each a sum of the tensors alive together.  It cannot see the
 * allocator's holes or an architecture's own intermediates (SSM scans,
 * latent projections), so it is labelled an estimate, and the oracle
 * measures its error per architecture (README). */
#include <stdio.h>
#include <string.h>

#include "estimate.h"

static uint64_t pad32(uint64_t v)
{
    return (v + 31) / 32 * 32;
}

static int attends(kvp_layer_kind k)
{
    return k == KVP_LAYER_FULL || k == KVP_LAYER_SLIDING || k == KVP_LAYER_CHUNKED ||
           k == KVP_LAYER_MLA || k == KVP_LAYER_SHARED;
}

/* the masks and scatter indices of one cache, and its widest score matrix */
static void cache_terms(const kvp_model *m, const kvp_llama_cache *c, const est_shape *s,
                        uint64_t *inputs, uint64_t *scores)
{
    uint64_t n_kv = c->cells;
    *inputs += pad32((s->fa ? 2 : 4) * n_kv * s->n_ub);
    *inputs += pad32(8 * s->n_ub);
    uint64_t vmax = 0, heads = 0;
    for (uint32_t il = 0; il < m->n_layers; il++) {
        const kvp_layer *L = &m->layers[il];
        if (!attends(L->kind))
            continue;
        uint64_t v = (uint64_t)L->head_dim_v * L->n_kv_heads;
        if (v > vmax)
            vmax = v;
        if (L->n_head > heads)
            heads = L->n_head;
    }
    *inputs += pad32(8 * s->n_ub * (s->v_trans ? (vmax ? vmax : 1) : 1));
    /* FA off: the f32 scores of a layer, n_kv x tokens x heads */
    uint64_t sc = s->fa ? 0 : 4 * n_kv * s->n_ub * heads;
    if (sc > *scores)
        *scores = sc;
}

uint64_t est_compute(const kvp_model *m, const kvp_llama_result *r, const est_shape *s)
{
    uint64_t e = m->hidden_size, ub = s->n_ub, out = s->n_out;
    /* inputs: tokens, positions, out_ids, the unused embeddings input */
    uint64_t inputs = pad32(4 * ub) * 2 + pad32(4 * out) + pad32(4 * e * ub);
    uint64_t scores = 0;
    for (size_t i = 0; i < r->n_caches; i++)
        cache_terms(m, &r->caches[i], s, &inputs, &scores);
    uint64_t q = 0;
    for (uint32_t il = 0; il < m->n_layers; il++) {
        const kvp_layer *L = &m->layers[il];
        uint64_t w = (uint64_t)L->n_head * (L->head_dim_k > L->head_dim_v ? L->head_dim_k
                                                                          : L->head_dim_v);
        if (w > q)
            q = w;
    }
    uint64_t residual = 2 * 4 * e * ub;
    uint64_t attn = residual + 3 * 4 * q * ub + scores;
    uint64_t ff = m->n_ff;
    uint64_t ffn = residual + 3 * 4 * ff * ub;
    if (m->n_expert && m->n_expert_used) {
        uint64_t fe = m->n_ff_exp ? m->n_ff_exp : ff;
        uint64_t moe = residual + 3 * 4 * fe * m->n_expert_used * ub +
                       4 * e * m->n_expert_used * ub + 2 * 4 * (uint64_t)m->n_expert * ub;
        if (moe > ffn)
            ffn = moe;
    }
    uint64_t output = residual + 4 * m->n_vocab * out + 4 * e * out;
    uint64_t peak = attn;
    if (ffn > peak)
        peak = ffn;
    if (output > peak)
        peak = output;
    return inputs + peak;
}
