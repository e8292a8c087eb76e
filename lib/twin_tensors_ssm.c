/* twin_tensors_ssm.c - the tensor lists of the architectures with a
 * recurrent state: Gated DeltaNet (qwen3next, qwen35, qwen35moe), Mamba and
 * Mamba2 mixers (mamba, mamba2, jamba, falcon-h1, granitehybrid,
 * nemotron_h) and LFM2's short convolutions, as load_arch_tensors creates
 * them in llama.cpp v0.5.0.  Conventions as in twin_tensors.c; the SSM's
 * A, D, conv and norm tensors are F32 as converters store them. */
#include "twin.h"

#define W 0 /* F16 */
#define F 1 /* F32 */

/* ---- Gated DeltaNet ---------------------------------------------------------- */

/* Key heads n_group x d_state, value heads dt_rank x d_state (llama.cpp
 * assumes one head size for both). */
static void gdn_mixer(twin_ctx *t, int il, int fused_ba)
{
    uint64_t key_dim = (uint64_t)t->n_group * t->d_state, value_dim = t->d_inner;
    uint64_t conv_dim = 2 * key_dim + value_dim, E = t->n_embd;
    twin_tensor(t, il, "blk.%d.attn_qkv.weight", W, E, conv_dim, 0);
    twin_tensor(t, il, "blk.%d.attn_gate.weight", W, E, value_dim, 0);
    twin_tensor(t, il, "blk.%d.ssm_conv1d.weight", F, t->d_conv, conv_dim, 0);
    twin_tensor(t, il, "blk.%d.ssm_dt.bias", F, t->dt_rank, 0, 0);
    twin_tensor(t, il, "blk.%d.ssm_a", F, t->dt_rank, 0, 0);
    if (fused_ba) {
        twin_tensor(t, il, "blk.%d.ssm_ba.weight", W, E, 2ull * t->dt_rank, 0);
    } else {
        twin_tensor(t, il, "blk.%d.ssm_beta.weight", W, E, t->dt_rank, 0);
        twin_tensor(t, il, "blk.%d.ssm_alpha.weight", W, E, t->dt_rank, 0);
    }
    twin_tensor(t, il, "blk.%d.ssm_norm.weight", F, t->d_state, 0, 0);
    twin_tensor(t, il, "blk.%d.ssm_out.weight", W, value_dim, E, 0);
}

/* Full-attention layers of the GDN models: a gated query (2 x q). */
static void gdn_attention(twin_ctx *t, int il)
{
    uint64_t h = t->n_head[il], kv = t->n_kv[il], hk = t->lhk[il];
    twin_t_qkvo(t, il, 2 * h * hk, kv * hk, kv * t->lhv[il], h * hk);
    twin_tensor(t, il, "blk.%d.attn_q_norm.weight", F, hk, 0, 0);
    twin_tensor(t, il, "blk.%d.attn_k_norm.weight", F, hk, 0, 0);
}

static void gdn_moe(twin_ctx *t, int il)
{
    twin_t_moe(t, il, t->n_ff_exp);
    twin_tensor(t, il, "blk.%d.ffn_gate_inp_shexp.weight", F, t->n_embd, 0, 0);
    twin_t_shexp(t, il, t->n_ff_shexp ? t->n_ff_shexp : t->n_ff);
}

static void gdn_model(twin_ctx *t, int moe, int fused_ba)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_norm(t, il, "blk.%d.post_attention_norm.weight");
        if (t->is_recr[il])
            gdn_mixer(t, il, fused_ba);
        else
            gdn_attention(t, il);
        if (moe)
            gdn_moe(t, il);
        else
            twin_t_ffn(t, il, t->n_ff);
    }
}

void twin_tensors_qwen3next(twin_ctx *t) { gdn_model(t, 1, 1); }
void twin_tensors_qwen35(twin_ctx *t) { gdn_model(t, 0, 0); }
void twin_tensors_qwen35moe(twin_ctx *t) { gdn_model(t, 1, 0); }

/* ---- Mamba ------------------------------------------------------------------------ */

/* Mamba1 mixer (mamba, jamba); jamba adds RMS norms on dt, B and C. */
static void mamba1_mixer(twin_ctx *t, int il, int bc_norms)
{
    uint64_t di = t->d_inner, ds = t->d_state, r = t->dt_rank;
    twin_tensor(t, il, "blk.%d.ssm_in.weight", W, t->n_embd, 2 * di, 0);
    twin_tensor(t, il, "blk.%d.ssm_conv1d.weight", F, t->d_conv, di, 0);
    twin_tensor(t, il, "blk.%d.ssm_conv1d.bias", F, di, 0, 0);
    twin_tensor(t, il, "blk.%d.ssm_x.weight", W, di, r + 2 * ds, 0);
    if (bc_norms)
        twin_tensor(t, il, "blk.%d.ssm_dt_norm.weight", F, r, 0, 0);
    twin_tensor(t, il, "blk.%d.ssm_dt.weight", W, r, di, 0);
    twin_tensor(t, il, "blk.%d.ssm_dt.bias", F, di, 0, 0);
    if (bc_norms) {
        twin_tensor(t, il, "blk.%d.ssm_b_norm.weight", F, ds, 0, 0);
        twin_tensor(t, il, "blk.%d.ssm_c_norm.weight", F, ds, 0, 0);
    }
    twin_tensor(t, il, "blk.%d.ssm_a", F, ds, di, 0);
    twin_tensor(t, il, "blk.%d.ssm_d", F, di, 0, 0);
    twin_tensor(t, il, "blk.%d.ssm_out.weight", W, di, t->n_embd, 0);
}

