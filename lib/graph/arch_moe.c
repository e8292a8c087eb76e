/* arch_moe.c - the reserved graph of llama.cpp's mixture-of-experts
 * decoders with plain (non-MLA, one cache) attention: src/models/
 * qwen3moe.cpp, qwen2moe.cpp, olmoe.cpp.  Each layer: RMS norm, Q/K/V
 * (build_qkv), the model's Q/K norms and RoPE, attention over the cache,
 * a residual, RMS norm, the MoE FFN (llm_moe.c) with the model's shared
 * expert, a residual; the last layer keeps only the output rows; then the
 * output norm and the logits. */
#include <string.h>

#include "arch.h"
#include "llm_hparams.h"
#include "llm_moe.h"

static gg_tensor *vec(llm *c, int64_t n)
{
    return llm_weight(c, n, 1);
}

static int has(llm *c, const char *fmt, int il, int dflt)
{
    return llm_has_tensor(c, fmt, il, dflt);
}

/* build_inp_embd, build_inp_pos, build_attn_inp_kv, build_inp_out_ids */
static gg_tensor *begin(llm *c)
{
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_inp_pos(c, 1);
    const kvp_layer *L0 = &c->m->layers[0];
    llm_attn_inp(c, &c->kv, L0->head_dim_k, L0->head_dim_v);
    llm_inp_out_ids(c);
    return inpL;
}

/* the output norm and the logits */
static int finish(llm *c, gg_tensor *cur)
{
    gg_tensor *norm = llm_norm_rms(c, cur, vec(c, c->n_embd));
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(c->g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(c->g, logits);
    return 0;
}

static const char *arch_of(const llm *c)
{
    return c->m->gguf_arch[0] ? c->m->gguf_arch : c->m->arch;
}

/* the loaders that create only the fused QKV (a config.json has no tensor
 * list to say) */
static int fused_only(const llm *c)
{
    return !strcmp(arch_of(c), "dbrx") || !strcmp(arch_of(c), "bailingmoe2");
}

/* build_qkv: the fused projection (attn_qkv) or three; biases where the
 * GGUF has them (a config.json: where attention_bias says); reshaped to
 * heads unless `flat` */
static void qkv_clamp(llm *c, gg_tensor *cur, int il, int flat, int clamp, gg_tensor **q,
                      gg_tensor **k, gg_tensor **v)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t hq = L->head_dim_k, nq = L->n_head, hk = L->head_dim_k, nk = L->n_kv_heads;
    int64_t hv = L->head_dim_v, nv = L->n_kv_heads, T = c->n_tokens;
    int64_t eq = hq * nq, ek = hk * nk, ev = hv * nv;
    int bias = c->m->attention_bias > 0;
    gg_tensor *Q, *K, *V;
    if (has(c, "blk.%d.attn_qkv.weight", il, fused_only(c))) {
        gg_tensor *t = gg_mul_mat(g, llm_weight(c, c->n_embd, eq + ek + ev), cur);
        if (has(c, "blk.%d.attn_qkv.bias", il, bias))
            t = gg_binary(g, GG_ADD, t, vec(c, eq + ek + ev));
        else if (has(c, "blk.%d.attn_q.bias", il, 0) && has(c, "blk.%d.attn_k.bias", il, 0) &&
                 has(c, "blk.%d.attn_v.bias", il, 0))
            t = gg_binary(g, GG_ADD, t,
                          gg_concat(g, gg_concat(g, vec(c, eq), vec(c, ek), 0), vec(c, ev), 0));
        if (!flat && clamp)
            t = gg_dup_op(g, GG_CLAMP, t);
        uint64_t es = gg_row_size(t->type, 1);
        if (!flat) {
            Q = gg_view_3d(g, t, hq, nq, T, es * (uint64_t)hq, t->nb[1], 0);
            K = gg_view_3d(g, t, hk, nk, T, es * (uint64_t)hk, t->nb[1], es * (uint64_t)eq);
            V = gg_view_3d(g, t, hv, nv, T, es * (uint64_t)hv, t->nb[1],
                           es * (uint64_t)(eq + ek));
        } else {
            Q = gg_cont(g, gg_view_2d(g, t, eq, T, t->nb[1], 0));
            K = gg_cont(g, gg_view_2d(g, t, ek, T, t->nb[1], es * (uint64_t)eq));
            V = gg_cont(g, gg_view_2d(g, t, ev, T, t->nb[1], es * (uint64_t)(eq + ek)));
        }
    } else {
        Q = gg_mul_mat(g, llm_weight(c, c->n_embd, eq), cur);
        if (has(c, "blk.%d.attn_q.bias", il, bias))
            Q = gg_binary(g, GG_ADD, Q, vec(c, eq));
        if (!flat && clamp)
            Q = gg_dup_op(g, GG_CLAMP, Q);
        K = gg_mul_mat(g, llm_weight(c, c->n_embd, ek), cur);
        if (has(c, "blk.%d.attn_k.bias", il, bias))
            K = gg_binary(g, GG_ADD, K, vec(c, ek));
        if (!flat && clamp)
            K = gg_dup_op(g, GG_CLAMP, K);
        V = gg_mul_mat(g, llm_weight(c, c->n_embd, ev), cur);
        if (has(c, "blk.%d.attn_v.bias", il, bias))
            V = gg_binary(g, GG_ADD, V, vec(c, ev));
        if (!flat && clamp)
            V = gg_dup_op(g, GG_CLAMP, V);
        if (!flat) {
            Q = gg_reshape_3d(g, Q, hq, nq, T);
            K = gg_reshape_3d(g, K, hk, nk, T);
            V = gg_reshape_3d(g, V, hv, nv, T);
        }
    }
    *q = Q;
    *k = K;
    *v = V;
}

