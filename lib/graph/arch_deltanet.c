/* arch_deltanet.c - the reserved graph of llama.cpp's Gated DeltaNet
 * hybrids: src/models/qwen35.cpp (qwen35), qwen35moe.cpp and qwen3next.cpp,
 * on the pieces of delta-net-base.cpp (llm_deltanet.c).  Most layers are
 * linear attention over a recurrent state (a mixed QKV projection, a
 * causal conv, the fused delta rule, a gated RMS norm); every few layers
 * one is full attention with a sigmoid output gate.  Pre-norm, a post-
 * attention norm, the FFN; the output norm (h_nextn, kept for the MTP
 * head) over every token, then the output rows and the logits. */
#include <string.h>

#include "arch.h"
#include "llm_deltanet.h"
#include "llm_rs_moe.h"

int arch_deltanet_handles(const char *arch)
{
    return !strcmp(arch, "qwen35") || !strcmp(arch, "qwen35moe") || !strcmp(arch, "qwen3next");
}

static int is_recr(const kvp_layer *L)
{
    return L->kind == KVP_LAYER_LINEAR;
}

/* build_qkvz of qwen3next.cpp without attn_qkv: one projection of q, k,
 * v and z per key head, split and put back together */
static gg_tensor *legacy_qkvz(llm *c, gg_tensor *cur, int64_t head_k, int64_t n_k, int64_t head_v,
                              int64_t n_v, gg_tensor **z)
{
    gg_ctx *g = c->g;
    int64_t n_seqs = c->n_seqs, n_t = c->n_tokens / c->n_seqs;
    int64_t vz = head_v * n_v / n_k, dim = 2 * head_k + 2 * vz;
    gg_tensor *m = gg_mul_mat(g, llm_weight(c, c->n_embd, dim * n_k), cur);
    m = gg_reshape_4d(g, m, dim, n_k, n_t, n_seqs);
    gg_tensor *q = gg_view_4d(g, m, head_k, n_k, n_t, n_seqs, m->nb[1], m->nb[2], m->nb[3], 0);
    gg_tensor *k = gg_view_4d(g, m, head_k, n_k, n_t, n_seqs, m->nb[1], m->nb[2], m->nb[3],
                              (uint64_t)head_k * 4);
    gg_tensor *v = gg_view_4d(g, m, vz, n_k, n_t, n_seqs, m->nb[1], m->nb[2], m->nb[3],
                              (uint64_t)(2 * head_k) * 4);
    gg_tensor *zz = gg_view_4d(g, m, vz, n_k, n_t, n_seqs, m->nb[1], m->nb[2], m->nb[3],
                               (uint64_t)(2 * head_k + vz) * 4);
    *z = gg_cont(g, zz);
    q = gg_cont_4d(g, q, head_k * n_k, n_t, n_seqs, 1);
    k = gg_cont_4d(g, k, head_k * n_k, n_t, n_seqs, 1);
    v = gg_cont_4d(g, v, head_v * n_v, n_t, n_seqs, 1);
    return gg_concat(g, gg_concat(g, q, k, 0), v, 0);
}

/* build_layer_attn_linear of qwen35.cpp, or of qwen3next.cpp (next: beta
 * and alpha from one projection per key head, K heads repeated to the V
 * heads) */
