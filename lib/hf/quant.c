/* quant.c - a config.json's quantization_config read into kvp_model.quant,
 * and whether the config carries a vision or audio tower.  vLLM keeps
 * quantized weights in the checkpoint's packed layouts, so what it holds in
 * GPU memory (lib/vllm_weights.c) needs the format of each linear layer and
 * the modules left unquantized.  A method or option kvplan does not know
 * sets KVP_QM_UNKNOWN with the reason: the weights are then unknown, never a
 * plausible wrong number. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "../kvp_int.h"

static void unknown(kvp_quant *q, const char *fmt, ...) KVP_PRINTF(2, 3);
static void unknown(kvp_quant *q, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q->why, sizeof q->why, fmt, ap);
    va_end(ap);
    q->method = KVP_QM_UNKNOWN;
}

static const char *str(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* An integer field (0 when absent or not a small integer; -1 stays -1). */
static long num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < -1 || json_integer_value(v) > 1 << 20)
        return 0;
    return (long)json_integer_value(v);
}

/* A boolean field, def when absent. */
static int flag(json_t *o, const char *key, int def)
{
    json_t *v = json_object_get(o, key);
    return json_is_boolean(v) ? json_is_true(v) : def;
}

/* ---- module patterns ------------------------------------------------------- */

/* Vision towers and projectors: not the language model's (vLLM leaves them
 * unquantized in the checkpoints that name them here). */
static int encoder_module(const char *p)
{
    static const char *words[] = {"vision", "visual", "multi_modal", "mm_projector", "audio",
                                  "image_newline", "patch_embed"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(p, words[i]))
            return 1;
    return 0;
}

/* "…layers.17.mlp.gate" -> "layers.#.mlp.gate" and 17; prefixes before
 * "layers." (model., language_model.model.) are dropped. */
static int layer_form(const char *p, char *out, size_t n, long *layer)
{
    const char *l = strstr(p, "layers.");
    *layer = -1;
    if (!l) {
        snprintf(out, n, "%s", p);
        return 0;
    }
    const char *d = l + 7, *e = d;
    while (isdigit((unsigned char)*e))
        e++;
    if (e == d || e - d > 6) {
        snprintf(out, n, "%s", l);
        return 0;
    }
    sscanf(d, "%ld", layer);
    snprintf(out, n, "layers.#%s", e);
    return 1;
}

static void add_pattern(kvp_quant *q, const char *p, int scheme)
{
    kvp_qpattern *x = NULL;
    char text[sizeof x->text];
    long layer;
    int kind = KVP_QP_NAME;
    if (!p[0] || encoder_module(p))
        return;
    if (!strncmp(p, "re:", 3)) {
        kind = KVP_QP_REGEX;
        snprintf(text, sizeof text, "%s", p + 3);
    } else if (!strcmp(p, "Linear")) {
        kind = KVP_QP_LINEAR;
        snprintf(text, sizeof text, "%s", p);
    } else if (layer_form(p, text, sizeof text, &layer)) {
        kind = KVP_QP_LAYER;
    }
    if (strlen(p) >= sizeof text - 8)
        q->inexact = 1; /* kept cut: it may match more than it did */
    for (uint32_t i = 0; i < q->n_pat && !x; i++)
        if (q->pat[i].kind == kind && q->pat[i].scheme == scheme && !strcmp(q->pat[i].text, text))
            x = &q->pat[i];
    if (!x) {
        if (q->n_pat == KVP_QMAX_PATTERNS) {
            q->inexact = 1;
            return;
        }
        x = &q->pat[q->n_pat++];
        snprintf(x->text, sizeof x->text, "%s", text);
        x->kind = (uint8_t)kind;
        x->scheme = (int8_t)scheme;
    }
    if (kind == KVP_QP_LAYER) {
        if (layer >= 0 && layer < 128)
            x->layers[layer / 8] |= (uint8_t)(1u << (layer % 8));
        else
            q->inexact = 1;
    }
}

/* Every string of o[key] (a list or one string) as a pattern. */
static void add_patterns(kvp_quant *q, json_t *o, const char *key, int scheme)
{
    json_t *v = json_object_get(o, key);
    if (json_is_string(v))
        add_pattern(q, json_string_value(v), scheme);
    for (size_t i = 0; json_is_array(v) && i < json_array_size(v); i++)
        if (json_is_string(json_array_get(v, i)))
            add_pattern(q, json_string_value(json_array_get(v, i)), scheme);
}

