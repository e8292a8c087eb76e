/* hf/classic.c - config.json architectures of the "classic" group (see arch.h):
 * the decoders of 2019-2024 that llama.cpp still loads (GPT-2, GPT-NeoX, MPT,
 * BLOOM, Falcon, StarCoder, Refact, Baichuan, StableLM, Qwen 1, Phi-2,
 * CodeShell, Orion, InternLM2, XVERSE, Command R, JAIS, Jais-2, BitNet,
 * Chameleon, PLM, Grok, DBRX, PLaMo).
 *
 * Every layer is full attention.  What differs is how each config spells its
 * sizes (n_layer, n_head, n_embd, d_model, max_seq_len...) and how it says
 * how many KV heads there are: multi_query, new_decoder_architecture,
 * attn_config.kv_n_heads, num_query_groups, n_shared_head.  Each row's
 * reader records the rule it applied, so `kvplan show` names it.  The KV
 * head rules are vLLM's (ModelArchConfigConvertor and the model files),
 * which agree with transformers' attention classes for every real config. */
#include <stdio.h>
#include <string.h>

#include "../hfconfig.h"

/* ---- shared pieces ------------------------------------------------------------ */

/* A number inside a nested object of the config (attn_config, ffn_config),
 * recorded as "object.key".  Absent: *found = 0. */
static int nested_uint(cfg *c, const char *obj, const char *key, uint64_t lo, uint64_t hi,
                       const char *fact, uint64_t *out, int *found)
{
    char where[96], item[128];
    json_t *o = cfg_lookup(c, obj, where, sizeof where);
    json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
    *found = 0;
    if (!v || json_is_null(v))
        return 0;
    snprintf(item, sizeof item, "%s.%s", where, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        (uint64_t)json_integer_value(v) < lo || (uint64_t)json_integer_value(v) > hi)
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s must be an integer in [%llu, %llu]", c->label,
                        item, (unsigned long long)lo, (unsigned long long)hi);
    *out = (uint64_t)json_integer_value(v);
    *found = 1;
    if (fact)
        cfg_fact(c, fact, (int64_t)*out, item);
    return 0;
}

/* Records value under name, replacing an earlier reading of the same name
 * (cfg_fact keeps the first): for a value the architecture takes from
 * another key than the generic reader did. */
static void set_fact(cfg *c, const char *name, int64_t value, const char *source)
{
    kvp_model *m = c->m;
    for (size_t i = 0; i < m->n_facts; i++)
        if (strcmp(m->facts[i].name, name) == 0) {
            m->facts[i].value = value;
            snprintf(m->facts[i].source, sizeof m->facts[i].source, "%s", source);
            return;
        }
    cfg_fact(c, name, value, source);
}

/* vLLM has no model for the architecture (vllm/model_executor/models/
 * registry.py); why is the caller's sentence. */
static void no_vllm(cfg *c, const char *why)
{
    snprintf(c->m->vllm_refusal, sizeof c->m->vllm_refusal, "vLLM cannot serve it: %s", why);
}

