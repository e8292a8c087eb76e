/* vllm_weights.c - the bytes of weights vLLM keeps on one GPU, from the
 * config alone (reference/vllm-memory-profile.md section 7).
 *
 * params.c walks every tensor of the language model with its kind and its
 * tensor-parallel split; this file prices each one on the largest rank:
 *   - sharding (7.1): column/row-parallel linears split by tp, KV heads kept
 *     whole (one per rank) when kv_heads < tp, the vocabulary padded to 64
 *     and split, norms and routers replicated; pipeline stages cut as
 *     get_pp_indices does, the embedding on the first stage, the head on the
 *     last, a tied head copied onto the last stage under PP;
 *   - formats (7.2): packed integers with group scales and zero points,
 *     fp8 with tensor/row/block scales, NVFP4, MXFP4, bitsandbytes; the
 *     embedding, routers, norms and whatever the config's ignore lists name
 *     stay in the model dtype (2 bytes: float32 checkpoints are served in
 *     16 bits);
 *   - re-layout (7.3): MXFP4 experts grow by a measured factor, MLA models
 *     with quantized kv_b_proj keep dequantized 16-bit copies;
 *   - buffers: the rotary cos/sin cache (max positions x rotary dims).
 * Each kind of weight says whether its figure is exact. */
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "vllm_int.h"
#include "vllm_weights.h"

/* MXFP4 expert re-layout, from "Model loading took" against the computed
 * checkpoint (expert blocks and scales 56.73 of 60.77 GiB for gpt-oss-120b,
 * 9.46 of 12.82 for gpt-oss-20b; the rest, 16-bit, and the 16 MiB rotary
 * cache kept as they are):
 *   Triton kernels (sm90+, a release after 0.11): 64.38 GiB on an H100 with 0.14.1
 *   (vllm#33155): (64.38 - 4.05) / 56.73 = 1.0634;
 *   Marlin (before sm90, and Hopper up to 0.11): 65.9651 GiB with 0.10.1 on an
 *   H100 (vllm#23278): 1.0914; 13.72 GiB on an A100 with 0.19.0
 *   (myoceane.fr): 1.0939; 1.093 between the two. */
#define MXFP4_TRITON 1.0634
#define MXFP4_MARLIN 1.093

typedef struct wctx {
    const kvp_model *m;
    const kvp_quant *q;
    uint32_t tp, pp, stage, first, count;
    int ckpt;                       /* price the checkpoint, not the rank */
    int sm;
    int mxfp4_triton;               /* MXFP4 experts re-laid by Triton, not Marlin */
    uint64_t bytes[KVP_WC_N];
    uint8_t exact[KVP_WC_N];
    int bad;                        /* overflow */
    int mla_copies;                 /* dequantized kv_b_proj copies counted */
    regex_t re[KVP_QMAX_PATTERNS];
} wctx;

static uint64_t cdiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

static void worse(uint8_t *e, int level)
{
    if (*e < level)
        *e = (uint8_t)level;
}

/* ---- which scheme a module gets -------------------------------------------- */

/* Does pattern p occur in s, '*' in p matching any run of characters? */
static int glob_at(const char *p, const char *s)
{
    for (; *p; p++, s++) {
        if (*p == '*') {
            for (const char *t = s;; t++) {
                if (glob_at(p + 1, t))
                    return 1;
                if (!*t)
                    return 0;
            }
        }
        if (!*s || *p != *s)
            return 0;
    }
    return 1;
}

static int glob_in(const char *p, const char *s)
{
    for (; *s; s++)
        if (glob_at(p, s))
            return 1;
    return !*p;
}

static int pattern_hits(const wctx *c, uint32_t i, const kvp_ptensor *t, const char *name,
                        const char *norm)
{
    const kvp_qpattern *p = &c->q->pat[i];
    switch (p->kind) {
    case KVP_QP_LINEAR: return t->linear;
    case KVP_QP_REGEX: return regexec(&c->re[i], name, 0, NULL, 0) == 0;
    case KVP_QP_LAYER:
        return t->layer < 128 && (p->layers[t->layer / 8] >> (t->layer % 8) & 1) &&
               glob_in(p->text, norm);
    default: return glob_in(p->text, name);
    }
}