/* build_qkv for the architectures that leave f_clamp_kqv at 0 */
static void qkv(llm *c, gg_tensor *cur, int il, int flat, gg_tensor **q, gg_tensor **k,
                gg_tensor **v)
{
    qkv_clamp(c, cur, il, flat, 0, q, k, v);
}

/* build_attn over the layer's cache, the output projection and its bias
 * (where the GGUF has one and the graph passes it) */
static gg_tensor *attn_b(llm *c, int il, gg_tensor *q, gg_tensor *k, gg_tensor *v, int wo_b)
{
    const kvp_layer *L = &c->m->layers[il];
    gg_tensor *cur = llm_attn(c, &c->kv, llm_weight(c, L->head_dim_v * L->n_head, c->n_embd), q,
                              k, v, NULL, NULL, 0);
    if (wo_b && has(c, "blk.%d.attn_output.bias", il, 0))
        cur = gg_binary(c->g, GG_ADD, cur, vec(c, c->n_embd));
    return cur;
}

static gg_tensor *attn(llm *c, int il, gg_tensor *q, gg_tensor *k, gg_tensor *v)
{
    return attn_b(c, il, q, k, v, 1);
}

static void moe_defaults(llm *c, llm_moe *p)
{
    memset(p, 0, sizeof *p);
    p->n_expert = c->m->n_expert;
    p->n_expert_used = c->m->n_expert_used;
    p->n_ff = c->m->n_ff_exp ? (int64_t)c->m->n_ff_exp
                             : (int64_t)(c->m->n_ff / (c->m->n_expert_used ? c->m->n_expert_used : 1));
    p->gating = LLM_MOE_SOFTMAX;
    p->act = LLM_MOE_SILU;
    p->gate_exps = 1;
    /* group-limited routing: llama_model_base::load_hparams reads these for
     * every architecture */
    p->n_groups = (int64_t)llm_hparam(c, "expert_group_count", 0);
    p->n_group_used = (int64_t)llm_hparam(c, "expert_group_used_count", 0);
}

/* the gating function a GGUF names; a config.json names none, and
 * sigmoid (what a conversion writes for these models) allocates as
 * softmax does */
static llm_moe_gating gating_key(const llm *c)
{
    if (!c->m->n_tensors && !llm_hparam_has(c, "expert_gating_func"))
        return LLM_MOE_SIGMOID;
    return (llm_moe_gating)llm_hparam(c, "expert_gating_func", LLM_MOE_GATING_NONE);
}

/* the routing keys an architecture's load_arch_hparams reads (norm, scale,
 * gating function), with llama.cpp's defaults when absent */
