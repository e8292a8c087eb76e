/* twin_tensors.c - the tensor lists of the attention architectures, as
 * each load_arch_tensors in llama.cpp v0.5.0's src/models/<arch>.cpp
 * creates them: every required tensor with its shape, optional ones left
 * out (biases, rope factors), except where a real checkpoint has them and
 * the graph uses them.  llama.cpp refuses a file with a missing required
 * tensor, a wrong shape, or a tensor it did not ask for, so the lists must
 * be exact.  The recurrent architectures are in twin_tensors_ssm.c.
 *
 * ne0 is the fastest dimension, as in ggml: a matmul weight from n_embd to
 * n is {n_embd, n}.  Matrices are F16, norms and other small vectors F32. */
#include <stdio.h>

#include "twin.h"

#define W 0 /* F16 */
#define F 1 /* F32 */

void twin_tensor(twin_ctx *t, int il, const char *name, int f32, uint64_t ne0, uint64_t ne1,
                 uint64_t ne2)
{
    char buf[96];
    uint64_t ne[3] = {ne0, ne1, ne2}, n = 1;
    uint32_t dims = ne2 ? 3 : ne1 ? 2 : 1;
    if (dims == 1)
        f32 = 1;
    if (il >= 0)
        snprintf(buf, sizeof buf, name, il);
    else
        snprintf(buf, sizeof buf, "%s", name);
    for (uint32_t i = 0; i < dims; i++)
        n *= ne[i];
    t->bytes += n * (f32 ? 4 : 2);
    kvp_gguf_w_tensor(t->w, buf, dims, ne, f32 ? GGML_TYPE_F32_ID : GGML_TYPE_F16_ID);
}

/* ---- building blocks ------------------------------------------------------------ */

void twin_t_embd(twin_ctx *t, int output, const char *output_norm)
{
    twin_tensor(t, -1, "token_embd.weight", W, t->n_embd, t->n_vocab, 0);
    twin_tensor(t, -1, output_norm ? output_norm : "output_norm.weight", F, t->n_embd, 0, 0);
    if (output == TW_OUTPUT)
        twin_tensor(t, -1, "output.weight", W, t->n_embd, t->n_vocab, 0);
}

void twin_t_norm(twin_ctx *t, int il, const char *name)
{
    twin_tensor(t, il, name, F, t->n_embd, 0, 0);
}

void twin_t_qkvo(twin_ctx *t, int il, uint64_t q, uint64_t k, uint64_t v, uint64_t o_in)
{
    twin_tensor(t, il, "blk.%d.attn_q.weight", W, t->n_embd, q, 0);
    twin_tensor(t, il, "blk.%d.attn_k.weight", W, t->n_embd, k, 0);
    twin_tensor(t, il, "blk.%d.attn_v.weight", W, t->n_embd, v, 0);
    twin_tensor(t, il, "blk.%d.attn_output.weight", W, o_in, t->n_embd, 0);
}

void twin_t_ffn(twin_ctx *t, int il, uint64_t ff)
{
    twin_tensor(t, il, "blk.%d.ffn_gate.weight", W, t->n_embd, ff, 0);
    twin_tensor(t, il, "blk.%d.ffn_down.weight", W, ff, t->n_embd, 0);
    twin_tensor(t, il, "blk.%d.ffn_up.weight", W, t->n_embd, ff, 0);
}

void twin_t_moe(twin_ctx *t, int il, uint64_t ff_exp)
{
    twin_tensor(t, il, "blk.%d.ffn_gate_inp.weight", W, t->n_embd, t->n_expert, 0);
    twin_tensor(t, il, "blk.%d.ffn_gate_exps.weight", W, t->n_embd, ff_exp, t->n_expert);
    twin_tensor(t, il, "blk.%d.ffn_down_exps.weight", W, ff_exp, t->n_embd, t->n_expert);
    twin_tensor(t, il, "blk.%d.ffn_up_exps.weight", W, t->n_embd, ff_exp, t->n_expert);
}

void twin_t_shexp(twin_ctx *t, int il, uint64_t ff_shexp)
{
    twin_tensor(t, il, "blk.%d.ffn_gate_shexp.weight", W, t->n_embd, ff_shexp, 0);
    twin_tensor(t, il, "blk.%d.ffn_down_shexp.weight", W, ff_shexp, t->n_embd, 0);
    twin_tensor(t, il, "blk.%d.ffn_up_shexp.weight", W, t->n_embd, ff_shexp, 0);
}

/* The usual GQA projections: q and o of n_head x head_k, k and v of
 * n_kv x head. */
void twin_t_gqa(twin_ctx *t, int il)
{
    uint64_t h = t->n_head[il], kv = t->n_kv[il];
    twin_t_qkvo(t, il, h * t->lhk[il], kv * t->lhk[il], kv * t->lhv[il], h * t->lhk[il]);
}

/* q and o pinned to n_embd (qwen2, cohere2, jamba...): the graph reshapes
 * n_embd into heads. */
