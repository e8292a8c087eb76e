/* llm.c - llama.cpp's llm_graph_context building blocks (llm.h). */
#include <stdio.h>
#include <string.h>

#include "llm.h"

int llm_ggml_type(kvp_dtype t)
{
    switch (t) {
    case KVP_F32: return 0;
    case KVP_F16: return 1;
    case KVP_Q4_0: return 2;
    case KVP_Q4_1: return 3;
    case KVP_Q5_0: return 6;
    case KVP_Q5_1: return 7;
    case KVP_Q8_0: return 8;
    case KVP_IQ4_NL: return 20;
    case KVP_BF16: return 30;
    default: return 1;
    }
}

gg_tensor *llm_weight(llm *c, int64_t ne0, int64_t ne1)
{
    int64_t ne[2] = {ne0, ne1};
    return gg_external(c->g, GG_F16, 2, ne);
}

gg_tensor *llm_weight_3d(llm *c, int64_t ne0, int64_t ne1, int64_t ne2)
{
    int64_t ne[3] = {ne0, ne1, ne2};
    return gg_external(c->g, GG_F16, 3, ne);
}

int llm_has_tensor(const llm *c, const char *fmt, int il, int dflt)
{
    if (!c->m->n_tensors)
        return dflt;
    char name[64];
    snprintf(name, sizeof name, fmt, il);
    for (size_t i = 0; i < c->m->n_tensors; i++)
        if (!strcmp(c->m->tensors[i].name, name))
            return 1;
    return 0;
}

int64_t llm_tensor_ne0(const llm *c, const char *fmt, int il, int64_t dflt)
{
    char name[64];
    snprintf(name, sizeof name, fmt, il);
    for (size_t i = 0; i < c->m->n_tensors; i++)
        if (!strcmp(c->m->tensors[i].name, name))
            return (int64_t)c->m->tensors[i].ne0;
    return dflt;
}

/* build_inp_embd: the token path and the (unused) vector-embedding input,
 * both in the graph (ggml_build_forward_select) */
gg_tensor *llm_inp_embd(llm *c, int64_t n_embd_inp, int scaled)
{
    gg_tensor *tokens = gg_input(gg_new_1d(c->g, GG_I32, c->n_tokens), "inp_tokens");
    gg_tensor *embd = gg_input(gg_new_2d(c->g, GG_F32, n_embd_inp, c->n_tokens), "inp_embd");
    gg_tensor *tok_embd = llm_weight(c, c->n_embd, c->n_vocab);
    gg_tensor *cur = gg_get_rows(c->g, tok_embd, tokens);
    c->inp_embd = embd;
    c->tok_rows = cur;
    if (n_embd_inp != c->n_embd)
        cur = gg_pad(c->g, cur, (int)(n_embd_inp - c->n_embd), 0, 0, 0);
    gg_expand(c->g, cur);
    gg_expand(c->g, embd);
    if (n_embd_inp != c->n_embd)
        cur = gg_view_2d(c->g, cur, c->n_embd, c->n_tokens, cur->nb[1], 0);
    if (scaled) {
        if (!gg_is_contiguous(cur))
            cur = gg_cont(c->g, cur);
        cur = gg_scale(c->g, cur);
    }
    gg_expand(c->g, cur);
    return cur;
}

gg_tensor *llm_inp_pos(llm *c, int n_pos_per_embd)
{
    c->inp_pos = gg_input(gg_new_1d(c->g, GG_I32, c->n_tokens * n_pos_per_embd), "inp_pos");
    return c->inp_pos;
}

gg_tensor *llm_inp_out_ids(llm *c)
{
    c->inp_out_ids = gg_input(gg_new_1d(c->g, GG_I32, c->n_outputs), "out_ids");
    return c->inp_out_ids;
}

/* llama_kv_cache::build_input_k_rot: the largest power of two from 128
 * dividing the head size; V uses 64 */
static int64_t rot_size_k(int64_t head)
{
    int64_t n = 64;
    do
        n *= 2;
    while (head % n == 0);
    return n / 2;
}

static int quantized(int type)
{
    return type != GG_F32 && type != GG_F16 && type != 30;
}

void llm_attn_inp(llm *c, llm_cache *kv, int64_t head_dim_k, int64_t head_dim_v)
{
    kv->k_idxs = gg_input(gg_new_1d(c->g, GG_I64, c->n_tokens), "attn_inp_k_idxs");
    kv->v_idxs = gg_input(gg_new_1d(c->g, GG_I64, c->v_trans ? c->n_tokens * kv->n_embd_v_gqa_max
                                                              : c->n_tokens),
                          "attn_inp_v_idxs");
    kv->mask = gg_input(gg_new_4d(c->g, c->fa ? GG_F16 : GG_F32, kv->n_kv,
                                  c->n_tokens / kv->n_stream, 1, kv->n_stream),
                        "attn_inp_kq_mask");
    kv->k_rot = kv->v_rot = NULL;
    if (head_dim_k > 0 && quantized(kv->type_k) && head_dim_k % 64 == 0) {
        int64_t n = rot_size_k(head_dim_k);
        kv->k_rot = gg_input(gg_new_2d(c->g, GG_F32, n, n), "attn_inp_k_rot");
    }
    if (head_dim_v > 0 && quantized(kv->type_v) && head_dim_v % 64 == 0)
        kv->v_rot = gg_input(gg_new_2d(c->g, GG_F32, 64, 64), "attn_inp_v_rot");
}

