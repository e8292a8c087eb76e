/* arch_moe.c - the reserved graph of llama.cpp's mixture-of-experts
 * decoders with plain (non-MLA) attention over one cache: the layer pieces
 * they share (arch_moe.h) and the table of architectures.  The graphs are
 * in arch_moe_qwen.c (qwen3moe, qwen2moe, olmoe, qwen3vlmoe, minimax-m2),
 * arch_moe_shared.c (deepseek, dots1, bailingmoe, bailingmoe2, glm4moe,
 * ernie4_5-moe, hunyuan-moe: shared experts and leading dense layers) and
 * arch_moe_other.c (granitemoe, phimoe, arctic, dbrx, grovemoe, grok,
 * smallthinker and llama4 without their sliding windows); the MoE FFN
 * itself, build_moe_ffn, is llm_moe.c. */
#include <string.h>

#include "arch_moe.h"

gg_tensor *moe_vec(llm *c, int64_t n)
{
    return llm_weight(c, n, 1);
}

int moe_has(llm *c, const char *fmt, int il, int dflt)
{
    return llm_has_tensor(c, fmt, il, dflt);
}

/* build_inp_embd, build_inp_pos, build_attn_inp_kv, build_inp_out_ids */
gg_tensor *moe_begin(llm *c)
{
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_inp_pos(c, 1);
    const kvp_layer *L0 = &c->m->layers[0];
    llm_attn_inp(c, &c->kv, L0->head_dim_k, L0->head_dim_v);
    llm_inp_out_ids(c);
    return inpL;
}

