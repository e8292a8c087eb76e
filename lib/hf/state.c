/* hf/state.c - config.json architectures of the "state" group (see arch.h):
 * models whose cache is, wholly or partly, a recurrent state.  Their rule
 * sets, transformers defaults and llama.cpp names, and the reader of the
 * core nemotron-h row (Nemotron-H and Nemotron-3), whose newer configs no
 * layout rule describes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hfconfig.h"

/* ---- Nemotron-H / Nemotron-3 ------------------------------------------------ */

/* transformers' NemotronHConfig keeps older spellings of a few fields
 * (mamba_n_groups, mamba_d_conv, mamba_expand as __init__ arguments); the
 * shared experts' width is moe_shared_expert_intermediate_size. */
const arch_alias hf_nemotron_h_aliases[] = {
    {"n_groups", "mamba_n_groups"},
    {"conv_kernel", "mamba_d_conv"},
    {"expand", "mamba_expand"},
    {"shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"},
    {NULL, NULL},
};

/* One entry of layers_block_type.  transformers writes linear_attention
 * (Mamba2), full_attention, moe and mlp, and remaps the older mamba and
 * attention; the pattern letters are accepted too. */
static int block_kind(const char *s, kvp_layer_kind *k)
{
    static const struct {
        const char *name;
        kvp_layer_kind kind;
    } names[] = {
        {"mamba", KVP_LAYER_MAMBA}, {"linear_attention", KVP_LAYER_MAMBA}, {"M", KVP_LAYER_MAMBA},
        {"attention", KVP_LAYER_FULL}, {"full_attention", KVP_LAYER_FULL}, {"*", KVP_LAYER_FULL},
        {"moe", KVP_LAYER_NONE}, {"mlp", KVP_LAYER_NONE}, {"E", KVP_LAYER_NONE},
        {"-", KVP_LAYER_NONE},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) {
            *k = names[i].kind;
            return 0;
        }
    return -1;
}

/* transformers' newer layout: the layer count is the list's length
 * (num_hidden_layers is deprecated there and may be absent or stale). */
static int kinds_from_blocks(cfg *c, json_t *v, const char *where)
{
    uint64_t n = json_is_array(v) ? json_array_size(v) : 0, stated;
    int found;
    if (!n)
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s must be a non-empty list of block types",
                        c->label, where);
    if (cfg_uint_opt(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, NULL, &stated, &found) ||
        hf_layers(c, (uint32_t)(n < KVP_MAX_LAYERS ? n : KVP_MAX_LAYERS + 1)))
        return -1;
    char src[160];
    snprintf(src, sizeof src, "len(%s)%s", where,
             found && stated != n ? " (num_hidden_layers disagrees; transformers uses the list)"
                                  : "");
    cfg_fact(c, "layers", (int64_t)n, src);
    for (uint32_t i = 0; i < c->m->n_layers; i++) {
        json_t *t = json_array_get(v, i);
        if (!json_is_string(t) || block_kind(json_string_value(t), &c->m->layers[i].kind))
            return kvp_fail(c->err, KVP_EINPUT,
                            "%s: %s[%u] is not mamba, linear_attention, attention, "
                            "full_attention, moe or mlp", c->label, where, i);
    }
    cfg_fact(c, "layer kinds", c->m->n_layers,
             "layers_block_type: Mamba2, attention, MoE/MLP (no cache)");
    return 0;
}

/* A Nemotron-H config that names no SSM cache dtype keeps the state in
 * float32: NemotronHConfig's mamba_ssm_cache_dtype defaults to "float32", and
 * vLLM's NemotronHForCausalLMConfig hook resolves "auto" to the config's value
 * or, absent, to float32 ("only float32 is known to have no accuracy issues"). */
