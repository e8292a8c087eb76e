/* hf/indexed.c - config.json architectures of the "indexed" group (see arch.h): models
 * whose layers keep an indexer key cache beside their attention cache.
 *
 * DeepSeek Sparse Attention (DeepSeek-V3.2 `deepseek_v32`, GLM-5 `glm_moe_dsa`): every
 * layer is MLA, and a "lightning indexer" that picks the top-k tokens each query attends
 * to caches one more key per token, a single head of `index_head_dim` values
 * (kvp_layer.indexer_head_dim).  GLM-5.2's IndexShare gives that indexer to some layers
 * only: `indexer_types` ("full" runs it, "shared" reuses the previous full layer's
 * top-k), else `index_topk_pattern` (F/S), else `index_topk_freq` and
 * `index_skip_topk_offset`, which is the rule vLLM applies (deepseek_v2.py,
 * DeepseekV2MLAAttention) and transformers' GlmMoeDsaConfig derives indexer_types from.
 * HY V4 (`hy_v4`) is the same cache: MLA, and an indexer on its "full" layers.
 *
 * MiniMax Sparse Attention (MiniMax-M3 `minimax_m3`): GQA on every layer, and on the
 * sparse layers (sparse_attention_config.sparse_attention_freq) an indexer key of
 * sparse_index_dim per token.
 *
 * dots.3-note (`dots3_note`): DSA on its full layers, and sliding-window layers that are
 * MLA too, with a latent of their own (swa_kv_lora_rank + rope) and no V, which kvplan
 * keeps as sliding layers with head_dim_v 0 and their MLA shape in the mla_* fields.
 *
 * Qwen4-Exp (`qwen4_exp`): Qwen3.5's Gated DeltaNet and attention layers, QSA's indexer
 * key on the attention layers, and on its PLE layer a convolution history of the
 * per-layer embedding kept with the layer's state (kvp_layer.ple_conv_state). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hfconfig.h"

static const arch_default deepseek_v32_defaults[] = {
    /* transformers DeepseekV32Config */
    {"num_hidden_layers", 61}, {"hidden_size", 7168}, {"num_attention_heads", 128},
    {"kv_lora_rank", 512}, {"q_lora_rank", 1536}, {"qk_rope_head_dim", 64},
    {"qk_nope_head_dim", 128}, {"v_head_dim", 128}, {"max_position_embeddings", 163840},
    {"index_head_dim", 128}, {"index_n_heads", 64}, {"index_topk", 2048},
    {"first_k_dense_replace", 3}, {"vocab_size", 129280}, {NULL, 0}};

static const arch_default glm_moe_dsa_defaults[] = {
    /* transformers GlmMoeDsaConfig */
    {"num_hidden_layers", 78}, {"hidden_size", 6144}, {"num_attention_heads", 64},
    {"kv_lora_rank", 512}, {"q_lora_rank", 2048}, {"qk_rope_head_dim", 64},
    {"qk_nope_head_dim", 192}, {"v_head_dim", 256}, {"max_position_embeddings", 202752},
    {"index_head_dim", 128}, {"index_n_heads", 32}, {"index_topk", 2048},
    {"first_k_dense_replace", 3}, {"vocab_size", 154880}, {NULL, 0}};

/* layer_types, when given, may only say what every DSA layer is. */
static int dsa_layer_types(cfg *c)
{
    char where[96];
    json_t *v = cfg_lookup(c, "layer_types", where, sizeof where);
    if (!v)
        return 0;
    if (!json_is_array(v) || json_array_size(v) != c->m->n_layers)
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s must list one type per layer (%u)", c->label,
                        where, c->m->n_layers);
    for (uint32_t i = 0; i < c->m->n_layers; i++) {
        json_t *t = json_array_get(v, i);
        if (!json_is_string(t) || strcmp(json_string_value(t), "deepseek_sparse_attention"))
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%u]: kvplan knows DeepSeek sparse "
                            "attention layers only (\"deepseek_sparse_attention\")", c->label,
                            where, i);
    }
    return 0;
}

/* The IndexShare rule of vLLM and transformers: with a pattern, F runs the
 * indexer and S reuses; else layer i runs it iff max(i - offset + 1, 0) %
 * freq == 0.  *set says whether the config said anything at all. */