/* The scheme of t, or NULL for the model dtype. */
static const kvp_qscheme *scheme_for(const wctx *c, const kvp_ptensor *t)
{
    const kvp_quant *q = c->q;
    if (q->method == KVP_QM_NONE || !t->linear || t->cat == KVP_WC_EMBED ||
        t->cat == KVP_WC_ROUTER || (t->cat == KVP_WC_HEAD && !q->lm_head) ||
        (q->experts_only && t->cat != KVP_WC_EXPERTS))
        return NULL;
    char name[160], norm[160];
    if (t->layer == UINT32_MAX) {
        snprintf(name, sizeof name, "%s", t->name);
        snprintf(norm, sizeof norm, "%s", t->name);
    } else {
        snprintf(name, sizeof name, "model.layers.%u.%s", t->layer, t->name);
        snprintf(norm, sizeof norm, "layers.#.%s", t->name);
    }
    for (uint32_t i = 0; i < q->n_pat; i++)
        if (q->pat[i].scheme < 0 && pattern_hits(c, i, t, name, norm))
            return NULL;
    if (q->method != KVP_QM_CT)
        return &q->scheme[0];
    for (uint32_t i = 0; i < q->n_pat; i++)
        if (q->pat[i].scheme >= 0 && pattern_hits(c, i, t, name, norm))
            return &q->scheme[q->pat[i].scheme];
    return NULL; /* no config group targets it */
}

/* ---- bytes of one tensor --------------------------------------------------- */

/* The rank's share of in x out. */
static void shard(const wctx *c, const kvp_ptensor *t, uint64_t *in, uint64_t *out)
{
    uint64_t tp = c->ckpt ? 1 : c->tp;
    switch (t->split) {
    case KVP_PS_COL: *out = cdiv(*out, tp); break;
    case KVP_PS_ROW: *in = cdiv(*in, tp); break;
    case KVP_PS_KV:
        if (t->heads && *out % t->heads == 0)
            *out = *out / t->heads * (t->heads >= tp ? cdiv(t->heads, tp) : 1);
        break;
    case KVP_PS_VOCAB:
        if (!c->ckpt)
            *out = cdiv(cdiv(*out, 64) * 64, tp);
        break;
    default: break;
    }
}

/* Checked a * b (+ into *acc). */
static void mac(wctx *c, uint64_t *acc, uint64_t a, uint64_t b)
{
    uint64_t p;
    if (kvp_mul(a, b, &p) || kvp_add(*acc, p, acc))
        c->bad = 1;
}

/* Packed integers (AWQ, GPTQ, compressed-tensors): bits per weight, a scale
 * per group (or row) and output, zero points packed 32/bits to an int32;
 * GPTQ checkpoints also store qzeros always and g_idx (one int32 per input),
 * which the Marlin repack drops unless act-order or asymmetric. */
static int int_bytes(wctx *c, const kvp_qscheme *s, uint64_t in, uint64_t out, uint64_t *b)
{
    uint64_t groups = s->strategy == KVP_QS_GROUP ? cdiv(in, s->group) : 1, w = 0, zeros;
    int gptq = c->q->method == KVP_QM_GPTQ;
    mac(c, &w, in, out);
    if (w > UINT64_MAX / 8)
        c->bad = 1;
    *b = cdiv(w * s->bits, 8);
    mac(c, b, groups * s->scale_bytes, out);
    zeros = cdiv(out * s->bits, 32) * 4;
    if (s->zero_point || (gptq && c->ckpt))
        mac(c, b, groups, zeros);
    if (gptq && (c->ckpt || s->zero_point))
        mac(c, b, in, 4);              /* g_idx */
    else if (gptq && c->q->desc_act)
        mac(c, b, in, 8);              /* g_idx and its sort indices */
    return c->ckpt || (in % 128 == 0 && out % 64 == 0) ? KVP_WX_SCALARS : KVP_WX_ESTIMATE;
}

static int fp8_bytes(wctx *c, const kvp_qscheme *s, uint64_t in, uint64_t out, uint64_t *b)
{
    int level = KVP_WX_SCALARS;
    *b = 0;
    mac(c, b, in, out);
    if (s->strategy == KVP_QS_BLOCK) {
        mac(c, b, cdiv(out, s->group) * 4, cdiv(in, s->block_cols));
        level = in % s->block_cols || out % s->group ? KVP_WX_ESTIMATE : KVP_WX_EXACT;
    } else {
        mac(c, b, s->strategy == KVP_QS_CHANNEL ? out : 1, 4);
    }
    mac(c, b, s->input_scale, 4);
    return !c->ckpt && c->sm < 89 ? KVP_WX_ESTIMATE : level; /* Marlin weight-only */
}

