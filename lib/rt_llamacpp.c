/* rt_llamacpp.c - llama.cpp's rules for the KV cache and recurrent state,
 * byte for byte (shared/reference/llamacpp-kv-rules.md has the source
 * locations; the section numbers below refer to it).
 *
 *   n_ctx     padded up to 256; not unified: n_seq streams of
 *             PAD(n_ctx / n_seq, 256) cells each                      (1)
 *   K, V      ggml rows of kv_heads x head_dim; V omitted for MLA;
 *             with -fa off every V row is the widest one              (2, 4, 6)
 *   SWA       PAD(min(n_ctx_seq, W x (unified ? n_seq : 1) + n_ubatch), 256)
 *             cells per stream, or n_ctx_seq with --swa-full          (5)
 *   state     f32, max(1, n_seq) x (1 + n_rs_seq) rows per recurrent layer,
 *             R = (d_conv-1)(d_inner + 2 n_group d_state), S = d_state d_inner (7)
 *   indexer   DSA / MSA: a cache of its own over the layers with an indexer,
 *             one head of indexer_head_dim in type_k, n_ctx_seq cells; K only
 *             when the model is MLA, else with the layer's V (MSA)     (9)
 *
 * Rules that changed between releases live in the version table, so adding
 * a release is one row. */
#include <stdio.h>
#include <string.h>

#include "kvp_int.h"
#include "llama_int.h"
#include "twin.h" /* twin_arch_find: which architectures have a window rule */

#define PAD(x, n) ((((x) + (n) - 1) / (n)) * (n))
#define LLAMA_MAX_SEQ 256

/* The releases kvplan's rules match.  They agree on every allocation rule
 * for an explicit -c; they differ in the context llama-server starts from
 * when -c is not given (PR #28849 in v0.5.0, reverted by #29437 in b11223). */
static const struct llama_version {
    const char *name, *matches;
    uint32_t first_build, last_build;
    int fit_ctx_times_seqs;  /* -c unset: n_ctx_train x n_seq (else x streams) */
} versions[] = {
    {"v0.5.0", "llama.cpp v0.5.0 = b11146 (node-llama-cpp 3.22.1's prebuilt build)", 11146, 11222, 1},
    {"b11223", "llama.cpp b11223 = 4da6337 (the published measurements)", 11223, 99999, 0},
};
#define N_VERSIONS (sizeof versions / sizeof versions[0])

const char *kvp_llama_versions(void)
{
    static char buf[512];
    if (!buf[0])
        for (size_t i = 0; i < N_VERSIONS; i++)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s (%s)", i ? ", " : "",
                     versions[i].name, versions[i].matches);
    return buf;
}

static const struct llama_version *find_version(const char *v)
{
    unsigned build;
    if (!v)
        return &versions[0];
    for (size_t i = 0; i < N_VERSIONS; i++)
        if (strcmp(v, versions[i].name) == 0)
            return &versions[i];
    if (strcmp(v, "4da6337") == 0)
        return &versions[1];
    if (sscanf(v, "b%u", &build) == 1)
        for (size_t i = 0; i < N_VERSIONS; i++)
            if (build >= versions[i].first_build && build <= versions[i].last_build)
                return &versions[i];
    return NULL;
}

void kvp_llama_defaults(kvp_llama_params *p)
{
    memset(p, 0, sizeof *p);
    p->n_seq = -1;
    p->n_batch = 2048;
    p->n_ubatch = 512;
    p->type_k = p->type_v = KVP_F16;
    p->flash_attn = KVP_FA_AUTO;
    p->kv_unified = -1;
}

/* llama.cpp honours sliding windows only in the architectures that set a
 * swa_type (5); elsewhere (llama, qwen2/3, phi3...) a window in the config
 * is ignored and every layer is full. */
static int honours_swa(const kvp_model *m, const kvp_llama_params *p)
{
    if (p->swa_any_arch)
        return 1;
    static const char *const swa_archs[] = {
        "gemma2", "gemma3", "gemma3n", "gemma4", "cohere2", "cohere2moe", "gpt-oss",
        "llama4", "exaone4", "exaone-moe", "afmoe", "olmo2", "smallthinker", "lfm2",
        "lfm2moe", "granite_swa", "plamo3", "mimo2", "step35", "laguna", NULL};
    for (const char *const *a = swa_archs; *a; a++)
        if (strcmp(m->gguf_arch, *a) == 0)
            return 1;
    /* and every architecture whose twin_arch row has a sliding-window rule */
    const twin_arch *ta = m->gguf_arch[0] ? twin_arch_find(m->gguf_arch) : NULL;
    return ta && ta->swa != SWA_NONE;
}