static int nemotron_h_ssm_default(cfg *c)
{
    if (cfg_str(c, "mamba_ssm_dtype") || cfg_str(c, "mamba_ssm_cache_dtype"))
        return 0;
    int any = 0;
    for (uint32_t i = 0; i < c->m->n_layers; i++)
        if (c->m->layers[i].kind == KVP_LAYER_MAMBA) {
            c->m->layers[i].ssm_dtype = KVP_F32;
            any = 1;
        }
    if (any)
        cfg_fact(c, "ssm dtype bytes", 4,
                 "mamba_ssm_cache_dtype absent: NemotronHConfig and vLLM default float32");
    return 0;
}

/* The core nemotron-h row's reader (arch.c): hybrid_override_pattern with
 * num_hidden_layers as before, or layers_block_type; the shapes as the
 * layout rule reads them.  MoE checkpoints (num_experts_per_tok, as the
 * converter tests) are llama.cpp's nemotron_h_moe. */
int hf_read_nemotron_h(cfg *c)
{
    char where[96];
    json_t *blocks = cfg_lookup(c, "layers_block_type", where, sizeof where);
    if (!blocks)
        blocks = cfg_lookup(c, "layer_types", where, sizeof where);
    if (blocks) {
        if (kinds_from_blocks(c, blocks, where))
            return -1;
    } else {
        uint64_t n;
        if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
            hf_layers(c, (uint32_t)n) || hf_kinds(c))
            return -1;
    }
    if (hf_shapes(c))
        return -1;
    if (cfg_lookup(c, "num_experts_per_tok", where, sizeof where))
        snprintf(c->m->gguf_arch, sizeof c->m->gguf_arch, "nemotron_h_moe");
    return nemotron_h_ssm_default(c);
}

/* ---- Kimi Linear: Kimi Delta Attention beside MLA ------------------------------- */

/* A 1-based layer list of linear_attn_config (configuration_kimi.py's
 * is_kda_layer tests (i + 1) in kda_layers); *found 0 when absent. */
static int kimi_list(cfg *c, json_t *lac, const char *key, uint8_t *in, int *found)
{
    json_t *v = json_object_get(lac, key);
    *found = v != NULL && !json_is_null(v);
    if (!*found)
        return 0;
    if (!json_is_array(v))
        return kvp_fail(c->err, KVP_EINPUT, "%s: linear_attn_config.%s must be a list of layer "
                        "numbers", c->label, key);
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *x = json_array_get(v, i);
        if (!json_is_integer(x) || json_integer_value(x) < 1 ||
            json_integer_value(x) > c->m->n_layers)
            return kvp_fail(c->err, KVP_EINPUT, "%s: linear_attn_config.%s[%zu] is not a layer "
                            "number in [1, %u]", c->label, key, i, c->m->n_layers);
        in[json_integer_value(x) - 1] = 1;
    }
    return 0;
}

static int kimi_uint(cfg *c, json_t *lac, const char *key, const char *fact, uint64_t lo,
                     uint64_t hi, uint64_t *out)
{
    json_t *v = json_object_get(lac, key);
    char where[96];
    snprintf(where, sizeof where, "linear_attn_config.%s", key);
    if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)lo ||
        (uint64_t)json_integer_value(v) > hi)
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s must be an integer in [%llu, %llu]", c->label,
                        where, (unsigned long long)lo, (unsigned long long)hi);
    *out = (uint64_t)json_integer_value(v);
    cfg_fact(c, fact, (int64_t)*out, where);
    return 0;
}

/* A Kimi Delta Attention layer's state in the common form: q, k and v each
 * keep d_conv - 1 inputs of heads x head_dim (conv (d_conv - 1) x (d_inner +
 * 2 n_group d_state) with d_inner = heads x head_dim, n_group = heads,
 * d_state = head_dim), and the recurrent state is heads x head_dim^2.  The
 * conv state is in the model dtype; the recurrent state is float32 (vLLM's
 * kda_state_dtype, and fla's KDA kernels). */
