/* twin_meta.c - the metadata of a shape twin: the keys llama.cpp's
 * load_hparams reads for every architecture (src/llama-model.cpp), then the
 * keys only some architectures read (src/models/<arch>.cpp).
 *
 * The tokenizer is "none" plus <arch>.vocab_size: llama.cpp then adds that
 * many dummy tokens, so no vocabulary has to be written.  Per-layer arrays
 * (head counts, the sliding-window pattern, FFN widths) are written only
 * when the layers differ or when llama.cpp reads the layout from them;
 * otherwise a scalar or the architecture's default says the same. */
#include <stdio.h>
#include <string.h>

#include "twin.h"

const char *twin_key(twin_ctx *t, const char *suffix)
{
    snprintf(t->key, sizeof t->key, "%s.%s", t->a->gguf, suffix);
    return t->key;
}

static void u32(twin_ctx *t, const char *suffix, uint64_t v)
{
    kvp_gguf_w_u32(t->w, twin_key(t, suffix), (uint32_t)v);
}

static int all_equal(const uint32_t *v, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        if (v[i] != v[0])
            return 0;
    return 1;
}

/* A per-layer value as a scalar when every layer agrees (and force is 0),
 * else as an array of one value per layer. */
static void per_layer(twin_ctx *t, const char *suffix, const uint32_t *v, int force)
{
    if (!force && all_equal(v, t->n_layer))
        u32(t, suffix, v[0]);
    else
        kvp_gguf_w_arr_u32(t->w, twin_key(t, suffix), v, t->n_layer);
}

static void heads(twin_ctx *t)
{
    int kv0_layout = t->a->recr == RECR_KV0 || t->a->recr == RECR_KV0_FF0;
    /* layers without attention take layer 0's head count, as converters
     * write it, and a KV count of 0 where that is what marks them */
    for (uint32_t i = 0; i < t->n_layer; i++)
        t->tmp[i] = t->is_attn[i] ? t->n_head[i] : t->n_head0;
    per_layer(t, "attention.head_count", t->tmp, 0);
    for (uint32_t i = 0; i < t->n_layer; i++)
        t->tmp[i] = t->is_attn[i] ? t->n_kv[i] : (kv0_layout ? 0 : t->n_kv0);
    per_layer(t, "attention.head_count_kv", t->tmp, kv0_layout);
    if (!t->n_head0)
        return;
    u32(t, "attention.key_length", t->hk);
    u32(t, "attention.value_length", t->a->mla ? t->kv_lora_rank : t->hv);
    if (t->hk_swa != t->hk || t->hv_swa != t->hv) {
        u32(t, "attention.key_length_swa", t->hk_swa);
        /* sliding MLA layers (dots3note): the latent's rank, as value_length is */
        u32(t, "attention.value_length_swa",
            t->a->mla && !t->hv_swa && t->hk_swa > t->mla_rope ? t->hk_swa - t->mla_rope
                                                               : t->hv_swa);
    }
}

static void ffn(twin_ctx *t)
{
    if (t->a->recr == RECR_KV0_FF0) { /* nemotron_h: the widths mark the MLP blocks */
        for (uint32_t i = 0; i < t->n_layer; i++)
            t->tmp[i] = (uint32_t)t->ff[i];
        per_layer(t, "feed_forward_length", t->tmp, 1);
    } else {
        u32(t, "feed_forward_length", t->n_ff);
    }
    if (!t->n_expert)
        return;
    u32(t, "expert_count", t->n_expert);
    u32(t, "expert_used_count", t->n_expert_used);
    u32(t, "expert_feed_forward_length", t->n_ff_exp);
    if (t->n_ff_shexp)
        u32(t, "expert_shared_feed_forward_length", t->n_ff_shexp);
    u32(t, "expert_shared_count", t->n_expert_shared); /* deepseek2, glm4moe: required */
    if (t->n_dense_lead)
        u32(t, "leading_dense_block_count", t->n_dense_lead);
}

/* Is the SWA layout what the architecture's default period gives? */
static int default_pattern(twin_ctx *t)
{
    for (uint32_t il = 0; il < t->n_layer; il++)
        if (t->is_swa[il] != twin_swa_by_period(il, t->a->swa_period, t->a->dense_first))
            return 0;
    return 1;
}

static void sliding_window(twin_ctx *t)
{
    const twin_arch *a = t->a;
    int any = 0;
    for (uint32_t il = 0; il < t->n_layer; il++)
        any |= t->is_swa[il];
    switch (a->swa) {
    case SWA_NONE: return;
    case SWA_CHUNKED:
        if (!any) { /* the key at 0 is how a Llama 4 GGUF says "no chunking" */
            u32(t, "attention.sliding_window", 0);
            return;
        }
        break;
    case SWA_PERIOD: /* twin_plan made sure some layer slides */
        u32(t, "attention.sliding_window", t->n_swa);
        break;
    default: /* the key switches SWA on */
        if (!any)
            return;
        u32(t, "attention.sliding_window", t->n_swa);
        if (a->swa == SWA_ATTN_IF_KEY)
            return;
    }
    if (!default_pattern(t))
        kvp_gguf_w_arr_bool(t->w, twin_key(t, "attention.sliding_window_pattern"), t->is_swa,
                        t->n_layer);
}

