/* hf/dense.c - config.json architectures of the "dense" group (see arch.h):
 * attention-only decoders with one full-attention cache per layer (Gemma 1,
 * OLMo 1 and OLMoE, Granite MoE, SmolLM3, MiniCPM and MiniCPM3, GLM-4 and
 * ChatGLM, Phi-3.5-MoE, Nemotron-4, DeepSeek-MoE, Arctic, OpenELM, Arcee,
 * Apertus, Seed-OSS, Nanbeige, openPangu-Embedded, Maincoder, Talkie), their
 * transformers defaults, their own spellings of the usual keys, and their
 * llama.cpp names.  Starcoder2, Granite and EXAONE are read by the core rows
 * of arch.c; their llama.cpp rows are in lib/llama/dense.c, with
 * llama-embed's, which is read from GGUF only. */
#include <stdio.h>

#include "../hfconfig.h"

/* ---- transformers defaults (the fields a config may omit) ------------------- */

static const arch_default granitemoe_defaults[] = {
    /* transformers GraniteMoeConfig.__init__ (num_key_value_heads None: MHA) */
    {"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"max_position_embeddings", 2048}, {"vocab_size", 32000}, {"intermediate_size", 11008},
    {"num_local_experts", 8}, {"num_experts_per_tok", 2}, {NULL, 0}};

static const arch_default smollm3_defaults[] = {
    /* transformers SmolLM3Config */
    {"num_hidden_layers", 36}, {"hidden_size", 2048}, {"num_attention_heads", 16},
    {"num_key_value_heads", 4}, {"max_position_embeddings", 32768}, {"vocab_size", 128256},
    {"intermediate_size", 11008}, {"no_rope_layer_interval", 4}, {NULL, 0}};

static const arch_default olmoe_defaults[] = {
    /* transformers OlmoeConfig.__init__ (num_key_value_heads None: MHA) */
    {"num_hidden_layers", 16}, {"hidden_size", 2048}, {"num_attention_heads", 16},
    {"max_position_embeddings", 4096}, {"vocab_size", 50304}, {"intermediate_size", 2048},
    {"num_experts", 64}, {"num_experts_per_tok", 8}, {NULL, 0}};

static const arch_default olmo_defaults[] = {
    /* transformers OlmoConfig.__init__ (num_key_value_heads None: MHA) */
    {"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"max_position_embeddings", 2048}, {"vocab_size", 50304}, {"intermediate_size", 11008},
    {NULL, 0}};

static const arch_default gemma_defaults[] = {
    /* transformers GemmaConfig.__init__ */
    {"num_hidden_layers", 28}, {"hidden_size", 3072}, {"num_attention_heads", 16},
    {"num_key_value_heads", 16}, {"head_dim", 256}, {"max_position_embeddings", 8192},
    {"vocab_size", 256000}, {"intermediate_size", 24576}, {NULL, 0}};

static const arch_default glm_defaults[] = {
    /* transformers GlmConfig / Glm4Config.__init__ */
    {"num_hidden_layers", 40}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"num_key_value_heads", 2}, {"head_dim", 128}, {"max_position_embeddings", 131072},
    {"vocab_size", 151552}, {"intermediate_size", 13696}, {NULL, 0}};

static const arch_default phimoe_defaults[] = {
    /* transformers PhimoeConfig.__init__ (sliding_window None) */
    {"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"num_key_value_heads", 8}, {"max_position_embeddings", 131072}, {"vocab_size", 32064},
    {"intermediate_size", 6400}, {"num_local_experts", 16}, {"num_experts_per_tok", 2},
    {NULL, 0}};

static const arch_default nemotron_defaults[] = {
    /* transformers NemotronConfig.__init__ (head_dim None: hidden_size /
     * heads; num_key_value_heads None: MHA) */
    {"num_hidden_layers", 32}, {"hidden_size", 6144}, {"num_attention_heads", 48},
    {"max_position_embeddings", 4096}, {"vocab_size", 256000}, {"intermediate_size", 24576},
    {NULL, 0}};

static const arch_default arcee_defaults[] = {
    /* transformers ArceeConfig (head_dim None: hidden_size / heads;
     * num_key_value_heads None: MHA) */
    {"num_hidden_layers", 32}, {"hidden_size", 2560}, {"num_attention_heads", 32},
    {"max_position_embeddings", 4096}, {"vocab_size", 32000}, {"intermediate_size", 18432},
    {NULL, 0}};

static const arch_default apertus_defaults[] = {
    /* transformers ApertusConfig (num_key_value_heads None: MHA) */
    {"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"max_position_embeddings", 65536}, {"vocab_size", 131072}, {"intermediate_size", 14336},
    {NULL, 0}};

static const arch_default seed_oss_defaults[] = {
    /* transformers SeedOssConfig */
    {"num_hidden_layers", 64}, {"hidden_size", 4096}, {"num_attention_heads", 80},
    {"num_key_value_heads", 8}, {"head_dim", 128}, {"max_position_embeddings", 524288},
    {"vocab_size", 155136}, {"intermediate_size", 27648}, {NULL, 0}};

static const arch_default none_defaults[] = {{NULL, 0}};

/* ---- other spellings of the usual keys -------------------------------------- */

/* GraniteMoeShared names its shared expert's width this way. */
static const arch_alias granitemoe_aliases[] = {
    {"shared_expert_intermediate_size", "shared_intermediate_size"}, {NULL, NULL}};

/* ChatGLM2/3 and the remote-code GLM-4 (ChatGLMConfig) keep Megatron's
 * names; read_chatglm applies multi_query_attention. */
static const arch_alias chatglm_aliases[] = {
    {"num_hidden_layers", "num_layers"},       {"head_dim", "kv_channels"},
    {"num_key_value_heads", "multi_query_group_num"},
    {"max_position_embeddings", "seq_length"}, {"vocab_size", "padded_vocab_size"},
    {"intermediate_size", "ffn_hidden_size"},  {NULL, NULL}};

/* OpenELM (remote code): per-layer head counts under their own names. */
static const arch_alias openelm_aliases[] = {
    {"num_hidden_layers", "num_transformer_layers"}, {"hidden_size", "model_dim"},
    {"num_attention_heads", "num_query_heads"},      {"num_key_value_heads", "num_kv_heads"},
    {"max_position_embeddings", "max_context_length"}, {NULL, NULL}};

/* Talkie's native config names (n_layer is a global alias). */
static const arch_alias talkie_aliases[] = {
    {"num_attention_heads", "n_head"}, {"hidden_size", "n_embd"},
    {"max_position_embeddings", "max_seq_len"}, {NULL, NULL}};

/* MiniCPM3's rotary part is qk_rope_head_dim wide (llama.cpp's
 * rope.dimension_count, which shapes its latent projection). */
static const arch_alias minicpm3_aliases[] = {{"rotary_dim", "qk_rope_head_dim"}, {NULL, NULL}};

/* The original OLMo checkpoints (hf_olmo's OLMoConfig) keep OLMo's own
 * names; the global aliases cover d_model, n_heads and n_layers. */
static const arch_alias olmo_aliases[] = {
    {"num_key_value_heads", "n_kv_heads"}, {"max_position_embeddings", "max_sequence_length"},
    {NULL, NULL}};

/* ---- layouts no rule describes ------------------------------------------------ */

static int read_layer_count(cfg *c, uint32_t *n)
{
    uint64_t v;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &v))
        return -1;
    *n = (uint32_t)v;
    return 0;
}

/* SmolLM3: layer_types when the file has it (SmolLM3-3B lists 36 full
 * layers); otherwise SmolLM3Config's rule: with use_sliding_window and a
 * window, the NoPE layers (no_rope_layers[i] == 0, else every
 * no_rope_layer_interval-th layer) slide and the RoPE layers are full. */
static int read_smollm3(cfg *c)
{
    uint32_t n;
    int found;
    char where[96];
    if (read_layer_count(c, &n) || hf_layers(c, n) || hf_kinds_from_layer_types(c, &found))
        return -1;
    if (!found) {
        int sliding = cfg_bool(c, "use_sliding_window") &&
                      cfg_lookup(c, "sliding_window", where, sizeof where);
        json_t *nope = cfg_lookup(c, "no_rope_layers", where, sizeof where);
        uint64_t interval = 4;
        if (nope && (!json_is_array(nope) || json_array_size(nope) < n))
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s must have one entry per layer (%u)",
                            c->label, where, n);
        if (sliding && !nope &&
            cfg_uint(c, "no_rope_layer_interval", 1, KVP_MAX_LAYERS, "no_rope_layer_interval",
                     &interval))
            return -1;
        for (uint32_t i = 0; i < n; i++) {
            int has_rope = nope ? json_integer_value(json_array_get(nope, i)) != 0
                                : (i + 1) % interval != 0;
            c->m->layers[i].kind = sliding && !has_rope ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
        }
        cfg_fact(c, "layer kinds", n,
                 sliding ? "use_sliding_window: NoPE layers slide, RoPE layers full"
                         : "use_sliding_window false: all layers full");
    }
    return hf_shapes(c);
}

