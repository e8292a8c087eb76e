/* hf/windows.c - config.json architectures of the "windows" group (see arch.h):
 * the sliding-window successors that carry layer_types (OLMo 3, EXAONE 4),
 * the models whose sliding and full layers differ in shape (Gemma 4: a
 * global head dim and KV-head count, shared-KV layers; MiMo-V2-Flash: K and
 * V head dims per layer type), MiMo-7B, and the window models llama.cpp
 * v0.5.0 names (lib/llama/windows.c).  Their transformers defaults, the
 * readers for layouts no rule of arch.h describes, and their llama.cpp
 * names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hfconfig.h"

/* ---- building blocks ---------------------------------------------------------- */

static int read_layer_count(cfg *c)
{
    uint64_t n;
    return cfg_uint(c, "num_hidden_layers", 1, KVP_MAX_LAYERS, "layers", &n) ||
                   hf_layers(c, (uint32_t)n)
               ? -1 : 0;
}

/* layer_types when the config has it; else the class's own default layout:
 * full iff (i+1) % period == 0, the rest sliding (rule names the class). */
static int kinds_or_period(cfg *c, uint32_t period, const char *rule)
{
    int found;
    if (hf_kinds_from_layer_types(c, &found))
        return -1;
    if (found)
        return 0;
    for (uint32_t i = 0; i < c->m->n_layers; i++)
        c->m->layers[i].kind = (i + 1) % period == 0 ? KVP_LAYER_FULL : KVP_LAYER_SLIDING;
    cfg_fact(c, "layer kinds", c->m->n_layers, rule);
    return 0;
}

/* ---- OLMo 3 -------------------------------------------------------------------- */

static const arch_default olmo3_defaults[] = {
    /* transformers Olmo3Config (num_key_value_heads None: MHA) */
    {"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"sliding_window", 4096}, {"max_position_embeddings", 2048}, {"vocab_size", 50304},
    {"intermediate_size", 11008}, {NULL, 0}};

static int read_olmo3(cfg *c)
{
    return read_layer_count(c) ||
                   kinds_or_period(c, 4, "layer_types absent: Olmo3Config's default, full iff "
                                         "(i+1) % 4 == 0, else sliding") ||
                   hf_shapes(c)
               ? -1 : 0;
}

/* ---- EXAONE 4 ------------------------------------------------------------------ */

static const arch_default exaone4_defaults[] = {
    /* transformers Exaone4Config */
    {"num_hidden_layers", 32}, {"hidden_size", 4096}, {"num_attention_heads", 32},
    {"num_key_value_heads", 32}, {"sliding_window", 4096}, {"sliding_window_pattern", 4},
    {"max_position_embeddings", 2048}, {"vocab_size", 102400}, {"intermediate_size", 16384},
    {NULL, 0}};

/* Exaone4Config: layer_types, else sliding_window_pattern as a period (4)
 * or an "LLLG" string repeated over the layers; sliding_window null means
 * no window at all. */
static int kinds_exaone4(cfg *c)
{
    char where[96];
    int found;
    kvp_model *m = c->m;
    if (hf_kinds_from_layer_types(c, &found))
        return -1;
    if (found)
        return 0;
    json_t *w = json_object_get(c->text, "sliding_window");
    if (w && json_is_null(w)) {
        for (uint32_t i = 0; i < m->n_layers; i++)
            m->layers[i].kind = KVP_LAYER_FULL;
        cfg_fact(c, "layer kinds", m->n_layers, "sliding_window null: every layer full");
        return 0;
    }
    json_t *p = cfg_lookup(c, "sliding_window_pattern", where, sizeof where);
    if (json_is_string(p)) {
        const char *s = json_string_value(p);
        size_t n = strlen(s);
        if (!n || strspn(s, "LG") != n)
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s must be a string of L and G", c->label,
                            where);
        for (uint32_t i = 0; i < m->n_layers; i++)
            m->layers[i].kind = s[i % n] == 'L' ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
        cfg_fact(c, "layer kinds", m->n_layers,
                 "sliding_window_pattern string: L sliding, G full, repeated");
        return 0;
    }
    return hf_kinds_every(c, "sliding_window_pattern", NULL, KVP_LAYER_SLIDING,
                          "full iff (i+1) % sliding_window_pattern == 0, else sliding");
}