gg_tensor *llm_norm_rms(llm *c, gg_tensor *cur, gg_tensor *w)
{
    cur = gg_rms_norm(c->g, cur);
    return w ? gg_binary(c->g, GG_MUL, cur, w) : cur;
}

gg_tensor *llm_norm(llm *c, gg_tensor *cur, gg_tensor *w, gg_tensor *b)
{
    cur = gg_norm(c->g, cur);
    if (w)
        cur = gg_binary(c->g, GG_MUL, cur, w);
    if (b)
        cur = gg_binary(c->g, GG_ADD, cur, b);
    return cur;
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

static gg_tensor *cache_tensor(llm *c, int type, int64_t n_embd_gqa, llm_cache *kv)
{
    int64_t ne[3] = {n_embd_gqa, kv->kv_size, kv->n_stream};
    return gg_external(c->g, type, 3, ne);
}

/* llama_kv_cache::cpy_k */
static gg_tensor *cpy_k(llm *c, llm_cache *kv, gg_tensor *kc, gg_tensor *k_cur)
{
    int64_t n_embd_gqa = k_cur->ne[0] * k_cur->ne[1];
    gg_tensor *cur = gg_view_2d(c->g, k_cur, n_embd_gqa, k_cur->ne[2], k_cur->nb[2], 0);
    if (kv->n_stream > 1)
        kc = gg_reshape_2d(c->g, kc, n_embd_gqa, kv->kv_size * kv->n_stream);
    return gg_set_rows(c->g, kc, cur, kv->k_idxs);
}

/* llama_kv_cache::cpy_v */
static gg_tensor *cpy_v(llm *c, llm_cache *kv, gg_tensor *vc, gg_tensor *v_cur)
{
    int64_t n_embd_gqa = v_cur->ne[0] * v_cur->ne[1];
    int64_t n_tokens = v_cur->ne[2];
    if (!c->v_trans) {
        gg_tensor *cur = gg_view_2d(c->g, v_cur, n_embd_gqa, n_tokens, v_cur->nb[2], 0);
        if (kv->n_stream > 1)
            vc = gg_reshape_2d(c->g, vc, n_embd_gqa, kv->kv_size * kv->n_stream);
        return gg_set_rows(c->g, vc, cur, kv->v_idxs);
    }
    gg_tensor *cur = gg_row_size(v_cur->type, n_embd_gqa) == v_cur->nb[2]
        ? gg_reshape_2d(c->g, v_cur, n_embd_gqa, n_tokens)
        : gg_cont_4d(c->g, v_cur, n_embd_gqa, n_tokens, 1, 1);
    if (n_embd_gqa < vc->ne[0])
        cur = gg_pad(c->g, cur, (int)(vc->ne[0] - n_embd_gqa), 0, 0, 0);
    gg_tensor *view = gg_reshape_2d(c->g, vc, 1, (int64_t)gg_nelements(vc));
    cur = gg_reshape_2d(c->g, cur, 1, (int64_t)gg_nelements(cur));
    return gg_set_rows(c->g, view, cur, kv->v_idxs);
}

/* llama_kv_cache::get_k / get_v: every cell of every stream */
static gg_tensor *get_k(llm *c, llm_cache *kv, gg_tensor *kc, int64_t head, int64_t n_head_kv)
{
    uint64_t row = gg_row_size(kc->type, kc->ne[0]);
    return gg_view_4d(c->g, kc, head, n_head_kv, kv->n_kv, kv->n_stream,
                      gg_row_size(kc->type, head), row, row * (uint64_t)kv->kv_size, 0);
}

static gg_tensor *get_v(llm *c, llm_cache *kv, gg_tensor *vc, int64_t head, int64_t n_head_kv)
{
    uint64_t row = gg_row_size(vc->type, vc->ne[0]);
    if (!c->v_trans)
        return gg_view_4d(c->g, vc, head, n_head_kv, kv->n_kv, kv->n_stream,
                          gg_row_size(vc->type, head), row, row * (uint64_t)kv->kv_size, 0);
    return gg_view_4d(c->g, vc, kv->n_kv, n_head_kv, head, kv->n_stream,
                      gg_row_size(vc->type, (int64_t)kv->kv_size * head),
                      gg_row_size(vc->type, kv->kv_size),
                      gg_row_size(vc->type, kv->kv_size * vc->ne[0]), 0);
}

gg_tensor *llm_attn_mha(llm *c, gg_tensor *q, gg_tensor *k, gg_tensor *v, gg_tensor *kq_b,
                        gg_tensor *mask, gg_tensor *sinks, int soft_cap)
{
    gg_ctx *g = c->g;
    int v_trans = v->nb[1] > v->nb[2];
    int64_t n_stream = k->ne[3];
    q = gg_view_4d(g, q, q->ne[0], q->ne[1], q->ne[2] / n_stream, n_stream, q->nb[1], q->nb[2],
                   q->nb[3] / (uint64_t)n_stream, 0);
    q = gg_permute(g, q, 0, 2, 1, 3);
    k = gg_permute(g, k, 0, 2, 1, 3);
    v = gg_permute(g, v, 0, 2, 1, 3);
    gg_tensor *cur;
    if (c->fa && !kq_b) {
        if (v_trans)
            v = gg_transpose(g, v);
        if (k->type == GG_F32)
            k = gg_cast(g, k, GG_F16);
        if (v->type == GG_F32)
            v = gg_cast(g, v, GG_F16);
        cur = gg_flash_attn_ext(g, q, k, v, mask, sinks);
        cur = gg_reshape_2d(g, cur, cur->ne[0] * cur->ne[1], cur->ne[2] * cur->ne[3]);
    } else {
        gg_tensor *kq = gg_mul_mat(g, k, q);
        if (soft_cap) {
            kq = gg_scale(g, kq);
            kq = gg_unary(g, kq);
            kq = gg_scale(g, kq);
        }
        if (kq_b)
            kq = gg_binary(g, GG_ADD, kq, kq_b);
        kq = gg_soft_max_ext(g, kq, mask, sinks);
        if (!v_trans)
            v = gg_cont(g, gg_transpose(g, v));
        gg_tensor *kqv = gg_mul_mat(g, v, kq);
        cur = gg_permute(g, kqv, 0, 2, 1, 3);
        cur = gg_cont_4d(g, cur, cur->ne[0] * cur->ne[1], cur->ne[2] * cur->ne[3], 1, 1);
    }
    gg_expand(g, cur);
    return cur;
}

gg_tensor *llm_attn(llm *c, llm_cache *kv, gg_tensor *wo, gg_tensor *q, gg_tensor *k,
                    gg_tensor *v, gg_tensor *kq_b, gg_tensor *sinks, int soft_cap)
{
    gg_ctx *g = c->g;
    int64_t head_k = k->ne[0], head_v = v->ne[0], n_head_kv = k->ne[1];
    if (kv->k_rot) {
        q = hadamard(c, q, kv->k_rot);
        k = hadamard(c, k, kv->k_rot);
    }
    if (kv->v_rot)
        v = hadamard(c, v, kv->v_rot);
    gg_expand(g, q);
    gg_expand(g, v);
    gg_expand(g, k);
    gg_tensor *kc = cache_tensor(c, kv->type_k, head_k * n_head_kv, kv);
    gg_tensor *vc = cache_tensor(c, kv->type_v,
                                 kv->n_embd_v_gqa_max > head_v * n_head_kv && c->v_trans
                                     ? kv->n_embd_v_gqa_max : head_v * n_head_kv, kv);
    gg_expand(g, cpy_k(c, kv, kc, k));
    gg_expand(g, cpy_v(c, kv, vc, v));
    gg_tensor *cur = llm_attn_mha(c, q, get_k(c, kv, kc, head_k, n_head_kv),
                                  get_v(c, kv, vc, head_v, n_head_kv), kq_b, kv->mask, sinks,
                                  soft_cap);
    if (kv->v_rot)
        cur = hadamard(c, cur, kv->v_rot);
    if (wo)
        cur = gg_mul_mat(g, wo, cur);
    return cur;
}

gg_tensor *llm_ffn_par(llm *c, gg_tensor *cur, int64_t n_ff, int up_b, int gate_b, int down_b)
{
    gg_ctx *g = c->g;
    gg_tensor *tmp = gg_mul_mat(g, llm_weight(c, c->n_embd, n_ff), cur);
    if (up_b)
        tmp = gg_binary(g, GG_ADD, tmp, llm_weight(c, n_ff, 1));
    gg_tensor *gate = gg_mul_mat(g, llm_weight(c, c->n_embd, n_ff), cur);
    if (gate_b)
        gate = gg_binary(g, GG_ADD, gate, llm_weight(c, n_ff, 1));
    cur = gg_glu_split(g, gate, tmp);
    cur = gg_mul_mat(g, llm_weight(c, n_ff, c->n_embd), cur);
    if (down_b)
        cur = gg_binary(g, GG_ADD, cur, llm_weight(c, c->n_embd, 1));
    return cur;
}

gg_tensor *llm_ffn_seq(llm *c, gg_tensor *cur, int64_t n_ff, int up_b, int down_b)
{
    gg_ctx *g = c->g;
    cur = gg_mul_mat(g, llm_weight(c, c->n_embd, n_ff), cur);
    if (up_b)
        cur = gg_binary(g, GG_ADD, cur, llm_weight(c, n_ff, 1));
    cur = gg_unary(g, cur);
    cur = gg_mul_mat(g, llm_weight(c, n_ff, c->n_embd), cur);
    if (down_b)
        cur = gg_binary(g, GG_ADD, cur, llm_weight(c, c->n_embd, 1));
    return cur;
}