static gg_tensor *linear_attn(llm *c, llm_rs_inp *inp, gg_tensor *cur, int il, int next)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t d_inner = (int64_t)L->d_inner, head_k = L->d_state, n_k = L->n_group;
    int64_t n_v = llm_rs_heads(c, il, d_inner / head_k), head_v = d_inner / n_v;
    int64_t n_seqs = c->n_seqs, n_t = c->n_tokens / c->n_seqs;
    int64_t channels = d_inner + 2 * n_k * head_k;
    int64_t n_embd_r = llm_rs_n_embd_r(L), n_embd_s = llm_rs_n_embd_s(L);

    gg_tensor *qkv, *z, *beta, *alpha;
    if (!next || llm_has_tensor(c, "blk.%d.attn_qkv.weight", il, 1)) {
        qkv = gg_mul_mat(g, llm_weight(c, c->n_embd, channels), cur);
        qkv = gg_reshape_3d(g, qkv, qkv->ne[0], n_t, n_seqs);
        z = gg_mul_mat(g, llm_weight(c, c->n_embd, d_inner), cur);
    } else {
        qkv = legacy_qkvz(c, cur, head_k, n_k, head_v, n_v, &z);
    }
    if (next) {
        int64_t r = n_v / n_k;
        gg_tensor *ba = gg_mul_mat(g, llm_weight(c, c->n_embd, 2 * n_v), cur);
        ba = gg_reshape_4d(g, ba, 2 * r, n_k, n_t, n_seqs);
        gg_tensor *b = gg_view_4d(g, ba, r, n_k, n_t, n_seqs, ba->nb[1], ba->nb[2], ba->nb[3], 0);
        gg_tensor *a = gg_view_4d(g, ba, r, n_k, n_t, n_seqs, ba->nb[1], ba->nb[2], ba->nb[3],
                                  (uint64_t)r * 4);
        beta = gg_unary(g, gg_cont(g, b));
        alpha = gg_cont_4d(g, a, n_v, n_t, n_seqs, 1);
    } else {
        beta = gg_mul_mat(g, llm_weight(c, c->n_embd, n_v), cur);
        beta = gg_unary(g, gg_reshape_4d(g, beta, 1, n_v, n_t, n_seqs));
        alpha = gg_mul_mat(g, llm_weight(c, c->n_embd, n_v), cur);
        alpha = gg_reshape_3d(g, alpha, n_v, n_t, n_seqs);
    }
    alpha = gg_unary(g, gg_binary(g, GG_ADD, alpha, llm_weight(c, n_v, 1)));
    gg_tensor *gate = gg_binary(g, GG_MUL, alpha, llm_weight(c, n_v, 1));
    if (next)
        beta = gg_reshape_4d(g, beta, 1, n_v, n_t, n_seqs);
    gate = gg_reshape_4d(g, gate, 1, n_v, n_t, n_seqs);

    gg_tensor *conv_all = llm_rs_state(c, n_embd_r);
    gg_tensor *ssm_all = llm_rs_state(c, n_embd_s);
    gg_tensor *conv_in = llm_dn_conv_state(c, inp, conv_all, qkv, L->d_conv, channels, n_embd_r);
    gg_tensor *state = llm_build_rs(c, inp, ssm_all, n_embd_s, n_seqs, NULL, NULL);
    state = gg_reshape_4d(g, state, head_v, head_v, n_v, n_seqs);
    gg_tensor *conv = llm_op_ssm_conv(c, conv_in, llm_weight(c, L->d_conv, channels));
    conv = gg_unary(g, conv);

    uint64_t nb1 = (uint64_t)(2 * head_k * n_k + head_v * n_v) * 4;
    gg_tensor *q = gg_view_4d(g, conv, head_k, n_k, n_t, n_seqs, (uint64_t)head_k * 4, nb1,
                              nb1 * (uint64_t)n_t, 0);
    gg_tensor *k = gg_view_4d(g, conv, head_k, n_k, n_t, n_seqs, (uint64_t)head_k * 4, nb1,
                              nb1 * (uint64_t)n_t, (uint64_t)(head_k * n_k) * 4);
    gg_tensor *v = gg_view_4d(g, conv, head_v, n_v, n_t, n_seqs, (uint64_t)head_v * 4, nb1,
                              nb1 * (uint64_t)n_t, (uint64_t)(2 * head_k * n_k) * 4);
    q = llm_gdn_l2_norm(c, q);
    k = llm_gdn_l2_norm(c, k);
    /* qwen35's fused delta rule broadcasts K heads itself; qwen3next
     * repeats them (interleaved) */
    if (next && n_k != n_v) {
        int64_t r = n_v / n_k;
        q = gg_reshape_4d(g, q, head_k, 1, n_k, n_t * n_seqs);
        k = gg_reshape_4d(g, k, head_k, 1, n_k, n_t * n_seqs);
        q = gg_repeat_4d(g, q, head_k, r, n_k, n_t * n_seqs);
        k = gg_repeat_4d(g, k, head_k, r, n_k, n_t * n_seqs);
        q = gg_reshape_4d(g, q, head_k, n_k * r, n_t, n_seqs);
        k = gg_reshape_4d(g, k, head_k, n_k * r, n_t, n_seqs);
    }
    gg_tensor *out = llm_dn_recurrent_attn(c, ssm_all, q, k, v, gate, beta, state, n_embd_s);

    gg_tensor *z2 = gg_reshape_4d(g, z, head_v, n_v, n_t, n_seqs);
    gg_tensor *normed = llm_norm_rms(c, out, llm_weight(c, head_v, 1));
    out = gg_binary(g, GG_MUL, normed, gg_unary(g, z2));
    out = gg_reshape_3d(g, out, head_v * n_v, n_t, n_seqs);
    cur = gg_mul_mat(g, llm_weight(c, d_inner, c->n_embd), out);
    return gg_reshape_2d(g, cur, c->n_embd, n_t * n_seqs);
}