static int read_exaone4(cfg *c)
{
    return read_layer_count(c) || kinds_exaone4(c) || hf_shapes(c) ? -1 : 0;
}

/* ---- Gemma 4 ------------------------------------------------------------------- */

static const arch_default gemma4_defaults[] = {
    /* transformers Gemma4TextConfig (global_head_dim 512, sliding pattern 6) */
    {"num_hidden_layers", 30}, {"hidden_size", 2304}, {"num_attention_heads", 8},
    {"num_key_value_heads", 4}, {"head_dim", 256}, {"sliding_window", 512},
    {"max_position_embeddings", 131072}, {"vocab_size", 262144}, {"intermediate_size", 9216},
    {"num_kv_shared_layers", 0}, {"global_head_dim", 512}, {"hidden_size_per_layer_input", 256},
    {NULL, 0}};

/* One layer's override in Gemma 4's per_layer_config, when it has one. */
static int gemma4_override(cfg *c, uint32_t il, const char *key, uint64_t *v)
{
    char where[96], idx[16];
    json_t *plc = cfg_lookup(c, "per_layer_config", where, sizeof where);
    snprintf(idx, sizeof idx, "%u", il);
    json_t *x = json_is_object(plc) ? json_object_get(json_object_get(plc, idx), key) : NULL;
    if (!x || json_is_null(x))
        return 0;
    if (!json_is_integer(x) || json_integer_value(x) < 1 || json_integer_value(x) > KVP_MAX_DIM)
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s.%s.%s must be a positive integer", c->label,
                        where, idx, key);
    *v = (uint64_t)json_integer_value(x);
    return 0;
}

/* Gemma4TextConfig: layer_types (default: full iff (i+1) % 6 == 0), the last
 * layer always full.  Sliding layers: head_dim and num_key_value_heads; full
 * layers: global_head_dim and, with attention_k_eq_v, num_global_key_value_
 * heads (vLLM's Gemma4DecoderLayer, transformers' per_layer_config, which
 * also overrides either per layer).  The last num_kv_shared_layers reuse the
 * cache of the last earlier layer of their type (vLLM's
 * kv_sharing_target_layer_name). */
static int read_gemma4(cfg *c)
{
    kvp_model *m = c->m;
    uint64_t heads, kv, hd, ghd, gkv = 0, win, shared;
    int found, gkv_found = 0;
    if (read_layer_count(c) ||
        kinds_or_period(c, 6, "layer_types absent: Gemma4TextConfig's default, full iff "
                              "(i+1) % 6 == 0, else sliding"))
        return -1;
    if (m->layers[m->n_layers - 1].kind != KVP_LAYER_FULL) {
        m->layers[m->n_layers - 1].kind = KVP_LAYER_FULL;
        cfg_fact(c, "last layer full", m->n_layers - 1,
                 "Gemma4TextConfig forces the last layer to full_attention");
    }
    if (cfg_uint(c, "num_attention_heads", 1, KVP_MAX_HEADS, "num_attention_heads", &heads) ||
        cfg_uint(c, "num_key_value_heads", 1, KVP_MAX_HEADS, "kv heads (sliding)",
                 &kv) ||
        cfg_uint(c, "head_dim", 1, KVP_MAX_DIM, "head_dim (sliding)", &hd) ||
        cfg_uint(c, "global_head_dim", 1, KVP_MAX_DIM, "head_dim (full)", &ghd) ||
        cfg_uint(c, "sliding_window", 1, KVP_MAX_TOKENS, "sliding_window", &win) ||
        cfg_uint(c, "num_kv_shared_layers", 0, m->n_layers - 1, "num_kv_shared_layers", &shared))
        return -1;
    if (cfg_bool(c, "attention_k_eq_v") &&
        cfg_uint_opt(c, "num_global_key_value_heads", 1, KVP_MAX_HEADS,
                     "kv heads (full)", &gkv, &gkv_found))
        return -1;
    const char *bidi = cfg_str(c, "use_bidirectional_attention");
    if (bidi && !strcmp(bidi, "all")) {
        win = win / 2 + 1; /* Gemma4TextConfig: FlashAttention's exclusive bounds */
        cfg_fact(c, "sliding_window (bidirectional)", (int64_t)win,
                 "use_bidirectional_attention \"all\": sliding_window / 2 + 1");
    }
    m->n_heads = (uint32_t)heads;
    for (uint32_t il = 0; il < m->n_layers; il++) {
        kvp_layer *L = &m->layers[il];
        if (L->kind != KVP_LAYER_FULL && L->kind != KVP_LAYER_SLIDING)
            return kvp_fail(c->err, KVP_EINPUT, "%s: layer %u of Gemma 4 must be "
                            "sliding_attention or full_attention", c->label, il);
        int full = L->kind == KVP_LAYER_FULL;
        uint64_t d = full ? ghd : hd, k = full && gkv_found ? gkv : kv;
        if (gemma4_override(c, il, "head_dim", &d) ||
            gemma4_override(c, il, "num_key_value_heads", &k))
            return -1;
        L->n_head = (uint32_t)heads;
        L->n_kv_heads = (uint32_t)k;
        L->head_dim_k = L->head_dim_v = (uint32_t)d;
        L->window = full ? 0 : (uint32_t)(win > UINT32_MAX ? UINT32_MAX : win);
    }
    uint32_t first = m->n_layers - (uint32_t)shared;
    for (uint32_t il = first; il < m->n_layers; il++) {
        int32_t src = -1;
        for (uint32_t j = 0; j < first; j++)
            if (m->layers[j].kind == m->layers[il].kind)
                src = (int32_t)j;
        if (src < 0)
            return kvp_fail(c->err, KVP_EINPUT, "%s: shared-KV layer %u has no earlier %s layer "
                            "to reuse", c->label, il, kvp_layer_kind_name(m->layers[il].kind));
        m->layers[il].kind = KVP_LAYER_SHARED; /* the window stays: it says which cache */
        m->layers[il].shared_from = src;
    }
    if (shared)
        cfg_fact(c, "shared-KV layers", (int64_t)shared,
                 "num_kv_shared_layers: the last layers reuse the last earlier one of their type");
    /* the per-layer embedding width, for a full shape twin (lib/llama/windows.c) */
    uint64_t ple;
    if (cfg_uint_opt(c, "hidden_size_per_layer_input", 0, KVP_MAX_DIM,
                     "per-layer input width", &ple, &found))
        return -1;
    return 0;
}

