/* llm_deltanet.c - delta-net building blocks (llm_deltanet.h). */
#include "llm_deltanet.h"

gg_tensor *llm_op_gated_delta_net(llm *c, gg_tensor *q, gg_tensor *k, gg_tensor *v, gg_tensor *g,
                                  gg_tensor *beta, gg_tensor *state, int64_t K)
{
    int64_t S_v = v->ne[0], H = v->ne[1], n_tokens = v->ne[2], n_seqs = v->ne[3];
    int64_t ne[2] = {S_v * H, n_tokens * n_seqs + K * S_v * n_seqs};
    gg_tensor *t = gg_new_op(c->g, GG_GATED_DELTA, GG_F32, 2, ne, q, k, v);
    t->src[3] = g;
    t->src[4] = beta;
    t->src[5] = state;
    return t;
}

gg_tensor *llm_gdn_l2_norm(llm *c, gg_tensor *x)
{
    return gg_scale(c->g, gg_rms_norm(c->g, x));
}

gg_tensor *llm_dn_conv_state(llm *c, llm_rs_inp *inp, gg_tensor *conv_all, gg_tensor *qkv,
                             int64_t kernel, int64_t channels, int64_t n_embd_r)
{
    gg_ctx *g = c->g;
    int64_t n_seqs = c->n_seqs;
    gg_tensor *states = llm_build_rs(c, inp, conv_all, n_embd_r, n_seqs, NULL, NULL);
    states = gg_reshape_3d(g, states, kernel - 1, channels, n_seqs);
    gg_tensor *input = gg_concat(g, states, gg_transpose(g, qkv), 0);
    int64_t s_idx = input->ne[0] - states->ne[0];
    gg_tensor *last = gg_view_3d(g, input, kernel - 1, channels, n_seqs, input->nb[1], input->nb[2],
                                 gg_row_size(input->type, s_idx));
    gg_tensor *update = gg_view_2d(g, conv_all, (kernel - 1) * channels, n_seqs, conv_all->nb[1], 0);
    gg_expand(g, llm_op_cpy(c, last, update));
    return input;
}

gg_tensor *llm_dn_recurrent_attn(llm *c, gg_tensor *ssm_all, gg_tensor *q, gg_tensor *k,
                                 gg_tensor *v, gg_tensor *gate, gg_tensor *b, gg_tensor *s,
                                 int64_t n_embd_s)
{
    gg_ctx *g = c->g;
    int64_t S_v = v->ne[0], H_v = v->ne[1], n_tokens = v->ne[2], n_seqs = v->ne[3];
    gg_tensor *r = llm_op_gated_delta_net(c, q, k, v, gate, b, s, 1);
    gg_tensor *out = gg_view_4d(g, r, S_v, H_v, n_tokens, n_seqs, (uint64_t)S_v * 4,
                                (uint64_t)(S_v * H_v) * 4, (uint64_t)(S_v * H_v * n_tokens) * 4, 0);
    gg_tensor *state = gg_view_4d(g, r, S_v, S_v, H_v, n_seqs, (uint64_t)S_v * 4,
                                  (uint64_t)(S_v * S_v) * 4, (uint64_t)(S_v * S_v * H_v) * 4,
                                  (uint64_t)(S_v * H_v * n_tokens * n_seqs) * 4);
    gg_expand(g, llm_op_cpy(c, state, gg_view_2d(g, ssm_all, n_embd_s, n_seqs, ssm_all->nb[1], 0)));
    return out;
}
