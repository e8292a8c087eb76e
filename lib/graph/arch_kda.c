/* arch_kda.c - the reserved graph of llama.cpp's Kimi-Linear
 * (src/models/kimi-linear.cpp): Kimi Delta Attention layers (separate
 * causal convolutions of Q, K and V over one conv state, the fused delta
 * rule with a per-channel decay, a sigmoid-gated RMS norm) and, every few
 * layers, MLA attention on a K-only latent cache (llm_graph_input_mem_
 * hybrid_k: no V indices, no Hadamard rotations), no RoPE; dense FFNs in
 * the leading layers, then MoE with a shared expert.
 *
 * The MLA attention (build_attn for llm_graph_input_attn_k and
 * build_attn_mha's v_mla decompression) is written here for this graph;
 * the DeepSeek family's MLA is another engineer's (issue 10).
 *
 * Like MiniMax-01, Kimi-Linear's last prompt pass is reserved with one
 * sequence; the metadata-only mode sizes only the first pass, built here,
 * and the note gives what an allocating run reserves. */
#include <stdio.h>
#include <string.h>

#include "arch.h"
#include "llm_deltanet.h"
#include "llm_rs_moe.h"

int arch_kda_handles(const char *arch)
{
    return !strcmp(arch, "kimi-linear");
}

typedef struct kda {
    llm *c;
    llm_rs_inp rs;
    gg_tensor *k_idxs, *mask;
    int64_t n_head, head_dim, d_conv;
} kda;

/* causal_conv1d of kimi-linear.cpp: projection qkv (0 Q, 1 K, 2 V) of x,
 * convolved over its third of the layer's conv state */
static gg_tensor *causal_conv(kda *k, gg_tensor *conv_all, gg_tensor *conv_state, int qkv,
                              gg_tensor *x, int project)
{
    llm *c = k->c;
    gg_ctx *g = c->g;
    int64_t d_inner = k->head_dim * k->n_head, d_conv = k->d_conv;
    int64_t n_seqs = c->n_seqs, n_t = c->n_tokens / c->n_seqs;
    int64_t state_size = (d_conv - 1) * d_inner, total = 3 * state_size;
    gg_tensor *sx = gg_view_3d(g, conv_state, d_conv - 1, d_inner, n_seqs, (uint64_t)(d_conv - 1) * 4,
                               (uint64_t)total * 4, (uint64_t)(qkv * state_size) * 4);
    gg_tensor *proj = project ? gg_mul_mat(g, llm_weight(c, c->n_embd, d_inner), x) : x;
    gg_tensor *x3 = gg_reshape_3d(g, proj, d_inner, n_t, n_seqs);
    gg_tensor *conv_x = gg_concat(g, sx, gg_transpose(g, x3), 0);
    gg_tensor *last = gg_view_3d(g, conv_x, d_conv - 1, d_inner, n_seqs, conv_x->nb[1], conv_x->nb[2],
                                 (uint64_t)n_t * conv_x->nb[0]);
    gg_expand(g, llm_op_cpy(c, last, gg_view_3d(g, conv_all, d_conv - 1, d_inner, n_seqs,
                                                (uint64_t)(d_conv - 1) * 4, (uint64_t)total * 4,
                                                (uint64_t)(qkv * state_size) * 4)));
    gg_tensor *w = gg_reshape_2d(g, llm_weight_3d(c, d_conv, 1, d_inner), d_conv, d_inner);
    gg_tensor *out = llm_op_ssm_conv(c, conv_x, w);
    out = gg_reshape_2d(g, out, d_inner, c->n_tokens);
    out = gg_unary(g, out);
    return gg_reshape_4d(g, out, k->head_dim, k->n_head, n_t, n_seqs);
}