static int dsa_freq_rule(cfg *c, uint8_t *full, int *set, char *src, size_t srcn)
{
    char where[96];
    uint64_t freq = 1, offset = 2;
    int ff, fo;
    uint32_t n = c->m->n_layers;
    json_t *pat = cfg_lookup(c, "index_topk_pattern", where, sizeof where);
    *set = 0;
    if (pat) {
        *set = 1;
        snprintf(src, srcn, "%s (F full, S shared)", where);
        if (json_is_string(pat) && strlen(json_string_value(pat)) == n) {
            for (uint32_t i = 0; i < n; i++) {
                char ch = json_string_value(pat)[i];
                if (ch != 'F' && ch != 'S')
                    return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%u] is not F or S", c->label,
                                    where, i);
                full[i] = ch == 'F';
            }
            return 0;
        }
        if (json_is_array(pat) && json_array_size(pat) == n) {
            for (uint32_t i = 0; i < n; i++) {
                json_t *x = json_array_get(pat, i);
                const char *s = json_is_string(x) ? json_string_value(x) : "";
                if (strcmp(s, "F") && strcmp(s, "S"))
                    return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%u] is not \"F\" or \"S\"",
                                    c->label, where, i);
                full[i] = s[0] == 'F';
            }
            return 0;
        }
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s must give one F or S per layer (%u)",
                        c->label, where, n);
    }
    if (cfg_uint_opt(c, "index_topk_freq", 1, KVP_MAX_LAYERS, "index_topk_freq", &freq, &ff) ||
        cfg_uint_opt(c, "index_skip_topk_offset", 0, KVP_MAX_LAYERS, "index_skip_topk_offset",
                     &offset, &fo))
        return -1;
    if (!ff)
        freq = 1;
    if (!fo)
        offset = 2;
    *set = ff || fo;
    snprintf(src, srcn, "index_topk_freq %llu, index_skip_topk_offset %llu: full iff "
             "max(i - offset + 1, 0) %% freq == 0", (unsigned long long)freq,
             (unsigned long long)offset);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t k = i + 1 > offset ? i + 1 - offset : 0;
        full[i] = k % freq == 0;
    }
    return 0;
}

/* Which layers run (and cache for) the indexer: indexer_types when the
 * config lists it, else the IndexShare rule.  When both are there they
 * must agree, since llama.cpp's converter reads the first and vLLM the
 * second. */
static int dsa_indexer_layers(cfg *c, uint8_t *full)
{
    char where[96], src[160];
    uint32_t n = c->m->n_layers, count = 0;
    int set;
    uint8_t *rule = calloc(n, 1);
    if (!rule)
        return kvp_fail(c->err, KVP_EINPUT, "%s: out of memory", c->label);
    if (dsa_freq_rule(c, rule, &set, src, sizeof src)) {
        free(rule);
        return -1;
    }
    json_t *v = cfg_lookup(c, "indexer_types", where, sizeof where);
    if (!v) {
        memcpy(full, rule, n);
    } else {
        if (!json_is_array(v) || json_array_size(v) != n) {
            free(rule);
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s must list one type per layer (%u)",
                            c->label, where, n);
        }
        for (uint32_t i = 0; i < n; i++) {
            json_t *t = json_array_get(v, i);
            const char *s = json_is_string(t) ? json_string_value(t) : "";
            if (strcmp(s, "full") && strcmp(s, "shared")) {
                free(rule);
                return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%u] is not \"full\" or \"shared\"",
                                c->label, where, i);
            }
            full[i] = !strcmp(s, "full");
            if (set && full[i] != rule[i]) {
                free(rule);
                return kvp_fail(c->err, KVP_EINPUT, "%s: %s and the IndexShare settings (%s) "
                                "disagree on layer %u; llama.cpp's converter reads the first, "
                                "vLLM the second", c->label, where, src, i);
            }
        }
        snprintf(src, sizeof src, "%s: \"full\" layers run the indexer", where);
    }
    free(rule);
    for (uint32_t i = 0; i < n; i++)
        count += full[i];
    if (!set && !v)
        snprintf(src, sizeof src, "every layer (no indexer_types or index_topk_freq)");
    cfg_fact(c, "indexer layers", count, src);
    return 0;
}

/* HY V4 (tencent/Hy4-preview): indexer_types when the config has it (what
 * llama.cpp's converter writes); else, as the converter falls back, the
 * layers layer_types marks sparse.  With neither, transformers' HYV4Config
 * assumes a default pattern but the converter writes no DSA at all: kvplan
 * refuses rather than pick one. */
