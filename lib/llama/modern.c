/* llama/modern.c - llama.cpp v0.5.0 architectures of the "modern" group (see
 * twin.h): how each lays out its layers, and the metadata and tensors its
 * shape twin carries.
 *
 * The VL architectures (qwen2vl, qwen3vl, qwen3vlmoe, paddleocr, hunyuan_vl,
 * deepseek2-ocr, cogvlm) are the text decoders of multimodal checkpoints:
 * the converter puts the vision tower in a separate mmproj file, so their
 * GGUF is the language model alone.  None of this group's architectures has
 * a sliding window or a recurrent state in v0.5.0: every attention layer
 * holds the whole context, and the generic reader (gguf_model.c) reads them
 * without a rule of their own.  The tensor lists follow each
 * load_arch_tensors in src/models/<arch>.cpp; optional tensors (biases,
 * rope factors, expert score biases) are left out. */
#include <stdio.h>
#include <string.h>

#include "../gguf_model.h"

#define FULL KVP_LAYER_FULL
#define W 0 /* F16 */
#define F 1 /* F32 */

/* ---- metadata ---------------------------------------------------------------- */

static void u32(twin_ctx *t, const char *suffix, uint64_t v)
{
    kvp_gguf_w_u32(t->w, twin_key(t, suffix), (uint32_t)v);
}

/* qwen2vl, qwen3vl, qwen3vlmoe read rope.dimension_sections (4) as
 * required, paddleocr and hunyuan_vl feed it to their M-RoPE graphs; the
 * sections only split the rotary dims between positions. */
static void meta_mrope(twin_ctx *t)
{
    twin_meta_qwen35(t);
}

/* The shared experts' width when the model does not give one: the routed
 * width times their count (the converters' value for ERNIE-4.5, dots1,
 * Ling). */
static uint64_t shexp_width(const twin_ctx *t)
{
    return t->n_ff_shexp ? t->n_ff_shexp : t->n_ff_exp * t->n_expert_shared;
}

/* ernie4_5-moe: interleave_moe_layer_step is required (every layer past the
 * dense ones is MoE in ERNIE-4.5); the shared experts' width is written
 * when the model did not carry one. */
static void meta_ernie_moe(twin_ctx *t)
{
    u32(t, "interleave_moe_layer_step", 1);
    if (!t->n_ff_shexp && t->n_expert_shared)
        u32(t, "expert_shared_feed_forward_length", shexp_width(t));
}

/* bailingmoe2 requires expert_gating_func, and dots1's graph aborts
 * without one; Ling 2.0 and dots.llm1 route by sigmoid (2), which their
 * converter writes from the config's score function. */
static void meta_sigmoid_router(twin_ctx *t)
{
    u32(t, "expert_gating_func", 2);
}

/* GroveMoE groups its routed experts in pairs; a --kv-only twin keeps an
 * odd number of experts (top-k + 1), which the graph cannot pair, so it
 * makes each expert its own group: the cache does not change. */
static uint32_t grove_group(const twin_ctx *t)
{
    return t->n_expert % 2 ? 1 : 2;
}

/* grovemoe requires the group scale and the experts per group, which its
 * converter hard-codes (0.05 and 2), and sizes the chunk experts by
 * head_dim. */
static void meta_grovemoe(twin_ctx *t)
{
    kvp_gguf_w_f32(t->w, twin_key(t, "expert_group_scale"), 0.05f);
    u32(t, "experts_per_group", grove_group(t));
    u32(t, "expert_chunk_feed_forward_length", t->hk);
}

/* A number the config reader recorded as a fact (HRM-Text's stack shape,
 * which kvp_model has no field for); 0 when absent. */
static uint64_t fact(const kvp_model *m, const char *name)
{
    for (size_t i = 0; i < m->n_facts && i < sizeof m->facts / sizeof m->facts[0]; i++)
        if (strcmp(m->facts[i].name, name) == 0 && m->facts[i].value > 0)
            return (uint64_t)m->facts[i].value;
    return 0;
}

