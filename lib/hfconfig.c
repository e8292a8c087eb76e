/* hfconfig.c - a Hugging Face config.json turned into kvplan's per-layer
 * model.  The architecture table (arch.c) says which layout rule applies;
 * this file knows how each rule reads the config: layer_types lists,
 * sliding_window_pattern, full_attention_interval, Llama 4's NoPE layers,
 * Nemotron-H's pattern string, Jamba's period, and the shapes of attention,
 * MLA, Gated DeltaNet and Mamba layers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hfconfig.h"
#include "model_int.h"

static int read_dtype(cfg *c)
{
    char where[96];
    json_t *v = cfg_lookup(c, "torch_dtype", where, sizeof where);
    if (!v) {
        c->m->dtype = KVP_BF16;
        cfg_fact(c, "dtype bytes", 2, "torch_dtype absent: assumed bfloat16");
        return 0;
    }
    if (!json_is_string(v) || kvp_dtype_parse(json_string_value(v), &c->m->dtype))
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s is not a known dtype", c->label, where);
    cfg_fact(c, "dtype bytes", kvp_dtype_block_bytes(c->m->dtype), where);
    return 0;
}

/* ---- layer kinds ---------------------------------------------------------- */

int hf_kind_from_name(const char *s, kvp_layer_kind *k)
{
    static const struct {
        const char *name;
        kvp_layer_kind kind;
    } names[] = {
        {"full_attention", KVP_LAYER_FULL},       {"attention", KVP_LAYER_FULL},
        {"global", KVP_LAYER_FULL},               {"sliding_attention", KVP_LAYER_SLIDING},
        {"local", KVP_LAYER_SLIDING},             {"chunked_attention", KVP_LAYER_CHUNKED},
        {"linear_attention", KVP_LAYER_LINEAR},   {"mamba", KVP_LAYER_MAMBA},
        {"conv", KVP_LAYER_LINEAR}, /* LFM2's short convolution: a state, no cells */
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) {
            *k = names[i].kind;
            return 0;
        }
    return -1;
}

/* layer_types, when the config has it, is the truth for every family. */
int hf_kinds_from_layer_types(cfg *c, int *found)
{
    char where[96];
    json_t *v = cfg_lookup(c, "layer_types", where, sizeof where);
    *found = 0;
    if (!v)
        return 0;
    if (!json_is_array(v) || json_array_size(v) != c->m->n_layers)
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s must list one type per layer (%u)",
                        c->label, where, c->m->n_layers);
    for (uint32_t i = 0; i < c->m->n_layers; i++) {
        json_t *t = json_array_get(v, i);
        if (!json_is_string(t) || hf_kind_from_name(json_string_value(t), &c->m->layers[i].kind))
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%u]: unknown layer type %s%s%s",
                            c->label, where, i, json_is_string(t) ? "\"" : "",
                            json_is_string(t) ? json_string_value(t) : "(not a string)",
                            json_is_string(t) ? "\"" : "");
    }
    cfg_fact(c, "layer kinds", c->m->n_layers, where);
    *found = 1;
    return 0;
}

static void set_all(kvp_model *m, kvp_layer_kind k)
{
    for (uint32_t i = 0; i < m->n_layers; i++)
        m->layers[i].kind = k;
}

static int has_window(cfg *c)
{
    char where[96];
    return cfg_lookup(c, "sliding_window", where, sizeof where) != NULL;
}

static int kinds_qwen(cfg *c)
{
    uint64_t mwl = 0;
    int found;
    set_all(c->m, KVP_LAYER_FULL);
    if (!cfg_bool(c, "use_sliding_window") || !has_window(c)) {
        cfg_fact(c, "layer kinds", c->m->n_layers, "use_sliding_window false: all layers full");
        return 0;
    }
    if (cfg_uint_opt(c, "max_window_layers", 0, KVP_MAX_LAYERS, "max_window_layers", &mwl, &found))
        return -1;
    for (uint32_t i = (uint32_t)mwl; i < c->m->n_layers; i++)
        c->m->layers[i].kind = KVP_LAYER_SLIDING;
    cfg_fact(c, "layer kinds", c->m->n_layers,
             "use_sliding_window: layers >= max_window_layers slide");
    return 0;
}

/* The periodic layouts: layer i is full iff (i+1) % period == 0, the others
 * are `other`.  The period is read from key (or alt, if given). */
int hf_kinds_every(cfg *c, const char *key, const char *alt, kvp_layer_kind other,
                       const char *rule)
{
    uint64_t p;
    int found;
    if (cfg_uint_opt(c, key, 1, KVP_MAX_LAYERS, key, &p, &found))
        return -1;
    if (!found && (!alt || cfg_uint(c, alt, 1, KVP_MAX_LAYERS, key, &p)))
        return alt ? -1 : kvp_fail(c->err, KVP_EINPUT, "%s: missing required field \"%s\"",
                                   c->label, key);
    for (uint32_t i = 0; i < c->m->n_layers; i++)
        c->m->layers[i].kind = (i + 1) % p == 0 ? KVP_LAYER_FULL : other;
    cfg_fact(c, "layer kinds", c->m->n_layers, rule);
    return 0;
}