void twin_t_gqa_embd(twin_ctx *t, int il)
{
    uint64_t kv = t->n_kv[il];
    twin_t_qkvo(t, il, t->n_embd, kv * t->lhk[il], kv * t->lhv[il], t->n_embd);
}

void twin_t_qk_norm(twin_ctx *t, int il)
{
    twin_tensor(t, il, "blk.%d.attn_k_norm.weight", F, t->lhk[il], 0, 0);
    twin_tensor(t, il, "blk.%d.attn_q_norm.weight", F, t->lhk[il], 0, 0);
}

/* ---- the architectures ------------------------------------------------------------ */

/* llama (Llama 2/3, Mistral, Mixtral): the experts use feed_forward_length */
void twin_tensors_llama(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if (t->n_expert)
            twin_t_moe(t, il, t->n_ff);
        else
            twin_t_ffn(t, il, t->n_ff);
    }
}

void twin_tensors_qwen2(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa_embd(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
    }
}

void twin_tensors_qwen3(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_qk_norm(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
    }
}

void twin_tensors_qwen3moe(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_qk_norm(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_moe(t, il, t->n_ff_exp);
    }
}

/* qwen2moe (Qwen1.5-MoE, Qwen2-57B-A14B): qwen2's n_embd-wide q and o,
 * every layer MoE with a gated shared expert (src/models/qwen2moe.cpp) */
void twin_tensors_qwen2moe(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa_embd(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_moe(t, il, t->n_ff_exp);
        twin_tensor(t, il, "blk.%d.ffn_gate_inp_shexp.weight", F, t->n_embd, 0, 0);
        twin_t_shexp(t, il, t->n_ff_shexp ? t->n_ff_shexp : t->n_ff);
    }
}

/* phi3: fused QKV, and ffn_up holds gate and up (2 x n_ff) */
void twin_tensors_phi3(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t kv = (uint64_t)t->n_kv[il] * t->lhk[il];
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_tensor(t, il, "blk.%d.attn_qkv.weight", W, t->n_embd, t->n_embd + 2 * kv, 0);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, t->n_embd, t->n_embd, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_tensor(t, il, "blk.%d.ffn_down.weight", W, t->n_ff, t->n_embd, 0);
        twin_tensor(t, il, "blk.%d.ffn_up.weight", W, t->n_embd, 2 * t->n_ff, 0);
    }
}

/* gemma2: the output reuses token_embd, so output.weight must be absent */
void twin_tensors_gemma2(twin_ctx *t)
{
    twin_t_embd(t, TW_NO_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_norm(t, il, "blk.%d.post_attention_norm.weight");
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
        twin_t_norm(t, il, "blk.%d.post_ffw_norm.weight");
    }
}

static void gemma3_block(twin_ctx *t, int il)
{
    twin_t_norm(t, il, "blk.%d.attn_norm.weight");
    twin_t_gqa(t, il);
    twin_t_norm(t, il, "blk.%d.post_attention_norm.weight");
    twin_t_qk_norm(t, il);
    twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
    twin_t_ffn(t, il, t->n_ff);
    twin_t_norm(t, il, "blk.%d.post_ffw_norm.weight");
}

/* gemma3: tied embeddings (output.weight absent, as Google ships it) */
void twin_tensors_gemma3(twin_ctx *t)
{
    twin_t_embd(t, TW_NO_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++)
        gemma3_block(t, il);
}

/* gemma3n: Gemma 3 blocks plus AltUp (4 streams), LAuReL (rank 64) and
 * per-layer embeddings (256 wide), llama.cpp's fixed hparams defaults */
void twin_tensors_gemma3n(twin_ctx *t)
{
    const uint64_t altup = 4, laurel = 64, ple = 256, E = t->n_embd;
    twin_tensor(t, -1, "token_embd.weight", W, E, t->n_vocab, 0);
    twin_tensor(t, -1, "altup_proj.weight", W, E, E, altup - 1);
    twin_tensor(t, -1, "altup_unembd_proj.weight", W, E, E, altup - 1);
    twin_tensor(t, -1, "per_layer_token_embd.weight", W, ple * t->n_layer, t->n_vocab, 0);
    twin_tensor(t, -1, "per_layer_model_proj.weight", W, E, ple * t->n_layer, 0);
    twin_tensor(t, -1, "per_layer_proj_norm.weight", F, ple, 0, 0);
    twin_tensor(t, -1, "output_norm.weight", F, E, 0, 0);
    for (int il = 0; il < (int)t->n_layer; il++) {
        gemma3_block(t, il);
        twin_tensor(t, il, "blk.%d.inp_gate.weight", W, E, ple, 0);
        twin_tensor(t, il, "blk.%d.proj.weight", W, ple, E, 0);
        twin_t_norm(t, il, "blk.%d.post_norm.weight");
        twin_tensor(t, il, "blk.%d.altup_correct_coef.weight", F, altup, altup, 0);
        twin_t_norm(t, il, "blk.%d.altup_correct_scale.weight");
        twin_tensor(t, il, "blk.%d.altup_predict_coef.weight", F, altup, altup * altup, 0);
        twin_tensor(t, il, "blk.%d.altup_router.weight", W, E, altup, 0);
        twin_t_norm(t, il, "blk.%d.altup_router_norm.weight");
        twin_tensor(t, il, "blk.%d.laurel_l.weight", W, E, laurel, 0);
        twin_tensor(t, il, "blk.%d.laurel_r.weight", W, laurel, E, 0);
        twin_t_norm(t, il, "blk.%d.laurel_post_norm.weight");
    }
}