/* ---- the methods ----------------------------------------------------------- */

static kvp_qscheme *scheme(kvp_quant *q, int format)
{
    kvp_qscheme *s = &q->scheme[q->n_schemes++];
    s->format = (uint8_t)format;
    return s;
}

static void read_fp8(kvp_quant *q, json_t *qc)
{
    kvp_qscheme *s = scheme(q, KVP_QF_FP8);
    json_t *b = json_object_get(qc, "weight_block_size");
    s->input_scale = str(qc, "activation_scheme") && !strcmp(str(qc, "activation_scheme"), "static");
    if (json_is_array(b)) {
        json_t *r = json_array_get(b, 0), *c = json_array_get(b, 1);
        if (json_array_size(b) != 2 || !json_is_integer(r) || !json_is_integer(c) ||
            json_integer_value(r) < 1 || json_integer_value(c) < 1 ||
            json_integer_value(r) > 1 << 16 || json_integer_value(c) > 1 << 16)
            return unknown(q, "fp8 weight_block_size is not two positive integers");
        s->strategy = KVP_QS_BLOCK;
        s->group = (uint32_t)json_integer_value(r);
        s->block_cols = (uint32_t)json_integer_value(c);
    }
    add_patterns(q, qc, "modules_to_not_convert", -1);
    add_patterns(q, qc, "ignored_layers", -1);
}

/* Integer weights in groups along the input (group_size -1: one per row). */
static int int_scheme(kvp_quant *q, long bits, long group, int zp)
{
    if (bits != 4 && bits != 8) {
        unknown(q, "%s with %ld-bit weights", q->name, bits);
        return -1;
    }
    kvp_qscheme *s = scheme(q, KVP_QF_INT);
    s->bits = (uint8_t)bits;
    s->zero_point = (uint8_t)zp;
    s->scale_bytes = 2;
    s->strategy = group > 0 ? KVP_QS_GROUP : KVP_QS_CHANNEL;
    s->group = group > 0 ? (uint32_t)group : 0;
    if (group == 0)
        unknown(q, "%s without group_size", q->name);
    return q->method == KVP_QM_UNKNOWN ? -1 : 0;
}

static void read_awq(kvp_quant *q, json_t *qc)
{
    long bits = num(qc, "bits") ? num(qc, "bits") : num(qc, "w_bit");
    long group = num(qc, "group_size") ? num(qc, "group_size") : num(qc, "q_group_size");
    if (!int_scheme(q, bits, group, flag(qc, "zero_point", 1)))
        add_patterns(q, qc, "modules_to_not_convert", -1);
}

static void read_gptq(kvp_quant *q, json_t *qc)
{
    json_t *dyn = json_object_get(qc, "dynamic");
    const char *fmt = str(qc, "checkpoint_format");
    if (json_object_size(dyn))
        return unknown(q, "gptq with per-module overrides (dynamic)");
    if (fmt && strcmp(fmt, "gptq") && strcmp(fmt, "gptq_v2"))
        return unknown(q, "gptq checkpoint_format \"%.40s\"", fmt);
    if (int_scheme(q, num(qc, "bits"), num(qc, "group_size"), !flag(qc, "sym", 1)))
        return;
    q->desc_act = (uint8_t)flag(qc, "desc_act", 0);
    q->lm_head = (uint8_t)flag(qc, "lm_head", 0);
    add_patterns(q, qc, "modules_to_not_convert", -1);
}