static void kda_state(cfg *c, kvp_layer *L, uint64_t heads, uint64_t hd, uint64_t conv)
{
    L->d_conv = (uint32_t)conv;
    L->d_inner = heads * hd;
    L->n_group = (uint32_t)heads;
    L->d_state = (uint32_t)hd;
    L->n_ssm_heads = (uint32_t)heads;
    L->conv_dtype = c->m->dtype;
    L->ssm_dtype = KVP_F32;
}

/* Kimi Linear: a layer is KDA iff its number is in kda_layers, else MLA
 * (HF's is_kda_layer, vLLM's KimiLinear); llama.cpp's converter instead
 * gives KV heads to the layers of full_attn_layers, so a config where the
 * two lists do not split the layers is refused. */
static int read_kimi_linear(cfg *c)
{
    char where[96];
    uint64_t n, heads, hd, conv;
    int found_kda, found_full;
    json_t *lac = cfg_lookup(c, "linear_attn_config", where, sizeof where);
    if (!json_is_object(lac))
        return kvp_fail(c->err, KVP_EINPUT, "%s: missing required field \"linear_attn_config\"",
                        c->label);
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n))
        return -1;
    uint8_t *kda = calloc(n, 1), *full = calloc(n, 1);
    int rc = !kda || !full ? kvp_fail(c->err, KVP_EINPUT, "%s: out of memory", c->label)
             : kimi_list(c, lac, "kda_layers", kda, &found_kda) ||
                     kimi_list(c, lac, "full_attn_layers", full, &found_full) ? -1 : 0;
    for (uint32_t i = 0; !rc && i < n; i++)
        if (found_full && kda[i] == full[i])
            rc = kvp_fail(c->err, KVP_EINPUT, "%s: layer %u is in %s of linear_attn_config's "
                          "kda_layers and full_attn_layers; kvplan needs them to split the "
                          "layers (HF reads kda_layers, llama.cpp full_attn_layers)", c->label,
                          i + 1, kda[i] ? "both" : "neither");
    if (!rc && (kimi_uint(c, lac, "num_heads", "kda heads", 1, KVP_MAX_HEADS, &heads) ||
                kimi_uint(c, lac, "head_dim", "kda head_dim", 1, KVP_MAX_DIM, &hd) ||
                kimi_uint(c, lac, "short_conv_kernel_size", "kda conv kernel", 1, 1024, &conv)))
        rc = -1;
    for (uint32_t i = 0; !rc && i < n; i++) {
        kvp_layer *L = &c->m->layers[i];
        L->kind = kda[i] ? KVP_LAYER_LINEAR : KVP_LAYER_MLA;
        if (kda[i])
            kda_state(c, L, heads, hd, conv);
        else
            rc = hf_read_mla(c, L);
    }
    free(kda);
    free(full);
    if (rc)
        return -1;
    cfg_fact(c, "layer kinds", c->m->n_layers,
             "linear_attn_config.kda_layers (1-based): Kimi Delta Attention, the rest MLA");
    cfg_fact(c, "ssm dtype bytes", 4, "KDA recurrent state: float32 (vLLM kda_state_dtype)");
    return 0;
}

/* Kimi K3 keeps Kimi Linear's layout keys (llama.cpp's converter reads
 * the same linear_attn_config). */
static int read_kimi_k3(cfg *c)
{
    if (read_kimi_linear(c))
        return -1;
    snprintf(c->m->gguf_arch, sizeof c->m->gguf_arch, "kimi-k3");
    return 0;
}

/* Ling/Ring 3 (BailingMoeV3): KDA layers with a full MLA layer closing
 * every layer_group_size layers, and every layer of the last, incomplete
 * group full (llama.cpp's converter, is_full_attention).  The KDA heads
 * are num_attention_heads, head_dim and short_conv_kernel_size at the top
 * level.  vLLM has no BailingMoeV3 model. */