/* Architectures whose llama.cpp graph assumes a sliding-window cache exists
 * (it asserts when none does). */
static int needs_swa(const kvp_model *m)
{
    static const char *const archs[] = {"gemma2", "gpt-oss", "cohere2", "gemma3n", NULL};
    for (const char *const *a = archs; *a; a++)
        if (strcmp(m->gguf_arch, *a) == 0)
            return 1;
    return 0;
}

static int is_attention(kvp_layer_kind k)
{
    return k == KVP_LAYER_FULL || k == KVP_LAYER_SLIDING || k == KVP_LAYER_CHUNKED ||
           k == KVP_LAYER_MLA || k == KVP_LAYER_SHARED;
}

/* Does layer il go to the SWA cache?  Shared layers keep their window. */
static int is_swa(const kvp_model *m, const kvp_llama_params *p, uint32_t il)
{
    const kvp_layer *L = &m->layers[il];
    return honours_swa(m, p) && L->window &&
           (L->kind == KVP_LAYER_SLIDING || L->kind == KVP_LAYER_CHUNKED ||
            L->kind == KVP_LAYER_SHARED);
}

/* Section 1: context, sequences, streams, batch sizes. */
static int resolve_context(const kvp_model *m, const kvp_llama_params *p,
                           const struct llama_version *v, kvp_llama_result *r, kvp_error *err)
{
    int auto_np = p->n_seq < 0;
    uint32_t n_seq = auto_np ? 4 : (uint32_t)(p->n_seq ? p->n_seq : 1);
    if (n_seq > LLAMA_MAX_SEQ)
        return kvp_fail(err, KVP_EINPUT, "-np %u: llama.cpp allows at most %d sequences", n_seq,
                        LLAMA_MAX_SEQ);
    r->unified = p->kv_unified >= 0 ? p->kv_unified : auto_np;
    r->n_seq = n_seq;
    r->n_stream = r->unified ? 1 : n_seq;
    uint64_t n_ctx = p->n_ctx;
    if (!n_ctx) {
        if (!m->max_position)
            return kvp_fail(err, KVP_EUSAGE, "%s: the model names no training context; give -c",
                            m->name);
        n_ctx = m->max_position * (v->fit_ctx_times_seqs ? n_seq : r->n_stream);
        KVP_NOTE(r, "-c not given: llama-server %s starts from %s = %llu tokens; its --fit may "
                "shrink that to fit free memory", v->name,
             v->fit_ctx_times_seqs ? "n_ctx_train x n_seq" : "n_ctx_train x streams",
             (unsigned long long)n_ctx);
    }
    if (n_ctx > KVP_MAX_TOKENS)
        return kvp_fail(err, KVP_EINPUT, "-c %llu: above 2^40 tokens", (unsigned long long)n_ctx);
    r->n_batch = (uint32_t)(p->n_batch < n_ctx ? p->n_batch : n_ctx);
    r->n_ubatch = p->n_ubatch && p->n_ubatch < r->n_batch ? p->n_ubatch : r->n_batch;
    n_ctx = PAD(n_ctx, 256);
    if (r->unified) {
        r->n_ctx_seq = n_ctx;
    } else {
        r->n_ctx_seq = PAD(n_ctx / n_seq, 256);
        n_ctx = r->n_ctx_seq * n_seq;
    }
    r->n_ctx = n_ctx;
    if (m->max_position && r->n_ctx_seq > m->max_position)
        KVP_NOTE(r, "llama_context: n_ctx_seq (%llu) > n_ctx_train (%llu) -- possible training "
                "context overflow", (unsigned long long)r->n_ctx_seq,
             (unsigned long long)m->max_position);
    return 0;
}

static int is_quantized(kvp_dtype t) { return kvp_dtype_block(t) > 1; }

