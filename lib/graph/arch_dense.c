/* arch_dense.c - the reserved graph of llama.cpp's plain decoder-only
 * transformers: src/models/llama.cpp (llama, and Mistral's GGUFs),
 * qwen2.cpp and qwen3.cpp.  One pre-norm block per layer: RMS norm,
 * Q/K/V (with biases, or per-head Q/K norms), RoPE, attention over the
 * cache, a residual, RMS norm, SwiGLU FFN, a residual; the last layer
 * keeps only the output rows (out_ids); then the output norm and logits. */
#include <string.h>

#include "arch.h"

typedef struct dense_style {
    const char *arch;
    int qk_norm;        /* Qwen3: RMS norm per head on Q and K before RoPE */
    int qkv_bias;       /* Qwen2: biases on the Q/K/V projections */
} dense_style;

static const dense_style styles[] = {
    {"llama", 0, 0},
    {"qwen2", 0, 1},
    {"qwen3", 1, 0},
};

static const dense_style *find_style(const char *arch)
{
    for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++)
        if (!strcmp(styles[i].arch, arch))
            return &styles[i];
    return NULL;
}

int arch_dense_handles(const char *arch)
{
    return find_style(arch) != NULL;
}

/* build_qkv (separate projections), then the model's per-head norms and
 * RoPE, as each graph orders them */
static void qkv(llm *c, const dense_style *s, gg_tensor *cur, const kvp_layer *L, int il,
                gg_tensor **q, gg_tensor **k, gg_tensor **v)
{
    gg_ctx *g = c->g;
    int64_t hd = L->head_dim_k, nh = L->n_head, nkv = L->n_kv_heads;
    int bias = llm_has_tensor(c, "blk.%d.attn_q.bias", il, s->qkv_bias);
    gg_tensor *Q = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nh), cur);
    if (bias)
        Q = gg_binary(g, GG_ADD, Q, llm_weight(c, hd * nh, 1));
    gg_tensor *K = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nkv), cur);
    if (bias)
        K = gg_binary(g, GG_ADD, K, llm_weight(c, hd * nkv, 1));
    gg_tensor *V = gg_mul_mat(g, llm_weight(c, c->n_embd, L->head_dim_v * nkv), cur);
    if (bias)
        V = gg_binary(g, GG_ADD, V, llm_weight(c, L->head_dim_v * nkv, 1));
    Q = gg_reshape_3d(g, Q, hd, nh, c->n_tokens);
    K = gg_reshape_3d(g, K, hd, nkv, c->n_tokens);
    V = gg_reshape_3d(g, V, L->head_dim_v, nkv, c->n_tokens);
    gg_tensor *factors = llm_has_tensor(c, "rope_freqs.weight", 0, 0)
        ? llm_weight(c, hd / 2, 1) : NULL;
    if (s->qk_norm)
        Q = llm_norm_rms(c, Q, llm_weight(c, hd, 1));
    Q = gg_rope(g, Q, c->inp_pos, factors);
    if (s->qk_norm)
        K = llm_norm_rms(c, K, llm_weight(c, hd, 1));
    K = gg_rope(g, K, c->inp_pos, factors);
    *q = Q;
    *k = K;
    *v = V;
}

int arch_dense_build(llm *c)
{
    const dense_style *s = find_style(c->arch);
    if (!s)
        return ARCH_NOT_MODELLED;
    gg_ctx *g = c->g;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_inp_pos(c, 1);
    const kvp_layer *L0 = &c->m->layers[0];
    llm_attn_inp(c, &c->kv, L0->head_dim_k, L0->head_dim_v);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        gg_tensor *q, *k, *v;
        qkv(c, s, cur, L, il, &q, &k, &v);
        cur = llm_attn(c, &c->kv, llm_weight(c, L->head_dim_v * L->n_head, c->n_embd), q, k, v,
                       NULL, NULL, 0);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, llm_weight(c, c->n_embd, 1));
        cur = llm_ffn_par(c, cur, c->m->n_ff, 0, 0, 0);
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}
