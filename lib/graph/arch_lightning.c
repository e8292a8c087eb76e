/* arch_lightning.c - the reserved graph of llama.cpp's MiniMax-01
 * (src/models/minimax-01.cpp): lightning-attention layers (linear
 * attention with per-head decays over a recurrent KV state, its decays as
 * graph inputs) and, every few layers, softmax attention; every layer's
 * FFN is MoE, both residuals scaled.
 *
 * sched_reserve reserves MiniMax-01 with n_seqs = 1 in its last prompt
 * pass (the diagonal decay input grows with n_seq_tokens squared); the
 * metadata-only mode kvplan's oracle measures sizes only the first pass,
 * n_seqs = n_seq_max, which is the graph built here. */
#include <stdio.h>
#include <string.h>

#include "arch.h"
#include "llm_rs.h"
#include "llm_rs_moe.h"

int arch_lightning_handles(const char *arch)
{
    return !strcmp(arch, "minimax-01");
}

typedef struct la_inp {
    gg_tensor *slopes, *q_decay, *k_decay, *diag_decay;
} la_inp;

/* the lightning attention of layer il over cur {n_embd, n_tokens} */
static gg_tensor *lightning(llm *c, llm_rs_inp *rs, la_inp *la, gg_tensor *cur, int il)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t hd = L->d_state, nh = hd ? (int64_t)L->d_inner / hd : 0;   /* d_inner = heads x hd */
    int64_t n_seqs = c->n_seqs, n_t = c->n_tokens / c->n_seqs;
    int64_t n_embd_r = llm_rs_n_embd_r(L), n_embd_s = llm_rs_n_embd_s(L);
    gg_tensor *r_l = llm_rs_state(c, n_embd_r);
    gg_expand(g, llm_build_rs(c, rs, r_l, n_embd_r, n_seqs, NULL, NULL));
    gg_tensor *slope_rate = gg_scale(g, la->slopes);
    cur = gg_reshape_4d(g, cur, cur->ne[0], n_t, 1, n_seqs);
    gg_tensor *qkv = gg_unary(g, gg_mul_mat(g, llm_weight(c, c->n_embd, 3 * hd * nh), cur));
    qkv = gg_reshape_4d(g, qkv, hd * 3, nh, n_t, n_seqs);
    gg_tensor *Q = gg_view_4d(g, qkv, hd, nh, n_t, n_seqs, qkv->nb[1], qkv->nb[2], qkv->nb[3], 0);
    gg_tensor *K = gg_view_4d(g, qkv, hd, nh, n_t, n_seqs, qkv->nb[1], qkv->nb[2], qkv->nb[3],
                              (uint64_t)hd * 4);
    gg_tensor *V = gg_view_4d(g, qkv, hd, nh, n_t, n_seqs, qkv->nb[1], qkv->nb[2], qkv->nb[3],
                              (uint64_t)(2 * hd) * 4);
    gg_tensor *s_l = llm_rs_state(c, n_embd_s);
    gg_tensor *state = llm_build_rs(c, rs, s_l, n_embd_s, n_seqs, NULL, NULL);
    gg_tensor *kv_old = gg_reshape_4d(g, state, hd, hd, nh, n_seqs);

    gg_tensor *q_decay = gg_unary(g, gg_scale(g, la->q_decay));
    gg_tensor *k_decay = gg_unary(g, gg_scale(g, la->k_decay));
    gg_tensor *diag_decay = gg_unary(g, gg_scale(g, la->diag_decay));
    gg_tensor *q_s = gg_binary(g, GG_MUL, Q, q_decay);
    gg_tensor *none_diag = gg_mul_mat(g, kv_old, gg_permute(g, q_s, 0, 2, 1, 3));
    gg_tensor *qk = gg_mul_mat(g, gg_permute(g, K, 0, 2, 1, 3), gg_permute(g, Q, 0, 2, 1, 3));
    qk = gg_binary(g, GG_MUL, qk, diag_decay);
    gg_tensor *v_trans = gg_cont(g, gg_permute(g, V, 1, 2, 0, 3));
    gg_tensor *diag = gg_mul_mat(g, v_trans, qk);
    gg_tensor *out = gg_binary(g, GG_ADD, none_diag, diag);
    gg_expand(g, out);
    gg_tensor *block_decay = gg_unary(g, gg_scale(g, slope_rate));
    block_decay = gg_reshape_3d(g, block_decay, 1, 1, nh);
    gg_tensor *kv_old_s = gg_binary(g, GG_MUL, kv_old, block_decay);
    gg_tensor *k_after = gg_binary(g, GG_MUL, K, k_decay);
    gg_tensor *k_trans = gg_cont(g, gg_permute(g, k_after, 1, 2, 0, 3));
    gg_tensor *kv_cur = gg_mul_mat(g, k_trans, v_trans);
    gg_tensor *kv_new = gg_binary(g, GG_ADD, kv_old_s, kv_cur);
    gg_expand(g, llm_op_cpy(c, kv_new, gg_view_1d(g, s_l, n_embd_s * n_seqs, 0)));

    out = gg_cont(g, gg_permute(g, out, 0, 2, 1, 3));
    out = gg_reshape_4d(g, out, out->ne[0] * out->ne[1], out->ne[2], 1, out->ne[3]);
    gg_tensor *normed = llm_norm_rms(c, out, llm_weight(c, hd * nh, 1));
    gg_tensor *gate = gg_unary(g, gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nh), cur));
    cur = gg_binary(g, GG_MUL, gate, normed);
    cur = gg_mul_mat(g, llm_weight(c, hd * nh, c->n_embd), cur);
    return gg_reshape_2d(g, cur, cur->ne[0], n_t * n_seqs);
}

