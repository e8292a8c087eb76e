/* llama/state.c - llama.cpp v0.5.0 architectures of the "state" group (see
 * twin.h): the recurrent and hybrid models, how each lays out its layers,
 * and the metadata and tensors its shape twin carries.  Sources:
 * src/models/<arch>.cpp (load_arch_hparams, load_arch_tensors),
 * src/llama-model.cpp (create_memory) and src/llama-hparams.cpp (n_embd_r,
 * n_embd_s) of tests/oracle/.work/llama-src. */
#include <math.h>
#include <stdio.h>

#include "../gguf_model.h"

#define W 0 /* F16 */
#define F 1 /* F32 */

/* ---- nemotron_h_moe (Nemotron-3) ----------------------------------------------- */

/* nemotron_h's loader (src/models/nemotron-h.cpp): each block is Mamba2,
 * attention (n_ff 0) or, with experts, a routed MoE with one shared expert
 * and sigmoid router bias, both relu^2 with no gate. */
static void nemotron_h_moe_tensors(twin_ctx *t)
{
    const uint64_t E = t->n_embd, x = t->n_expert;
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if (t->is_recr[il]) {
            twin_t_mamba2(t, il);
        } else if (t->is_attn[il]) {
            uint64_t h = t->n_head[il], kv = t->n_kv[il];
            twin_t_qkvo(t, il, h * t->lhk[il], kv * t->lhk[il], kv * t->lhv[il], h * t->lhk[il]);
        } else if (x) {
            twin_tensor(t, il, "blk.%d.ffn_gate_inp.weight", W, E, x, 0);
            twin_tensor(t, il, "blk.%d.exp_probs_b.bias", F, x, 0, 0);
            twin_tensor(t, il, "blk.%d.ffn_down_exps.weight", W, t->n_ff_exp, E, x);
            twin_tensor(t, il, "blk.%d.ffn_up_exps.weight", W, E, t->n_ff_exp, x);
            twin_tensor(t, il, "blk.%d.ffn_down_shexp.weight", W, t->n_ff_shexp, E, 0);
            twin_tensor(t, il, "blk.%d.ffn_up_shexp.weight", W, E, t->n_ff_shexp, 0);
        } else {
            twin_tensor(t, il, "blk.%d.ffn_down.weight", W, t->ff[il], E, 0);
            twin_tensor(t, il, "blk.%d.ffn_up.weight", W, E, t->ff[il], 0);
        }
    }
}

/* ---- kimi-linear (Kimi Linear) ---------------------------------------------------- */

static void u32(twin_ctx *t, const char *suffix, uint64_t v)
{
    kvp_gguf_w_u32(t->w, twin_key(t, suffix), (uint32_t)v);
}

/* src/models/kimi-linear.cpp reads the MLA keys as deepseek2 writes them,
 * plus the KDA conv kernel and head size; expert_gating_func is required
 * (2: sigmoid, as the converter writes for Kimi). */
static void kimi_linear_meta(twin_ctx *t)
{
    twin_meta_deepseek2(t);
    u32(t, "ssm.conv_kernel", t->d_conv);
    u32(t, "kda.head_dim", t->d_state);
    u32(t, "expert_gating_func", 2);
}

/* A KDA mixer: depthwise convs on q, k and v, the decay (f) and output
 * gate (g) low-rank projections of head_dim, beta per head, A per head. */
static void kda_mixer(twin_ctx *t, int il)
{
    const uint64_t E = t->n_embd, H = t->n_group, D = t->d_state, HD = t->d_inner;
    twin_tensor(t, il, "blk.%d.ssm_conv1d_q.weight", F, t->d_conv, 1, HD);
    twin_tensor(t, il, "blk.%d.ssm_conv1d_k.weight", F, t->d_conv, 1, HD);
    twin_tensor(t, il, "blk.%d.ssm_conv1d_v.weight", F, t->d_conv, 1, HD);
    twin_tensor(t, il, "blk.%d.attn_q.weight", W, E, HD, 0);
    twin_tensor(t, il, "blk.%d.attn_k.weight", W, E, HD, 0);
    twin_tensor(t, il, "blk.%d.attn_v.weight", W, E, HD, 0);
    twin_tensor(t, il, "blk.%d.ssm_f_a.weight", W, E, D, 0);
    twin_tensor(t, il, "blk.%d.ssm_f_b.weight", W, D, HD, 0);
    twin_tensor(t, il, "blk.%d.ssm_beta.weight", W, E, H, 0);
    twin_tensor(t, il, "blk.%d.ssm_a", F, 1, H, 0);
    twin_tensor(t, il, "blk.%d.ssm_dt.bias", F, HD, 0, 0);
    twin_tensor(t, il, "blk.%d.ssm_g_a.weight", W, E, D, 0);
    twin_tensor(t, il, "blk.%d.ssm_g_b.weight", W, D, HD, 0);
    twin_tensor(t, il, "blk.%d.ssm_norm.weight", F, D, 0, 0);
    twin_tensor(t, il, "blk.%d.attn_output.weight", W, HD, E, 0);
}

