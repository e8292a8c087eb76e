/* arch_mla.c - the reserved graphs of llama.cpp's multi-head latent
 * attention family and DeepSeek's MoE blocks, each mirroring its
 * src/models/ file of llama.cpp v0.5.0:
 *   deepseek2.cpp  DeepSeek-V2/V2-Lite/V3/R1, Kimi-K2, GigaChat3... (also
 *                  mistral4.cpp and deepseek2ocr.cpp, which reuse its graph):
 *                  absorbed MLA over the K-only latent cache, a legacy
 *                  unsplit wkv_b, or OCR's plain MHA; the trunk only (the
 *                  MTP block is a graph of its own, for an MTP context)
 *   deepseek.cpp   DeepSeek's first MoE: plain GQA, the same FFN blocks
 *   deepseek32.cpp, glm-dsa.cpp  MLA with DeepSeek Sparse Attention
 *   dots3note.cpp  DSA full layers and sliding MLA layers, gated output
 *   hy-v4.cpp      MLA (and DSA), gated output, iHC residual streams
 *   minicpm3.cpp   the latent projections expanded into a K/V cache
 *
 * Per layer: RMS norm, attention (llm_mla.c), a residual, RMS norm, then a
 * SwiGLU FFN in the leading dense layers or the routed experts
 * (llm_moe_ds.c) plus the shared experts, a residual; the last layer keeps
 * only the output rows; then the output norm and logits. */
#include <string.h>

#include "../twin.h"
#include "arch.h"
#include "llm_mla.h"

/* llama.cpp's architecture name (a config.json's through its twin's) */
static const char *arch_name(const llm *c)
{
    const char *t = c->m->gguf_arch[0] ? c->m->gguf_arch : twin_gguf_name(c->m);
    return t ? t : c->m->arch;
}

int arch_mla_handles(const char *arch)
{
    return !strcmp(arch, "deepseek2") || !strcmp(arch, "mistral4") ||
           !strcmp(arch, "deepseek2-ocr") || !strcmp(arch, "deepseek");
}

/* the row length of a GGUF tensor ("blk.0.attn_kv_a_norm.weight"), 0 when
 * the model has no tensor list or not that tensor */
static int64_t tensor_ne0(const llm *c, const char *name)
{
    for (size_t i = 0; i < c->m->n_tensors; i++)
        if (!strcmp(c->m->tensors[i].name, name))
            return (int64_t)c->m->tensors[i].ne0;
    return 0;
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
        p->gating = (m->n_layers == 47 || m->n_layers == 48) && m->n_vocab == 154880 &&
                    strcmp(arch_name(c), "deepseek2-ocr") ? 2 : 1;
    p->probs_b = llm_has_tensor(c, "blk.%d.exp_probs_b.bias", il, m->expert_probs_bias);
    p->n_groups = m->n_expert_groups;
    p->n_group_used = m->n_group_used;
    p->norm_w = m->expert_weights_norm;
    p->scale_w = m->expert_weights_scale != 0.0 && m->expert_weights_scale != 1.0;
    p->gate_up = llm_has_tensor(c, "blk.%d.ffn_gate_up_exps.weight", il, 0);
}

/* the MoE layers (from n_layer_dense_lead on) have experts, and group
 * routing divides them into groups of at least two */
static int ds_moe_ok(const llm *c)
{
    const kvp_model *m = c->m;
    if (m->n_layer_dense_lead < (uint32_t)c->n_layer &&
        (!m->n_expert || !m->n_expert_used || m->n_expert_used > 512 ||
         m->n_expert_used > m->n_expert || !m->n_ff_exp))
        return 0;
    if (m->n_expert_groups > 1 &&
        (m->n_expert % m->n_expert_groups || m->n_expert / m->n_expert_groups < 2 ||
         !m->n_group_used || m->n_group_used > m->n_expert_groups))
        return 0;
    return 1;
}

/* deepseek2's loader reads no q_lora_rank for the "lite" layer counts
 * (DeepSeek-V2-Lite, GigaChat3, Kanana-2): their Q is one projection */
static int64_t ds_q_lora_rank(const llm *c)
{
    const kvp_model *m = c->m;
    uint32_t n = m->n_layers;
    if (!strcmp(arch_name(c), "deepseek2-ocr") ||
        n == 27 || n == 26 || (n == 48 && m->n_vocab == 128256))
        return 0;
    return m->q_lora_rank;
}

