/* llm_moe_ds.c - llm_graph_context::build_moe_ffn (src/llama-graph.cpp of
 * llama.cpp v0.5.0) with the options DeepSeek's MoE blocks use: softmax,
 * sigmoid or weight-softmax routing, the selection bias (exp_probs_b),
 * group-limited routing, normalised and scaled weights, separate or fused
 * gate/up experts, SiLU.  The generic build_moe_ffn lives in another
 * builder (llm_moe.c); this one is meant to be unified with it. */
#include "llm_mla.h"

/* ggml_argsort_top_k: the argsort (I32, the input's shape), then a view
 * of its first k columns */
static gg_tensor *argsort_top_k(gg_ctx *g, gg_tensor *a, int64_t k)
{
    gg_tensor *s = gg_new_op(g, GG_ARGSORT, GG_I32, 4, a->ne, a, NULL, NULL);
    return gg_view_4d(g, s, k, s->ne[1], s->ne[2], s->ne[3], s->nb[1], s->nb[2], s->nb[3], 0);
}

static gg_tensor *sum_rows(gg_ctx *g, gg_tensor *a)
{
    int64_t ne[4] = {1, a->ne[1], a->ne[2], a->ne[3]};
    return gg_new_op(g, GG_SUM_ROWS, a->type, 4, ne, a, NULL, NULL);
}

gg_tensor *ds_moe_ffn(llm *c, gg_tensor *cur, const ds_moe *p)
{
    gg_ctx *g = c->g;
    int64_t n_embd = cur->ne[0], nt = cur->ne[1];
    int64_t ne = p->n_expert, nu = p->n_expert_used;

    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, n_embd, ne), cur);
    gg_tensor *probs;
    switch (p->gating) {
    case 2: probs = gg_unary(g, logits); break;                   /* sigmoid */
    case 3: probs = logits; break;                                /* softmax on the weights */
    case 4: probs = gg_dup_op(g, GG_SQRT, gg_unary(g, logits)); break; /* sqrt(softplus) */
    default: probs = gg_soft_max_ext(g, logits, NULL, NULL); break;
    }
    gg_tensor *sel = probs;
    if (p->probs_b)
        sel = gg_binary(g, GG_ADD, probs, llm_weight(c, ne, 1));

    if (p->n_groups > 1 && nt > 0) {
        int64_t per = ne / p->n_groups;
        gg_tensor *groups = gg_reshape_3d(g, sel, per, p->n_groups, nt);
        gg_tensor *scores = argsort_top_k(g, groups, 2);
        scores = gg_get_rows(g, gg_reshape_4d(g, groups, 1, groups->ne[0], groups->ne[1],
                                              groups->ne[2]), scores);
        scores = sum_rows(g, gg_reshape_3d(g, scores, scores->ne[1], scores->ne[2],
                                           scores->ne[3]));
        scores = gg_reshape_2d(g, scores, scores->ne[1], scores->ne[2]);
        gg_tensor *top = argsort_top_k(g, scores, p->n_group_used);
        sel = gg_get_rows(g, groups, top);
        sel = gg_set_rows(g, gg_dup_op(g, GG_FILL, groups), sel, top);
        sel = gg_reshape_2d(g, sel, ne, nt);
    }

    gg_tensor *selected = argsort_top_k(g, sel, nu);
    probs = gg_reshape_3d(g, probs, 1, ne, nt);
    gg_tensor *weights = gg_get_rows(g, probs, selected);
    if (p->gating == 3) {
        weights = gg_reshape_2d(g, weights, nu, nt);
        weights = gg_soft_max_ext(g, weights, NULL, NULL);
        weights = gg_reshape_3d(g, weights, 1, nu, nt);
    }
    if (p->norm_w) {
        weights = gg_reshape_2d(g, weights, nu, nt);
        gg_tensor *sum = sum_rows(g, weights);
        sum = gg_dup_op(g, GG_CLAMP, sum);
        weights = gg_binary(g, GG_DIV, weights, sum);
        weights = gg_reshape_3d(g, weights, 1, nu, nt);
    }
    if (p->scale_w)
        weights = gg_scale(g, weights);
    gg_expand(g, weights);

    cur = gg_reshape_3d(g, cur, n_embd, 1, nt);
    gg_tensor *up, *gate;
    if (p->gate_up) {
        gg_tensor *gu = gg_mul_mat_id(g, llm_weight_3d(c, n_embd, 2 * p->n_ff_exp, ne), cur,
                                      selected);
        int64_t n_ff = gu->ne[0] / 2;
        gate = gg_view_3d(g, gu, n_ff, gu->ne[1], gu->ne[2], gu->nb[1], gu->nb[2], 0);
        up = gg_view_3d(g, gu, n_ff, gu->ne[1], gu->ne[2], gu->nb[1], gu->nb[2],
                        (uint64_t)n_ff * gu->nb[0]);
    } else {
        up = gg_mul_mat_id(g, llm_weight_3d(c, n_embd, p->n_ff_exp, ne), cur, selected);
        gate = gg_mul_mat_id(g, llm_weight_3d(c, n_embd, p->n_ff_exp, ne), cur, selected);
    }
    cur = gg_glu_split(g, gate, up);
    gg_tensor *experts = gg_mul_mat_id(g, llm_weight_3d(c, p->n_ff_exp, n_embd, ne), cur,
                                       selected);
    experts = gg_binary(g, GG_MUL, experts, weights);
    gg_expand(g, experts);

    gg_tensor *views[512] = {0};   /* LLAMA_MAX_EXPERTS */
    int64_t nv = nu < 512 ? nu : 512;
    for (int64_t i = 0; i < nv; i++) {
        views[i] = gg_view_2d(g, experts, n_embd, nt, experts->nb[2],
                              (uint64_t)i * experts->nb[1]);
        gg_expand(g, views[i]);
    }
    gg_tensor *out = views[0];
    for (int64_t i = 1; i < nv; i++) {
        out = gg_binary(g, GG_ADD, out, views[i]);
        gg_expand(g, out);
    }
    if (nv == 1)
        out = gg_cont(g, out);
    return out;
}