/* ChatGLM: multi_query_group_num KV heads only when multi_query_attention
 * is set (ChatGLM2/3, GLM-4); otherwise every head keeps its own K and V. */
static int read_chatglm(cfg *c)
{
    uint32_t n;
    int mqa = cfg_bool(c, "multi_query_attention");
    uint64_t heads;
    if (read_layer_count(c, &n) || hf_layers(c, n))
        return -1;
    if (!mqa) {
        if (cfg_uint(c, "num_attention_heads", 1, KVP_MAX_HEADS, NULL, &heads))
            return -1;
        cfg_fact(c, "num_key_value_heads", (int64_t)heads,
                 "multi_query_attention false: = num_attention_heads (MHA)");
    }
    if (hf_kinds(c) || hf_shapes(c))
        return -1;
    for (uint32_t i = 0; !mqa && i < n; i++)
        c->m->layers[i].n_kv_heads = c->m->layers[i].n_head;
    return 0;
}

/* MiniCPM3: DeepSeek-style latent projections, but the cache holds the
 * expanded per-head K (qk_nope + qk_rope) and V (v_head_dim) of
 * num_key_value_heads heads, in transformers, llama.cpp (key_length =
 * qk_nope + qk_rope, value_length = hidden_size / heads) and vLLM (which
 * pads V to the K size; rt_vllm.c). */
