/* tech_store.c - the eight store-fewer-bytes techniques: which variants each
 * offers for this model (the model's own use of it, or what-ifs with the
 * defaults of ../shared/reference/techniques.md section A), their parameters
 * as --apply spells them, and their rows.  A technique the model already
 * uses is shown by taking it away: the row says what it buys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tech.h"

typedef struct offer {
    tech_variant v[10];
    int n;
    int used;
    char reason[240];   /* when n == 0 */
    char skipped[64];   /* variants left out as a group, and why */
    char skipped_why[1024];
} offer;

static tech_variant *add(offer *o, const char *id, kvp_tech_label label, const char *changes,
                         const char *assumptions)
{
    tech_variant *v = &o->v[o->n++];
    memset(v, 0, sizeof *v);
    v->id = id;
    v->label = label;
    snprintf(v->changes, sizeof v->changes, "%s", changes);
    snprintf(v->assumptions, sizeof v->assumptions, "%s", assumptions);
    return v;
}

static void step(tech_variant *v, tech_op op, uint64_t a, uint64_t b, double f, const char *s)
{
    v->steps[v->n_steps++] = (tech_step){op, a, b, f, s};
}

static int refuse(offer *o, const char *why)
{
    snprintf(o->reason, sizeof o->reason, "%s", why);
    return 0;
}

static int bad_param(kvp_error *err, const char *id, const char *param, const char *want)
{
    return kvp_fail(err, KVP_EUSAGE, "%s=%s: expected %s", id, param, want);
}