/* Section 2.1: the checks llama_init_from_model makes before it allocates. */
static int check_types(const kvp_model *m, const kvp_llama_params *p, kvp_llama_result *r,
                       kvp_error *err)
{
    int mla = 0;
    for (uint32_t il = 0; il < m->n_layers; il++)
        mla |= m->layers[il].kind == KVP_LAYER_MLA;
    for (int kv = 0; kv < 2; kv++) {
        kvp_dtype t = kv ? p->type_v : p->type_k;
        if (t == KVP_FP8 || t == KVP_NVFP4 || t == KVP_KIVI2)
            return kvp_fail(err, KVP_EINPUT, "%s: not a llama.cpp cache type (use f16, bf16, "
                            "f32, q8_0, q4_0, q4_1, q5_0, q5_1 or iq4_nl)", kvp_dtype_name(t));
    }
    for (uint32_t il = 0; il < m->n_layers; il++)
        if (m->layers[il].kind == KVP_LAYER_CROSS)
            return kvp_fail(err, KVP_EINPUT, "%s: layer %u is cross-attention to an encoder; "
                            "llama.cpp v0.5.0 has no such cache (no Mllama architecture)",
                            m->name, il);
    for (uint32_t il = 0; il < m->n_layers; il++)
        if (m->layers[il].kv_slot_bytes)
            return kvp_fail(err, KVP_EINPUT, "%s: layer %u has a packed TurboQuant slot, vLLM's "
                            "layout; llama.cpp has no such cache type", m->name, il);
    if (mla && p->type_k != p->type_v)
        return kvp_fail(err, KVP_EINPUT, "%s: model does not support different K (%s) and V (%s) "
                        "cache types", m->name, kvp_dtype_name(p->type_k), kvp_dtype_name(p->type_v));
    /* llama_init_from_model turns flash attention off for Grok, whatever -fa says */
    kvp_flash_attn fa = strcmp(m->gguf_arch, "grok") == 0 ? KVP_FA_OFF : p->flash_attn;
    if (fa != p->flash_attn)
        KVP_NOTE(r, "llama_init_from_model: flash_attn is not compatible with Grok - forcing off");
    r->flash_attn_on = fa != KVP_FA_OFF;
    if (is_quantized(p->type_v) && fa == KVP_FA_OFF)
        return kvp_fail(err, KVP_EINPUT, "-ctv %s: quantized V cache requires flash_attn to be "
                        "enabled (-fa on)", kvp_dtype_name(p->type_v));
    r->v_trans = fa == KVP_FA_OFF;
    for (int kv = 0; kv < 2 && r->flash_attn_on; kv++) {
        kvp_dtype t = kv ? p->type_v : p->type_k;
        if (!is_quantized(t))
            continue;
        for (uint32_t il = 0; il < m->n_layers; il++) {
            const kvp_layer *L = &m->layers[il];
            uint32_t hd = kv ? L->head_dim_v : L->head_dim_k;
            if (is_attention(L->kind) && hd % kvp_dtype_block(t))
                return kvp_fail(err, KVP_EINPUT, "%s: %c cache type %s with block size %u does "
                                "not divide n_embd_head_%c=%u", m->name, kv ? 'V' : 'K',
                                kvp_dtype_name(t), kvp_dtype_block(t), kv ? 'v' : 'k', hd);
        }
    }
    return 0;
}

static int row_bytes(const kvp_model *m, kvp_dtype t, uint64_t n, uint32_t il, kvp_error *err,
                     uint64_t *out)
{
    if (kvp_dtype_row_bytes(t, n, out) == 0)
        return 0;
    return kvp_fail(err, KVP_EINPUT, "%s: cache type %s stores blocks of %u values, but layer "
                    "%u's row has %llu", m->name, kvp_dtype_name(t), kvp_dtype_block(t), il,
                    (unsigned long long)n);
}

/* Section 8: architectures whose attention-free layers (n_head_kv 0, no
 * recurrent state) still belong to the KV cache with zero-sized K and V
 * (deci: Nemotron-NAS no-op and linear-replaced attention), so they count
 * in its "layers" but add no bytes.  kvplan reads those layers as none. */
static int zero_kv_layer(const kvp_model *m, const kvp_layer *L)
{
    return L->kind == KVP_LAYER_NONE && !L->d_inner && strcmp(m->gguf_arch, "deci") == 0;
}