static int hy_v4_indexer_layers(cfg *c, uint8_t *full)
{
    char where[96];
    uint32_t n = c->m->n_layers, count = 0;
    json_t *it = cfg_lookup(c, "indexer_types", where, sizeof where);
    const char *src = "indexer_types: \"full\" layers run the indexer";
    if (it) {
        if (!json_is_array(it) || json_array_size(it) < n)
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s must list one type per layer (%u)",
                            c->label, where, n);
        for (uint32_t i = 0; i < n; i++) {
            json_t *t = json_array_get(it, i);
            const char *s = json_is_string(t) ? json_string_value(t) : "";
            if (strcmp(s, "full") && strcmp(s, "shared"))
                return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%u] is not \"full\" or \"shared\"",
                                c->label, where, i);
            full[i] = !strcmp(s, "full");
        }
        if (n && !full[0])
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s[0] must be \"full\" (nothing precedes "
                            "it to share; llama.cpp refuses the model)", c->label, where);
    } else {
        json_t *lt = cfg_lookup(c, "layer_types", where, sizeof where);
        if (!lt)
            return kvp_fail(c->err, KVP_EINPUT, "%s: hy_v4 without indexer_types or layer_types: "
                            "transformers assumes every 4th layer runs the indexer, llama.cpp's "
                            "converter writes no sparse attention; kvplan does not pick one",
                            c->label);
        if (!json_is_array(lt) || json_array_size(lt) < n)
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s must list one type per layer (%u)",
                            c->label, where, n);
        for (uint32_t i = 0; i < n; i++) {
            json_t *t = json_array_get(lt, i);
            const char *s = json_is_string(t) ? json_string_value(t) : "";
            full[i] = !strcmp(s, "sparse_attention") || !strcmp(s, "deepseek_sparse_attention") ||
                      !strcmp(s, "sparse");
        }
        src = "layer_types: every sparse-attention layer runs the indexer";
    }
    for (uint32_t i = 0; i < n; i++)
        count += full[i];
    cfg_fact(c, "indexer layers", count, src);
    return 0;
}

/* Every layer MLA; each layer that runs the indexer also caches its key. */
static int read_dsa(cfg *c)
{
    uint64_t n, idx_dim, heads, topk;
    int glm = !strcmp(c->arch->family, "glm-dsa"), hy = !strcmp(c->arch->family, "hy-v4");
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n) || (!hy && dsa_layer_types(c)))
        return -1;
    for (uint32_t i = 0; i < c->m->n_layers; i++) {
        c->m->layers[i].kind = KVP_LAYER_MLA;
        if (hf_read_mla(c, &c->m->layers[i]))
            return -1;
    }
    cfg_fact(c, "layer kinds", c->m->n_layers,
             "DeepSeek sparse attention: every layer MLA plus an indexer");
    /* the indexer's width sizes its cache; its head count and top-k only
     * shape the weights (kept for shape twins) */
    if (cfg_uint(c, "index_head_dim", 1, KVP_MAX_DIM, "index_head_dim", &idx_dim) ||
        cfg_uint(c, "index_n_heads", 1, KVP_MAX_HEADS, "index_n_heads", &heads) ||
        cfg_uint(c, "index_topk", 1, KVP_MAX_TOKENS, "index_topk", &topk))
        return -1;
    uint64_t hc;
    int found;
    if (hy && cfg_uint_opt(c, "hc_mult", 1, 64, "hc_mult", &hc, &found)) /* iHC streams, twins */
        return -1;
    uint8_t *full = calloc(c->m->n_layers, 1);
    if (!full)
        return kvp_fail(c->err, KVP_EINPUT, "%s: out of memory", c->label);
    int rc = 0;
    if (hy) {
        rc = hy_v4_indexer_layers(c, full);
    } else if (glm) {
        rc = dsa_indexer_layers(c, full);
    } else {
        /* llama.cpp's deepseek32 gives every layer an indexer, whatever
         * IndexShare settings say, and vLLM would follow them */
        char where[96], src[160];
        int set;
        rc = dsa_freq_rule(c, full, &set, src, sizeof src);
        for (uint32_t i = 0; !rc && i < c->m->n_layers; i++)
            if (!full[i])
                rc = kvp_fail(c->err, KVP_EINPUT, "%s: %s skips the indexer on layer %u; "
                              "llama.cpp's deepseek32 runs it on every layer and kvplan does "
                              "not model the difference",
                              c->label, cfg_lookup(c, "index_topk_pattern", where, sizeof where)
                                            ? where : "index_topk_freq", i);
        if (!rc)
            cfg_fact(c, "indexer layers", c->m->n_layers, "every layer (deepseek_v32)");
    }
    for (uint32_t i = 0; !rc && i < c->m->n_layers; i++)
        c->m->layers[i].indexer_head_dim = full[i] ? (uint32_t)idx_dim : 0;
    free(full);
    return rc;
}

/* ---- MiniMax-M3: MiniMax Sparse Attention (MSA) ------------------------------------ */

