/* arch.c - the architecture table: the core rule sets here, and the groups
 * of lib/hf/ (one file per family of architectures).  Adding an
 * architecture that reuses an existing layout rule is one row in a group;
 * its transformers defaults (the values a config.json may omit) sit beside
 * it, with the class they come from, so `kvplan show` can say where every
 * number came from. */
#include <stdio.h>
#include <string.h>

#include "arch.h"
#include "kvplan.h"

static const arch_default gemma3_defaults[] = {
    /* transformers Gemma3TextConfig.__init__ */
    {"num_hidden_layers", 26}, {"hidden_size", 2304}, {"num_attention_heads", 8},
    {"num_key_value_heads", 4}, {"head_dim", 256}, {"sliding_window", 4096},
    {"sliding_window_pattern", 6}, {"max_position_embeddings", 131072}, {"vocab_size", 262208},
    {NULL, 0}};

static const arch_default gemma2_defaults[] = {
    /* transformers Gemma2Config.__init__ */
    {"num_hidden_layers", 26}, {"hidden_size", 2304}, {"num_attention_heads", 8},
    {"num_key_value_heads", 4}, {"head_dim", 256}, {"sliding_window", 4096},
    {"max_position_embeddings", 8192}, {NULL, 0}};

static const arch_default cohere2_defaults[] = {
    /* transformers Cohere2Config.__init__ */
    {"sliding_window", 4096}, {"sliding_window_pattern", 4}, {NULL, 0}};

static const arch_default llama4_defaults[] = {
    /* transformers Llama4TextConfig.__init__ */
    {"attention_chunk_size", 8192}, {"no_rope_layer_interval", 4}, {NULL, 0}};

static const arch_default gdn_defaults[] = {
    /* transformers Qwen3NextConfig.__init__ */
    {"full_attention_interval", 4}, {"linear_conv_kernel_dim", 4},
    {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128},
    {"linear_num_key_heads", 16}, {"linear_num_value_heads", 32}, {NULL, 0}};

static const arch_default jamba_defaults[] = {
    /* transformers JambaConfig.__init__ */
    {"attn_layer_period", 8}, {"attn_layer_offset", 4}, {"mamba_d_state", 16},
    {"mamba_d_conv", 4}, {"mamba_expand", 2}, {NULL, 0}};

static const arch_default nemotron_h_defaults[] = {
    /* transformers NemotronHConfig.__init__ */
    {"conv_kernel", 4}, {"expand", 2}, {"n_groups", 8}, {"mamba_num_heads", 128},
    {"mamba_head_dim", 64}, {"ssm_state_size", 128}, {NULL, 0}};

static const arch_default mamba1_defaults[] = {
    /* transformers MambaConfig / FalconMambaConfig.__init__ */
    {"state_size", 16}, {"conv_kernel", 4}, {"expand", 2}, {NULL, 0}};

static const arch_default mamba2_defaults[] = {
    /* transformers Mamba2Config.__init__ */
    {"num_heads", 128}, {"head_dim", 64}, {"state_size", 128}, {"n_groups", 8},
    {"conv_kernel", 4}, {"expand", 2}, {NULL, 0}};

static const arch_default falcon_h1_defaults[] = {
    /* transformers FalconH1Config.__init__ */
    {"mamba_d_state", 256}, {"mamba_d_conv", 4}, {"mamba_n_groups", 1},
    {"mamba_n_heads", 128}, {"mamba_expand", 2}, {"num_key_value_heads", 8}, {NULL, 0}};

static const arch_default lfm2_defaults[] = {
    /* transformers Lfm2Config.__init__ */
    {"conv_L_cache", 3}, {NULL, 0}};

static const arch_default gemma3n_defaults[] = {
    /* transformers Gemma3nTextConfig.__init__ */
    {"num_hidden_layers", 35}, {"hidden_size", 2048}, {"num_attention_heads", 8},
    {"num_key_value_heads", 2}, {"head_dim", 256}, {"sliding_window", 512},
    {"num_kv_shared_layers", 15}, {"sliding_window_pattern", 5},
    {"max_position_embeddings", 32768}, {NULL, 0}};