/* Tells the visitor (kvp_llama_walk) about one tensor of `cells` x streams
 * rows of `row` bytes. */
static void visit(const kvp_cache_visitor *vis, int cache, uint32_t il, char what, kvp_dtype t,
                  uint64_t ne0, uint64_t row, uint64_t rows)
{
    if (!vis || !vis->fn)
        return;
    kvp_cache_tensor ct = {cache, il, what, t, ne0, row * rows}; /* checked by the caller */
    vis->fn(vis->arg, &ct);
}

/* Section 4: one llama_kv_cache over the layers `swa` selects. */
static int build_cache(const kvp_model *m, const kvp_llama_params *p, kvp_llama_result *r,
                       int swa, uint64_t cells, const kvp_cache_visitor *vis, kvp_error *err)
{
    int ci = (int)r->n_caches;
    kvp_llama_cache *c = &r->caches[r->n_caches++];
    uint64_t v_max = 0;
    snprintf(c->name, sizeof c->name, "%s", swa ? "kv_swa" : "kv");
    c->cells = (uint32_t)cells;
    c->seqs = r->n_seq;
    c->streams = r->n_stream;
    c->k_type = p->type_k;
    c->v_type = p->type_v;
    for (uint32_t il = 0; il < m->n_layers; il++) {
        const kvp_layer *L = &m->layers[il];
        uint64_t w = (uint64_t)L->n_kv_heads * L->head_dim_v;
        if (is_attention(L->kind) && w > v_max)
            v_max = w;
    }
    for (uint32_t il = 0; il < m->n_layers; il++) {
        const kvp_layer *L = &m->layers[il];
        uint64_t k, v = 0, per, kb, vb;
        if (!swa && zero_kv_layer(m, L)) {
            /* no K; V is padded to the widest row with -fa off, as every layer's */
            c->layers++;
            if (r->v_trans && row_bytes(m, p->type_v, v_max, il, err, &v))
                return -1;
            if (kvp_mul(cells, r->n_stream, &per) || kvp_mul(v, per, &vb) ||
                kvp_add(c->v_bytes, vb, &c->v_bytes))
                return kvp_fail(err, KVP_EINPUT, "%s: KV size overflows 64 bits", m->name);
            visit(vis, ci, il, 'K', p->type_k, 0, 0, per);
            visit(vis, ci, il, 'V', p->type_v, r->v_trans ? v_max : 0, v, per);
            continue;
        }
        if (!is_attention(L->kind) || is_swa(m, p, il) != swa)
            continue;
        if (L->kind == KVP_LAYER_SHARED)
            continue; /* reuses another layer's tensors: not one of this cache's layers */
        c->layers++;
        if (row_bytes(m, p->type_k, (uint64_t)L->n_kv_heads * L->head_dim_k, il, err, &k))
            return -1;
        if (L->kind != KVP_LAYER_MLA &&
            row_bytes(m, p->type_v, r->v_trans ? v_max : (uint64_t)L->n_kv_heads * L->head_dim_v,
                      il, err, &v))
            return -1;
        if (kvp_mul(cells, r->n_stream, &per) || kvp_mul(k, per, &kb) || kvp_mul(v, per, &vb) ||
            kvp_add(c->k_bytes, kb, &c->k_bytes) || kvp_add(c->v_bytes, vb, &c->v_bytes))
            return kvp_fail(err, KVP_EINPUT, "%s: KV size overflows 64 bits", m->name);
        visit(vis, ci, il, 'K', p->type_k, (uint64_t)L->n_kv_heads * L->head_dim_k, k, per);
        if (L->kind != KVP_LAYER_MLA)
            visit(vis, ci, il, 'V', p->type_v,
                  r->v_trans ? v_max : (uint64_t)L->n_kv_heads * L->head_dim_v, v, per);
    }
    c->bytes = c->k_bytes + c->v_bytes;
    return kvp_add(r->total_bytes, c->bytes, &r->total_bytes)
               ? kvp_fail(err, KVP_EINPUT, "%s: KV size overflows 64 bits", m->name) : 0;
}

/* Section 9: which architectures give the layers that carry a DSA/MSA
 * indexer (kvp_layer.indexer_head_dim) a cache of their own, and where
 * llama.cpp builds it. */