/* A field of sparse_attention_config (the published config nests them). */
static int msa_field(cfg *c, json_t *sac, const char *key, uint64_t hi, uint64_t *out)
{
    json_t *v = json_object_get(sac, key);
    if (!json_is_integer(v) || json_integer_value(v) < 1 || (uint64_t)json_integer_value(v) > hi)
        return kvp_fail(c->err, KVP_EINPUT, "%s: sparse_attention_config.%s must be an integer "
                        "in [1, %llu]", c->label, key, (unsigned long long)hi);
    *out = (uint64_t)json_integer_value(v);
    char src[96];
    snprintf(src, sizeof src, "sparse_attention_config.%s", key);
    cfg_fact(c, key, (int64_t)*out, src);
    return 0;
}

/* GQA attention on every layer; the layers sparse_attention_freq marks also
 * cache one indexer key of sparse_index_dim (MSA's lightning indexer: K
 * only, as the engines that run it store it). */
static int read_msa(cfg *c)
{
    char where[96];
    uint64_t n, dim, heads, topk, block, local;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n))
        return -1;
    for (uint32_t i = 0; i < c->m->n_layers; i++) {
        c->m->layers[i].kind = KVP_LAYER_FULL;
        if (hf_read_attention(c, i, &c->m->layers[i]))
            return -1;
    }
    json_t *sac = cfg_lookup(c, "sparse_attention_config", where, sizeof where);
    if (!json_is_object(sac) || !json_is_true(json_object_get(sac, "use_sparse_attention")))
        return kvp_fail(c->err, KVP_EINPUT, "%s: MiniMax-M3 without sparse_attention_config "
                        "(use_sparse_attention): kvplan reads the sparse model only", c->label);
    if (msa_field(c, sac, "sparse_index_dim", KVP_MAX_DIM, &dim) ||
        msa_field(c, sac, "sparse_num_index_heads", KVP_MAX_HEADS, &heads) ||
        msa_field(c, sac, "sparse_topk_blocks", KVP_MAX_TOKENS, &topk) ||
        msa_field(c, sac, "sparse_block_size", KVP_MAX_TOKENS, &block) ||
        msa_field(c, sac, "sparse_local_block", KVP_MAX_TOKENS, &local))
        return -1;
    json_t *freq = json_object_get(sac, "sparse_attention_freq");
    if (!json_is_array(freq) || json_array_size(freq) != c->m->n_layers)
        return kvp_fail(c->err, KVP_EINPUT, "%s: sparse_attention_config.sparse_attention_freq "
                        "must give one 0 or 1 per layer (%u)", c->label, c->m->n_layers);
    uint32_t count = 0;
    for (uint32_t i = 0; i < c->m->n_layers; i++) {
        json_t *x = json_array_get(freq, i);
        if (!json_is_integer(x) || (json_integer_value(x) != 0 && json_integer_value(x) != 1))
            return kvp_fail(c->err, KVP_EINPUT, "%s: sparse_attention_freq[%u] is not 0 or 1",
                            c->label, i);
        /* llama.cpp gives the indexer to the layers past the leading dense
         * ones, so a sparse layer after a dense one is not its layout */
        if (i && json_integer_value(x) < json_integer_value(json_array_get(freq, i - 1)))
            return kvp_fail(c->err, KVP_EINPUT, "%s: sparse_attention_freq[%u] is 0 after a "
                            "sparse layer; llama.cpp's minimax-m3 indexes every layer after "
                            "the leading dense ones", c->label, i);
        c->m->layers[i].indexer_head_dim = json_integer_value(x) ? (uint32_t)dim : 0;
        count += json_integer_value(x) != 0;
    }
    cfg_fact(c, "layer kinds", c->m->n_layers, "every layer attention; MSA indexer on the "
             "sparse ones");
    cfg_fact(c, "indexer layers", count, "sparse_attention_config.sparse_attention_freq");
    return 0;
}

/* ---- caches kvplan does not model yet: one line each --------------------------------- */

static int refuse_dsv4(cfg *c)
{
    return kvp_fail(c->err, KVP_EINPUT, "%s: DeepSeek-V4's cache (a raw sliding-window cache, "
                    "CSA and HCA caches compressed 4x and 128x, a lightning-indexer cache on the "
                    "CSA layers, and compressor states) is not in kvplan's per-layer model yet",
                    c->label);
}

/* ---- Qwen4-Exp: Gated DeltaNet, QSA attention, a PLE layer ------------------------ */

