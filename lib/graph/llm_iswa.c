/* llm_iswa.c - the iSWA attention input and build_attn, build_qkv,
 * build_norm, build_ffn (llm_iswa.h). */
#include <stdio.h>
#include <string.h>

#include "llm_iswa.h"

void llm_iswa_inp(llm *c, int64_t head_dim_k, int64_t head_dim_v)
{
    /* inputs are leafs: the graph orders them as it reaches them, so the
     * order they are created in (base, SWA, then the rotations) is moot */
    llm_attn_inp(c, &c->kv, head_dim_k, head_dim_v);
    llm_attn_inp(c, &c->swa, head_dim_k, head_dim_v);
}

int llm_layer_swa(const llm *c, int il)
{
    return c->m->layers[il].kind == KVP_LAYER_SLIDING;
}

/* llama_mul_mat_hadamard */
static gg_tensor *hadamard(llm *c, gg_tensor *cur, gg_tensor *rot)
{
    int64_t n = rot->ne[0];
    gg_tensor *res = gg_is_contiguous(cur)
        ? gg_reshape_2d(c->g, cur, n, (int64_t)(gg_nelements(cur) / (uint64_t)n))
        : gg_cont_4d(c->g, cur, n, (int64_t)(gg_nelements(cur) / (uint64_t)n), 1, 1);
    res = gg_mul_mat(c->g, rot, res);
    return gg_reshape_4d(c->g, res, cur->ne[0], cur->ne[1], cur->ne[2], cur->ne[3]);
}

gg_tensor *llm_attn_il(llm *c, int il, gg_tensor *wo, gg_tensor *q, gg_tensor *k, gg_tensor *v,
                       gg_tensor *kq_b, gg_tensor *sinks, int soft_cap)
{
    if (!c->swa.mask)
        return llm_attn(c, &c->kv, wo, q, k, v, kq_b, sinks, soft_cap);
    /* the iSWA build_attn rotates, then expands Q, K, V (the plain one: Q,
     * V, K); the rest is llm_attn's, on the layer's cache with the
     * rotations already done */
    llm_cache *kv = llm_layer_swa(c, il) ? &c->swa : &c->kv;
    if (kv->k_rot) {
        q = hadamard(c, q, kv->k_rot);
        k = hadamard(c, k, kv->k_rot);
    }
    if (kv->v_rot)
        v = hadamard(c, v, kv->v_rot);
    gg_expand(c->g, q);
    gg_expand(c->g, k);
    gg_expand(c->g, v);
    llm_cache plain = *kv;
    plain.k_rot = plain.v_rot = NULL;
    gg_tensor *cur = llm_attn(c, &plain, NULL, q, k, v, kq_b, sinks, soft_cap);
    if (kv->v_rot)
        cur = hadamard(c, cur, kv->v_rot);
    if (wo)
        cur = gg_mul_mat(c->g, wo, cur);
    return cur;
}

/* llama_kv_cache::get_k and get_v of a cache that is never written here:
 * views of a tensor outside the compute buffer, every cell of every
 * stream */