/* hrm_text: the stack shape, which load_arch_hparams checks against
 * block_count (the cache slots). */
static void meta_hrm_text(twin_ctx *t)
{
    u32(t, "hrm.layers_per_stack", fact(t->m, "num_layers_per_stack"));
    u32(t, "hrm.h_cycles", fact(t->m, "H_cycles"));
    u32(t, "hrm.l_cycles", fact(t->m, "L_cycles"));
}

/* ---- tensors -------------------------------------------------------------------- */

/* ernie4_5-moe: dense layers first (leading_dense_block_count), then
 * routed experts of expert_feed_forward_length and shared ones */
static void tensors_ernie_moe(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_t_moe(t, il, t->n_ff_exp);
        if (shexp_width(t))
            twin_t_shexp(t, il, shexp_width(t));
    }
}

/* hunyuan-moe: q/k norms; every layer MoE, its experts as wide as
 * feed_forward_length, one shared expert of expert_shared_feed_forward_length */
static void tensors_hunyuan_moe(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_qk_norm(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_moe(t, il, t->n_ff);
        twin_t_shexp(t, il, t->n_ff_shexp ? t->n_ff_shexp : t->n_ff);
    }
}

/* hy_v3: q/k norms; a layer without a router is dense (the leading ones) */
static void tensors_hy_v3(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_qk_norm(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_t_moe(t, il, t->n_ff_exp);
        twin_t_shexp(t, il, t->n_ff_shexp ? t->n_ff_shexp : t->n_ff_exp);
    }
}

/* dots1: k and v are sized n_head x head (dots.llm1 is MHA), q/k norms,
 * dense leading layers, routed and shared experts */
static void tensors_dots1(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t hh = (uint64_t)t->n_head[il] * t->lhk[il];
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_qkvo(t, il, hh, hh, hh, hh);
        twin_t_qk_norm(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_t_moe(t, il, t->n_ff_exp);
        twin_t_shexp(t, il, t->n_ff_exp * t->n_expert_shared);
    }
}

/* bailingmoe (Ling 1): every layer MoE with shared experts; the output
 * head is required */
static void tensors_bailingmoe(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_moe(t, il, t->n_ff_exp);
        twin_t_shexp(t, il, t->n_ff_exp * t->n_expert_shared);
    }
}

/* bailingmoe2 (Ling 2.0): fused QKV of n_embd + 2 n_embd_gqa rows, q/k
 * norms, dense leading layers, shared experts of
 * expert_shared_feed_forward_length (or the routed width) x their count */
static void tensors_bailingmoe2(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t gqa_w = (uint64_t)t->n_kv[il] * t->lhk[il];
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_tensor(t, il, "blk.%d.attn_qkv.weight", W, t->n_embd, t->n_embd + 2 * gqa_w, 0);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, (uint64_t)t->n_head[il] * t->lhk[il],
                    t->n_embd, 0);
        twin_tensor(t, il, "blk.%d.attn_q_norm.weight", F, t->lhk[il], 0, 0);
        twin_tensor(t, il, "blk.%d.attn_k_norm.weight", F, t->lhk[il], 0, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_t_moe(t, il, t->n_ff_exp);
        twin_t_shexp(t, il, (t->n_ff_shexp ? t->n_ff_shexp : t->n_ff_exp) * t->n_expert_shared);
    }
}

/* grovemoe: q/k norms, routed experts, and "chunk" experts of head_dim
 * width, one per group of experts_per_group (2) routed experts */
static void tensors_grovemoe(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t chunk = t->n_expert / grove_group(t), ch_ff = t->hk;
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_t_gqa(t, il);
        twin_t_qk_norm(t, il);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_moe(t, il, t->n_ff_exp);
        twin_tensor(t, il, "blk.%d.ffn_gate_chexps.weight", W, t->n_embd, ch_ff, chunk);
        twin_tensor(t, il, "blk.%d.ffn_down_chexps.weight", W, ch_ff, t->n_embd, chunk);
        twin_tensor(t, il, "blk.%d.ffn_up_chexps.weight", W, t->n_embd, ch_ff, chunk);
    }
}

