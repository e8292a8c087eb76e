/* arch_moe_shared.c - MoE graphs with shared experts and leading dense
 * layers: src/models/deepseek.cpp (V1 MoE), dots1.cpp, bailingmoe.cpp,
 * bailingmoe2.cpp, glm4-moe.cpp, ernie4-5-moe.cpp, hunyuan-moe.cpp. */
#include "arch_moe.h"

/* ---- ernie4_5-moe ---- */

/* dense FFNs in the leading layers and between every
 * interleave_moe_layer_step-th; the router may carry a selection bias; a
 * shared expert when expert_shared_feed_forward_length is set; the
 * attention output's bias is never applied */
int moe_build_ernie(llm *c)
{
    gg_ctx *g = c->g;
    int64_t step = (int64_t)llm_hparam(c, "interleave_moe_layer_step", 0);
    if (step <= 0)
        return ARCH_NOT_MODELLED;   /* llama.cpp requires it */
    gg_tensor *inpL = moe_begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, moe_vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        moe_qkv(c, cur, il, 0, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = moe_attn_b(c, il, q, k, v, 0);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, moe_vec(c, c->n_embd));
        if ((uint32_t)il < c->m->n_layer_dense_lead || (il + 1) % step) {
            cur = llm_ffn_par(c, cur, (int64_t)c->m->n_ff, 0, 0, 0);
        } else {
            llm_moe p;
            moe_defaults(c, &p);
            p.norm_w = 1;
            p.exp_probs_b = moe_has(c, "blk.%d.exp_probs_b.bias", il, 0);
            p.gate_exps = moe_has(c, "blk.%d.ffn_gate_exps.weight", il, 1);
            gg_tensor *moe_out = llm_moe_ffn(c, cur, &p);
            if (c->m->n_ff_shexp > 0)
                moe_out = gg_binary(g, GG_ADD, moe_out,
                                    llm_ffn_par(c, cur, (int64_t)c->m->n_ff_shexp, 0, 0, 0));
            cur = moe_out;
        }
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    return moe_finish(c, inpL);
}

/* ---- deepseek (V1 MoE), dots1, bailingmoe, bailingmoe2 ---- */

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
        if (!moe_gating_ok(&p))
            return ARCH_NOT_MODELLED;   /* llama.cpp aborts without expert_gating_func */
    } else {
        moe_keys(c, &p);
        p.gating = LLM_MOE_SOFTMAX;
        if (kind == DS_DEEPSEEK)
            p.norm_w = 0;   /* not read */
    }
    uint32_t n_dense = kind == DS_BAILING ? 0 : c->m->n_layer_dense_lead;
    int64_t n_ff_sh = kind == DS_BAILING2 && c->m->n_ff_shexp ? (int64_t)c->m->n_ff_shexp
                                                              : p.n_ff;
    n_ff_sh *= (int64_t)c->m->n_expert_shared;
    if (!c->m->n_expert_shared)
        return ARCH_NOT_MODELLED;   /* shared experts of width 0 */
    gg_tensor *inpL = moe_begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, moe_vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        moe_qkv(c, cur, il, 0, &q, &k, &v);
        if (dots)
            q = llm_norm_rms(c, q, moe_vec(c, L->head_dim_k));
        q = gg_rope(g, q, c->inp_pos, NULL);
        if (dots)
            k = llm_norm_rms(c, k, moe_vec(c, L->head_dim_k));
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = moe_attn(c, il, q, k, v);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, moe_vec(c, c->n_embd));
        if ((uint32_t)il < n_dense) {
            cur = llm_ffn_par(c, cur, (int64_t)c->m->n_ff, 0, 0, 0);
        } else {
            p.exp_probs_b = dots && moe_has(c, "blk.%d.exp_probs_b.bias", il, 0);
            gg_tensor *moe_out = llm_moe_ffn(c, cur, &p);
            cur = gg_binary(g, GG_ADD, moe_out, llm_ffn_par(c, cur, n_ff_sh, 0, 0, 0));
        }
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    return moe_finish(c, inpL);
}

int moe_build_deepseek(llm *c)
{
    return build_dslike(c, DS_DEEPSEEK);
}

int moe_build_dots1(llm *c)
{
    return build_dslike(c, DS_DOTS);
}

int moe_build_bailingmoe(llm *c)
{
    return build_dslike(c, DS_BAILING);
}

int moe_build_bailingmoe2(llm *c)
{
    return build_dslike(c, DS_BAILING2);
}

/* ---- glm4moe ---- */

/* optional Q/K norms, M-RoPE when the GGUF has rope sections, no attention
 * output bias; leading dense layers, then sigmoid-routed MoE with a
 * selection bias and a shared expert (build_ffn without weights when
 * there is none: a bare SiLU) */
int moe_build_glm4moe(llm *c)
{
    gg_ctx *g = c->g;
    llm_moe p;
    moe_defaults(c, &p);
    moe_keys(c, &p);
    if (p.gating == LLM_MOE_GATING_NONE)
        p.gating = LLM_MOE_SIGMOID;
    if (!moe_gating_ok(&p))
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
        gg_tensor *cur = llm_norm_rms(c, inpL, moe_vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        moe_qkv(c, cur, il, 0, &q, &k, &v);
        if (moe_has(c, "blk.%d.attn_q_norm.weight", il, 0))
            q = llm_norm_rms(c, q, moe_vec(c, L->head_dim_k));
        if (moe_has(c, "blk.%d.attn_k_norm.weight", il, 0))
            k = llm_norm_rms(c, k, moe_vec(c, L->head_dim_k));
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = moe_attn_b(c, il, q, k, v, 0);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, moe_vec(c, c->n_embd));
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
    return moe_finish(c, inpL);
}

/* ---- hunyuan-moe ---- */

/* Q/K norms after RoPE; a shared SwiGLU expert beside the MoE in every
 * layer, the experts n_ff wide */
int moe_build_hunyuan_moe(llm *c)
{
    gg_ctx *g = c->g;
    gg_tensor *inpL = moe_begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, moe_vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        moe_qkv(c, cur, il, 0, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        k = llm_norm_rms(c, k, moe_vec(c, L->head_dim_k));
        q = llm_norm_rms(c, q, moe_vec(c, L->head_dim_k));
        cur = moe_attn(c, il, q, k, v);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, moe_vec(c, c->n_embd));
        int64_t n_ff_sh = c->m->n_ff_shexp ? (int64_t)c->m->n_ff_shexp : (int64_t)c->m->n_ff;
        gg_tensor *mlp = llm_ffn_par(c, cur, n_ff_sh, 0, 0, 0);
        llm_moe p;
        moe_defaults(c, &p);
        p.n_ff = (int64_t)c->m->n_ff;
        p.norm_w = 1;
        gg_tensor *moe = llm_moe_ffn(c, cur, &p);
        inpL = gg_binary(g, GG_ADD, gg_binary(g, GG_ADD, moe, mlp), ffn_inp);
    }
    return moe_finish(c, inpL);
}