/* build_layer_attn of qwen3next.cpp, from the projections on */
static gg_tensor *full_attn_next(llm *c, gg_tensor *qf, gg_tensor *K, gg_tensor *V,
                                 const kvp_layer *L)
{
    gg_ctx *g = c->g;
    int64_t hd = L->head_dim_k, nh = L->n_head, nkv = L->n_kv_heads, n_tokens = c->n_tokens;
    qf = gg_reshape_4d(g, qf, hd * 2, nh, n_tokens, 1);
    gg_tensor *Q = gg_view_4d(g, qf, hd, nh, n_tokens, 1, qf->nb[1], qf->nb[2], qf->nb[3], 0);
    gg_tensor *gate = gg_view_4d(g, qf, hd, nh, n_tokens, 1, qf->nb[1], qf->nb[2], qf->nb[3],
                                 (uint64_t)hd * 4);
    K = gg_reshape_3d(g, K, hd, nkv, n_tokens);
    V = gg_reshape_3d(g, V, hd, nkv, n_tokens);
    Q = llm_norm_rms(c, Q, llm_weight(c, hd, 1));
    K = llm_norm_rms(c, K, llm_weight(c, hd, 1));
    Q = gg_rope(g, Q, c->inp_pos, NULL);
    K = gg_rope(g, K, c->inp_pos, NULL);
    gg_tensor *cur = llm_attn(c, &c->kv, NULL, Q, K, V, NULL, NULL, 0);
    gate = gg_unary(g, gg_cont_4d(g, gate, hd * nh, n_tokens, 1, 1));
    cur = gg_binary(g, GG_MUL, cur, gate);
    return gg_mul_mat(g, llm_weight(c, hd * nh, c->n_embd), cur);
}

