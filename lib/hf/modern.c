/* hf/modern.c - config.json architectures of the "modern" group (see arch.h): their
 * rule sets, transformers defaults and llama.cpp names.
 *
 * Most of them are multimodal wrappers whose language model is a known
 * decoder (Qwen2-VL / Qwen2.5-VL, Qwen3-VL, Mistral 3): only the text
 * decoder has a KV cache, and the reader finds its fields in text_config
 * (transformers >= 4.5x nests them) or at the top level (older files keep
 * them flat), text_config first.  M-RoPE and DeepStack change positions and
 * inputs, never the cache. */
#include <stdio.h>
#include <string.h>

#include "../hfconfig.h"

/* transformers Qwen2VLTextConfig / Qwen2_5_VLTextConfig.__init__ (the two
 * agree); a flat config's top level feeds the same class. */
static const arch_default qwen2_vl_defaults[] = {
    {"num_hidden_layers", 80}, {"hidden_size", 8192}, {"num_attention_heads", 64},
    {"num_key_value_heads", 8}, {"max_position_embeddings", 32768}, {"sliding_window", 4096},
    {"max_window_layers", 80}, {"vocab_size", 152064}, {"intermediate_size", 29568},
    {NULL, 0}};

/* transformers Qwen3VLTextConfig.__init__: head_dim is 128 whatever the
 * hidden size. */
static const arch_default qwen3_vl_defaults[] = {
    {"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"num_key_value_heads", 32}, {"head_dim", 128}, {"max_position_embeddings", 128000},
    {"vocab_size", 151936}, {"intermediate_size", 22016}, {NULL, 0}};

/* transformers Qwen3VLMoeTextConfig: head_dim absent is hidden / heads. */
static const arch_default qwen3_vl_moe_defaults[] = {
    {"num_hidden_layers", 24}, {"hidden_size", 2048}, {"num_attention_heads", 16},
    {"num_key_value_heads", 16}, {"max_position_embeddings", 128000}, {"vocab_size", 151936},
    {"intermediate_size", 5632}, {"moe_intermediate_size", 1408}, {"num_experts", 60},
    {"num_experts_per_tok", 4}, {NULL, 0}};

/* transformers Ministral3Config (sliding_window defaults to None). */
static const arch_default ministral3_defaults[] = {
    {"num_hidden_layers", 34}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"num_key_value_heads", 8}, {"head_dim", 128}, {"max_position_embeddings", 262144},
    {"vocab_size", 131072}, {"intermediate_size", 14336}, {NULL, 0}};

/* transformers Mistral4Config: DeepSeek-style MLA, latent 256 + rope 64. */
static const arch_default mistral4_defaults[] = {
    {"num_hidden_layers", 36}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"kv_lora_rank", 256}, {"q_lora_rank", 1024}, {"qk_rope_head_dim", 64},
    {"qk_nope_head_dim", 64}, {"v_head_dim", 128}, {"max_position_embeddings", 1048576},
    {"vocab_size", 131072}, {"intermediate_size", 12288}, {"moe_intermediate_size", 2048},
    {"n_routed_experts", 128}, {"n_shared_experts", 1}, {"num_experts_per_tok", 4},
    {NULL, 0}};

/* transformers Ernie4_5Config; PaddleOCRTextConfig has the same defaults. */
static const arch_default ernie4_5_defaults[] = {
    {"num_hidden_layers", 18}, {"hidden_size", 1024}, {"num_attention_heads", 16},
    {"num_key_value_heads", 2}, {"head_dim", 128}, {"max_position_embeddings", 131072},
    {"vocab_size", 103424}, {"intermediate_size", 3072}, {NULL, 0}};

/* transformers Ernie4_5_MoeConfig (no head_dim: hidden / heads), under the
 * names kvplan asks for; ERNIE spells them moe_* (aliases below). */
static const arch_default ernie4_5_moe_defaults[] = {
    {"num_hidden_layers", 28}, {"hidden_size", 2560}, {"num_attention_heads", 20},
    {"num_key_value_heads", 4}, {"max_position_embeddings", 131072}, {"vocab_size", 103424},
    {"intermediate_size", 12288}, {"moe_intermediate_size", 1536}, {"num_experts", 64},
    {"num_experts_per_tok", 6}, {"n_shared_experts", 2}, {"first_k_dense_replace", 1},
    {NULL, 0}};

static const arch_alias ernie4_5_moe_aliases[] = {
    {"num_experts", "moe_num_experts"},           {"num_experts_per_tok", "moe_k"},
    {"n_shared_experts", "moe_num_shared_experts"}, {"first_k_dense_replace", "moe_layer_start_index"},
    {NULL, NULL}};

