/* rt_theory.c - the "theory" runtime: the config arithmetic of a KV cache
 * with no runtime's padding, slack or block rounding.
 *
 *   attention layer:  K row + V row bytes per cell (kv_heads x head_dim each)
 *   sliding window W: a sequence of n tokens holds min(n, W) cells
 *   chunked (C):      a sequence holds at most min(n, C) cells
 *   MLA:              one latent row (kv_lora_rank + rope dim), no V
 *   linear / Mamba:   no cells; conv + SSM state per sequence
 *   cross-attention:  K and V of the encoder's `window` tokens: fixed per sequence
 *   packed slot:      a layer whose kv_slot_bytes is set (vLLM's TurboQuant)
 *                     costs kv_heads x slot per cell, whatever the cache types
 *   DSA indexer:      a layer with an indexer adds one indexer_head_dim-wide
 *                     key per cell in the K cache type (DeepSeek-V3.2, GLM-5)
 *   PLE history:      Qwen4-Exp's PLE layer adds ple_conv_state values of
 *                     conv state per sequence, in the conv dtype
 *
 * n_ctx tokens are shared by n_seq sequences as evenly as possible, which is
 * what llama.cpp's -c and -np mean, so the two runtimes line up side by side.
 * Every product is overflow-checked. */
#include <string.h>

#include "kvp_int.h"

void kvp_theory_defaults(kvp_theory_params *p)
{
    memset(p, 0, sizeof *p);
    p->n_ctx = 4096;
    p->n_seq = 1;
    p->type_k = p->type_v = KVP_F16;
}

static int row(const kvp_model *m, kvp_dtype t, uint64_t n, uint32_t il, const char *what,
               uint64_t *out, kvp_error *err)
{
    if (kvp_dtype_row_bytes(t, n, out) == 0)
        return 0;
    return kvp_fail(err, KVP_EINPUT,
                    "%s: cache type %s stores blocks of %u values, but layer %u's %s row has "
                    "%llu values", m->name, kvp_dtype_name(t), kvp_dtype_block(t), il, what,
                    (unsigned long long)n);
}

/* Bytes one DSA indexer key costs in layer il: one head of
 * indexer_head_dim values in the K cache type; 0 without an indexer. */
static int indexer_bytes(const kvp_model *m, uint32_t il, const kvp_theory_params *p,
                         uint64_t *out, kvp_error *err)
{
    const kvp_layer *L = &m->layers[il];
    *out = 0;
    return L->indexer_head_dim ? row(m, p->type_k, L->indexer_head_dim, il, "indexer key", out, err)
                               : 0;
}

/* Bytes one cell (token) costs in layer il, its indexer key included. */
static int cell_bytes(const kvp_model *m, uint32_t il, const kvp_theory_params *p, uint64_t *out,
                      kvp_error *err)
{
    const kvp_layer *L = &m->layers[il];
    uint64_t k = 0, v = 0, idx;
    *out = 0;
    if (indexer_bytes(m, il, p, &idx, err))
        return -1;
    if (L->kind == KVP_LAYER_FULL || L->kind == KVP_LAYER_SLIDING ||
        L->kind == KVP_LAYER_CHUNKED || L->kind == KVP_LAYER_MLA || L->kind == KVP_LAYER_CROSS) {
        if (L->kv_slot_bytes) /* a packed layout (TurboQuant) fixes K + V per head */
            return kvp_mul(L->n_kv_heads, L->kv_slot_bytes, out) || kvp_add(*out, idx, out)
                       ? kvp_fail(err, KVP_EINPUT, "%s: layer %u's slot overflows", m->name, il)
                       : 0;
        if (row(m, p->type_k, (uint64_t)L->n_kv_heads * L->head_dim_k, il, "K", &k, err))
            return -1;
        if (L->head_dim_v &&
            row(m, p->type_v, (uint64_t)L->n_kv_heads * L->head_dim_v, il, "V", &v, err))
            return -1;
        *out = k + v + idx;
    }
    return 0;
}

/* Conv and SSM state of one sequence in layer il. */
static int state_bytes(const kvp_model *m, uint32_t il, uint64_t *out, kvp_error *err)
{
    const kvp_layer *L = &m->layers[il];
    uint64_t conv_dim, conv, ssm, t, ple;
    *out = 0;
    /* Qwen4-Exp's PLE convolution history, beside the layer's own state */
    if (kvp_mul(L->ple_conv_state, kvp_dtype_block_bytes(L->conv_dtype), &ple))
        return kvp_fail(err, KVP_EINPUT, "%s: layer %u's state size overflows 64 bits", m->name,
                        il);
    *out = ple;
    if (L->d_inner == 0)
        return 0;
    if (kvp_mul(2ull * L->n_group, L->d_state, &t) || kvp_add(L->d_inner, t, &conv_dim) ||
        kvp_mul(L->d_conv ? L->d_conv - 1 : 0, conv_dim, &conv) ||
        kvp_mul(conv, kvp_dtype_block_bytes(L->conv_dtype), &conv) ||
        kvp_mul(L->d_inner, L->d_state, &ssm) ||
        kvp_mul(ssm, kvp_dtype_block_bytes(L->ssm_dtype), &ssm) || kvp_add(conv, ssm, &t) ||
        kvp_add(t, ple, out))
        return kvp_fail(err, KVP_EINPUT, "%s: layer %u's state size overflows 64 bits", m->name,
                        il);
    return 0;
}