/* An MLA block as kimi-linear loads it: no q LoRA (n_lora_q is never
 * read), the latent with its norm, and k_b / v_b per head. */
static void kimi_mla(twin_ctx *t, int il)
{
    const uint64_t E = t->n_embd, h = t->n_head[il], kvr = t->kv_lora_rank, rope = t->mla_rope;
    twin_tensor(t, il, "blk.%d.attn_kv_a_norm.weight", F, kvr, 0, 0);
    twin_tensor(t, il, "blk.%d.attn_q.weight", W, E, h * t->mla_k, 0);
    twin_tensor(t, il, "blk.%d.attn_kv_a_mqa.weight", W, E, kvr + rope, 0);
    twin_tensor(t, il, "blk.%d.attn_k_b.weight", W, t->mla_k - rope, kvr, h);
    twin_tensor(t, il, "blk.%d.attn_v_b.weight", W, kvr, t->mla_v, h);
    twin_tensor(t, il, "blk.%d.attn_output.weight", W, h * t->mla_v, E, 0);
}

/* Leading dense layers, then routed experts with a sigmoid bias and
 * shared experts of n_expert_shared x the expert width. */
static void kimi_ffn(twin_ctx *t, int il)
{
    twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
    if ((uint32_t)il < t->n_dense_lead) {
        twin_t_ffn(t, il, t->n_ff);
        return;
    }
    twin_t_moe(t, il, t->n_ff_exp);
    if (t->n_expert_shared)
        twin_t_shexp(t, il, t->n_ff_exp * t->n_expert_shared);
    twin_tensor(t, il, "blk.%d.exp_probs_b.bias", F, t->n_expert, 0, 0);
}

static void kimi_linear_tensors(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if (t->is_recr[il])
            kda_mixer(t, il);
        else
            kimi_mla(t, il);
        kimi_ffn(t, il);
    }
}

/* ---- kimi-k3 and bailingmoe3: KDA beside MLA, like kimi-linear ---------------------------- */

/* kimi-k3 requires its residual-attention block size (0: none, so no
 * res-score tensors) and the situ activation's two betas. */
static void kimi_k3_meta(twin_ctx *t)
{
    kimi_linear_meta(t);
    u32(t, "attn_res.block_size", 0);
    kvp_gguf_w_f32(t->w, twin_key(t, "activation.situ_beta"), 1.0f);
    kvp_gguf_w_f32(t->w, twin_key(t, "activation.situ_linear_beta"), 1.0f);
}

/* bailingmoe3 asserts a safe gate (the default) with a negative lower
 * bound, and reads leading_dense_block_count unconditionally. */
static void bailingmoe3_meta(twin_ctx *t)
{
    twin_meta_deepseek2(t);
    u32(t, "ssm.conv_kernel", t->d_conv);
    u32(t, "kda.head_dim", t->d_state);
    kvp_gguf_w_f32(t->w, twin_key(t, "kda.gate_lower_bound"), -5.0f);
    u32(t, "expert_gating_func", 2);
    if (!t->n_dense_lead) /* ffn() writes it when non-zero */
        u32(t, "leading_dense_block_count", 0);
}

/* The MLA block of kimi-k3 and bailingmoe3: q through the q LoRA when the
 * model has one; bailingmoe3 adds a head-wise output gate. */