static int parse_u(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int is_off(const char *p) { return p && !strcmp(p, "off"); }

static const char *no_attention(const tech_census *k)
{
    return k->mla ? "the model's attention is MLA, one latent per token (see the mla row)"
                  : "the model has no attention layer: only a recurrent state";
}

/* ---- A1 GQA / MQA ---------------------------------------------------------------- */

static const char gqa_costs[] =
    "a training-time choice (an MHA checkpoint can be up-trained to GQA with about 5% of its "
    "pre-training compute, Ainslie et al. 2023); under tensor parallelism each rank keeps at "
    "least one KV head";

static int offer_gqa(const tech_ctx *c, const tech_census *k, const char *p, offer *o,
                     kvp_error *err)
{
    uint32_t q = 0;
    for (uint32_t i = 0; i < c->m->n_layers && !q; i++)
        if (c->m->layers[i].kind == KVP_LAYER_FULL || c->m->layers[i].kind == KVP_LAYER_SLIDING ||
            c->m->layers[i].kind == KVP_LAYER_CHUNKED)
            q = c->m->layers[i].n_head;
    o->used = k->gqa > 0;
    if (!k->per_head)
        return refuse(o, no_attention(k));
    uint64_t heads = 0;
    if (p && strcmp(p, "mha") && strcmp(p, "mqa") && parse_u(p, 1, KVP_MAX_HEADS, &heads))
        return bad_param(err, "gqa", p, "mha, mqa or a KV head count");
    if (!p || !strcmp(p, "mha")) {
        tech_variant *v = add(o, "gqa", KVP_LABEL_EXACT, "KV heads per layer", gqa_costs);
        snprintf(v->name, sizeof v->name, "MHA: KV heads = query heads (%u)", q);
        step(v, OP_KV_HEADS, 0, 0, 0, NULL);
    }
    if (!p || !strcmp(p, "mqa")) {
        tech_variant *v = add(o, "gqa", KVP_LABEL_EXACT, "KV heads per layer", gqa_costs);
        snprintf(v->name, sizeof v->name, "MQA: 1 KV head");
        step(v, OP_KV_HEADS, 1, 0, 0, NULL);
    }
    if (p && strcmp(p, "mha") && strcmp(p, "mqa")) {
        tech_variant *v = add(o, "gqa", KVP_LABEL_EXACT, "KV heads per layer", gqa_costs);
        snprintf(v->name, sizeof v->name, "GQA: %llu KV heads", (unsigned long long)heads);
        step(v, OP_KV_HEADS, heads, 0, 0, NULL);
    }
    return 0;
}

/* ---- A2 cross-layer KV sharing ------------------------------------------------------ */

static int offer_cross_layer(const tech_ctx *c, const tech_census *k, const char *p, offer *o,
                             kvp_error *err)
{
    (void)c;
    o->used = k->shared > 0;
    if (o->used && (!p || is_off(p))) {
        tech_variant *v = add(o, "cross-layer", KVP_LABEL_EXACT, "layers that own a cache",
                              "the model shares KV across layers (Gemma 3n's num_kv_shared_"
                              "layers); this row gives every layer a cache of its own");
        snprintf(v->name, sizeof v->name, "without sharing: all %u layers own a cache",
                 k->per_head + k->mla + k->shared);
        step(v, OP_UNSHARE, 0, 0, 0, NULL);
    }
    if (is_off(p)) {
        if (!o->used)
            return refuse(o, "the model shares no KV cache across layers");
        return 0;
    }
    uint64_t f = 2;
    if (p && parse_u(p, 2, 64, &f))
        return bad_param(err, "cross-layer", p, "a sharing factor from 2 to 64, or off");
    if (k->per_head + k->mla < 2)
        return o->n ? 0 : refuse(o, "fewer than two attention layers own a cache");
    tech_variant *v = add(o, "cross-layer", KVP_LABEL_EXACT, "layers that own a cache",
                          "architectural: trained that way; CLA2 keeps nearly the accuracy of "
                          "its MQA/GQA baseline at 1B-3B (Brandon et al. 2024); runs form "
                          "within each layer kind, so windows and the state are untouched");
    snprintf(v->name, sizeof v->name, "CLA%llu: runs of %llu same-kind layers share KV",
             (unsigned long long)f, (unsigned long long)f);
    step(v, OP_SHARE, f, 0, 0, NULL);
    return 0;
}

/* ---- A3 MLA -------------------------------------------------------------------------- */

static int offer_mla(const tech_ctx *c, const tech_census *k, const char *p, offer *o,
                     kvp_error *err)
{
    (void)c;
    o->used = k->mla > 0;
    if (o->used) {
        if (p && !is_off(p))
            return bad_param(err, "mla", p, "off (the model already stores a latent)");
        if (!k->mha_heads_known)
            return refuse(o, "the model's latent names no per-head shape to compare with");
        tech_variant *v = add(o, "mla", KVP_LABEL_EXACT, "per-head K/V -> one latent",
                              "what a converter that expands the latent to per-head K and V "
                              "stores (about 9x more for DeepSeek); the row's inverse is what "
                              "MLA buys");
        snprintf(v->name, sizeof v->name, "expanded: per-head K/V, no latent");
        step(v, OP_MLA_EXPAND, 0, 0, 0, NULL);
        return 0;
    }
    if (is_off(p))
        return refuse(o, "the model stores no latent");
    uint64_t r = 512, rope = 64;
    if (p) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", p);
        char *plus = strchr(buf, '+');
        if (!plus)
            return bad_param(err, "mla", p, "RANK+ROPE such as 512+64");
        *plus = 0;
        if (parse_u(buf, 1, 65536, &r) || parse_u(plus + 1, 0, 65536, &rope))
            return bad_param(err, "mla", p, "RANK+ROPE such as 512+64");
    }
    if (!k->per_head)
        return refuse(o, no_attention(k));
    tech_variant *v = add(o, "mla", KVP_LABEL_EXACT, "per-head K/V -> one latent",
                          "architectural (trained in, or converted with fine-tuning); one "
                          "latent plus a RoPE key per token and layer, no V (DeepSeek-V2: "
                          "r = 4 d_h, rope = d_h / 2); vLLM keeps it on every tensor-parallel "
                          "rank, 64-token blocks on Hopper");
    snprintf(v->name, sizeof v->name, "MLA latent %llu + %llu%s", (unsigned long long)r,
             (unsigned long long)rope, p ? "" : " (DeepSeek-V2's)");
    step(v, OP_MLA, r, rope, 0, NULL);
    return 0;
}

