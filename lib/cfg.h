/* cfg.h - reading config.json values with provenance.
 *
 * A lookup tries text_config (multimodal wrappers keep the language model
 * there), then the top level, then a few other spellings of the same field
 * (vLLM's resolved names, DeepSeek's inference format), then the
 * architecture's transformers default.  Whatever answered is recorded as a
 * fact on the model, so every number kvplan prints can name its key. */
#ifndef KVP_CFG_H
#define KVP_CFG_H

#include <jansson.h>

#include "arch.h"
#include "kvp_int.h"

typedef struct cfg {
    json_t *root;
    json_t *text;          /* text_config, or root */
    const char *label;     /* the file, for messages */
    const arch_def *arch;
    kvp_model *m;
    kvp_error *err;
} cfg;

/* Parses text (bare Infinity/NaN tokens accepted, as Python writes them). */
json_t *cfg_parse(const char *text, size_t len, const char *label, kvp_error *err);

/* The value of key and the path it was found at ("text_config.head_dim");
 * NULL when absent or null. */
json_t *cfg_lookup(const cfg *c, const char *key, char *where, size_t wn);

/* Reads an unsigned integer in [lo, hi].  Required: absent is an error.
 * Optional: returns 0 and sets *found = 0 when absent (with no default).
 * The fact `fact` (NULL: none) records value and source. */
int cfg_uint(cfg *c, const char *key, uint64_t lo, uint64_t hi, const char *fact, uint64_t *out);
int cfg_uint_opt(cfg *c, const char *key, uint64_t lo, uint64_t hi, const char *fact,
                 uint64_t *out, int *found);
/* Per-layer form: the key may hold one number or an array of n_layers. */
int cfg_uint_layer(cfg *c, const char *key, uint32_t layer, uint64_t lo, uint64_t hi,
                   uint64_t *out);
/* A string field; NULL when absent. */
const char *cfg_str(const cfg *c, const char *key);
int cfg_bool(const cfg *c, const char *key);

void cfg_fact(cfg *c, const char *name, int64_t value, const char *source);

#endif