/* One weight (n copies) in its scheme; the returned KVP_WX_* says how exact. */
static int q_bytes(wctx *c, const kvp_qscheme *s, uint64_t in, uint64_t out, uint64_t *b)
{
    uint64_t w = 0;
    mac(c, &w, in, out);
    switch (s->format) {
    case KVP_QF_INT: return int_bytes(c, s, in, out, b);
    case KVP_QF_FP8: return fp8_bytes(c, s, in, out, b);
    case KVP_QF_NVFP4: /* fp8 scale per 16; fp32 weight and input global scales */
        *b = cdiv(w, 2);
        mac(c, b, cdiv(in, 16), out);
        mac(c, b, 2, 4);
        return c->ckpt || c->sm >= 100 ? KVP_WX_SCALARS : KVP_WX_ESTIMATE;
    case KVP_QF_MXFP4: /* e8m0 scale per 32 */
        *b = cdiv(w, 2);
        mac(c, b, cdiv(in, 32), out);
        return c->ckpt ? KVP_WX_EXACT : KVP_WX_ESTIMATE;
    case KVP_QF_BNB4: /* absmax per 64: fp32, or uint8 + fp32 per 256 with double quant */
        *b = cdiv(w, 2);
        mac(c, b, cdiv(w, 64), s->zero_point ? 1 : 4);
        if (s->zero_point)
            mac(c, b, cdiv(w, 64 * 256), 4);
        return KVP_WX_ESTIMATE;
    default: /* LLM.int8: int8 weights, an fp32 scale per row */
        *b = w;
        mac(c, b, out, 4);
        return KVP_WX_ESTIMATE;
    }
}

static uint64_t dtype_bytes(const wctx *c)
{
    return c->ckpt && c->m->dtype == KVP_F32 ? 4 : 2;
}

static void place(wctx *c, kvp_wcat cat, const kvp_ptensor *t)
{
    uint64_t in = t->in, out = t->out, b = 0, all = 0;
    int level = KVP_WX_EXACT;
    shard(c, t, &in, &out);
    const kvp_qscheme *s = scheme_for(c, t);
    if (s) {
        level = q_bytes(c, s, in, out, &b);
    } else {
        uint64_t w = 0;
        mac(c, &w, in, out);
        mac(c, &b, w, dtype_bytes(c));
    }
    /* whether a quantized checkpoint's Mamba / DeltaNet projections load
     * quantized depends on the model's vLLM class: not known here */
    if (s && cat == KVP_WC_MIXER)
        level = KVP_WX_ESTIMATE;
    if (s && s->format == KVP_QF_MXFP4 && !c->ckpt)
        b = (uint64_t)((double)b * (c->mxfp4_triton ? MXFP4_TRITON : MXFP4_MARLIN));
    /* MLA: vLLM keeps W_UK / W_UV dequantized from a quantized kv_b_proj */
    if (s && !c->ckpt && !strcmp(t->name, "self_attn.kv_b_proj")) {
        mac(c, &b, in * 2, out);
        c->mla_copies = 1;
        level = KVP_WX_ESTIMATE;
    }
    mac(c, &all, b, t->n);
    mac(c, &c->bytes[cat], all, 1);
    worse(&c->exact[cat], level);
}

/* The walk's callback: what of t is on this stage's rank. */
static void on_tensor(void *vc, const kvp_ptensor *t)
{
    wctx *c = vc;
    int first = c->stage == 0, last = c->stage + 1 == c->pp;
    if (t->layer != UINT32_MAX) {
        if (t->layer >= c->first && t->layer - c->first < c->count)
            place(c, t->cat, t);
        return;
    }
    if (t->cat == KVP_WC_EMBED) {
        if (first)
            place(c, KVP_WC_EMBED, t);
        if (t->tied && last && c->pp > 1) /* the last stage's own copy of the head */
            place(c, KVP_WC_HEAD, t);
        return;
    }
    if (last) /* the head, the final norm */
        place(c, t->cat, t);
}

/* ---- buffers: the rotary cos/sin cache ------------------------------------ */

static void rotary(wctx *c)
{
    const kvp_model *m = c->m;
    uint64_t dim = 0, len = m->max_position;
    for (uint32_t i = c->first; i < c->first + c->count && !dim; i++) {
        const kvp_layer *L = &m->layers[i];
        if (L->kind == KVP_LAYER_MLA)
            dim = L->mla_rope_dim;
        else if (L->kind == KVP_LAYER_FULL || L->kind == KVP_LAYER_SLIDING ||
                 L->kind == KVP_LAYER_CHUNKED)
            dim = m->n_rot ? m->n_rot : L->head_dim_k;
    }
    if (!dim)
        return;
    int plain = !m->rope_type[0] || !strcmp(m->rope_type, "default") ||
                !strcmp(m->rope_type, "llama3");
    uint64_t local = 0;
    /* Gemma 3: a second, unscaled cache for the sliding layers' local base
     * (the global one takes the scaling): 8.01 GiB of gemma-3-4b-it's
     * weights and tower plus 0.5625 GiB of caches is the 8.58 vLLM printed
     * (vllm#21489) */
    if (!strncmp(m->family, "gemma3", 6))
        local = len;
    if (!plain && m->rope_factor > 0) /* YaRN: original x factor; linear/dynamic: x factor */
        len = (uint64_t)((double)(m->rope_orig_max ? m->rope_orig_max : len) * m->rope_factor);
    uint64_t caches = local ? 2 : 1, b = 0;
    mac(c, &b, len + local, dim * 2);
    c->bytes[KVP_WC_BUFFERS] = b;
    c->exact[KVP_WC_BUFFERS] = plain && caches == 1 && len ? KVP_WX_EXACT : KVP_WX_ESTIMATE;
}