static int read_minicpm3(cfg *c)
{
    uint32_t n;
    uint64_t nope, rope, vhd;
    int found;
    if (read_layer_count(c, &n) || hf_layers(c, n) || hf_kinds(c) ||
        cfg_uint(c, "qk_nope_head_dim", 0, KVP_MAX_DIM, "qk_nope_head_dim", &nope) ||
        cfg_uint(c, "qk_rope_head_dim", 1, KVP_MAX_DIM, "qk_rope_head_dim", &rope) ||
        cfg_uint_opt(c, "v_head_dim", 1, KVP_MAX_DIM, "v_head_dim", &vhd, &found))
        return -1;
    if (!found) { /* MiniCPM3's modeling code: hidden_size / num_attention_heads */
        uint64_t heads;
        if (cfg_uint(c, "num_attention_heads", 1, KVP_MAX_HEADS, NULL, &heads))
            return -1;
        vhd = c->m->hidden_size / heads;
        if (!vhd)
            return kvp_fail(c->err, KVP_EINPUT, "%s: missing required field \"v_head_dim\" "
                            "(or hidden_size)", c->label);
        cfg_fact(c, "v_head_dim", (int64_t)vhd,
                 "v_head_dim absent: hidden_size / num_attention_heads");
    }
    cfg_fact(c, "head_dim", (int64_t)(nope + rope), "qk_nope_head_dim + qk_rope_head_dim (K)");
    for (uint32_t i = 0; i < n; i++) {
        kvp_layer *L = &c->m->layers[i];
        if (hf_read_attention(c, i, L))
            return -1;
        L->head_dim_k = (uint32_t)(nope + rope);
        L->head_dim_v = (uint32_t)vhd;
    }
    return 0;
}