/* One compressed-tensors config group's "weights" block. */
static void ct_group(kvp_quant *q, json_t *g, const char *top_fmt)
{
    json_t *w = json_object_get(g, "weights"), *in = json_object_get(g, "input_activations");
    const char *type = str(w, "type"), *strat = str(w, "strategy"),
               *fmt = str(g, "format") ? str(g, "format") : top_fmt;
    long bits = num(w, "num_bits"), group = num(w, "group_size");
    json_t *blk = json_object_get(w, "block_structure");
    if (!json_is_object(w) || !type || !strat)
        return unknown(q, "compressed-tensors group without weights type and strategy");
    if (!strcmp(type, "int") && (!strcmp(strat, "group") || !strcmp(strat, "channel"))) {
        if (int_scheme(q, bits, !strcmp(strat, "group") ? group : -1, !flag(w, "symmetric", 1)))
            return;
        if (!fmt || strcmp(fmt, "pack-quantized")) /* W8A8 int: fp32 row scales */
            q->scheme[q->n_schemes - 1].scale_bytes = 4;
    } else if (!strcmp(type, "float") && bits == 8) {
        kvp_qscheme *s = scheme(q, KVP_QF_FP8);
        s->input_scale = json_is_object(in) && !flag(in, "dynamic", 0);
        if (!strcmp(strat, "channel")) {
            s->strategy = KVP_QS_CHANNEL;
        } else if (!strcmp(strat, "block") && json_array_size(blk) == 2) {
            long r = json_integer_value(json_array_get(blk, 0)),
                 c = json_integer_value(json_array_get(blk, 1));
            if (r < 1 || c < 1 || r > 1 << 16 || c > 1 << 16)
                return unknown(q, "compressed-tensors block_structure out of range");
            s->strategy = KVP_QS_BLOCK;
            s->group = (uint32_t)r;
            s->block_cols = (uint32_t)c;
        } else if (strcmp(strat, "tensor")) {
            return unknown(q, "compressed-tensors fp8 strategy \"%.20s\"", strat);
        }
    } else if (!strcmp(type, "float") && bits == 4 && group == 16) {
        scheme(q, KVP_QF_NVFP4)->group = 16;
    } else {
        return unknown(q, "compressed-tensors %.8s %ld-bit weights by %.20s", type, bits, strat);
    }
}

static void read_ct(kvp_quant *q, json_t *qc)
{
    json_t *groups = json_object_get(qc, "config_groups"), *sp = json_object_get(qc,
                                                                                 "sparsity_config");
    const char *fmt = str(qc, "format"), *key;
    json_t *g;
    if (json_is_object(sp) && str(sp, "format") && strcmp(str(sp, "format"), "dense"))
        return unknown(q, "compressed-tensors with sparsity (%.30s)", str(sp, "format"));
    if (!json_object_size(groups))
        return unknown(q, "compressed-tensors without config_groups");
    json_object_foreach(groups, key, g) {
        if (q->n_schemes == KVP_QMAX_SCHEMES)
            return unknown(q, "compressed-tensors with more than %d config groups",
                           KVP_QMAX_SCHEMES);
        ct_group(q, g, fmt);
        if (q->method == KVP_QM_UNKNOWN)
            return;
        add_patterns(q, g, "targets", (int)q->n_schemes - 1);
    }
    add_patterns(q, qc, "ignore", -1);
}

static void read_modelopt(kvp_quant *q, json_t *qc)
{
    json_t *inner = json_object_get(qc, "quantization");
    json_t *o = json_is_object(inner) ? inner : qc;
    const char *algo = str(o, "quant_algo");
    if (!algo)
        return unknown(q, "modelopt without quant_algo");
    snprintf(q->name, sizeof q->name, "modelopt %.20s", algo);
    if (!strcmp(algo, "FP8")) {
        scheme(q, KVP_QF_FP8)->input_scale = 1;
    } else if (!strcmp(algo, "NVFP4")) {
        long g = num(o, "group_size");
        if (g && g != 16)
            return unknown(q, "modelopt NVFP4 with group_size %ld", g);
        scheme(q, KVP_QF_NVFP4)->group = 16;
    } else if (!strcmp(algo, "FP8_PER_CHANNEL_PER_TOKEN")) {
        scheme(q, KVP_QF_FP8)->strategy = KVP_QS_CHANNEL;
    } else {
        return unknown(q, "modelopt quant_algo \"%.30s\"", algo);
    }
    add_patterns(q, o, "exclude_modules", -1);
}

static void read_bnb(kvp_quant *q, json_t *qc)
{
    if (flag(qc, "load_in_4bit", 0))
        scheme(q, KVP_QF_BNB4)->zero_point = (uint8_t)flag(qc, "bnb_4bit_use_double_quant", 0);
    else if (flag(qc, "load_in_8bit", 0))
        scheme(q, KVP_QF_BNB8);
    else
        return unknown(q, "bitsandbytes with neither load_in_4bit nor load_in_8bit");
    add_patterns(q, qc, "llm_int8_skip_modules", -1);
}