/* the output norm and the logits */
int moe_finish(llm *c, gg_tensor *cur)
{
    gg_tensor *norm = llm_norm_rms(c, cur, moe_vec(c, c->n_embd));
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(c->g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(c->g, logits);
    return 0;
}

const char *moe_arch_of(const llm *c)
{
    return c->arch;
}

/* the loaders that create only the fused QKV (a config.json has no tensor
 * list to say) */
static int fused_only(const llm *c)
{
    return !strcmp(moe_arch_of(c), "dbrx") || !strcmp(moe_arch_of(c), "bailingmoe2");
}

/* build_qkv: the fused projection (attn_qkv) or three; biases where the
 * GGUF has them (a config.json: where attention_bias says); reshaped to
 * heads unless `flat` */
void moe_qkv_clamp(llm *c, gg_tensor *cur, int il, int flat, int clamp, gg_tensor **q,
                   gg_tensor **k, gg_tensor **v)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t hq = L->head_dim_k, nq = L->n_head, hk = L->head_dim_k, nk = L->n_kv_heads;
    int64_t hv = L->head_dim_v, nv = L->n_kv_heads, T = c->n_tokens;
    int64_t eq = hq * nq, ek = hk * nk, ev = hv * nv;
    int bias = c->m->attention_bias > 0;
    gg_tensor *Q, *K, *V;
    if (moe_has(c, "blk.%d.attn_qkv.weight", il, fused_only(c))) {
        gg_tensor *t = gg_mul_mat(g, llm_weight(c, c->n_embd, eq + ek + ev), cur);
        if (moe_has(c, "blk.%d.attn_qkv.bias", il, bias))
            t = gg_binary(g, GG_ADD, t, moe_vec(c, eq + ek + ev));
        else if (moe_has(c, "blk.%d.attn_q.bias", il, 0) &&
                 moe_has(c, "blk.%d.attn_k.bias", il, 0) &&
                 moe_has(c, "blk.%d.attn_v.bias", il, 0))
            t = gg_binary(g, GG_ADD, t,
                          gg_concat(g, gg_concat(g, moe_vec(c, eq), moe_vec(c, ek), 0),
                                    moe_vec(c, ev), 0));
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
        if (moe_has(c, "blk.%d.attn_q.bias", il, bias))
            Q = gg_binary(g, GG_ADD, Q, moe_vec(c, eq));
        if (!flat && clamp)
            Q = gg_dup_op(g, GG_CLAMP, Q);
        K = gg_mul_mat(g, llm_weight(c, c->n_embd, ek), cur);
        if (moe_has(c, "blk.%d.attn_k.bias", il, bias))
            K = gg_binary(g, GG_ADD, K, moe_vec(c, ek));
        if (!flat && clamp)
            K = gg_dup_op(g, GG_CLAMP, K);
        V = gg_mul_mat(g, llm_weight(c, c->n_embd, ev), cur);
        if (moe_has(c, "blk.%d.attn_v.bias", il, bias))
            V = gg_binary(g, GG_ADD, V, moe_vec(c, ev));
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
void moe_qkv(llm *c, gg_tensor *cur, int il, int flat, gg_tensor **q, gg_tensor **k,
             gg_tensor **v)
{
    moe_qkv_clamp(c, cur, il, flat, 0, q, k, v);
}

/* build_attn over the layer's cache, the output projection and its bias
 * (where the GGUF has one and the graph passes it) */
gg_tensor *moe_attn_b(llm *c, int il, gg_tensor *q, gg_tensor *k, gg_tensor *v, int wo_b)
{
    const kvp_layer *L = &c->m->layers[il];
    gg_tensor *cur = llm_attn(c, &c->kv, llm_weight(c, L->head_dim_v * L->n_head, c->n_embd), q,
                              k, v, NULL, NULL, 0);
    if (wo_b && moe_has(c, "blk.%d.attn_output.bias", il, 0))
        cur = gg_binary(c->g, GG_ADD, cur, moe_vec(c, c->n_embd));
    return cur;
}

gg_tensor *moe_attn(llm *c, int il, gg_tensor *q, gg_tensor *k, gg_tensor *v)
{
    return moe_attn_b(c, il, q, k, v, 1);
}

void moe_defaults(llm *c, llm_moe *p)
{
    memset(p, 0, sizeof *p);
    p->n_expert = c->m->n_expert;
    p->n_expert_used = c->m->n_expert_used;
    p->n_ff = c->m->n_ff_exp
        ? (int64_t)c->m->n_ff_exp
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
llm_moe_gating moe_gating_key(const llm *c)
{
    if (!c->m->n_tensors && !llm_hparam_has(c, "expert_gating_func"))
        return LLM_MOE_SIGMOID;
    return (llm_moe_gating)llm_hparam(c, "expert_gating_func", LLM_MOE_GATING_NONE);
}

/* the routing keys an architecture's load_arch_hparams reads (norm, scale,
 * gating function), with llama.cpp's defaults when absent */
void moe_keys(llm *c, llm_moe *p)
{
    double scale = llm_hparam(c, "expert_weights_scale", 0);
    p->norm_w = llm_hparam(c, "expert_weights_norm", 0) != 0;
    p->scale_w = (float)scale != 0.0f && (float)scale != 1.0f;
    p->gating = moe_gating_key(c);
}

int moe_gating_ok(const llm_moe *p)
{
    return p->gating >= LLM_MOE_SOFTMAX && p->gating <= LLM_MOE_SQRT_SOFTPLUS;
}

/* what every builder here needs: experts, and none of the per-tensor
 * ".scale" weights (NVFP4) that add a multiplication after their matmul */
int moe_fits(const llm *c)
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
    {"qwen3moe", moe_build_qwen, 1},
    {"qwen2moe", moe_build_qwen, 1},
    {"olmoe", moe_build_qwen, 1},
    {"qwen3vlmoe", moe_build_qwen, 0},
    {"minimax-m2", moe_build_qwen, 1},
    {"granitemoe", moe_build_granitemoe, 1},
    {"phimoe", moe_build_phimoe, 1},
    {"ernie4_5-moe", moe_build_ernie, 0},
    {"dots1", moe_build_dots1, 0},
    {"glm4moe", moe_build_glm4moe, 0},
    {"hunyuan-moe", moe_build_hunyuan_moe, 1},
    {"deepseek", moe_build_deepseek, 1},
    {"bailingmoe", moe_build_bailingmoe, 0},
    {"bailingmoe2", moe_build_bailingmoe2, 0},
    {"grovemoe", moe_build_grovemoe, 0},
    {"arctic", moe_build_arctic, 1},
    {"dbrx", moe_build_dbrx, 1},
    {"smallthinker", moe_build_smallthinker, 1},
    {"llama4", moe_build_llama4, 0},
    {"grok", moe_build_grok, 1},
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
    const moe_arch *a = find_arch(moe_arch_of(c));
    if (!a || !moe_fits(c) || (!c->m->n_tensors && !a->from_config))
        return ARCH_NOT_MODELLED;
    return a->build(c);
}
