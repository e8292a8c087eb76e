/* tech_read.c - read less: the KV bytes one decode step reads for one
 * sequence, dense against query-aware sparse reads.  Quest (Tang et al.
 * 2024) keeps per page of P tokens the min and max of its keys, scores the
 * pages against the query and reads the top max(3, B/P) in full, leaving
 * the first layers dense; NSA (DeepSeek, 2025) reads compressed blocks,
 * 16 selected blocks of 64 and a 512-token window.  Each layer's bytes per
 * token and held tokens come from the theory runtime on that layer alone. */
#include <stdio.h>
#include <string.h>

#include "tech.h"

typedef struct layer_read {
    int attention;
    uint64_t per_token, held, state, key_row;
} layer_read;

/* What layer il holds for one sequence of n tokens.  A shared-KV layer
 * stores nothing but reads its owner's cache, so it reads like the owner. */
static int layer_of(const kvp_model *m, const kvp_theory_params *tp, uint32_t il, uint64_t n,
                    layer_read *out, kvp_error *err)
{
    const kvp_layer *L = &m->layers[il];
    if (L->kind == KVP_LAYER_SHARED && L->shared_from >= 0 &&
        (uint32_t)L->shared_from < m->n_layers)
        L = &m->layers[L->shared_from];
    kvp_model one = *m;
    kvp_theory_params t = *tp;
    kvp_theory_result r;
    one.layers = (kvp_layer *)L;
    one.n_layers = 1;
    t.n_ctx = n;
    t.n_seq = 1;
    memset(out, 0, sizeof *out);
    if (kvp_theory(&one, &t, &r, err))
        return -1;
    out->per_token = r.per_token_bytes;
    out->held = r.n_groups ? r.groups[0].cells : 0;
    out->state = r.fixed_bytes_per_seq;
    out->attention = out->per_token != 0;
    if (out->attention &&
        kvp_dtype_row_bytes(tp->type_k, (uint64_t)L->n_kv_heads * L->head_dim_k, &out->key_row))
        return kvp_fail(err, KVP_EINPUT, "%s: layer %u's key row", m->name, il);
    return 0;
}

static uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

enum { QUEST, NSA };

/* Bytes one decode step reads in one layer, and the metadata it stores. */
static void layer_step(const layer_read *l, int scheme, int dense, uint32_t page,
                       uint32_t budget, uint64_t *read, uint64_t *stored)
{
    uint64_t h = l->held;
    *read = l->state + l->per_token * h;
    *stored = 0;
    if (!l->attention || dense)
        return;
    if (scheme == QUEST) {
        uint64_t pages = budget / page > 3 ? budget / page : 3, sel = pages * page;
        *stored = 2 * l->key_row * cdiv(h, page); /* min and max key per page */
        if (h > sel)
            *read = l->state + *stored + l->per_token * sel;
    } else {
        uint64_t tokens = (h >= 32 ? (h - 32) / 16 + 1 : 0) + 16 * 64 + 512;
        *stored = l->per_token * (h >= 32 ? (h - 32) / 16 + 1 : 0);
        if (tokens < h)
            *read = l->state + l->per_token * tokens;
    }
}

static int add_row(tech_ctx *c, int scheme, kvp_error *err)
{
    const uint32_t page = 16, budget = 2048, dense_layers = 2;
    kvp_tech_row *row = tech_row_new(c, "sparse-read", KVP_TECH_READ);
    if (!row)
        return kvp_fail(err, KVP_EINPUT, "too many technique rows");
    kvp_tech_read *rd = &row->u.read;
    row->unit = "bytes read per decode step";
    row->label = KVP_LABEL_THEORY;
    snprintf(row->changes, sizeof row->changes, "KV bytes read per step");
    uint32_t attn = 0;
    for (uint32_t il = 0; il < c->m->n_layers; il++) {
        layer_read l;
        uint64_t read, stored;
        if (layer_of(c->m, &c->theory, il, c->n, &l, err))
            return -1;
        int dense = scheme == QUEST && l.attention && attn < dense_layers;
        attn += l.attention;
        layer_step(&l, scheme, dense, page, budget, &read, &stored);
        if (kvp_add(rd->dense_bytes, l.state + l.per_token * l.held, &rd->dense_bytes) ||
            kvp_add(rd->sparse_bytes, read, &rd->sparse_bytes) ||
            kvp_add(rd->storage_added_bytes, stored, &rd->storage_added_bytes))
            return kvp_fail(err, KVP_EINPUT, "%s: bytes read overflow", c->m->name);
    }
    rd->context = c->n;
    row->computed = attn > 0;
    if (!attn)
        snprintf(row->reason, sizeof row->reason, "the model has no attention layer: a step "
                 "reads the whole state");
    row->value = rd->sparse_bytes;
    row->baseline = rd->dense_bytes;
    row->multiplier = rd->sparse_bytes ? (double)rd->dense_bytes / rd->sparse_bytes : 0;
    if (scheme == QUEST) {
        rd->page = page, rd->budget = budget, rd->dense_layers = dense_layers;
        snprintf(row->variant, sizeof row->variant, "Quest: pages of %u, budget %u tokens, "
                 "first %u layers dense", page, budget, dense_layers);
        snprintf(row->assumptions, sizeof row->assumptions, "approximate attention (small "
                 "accuracy loss at moderate budgets); kernels in research code "
                 "(mit-han-lab/Quest), not in vLLM or llama.cpp; a layer holding no more than "
                 "the budget is read whole; one selection per KV head (a GQA group may read "
                 "the union of its heads' pages); page metadata is stored beside the cache");
    } else {
        snprintf(row->variant, sizeof row->variant, "NSA: compressed blocks + 16 x 64 "
                 "selected + 512 window");
        snprintf(row->assumptions, sizeof row->assumptions, "trained in (DeepSeek's NSA): "
                 "floor((N - 32) / 16) + 1 compressed entries, 16 selected blocks of 64 raw "
                 "tokens and a 512-token window per step; it stores the compressed entries on "
                 "top of the raw cache");
    }
    return 0;
}

int tech_read_rows(tech_ctx *c, kvp_error *err)
{
    return add_row(c, QUEST, err) || add_row(c, NSA, err) ? -1 : 0;
}