static void kda_hybrid_mla(twin_ctx *t, int il, int head_gate)
{
    const uint64_t E = t->n_embd, h = t->n_head[il], kvr = t->kv_lora_rank, rope = t->mla_rope;
    const uint64_t qr = t->q_lora_rank;
    if (qr) {
        twin_tensor(t, il, "blk.%d.attn_q_a.weight", W, E, qr, 0);
        twin_tensor(t, il, "blk.%d.attn_q_a_norm.weight", F, qr, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_q_b.weight", W, qr, h * t->mla_k, 0);
    } else {
        twin_tensor(t, il, "blk.%d.attn_q.weight", W, E, h * t->mla_k, 0);
    }
    twin_tensor(t, il, "blk.%d.attn_kv_a_mqa.weight", W, E, kvr + rope, 0);
    twin_tensor(t, il, "blk.%d.attn_kv_a_norm.weight", F, kvr, 0, 0);
    twin_tensor(t, il, "blk.%d.attn_k_b.weight", W, t->mla_k - rope, kvr, h);
    twin_tensor(t, il, "blk.%d.attn_v_b.weight", W, kvr, t->mla_v, h);
    if (head_gate)
        twin_tensor(t, il, "blk.%d.attn_gate.weight", W, E, h, 0);
    twin_tensor(t, il, "blk.%d.attn_output.weight", W, h * t->mla_v, E, 0);
}

/* kimi-k3's KDA mixer: a full-rank output gate (ssm_g) and A as a vector */
static void kimi_k3_kda(twin_ctx *t, int il)
{
    const uint64_t E = t->n_embd, H = t->n_group, D = t->d_state, HD = t->d_inner;
    twin_tensor(t, il, "blk.%d.ssm_conv1d_q.weight", F, t->d_conv, 1, HD);
    twin_tensor(t, il, "blk.%d.ssm_conv1d_k.weight", F, t->d_conv, 1, HD);
    twin_tensor(t, il, "blk.%d.ssm_conv1d_v.weight", F, t->d_conv, 1, HD);
    twin_tensor(t, il, "blk.%d.attn_q.weight", W, E, HD, 0);
    twin_tensor(t, il, "blk.%d.attn_k.weight", W, E, HD, 0);
    twin_tensor(t, il, "blk.%d.attn_v.weight", W, E, HD, 0);
    twin_tensor(t, il, "blk.%d.ssm_f_a.weight", W, E, D, 0);
    twin_tensor(t, il, "blk.%d.ssm_f_b.weight", W, D, HD, 0);
    twin_tensor(t, il, "blk.%d.ssm_beta.weight", W, E, H, 0);
    twin_tensor(t, il, "blk.%d.ssm_a", F, H, 0, 0);
    twin_tensor(t, il, "blk.%d.ssm_dt.bias", F, HD, 0, 0);
    twin_tensor(t, il, "blk.%d.ssm_g.weight", W, E, HD, 0);
    twin_tensor(t, il, "blk.%d.ssm_norm.weight", F, D, 0, 0);
    twin_tensor(t, il, "blk.%d.attn_output.weight", W, HD, E, 0);
}

/* bailingmoe3's KDA mixer: no decay or gate LoRA (f_a and g_a are full
 * width), A as {1, heads} */
static void bailing3_kda(twin_ctx *t, int il)
{
    const uint64_t E = t->n_embd, H = t->n_group, D = t->d_state, HD = t->d_inner;
    twin_tensor(t, il, "blk.%d.ssm_conv1d_q.weight", F, t->d_conv, 1, HD);
    twin_tensor(t, il, "blk.%d.ssm_conv1d_k.weight", F, t->d_conv, 1, HD);
    twin_tensor(t, il, "blk.%d.ssm_conv1d_v.weight", F, t->d_conv, 1, HD);
    twin_tensor(t, il, "blk.%d.attn_q.weight", W, E, HD, 0);
    twin_tensor(t, il, "blk.%d.attn_k.weight", W, E, HD, 0);
    twin_tensor(t, il, "blk.%d.attn_v.weight", W, E, HD, 0);
    twin_tensor(t, il, "blk.%d.ssm_f_a.weight", W, E, HD, 0);
    twin_tensor(t, il, "blk.%d.ssm_beta.weight", W, E, H, 0);
    twin_tensor(t, il, "blk.%d.ssm_a", F, 1, H, 0);
    twin_tensor(t, il, "blk.%d.ssm_dt.bias", F, HD, 0, 0);
    twin_tensor(t, il, "blk.%d.ssm_g_a.weight", W, E, HD, 0);
    twin_tensor(t, il, "blk.%d.ssm_norm.weight", F, D, 0, 0);
    twin_tensor(t, il, "blk.%d.attn_output.weight", W, HD, E, 0);
}

static void kimi_k3_tensors(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if (t->is_recr[il])
            kimi_k3_kda(t, il);
        else
            kda_hybrid_mla(t, il, 0);
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_tensor(t, il, "blk.%d.ffn_gate_inp.weight", W, t->n_embd, t->n_expert, 0);
        twin_tensor(t, il, "blk.%d.exp_probs_b.bias", F, t->n_expert, 0, 0);
        twin_tensor(t, il, "blk.%d.ffn_gate_exps.weight", W, t->n_embd, t->n_ff_exp, t->n_expert);
        twin_tensor(t, il, "blk.%d.ffn_down_exps.weight", W, t->n_ff_exp, t->n_embd, t->n_expert);
        twin_tensor(t, il, "blk.%d.ffn_up_exps.weight", W, t->n_embd, t->n_ff_exp, t->n_expert);
        if (t->n_expert_shared)
            twin_t_shexp(t, il, t->n_ff_exp * t->n_expert_shared);
    }
}