gg_tensor *llm_attn_read(llm *c, int swa, gg_tensor *wo, gg_tensor *q, int64_t head_k,
                         int64_t head_v, int64_t n_head_kv, gg_tensor *sinks, int soft_cap)
{
    gg_ctx *g = c->g;
    llm_cache *kv = swa ? &c->swa : &c->kv;
    if (kv->k_rot)
        q = hadamard(c, q, kv->k_rot);
    gg_expand(g, q);
    int64_t v_width = head_v * n_head_kv;
    if (c->v_trans && kv->n_embd_v_gqa_max > v_width)
        v_width = kv->n_embd_v_gqa_max;
    int64_t ne_k[3] = {head_k * n_head_kv, kv->kv_size, kv->n_stream};
    int64_t ne_v[3] = {v_width, kv->kv_size, kv->n_stream};
    gg_tensor *kc = gg_external(g, kv->type_k, 3, ne_k);
    gg_tensor *vc = gg_external(g, kv->type_v, 3, ne_v);
    uint64_t row_k = gg_row_size(kc->type, kc->ne[0]);
    gg_tensor *k = gg_view_4d(g, kc, head_k, n_head_kv, kv->n_kv, kv->n_stream,
                              gg_row_size(kc->type, head_k), row_k,
                              row_k * (uint64_t)kv->kv_size, 0);
    gg_tensor *v;
    if (!c->v_trans) {
        uint64_t row_v = gg_row_size(vc->type, vc->ne[0]);
        v = gg_view_4d(g, vc, head_v, n_head_kv, kv->n_kv, kv->n_stream,
                       gg_row_size(vc->type, head_v), row_v, row_v * (uint64_t)kv->kv_size, 0);
    } else {
        v = gg_view_4d(g, vc, kv->n_kv, n_head_kv, head_v, kv->n_stream,
                       gg_row_size(vc->type, kv->kv_size * head_v),
                       gg_row_size(vc->type, kv->kv_size),
                       gg_row_size(vc->type, kv->kv_size * vc->ne[0]), 0);
    }
    gg_tensor *cur = llm_attn_mha(c, q, k, v, NULL, kv->mask, sinks, soft_cap);
    if (kv->v_rot)
        cur = hadamard(c, cur, kv->v_rot);
    if (wo)
        cur = gg_mul_mat(g, wo, cur);
    return cur;
}

void llm_qkv(llm *c, gg_tensor *cur, int il, int fused, int bias, gg_tensor **q,
             gg_tensor **k, gg_tensor **v)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t hd_q = L->head_dim_k, n_q = L->n_head;
    int64_t hd_k = L->head_dim_k, n_k = L->n_kv_heads;
    int64_t hd_v = L->head_dim_v, n_v = L->n_kv_heads;
    int64_t e_q = hd_q * n_q, e_k = hd_k * n_k, e_v = hd_v * n_v;
    if (llm_has_tensor(c, "blk.%d.attn_qkv.weight", il, fused)) {
        gg_tensor *qkv = gg_mul_mat(g, llm_weight(c, c->n_embd, e_q + e_k + e_v), cur);
        if (llm_has_tensor(c, "blk.%d.attn_qkv.bias", il, bias)) {
            qkv = gg_binary(g, GG_ADD, qkv, llm_weight(c, e_q + e_k + e_v, 1));
        } else if (llm_has_tensor(c, "blk.%d.attn_q.bias", il, 0) &&
                   llm_has_tensor(c, "blk.%d.attn_k.bias", il, 0) &&
                   llm_has_tensor(c, "blk.%d.attn_v.bias", il, 0)) {
            gg_tensor *b = gg_concat(g, llm_weight(c, e_q, 1), llm_weight(c, e_k, 1), 0);
            b = gg_concat(g, b, llm_weight(c, e_v, 1), 0);
            qkv = gg_binary(g, GG_ADD, qkv, b);
        }
        uint64_t es = gg_row_size(qkv->type, 1);
        *q = gg_view_3d(g, qkv, hd_q, n_q, c->n_tokens, es * (uint64_t)hd_q, qkv->nb[1], 0);
        *k = gg_view_3d(g, qkv, hd_k, n_k, c->n_tokens, es * (uint64_t)hd_k, qkv->nb[1],
                        es * (uint64_t)e_q);
        *v = gg_view_3d(g, qkv, hd_v, n_v, c->n_tokens, es * (uint64_t)hd_v, qkv->nb[1],
                        es * (uint64_t)(e_q + e_k));
        return;
    }
    gg_tensor *Q = gg_mul_mat(g, llm_weight(c, c->n_embd, e_q), cur);
    if (llm_has_tensor(c, "blk.%d.attn_q.bias", il, bias))
        Q = gg_binary(g, GG_ADD, Q, llm_weight(c, e_q, 1));
    gg_tensor *K = gg_mul_mat(g, llm_weight(c, c->n_embd, e_k), cur);
    if (llm_has_tensor(c, "blk.%d.attn_k.bias", il, bias))
        K = gg_binary(g, GG_ADD, K, llm_weight(c, e_k, 1));
    gg_tensor *V = gg_mul_mat(g, llm_weight(c, c->n_embd, e_v), cur);
    if (llm_has_tensor(c, "blk.%d.attn_v.bias", il, bias))
        V = gg_binary(g, GG_ADD, V, llm_weight(c, e_v, 1));
    *q = gg_reshape_3d(g, Q, hd_q, n_q, c->n_tokens);
    *k = gg_reshape_3d(g, K, hd_k, n_k, c->n_tokens);
    *v = gg_reshape_3d(g, V, hd_v, n_v, c->n_tokens);
}