/* transformers HunYuanDenseV1Config / HunYuanMoEV1Config /
 * HunYuanVLTextConfig: no KV head count means MHA, no head_dim hidden /
 * heads (legacy files spell it attention_head_dim, which kvplan reads). */
static const arch_default hunyuan_defaults[] = {
    {"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"max_position_embeddings", 2048}, {"vocab_size", 290943}, {"intermediate_size", 11008},
    {NULL, 0}};

static const arch_default hunyuan_moe_defaults[] = {
    {"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"max_position_embeddings", 2048}, {"vocab_size", 290943}, {"intermediate_size", 11008},
    {"num_experts", 1}, {"num_experts_per_tok", 1}, {NULL, 0}};

/* Hunyuan-A13B lists its top-k and shared experts per layer */
static const arch_alias hunyuan_moe_aliases[] = {
    {"num_experts_per_tok", "moe_topk"}, {"n_shared_experts", "num_shared_expert"}, {NULL, NULL}};

/* transformers HYV3Config (tencent/Hy3-preview) */
static const arch_default hy_v3_defaults[] = {
    {"num_hidden_layers", 80}, {"hidden_size", 4096}, {"num_attention_heads", 64},
    {"num_key_value_heads", 8}, {"head_dim", 128}, {"max_position_embeddings", 131072},
    {"vocab_size", 120832}, {"intermediate_size", 13312}, {"num_experts", 192},
    {"num_experts_per_tok", 8}, {"n_shared_experts", 1}, {"moe_intermediate_size", 1536},
    {NULL, 0}};

static const arch_alias shared_experts_aliases[] = {
    {"n_shared_experts", "num_shared_experts"}, {NULL, NULL}};

/* transformers Dots1Config: sliding_window 4096 on layers >= max_window_layers
 * (62, every layer of dots.llm1: none slides) */
static const arch_default dots1_defaults[] = {
    {"num_hidden_layers", 62}, {"hidden_size", 4608}, {"num_attention_heads", 32},
    {"num_key_value_heads", 32}, {"max_position_embeddings", 2048}, {"vocab_size", 152064},
    {"intermediate_size", 10944}, {"moe_intermediate_size", 1408}, {"sliding_window", 4096},
    {"max_window_layers", 62}, {NULL, 0}};

/* transformers HrmTextConfig (sapientinc/HRM-Text-1B) */
static const arch_default hrm_text_defaults[] = {
    {"hidden_size", 1536}, {"num_attention_heads", 12}, {"head_dim", 128},
    {"max_position_embeddings", 2048}, {"vocab_size", 151808}, {"intermediate_size", 4096},
    {"H_cycles", 2}, {"L_cycles", 3}, {NULL, 0}};

static int read_mistral3(cfg *c);
static int read_hunyuan(cfg *c);
static int read_hy_v3(cfg *c);
static int read_dots1(cfg *c);
static int read_bailing_v2(cfg *c);
static int read_grovemoe(cfg *c);
static int read_deepseek_ocr(cfg *c);
static int read_cogvlm(cfg *c);
static int read_hrm_text(cfg *c);
static int read_t5(cfg *c);

enum { ROW_MISTRAL4 = 4 };

/* Rows of one model family share its family name (qwen-vl, mistral3,
 * ernie, hunyuan, bailing): each row keeps its own defaults and reader, and
 * --family NAME picks the family's first row.  (Fewer names also keep the
 * list of families, which an unknown --family prints in one line, short.) */
static const arch_def defs[] = {
    {"qwen-vl", "qwen2_vl qwen2_vl_text qwen2_5_vl qwen2_5_vl_text",
     "Qwen2VLForConditionalGeneration Qwen2_5_VLForConditionalGeneration", LAYOUT_QWEN,
     "Qwen2_5_VLTextConfig", qwen2_vl_defaults, NULL, NULL},
    {"qwen-vl", "qwen3_vl qwen3_vl_text", "Qwen3VLForConditionalGeneration", LAYOUT_FULL,
     "Qwen3VLTextConfig", qwen3_vl_defaults, NULL, NULL},
    {"qwen-vl", "qwen3_vl_moe qwen3_vl_moe_text", "Qwen3VLMoeForConditionalGeneration",
     LAYOUT_FULL, "Qwen3VLMoeTextConfig", qwen3_vl_moe_defaults, NULL, NULL},
    /* Mistral Small 3.x and Ministral 3: GQA, all full unless a window is
     * set (none is); read_mistral3 hands Mistral Small 4 to the next row */
    {"mistral3", "mistral3 ministral3", "Mistral3ForConditionalGeneration Ministral3ForCausalLM",
     LAYOUT_ALL_IF_WINDOW, "Ministral3Config", ministral3_defaults, NULL, read_mistral3},
    [ROW_MISTRAL4] = {"mistral3", "mistral4", "Mistral4ForCausalLM", LAYOUT_MLA,
                      "Mistral4Config", mistral4_defaults, NULL, NULL},
    {"ernie", "ernie4_5", "Ernie4_5ForCausalLM Ernie4_5_ForCausalLM", LAYOUT_FULL,
     "Ernie4_5Config", ernie4_5_defaults, NULL, NULL},
    {"ernie", "ernie4_5_moe", "Ernie4_5_MoeForCausalLM", LAYOUT_FULL, "Ernie4_5_MoeConfig",
     ernie4_5_moe_defaults, ernie4_5_moe_aliases, NULL},
    /* PaddleOCR-VL: ERNIE-4.5-0.3B behind a vision tower */
    {"ernie", "paddleocr_vl paddleocr_vl_text", "PaddleOCRVLForConditionalGeneration",
     LAYOUT_FULL, "PaddleOCRTextConfig", ernie4_5_defaults, NULL, NULL},
    {"hunyuan", "hunyuan_v1_dense", "HunYuanDenseV1ForCausalLM", LAYOUT_FULL,
     "HunYuanDenseV1Config", hunyuan_defaults, NULL, read_hunyuan},
    {"hunyuan", "hunyuan_v1_moe", "HunYuanMoEV1ForCausalLM", LAYOUT_FULL, "HunYuanMoEV1Config",
     hunyuan_moe_defaults, hunyuan_moe_aliases, read_hunyuan},
    /* HunyuanOCR */
    {"hunyuan", "hunyuan_vl hunyuan_vl_text", "HunYuanVLForConditionalGeneration", LAYOUT_FULL,
     "HunYuanVLTextConfig", hunyuan_defaults, NULL, read_hunyuan},
    {"hunyuan", "hy_v3", "HYV3ForCausalLM", LAYOUT_FULL, "HYV3Config", hy_v3_defaults,
     shared_experts_aliases, read_hy_v3},
    {"dots1", "dots1", "Dots1ForCausalLM", LAYOUT_FULL, "Dots1Config", dots1_defaults, NULL,
     read_dots1},
    /* Ling / Ring (inclusionAI): remote code, no transformers defaults */
    {"bailing", "bailing_moe", "BailingMoeForCausalLM", LAYOUT_FULL, NULL, NULL,
     shared_experts_aliases, NULL},
    {"bailing", "bailing_moe_v2", "BailingMoeV2ForCausalLM", LAYOUT_FULL, NULL, NULL,
     shared_experts_aliases, read_bailing_v2},
    {"grovemoe", "grove_moe", "GroveMoeForCausalLM", LAYOUT_FULL, NULL, NULL, NULL,
     read_grovemoe},
    /* DeepSeek-OCR: the wrapper's model_type is deepseek_vl_v2, shared with
     * DeepSeek-VL2, so only the class says which it is */
    {"deepseek-ocr", "deepseek_ocr", "DeepseekOCRForCausalLM DeepseekOCR2ForCausalLM",
     LAYOUT_FULL, NULL, NULL, NULL, read_deepseek_ocr},
    {"cogvlm", "cogvlm", "CogVLMForCausalLM", LAYOUT_FULL, NULL, NULL, NULL, read_cogvlm},
    {"hrm-text", "hrm_text", "HrmTextForCausalLM", LAYOUT_FULL, "HrmTextConfig",
     hrm_text_defaults, NULL, read_hrm_text},
    {"t5", "t5", "T5ForConditionalGeneration T5WithLMHeadModel", LAYOUT_FULL, NULL, NULL, NULL,
     read_t5},
};

/* The layer count, then the kinds by the row's layout rule and the shapes:
 * what hfconfig.c does for a row without a reader. */
static int read_standard(cfg *c)
{
    uint64_t n;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n))
        return -1;
    return hf_kinds(c) || hf_shapes(c) ? -1 : 0;
}