/* cohere2: parallel attention and FFN after one norm; tied output */
void twin_tensors_cohere2(twin_ctx *t)
{
    twin_t_embd(t, TW_NO_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa_embd(t, il);
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* gpt-oss: attention sinks, biased router and experts */
void twin_tensors_gpt_oss(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t fe = t->n_ff_exp, x = t->n_expert;
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_norm(t, il, "blk.%d.post_attention_norm.weight");
        twin_t_gqa(t, il);
        twin_tensor(t, il, "blk.%d.attn_sinks.weight", F, t->n_head[il], 0, 0);
        twin_t_moe(t, il, fe);
        twin_tensor(t, il, "blk.%d.attn_output.bias", F, t->n_embd, 0, 0);
        twin_tensor(t, il, "blk.%d.ffn_gate_inp.bias", F, x, 0, 0);
        twin_tensor(t, il, "blk.%d.ffn_gate_exps.bias", F, fe, x, 0);
        twin_tensor(t, il, "blk.%d.ffn_down_exps.bias", F, t->n_embd, x, 0);
        twin_tensor(t, il, "blk.%d.ffn_up_exps.bias", F, fe, x, 0);
    }
}

/* llama4 (Scout): every layer MoE plus one shared expert of the same width */
void twin_tensors_llama4(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_moe(t, il, t->n_ff_exp);
        twin_t_shexp(t, il, t->n_ff_exp);
    }
}

/* olmo2: norms after attention and FFN only; k_norm spans the KV heads */
void twin_tensors_olmo2(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t head = t->n_embd / t->n_head[il];
        twin_t_gqa_embd(t, il);
        twin_tensor(t, il, "blk.%d.attn_q_norm.weight", F, t->n_embd, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_k_norm.weight", F, t->n_kv[il] * head, 0, 0);
        twin_t_norm(t, il, "blk.%d.post_attention_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
        twin_t_norm(t, il, "blk.%d.post_ffw_norm.weight");
    }
}

/* glm4moe: leading dense layers, then sigmoid-routed experts with a bias
 * and shared experts of n_expert_shared x the expert width */
void twin_tensors_glm4moe(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_norm(t, il, "blk.%d.post_attention_norm.weight");
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_t_moe(t, il, t->n_ff_exp);
        twin_tensor(t, il, "blk.%d.exp_probs_b.bias", F, t->n_expert, 0, 0);
        if (t->n_expert_shared)
            twin_t_shexp(t, il, t->n_ff_exp * t->n_expert_shared);
    }
}

/* minimax-m2: q/k norms over all heads; experts of feed_forward_length */
void twin_tensors_minimax_m2(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_gqa(t, il);
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_tensor(t, il, "blk.%d.attn_q_norm.weight", F, (uint64_t)t->n_head[il] * t->lhk[il],
                    0, 0);
        twin_tensor(t, il, "blk.%d.attn_k_norm.weight", F, (uint64_t)t->n_kv[il] * t->lhk[il], 0,
                    0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_moe(t, il, t->n_ff);
        twin_tensor(t, il, "blk.%d.exp_probs_b.bias", F, t->n_expert, 0, 0);
    }
}

/* deepseek2 with MLA: the latent projection, and k_b / v_b that expand it
 * per head; leading dense layers, then routed and shared experts */
void twin_tensors_deepseek2(twin_ctx *t)
{
    const uint64_t kvr = t->kv_lora_rank, rope = t->mla_rope, qr = t->q_lora_rank;
    const uint64_t nope = t->mla_k - rope, E = t->n_embd;
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t h = t->n_head[il];
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if (qr)
            twin_tensor(t, il, "blk.%d.attn_q_a_norm.weight", F, qr, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_kv_a_norm.weight", F, kvr, 0, 0);
        if (qr) {
            twin_tensor(t, il, "blk.%d.attn_q_a.weight", W, E, qr, 0);
            twin_tensor(t, il, "blk.%d.attn_q_b.weight", W, qr, h * t->mla_k, 0);
        } else {
            twin_tensor(t, il, "blk.%d.attn_q.weight", W, E, h * t->mla_k, 0);
        }
        twin_tensor(t, il, "blk.%d.attn_kv_a_mqa.weight", W, E, kvr + rope, 0);
        twin_tensor(t, il, "blk.%d.attn_k_b.weight", W, nope, kvr, h);
        twin_tensor(t, il, "blk.%d.attn_v_b.weight", W, kvr, t->mla_v, h);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, h * t->mla_v, E, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_t_moe(t, il, t->n_ff_exp);
        if (t->n_expert_shared)
            twin_t_shexp(t, il, t->n_ff_exp * t->n_expert_shared);
    }
}