void llm_qkv_flat(llm *c, gg_tensor *cur, int il, int fused, int bias, gg_tensor **q,
                  gg_tensor **k, gg_tensor **v)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t e_q = (int64_t)L->head_dim_k * L->n_head;
    int64_t e_k = (int64_t)L->head_dim_k * L->n_kv_heads;
    int64_t e_v = (int64_t)L->head_dim_v * L->n_kv_heads;
    if (llm_has_tensor(c, "blk.%d.attn_qkv.weight", il, fused)) {
        gg_tensor *qkv = gg_mul_mat(g, llm_weight(c, c->n_embd, e_q + e_k + e_v), cur);
        if (llm_has_tensor(c, "blk.%d.attn_qkv.bias", il, bias)) {
            qkv = gg_binary(g, GG_ADD, qkv, llm_weight(c, e_q + e_k + e_v, 1));
        } else if (llm_has_tensor(c, "blk.%d.attn_q.bias", il, 0) &&
                   llm_has_tensor(c, "blk.%d.attn_k.bias", il, 0) &&
                   llm_has_tensor(c, "blk.%d.attn_v.bias", il, 0)) {
            gg_tensor *b = gg_concat(g, llm_weight(c, e_q, 1), llm_weight(c, e_k, 1), 0);
            b = gg_concat(g, b, llm_weight(c, e_v, 1), 0);
            qkv = gg_binary(g, GG_ADD, qkv, b);
        }
        uint64_t es = gg_row_size(qkv->type, 1);
        *q = gg_cont(g, gg_view_2d(g, qkv, e_q, c->n_tokens, qkv->nb[1], 0));
        *k = gg_cont(g, gg_view_2d(g, qkv, e_k, c->n_tokens, qkv->nb[1], es * (uint64_t)e_q));
        *v = gg_cont(g, gg_view_2d(g, qkv, e_v, c->n_tokens, qkv->nb[1],
                                   es * (uint64_t)(e_q + e_k)));
        return;
    }
    gg_tensor *Q = gg_mul_mat(g, llm_weight(c, c->n_embd, e_q), cur);
    if (llm_has_tensor(c, "blk.%d.attn_q.bias", il, bias))
        Q = gg_binary(g, GG_ADD, Q, llm_weight(c, e_q, 1));
    gg_tensor *K = gg_mul_mat(g, llm_weight(c, c->n_embd, e_k), cur);
    if (llm_has_tensor(c, "blk.%d.attn_k.bias", il, bias))
        K = gg_binary(g, GG_ADD, K, llm_weight(c, e_k, 1));
    gg_tensor *V = gg_mul_mat(g, llm_weight(c, c->n_embd, e_v), cur);
    if (llm_has_tensor(c, "blk.%d.attn_v.bias", il, bias))
        V = gg_binary(g, GG_ADD, V, llm_weight(c, e_v, 1));
    *q = Q;
    *k = K;
    *v = V;
}