static int read_bailing3(cfg *c)
{
    uint64_t n, g, heads, hd, conv;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        cfg_uint(c, "layer_group_size", 1, KVP_MAX_LAYERS, "layer_group_size", &g) ||
        cfg_uint(c, "num_attention_heads", 1, KVP_MAX_HEADS, "kda heads", &heads) ||
        cfg_uint(c, "head_dim", 1, KVP_MAX_DIM, "kda head_dim", &hd) ||
        cfg_uint(c, "short_conv_kernel_size", 1, 1024, "kda conv kernel", &conv) ||
        hf_layers(c, (uint32_t)n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        kvp_layer *L = &c->m->layers[i];
        int full = (i + 1) % g == 0 || i >= n / g * g;
        L->kind = full ? KVP_LAYER_MLA : KVP_LAYER_LINEAR;
        if (full ? hf_read_mla(c, L) : (kda_state(c, L, heads, hd, conv), 0))
            return -1;
    }
    cfg_fact(c, "layer kinds", c->m->n_layers,
             "MLA iff (i+1) % layer_group_size == 0 or in the last partial group, else KDA");
    snprintf(c->m->gguf_arch, sizeof c->m->gguf_arch, "bailingmoe3");
    snprintf(c->m->vllm_refusal, sizeof c->m->vllm_refusal,
             "vLLM has no BailingMoeV3 model (its registry stops at BailingMoeV2ForCausalLM)");
    return 0;
}

static const arch_alias bailing3_aliases[] = {
    {"n_shared_experts", "num_shared_experts"},
    {"shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"},
    {NULL, NULL},
};

static const arch_default kimi_linear_defaults[] = {{NULL, 0}};

/* configuration_kimi.py's spellings of the fields kvplan reads by their
 * usual names; the context is model_max_length (vLLM reads it too). */
static const arch_alias kimi_linear_aliases[] = {
    {"max_position_embeddings", "model_max_length"},
    {"num_experts_per_tok", "num_experts_per_token"},
    {"n_shared_experts", "num_shared_experts"},
    {NULL, NULL},
};

/* ---- MiniMax-01 / MiniMax-M1: lightning attention beside softmax attention ------------ */

/* A lightning-attention layer keeps, per sequence, one head_dim x head_dim
 * state per head and no conv state: in kvplan's form d_conv 0, d_inner =
 * heads x head_dim, d_state = head_dim, n_group 0.  vLLM keeps it in the
 * model dtype (linear_attention_state_dtype). */
static int read_lightning(cfg *c, kvp_layer *L)
{
    uint64_t heads, hd;
    if (cfg_uint(c, "num_attention_heads", 1, KVP_MAX_HEADS, "num_attention_heads", &heads) ||
        cfg_uint(c, "head_dim", 1, KVP_MAX_DIM, "head_dim", &hd))
        return -1;
    L->d_conv = 0;
    L->d_inner = heads * hd;
    L->d_state = (uint32_t)hd;
    L->n_group = 0;
    L->n_ssm_heads = (uint32_t)heads;
    L->conv_dtype = L->ssm_dtype = c->m->dtype;
    return 0;
}

/* attn_type_list (MiniMax's own configs: 1 softmax, 0 lightning) or
 * layer_types (transformers' MiniMaxConfig: full_attention,
 * linear_attention). */