static int kinds_llama4(cfg *c)
{
    char where[96];
    json_t *v = cfg_lookup(c, "no_rope_layers", where, sizeof where);
    if (!v || !json_is_array(v) || json_array_size(v) == 0)
        return hf_kinds_every(c, "no_rope_layer_interval", NULL, KVP_LAYER_CHUNKED,
                           "no_rope_layers absent: full iff (i+1) % no_rope_layer_interval == 0, "
                           "else chunked");
    if (json_array_size(v) != c->m->n_layers)
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s must have one entry per layer (%u)",
                        c->label, where, c->m->n_layers);
    for (uint32_t i = 0; i < c->m->n_layers; i++)
        c->m->layers[i].kind = json_integer_value(json_array_get(v, i)) == 0 ? KVP_LAYER_FULL
                                                                              : KVP_LAYER_CHUNKED;
    cfg_fact(c, "layer kinds", c->m->n_layers,
             "no_rope_layers: NoPE layers (0) full, RoPE layers chunked");
    return 0;
}

static int kinds_jamba(cfg *c)
{
    uint64_t period, offset;
    if (cfg_uint(c, "attn_layer_period", 1, KVP_MAX_LAYERS, "attn_layer_period", &period) ||
        cfg_uint(c, "attn_layer_offset", 0, KVP_MAX_LAYERS, "attn_layer_offset", &offset))
        return -1;
    for (uint32_t i = 0; i < c->m->n_layers; i++)
        c->m->layers[i].kind = i % period == offset ? KVP_LAYER_FULL : KVP_LAYER_MAMBA;
    cfg_fact(c, "layer kinds", c->m->n_layers,
             "attention iff i % attn_layer_period == attn_layer_offset, else Mamba");
    return 0;
}

static int kinds_nemotron_h(cfg *c)
{
    const char *p = cfg_str(c, "hybrid_override_pattern");
    if (!p)
        return kvp_fail(c->err, KVP_EINPUT, "%s: missing required field \"hybrid_override_pattern\"",
                        c->label);
    if (strlen(p) != c->m->n_layers)
        return kvp_fail(c->err, KVP_EINPUT,
                        "%s: hybrid_override_pattern has %zu characters for %u layers", c->label,
                        strlen(p), c->m->n_layers);
    for (uint32_t i = 0; i < c->m->n_layers; i++) {
        switch (p[i]) {
        case 'M': c->m->layers[i].kind = KVP_LAYER_MAMBA; break;
        case '*': c->m->layers[i].kind = KVP_LAYER_FULL; break;
        case '-': case 'E': c->m->layers[i].kind = KVP_LAYER_NONE; break;
        default:
            return kvp_fail(c->err, KVP_EINPUT,
                            "%s: hybrid_override_pattern[%u] = '%c' is not M, *, - or E",
                            c->label, i, p[i]);
        }
    }
    cfg_fact(c, "layer kinds", c->m->n_layers,
             "hybrid_override_pattern: M Mamba2, * attention, -/E MLP (no cache)");
    return 0;
}

/* LFM2: full_attn_idxs lists the attention layers; the rest are short
 * convolutions. */
static int kinds_lfm2(cfg *c)
{
    char where[96];
    json_t *v = cfg_lookup(c, "full_attn_idxs", where, sizeof where);
    if (!v) {
        set_all(c->m, KVP_LAYER_FULL);
        cfg_fact(c, "layer kinds", c->m->n_layers, "no layer_types or full_attn_idxs: all attention");
        return 0;
    }
    if (!json_is_array(v))
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s must be a list of layer indices", c->label,
                        where);
    set_all(c->m, KVP_LAYER_LINEAR);
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *x = json_array_get(v, i);
        if (!json_is_integer(x) || json_integer_value(x) < 0 ||
            json_integer_value(x) >= c->m->n_layers)
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%zu] is not a layer index", c->label,
                            where, i);
        c->m->layers[json_integer_value(x)].kind = KVP_LAYER_FULL;
    }
    cfg_fact(c, "layer kinds", c->m->n_layers, "full_attn_idxs: attention, the rest short conv");
    return 0;
}