static void read_method(kvp_quant *q, json_t *qc)
{
    static const struct {
        const char *name;
        int method;
        void (*read)(kvp_quant *, json_t *);
    } methods[] = {
        {"fp8", KVP_QM_FP8, read_fp8},
        {"awq", KVP_QM_AWQ, read_awq},
        {"gptq", KVP_QM_GPTQ, read_gptq},
        {"compressed-tensors", KVP_QM_CT, read_ct},
        {"modelopt", KVP_QM_MODELOPT, read_modelopt},
        {"mxfp4", KVP_QM_MXFP4, NULL},
        {"bitsandbytes", KVP_QM_BNB, read_bnb},
    };
    const char *m = str(qc, "quant_method");
    if (!m)
        return unknown(q, "quantization_config without quant_method");
    snprintf(q->name, sizeof q->name, "%s", m);
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        if (strcmp(m, methods[i].name))
            continue;
        q->method = (uint8_t)methods[i].method;
        if (methods[i].read) {
            methods[i].read(q, qc);
        } else { /* mxfp4: vLLM quantizes the MoE experts only */
            scheme(q, KVP_QF_MXFP4)->group = 32;
            q->experts_only = 1;
        }
        return;
    }
    unknown(q, "quant_method \"%.40s\" is not one kvplan can size", m);
}

/* ---- the vision tower ------------------------------------------------------ */

/* Gemma 3's SigLIP tower and projector, tensor for tensor: a patch conv with
 * bias, a position embedding per patch, per layer q/k/v/o and fc1/fc2 with
 * biases and two LayerNorms (weight and bias), a post LayerNorm; the
 * projector is a vision x text matrix and an RMSNorm over the vision width.
 * (gemma-3-4b-it: 419,816,304 = the Hub's 4,300,079,472 less the text
 * model's 3,880,263,168.)  0 when any field is missing or another tower. */
static uint64_t gemma3_siglip(json_t *root, uint64_t text_hidden)
{
    json_t *v = json_object_get(root, "vision_config");
    const char *mt = str(root, "model_type"), *vt = str(v, "model_type");
    uint64_t h = (uint64_t)num(v, "hidden_size"), ff = (uint64_t)num(v, "intermediate_size"),
             n = (uint64_t)num(v, "num_hidden_layers"), p = (uint64_t)num(v, "patch_size"),
             img = (uint64_t)num(v, "image_size"),
             ch = json_object_get(v, "num_channels") ? (uint64_t)num(v, "num_channels") : 3;
    if (!mt || strcmp(mt, "gemma3") || !vt || strcmp(vt, "siglip_vision_model") ||
        flag(v, "vision_use_head", 1) || !h || !ff || !n || !p || !img || !ch || img % p ||
        h > 1 << 16 || ff > 1 << 18 || n > 1024 || p > 1024 || !text_hidden)
        return 0;
    uint64_t patches = (img / p) * (img / p);
    uint64_t layer = 4 * (h * h + h) + 4 * h + (h * ff + ff) + (ff * h + h);
    return ch * p * p * h + h + patches * h + n * layer + 2 * h + h * text_hidden + h;
}

int kvp_hf_read_quant(const struct json_t *root_c, kvp_model *m)
{
    json_t *root = (json_t *)root_c, *tc = json_object_get(root, "text_config");
    json_t *qc = json_object_get(root, "quantization_config");
    if (!qc)
        qc = json_object_get(root, "compression_config");
    if (!qc && json_is_object(tc))
        qc = json_object_get(tc, "quantization_config");
    memset(&m->quant, 0, sizeof m->quant);
    if (qc && !json_is_null(qc)) {
        if (json_is_object(qc))
            read_method(&m->quant, qc);
        else
            unknown(&m->quant, "quantization_config is not an object");
    }
    m->encoder = json_is_object(json_object_get(root, "vision_config")) ||
                 json_is_object(json_object_get(root, "audio_config"));
    m->encoder_params = m->encoder && !json_object_get(root, "audio_config")
                            ? gemma3_siglip(root, m->hidden_size)
                            : 0;
    return 0;
}
