/* hf/registry.c - config.json architectures of the "registry" group (see
 * arch.h): Mllama (Llama 3.2 Vision, cross-attention to image tokens),
 * Nemotron-NAS / DeciLM (per-layer block_configs with attention-free
 * layers), and the decoder-only model_types of vLLM's model registry and
 * transformers' model list whose cache an existing layout rule describes.
 * Their rule sets, transformers defaults, spellings and llama.cpp names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hfconfig.h"

/* ---- Mllama (Llama 3.2 Vision) -------------------------------------------- */

/* transformers MllamaTextConfig.__init__ (the text_config). */
static const arch_default mllama_defaults[] = {
    {"num_hidden_layers", 40}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"num_key_value_heads", 8}, {"intermediate_size", 14336},
    {"max_position_embeddings", 131072}, {"vocab_size", 128256}, {NULL, 0}};

/* MllamaTextConfig's cross_attention_layers when the file omits it. */
static const uint32_t mllama_cross_default[] = {3, 8, 13, 18, 23, 28, 33, 38};

/* A vision_config integer, or MllamaVisionConfig's default, with its
 * provenance recorded under `fact`. */
static int vision_uint(cfg *c, const char *key, uint64_t dflt, uint64_t hi, const char *fact,
                       uint64_t *out)
{
    json_t *vc = json_object_get(c->root, "vision_config");
    json_t *v = json_is_object(vc) ? json_object_get(vc, key) : NULL;
    char src[120];
    if (!v || json_is_null(v)) {
        *out = dflt;
        snprintf(src, sizeof src, "vision_config.%s absent: transformers default "
                 "(MllamaVisionConfig)", key);
    } else if (!json_is_integer(v) || json_integer_value(v) < 1 ||
               (uint64_t)json_integer_value(v) > hi) {
        return kvp_fail(c->err, KVP_EINPUT, "%s: vision_config.%s must be an integer in [1, %llu]",
                        c->label, key, (unsigned long long)hi);
    } else {
        *out = (uint64_t)json_integer_value(v);
        snprintf(src, sizeof src, "vision_config.%s", key);
    }
    cfg_fact(c, fact, (int64_t)*out, src);
    return 0;
}

/* The image tokens one image gives every cross-attention layer: the vision
 * encoder always emits max_num_tiles tiles (unused ones masked) of
 * (image_size / patch_size)^2 patches plus a CLS token, as transformers'
 * MllamaVisionModel does (num_patches) and as vLLM's Mllama took its
 * largest encoder input (max_num_tiles x token_per_chunk): 4 x 1601 = 6404
 * for Llama 3.2 Vision's 560-pixel tiles of 14-pixel patches. */
static int mllama_image_tokens(cfg *c, uint64_t *tokens)
{
    uint64_t size, patch, tiles;
    if (vision_uint(c, "image_size", 448, 1u << 16, "vision image_size", &size) ||
        vision_uint(c, "patch_size", 14, 1u << 16, "vision patch_size", &patch) ||
        vision_uint(c, "max_num_tiles", 4, 1024, "vision max_num_tiles", &tiles))
        return -1;
    if (patch > size)
        return kvp_fail(c->err, KVP_EINPUT, "%s: vision_config.patch_size %llu is larger than "
                        "image_size %llu", c->label, (unsigned long long)patch,
                        (unsigned long long)size);
    uint64_t side = size / patch;
    *tokens = tiles * (side * side + 1);
    cfg_fact(c, "image tokens (cross)", (int64_t)*tokens,
             "max_num_tiles x ((image_size / patch_size)^2 + 1): one image per sequence");
    return 0;
}

/* Which layers are cross-attention: text_config.cross_attention_layers,
 * else MllamaTextConfig's default list. */