/* a KDA layer over cur {n_embd, n_tokens} (expanded) */
static gg_tensor *kda_layer(kda *k, gg_tensor *cur, int il)
{
    llm *c = k->c;
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t hd = k->head_dim, nh = k->n_head, d_inner = hd * nh;
    int64_t n_seqs = c->n_seqs, n_t = c->n_tokens / c->n_seqs;
    int64_t n_embd_r = llm_rs_n_embd_r(L), n_embd_s = llm_rs_n_embd_s(L);
    gg_tensor *conv_all = llm_rs_state(c, n_embd_r);
    gg_tensor *conv_state = llm_build_rs(c, &k->rs, conv_all, n_embd_r, n_seqs, NULL, NULL);
    gg_tensor *qi = cur, *ki = cur, *vi = cur;
    int project = 1;
    if (llm_has_tensor(c, "blk.%d.attn_qkv.weight", il, 0)) {
        gg_tensor *qkv = gg_mul_mat(g, llm_weight(c, c->n_embd, 3 * d_inner), cur);
        qi = gg_cont(g, gg_view_2d(g, qkv, d_inner, c->n_tokens, qkv->nb[1], 0));
        ki = gg_cont(g, gg_view_2d(g, qkv, d_inner, c->n_tokens, qkv->nb[1], (uint64_t)d_inner * 4));
        vi = gg_cont(g, gg_view_2d(g, qkv, d_inner, c->n_tokens, qkv->nb[1],
                                   (uint64_t)(2 * d_inner) * 4));
        project = 0;
    }
    gg_tensor *Q = causal_conv(k, conv_all, conv_state, 0, qi, project);
    gg_tensor *K = causal_conv(k, conv_all, conv_state, 1, ki, project);
    gg_tensor *V = causal_conv(k, conv_all, conv_state, 2, vi, project);
    gg_tensor *g1 = gg_mul_mat(g, llm_weight(c, hd, d_inner), gg_mul_mat(g, llm_weight(c, c->n_embd, hd), cur));
    g1 = gg_unary(g, gg_binary(g, GG_ADD, g1, llm_weight(c, d_inner, 1)));
    g1 = gg_reshape_3d(g, g1, hd, nh, c->n_tokens);
    g1 = gg_binary(g, GG_MUL, g1, gg_reshape_3d(g, llm_weight(c, 1, nh), 1, nh, 1));
    g1 = gg_reshape_4d(g, g1, hd, nh, n_t, n_seqs);
    gg_tensor *beta = gg_mul_mat(g, llm_weight(c, c->n_embd, nh), cur);
    beta = gg_unary(g, gg_reshape_4d(g, beta, 1, nh, n_t, n_seqs));
    gg_tensor *cur3 = gg_reshape_3d(g, cur, cur->ne[0], n_t, n_seqs);
    gg_tensor *ssm_all = llm_rs_state(c, n_embd_s);
    gg_tensor *state = llm_build_rs(c, &k->rs, ssm_all, n_embd_s, n_seqs, NULL, NULL);
    state = gg_reshape_4d(g, state, hd, hd, nh, n_seqs);
    Q = llm_gdn_l2_norm(c, Q);
    K = llm_gdn_l2_norm(c, K);
    /* build_delta_net, fused on the CPU */
    gg_tensor *r = llm_op_gated_delta_net(c, Q, K, V, g1, beta, state, 1);
    gg_tensor *out = gg_view_4d(g, r, hd, nh, n_t, n_seqs, (uint64_t)hd * 4, (uint64_t)(hd * nh) * 4,
                                (uint64_t)(hd * nh * n_t) * 4, 0);
    gg_tensor *new_state = gg_view_4d(g, r, hd, hd, nh, n_seqs, (uint64_t)hd * 4,
                                      (uint64_t)(hd * hd) * 4, (uint64_t)(hd * hd * nh) * 4,
                                      (uint64_t)(hd * nh * n_t * n_seqs) * 4);
    out = gg_cont(g, out);
    gg_expand(g, llm_op_cpy(c, new_state, gg_view_1d(g, ssm_all, n_embd_s * n_seqs, 0)));
    gg_tensor *cur2 = gg_reshape_2d(g, cur3, cur3->ne[0], n_t * n_seqs);
    gg_tensor *g2 = gg_mul_mat(g, llm_weight(c, hd, d_inner), gg_mul_mat(g, llm_weight(c, c->n_embd, hd), cur2));
    g2 = gg_reshape_3d(g, g2, hd, nh, c->n_tokens);
    gg_tensor *o = gg_reshape_3d(g, out, hd, nh, c->n_tokens);
    gg_tensor *normed = llm_norm_rms(c, o, llm_weight(c, hd, 1));
    gg_tensor *gated = gg_binary(g, GG_MUL, normed, gg_unary(g, g2));
    gated = gg_cont_4d(g, gated, d_inner, c->n_tokens, 1, 1);
    return gg_mul_mat(g, llm_weight(c, d_inner, c->n_embd), gated);
}