/* vLLM has no model for the architecture; why is the caller's sentence. */
static void no_vllm(cfg *c, const char *why)
{
    snprintf(c->m->vllm_refusal, sizeof c->m->vllm_refusal, "vLLM cannot serve it: %s", why);
}

/* OpenELM: per-layer head counts (the aliases map them); vLLM has no
 * OpenELM model, and its Transformers backend cannot run OpenELM's remote
 * code. */
static int read_openelm(cfg *c)
{
    uint32_t n;
    if (read_layer_count(c, &n) || hf_layers(c, n) || hf_kinds(c) || hf_shapes(c))
        return -1;
    no_vllm(c, "its registry (vllm/model_executor/models/registry.py) has no "
               "OpenELMForCausalLM");
    return 0;
}

/* Nanbeige 4.2: num_loops passes over the num_hidden_layers physical
 * layers, each pass with its own cache (llama.cpp gives every loop slot a
 * KV index of its own), so the cache has num_hidden_layers x num_loops
 * layers. */
static int read_nanbeige(cfg *c)
{
    uint64_t phys, loops = 1;
    int found;
    char src[96];
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, NULL, &phys) ||
        cfg_uint_opt(c, "num_loops", 1, 64, NULL, &loops, &found))
        return -1;
    if (!found)
        loops = 1;
    if (phys * loops > KVP_MAX_LAYERS)
        return kvp_fail(c->err, KVP_EINPUT, "%s: %llu layers x %llu loops is too many", c->label,
                        (unsigned long long)phys, (unsigned long long)loops);
    snprintf(src, sizeof src, found ? "num_hidden_layers x num_loops (%llu x %llu)"
                                    : "num_hidden_layers (num_loops absent: 1 pass)",
             (unsigned long long)phys, (unsigned long long)loops);
    cfg_fact(c, "layers", (int64_t)(phys * loops), src);
    if (hf_layers(c, (uint32_t)(phys * loops)) || hf_kinds(c) || hf_shapes(c))
        return -1;
    no_vllm(c, "its registry has no NanbeigeForCausalLM, and its Transformers backend keeps "
               "one cache per module, not one per loop pass");
    return 0;
}

/* ---- the rows ------------------------------------------------------------------ */

/* Rows that differ from the core "dense" rule set (every layer full) only
 * in their defaults and key spellings share its family name; a row with
 * a reader of its own, or another layout, has its own. */
