/* llm_rs_moe.c - build_moe_ffn for the recurrent hybrids (llm_rs_moe.h). */
#include "llm_rs.h"
#include "llm_rs_moe.h"

void llm_moe_shapes(const llm *c, int il, llm_moe *a)
{
    a->n_expert = llm_tensor_ne1(c, "blk.%d.ffn_gate_inp.weight", il, (int64_t)c->m->n_expert);
    a->n_expert_used = c->m->n_expert_used;
    a->n_ff = llm_tensor_ne0(c, "blk.%d.ffn_down_exps.weight", il, (int64_t)c->m->n_ff_exp);
    a->gate_up = llm_has_tensor(c, "blk.%d.ffn_gate_up_exps.weight", il, 0);
}

gg_tensor *llm_rs_moe_ffn(llm *c, gg_tensor *cur, const llm_moe *a, gg_tensor *probs_in)
{
    gg_ctx *g = c->g;
    int64_t n_embd = cur->ne[0], n_tokens = cur->ne[1], k = a->n_expert_used, n_ff = a->n_ff;
    gg_tensor *logits = probs_in ? probs_in
                                 : gg_mul_mat(g, llm_weight(c, n_embd, a->n_expert), cur);
    gg_tensor *probs = a->gating == LLM_MOE_SOFTMAX ? gg_soft_max_ext(g, logits, NULL, NULL)
                                                    : gg_unary(g, logits);
    gg_tensor *sel = probs;
    if (a->probs_b)
        sel = gg_binary(g, GG_ADD, probs, llm_weight(c, a->n_expert, 1));
    /* ggml_argsort_top_k: the argsort, viewed to its first k */
    gg_tensor *order = gg_new_op(g, GG_ARGSORT, GG_I32, 4, sel->ne, sel, NULL, NULL);
    gg_tensor *selected = gg_view_4d(g, order, k, order->ne[1], order->ne[2], order->ne[3],
                                     order->nb[1], order->nb[2], order->nb[3], 0);
    probs = gg_reshape_3d(g, probs, 1, a->n_expert, n_tokens);
    gg_tensor *weights = gg_get_rows(g, probs, selected);
    if (a->norm_w) {
        weights = gg_reshape_2d(g, weights, k, n_tokens);
        int64_t ne[4] = {1, weights->ne[1], weights->ne[2], weights->ne[3]};
        gg_tensor *sum = gg_new_op(g, GG_SUM_ROWS, GG_F32, 4, ne, weights, NULL, NULL);
        sum = gg_dup_op(g, GG_CLAMP, sum);
        weights = gg_binary(g, GG_DIV, weights, sum);
        weights = gg_reshape_3d(g, weights, 1, k, n_tokens);
    }
    gg_expand(g, weights);

    cur = gg_reshape_3d(g, cur, n_embd, 1, n_tokens);
    gg_tensor *up, *gate;
    if (a->gate_up) {
        gg_tensor *gu = gg_mul_mat_id(g, llm_weight_3d(c, n_embd, 2 * n_ff, a->n_expert), cur,
                                      selected);
        gate = gg_view_3d(g, gu, n_ff, gu->ne[1], gu->ne[2], gu->nb[1], gu->nb[2], 0);
        up = gg_view_3d(g, gu, n_ff, gu->ne[1], gu->ne[2], gu->nb[1], gu->nb[2],
                        (uint64_t)n_ff * gu->nb[0]);
    } else {
        up = gg_mul_mat_id(g, llm_weight_3d(c, n_embd, n_ff, a->n_expert), cur, selected);
        gate = a->act == LLM_MOE_SILU
            ? gg_mul_mat_id(g, llm_weight_3d(c, n_embd, n_ff, a->n_expert), cur, selected)
            : up;
    }
    if (a->act == LLM_MOE_SILU)
        cur = gg_glu_split(g, gate, up);
    else
        cur = gg_dup_op(g, GG_SQR, gg_unary(g, gate));
    gg_tensor *experts = gg_mul_mat_id(g, llm_weight_3d(c, n_ff, n_embd, a->n_expert), cur,
                                       selected);
    experts = gg_binary(g, GG_MUL, experts, weights);
    gg_expand(g, experts);
    gg_tensor *views[64] = {0};
    int64_t n = k < 1 ? 1 : k < 64 ? k : 64;
    for (int64_t i = 0; i < n; i++) {
        views[i] = gg_view_2d(g, experts, n_embd, n_tokens, experts->nb[2],
                              (uint64_t)i * experts->nb[1]);
        gg_expand(g, views[i]);
    }
    gg_tensor *out = views[0];
    for (int64_t i = 1; i < n; i++) {
        out = gg_binary(g, GG_ADD, out, views[i]);
        gg_expand(g, out);
    }
    if (n == 1)
        out = gg_cont(g, out);
    return out;
}
