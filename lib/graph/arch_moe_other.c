/* arch_moe_other.c - MoE graphs of their own shape: src/models/
 * granite.cpp (granitemoe), phi3.cpp (phimoe), arctic.cpp, dbrx.cpp,
 * grovemoe.cpp, grok.cpp, smallthinker.cpp and llama4.cpp (the last two
 * without their sliding or chunked windows). */
#include "arch_moe.h"

/* ---- granitemoe (src/models/granite.cpp's graph) ---- */

/* the embedding, residual and logit scales; MoE in every layer (a layer
 * without a router would be granite's dense FFN), the gate experts
 * optional, a shared SwiGLU expert when expert_shared_feed_forward_length
 * is set */
int moe_build_granitemoe(llm *c)
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
        gg_tensor *cur = llm_norm_rms(c, inpL, moe_vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        moe_qkv(c, cur, il, 0, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = moe_attn(c, il, q, k, v);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        if (res_scale)
            cur = gg_scale(g, cur);
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, moe_vec(c, c->n_embd));
        llm_moe p;
        moe_defaults(c, &p);
        p.n_ff = (int64_t)c->m->n_ff;
        p.norm_w = 1;
        p.gate_exps = moe_has(c, "blk.%d.ffn_gate_exps.weight", il, 1);
        gg_tensor *moe_out = llm_moe_ffn(c, cur, &p);
        if (c->m->n_ff_shexp > 0)
            moe_out = gg_binary(g, GG_ADD, moe_out,
                                llm_ffn_par(c, cur, (int64_t)c->m->n_ff_shexp, 0, 0, 0));
        if (res_scale)
            moe_out = gg_scale(g, moe_out);
        inpL = gg_binary(g, GG_ADD, moe_out, ffn_inp);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, moe_vec(c, c->n_embd));
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
    cur = llm_norm_rms(c, cur, moe_vec(c, c->n_embd));
    return gg_binary(c->g, GG_ADD, cur, moe_vec(c, c->n_embd));
}

/* RMS norms with biases, Q scaled after RoPE, MoE in every layer, an
 * output bias */