int hf_kinds(cfg *c)
{
    int found;
    if (hf_kinds_from_layer_types(c, &found))
        return -1;
    if (found)
        return 0;
    switch (c->arch->layout) {
    case LAYOUT_FULL:
        set_all(c->m, KVP_LAYER_FULL);
        cfg_fact(c, "layer kinds", c->m->n_layers, "all layers full attention");
        return 0;
    case LAYOUT_ALL_IF_WINDOW:
        set_all(c->m, has_window(c) ? KVP_LAYER_SLIDING : KVP_LAYER_FULL);
        cfg_fact(c, "layer kinds", c->m->n_layers,
                 has_window(c) ? "sliding_window set: all layers slide"
                               : "sliding_window null: all layers full");
        return 0;
    case LAYOUT_QWEN: return kinds_qwen(c);
    case LAYOUT_EVEN_SLIDING:
        for (uint32_t i = 0; i < c->m->n_layers; i++)
            c->m->layers[i].kind = i % 2 == 0 ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
        cfg_fact(c, "layer kinds", c->m->n_layers, "even layers sliding, odd layers full");
        return 0;
    case LAYOUT_PERIOD:
        return hf_kinds_every(c, "sliding_window_pattern", "_sliding_window_pattern",
                           KVP_LAYER_SLIDING,
                           "full iff (i+1) % sliding_window_pattern == 0, else sliding");
    case LAYOUT_CHUNKED: return kinds_llama4(c);
    case LAYOUT_MLA:
        set_all(c->m, KVP_LAYER_MLA);
        cfg_fact(c, "layer kinds", c->m->n_layers, "kv_lora_rank: every layer MLA");
        return 0;
    case LAYOUT_GDN:
        return hf_kinds_every(c, "full_attention_interval", NULL, KVP_LAYER_LINEAR,
                           "full iff (i+1) % full_attention_interval == 0, else Gated DeltaNet");
    case LAYOUT_JAMBA: return kinds_jamba(c);
    case LAYOUT_NEMOTRON_H: return kinds_nemotron_h(c);
    case LAYOUT_MAMBA1:
    case LAYOUT_MAMBA2:
    case LAYOUT_GRANITE_HYBRID:
        set_all(c->m, KVP_LAYER_MAMBA);
        cfg_fact(c, "layer kinds", c->m->n_layers, "attention-free: every layer Mamba");
        return 0;
    case LAYOUT_FALCON_H1:
        set_all(c->m, KVP_LAYER_FULL);
        cfg_fact(c, "layer kinds", c->m->n_layers,
                 "every layer runs attention and Mamba2 side by side");
        return 0;
    case LAYOUT_LFM2: return kinds_lfm2(c);
    case LAYOUT_GEMMA3N:
        return hf_kinds_every(c, "sliding_window_pattern", NULL, KVP_LAYER_SLIDING,
                           "full iff (i+1) % 5 == 0, else sliding");
    }
    return 0;
}

/* Gemma 3n: the last num_kv_shared_layers layers reuse the KV of the last
 * earlier layer of their own type (transformers' kv_sharing_roles). */
static int share_gemma3n(cfg *c)
{
    uint64_t shared;
    kvp_model *m = c->m;
    if (cfg_uint(c, "num_kv_shared_layers", 0, m->n_layers, "num_kv_shared_layers", &shared))
        return -1;
    uint32_t first = m->n_layers - (uint32_t)shared;
    for (uint32_t i = first; i < m->n_layers; i++) {
        int32_t src = -1;
        for (uint32_t j = 0; j < first; j++)
            if (m->layers[j].kind == m->layers[i].kind)
                src = (int32_t)j;
        m->layers[i].kind = KVP_LAYER_SHARED; /* window kept: says which cache it reads */
        m->layers[i].shared_from = src;
    }
    return 0;
}

/* ---- shapes ---------------------------------------------------------------- */

int hf_read_attention(cfg *c, uint32_t il, kvp_layer *L)
{
    uint64_t heads, kv, hd, win = 0;
    char where[96];
    if (cfg_uint_layer(c, "num_attention_heads", il, 1, KVP_MAX_HEADS, &heads))
        return -1;
    if (cfg_lookup(c, "num_key_value_heads", where, sizeof where) ||
        (c->arch && arch_default_for(c->arch, "num_key_value_heads"))) {
        if (cfg_uint_layer(c, "num_key_value_heads", il, 1, KVP_MAX_HEADS, &kv))
            return -1;
    } else {
        kv = heads;
        cfg_fact(c, "num_key_value_heads", (int64_t)kv,
                 "num_key_value_heads absent: = num_attention_heads (MHA)");
    }
    const char *hd_key = cfg_lookup(c, "attention_head_dim", where, sizeof where)
                             ? "attention_head_dim" : "head_dim";
    int found;
    if (cfg_uint_opt(c, hd_key, 1, KVP_MAX_DIM, "head_dim", &hd, &found))
        return -1;
    if (!found) {
        if (!c->m->hidden_size)
            return kvp_fail(c->err, KVP_EINPUT,
                            "%s: missing required field \"head_dim\" (or hidden_size)", c->label);
        hd = c->m->hidden_size / heads;
        if (hd == 0 || hd > KVP_MAX_DIM)
            return kvp_fail(c->err, KVP_EINPUT, "%s: hidden_size / num_attention_heads = %llu "
                            "is not a head size", c->label, (unsigned long long)hd);
        cfg_fact(c, "head_dim", (int64_t)hd, "head_dim absent: hidden_size / num_attention_heads");
    }
    if (L->kind == KVP_LAYER_SLIDING &&
        cfg_uint(c, "sliding_window", 1, KVP_MAX_TOKENS, "sliding_window", &win))
        return -1;
    if (L->kind == KVP_LAYER_CHUNKED &&
        cfg_uint(c, "attention_chunk_size", 1, KVP_MAX_TOKENS, "attention_chunk_size", &win))
        return -1;
    L->n_head = (uint32_t)heads;
    L->n_kv_heads = (uint32_t)kv;
    L->head_dim_k = L->head_dim_v = (uint32_t)hd;
    L->window = (uint32_t)(win > UINT32_MAX ? UINT32_MAX : win);
    if (il == 0 || !c->m->n_heads)
        c->m->n_heads = (uint32_t)heads;
    return 0;
}

