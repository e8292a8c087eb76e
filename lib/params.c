/* params.c - the exact parameter count of a model's language model, from its
 * normalized config.  vLLM's memory estimate subtracts the weights (count x
 * dtype bytes) from the GPU budget, so the count must be the checkpoint's,
 * tensor for tensor, not a rounded "8B".
 *
 * Counted: what a Hugging Face checkpoint holds for the language model -
 * token embeddings, the output head unless tied, every layer's attention /
 * MLA / Gated DeltaNet / Mamba mixer, its MLP or MoE block and its norms, and
 * the final norm.  Not counted, on purpose:
 *   - vision towers and multimodal projectors (Gemma 3, Llama 4, Qwen3.5):
 *     kvplan plans text serving of the language model;
 *   - MTP / next-token-prediction layers (DeepSeek-V3's layer 61, Qwen3-Next
 *     and Qwen3.5 `mtp.*`): vLLM loads them only for speculative decoding;
 *   - quantization scales (FP8 weight_scale_inv, MXFP4 block scales): the
 *     count is of logical weights, the dtype is the caller's business.
 *
 * Anything the count needs that the model does not carry makes the result 0
 * ("unknown") rather than a plausible wrong number. */
#include <stdio.h>
#include <string.h>

#include "kvp_int.h"

/* ---- what each architecture's checkpoint holds beyond the common core ---- */

enum {
    QK_NONE,   /* no q/k norm weights (Llama 4's L2 norm has none either) */
    QK_HEAD,   /* q_norm and k_norm over one head: head_dim each (Qwen3, Gemma 3) */
    QK_WIDTH,  /* over all heads: n_head x head_dim and kv x head_dim (OLMo 2, MiniMax-M2) */
};

enum {
    F_QKV_BIAS_ONLY = 1 << 0,  /* attention_bias covers q/k/v, not o (Qwen2) */
    F_SINKS = 1 << 1,          /* one attention-sink logit per head (gpt-oss) */
    F_EXPERT_BIAS = 1 << 2,    /* router and expert projections carry biases (gpt-oss) */
    F_SCORE_BIAS = 1 << 3,     /* router e_score_correction_bias (DeepSeek-V3, MiniMax-M2) */
    F_SHARED_GATE = 1 << 4,    /* a shared expert behind a hidden x 1 gate (Qwen2-MoE, Qwen3-Next) */
    F_SHARED_FF = 1 << 5,      /* one shared expert as wide as a routed one (Llama 4) */
    F_GATED_Q = 1 << 6,        /* q_proj also emits the output gate: 2 x n_head x head_dim */
    F_MOE_ODD = 1 << 7,        /* MoE on odd layers, dense MLP on even (Jamba) */
    F_MLP_PLAIN = 1 << 8,      /* non-gated up/down MLP (Nemotron-H's relu2) */
    F_MAMBA_NORMS = 1 << 9,    /* dt/B/C RMSNorm weights in the Mamba mixer (Jamba) */
    F_UNSUPPORTED = 1 << 10,   /* weights depend on fields kvp_model lacks: count is 0 */
};

typedef struct recipe {
    const char *model_types;  /* space-separated config model_type values */
    int tie_default;          /* transformers' tie_word_embeddings default; -1 unknown */
    uint64_t vocab_default;   /* transformers' vocab_size default when a file omits it */
    unsigned norms;           /* hidden-size norm vectors per layer */
    int qk;                   /* QK_* */
    unsigned flags;           /* F_* */
} recipe;

/* The defaults are each config class's __init__ (PretrainedConfig itself
 * ties embeddings; most classes override that with False). */