static void bailingmoe3_tensors(twin_ctx *t)
{
    const uint64_t shexp = t->n_ff_shexp ? t->n_ff_shexp
                                         : t->n_ff_exp * (t->n_expert_shared ? t->n_expert_shared : 1);
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if (t->is_recr[il])
            bailing3_kda(t, il);
        else
            kda_hybrid_mla(t, il, 1);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_tensor(t, il, "blk.%d.ffn_gate_inp.weight", W, t->n_embd, t->n_expert, 0);
        twin_tensor(t, il, "blk.%d.exp_probs_b.bias", F, t->n_expert, 0, 0);
        twin_tensor(t, il, "blk.%d.ffn_gate_exps.weight", W, t->n_embd, t->n_ff_exp, t->n_expert);
        twin_tensor(t, il, "blk.%d.ffn_up_exps.weight", W, t->n_embd, t->n_ff_exp, t->n_expert);
        twin_tensor(t, il, "blk.%d.ffn_down_exps.weight", W, t->n_ff_exp, t->n_embd, t->n_expert);
        twin_t_shexp(t, il, shexp);
    }
}

/* ---- lfm2moe (LFM2-MoE) ---------------------------------------------------------------- */

/* lfm2's short-conv length, plus the router: sigmoid (expert_gating_func 2,
 * required) over experts with a bias */
static void lfm2moe_meta(twin_ctx *t)
{
    twin_meta_lfm2(t);
    u32(t, "expert_gating_func", 2);
}

/* Each block: an FFN (dense for the leading layers, else experts), then a
 * short convolution or attention with q/k norms; the final norm is
 * token_embd_norm. */
static void lfm2moe_tensors(twin_ctx *t)
{
    const uint64_t E = t->n_embd;
    twin_t_embd(t, TW_OUTPUT, "token_embd_norm.weight");
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
        } else {
            twin_t_moe(t, il, t->n_ff_exp);
            twin_tensor(t, il, "blk.%d.exp_probs_b.bias", F, t->n_expert, 0, 0);
        }
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if (t->is_recr[il]) {
            twin_tensor(t, il, "blk.%d.shortconv.conv.weight", F, t->d_conv, E, 0);
            twin_tensor(t, il, "blk.%d.shortconv.in_proj.weight", W, E, 3 * E, 0);
            twin_tensor(t, il, "blk.%d.shortconv.out_proj.weight", W, E, E, 0);
        } else {
            uint64_t kv = (uint64_t)t->n_kv[il] * t->lhk[il];
            twin_tensor(t, il, "blk.%d.attn_q_norm.weight", F, t->lhk[il], 0, 0);
            twin_tensor(t, il, "blk.%d.attn_k_norm.weight", F, t->lhk[il], 0, 0);
            twin_t_qkvo(t, il, E, kv, kv, E);
        }
    }
}

/* ---- minimax-01 (MiniMax-Text-01, MiniMax-M1) ----------------------------------------- */

/* residual_scale is required (the converter stores the layernorm alpha);
 * the layout is written as recurrent_layers flags, which llama.cpp reads
 * before its default full_attention_interval of 8. */
static void minimax01_meta(twin_ctx *t)
{
    kvp_gguf_w_f32(t->w, twin_key(t, "residual_scale"), 1.0f);
    kvp_gguf_w_arr_bool(t->w, twin_key(t, "attention.recurrent_layers"), t->is_recr, t->n_layer);
}

/* Softmax layers: q, k, v, o; lightning layers: a fused qkv of 3 x heads x
 * head_dim, an output gate and a norm over heads x head_dim.  Every layer
 * is MoE with experts of feed_forward_length. */
static void minimax01_tensors(twin_ctx *t)
{
    const uint64_t E = t->n_embd, H = t->n_head0, hk = t->hk;
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if (!t->is_recr[il]) {
            uint64_t kv = t->n_kv[il];
            twin_tensor(t, il, "blk.%d.attn_q.weight", W, E, H * hk, 0);
            twin_tensor(t, il, "blk.%d.attn_k.weight", W, E, kv * hk, 0);
            twin_tensor(t, il, "blk.%d.attn_v.weight", W, E, kv * t->hv, 0);
        } else {
            twin_tensor(t, il, "blk.%d.attn_norm_2.weight", F, H * hk, 0, 0);
            twin_tensor(t, il, "blk.%d.attn_qkv.weight", W, E, 3 * H * hk, 0);
            twin_tensor(t, il, "blk.%d.attn_gate.weight", W, E, H * hk, 0);
        }
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, H * hk, E, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_moe(t, il, t->n_ff);
    }
}