/* ---- A4 sliding window ----------------------------------------------------------------- */

static const char window_costs[] =
    "the model must be trained with the window; llama.cpp keeps W + ubatch cells per stream "
    "(pad 256), vLLM reserves W - 1 + 2 x max_num_batched_tokens tokens per request";

static void add_window(offer *o, uint64_t w, uint64_t every, const char *whose)
{
    char a[32];
    tech_variant *v = add(o, "sliding-window", KVP_LABEL_EXACT, "tokens held per layer",
                          window_costs);
    kvp_format_thousands(w, a, sizeof a);
    if (every)
        snprintf(v->name, sizeof v->name, "W %s, every %llu%s layer full%s", a,
                 (unsigned long long)every, every == 2 ? "nd" : every == 3 ? "rd" : "th", whose);
    else
        snprintf(v->name, sizeof v->name, "W %s on every full layer", a);
    step(v, OP_WINDOW, w, every, 0, NULL);
}

static int offer_window(const tech_ctx *c, const tech_census *k, const char *p, offer *o,
                        kvp_error *err)
{
    (void)c;
    o->used = k->windowed > 0;
    if (o->used && (!p || is_off(p))) {
        tech_variant *v = add(o, "sliding-window", KVP_LABEL_EXACT, "tokens held per layer",
                              "the model's windows taken away: every layer attends fully; the "
                              "row's inverse is what the windows buy");
        snprintf(v->name, sizeof v->name, "no windows: every layer attends fully");
        step(v, OP_UNWINDOW, 0, 0, 0, NULL);
        return 0;
    }
    if (is_off(p))
        return refuse(o, "the model has no sliding-window layer");
    if (!k->full)
        return o->n ? 0 : refuse(o, k->per_head || k->mla
                                        ? "no full-attention layer with per-head K/V to slide"
                                        : no_attention(k));
    if (!p) {
        add_window(o, 1024, 6, " (Gemma 3)");
        add_window(o, 4096, 4, "");
        return 0;
    }
    char buf[64];
    uint64_t w, every = 6;
    snprintf(buf, sizeof buf, "%s", p);
    char *colon = strchr(buf, ':');
    if (colon)
        *colon = 0;
    if (kvp_parse_tokens(buf, &w) || (colon && parse_u(colon + 1, 0, 65536, &every)))
        return bad_param(err, "sliding-window", p, "W[:K] (a window, every K-th layer full; "
                         "K 0: every layer slides), or off");
    add_window(o, w, every, "");
    return 0;
}

/* ---- A5 hybrid (recurrent state layers) ---------------------------------------------------- */

static int offer_hybrid(const tech_ctx *c, const tech_census *k, const char *p, offer *o,
                        kvp_error *err)
{
    (void)c;
    o->used = k->state > 0;
    if (o->used && (!p || is_off(p))) {
        tech_variant *v = add(o, "hybrid", KVP_LABEL_EXACT, "a fixed state -> attention",
                              "the model's recurrent layers as full attention of its own "
                              "attention shape; the row's inverse is what the state buys");
        snprintf(v->name, sizeof v->name, "no state: the %u state layers as attention", k->state);
        step(v, OP_UNHYBRID, 0, 0, 0, NULL);
        return 0;
    }
    if (is_off(p))
        return refuse(o, "the model has no recurrent state layer");
    uint64_t every = 4;
    if (p && parse_u(p, 1, 65536, &every))
        return bad_param(err, "hybrid", p, "K (every K-th attention layer stays), or off");
    if (!k->per_head && !k->mla)
        return o->n ? 0 : refuse(o, no_attention(k));
    tech_variant *v = add(o, "hybrid", KVP_LABEL_EXACT, "attention -> a fixed state",
                          "a different model (trained as a hybrid); Qwen3.5's Gated DeltaNet "
                          "state (16 key, 32 value heads of 128, conv 4, state in float32) "
                          "per sequence; vLLM enlarges the block to hold a state and, with "
                          "prefix caching, reserves 2 state blocks per request");
    snprintf(v->name, sizeof v->name, "GDN state, every %llu%s attention layer kept",
             (unsigned long long)every, every == 2 ? "nd" : every == 3 ? "rd" : "th");
    step(v, OP_HYBRID, 0, every, 0, NULL);
    return 0;
}