static void moe_keys(llm *c, llm_moe *p)
{
    double scale = llm_hparam(c, "expert_weights_scale", 0);
    p->norm_w = llm_hparam(c, "expert_weights_norm", 0) != 0;
    p->scale_w = (float)scale != 0.0f && (float)scale != 1.0f;
    p->gating = gating_key(c);
}

static int gating_ok(const llm_moe *p)
{
    return p->gating >= LLM_MOE_SOFTMAX && p->gating <= LLM_MOE_SQRT_SOFTPLUS;
}

/* ---- qwen3moe, qwen2moe, olmoe ---- */

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

/* what every builder here needs: experts, and none of the per-tensor
 * ".scale" weights (NVFP4) that add a multiplication after their matmul */
static int fits(const llm *c)
{
    const kvp_model *m = c->m;
    if (!(m->n_expert > 0 && m->n_expert_used > 0 && m->n_expert_used <= LLM_MOE_MAX_USED &&
          m->n_expert_used <= m->n_expert && (m->n_ff_exp > 0 || m->n_ff > 0)))
        return 0;
    /* per-layer expert counts and FFN widths are not kept */
    if (llm_hparam_varies(c, "expert_used_count") ||
        llm_hparam_varies(c, "expert_feed_forward_length") ||
        llm_hparam_varies(c, "feed_forward_length"))
        return 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        size_t n = strlen(m->tensors[i].name);
        if (n > 6 && !strcmp(m->tensors[i].name + n - 6, ".scale"))
            return 0;
    }
    return 1;
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

static int build_qwen(llm *c)
{
    const moe_style *s = find_style(arch_of(c));
    gg_ctx *g = c->g;
    llm_moe p;
    moe_defaults(c, &p);
    p.norm_w = s->norm_w;
    if (s->keyed) {
        p.gating = gating_key(c);
        if (!gating_ok(&p))
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
        gg_tensor *cur = llm_norm_rms(c, inpL, vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        qkv(c, cur, il, s->qk_norm == QK_FLAT, &q, &k, &v);
        if (s->qk_norm == QK_FLAT) {
            q = llm_norm_rms(c, q, vec(c, hd * L->n_head));
            k = llm_norm_rms(c, k, vec(c, hd * L->n_kv_heads));
            q = gg_reshape_3d(g, q, hd, L->n_head, c->n_tokens);
            k = gg_reshape_3d(g, k, hd, L->n_kv_heads, c->n_tokens);
            v = gg_reshape_3d(g, v, L->head_dim_v, L->n_kv_heads, c->n_tokens);
        }
        if (s->qk_norm == QK_HEADS)
            q = llm_norm_rms(c, q, vec(c, hd));
        q = gg_rope(g, q, c->inp_pos, NULL);
        if (s->qk_norm == QK_HEADS)
            k = llm_norm_rms(c, k, vec(c, hd));
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = attn_b(c, il, q, k, v, s->wo_b);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, vec(c, c->n_embd));
        if (s->keyed)
            p.exp_probs_b = has(c, "blk.%d.exp_probs_b.bias", il, 1);
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
    return finish(c, inpL);
}

/* ---- granitemoe (src/models/granite.cpp's graph) ---- */

/* the embedding, residual and logit scales; MoE in every layer (a layer
 * without a router would be granite's dense FFN), the gate experts
 * optional, a shared SwiGLU expert when expert_shared_feed_forward_length
 * is set */
static int build_granitemoe(llm *c)
{
    gg_ctx *g = c->g;
    int emb_scale = llm_hparam(c, "embedding_scale", 0) != 0;
    int res_scale = llm_hparam(c, "residual_scale", 0) != 0;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, emb_scale);
    llm_inp_pos(c, 1);
    const kvp_layer *L0 = &c->m->layers[0];
    llm_attn_inp(c, &c->kv, L0->head_dim_k, L0->head_dim_v);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        qkv(c, cur, il, 0, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = attn(c, il, q, k, v);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        if (res_scale)
            cur = gg_scale(g, cur);
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, vec(c, c->n_embd));
        llm_moe p;
        moe_defaults(c, &p);
        p.n_ff = (int64_t)c->m->n_ff;
        p.norm_w = 1;
        p.gate_exps = has(c, "blk.%d.ffn_gate_exps.weight", il, 1);
        gg_tensor *moe_out = llm_moe_ffn(c, cur, &p);
        if (c->m->n_ff_shexp > 0)
            moe_out = gg_binary(g, GG_ADD, moe_out,
                                llm_ffn_par(c, cur, (int64_t)c->m->n_ff_shexp, 0, 0, 0));
        if (res_scale)
            moe_out = gg_scale(g, moe_out);
        inpL = gg_binary(g, GG_ADD, moe_out, ffn_inp);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, vec(c, c->n_embd));
    gg_set_output(norm);
    gg_tensor *logits = gg_scale(g, gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm));
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