int hf_read_mla(cfg *c, kvp_layer *L)
{
    uint64_t rank, rope, nope, vhd, heads;
    if (cfg_uint(c, "kv_lora_rank", 1, KVP_MAX_DIM, "kv_lora_rank", &rank) ||
        cfg_uint(c, "qk_rope_head_dim", 0, KVP_MAX_DIM, "qk_rope_head_dim", &rope) ||
        cfg_uint(c, "qk_nope_head_dim", 0, KVP_MAX_DIM, "qk_nope_head_dim", &nope) ||
        cfg_uint(c, "v_head_dim", 1, KVP_MAX_DIM, "v_head_dim", &vhd) ||
        cfg_uint(c, "num_attention_heads", 1, KVP_MAX_HEADS, "num_attention_heads", &heads))
        return -1;
    L->n_head = (uint32_t)heads;
    L->n_kv_heads = 1;
    L->head_dim_k = (uint32_t)(rank + rope);
    L->head_dim_v = 0;
    L->mla_heads = (uint32_t)heads;
    L->mla_k_head_dim = (uint32_t)(nope + rope);
    L->mla_v_head_dim = (uint32_t)vhd;
    L->mla_rope_dim = (uint32_t)rope;
    c->m->n_heads = (uint32_t)heads;
    return 0;
}

/* The state dtypes: the conv state in the model dtype, the SSM/recurrent
 * state in mamba_ssm_dtype (Qwen3.5) or mamba_ssm_cache_dtype (Nemotron-3)
 * when the config names one. */
int hf_state_dtypes(cfg *c, kvp_layer *L)
{
    const char *key =
        cfg_str(c, "mamba_ssm_dtype") ? "mamba_ssm_dtype" : "mamba_ssm_cache_dtype";
    const char *s = cfg_str(c, key);
    L->conv_dtype = L->ssm_dtype = c->m->dtype;
    if (s && kvp_dtype_parse(s, &L->ssm_dtype))
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s \"%s\" is not a known dtype", c->label, key,
                        s);
    if (s)
        cfg_fact(c, "ssm dtype bytes", kvp_dtype_block_bytes(L->ssm_dtype), key);
    return 0;
}

int hf_read_gdn(cfg *c, kvp_layer *L)
{
    uint64_t hk, hv, dk, dv, k;
    if (cfg_uint(c, "linear_num_key_heads", 1, KVP_MAX_HEADS, "linear_num_key_heads", &hk) ||
        cfg_uint(c, "linear_num_value_heads", 1, KVP_MAX_HEADS, "linear_num_value_heads", &hv) ||
        cfg_uint(c, "linear_key_head_dim", 1, KVP_MAX_DIM, "linear_key_head_dim", &dk) ||
        cfg_uint(c, "linear_value_head_dim", 1, KVP_MAX_DIM, "linear_value_head_dim", &dv) ||
        cfg_uint(c, "linear_conv_kernel_dim", 1, 1024, "linear_conv_kernel_dim", &k))
        return -1;
    L->d_conv = (uint32_t)k;
    L->n_ssm_heads = (uint32_t)hv;
    L->d_inner = hv * dv;
    L->n_group = (uint32_t)hk;
    L->d_state = (uint32_t)dk;
    return hf_state_dtypes(c, L);
}

/* LFM2's short convolution keeps the last conv_L_cache - 1 inputs of width
 * hidden_size: the conv form with no SSM state. */
static int read_shortconv(cfg *c, kvp_layer *L)
{
    uint64_t lc;
    if (cfg_uint(c, "conv_L_cache", 2, 1024, "conv_L_cache", &lc))
        return -1;
    if (!c->m->hidden_size)
        return kvp_fail(c->err, KVP_EINPUT, "%s: missing required field \"hidden_size\"",
                        c->label);
    L->d_conv = (uint32_t)lc;
    L->d_inner = c->m->hidden_size;
    L->n_group = L->d_state = 0;
    return hf_state_dtypes(c, L);
}