/* Does the config say key: null, which transformers keeps as None where a
 * default would otherwise apply? */
static int explicit_null(const cfg *c, const char *key)
{
    json_t *v = c->text != c->root ? json_object_get(c->text, key) : NULL;
    if (!v)
        v = json_object_get(c->root, key);
    return v && json_is_null(v);
}

/* Mistral3ForConditionalGeneration wraps whichever decoder text_config
 * names: Mistral Small 3.1/3.2 ("mistral"), Ministral 3 and Devstral 2
 * ("ministral3"), or Mistral Small 4 ("mistral4", MLA).  llama.cpp's
 * converter writes all but the last as its mistral3 architecture. */
static int read_mistral3(cfg *c)
{
    const char *mt = cfg_str(c, "model_type");
    if (mt && strcmp(mt, "mistral4") == 0) {
        c->arch = &defs[ROW_MISTRAL4]; /* its defaults and the MLA layout */
    } else {
        snprintf(c->m->gguf_arch, sizeof c->m->gguf_arch, "mistral3");
    }
    return read_standard(c);
}

/* Hunyuan-Large's cross-layer attention (use_cla: every cla_share_factor
 * layers share one KV) is in neither transformers' HunYuan classes nor
 * llama.cpp's loaders; the released A13B and dense models keep it off. */