/* Gated DeltaNet: full_attention_interval when a period explains the
 * layout, else the recurrent_layers flags. */
static void recurrent_layout(twin_ctx *t)
{
    for (uint32_t p = 1; p <= t->n_layer; p++) {
        uint32_t il = 0;
        while (il < t->n_layer && t->is_recr[il] == ((il + 1) % p != 0))
            il++;
        if (il == t->n_layer) {
            u32(t, "full_attention_interval", p);
            return;
        }
    }
    kvp_gguf_w_arr_bool(t->w, twin_key(t, "attention.recurrent_layers"), t->is_recr, t->n_layer);
}

static void state(twin_ctx *t)
{
    if (t->a->state != STATE_SSM)
        return;
    u32(t, "ssm.conv_kernel", t->d_conv);
    u32(t, "ssm.inner_size", t->d_inner);
    u32(t, "ssm.state_size", t->d_state);
    u32(t, "ssm.time_step_rank", t->dt_rank);
    u32(t, "ssm.group_count", t->n_group);
    if (t->a->recr == RECR_INTERVAL)
        recurrent_layout(t);
}

void twin_meta(twin_ctx *t)
{
    const kvp_model *m = t->m;
    kvp_gguf_w_str(t->w, "general.architecture", t->a->gguf);
    kvp_gguf_w_str(t->w, "general.type", "model");
    char name[160];
    snprintf(name, sizeof name, "%s (kvplan %s twin)", m->name, t->kv_only ? "KV" : "shape");
    kvp_gguf_w_str(t->w, "general.name", name);
    kvp_gguf_w_u32(t->w, "general.file_type", 1); /* LLAMA_FTYPE_MOSTLY_F16 */
    /* context_length is required; a model without one gets llama.cpp's
     * common 4096 (it only sets the default -c and a warning) */
    u32(t, "context_length", m->max_position ? m->max_position : 4096);
    u32(t, "embedding_length", t->n_embd);
    u32(t, "block_count", t->n_layer);
    u32(t, "vocab_size", t->n_vocab);
    ffn(t);
    heads(t);
    if (t->n_rot && !t->a->mla && strcmp(t->a->gguf, "llama") != 0)
        u32(t, "rope.dimension_count", t->n_rot);
    kvp_gguf_w_f32(t->w, twin_key(t, "attention.layer_norm_rms_epsilon"), 1e-6f);
    kvp_gguf_w_f32(t->w, twin_key(t, "attention.layer_norm_epsilon"), 1e-5f);
    sliding_window(t);
    state(t);
    if (t->a->meta)
        t->a->meta(t);
    kvp_gguf_w_str(t->w, "tokenizer.ggml.model", "none");
}

/* ---- keys only some architectures read --------------------------------------- */

/* qwen35 / qwen35moe require the M-RoPE sections (4 values). */
void twin_meta_qwen35(twin_ctx *t)
{
    uint32_t half = (t->n_rot ? t->n_rot : t->hk) / 2;
    int32_t sec[4] = {(int32_t)(half - 2 * (half / 3)), (int32_t)(half / 3), (int32_t)(half / 3),
                      0};
    kvp_gguf_w_arr_i32(t->w, twin_key(t, "rope.dimension_sections"), sec, 4);
}

/* Every Llama 4 layer is MoE in Scout (interleave_moe_layer_step 1). */
void twin_meta_llama4(twin_ctx *t)
{
    u32(t, "interleave_moe_layer_step", 1);
}

void twin_meta_cohere2(twin_ctx *t)
{
    kvp_gguf_w_f32(t->w, twin_key(t, "logit_scale"), 0.25f);
}

void twin_meta_deepseek2(twin_ctx *t)
{
    u32(t, "attention.kv_lora_rank", t->kv_lora_rank);
    u32(t, "attention.q_lora_rank", t->q_lora_rank);
    u32(t, "attention.key_length_mla", t->mla_k);
    u32(t, "attention.value_length_mla", t->mla_v);
    u32(t, "rope.dimension_count", t->mla_rope);
}

/* MiniMax-M2 routes by sigmoid; llama.cpp has no default and aborts
 * without the key (expert_gating_func 2 = sigmoid). */
void twin_meta_minimax_m2(twin_ctx *t)
{
    u32(t, "expert_gating_func", 2);
}

void twin_meta_lfm2(twin_ctx *t)
{
    u32(t, "shortconv.l_cache", t->d_conv);
}