static const arch_default qwen4_exp_defaults[] = {
    /* transformers Qwen4ExpTextConfig */
    {"num_hidden_layers", 40}, {"hidden_size", 2048}, {"num_attention_heads", 16},
    {"num_key_value_heads", 2}, {"head_dim", 256}, {"max_position_embeddings", 32768},
    {"linear_conv_kernel_dim", 4}, {"linear_key_head_dim", 128}, {"linear_value_head_dim", 128},
    {"linear_num_key_heads", 16}, {"linear_num_value_heads", 32},
    {"moe_intermediate_size", 512}, {"shared_expert_intermediate_size", 512},
    {"num_experts_per_tok", 10}, {"num_experts", 512}, {"vocab_size", 248320},
    {"hc_count", 4}, {"hc_lowrank", 320}, {"ple_conv_kernel_size", 4}, {"ngram_size", 3},
    {"heads_per_ngram", 8}, {NULL, 0}};

/* layer_types (linear_attention; full_attention, deepseek_sparse_attention and
 * hybrid_indexed are attention), else linear unless (i + 1) %
 * full_attention_interval == 0, as Qwen4ExpTextConfig derives it. */
static int q4_kinds(cfg *c)
{
    char where[96];
    uint64_t every = 4;
    int found;
    json_t *lt = cfg_lookup(c, "layer_types", where, sizeof where);
    if (lt) {
        if (!json_is_array(lt) || json_array_size(lt) < c->m->n_layers)
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s must list one type per layer (%u)",
                            c->label, where, c->m->n_layers);
        for (uint32_t i = 0; i < c->m->n_layers; i++) {
            json_t *t = json_array_get(lt, i);
            const char *s = json_is_string(t) ? json_string_value(t) : "";
            if (!strcmp(s, "linear_attention"))
                c->m->layers[i].kind = KVP_LAYER_LINEAR;
            else if (!strcmp(s, "full_attention") || !strcmp(s, "deepseek_sparse_attention") ||
                     !strcmp(s, "hybrid_indexed"))
                c->m->layers[i].kind = KVP_LAYER_FULL;
            else
                return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%u] \"%s\" is not a Qwen4-Exp layer "
                                "type", c->label, where, i, s);
        }
        cfg_fact(c, "layer kinds", c->m->n_layers, where);
        return 0;
    }
    if (cfg_uint_opt(c, "full_attention_interval", 1, KVP_MAX_LAYERS, "full_attention_interval",
                     &every, &found))
        return -1;
    if (!found)
        every = 4;
    for (uint32_t i = 0; i < c->m->n_layers; i++)
        c->m->layers[i].kind = (i + 1) % every ? KVP_LAYER_LINEAR : KVP_LAYER_FULL;
    cfg_fact(c, "layer kinds", c->m->n_layers,
             "linear attention unless (i + 1) % full_attention_interval == 0");
    return 0;
}

/* Gated DeltaNet layers and attention layers (Qwen3.5's), the QSA indexer's
 * key on every attention layer when the config enables QSA, and on the
 * ple_layer_ids (one-indexed) the PLE convolution history: (kernel - 1) x
 * ngram_size positions (the dilation is the n-gram size) of hc_count x
 * hidden_size channels. */