/* Mamba2 mixer (mamba2, falcon-h1, granitehybrid, nemotron_h): one input
 * projection to z, x, B, C and dt; heads of d_inner / dt_rank. */
static void mamba2_mixer(twin_ctx *t, int il)
{
    uint64_t di = t->d_inner, g = t->n_group, r = t->dt_rank;
    uint64_t conv_dim = di + 2 * g * t->d_state;
    twin_tensor(t, il, "blk.%d.ssm_in.weight", W, t->n_embd, di + conv_dim + r, 0);
    twin_tensor(t, il, "blk.%d.ssm_conv1d.weight", F, t->d_conv, conv_dim, 0);
    twin_tensor(t, il, "blk.%d.ssm_conv1d.bias", F, conv_dim, 0, 0);
    twin_tensor(t, il, "blk.%d.ssm_dt.bias", F, r, 0, 0);
    twin_tensor(t, il, "blk.%d.ssm_a", F, 1, r, 0);
    twin_tensor(t, il, "blk.%d.ssm_d", F, 1, r, 0);
    twin_tensor(t, il, "blk.%d.ssm_norm.weight", F, di / g, g, 0);
    twin_tensor(t, il, "blk.%d.ssm_out.weight", W, di, t->n_embd, 0);
}

void twin_tensors_mamba(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        mamba1_mixer(t, il, 0);
    }
}

void twin_tensors_mamba2(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        mamba2_mixer(t, il);
    }
}

/* jamba: Mamba1 or attention per layer; experts on every other layer
 * (expert_layer_period 2, offset 1), of feed_forward_length */
void twin_tensors_jamba(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if (t->is_recr[il]) {
            mamba1_mixer(t, il, 1);
        } else {
            uint64_t kv = (uint64_t)t->n_kv[il] * t->lhv[il];
            twin_t_qkvo(t, il, t->n_embd, kv, kv, t->n_embd);
        }
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if (t->n_expert && il % 2 == 1)
            twin_t_moe(t, il, t->n_ff);
        else
            twin_t_ffn(t, il, t->n_ff);
    }
}

static void attention(twin_ctx *t, int il)
{
    uint64_t h = t->n_head[il], kv = t->n_kv[il];
    twin_t_qkvo(t, il, h * t->lhk[il], kv * t->lhk[il], kv * t->lhv[il], h * t->lhk[il]);
}

/* falcon-h1: every layer runs a Mamba2 mixer beside attention; its FFN
 * norm is named without ".weight" */
void twin_tensors_falcon_h1(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        mamba2_mixer(t, il);
        attention(t, il);
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_norm(t, il, "blk.%d.ffn_norm");
        twin_t_ffn(t, il, t->n_ff);
    }
}

void twin_tensors_granitehybrid(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if (t->is_recr[il])
            mamba2_mixer(t, il);
        else
            attention(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if (t->n_expert) {
            twin_t_moe(t, il, t->n_ff);
            if (t->n_ff_shexp)
                twin_t_shexp(t, il, t->n_ff_shexp);
        } else {
            twin_t_ffn(t, il, t->n_ff);
        }
    }
}

/* nemotron_h: each block is Mamba2, attention, or an MLP (up/down, ReLU^2) */
void twin_tensors_nemotron_h(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if (t->is_recr[il]) {
            mamba2_mixer(t, il);
        } else if (t->is_attn[il]) {
            attention(t, il);
        } else {
            twin_tensor(t, il, "blk.%d.ffn_down.weight", W, t->ff[il], t->n_embd, 0);
            twin_tensor(t, il, "blk.%d.ffn_up.weight", W, t->n_embd, t->ff[il], 0);
        }
    }
}

/* lfm2: short-conv or attention blocks, each with a dense FFN; the final
 * norm is called token_embd_norm */
void twin_tensors_lfm2(twin_ctx *t)
{
    uint64_t E = t->n_embd;
    twin_t_embd(t, TW_OUTPUT, "token_embd_norm.weight");
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
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

/* ---- building blocks for the groups of lib/llama/ ------------------------------ */

void twin_t_mamba2(twin_ctx *t, int il) { mamba2_mixer(t, il); }