/* ---- phimoe (src/models/phi3.cpp's graph) ---- */

/* build_norm(LLM_NORM_RMS) with a weight and a bias */
static gg_tensor *rms_norm_b(llm *c, gg_tensor *cur)
{
    cur = llm_norm_rms(c, cur, vec(c, c->n_embd));
    return gg_binary(c->g, GG_ADD, cur, vec(c, c->n_embd));
}

/* RMS norms with biases, Q scaled after RoPE, MoE in every layer, an
 * output bias */
static int build_phimoe(llm *c)
{
    gg_ctx *g = c->g;
    gg_tensor *inpL = begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        gg_tensor *residual = inpL;
        gg_tensor *cur = rms_norm_b(c, inpL);
        gg_tensor *q, *k, *v;
        qkv(c, cur, il, 0, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        q = gg_scale(g, q);
        cur = attn(c, il, q, k, v);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            residual = gg_get_rows(g, residual, c->inp_out_ids);
        }
        cur = gg_binary(g, GG_ADD, cur, residual);
        residual = cur;
        cur = rms_norm_b(c, cur);
        llm_moe p;
        moe_defaults(c, &p);
        p.n_ff = (int64_t)c->m->n_ff;
        p.norm_w = 1;
        cur = llm_moe_ffn(c, cur, &p);
        inpL = gg_binary(g, GG_ADD, residual, cur);
    }
    gg_tensor *norm = rms_norm_b(c, inpL);
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    logits = gg_binary(g, GG_ADD, logits, vec(c, c->n_vocab));
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

/* ---- ernie4_5-moe ---- */

/* dense FFNs in the leading layers and between every
 * interleave_moe_layer_step-th; the router may carry a selection bias; a
 * shared expert when expert_shared_feed_forward_length is set; the
 * attention output's bias is never applied */
static int build_ernie(llm *c)
{
    gg_ctx *g = c->g;
    int64_t step = (int64_t)llm_hparam(c, "interleave_moe_layer_step", 0);
    if (step <= 0)
        return ARCH_NOT_MODELLED;   /* llama.cpp requires it */
    gg_tensor *inpL = begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        qkv(c, cur, il, 0, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = attn_b(c, il, q, k, v, 0);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, vec(c, c->n_embd));
        if ((uint32_t)il < c->m->n_layer_dense_lead || (il + 1) % step) {
            cur = llm_ffn_par(c, cur, (int64_t)c->m->n_ff, 0, 0, 0);
        } else {
            llm_moe p;
            moe_defaults(c, &p);
            p.norm_w = 1;
            p.exp_probs_b = has(c, "blk.%d.exp_probs_b.bias", il, 0);
            p.gate_exps = has(c, "blk.%d.ffn_gate_exps.weight", il, 1);
            gg_tensor *moe_out = llm_moe_ffn(c, cur, &p);
            if (c->m->n_ff_shexp > 0)
                moe_out = gg_binary(g, GG_ADD, moe_out,
                                    llm_ffn_par(c, cur, (int64_t)c->m->n_ff_shexp, 0, 0, 0));
            cur = moe_out;
        }
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    return finish(c, inpL);
}

/* ---- deepseek (V1 MoE), dots1, bailingmoe ---- */

enum { DS_DEEPSEEK, DS_DOTS, DS_BAILING, DS_BAILING2 };