static int mllama_cross_layers(cfg *c, uint8_t *is_cross)
{
    char where[96];
    uint32_t n = c->m->n_layers;
    json_t *v = cfg_lookup(c, "cross_attention_layers", where, sizeof where);
    if (!v) {
        for (size_t i = 0; i < sizeof mllama_cross_default / sizeof mllama_cross_default[0]; i++) {
            if (mllama_cross_default[i] >= n)
                return kvp_fail(c->err, KVP_EINPUT, "%s: cross_attention_layers is absent and "
                                "transformers' default list reaches layer 38 of %u", c->label, n);
            is_cross[mllama_cross_default[i]] = 1;
        }
        cfg_fact(c, "layer kinds", n, "cross_attention_layers absent: transformers default "
                 "(MllamaTextConfig) 3, 8, ..., 38 cross-attention, the rest full");
        return 0;
    }
    if (!json_is_array(v))
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s must be a list of layer indices", c->label,
                        where);
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *x = json_array_get(v, i);
        if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= n)
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%zu] is not a layer index below %u",
                            c->label, where, i, n);
        is_cross[json_integer_value(x)] = 1;
    }
    char src[160];
    snprintf(src, sizeof src, "%.90s: cross-attention to the image tokens, the rest full", where);
    cfg_fact(c, "layer kinds", n, src);
    return 0;
}

/* Every layer is attention of one shape (num_key_value_heads x hidden_size
 * / num_attention_heads); the cross-attention layers cache the K/V of the
 * image tokens, a fixed number per sequence, whatever the text's length. */
static int read_mllama(cfg *c)
{
    uint64_t n, tokens = 0;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n))
        return -1;
    uint8_t *is_cross = calloc(n, 1);
    if (!is_cross)
        return kvp_fail(c->err, KVP_EINPUT, "%s: out of memory", c->label);
    int rc = mllama_cross_layers(c, is_cross) || mllama_image_tokens(c, &tokens);
    for (uint32_t i = 0; !rc && i < c->m->n_layers; i++) {
        kvp_layer *L = &c->m->layers[i];
        L->kind = KVP_LAYER_FULL;
        rc = hf_read_attention(c, i, L);
        if (is_cross[i]) {
            L->kind = KVP_LAYER_CROSS;
            L->window = (uint32_t)(tokens > UINT32_MAX ? UINT32_MAX : tokens);
        }
    }
    free(is_cross);
    if (rc)
        return -1;
    snprintf(c->m->vllm_refusal, sizeof c->m->vllm_refusal,
             "MllamaForConditionalGeneration was supported in vLLM until v0.10.2 and is not "
             "anymore: v0.11.0 dropped encoder-decoder models but Whisper (PR #24907)");
    return 0;
}

/* ---- Nemotron-NAS / DeciLM -------------------------------------------------- */

/* DeciLM-7B (model_type deci) lists its KV heads per layer under its own
 * name; cfg_uint_layer reads an array in place of one number. */
static const arch_alias deci_aliases[] = {
    {"num_key_value_heads", "num_key_value_heads_per_layer"},
    {NULL, NULL},
};

static int json_flag(json_t *o, const char *key)
{
    return json_is_true(json_object_get(o, key));
}

/* The converter's (and vLLM's) FFN width of a block: 2/3 x ffn_mult x
 * hidden_size, rounded up to a multiple of 256. */
static uint64_t deci_ffn_width(double mult, uint64_t hidden)
{
    uint64_t w = (uint64_t)(2.0 * mult * (double)hidden / 3.0);
    return (w + 255) / 256 * 256;
}

/* block_configs[i].attention: no_op (no attention at all) or
 * replace_with_linear (a linear map in its place) hold no cache; otherwise
 * KV heads = num_attention_heads / n_heads_in_group.  Returns 1 when the
 * layer is a linear replacement. */
static int deci_block(cfg *c, json_t *b, uint32_t il, uint64_t heads, kvp_layer *L,
                      uint64_t *ff)
{
    json_t *att = json_object_get(b, "attention"), *ffn = json_object_get(b, "ffn");
    if (!json_is_object(att) || !json_is_object(ffn))
        return kvp_fail(c->err, KVP_EINPUT, "%s: block_configs[%u] needs attention and ffn "
                        "objects", c->label, il);
    json_t *w = json_object_get(att, "window_length");
    if (w && !json_is_null(w))
        return kvp_fail(c->err, KVP_EINPUT, "%s: block_configs[%u].attention.window_length: "
                        "per-block attention windows are not modelled (llama.cpp's deci and vLLM's "
                        "nemotron_nas ignore them, the model does not)", c->label, il);
    json_t *m = json_object_get(ffn, "ffn_mult");
    if (!json_flag(ffn, "no_op") && json_is_number(m) && json_number_value(m) > 0 &&
        json_number_value(m) < 1e3) {
        uint64_t width = deci_ffn_width(json_number_value(m), c->m->hidden_size);
        *ff = width > *ff ? width : *ff;
    }
    L->kind = KVP_LAYER_NONE;
    if (json_flag(att, "no_op"))
        return 0;
    if (json_flag(att, "replace_with_linear"))
        return 1;
    json_t *g = json_object_get(att, "n_heads_in_group");
    if (!json_is_integer(g) || json_integer_value(g) < 1 ||
        heads % (uint64_t)json_integer_value(g))
        return kvp_fail(c->err, KVP_EINPUT, "%s: block_configs[%u].attention.n_heads_in_group "
                        "must divide num_attention_heads (%llu), or the block be no_op or "
                        "replace_with_linear", c->label, il, (unsigned long long)heads);
    L->kind = KVP_LAYER_FULL;
    L->n_head = (uint32_t)heads;
    L->n_kv_heads = (uint32_t)(heads / (uint64_t)json_integer_value(g));
    return 0;
}