/* A boolean that may be absent: 1, 0, or dflt. */
static int opt_bool(const cfg *c, const char *key, int dflt)
{
    char where[96];
    json_t *v = cfg_lookup(c, key, where, sizeof where);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

/* vLLM derives max_model_len from the smallest of these keys, and
 * model_max_length overrides them all (ModelArchConfigConvertorBase.
 * derive_max_model_len_and_key).  kvplan's max_position is
 * max_position_embeddings (or the architecture's spelling of it), so the
 * vLLM length is kept apart when the rule gives another one. */
static int vllm_length(cfg *c)
{
    static const char *const keys[] = {
        "max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
        "model_max_length", "max_target_positions", "max_sequence_length", "max_seq_length",
        "seq_len", NULL};
    uint64_t best = 0, v;
    const char *from = NULL;
    int found;
    for (const char *const *k = keys; *k; k++) {
        if (cfg_uint_opt(c, *k, 1, KVP_MAX_TOKENS, NULL, &v, &found))
            return -1;
        if (found && (!best || v < best)) {
            best = v;
            from = *k;
        }
    }
    if (cfg_uint_opt(c, "model_max_length", 1, KVP_MAX_TOKENS, NULL, &v, &found))
        return -1;
    if (found) {
        best = v;
        from = "model_max_length";
    }
    if (best && best != c->m->max_position) {
        char src[120];
        snprintf(src, sizeof src, "%s (vLLM: %s)", from,
                 strcmp(from, "model_max_length") == 0 ? "model_max_length wins"
                                                       : "the smallest length key");
        c->m->vllm_max_len = best;
        cfg_fact(c, "vllm max_model_len", (int64_t)best, src);
    }
    return 0;
}

/* How many KV heads, when the config does not say it as
 * num_key_value_heads: returns 0 with *kv set (and its fact recorded), or
 * -1.  heads is num_attention_heads. */
typedef int (*kv_rule)(cfg *c, uint64_t heads, uint64_t *kv);

/* Layer count, kinds (layer_types, else every layer full) and shapes as the
 * standard rows read them; then the architecture's KV rule, the FFN width
 * when the config implies it (ff_mult x hidden_size), and vLLM's length. */
static int read_full(cfg *c, kv_rule rule, uint64_t ff_mult)
{
    uint64_t n, heads, kv = 0;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n) || hf_kinds(c))
        return -1;
    /* the rule's fact comes first: a fact's first reading is the one kept */
    if (rule && (cfg_uint(c, "num_attention_heads", 1, KVP_MAX_HEADS, NULL, &heads) ||
                 rule(c, heads, &kv)))
        return -1;
    if (hf_shapes(c))
        return -1;
    for (uint32_t i = 0; rule && i < c->m->n_layers; i++)
        if (c->m->layers[i].kind == KVP_LAYER_FULL)
            c->m->layers[i].n_kv_heads = (uint32_t)kv;
    char where[96];
    if (ff_mult && !cfg_lookup(c, "intermediate_size", where, sizeof where)) {
        /* read_twin_dims keeps this when the config has no intermediate_size */
        c->m->n_ff = ff_mult * c->m->hidden_size;
        cfg_fact(c, "ffn width", (int64_t)c->m->n_ff, "intermediate size absent: 4 x hidden_size");
    }
    return vllm_length(c);
}

static int read_std(cfg *c) { return read_full(c, NULL, 0); }

/* ---- GPT-2, JAIS: MHA; the FFN is n_inner, else 4 x n_embd ------------------------ */

static const arch_alias gpt2_aliases[] = {
    {"num_attention_heads", "n_head"}, {"hidden_size", "n_embd"},
    {"max_position_embeddings", "n_positions"}, {"intermediate_size", "n_inner"},
    {NULL, NULL}};

static const arch_default gpt2_defaults[] = {
    /* transformers GPT2Config.__init__ */
    {"num_hidden_layers", 12}, {"num_attention_heads", 12}, {"hidden_size", 768},
    {"max_position_embeddings", 1024}, {"vocab_size", 50257}, {NULL, 0}};

static int read_gpt2(cfg *c) { return read_full(c, NULL, 4); }

/* ---- GPT-BigCode (StarCoder), Refact: multi_query means one KV head -------------- */

static const arch_default bigcode_defaults[] = {
    /* transformers GPTBigCodeConfig.__init__ (multi_query=True) */
    {"num_hidden_layers", 12}, {"num_attention_heads", 12}, {"hidden_size", 768},
    {"max_position_embeddings", 1024}, {"vocab_size", 50257}, {NULL, 0}};

static int kv_multi_query(cfg *c, uint64_t heads, uint64_t *kv)
{
    char where[96];
    int mq = opt_bool(c, "multi_query", 1);
    int said = cfg_lookup(c, "multi_query", where, sizeof where) != NULL;
    *kv = mq ? 1 : heads;
    cfg_fact(c, "num_key_value_heads", (int64_t)*kv,
             mq ? (said ? "multi_query true: one KV head"
                        : "multi_query absent: transformers default true, one KV head")
                : "multi_query false: = num_attention_heads (MHA)");
    return 0;
}

static int read_bigcode(cfg *c) { return read_full(c, kv_multi_query, 4); }