/* leading dense layers, then MoE with a shared expert n_expert_shared
 * experts wide.  DeepSeek: softmax routing, unnormalised, scaled by
 * expert_weights_scale.  dots1: Qwen3's Q/K norms, the routing the GGUF's
 * keys choose, a selection bias where the GGUF has one.  BailingMoE: MoE
 * in every layer (its leading_dense_block_count is read, not used),
 * softmax routing normalised and scaled as the GGUF's keys say.
 * BailingMoE2: dots1's graph (with its fused QKV), the shared expert
 * expert_shared_feed_forward_length (else one expert) wide, times
 * n_expert_shared. */
static int build_dslike(llm *c, int kind)
{
    int dots = kind == DS_DOTS || kind == DS_BAILING2;
    gg_ctx *g = c->g;
    llm_moe p;
    moe_defaults(c, &p);
    if (dots) {
        moe_keys(c, &p);
        if (!gating_ok(&p))
            return ARCH_NOT_MODELLED;   /* llama.cpp aborts without expert_gating_func */
    } else {
        moe_keys(c, &p);
        p.gating = LLM_MOE_SOFTMAX;
        if (kind == DS_DEEPSEEK)
            p.norm_w = 0;   /* not read */
    }
    uint32_t n_dense = kind == DS_BAILING ? 0 : c->m->n_layer_dense_lead;
    int64_t n_ff_sh = (kind == DS_BAILING2 && c->m->n_ff_shexp ? (int64_t)c->m->n_ff_shexp : p.n_ff) *
                      (int64_t)c->m->n_expert_shared;
    if (!c->m->n_expert_shared)
        return ARCH_NOT_MODELLED;   /* shared experts of width 0 */
    gg_tensor *inpL = begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        qkv(c, cur, il, 0, &q, &k, &v);
        if (dots)
            q = llm_norm_rms(c, q, vec(c, L->head_dim_k));
        q = gg_rope(g, q, c->inp_pos, NULL);
        if (dots)
            k = llm_norm_rms(c, k, vec(c, L->head_dim_k));
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = attn(c, il, q, k, v);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, vec(c, c->n_embd));
        if ((uint32_t)il < n_dense) {
            cur = llm_ffn_par(c, cur, (int64_t)c->m->n_ff, 0, 0, 0);
        } else {
            p.exp_probs_b = dots && has(c, "blk.%d.exp_probs_b.bias", il, 0);
            gg_tensor *moe_out = llm_moe_ffn(c, cur, &p);
            cur = gg_binary(g, GG_ADD, moe_out, llm_ffn_par(c, cur, n_ff_sh, 0, 0, 0));
        }
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    return finish(c, inpL);
}

static int build_deepseek(llm *c)
{
    return build_dslike(c, DS_DEEPSEEK);
}

static int build_dots1(llm *c)
{
    return build_dslike(c, DS_DOTS);
}

static int build_bailingmoe(llm *c)
{
    return build_dslike(c, DS_BAILING);
}

static int build_bailingmoe2(llm *c)
{
    return build_dslike(c, DS_BAILING2);
}

/* ---- glm4moe ---- */

/* optional Q/K norms, M-RoPE when the GGUF has rope sections, no attention
 * output bias; leading dense layers, then sigmoid-routed MoE with a
 * selection bias and a shared expert (build_ffn without weights when
 * there is none: a bare SiLU) */
static int build_glm4moe(llm *c)
{
    gg_ctx *g = c->g;
    llm_moe p;
    moe_defaults(c, &p);
    moe_keys(c, &p);
    if (p.gating == LLM_MOE_GATING_NONE)
        p.gating = LLM_MOE_SIGMOID;
    if (!gating_ok(&p))
        return ARCH_NOT_MODELLED;
    p.exp_probs_b = 1;
    int mrope = llm_hparam_at(c, "rope.dimension_sections", 0, 0) > 0 &&
                llm_hparam_at(c, "rope.dimension_sections", 1, 0) > 0;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_inp_pos(c, mrope ? 4 : 1);
    const kvp_layer *L0 = &c->m->layers[0];
    llm_attn_inp(c, &c->kv, L0->head_dim_k, L0->head_dim_v);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        qkv(c, cur, il, 0, &q, &k, &v);
        if (has(c, "blk.%d.attn_q_norm.weight", il, 0))
            q = llm_norm_rms(c, q, vec(c, L->head_dim_k));
        if (has(c, "blk.%d.attn_k_norm.weight", il, 0))
            k = llm_norm_rms(c, k, vec(c, L->head_dim_k));
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = attn_b(c, il, q, k, v, 0);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, vec(c, c->n_embd));
        if ((uint32_t)il < c->m->n_layer_dense_lead) {
            cur = llm_ffn_par(c, cur, (int64_t)c->m->n_ff, 0, 0, 0);
        } else {
            gg_tensor *routed = llm_moe_ffn(c, cur, &p);
            gg_tensor *shared = c->m->n_expert_shared
                ? llm_ffn_par(c, cur, p.n_ff * (int64_t)c->m->n_expert_shared, 0, 0, 0)
                : gg_unary(g, cur);
            cur = gg_binary(g, GG_ADD, routed, shared);
        }
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    return finish(c, inpL);
}