/* ---- MiMo-V2-Flash --------------------------------------------------------------- */

/* One attention shape, read from the sliding (swa_) or the full keys. */
static int mimo2_shape(cfg *c, int swa, kvp_layer *L, uint64_t win)
{
    uint64_t heads, kv, hk, hv;
    int found;
    if (cfg_uint(c, swa ? "swa_num_attention_heads" : "num_attention_heads", 1, KVP_MAX_HEADS,
                 swa ? "swa_num_attention_heads" : "num_attention_heads", &heads) ||
        cfg_uint(c, swa ? "swa_num_key_value_heads" : "num_key_value_heads", 1, KVP_MAX_HEADS,
                 swa ? "swa_num_key_value_heads" : "num_key_value_heads", &kv) ||
        cfg_uint(c, swa ? "swa_head_dim" : "head_dim", 1, KVP_MAX_DIM,
                 swa ? "swa_head_dim (K)" : "head_dim (K)", &hk) ||
        cfg_uint_opt(c, swa ? "swa_v_head_dim" : "v_head_dim", 1, KVP_MAX_DIM,
                     swa ? "swa_v_head_dim (V)" : "v_head_dim (V)", &hv, &found))
        return -1;
    L->n_head = (uint32_t)heads;
    L->n_kv_heads = (uint32_t)kv;
    L->head_dim_k = (uint32_t)hk;
    L->head_dim_v = (uint32_t)(found ? hv : hk); /* vLLM: v_head_dim or head_dim */
    L->window = swa ? (uint32_t)(win > UINT32_MAX ? UINT32_MAX : win) : 0;
    return 0;
}

/* MiMo-V2 (-Flash, V2.5...): hybrid_layer_pattern 1 marks a sliding layer
 * with its own heads, KV heads and K/V head dims (swa_*); the window is
 * sliding_window_size (vLLM's MiMoV2FlashDecoderLayer), else
 * sliding_window.  MTP layers are not in num_hidden_layers. */