static int read_hunyuan(cfg *c)
{
    if (cfg_bool(c, "use_cla"))
        return kvp_fail(c->err, KVP_EINPUT,
                        "%s: use_cla: HunYuan's cross-layer KV sharing is not modelled (kvplan "
                        "reads the models that keep it off: Hunyuan-A13B, the dense 0.5B-7B, "
                        "HunyuanOCR)", c->label);
    return read_standard(c);
}

/* HYV3Config.mlp_layer_types: dense blocks first, then MoE; absent, only
 * layer 0 is dense.  llama.cpp builds a dense FFN where a layer has no
 * router, so the twin needs the count. */
static int read_hy_v3(cfg *c)
{
    char where[96];
    json_t *t = cfg_lookup(c, "mlp_layer_types", where, sizeof where);
    uint32_t dense = 1;
    if (json_is_array(t)) {
        dense = 0;
        while (dense < json_array_size(t) &&
               json_is_string(json_array_get(t, dense)) &&
               strcmp(json_string_value(json_array_get(t, dense)), "dense") == 0)
            dense++;
    }
    c->m->n_layer_dense_lead = dense;
    return read_standard(c);
}

/* Dots1Config: layer i slides iff sliding_window is set (4096 when the key
 * is absent, none when it is null) and i >= max_window_layers; layer_types
 * wins when the file has it. */
static int read_dots1(cfg *c)
{
    uint64_t n, mwl, win;
    int found, lt;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n) || hf_kinds_from_layer_types(c, &lt))
        return -1;
    if (!lt) {
        if (cfg_uint_opt(c, "max_window_layers", 0, KVP_MAX_LAYERS, "max_window_layers", &mwl,
                         &found) ||
            cfg_uint_opt(c, "sliding_window", 0, KVP_MAX_TOKENS, NULL, &win, &found))
            return -1;
        int slides = found && !explicit_null(c, "sliding_window");
        for (uint32_t i = 0; i < n; i++)
            c->m->layers[i].kind = slides && i >= mwl ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
        cfg_fact(c, "layer kinds", (int64_t)n,
                 "sliding iff sliding_window is set and i >= max_window_layers (Dots1Config)");
    }
    return hf_shapes(c);
}

/* Ling 2.0 says model_type bailing_moe, as Ling 1 does; its class picks
 * llama.cpp's bailingmoe2 (fused QKV, q/k norms, sigmoid router). */
static int read_bailing_v2(cfg *c)
{
    snprintf(c->m->gguf_arch, sizeof c->m->gguf_arch, "bailingmoe2");
    return read_standard(c);
}

/* Architectures vLLM has no implementation of (its model registry lists no
 * such class); the vLLM runtime refuses them with this reason. */
static void no_vllm(cfg *c, const char *cls)
{
    snprintf(c->m->vllm_refusal, sizeof c->m->vllm_refusal,
             "vLLM cannot serve %s: its model registry has no implementation of it", cls);
}

static int read_grovemoe(cfg *c)
{
    no_vllm(c, "GroveMoeForCausalLM");
    return read_standard(c);
}

static int read_cogvlm(cfg *c)
{
    no_vllm(c, "CogVLMForCausalLM");
    return read_standard(c);
}

/* DeepSeek-OCR's decoder is DeepSeek-V2's without MLA (use_mla false):
 * plain MHA of hidden / heads per head, its fields in language_config
 * (and copied to the top level).  The MLA variants of that wrapper are
 * DeepSeek-VL2, which llama.cpp does not convert. */
static int read_deepseek_ocr(cfg *c)
{
    json_t *lc = json_object_get(c->root, "language_config");
    if (json_is_object(lc))
        c->text = lc;
    if (cfg_bool(c, "use_mla"))
        return kvp_fail(c->err, KVP_EINPUT, "%s: use_mla: DeepSeek-OCR's decoder is read as "
                        "plain attention; an MLA language_config is not modelled here",
                        c->label);
    snprintf(c->m->gguf_arch, sizeof c->m->gguf_arch, "deepseek2-ocr");
    return read_standard(c);
}

