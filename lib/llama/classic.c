/* llama/classic.c - llama.cpp v0.5.0 architectures of the "classic" group (see
 * twin.h): GPT-2, GPT-NeoX, MPT, BLOOM, Falcon, StarCoder, Refact,
 * Baichuan, StableLM, Qwen 1, Phi-2, CodeShell, Orion, InternLM2, XVERSE,
 * Command R, JAIS, Jais-2, BitNet, Chameleon, PLM, Grok, DBRX and PLaMo.
 *
 * None of them slides, recurs or shares a cache: every layer is one full
 * llama_kv_cache layer of head_count_kv x key_length (and value_length), so
 * the generic GGUF reader describes them and the rows below only name them.
 * The tensor writers follow each src/models/<arch>.cpp load_arch_tensors:
 * every required tensor with its shape, the optional ones a converted
 * checkpoint has when the graph then takes another path (biases are left
 * out where they are optional).  Most of these graphs size Q and the output
 * projection by n_embd, so n_embd is kept under --kv-only (embd_tied). */
#include "../gguf_model.h"

#define W 0 /* F16 */
#define F 1 /* F32 */

/* ---- building blocks ------------------------------------------------------------ */

/* A LayerNorm's weight and bias over n_embd. */
static void norm_b(twin_ctx *t, int il, const char *weight, const char *bias)
{
    twin_t_norm(t, il, weight);
    twin_t_norm(t, il, bias);
}

static uint64_t kv_k(const twin_ctx *t, int il) { return (uint64_t)t->n_kv[il] * t->lhk[il]; }
static uint64_t kv_v(const twin_ctx *t, int il) { return (uint64_t)t->n_kv[il] * t->lhv[il]; }

/* The fused QKV of the GPT-style graphs: {n_embd, n_embd + 2 n_embd_gqa}. */
static void qkv_fused(twin_ctx *t, int il, int bias)
{
    uint64_t n = t->n_embd + kv_k(t, il) + kv_v(t, il);
    twin_tensor(t, il, "blk.%d.attn_qkv.weight", W, t->n_embd, n, 0);
    if (bias)
        twin_tensor(t, il, "blk.%d.attn_qkv.bias", F, n, 0, 0);
}

/* create_tensor_qkv(n_embd, n_embd, gqa, gqa) and wo {n_embd, n_embd}. */
static void qkvo_embd(twin_ctx *t, int il)
{
    twin_t_qkvo(t, il, t->n_embd, kv_k(t, il), kv_v(t, il), t->n_embd);
}

static void out_b(twin_ctx *t, int il)
{
    twin_tensor(t, il, "blk.%d.attn_output.weight", W, t->n_embd, t->n_embd, 0);
    twin_tensor(t, il, "blk.%d.attn_output.bias", F, t->n_embd, 0, 0);
}

/* The GPT-2 MLP: up and down, each with its bias. */
static void mlp_b(twin_ctx *t, int il)
{
    twin_tensor(t, il, "blk.%d.ffn_down.weight", W, t->n_ff, t->n_embd, 0);
    twin_tensor(t, il, "blk.%d.ffn_down.bias", F, t->n_embd, 0, 0);
    twin_tensor(t, il, "blk.%d.ffn_up.weight", W, t->n_embd, t->n_ff, 0);
    twin_tensor(t, il, "blk.%d.ffn_up.bias", F, t->n_ff, 0, 0);
}

static void mlp(twin_ctx *t, int il)
{
    twin_tensor(t, il, "blk.%d.ffn_down.weight", W, t->n_ff, t->n_embd, 0);
    twin_tensor(t, il, "blk.%d.ffn_up.weight", W, t->n_embd, t->n_ff, 0);
}

/* The context the position embeddings span: the context_length twin_meta
 * writes. */
static uint64_t n_ctx_train(const twin_ctx *t)
{
    return t->m->max_position ? t->m->max_position : 4096;
}

/* ---- metadata only some of them read ----------------------------------------------- */

/* GPT-NeoX reads use_parallel_residual as a required key (Pythia: true). */
static void meta_gptneox(twin_ctx *t)
{
    kvp_gguf_w_bool(t->w, twin_key(t, "use_parallel_residual"), 1);
}