int hf_read_mamba(cfg *c, kvp_layer *L)
{
    uint64_t conv, state, inner, groups = 0, expand, heads = 0;
    int found;
    switch (c->arch->layout) {
    case LAYOUT_JAMBA:
        if (cfg_uint(c, "mamba_d_conv", 1, 1024, "mamba_d_conv", &conv) ||
            cfg_uint(c, "mamba_d_state", 1, KVP_MAX_DIM, "mamba_d_state", &state) ||
            cfg_uint(c, "mamba_expand", 1, 64, "mamba_expand", &expand))
            return -1;
        inner = expand * c->m->hidden_size;
        cfg_fact(c, "d_inner", (int64_t)inner, "mamba_expand x hidden_size");
        break;
    case LAYOUT_NEMOTRON_H: {
        uint64_t hd;
        if (cfg_uint(c, "conv_kernel", 1, 1024, "conv_kernel", &conv) ||
            cfg_uint(c, "ssm_state_size", 1, KVP_MAX_DIM, "ssm_state_size", &state) ||
            cfg_uint(c, "n_groups", 1, KVP_MAX_HEADS, "n_groups", &groups) ||
            cfg_uint(c, "mamba_num_heads", 1, KVP_MAX_HEADS, "mamba_num_heads", &heads) ||
            cfg_uint(c, "mamba_head_dim", 1, KVP_MAX_DIM, "mamba_head_dim", &hd))
            return -1;
        inner = heads * hd;
        L->n_ssm_heads = (uint32_t)heads;
        cfg_fact(c, "d_inner", (int64_t)inner, "mamba_num_heads x mamba_head_dim");
        break;
    }
    case LAYOUT_MAMBA2:
        /* transformers' Mamba2Mixer: intermediate = expand x hidden_size */
        if (cfg_uint(c, "conv_kernel", 1, 1024, "conv_kernel", &conv) ||
            cfg_uint(c, "state_size", 1, KVP_MAX_DIM, "state_size", &state) ||
            cfg_uint(c, "n_groups", 1, KVP_MAX_HEADS, "n_groups", &groups) ||
            cfg_uint(c, "expand", 1, 64, "expand", &expand))
            return -1;
        inner = expand * c->m->hidden_size;
        cfg_fact(c, "d_inner", (int64_t)inner, "expand x hidden_size");
        if (cfg_uint_opt(c, "num_heads", 1, KVP_MAX_HEADS, NULL, &heads, &found))
            return -1;
        L->n_ssm_heads = found ? (uint32_t)heads : 0;
        break;
    case LAYOUT_FALCON_H1:
    case LAYOUT_GRANITE_HYBRID: {
        /* mamba_d_ssm, else mamba_n_heads x mamba_d_head, else mamba_expand x hidden */
        uint64_t hd = 0;
        int fh = 0, fd = 0;
        if (cfg_uint(c, "mamba_d_conv", 1, 1024, "mamba_d_conv", &conv) ||
            cfg_uint(c, "mamba_d_state", 1, KVP_MAX_DIM, "mamba_d_state", &state) ||
            cfg_uint(c, "mamba_n_groups", 1, KVP_MAX_HEADS, "mamba_n_groups", &groups) ||
            cfg_uint_opt(c, "mamba_n_heads", 1, KVP_MAX_HEADS, NULL, &heads, &fh) ||
            cfg_uint_opt(c, "mamba_d_head", 1, KVP_MAX_DIM, NULL, &hd, &fd) ||
            cfg_uint_opt(c, "mamba_d_ssm", 1, 1ull << 32, "d_inner", &inner, &found))
            return -1;
        L->n_ssm_heads = fh ? (uint32_t)heads : 0;
        if (!found && c->arch->layout == LAYOUT_FALCON_H1 && fh && fd) {
            inner = heads * hd;
            cfg_fact(c, "d_inner", (int64_t)inner, "mamba_n_heads x mamba_d_head");
        } else if (!found) {
            if (cfg_uint(c, "mamba_expand", 1, 64, "mamba_expand", &expand))
                return -1;
            inner = expand * c->m->hidden_size;
            cfg_fact(c, "d_inner", (int64_t)inner, "mamba_expand x hidden_size");
        }
        break;
    }
    default: /* Mamba1 */
        if (cfg_uint(c, "conv_kernel", 1, 1024, "conv_kernel", &conv) ||
            cfg_uint(c, "state_size", 1, KVP_MAX_DIM, "state_size", &state))
            return -1;
        if (cfg_uint_opt(c, "intermediate_size", 1, 1ull << 32, "d_inner", &inner, &found))
            return -1;
        if (!found) {
            if (cfg_uint(c, "expand", 1, 64, "expand", &expand))
                return -1;
            inner = expand * c->m->hidden_size;
            cfg_fact(c, "d_inner", (int64_t)inner, "expand x hidden_size");
        }
        break;
    }
    if (inner == 0)
        return kvp_fail(c->err, KVP_EINPUT, "%s: the Mamba inner size is 0 (hidden_size missing?)",
                        c->label);
    L->d_conv = (uint32_t)conv;
    L->d_state = (uint32_t)state;
    L->n_group = (uint32_t)groups;
    L->d_inner = inner;
    return hf_state_dtypes(c, L);
}

