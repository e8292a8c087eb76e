/* arch_mla.c - the reserved graph of llama.cpp's multi-head latent
 * attention models: src/models/deepseek2.cpp (DeepSeek-V2/V2-Lite/V3/R1,
 * Kimi-K2, GigaChat3, GLM-4.7-Flash... with the absorbed MLA weights
 * wk_b/wv_b), the trunk graph only (the MTP block is a graph of its own,
 * built for an MTP context, never in the default one).
 *
 * Per layer: RMS norm, MLA attention over the K-only latent cache
 * (llm_mla.c), a residual, RMS norm, then a SwiGLU FFN in the leading
 * dense layers or the routed experts (llm_moe_ds.c) plus the shared
 * experts, a residual; the last layer keeps only the output rows; then
 * the output norm and logits. */
#include <string.h>

#include "arch.h"
#include "llm_mla.h"

int arch_mla_handles(const char *arch)
{
    return !strcmp(arch, "deepseek2") || !strcmp(arch, "mistral4");
}

/* build_moe_ffn's options from the model: deepseek2's loader defaults a
 * missing gating function to softmax (sigmoid for GLM-4.7-Flash's GGUFs) */
static void ds_routing(const llm *c, int il, ds_moe *p)
{
    const kvp_model *m = c->m;
    memset(p, 0, sizeof *p);
    p->n_expert = m->n_expert;
    p->n_expert_used = m->n_expert_used;
    p->n_ff_exp = (int64_t)m->n_ff_exp;
    p->gating = (int)m->expert_gating_func;
    if (!p->gating)
        p->gating = (m->n_layers == 47 || m->n_layers == 48) && m->n_vocab == 154880 ? 2 : 1;
    p->probs_b = llm_has_tensor(c, "blk.%d.exp_probs_b.bias", il, m->expert_probs_bias);
    p->n_groups = m->n_expert_groups;
    p->n_group_used = m->n_group_used;
    p->norm_w = m->expert_weights_norm;
    p->scale_w = m->expert_weights_scale != 0.0 && m->expert_weights_scale != 1.0;
    p->gate_up = llm_has_tensor(c, "blk.%d.ffn_gate_up_exps.weight", il, 0);
}

/* what the builder cannot mirror: the legacy unsplit wkv_b (MHA over an
 * expanded cache), layers without the MLA shapes, MoE layers without
 * experts */
static int ds_supported(const llm *c)
{
    const kvp_model *m = c->m;
    if (llm_has_tensor(c, "blk.%d.attn_kv_b.weight", 0, 0))
        return 0;
    for (int il = 0; il < c->n_layer; il++) {
        mla_dims d;
        if (!mla_layer_dims(c, &m->layers[il], &d))
            return 0;
        if ((uint32_t)il >= m->n_layer_dense_lead &&
            (!m->n_expert || !m->n_expert_used || m->n_expert_used > 512 || !m->n_ff_exp))
            return 0;
    }
    if (m->n_expert_groups > 1 &&
        (m->n_expert % m->n_expert_groups || m->n_expert / m->n_expert_groups < 2 ||
         !m->n_group_used || m->n_group_used > m->n_expert_groups))
        return 0;
    return 1;
}

int arch_mla_build(llm *c)
{
    const kvp_model *m = c->m;
    gg_ctx *g = c->g;
    if (!ds_supported(c))
        return ARCH_NOT_MODELLED;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    /* build_inp_attn_scale: Q's temperature, one value per token */
    gg_tensor *attn_scale = m->attn_temp_scale != 0.0
        ? gg_input(gg_new_3d(g, GG_F32, 1, 1, c->n_tokens), "inp_attn_scale") : NULL;
    llm_inp_pos(c, 1);
    mla_attn_inp_k(c, &c->kv);
    llm_inp_out_ids(c);
    int64_t n_ff_shexp = (int64_t)m->n_ff_exp * m->n_expert_shared;
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &m->layers[il];
        mla_dims d;
        mla_layer_dims(c, L, &d);
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        cur = mla_self_attn(c, &c->kv, &d, cur, attn_scale);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, llm_weight(c, c->n_embd, 1));
        if ((uint32_t)il < m->n_layer_dense_lead) {
            cur = llm_ffn_par(c, cur, (int64_t)m->n_ff, 0, 0, 0);
        } else {
            ds_moe p;
            ds_routing(c, il, &p);
            gg_tensor *moe = ds_moe_ffn(c, cur, &p);
            gg_tensor *sh = llm_ffn_par(c, cur, n_ff_shexp, 0, 0, 0);
            cur = gg_binary(g, GG_ADD, moe, sh);
        }
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}