/* Without recurrent_layers or full_attention_interval, llama.cpp's
 * minimax-01 default interval is 8 (the generic rule's is 4). */
static int minimax01_rules(gguf_rd *r)
{
    if (kvp_gguf_find(r->f, gguf_rd_key(r, "attention.recurrent_layers")) ||
        kvp_gguf_find(r->f, gguf_rd_key(r, "full_attention_interval")))
        return 0;
    for (uint32_t i = 0; i < r->m->n_layers; i++)
        r->is_recr[i] = (i + 1) % 8 != 0;
    return 0;
}

/* ---- plamo2 (PLaMo 2) ---------------------------------------------------------------- */

/* Mamba layers: in (x and gate), conv, a bcdt projection of dt_dim + 2
 * d_state with RMS norms, dt of dt_dim = max(64, n_embd / 16) to the heads;
 * attention layers: fused qkv with per-head q/k norms.  Every block has
 * post-mixer and post-FFN norms (named without .weight) and an FFN whose
 * up projection holds gate and up. */
static void plamo2_tensors(twin_ctx *t)
{
    const uint64_t E = t->n_embd, di = t->d_inner, ds = t->d_state, r = t->dt_rank;
    const uint64_t dt_dim = E / 16 > 64 ? E / 16 : 64;
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if (t->is_recr[il]) {
            twin_tensor(t, il, "blk.%d.ssm_in.weight", W, E, 2 * di, 0);
            twin_tensor(t, il, "blk.%d.ssm_conv1d.weight", F, t->d_conv, di, 0);
            twin_tensor(t, il, "blk.%d.ssm_x.weight", W, di, dt_dim + 2 * ds, 0);
            twin_tensor(t, il, "blk.%d.ssm_dt.weight", W, dt_dim, r, 0);
            twin_tensor(t, il, "blk.%d.ssm_dt.bias", F, r, 0, 0);
            twin_tensor(t, il, "blk.%d.ssm_a", F, r, 0, 0);
            twin_tensor(t, il, "blk.%d.ssm_d", F, r, 0, 0);
            twin_tensor(t, il, "blk.%d.ssm_out.weight", W, di, E, 0);
            twin_tensor(t, il, "blk.%d.ssm_dt_norm", F, dt_dim, 0, 0);
            twin_tensor(t, il, "blk.%d.ssm_b_norm", F, ds, 0, 0);
            twin_tensor(t, il, "blk.%d.ssm_c_norm", F, ds, 0, 0);
        } else {
            uint64_t h = t->n_head[il], kv = t->n_kv[il], hk = t->lhk[il], hv = t->lhv[il];
            twin_tensor(t, il, "blk.%d.attn_qkv.weight", W, E, h * hk + kv * hk + kv * hv, 0);
            twin_tensor(t, il, "blk.%d.attn_q_norm.weight", F, hk, h, 0);
            twin_tensor(t, il, "blk.%d.attn_k_norm.weight", F, hk, kv, 0);
            twin_tensor(t, il, "blk.%d.attn_output.weight", W, h * hv, E, 0);
        }
        twin_t_norm(t, il, "blk.%d.post_attention_norm");
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_tensor(t, il, "blk.%d.ffn_down.weight", W, t->n_ff, E, 0);
        twin_tensor(t, il, "blk.%d.ffn_up.weight", W, E, 2 * t->n_ff, 0);
        twin_t_norm(t, il, "blk.%d.post_ffw_norm");
    }
}

/* PLaMo 2's converter gives Mamba layers 0 heads, so layer 0 often has
 * none: llama.cpp then reads the head sizes from key_length / value_length
 * alone (plamo2's load_arch_hparams), where the generic reader gives 0. */
static int plamo2_finish(gguf_rd *r)
{
    uint64_t k, v;
    if (r->n_head[0])
        return 0;
    if (gguf_rd_opt(r, "attention.key_length", 0, KVP_MAX_DIM, &k) ||
        gguf_rd_opt(r, "attention.value_length", 0, KVP_MAX_DIM, &v))
        return -1;
    for (uint32_t il = 0; il < r->m->n_layers; il++) {
        kvp_layer *L = &r->m->layers[il];
        if (L->kind == KVP_LAYER_FULL) {
            L->head_dim_k = (uint32_t)k;
            L->head_dim_v = (uint32_t)v;
            if (!r->m->n_heads)
                r->m->n_heads = L->n_head;
        }
    }
    kvp_model_fact(r->m, "head_dim", (int64_t)k, "attention.key_length (plamo2)");
    return 0;
}

