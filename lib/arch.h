/* arch.h - per-architecture knowledge: which config.json model_type (or
 * architectures class) is read by which layout rule, and the transformers
 * defaults that apply when a field is omitted from the file. */
#ifndef KVP_ARCH_H
#define KVP_ARCH_H

#include <stdint.h>

/* How the per-layer kinds are laid out when the config has no layer_types. */
typedef enum arch_layout {
    LAYOUT_FULL,          /* every layer full attention */
    LAYOUT_ALL_IF_WINDOW, /* every layer sliding when sliding_window is set (Mistral) */
    LAYOUT_QWEN,          /* use_sliding_window: layers >= max_window_layers slide */
    LAYOUT_EVEN_SLIDING,  /* layer i slides iff i is even (Gemma 2, gpt-oss) */
    LAYOUT_PERIOD,        /* full iff (i+1) % sliding_window_pattern == 0 (Gemma 3, Cohere2) */
    LAYOUT_CHUNKED,       /* Llama 4: NoPE layers full, the rest chunked */
    LAYOUT_MLA,           /* DeepSeek latent attention on every layer */
    LAYOUT_GDN,           /* Gated DeltaNet, full iff (i+1) % full_attention_interval == 0 */
    LAYOUT_JAMBA,         /* attention iff i % attn_layer_period == attn_layer_offset, else Mamba */
    LAYOUT_NEMOTRON_H,    /* hybrid_override_pattern: M Mamba2, * attention, - and E none */
    LAYOUT_MAMBA1,        /* every layer Mamba */
    LAYOUT_MAMBA2,        /* every layer Mamba2 */
    LAYOUT_FALCON_H1,     /* every layer attention and Mamba2 side by side */
    LAYOUT_GRANITE_HYBRID,/* layer_types: mamba (Mamba2) or attention */
    LAYOUT_LFM2,          /* layer_types / full_attn_idxs: attention or short conv */
    LAYOUT_GEMMA3N,       /* Gemma 3 pattern (5); the last num_kv_shared_layers share KV */
} arch_layout;

typedef struct arch_default {
    const char *key;
    int64_t value;
} arch_default;

/* This architecture's own spelling of a field kvplan reads by its usual
 * name ("n_head" for "num_attention_heads"). */
typedef struct arch_alias {
    const char *key, *alias;
} arch_alias;

struct cfg;

typedef struct arch_def {
    const char *family;          /* kvplan's name for the rule set */
    const char *model_types;     /* space-separated config model_type values */
    const char *classes;         /* space-separated `architectures` classes */
    arch_layout layout;
    const char *defaults_from;   /* transformers class whose defaults apply */
    const arch_default *defaults;/* terminated by a NULL key; NULL: none */
    const arch_alias *aliases;   /* terminated by a NULL key; NULL: none */
    /* Reads the layer count, kinds and shapes itself (hfconfig.h has the
     * building blocks), for a layout no rule above describes; NULL: the
     * layout rule does. */
    int (*read)(struct cfg *c);
} arch_def;

/* config.json model_type -> llama.cpp's general.architecture, as its
 * converter (convert_hf_to_gguf.py) writes it. */
typedef struct arch_gguf {
    const char *model_type, *gguf;
} arch_gguf;

/* A family whose reader refuses every config (and says why in full), with
 * the short reason `kvplan archs` prints. */
typedef struct arch_refusal {
    const char *family, *why;
} arch_refusal;

/* A family of architectures kept in a file of its own (lib/hf/<group>.c):
 * its rule sets and its llama.cpp names.  Adding an architecture is a row
 * in one group. */
typedef struct arch_group {
    const arch_def *defs;
    size_t n_defs;
    const arch_gguf *gguf;
    size_t n_gguf;
    const struct arch_refusal *refused; /* {NULL, NULL} ends it; NULL: none */
} arch_group;

extern const arch_group arch_group_classic, arch_group_dense, arch_group_modern,
    arch_group_windows, arch_group_state, arch_group_indexed, arch_group_registry;

/* The rule set kvplan calls family ("llama", "gemma3", ...), for --family. */
const arch_def *arch_find_family(const char *family);
/* Space-separated list of every family name. */
const char *arch_family_list(void);

/* Finds the rule set for a config: an `architectures` class wins over the
 * model_type (a "mamba" model_type with Mamba2ForCausalLM is Mamba2). */
const arch_def *arch_find(const char *model_type, const char *const *classes, size_t n_classes);
/* The transformers default for key, if the architecture has one. */
const arch_default *arch_default_for(const arch_def *a, const char *key);
/* llama.cpp's architecture name for a config model_type ("" if none). */
const char *arch_gguf_name(const char *model_type, const arch_def *a);

/* The core nemotron-h row's reader and spellings, kept with the state
 * group (lib/hf/state.c): hybrid_override_pattern or layers_block_type. */
extern const arch_alias hf_nemotron_h_aliases[];
int hf_read_nemotron_h(struct cfg *c);

#endif