/* build_layer_attn of qwen35.cpp: Q and its gate from one projection */
static gg_tensor *full_attn(llm *c, gg_tensor *cur, int il, int next)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t hd = L->head_dim_k, nh = L->n_head, nkv = L->n_kv_heads, n_tokens = c->n_tokens;
    gg_tensor *qf = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * 2 * nh), cur);
    gg_tensor *K = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nkv), cur);
    gg_tensor *V = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nkv), cur);
    if (next)
        return full_attn_next(c, qf, K, V, L);
    gg_tensor *Q = gg_view_3d(g, qf, hd, nh, n_tokens, (uint64_t)hd * 2 * 4,
                              (uint64_t)hd * 2 * nh * 4, 0);
    Q = llm_norm_rms(c, Q, llm_weight(c, hd, 1));
    K = gg_reshape_3d(g, K, hd, nkv, n_tokens);
    K = llm_norm_rms(c, K, llm_weight(c, hd, 1));
    gg_tensor *gate = gg_view_3d(g, qf, hd, nh, n_tokens, (uint64_t)hd * 2 * 4,
                                 (uint64_t)hd * 2 * nh * 4, (uint64_t)hd * 4);
    gate = gg_cont_4d(g, gate, hd * nh, n_tokens, 1, 1);
    V = gg_reshape_3d(g, V, hd, nkv, n_tokens);
    Q = gg_rope(g, Q, c->inp_pos, NULL);
    K = gg_rope(g, K, c->inp_pos, NULL);
    cur = llm_attn(c, &c->kv, NULL, Q, K, V, NULL, NULL, 0);
    cur = gg_binary(g, GG_MUL, cur, gg_unary(g, gate));
    return gg_mul_mat(g, llm_weight(c, hd * nh, c->n_embd), cur);
}

/* build_layer_ffn of qwen35moe.cpp / qwen3next.cpp: routed experts plus
 * a shared expert behind a sigmoid gate; qwen35: a dense SwiGLU */
static gg_tensor *ffn(llm *c, gg_tensor *cur, int il, int moe)
{
    gg_ctx *g = c->g;
    if (!moe)
        return llm_ffn_par(c, cur, c->m->n_ff, 0, 0, 0);
    llm_moe a = {0};
    llm_moe_shapes(c, il, &a);
    a.gating = LLM_MOE_SOFTMAX;
    a.norm_w = 1;
    a.act = LLM_MOE_SILU;
    gg_tensor *moe_out = llm_rs_moe_ffn(c, cur, &a, NULL);
    if (!llm_has_tensor(c, "blk.%d.ffn_up_shexp.weight", il, 1))
        return moe_out;
    int64_t n_ff = llm_tensor_ne0(c, "blk.%d.ffn_down_shexp.weight", il,
                                  (int64_t)(c->m->n_ff_shexp ? c->m->n_ff_shexp : c->m->n_ff));
    gg_tensor *sh = llm_ffn_par(c, cur, n_ff, 0, 0, 0);
    gg_tensor *sg = gg_unary(g, gg_mul_mat(g, llm_weight(c, c->n_embd, 1), cur));
    sh = gg_binary(g, GG_MUL, sh, sg);
    return gg_binary(g, GG_ADD, moe_out, sh);
}

int arch_deltanet_build(llm *c)
{
    gg_ctx *g = c->g;
    if (!c->rs_size || c->rs_seq)
        return ARCH_NOT_MODELLED;
    const kvp_layer *A = NULL;
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        if (!is_recr(L)) {
            /* a fused QKV projection on an attention layer is another graph */
            if (llm_has_tensor(c, "blk.%d.attn_qkv.weight", il, 0))
                return ARCH_NOT_MODELLED;
            if (!A)
                A = L;
        }
    }
    int next = !strcmp(c->arch, "qwen3next"), moe = next || !strcmp(c->arch, "qwen35moe");
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_rs_inp rs;
    llm_rs_inp_build(c, &rs);
    if (A)
        llm_attn_inp(c, &c->kv, A->head_dim_k, A->head_dim_v);
    llm_inp_pos(c, next ? 1 : 4);   /* qwen35's IMROPE: four positions per token */
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        gg_expand(g, cur);
        cur = is_recr(L) ? linear_attn(c, &rs, cur, il, next) : full_attn(c, cur, il, next);
        cur = gg_binary(g, GG_ADD, cur, inpSA);
        gg_tensor *res = cur;
        cur = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
        cur = ffn(c, cur, il, moe && llm_has_tensor(c, "blk.%d.ffn_gate_inp.weight", il, 1));
        inpL = gg_binary(g, GG_ADD, cur, res);
    }
    gg_tensor *h = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(h);
    gg_tensor *norm = gg_get_rows(g, h, c->inp_out_ids);
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}