int hf_shapes(cfg *c)
{
    for (uint32_t i = 0; i < c->m->n_layers; i++) {
        kvp_layer *L = &c->m->layers[i];
        int rc = 0;
        L->shared_from = -1;
        switch (L->kind) {
        case KVP_LAYER_FULL:
        case KVP_LAYER_SLIDING:
        case KVP_LAYER_CHUNKED: rc = hf_read_attention(c, i, L); break;
        case KVP_LAYER_MLA: rc = hf_read_mla(c, L); break;
        case KVP_LAYER_LINEAR:
            rc = c->arch->layout == LAYOUT_LFM2 ? read_shortconv(c, L) : hf_read_gdn(c, L);
            break;
        case KVP_LAYER_MAMBA: rc = hf_read_mamba(c, L); break;
        default: break;
        }
        if (!rc && c->arch->layout == LAYOUT_FALCON_H1)
            rc = hf_read_mamba(c, L); /* its Mamba2 mixer runs beside the attention */
        if (rc)
            return -1;
    }
    return c->arch->layout == LAYOUT_GEMMA3N ? share_gemma3n(c) : 0;
}

/* ---- dimensions a shape twin needs ----------------------------------------- */

/* The first of several spellings that the config has; 0 when none. */
static int opt_any(cfg *c, const char *const *keys, uint64_t hi, uint64_t *out)
{
    int found = 0;
    *out = 0;
    for (; *keys && !found; keys++) {
        char where[96];
        if (json_is_array(cfg_lookup(c, *keys, where, sizeof where))) {
            /* one value per layer (Hunyuan's moe_topk, moe_intermediate_size):
             * layer 0's, as llama.cpp's converter takes it */
            if (cfg_uint_layer(c, *keys, 0, 0, hi, out))
                return -1;
            found = 1;
        } else if (cfg_uint_opt(c, *keys, 0, hi, NULL, out, &found)) {
            return -1;
        }
    }
    return 0;
}

/* MoE routing as convert_hf_to_gguf writes it (expert_group_count,
 * expert_group_used_count, expert_gating_func from the scoring function,
 * DeepSeek's expert_weights_norm and _scale, exp_probs_b from the
 * e_score_correction bias of topk_method "noaux_tc"): llama.cpp's compute
 * graph depends on it. */
static int read_moe_routing(cfg *c)
{
    static const char *score[] = {"score_function", "scoring_func", "score_func",
                                  "moe_router_activation", "moe_router_activation_func",
                                  "expert_selection_fn", NULL};
    kvp_model *m = c->m;
    char where[96];
    json_t *g = cfg_lookup(c, "n_group", where, sizeof where),
           *u = cfg_lookup(c, "topk_group", where, sizeof where);
    if (json_is_integer(g) && json_integer_value(g) > 0 && json_integer_value(g) <= KVP_MAX_DIM)
        m->n_expert_groups = (uint32_t)json_integer_value(g);
    if (json_is_integer(u) && json_integer_value(u) > 0 && json_integer_value(u) <= KVP_MAX_DIM)
        m->n_group_used = (uint32_t)json_integer_value(u);
    for (const char **k = score; *k; k++) {
        const char *f = cfg_str(c, *k);
        if (!f)
            continue;
        m->expert_gating_func = !strcmp(f, "sigmoid") ? 2 : !strcmp(f, "softmax") ? 1
                              : !strcmp(f, "sqrtsoftplus") ? 4 : 0;
        break;
    }
    m->expert_weights_norm = cfg_bool(c, "norm_topk_prob");
    json_t *sc = cfg_lookup(c, "routed_scaling_factor", where, sizeof where);
    if (json_is_number(sc))
        m->expert_weights_scale = json_number_value(sc);
    const char *method = cfg_str(c, "topk_method");
    m->expert_probs_bias = method && !strcmp(method, "noaux_tc");
    return 0;
}

/* Vocabulary, FFN and expert sizes, MTP layers and rotary dims: nothing
 * here changes the cache, so all of it is optional. */