static int read_minimax01(cfg *c)
{
    char where[96];
    uint64_t n;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n))
        return -1;
    json_t *v = cfg_lookup(c, "attn_type_list", where, sizeof where);
    int types = !v;
    if (!v)
        v = cfg_lookup(c, "layer_types", where, sizeof where);
    if (!json_is_array(v) || json_array_size(v) != n)
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s must list one attention type per layer (%u)",
                        c->label, v ? where : "attn_type_list (or layer_types)", (uint32_t)n);
    for (uint32_t i = 0; i < n; i++) {
        json_t *t = json_array_get(v, i);
        int full = types ? json_is_string(t) && !strcmp(json_string_value(t), "full_attention")
                         : json_is_integer(t) && json_integer_value(t) == 1;
        int lin = types ? json_is_string(t) && !strcmp(json_string_value(t), "linear_attention")
                        : json_is_integer(t) && json_integer_value(t) == 0;
        if (!full && !lin)
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%u] is not %s", c->label, where, i,
                            types ? "full_attention or linear_attention" : "0 or 1");
        kvp_layer *L = &c->m->layers[i];
        L->kind = full ? KVP_LAYER_FULL : KVP_LAYER_LINEAR;
        if (full ? hf_read_attention(c, i, L) : read_lightning(c, L))
            return -1;
    }
    cfg_fact(c, "layer kinds", c->m->n_layers,
             types ? "layer_types: full_attention, linear_attention (lightning)"
                   : "attn_type_list: 1 softmax attention, 0 lightning attention");
    return 0;
}

static const arch_default minimax01_defaults[] = {{NULL, 0}};

/* ---- PLaMo 2: Mamba2 (no groups) interleaved with attention ---------------------------- */

static const arch_default plamo2_defaults[] = {
    /* Plamo2Config (the checkpoints' remote code), as llama.cpp's converter
     * and vLLM read them */
    {"mamba_d_state", 64}, {"mamba_d_conv", 4}, {"mamba_num_heads", 64}, {"mamba_step", 2},
    {"hidden_size_per_head", 128}, {"num_key_value_heads", 4}, {NULL, 0}};

/* Attention layers use hidden_size_per_head (vLLM sets head_dim from it). */
static const arch_alias plamo2_aliases[] = {
    {"head_dim", "hidden_size_per_head"},
    {NULL, NULL},
};

/* PLaMo 2's is_mamba(i) (vLLM's plamo2.py, llama.cpp's converter): with
 * mamba_step s, layer i is Mamba unless i % s == s / 2; a model of at most
 * s / 2 layers keeps attention in its last layer only.  A Mamba layer is
 * Mamba2 with no groups: d_inner = mamba_num_heads x hidden_size_per_head.
 * Attention is full in vLLM and llama.cpp (attention_window_size is not a
 * cache window there). */
static int read_plamo2(cfg *c)
{
    uint64_t n, step, conv, state, heads, hd;
    char where[96];
    json_t *en = cfg_lookup(c, "mamba_enabled", where, sizeof where);
    int enabled = !en || json_is_true(en);
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        cfg_uint(c, "mamba_step", 2, KVP_MAX_LAYERS, "mamba_step", &step) ||
        hf_layers(c, (uint32_t)n))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        kvp_layer *L = &c->m->layers[i];
        int mamba = enabled && (n <= step / 2 ? i != n - 1 : i % step != step / 2);
        L->kind = mamba ? KVP_LAYER_MAMBA : KVP_LAYER_FULL;
        if (!mamba) {
            if (hf_read_attention(c, i, L))
                return -1;
            continue;
        }
        if (cfg_uint(c, "mamba_d_conv", 1, 1024, "mamba_d_conv", &conv) ||
            cfg_uint(c, "mamba_d_state", 1, KVP_MAX_DIM, "mamba_d_state", &state) ||
            cfg_uint(c, "mamba_num_heads", 1, KVP_MAX_HEADS, "mamba_num_heads", &heads) ||
            cfg_uint(c, "hidden_size_per_head", 1, KVP_MAX_DIM, "hidden_size_per_head", &hd))
            return -1;
        L->d_conv = (uint32_t)conv;
        L->d_state = (uint32_t)state;
        L->d_inner = heads * hd;
        L->n_group = 0;
        L->n_ssm_heads = (uint32_t)heads;
        if (hf_state_dtypes(c, L))
            return -1;
    }
    cfg_fact(c, "layer kinds", c->m->n_layers,
             enabled ? "mamba_step: Mamba2 unless i % mamba_step == mamba_step / 2"
                     : "mamba_enabled false: every layer attention");
    return 0;
}