static int read_mimo2(cfg *c)
{
    char where[96];
    kvp_model *m = c->m;
    uint64_t win = 0;
    int found;
    if (read_layer_count(c))
        return -1;
    json_t *p = cfg_lookup(c, "hybrid_layer_pattern", where, sizeof where);
    if (p) {
        if (!json_is_array(p) || json_array_size(p) != m->n_layers)
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s must list one 0 or 1 per layer (%u)",
                            c->label, where, m->n_layers);
        for (uint32_t i = 0; i < m->n_layers; i++) {
            json_t *x = json_array_get(p, i);
            if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > 1)
                return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%u] must be 0 or 1", c->label,
                                where, i);
            m->layers[i].kind = json_integer_value(x) ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
        }
        cfg_fact(c, "layer kinds", m->n_layers, "hybrid_layer_pattern: 1 sliding, 0 full");
    } else if (hf_kinds_from_layer_types(c, &found) || !found) {
        return found ? -1 : kvp_fail(c->err, KVP_EINPUT, "%s: missing required field "
                                     "\"hybrid_layer_pattern\" (or layer_types)", c->label);
    }
    if (cfg_uint_opt(c, "sliding_window_size", 1, KVP_MAX_TOKENS, "sliding_window", &win,
                     &found) ||
        (!found && kvp_model_count_kind(m, KVP_LAYER_SLIDING) &&
         cfg_uint(c, "sliding_window", 1, KVP_MAX_TOKENS, "sliding_window", &win)))
        return -1;
    for (uint32_t il = 0; il < m->n_layers; il++)
        if (mimo2_shape(c, m->layers[il].kind == KVP_LAYER_SLIDING, &m->layers[il], win))
            return -1;
    m->n_heads = m->layers[0].n_head;
    /* the leading dense layers (moe_layer_freq 0), for a shape twin */
    json_t *f = cfg_lookup(c, "moe_layer_freq", where, sizeof where);
    for (size_t i = 0; json_is_array(f) && i < json_array_size(f) &&
                       json_integer_value(json_array_get(f, i)) == 0; i++)
        m->n_layer_dense_lead = (uint32_t)i + 1;
    return 0;
}

/* ---- the window models llama.cpp v0.5.0 names ------------------------------------ */

/* layer_types, required (the converters read it) */
static int kinds_layer_types(cfg *c)
{
    int found;
    if (hf_kinds_from_layer_types(c, &found))
        return -1;
    return found ? 0 : kvp_fail(c->err, KVP_EINPUT, "%s: missing required field \"layer_types\"",
                                c->label);
}

/* The leading dense layers of an "mlp_layer_types" list ("dense", ...), for
 * shape twins. */
static void dense_lead_from_types(cfg *c, const char *key)
{
    char where[96];
    json_t *v = cfg_lookup(c, key, where, sizeof where);
    uint32_t n = 0;
    while (json_is_array(v) && n < json_array_size(v) && json_is_string(json_array_get(v, n)) &&
           !strcmp(json_string_value(json_array_get(v, n)), "dense"))
        n++;
    if (n)
        c->m->n_layer_dense_lead = n;
}

/* An integer config value for a shape twin (no provenance: it never sizes
 * the cache); 0 when absent. */
static uint64_t twin_value(cfg *c, const char *key)
{
    uint64_t v = 0;
    int found;
    return cfg_uint_opt(c, key, 0, 1ull << 32, NULL, &v, &found) ? 0 : v;
}

/* Standard attention layers whose kinds come from layer_types. */
static int read_by_layer_types(cfg *c)
{
    return read_layer_count(c) || kinds_layer_types(c) || hf_shapes(c) ? -1 : 0;
}

/* K-EXAONE (exaone_moe): EXAONE 4's layout over DeepSeek-style experts */
static int read_exaone_moe(cfg *c)
{
    if (read_exaone4(c))
        return -1;
    c->m->n_expert_shared = (uint32_t)twin_value(c, "num_shared_experts");
    c->m->n_ff_shexp = twin_value(c, "moe_intermediate_size") * c->m->n_expert_shared;
    return 0;
}

static const arch_default afmoe_defaults[] = {
    /* transformers AfmoeConfig (num_key_value_heads None: MHA) */
    {"num_hidden_layers", 32}, {"hidden_size", 2048}, {"num_attention_heads", 16},
    {"head_dim", 128}, {"sliding_window", 1024}, {"global_attn_every_n_layers", 4},
    {"max_position_embeddings", 16384}, {"vocab_size", 200192}, {"intermediate_size", 6144},
    {"moe_intermediate_size", 1408}, {"num_experts", 64}, {"num_experts_per_tok", 6},
    {NULL, 0}};