/* Refact's FFN is not in its config: the converter computes it */
static int read_refact(cfg *c)
{
    if (read_full(c, kv_multi_query, 0))
        return -1;
    no_vllm(c, "GPTRefactForCausalLM is in neither vLLM's model registry nor transformers");
    if (!c->m->n_ff && c->m->hidden_size) {
        uint64_t h = 8 * c->m->hidden_size / 3; /* int(2 x 4 n_embd / 3), to 256 */
        c->m->n_ff = (h + 255) / 256 * 256;
        cfg_fact(c, "ffn width", (int64_t)c->m->n_ff,
                 "llama.cpp's converter: 8 x n_embd / 3, rounded up to 256");
    }
    return 0;
}

/* ---- Falcon: new_decoder_architecture, else multi_query, else MHA --------------- */

static const arch_alias falcon_aliases[] = {
    {"num_attention_heads", "n_head"}, {"hidden_size", "n_embed"},
    {"num_kv_heads", "n_head_kv"}, {"intermediate_size", "ffn_hidden_size"},
    {NULL, NULL}};

static const arch_default falcon_defaults[] = {
    /* transformers FalconConfig.__init__ */
    {"num_hidden_layers", 32}, {"num_attention_heads", 71}, {"hidden_size", 4544},
    {"max_position_embeddings", 2048}, {"vocab_size", 65024}, {NULL, 0}};

static int kv_falcon(cfg *c, uint64_t heads, uint64_t *kv)
{
    const char *mt = cfg_str(c, "model_type");
    int found;
    /* the RefinedWeb configs (Falcon-40B's first release) always use the
     * new decoder; RefinedWebModel (Falcon-7B's) never does */
    int newdec = opt_bool(c, "new_decoder_architecture", mt && strcmp(mt, "RefinedWeb") == 0);
    if (newdec) {
        if (cfg_uint_opt(c, "num_kv_heads", 1, KVP_MAX_HEADS, NULL, kv, &found))
            return -1;
        if (!found)
            *kv = heads;
        cfg_fact(c, "num_key_value_heads", (int64_t)*kv,
                 found ? "new_decoder_architecture: num_kv_heads (or n_head_kv)"
                       : "new_decoder_architecture, num_kv_heads absent: = num_attention_heads");
        return 0;
    }
    if (opt_bool(c, "multi_query", 1)) {
        char where[96];
        *kv = 1;
        cfg_fact(c, "num_key_value_heads", 1,
                 cfg_lookup(c, "multi_query", where, sizeof where)
                     ? "multi_query true, no new_decoder_architecture: one KV head"
                     : "multi_query absent: FalconConfig default true, one KV head");
        return 0;
    }
    *kv = heads;
    cfg_fact(c, "num_key_value_heads", (int64_t)heads,
             "multi_query false: = num_attention_heads (MHA)");
    return 0;
}

static int read_falcon(cfg *c) { return read_full(c, kv_falcon, 4); }

/* ---- GPT-NeoX: rotary_pct is the rotary fraction ------------------------------------ */

static const arch_alias neox_aliases[] = {{"partial_rotary_factor", "rotary_pct"}, {NULL, NULL}};

/* ---- MPT, DBRX: d_model, n_heads, n_layers, attn_config.kv_n_heads ---------------- */

static const arch_alias mpt_aliases[] = {{"max_position_embeddings", "max_seq_len"}, {NULL, NULL}};

static const arch_default mpt_defaults[] = {
    /* transformers MptConfig.__init__ */
    {"num_hidden_layers", 24}, {"num_attention_heads", 16}, {"hidden_size", 2048},
    {"max_position_embeddings", 2048}, {"vocab_size", 50368}, {NULL, 0}};

static int kv_mpt(cfg *c, uint64_t heads, uint64_t *kv)
{
    int found;
    if (nested_uint(c, "attn_config", "kv_n_heads", 1, KVP_MAX_HEADS, "num_key_value_heads", kv,
                    &found))
        return -1;
    if (!found) {
        *kv = heads;
        cfg_fact(c, "num_key_value_heads", (int64_t)heads,
                 "attn_config.kv_n_heads absent: = n_heads (MHA)");
    }
    return 0;
}

static int read_mpt(cfg *c)
{
    uint64_t ratio;
    int found;
    if (read_full(c, kv_mpt, 0) || cfg_uint_opt(c, "expansion_ratio", 1, 64, NULL, &ratio, &found))
        return -1;
    if (!c->m->n_ff)
        c->m->n_ff = (found ? ratio : 4) * c->m->hidden_size;
    return 0;
}