static const arch_default none_defaults[] = {{NULL, 0}};

/* EXAONE 3.x (remote-code ExaoneConfig) writes num_layers, not
 * num_hidden_layers. */
static const arch_alias dense_aliases[] = {{"num_hidden_layers", "num_layers"}, {NULL, NULL}};

static const arch_def arches[] = {
    {"llama", "llama", "LlamaForCausalLM", LAYOUT_FULL, NULL, none_defaults, NULL, NULL},
    {"mistral", "mistral mixtral starcoder2", "MistralForCausalLM MixtralForCausalLM",
     LAYOUT_ALL_IF_WINDOW, NULL, none_defaults, NULL, NULL},
    {"qwen2", "qwen2 qwen2_moe qwen3 qwen3_moe",
     "Qwen2ForCausalLM Qwen2MoeForCausalLM Qwen3ForCausalLM Qwen3MoeForCausalLM",
     LAYOUT_QWEN, NULL, none_defaults, NULL, NULL},
    {"phi3", "phi3", "Phi3ForCausalLM", LAYOUT_ALL_IF_WINDOW, NULL, none_defaults, NULL, NULL},
    {"dense", "olmo2 minimax_m2 glm4_moe granite exaone",
     "Olmo2ForCausalLM MiniMaxM2ForCausalLM Glm4MoeForCausalLM", LAYOUT_FULL, NULL,
     none_defaults, dense_aliases, NULL},
    {"gemma2", "gemma2", "Gemma2ForCausalLM", LAYOUT_EVEN_SLIDING, "Gemma2Config",
     gemma2_defaults, NULL, NULL},
    {"gemma3", "gemma3 gemma3_text",
     "Gemma3ForConditionalGeneration Gemma3ForCausalLM", LAYOUT_PERIOD,
     "Gemma3TextConfig", gemma3_defaults, NULL, NULL},
    {"cohere2", "cohere2", "Cohere2ForCausalLM", LAYOUT_PERIOD, "Cohere2Config",
     cohere2_defaults, NULL, NULL},
    {"gpt-oss", "gpt_oss", "GptOssForCausalLM", LAYOUT_EVEN_SLIDING, NULL, none_defaults, NULL, NULL},
    {"llama4", "llama4 llama4_text",
     "Llama4ForConditionalGeneration Llama4ForCausalLM", LAYOUT_CHUNKED,
     "Llama4TextConfig", llama4_defaults, NULL, NULL},
    {"deepseek-mla", "deepseek_v2 deepseek_v3 kimi_k2",
     "DeepseekV2ForCausalLM DeepseekV3ForCausalLM", LAYOUT_MLA, NULL, none_defaults, NULL, NULL},
    {"qwen3-gdn", "qwen3_next qwen3_5 qwen3_5_text qwen3_5_moe qwen3_5_moe_text",
     "Qwen3NextForCausalLM Qwen3_5ForConditionalGeneration Qwen3_5MoeForConditionalGeneration",
     LAYOUT_GDN, "Qwen3NextConfig", gdn_defaults, NULL, NULL},
    {"jamba", "jamba", "JambaForCausalLM", LAYOUT_JAMBA, "JambaConfig", jamba_defaults, NULL, NULL},
    {"nemotron-h", "nemotron_h", "NemotronHForCausalLM", LAYOUT_NEMOTRON_H,
     "NemotronHConfig", nemotron_h_defaults, hf_nemotron_h_aliases, hf_read_nemotron_h},
    {"mamba2", "mamba2", "Mamba2ForCausalLM", LAYOUT_MAMBA2, "Mamba2Config",
     mamba2_defaults, NULL, NULL},
    {"mamba", "mamba falcon_mamba", "MambaForCausalLM FalconMambaForCausalLM",
     LAYOUT_MAMBA1, "MambaConfig", mamba1_defaults, NULL, NULL},
    {"falcon-h1", "falcon_h1", "FalconH1ForCausalLM", LAYOUT_FALCON_H1, "FalconH1Config",
     falcon_h1_defaults, NULL, NULL},
    {"granite-hybrid", "granitemoehybrid", "GraniteMoeHybridForCausalLM", LAYOUT_GRANITE_HYBRID,
     NULL, none_defaults, NULL, NULL},
    {"lfm2", "lfm2", "Lfm2ForCausalLM", LAYOUT_LFM2, "Lfm2Config", lfm2_defaults, NULL, NULL},
    {"gemma3n", "gemma3n gemma3n_text",
     "Gemma3nForConditionalGeneration Gemma3nForCausalLM", LAYOUT_GEMMA3N, "Gemma3nTextConfig",
     gemma3n_defaults, NULL, NULL},
};