/* ---- A6 KV quantization ------------------------------------------------------------------ */

static const struct quant_scheme {
    const char *s, *name, *assumptions;
    kvp_tech_label label;
} schemes[] = {
    {"fp8", "fp8 (e4m3 / e5m2)", "vLLM --kv-cache-dtype fp8: 1 byte a value, per-tensor "
     "scales outside the page (1.0 unless calibrated); llama.cpp has no fp8 cache",
     KVP_LABEL_EXACT},
    {"q8_0", "q8_0 (llama.cpp)", "ggml blocks of 32 values with an fp16 scale (34 B); "
     "near-lossless; a quantized V cache needs flash attention", KVP_LABEL_EXACT},
    {"q4_0", "q4_0 (llama.cpp)", "ggml blocks of 32 4-bit values with an fp16 scale (18 B); "
     "a quantized V cache needs flash attention", KVP_LABEL_EXACT},
    {"nvfp4", "nvfp4 (vLLM)", "16 4-bit values and an fp8 scale (9 B per 16); the kernels "
     "need a Blackwell GPU", KVP_LABEL_EXACT},
    {"turboquant_k8v4", "turboquant_k8v4 (vLLM)", "fp8 keys, 4-bit values with fp16 scale "
     "and zero; dense models keep layers 0, 1, L-2, L-1 in the model dtype; vLLM's study: "
     "about 80% of bf16 throughput", KVP_LABEL_EXACT},
    {"turboquant_4bit_nc", "turboquant_4bit_nc (vLLM)", "4-bit Lloyd-Max keys after a "
     "Hadamard rotation (fp16 norm), 4-bit values; boundary layers in the model dtype",
     KVP_LABEL_EXACT},
    {"turboquant_k3v4_nc", "turboquant_k3v4_nc (vLLM)", "3-bit keys, 4-bit values; up to "
     "about 20 points lost on reasoning benchmarks in vLLM's study", KVP_LABEL_EXACT},
    {"turboquant_3bit_nc", "turboquant_3bit_nc (vLLM)", "3-bit keys and values; the most "
     "compact preset, the largest accuracy cost (vLLM's study: 66-73% of bf16 throughput)",
     KVP_LABEL_EXACT},
    {"kivi2", "KIVI-2: 2-bit, group 32, 128 recent fp16", "research code "
     "(jy-yuan/KIVI): fp16 scale and zero per 32 values, the last 128 tokens of each "
     "sequence unquantized (counted in the fixed bytes)", KVP_LABEL_THEORY},
};

static int offer_quant(const tech_ctx *c, const tech_census *k, const char *p, offer *o,
                       kvp_error *err)
{
    kvp_dtype t = c->theory.type_k;
    o->used = (t != KVP_F16 && t != KVP_BF16 && t != KVP_F32) ||
              (c->r->runtime == KVP_RT_VLLM &&
               (c->vllm.kv_fp8 || (c->vllm.kv_cache_dtype &&
                                   strcmp(c->vllm.kv_cache_dtype, "auto") &&
                                   strcmp(c->vllm.kv_cache_dtype, "bfloat16") &&
                                   strcmp(c->vllm.kv_cache_dtype, "float16"))));
    size_t n = sizeof schemes / sizeof schemes[0], i = 0;
    if (p) {
        while (i < n && strcmp(schemes[i].s, p))
            i++;
        if (i == n)
            return bad_param(err, "kv-quant", p, "fp8, q8_0, q4_0, nvfp4, kivi2, "
                             "turboquant_k8v4, turboquant_4bit_nc, turboquant_k3v4_nc or "
                             "turboquant_3bit_nc");
        n = i + 1;
    }
    if (!k->per_head && !k->mla)
        return refuse(o, "the model has no KV cache: its state's dtype is separate");
    /* vLLM's TurboQuant refuses some models as a whole: one row says so */
    kvp_model *tq;
    kvp_error e;
    int tq_ok = kvp_vllm_turboquant(c->m, "turboquant_k8v4", &tq, &e) == 0;
    if (tq_ok)
        kvp_model_free(tq);
    else
        snprintf(o->skipped_why, sizeof o->skipped_why, "%s", e.msg);
    for (; i < n; i++) {
        if (!tq_ok && !strncmp(schemes[i].s, "turboquant_", 11)) {
            if (p)
                return kvp_fail(err, KVP_EINPUT, "%s", e.msg);
            snprintf(o->skipped, sizeof o->skipped, "turboquant_* (vLLM)");
            continue;
        }
        tech_variant *v = add(o, "kv-quant", schemes[i].label, "bytes per stored value",
                              schemes[i].assumptions);
        snprintf(v->name, sizeof v->name, "%s", schemes[i].name);
        step(v, OP_QUANT, 0, 0, 0, schemes[i].s);
    }
    return 0;
}