/* ---- stages ---------------------------------------------------------------- */

static int walk_stage(wctx *c, uint32_t s, uint64_t *total)
{
    memset(c->bytes, 0, sizeof c->bytes);
    memset(c->exact, 0, sizeof c->exact);
    c->stage = s;
    vllm_stage_range(c->m->n_layers, c->pp, s, &c->first, &c->count);
    if (kvp_model_param_walk(c->m, on_tensor, c) || c->bad)
        return -1;
    if (!c->ckpt)
        rotary(c);
    *total = 0;
    for (int k = 0; k < KVP_WC_N; k++)
        mac(c, total, c->bytes[k], 1);
    return c->bad ? -1 : 0;
}

/* ---- patterns, notes, the entry point -------------------------------------- */

/* Python's \d in POSIX ERE, anchored at the start as re.match is. */
static int compile_patterns(wctx *c, kvp_error *err)
{
    for (uint32_t i = 0; i < c->q->n_pat; i++) {
        const char *p = c->q->pat[i].text;
        char buf[sizeof c->q->pat[i].text * 5 + 4], *o = buf;
        if (c->q->pat[i].kind != KVP_QP_REGEX)
            continue;
        *o++ = '^';
        *o++ = '(';
        for (; *p; p++) {
            if (p[0] == '\\' && p[1] == 'd') {
                memcpy(o, "[0-9]", 5);
                o += 5;
                p++;
            } else {
                *o++ = *p;
            }
        }
        *o++ = ')';
        *o = 0;
        if (regcomp(&c->re[i], buf, REG_EXTENDED | REG_NOSUB)) {
            for (uint32_t j = 0; j < i; j++)
                if (c->q->pat[j].kind == KVP_QP_REGEX)
                    regfree(&c->re[j]);
            return kvp_fail(err, KVP_EINPUT, "%s: quantization_config pattern \"re:%s\" is not "
                            "a regular expression kvplan can read", c->m->name,
                            c->q->pat[i].text);
        }
    }
    return 0;
}

static void free_patterns(wctx *c)
{
    for (uint32_t i = 0; i < c->q->n_pat; i++)
        if (c->q->pat[i].kind == KVP_QP_REGEX)
            regfree(&c->re[i]);
}

static void describe(const wctx *c, kvp_vllm_weights_t *o)
{
    const kvp_quant *q = c->q;
    const kvp_qscheme *s = &q->scheme[0];
    char what[200] = "";
    switch (q->method) {
    case KVP_QM_NONE:
        snprintf(what, sizeof what, "%s weights at 2 B each", c->m->dtype == KVP_F32
                 ? "float32 checkpoint served in 16 bits (dtype=auto):" : "16-bit");
        break;
    case KVP_QM_MXFP4:
        snprintf(what, sizeof what, "MXFP4 experts at 0.53125 B/weight x%.4g, %s; the rest "
                 "16-bit", o->relayout, c->mxfp4_triton ? "the Triton backend's re-layout (sm90+, "
                 "0.12 on)" : "Marlin's re-layout (before sm90, or before 0.12)");
        break;
    default:
        if (s->format == KVP_QF_INT)
            snprintf(what, sizeof what, "%s: %u-bit integers, a 16-bit scale per %s%s%s",
                     q->name, s->bits, s->strategy == KVP_QS_GROUP ? "group" : "row",
                     s->zero_point ? ", zero points" : "",
                     c->ckpt ? "" : "; Marlin's repack keeps the sizes");
        else
            snprintf(what, sizeof what, "%s weights (%s scales)", q->name,
                     s->format == KVP_QF_FP8 ? (s->strategy == KVP_QS_BLOCK ? "block"
                     : s->strategy == KVP_QS_CHANNEL ? "per-row" : "per-tensor")
                     : s->format == KVP_QF_NVFP4 ? "fp8 per 16" : "absmax");
        break;
    }
    char kept[96] = "";
    if (q->method != KVP_QM_NONE)
        snprintf(kept, sizeof kept, "; embeddings, norms, routers%s 16-bit",
                 q->n_pat ? " and the config's module patterns" : "");
    snprintf(o->note, sizeof o->note, "%.120s%.60s%.48s%.52s%.34s", what, kept,
             c->mla_copies ? "; + dequantized 16-bit kv_b_proj copies (MLA)" : "",
             q->inexact ? "; ignore list only partly kept: split approximate" : "",
             o->encoder_uncounted ? "; vision/audio tower not counted" : "");
}