static int read_qwen4exp(cfg *c)
{
    char where[96];
    uint64_t n, idx_dim = 0, v;
    int found, qsa = 0;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n) || q4_kinds(c) || hf_shapes(c))
        return -1;
    static const char *const qsa_keys[] = {"indexer_n_heads", "indexer_kv_heads",
                                           "indexer_head_dim", "indexer_budget",
                                           "indexer_compress_ratio"};
    for (size_t k = 0; k < 5; k++)
        qsa += cfg_lookup(c, qsa_keys[k], where, sizeof where) != NULL;
    if (qsa && qsa < 5)
        return kvp_fail(c->err, KVP_EINPUT, "%s: the QSA config needs all of indexer_n_heads, "
                        "indexer_kv_heads, indexer_head_dim, indexer_budget and "
                        "indexer_compress_ratio", c->label);
    if (qsa) {
        if (cfg_uint(c, "indexer_kv_heads", 1, 1, "indexer_kv_heads", &v) ||
            cfg_uint(c, "indexer_head_dim", 1, KVP_MAX_DIM, "indexer_head_dim", &idx_dim) ||
            cfg_uint(c, "indexer_n_heads", 1, KVP_MAX_HEADS, "indexer_n_heads", &v) ||
            cfg_uint(c, "indexer_budget", 1, KVP_MAX_TOKENS, "indexer_budget", &v) ||
            cfg_uint(c, "indexer_compress_ratio", 1, KVP_MAX_TOKENS, "indexer_compress_ratio",
                     &v))
            return -1;
    }
    uint32_t count = 0;
    for (uint32_t i = 0; i < c->m->n_layers; i++)
        if (c->m->layers[i].kind == KVP_LAYER_FULL) {
            c->m->layers[i].indexer_head_dim = (uint32_t)idx_dim;
            count += idx_dim != 0;
        }
    cfg_fact(c, "indexer layers", count, qsa ? "every attention layer (QSA)"
                                             : "no indexer_* keys: QSA off");
    uint64_t hc, lr;
    if (cfg_uint(c, "hc_count", 2, 64, "hc_count", &hc) ||
        cfg_uint(c, "hc_lowrank", 1, KVP_MAX_DIM, "hc_lowrank", &lr))
        return -1;
    json_t *ids = cfg_lookup(c, "ple_layer_ids", where, sizeof where);
    if (!ids || (json_is_array(ids) && json_array_size(ids) == 0))
        return 0;
    uint64_t kernel, ngram, per;
    if (!json_is_array(ids) ||
        cfg_uint(c, "ple_conv_kernel_size", 1, 1024, "ple_conv_kernel_size", &kernel) ||
        cfg_uint(c, "ngram_size", 2, 64, "ngram_size", &ngram) ||
        cfg_uint(c, "heads_per_ngram", 1, KVP_MAX_HEADS, "heads_per_ngram", &v))
        return json_is_array(ids) ? -1
                                  : kvp_fail(c->err, KVP_EINPUT, "%s: %s must be a list of "
                                             "layer ids", c->label, where);
    if (cfg_uint_opt(c, "ple_embed_dim", 1, KVP_MAX_DIM, "ple_embed_dim", &v, &found))
        return -1;
    if (c->m->hidden_size == 0)
        return kvp_fail(c->err, KVP_EINPUT, "%s: PLE needs hidden_size", c->label);
    per = (kernel - 1) * ngram * hc * c->m->hidden_size;
    for (size_t k = 0; k < json_array_size(ids); k++) {
        json_t *x = json_array_get(ids, k);
        if (!json_is_integer(x) || json_integer_value(x) < 1 ||
            (uint64_t)json_integer_value(x) > c->m->n_layers)
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%zu] must be a one-indexed layer id in "
                            "[1, %u]", c->label, where, k, c->m->n_layers);
        c->m->layers[json_integer_value(x) - 1].ple_conv_state = per;
        cfg_fact(c, "PLE layer", json_integer_value(x) - 1, "ple_layer_ids (one-indexed)");
    }
    cfg_fact(c, "PLE conv history", (int64_t)per,
             "(ple_conv_kernel_size - 1) x ngram_size x hc_count x hidden_size");
    return 0;
}

/* ---- dots.3-note: DSA full layers beside sliding-window MLA layers ------------------ */

static const arch_default dots3_note_defaults[] = {
    /* transformers Dots3NoteTextConfig (the swa_* aliases it folds into per_layer_config) */
    {"num_hidden_layers", 46}, {"hidden_size", 5120}, {"num_attention_heads", 128},
    {"kv_lora_rank", 512}, {"q_lora_rank", 1024}, {"qk_rope_head_dim", 64},
    {"qk_nope_head_dim", 128}, {"v_head_dim", 128}, {"max_position_embeddings", 524288},
    {"index_head_dim", 128}, {"index_n_heads", 64}, {"index_topk", 2048},
    {"swa_num_attention_heads", 64}, {"swa_kv_lora_rank", 1024},
    {"swa_qk_nope_head_dim", 192}, {"swa_qk_rope_head_dim", 64}, {"swa_v_head_dim", 128},
    {"first_k_dense_replace", 1}, {"intermediate_size", 13824}, {"moe_intermediate_size", 1536},
    {"n_routed_experts", 256}, {"num_experts_per_tok", 8}, {"n_shared_experts", 1},
    {"vocab_size", 152064}, {NULL, 0}};

/* The sliding window llama.cpp's converter writes: sliding_window_size (the
 * checkpoint's key, 513 in dots3-note-prev: the token and 512 before it);
 * transformers reads sliding_window first, so the two must agree. */