/* DBRX requires attention.clamp_kqv (its checkpoints clip at 8). */
static void meta_dbrx(twin_ctx *t)
{
    kvp_gguf_w_f32(t->w, twin_key(t, "attention.clamp_kqv"), 8.0f);
}

/* PLM's latent rank sizes kv_a_mqa and kv_b, never the cache (which holds
 * the expanded K and V): PLM-1.8B's 512. */
enum { PLM_KV_LORA_RANK = 512 };

static void meta_plm(twin_ctx *t)
{
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.kv_lora_rank"), PLM_KV_LORA_RANK);
}

/* ---- tensor lists ---------------------------------------------------------------------- */

/* gpt2, starcoder: learned positions, LayerNorms and biases everywhere */
static void tensors_gpt2(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    twin_t_norm(t, -1, "output_norm.bias");
    twin_tensor(t, -1, "position_embd.weight", W, t->n_embd, n_ctx_train(t), 0);
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm_b(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        qkv_fused(t, il, 1);
        out_b(t, il);
        norm_b(t, il, "blk.%d.ffn_norm.weight", "blk.%d.ffn_norm.bias");
        mlp_b(t, il);
    }
}

static void tensors_gptneox(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    twin_t_norm(t, -1, "output_norm.bias");
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm_b(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        qkv_fused(t, il, 1);
        out_b(t, il);
        norm_b(t, il, "blk.%d.ffn_norm.weight", "blk.%d.ffn_norm.bias");
        mlp_b(t, il);
    }
}

/* mpt: biases, position embeddings and the output head are optional (MPT
 * ties the head to the embedding) */
static void tensors_mpt(twin_ctx *t)
{
    twin_t_embd(t, TW_NO_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        qkv_fused(t, il, 0);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, t->n_embd, t->n_embd, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        mlp(t, il);
    }
}

/* bloom: a LayerNorm on the embeddings; the head is the embedding */
static void tensors_bloom(twin_ctx *t)
{
    twin_t_embd(t, TW_NO_OUTPUT, NULL);
    twin_t_norm(t, -1, "output_norm.bias");
    twin_t_norm(t, -1, "token_embd_norm.weight");
    twin_t_norm(t, -1, "token_embd_norm.bias");
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm_b(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        qkv_fused(t, il, 1);
        out_b(t, il);
        norm_b(t, il, "blk.%d.ffn_norm.weight", "blk.%d.ffn_norm.bias");
        mlp_b(t, il);
    }
}

/* falcon: parallel attention and MLP off one LayerNorm, no biases */
static void tensors_falcon(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    twin_t_norm(t, -1, "output_norm.bias");
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm_b(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        qkv_fused(t, il, 0);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, t->n_embd, t->n_embd, 0);
        mlp(t, il);
    }
}