gg_tensor *llm_norm_named(llm *c, gg_tensor *cur, int kind, const char *base, int il,
                          int w_dflt, int b_dflt)
{
    char w[64], b[64];
    snprintf(w, sizeof w, "%s.weight", base);
    snprintf(b, sizeof b, "%s.bias", base);
    int64_t n = cur->ne[0];
    cur = kind == LLM_RMS ? gg_rms_norm(c->g, cur) : gg_norm(c->g, cur);
    if (llm_has_tensor(c, w, il, w_dflt))
        cur = gg_binary(c->g, GG_MUL, cur, llm_weight(c, n, 1));
    if (llm_has_tensor(c, b, il, b_dflt))
        cur = gg_binary(c->g, GG_ADD, cur, llm_weight(c, n, 1));
    return cur;
}

/* ggml_swiglu (one tensor, gate and up halves): not in place, half as wide */
static gg_tensor *glu_fused(gg_ctx *g, gg_tensor *a)
{
    int64_t ne[4] = {a->ne[0] / 2, a->ne[1], a->ne[2], a->ne[3]};
    return gg_new_op(g, GG_GLU, a->type, 4, ne, a, NULL, NULL);
}

int64_t llm_tensor_rows(const llm *c, const char *fmt, int il)
{
    char name[64];
    snprintf(name, sizeof name, fmt, il);
    for (size_t i = 0; i < c->m->n_tensors; i++) {
        const kvp_tensor *t = &c->m->tensors[i];
        uint64_t row = gg_row_size((int)t->type, (int64_t)t->ne0);
        if (!strcmp(t->name, name))
            return row ? (int64_t)(t->nbytes / row) : 0;
    }
    return 0;
}

int64_t llm_ff_width(const llm *c, int il, int64_t dflt)
{
    return llm_tensor_ne0(c, "blk.%d.ffn_down.weight", il, dflt);
}

gg_tensor *llm_ffn(llm *c, gg_tensor *cur, int il, int64_t n_ff, int act, int gate_dflt,
                   int bias_dflt, int down)
{
    gg_ctx *g = c->g;
    int64_t n_up = act == LLM_SWIGLU ? 2 * n_ff : n_ff;
    gg_tensor *tmp = gg_mul_mat(g, llm_weight(c, c->n_embd, n_up), cur);
    if (llm_has_tensor(c, "blk.%d.ffn_up.bias", il, bias_dflt))
        tmp = gg_binary(g, GG_ADD, tmp, llm_weight(c, n_up, 1));
    int gate = llm_has_tensor(c, "blk.%d.ffn_gate.weight", il, gate_dflt);
    if (gate) {
        cur = gg_mul_mat(g, llm_weight(c, c->n_embd, n_ff), cur);
        if (llm_has_tensor(c, "blk.%d.ffn_gate.bias", il, bias_dflt))
            cur = gg_binary(g, GG_ADD, cur, llm_weight(c, n_ff, 1));
    } else {
        cur = tmp;
    }
    switch (act) {
    case LLM_SILU:
    case LLM_GELU:
    case LLM_RELU:
        cur = gate ? gg_glu_split(g, cur, tmp) : gg_unary(g, cur);
        break;
    case LLM_RELU_SQR:
        cur = gg_dup_op(g, GG_SQR, gg_unary(g, cur));
        if (gate)
            cur = gg_binary(g, GG_MUL, cur, tmp);
        break;
    case LLM_SWIGLU:
        cur = glu_fused(g, cur);
        if (gate)
            cur = gg_binary(g, GG_MUL, cur, tmp);
        break;
    case LLM_XIELU:
        cur = gg_unary(g, cur);
        if (gate)
            cur = gg_binary(g, GG_MUL, cur, tmp);
        break;
    }
    if (!down)
        return cur;
    cur = gg_mul_mat(g, llm_weight(c, n_ff, c->n_embd), cur);
    if (llm_has_tensor(c, "blk.%d.ffn_down.bias", il, bias_dflt))
        cur = gg_binary(g, GG_ADD, cur, llm_weight(c, c->n_embd, 1));
    return cur;
}