/* ---- rwkv6, rwkv6qwen2, rwkv7, arwkv7 ------------------------------------------------------ */

/* A 4-D F32 tensor (the fused token-shift lerps, {n_embd, 1, 1, k}), which
 * twin_tensor's three dimensions cannot say. */
static void tensor4(twin_ctx *t, int il, const char *name, uint64_t ne0, uint64_t ne3)
{
    char buf[96];
    uint64_t ne[4] = {ne0, 1, 1, ne3};
    snprintf(buf, sizeof buf, name, il);
    t->bytes += ne0 * ne3 * 4;
    kvp_gguf_w_tensor(t->w, buf, 4, ne, GGML_TYPE_F32_ID);
}

/* The low-rank sizes nothing in the state depends on, as the converter
 * computes them from n_embd (conversion/rwkv.py). */
static uint64_t rwkv6_mix_dim(const twin_ctx *t) { return t->n_embd >= 4096 ? 64 : 32; }
static uint64_t rwkv6_decay_dim(const twin_ctx *t) { return t->n_embd >= 4096 ? 128 : 64; }
static uint64_t rwkv7_rank(const twin_ctx *t, double e, double mult)
{
    double r = round(pow((double)t->n_embd, e) * mult / 32);
    return (r < 1 ? 1 : (uint64_t)r) * 32;
}

/* The keys every RWKV reads: the WKV head size and the token shifts
 * (2 for rwkv6/rwkv7, 1 for the Qwen-derived ones; d_conv = shifts + 1). */
static void rwkv_meta(twin_ctx *t)
{
    u32(t, "wkv.head_size", t->d_state);
    u32(t, "token_shift_count", t->d_conv - 1);
}

static void rwkv6_meta(twin_ctx *t)
{
    rwkv_meta(t);
    u32(t, "time_mix_extra_dim", rwkv6_mix_dim(t));
    u32(t, "time_decay_extra_dim", rwkv6_decay_dim(t));
}

static void rwkv7_meta(twin_ctx *t)
{
    rwkv_meta(t);
    u32(t, "attention.decay_lora_rank", rwkv7_rank(t, 0.5, 1.8));
    u32(t, "attention.iclr_lora_rank", rwkv7_rank(t, 0.5, 1.8));
    u32(t, "attention.value_residual_mix_lora_rank", rwkv7_rank(t, 0.5, 1.3));
    u32(t, "attention.gate_lora_rank", rwkv7_rank(t, 0.8, 0.6));
}

/* the layernorm pair (weight and bias) of a name with one %d, or none */
static void ln_pair(twin_ctx *t, int il, const char *w, const char *b)
{
    twin_tensor(t, il, w, F, t->n_embd, 0, 0);
    twin_tensor(t, il, b, F, t->n_embd, 0, 0);
}

/* RWKV6's time mix: the 5-way token-shift LoRA, the decay LoRA, r/k/v/g */
static void rwkv6_time_mix(twin_ctx *t, int il, int qwen2)
{
    const uint64_t E = t->n_embd, mx = rwkv6_mix_dim(t), dx = rwkv6_decay_dim(t);
    twin_tensor(t, il, "blk.%d.time_mix_w1.weight", W, E, mx * 5, 0);
    twin_tensor(t, il, "blk.%d.time_mix_w2.weight", W, mx, E, 5);
    twin_tensor(t, il, "blk.%d.time_mix_lerp_x.weight", F, E, 0, 0);
    tensor4(t, il, "blk.%d.time_mix_lerp_fused.weight", E, 5);
    if (!qwen2)
        twin_tensor(t, il, "blk.%d.time_mix_first.weight", F, t->d_state, E / t->d_state, 0);
    twin_tensor(t, il, "blk.%d.time_mix_decay.weight", F, E, 0, 0);
    twin_tensor(t, il, "blk.%d.time_mix_decay_w1.weight", W, E, dx, 0);
    twin_tensor(t, il, "blk.%d.time_mix_decay_w2.weight", W, dx, E, 0);
    twin_tensor(t, il, "blk.%d.time_mix_key.weight", W, E, E, 0);
    twin_tensor(t, il, "blk.%d.time_mix_value.weight", W, E, E, 0);
    twin_tensor(t, il, "blk.%d.time_mix_receptance.weight", W, E, E, 0);
    twin_tensor(t, il, "blk.%d.time_mix_gate.weight", W, E, E, 0);
    if (!qwen2)
        ln_pair(t, il, "blk.%d.time_mix_ln.weight", "blk.%d.time_mix_ln.bias");
    twin_tensor(t, il, "blk.%d.time_mix_output.weight", W, E, E, 0);
}