static int check_args(const kvp_model *m, uint32_t tp, uint32_t pp, kvp_error *err)
{
    if (tp < 1 || tp > 1024 || pp < 1 || pp > m->n_layers)
        return kvp_fail(err, KVP_EUSAGE, "tensor parallel %u and pipeline parallel %u: need "
                        "1..1024 and 1..%u (the layers)", tp, pp, m->n_layers);
    if (m->n_tensors)
        return kvp_fail(err, KVP_EINPUT, "%s: vLLM's weights for a GGUF are not sized from "
                        "config.json", m->name);
    if (m->quant.method == KVP_QM_UNKNOWN)
        return kvp_fail(err, KVP_EINPUT, "%s: vLLM's weight memory is unknown: %s", m->name,
                        m->quant.why);
    return 0;
}

static int fill(wctx *c, kvp_vllm_weights_t *out, kvp_error *err)
{
    uint64_t best = 0, total;
    for (uint32_t s = 0; s < c->pp; s++) {
        if (walk_stage(c, s, &total))
            return kvp_fail(err, KVP_EINPUT, "%s: vLLM's weight memory is unknown: kvplan "
                            "cannot list the tensors of this architecture (%s)", c->m->name,
                            c->m->arch);
        if (s == 0 || total > best) {
            best = total;
            out->bytes = total;
            out->stage = s;
            memcpy(out->cat_bytes, c->bytes, sizeof c->bytes);
            memcpy(out->cat_exact, c->exact, sizeof c->exact);
        }
    }
    for (int k = 0; k < KVP_WC_N; k++)
        if (out->cat_bytes[k] && out->cat_exact[k] > out->exact)
            out->exact = out->cat_exact[k];
    return 0;
}

int kvp_vllm_weights(const kvp_model *m, uint32_t tp, uint32_t pp, int sm,
                     kvp_vllm_weights_t *out, kvp_error *err)
{
    return kvp_vllm_weights_at(m, tp, pp, sm, 29, out, err);
}

int kvp_vllm_weights_at(const kvp_model *m, uint32_t tp, uint32_t pp, int sm, int minor,
                        kvp_vllm_weights_t *out, kvp_error *err)
{
    memset(out, 0, sizeof *out);
    if (check_args(m, tp, pp, err))
        return -1;
    wctx c = {.m = m, .q = &m->quant, .tp = 1, .pp = 1, .ckpt = 1, .sm = sm > 0 ? sm : 90};
    /* Hopper moved from Marlin to Triton for MXFP4 after 0.11 (0.10.1
     * logged Marlin, 0.14.1 Triton; the release between is not pinned) */
    c.mxfp4_triton = c.sm >= 90 && minor >= 12;
    if (compile_patterns(&c, err))
        return -1;
    uint64_t total;
    int rc = walk_stage(&c, 0, &total);
    out->checkpoint_bytes = total;
    c.tp = tp;
    c.pp = pp;
    c.ckpt = 0;
    if (!rc)
        rc = fill(&c, out, err);
    else
        kvp_fail(err, KVP_EINPUT, "%s: vLLM's weight memory is unknown: kvplan cannot list the "
                 "tensors of this architecture (%s)", m->name, m->arch);
    free_patterns(&c);
    if (rc)
        return -1;
    out->relayout = m->quant.method == KVP_QM_MXFP4 ? (c.mxfp4_triton ? MXFP4_TRITON : MXFP4_MARLIN)
                                                    : 1.0;
    out->encoder_uncounted = m->encoder && !m->encoder_params;
    if (m->encoder_params && out->stage == 0) {
        /* 16-bit; under TP its linears split like the language model's and
         * its conv and norms replicate: the even split is an estimate */
        out->encoder_bytes = cdiv(m->encoder_params * 2, tp);
        if (tp > 1)
            out->encoder_exact = KVP_WX_ESTIMATE;
    }
    describe(&c, out);
    return 0;
}