/* refact: separate q, k, v sized by heads; a SwiGLU MLP */
static void tensors_refact(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t q = (uint64_t)t->n_head[il] * t->lhk[il];
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_qkvo(t, il, q, kv_k(t, il), kv_v(t, il), q);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* baichuan, internlm2, xverse: the llama layout with q and o over n_embd */
static void tensors_baichuan(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        qkvo_embd(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* stablelm: LayerNorms with biases (the FFN norm is optional; StableLM 2
 * 1.6B has it) */
static void tensors_stablelm(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    twin_t_norm(t, -1, "output_norm.bias");
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm_b(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        qkvo_embd(t, il);
        norm_b(t, il, "blk.%d.ffn_norm.weight", "blk.%d.ffn_norm.bias");
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* qwen: fused QKV of 3 n_embd with its bias; the MLP is n_ff / 2 wide
 * (the config's intermediate_size counts both SwiGLU branches) */
static void tensors_qwen(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_tensor(t, il, "blk.%d.attn_qkv.weight", W, t->n_embd, 3 * t->n_embd, 0);
        twin_tensor(t, il, "blk.%d.attn_qkv.bias", F, 3 * t->n_embd, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, t->n_embd, t->n_embd, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff / 2);
    }
}

/* phi2: attention and MLP in parallel off one LayerNorm; the head has a bias */
static void tensors_phi2(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    twin_t_norm(t, -1, "output_norm.bias");
    twin_tensor(t, -1, "output.bias", F, t->n_vocab, 0, 0);
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm_b(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        twin_tensor(t, il, "blk.%d.attn_q.weight", W, t->n_embd, t->n_embd, 0);
        twin_tensor(t, il, "blk.%d.attn_k.weight", W, t->n_embd, kv_k(t, il), 0);
        twin_tensor(t, il, "blk.%d.attn_v.weight", W, t->n_embd, kv_v(t, il), 0);
        out_b(t, il);
        mlp_b(t, il);
    }
}

/* codeshell: the GPT-2 layout with separate q, k, v (GQA) */
static void tensors_codeshell(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    twin_t_norm(t, -1, "output_norm.bias");
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm_b(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        twin_tensor(t, il, "blk.%d.attn_q.weight", W, t->n_embd, t->n_embd, 0);
        twin_tensor(t, il, "blk.%d.attn_k.weight", W, t->n_embd, kv_k(t, il), 0);
        twin_tensor(t, il, "blk.%d.attn_v.weight", W, t->n_embd, kv_v(t, il), 0);
        out_b(t, il);
        norm_b(t, il, "blk.%d.ffn_norm.weight", "blk.%d.ffn_norm.bias");
        mlp_b(t, il);
    }
}

/* orion: LayerNorms with biases, a SwiGLU MLP */
static void tensors_orion(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    twin_t_norm(t, -1, "output_norm.bias");
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm_b(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        qkvo_embd(t, il);
        norm_b(t, il, "blk.%d.ffn_norm.weight", "blk.%d.ffn_norm.bias");
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* command-r: parallel blocks, no FFN norm; the head is the embedding (an
 * output.weight would be a tensor llama.cpp never asks for); Q/K norms from
 * 64 layers on (Command R+) */
static void tensors_command_r(twin_ctx *t)
{
    twin_t_embd(t, TW_NO_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if (t->n_layer >= 64) {
            twin_tensor(t, il, "blk.%d.attn_q_norm.weight", F, t->lhk[il], t->n_head[il], 0);
            twin_tensor(t, il, "blk.%d.attn_k_norm.weight", F, t->lhk[il], t->n_kv[il], 0);
        }
        qkvo_embd(t, il);
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* jais: the GPT-2 layout with a gated MLP, every tensor with a bias */
static void tensors_jais(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    twin_t_norm(t, -1, "output_norm.bias");
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm_b(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        qkv_fused(t, il, 1);
        out_b(t, il);
        norm_b(t, il, "blk.%d.ffn_norm.weight", "blk.%d.ffn_norm.bias");
        mlp_b(t, il);
        twin_tensor(t, il, "blk.%d.ffn_gate.weight", W, t->n_embd, t->n_ff, 0);
        twin_tensor(t, il, "blk.%d.ffn_gate.bias", F, t->n_ff, 0, 0);
    }
}

/* jais2: q, k, v sized by heads; a plain MLP with biases */
static void tensors_jais2(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    twin_t_norm(t, -1, "output_norm.bias");
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t q = (uint64_t)t->n_head[il] * t->lhk[il];
        norm_b(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        twin_t_qkvo(t, il, q, kv_k(t, il), kv_v(t, il), q);
        twin_tensor(t, il, "blk.%d.attn_output.bias", F, t->n_embd, 0, 0);
        norm_b(t, il, "blk.%d.ffn_norm.weight", "blk.%d.ffn_norm.bias");
        mlp_b(t, il);
    }
}

/* bitnet: sub-norms before the output projections; the head is the
 * embedding */
static void tensors_bitnet(twin_ctx *t)
{
    twin_t_embd(t, TW_NO_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_norm(t, il, "blk.%d.attn_sub_norm.weight");
        qkvo_embd(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_tensor(t, il, "blk.%d.ffn_sub_norm.weight", F, t->n_ff, 0, 0);
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* chameleon: per-head Q/K norms */
static void tensors_chameleon(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_tensor(t, il, "blk.%d.attn_q_norm.weight", F, t->lhk[il], t->n_head[il], 0);
        twin_tensor(t, il, "blk.%d.attn_k_norm.weight", F, t->lhk[il], t->n_kv[il], 0);
        qkvo_embd(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* plm: DeepSeek-style projections (no query compression), the head is the
 * embedding, a plain MLP */
static void tensors_plm(twin_ctx *t)
{
    twin_t_embd(t, TW_NO_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t h = t->n_head[il], rope = t->n_rot ? t->n_rot : t->lhk[il];
        uint64_t nope = t->lhk[il] - rope;
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_tensor(t, il, "blk.%d.attn_q.weight", W, t->n_embd, h * t->lhk[il], 0);
        twin_tensor(t, il, "blk.%d.attn_kv_a_mqa.weight", W, t->n_embd, PLM_KV_LORA_RANK + rope, 0);
        twin_tensor(t, il, "blk.%d.attn_kv_a_norm.weight", F, PLM_KV_LORA_RANK, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_kv_b.weight", W, PLM_KV_LORA_RANK,
                    h * (nope + t->lhv[il]), 0);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, h * t->lhv[il], t->n_embd, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        mlp(t, il);
    }
}

/* grok: experts of expert_feed_forward_length (Grok-1: n_ff); a dense MLP
 * beside them only when the config gave a separate expert width (Grok-2) */
static void tensors_grok(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        qkvo_embd(t, il);
        twin_t_norm(t, il, "blk.%d.attn_output_norm.weight");
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if (t->m->n_ff_exp && t->m->n_ff_exp != t->m->n_ff)
            twin_t_ffn(t, il, t->n_ff);
        twin_t_moe(t, il, t->n_ff_exp);
        twin_t_norm(t, il, "blk.%d.layer_output_norm.weight");
    }
}

/* dbrx: fused QKV, a norm after attention, experts of feed_forward_length */
static void tensors_dbrx(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        qkv_fused(t, il, 0);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, t->n_embd, t->n_embd, 0);
        twin_t_norm(t, il, "blk.%d.attn_output_norm.weight");
        twin_t_moe(t, il, t->n_ff);
    }
}

/* plamo: attention and MLP in parallel off one RMSNorm */
static void tensors_plamo(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        qkvo_embd(t, il);
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* ---- the group's rows --------------------------------------------------------------- */

#define FULL KVP_LAYER_FULL
#define ROW_TIED(gguf, family, tied, meta, tensors)                                            \
    {gguf, family, SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, tied, -1, meta, tensors, \
     NULL, NULL}
#define ROW(gguf, family, meta, tensors) ROW_TIED(gguf, family, 1, meta, tensors)

static const twin_arch arches[] = {
    /* gguf, family, metadata writer, tensor writer; all full attention, n_embd kept */
    ROW("gpt2", "gpt2", NULL, tensors_gpt2),
    ROW("gptneox", "gptneox", meta_gptneox, tensors_gptneox),
    ROW("mpt", "mpt", NULL, tensors_mpt),
    ROW("bloom", "bloom", NULL, tensors_bloom),
    ROW("falcon", "falcon", NULL, tensors_falcon),
    ROW("starcoder", "starcoder", NULL, tensors_gpt2),
    ROW("refact", "refact", NULL, tensors_refact),
    ROW("baichuan", "baichuan", NULL, tensors_baichuan),
    ROW("stablelm", "stablelm", NULL, tensors_stablelm),
    ROW("qwen", "qwen", NULL, tensors_qwen),
    ROW("phi2", "phi2", NULL, tensors_phi2),
    ROW("codeshell", "codeshell", NULL, tensors_codeshell),
    ROW("orion", "orion", NULL, tensors_orion),
    ROW("internlm2", "internlm2", NULL, tensors_baichuan),
    ROW("xverse", "xverse", NULL, tensors_baichuan),
    ROW("command-r", "command-r", NULL, tensors_command_r),
    ROW("jais", "jais", NULL, tensors_jais),
    ROW("jais2", "jais2", NULL, tensors_jais2),
    ROW("bitnet", "bitnet", NULL, tensors_bitnet),
    /* the graph hides the logits of image tokens 4..8195: the vocabulary stays whole */
    ROW_TIED("chameleon", "chameleon", 2, NULL, tensors_chameleon),
    ROW("plm", "plm", meta_plm, tensors_plm),
    ROW("grok", "grok", NULL, tensors_grok),
    ROW("dbrx", "dbrx", meta_dbrx, tensors_dbrx),
    ROW("plamo", "plamo", NULL, tensors_plamo),
};

const twin_arch_group twin_group_classic = {.arches = arches, .n = sizeof arches / sizeof arches[0],};