static const arch_default dbrx_defaults[] = {
    /* transformers DbrxConfig.__init__ */
    {"num_hidden_layers", 24}, {"num_attention_heads", 16}, {"hidden_size", 2048},
    {"max_position_embeddings", 2048}, {"vocab_size", 32000}, {NULL, 0}};

static int kv_dbrx(cfg *c, uint64_t heads, uint64_t *kv)
{
    int found;
    (void)heads;
    if (nested_uint(c, "attn_config", "kv_n_heads", 1, KVP_MAX_HEADS, "num_key_value_heads", kv,
                    &found))
        return -1;
    if (!found) {
        *kv = 1;
        cfg_fact(c, "num_key_value_heads", 1,
                 "attn_config.kv_n_heads absent: transformers default 1 (DbrxAttentionConfig)");
    }
    return 0;
}

/* DBRX's experts live in ffn_config (transformers DbrxFFNConfig defaults) */
static int read_dbrx(cfg *c)
{
    uint64_t ff, experts, top;
    int f1, f2, f3;
    if (read_full(c, kv_dbrx, 0) ||
        nested_uint(c, "ffn_config", "ffn_hidden_size", 1, 1ull << 32, NULL, &ff, &f1) ||
        nested_uint(c, "ffn_config", "moe_num_experts", 1, KVP_MAX_DIM, NULL, &experts, &f2) ||
        nested_uint(c, "ffn_config", "moe_top_k", 1, KVP_MAX_DIM, NULL, &top, &f3))
        return -1;
    c->m->n_ff = f1 ? ff : 3584;
    c->m->n_expert = (uint32_t)(f2 ? experts : 4);
    c->m->n_expert_used = (uint32_t)(f3 ? top : 1);
    return 0;
}

/* ---- BLOOM: n_embed, n_head; ALiBi, no length key -------------------------------- */

static const arch_alias bloom_aliases[] = {
    {"num_attention_heads", "n_head"}, {"hidden_size", "n_embed"},
    {"max_position_embeddings", "seq_length"}, {NULL, NULL}};

static const arch_default bloom_defaults[] = {
    /* transformers BloomConfig.__init__ */
    {"num_hidden_layers", 2}, {"num_attention_heads", 8}, {"hidden_size", 64},
    {"vocab_size", 250880}, {NULL, 0}};

static int read_bloom(cfg *c) { return read_full(c, NULL, 4); }

/* ---- CodeShell: group_query_attention + num_query_groups -------------------------- */

static int kv_codeshell(cfg *c, uint64_t heads, uint64_t *kv)
{
    if (!cfg_bool(c, "group_query_attention")) {
        *kv = heads;
        cfg_fact(c, "num_key_value_heads", (int64_t)heads,
                 "group_query_attention false: = n_head (MHA)");
        return 0;
    }
    return cfg_uint(c, "num_query_groups", 1, KVP_MAX_HEADS, "num_key_value_heads", kv);
}

static int read_codeshell(cfg *c)
{
    no_vllm(c, "CodeShellForCausalLM is in neither vLLM's model registry nor transformers");
    return read_full(c, kv_codeshell, 4);
}

/* ---- Qwen (1): kv_channels is the head size; MHA ------------------------------------- */

static const arch_alias qwen_aliases[] = {{"head_dim", "kv_channels"}, {NULL, NULL}};

/* ---- Command R: model_max_length is the context (the converter's too) -------------- */

static int read_cohere(cfg *c)
{
    uint64_t v;
    int found;
    if (cfg_uint_opt(c, "model_max_length", 1, KVP_MAX_TOKENS, NULL, &v, &found))
        return -1;
    if (found) {
        /* llama.cpp's converter writes it as context_length; vLLM prefers it */
        c->m->max_position = v;
        set_fact(c, "max_position_embeddings", (int64_t)v,
                 "model_max_length (llama.cpp's converter and vLLM use it)");
    }
    return read_std(c);
}

/* ---- BitNet: BitnetForCausalLM configs say model_type "llama" ----------------------- */