/* build_attn for llm_graph_input_attn_k with the MLA decompression v_mla
 * (build_attn_mha's v_mla branches): K-only latent cache, V a view of it */
static gg_tensor *mla_attn(kda *k, gg_tensor *wo, gg_tensor *q, gg_tensor *kcur, gg_tensor *vcur,
                           gg_tensor *v_mla)
{
    llm *c = k->c;
    gg_ctx *g = c->g;
    llm_cache *kv = &c->kv;
    gg_expand(g, q);
    gg_expand(g, vcur);
    gg_expand(g, kcur);
    int64_t n_embd_k = kcur->ne[0] * kcur->ne[1];
    int64_t ne[3] = {n_embd_k, kv->kv_size, kv->n_stream};
    gg_tensor *kc = gg_external(g, kv->type_k, 3, ne);
    /* cpy_k */
    gg_tensor *kv2 = gg_view_2d(g, kcur, n_embd_k, kcur->ne[2], kcur->nb[2], 0);
    gg_tensor *dst = kv->n_stream > 1 ? gg_reshape_2d(g, kc, n_embd_k, kv->kv_size * kv->n_stream) : kc;
    gg_expand(g, gg_set_rows(g, dst, kv2, k->k_idxs));
    /* get_k, and V as its first vcur->ne[0] values */
    uint64_t row = gg_row_size(kc->type, n_embd_k);
    gg_tensor *K = gg_view_4d(g, kc, kcur->ne[0], kcur->ne[1], kv->n_kv, kv->n_stream,
                              gg_row_size(kc->type, kcur->ne[0]), row, row * (uint64_t)kv->kv_size, 0);
    gg_tensor *V = gg_view_4d(g, K, vcur->ne[0], K->ne[1], K->ne[2], K->ne[3], K->nb[1], K->nb[2],
                              K->nb[3], 0);
    /* build_attn_mha */
    int v_trans = V->nb[1] > V->nb[2];
    int64_t n_stream = K->ne[3];
    q = gg_view_4d(g, q, q->ne[0], q->ne[1], q->ne[2] / n_stream, n_stream, q->nb[1], q->nb[2],
                   q->nb[3] / (uint64_t)n_stream, 0);
    q = gg_permute(g, q, 0, 2, 1, 3);
    K = gg_permute(g, K, 0, 2, 1, 3);
    V = gg_permute(g, V, 0, 2, 1, 3);
    gg_tensor *cur;
    if (c->fa) {
        if (v_trans)
            V = gg_transpose(g, V);
        if (K->type == GG_F32)
            K = gg_cast(g, K, GG_F16);
        if (V->type == GG_F32)
            V = gg_cast(g, V, GG_F16);
        cur = gg_flash_attn_ext(g, q, K, V, k->mask, NULL);
        cur = gg_permute(g, cur, 0, 2, 1, 3);
        cur = gg_mul_mat(g, v_mla, cur);
        cur = gg_permute(g, cur, 0, 2, 1, 3);
        cur = gg_cont(g, cur);
        cur = gg_reshape_2d(g, cur, cur->ne[0] * cur->ne[1], cur->ne[2] * cur->ne[3]);
    } else {
        gg_tensor *kq = gg_mul_mat(g, K, q);
        kq = gg_soft_max_ext(g, kq, k->mask, NULL);
        if (!v_trans)
            V = gg_cont(g, gg_transpose(g, V));
        gg_tensor *kqv = gg_mul_mat(g, V, kq);
        kqv = gg_mul_mat(g, v_mla, kqv);
        cur = gg_permute(g, kqv, 0, 2, 1, 3);
        cur = gg_cont_4d(g, cur, cur->ne[0] * cur->ne[1], cur->ne[2] * cur->ne[3], 1, 1);
    }
    gg_expand(g, cur);
    return gg_mul_mat(g, wo, cur);
}

