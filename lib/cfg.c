/* cfg.c - config.json access with provenance; see cfg.h. */
#include <stdio.h>
#include <string.h>

#include "cfg.h"

/* Python's json module writes non-finite floats as bare Infinity, -Infinity
 * and NaN (Nemotron-H's time_step_limit).  jansson rejects them, so they are
 * replaced, outside strings, by finite numbers of the same length, which
 * keeps every line and column of later errors true.  No field kvplan reads
 * is ever non-finite. */
static void neutralize_nonfinite(char *s, size_t n)
{
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        if (in_str) {
            if (s[i] == '\\')
                i++;
            else if (s[i] == '"')
                in_str = 0;
        } else if (s[i] == '"') {
            in_str = 1;
        } else if (n - i >= 8 && memcmp(s + i, "Infinity", 8) == 0) {
            memcpy(s + i, "1.0e308 ", 8);
            i += 7;
        } else if (n - i >= 3 && memcmp(s + i, "NaN", 3) == 0) {
            memcpy(s + i, "0.0", 3);
            i += 2;
        }
    }
}

json_t *cfg_parse(const char *text, size_t len, const char *label, kvp_error *err)
{
    char *copy = malloc(len + 1);
    if (!copy) {
        kvp_fail(err, KVP_EINPUT, "%s: out of memory reading %zu bytes", label, len);
        return NULL;
    }
    memcpy(copy, text, len);
    copy[len] = 0;
    neutralize_nonfinite(copy, len);
    json_error_t je;
    json_t *root = json_loadb(copy, len, JSON_REJECT_DUPLICATES, &je);
    free(copy);
    if (!root) {
        kvp_fail(err, KVP_EINPUT, "%s:%d:%d: invalid JSON: %s", label, je.line, je.column,
                 je.text);
        return NULL;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        kvp_fail(err, KVP_EINPUT, "%s: not a config: the JSON top level is not an object",
                 label);
        return NULL;
    }
    return root;
}

/* Other spellings of a field: vLLM's resolved-architecture names and
 * DeepSeek's inference-config names.  An architecture's own spellings
 * (arch_def.aliases) are tried first. */
static const struct {
    const char *key, *alias;
} aliases[] = {
    {"num_hidden_layers", "total_num_hidden_layers"},
    {"num_hidden_layers", "n_layers"},
    {"num_hidden_layers", "n_layer"},
    {"num_attention_heads", "total_num_attention_heads"},
    {"num_attention_heads", "n_heads"},
    {"num_key_value_heads", "total_num_kv_heads"},
    {"head_dim", "head_size"},
    {"hidden_size", "dim"},
    {"hidden_size", "d_model"},
    {"torch_dtype", "dtype"},
};

static json_t *lookup_one(const cfg *c, const char *key, char *where, size_t wn)
{
    json_t *v;
    if (c->text != c->root && (v = json_object_get(c->text, key)) && !json_is_null(v)) {
        snprintf(where, wn, "text_config.%s", key);
        return v;
    }
    if ((v = json_object_get(c->root, key)) && !json_is_null(v)) {
        snprintf(where, wn, "%s", key);
        return v;
    }
    return NULL;
}

json_t *cfg_lookup(const cfg *c, const char *key, char *where, size_t wn)
{
    json_t *v = lookup_one(c, key, where, wn);
    for (const arch_alias *a = c->arch ? c->arch->aliases : NULL; !v && a && a->key; a++)
        if (strcmp(a->key, key) == 0)
            v = lookup_one(c, a->alias, where, wn);
    for (size_t i = 0; !v && i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(aliases[i].key, key) == 0)
            v = lookup_one(c, aliases[i].alias, where, wn);
    return v;
}

void cfg_fact(cfg *c, const char *name, int64_t value, const char *source)
{
    kvp_model_fact(c->m, name, value, source);
}

/* Converts a JSON number to an integer in [lo, hi]; integral reals (4096.0)
 * count as integers. */
static int to_uint(const cfg *c, json_t *v, const char *where, uint64_t lo, uint64_t hi,
                   uint64_t *out)
{
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i >= 0 && (uint64_t)i >= lo && (uint64_t)i <= hi) {
            *out = (uint64_t)i;
            return 0;
        }
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s = %lld is out of range [%llu, %llu]",
                        c->label, where, (long long)i, (unsigned long long)lo,
                        (unsigned long long)hi);
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d >= (double)lo && d <= (double)hi && d == (double)(uint64_t)d) {
            *out = (uint64_t)d;
            return 0;
        }
        return kvp_fail(c->err, KVP_EINPUT, "%s: %s = %g is not an integer in [%llu, %llu]",
                        c->label, where, d, (unsigned long long)lo, (unsigned long long)hi);
    }
    return kvp_fail(c->err, KVP_EINPUT, "%s: %s must be a number", c->label, where);
}

int cfg_uint_opt(cfg *c, const char *key, uint64_t lo, uint64_t hi, const char *fact,
                 uint64_t *out, int *found)
{
    char where[96];
    json_t *v = cfg_lookup(c, key, where, sizeof where);
    if (v) {
        if (json_is_array(v))
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s is a list; expected one number",
                            c->label, where);
        if (to_uint(c, v, where, lo, hi, out))
            return -1;
        *found = 1;
        if (fact)
            cfg_fact(c, fact, (int64_t)*out, where);
        return 0;
    }
    const arch_default *d = c->arch ? arch_default_for(c->arch, key) : NULL;
    if (d) {
        char src[120];
        *out = (uint64_t)d->value;
        *found = 1;
        snprintf(src, sizeof src, "%s absent: transformers default (%s)", key,
                 c->arch->defaults_from ? c->arch->defaults_from : c->arch->family);
        if (fact)
            cfg_fact(c, fact, d->value, src);
        return 0;
    }
    *found = 0;
    return 0;
}

int cfg_uint(cfg *c, const char *key, uint64_t lo, uint64_t hi, const char *fact, uint64_t *out)
{
    int found;
    if (cfg_uint_opt(c, key, lo, hi, fact, out, &found))
        return -1;
    if (!found)
        return kvp_fail(c->err, KVP_EINPUT, "%s: missing required field \"%s\"", c->label, key);
    return 0;
}

int cfg_uint_layer(cfg *c, const char *key, uint32_t layer, uint64_t lo, uint64_t hi,
                   uint64_t *out)
{
    char where[96];
    json_t *v = cfg_lookup(c, key, where, sizeof where);
    if (v && json_is_array(v)) {
        if (json_array_size(v) != c->m->n_layers)
            return kvp_fail(c->err, KVP_EINPUT, "%s: %s has %zu entries for %u layers",
                            c->label, where, json_array_size(v), c->m->n_layers);
        char item[128];
        snprintf(item, sizeof item, "%s[%u]", where, layer);
        if (to_uint(c, json_array_get(v, layer), item, lo, hi, out))
            return -1;
        if (layer == 0) {
            snprintf(item, sizeof item, "%s (one entry per layer)", where);
            cfg_fact(c, key, -1, item);
        }
        return 0;
    }
    return cfg_uint(c, key, lo, hi, key, out);
}

const char *cfg_str(const cfg *c, const char *key)
{
    char where[96];
    json_t *v = cfg_lookup(c, key, where, sizeof where);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

int cfg_bool(const cfg *c, const char *key)
{
    char where[96];
    json_t *v = cfg_lookup(c, key, where, sizeof where);
    return json_is_true(v);
}