/* Nemotron-NAS: the layer count and heads as Llama's, then one block config
 * per layer.  A DeciLM-7B config has none: all layers attention, with
 * num_key_value_heads_per_layer. */
static int read_deci(cfg *c)
{
    uint64_t n, heads, hd, ff = 0;
    int found, linear = 0;
    char where[96];
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n))
        return -1;
    json_t *blocks = cfg_lookup(c, "block_configs", where, sizeof where);
    if (!blocks) {
        if (hf_kinds(c) || hf_shapes(c))
            return -1;
        snprintf(c->m->vllm_refusal, sizeof c->m->vllm_refusal,
                 "vLLM's DeciLMForCausalLM (nemotron_nas.py) builds every layer from "
                 "block_configs, which this DeciLM config lacks");
        return 0;
    }
    if (!json_is_array(blocks) || json_array_size(blocks) != n)
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s must list one block per layer (%llu)",
                        c->label, where, (unsigned long long)n);
    if (cfg_uint(c, "num_attention_heads", 1, KVP_MAX_HEADS, "num_attention_heads", &heads) ||
        cfg_uint_opt(c, "head_dim", 1, KVP_MAX_DIM, "head_dim", &hd, &found))
        return -1;
    if (!found) {
        if (!c->m->hidden_size || c->m->hidden_size % heads)
            return kvp_fail(c->err, KVP_EINPUT, "%s: hidden_size must be a multiple of "
                            "num_attention_heads", c->label);
        hd = c->m->hidden_size / heads;
        cfg_fact(c, "head_dim", (int64_t)hd, "head_dim absent: hidden_size / num_attention_heads");
    }
    uint32_t first_linear = 0;
    for (uint32_t i = 0; i < c->m->n_layers; i++) {
        kvp_layer *L = &c->m->layers[i];
        int rc = deci_block(c, json_array_get(blocks, i), i, heads, L, &ff);
        if (rc < 0)
            return -1;
        if (rc && !linear++)
            first_linear = i;
        L->head_dim_k = L->head_dim_v = L->kind == KVP_LAYER_FULL ? (uint32_t)hd : 0;
    }
    c->m->n_heads = (uint32_t)heads;
    c->m->n_ff = ff; /* the widest block's; a twin gives every block this width */
    cfg_fact(c, "layer kinds", n, "block_configs[].attention: no_op and replace_with_linear "
             "blocks hold no cache, the rest full attention");
    snprintf(where, sizeof where, "%s[].attention: num_attention_heads / n_heads_in_group",
             "block_configs");
    cfg_fact(c, "num_key_value_heads", -1, where);
    if (linear)
        snprintf(c->m->vllm_refusal, sizeof c->m->vllm_refusal,
                 "block_configs[%u].attention.replace_with_linear: vLLM's DeciLMForCausalLM "
                 "(nemotron_nas.py) builds attention for every block that is not no_op",
                 first_linear);
    return 0;
}

/* ---- breadth: vLLM's registry and transformers' model list -------------------- */

/* Meta's CWM (CwmForCausalLM, served by vLLM as Llama with layer_types):
 * CwmConfig writes layer_types itself when a file has none, full iff
 * i % 4 == 0 (the first layer full), the rest sliding (sliding_window
 * 8192) - a phase no layout rule has. */
static const arch_default cwm_defaults[] = {
    /* transformers CwmConfig */
    {"num_hidden_layers", 64}, {"hidden_size", 6144}, {"num_attention_heads", 48},
    {"num_key_value_heads", 8}, {"head_dim", 128}, {"sliding_window", 8192},
    {"intermediate_size", 21504}, {"max_position_embeddings", 131072}, {"vocab_size", 128256},
    {NULL, 0}};