/* deepseek2-ocr: DeepSeek-V2's blocks without MLA, q/k/v/o all n_embd
 * square (MHA), dense leading layers, routed and shared experts */
static void tensors_deepseek2ocr(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_qkvo(t, il, t->n_embd, t->n_embd, t->n_embd, t->n_embd);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_t_moe(t, il, t->n_ff_exp);
        twin_t_shexp(t, il, t->n_ff_exp * t->n_expert_shared);
    }
}

/* cogvlm: fused MHA QKV, and a second ("visual expert") QKV, output and FFN
 * of the same shapes for image tokens */
static void tensors_cogvlm(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t hh = (uint64_t)t->n_head[il] * t->lhk[il];
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_tensor(t, il, "blk.%d.attn_qkv.weight", W, t->n_embd, 3 * hh, 0);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, hh, t->n_embd, 0);
        twin_tensor(t, il, "blk.%d.vis_attn_qkv.weight", W, t->n_embd, 3 * hh, 0);
        twin_tensor(t, il, "blk.%d.vis_attn_output.weight", W, hh, t->n_embd, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
        twin_tensor(t, il, "blk.%d.vis_gate.weight", W, t->n_embd, t->n_ff, 0);
        twin_tensor(t, il, "blk.%d.vis_down.weight", W, t->n_ff, t->n_embd, 0);
        twin_tensor(t, il, "blk.%d.vis_up.weight", W, t->n_embd, t->n_ff, 0);
    }
}

/* hrm_text: 2 x layers_per_stack physical blocks (the low stack, then the
 * high one) that the cache slots alias; a sigmoid gate beside q/k/v; no
 * norm weights */
static void tensors_hrm_text(twin_ctx *t)
{
    int blocks = 2 * (int)fact(t->m, "num_layers_per_stack");
    twin_tensor(t, -1, "token_embd.weight", W, t->n_embd, t->n_vocab, 0);
    twin_tensor(t, -1, "output.weight", W, t->n_embd, t->n_vocab, 0);
    twin_tensor(t, -1, "hrm.z_l_init", F, t->n_embd, 0, 0);
    for (int b = 0; b < blocks && b < (int)t->n_layer; b++) {
        uint64_t hh = (uint64_t)t->n_head[b] * t->lhk[b];
        twin_t_gqa(t, b);
        twin_tensor(t, b, "blk.%d.attn_gate.weight", W, t->n_embd, hh, 0);
        twin_t_ffn(t, b, t->n_ff);
    }
}

/* ---- the reader's rules ----------------------------------------------------------- */

/* hrm_text: the stack shape from hrm.*, as facts, so a twin of the GGUF
 * can be written again */
static int rules_hrm_text(gguf_rd *r)
{
    static const struct {
        const char *key, *fact;
    } k[] = {{"hrm.layers_per_stack", "num_layers_per_stack"},
             {"hrm.h_cycles", "H_cycles"},
             {"hrm.l_cycles", "L_cycles"}};
    uint64_t v;
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        if (gguf_rd_need(r, k[i].key, KVP_MAX_LAYERS, &v))
            return -1;
        kvp_model_fact(r->m, k[i].fact, (int64_t)v, gguf_rd_key(r, k[i].key));
    }
    return 0;
}

/* t5: llama.cpp sizes its cache over block_count (the encoder's layers) for
 * the decoder's self-attention, and recomputes the cross-attention from the
 * stored encoder output; kvplan refuses T5 from its config (the
 * cross-attention cache per request is not modelled), and so from its GGUF
 * too, rather than answer for one runtime only. */