static const arch_def defs[] = {
    {"dense", "granitemoe granitemoeshared",
     "GraniteMoeForCausalLM GraniteMoeSharedForCausalLM", LAYOUT_FULL, "GraniteMoeConfig",
     granitemoe_defaults, granitemoe_aliases, NULL},
    {"smollm3", "smollm3", "SmolLM3ForCausalLM", LAYOUT_FULL, "SmolLM3Config", smollm3_defaults,
     NULL, read_smollm3},
    {"dense", "olmoe", "OlmoeForCausalLM", LAYOUT_FULL, "OlmoeConfig", olmoe_defaults, NULL,
     NULL},
    {"dense", "olmo", "OlmoForCausalLM OLMoForCausalLM", LAYOUT_FULL, "OlmoConfig", olmo_defaults,
     olmo_aliases, NULL},
    {"dense", "gemma", "GemmaForCausalLM", LAYOUT_FULL, "GemmaConfig", gemma_defaults, NULL,
     NULL},
    {"dense", "minicpm", "MiniCPMForCausalLM", LAYOUT_FULL, NULL, none_defaults, NULL, NULL},
    {"minicpm3", "minicpm3", "MiniCPM3ForCausalLM", LAYOUT_FULL, NULL, none_defaults,
     minicpm3_aliases, read_minicpm3},
    {"dense", "glm4", "Glm4ForCausalLM", LAYOUT_FULL, "Glm4Config", glm_defaults, NULL, NULL},
    {"dense", "glm", "GlmForCausalLM", LAYOUT_FULL, "GlmConfig", glm_defaults, NULL, NULL},
    {"chatglm", "chatglm", "ChatGLMModel ChatGLMForConditionalGeneration", LAYOUT_FULL, NULL,
     none_defaults, chatglm_aliases, read_chatglm},
    /* vLLM's PhiMoE attention takes the model-level window: Phi-3's rule */
    {"phi3", "phimoe", "PhiMoEForCausalLM", LAYOUT_ALL_IF_WINDOW, "PhimoeConfig",
     phimoe_defaults, NULL, NULL},
    {"dense", "nemotron", "NemotronForCausalLM", LAYOUT_FULL, "NemotronConfig",
     nemotron_defaults, NULL, NULL},
    {"dense", "deepseek", "DeepseekForCausalLM", LAYOUT_FULL, NULL, none_defaults, NULL, NULL},
    {"dense", "arctic", "ArcticForCausalLM", LAYOUT_FULL, NULL, none_defaults, NULL, NULL},
    {"openelm", "openelm", "OpenELMForCausalLM", LAYOUT_FULL, NULL, none_defaults,
     openelm_aliases, read_openelm},
    {"dense", "arcee", "ArceeForCausalLM", LAYOUT_FULL, "ArceeConfig", arcee_defaults, NULL,
     NULL},
    {"dense", "apertus", "ApertusForCausalLM", LAYOUT_FULL, "ApertusConfig", apertus_defaults,
     NULL, NULL},
    {"dense", "seed_oss", "SeedOssForCausalLM", LAYOUT_FULL, "SeedOssConfig",
     seed_oss_defaults, NULL, NULL},
    {"nanbeige", "nanbeige", "NanbeigeForCausalLM", LAYOUT_FULL, NULL, none_defaults, NULL,
     read_nanbeige},
    /* Maincoder (Qwen-style with q/k norms) and Talkie: standard keys as
     * llama.cpp's converter reads them (Talkie under its native names too);
     * every head keeps its K and V unless num_key_value_heads says otherwise */
    {"dense", "maincoder", "MaincoderForCausalLM", LAYOUT_FULL, NULL, none_defaults, NULL,
     NULL},
    {"dense", "talkie", "TalkieForCausalLM", LAYOUT_FULL, NULL, none_defaults, talkie_aliases,
     NULL},
    /* openPangu-Embedded (remote code PanguEmbeddedConfig): standard keys */
    {"dense", "PanguEmbedded", "PanguEmbeddedForCausalLM", LAYOUT_FULL, NULL,
     none_defaults, NULL, NULL},
};

static const arch_gguf gguf[] = {
    {"granitemoe", "granitemoe"}, {"granitemoeshared", "granitemoe"}, {"smollm3", "smollm3"},
    {"olmoe", "olmoe"},           {"olmo", "olmo"},                   {"gemma", "gemma"},
    {"minicpm", "minicpm"},       {"minicpm3", "minicpm3"},           {"glm4", "glm4"},
    {"glm", "chatglm"},           {"chatglm", "chatglm"},             {"phimoe", "phimoe"},
    {"nemotron", "nemotron"},     {"deepseek", "deepseek"},           {"arctic", "arctic"},
    {"openelm", "openelm"},       {"arcee", "arcee"},                 {"apertus", "apertus"},
    {"seed_oss", "seed_oss"},     {"nanbeige", "nanbeige"},           {"PanguEmbedded", "pangu-embedded"},
    {"maincoder", "maincoder"},   {"talkie", "talkie"},
};

const arch_group arch_group_dense = {
    .defs = defs, .n_defs = sizeof defs / sizeof defs[0],
    .gguf = gguf, .n_gguf = sizeof gguf / sizeof gguf[0],
};