static int read_cwm(cfg *c)
{
    uint64_t n;
    int found;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n) || hf_kinds_from_layer_types(c, &found))
        return -1;
    if (!found) {
        for (uint32_t i = 0; i < c->m->n_layers; i++)
            c->m->layers[i].kind = i % 4 == 0 ? KVP_LAYER_FULL : KVP_LAYER_SLIDING;
        cfg_fact(c, "layer kinds", (int64_t)n, "layer_types absent: transformers default "
                 "(CwmConfig) full iff i % 4 == 0, else sliding");
    }
    return hf_shapes(c);
}

/* GPT-Neo: attention_layers ("global" / "local", one per layer), or the
 * attention_types it is expanded from ([[["global", "local"], 12]]); the
 * local layers see window_size tokens. */
static const arch_default gpt_neo_defaults[] = {
    /* transformers GPTNeoConfig */
    {"num_hidden_layers", 24}, {"hidden_size", 2048}, {"num_attention_heads", 16},
    {"sliding_window", 256}, {"max_position_embeddings", 2048}, {"vocab_size", 50257},
    {NULL, 0}};

static const arch_alias gpt_neo_aliases[] = {
    {"num_hidden_layers", "num_layers"}, {"num_attention_heads", "num_heads"},
    {"sliding_window", "window_size"},   {"layer_types", "attention_layers"},
    {NULL, NULL}};

static int gpt_neo_types(cfg *c, json_t *types)
{
    uint32_t i = 0, n = c->m->n_layers;
    for (size_t g = 0; g < json_array_size(types); g++) {
        json_t *e = json_array_get(types, g), *kinds = json_array_get(e, 0),
               *rep = json_array_get(e, 1);
        if (!json_is_array(kinds) || !json_is_integer(rep) || json_integer_value(rep) < 0)
            return kvp_fail(c->err, KVP_EINPUT, "%s: attention_types[%zu] is not [[types], "
                            "repeat]", c->label, g);
        for (json_int_t r = 0; r < json_integer_value(rep); r++)
            for (size_t k = 0; k < json_array_size(kinds); k++, i++) {
                json_t *t = json_array_get(kinds, k);
                if (i >= n || !json_is_string(t) ||
                    hf_kind_from_name(json_string_value(t), &c->m->layers[i].kind))
                    return kvp_fail(c->err, KVP_EINPUT, "%s: attention_types does not expand "
                                    "to %u global/local layers", c->label, n);
            }
    }
    if (i != n)
        return kvp_fail(c->err, KVP_EINPUT, "%s: attention_types expands to %u layers, not %u",
                        c->label, i, n);
    cfg_fact(c, "layer kinds", n, "attention_types: global full, local sliding");
    return 0;
}

static int read_gpt_neo(cfg *c)
{
    uint64_t n;
    int found;
    char where[96];
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n) || hf_kinds_from_layer_types(c, &found))
        return -1;
    if (!found) {
        json_t *types = cfg_lookup(c, "attention_types", where, sizeof where);
        if (!json_is_array(types)) { /* GPTNeoConfig's default: 12 x (global, local) */
            for (uint32_t i = 0; i < c->m->n_layers; i++)
                c->m->layers[i].kind = i % 2 ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
            cfg_fact(c, "layer kinds", (int64_t)n, "attention_types absent: transformers "
                     "default (GPTNeoConfig) global, local alternating");
        } else if (gpt_neo_types(c, types)) {
            return -1;
        }
    }
    if (hf_shapes(c))
        return -1;
    snprintf(c->m->vllm_refusal, sizeof c->m->vllm_refusal,
             "vLLM's model registry has no GPTNeoForCausalLM; its Transformers-backend fallback "
             "is not modelled by kvplan");
    return 0;
}

/* Bamba (IBM): Mamba2 layers with attention at attn_layer_indices (or a
 * layers_block_type list); the shapes as granite-hybrid's mamba_* fields. */