static int rules_t5(gguf_rd *r)
{
    return kvp_fail(r->err, KVP_EINPUT, "%s: t5 is an encoder-decoder; kvplan does not model "
                    "encoder-decoder caches (the decoder's cross-attention)", r->path);
}

static const twin_arch arches[] = {
    /* gguf, family, swa, period, dense_first, n_swa default, recurrent, state,
     * recurrent kind, mla, embd_tied, kv_from_start, meta, tensors, rules, finish */

    /* Qwen2-VL / Qwen2.5-VL: qwen2's blocks, q and o pinned to n_embd */
    {"qwen2vl", "qwen-vl", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 1, -1, meta_mrope,
     twin_tensors_qwen2, NULL, NULL},
    /* Qwen3-VL: qwen3's blocks (q/k norms over one head) */
    {"qwen3vl", "qwen-vl", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, meta_mrope,
     twin_tensors_qwen3, NULL, NULL},
    {"qwen3vlmoe", "qwen-vl", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1,
     meta_mrope, twin_tensors_qwen3moe, NULL, NULL},
    /* Mistral Small 3.x, Ministral 3, Devstral 2: llama's blocks (experts of
     * feed_forward_length when MoE), no window */
    {"mistral3", "mistral3", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     twin_tensors_llama, NULL, NULL},
    /* Mistral Small 4: deepseek2's loader and MLA cache */
    {"mistral4", "mistral3", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 1, 0, -1,
     twin_meta_deepseek2, twin_tensors_deepseek2, NULL, NULL},
    /* ERNIE-4.5: llama's blocks, the output head optional */
    {"ernie4_5", "ernie", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     twin_tensors_llama, NULL, NULL},
    {"ernie4_5-moe", "ernie", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1,
     meta_ernie_moe, tensors_ernie_moe, NULL, NULL},
    /* PaddleOCR-VL: ernie4_5's loader, an M-RoPE graph */
    {"paddleocr", "ernie", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1,
     meta_mrope, twin_tensors_llama, NULL, NULL},
    /* HunYuan dense and HunyuanOCR: qwen3's blocks; an expert count of 1
     * reads as no MoE */
    {"hunyuan-dense", "hunyuan", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1,
     NULL, twin_tensors_qwen3, NULL, NULL},
    {"hunyuan_vl", "hunyuan", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1,
     meta_mrope, twin_tensors_qwen3, NULL, NULL},
    {"hunyuan-moe", "hunyuan", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     tensors_hunyuan_moe, NULL, NULL},
    {"hy_v3", "hunyuan", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     tensors_hy_v3, NULL, NULL},
    {"dots1", "dots1", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1,
     meta_sigmoid_router, tensors_dots1, NULL, NULL},
    {"bailingmoe", "bailing", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     tensors_bailingmoe, NULL, NULL},
    /* fused QKV of n_embd query rows: --kv-only keeps n_embd */
    {"bailingmoe2", "bailing", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 1, -1,
     meta_sigmoid_router, tensors_bailingmoe2, NULL, NULL},
    {"grovemoe", "grovemoe", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1,
     meta_grovemoe, tensors_grovemoe, NULL, NULL},
    /* q/k/v of n_embd: --kv-only keeps n_embd (the head size is n_embd / heads) */
    {"deepseek2-ocr", "deepseek-ocr", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 1, -1,
     NULL, tensors_deepseek2ocr, NULL, NULL},
    {"cogvlm", "cogvlm", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     tensors_cogvlm, NULL, NULL},
    /* block_count is the cache slots, each a full-attention layer */
    {"hrm_text", "hrm-text", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1,
     meta_hrm_text, tensors_hrm_text, rules_hrm_text, NULL},
    {"t5", "t5", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL, NULL, rules_t5,
     NULL},
};

static const twin_refusal refused[] = {
    {"t5", "encoder-decoder cross-attention cache not modelled"},
    {NULL, NULL},
};

const twin_arch_group twin_group_modern = {.arches = arches, .n = sizeof arches / sizeof arches[0], .refused = refused,};
