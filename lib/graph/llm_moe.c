/* llm_moe.c - build_moe_ffn of llama.cpp v0.5.0 (src/llama-graph.cpp),
 * node for node (llm_moe.h). */
#include "llm_moe.h"

/* ggml_argsort_top_k: the full argsort (i32, a's shape), then a view of
 * its first k columns */
gg_tensor *llm_argsort_top_k(llm *c, gg_tensor *a, int64_t k)
{
    gg_tensor *s = gg_new_op(c->g, GG_ARGSORT, GG_I32, 4, a->ne, a, NULL, NULL);
    return gg_view_4d(c->g, s, k, s->ne[1], s->ne[2], s->ne[3], s->nb[1], s->nb[2], s->nb[3], 0);
}

gg_tensor *llm_sum_rows(llm *c, gg_tensor *a)
{
    int64_t ne[4] = {1, a->ne[1], a->ne[2], a->ne[3]};
    return gg_new_op(c->g, GG_SUM_ROWS, a->type, 4, ne, a, NULL, NULL);
}

/* the experts' weights [1, n_expert_used, n_tokens] for logits, and the
 * selected experts (a view of an argsort) */
static gg_tensor *route(llm *c, gg_tensor *logits, const llm_moe *p, gg_tensor **selected)
{
    gg_ctx *g = c->g;
    int64_t n_tokens = logits->ne[1];
    if (p->gate_inp_b)
        logits = gg_binary(g, GG_ADD, logits, llm_weight(c, p->n_expert, 1));
    gg_tensor *probs;
    switch (p->gating) {
    case LLM_MOE_SIGMOID:
        probs = gg_unary(g, logits);
        break;
    case LLM_MOE_SOFTMAX_WEIGHT:
        probs = logits;
        break;
    case LLM_MOE_SQRT_SOFTPLUS:
        probs = gg_dup_op(g, GG_SQRT, gg_unary(g, logits));
        break;
    default:
        probs = gg_soft_max_ext(g, logits, NULL, NULL);
        break;
    }
    gg_tensor *sel = probs;
    if (p->exp_probs_b)
        sel = gg_binary(g, GG_ADD, probs, llm_weight(c, p->n_expert, 1));
    if (p->weight_before_ffn)   /* Llama 4 selects on the logits */
        sel = logits;
    if (p->grove)
        sel = gg_unary(g, logits);
    if (p->n_groups > 1 && n_tokens > 0) {
        int64_t per_group = p->n_expert / p->n_groups;
        gg_tensor *groups = gg_reshape_3d(g, sel, per_group, p->n_groups, n_tokens);
        gg_tensor *scores = llm_argsort_top_k(c, groups, 2);
        scores = gg_get_rows(g, gg_reshape_4d(g, groups, 1, groups->ne[0], groups->ne[1],
                                              groups->ne[2]), scores);
        scores = llm_sum_rows(c, gg_reshape_3d(g, scores, scores->ne[1], scores->ne[2],
                                               scores->ne[3]));
        scores = gg_reshape_2d(g, scores, scores->ne[1], scores->ne[2]);
        gg_tensor *top = llm_argsort_top_k(c, scores, p->n_group_used);
        sel = gg_get_rows(g, groups, top);
        sel = gg_set_rows(g, gg_dup_op(g, GG_FILL, groups), sel, top);
        sel = gg_reshape_2d(g, sel, p->n_expert, n_tokens);
    }
    *selected = llm_argsort_top_k(c, sel, p->n_expert_used);
    if (p->grove && p->n_expert != p->n_expert_full) {
        /* the chunk expert of each selected expert: i32 -> f32, scaled, -> i32 */
        gg_tensor *f = gg_cast(g, *selected, GG_F32);
        *selected = gg_cast(g, gg_scale(g, f), GG_I32);
        probs = gg_reshape_3d(g, probs, 1, p->n_expert_full, n_tokens);
    } else {
        probs = gg_reshape_3d(g, probs, 1, p->n_expert, n_tokens);
    }
    gg_tensor *w = gg_get_rows(g, probs, *selected);
    if (p->gating == LLM_MOE_SOFTMAX_WEIGHT) {
        w = gg_reshape_2d(g, w, p->n_expert_used, n_tokens);
        w = gg_soft_max_ext(g, w, NULL, NULL);
        w = gg_reshape_3d(g, w, 1, p->n_expert_used, n_tokens);
    }
    if (p->norm_w) {
        w = gg_reshape_2d(g, w, p->n_expert_used, n_tokens);
        gg_tensor *sum = llm_sum_rows(c, w);
        sum = gg_dup_op(g, GG_CLAMP, sum);
        w = gg_binary(g, GG_DIV, w, sum);
        w = gg_reshape_3d(g, w, 1, p->n_expert_used, n_tokens);
    }
    if (p->scale_w)
        w = gg_scale(g, w);
    return w;
}