/* ---- hunyuan-moe ---- */

/* Q/K norms after RoPE; a shared SwiGLU expert beside the MoE in every
 * layer, the experts n_ff wide */
static int build_hunyuan_moe(llm *c)
{
    gg_ctx *g = c->g;
    gg_tensor *inpL = begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        qkv(c, cur, il, 0, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        k = llm_norm_rms(c, k, vec(c, L->head_dim_k));
        q = llm_norm_rms(c, q, vec(c, L->head_dim_k));
        cur = attn(c, il, q, k, v);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, vec(c, c->n_embd));
        int64_t n_ff_sh = c->m->n_ff_shexp ? (int64_t)c->m->n_ff_shexp : (int64_t)c->m->n_ff;
        gg_tensor *mlp = llm_ffn_par(c, cur, n_ff_sh, 0, 0, 0);
        llm_moe p;
        moe_defaults(c, &p);
        p.n_ff = (int64_t)c->m->n_ff;
        p.norm_w = 1;
        gg_tensor *moe = llm_moe_ffn(c, cur, &p);
        inpL = gg_binary(g, GG_ADD, gg_binary(g, GG_ADD, moe, mlp), ffn_inp);
    }
    return finish(c, inpL);
}

/* ---- grovemoe ---- */

/* Qwen3's attention; the router's logits feed two MoE calls, the experts
 * and then the chunk experts (on the experts' output, as the graph has
 * it), both selecting by sigmoid(logits); the second scaled and added */
static int build_grovemoe(llm *c)
{
    gg_ctx *g = c->g;
    int64_t per_group = (int64_t)llm_hparam(c, "experts_per_group", 0);
    int64_t n_ff_ch = (int64_t)llm_hparam(c, "expert_chunk_feed_forward_length", 0);
    if (per_group <= 0 || (int64_t)c->m->n_expert % per_group ||
        llm_hparam(c, "expert_group_count", 0) > 1)
        return ARCH_NOT_MODELLED;
    int64_t n_chunk = (int64_t)c->m->n_expert / per_group;
    gg_tensor *inpL = begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        qkv(c, cur, il, 0, &q, &k, &v);
        q = llm_norm_rms(c, q, vec(c, L->head_dim_k));
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = llm_norm_rms(c, k, vec(c, L->head_dim_k));
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = attn(c, il, q, k, v);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, vec(c, c->n_embd));
        gg_tensor *probs = gg_mul_mat(g, llm_weight(c, c->n_embd, (int64_t)c->m->n_expert), cur);
        llm_moe p;
        moe_defaults(c, &p);
        p.norm_w = 1;
        p.grove = 1;
        p.probs_in = probs;
        p.n_expert_full = (int64_t)c->m->n_expert;
        cur = llm_moe_ffn(c, cur, &p);
        p.n_expert = n_chunk;
        p.n_expert_used = p.n_expert_used > n_chunk ? n_chunk : p.n_expert_used;
        p.n_used_sum = (int64_t)c->m->n_expert_used;
        p.n_ff = n_ff_ch ? n_ff_ch : L->head_dim_k;
        if (p.n_used_sum > p.n_expert_used)
            return ARCH_NOT_MODELLED;   /* llama.cpp's reduction would view past the experts */
        gg_tensor *chunk = llm_moe_ffn(c, cur, &p);
        cur = gg_binary(g, GG_ADD, cur, gg_scale(g, chunk));
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    return finish(c, inpL);
}