/* RWKV7's time mix: decay (w), in-context learning rate (a), value
 * residual (v) and gate (g) LoRAs, the 6-way fused lerp, k_k, k_a, r_k */
static void rwkv7_time_mix(twin_ctx *t, int il, int arwkv)
{
    const uint64_t E = t->n_embd, dr = rwkv7_rank(t, 0.5, 1.8), ir = dr;
    const uint64_t vr = rwkv7_rank(t, 0.5, 1.3), gr = rwkv7_rank(t, 0.8, 0.6);
    const uint64_t v_r = il == 0 ? ir : vr;
    twin_tensor(t, il, "blk.%d.time_mix_w0.weight", F, E, 0, 0);
    twin_tensor(t, il, "blk.%d.time_mix_w1.weight", W, E, dr, 0);
    twin_tensor(t, il, "blk.%d.time_mix_w2.weight", W, dr, E, 0);
    twin_tensor(t, il, "blk.%d.time_mix_a0.weight", F, E, 0, 0);
    twin_tensor(t, il, "blk.%d.time_mix_a1.weight", W, E, ir, 0);
    twin_tensor(t, il, "blk.%d.time_mix_a2.weight", W, ir, E, 0);
    twin_tensor(t, il, "blk.%d.time_mix_v0.weight", F, E, 0, 0);
    twin_tensor(t, il, "blk.%d.time_mix_v1.weight", W, E, v_r, 0);
    twin_tensor(t, il, "blk.%d.time_mix_v2.weight", W, v_r, E, 0);
    twin_tensor(t, il, "blk.%d.time_mix_g1.weight", W, E, gr, 0);
    twin_tensor(t, il, "blk.%d.time_mix_g2.weight", W, gr, E, 0);
    tensor4(t, il, "blk.%d.time_mix_lerp_fused.weight", E, 6);
    twin_tensor(t, il, "blk.%d.time_mix_k_k.weight", F, E, 0, 0);
    twin_tensor(t, il, "blk.%d.time_mix_k_a.weight", F, E, 0, 0);
    twin_tensor(t, il, "blk.%d.time_mix_r_k.weight", F, E, 0, 0);
    twin_tensor(t, il, "blk.%d.time_mix_key.weight", W, E, E, 0);
    twin_tensor(t, il, "blk.%d.time_mix_value.weight", W, E, E, 0);
    twin_tensor(t, il, "blk.%d.time_mix_receptance.weight", W, E, E, 0);
    if (!arwkv)
        ln_pair(t, il, "blk.%d.time_mix_ln.weight", "blk.%d.time_mix_ln.bias");
    twin_tensor(t, il, "blk.%d.time_mix_output.weight", W, E, E, 0);
}

/* RWKV's own channel mix (rwkv6 adds a receptance) */
static void rwkv_channel_mix(twin_ctx *t, int il, int receptance)
{
    const uint64_t E = t->n_embd;
    twin_tensor(t, il, "blk.%d.channel_mix_lerp_k.weight", F, E, 0, 0);
    if (receptance)
        twin_tensor(t, il, "blk.%d.channel_mix_lerp_r.weight", F, E, 0, 0);
    twin_tensor(t, il, "blk.%d.channel_mix_key.weight", W, E, t->n_ff, 0);
    twin_tensor(t, il, "blk.%d.channel_mix_value.weight", W, t->n_ff, E, 0);
    if (receptance)
        twin_tensor(t, il, "blk.%d.channel_mix_receptance.weight", W, E, E, 0);
}

/* rwkv6 and rwkv7: layernorms with biases, an input norm (token_embd_norm) */
static void rwkv_head(twin_ctx *t)
{
    twin_tensor(t, -1, "token_embd.weight", W, t->n_embd, t->n_vocab, 0);
    ln_pair(t, -1, "token_embd_norm.weight", "token_embd_norm.bias");
    ln_pair(t, -1, "output_norm.weight", "output_norm.bias");
    twin_tensor(t, -1, "output.weight", W, t->n_embd, t->n_vocab, 0);
}