/* AfmoeConfig: layer_types, else full iff (i+1) % global_attn_every_n_layers == 0 */
static int read_afmoe(cfg *c)
{
    int found;
    if (read_layer_count(c) || hf_kinds_from_layer_types(c, &found) ||
        (!found && hf_kinds_every(c, "global_attn_every_n_layers", NULL, KVP_LAYER_SLIDING,
                                  "full iff (i+1) % global_attn_every_n_layers == 0, else "
                                  "sliding")) ||
        hf_shapes(c))
        return -1;
    c->m->n_layer_dense_lead = (uint32_t)twin_value(c, "num_dense_layers");
    c->m->n_expert_shared = (uint32_t)twin_value(c, "num_shared_experts");
    return 0;
}

/* SmallThinker: sliding_window_layout (1 sliding, 0 full) with
 * sliding_window_size (vLLM's SmallThinker attention); the primary experts
 * under their own names. */
static int read_smallthinker(cfg *c)
{
    char where[96];
    int found;
    kvp_model *m = c->m;
    if (read_layer_count(c))
        return -1;
    json_t *v = cfg_lookup(c, "sliding_window_layout", where, sizeof where);
    if (v) {
        if (!json_is_array(v) || json_array_size(v) != m->n_layers)
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s must list one 0 or 1 per layer (%u)",
                            c->label, where, m->n_layers);
        for (uint32_t i = 0; i < m->n_layers; i++)
            m->layers[i].kind = json_is_true(json_array_get(v, i)) ||
                                        json_integer_value(json_array_get(v, i)) != 0
                                    ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
        cfg_fact(c, "layer kinds", m->n_layers, "sliding_window_layout: 1 sliding, 0 full");
    } else if (hf_kinds_from_layer_types(c, &found)) {
        return -1;
    } else if (!found) {
        for (uint32_t i = 0; i < m->n_layers; i++)
            m->layers[i].kind = KVP_LAYER_FULL;
        cfg_fact(c, "layer kinds", m->n_layers, "no sliding_window_layout: every layer full");
    }
    if (hf_shapes(c))
        return -1;
    m->n_expert = (uint32_t)twin_value(c, "moe_num_primary_experts");
    m->n_expert_used = (uint32_t)twin_value(c, "moe_num_active_primary_experts");
    m->n_ff_exp = twin_value(c, "moe_ffn_hidden_size");
    return 0;
}

/* Laguna: layer_types, else (a window set) full at i % 4 == 0 as in XS.2;
 * num_attention_heads_per_layer overrides the query heads per layer. */
static int read_laguna(cfg *c)
{
    char where[96];
    int typed, found;
    uint64_t win = 0;
    kvp_model *m = c->m;
    if (read_layer_count(c) || hf_kinds_from_layer_types(c, &typed) ||
        cfg_uint_opt(c, "sliding_window", 0, KVP_MAX_TOKENS, NULL, &win, &found))
        return -1;
    if (!typed) {
        for (uint32_t i = 0; i < m->n_layers; i++)
            m->layers[i].kind = win && i % 4 ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
        cfg_fact(c, "layer kinds", m->n_layers,
                 win ? "layer_types absent: full at i % 4 == 0, else sliding (Laguna XS.2)"
                     : "no sliding_window: every layer full");
    }
    if (hf_shapes(c))
        return -1;
    json_t *h = cfg_lookup(c, "num_attention_heads_per_layer", where, sizeof where);
    if (h) {
        for (uint32_t i = 0; i < m->n_layers; i++) {
            uint64_t v;
            if (cfg_uint_layer(c, "num_attention_heads_per_layer", i, 1, KVP_MAX_HEADS, &v))
                return -1;
            m->layers[i].n_head = (uint32_t)v;
        }
        m->n_heads = m->layers[0].n_head;
    }
    dense_lead_from_types(c, "mlp_layer_types");
    return 0;
}

/* PLaMo 3: layer_types, else a window list (null for full layers), else
 * full iff (i+1) % sliding_window_pattern == 0; the window is window_size
 * or the list's value (vLLM's interleaved_sliding_window). */
