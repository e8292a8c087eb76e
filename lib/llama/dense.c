/* llama/dense.c - llama.cpp v0.5.0 architectures of the "dense" group (see
 * twin.h): attention-only decoders with one full cache per layer, no
 * sliding window whatever the config says (none of them sets a swa_type in
 * src/models/<arch>.cpp), and the metadata and tensor lists their shape
 * twins carry, as each load_arch_tensors creates them.
 *
 * Where a load_arch_tensors sizes the query or output projection by n_embd
 * (olmo, olmoe, arctic, deepseek, starcoder2, nemotron, phimoe, chatglm)
 * the row sets embd_tied, so --kv-only keeps the real hidden size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gguf_model.h"

#define W 0 /* F16 */
#define F 1 /* F32 */

/* ---- shared pieces ------------------------------------------------------------- */

/* up and down only (no gate): ReLU^2 or GELU MLPs */
static void ffn_up_down(twin_ctx *t, int il, uint64_t up)
{
    twin_tensor(t, il, "blk.%d.ffn_down.weight", W, t->n_ff, t->n_embd, 0);
    twin_tensor(t, il, "blk.%d.ffn_up.weight", W, t->n_embd, up, 0);
}

/* A LayerNorm's weight and bias. */
static void norm_b(twin_ctx *t, int il, const char *w, const char *b)
{
    twin_t_norm(t, il, w);
    twin_t_norm(t, il, b);
}

/* ---- metadata only some of them read ------------------------------------------------ */

/* granite, granitemoe and talkie require logit_scale; the cache does not
 * depend on it, so the twin carries 1 (no scaling). */
static void meta_logit_scale(twin_ctx *t)
{
    kvp_gguf_w_f32(t->w, twin_key(t, "logit_scale"), 1.0f);
}

/* minicpm3 requires both LoRA ranks.  kv_lora_rank only shapes the latent
 * projection (the cache holds the expanded heads), and the model does not
 * keep it: the twin uses MiniCPM3-4B's 256. */
enum { MINICPM3_KV_LORA_RANK = 256 };

static void meta_minicpm3(twin_ctx *t)
{
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.q_lora_rank"), t->m->q_lora_rank);
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.kv_lora_rank"), MINICPM3_KV_LORA_RANK);
}

/* apertus requires the xIELU activation's four parameters (keys without
 * the architecture prefix); a scalar applies to every layer.  Apertus'
 * initial values. */
static void meta_apertus(twin_ctx *t)
{
    kvp_gguf_w_f32(t->w, "xielu.alpha_n", 0.8f);
    kvp_gguf_w_f32(t->w, "xielu.alpha_p", 0.8f);
    kvp_gguf_w_f32(t->w, "xielu.beta", 0.5f);
    kvp_gguf_w_f32(t->w, "xielu.eps", -1e-6f);
}

/* openelm sizes each layer's projections from its own head counts */
static void meta_openelm(twin_ctx *t)
{
    t->per_layer_heads = 1;
}

/* ---- tensor lists --------------------------------------------------------------------- */

/* granitemoe: llama's block with experts of feed_forward_length and, for
 * GraniteMoeShared, a shared expert */
static void tensors_granitemoe(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_moe(t, il, t->n_ff);
        if (t->n_ff_shexp)
            twin_t_shexp(t, il, t->n_ff_shexp);
    }
}

/* olmo: LayerNorm without weights, so no norm tensors at all */
static void tensors_olmo(twin_ctx *t)
{
    twin_tensor(t, -1, "token_embd.weight", W, t->n_embd, t->n_vocab, 0);
    twin_tensor(t, -1, "output.weight", W, t->n_embd, t->n_vocab, 0);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_gqa_embd(t, il);
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* olmoe: q and k norms over n_embd (MHA), every layer MoE */
static void tensors_olmoe(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa_embd(t, il);
        twin_t_norm(t, il, "blk.%d.attn_q_norm.weight");
        twin_t_norm(t, il, "blk.%d.attn_k_norm.weight");
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_moe(t, il, t->n_ff);
    }
}