#define N_ARCHES (sizeof arches / sizeof arches[0])

static const arch_group core = {.defs = arches, .n_defs = N_ARCHES};

/* Every group, core first; a model_type is looked up in this order. */
static const arch_group *const groups[] = {
    &core, &arch_group_classic, &arch_group_dense, &arch_group_modern, &arch_group_windows,
    &arch_group_state, &arch_group_indexed, &arch_group_registry,
};
#define N_GROUPS (sizeof groups / sizeof groups[0])

/* Is word one of the space-separated words in list? */
static int in_list(const char *list, const char *word)
{
    size_t n = strlen(word);
    if (!n)
        return 0;
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

const arch_def *arch_find(const char *model_type, const char *const *classes, size_t n_classes)
{
    for (size_t c = 0; c < n_classes; c++)
        for (size_t g = 0; g < N_GROUPS; g++)
            for (size_t i = 0; i < groups[g]->n_defs; i++)
                if (groups[g]->defs[i].classes && in_list(groups[g]->defs[i].classes, classes[c]))
                    return &groups[g]->defs[i];
    if (model_type)
        for (size_t g = 0; g < N_GROUPS; g++)
            for (size_t i = 0; i < groups[g]->n_defs; i++)
                if (in_list(groups[g]->defs[i].model_types, model_type))
                    return &groups[g]->defs[i];
    return NULL;
}

const arch_def *arch_find_family(const char *family)
{
    for (size_t g = 0; family && g < N_GROUPS; g++)
        for (size_t i = 0; i < groups[g]->n_defs; i++)
            if (strcmp(groups[g]->defs[i].family, family) == 0)
                return &groups[g]->defs[i];
    return NULL;
}

const arch_default *arch_default_for(const arch_def *a, const char *key)
{
    for (const arch_default *d = a->defaults; d && d->key; d++)
        if (strcmp(d->key, key) == 0)
            return d;
    return NULL;
}

/* Every family name, space-separated, once each. */
static const char *word_list(char *buf, size_t n)
{
    if (buf[0])
        return buf;
    for (size_t g = 0; g < N_GROUPS; g++)
        for (size_t i = 0; i < groups[g]->n_defs; i++) {
            const arch_def *d = &groups[g]->defs[i];
            if (arch_find_family(d->family) != d)
                continue; /* a family spread over rows is named once */
            size_t len = strlen(buf);
            snprintf(buf + len, n - len, "%s%s", len ? " " : "", d->family);
        }
    return buf;
}

const char *arch_family_list(void)
{
    static char buf[8192];
    return word_list(buf, sizeof buf);
}

static const arch_gguf gguf_names[] = {
    {"llama", "llama"},           {"mistral", "llama"},         {"mixtral", "llama"},
    {"qwen2", "qwen2"},           {"qwen2_moe", "qwen2moe"},    {"qwen3", "qwen3"},
    {"qwen3_moe", "qwen3moe"},    {"qwen3_next", "qwen3next"},  {"qwen3_5", "qwen35"},
    {"qwen3_5_text", "qwen35"},   {"qwen3_5_moe", "qwen35moe"}, {"qwen3_5_moe_text", "qwen35moe"},
    {"phi3", "phi3"},             {"gemma2", "gemma2"},         {"gemma3", "gemma3"},
    {"gemma3_text", "gemma3"},    {"cohere2", "cohere2"},       {"gpt_oss", "gpt-oss"},
    {"llama4", "llama4"},         {"llama4_text", "llama4"},    {"deepseek_v2", "deepseek2"},
    {"deepseek_v3", "deepseek2"}, {"kimi_k2", "deepseek2"},     {"jamba", "jamba"},
    {"nemotron_h", "nemotron_h"}, {"mamba", "mamba"},           {"falcon_mamba", "mamba"},
    {"mamba2", "mamba2"},         {"olmo2", "olmo2"},           {"minimax_m2", "minimax-m2"},
    {"glm4_moe", "glm4moe"},      {"starcoder2", "starcoder2"}, {"granite", "granite"},
    {"exaone", "exaone"},         {"falcon_h1", "falcon-h1"},   {"granitemoehybrid", "granitehybrid"},
    {"lfm2", "lfm2"},             {"gemma3n", "gemma3n"},       {"gemma3n_text", "gemma3n"},
};

static const size_t n_gguf_names = sizeof gguf_names / sizeof gguf_names[0];

const char *arch_gguf_name(const char *model_type, const arch_def *a)
{
    if (a && a->layout == LAYOUT_MAMBA2)
        return "mamba2"; /* Mamba2ForCausalLM may say model_type "mamba" */
    for (size_t i = 0; model_type && i < n_gguf_names; i++)
        if (strcmp(gguf_names[i].model_type, model_type) == 0)
            return gguf_names[i].gguf;
    for (size_t g = 1; model_type && g < N_GROUPS; g++)
        for (size_t i = 0; i < groups[g]->n_gguf; i++)
            if (strcmp(groups[g]->gguf[i].model_type, model_type) == 0)
                return groups[g]->gguf[i].gguf;
    return "";
}

/* ---- the public listing (kvplan archs) ----------------------------------- */

static const arch_def *nth_def(size_t n)
{
    for (size_t g = 0; g < N_GROUPS; g++) {
        if (n < groups[g]->n_defs)
            return &groups[g]->defs[n];
        n -= groups[g]->n_defs;
    }
    return NULL;
}

size_t kvp_arch_count(void)
{
    size_t n = 0;
    for (size_t g = 0; g < N_GROUPS; g++)
        n += groups[g]->n_defs;
    return n;
}

/* llama.cpp's names for the row's model_types, once each, space-separated. */
static void gguf_names_of(const arch_def *d, char *buf, size_t n)
{
    char word[64];
    buf[0] = '\0';
    for (const char *p = d->model_types; *p;) {
        size_t len = strcspn(p, " ");
        snprintf(word, sizeof word, "%.*s", (int)len, p);
        const char *g = arch_gguf_name(word, d);
        size_t used = strlen(buf);
        if (*g && !in_list(buf, g))
            snprintf(buf + used, n - used, "%s%s", used ? " " : "", g);
        p += len;
        p += strspn(p, " ");
    }
}

static const char *refusal_of(const char *family)
{
    for (size_t g = 0; g < N_GROUPS; g++)
        for (const arch_refusal *r = groups[g]->refused; r && r->family; r++)
            if (strcmp(r->family, family) == 0)
                return r->why;
    return NULL;
}

int kvp_arch_at(size_t i, kvp_arch_info *out)
{
    const arch_def *d = nth_def(i);
    if (!d)
        return -1;
    out->family = d->family;
    out->model_types = d->model_types;
    out->classes = d->classes ? d->classes : "";
    out->defaults_from = d->defaults_from ? d->defaults_from : "";
    gguf_names_of(d, out->llama_archs, sizeof out->llama_archs);
    out->refused = refusal_of(d->family);
    return 0;
}