static void rwkv6_tensors(twin_ctx *t)
{
    rwkv_head(t);
    for (int il = 0; il < (int)t->n_layer; il++) {
        ln_pair(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        ln_pair(t, il, "blk.%d.attn_norm_2.weight", "blk.%d.attn_norm_2.bias");
        rwkv6_time_mix(t, il, 0);
        rwkv_channel_mix(t, il, 1);
    }
}

static void rwkv7_tensors(twin_ctx *t)
{
    rwkv_head(t);
    for (int il = 0; il < (int)t->n_layer; il++) {
        ln_pair(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        ln_pair(t, il, "blk.%d.attn_norm_2.weight", "blk.%d.attn_norm_2.bias");
        rwkv7_time_mix(t, il, 0);
        rwkv_channel_mix(t, il, 0);
    }
}

/* The Qwen-derived ones: RMS norms and Qwen's gated FFN instead of the
 * channel mix, no input norm. */
static void qwen_rwkv_tensors(twin_ctx *t, int v7)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if (v7)
            rwkv7_time_mix(t, il, 1);
        else
            rwkv6_time_mix(t, il, 1);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
    }
}

static void rwkv6qwen2_tensors(twin_ctx *t) { qwen_rwkv_tensors(t, 0); }
static void arwkv7_tensors(twin_ctx *t) { qwen_rwkv_tensors(t, 1); }

/* ---- the group's rows ------------------------------------------------------------ */

static const twin_arch arches[] = {
    /* gguf, family, swa, period, dense_first, n_swa default, recurrent, state,
     * recurrent kind, mla, embd_tied, kv_from_start, meta, tensors, rules, finish */
    {"nemotron_h_moe", "nemotron-h", SWA_NONE, 0, 0, 0, RECR_KV0_FF0, STATE_SSM, KVP_LAYER_MAMBA,
     0, 0, -1, NULL, nemotron_h_moe_tensors, NULL, NULL},
    /* KDA layers have no KV heads; the others are MLA */
    {"kimi-linear", "kimi-linear", SWA_NONE, 0, 0, 0, RECR_KV0, STATE_KDA, KVP_LAYER_LINEAR, 1, 0,
     -1, kimi_linear_meta, kimi_linear_tensors, NULL, NULL},
    /* lfm2's layout without its window: conv layers have no KV heads */
    {"lfm2moe", "lfm2", SWA_NONE, 0, 0, 0, RECR_KV0, STATE_SHORTCONV, KVP_LAYER_LINEAR, 0, 1,
     -1, lfm2moe_meta, lfm2moe_tensors, NULL, NULL},
    /* lightning-attention layers hold heads x key_length^2 of state */
    {"minimax-01", "minimax-01", SWA_NONE, 0, 0, 0, RECR_INTERVAL, STATE_LA, KVP_LAYER_LINEAR, 0, 0,
     -1, minimax01_meta, minimax01_tensors, minimax01_rules, NULL},
    /* Mamba layers have no KV heads (and, from the converter, no heads) */
    {"plamo2", "plamo2", SWA_NONE, 0, 0, 0, RECR_KV0, STATE_SSM, KVP_LAYER_MAMBA, 0, 0, -1, NULL,
     plamo2_tensors, NULL, plamo2_finish},
    /* kimi-linear's layout: KDA layers have no KV heads, the others are MLA */
    {"kimi-k3", "kimi-linear", SWA_NONE, 0, 0, 0, RECR_KV0, STATE_KDA, KVP_LAYER_LINEAR, 1, 0, -1,
     kimi_k3_meta, kimi_k3_tensors, NULL, NULL},
    {"bailingmoe3", "bailing-moe-v3", SWA_NONE, 0, 0, 0, RECR_KV0, STATE_KDA, KVP_LAYER_LINEAR, 1,
     0, -1, bailingmoe3_meta, bailingmoe3_tensors, NULL, NULL},
    /* every RWKV layer is recurrent: token shifts of n_embd and an n_embd x
     * head_size WKV state, so n_embd stays real in a --kv-only twin */
    {"rwkv6", "rwkv", SWA_NONE, 0, 0, 0, RECR_ALL, STATE_RWKV, KVP_LAYER_LINEAR, 0, 1, -1,
     rwkv6_meta, rwkv6_tensors, NULL, NULL},
    {"rwkv6qwen2", "rwkv", SWA_NONE, 0, 0, 0, RECR_ALL, STATE_RWKV, KVP_LAYER_LINEAR, 0, 1,
     -1, rwkv6_meta, rwkv6qwen2_tensors, NULL, NULL},
    {"rwkv7", "rwkv", SWA_NONE, 0, 0, 0, RECR_ALL, STATE_RWKV, KVP_LAYER_LINEAR, 0, 1, -1,
     rwkv7_meta, rwkv7_tensors, NULL, NULL},
    {"arwkv7", "rwkv", SWA_NONE, 0, 0, 0, RECR_ALL, STATE_RWKV, KVP_LAYER_LINEAR, 0, 1, -1,
     rwkv7_meta, arwkv7_tensors, NULL, NULL},
};

const twin_arch_group twin_group_state = {.arches = arches, .n = sizeof arches / sizeof arches[0],};