static int read_twin_dims(cfg *c)
{
    static const char *vocab[] = {"vocab_size", NULL},
        *ff[] = {"intermediate_size", NULL},
        *ff_exp[] = {"moe_intermediate_size", NULL},
        *ff_sh[] = {"shared_expert_intermediate_size", NULL},
        *experts[] = {"num_experts", "num_local_experts", "n_routed_experts", NULL},
        *used[] = {"num_experts_per_tok", "experts_per_token", "n_activated_experts", NULL},
        *shared[] = {"n_shared_experts", NULL},
        *dense[] = {"first_k_dense_replace", "n_dense_layers", NULL},
        *nextn[] = {"num_nextn_predict_layers", "mtp_num_hidden_layers", NULL},
        *qlora[] = {"q_lora_rank", NULL},
        *rot[] = {"rotary_dim", NULL};
    kvp_model *m = c->m;
    uint64_t v[11];
    const char *const *keys[11] = {vocab, ff, ff_exp, ff_sh, experts, used, shared, dense, nextn,
                                   qlora, rot};
    for (int i = 0; i < 11; i++)
        if (opt_any(c, keys[i], i == 0 || i == 1 ? 1ull << 32 : KVP_MAX_DIM, &v[i]))
            return -1;
    /* a key the config lacks (0) keeps what the architecture's own reader
     * (arch_def.read) set: DBRX nests its FFN and expert sizes in ffn_config */
    m->n_vocab = v[0] ? v[0] : m->n_vocab;
    if (c->arch->layout != LAYOUT_MAMBA1 && c->arch->layout != LAYOUT_MAMBA2)
        m->n_ff = v[1] ? v[1] : m->n_ff; /* a Mamba config's intermediate_size is its d_inner */
    m->n_ff_exp = v[2] ? v[2] : m->n_ff_exp;
    m->n_ff_shexp = v[3] ? v[3] : m->n_ff_shexp;
    m->n_expert = v[4] ? (uint32_t)v[4] : m->n_expert;
    m->n_expert_used = v[5] ? (uint32_t)v[5] : m->n_expert_used;
    m->n_expert_shared = v[6] ? (uint32_t)v[6] : m->n_expert_shared;
    m->n_layer_dense_lead = v[7] ? (uint32_t)v[7] : m->n_layer_dense_lead;
    m->n_layer_nextn = v[8] ? (uint32_t)v[8] : m->n_layer_nextn;
    m->q_lora_rank = v[9] ? (uint32_t)v[9] : m->q_lora_rank;
    m->n_rot = v[10] ? (uint32_t)v[10] : m->n_rot;
    char where[96];
    json_t *tie = cfg_lookup(c, "tie_word_embeddings", where, sizeof where);
    m->tie_word_embeddings = tie ? json_is_true(tie) : -1;
    m->attention_bias = cfg_bool(c, "attention_bias") || cfg_bool(c, "qkv_bias") ||
                        (!strcmp(c->arch->family, "qwen2") && !strncmp(m->arch, "qwen2", 5));
    json_t *rs = cfg_lookup(c, "rope_scaling", where, sizeof where);
    if (!rs)
        rs = cfg_lookup(c, "rope_parameters", where, sizeof where);
    if (json_is_object(rs)) {
        json_t *t = json_object_get(rs, "rope_type"), *fa = json_object_get(rs, "factor"),
               *om = json_object_get(rs, "original_max_position_embeddings");
        if (!json_is_string(t))
            t = json_object_get(rs, "type");
        if (json_is_string(t))
            snprintf(m->rope_type, sizeof m->rope_type, "%s", json_string_value(t));
        if (json_is_number(fa) && json_number_value(fa) > 0 && json_number_value(fa) < 1e6)
            m->rope_factor = json_number_value(fa);
        if (json_is_integer(om) && json_integer_value(om) > 0)
            m->rope_orig_max = (uint64_t)json_integer_value(om);
    }
    json_t *f = cfg_lookup(c, "partial_rotary_factor", where, sizeof where);
    if (!m->n_rot && json_is_number(f) && m->n_layers) {
        const kvp_layer *L = NULL;
        for (uint32_t i = 0; i < m->n_layers && !L; i++)
            if (m->layers[i].head_dim_k && m->layers[i].kind != KVP_LAYER_MLA)
                L = &m->layers[i];
        double r = json_number_value(f);
        if (L && r > 0 && r <= 1)
            m->n_rot = (uint32_t)(r * L->head_dim_k);
    }
    return read_moe_routing(c);
}

/* ---- the whole model ------------------------------------------------------- */

int hf_layers(cfg *c, uint32_t n)
{
    kvp_model *m = c->m;
    if (n == 0 || n > KVP_MAX_LAYERS)
        return kvp_fail(c->err, KVP_EINPUT, "%s: %u layers is out of range [1, %u]", c->label, n,
                        KVP_MAX_LAYERS);
    m->n_layers = n;
    m->layers = calloc(n, sizeof *m->layers);
    if (!m->layers)
        return kvp_fail(c->err, KVP_EINPUT, "%s: out of memory for %u layers", c->label, n);
    for (uint32_t i = 0; i < n; i++)
        m->layers[i].shared_from = -1;
    return 0;
}