static const recipe recipes[] = {
    {"llama granite mistral mixtral phi3", 0, 0, 2, QK_NONE, 0},
    {"qwen2", 0, 0, 2, QK_NONE, F_QKV_BIAS_ONLY},
    {"qwen2_moe", 0, 0, 2, QK_NONE, F_QKV_BIAS_ONLY | F_SHARED_GATE},
    {"qwen3 qwen3_moe", 0, 0, 2, QK_HEAD, 0},
    {"olmo2", 0, 0, 2, QK_WIDTH, 0}, /* post-attention and post-feedforward norms */
    {"minimax_m2", 0, 0, 2, QK_WIDTH, F_SCORE_BIAS},
    {"gemma2", 1, 256000, 4, QK_NONE, 0},
    {"gemma3 gemma3_text", 1, 262208, 4, QK_HEAD, 0},
    {"cohere2", 1, 0, 1, QK_NONE, 0}, /* parallel block: one input norm */
    {"gpt_oss", 0, 0, 2, QK_NONE, F_SINKS | F_EXPERT_BIAS},
    /* every layer MoE: interleave_moe_layer_step 1 (Scout) is assumed */
    {"llama4 llama4_text", 0, 0, 2, QK_NONE, F_SHARED_FF},
    {"deepseek_v2", 0, 0, 2, QK_NONE, 0},
    {"deepseek_v3 kimi_k2", 0, 0, 2, QK_NONE, F_SCORE_BIAS},
    {"qwen3_next qwen3_5 qwen3_5_text qwen3_5_moe qwen3_5_moe_text", 0, 0, 2, QK_HEAD,
     F_GATED_Q | F_SHARED_GATE},
    /* expert_layer_period 2, offset 1 in every Jamba release */
    {"jamba", 0, 0, 2, QK_NONE, F_MOE_ODD | F_MAMBA_NORMS},
    {"nemotron_h", 0, 0, 1, QK_NONE, F_MLP_PLAIN},
    {"mamba falcon_mamba", 1, 0, 1, QK_NONE, 0},
    /* GLM-4.5's q/k norm (use_qk_norm) and Starcoder2's biases and LayerNorm
     * biases (use_bias) are not in kvp_model; EXAONE's tie default is remote
     * code.  Unknown is better than off by a few hundred million. */
    {"glm4_moe starcoder2 exaone", -1, 0, 0, QK_NONE, F_UNSUPPORTED},
};

static const recipe mamba2_recipe = {"mamba2", 0, 0, 1, QK_NONE, 0}; /* Mamba2Config */