/* ---- arctic ---- */

/* a dense residual FFN n_embd wide after the attention, and the MoE (n_ff
 * wide experts) on the layer's input, normalised by its own norm, added */
static int build_arctic(llm *c)
{
    gg_ctx *g = c->g;
    gg_tensor *inpL = begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        qkv(c, cur, il, 0, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = attn_b(c, il, q, k, v, 0);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, vec(c, c->n_embd));
        cur = llm_ffn_par(c, cur, c->n_embd, 0, 0, 0);
        gg_tensor *ffn_out = gg_binary(g, GG_ADD, cur, ffn_inp);
        cur = llm_norm_rms(c, inpSA, vec(c, c->n_embd));
        llm_moe p;
        moe_defaults(c, &p);
        p.n_ff = (int64_t)c->m->n_ff;
        p.norm_w = 1;
        cur = llm_moe_ffn(c, cur, &p);
        inpL = gg_binary(g, GG_ADD, cur, ffn_out);
    }
    return finish(c, inpL);
}

/* ---- dbrx ---- */

/* LayerNorms without biases, the fused QKV clamped (attention.clamp_kqv),
 * MoE with n_ff wide experts in every layer */
static int build_dbrx(llm *c)
{
    gg_ctx *g = c->g;
    int clamp = llm_hparam(c, "attention.clamp_kqv", 0) > 0;
    gg_tensor *inpL = begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm(c, inpL, vec(c, c->n_embd), NULL);
        gg_tensor *q, *k, *v;
        qkv_clamp(c, cur, il, 0, clamp, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = attn_b(c, il, q, k, v, 0);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm(c, ffn_inp, vec(c, c->n_embd), NULL);
        llm_moe p;
        moe_defaults(c, &p);
        p.n_ff = (int64_t)c->m->n_ff;
        p.norm_w = 1;
        cur = llm_moe_ffn(c, cur, &p);
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    gg_tensor *norm = llm_norm(c, inpL, vec(c, c->n_embd), NULL);
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

/* ---- smallthinker (without its sliding window) ---- */

/* the router reads the layer's input (before the attention norm); ReLU
 * GLU experts, routing by the GGUF's gating function, normalised.  A GGUF
 * with attention.sliding_window > 0 builds the iSWA graph, which is not
 * rebuilt here. */
static int build_smallthinker(llm *c)
{
    gg_ctx *g = c->g;
    if (llm_hparam(c, "attention.sliding_window", 0) > 0)
        return ARCH_NOT_MODELLED;
    llm_moe p;
    moe_defaults(c, &p);
    p.gating = gating_key(c);
    if (!gating_ok(&p))
        return ARCH_NOT_MODELLED;   /* llama.cpp aborts without one */
    p.norm_w = 1;
    p.act = LLM_MOE_RELU;
    gg_tensor *inpL = begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        gg_tensor *inpSA = inpL;
        gg_tensor *probs = gg_mul_mat(g, llm_weight(c, c->n_embd, (int64_t)c->m->n_expert), inpL);
        gg_tensor *cur = llm_norm_rms(c, inpL, vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        qkv(c, cur, il, 0, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = attn(c, il, q, k, v);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
            probs = gg_get_rows(g, probs, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, vec(c, c->n_embd));
        p.probs_in = probs;
        cur = llm_moe_ffn(c, cur, &p);
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    return finish(c, inpL);
}

/* ---- llama4 (without chunked attention) ---- */

/* A GGUF with attention.sliding_window = 0 builds Llama 4's graph over one
 * cache; otherwise (the default) chunked attention over an iSWA cache,
 * which is not rebuilt here.  Every layer but the last ropes (then
 * weightless RMS norms on Q and K unless the model has 128 experts); the
 * last scales Q by the attention-temperature input.  MoE layers every
 * interleave_moe_layer_step-th: sigmoid weights applied to the input
 * before the experts, selection on the logits, a shared expert one
 * expert wide; dense FFNs (with optional biases) between. */
static int build_llama4(llm *c)
{
    gg_ctx *g = c->g;
    if (!llm_hparam_has(c, "attention.sliding_window") ||
        llm_hparam(c, "attention.sliding_window", 0) != 0)
        return ARCH_NOT_MODELLED;
    int64_t step = (int64_t)llm_hparam(c, "interleave_moe_layer_step", 0);
    int kq_norm = c->m->n_expert != 128;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_inp_pos(c, 1);
    gg_tensor *attn_scale = gg_input(gg_new_3d(g, GG_F32, 1, 1, c->n_tokens), "inp_attn_scale");
    const kvp_layer *L0 = &c->m->layers[0];
    llm_attn_inp(c, &c->kv, L0->head_dim_k, L0->head_dim_v);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        gg_tensor *inpSA = inpL;
        int use_rope = (il + 1) % c->n_layer != 0;
        gg_tensor *cur = llm_norm_rms(c, inpL, vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        qkv(c, cur, il, 0, &q, &k, &v);
        if (use_rope) {
            q = gg_rope(g, q, c->inp_pos, NULL);
            k = gg_rope(g, k, c->inp_pos, NULL);
        } else {
            q = gg_binary(g, GG_MUL, q, attn_scale);
        }
        if (use_rope && kq_norm) {
            q = gg_rms_norm(g, q);
            k = gg_rms_norm(g, k);
        }
        cur = attn(c, il, q, k, v);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, vec(c, c->n_embd));
        if (step > 0 && (il + 1) % step == 0) {
            llm_moe p;
            moe_defaults(c, &p);
            p.n_ff = (int64_t)c->m->n_ff_exp;
            p.gating = LLM_MOE_SIGMOID;
            p.weight_before_ffn = 1;
            gg_tensor *moe_out = llm_moe_ffn(c, cur, &p);
            cur = gg_binary(g, GG_ADD, moe_out, llm_ffn_par(c, cur, p.n_ff, 0, 0, 0));
        } else {
            cur = llm_ffn_par(c, cur, (int64_t)c->m->n_ff,
                              has(c, "blk.%d.ffn_up.bias", il, 0),
                              has(c, "blk.%d.ffn_gate.bias", il, 0),
                              has(c, "blk.%d.ffn_down.bias", il, 0));
        }
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    return finish(c, inpL);
}

/* ---- the table ---- */

/* A config.json has no GGUF keys or tensor list.  Where the graph's
 * allocation depends on keys a conversion writes and kvp_model does not
 * carry (weight normalisation, group routing, selection biases, Qwen3-VL's
 * deepstack, ERNIE's MoE interleave, GroveMoE's chunk experts), the
 * architecture is rebuilt from a GGUF only.  Keys that only change
 * in-place nodes (softmax or sigmoid gating, weight and residual scales,
 * the QKV clamp) allocate alike either way. */
typedef struct moe_arch {
    const char *arch;
    int (*build)(llm *c);
    int from_config;
} moe_arch;

static const moe_arch archs[] = {
    {"qwen3moe", build_qwen, 1},
    {"qwen2moe", build_qwen, 1},
    {"olmoe", build_qwen, 1},
    {"qwen3vlmoe", build_qwen, 0},
    {"minimax-m2", build_qwen, 1},
    {"granitemoe", build_granitemoe, 1},
    {"phimoe", build_phimoe, 1},
    {"ernie4_5-moe", build_ernie, 0},
    {"dots1", build_dots1, 0},
    {"glm4moe", build_glm4moe, 0},
    {"hunyuan-moe", build_hunyuan_moe, 1},
    {"deepseek", build_deepseek, 1},
    {"bailingmoe", build_bailingmoe, 0},
    {"bailingmoe2", build_bailingmoe2, 0},
    {"grovemoe", build_grovemoe, 0},
    {"arctic", build_arctic, 1},
    {"dbrx", build_dbrx, 1},
    {"smallthinker", build_smallthinker, 1},
    {"llama4", build_llama4, 0},
};

static const moe_arch *find_arch(const char *arch)
{
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (!strcmp(archs[i].arch, arch))
            return &archs[i];
    return NULL;
}

int arch_moe_handles(const char *arch)
{
    return find_arch(arch) != NULL;
}

int arch_moe_build(llm *c)
{
    const moe_arch *a = find_arch(arch_of(c));
    if (!a || !fits(c) || (!c->m->n_tensors && !a->from_config))
        return ARCH_NOT_MODELLED;
    return a->build(c);
}