/* ---- A7 token eviction ------------------------------------------------------------------- */

static const char evict_costs[] =
    "research code on transformers, no runtime here implements it: evicted tokens are gone "
    "(early details, multi-turn recall) and the cache becomes request-specific, which breaks "
    "exact prefix reuse; vLLM's figure prices the kept tokens as a request of that length "
    "(a model)";

static int offer_evict(const tech_ctx *c, const tech_census *k, const char *p, offer *o,
                       kvp_error *err)
{
    (void)c;
    if (!k->per_head && !k->mla)
        return refuse(o, no_attention(k));
    uint64_t a = 0, b = 0;
    double f = 0;
    if (!p || !strcmp(p, "streamingllm")) {
        tech_variant *v = add(o, "token-eviction", KVP_LABEL_THEORY, "tokens held per layer",
                              evict_costs);
        snprintf(v->name, sizeof v->name, "StreamingLLM: 4 sinks + 2,000 recent");
        step(v, OP_EVICT, 4, 2000, 0, NULL);
    }
    if (!p || !strcmp(p, "snapkv")) {
        tech_variant *v = add(o, "token-eviction", KVP_LABEL_THEORY, "tokens held per layer",
                              evict_costs);
        snprintf(v->name, sizeof v->name, "SnapKV: 2,048 prompt tokens (no output)");
        step(v, OP_EVICT, 2048, 0, 0, NULL);
    }
    if (!p || !strcmp(p, "h2o")) {
        tech_variant *v = add(o, "token-eviction", KVP_LABEL_THEORY, "tokens held per layer",
                              evict_costs);
        snprintf(v->name, sizeof v->name, "H2O: 10%% heavy hitters + 10%% recent");
        step(v, OP_EVICT, 0, 0, 0.2, NULL);
    }
    if (o->n || !p)
        return 0;
    size_t len = strlen(p);
    char buf[64];
    snprintf(buf, sizeof buf, "%s", p);
    if (len > 1 && p[len - 1] == '%') {
        buf[len - 1] = 0;
        uint64_t pct;
        if (parse_u(buf, 1, 99, &pct))
            return bad_param(err, "token-eviction", p, "a budget such as 2048, 4+2000 or 20%");
        f = (double)pct / 100.0;
    } else {
        char *plus = strchr(buf, '+');
        if (plus)
            *plus = 0;
        if (kvp_parse_tokens(buf, &a) || (plus && kvp_parse_tokens(plus + 1, &b)))
            return bad_param(err, "token-eviction", p, "a budget such as 2048, 4+2000 or 20% "
                             "(or streamingllm, snapkv, h2o)");
    }
    tech_variant *v = add(o, "token-eviction", KVP_LABEL_THEORY, "tokens held per layer",
                          evict_costs);
    if (f > 0)
        snprintf(v->name, sizeof v->name, "keep %s of the tokens", p);
    else
        snprintf(v->name, sizeof v->name, "keep %llu tokens", (unsigned long long)(a + b));
    step(v, OP_EVICT, a, b, f, NULL);
    return 0;
}