static int in_list(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; n && (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

/* Mamba2ForCausalLM may say model_type "mamba", so the family decides first. */
static const recipe *find_recipe(const kvp_model *m)
{
    if (!strcmp(m->family, "mamba2"))
        return &mamba2_recipe;
    for (size_t i = 0; i < sizeof recipes / sizeof recipes[0]; i++)
        if (in_list(recipes[i].model_types, m->arch))
            return &recipes[i];
    return NULL;
}

/* ---- checked accumulation -------------------------------------------------- */

/* A running count that turns to "unknown" on overflow or a missing field, so
 * the builders below can add unconditionally and the caller checks once.
 * Each tensor also goes to fn (when set), with its kind and TP split. */
typedef struct tally {
    uint64_t n;
    int bad;
    kvp_ptensor_fn fn;
    void *ctx;
    uint32_t layer;
    uint64_t h;          /* hidden size */
    const char *ffn;     /* the FFN block's module name: "mlp", "feed_forward"... */
    const char *router;  /* the router's: "gate", "router" */
} tally;

static void add3(tally *t, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t p;
    if (kvp_mul(a, b, &p) || kvp_mul(p, c, &p) || kvp_add(t->n, p, &t->n))
        t->bad = 1;
}

/* n tensors of in x out, counted and reported. */
static void put(tally *t, kvp_wcat cat, const char *name, kvp_psplit split, uint64_t in,
                uint64_t out, uint64_t n, int linear, uint32_t heads)
{
    add3(t, n, in, out);
    if (t->fn && !t->bad) {
        kvp_ptensor p = {t->layer, cat, name, in, out, n, split, heads, linear, 0};
        t->fn(t->ctx, &p);
    }
}

static void lin(tally *t, kvp_wcat cat, const char *name, kvp_psplit split, uint64_t in,
                uint64_t out)
{
    put(t, cat, name, split, in, out, 1, 1, 0);
}

static void vec(tally *t, kvp_wcat cat, const char *name, kvp_psplit split, uint64_t len)
{
    put(t, cat, name, split, 1, len, 1, 0, 0);
}

/* "<ffn>.<leaf>" in a small per-call buffer (module names are short). */
static const char *ffn_name(const tally *t, char *buf, size_t n, const char *leaf)
{
    snprintf(buf, n, "%s.%s", t->ffn, leaf);
    return buf;
}

/* A dimension the count cannot do without. */
static uint64_t need(tally *t, uint64_t v)
{
    if (!v)
        t->bad = 1;
    return v;
}

/* vLLM's resolved-architecture records (the catalog's *.derived.json from
 * vLLM's ground truth) spell the layer count total_num_hidden_layers and
 * carry no FFN, SSM, bias or tying fields: the rest would be defaults that
 * the real checkpoint overrides (falcon-mamba unties its head). */
static int from_vllm_record(const kvp_model *m)
{
    for (size_t i = 0; i < m->n_facts && i < sizeof m->facts / sizeof m->facts[0]; i++)
        if (!strcmp(m->facts[i].name, "layers"))
            return !strncmp(m->facts[i].source, "total_num_hidden_layers", 23);
    return 0;
}

/* ---- mixers ---------------------------------------------------------------- */

/* q/k/v/o projections (+ biases, sinks, q/k norms) of one attention layer. */
static void attention(tally *t, const kvp_model *m, const recipe *r, const kvp_layer *L)
{
    uint64_t h = m->hidden_size, q = (uint64_t)L->n_head * L->head_dim_k,
             k = (uint64_t)L->n_kv_heads * L->head_dim_k,
             v = (uint64_t)L->n_kv_heads * L->head_dim_v, o = (uint64_t)L->n_head * L->head_dim_v;
    need(t, q);
    need(t, v);
    lin(t, KVP_WC_ATTN, "self_attn.q_proj", KVP_PS_COL, h, q * (r->flags & F_GATED_Q ? 2 : 1));
    put(t, KVP_WC_ATTN, "self_attn.k_proj", KVP_PS_KV, h, k, 1, 1, L->n_kv_heads);
    put(t, KVP_WC_ATTN, "self_attn.v_proj", KVP_PS_KV, h, v, 1, 1, L->n_kv_heads);
    lin(t, KVP_WC_ATTN, "self_attn.o_proj", KVP_PS_ROW, o, h);
    if (m->attention_bias) {
        vec(t, KVP_WC_SMALL, "self_attn.qkv_proj.bias", KVP_PS_COL, q + k + v);
        if (!(r->flags & F_QKV_BIAS_ONLY))
            vec(t, KVP_WC_SMALL, "self_attn.o_proj.bias", KVP_PS_REP, h);
    }
    if (r->flags & F_SINKS)
        vec(t, KVP_WC_SMALL, "self_attn.sinks", KVP_PS_COL, L->n_head);
    if (r->qk == QK_HEAD)
        vec(t, KVP_WC_SMALL, "self_attn.qk_norm", KVP_PS_REP, 2 * (uint64_t)L->head_dim_k);
    else if (r->qk == QK_WIDTH)
        vec(t, KVP_WC_SMALL, "self_attn.qk_norm", KVP_PS_REP, q + k);
}

/* DeepSeek's multi-head latent attention.  The layer keeps rank + rope
 * (head_dim_k) and its rope part, nope + rope and v_head.  vLLM replicates
 * the down projections (q_a, kv_a) and splits the up projections by head. */
static void mla(tally *t, const kvp_model *m, const kvp_layer *L)
{
    uint64_t h = m->hidden_size, nh = L->n_head, qk = L->mla_k_head_dim,
             v = need(t, L->mla_v_head_dim), rope = need(t, L->mla_rope_dim);
    if (rope >= L->head_dim_k || rope >= qk) {
        t->bad = 1;
        return;
    }
    uint64_t rank = L->head_dim_k - rope, nope = qk - rope;
    if (m->q_lora_rank) {
        lin(t, KVP_WC_ATTN, "self_attn.q_a_proj", KVP_PS_REP, h, m->q_lora_rank);
        vec(t, KVP_WC_SMALL, "self_attn.q_a_layernorm", KVP_PS_REP, m->q_lora_rank);
        lin(t, KVP_WC_ATTN, "self_attn.q_b_proj", KVP_PS_COL, m->q_lora_rank, nh * qk);
    } else {
        lin(t, KVP_WC_ATTN, "self_attn.q_proj", KVP_PS_COL, h, nh * qk);
    }
    lin(t, KVP_WC_ATTN, "self_attn.kv_a_proj_with_mqa", KVP_PS_REP, h, L->head_dim_k);
    vec(t, KVP_WC_SMALL, "self_attn.kv_a_layernorm", KVP_PS_REP, rank);
    lin(t, KVP_WC_ATTN, "self_attn.kv_b_proj", KVP_PS_COL, rank, nh * (nope + v));
    lin(t, KVP_WC_ATTN, "self_attn.o_proj", KVP_PS_ROW, nh * v, h);
}

/* Gated DeltaNet (Qwen3-Next, Qwen3.5): d_inner = Hv x Dv, n_group = Hk,
 * d_state = Dk.  in_proj_qkvz + in_proj_ba (Qwen3.5 splits them four ways,
 * same total), a bias-free depthwise conv over q, k and v, dt_bias and A_log
 * per value head, a gated RMSNorm over one value head, out_proj. */
static void gated_deltanet(tally *t, const kvp_model *m, const kvp_layer *L)
{
    uint64_t h = m->hidden_size, key = (uint64_t)L->n_group * L->d_state, val = L->d_inner,
             hv = need(t, L->n_ssm_heads);
    if (!hv || val % hv) {
        t->bad = 1;
        return;
    }
    lin(t, KVP_WC_MIXER, "linear_attn.in_proj_qkvz", KVP_PS_COL, h, 2 * key + 2 * val);
    lin(t, KVP_WC_MIXER, "linear_attn.in_proj_ba", KVP_PS_COL, h, 2 * hv);
    put(t, KVP_WC_SMALL, "linear_attn.conv1d", KVP_PS_COL, L->d_conv, 2 * key + val, 1, 0, 0);
    vec(t, KVP_WC_SMALL, "linear_attn.dt_bias_A_log", KVP_PS_COL, 2 * hv);
    vec(t, KVP_WC_SMALL, "linear_attn.norm", KVP_PS_REP, val / hv);
    lin(t, KVP_WC_MIXER, "linear_attn.out_proj", KVP_PS_ROW, val, h);
}

/* Mamba1 (Jamba, Mamba, FalconMamba): in_proj to x and z, a depthwise conv
 * with bias, x_proj to dt_rank + B + C, dt_proj with bias, A_log, D,
 * out_proj.  dt_rank is not in kvp_model: every release uses "auto",
 * ceil(hidden / 16); in/out projections carry no bias in any release
 * (use_bias / mamba_proj_bias false). */
static void mamba1(tally *t, const kvp_model *m, const recipe *r, const kvp_layer *L)
{
    uint64_t h = m->hidden_size, in = L->d_inner, ds = L->d_state, dt = (h + 15) / 16;
    lin(t, KVP_WC_MIXER, "mixer.in_proj", KVP_PS_COL, h, 2 * in);
    put(t, KVP_WC_SMALL, "mixer.conv1d", KVP_PS_COL, L->d_conv + 1, in, 1, 0, 0);
    lin(t, KVP_WC_MIXER, "mixer.x_proj", KVP_PS_ROW, in, dt + 2 * ds);
    lin(t, KVP_WC_MIXER, "mixer.dt_proj", KVP_PS_COL, dt, in);
    vec(t, KVP_WC_SMALL, "mixer.dt_proj.bias", KVP_PS_COL, in);
    put(t, KVP_WC_SMALL, "mixer.A_log", KVP_PS_COL, ds, in, 1, 0, 0);
    vec(t, KVP_WC_SMALL, "mixer.D", KVP_PS_COL, in);
    lin(t, KVP_WC_MIXER, "mixer.out_proj", KVP_PS_ROW, in, h);
    if (r->flags & F_MAMBA_NORMS)
        vec(t, KVP_WC_SMALL, "mixer.dt_b_c_norms", KVP_PS_REP, dt + 2 * ds);
}

/* Mamba2 (Nemotron-H, Mamba2): in_proj to z, x, B, C and dt (one per head),
 * a depthwise conv with bias over x, B and C, dt_bias, A_log and D per head,
 * a gated RMSNorm over d_inner, out_proj. */
static void mamba2(tally *t, const kvp_model *m, const kvp_layer *L)
{
    uint64_t h = m->hidden_size, in = L->d_inner,
             bc = 2 * (uint64_t)L->n_group * L->d_state,
             heads = need(t, L->n_ssm_heads);
    lin(t, KVP_WC_MIXER, "mixer.in_proj", KVP_PS_COL, h, 2 * in + bc + heads);
    put(t, KVP_WC_SMALL, "mixer.conv1d", KVP_PS_COL, L->d_conv + 1, in + bc, 1, 0, 0);
    put(t, KVP_WC_SMALL, "mixer.dt_bias_A_log_D", KVP_PS_COL, 3, heads, 1, 0, 0);
    vec(t, KVP_WC_SMALL, "mixer.norm", KVP_PS_COL, in);
    lin(t, KVP_WC_MIXER, "mixer.out_proj", KVP_PS_ROW, in, h);
}

static void mixer(tally *t, const kvp_model *m, const recipe *r, const kvp_layer *L)
{
    switch (L->kind) {
    case KVP_LAYER_FULL:
    case KVP_LAYER_SLIDING:
    case KVP_LAYER_CHUNKED: attention(t, m, r, L); break;
    case KVP_LAYER_MLA: mla(t, m, L); break;
    case KVP_LAYER_LINEAR: gated_deltanet(t, m, L); break;
    case KVP_LAYER_MAMBA: /* Mamba2 has B/C groups; Mamba1 has none */
        if (L->n_group)
            mamba2(t, m, L);
        else
            mamba1(t, m, r, L);
        break;
    default: break; /* shared or none: no mixer weights */
    }
}

/* ---- feed-forward ---------------------------------------------------------- */

/* Does layer i carry an MLP at all?  Nemotron-H's M and * blocks are mixer
 * only; its - blocks are MLP only; Mamba models have no MLP. */
static int has_ffn(const kvp_model *m, const recipe *r, const kvp_layer *L)
{
    if (r->flags & F_MLP_PLAIN)
        return L->kind == KVP_LAYER_NONE;
    return strcmp(m->family, "mamba") && strcmp(m->family, "mamba2");
}

static int is_moe_layer(const kvp_model *m, const recipe *r, uint32_t i)
{
    if (!m->n_expert || i < m->n_layer_dense_lead)
        return 0;
    return (r->flags & F_MOE_ODD) ? i % 2 == 1 : 1;
}

/* A gated MLP of width ff, n copies (experts): gate, up (column-parallel)
 * and down (row-parallel) under "<ffn>.<prefix>". */
static void gated_mlp(tally *t, kvp_wcat cat, const char *prefix, uint64_t ff, uint64_t n)
{
    char g[64], u[64], d[64];
    snprintf(g, sizeof g, "%s.%sgate_proj", t->ffn, prefix);
    snprintf(u, sizeof u, "%s.%sup_proj", t->ffn, prefix);
    snprintf(d, sizeof d, "%s.%sdown_proj", t->ffn, prefix);
    put(t, cat, g, KVP_PS_COL, t->h, ff, n, 1, 0);
    put(t, cat, u, KVP_PS_COL, t->h, ff, n, 1, 0);
    put(t, cat, d, KVP_PS_ROW, ff, t->h, n, 1, 0);
}

/* Routed experts, router and shared experts of one MoE layer.  An expert is
 * moe_intermediate_size wide when the config has one, else intermediate_size
 * (Mixtral, Llama 4, gpt-oss, MiniMax-M2, Jamba). */
static void moe(tally *t, const kvp_model *m, const recipe *r)
{
    uint64_t h = m->hidden_size, e = m->n_expert,
             ff = need(t, m->n_ff_exp ? m->n_ff_exp : m->n_ff);
    char b[64];
    gated_mlp(t, KVP_WC_EXPERTS, "experts.0.", ff, e);
    lin(t, KVP_WC_ROUTER, ffn_name(t, b, sizeof b, t->router), KVP_PS_REP, h, e);
    if (r->flags & F_EXPERT_BIAS) {
        put(t, KVP_WC_SMALL, "mlp.experts.gate_up_proj_bias", KVP_PS_COL, 1, 2 * ff, e, 0, 0);
        put(t, KVP_WC_SMALL, "mlp.experts.down_proj_bias", KVP_PS_REP, 1, h, e, 0, 0);
        vec(t, KVP_WC_SMALL, "mlp.router.bias", KVP_PS_REP, e);
    }
    if (r->flags & F_SCORE_BIAS)
        vec(t, KVP_WC_SMALL, "mlp.gate.e_score_correction_bias", KVP_PS_REP, e);
    if (r->flags & F_SHARED_FF)
        gated_mlp(t, KVP_WC_SHARED, "shared_expert.", ff, 1);
    if (r->flags & F_SHARED_GATE) {
        gated_mlp(t, KVP_WC_SHARED, "shared_expert.", need(t, m->n_ff_shexp), 1);
        lin(t, KVP_WC_ROUTER, ffn_name(t, b, sizeof b, "shared_expert_gate"), KVP_PS_REP, h, 1);
    }
    /* DeepSeek: n_shared_experts fused into one MLP of that many widths */
    if (m->n_expert_shared) {
        uint64_t w;
        if (kvp_mul(m->n_expert_shared, ff, &w))
            t->bad = 1;
        else
            gated_mlp(t, KVP_WC_SHARED, "shared_experts.", w, 1);
    }
}

static void ffn(tally *t, const kvp_model *m, const recipe *r, const kvp_layer *L, uint32_t i)
{
    if (!has_ffn(m, r, L))
        return;
    if (is_moe_layer(m, r, i)) {
        moe(t, m, r);
    } else if (r->flags & F_MLP_PLAIN) {
        uint64_t ff = need(t, m->n_ff);
        lin(t, KVP_WC_MLP, "mixer.up_proj", KVP_PS_COL, m->hidden_size, ff);
        lin(t, KVP_WC_MLP, "mixer.down_proj", KVP_PS_ROW, ff, m->hidden_size);
    } else {
        gated_mlp(t, KVP_WC_MLP, "", need(t, m->n_ff), 1);
    }
}

/* The FFN block's and the router's module names, as checkpoints spell them
 * (what quantization_config's ignore lists match). */
static void ffn_names(const kvp_model *m, tally *t)
{
    t->ffn = "mlp";
    t->router = "gate";
    if (!strcmp(m->arch, "mixtral"))
        t->ffn = "block_sparse_moe";
    else if (!strncmp(m->arch, "llama4", 6) || !strcmp(m->arch, "jamba"))
        t->ffn = "feed_forward";
    if (!strcmp(m->arch, "gpt_oss") || !strncmp(m->arch, "llama4", 6) ||
        !strcmp(m->arch, "jamba"))
        t->router = "router";
}
/* ---- the whole model ------------------------------------------------------- */

/* Layouts the recipes cannot describe yet: Nemotron-H's E (MoE) blocks have
 * their own expert shape (Nemotron 3 Nano); nothing here knows it. */
static int describable(const kvp_model *m, const recipe *r)
{
    return !(r->flags & F_UNSUPPORTED) && !((r->flags & F_MLP_PLAIN) && m->n_expert);
}

static int tied(const kvp_model *m, const recipe *r)
{
    return m->tie_word_embeddings >= 0 ? m->tie_word_embeddings : r->tie_default;
}

/* The count in three parts, as llama.cpp places tensors: the input layer
 * (embed_tokens), each layer (layers[i] when layers is not NULL), and the
 * output layer (lm_head unless tied, the final norm); *total their sum.
 * Every tensor also goes to fn when it is set.  -1 when unknown. */
static int count_parts(const kvp_model *m, uint64_t *input, uint64_t *layers, uint64_t *output,
                       uint64_t *total, kvp_ptensor_fn fn, void *ctx)
{
    const recipe *r = m ? find_recipe(m) : NULL;
    if (!r || !describable(m, r) || from_vllm_record(m) || !m->layers)
        return -1;
    int tie = tied(m, r);
    uint64_t h = m->hidden_size, vocab = m->n_vocab ? m->n_vocab : r->vocab_default;
    tally t = {0, tie < 0, fn, ctx, UINT32_MAX, h, NULL, NULL}, out;
    ffn_names(m, &t);
    out = t;
    out.n = 0;
    need(&t, h);
    need(&t, vocab);
    if (!t.bad && fn) { /* the embedding tells the walk whether it is the head too */
        kvp_ptensor e = {UINT32_MAX, KVP_WC_EMBED, "model.embed_tokens", h, vocab, 1,
                         KVP_PS_VOCAB, 0, 0, tie == 1};
        fn(ctx, &e);
    }
    add3(&t, vocab, h, 1);
    *input = t.n;
    for (uint32_t i = 0; i < m->n_layers && !t.bad; i++) {
        tally l = t;
        l.n = 0;
        l.layer = i;
        mixer(&l, m, r, &m->layers[i]);
        ffn(&l, m, r, &m->layers[i], i);
        put(&l, KVP_WC_SMALL, "layernorms", KVP_PS_REP, 1, h, r->norms, 0, 0);
        t.bad |= l.bad || kvp_add(t.n, l.n, &t.n);
        if (layers)
            layers[i] = l.n;
    }
    if (tie == 0)
        put(&out, KVP_WC_HEAD, "lm_head", KVP_PS_VOCAB, h, vocab, 1, 1, 0);
    vec(&out, KVP_WC_SMALL, "model.norm", KVP_PS_REP, h);
    *output = out.n;
    return t.bad || out.bad || kvp_add(t.n, out.n, total) ? -1 : 0;
}

uint64_t kvp_model_param_count(const kvp_model *m)
{
    uint64_t in, out, total;
    return count_parts(m, &in, NULL, &out, &total, NULL, NULL) ? 0 : total;
}

int kvp_model_param_layers(const kvp_model *m, uint64_t *input, uint64_t *layers,
                           uint64_t *output)
{
    uint64_t total;
    return count_parts(m, input, layers, output, &total, NULL, NULL);
}

int kvp_model_param_walk(const kvp_model *m, kvp_ptensor_fn fn, void *ctx)
{
    uint64_t in, out, total;
    return count_parts(m, &in, NULL, &out, &total, fn, ctx);
}

/* ---- the count by kind ----------------------------------------------------- */

static void sum_cat(void *ctx, const kvp_ptensor *t)
{
    uint64_t *c = ctx, p;
    /* cannot overflow: the walk's own checked total bounds every product */
    p = t->n * t->in * t->out;
    c[t->cat] += p;
}

int kvp_model_param_breakdown(const kvp_model *m, uint64_t count[KVP_WC_N])
{
    memset(count, 0, KVP_WC_N * sizeof *count);
    if (kvp_model_param_walk(m, sum_cat, count)) {
        memset(count, 0, KVP_WC_N * sizeof *count);
        return -1;
    }
    return 0;
}

const char *kvp_wcat_name(kvp_wcat c)
{
    static const char *names[KVP_WC_N] = {"embeddings", "output head", "attention",
                                          "dense MLP", "routed experts", "shared experts",
                                          "routers", "mixers", "norms and small tensors",
                                          "buffers"};
    return (unsigned)c < KVP_WC_N ? names[c] : "?";
}