enum idx_form {
    IDX_NONE,        /* no indexer cache: a layer with an indexer is refused */
    IDX_DSA,         /* llama_kv_cache_dsa: the MLA cache, then the indexer cache */
    IDX_DSA_ISWA,    /* llama_kv_cache_dsa_iswa: DSA (MLA, indexer), then SWA */
    IDX_MSA,         /* llama_kv_cache_msa: main cache, then the indexer cache (with V) */
    IDX_HYBRID,      /* llama_memory_hybrid_idx: attention, recurrent, then idx_ */
};

static enum idx_form indexer_form(const kvp_model *m)
{
    static const struct {
        const char *arch;
        enum idx_form form;
    } forms[] = {
        {"deepseek32", IDX_DSA}, {"glm-dsa", IDX_DSA},     {"hy_v4", IDX_DSA},
        {"dots3note", IDX_DSA_ISWA}, {"minimax-m3", IDX_MSA}, {"qwen4exp", IDX_HYBRID},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        if (strcmp(m->gguf_arch, forms[i].arch) == 0)
            return forms[i].form;
    return IDX_NONE;
}

static int has_indexer(const kvp_model *m)
{
    for (uint32_t il = 0; il < m->n_layers; il++)
        if (m->layers[il].indexer_head_dim)
            return 1;
    return 0;
}

/* Section 9: the indexer cache, a llama_kv_cache over the layers with an
 * indexer whose hparams copy has one KV head of indexer key_length.  The
 * copy is still MLA when the model is, or made MLA (qwen4exp's idx_), so
 * then it holds K only; otherwise (MSA) it keeps the model's V width,
 * padded as section 4 pads V. */
static int build_indexer_cache(const kvp_model *m, const kvp_llama_params *p,
                               kvp_llama_result *r, int after_recurrent,
                               const kvp_cache_visitor *vis, kvp_error *err)
{
    int ci = (int)r->n_caches;
    kvp_llama_cache *c = &r->caches[r->n_caches++];
    int mla = 0;
    uint64_t v_max = 0;
    snprintf(c->name, sizeof c->name, "kv_idx");
    c->cells = (uint32_t)r->n_ctx_seq;
    c->seqs = r->n_seq;
    c->streams = r->n_stream;
    c->k_type = p->type_k;
    c->v_type = p->type_v;
    c->after_recurrent = after_recurrent;
    /* llama_memory_hybrid_idx makes its copy MLA on purpose: K only */
    mla = indexer_form(m) == IDX_HYBRID;
    for (uint32_t il = 0; il < m->n_layers; il++) {
        mla |= m->layers[il].kind == KVP_LAYER_MLA;
        if (is_attention(m->layers[il].kind) && m->layers[il].head_dim_v > v_max)
            v_max = m->layers[il].head_dim_v;
    }
    for (uint32_t il = 0; il < m->n_layers; il++) {
        const kvp_layer *L = &m->layers[il];
        uint64_t k, v = 0, per, kb, vb;
        if (!L->indexer_head_dim)
            continue;
        c->layers++;
        if (row_bytes(m, p->type_k, L->indexer_head_dim, il, err, &k) ||
            (!mla && row_bytes(m, p->type_v, r->v_trans ? v_max : L->head_dim_v, il, err, &v)))
            return -1;
        if (kvp_mul(r->n_ctx_seq, r->n_stream, &per) || kvp_mul(k, per, &kb) ||
            kvp_mul(v, per, &vb) || kvp_add(c->k_bytes, kb, &c->k_bytes) ||
            kvp_add(c->v_bytes, vb, &c->v_bytes))
            return kvp_fail(err, KVP_EINPUT, "%s: indexer cache size overflows 64 bits", m->name);
        visit(vis, ci, il, 'K', p->type_k, L->indexer_head_dim, k, per);
        if (!mla)
            visit(vis, ci, il, 'V', p->type_v, r->v_trans ? v_max : L->head_dim_v, v, per);
    }
    c->bytes = c->k_bytes + c->v_bytes;
    return kvp_add(r->total_bytes, c->bytes, &r->total_bytes)
               ? kvp_fail(err, KVP_EINPUT, "%s: KV size overflows 64 bits", m->name) : 0;
}

static int build_kv_iswa(const kvp_model *m, const kvp_llama_params *p, kvp_llama_result *r,
                         int idx_between, const kvp_cache_visitor *vis, kvp_error *err);

/* Section 5: base cache, plus the SWA cache when a layer slides; section 9:
 * the indexer cache where the architecture builds one. */
static int build_kv(const kvp_model *m, const kvp_llama_params *p, kvp_llama_result *r,
                    const kvp_cache_visitor *vis, kvp_error *err)
{
    enum idx_form idx = indexer_form(m);
    if (has_indexer(m) && idx == IDX_NONE)
        return kvp_fail(err, KVP_EINPUT, "%s: the model's layers carry a DSA indexer key cache; "
                        "llama.cpp's %s architecture has none (llama.cpp v0.5.0 builds one for "
                        "deepseek32, glm-dsa, hy_v4, dots3note, minimax-m3 and qwen4exp)",
                        m->name, m->gguf_arch[0] ? m->gguf_arch : m->arch);
    /* DSA and MSA build the indexer cache even when no layer ends up in it
     * (GLM-5.2's "shared" layers only); hy_v4 without an indexer (top_k 0)
     * builds none, and qwen4exp refuses to load without one */
    int always = idx == IDX_DSA || idx == IDX_DSA_ISWA || idx == IDX_MSA;
    if (!strcmp(m->gguf_arch, "hy_v4"))
        always = 0;
    if (idx == IDX_HYBRID && !has_indexer(m))
        return kvp_fail(err, KVP_EINPUT, "%s: llama.cpp's qwen4exp requires the QSA indexer "
                        "(attention.indexer.*, greater than zero); the model has none", m->name);
    if (!always && !has_indexer(m))
        idx = IDX_NONE;
    if (idx == IDX_HYBRID)
        return build_kv_iswa(m, p, r, 0, vis, err) || build_indexer_cache(m, p, r, 1, vis, err)
                   ? -1 : 0;
    if (idx == IDX_DSA_ISWA)
        return build_kv_iswa(m, p, r, 1, vis, err);
    if (build_kv_iswa(m, p, r, 0, vis, err))
        return -1;
    return idx != IDX_NONE ? build_indexer_cache(m, p, r, 0, vis, err) : 0;
}

/* Section 5: base cache, plus the SWA cache when a layer slides.  With
 * idx_between set (DSA-iSWA), the indexer cache comes between the two. */
static int build_kv_iswa(const kvp_model *m, const kvp_llama_params *p, kvp_llama_result *r,
                         int idx_between, const kvp_cache_visitor *vis, kvp_error *err)
{
    int any_attn = 0, any_swa = 0;
    uint32_t window = 0;
    for (uint32_t il = 0; il < m->n_layers; il++) {
        any_attn |= is_attention(m->layers[il].kind);
        if (is_swa(m, p, il)) {
            any_swa = 1;
            if (m->layers[il].window > window)
                window = m->layers[il].window;
        }
    }
    if (!any_attn)
        return 0;
    if (!any_swa && needs_swa(m))
        return kvp_fail(err, KVP_EINPUT, "%s: llama.cpp's %s architecture expects sliding-window "
                        "layers and aborts on a model without any", m->name, m->gguf_arch);
    r->swa_full = p->swa_full && any_swa;
    if (build_cache(m, p, r, 0, r->n_ctx_seq, vis, err) ||
        (idx_between && build_indexer_cache(m, p, r, 0, vis, err)))
        return -1;
    if (!any_swa)
        return 0;
    uint64_t cells = (uint64_t)window * (r->unified ? r->n_seq : 1) + r->n_ubatch;
    cells = p->swa_full ? r->n_ctx_seq : PAD(cells < r->n_ctx_seq ? cells : r->n_ctx_seq, 256);
    return build_cache(m, p, r, 1, cells, vis, err);
}

/* Section 9: the PLE row (P) only qwen4exp's recurrent cache has, for one
 * layer, which must be a linear-attention one (load_arch_hparams). */
static int check_ple(const kvp_model *m, kvp_error *err)
{
    uint32_t n = 0;
    for (uint32_t il = 0; il < m->n_layers; il++) {
        const kvp_layer *L = &m->layers[il];
        if (!L->ple_conv_state)
            continue;
        if (strcmp(m->gguf_arch, "qwen4exp"))
            return kvp_fail(err, KVP_EINPUT, "%s: layer %u keeps a PLE convolution history; "
                            "llama.cpp has that row for qwen4exp only", m->name, il);
        if (!L->d_inner)
            return kvp_fail(err, KVP_EINPUT, "%s: PLE layer %u is not a linear attention layer "
                            "(llama.cpp refuses the model)", m->name, il);
        if (++n > 1)
            return kvp_fail(err, KVP_EINPUT, "%s: more than one PLE layer; llama.cpp's qwen4exp "
                            "supports only one", m->name);
    }
    return 0;
}

/* Section 7: llama_memory_recurrent, f32 whatever -ctk/-ctv say. */
static int build_recurrent(const kvp_model *m, const kvp_llama_params *p, kvp_llama_result *r,
                           const kvp_cache_visitor *vis, kvp_error *err)
{
    kvp_llama_recurrent *s = &r->recurrent;
    uint64_t rows = (uint64_t)(r->n_seq ? r->n_seq : 1) * (1 + p->n_rs_seq);
    for (uint32_t il = 0; il < m->n_layers; il++) {
        const kvp_layer *L = &m->layers[il];
        uint64_t conv_dim, er, es, rb, sb, t, pb;
        if (!L->d_inner)
            continue;
        r->has_recurrent = 1;
        /* qwen4exp's PLE layer: its conv history in a row of its own (P) */
        if (kvp_mul(L->ple_conv_state, 4 * rows, &pb) || kvp_add(s->p_bytes, pb, &s->p_bytes))
            return kvp_fail(err, KVP_EINPUT, "%s: state size overflows 64 bits", m->name);
        if (kvp_mul(2ull * L->n_group, L->d_state, &t) || kvp_add(L->d_inner, t, &conv_dim) ||
            kvp_mul(L->d_conv ? L->d_conv - 1 : 0, conv_dim, &er) ||
            kvp_mul(L->d_state, L->d_inner, &es) || kvp_mul(er, 4 * rows, &rb) ||
            kvp_mul(es, 4 * rows, &sb) || kvp_add(s->r_bytes, rb, &s->r_bytes) ||
            kvp_add(s->s_bytes, sb, &s->s_bytes))
            return kvp_fail(err, KVP_EINPUT, "%s: state size overflows 64 bits", m->name);
        visit(vis, -1, il, 'R', KVP_F32, er, 4 * er, rows);
        visit(vis, -1, il, 'S', KVP_F32, es, 4 * es, rows);
        if (L->ple_conv_state)
            visit(vis, -1, il, 'P', KVP_F32, L->ple_conv_state, 4 * L->ple_conv_state, rows);
    }
    if (!r->has_recurrent)
        return 0;
    s->cells = r->n_seq ? r->n_seq : 1;
    s->layers = m->n_layers; /* the log counts every trunk layer */
    s->seqs = r->n_seq;
    s->rs_seq = p->n_rs_seq;
    s->bytes = s->r_bytes + s->s_bytes + s->p_bytes;
    return kvp_add(r->total_bytes, s->bytes, &r->total_bytes)
               ? kvp_fail(err, KVP_EINPUT, "%s: state size overflows 64 bits", m->name) : 0;
}

/* Section 11: llama.cpp computes MiB in float32, then prints %.2f. */
static double mib(uint64_t bytes) { return (float)bytes / (1024.0f * 1024.0f); }

static void format_caches(kvp_llama_result *r, int after_recurrent)
{
    for (size_t i = 0; i < r->n_caches; i++) {
        const kvp_llama_cache *c = &r->caches[i];
        if (c->after_recurrent != after_recurrent)
            continue;
        snprintf(r->log[r->n_log++], sizeof r->log[0],
                 "llama_kv_cache: size = %7.2f MiB (%6u cells, %3d layers, %2u/%u seqs), "
                 "K (%s): %7.2f MiB, V (%s): %7.2f MiB",
                 mib(c->bytes), c->cells, (int)c->layers, c->seqs, c->streams,
                 kvp_dtype_name(c->k_type), mib(c->k_bytes), kvp_dtype_name(c->v_type),
                 mib(c->v_bytes));
    }
}

static void format_log(kvp_llama_result *r)
{
    format_caches(r, 0);
    if (r->has_recurrent) {
        const kvp_llama_recurrent *s = &r->recurrent;
        snprintf(r->log[r->n_log++], sizeof r->log[0],
                 "llama_memory_recurrent: size = %7.2f MiB (%6u cells, %3d layers, %2u seqs %2u "
                 "rs_seq), R (f32): %7.2f MiB, S (f32): %7.2f MiB, P (f32): %7.2f MiB",
                 mib(s->bytes), s->cells, (int)s->layers, s->seqs, s->rs_seq, mib(s->r_bytes),
                 mib(s->s_bytes), mib(s->p_bytes));
    }
    format_caches(r, 1); /* qwen4exp's idx_ cache comes after the hybrid memory */
}

/* The buffers beside the cache on a CPU-only run (llamacpp-memory-rules.md
 * 1.2 and 2.3): the model buffer, and the output buffer output_reserve()
 * sizes at context creation for n_seq_max logit rows (no embeddings, no
 * backend sampling: llama-server's defaults), printed in double MiB. */
static int around_cache(const kvp_model *m, kvp_llama_result *r, kvp_error *err)
{
    /* a config.json's vocab_size need not be the GGUF's token count (some
     * converters pad it): only a GGUF says what llama.cpp will see */
    r->weights_bytes = m->weight_bytes;
    if (!m->weight_bytes || !m->n_vocab)
        return 0;
    if (kvp_mul(m->n_vocab, 4ull * r->n_seq, &r->output_bytes))
        return kvp_fail(err, KVP_EINPUT, "%s: output buffer size overflows 64 bits", m->name);
    snprintf(r->output_log, sizeof r->output_log,
             "llama_context: %10s  output buffer size = %8.2f MiB", "CPU",
             (double)r->output_bytes / 1024.0 / 1024.0);
    return 0;
}

int kvp_llama(const kvp_model *m, const kvp_llama_params *p, kvp_llama_result *r,
              kvp_error *err)
{
    return kvp_llama_walk(m, p, NULL, r, err);
}

int kvp_llama_walk(const kvp_model *m, const kvp_llama_params *p, const kvp_cache_visitor *vis,
                   kvp_llama_result *r, kvp_error *err)
{
    memset(r, 0, sizeof *r);
    const struct llama_version *v = find_version(p->version);
    if (!v)
        return kvp_fail(err, KVP_EUSAGE, "--llama-version %s: unknown; kvplan knows %s",
                        p->version, kvp_llama_versions());
    r->version = v->name;
    /* llama.cpp could not load such a GGUF: no rules to apply (a cross-attention
     * model is refused below, by what it lacks) */
    if (!twin_gguf_name(m) && !kvp_model_count_kind(m, KVP_LAYER_CROSS))
        return kvp_fail(err, KVP_EINPUT, "%s: llama.cpp %s has no architecture for model_type "
                        "\"%s\" (its converter maps none; kvplan archs lists the names)",
                        m->name, v->name, m->arch);
    if (p->n_ubatch == 0 && p->n_batch == 0)
        return kvp_fail(err, KVP_EUSAGE, "-b 0: the batch size must be at least 1");
    if (resolve_context(m, p, v, r, err) || check_types(m, p, r, err) ||
        check_ple(m, err) || build_kv(m, p, r, vis, err) || build_recurrent(m, p, r, vis, err))
        return -1;
    if (!honours_swa(m, p))
        for (uint32_t il = 0; il < m->n_layers; il++)
            if (m->layers[il].kind == KVP_LAYER_SLIDING || m->layers[il].kind == KVP_LAYER_CHUNKED) {
                KVP_NOTE(r, "llama.cpp's %s architecture ignores the config's sliding window: every "
                        "layer is full attention", m->gguf_arch[0] ? m->gguf_arch : m->arch);
                break;
            }
    if (r->total_bytes > INT64_MAX)
        return kvp_fail(err, KVP_EINPUT, "%s: more than 2^63 bytes", m->name);
    format_log(r);
    /* server_output_limits: min(n_batch, n_parallel) rows without speculative
     * decoding; the C API's value as given */
    r->n_outputs_max = p->n_outputs_max ? p->n_outputs_max
                                        : (r->n_seq < p->n_batch || !p->n_batch ? r->n_seq
                                                                                 : p->n_batch);
    if (around_cache(m, r, err))
        return -1;
    return kvp_llama_compute(m, r, NULL, &r->compute, err);
}