/* ---- A8 compressed attention ---------------------------------------------------------------- */

static const char comp_costs[] =
    "only for models trained with it (DeepSeek-V4's CSA/HCA, NSA); floor(N / r) compressed "
    "entries plus a raw window of w tokens per layer; cannot be retrofitted";

static int offer_compress(const tech_ctx *c, const tech_census *k, const char *p, offer *o,
                          kvp_error *err)
{
    (void)c;
    if (!k->per_head && !k->mla)
        return refuse(o, no_attention(k));
    uint64_t r = 4, w = 128;
    if (p && strcmp(p, "nsa")) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", p);
        char *colon = strchr(buf, ':');
        if (colon)
            *colon = 0;
        if (parse_u(buf, 2, 1u << 20, &r) || (colon && kvp_parse_tokens(colon + 1, &w)))
            return bad_param(err, "compressed", p, "R[:W] (a ratio from 2, a raw window) or nsa");
    }
    if (!p || strcmp(p, "nsa")) {
        tech_variant *v = add(o, "compressed", KVP_LABEL_THEORY, "entries per token", comp_costs);
        snprintf(v->name, sizeof v->name, "r %llu w %llu%s", (unsigned long long)r,
                 (unsigned long long)w, p ? "" : " (DeepSeek-V4's CSA)");
        step(v, OP_COMPRESS, r, w, 0, NULL);
    }
    if (!p) {
        tech_variant *v = add(o, "compressed", KVP_LABEL_THEORY, "entries per token", comp_costs);
        snprintf(v->name, sizeof v->name, "r 128 w 128 (DeepSeek-V4's HCA)");
        step(v, OP_COMPRESS, 128, 128, 0, NULL);
    }
    if (!p || !strcmp(p, "nsa")) {
        tech_variant *v = add(o, "compressed", KVP_LABEL_THEORY, "entries per token",
                              "NSA keeps the raw tokens for its selection branch and adds "
                              "floor((N - 32) / 16) + 1 compressed blocks: it stores more, and "
                              "saves in reads (see sparse-read)");
        snprintf(v->name, sizeof v->name, "NSA: raw tokens + compressed blocks");
        step(v, OP_COMPRESS, 16, 0, 0, "nsa");
    }
    return 0;
}

/* ---- the table ------------------------------------------------------------------------------ */

typedef int (*offer_fn)(const tech_ctx *, const tech_census *, const char *, offer *,
                        kvp_error *);

static const struct store_tech {
    const char *id;
    offer_fn offer;
} techs[] = {
    {"gqa", offer_gqa},
    {"cross-layer", offer_cross_layer},
    {"mla", offer_mla},
    {"sliding-window", offer_window},
    {"hybrid", offer_hybrid},
    {"kv-quant", offer_quant},
    {"token-eviction", offer_evict},
    {"compressed", offer_compress},
};

int tech_store_variant(tech_ctx *c, const tech_variant *v, int used, kvp_tech_row *row,
                       kvp_error *err)
{
    tech_applied a;
    kvp_error why;
    kvp_tech_store *s = &row->u.store;
    snprintf(row->variant, sizeof row->variant, "%s", v->name);
    snprintf(row->changes, sizeof row->changes, "%s", v->changes);
    snprintf(row->assumptions, sizeof row->assumptions, "%s", v->assumptions);
    row->unit = "bytes/token";
    row->already_used = used;
    row->label = v->label;
    if (tech_apply(c, v->steps, v->n_steps, &a, &why)) {
        if (why.code == KVP_EUSAGE)
            return *err = why, -1;
        snprintf(row->reason, sizeof row->reason, "%s", why.msg);
        return 0;
    }
    int rc = tech_eval(c, &a, s, err);
    tech_applied_free(&a);
    if (rc)
        return -1;
    tech_relate(&c->r->base, s);
    row->computed = 1;
    row->value = s->per_token_bytes;
    row->baseline = c->r->base.per_token_bytes;
    if (c->r->runtime != KVP_RT_THEORY && s->rt_computed) {
        row->label = s->rt_label == KVP_LABEL_MODEL ? KVP_LABEL_MODEL
                     : v->label == KVP_LABEL_THEORY ? KVP_LABEL_THEORY : KVP_LABEL_EXACT;
        row->multiplier = c->r->runtime == KVP_RT_VLLM
                              ? s->rt_tokens_multiplier
                              : (double)c->r->base.rt_bytes / (double)s->rt_bytes;
    } else {
        row->multiplier = s->theory_multiplier;
        if (c->r->runtime != KVP_RT_THEORY && v->label == KVP_LABEL_EXACT)
            row->label = KVP_LABEL_THEORY; /* this runtime cannot run it: config arithmetic */
    }
    return 0;
}