/* deepseek2's graph has three attention blocks: the absorbed MLA over a
 * K-only latent cache (is_mla: the GGUF has key_length_mla), the same
 * latent expanded by a legacy unsplit wkv_b into an ordinary K/V cache,
 * and DeepSeek-OCR's plain MHA (build_qkv, NeoX RoPE); DeepSeek's first
 * MoE (src/models/deepseek.cpp) is that plain attention with GQA and the
 * same FFN blocks */
typedef enum { DS_MLA, DS_MHA, DS_OCR } ds_attn;

static int is_deepseek1(const llm *c)
{
    return !strcmp(arch_name(c), "deepseek");
}

static int ds_dims(const llm *c, ds_attn kind, const kvp_layer *L, mla_dims *d)
{
    const kvp_model *m = c->m;
    if (kind == DS_MLA) {
        if (!mla_layer_dims(c, L, d))
            return 0;
        d->q_lora_rank = ds_q_lora_rank(c);
        return 1;
    }
    if (L->kind != KVP_LAYER_FULL || !L->n_head || !L->head_dim_k || !L->head_dim_v)
        return 0;
    d->n_head = L->n_head;
    d->head_k = L->head_dim_k;
    d->head_v = L->head_dim_v;
    if (kind == DS_OCR && is_deepseek1(c))
        return L->n_kv_heads && d->n_head % L->n_kv_heads == 0 && d->head_k == d->head_v;
    if (kind == DS_OCR)
        return L->n_kv_heads == L->n_head && d->head_k == d->head_v &&
               (int64_t)m->hidden_size == d->head_k * d->n_head;
    d->rope = m->n_rot;
    d->kv_lora_rank = tensor_ne0(c, "blk.0.attn_kv_a_norm.weight");
    d->q_lora_rank = ds_q_lora_rank(c);
    return L->n_kv_heads == L->n_head && d->rope && d->head_k > d->rope && d->kv_lora_rank;
}

/* the attention block this model's layers use, or -1 when the builder
 * cannot mirror it */
static int ds_kind(const llm *c)
{
    const kvp_model *m = c->m;
    ds_attn kind = DS_MLA;
    if (!strcmp(arch_name(c), "deepseek2-ocr") || is_deepseek1(c))
        kind = DS_OCR;
    else if (m->layers[0].kind != KVP_LAYER_MLA)
        kind = DS_MHA;
    if (kind == DS_MHA && !llm_has_tensor(c, "blk.%d.attn_kv_b.weight", 0, 0))
        return -1;
    if (kind == DS_MLA && llm_has_tensor(c, "blk.%d.attn_kv_b.weight", 0, 0))
        return -1;
    if (kind == DS_OCR && (llm_has_tensor(c, "blk.%d.attn_qkv.weight", 0, 0) ||
                           llm_has_tensor(c, "blk.%d.attn_q.bias", 0, 0) ||
                           llm_has_tensor(c, "blk.%d.attn_output.bias", 0, 0)))
        return -1;
    for (int il = 0; il < c->n_layer; il++) {
        mla_dims d;
        if (!ds_dims(c, kind, &m->layers[il], &d))
            return -1;
    }
    if (!ds_moe_ok(c))
        return -1;
    return (int)kind;
}

/* DeepSeek-OCR: build_qkv's separate projections, RoPE, build_attn */
static gg_tensor *ocr_attn(llm *c, const mla_dims *d, int64_t nkv, gg_tensor *cur)
{
    gg_ctx *g = c->g;
    int64_t hd = d->head_k, nh = d->n_head, nt = c->n_tokens;
    gg_tensor *q = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nh), cur);
    gg_tensor *k = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nkv), cur);
    gg_tensor *v = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nkv), cur);
    q = gg_reshape_3d(g, q, hd, nh, nt);
    k = gg_reshape_3d(g, k, hd, nkv, nt);
    v = gg_reshape_3d(g, v, hd, nkv, nt);
    q = gg_rope(g, q, c->inp_pos, NULL);
    k = gg_rope(g, k, c->inp_pos, NULL);
    return llm_attn(c, &c->kv, llm_weight(c, hd * nh, c->n_embd), q, k, v, NULL, NULL, 0);
}