/* HRM-Text runs a low and a high stack of num_layers_per_stack blocks
 * H_cycles x (L_cycles + 1) times, and every one of those invocations has a
 * cache slot of its own: transformers rewrites num_hidden_layers to that
 * product (keeping the per-stack count in num_layers_per_stack), and
 * llama.cpp's block_count counts the slots.  An older file gives the
 * per-stack count as num_hidden_layers. */
static int read_hrm_text(cfg *c)
{
    uint64_t lps, h, l, n = 0;
    int found, have_lps;
    if (cfg_uint_opt(c, "num_layers_per_stack", 1, KVP_MAX_LAYERS, "num_layers_per_stack", &lps,
                     &have_lps) ||
        (!have_lps &&
         cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "num_layers_per_stack", &lps)) ||
        cfg_uint(c, "H_cycles", 1, 64, "H_cycles", &h) ||
        cfg_uint(c, "L_cycles", 1, 64, "L_cycles", &l))
        return -1;
    uint64_t slots = lps * h * (l + 1);
    if (have_lps &&
        cfg_uint_opt(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, NULL, &n, &found))
        return -1;
    if (have_lps && found && n != slots)
        return kvp_fail(c->err, KVP_EINPUT, "%s: num_hidden_layers %llu is not num_layers_per_stack "
                        "x H_cycles x (L_cycles + 1) = %llu", c->label, (unsigned long long)n,
                        (unsigned long long)slots);
    if (slots > KVP_MAX_LAYERS || hf_layers(c, (uint32_t)slots))
        return kvp_fail(c->err, KVP_EINPUT, "%s: %llu cache slots is out of range", c->label,
                        (unsigned long long)slots);
    cfg_fact(c, "layers", (int64_t)slots,
             "cache slots: num_layers_per_stack x H_cycles x (L_cycles + 1)");
    no_vllm(c, "HrmTextForCausalLM");
    return hf_kinds(c) || hf_shapes(c) ? -1 : 0;
}

/* T5's decoder caches its self-attention K/V and, per request, the
 * cross-attention K/V of the encoder's output, whose length is the
 * request's input: no config gives it. */
static int read_t5(cfg *c)
{
    return kvp_fail(c->err, KVP_EINPUT,
                    "%s: T5 is an encoder-decoder: its decoder's cross-attention cache grows "
                    "with each request's encoder input, which kvplan does not model", c->label);
}

/* convert_hf_to_gguf.py: Qwen2VLModel takes both Qwen2-VL classes;
 * Mistral3Model writes mistral3, or mistral4 for an MLA text model. */
static const arch_gguf gguf[] = {
    {"qwen2_vl", "qwen2vl"},         {"qwen2_vl_text", "qwen2vl"},
    {"qwen2_5_vl", "qwen2vl"},       {"qwen2_5_vl_text", "qwen2vl"},
    {"qwen3_vl", "qwen3vl"},         {"qwen3_vl_text", "qwen3vl"},
    {"qwen3_vl_moe", "qwen3vlmoe"},  {"qwen3_vl_moe_text", "qwen3vlmoe"},
    {"mistral3", "mistral3"},        {"ministral3", "mistral3"},
    {"mistral4", "mistral4"},        {"ernie4_5", "ernie4_5"},
    {"ernie4_5_moe", "ernie4_5-moe"}, {"paddleocr_vl", "paddleocr"},
    {"paddleocr_vl_text", "paddleocr"}, {"hunyuan_v1_dense", "hunyuan-dense"},
    {"hunyuan_v1_moe", "hunyuan-moe"}, {"hunyuan_vl", "hunyuan_vl"},
    {"hunyuan_vl_text", "hunyuan_vl"}, {"hy_v3", "hy_v3"},
    {"dots1", "dots1"},              {"bailing_moe", "bailingmoe"},
    {"bailing_moe_v2", "bailingmoe2"}, {"grove_moe", "grovemoe"},
    {"deepseek_ocr", "deepseek2-ocr"}, {"cogvlm", "cogvlm"},
    {"hrm_text", "hrm_text"},
};

static const arch_refusal refused[] = {{"t5", "encoder-decoder cross-attention cache not modelled"}, {NULL, NULL}};

const arch_group arch_group_modern = {
    .defs = defs, .n_defs = sizeof defs / sizeof defs[0],
    .gguf = gguf, .n_gguf = sizeof gguf / sizeof gguf[0],
    .refused = refused,
};