/* ---- RWKV 6 / 7 and their Qwen-derived variants --------------------------------------- */

/* An RWKV block keeps token_shift_count shifted inputs of hidden_size (the
 * time-mix and channel-mix shifts) and a WKV state of hidden_size x
 * head_size: in kvplan's form d_conv = shifts + 1, d_inner = hidden_size,
 * d_state = head_size, n_group 0.  The shifts are in the model dtype and
 * the WKV state in float32, as the checkpoints' modeling code allocates
 * them (modeling_rwkv6.py: state_attn_kv float32).  vLLM has no RWKV
 * model. */
static int read_rwkv(cfg *c, const char *gguf, uint32_t shifts, const char *head_key)
{
    uint64_t n, hidden = c->m->hidden_size, hs, heads, attn;
    int found;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
        hf_layers(c, (uint32_t)n))
        return -1;
    if (!hidden)
        return kvp_fail(c->err, KVP_EINPUT, "%s: missing required field \"hidden_size\"",
                        c->label);
    if (head_key) {
        if (cfg_uint_opt(c, head_key, 1, KVP_MAX_DIM, "wkv head_size", &hs, &found) ||
            (!found && cfg_uint(c, "head_dim", 1, KVP_MAX_DIM, "wkv head_size", &hs)))
            return -1;
    } else { /* the Qwen-derived RWKVs: head_size = hidden_size / heads */
        if (cfg_uint(c, "num_attention_heads", 1, KVP_MAX_HEADS, "num_attention_heads", &heads))
            return -1;
        hs = hidden / heads;
        cfg_fact(c, "wkv head_size", (int64_t)hs, "hidden_size / num_attention_heads");
    }
    if (cfg_uint_opt(c, "attention_hidden_size", 1, 1ull << 24, NULL, &attn, &found))
        return -1;
    if (found && attn != hidden)
        return kvp_fail(c->err, KVP_EINPUT, "%s: attention_hidden_size %llu differs from "
                        "hidden_size %llu; kvplan's RWKV state assumes they are equal",
                        c->label, (unsigned long long)attn, (unsigned long long)hidden);
    if (hs == 0 || hidden % hs)
        return kvp_fail(c->err, KVP_EINPUT, "%s: hidden_size %llu is not a whole number of "
                        "%llu-wide WKV heads", c->label, (unsigned long long)hidden,
                        (unsigned long long)hs);
    for (uint32_t i = 0; i < n; i++) {
        kvp_layer *L = &c->m->layers[i];
        L->kind = KVP_LAYER_LINEAR;
        L->d_conv = shifts + 1;
        L->d_inner = hidden;
        L->d_state = (uint32_t)hs;
        L->n_ssm_heads = (uint32_t)(hidden / hs);
        L->conv_dtype = c->m->dtype;
        L->ssm_dtype = KVP_F32;
    }
    char rule[120];
    snprintf(rule, sizeof rule, "RWKV: every layer %u token shift(s) of hidden_size + a float32 "
             "WKV state", shifts);
    cfg_fact(c, "layer kinds", c->m->n_layers, rule);
    snprintf(c->m->gguf_arch, sizeof c->m->gguf_arch, "%s", gguf);
    snprintf(c->m->vllm_refusal, sizeof c->m->vllm_refusal,
             "vLLM has no RWKV model (no %s class in its model registry)", gguf);
    return 0;
}

static int read_rwkv6(cfg *c) { return read_rwkv(c, "rwkv6", 2, "head_size"); }
static int read_rwkv7(cfg *c) { return read_rwkv(c, "rwkv7", 2, "head_size"); }
/* QRWKV6 and ARWKV7 convert a Qwen2.5 model: one token shift */
static int read_rwkv6qwen2(cfg *c) { return read_rwkv(c, "rwkv6qwen2", 1, NULL); }
static int read_arwkv7(cfg *c) { return read_rwkv(c, "arwkv7", 1, "head_size"); }

