/* arch_deltanet.c - the reserved graph of llama.cpp's Gated DeltaNet
 * hybrids: src/models/qwen35.cpp (qwen35) and qwen3next.cpp (qwen3next),
 * on the pieces of delta-net-base.cpp (llm_deltanet.c).  Most layers are
 * linear attention over a recurrent state (a mixed QKV projection, a
 * causal conv, the fused delta rule, a gated RMS norm); every few layers
 * one is full attention with a sigmoid output gate.  Pre-norm, a post-
 * attention norm, the FFN; the output norm (h_nextn, kept for the MTP
 * head) over every token, then the output rows and the logits. */
#include <string.h>

#include "arch.h"
#include "llm_deltanet.h"

int arch_deltanet_handles(const char *arch)
{
    return !strcmp(arch, "qwen35");
}

static int is_recr(const kvp_layer *L)
{
    return L->kind == KVP_LAYER_LINEAR;
}

/* build_layer_attn_linear of qwen35.cpp */
static gg_tensor *linear_attn(llm *c, llm_rs_inp *inp, gg_tensor *cur, int il)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t d_inner = (int64_t)L->d_inner, head_k = L->d_state, n_k = L->n_group;
    int64_t n_v = llm_rs_heads(c, il, d_inner / head_k), head_v = d_inner / n_v;
    int64_t n_seqs = c->n_seqs, n_t = c->n_tokens / c->n_seqs;
    int64_t channels = d_inner + 2 * n_k * head_k;
    int64_t n_embd_r = llm_rs_n_embd_r(L), n_embd_s = llm_rs_n_embd_s(L);

    gg_tensor *qkv = gg_mul_mat(g, llm_weight(c, c->n_embd, channels), cur);
    qkv = gg_reshape_3d(g, qkv, qkv->ne[0], n_t, n_seqs);
    gg_tensor *z = gg_mul_mat(g, llm_weight(c, c->n_embd, d_inner), cur);
    gg_tensor *beta = gg_mul_mat(g, llm_weight(c, c->n_embd, n_v), cur);
    beta = gg_unary(g, gg_reshape_4d(g, beta, 1, n_v, n_t, n_seqs));
    gg_tensor *alpha = gg_mul_mat(g, llm_weight(c, c->n_embd, n_v), cur);
    alpha = gg_reshape_3d(g, alpha, n_v, n_t, n_seqs);
    alpha = gg_unary(g, gg_binary(g, GG_ADD, alpha, llm_weight(c, n_v, 1)));
    gg_tensor *gate = gg_binary(g, GG_MUL, alpha, llm_weight(c, n_v, 1));
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
    /* the fused delta rule broadcasts K heads itself: no repeat */
    gg_tensor *out = llm_dn_recurrent_attn(c, ssm_all, q, k, v, gate, beta, state, n_embd_s);

    gg_tensor *z2 = gg_reshape_4d(g, z, head_v, n_v, n_t, n_seqs);
    gg_tensor *normed = llm_norm_rms(c, out, llm_weight(c, head_v, 1));
    out = gg_binary(g, GG_MUL, normed, gg_unary(g, z2));
    out = gg_reshape_3d(g, out, head_v * n_v, n_t, n_seqs);
    cur = gg_mul_mat(g, llm_weight(c, d_inner, c->n_embd), out);
    return gg_reshape_2d(g, cur, c->n_embd, n_t * n_seqs);
}

/* build_layer_attn of qwen35.cpp: Q and its gate from one projection */
static gg_tensor *full_attn(llm *c, gg_tensor *cur, int il)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t hd = L->head_dim_k, nh = L->n_head, nkv = L->n_kv_heads, n_tokens = c->n_tokens;
    gg_tensor *qf = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * 2 * nh), cur);
    gg_tensor *K = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nkv), cur);
    gg_tensor *V = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nkv), cur);
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
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_rs_inp rs;
    llm_rs_inp_build(c, &rs);
    if (A)
        llm_attn_inp(c, &c->kv, A->head_dim_k, A->head_dim_v);
    llm_inp_pos(c, 4);   /* IMROPE: four positions per token */
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        gg_expand(g, cur);
        cur = is_recr(L) ? linear_attn(c, &rs, cur, il) : full_attn(c, cur, il);
        cur = gg_binary(g, GG_ADD, cur, inpSA);
        gg_tensor *res = cur;
        cur = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
        cur = llm_ffn_par(c, cur, c->m->n_ff, 0, 0, 0);
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