static int read_plamo3(cfg *c)
{
    char where[96];
    int found;
    kvp_model *m = c->m;
    uint64_t win = 0;
    if (read_layer_count(c) || hf_kinds_from_layer_types(c, &found))
        return -1;
    json_t *sw = cfg_lookup(c, "sliding_window", where, sizeof where);
    if (!found && json_is_array(sw)) {
        if (json_array_size(sw) != m->n_layers)
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s must list one window per layer (%u)",
                            c->label, where, m->n_layers);
        for (uint32_t i = 0; i < m->n_layers; i++)
            m->layers[i].kind = json_is_null(json_array_get(sw, i)) ? KVP_LAYER_FULL
                                                                   : KVP_LAYER_SLIDING;
        cfg_fact(c, "layer kinds", m->n_layers, "sliding_window list: null full, else sliding");
    } else if (!found && hf_kinds_every(c, "sliding_window_pattern", NULL, KVP_LAYER_SLIDING,
                                        "full iff (i+1) % sliding_window_pattern == 0, else "
                                        "sliding")) {
        return -1;
    }
    if (cfg_uint_opt(c, "window_size", 1, KVP_MAX_TOKENS, "sliding_window", &win, &found))
        return -1;
    for (uint32_t i = 0; !found && json_is_array(sw) && i < json_array_size(sw); i++)
        if (json_is_integer(json_array_get(sw, i)) && json_integer_value(json_array_get(sw, i)) > 0) {
            win = (uint64_t)json_integer_value(json_array_get(sw, i));
            found = 1;
            cfg_fact(c, "sliding_window", (int64_t)win, "sliding_window (the list's window)");
        }
    for (uint32_t i = 0; i < m->n_layers; i++) {
        kvp_layer *L = &m->layers[i];
        kvp_layer_kind k = L->kind;
        L->kind = KVP_LAYER_FULL; /* the shape; the window is set here */
        if (hf_read_attention(c, i, L))
            return -1;
        L->kind = k;
        if (k == KVP_LAYER_SLIDING) {
            if (!found)
                return kvp_fail(c->err, KVP_EINPUT, "%s: missing required field \"window_size\"",
                                c->label);
            L->window = (uint32_t)(win > UINT32_MAX ? UINT32_MAX : win);
        }
    }
    return 0;
}

static const arch_default granite_swa_defaults[] = {
    /* the llama.cpp converter's fallback window (GraniteSWAModel) */
    {"sliding_window", 128}, {NULL, 0}};

/* Granite SWA: layer_types, else sliding iff i % 4 != 0 (the converter's
 * and transformers' default) */
static int read_granite_swa(cfg *c)
{
    int found;
    kvp_model *m = c->m;
    if (read_layer_count(c) || hf_kinds_from_layer_types(c, &found))
        return -1;
    if (!found) {
        for (uint32_t i = 0; i < m->n_layers; i++)
            m->layers[i].kind = i % 4 ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
        cfg_fact(c, "layer kinds", m->n_layers, "layer_types absent: full at i % 4 == 0, else sliding");
    }
    return hf_shapes(c);
}

/* Mellum: layer_types, unless use_sliding_window is false */
static int read_mellum(cfg *c)
{
    char where[96];
    json_t *u = cfg_lookup(c, "use_sliding_window", where, sizeof where);
    if (read_layer_count(c))
        return -1;
    if (json_is_false(u)) {
        for (uint32_t i = 0; i < c->m->n_layers; i++)
            c->m->layers[i].kind = KVP_LAYER_FULL;
        cfg_fact(c, "layer kinds", c->m->n_layers, "use_sliding_window false: every layer full");
    } else if (kinds_layer_types(c)) {
        return -1;
    }
    return hf_shapes(c);
}

/* Cohere2 MoE: layer_types; the experts are intermediate_size wide */
static int read_cohere2_moe(cfg *c)
{
    if (read_by_layer_types(c))
        return -1;
    dense_lead_from_types(c, "mlp_layer_types");
    c->m->n_expert_shared = (uint32_t)twin_value(c, "num_shared_experts");
    return 0;
}

/* Spark 2.5: layer_types; vLLM has no implementation */
static int read_spark2_5(cfg *c)
{
    if (read_by_layer_types(c))
        return -1;
    snprintf(c->m->vllm_refusal, sizeof c->m->vllm_refusal,
             "vLLM has no Spark2_5ForCausalLM implementation (no KV cache spec to size)");
    return 0;
}