static const arch_default bamba_defaults[] = {
    /* transformers BambaConfig */
    {"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"num_key_value_heads", 8}, {"mamba_n_heads", 128}, {"mamba_n_groups", 1},
    {"mamba_d_state", 256}, {"mamba_d_conv", 4}, {"mamba_expand", 2},
    {"intermediate_size", 14336}, {"vocab_size", 128000}, {NULL, 0}};

static const arch_alias bamba_aliases[] = {{"layer_types", "layers_block_type"}, {NULL, NULL}};

static int read_bamba(cfg *c)
{
    uint64_t n;
    int found;
    char where[96];
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n) || hf_kinds_from_layer_types(c, &found))
        return -1;
    if (!found) {
        json_t *idx = cfg_lookup(c, "attn_layer_indices", where, sizeof where);
        for (uint32_t i = 0; i < c->m->n_layers; i++)
            c->m->layers[i].kind = KVP_LAYER_MAMBA;
        for (size_t i = 0; json_is_array(idx) && i < json_array_size(idx); i++) {
            json_t *x = json_array_get(idx, i);
            if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                (uint64_t)json_integer_value(x) >= n)
                return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%zu] is not a layer index below "
                                "%llu", c->label, where, i, (unsigned long long)n);
            c->m->layers[json_integer_value(x)].kind = KVP_LAYER_FULL;
        }
        cfg_fact(c, "layer kinds", (int64_t)n, idx ? "attn_layer_indices: attention, the rest "
                 "Mamba2" : "attn_layer_indices absent: every layer Mamba2 (BambaConfig)");
    }
    /* mamba_d_head "auto" (BambaConfig's default) is expand x hidden /
     * mamba_n_heads, which the Mamba2 reader derives from mamba_expand */
    json_t *dh = json_object_get(c->text, "mamba_d_head");
    if (json_is_string(dh))
        json_object_del(c->text, "mamba_d_head");
    if (hf_shapes(c))
        return -1;
    snprintf(c->m->vllm_refusal, sizeof c->m->vllm_refusal,
             "BambaForCausalLM was supported in vLLM until v0.23.0 and is not anymore (vLLM's "
             "_PREVIOUSLY_SUPPORTED_MODELS)");
    return 0;
}

/* The others read as Llama does (every layer full, per-layer arrays and
 * layer_types honoured), under their own spellings and defaults. */
static const arch_default flex_olmo_defaults[] = {
    /* transformers FlexOlmoConfig (num_key_value_heads None: MHA) */
    {"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"intermediate_size", 11008}, {"max_position_embeddings", 4096}, {"vocab_size", 100352},
    {NULL, 0}};

static const arch_default opt_defaults[] = {
    /* transformers OPTConfig (MHA) */
    {"num_hidden_layers", 12}, {"hidden_size", 768}, {"num_attention_heads", 12},
    {"intermediate_size", 3072}, {"max_position_embeddings", 2048}, {"vocab_size", 50272},
    {NULL, 0}};

static const arch_alias opt_aliases[] = {{"intermediate_size", "ffn_dim"}, {NULL, NULL}};

/* GPT-J and CodeGen: GPT-2's spellings (n_embd, n_head, n_layer,
 * n_positions, n_inner), MHA, rotary_dim of each head rotated. */
static const arch_default gptj_defaults[] = {
    /* transformers GPTJConfig */
    {"num_hidden_layers", 28}, {"hidden_size", 4096}, {"num_attention_heads", 16},
    {"max_position_embeddings", 2048}, {"vocab_size", 50400}, {"rotary_dim", 64}, {NULL, 0}};

static const arch_default codegen_defaults[] = {
    /* transformers CodeGenConfig */
    {"num_hidden_layers", 28}, {"hidden_size", 4096}, {"num_attention_heads", 16},
    {"max_position_embeddings", 2048}, {"vocab_size", 50400}, {"rotary_dim", 64}, {NULL, 0}};

static const arch_alias gpt2_style_aliases[] = {
    {"hidden_size", "n_embd"},
    {"num_attention_heads", "n_head"},
    {"max_position_embeddings", "n_positions"},
    {"intermediate_size", "n_inner"},
    {NULL, NULL}};

static const arch_default persimmon_defaults[] = {
    /* transformers PersimmonConfig (MHA) */
    {"num_hidden_layers", 36}, {"hidden_size", 4096}, {"num_attention_heads", 64},
    {"intermediate_size", 16384}, {"max_position_embeddings", 16384}, {"vocab_size", 262144},
    {NULL, 0}};

/* Step-3 (StepFun): one KV head (num_attention_groups) of head_dim 256
 * under 64 query heads; vLLM's Step3TextConfig gives the defaults. */
static const arch_default step3_defaults[] = {
    {"num_hidden_layers", 61}, {"hidden_size", 7168}, {"num_attention_heads", 64},
    {"num_key_value_heads", 1}, {"head_dim", 256}, {"intermediate_size", 18432},
    {"max_position_embeddings", 65536}, {"vocab_size", 128815}, {NULL, 0}};

static const arch_alias step3_aliases[] = {
    {"num_key_value_heads", "num_attention_groups"},
    {"max_position_embeddings", "max_position_embedding"},
    {NULL, NULL}};

/* An architecture vLLM lists as removed, or has no implementation of: the
 * Llama reading, then the reason vLLM refuses it. */
static int read_llama_like(cfg *c, const char *refusal)
{
    uint64_t n;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n) || hf_kinds(c) || hf_shapes(c))
        return -1;
    snprintf(c->m->vllm_refusal, sizeof c->m->vllm_refusal, "%s", refusal);
    return 0;
}