/* Cells a layer of this kind holds for n_ctx tokens over n_seq sequences. */
static uint64_t cells_held(const kvp_layer *L, const kvp_theory_params *p)
{
    if (L->kind == KVP_LAYER_FULL || L->kind == KVP_LAYER_MLA)
        return p->n_ctx;
    if (L->kind != KVP_LAYER_SLIDING && L->kind != KVP_LAYER_CHUNKED)
        return 0;
    uint64_t q = p->n_ctx / p->n_seq, r = p->n_ctx % p->n_seq, w = L->window;
    /* r sequences hold q+1 tokens, the rest q */
    return r * (q + 1 < w ? q + 1 : w) + (p->n_seq - r) * (q < w ? q : w);
}

static kvp_theory_group *group_for(kvp_theory_result *r, const kvp_layer *L, uint64_t per_cell,
                                   uint64_t state, uint32_t il)
{
    for (size_t g = 0; g < r->n_groups; g++) {
        kvp_theory_group *G = &r->groups[g];
        if (G->kind == L->kind && G->window == L->window &&
            G->per_token_bytes / G->n_layers == per_cell &&
            G->fixed_bytes_per_seq / G->n_layers == state)
            return G;
    }
    if (r->n_groups == sizeof r->groups / sizeof r->groups[0])
        return NULL;
    kvp_theory_group *G = &r->groups[r->n_groups++];
    G->kind = L->kind;
    G->window = L->window;
    G->first = il;
    return G;
}

static int mla_expanded(const kvp_model *m, const kvp_theory_params *p, kvp_theory_result *r,
                        kvp_error *err)
{
    for (uint32_t il = 0; il < m->n_layers; il++) {
        const kvp_layer *L = &m->layers[il];
        uint64_t k, v;
        if (L->kind != KVP_LAYER_MLA)
            continue;
        r->has_mla = 1;
        if (row(m, p->type_k, (uint64_t)L->mla_heads * L->mla_k_head_dim, il, "expanded K", &k,
                err) ||
            row(m, p->type_v, (uint64_t)L->mla_heads * L->mla_v_head_dim, il, "expanded V", &v,
                err))
            return -1;
        if (kvp_add(r->mla_expanded_per_token_bytes, k + v, &r->mla_expanded_per_token_bytes))
            return kvp_fail(err, KVP_EINPUT, "%s: expanded MLA size overflows", m->name);
    }
    return 0;
}

int kvp_theory(const kvp_model *m, const kvp_theory_params *p, kvp_theory_result *r,
               kvp_error *err)
{
    memset(r, 0, sizeof *r);
    r->params = *p;
    if (p->n_ctx == 0 || p->n_ctx > KVP_MAX_TOKENS)
        return kvp_fail(err, KVP_EUSAGE, "context length must be in [1, 2^40]");
    if (p->n_seq == 0 || p->n_seq > 1u << 20)
        return kvp_fail(err, KVP_EUSAGE, "sequence count must be in [1, 2^20]");
    for (uint32_t il = 0; il < m->n_layers; il++) {
        const kvp_layer *L = &m->layers[il];
        uint64_t per_cell, state, cells = cells_held(L, p), bytes, fixed, full, idx;
        if (cell_bytes(m, il, p, &per_cell, err) || state_bytes(m, il, &state, err) ||
            indexer_bytes(m, il, p, &idx, err))
            return -1;
        if (per_cell && kvp_add(r->indexer_per_token_bytes, idx, &r->indexer_per_token_bytes))
            return kvp_fail(err, KVP_EINPUT, "%s: indexer size overflows", m->name);
        if (L->kind == KVP_LAYER_CROSS) { /* the encoder's tokens: fixed per sequence */
            if (kvp_mul(per_cell, L->window, &state))
                return kvp_fail(err, KVP_EINPUT, "%s: layer %u's size overflows", m->name, il);
            per_cell = 0;
        }
        kvp_theory_group *G = group_for(r, L, per_cell, state, il);
        if (!G)
            return kvp_fail(err, KVP_EINPUT, "%s: more than %zu distinct layer shapes", m->name,
                            sizeof r->groups / sizeof r->groups[0]);
        if (kvp_mul(per_cell, cells, &bytes) || kvp_mul(state, p->n_seq, &fixed) ||
            kvp_add(bytes, fixed, &bytes) || kvp_mul(per_cell, p->n_ctx, &full) ||
            kvp_add(full, fixed, &full) || kvp_add(G->bytes, bytes, &G->bytes) ||
            kvp_add(r->total_bytes, bytes, &r->total_bytes) ||
            kvp_add(r->full_equiv_bytes, full, &r->full_equiv_bytes) ||
            kvp_add(G->per_token_bytes, per_cell, &G->per_token_bytes) ||
            kvp_add(G->fixed_bytes_per_seq, state, &G->fixed_bytes_per_seq) ||
            kvp_add(r->per_token_bytes, per_cell, &r->per_token_bytes) ||
            kvp_add(r->fixed_bytes_per_seq, state, &r->fixed_bytes_per_seq))
            return kvp_fail(err, KVP_EINPUT, "%s: size overflows 64 bits at %llu tokens",
                            m->name, (unsigned long long)p->n_ctx);
        G->n_layers++;
        G->cells = cells;
    }
    if (r->full_equiv_bytes > INT64_MAX) /* JSON integers are signed 64-bit */
        return kvp_fail(err, KVP_EINPUT, "%s: %llu tokens need more than 2^63 bytes", m->name,
                        (unsigned long long)p->n_ctx);
    return mla_expanded(m, p, r, err);
}