/* Step 3.5: layer_types also lists the MTP layers (the first
 * num_hidden_layers are the trunk's); full layers have num_attention_heads
 * and num_attention_groups KV heads of head_dim, sliding ones
 * attention_other_setting's counts and head_dim (vLLM's Step3p5Attention). */
static int read_step35(cfg *c)
{
    char where[96];
    kvp_model *m = c->m;
    uint64_t h, g, hs = 0, gs = 0, hd, win = 0;
    if (read_layer_count(c))
        return -1;
    json_t *lt = cfg_lookup(c, "layer_types", where, sizeof where);
    if (!json_is_array(lt) || json_array_size(lt) < m->n_layers)
        return kvp_fail(c->err, KVP_EINPUT, "%s: layer_types must list at least the %u trunk "
                        "layers", c->label, m->n_layers);
    for (uint32_t i = 0; i < m->n_layers; i++) {
        json_t *t = json_array_get(lt, i);
        if (!json_is_string(t) || hf_kind_from_name(json_string_value(t), &m->layers[i].kind))
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s[%u]: unknown layer type", c->label,
                            where, i);
    }
    cfg_fact(c, "layer kinds", m->n_layers, "layer_types (the trunk's entries)");
    if (cfg_uint(c, "num_attention_heads", 1, KVP_MAX_HEADS, "num_attention_heads", &h) ||
        cfg_uint(c, "num_attention_groups", 1, KVP_MAX_HEADS, "num_attention_groups (KV)", &g) ||
        cfg_uint(c, "head_dim", 1, KVP_MAX_DIM, "head_dim", &hd))
        return -1;
    json_t *o = cfg_lookup(c, "attention_other_setting", where, sizeof where);
    json_t *oh = json_object_get(o, "num_attention_heads"), *og = json_object_get(o, "num_attention_groups"),
           *od = json_object_get(o, "head_dim");
    hs = json_is_integer(oh) ? (uint64_t)json_integer_value(oh) : h;
    gs = json_is_integer(og) ? (uint64_t)json_integer_value(og) : g;
    uint64_t hds = json_is_integer(od) ? (uint64_t)json_integer_value(od) : hd;
    if (!hs || !gs || !hds || hs > KVP_MAX_HEADS || gs > KVP_MAX_HEADS || hds > KVP_MAX_DIM)
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s heads out of range", c->label, where);
    if (json_is_object(o))
        cfg_fact(c, "kv heads (sliding)", (int64_t)gs, "attention_other_setting.num_attention_groups");
    if (kvp_model_count_kind(m, KVP_LAYER_SLIDING) &&
        cfg_uint(c, "sliding_window", 1, KVP_MAX_TOKENS, "sliding_window", &win))
        return -1;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        kvp_layer *L = &m->layers[i];
        int swa = L->kind == KVP_LAYER_SLIDING;
        if (!swa && L->kind != KVP_LAYER_FULL)
            return kvp_fail(c->err, KVP_EINPUT, "%s: layer %u of Step 3.5 must be sliding or full "
                            "attention", c->label, i);
        L->n_head = (uint32_t)(swa ? hs : h);
        L->n_kv_heads = (uint32_t)(swa ? gs : g);
        L->head_dim_k = L->head_dim_v = (uint32_t)(swa ? hds : hd);
        L->window = swa ? (uint32_t)(win > UINT32_MAX ? UINT32_MAX : win) : 0;
    }
    m->n_heads = m->layers[0].n_head;
    m->n_expert = (uint32_t)twin_value(c, "moe_num_experts");
    m->n_expert_used = (uint32_t)twin_value(c, "moe_top_k");
    m->n_ff_shexp = twin_value(c, "share_expert_dim");
    /* moe_layers_enum: "3,4,5,...", the MoE layers; the ones before are dense */
    const char *e = cfg_str(c, "moe_layers_enum");
    if (e && *e)
        m->n_layer_dense_lead = (uint32_t)strtoul(e, NULL, 10);
    return 0;
}

/* ---- the table ------------------------------------------------------------------- */

static const arch_default none_defaults[] = {{NULL, 0}};

/* SmallThinker's window key */
static const arch_alias smallthinker_aliases[] = {{"sliding_window", "sliding_window_size"},
                                                  {NULL, NULL}};