/* the softmax attention layers: separate Q/K/V, RoPE */
static gg_tensor *softmax_attn(llm *c, gg_tensor *cur, int il)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t hd = L->head_dim_k, nh = L->n_head, nkv = L->n_kv_heads;
    gg_tensor *Q = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nh), cur);
    gg_tensor *K = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nkv), cur);
    gg_tensor *V = gg_mul_mat(g, llm_weight(c, c->n_embd, L->head_dim_v * nkv), cur);
    Q = gg_rope(g, gg_reshape_3d(g, Q, hd, nh, c->n_tokens), c->inp_pos, NULL);
    K = gg_rope(g, gg_reshape_3d(g, K, hd, nkv, c->n_tokens), c->inp_pos, NULL);
    V = gg_reshape_3d(g, V, L->head_dim_v, nkv, c->n_tokens);
    return llm_attn(c, &c->kv, llm_weight(c, L->head_dim_v * nh, c->n_embd), Q, K, V, NULL, NULL,
                    0);
}

static int build(llm *c, int mask_streams)
{
    gg_ctx *g = c->g;
    const kvp_layer *A = NULL, *LA = NULL;
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        if (L->kind == KVP_LAYER_LINEAR)
            LA = LA ? LA : L;
        else if (L->n_kv_heads)
            A = A ? A : L;
        if (llm_has_tensor(c, "blk.%d.attn_qkv.weight", il, 0) && L->kind != KVP_LAYER_LINEAR)
            return ARCH_NOT_MODELLED;   /* a fused QKV on an attention layer */
    }
    int64_t n_head = LA && LA->d_state ? (int64_t)LA->d_inner / LA->d_state
                                       : A ? A->n_head : c->m->n_heads;
    int64_t n_t = c->n_tokens / c->n_seqs;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_rs_inp rs;
    llm_rs_inp_build(c, &rs);
    if (A) {
        llm_attn_inp(c, &c->kv, A->head_dim_k, A->head_dim_v);
        /* build_attn_inp_kq_mask: one mask stream per sequence of the
         * ubatch (or one for a unified cache), not per cache stream */
        if (mask_streams != c->kv.n_stream)
            c->kv.mask = gg_input(gg_new_4d(g, c->fa ? GG_F16 : GG_F32, c->kv.n_kv,
                                            c->n_tokens / mask_streams, 1, mask_streams),
                                  "attn_inp_kq_mask");
    }
    llm_inp_pos(c, 1);
    llm_inp_out_ids(c);
    la_inp la;
    la.slopes = gg_input(gg_new_1d(g, GG_F32, n_head), "slopes");
    la.q_decay = gg_input(gg_new_4d(g, GG_F32, 1, n_head, n_t, c->n_seqs), "q_decay_exp");
    la.k_decay = gg_input(gg_new_4d(g, GG_F32, 1, n_head, n_t, c->n_seqs), "k_decay_exp");
    la.diag_decay = gg_input(gg_new_4d(g, GG_F32, n_t, n_t, n_head, c->n_seqs), "diag_decay_exp");
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        gg_tensor *res = cur;
        cur = L->kind == KVP_LAYER_LINEAR ? lightning(c, &rs, &la, cur, il)
                                          : softmax_attn(c, cur, il);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            res = gg_get_rows(g, res, c->inp_out_ids);
        }
        res = gg_scale(g, res);
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, res);
        cur = llm_norm_rms(c, ffn_inp, llm_weight(c, c->n_embd, 1));
        res = cur;
        llm_moe a = {0};
        llm_moe_shapes(c, il, &a);
        a.gating = LLM_MOE_SOFTMAX;
        a.probs_b = llm_has_tensor(c, "blk.%d.exp_probs_b.bias", il, 1);
        a.norm_w = 1;
        a.act = LLM_MOE_SILU;
        cur = llm_rs_moe_ffn(c, cur, &a, NULL);
        res = gg_scale(g, res);
        inpL = gg_binary(g, GG_ADD, cur, res);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

/* the size of the graph for another ubatch shape (n_tokens over n_seqs
 * sequences, n_outputs rows), as graph_reserve builds it */
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
    int unified = c->kv.n_stream == 1;
    int rc = build(&c1, unified ? 1 : (int)n_seqs);
    if (rc == 0)
        rc = gg_alloc_size(c1.g, 32 /* the CPU buffer's alignment */, size);
    gg_free(c1.g);
    return rc;
}

int arch_lightning_build(llm *c)
{
    if (!c->rs_size || c->rs_seq)
        return ARCH_NOT_MODELLED;
    /* that 1-sequence pass splits its tokens over the cache's streams: when
     * they do not divide, the attention output and the residual disagree
     * and llama.cpp aborts (ggml_add's ggml_can_repeat) */
    if (c->kv.n_stream > 1 && c->n_tokens_max % c->kv.n_stream)
        return ARCH_NOT_MODELLED;
    /* sched_reserve's last prompt pass uses one sequence [TAG_RESERVE_DIAG_DECAY];
     * only a real allocation sizes it (the metadata-only mode stops after
     * the first pass): say what it would reserve */
    if (c->n_seqs > 1) {
        uint64_t tg = 0, one = 0;
        if (other_pass(c, c->n_seqs, c->n_seqs, c->n_seqs, &tg) ||
            other_pass(c, c->n_tokens_max, 1, c->n_outputs, &one))
            return -1;
        snprintf(c->note, sizeof c->note,
                 "an allocating run also reserves the 1-sequence prompt graph: %llu bytes",
                 (unsigned long long)(one > tg ? one : tg));
    }
    return build(c, (int)c->kv.n_stream);
}