static const arch_default rwkv_defaults[] = {{NULL, 0}};

/* ---- LFM2-MoE ------------------------------------------------------------------------ */

static const arch_default lfm2_moe_defaults[] = {
    /* transformers Lfm2MoeConfig.__init__ */
    {"conv_L_cache", 3}, {NULL, 0}};

/* Lfm2MoeConfig calls the leading dense layers num_dense_layers. */
static const arch_alias lfm2_moe_aliases[] = {
    {"first_k_dense_replace", "num_dense_layers"},
    {NULL, NULL},
};

/* ---- the group's rows --------------------------------------------------------- */

static const arch_def defs[] = {
    {"kimi-linear", "kimi_linear", "KimiLinearForCausalLM", LAYOUT_MLA, "KimiLinearConfig",
     kimi_linear_defaults, kimi_linear_aliases, read_kimi_linear},
    /* LFM2's short convolutions and attention (layer_types), MoE after the
     * leading dense layers */
    {"lfm2", "lfm2_moe", "Lfm2MoeForCausalLM", LAYOUT_LFM2, "Lfm2MoeConfig",
     lfm2_moe_defaults, lfm2_moe_aliases, NULL},
    {"minimax-01", "minimax minimax_text_01 minimax_m1",
     "MiniMaxText01ForCausalLM MiniMaxM1ForCausalLM MiniMaxForCausalLM", LAYOUT_FULL, NULL,
     minimax01_defaults, NULL, read_minimax01},
    {"plamo2", "plamo2", "Plamo2ForCausalLM", LAYOUT_FULL, "Plamo2Config", plamo2_defaults,
     plamo2_aliases, read_plamo2},
    {"rwkv", "rwkv6", "Rwkv6ForCausalLM", LAYOUT_FULL, NULL, rwkv_defaults, NULL, read_rwkv6},
    {"rwkv", "rwkv7", "Rwkv7ForCausalLM RWKV7ForCausalLM", LAYOUT_FULL, NULL, rwkv_defaults, NULL,
     read_rwkv7},
    {"rwkv", "rwkv6qwen2", "RWKV6Qwen2ForCausalLM", LAYOUT_FULL, NULL, rwkv_defaults, NULL,
     read_rwkv6qwen2},
    {"rwkv", "arwkv7 rwkv_hybrid", "RwkvHybridForCausalLM", LAYOUT_FULL, NULL, rwkv_defaults,
     NULL, read_arwkv7},
    {"kimi-linear", "kimi_k3", "KimiK3ForConditionalGeneration KimiK3ForCausalLM", LAYOUT_MLA, NULL,
     kimi_linear_defaults, kimi_linear_aliases, read_kimi_k3},
    {"bailing-moe-v3", "bailing_moe_v3", "BailingMoeV3ForCausalLM", LAYOUT_MLA, NULL,
     kimi_linear_defaults, bailing3_aliases, read_bailing3},
};

static const arch_gguf gguf[] = {
    {"kimi_linear", "kimi-linear"},
    {"lfm2_moe", "lfm2moe"},
    {"minimax", "minimax-01"},
    {"minimax_text_01", "minimax-01"},
    {"minimax_m1", "minimax-01"},
    {"plamo2", "plamo2"},
    {"kimi_k3", "kimi-k3"},
    /* the readers set these too (an RWKV hybrid's depends on its config);
     * listed here for kvplan archs */
    {"rwkv6", "rwkv6"},
    {"rwkv7", "rwkv7"},
    {"rwkv6qwen2", "rwkv6qwen2"},
    {"arwkv7", "arwkv7"},
    {"bailing_moe_v3", "bailingmoe3"},
};

const arch_group arch_group_state = {
    .defs = defs, .n_defs = sizeof defs / sizeof defs[0],
    .gguf = gguf, .n_gguf = sizeof gguf / sizeof gguf[0],
};