static int read_codegen(cfg *c)
{
    return read_llama_like(c, "vLLM's model registry has no CodeGenForCausalLM; its "
                              "Transformers-backend fallback is not modelled by kvplan");
}

static int read_persimmon(cfg *c)
{
    return read_llama_like(c, "PersimmonForCausalLM was supported in vLLM until v0.25.0 and is "
                              "not anymore (vLLM's _PREVIOUSLY_SUPPORTED_MODELS)");
}

/* ---- the group's rows --------------------------------------------------------- */

static const arch_def defs[] = {
    {"mllama", "mllama mllama_text_model", "MllamaForConditionalGeneration", LAYOUT_FULL,
     "MllamaTextConfig", mllama_defaults, NULL, read_mllama},
    {"nemotron-nas", "nemotron-nas deci", "DeciLMForCausalLM", LAYOUT_FULL, NULL, NULL,
     deci_aliases, read_deci},
    {"cwm", "cwm", "CwmForCausalLM", LAYOUT_FULL, "CwmConfig", cwm_defaults, NULL, read_cwm},
    {"flex-olmo", "flex_olmo", "FlexOlmoForCausalLM", LAYOUT_FULL, "FlexOlmoConfig",
     flex_olmo_defaults, NULL, NULL},
    /* InternLM3 (remote code, no transformers class): Llama's fields and head_dim */
    {"internlm3", "internlm3", "InternLM3ForCausalLM", LAYOUT_FULL, NULL, NULL, NULL, NULL},
    {"opt", "opt", "OPTForCausalLM", LAYOUT_FULL, "OPTConfig", opt_defaults, opt_aliases, NULL},
    {"gptj", "gptj", "GPTJForCausalLM", LAYOUT_FULL, "GPTJConfig", gptj_defaults,
     gpt2_style_aliases, NULL},
    {"codegen", "codegen", "CodeGenForCausalLM", LAYOUT_FULL, "CodeGenConfig", codegen_defaults,
     gpt2_style_aliases, read_codegen},
    {"gpt-neo", "gpt_neo", "GPTNeoForCausalLM", LAYOUT_FULL, "GPTNeoConfig", gpt_neo_defaults,
     gpt_neo_aliases, read_gpt_neo},
    {"persimmon", "persimmon", "PersimmonForCausalLM", LAYOUT_FULL, "PersimmonConfig",
     persimmon_defaults, NULL, read_persimmon},
    {"step3", "step3_vl step3_text", "Step3VLForConditionalGeneration Step3TextForCausalLM",
     LAYOUT_FULL, "Step3TextConfig (vLLM)", step3_defaults, step3_aliases, NULL},
    {"bamba", "bamba", "BambaForCausalLM", LAYOUT_GRANITE_HYBRID, "BambaConfig", bamba_defaults,
     bamba_aliases, read_bamba},
};

/* model_type -> llama.cpp's general.architecture, as its converter
 * (conversion/deci.py, ...) registers the model classes. */
static const arch_gguf gguf[] = {
    {"nemotron-nas", "deci"},
    {"deci", "deci"},
    {"internlm3", "llama"},      /* conversion/internlm.py: InternLM3Model, MODEL_ARCH.LLAMA */
    {"bamba", "granitehybrid"},  /* conversion/granite.py: GraniteHybridModel */
};

const arch_group arch_group_registry = {
    .defs = defs, .n_defs = sizeof defs / sizeof defs[0],
    .gguf = gguf, .n_gguf = sizeof gguf / sizeof gguf[0],
};