static int dots3_window(cfg *c, uint64_t *win)
{
    uint64_t a = 0, b = 0;
    int fa = 0, fb = 0;
    if (cfg_uint_opt(c, "sliding_window_size", 1, KVP_MAX_TOKENS, NULL, &a, &fa) ||
        cfg_uint_opt(c, "sliding_window", 1, KVP_MAX_TOKENS, NULL, &b, &fb))
        return -1;
    if (fa && fb && a != b)
        return kvp_fail(c->err, KVP_EINPUT, "%s: sliding_window_size (%llu) and sliding_window "
                        "(%llu) disagree; llama.cpp's converter reads the first, transformers "
                        "the second", c->label, (unsigned long long)a, (unsigned long long)b);
    *win = fa ? a : fb ? b : 512;
    cfg_fact(c, "sliding_window", (int64_t)*win,
             fa ? "sliding_window_size" : fb ? "sliding_window"
                                         : "Dots3NoteTextConfig default (sliding_window_size 512)");
    return 0;
}

/* A sliding layer: an MLA latent of swa_kv_lora_rank + rope per token and
 * no V (the value is a view of the latent), over the window. */
static int dots3_swa_layer(cfg *c, kvp_layer *L, uint64_t win, uint64_t rope_full)
{
    uint64_t rank, rope, nope, vhd, heads;
    if (cfg_uint(c, "swa_kv_lora_rank", 1, KVP_MAX_DIM, "swa_kv_lora_rank", &rank) ||
        cfg_uint(c, "swa_qk_rope_head_dim", 0, KVP_MAX_DIM, "swa_qk_rope_head_dim", &rope) ||
        cfg_uint(c, "swa_qk_nope_head_dim", 0, KVP_MAX_DIM, "swa_qk_nope_head_dim", &nope) ||
        cfg_uint(c, "swa_v_head_dim", 1, KVP_MAX_DIM, "swa_v_head_dim", &vhd) ||
        cfg_uint(c, "swa_num_attention_heads", 1, KVP_MAX_HEADS, "swa_num_attention_heads",
                 &heads))
        return -1;
    if (rope != rope_full)
        return kvp_fail(c->err, KVP_EINPUT, "%s: swa_qk_rope_head_dim (%llu) differs from "
                        "qk_rope_head_dim (%llu); llama.cpp keeps one rope size for both layer "
                        "kinds and its converter refuses the model", c->label,
                        (unsigned long long)rope, (unsigned long long)rope_full);
    L->kind = KVP_LAYER_SLIDING;
    L->window = (uint32_t)win;
    L->n_head = (uint32_t)heads;
    L->n_kv_heads = 1;
    L->head_dim_k = (uint32_t)(rank + rope);
    L->head_dim_v = 0;
    L->mla_heads = (uint32_t)heads;
    L->mla_k_head_dim = (uint32_t)(nope + rope);
    L->mla_v_head_dim = (uint32_t)vhd;
    L->mla_rope_dim = (uint32_t)rope;
    return 0;
}

/* layer_types (required, as llama.cpp's converter requires it): the
 * "sliding_attention" layers are sliding MLA, the others ("full_attention",
 * "deepseek_sparse_attention") MLA with the DSA indexer. */
static int read_dots3(cfg *c)
{
    char where[96];
    uint64_t n, idx_dim, heads, topk, win = 0;
    uint32_t n_swa = 0;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n))
        return -1;
    json_t *ud = cfg_lookup(c, "use_dsa", where, sizeof where);
    if (json_is_false(ud))
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s is false: dots.3-note without sparse "
                        "attention, which llama.cpp's converter refuses; kvplan reads the DSA "
                        "model only", c->label, where);
    json_t *lt = cfg_lookup(c, "layer_types", where, sizeof where);
    if (!json_is_array(lt) || json_array_size(lt) < n)
        return kvp_fail(c->err, KVP_EINPUT, "%s: dots.3-note needs layer_types, one type per "
                        "layer (%llu), as llama.cpp's converter does", c->label,
                        (unsigned long long)n);
    if (cfg_uint(c, "index_head_dim", 1, KVP_MAX_DIM, "index_head_dim", &idx_dim) ||
        cfg_uint(c, "index_n_heads", 1, KVP_MAX_HEADS, "index_n_heads", &heads) ||
        cfg_uint(c, "index_topk", 1, KVP_MAX_TOKENS, "index_topk", &topk) ||
        dots3_window(c, &win))
        return -1;
    for (uint32_t i = 0; i < c->m->n_layers; i++) {
        kvp_layer *L = &c->m->layers[i];
        json_t *t = json_array_get(lt, i);
        const char *s = json_is_string(t) ? json_string_value(t) : "";
        if (!strcmp(s, "sliding_attention")) {
            n_swa++;
            continue; /* after the full layers, which give the rope size */
        }
        if (strcmp(s, "full_attention") && strcmp(s, "deepseek_sparse_attention"))
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%u] is \"%s\"; dots.3-note has "
                            "\"sliding_attention\" and DSA (\"full_attention\") layers", c->label,
                            where, i, s);
        L->kind = KVP_LAYER_MLA;
        if (hf_read_mla(c, L))
            return -1;
        L->indexer_head_dim = (uint32_t)idx_dim;
    }
    if (n_swa == c->m->n_layers)
        return kvp_fail(c->err, KVP_EINPUT, "%s: every layer of %s slides; dots.3-note's DSA "
                        "cache needs full layers", c->label, where);
    uint64_t rope;
    if (cfg_uint(c, "qk_rope_head_dim", 0, KVP_MAX_DIM, NULL, &rope))
        return -1;
    for (uint32_t i = 0; i < c->m->n_layers; i++) {
        const char *s = json_string_value(json_array_get(lt, i));
        if (!strcmp(s, "sliding_attention") && dots3_swa_layer(c, &c->m->layers[i], win, rope))
            return -1;
    }
    cfg_fact(c, "layer kinds", c->m->n_layers, "layer_types: sliding MLA, and DSA (MLA plus "
             "an indexer) on the others");
    cfg_fact(c, "indexer layers", c->m->n_layers - n_swa, "layer_types: the non-sliding layers");
    return 0;
}