static const arch_def defs[] = {
    {"olmo3", "olmo3", "Olmo3ForCausalLM", LAYOUT_PERIOD, "Olmo3Config", olmo3_defaults, NULL,
     read_olmo3},
    {"exaone4", "exaone4", "Exaone4ForCausalLM", LAYOUT_PERIOD, "Exaone4Config",
     exaone4_defaults, NULL, read_exaone4},
    {"gemma4", "gemma4 gemma4_text", "Gemma4ForConditionalGeneration Gemma4ForCausalLM",
     LAYOUT_PERIOD, "Gemma4TextConfig", gemma4_defaults, NULL, read_gemma4},
    {"mimo2", "mimo_v2_flash mimo_v2", "MiMoV2FlashForCausalLM MiMoV2ForCausalLM",
     LAYOUT_PERIOD, NULL, none_defaults, NULL, read_mimo2},
    /* MiMo-7B: Qwen2 with MTP layers that vLLM loads only in its draft model */
    {"mimo", "mimo", "MiMoForCausalLM", LAYOUT_QWEN, NULL, none_defaults, NULL, NULL},
    {"exaone-moe", "exaone_moe", "ExaoneMoEForCausalLM ExaoneMoeForCausalLM", LAYOUT_PERIOD,
     NULL, none_defaults, NULL, read_exaone_moe},
    {"afmoe", "afmoe", "AfmoeForCausalLM", LAYOUT_PERIOD, "AfmoeConfig", afmoe_defaults, NULL,
     read_afmoe},
    {"muse-glimmer", "muse_glimmer", "MuseGlimmerForConditionalGeneration MuseGlimmerForCausalLM",
     LAYOUT_PERIOD, NULL, none_defaults, NULL, read_by_layer_types},
    {"smallthinker", "smallthinker", "SmallThinkerForCausalLM", LAYOUT_PERIOD, NULL,
     none_defaults, smallthinker_aliases, read_smallthinker},
    {"laguna", "laguna", "LagunaForCausalLM", LAYOUT_PERIOD, NULL, none_defaults, NULL,
     read_laguna},
    {"plamo3", "plamo3", "Plamo3ForCausalLM PLaMo3ForCausalLM", LAYOUT_PERIOD, NULL,
     none_defaults, NULL, read_plamo3},
    {"granite-swa", "granite_swa granitemoeswa", "GraniteSWAForCausalLM GraniteMoeSWAForCausalLM",
     LAYOUT_PERIOD, "GraniteSWAModel (llama.cpp converter)", granite_swa_defaults, NULL,
     read_granite_swa},
    {"maple", "maple", "MapleForCausalLM", LAYOUT_PERIOD, NULL, none_defaults, NULL,
     read_by_layer_types},
    {"step35", "step3p5", "Step3p5ForCausalLM", LAYOUT_PERIOD, NULL, none_defaults, NULL,
     read_step35},
    {"spark2_5", "spark2_5", "Spark2_5ForCausalLM", LAYOUT_PERIOD, NULL, none_defaults, NULL,
     read_spark2_5},
    {"mellum", "mellum", "MellumForCausalLM", LAYOUT_PERIOD, NULL, none_defaults, NULL,
     read_mellum},
    {"cohere2-moe", "cohere2_moe", "Cohere2MoeForCausalLM", LAYOUT_PERIOD, NULL, none_defaults,
     NULL, read_cohere2_moe},
};

static const arch_gguf gguf[] = {
    {"olmo3", "olmo2"}, /* convert_hf_to_gguf: Olmo3ForCausalLM is an olmo2 GGUF */
    {"exaone4", "exaone4"},
    {"gemma4", "gemma4"},
    {"gemma4_text", "gemma4"},
    {"mimo_v2_flash", "mimo2"},
    {"mimo_v2", "mimo2"},
    {"exaone_moe", "exaone-moe"},
    {"afmoe", "afmoe"},
    {"muse_glimmer", "muse-glimmer"},
    {"smallthinker", "smallthinker"},
    {"laguna", "laguna"},
    {"plamo3", "plamo3"},
    {"granite_swa", "granite_swa"},
    {"granitemoeswa", "granite_swa"},
    {"maple", "maple"},
    {"step3p5", "step35"},
    {"spark2_5", "spark2_5"},
    {"mellum", "mellum"},
    {"cohere2_moe", "cohere2moe"},
};

const arch_group arch_group_windows = {
    .defs = defs, .n_defs = sizeof defs / sizeof defs[0],
    .gguf = gguf, .n_gguf = sizeof gguf / sizeof gguf[0],
};