int arch_mla_build(llm *c)
{
    const kvp_model *m = c->m;
    gg_ctx *g = c->g;
    int kind = ds_kind(c);
    if (kind < 0)
        return ARCH_NOT_MODELLED;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    /* build_inp_attn_scale: Q's temperature, one value per token */
    gg_tensor *attn_scale = m->attn_temp_scale != 0.0 && kind != DS_OCR
        ? gg_input(gg_new_3d(g, GG_F32, 1, 1, c->n_tokens), "inp_attn_scale") : NULL;
    llm_inp_pos(c, 1);
    if (kind == DS_MLA)
        mla_attn_inp_k(c, &c->kv);
    else
        llm_attn_inp(c, &c->kv, m->layers[0].head_dim_k, m->layers[0].head_dim_v);
    llm_inp_out_ids(c);
    int64_t n_ff_shexp = (int64_t)m->n_ff_exp * m->n_expert_shared;
    for (int il = 0; il < c->n_layer; il++) {
        mla_dims d;
        ds_dims(c, (ds_attn)kind, &m->layers[il], &d);
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        if (kind == DS_OCR)
            cur = ocr_attn(c, &d, m->layers[il].n_kv_heads, cur);
        else if (kind == DS_MHA)
            cur = mla_self_attn_mha(c, &c->kv, &d, cur, attn_scale);
        else
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
            if (is_deepseek1(c)) {   /* softmax, no bias, weights not normalised */
                p.gating = 1;
                p.probs_b = p.norm_w = p.gate_up = 0;
            }
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

/* ---- deepseek32, glm-dsa: src/models/deepseek32.cpp, glm-dsa.cpp ---------
 * deepseek2's absorbed MLA and MoE with DeepSeek Sparse Attention: a
 * lightning indexer per layer (GLM-5.2: on its "full" indexer layers only,
 * the others reuse the last full layer's top-k) picks the cells the MLA
 * attention may see. */

static int64_t fact_value(const kvp_model *m, const char *name)
{
    for (size_t i = 0; i < m->n_facts; i++)
        if (!strcmp(m->facts[i].name, name))
            return m->facts[i].value;
    return 0;
}

int arch_dsa_handles(const char *arch)
{
    return !strcmp(arch, "deepseek32") || !strcmp(arch, "glm-dsa");
}

int arch_dsa_build(llm *c)
{
    const kvp_model *m = c->m;
    gg_ctx *g = c->g;
    int glm = !strcmp(arch_name(c), "glm-dsa");
    dsa_dims x = {fact_value(m, "index_n_heads"), 0, fact_value(m, "index_topk"), 0};
    for (int il = 0; il < c->n_layer && !x.head; il++)
        x.head = m->layers[il].indexer_head_dim;
    if (!x.n_head || !x.head || x.top_k <= 0 || !c->idx.n_kv || !m->q_lora_rank ||
        !m->layers[0].indexer_head_dim || (!glm && !m->expert_gating_func) ||
        x.head < (int64_t)m->n_rot)
        return ARCH_NOT_MODELLED;
    for (int il = 0; il < c->n_layer; il++) {
        mla_dims d;
        const kvp_layer *L = &m->layers[il];
        if (!mla_layer_dims(c, L, &d) || (L->indexer_head_dim && L->indexer_head_dim != x.head) ||
            (!glm && !L->indexer_head_dim))
            return ARCH_NOT_MODELLED;
    }
    if (!ds_moe_ok(c))
        return ARCH_NOT_MODELLED;

    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_inp_pos(c, 1);
    dsa_attn_inp(c, &c->kv, &c->idx, x.head);
    llm_inp_out_ids(c);
    int64_t n_ff_shexp = (int64_t)m->n_ff_exp * m->n_expert_shared;
    gg_tensor *top_k = NULL;
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &m->layers[il];
        mla_dims d;
        mla_layer_dims(c, L, &d);
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        cur = dsa_self_attn(c, &d, L->indexer_head_dim ? &x : NULL, cur, &top_k);
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
            if (!m->expert_gating_func)
                p.gating = 2;   /* glm-dsa's default: sigmoid */
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

/* ---- dots3note: src/models/dots3note.cpp --------------------------------
 * DSA on its full layers (MLA latent cache + indexer keys), sliding layers
 * with MLA latents of their own rank in a K-only SWA cache; K's rope part
 * is RMS-normed; a per-head sigmoid gate on the attention output before
 * wo. */

/* the MLA shapes of a dots3note layer: full (KVP_LAYER_MLA) or sliding
 * with a latent (mla_heads set, no V) */
static int dots3_dims(const llm *c, const kvp_layer *L, mla_dims *d)
{
    if (L->kind == KVP_LAYER_MLA)
        return mla_layer_dims(c, L, d);
    if (L->kind != KVP_LAYER_SLIDING || !L->mla_heads || L->head_dim_v ||
        !L->mla_k_head_dim || !L->mla_v_head_dim)
        return 0;
    int64_t rope = c->m->n_rot;
    if (!rope || (int64_t)L->head_dim_k <= rope || (int64_t)L->mla_k_head_dim <= rope)
        return 0;
    d->n_head = L->n_head;
    d->head_k = L->mla_k_head_dim;
    d->head_v = L->mla_v_head_dim;
    d->rope = rope;
    d->kv_lora_rank = (int64_t)L->head_dim_k - rope;
    d->q_lora_rank = c->m->q_lora_rank;
    return 1;
}

static gg_tensor *dots3_attn(llm *c, const mla_dims *d, const dsa_dims *x, int swa,
                             gg_tensor *cur)
{
    gg_ctx *g = c->g;
    int64_t nt = c->n_tokens, nh = d->n_head, nope = d->head_k - d->rope;
    gg_tensor *attn_inp = cur;
    gg_tensor *qr = gg_mul_mat(g, llm_weight(c, c->n_embd, d->q_lora_rank), cur);
    qr = llm_norm_rms(c, qr, llm_weight(c, d->q_lora_rank, 1));
    gg_tensor *top_k = swa ? NULL : dsa_indexer(c, &c->idx, x, qr, cur);
    gg_tensor *q = gg_mul_mat(g, llm_weight(c, d->q_lora_rank, nh * d->head_k), qr);
    uint64_t qrow = gg_row_size(q->type, d->head_k);
    gg_tensor *q_nope = gg_view_3d(g, q, nope, nh, nt, qrow, qrow * (uint64_t)nh, 0);
    gg_tensor *q_pe = gg_view_3d(g, q, d->rope, nh, nt, qrow, qrow * (uint64_t)nh,
                                 gg_row_size(q->type, nope));
    int64_t latent = d->kv_lora_rank + d->rope;
    gg_tensor *kv_cmpr_pe = gg_mul_mat(g, llm_weight(c, c->n_embd, latent), cur);
    uint64_t row = gg_row_size(kv_cmpr_pe->type, latent);
    gg_tensor *kv_cmpr = gg_view_2d(g, kv_cmpr_pe, d->kv_lora_rank, nt, row, 0);
    gg_tensor *k_pe = gg_view_3d(g, kv_cmpr_pe, d->rope, 1, nt, row, row,
                                 gg_row_size(kv_cmpr_pe->type, d->kv_lora_rank));
    k_pe = llm_norm_rms(c, k_pe, llm_weight(c, d->rope, 1));
    q_pe = gg_rope(g, q_pe, c->inp_pos, NULL);
    k_pe = gg_rope(g, k_pe, c->inp_pos, NULL);
    kv_cmpr = llm_norm_rms(c, kv_cmpr, llm_weight(c, d->kv_lora_rank, 1));
    q_nope = gg_permute(g, q_nope, 0, 2, 1, 3);
    gg_tensor *q_abs = gg_mul_mat(g, llm_weight_3d(c, nope, d->kv_lora_rank, nh), q_nope);
    q_abs = gg_permute(g, q_abs, 0, 2, 1, 3);
    gg_tensor *Q = gg_concat(g, q_abs, q_pe, 0);
    kv_cmpr = gg_reshape_3d(g, kv_cmpr, d->kv_lora_rank, 1, nt);
    gg_tensor *K = gg_concat(g, kv_cmpr, k_pe, 0);
    gg_tensor *v_mla = llm_weight_3d(c, d->kv_lora_rank, d->head_v, nh);
    cur = swa ? mla_attn_k(c, &c->swa, NULL, Q, K, kv_cmpr, v_mla)
              : dsa_attn_k(c, &c->kv, NULL, Q, K, kv_cmpr, v_mla, top_k);
    gg_tensor *gate = gg_mul_mat(g, llm_weight(c, c->n_embd, nh), attn_inp);
    gate = gg_unary(g, gate);   /* sigmoid */
    gg_tensor *a3 = gg_reshape_3d(g, cur, d->head_v, nh, nt);
    gg_tensor *g3 = gg_reshape_3d(g, gate, 1, nh, nt);
    a3 = gg_binary(g, GG_MUL, a3, g3);
    cur = gg_reshape_2d(g, a3, d->head_v * nh, nt);
    return gg_mul_mat(g, llm_weight(c, d->head_v * nh, c->n_embd), cur);
}

int arch_dots3_handles(const char *arch)
{
    return !strcmp(arch, "dots3note");
}

int arch_dots3_build(llm *c)
{
    const kvp_model *m = c->m;
    gg_ctx *g = c->g;
    dsa_dims x = {fact_value(m, "index_n_heads"), 0, fact_value(m, "index_topk"), 0};
    for (int il = 0; il < c->n_layer && !x.head; il++)
        x.head = m->layers[il].indexer_head_dim;
    if (!x.n_head || !x.head || x.top_k <= 0 || !c->idx.n_kv || !c->swa.n_kv ||
        !m->q_lora_rank || !m->expert_gating_func || x.head < (int64_t)m->n_rot)
        return ARCH_NOT_MODELLED;
    for (int il = 0; il < c->n_layer; il++) {
        mla_dims d;
        const kvp_layer *L = &m->layers[il];
        int swa = L->kind == KVP_LAYER_SLIDING;
        /* the indexer runs on the non-sliding layers, its keys are cached
         * on the indexer_types layers: modelled where they are the same */
        if (!dots3_dims(c, L, &d) || (swa ? L->indexer_head_dim != 0
                                          : L->indexer_head_dim != x.head))
            return ARCH_NOT_MODELLED;
    }
    if (!ds_moe_ok(c))
        return ARCH_NOT_MODELLED;

    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_inp_pos(c, 1);
    dsa_attn_inp(c, &c->kv, &c->idx, x.head);   /* build_attn_inp_k_dsa_iswa */
    mla_attn_inp_k(c, &c->swa);
    llm_inp_out_ids(c);
    int64_t n_ff_shexp = (int64_t)m->n_ff_exp * m->n_expert_shared;
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &m->layers[il];
        mla_dims d;
        dots3_dims(c, L, &d);
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        cur = dots3_attn(c, &d, &x, L->kind == KVP_LAYER_SLIDING, cur);
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

/* ---- hy_v4: src/models/hy-v4.cpp ------------------------------------------
 * Hunyuan 4: MLA (with DSA when the GGUF has an indexer top-k; shared
 * indexer layers reuse the last full layer's top-k, and the indexer keys
 * are not rotated), a sigmoid gate on the attention output, and iHC: the
 * residual is hc parallel streams, each block reads their weighted sum
 * (pre) and writes its output back into every stream (post). */

/* hy_v4_hc_reduce: sum over the streams of x (f32 copy) weighted by w */
static gg_tensor *hc_reduce(llm *c, gg_tensor *x, gg_tensor *w, int64_t hc, int64_t nt)
{
    gg_ctx *g = c->g;
    gg_tensor *xf = gg_cast(g, x, GG_F32), *res = NULL;
    for (int64_t ih = 0; ih < hc; ih++) {
        gg_tensor *xh = gg_view_2d(g, xf, c->n_embd, nt, xf->nb[2], (uint64_t)ih * xf->nb[1]);
        gg_tensor *wh = gg_view_2d(g, w, 1, nt, w->nb[1], (uint64_t)ih * w->nb[0]);
        gg_tensor *cur = gg_binary(g, GG_MUL, xh, wh);
        res = res ? gg_binary(g, GG_ADD, res, cur) : cur;
    }
    return gg_cast(g, res, x->type);
}

/* build_hc_pre: the block's input and (*post) its write-back weights */
static gg_tensor *hc_pre(llm *c, gg_tensor *x, int64_t hc, gg_tensor **post)
{
    gg_ctx *g = c->g;
    int64_t nt = x->ne[2];
    gg_tensor *flat = gg_reshape_2d(g, x, hc * c->n_embd, nt);
    gg_tensor *mixes = gg_mul_mat(g, llm_weight(c, hc * c->n_embd, 2 * hc), gg_rms_norm(g, flat));
    gg_tensor *scale = llm_weight(c, 2, 1), *base = llm_weight(c, 2 * hc, 1);
    gg_tensor *pre = gg_view_2d(g, mixes, hc, nt, mixes->nb[1], 0);
    pre = gg_binary(g, GG_MUL, pre, gg_view_1d(g, scale, 1, 0));
    pre = gg_binary(g, GG_ADD, pre, gg_view_1d(g, base, hc, 0));
    pre = gg_unary(g, pre);   /* sigmoid */
    pre = gg_scale(g, pre);   /* scale_bias: + eps */
    gg_tensor *po = gg_view_2d(g, mixes, hc, nt, mixes->nb[1], gg_row_size(GG_F32, hc));
    po = gg_binary(g, GG_MUL, po, gg_view_1d(g, scale, 1, gg_row_size(GG_F16, 1)));
    po = gg_binary(g, GG_ADD, po, gg_view_1d(g, base, hc, gg_row_size(GG_F16, hc)));
    po = gg_unary(g, po);
    po = gg_scale(g, po);     /* magnitude */
    po = gg_scale(g, po);     /* + eps */
    *post = po;
    return hc_reduce(c, x, pre, hc, nt);
}

/* build_hc_post: every stream gets residual + post * x */
static gg_tensor *hc_post(llm *c, gg_tensor *x, gg_tensor *residual, gg_tensor *post,
                          int64_t hc)
{
    gg_ctx *g = c->g;
    int64_t nt = x->ne[1];
    gg_tensor *xf = gg_cast(g, x, GG_F32);
    gg_tensor *pf = gg_cast(g, post, GG_F32);
    gg_tensor *rf = gg_cast(g, residual, GG_F32);
    gg_tensor *out = NULL;
    for (int64_t i = 0; i < hc; i++) {
        gg_tensor *ri = gg_view_2d(g, rf, c->n_embd, nt, rf->nb[2], (uint64_t)i * rf->nb[1]);
        gg_tensor *pi = gg_view_2d(g, pf, 1, nt, pf->nb[1], (uint64_t)i * pf->nb[0]);
        gg_tensor *cur = gg_binary(g, GG_ADD, ri, gg_binary(g, GG_MUL, xf, pi));
        cur = gg_reshape_3d(g, cur, c->n_embd, 1, nt);
        out = out ? gg_concat(g, out, cur, 1) : cur;
    }
    return gg_cast(g, out, residual->type);
}

static gg_tensor *hy4_attn(llm *c, const mla_dims *d, const dsa_dims *x, int dsa, int full,
                           gg_tensor *cur, gg_tensor **top_k)
{
    gg_ctx *g = c->g;
    int64_t nt = c->n_tokens, nh = d->n_head, nope = d->head_k - d->rope;
    gg_tensor *qr = gg_mul_mat(g, llm_weight(c, c->n_embd, d->q_lora_rank), cur);
    qr = llm_norm_rms(c, qr, llm_weight(c, d->q_lora_rank, 1));
    if (dsa && full)
        *top_k = dsa_indexer(c, &c->idx, x, qr, cur);
    gg_tensor *q = gg_mul_mat(g, llm_weight(c, d->q_lora_rank, nh * d->head_k), qr);
    uint64_t qrow = gg_row_size(q->type, d->head_k);
    gg_tensor *q_nope = gg_view_3d(g, q, nope, nh, nt, qrow, qrow * (uint64_t)nh, 0);
    gg_tensor *q_pe = gg_view_3d(g, q, d->rope, nh, nt, qrow, qrow * (uint64_t)nh,
                                 gg_row_size(q->type, nope));
    int64_t latent = d->kv_lora_rank + d->rope;
    gg_tensor *kv_cmpr_pe = gg_mul_mat(g, llm_weight(c, c->n_embd, latent), cur);
    uint64_t row = gg_row_size(kv_cmpr_pe->type, latent);
    gg_tensor *kv_cmpr = gg_view_2d(g, kv_cmpr_pe, d->kv_lora_rank, nt, row, 0);
    gg_tensor *k_pe = gg_view_3d(g, kv_cmpr_pe, d->rope, 1, nt, row, row,
                                 gg_row_size(kv_cmpr_pe->type, d->kv_lora_rank));
    q_pe = gg_rope(g, q_pe, c->inp_pos, NULL);
    k_pe = gg_rope(g, k_pe, c->inp_pos, NULL);
    kv_cmpr = llm_norm_rms(c, kv_cmpr, llm_weight(c, d->kv_lora_rank, 1));
    q_nope = gg_permute(g, q_nope, 0, 2, 1, 3);
    gg_tensor *q_abs = gg_mul_mat(g, llm_weight_3d(c, nope, d->kv_lora_rank, nh), q_nope);
    q_abs = gg_permute(g, q_abs, 0, 2, 1, 3);
    gg_tensor *Q = gg_concat(g, q_abs, q_pe, 0);
    kv_cmpr = gg_reshape_3d(g, kv_cmpr, d->kv_lora_rank, 1, nt);
    gg_tensor *K = gg_concat(g, kv_cmpr, k_pe, 0);
    gg_tensor *v_mla = llm_weight_3d(c, d->kv_lora_rank, d->head_v, nh);
    gg_tensor *attn = dsa ? dsa_attn_k(c, &c->kv, NULL, Q, K, kv_cmpr, v_mla, *top_k)
                          : mla_attn_k(c, &c->kv, NULL, Q, K, kv_cmpr, v_mla);
    gg_tensor *gate = gg_mul_mat(g, llm_weight(c, c->n_embd, nh * d->head_v), cur);
    gate = gg_unary(g, gate);   /* sigmoid */
    attn = gg_binary(g, GG_MUL, attn, gate);
    return gg_mul_mat(g, llm_weight(c, nh * d->head_v, c->n_embd), attn);
}

int arch_hy4_handles(const char *arch)
{
    return !strcmp(arch, "hy_v4");
}

int arch_hy4_build(llm *c)
{
    const kvp_model *m = c->m;
    gg_ctx *g = c->g;
    /* hyper_connection.count from its tensors: a config.json has none */
    int64_t hc = tensor_ne0(c, "output_hc_base.weight");
    dsa_dims x = {fact_value(m, "index_n_heads"), 0, fact_value(m, "index_topk"), 1};
    for (int il = 0; il < c->n_layer && !x.head; il++)
        x.head = m->layers[il].indexer_head_dim;
    int dsa = x.top_k > 0;
    if (hc <= 0 || tensor_ne0(c, "blk.0.hc_attn_base.weight") != 2 * hc || !m->q_lora_rank ||
        (dsa && (!x.n_head || !x.head || !c->idx.n_kv || !m->layers[0].indexer_head_dim ||
                 x.head <= (int64_t)m->n_rot)))
        return ARCH_NOT_MODELLED;
    for (int il = 0; il < c->n_layer; il++) {
        mla_dims d;
        const kvp_layer *L = &m->layers[il];
        if (!mla_layer_dims(c, L, &d) || (L->indexer_head_dim && L->indexer_head_dim != x.head) ||
            (!dsa && L->indexer_head_dim))
            return ARCH_NOT_MODELLED;
    }
    if (!ds_moe_ok(c))
        return ARCH_NOT_MODELLED;

    gg_tensor *inp = llm_inp_embd(c, c->n_embd, 0);
    llm_inp_pos(c, 1);
    if (dsa)
        dsa_attn_inp(c, &c->kv, &c->idx, x.head);
    else
        mla_attn_inp_k(c, &c->kv);
    llm_inp_out_ids(c);
    int64_t nt = c->n_tokens, n_ff_shexp = (int64_t)m->n_ff_exp * m->n_expert_shared;
    gg_tensor *inpL = gg_reshape_3d(g, inp, c->n_embd, 1, nt);
    inpL = gg_repeat_4d(g, inpL, c->n_embd, hc, nt, 1);
    gg_tensor *top_k = NULL;
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &m->layers[il];
        mla_dims d;
        mla_layer_dims(c, L, &d);
        gg_tensor *residual = inpL, *post;
        gg_tensor *cur = hc_pre(c, inpL, hc, &post);
        cur = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
        cur = hy4_attn(c, &d, &x, dsa, L->indexer_head_dim != 0, cur, &top_k);
        inpL = hc_post(c, cur, residual, post, hc);
        residual = inpL;
        cur = hc_pre(c, inpL, hc, &post);
        cur = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
        if ((uint32_t)il < m->n_layer_dense_lead) {
            cur = llm_ffn_par(c, cur, (int64_t)m->n_ff, 0, 0, 0);
        } else {
            ds_moe p;
            ds_routing(c, il, &p);
            p.gate_up = 0;   /* hy_v4 passes no fused gate_up */
            gg_tensor *moe = ds_moe_ffn(c, cur, &p);
            gg_tensor *sh = llm_ffn_par(c, cur, n_ff_shexp, 0, 0, 0);
            cur = gg_binary(g, GG_ADD, moe, sh);
        }
        inpL = hc_post(c, cur, residual, post, hc);
    }
    gg_tensor *flat = gg_reshape_2d(g, inpL, c->n_embd * hc, nt);
    flat = gg_get_rows(g, flat, c->inp_out_ids);
    inpL = gg_reshape_3d(g, flat, c->n_embd, hc, c->n_outputs);
    /* build_hc_head */
    flat = gg_reshape_2d(g, inpL, hc * c->n_embd, c->n_outputs);
    gg_tensor *mixes = gg_mul_mat(g, llm_weight(c, hc * c->n_embd, hc), gg_rms_norm(g, flat));
    gg_tensor *pre = gg_binary(g, GG_MUL, mixes, llm_weight(c, 1, 1));
    pre = gg_binary(g, GG_ADD, pre, llm_weight(c, hc, 1));
    pre = gg_unary(g, pre);
    pre = gg_scale(g, pre);
    gg_tensor *cur = hc_reduce(c, inpL, pre, hc, c->n_outputs);
    gg_tensor *norm = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

/* ---- minicpm3: src/models/minicpm3.cpp ------------------------------------
 * DeepSeek's latent projections without the absorption: wkv_b expands the
 * latent into per-head K (nope) and V, K's rope part is shared by every
 * head (repeated), and the ordinary K/V cache holds the expanded heads.
 * Embeddings, residual branches and the LM head input are scaled. */

/* MiniCPM3-4B's kv_lora_rank, the only MiniCPM3 there is: a config.json
 * does not reach kvp_model with it (kvplan twin writes the same) */
enum { MINICPM3_KV_LORA_RANK = 256 };

static gg_tensor *minicpm3_attn(llm *c, const kvp_layer *L, int64_t kv_lora_rank, gg_tensor *cur)
{
    gg_ctx *g = c->g;
    int64_t nt = c->n_tokens, nh = L->n_head, hk = L->head_dim_k, hv = L->head_dim_v;
    int64_t rope = c->m->n_rot, nope = hk - rope, qr = c->m->q_lora_rank;
    gg_tensor *q = gg_mul_mat(g, llm_weight(c, c->n_embd, qr), cur);
    q = llm_norm_rms(c, q, llm_weight(c, qr, 1));
    q = gg_mul_mat(g, llm_weight(c, qr, nh * hk), q);
    q = gg_reshape_3d(g, q, hk, nh, nt);
    gg_tensor *kv_pe = gg_mul_mat(g, llm_weight(c, c->n_embd, kv_lora_rank + rope), cur);
    gg_tensor *kv_c = gg_view_2d(g, kv_pe, kv_lora_rank, nt, kv_pe->nb[1], 0);
    gg_tensor *k_pe = gg_view_3d(g, kv_pe, rope, 1, nt, kv_pe->nb[1], kv_pe->nb[1],
                                 gg_row_size(kv_pe->type, kv_lora_rank));
    kv_c = llm_norm_rms(c, kv_c, llm_weight(c, kv_lora_rank, 1));
    gg_tensor *kv = gg_mul_mat(g, llm_weight(c, kv_lora_rank, nh * (nope + hv)), kv_c);
    uint64_t row = gg_row_size(kv->type, nope + hv);
    gg_tensor *k_nope = gg_view_3d(g, kv, nope, nh, nt, row, row * (uint64_t)nh, 0);
    gg_tensor *v = gg_view_3d(g, kv, hv, nh, nt, row, row * (uint64_t)nh,
                              gg_row_size(kv->type, nope));
    v = gg_cont(g, v);
    q = gg_rope(g, q, c->inp_pos, NULL);
    k_pe = gg_rope(g, k_pe, c->inp_pos, NULL);
    gg_tensor *k = gg_concat(g, k_nope, gg_repeat_4d(g, k_pe, rope, nh, nt, 1), 0);
    return llm_attn(c, &c->kv, llm_weight(c, nh * hv, c->n_embd), q, k, v, NULL, NULL, 0);
}

int arch_minicpm3_handles(const char *arch)
{
    return !strcmp(arch, "minicpm3");
}

int arch_minicpm3_build(llm *c)
{
    const kvp_model *m = c->m;
    gg_ctx *g = c->g;
    int64_t kv_lora_rank = m->n_tensors ? tensor_ne0(c, "blk.0.attn_kv_a_norm.weight")
                                        : MINICPM3_KV_LORA_RANK;
    if (!kv_lora_rank || !m->q_lora_rank || !m->n_rot)
        return ARCH_NOT_MODELLED;
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &m->layers[il];
        if (L->kind != KVP_LAYER_FULL || L->n_kv_heads != L->n_head ||
            L->head_dim_k <= m->n_rot || !L->head_dim_v)
            return ARCH_NOT_MODELLED;
    }
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    inpL = gg_scale(g, inpL);
    llm_inp_pos(c, 1);
    const kvp_layer *L0 = &m->layers[0];
    llm_attn_inp(c, &c->kv, L0->head_dim_k, L0->head_dim_v);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        cur = minicpm3_attn(c, &m->layers[il], kv_lora_rank, cur);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        cur = gg_scale(g, cur);
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, llm_weight(c, c->n_embd, 1));
        cur = llm_ffn_par(c, cur, (int64_t)m->n_ff, 0, 0, 0);
        cur = gg_scale(g, cur);
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *cur = gg_scale(g, norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), cur);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}