/* the MLA layer of kimi-linear.cpp (with the MLA KV cache: wk_b, wv_b) */
static gg_tensor *mla_layer(kda *k, gg_tensor *cur, int il)
{
    llm *c = k->c;
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t nh = L->n_head, n_tokens = c->n_tokens;
    int64_t rope = L->mla_rope_dim, kv_lora = (int64_t)L->head_dim_k - rope;
    int64_t k_mla = L->mla_k_head_dim, v_mla = L->mla_v_head_dim, nope = k_mla - rope;
    gg_tensor *Q = gg_mul_mat(g, llm_weight(c, c->n_embd, nh * k_mla), cur);
    gg_tensor *kvpe = gg_mul_mat(g, llm_weight(c, c->n_embd, kv_lora + rope), cur);
    uint64_t row = (uint64_t)(kv_lora + rope) * 4;
    gg_tensor *kv_c = gg_view_2d(g, kvpe, kv_lora, n_tokens, row, 0);
    gg_tensor *k_pe = gg_view_3d(g, kvpe, rope, 1, n_tokens, row, row, (uint64_t)kv_lora * 4);
    kv_c = llm_norm_rms(c, kv_c, llm_weight(c, kv_lora, 1));
    gg_tensor *q_nope = gg_view_3d(g, Q, nope, nh, n_tokens, (uint64_t)k_mla * 4,
                                   (uint64_t)(k_mla * nh) * 4, 0);
    gg_tensor *q_pe = gg_view_3d(g, Q, rope, nh, n_tokens, (uint64_t)k_mla * 4,
                                 (uint64_t)(k_mla * nh) * 4, (uint64_t)nope * 4);
    q_nope = gg_permute(g, q_nope, 0, 2, 1, 3);
    gg_tensor *q_abs = gg_mul_mat(g, llm_weight_3d(c, nope, kv_lora, nh), q_nope);
    q_abs = gg_permute(g, q_abs, 0, 2, 1, 3);
    Q = gg_concat(g, q_abs, q_pe, 0);
    kv_c = gg_reshape_3d(g, kv_c, kv_lora, 1, n_tokens);
    gg_tensor *K = gg_concat(g, kv_c, k_pe, 0);
    return mla_attn(k, llm_weight(c, nh * v_mla, c->n_embd), Q, K, kv_c,
                    llm_weight_3d(c, kv_lora, v_mla, nh));
}