static const struct store_tech *find_tech(const char *id, size_t len)
{
    for (size_t i = 0; i < sizeof techs / sizeof techs[0]; i++)
        if (strlen(techs[i].id) == len && !strncmp(techs[i].id, id, len))
            return &techs[i];
    return NULL;
}

int tech_variant_parse(const tech_ctx *c, const char *item, tech_variant *v, kvp_error *err)
{
    const char *eq = strchr(item, '=');
    size_t len = eq ? (size_t)(eq - item) : strlen(item);
    const struct store_tech *t = find_tech(item, len);
    tech_census k;
    offer *o = calloc(1, sizeof *o);
    if (!o)
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    if (!t) {
        free(o);
        return kvp_fail(err, KVP_EUSAGE, "--apply %.*s: not a store-fewer-bytes technique "
                        "(gqa, cross-layer, mla, sliding-window, hybrid, kv-quant, "
                        "token-eviction, compressed)", (int)len, item);
    }
    tech_census_of(c->m, &k);
    int rc = t->offer(c, &k, eq ? eq + 1 : NULL, o, err);
    if (!rc && !o->n)
        rc = kvp_fail(err, KVP_EINPUT, "--apply %s: %s: %s", item, c->m->name, o->reason);
    if (!rc)
        *v = o->v[0];
    free(o);
    return rc;
}

int tech_store_rows(tech_ctx *c, kvp_error *err)
{
    tech_census k;
    tech_census_of(c->m, &k);
    offer *o = malloc(sizeof *o);
    if (!o)
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    int rc = 0;
    for (size_t t = 0; t < sizeof techs / sizeof techs[0] && !rc; t++) {
        memset(o, 0, sizeof *o);
        if ((rc = techs[t].offer(c, &k, NULL, o, err)))
            break;
        if (!o->n) {
            kvp_tech_row *row = tech_row_new(c, techs[t].id, KVP_TECH_STORE);
            if (!row) {
                rc = kvp_fail(err, KVP_EINPUT, "too many technique rows");
                break;
            }
            row->unit = "bytes/token";
            row->already_used = o->used;
            snprintf(row->variant, sizeof row->variant, "-");
            snprintf(row->reason, sizeof row->reason, "%s", o->reason);
            continue;
        }
        for (int i = 0; i < o->n && !rc; i++) {
            kvp_tech_row *row = tech_row_new(c, techs[t].id, KVP_TECH_STORE);
            rc = row ? tech_store_variant(c, &o->v[i], o->used, row, err)
                     : kvp_fail(err, KVP_EINPUT, "too many technique rows");
        }
        if (!rc && o->skipped[0]) {
            kvp_tech_row *row = tech_row_new(c, techs[t].id, KVP_TECH_STORE);
            if (!row) {
                rc = kvp_fail(err, KVP_EINPUT, "too many technique rows");
                break;
            }
            row->unit = "bytes/token";
            row->already_used = o->used;
            snprintf(row->variant, sizeof row->variant, "%s", o->skipped);
            snprintf(row->reason, sizeof row->reason, "%s", o->skipped_why);
        }
    }
    free(o);
    return rc;
}