int moe_build_phimoe(llm *c)
{
    gg_ctx *g = c->g;
    gg_tensor *inpL = moe_begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        gg_tensor *residual = inpL;
        gg_tensor *cur = rms_norm_b(c, inpL);
        gg_tensor *q, *k, *v;
        moe_qkv(c, cur, il, 0, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        q = gg_scale(g, q);
        cur = moe_attn(c, il, q, k, v);
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
    logits = gg_binary(g, GG_ADD, logits, moe_vec(c, c->n_vocab));
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

/* ---- arctic ---- */

/* a dense residual FFN n_embd wide after the attention, and the MoE (n_ff
 * wide experts) on the layer's input, normalised by its own norm, added */
int moe_build_arctic(llm *c)
{
    gg_ctx *g = c->g;
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
        cur = llm_ffn_par(c, cur, c->n_embd, 0, 0, 0);
        gg_tensor *ffn_out = gg_binary(g, GG_ADD, cur, ffn_inp);
        cur = llm_norm_rms(c, inpSA, moe_vec(c, c->n_embd));
        llm_moe p;
        moe_defaults(c, &p);
        p.n_ff = (int64_t)c->m->n_ff;
        p.norm_w = 1;
        cur = llm_moe_ffn(c, cur, &p);
        inpL = gg_binary(g, GG_ADD, cur, ffn_out);
    }
    return moe_finish(c, inpL);
}

/* ---- dbrx ---- */

/* LayerNorms without biases, the fused QKV clamped (attention.clamp_kqv),
 * MoE with n_ff wide experts in every layer */
int moe_build_dbrx(llm *c)
{
    gg_ctx *g = c->g;
    int clamp = llm_hparam(c, "attention.clamp_kqv", 0) > 0;
    gg_tensor *inpL = moe_begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm(c, inpL, moe_vec(c, c->n_embd), NULL);
        gg_tensor *q, *k, *v;
        moe_qkv_clamp(c, cur, il, 0, clamp, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = moe_attn_b(c, il, q, k, v, 0);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm(c, ffn_inp, moe_vec(c, c->n_embd), NULL);
        llm_moe p;
        moe_defaults(c, &p);
        p.n_ff = (int64_t)c->m->n_ff;
        p.norm_w = 1;
        cur = llm_moe_ffn(c, cur, &p);
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    gg_tensor *norm = llm_norm(c, inpL, moe_vec(c, c->n_embd), NULL);
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

/* ---- grovemoe ---- */

/* Qwen3's attention; the router's logits feed two MoE calls, the experts
 * and then the chunk experts (on the experts' output, as the graph has
 * it), both selecting by sigmoid(logits); the second scaled and added */
int moe_build_grovemoe(llm *c)
{
    gg_ctx *g = c->g;
    int64_t per_group = (int64_t)llm_hparam(c, "experts_per_group", 0);
    int64_t n_ff_ch = (int64_t)llm_hparam(c, "expert_chunk_feed_forward_length", 0);
    if (per_group <= 0 || (int64_t)c->m->n_expert % per_group ||
        llm_hparam(c, "expert_group_count", 0) > 1)
        return ARCH_NOT_MODELLED;
    int64_t n_chunk = (int64_t)c->m->n_expert / per_group;
    gg_tensor *inpL = moe_begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, moe_vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        moe_qkv(c, cur, il, 0, &q, &k, &v);
        q = llm_norm_rms(c, q, moe_vec(c, L->head_dim_k));
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = llm_norm_rms(c, k, moe_vec(c, L->head_dim_k));
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = moe_attn(c, il, q, k, v);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, moe_vec(c, c->n_embd));
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
    return moe_finish(c, inpL);
}

/* ---- smallthinker (without its sliding window) ---- */

/* the router reads the layer's input (before the attention norm); ReLU
 * GLU experts, routing by the GGUF's gating function, normalised.  A GGUF
 * with attention.sliding_window > 0 builds the iSWA graph, which is not
 * rebuilt here. */
int moe_build_smallthinker(llm *c)
{
    gg_ctx *g = c->g;
    if (llm_hparam(c, "attention.sliding_window", 0) > 0)
        return ARCH_NOT_MODELLED;
    llm_moe p;
    moe_defaults(c, &p);
    p.gating = moe_gating_key(c);
    if (!moe_gating_ok(&p))
        return ARCH_NOT_MODELLED;   /* llama.cpp aborts without one */
    p.norm_w = 1;
    p.act = LLM_MOE_RELU;
    gg_tensor *inpL = moe_begin(c);
    for (int il = 0; il < c->n_layer; il++) {
        gg_tensor *inpSA = inpL;
        gg_tensor *probs = gg_mul_mat(g, llm_weight(c, c->n_embd, (int64_t)c->m->n_expert), inpL);
        gg_tensor *cur = llm_norm_rms(c, inpL, moe_vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        moe_qkv(c, cur, il, 0, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = moe_attn(c, il, q, k, v);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
            probs = gg_get_rows(g, probs, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, moe_vec(c, c->n_embd));
        p.probs_in = probs;
        cur = llm_moe_ffn(c, cur, &p);
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    return moe_finish(c, inpL);
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
int moe_build_llama4(llm *c)
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
        gg_tensor *cur = llm_norm_rms(c, inpL, moe_vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        moe_qkv(c, cur, il, 0, &q, &k, &v);
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
        cur = moe_attn(c, il, q, k, v);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, moe_vec(c, c->n_embd));
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
                              moe_has(c, "blk.%d.ffn_up.bias", il, 0),
                              moe_has(c, "blk.%d.ffn_gate.bias", il, 0),
                              moe_has(c, "blk.%d.ffn_down.bias", il, 0));
        }
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    return moe_finish(c, inpL);
}

/* ---- grok ---- */

/* Grok-1: the attention scores squashed by tanh (llama.cpp runs it without
 * flash attention), RMS norms after the attention and after the FFN,
 * GeGLU experts (the gate experts optional) beside an optional dense GeGLU
 * FFN, their sum scaled; the embedding scale (a default, not 0), the logit
 * scale and an optional final soft cap on the logits */
int moe_build_grok(llm *c)
{
    gg_ctx *g = c->g;
    int emb_scale = llm_hparam(c, "embedding_scale", 78.38367176906169) != 0;
    int final_cap = llm_hparam(c, "final_logit_softcapping", 0) != 0;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, emb_scale);
    llm_inp_pos(c, 1);
    const kvp_layer *L0 = &c->m->layers[0];
    llm_attn_inp(c, &c->kv, L0->head_dim_k, L0->head_dim_v);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, moe_vec(c, c->n_embd));
        gg_tensor *q, *k, *v;
        moe_qkv(c, cur, il, 0, &q, &k, &v);
        q = gg_rope(g, q, c->inp_pos, NULL);
        k = gg_rope(g, k, c->inp_pos, NULL);
        cur = llm_attn(c, &c->kv, llm_weight(c, L->head_dim_v * L->n_head, c->n_embd), q, k, v,
                       NULL, NULL, 1);
        if (moe_has(c, "blk.%d.attn_output.bias", il, 0))
            cur = gg_binary(g, GG_ADD, cur, moe_vec(c, c->n_embd));
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        cur = llm_norm_rms(c, cur, moe_vec(c, c->n_embd));
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, moe_vec(c, c->n_embd));
        llm_moe p;
        moe_defaults(c, &p);
        p.n_ff = c->m->n_ff_exp ? (int64_t)c->m->n_ff_exp : (int64_t)c->m->n_ff;
        p.act = LLM_MOE_GELU;
        p.norm_w = 1;
        p.gate_exps = moe_has(c, "blk.%d.ffn_gate_exps.weight", il, 1);
        gg_tensor *moe_out = llm_moe_ffn(c, cur, &p);
        if (moe_has(c, "blk.%d.ffn_up.weight", il, 0)) {
            gg_tensor *ffn_out = moe_has(c, "blk.%d.ffn_gate.weight", il, 0)
                ? llm_ffn_par(c, cur, (int64_t)c->m->n_ff, 0, 0, 0)
                : llm_ffn_seq(c, cur, (int64_t)c->m->n_ff, 0, 0);
            cur = gg_scale(g, gg_binary(g, GG_ADD, ffn_out, moe_out));
        } else {
            cur = moe_out;
        }
        cur = llm_norm_rms(c, cur, moe_vec(c, c->n_embd));
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, moe_vec(c, c->n_embd));
    gg_set_output(norm);
    gg_tensor *logits = gg_scale(g, gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm));
    if (final_cap)
        logits = gg_scale(g, gg_unary(g, gg_scale(g, logits)));
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}