static const arch_def *identify(cfg *c, const char **model_type, const char *family)
{
    const char *classes[8];
    size_t n = 0;
    json_t *a = json_object_get(c->root, "architectures");
    for (size_t i = 0; json_is_array(a) && i < json_array_size(a) && n < 8; i++)
        if (json_is_string(json_array_get(a, i)))
            classes[n++] = json_string_value(json_array_get(a, i));
    const char *mt = cfg_str(c, "model_type");
    /* DeepSeek's own inference format names no model type; its MLA fields
     * say what it is. */
    if (!mt && !n && json_object_get(c->root, "kv_lora_rank") &&
        json_object_get(c->root, "n_layers"))
        mt = "deepseek_v2";
    *model_type = mt;
    if (family) { /* --family: the user names the rule set */
        const arch_def *d = arch_find_family(family);
        if (!d)
            kvp_fail(c->err, KVP_EUSAGE,
                     "--family %s: no such rule set (kvplan archs lists them)", family);
        return d;
    }
    if (!mt && !n) {
        kvp_fail(c->err, KVP_EINPUT, "%s: not a model config: no model_type or architectures",
                 c->label);
        return NULL;
    }
    const arch_def *d = arch_find(mt, classes, n);
    if (!d)
        kvp_fail(c->err, KVP_EINPUT,
                 "%s: unknown architecture (model_type \"%s\"%s%s%s); kvplan archs lists the "
                 "known ones, and --family NAME reads the config by one of them",
                 c->label, mt ? mt : "", n ? ", architectures \"" : "", n ? classes[0] : "",
                 n ? "\"" : "");
    return d;
}

static int build(cfg *c, const char *family)
{
    kvp_model *m = c->m;
    const char *mt;
    uint64_t v;
    int found;
    if (!(c->arch = identify(c, &mt, family)))
        return -1;
    snprintf(m->arch, sizeof m->arch, "%s", mt ? mt : c->arch->family);
    snprintf(m->family, sizeof m->family, "%s", c->arch->family);
    snprintf(m->gguf_arch, sizeof m->gguf_arch, "%s", arch_gguf_name(mt, c->arch));
    if (family && !m->gguf_arch[0]) { /* the rule set's own llama.cpp name, as asked */
        char first[64];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(c->arch->model_types, " "),
                 c->arch->model_types);
        snprintf(m->gguf_arch, sizeof m->gguf_arch, "%s", arch_gguf_name(first, c->arch));
    }
    const char *prov = cfg_str(c, "_provenance");
    if (prov)
        snprintf(m->note, sizeof m->note, "%s", prov);
    if (family) /* say whose rules these are, before any provenance */
        snprintf(m->note, sizeof m->note, "read with --family %s: model_type \"%.40s\" taken for "
                 "the %s rule set%s%.150s", family, mt ? mt : "none", family, prov ? "; " : "",
                 prov ? prov : "");
    if (cfg_uint_opt(c, "hidden_size", 1, 1ull << 24, "hidden_size", &m->hidden_size, &found) ||
        cfg_uint_opt(c, "max_position_embeddings", 1, KVP_MAX_TOKENS, "max_position_embeddings",
                     &m->max_position, &found) ||
        read_dtype(c))
        return -1;
    if (c->arch->read) /* a layout of its own (lib/hf/) */
        return c->arch->read(c) || read_twin_dims(c) ? -1 : 0;
    if (cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &v) ||
        hf_layers(c, (uint32_t)v))
        return -1;
    return hf_kinds(c) || hf_shapes(c) || read_twin_dims(c) ? -1 : 0;
}

int kvp_model_from_config_text(const char *text, size_t len, const char *label, kvp_model **out,
                               kvp_error *err)
{
    return hf_model_from_text(text, len, label, NULL, out, err);
}

int hf_model_from_text(const char *text, size_t len, const char *label, const char *family,
                       kvp_model **out, kvp_error *err)
{
    json_t *root = cfg_parse(text, len, label, err);
    if (!root)
        return -1;
    kvp_model *m = calloc(1, sizeof *m);
    if (!m) {
        json_decref(root);
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", label);
    }
    json_t *tc = json_object_get(root, "text_config");
    cfg c = {root, json_is_object(tc) ? tc : root, label, NULL, m, err};
    snprintf(m->name, sizeof m->name, "%s", label);
    snprintf(m->source, sizeof m->source, "%s", label);
    if (family)
        snprintf(m->source, sizeof m->source, "%s [rules by --family %s]", label, family);
    int rc = build(&c, family);
    if (!rc)
        rc = kvp_hf_read_quant(root, m);
    json_decref(root);
    if (rc) {
        kvp_model_free(m);
        return -1;
    }
    *out = m;
    return 0;
}