/* gemma: the output is token_embd, so output.weight must be absent */
static void tensors_gemma(twin_ctx *t)
{
    twin_t_embd(t, TW_NO_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* minicpm3: the latent projections; kv_b expands to n_head x (nope + v) */
static void tensors_minicpm3(twin_ctx *t)
{
    const uint64_t kvr = MINICPM3_KV_LORA_RANK, qr = t->m->q_lora_rank;
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t h = t->n_head[il], hk = t->lhk[il], hv = t->lhv[il], rope = t->n_rot;
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_tensor(t, il, "blk.%d.attn_q_a_norm.weight", F, qr, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_kv_a_norm.weight", F, kvr, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_q_a.weight", W, t->n_embd, qr, 0);
        twin_tensor(t, il, "blk.%d.attn_q_b.weight", W, qr, h * hk, 0);
        twin_tensor(t, il, "blk.%d.attn_kv_a_mqa.weight", W, t->n_embd, kvr + rope, 0);
        twin_tensor(t, il, "blk.%d.attn_kv_b.weight", W, kvr, h * (hk - rope + hv), 0);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, h * hv, t->n_embd, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* glm4: post-attention and post-FFN norms; ffn_up holds gate and up */
static void tensors_glm4(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_norm(t, il, "blk.%d.post_attention_norm.weight");
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        ffn_up_down(t, il, 2 * t->n_ff);
        twin_t_norm(t, il, "blk.%d.post_ffw_norm.weight");
    }
}

/* chatglm: the output projection is n_embd square; ffn_up holds gate and up */
static void tensors_chatglm(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa_embd(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        ffn_up_down(t, il, 2 * t->n_ff);
    }
}

/* phimoe: LayerNorms with biases, biased attention output and lm head */
static void tensors_phimoe(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    twin_tensor(t, -1, "output_norm.bias", F, t->n_embd, 0, 0);
    twin_tensor(t, -1, "output.bias", F, t->n_vocab, 0, 0);
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm_b(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        twin_t_gqa_embd(t, il);
        twin_tensor(t, il, "blk.%d.attn_output.bias", F, t->n_embd, 0, 0);
        norm_b(t, il, "blk.%d.ffn_norm.weight", "blk.%d.ffn_norm.bias");
        twin_t_moe(t, il, t->n_ff);
    }
}

/* nemotron: LayerNorms with biases, a ReLU^2 MLP (up and down only) */
static void tensors_nemotron(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    twin_tensor(t, -1, "output_norm.bias", F, t->n_embd, 0, 0);
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm_b(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        twin_t_gqa_embd(t, il);
        norm_b(t, il, "blk.%d.ffn_norm.weight", "blk.%d.ffn_norm.bias");
        ffn_up_down(t, il, t->n_ff);
    }
}

/* starcoder2: LayerNorms and the output projection and MLP with biases */
static void tensors_starcoder2(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    twin_tensor(t, -1, "output_norm.bias", F, t->n_embd, 0, 0);
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm_b(t, il, "blk.%d.attn_norm.weight", "blk.%d.attn_norm.bias");
        twin_t_gqa_embd(t, il);
        twin_tensor(t, il, "blk.%d.attn_output.bias", F, t->n_embd, 0, 0);
        norm_b(t, il, "blk.%d.ffn_norm.weight", "blk.%d.ffn_norm.bias");
        ffn_up_down(t, il, t->n_ff);
        twin_tensor(t, il, "blk.%d.ffn_down.bias", F, t->n_embd, 0, 0);
        twin_tensor(t, il, "blk.%d.ffn_up.bias", F, t->n_ff, 0, 0);
    }
}

/* deepseek (V1 MoE): leading dense layers, then routed experts plus
 * n_expert_shared shared experts of the expert width */
static void tensors_deepseek(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa_embd(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_t_moe(t, il, t->n_ff_exp);
        twin_t_shexp(t, il, t->n_ff_exp * t->n_expert_shared);
    }
}

/* arctic: a dense residual MLP of n_embd width beside the experts */
static void tensors_arctic(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa_embd(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_embd);
        twin_t_norm(t, il, "blk.%d.ffn_norm_exps.weight");
        twin_t_moe(t, il, t->n_ff);
    }
}