static int read_bitnet(cfg *c)
{
    snprintf(c->m->gguf_arch, sizeof c->m->gguf_arch, "bitnet");
    return read_std(c);
}

/* ---- PLaMo (1): n_shared_head query heads share one KV head ----------------------- */

static int kv_plamo(cfg *c, uint64_t heads, uint64_t *kv)
{
    uint64_t share;
    int found;
    if (cfg_uint_opt(c, "n_shared_head", 1, KVP_MAX_HEADS, NULL, &share, &found))
        return -1;
    if (!found)
        share = 8; /* PlamoConfig's default */
    if (heads % share)
        return kvp_fail(c->err, KVP_EINPUT, "%s: num_attention_heads %llu is not a multiple of "
                        "n_shared_head %llu", c->label, (unsigned long long)heads,
                        (unsigned long long)share);
    *kv = heads / share;
    cfg_fact(c, "num_key_value_heads", (int64_t)*kv,
             found ? "num_attention_heads / n_shared_head"
                   : "num_attention_heads / n_shared_head (absent: PlamoConfig default 8)");
    return 0;
}

static int read_plamo(cfg *c)
{
    no_vllm(c, "PlamoForCausalLM (PLaMo 1) is in neither vLLM's model registry (it has PLaMo 2 and 3) nor transformers");
    return read_full(c, kv_plamo, 0);
}

/* ---- PLM: DeepSeek-style latent projections, but the cache holds the
 * expanded per-head K (nope + rope) and V, one KV head per query head ------------- */

static int read_plm(cfg *c)
{
    uint64_t nope, rope, vhd;
    no_vllm(c, "PLMForCausalLM is not in vLLM's model registry, and kvplan does not model how its Transformers backend would size this latent attention");
    if (read_std(c) ||
        cfg_uint(c, "qk_nope_head_dim", 0, KVP_MAX_DIM, "qk_nope_head_dim", &nope) ||
        cfg_uint(c, "qk_rope_head_dim", 1, KVP_MAX_DIM, "qk_rope_head_dim", &rope) ||
        cfg_uint(c, "v_head_dim", 1, KVP_MAX_DIM, "v_head_dim", &vhd))
        return -1;
    for (uint32_t i = 0; i < c->m->n_layers; i++) {
        kvp_layer *L = &c->m->layers[i];
        if (L->kind != KVP_LAYER_FULL)
            continue;
        L->n_kv_heads = L->n_head;
        L->head_dim_k = (uint32_t)(nope + rope);
        L->head_dim_v = (uint32_t)vhd;
    }
    cfg_fact(c, "kv heads (expanded)", c->m->n_heads,
             "num_attention_heads: K and V are cached per head, after kv_b_proj");
    cfg_fact(c, "head_dim k", (int64_t)(nope + rope), "qk_nope_head_dim + qk_rope_head_dim");
    c->m->n_rot = (uint32_t)rope;
    return 0;
}

/* ---- the group's rows ------------------------------------------------------------- */