static int build(llm *c, int mask_streams)
{
    gg_ctx *g = c->g;
    kda k = {0};
    k.c = c;
    const kvp_layer *KL = NULL;
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        if (L->kind == KVP_LAYER_LINEAR) {
            KL = KL ? KL : L;
        } else if (L->kind != KVP_LAYER_MLA ||
                   llm_has_tensor(c, "blk.%d.attn_kv_b.weight", il, 0) ||
                   llm_has_tensor(c, "blk.%d.attn_q_a.weight", il, 0) || !L->mla_k_head_dim) {
            return ARCH_NOT_MODELLED;   /* a legacy wkv_b, or compressed Q: not the MLA path */
        }
    }
    if (!KL || !KL->d_state)
        return ARCH_NOT_MODELLED;
    k.head_dim = KL->d_state;
    k.n_head = (int64_t)KL->d_inner / KL->d_state;
    k.d_conv = KL->d_conv;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_rs_inp_build(c, &k.rs);
    /* build_attn_inp_k_impl: K indices and the mask, nothing else */
    k.k_idxs = gg_input(gg_new_1d(g, GG_I64, c->n_tokens), "attn_inp_k_idxs");
    k.mask = gg_input(gg_new_4d(g, c->fa ? GG_F16 : GG_F32, c->kv.n_kv, c->n_tokens / mask_streams, 1,
                                mask_streams), "attn_inp_kq_mask");
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        gg_expand(g, cur);
        cur = L->kind == KVP_LAYER_LINEAR ? kda_layer(&k, cur, il) : mla_layer(&k, cur, il);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, llm_weight(c, c->n_embd, 1));
        if ((uint32_t)il < c->m->n_layer_dense_lead) {
            cur = llm_ffn_par(c, cur, c->m->n_ff, 0, 0, 0);
        } else {
            int64_t gating = llm_model_fact(c, "expert_gating_func", 2);
            if (gating != 1 && gating != 2)
                return ARCH_NOT_MODELLED;
            llm_moe a = {0};
            llm_moe_shapes(c, il, &a);
            a.gating = gating == 1 ? LLM_MOE_SOFTMAX : LLM_MOE_SIGMOID;
            a.probs_b = llm_has_tensor(c, "blk.%d.exp_probs_b.bias", il, 1);
            a.norm_w = 1;
            a.act = LLM_MOE_SILU;
            gg_tensor *moe = llm_rs_moe_ffn(c, cur, &a, NULL);
            int64_t n_sh = llm_tensor_ne0(c, "blk.%d.ffn_down_shexp.weight", il,
                                          a.n_ff * (c->m->n_expert_shared ? c->m->n_expert_shared : 1));
            cur = gg_binary(g, GG_ADD, moe, llm_ffn_par(c, cur, n_sh, 0, 0, 0));
        }
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

static int other_pass(const llm *c, int64_t n_tokens, int64_t n_seqs, int64_t n_outputs,
                      uint64_t *size)
{
    llm c1 = *c;
    c1.g = gg_new();
    if (!c1.g)
        return -1;
    c1.n_tokens = n_tokens;
    c1.n_seqs = n_seqs;
    c1.n_outputs = n_outputs;
    int rc = build(&c1, c->kv.n_stream == 1 ? 1 : (int)n_seqs);
    if (rc == 0)
        rc = gg_alloc_size(c1.g, 32 /* the CPU buffer's alignment */, size);
    gg_free(c1.g);
    return rc;
}

int arch_kda_build(llm *c)
{
    if (!c->rs_size || c->rs_seq || !c->kv.n_stream)
        return ARCH_NOT_MODELLED;
    /* the 1-sequence prompt pass aborts in llama.cpp when the tokens do
     * not split evenly over the cache's streams (see arch_lightning.c) */
    if (c->kv.n_stream > 1 && c->n_tokens_max % c->kv.n_stream)
        return ARCH_NOT_MODELLED;
    if (c->n_seqs > 1) {
        uint64_t tg = 0, one = 0;
        int rc = other_pass(c, c->n_seqs, c->n_seqs, c->n_seqs, &tg);
        if (rc == 0)
            rc = other_pass(c, c->n_tokens_max, 1, c->n_outputs, &one);
        if (rc)
            return rc;
        snprintf(c->note, sizeof c->note,
                 "an allocating run also reserves the 1-sequence prompt graph: %llu bytes",
                 (unsigned long long)(one > tg ? one : tg));
    }
    return build(c, (int)c->kv.n_stream);
}