/* openelm: fused QKV of per-layer head counts, q/k norms over one head;
 * the output reuses token_embd.  Every layer gets feed_forward_length (the
 * model keeps one FFN width; the cache does not depend on it). */
static void tensors_openelm(twin_ctx *t)
{
    twin_t_embd(t, TW_NO_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t h = t->n_head[il], hd = t->lhk[il];
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_tensor(t, il, "blk.%d.attn_qkv.weight", W, t->n_embd, (h + 2 * t->n_kv[il]) * hd, 0);
        twin_t_qk_norm(t, il);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, h * hd, t->n_embd, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* arcee: llama's block with a ReLU^2 MLP (no gate) */
static void tensors_arcee(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        ffn_up_down(t, il, t->n_ff);
    }
}

/* apertus: q/k norms over one head, an xIELU MLP (no gate); output required */
static void tensors_apertus(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        ffn_up_down(t, il, t->n_ff);
        twin_t_qk_norm(t, il);
    }
}

/* seed_oss: a post-attention norm in place of ffn_norm */
static void tensors_seed_oss(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_gqa(t, il);
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_norm(t, il, "blk.%d.post_attention_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* pangu-embedded: llama's block with a required output-projection bias */
static void tensors_pangu(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_tensor(t, il, "blk.%d.attn_output.bias", F, t->n_embd, 0, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* maincoder: llama's block with q/k norms over one head */
static void tensors_maincoder(twin_ctx *t)
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

/* talkie: weightless RMSNorms (no norm tensors), a per-head query gain
 * {1, n_head} and a scalar output gain per layer; output required */
static void tensors_talkie(twin_ctx *t)
{
    twin_tensor(t, -1, "token_embd.weight", W, t->n_embd, t->n_vocab, 0);
    twin_tensor(t, -1, "output.weight", W, t->n_embd, t->n_vocab, 0);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_gqa(t, il);
        twin_tensor(t, il, "blk.%d.attn_q_norm.weight", F, 1, t->n_head[il], 0);
        twin_t_ffn(t, il, t->n_ff);
        twin_tensor(t, il, "blk.%d.layer_output_scale.weight", F, 1, 0, 0);
    }
}

/* ---- reader rules ----------------------------------------------------------------------- */

/* nanbeige: load_arch_hparams repeats the num_hidden_layers physical layers
 * num_loops times (head counts, FFN widths and flags copied per pass) and
 * gives every pass its own KV slot, so the cache has block_count x
 * num_loops layers of the same shape. */
static int finish_nanbeige(gguf_rd *r)
{
    uint64_t loops;
    kvp_model *m = r->m;
    if (gguf_rd_opt(r, "num_loops", 1, 64, &loops))
        return -1;
    if (loops <= 1)
        return 0;
    if (m->n_layer_nextn)
        return kvp_fail(r->err, KVP_EINPUT, "%s: nanbeige with num_loops and nextn layers", r->path);
    if ((uint64_t)m->n_layers * loops > 512) /* LLAMA_MAX_LAYERS */
        return kvp_fail(r->err, KVP_EINPUT, "%s: %u layers x %llu loops exceeds llama.cpp's 512",
                        r->path, m->n_layers, (unsigned long long)loops);
    kvp_layer *L = realloc(m->layers, (size_t)m->n_layers * loops * sizeof *L);
    if (!L)
        return kvp_fail(r->err, KVP_EINPUT, "%s: out of memory", r->path);
    for (uint64_t j = 1; j < loops; j++)
        memcpy(L + j * m->n_layers, L, m->n_layers * sizeof *L);
    m->layers = L;
    m->n_layers *= (uint32_t)loops;
    for (size_t i = 0; i < m->n_facts; i++) /* the generic reader said block_count */
        if (strcmp(m->facts[i].name, "layers") == 0) {
            m->facts[i].value = m->n_layers;
            snprintf(m->facts[i].source, sizeof m->facts[i].source,
                     "block_count x num_loops (one cache per loop pass)");
        }
    return 0;
}

/* ---- the rows --------------------------------------------------------------------------- */

#define ATTN SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, KVP_LAYER_FULL, 0

static const twin_arch arches[] = {
    /* gguf, family, (no window, no state, no MLA), embd_tied, kv_from_start,
     * meta, tensors, rules, finish */
    {"granite", "dense", ATTN, 0, -1, meta_logit_scale, twin_tensors_llama, NULL, NULL},
    {"granitemoe", "dense", ATTN, 0, -1, meta_logit_scale, tensors_granitemoe, NULL, NULL},
    {"exaone", "dense", ATTN, 0, -1, NULL, twin_tensors_llama, NULL, NULL},
    {"starcoder2", "mistral", ATTN, 1, -1, NULL, tensors_starcoder2, NULL, NULL},
    {"smollm3", "smollm3", ATTN, 0, -1, NULL, twin_tensors_llama, NULL, NULL},
    {"olmo", "dense", ATTN, 1, -1, NULL, tensors_olmo, NULL, NULL},
    {"olmoe", "dense", ATTN, 1, -1, NULL, tensors_olmoe, NULL, NULL},
    {"gemma", "dense", ATTN, 0, -1, NULL, tensors_gemma, NULL, NULL},
    {"minicpm", "dense", ATTN, 0, -1, NULL, twin_tensors_llama, NULL, NULL},
    {"minicpm3", "minicpm3", ATTN, 0, -1, meta_minicpm3, tensors_minicpm3, NULL, NULL},
    {"glm4", "dense", ATTN, 0, -1, NULL, tensors_glm4, NULL, NULL},
    {"chatglm", "chatglm", ATTN, 1, -1, NULL, tensors_chatglm, NULL, NULL},
    {"phimoe", "phi3", ATTN, 1, -1, NULL, tensors_phimoe, NULL, NULL},
    {"nemotron", "dense", ATTN, 1, -1, NULL, tensors_nemotron, NULL, NULL},
    {"deepseek", "dense", ATTN, 1, -1, NULL, tensors_deepseek, NULL, NULL},
    {"arctic", "dense", ATTN, 1, -1, NULL, tensors_arctic, NULL, NULL},
    {"openelm", "openelm", ATTN, 0, -1, meta_openelm, tensors_openelm, NULL, NULL},
    {"arcee", "dense", ATTN, 0, -1, NULL, tensors_arcee, NULL, NULL},
    {"apertus", "dense", ATTN, 0, -1, meta_apertus, tensors_apertus, NULL, NULL},
    {"seed_oss", "dense", ATTN, 0, -1, NULL, tensors_seed_oss, NULL, NULL},
    {"maincoder", "dense", ATTN, 0, -1, NULL, tensors_maincoder, NULL, NULL},
    {"talkie", "dense", ATTN, 0, -1, meta_logit_scale, tensors_talkie, NULL, NULL},
    {"pangu-embedded", "dense", ATTN, 0, -1, NULL, tensors_pangu, NULL, NULL},
    /* nanbeige: a GGUF's num_loops passes each get their own cache (rules
     * below); a twin unrolls the loops into physical layers instead */
    {"nanbeige", "nanbeige", ATTN, 0, -1, NULL, twin_tensors_llama, NULL, finish_nanbeige},
    /* llama-embed (LlamaBidirectionalModel, an embedding model): llama's
     * hparams and tensors; its graph attends without the cache, but
     * create_memory still allocates a full one (its default branch).  Read
     * from GGUF only: no config maps here, since vLLM and transformers keep
     * no cache for a bidirectional embedding model. */
    {"llama-embed", "llama", ATTN, 0, -1, NULL, twin_tensors_llama, NULL, NULL},
};

const twin_arch_group twin_group_dense = {.arches = arches, .n = sizeof arches / sizeof arches[0],};