static const arch_default hy_v4_defaults[] = {
    /* transformers HYV4Config (vLLM's copy, kept field for field in sync) */
    {"num_hidden_layers", 34}, {"hidden_size", 2816}, {"num_attention_heads", 32},
    {"kv_lora_rank", 512}, {"q_lora_rank", 1536}, {"qk_rope_head_dim", 64},
    {"qk_nope_head_dim", 192}, {"v_head_dim", 256}, {"max_position_embeddings", 262144},
    {"index_head_dim", 128}, {"index_n_heads", 16}, {"index_topk", 2048}, {"hc_mult", 4},
    {"vocab_size", 120832}, {NULL, 0}};

static const arch_def defs[] = {
    {"deepseek-dsa", "deepseek_v32", "DeepseekV32ForCausalLM", LAYOUT_MLA, "DeepseekV32Config",
     deepseek_v32_defaults, NULL, read_dsa},
    {"glm-dsa", "glm_moe_dsa", "GlmMoeDsaForCausalLM", LAYOUT_MLA, "GlmMoeDsaConfig",
     glm_moe_dsa_defaults, NULL, read_dsa},
    {"hy-v4", "hy_v4", "HYV4ForCausalLM", LAYOUT_MLA, "HYV4Config", hy_v4_defaults, NULL,
     read_dsa},
    {"minimax-m3", "minimax_m3 minimax_m3_text minimax_m3_vl",
     "MiniMaxM3SparseForCausalLM MiniMaxM3SparseForConditionalGeneration", LAYOUT_FULL, NULL,
     NULL, NULL, read_msa},
    {"deepseek-v4", "deepseek_v4", "DeepseekV4ForCausalLM", LAYOUT_FULL, NULL, NULL, NULL,
     refuse_dsv4},
    {"qwen4-exp", "qwen4_exp qwen4_exp_text",
     "Qwen4ExpForConditionalGeneration Qwen4ExpForCausalLM", LAYOUT_GDN, "Qwen4ExpTextConfig",
     qwen4_exp_defaults, NULL, read_qwen4exp},
    {"dots3-note", "dots3_note dots3_note_text",
     "Dots3NoteForCausalLM Dots3NoteTextForCausalLM Dots3NoteForConditionalGeneration",
     LAYOUT_MLA, "Dots3NoteTextConfig", dots3_note_defaults, NULL, read_dots3},
};

static const arch_gguf gguf[] = {
    {"deepseek_v32", "deepseek32"},
    {"glm_moe_dsa", "glm-dsa"},
    {"hy_v4", "hy_v4"},
    {"minimax_m3", "minimax-m3"},
    {"minimax_m3_text", "minimax-m3"},
    {"minimax_m3_vl", "minimax-m3"},
    {"deepseek_v4", "deepseek4"},
    {"qwen4_exp", "qwen4exp"},
    {"qwen4_exp_text", "qwen4exp"},
    {"dots3_note", "dots3note"},
    {"dots3_note_text", "dots3note"},
};

static const arch_refusal refused[] = {{"deepseek-v4", "compressed CSA/HCA caches not modelled yet"}, {NULL, NULL}};

const arch_group arch_group_indexed = {
    .defs = defs, .n_defs = sizeof defs / sizeof defs[0],
    .gguf = gguf, .n_gguf = sizeof gguf / sizeof gguf[0],
    .refused = refused,
};