static const arch_def defs[] = {
    {"gpt2", "gpt2", "GPT2LMHeadModel", LAYOUT_FULL, "GPT2Config", gpt2_defaults, gpt2_aliases,
     read_gpt2},
    {"gptneox", "gpt_neox", "GPTNeoXForCausalLM", LAYOUT_FULL, NULL, NULL, neox_aliases,
     read_std},
    {"mpt", "mpt", "MPTForCausalLM MptForCausalLM", LAYOUT_FULL, "MptConfig", mpt_defaults,
     mpt_aliases, read_mpt},
    {"bloom", "bloom", "BloomForCausalLM BloomModel", LAYOUT_FULL, "BloomConfig", bloom_defaults,
     bloom_aliases, read_bloom},
    {"falcon", "falcon RefinedWeb RefinedWebModel", "FalconForCausalLM RWForCausalLM",
     LAYOUT_FULL, "FalconConfig", falcon_defaults, falcon_aliases, read_falcon},
    {"starcoder", "gpt_bigcode", "GPTBigCodeForCausalLM", LAYOUT_FULL, "GPTBigCodeConfig",
     bigcode_defaults, gpt2_aliases, read_bigcode},
    {"refact", "gpt_refact", "GPTRefactForCausalLM", LAYOUT_FULL, "GPTBigCodeConfig",
     bigcode_defaults, gpt2_aliases, read_refact},
    {"baichuan", "baichuan", "BaichuanForCausalLM BaiChuanForCausalLM", LAYOUT_FULL, NULL, NULL,
     NULL, read_std},
    {"stablelm", "stablelm stablelm_epoch", "StableLmForCausalLM StableLMEpochForCausalLM",
     LAYOUT_FULL, NULL, NULL, NULL, read_std},
    {"qwen", "qwen", "QWenLMHeadModel", LAYOUT_FULL, NULL, NULL, qwen_aliases, read_std},
    {"phi2", "phi", "PhiForCausalLM", LAYOUT_FULL, NULL, NULL, NULL, read_std},
    {"codeshell", "codeshell kclgpt", "CodeShellForCausalLM", LAYOUT_FULL, NULL, NULL,
     gpt2_aliases, read_codeshell},
    {"orion", "orion", "OrionForCausalLM", LAYOUT_FULL, NULL, NULL, NULL, read_std},
    {"internlm2", "internlm2", "InternLM2ForCausalLM", LAYOUT_FULL, NULL, NULL, NULL, read_std},
    {"xverse", "xverse", "XverseForCausalLM", LAYOUT_FULL, NULL, NULL, NULL, read_std},
    {"command-r", "cohere", "CohereForCausalLM", LAYOUT_FULL, NULL, NULL, NULL, read_cohere},
    {"jais", "jais", "JAISLMHeadModel", LAYOUT_FULL, NULL, NULL, gpt2_aliases, read_gpt2},
    {"jais2", "jais2", "Jais2ForCausalLM", LAYOUT_FULL, NULL, NULL, NULL, read_std},
    {"bitnet", "bitnet", "BitnetForCausalLM BitNetForCausalLM", LAYOUT_FULL, NULL, NULL, NULL,
     read_bitnet},
    {"chameleon", "chameleon", "ChameleonForConditionalGeneration ChameleonForCausalLM",
     LAYOUT_FULL, NULL, NULL, NULL, read_std},
    {"plm", "plm", "PLMForCausalLM", LAYOUT_FULL, NULL, NULL, NULL, read_plm},
    {"grok", "grok-1 grok", "Grok1ModelForCausalLM Grok1ForCausalLM GrokForCausalLM",
     LAYOUT_FULL, NULL, NULL, NULL, read_std},
    {"dbrx", "dbrx", "DbrxForCausalLM", LAYOUT_FULL, "DbrxConfig", dbrx_defaults, mpt_aliases,
     read_dbrx},
    {"plamo", "plamo", "PlamoForCausalLM", LAYOUT_FULL, NULL, NULL, NULL, read_plamo},
};

/* config.json model_type -> llama.cpp's general.architecture (the
 * converters' model_arch; BitNet's "llama" configs are mapped by class, in
 * read_bitnet) */
static const arch_gguf gguf[] = {
    {"gpt2", "gpt2"},
    {"gpt_neox", "gptneox"},
    {"mpt", "mpt"},
    {"bloom", "bloom"},
    {"falcon", "falcon"},
    {"RefinedWeb", "falcon"},
    {"RefinedWebModel", "falcon"},
    {"gpt_bigcode", "starcoder"},
    {"gpt_refact", "refact"},
    {"baichuan", "baichuan"},
    {"stablelm", "stablelm"},
    {"stablelm_epoch", "stablelm"},
    {"qwen", "qwen"},
    {"phi", "phi2"},
    {"codeshell", "codeshell"},
    {"kclgpt", "codeshell"},
    {"orion", "orion"},
    {"internlm2", "internlm2"},
    {"xverse", "xverse"},
    {"cohere", "command-r"},
    {"jais", "jais"},
    {"jais2", "jais2"},
    {"bitnet", "bitnet"},
    {"chameleon", "chameleon"},
    {"plm", "plm"},
    {"grok-1", "grok"},
    {"grok", "grok"},
    {"dbrx", "dbrx"},
    {"plamo", "plamo"},
};

const arch_group arch_group_classic = {
    .defs = defs, .n_defs = sizeof defs / sizeof defs[0],
    .gguf = gguf, .n_gguf = sizeof gguf / sizeof gguf[0],
};
