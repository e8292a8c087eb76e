/* arch_moe_qwen.c - the MoE graphs shaped like Qwen's: src/models/
 * qwen3moe.cpp, qwen2moe.cpp, olmoe.cpp, qwen3vlmoe.cpp, minimax-m2.cpp.
 * Each layer: RMS norm, Q/K/V, the model's Q/K norms (per head, or over the
 * whole row) and RoPE, attention, a residual, RMS norm, the MoE FFN (with
 * Qwen2-MoE's gated shared expert), a residual; then the output. */
#include <string.h>

#include "arch_moe.h"

enum { QK_NONE, QK_HEADS, QK_FLAT };

typedef struct moe_style {
    const char *arch;
    int qk_norm;        /* per head after the reshape (Qwen3), or over the whole row (OLMoE) */
    int norm_w;         /* build_moe_ffn's norm_w */
    int shexp_gated;    /* Qwen2-MoE: a shared expert behind a sigmoid gate */
    int vl;             /* Qwen3-VL: M-RoPE (4 positions a token) and deepstack inputs */
    int wo_b;           /* the graph passes the attention output's bias */
    int keyed;          /* MiniMax-M2: the gating function from the GGUF, a selection bias */
    int ff_exps;        /* the experts are n_ff (not n_ff_exp) wide */
} moe_style;

static const moe_style styles[] = {
    {"qwen3moe", QK_HEADS, 1, 0, 0, 1, 0, 0},
    {"qwen2moe", QK_NONE, 0, 1, 0, 1, 0, 0},
    {"olmoe", QK_FLAT, 0, 0, 0, 0, 0, 1},
    {"qwen3vlmoe", QK_HEADS, 1, 0, 1, 1, 0, 0},
    {"minimax-m2", QK_FLAT, 1, 0, 0, 0, 1, 1},
};

static const moe_style *find_style(const char *arch)
{
    for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++)
        if (!strcmp(styles[i].arch, arch))
            return &styles[i];
    return NULL;
}

/* the shared expert of Qwen2-MoE: a SwiGLU FFN times sigmoid(gate), the
 * sigmoid written as silu(x) / x */
static gg_tensor *shexp_gated(llm *c, gg_tensor *cur, int64_t n_ff)
{
    gg_ctx *g = c->g;
    gg_tensor *gate_inp = gg_mul_mat(g, llm_weight(c, c->n_embd, 1), cur);
    gg_tensor *gate = gg_binary(g, GG_DIV, gg_unary(g, gate_inp), gate_inp);
    gg_tensor *ffn = llm_ffn_par(c, cur, n_ff, 0, 0, 0);
    return gg_binary(g, GG_MUL, ffn, gate);
}

int moe_build_qwen(llm *c)
{
    const moe_style *s = find_style(moe_arch_of(c));
    if (!s)
        return ARCH_NOT_MODELLED;
    gg_ctx *g = c->g;
    llm_moe p;
    moe_defaults(c, &p);
    p.norm_w = s->norm_w;
    if (s->keyed) {
        p.gating = moe_gating_key(c);
        if (!moe_gating_ok(&p))
            return ARCH_NOT_MODELLED;   /* llama.cpp aborts without one */
    }
    /* Qwen3-VL's deepstack: the input row holds n_deepstack more embeddings
     * (zero padding for tokens), added after the first layers */
    int64_t n_deep = s->vl ? (int64_t)llm_hparam(c, "n_deepstack_layers", 0) : 0;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd * (1 + n_deep), 0);
    gg_tensor *inp_embd = inpL;
    llm_inp_pos(c, s->vl ? 4 : 1);
    const kvp_layer *L0 = &c->m->layers[0];
    llm_attn_inp(c, &c->kv, L0->head_dim_k, L0->head_dim_v);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        int64_t hd = L->head_dim_k;
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, moe_vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        moe_qkv(c, cur, il, s->qk_norm == QK_FLAT, &q, &k, &v);
        if (s->qk_norm == QK_FLAT) {
            q = llm_norm_rms(c, q, moe_vec(c, hd * L->n_head));
            k = llm_norm_rms(c, k, moe_vec(c, hd * L->n_kv_heads));
            q = gg_reshape_3d(g, q, hd, L->n_head, c->n_tokens);
            k = gg_reshape_3d(g, k, hd, L->n_kv_heads, c->n_tokens);
            v = gg_reshape_3d(g, v, L->head_dim_v, L->n_kv_heads, c->n_tokens);
        }
        if (s->qk_norm == QK_HEADS)
            q = llm_norm_rms(c, q, moe_vec(c, hd));
        q = gg_rope(g, q, c->inp_pos, NULL);
        if (s->qk_norm == QK_HEADS)
            k = llm_norm_rms(c, k, moe_vec(c, hd));
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = moe_attn_b(c, il, q, k, v, s->wo_b);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, moe_vec(c, c->n_embd));
        if (s->keyed)
            p.exp_probs_b = moe_has(c, "blk.%d.exp_probs_b.bias", il, 1);
        if (s->ff_exps)   /* OLMoE, MiniMax-M2: experts feed_forward_length wide */
            p.n_ff = (int64_t)c->m->n_ff;
        gg_tensor *moe_out = llm_moe_ffn(c, cur, &p);
        if (s->shexp_gated) {
            int64_t n_ff_sh = c->m->n_ff_shexp ? (int64_t)c->m->n_ff_shexp : (int64_t)c->m->n_ff;
            moe_out = gg_binary(g, GG_ADD, moe_out, shexp_gated(c, cur, n_ff_sh));
        }
        inpL = gg_binary(g, GG_ADD, moe_out, ffn_inp);
        if (il < n_deep)
            inpL = gg_binary(g, GG_ADD, inpL,
                             gg_view_2d(g, inp_embd, c->n_embd, c->n_tokens, inp_embd->nb[1],
                                        (uint64_t)(il + 1) * (uint64_t)c->n_embd * 4));
    }
    return moe_finish(c, inpL);
}