gg_tensor *llm_moe_ffn(llm *c, gg_tensor *cur, const llm_moe *p)
{
    gg_ctx *g = c->g;
    int64_t n_embd = cur->ne[0], n_tokens = cur->ne[1], n_used = p->n_expert_used;
    gg_tensor *logits = p->probs_in ? p->probs_in
                                    : gg_mul_mat(g, llm_weight(c, n_embd, p->n_expert), cur);
    gg_tensor *selected;
    gg_tensor *weights = route(c, logits, p, &selected);
    gg_expand(g, weights);   /* "call early so that topk-moe can be used" */

    cur = gg_reshape_3d(g, cur, n_embd, 1, n_tokens);
    if (p->weight_before_ffn) {
        gg_tensor *rep = gg_repeat_4d(g, cur, n_embd, n_used, n_tokens, 1);
        cur = gg_binary(g, GG_MUL, rep, weights);
    }
    gg_tensor *up, *gate;
    if (p->gate_up_exps) {
        gg_tensor *gu = gg_mul_mat_id(g, llm_weight_3d(c, n_embd, 2 * p->n_ff, p->n_expert), cur,
                                      selected);
        if (p->up_b)
            gu = gg_new_op(g, GG_ADD_ID, gu->type, 4, gu->ne, gu,
                           llm_weight(c, 2 * p->n_ff, p->n_expert), selected);
        gate = gg_view_3d(g, gu, p->n_ff, gu->ne[1], gu->ne[2], gu->nb[1], gu->nb[2], 0);
        up = gg_view_3d(g, gu, p->n_ff, gu->ne[1], gu->ne[2], gu->nb[1], gu->nb[2],
                        (uint64_t)p->n_ff * gu->nb[0]);
    } else {
        up = gg_mul_mat_id(g, llm_weight_3d(c, n_embd, p->n_ff, p->n_expert), cur, selected);
        if (p->up_b)
            up = gg_new_op(g, GG_ADD_ID, up->type, 4, up->ne, up,
                           llm_weight(c, p->n_ff, p->n_expert), selected);
        gate = p->gate_exps
            ? gg_mul_mat_id(g, llm_weight_3d(c, n_embd, p->n_ff, p->n_expert), cur, selected)
            : up;
        if (p->gate_b)
            gate = gg_new_op(g, GG_ADD_ID, gate->type, 4, gate->ne, gate,
                             llm_weight(c, p->n_ff, p->n_expert), selected);
    }
    int has_gate = p->gate_exps || p->gate_up_exps;
    switch (p->act) {
    case LLM_MOE_SWIGLU_OAI:
        cur = gg_glu_split(g, gate, up);
        break;
    case LLM_MOE_RELU_SQR:
        cur = gg_dup_op(g, GG_SQR, gg_unary(g, gate));
        break;
    default:
        if (p->act == LLM_MOE_SILU && p->gate_exps && p->clamp) {
            up = gg_dup_op(g, GG_CLAMP, up);
            gg_tensor *act = gg_dup_op(g, GG_CLAMP, gg_unary(g, gate));
            cur = gg_binary(g, GG_MUL, act, up);
        } else {
            cur = has_gate ? gg_glu_split(g, gate, up) : gg_unary(g, gate);
        }
        break;
    }
    gg_tensor *experts = gg_mul_mat_id(g, llm_weight_3d(c, p->n_ff, n_embd, p->n_expert), cur,
                                       selected);
    if (p->down_b)
        experts = gg_new_op(g, GG_ADD_ID, experts->type, 4, experts->ne, experts,
                            llm_weight(c, n_embd, p->n_expert), selected);
    if (!p->weight_before_ffn)
        experts = gg_binary(g, GG_MUL, experts, weights);
    gg_expand(g, experts);

    /* the views first, then the adds */
    int64_t n_sum = p->n_used_sum ? p->n_used_sum : n_used;
    gg_tensor *views[LLM_MOE_MAX_USED] = {NULL};
    if (n_sum > LLM_MOE_MAX_USED)
        n_sum = LLM_MOE_MAX_USED;   /* builders decline more */
    for (int64_t i = 0; i < n_sum; i++) {
        views[i] = gg_view_2d(g, experts, n_embd, n_tokens, experts->nb[2],
                              (uint64_t)i * experts->nb[1]);
        gg_expand(g, views[i]);
    }
    gg_tensor *out = views[0];
    for (int64_t i = 1; i < n_sum; i++) {
        out = gg_binary(g, GG_ADD, out, views[i]);
        gg_expand(g, out);
    }
    if (n_sum == 1)
        out = gg_cont(g, out);
    return out;
}
