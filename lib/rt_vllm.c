/* rt_vllm.c - vLLM's (v1 engine) KV-cache rules: page sizes per layer
 * kind, hybrid grouping and page unification, the block pool, what one
 * request reserves, and the capacity line vLLM logs
 * (shared/reference/vllm-kv-rules.md; section numbers below refer to it).
 *
 *   page      kv_heads/tp x block x (K + V head) x dtype; MLA one 576-wide
 *             latent on every rank; Mamba/GDN the whole state          (3)
 *   dtype     --kv-cache-dtype: 2 bytes (auto, bfloat16, float16), fp8 1,
 *             nvfp4 9 bytes per 16 values, TurboQuant a packed K+V slot per
 *             head with the first and last 2 layers of dense models left
 *             in the model dtype                   (3; techniques.md A6)
 *   block     16, FlashMLA 64; hybrid attention+Mamba raises it until an
 *             attention page holds a Mamba state                       (4)
 *   groups    all specs equal: one group; same kind but different pages
 *             (per-layer heads, TurboQuant boundary layers): one
 *             UniformTypeKVCacheSpecs group whose page is the sum; else
 *             buckets by kind, g = smallest bucket (or the largest when
 *             they are within 1.5x), one block id costs g x P bytes     (5)
 *   request   full cdiv(L, bs); sliding cdiv(min(W-1 + 2 mnbt, L), bs) + 1;
 *             Mamba 1 block, 2 with prefix caching ("align"); cross-
 *             attention cdiv(encoder tokens, bs)                       (3, 10)
 *   capacity  num_blocks = avail // P // g; concurrency = num_blocks /
 *             blocks per request; tokens = int(concurrency x L)        (5, 6)
 *
 * The available memory comes from the user (--kv-cache-memory, as vLLM's
 * kv_cache_memory_bytes) or is estimated and labelled as such. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vllm_int.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* What changed between the releases the published numbers come from. */
static const struct vllm_version {
    const char *name;
    int fit_check_minus_null;   /* #47272: the fit check leaves out the null block */
    int v2_runner;              /* #53183: in-flight batches = pp + 1 */
} versions[] = {
    {"0.28.0", 0, 0},
    {"0.29.1", 1, 1},
};

const char *kvp_vllm_gpus(void) { return kvp_gpu_list(); }

/* The GPU table (lib/gpus.c); no --gpu: an A100 80GB. */
static const kvp_gpu *find_gpu(const char *name)
{
    return name ? kvp_gpu_find(name) : kvp_gpu_find("A100-80GB");
}

void kvp_vllm_defaults(kvp_vllm_params *p)
{
    memset(p, 0, sizeof *p);
    p->prefix_caching = -1;
}

static uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* ---- section 9: max_model_len ------------------------------------------- */

static double derived_max_len(const kvp_model *m)
{
    double d = m->max_position ? (double)m->max_position : 2048.0;
    if (m->vllm_max_len) /* another length key is smaller, or model_max_length */
        d = (double)m->vllm_max_len;
    /* Gemma 3's max_position_embeddings is already scaled */
    if (strstr(m->arch, "gemma3") || !strcmp(m->rope_type, "llama3") ||
        !strcmp(m->rope_type, "longrope") || !strcmp(m->rope_type, "su"))
        return d;
    if (!strcmp(m->rope_type, "yarn") && m->rope_orig_max)
        d = (double)m->rope_orig_max;
    return d * (m->rope_factor > 0 && m->rope_type[0] ? m->rope_factor : 1.0);
}

static int resolve_len(const kvp_model *m, const kvp_vllm_params *p, kvp_vllm_result *r,
                       kvp_error *err)
{
    r->derived_max_model_len = derived_max_len(m);
    if (!p->max_model_len) {
        r->max_model_len = (uint64_t)r->derived_max_model_len;
        return 0;
    }
    r->max_model_len = p->max_model_len;
    if ((double)p->max_model_len > r->derived_max_model_len && !p->allow_long_max_model_len)
        return kvp_fail(err, KVP_EINPUT,
                        "%s: User-specified max_model_len (%llu) is greater than the derived "
                        "max_model_len (max_position_embeddings=%.1f or model_max_length=None in "
                        "model's config.json). To allow overriding this maximum, set the env var "
                        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be "
                        "used with extreme caution. If the model uses relative position encoding "
                        "(RoPE), positions exceeding derived_max_model_len lead to nan. If the "
                        "model uses absolute position encoding, positions exceeding "
                        "derived_max_model_len will cause a CUDA array out-of-bounds error.",
                        m->name, (unsigned long long)p->max_model_len, r->derived_max_model_len);
    if ((double)p->max_model_len > r->derived_max_model_len)
        KVP_NOTE(r, "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1: max_model_len %llu is beyond the derived %.1f",
             (unsigned long long)p->max_model_len, r->derived_max_model_len);
    return 0;
}

/* ---- section 10: scheduler defaults ---------------------------------------- */

static void resolve_batch(const kvp_vllm_params *p, const kvp_gpu *g, kvp_vllm_result *r)
{
    uint64_t tokens, seqs;
    if (g->memory_mib >= 160 * 1024)
        tokens = 16384, seqs = 1024;
    else if (g->memory_mib >= 70 * 1024 && !strstr(g->name, "A100"))
        tokens = p->entry_serve ? 8192 : 16384, seqs = 1024;
    else
        tokens = p->entry_serve ? 2048 : 8192, seqs = 256;
    r->max_num_seqs = p->max_num_seqs ? p->max_num_seqs : (uint32_t)seqs;
    if (p->max_num_batched_tokens) {
        r->max_num_batched_tokens = p->max_num_batched_tokens;
        return;
    }
    uint64_t cap = (uint64_t)r->max_num_seqs * r->max_model_len;
    r->max_num_batched_tokens = tokens < cap ? tokens : cap;
}

/* ---- section 3: the KV cache dtype ---------------------------------------- */

enum kv_kind { KV_MODEL, KV_FP8, KV_NVFP4, KV_TURBOQUANT };

/* vLLM's --kv-cache-dtype values that kvplan prices.  The TurboQuant
 * presets are vLLM's TQ_PRESETS (quantization/turboquant/config.py):
 * key bits 8 means fp8 keys. */
static const struct kv_type {
    const char *name;
    enum kv_kind kind;
    unsigned key_bits, value_bits;
} kv_types[] = {
    {"auto", KV_MODEL, 0, 0},
    {"bfloat16", KV_MODEL, 0, 0},
    {"float16", KV_MODEL, 0, 0},
    {"fp8", KV_FP8, 0, 0},
    {"fp8_e4m3", KV_FP8, 0, 0},
    {"fp8_e5m2", KV_FP8, 0, 0},
    {"nvfp4", KV_NVFP4, 0, 0},
    {"turboquant_k8v4", KV_TURBOQUANT, 8, 4},
    {"turboquant_4bit_nc", KV_TURBOQUANT, 4, 4},
    {"turboquant_k3v4_nc", KV_TURBOQUANT, 3, 4},
    {"turboquant_3bit_nc", KV_TURBOQUANT, 3, 3},
};
#define N_KV_TYPES (sizeof kv_types / sizeof kv_types[0])

static const struct kv_type *find_kv_type(const char *name)
{
    for (size_t i = 0; i < N_KV_TYPES; i++)
        if (!strcmp(name, kv_types[i].name))
            return &kv_types[i];
    return NULL;
}

/* "a, b, ... and z" for messages: every name, or those of one kind (>= 0). */
static const char *kv_type_list(int only)
{
    static char buf[2][320];
    char *o = buf[only >= 0];
    size_t n = 0, total = 0, k = 0;
    for (size_t i = 0; i < N_KV_TYPES; i++)
        total += only < 0 || (int)kv_types[i].kind == only;
    o[0] = 0;
    for (size_t i = 0; i < N_KV_TYPES && n < sizeof buf[0]; i++) {
        if (only >= 0 && (int)kv_types[i].kind != only)
            continue;
        k++;
        n += (size_t)snprintf(o + n, sizeof buf[0] - n, "%s%s",
                              k == 1 ? "" : k == total ? " and " : ", ", kv_types[i].name);
    }
    return o;
}

int kvp_vllm_kv_cache_dtype_check(const char *name, kvp_error *err)
{
    if (find_kv_type(name))
        return 0;
    return kvp_fail(err, KVP_EUSAGE, "--kv-cache-dtype %s: vLLM's KV cache dtypes are %s", name,
                    kv_type_list(-1));
}

/* The dtype the user asked for: kv_cache_dtype, else fp8 when the older
 * kv_fp8 flag is set (which also turns a model-dtype name into fp8, as
 * `kvplan compare` uses it), else auto. */
static int resolve_kv_type(const kvp_vllm_params *p, const struct kv_type **out, kvp_error *err)
{
    const struct kv_type *t = find_kv_type("auto");
    if (p->kv_cache_dtype && kvp_vllm_kv_cache_dtype_check(p->kv_cache_dtype, err))
        return -1;
    if (p->kv_cache_dtype)
        t = find_kv_type(p->kv_cache_dtype);
    if (p->kv_fp8 && t->kind == KV_MODEL)
        t = find_kv_type("fp8");
    *out = t;
    return 0;
}

/* The cache element type of a layer that has no packed slot. */
static kvp_dtype cache_elem(const kvp_model *m, const struct kv_type *t)
{
    switch (t->kind) {
    case KV_FP8:
        return KVP_FP8;
    case KV_NVFP4:
        return KVP_NVFP4;
    default: /* auto serves a float32 checkpoint in 2 bytes too */
        return m->dtype == KVP_F16 ? KVP_F16 : KVP_BF16;
    }
}

/* ---- TurboQuant (vLLM's quantization/turboquant/config.py) ---------------- */

/* Packed bytes of one KV head's K and V for one token, head dim d. */
static uint32_t tq_slot(const struct kv_type *t, uint64_t d)
{
    uint64_t key = t->key_bits == 8 ? d : (d * t->key_bits + 7) / 8 + 2; /* + fp16 norm */
    uint64_t value = (d * t->value_bits + 7) / 8 + 4;                 /* + fp16 scale, zero */
    uint64_t slot = key + value;
    return (uint32_t)(slot + slot % 2); /* even: effective head size = slot / 2 */
}

static int is_kv_attention(kvp_layer_kind k)
{
    return k == KVP_LAYER_FULL || k == KVP_LAYER_SLIDING || k == KVP_LAYER_CHUNKED;
}

/* Boundary protection (get_boundary_skip_layers): dense models keep their
 * first and last n = min(2, layers / 2) layers in the model dtype; hybrid
 * models (any layer with a recurrent state) keep none. */
static uint32_t tq_boundary(const kvp_model *m)
{
    for (uint32_t il = 0; il < m->n_layers; il++)
        if (m->layers[il].d_inner)
            return 0;
    return m->n_layers / 2 < 2 ? m->n_layers / 2 : 2;
}

int kvp_vllm_turboquant(const kvp_model *m, const char *preset, kvp_model **out,
                        kvp_error *err)
{
    *out = NULL;
    const struct kv_type *t = preset ? find_kv_type(preset) : NULL;
    char full[48];
    if (!t && preset && strlen(preset) < 24) { /* "k8v4" for "turboquant_k8v4" */
        snprintf(full, sizeof full, "turboquant_%s", preset);
        t = find_kv_type(full);
    }
    if (!t || t->kind != KV_TURBOQUANT)
        return kvp_fail(err, KVP_EINPUT, "%s: unknown TurboQuant preset %s (vLLM's are %s)",
                        m->name, preset ? preset : "(none)", kv_type_list(KV_TURBOQUANT));
    uint32_t n_attn = 0;
    for (uint32_t il = 0; il < m->n_layers; il++) {
        const kvp_layer *L = &m->layers[il];
        if (L->kind == KVP_LAYER_MLA)
            return kvp_fail(err, KVP_EINPUT, "%s: %s: kvplan models TurboQuant for per-head K/V "
                            "attention only, and this model uses MLA (layer %u)", m->name,
                            t->name, il);
        if (!is_kv_attention(L->kind))
            continue;
        if (L->head_dim_k != L->head_dim_v)
            return kvp_fail(err, KVP_EINPUT, "%s: %s: layer %u's K and V head dims differ "
                            "(%u and %u); TurboQuant packs one head dim for both", m->name,
                            t->name, il, L->head_dim_k, L->head_dim_v);
        n_attn++;
    }
    if (!n_attn)
        return kvp_fail(err, KVP_EINPUT, "%s: %s: no attention layer with per-head K/V for "
                        "TurboQuant to pack", m->name, t->name);
    kvp_model *c;
    if (kvp_model_clone(m, &c, err))
        return -1;
    uint32_t n = tq_boundary(m);
    for (uint32_t il = n; il + n < m->n_layers; il++) {
        kvp_layer *L = &c->layers[il];
        if (is_kv_attention(L->kind))
            L->kv_slot_bytes = tq_slot(t, L->head_dim_k);
    }
    *out = c;
    return 0;
}

/* ---- section 3: layer specs ---------------------------------------------- */

typedef struct spec {
    kvp_layer_kind kind;     /* FULL (incl. MLA), SLIDING, CHUNKED, MAMBA (incl. GDN) */
    uint32_t window;
    uint64_t token_bytes;    /* attention: bytes per token per layer */
    uint64_t state_bytes;    /* Mamba: the state per layer */
    int mla;
} spec;

static unsigned dtype_bytes(kvp_dtype t) { return t == KVP_F32 ? 4 : t == KVP_FP8 ? 1 : 2; }

/* Mamba/GDN state per TP rank (MambaStateShapeCalculator). */
static uint64_t mamba_state(const kvp_model *m, const kvp_layer *L, uint32_t tp, unsigned conv_b)
{
    uint64_t groups = L->n_group;
    if (L->kind == KVP_LAYER_MAMBA && groups && groups % tp)
        groups += tp - groups % tp; /* Mamba2 replicates groups up to tp */
    uint64_t conv = (uint64_t)(L->d_conv ? L->d_conv - 1 : 0) *
                    ((L->d_inner + 2 * groups * L->d_state) / tp);
    unsigned ssm_b = dtype_bytes(L->ssm_dtype);
    if (!strcmp(m->family, "nemotron-h"))
        ssm_b = 4; /* NemotronH's model hook defaults the SSM cache to float32 */
    return conv * conv_b + (L->d_inner / tp) * L->d_state * ssm_b;
}

/* Bytes of a row of n values in the cache type; refuses a row the block
 * type cannot hold (nvfp4 stores whole blocks of 16). */
static int cache_row(const kvp_model *m, uint32_t il, kvp_dtype t, uint64_t n, const char *what,
                     uint64_t *out, kvp_error *err)
{
    if (kvp_dtype_row_bytes(t, n, out))
        return kvp_fail(err, KVP_EINPUT, "%s: layer %u: a %llu-wide %s cannot be stored in %s "
                        "(whole blocks of %u values)", m->name, il, (unsigned long long)n, what,
                        kvp_dtype_name(t), kvp_dtype_block(t));
    return 0;
}

/* ---- DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5) ------------------------ */

/* A model with DSA's lightning indexer runs vLLM's sparse MLA backends. */
static int dsa_sparse(const kvp_model *m)
{
    for (uint32_t il = 0; il < m->n_layers; il++)
        if (m->layers[il].indexer_head_dim && m->layers[il].kind == KVP_LAYER_MLA)
            return 1;
    /* a pipeline stage of GLM-5.2's "shared" layers only */
    return !strcmp(m->family, "deepseek-dsa") || !strcmp(m->family, "glm-dsa") ||
           !strcmp(m->family, "hy-v4");
}

/* DeepseekV32IndexerCache: an MLAAttentionSpec of one head of head_dim +
 * head_dim / 128 x 4 uint8 per token (fp8 keys and an fp32 scale per 128
 * values), on every TP rank, whatever --kv-cache-dtype says. */
static uint64_t dsa_indexer_token_bytes(uint32_t head_dim)
{
    return (uint64_t)head_dim + head_dim / 128 * 4;
}

/* The fp8 latent of the sparse backends: FlashMLA sparse (Hopper and the
 * other GPUs) stores DeepSeek's fp8_ds_mla layout, 656 bytes a token (512
 * fp8 values, 4 fp32 scales, 64 bf16 rope values); FlashInfer sparse, which
 * vLLM prefers for fp8 on Blackwell (sm 10.x), stores plain fp8. */
static int dsa_fp8_ds_mla(const kvp_gpu *g) { return !(g->sm >= 100 && g->sm < 110); }

/* A layer's specs: its attention, its state, or both (Falcon-H1 runs a
 * Mamba2 mixer beside every attention layer), and a DSA layer's indexer
 * keys.  ds_mla: the MLA latent is in the fp8_ds_mla layout.  Returns how
 * many, or -1. */
static int layer_specs(const kvp_model *m, uint32_t il, uint32_t tp, kvp_dtype kv_t,
                       unsigned model_b, int ds_mla, spec s[3], kvp_error *err)
{
    const kvp_layer *L = &m->layers[il];
    int n = 0;
    uint64_t k, v;
    memset(s, 0, 3 * sizeof *s);
    switch (L->kind) {
    case KVP_LAYER_FULL:
    case KVP_LAYER_SLIDING:
    case KVP_LAYER_CHUNKED:
    case KVP_LAYER_CROSS: {
        /* vLLM's MiniCPM3 attention caches every query head, V padded to
         * the K head size (minicpm3.py) */
        int minicpm3 = strcmp(m->family, "minicpm3") == 0;
        uint32_t kv_heads = minicpm3 && L->n_head ? L->n_head : L->n_kv_heads;
        uint64_t heads = kv_heads / tp ? kv_heads / tp : 1; /* replicated past tp */
        s[n].kind = L->kind;
        s[n].window = L->window;
        if (L->kv_slot_bytes) { /* a packed layout (TurboQuant): the slot is K + V */
            s[n++].token_bytes = heads * L->kv_slot_bytes;
            break;
        }
        if (cache_row(m, il, kv_t, L->head_dim_k, "K head", &k, err) ||
            cache_row(m, il, kv_t, minicpm3 ? L->head_dim_k : L->head_dim_v, "V head", &v, err))
            return -1;
        s[n++].token_bytes = heads * (k + v);
        break;
    }
    case KVP_LAYER_MLA: /* the latent is replicated on every rank */
        if (cache_row(m, il, kv_t, L->head_dim_k, "MLA latent", &k, err))
            return -1;
        if (ds_mla) {
            if (L->head_dim_k != 576)
                return kvp_fail(err, KVP_EINPUT, "%s: layer %u: vLLM's fp8_ds_mla layout holds "
                                "a 512 + 64 latent, not %u", m->name, il, L->head_dim_k);
            k = 656;
        }
        s[n].kind = KVP_LAYER_FULL;
        s[n].mla = 1;
        s[n++].token_bytes = k;
        break;
    default:
        break; /* no cache, or it shares another layer's */
    }
    if (L->indexer_head_dim) { /* its own MLAAttentionSpec layer in vLLM */
        s[n].kind = KVP_LAYER_FULL;
        s[n].mla = 1;
        s[n++].token_bytes = dsa_indexer_token_bytes(L->indexer_head_dim);
    }
    if (L->d_inner) {
        s[n].kind = KVP_LAYER_MAMBA;
        s[n++].state_bytes = mamba_state(m, L, tp, model_b);
    }
    return n;
}

static int same_spec(const spec *a, const spec *b)
{
    return a->kind == b->kind && a->window == b->window && a->token_bytes == b->token_bytes &&
           a->state_bytes == b->state_bytes && a->mla == b->mla;
}

/* ---- sections 4 and 5: block size, grouping, pages ------------------------- */

typedef struct bucket {
    spec s;
    uint32_t n;
} bucket;

/* Blocks one request of length L holds in a group of this spec. */
static uint64_t request_blocks(const spec *s, uint32_t bs, uint64_t L, uint64_t inflight,
                               int align)
{
    switch (s->kind) {
    case KVP_LAYER_SLIDING: {
        uint64_t t = s->window - 1 + inflight;
        return cdiv(t < L ? t : L, bs) + 1;
    }
    case KVP_LAYER_CHUNKED: {
        uint64_t t = s->window + inflight;
        return cdiv(t < L ? t : L, bs);
    }
    case KVP_LAYER_MAMBA:
        return align ? 2 : 1;
    case KVP_LAYER_CROSS: /* CrossAttentionSpec: max_num_encoder_input_tokens */
        return cdiv(s->window, bs);
    default:
        return cdiv(L, bs);
    }
}

/* Section 5 rule 3: attention layers of one kind and window whose pages
 * differ (per-layer head counts, TurboQuant's boundary layers) make one
 * UniformTypeKVCacheSpecs group; its page is the sum of the layers' pages,
 * so num_blocks = available // sum. */
static void uniform_group(const bucket *b, size_t nb, uint32_t bs, uint64_t inflight,
                          kvp_vllm_result *r)
{
    uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
    uint32_t layers = 0;
    for (size_t i = 0; i < nb; i++) {
        uint64_t page = (uint64_t)bs * b[i].s.token_bytes;
        sum += page * b[i].n;
        layers += b[i].n;
        lo = page < lo ? page : lo;
        hi = page > hi ? page : hi;
    }
    r->uniform_type = 1;
    r->group_size = 1;
    r->page_bytes = r->pool_block_bytes = sum;
    kvp_vllm_group *G = &r->groups[r->n_groups++];
    G->kind = b[0].s.mla ? KVP_LAYER_MLA : b[0].s.kind;
    G->layers = layers;
    G->padding = 0;
    G->block_size = bs;
    G->window = b[0].s.window;
    G->page_bytes = sum;
    G->blocks_per_request = request_blocks(&b[0].s, bs, r->max_model_len, inflight,
                                           r->prefix_caching);
    r->blocks_per_request = G->blocks_per_request;
    r->per_request_bytes = r->blocks_per_request * r->pool_block_bytes;
    char a[32], c[32], d[32];
    kvp_format_thousands(lo, a, sizeof a);
    kvp_format_thousands(hi, c, sizeof c);
    kvp_format_thousands(sum, d, sizeof d);
    KVP_NOTE(r, "the %u %s layers' pages differ (%s to %s bytes): vLLM keeps them in one "
             "UniformTypeKVCacheSpecs group whose page is their sum, %s bytes per block id",
             layers, kvp_layer_kind_name(G->kind), a, c, d);
}

static int build_groups(const kvp_model *m, const kvp_vllm_params *p, const kvp_gpu *gpu,
                        const struct vllm_version *v, kvp_dtype kv_t, kvp_vllm_result *r,
                        kvp_error *err)
{
    bucket b[32];
    size_t nb = 0;
    unsigned model_b = 2;
    int any_chunked = 0, any_mla = 0, any_mamba = 0;
    uint64_t a1 = 0, mamba_page = 0;
    if (m->dtype == KVP_F32 && (kv_t == KVP_BF16 || kv_t == KVP_F16))
        KVP_NOTE(r, "the checkpoint is float32; vLLM serves it in bfloat16 by default (2-byte pages)");
    for (uint32_t il = 0; il < m->n_layers; il++)
        any_chunked |= m->layers[il].kind == KVP_LAYER_CHUNKED;
    int sparse = dsa_sparse(m), ds_mla = sparse && kv_t == KVP_FP8 && dsa_fp8_ds_mla(gpu);
    uint32_t n_idx = 0, idx_dim = 0;
    for (uint32_t il = 0; il < m->n_layers; il++)
        if (m->layers[il].indexer_head_dim) {
            n_idx++;
            idx_dim = m->layers[il].indexer_head_dim;
        }
    for (uint32_t il = 0; il < m->n_layers; il++) {
        spec ss[3];
        int ns = layer_specs(m, il, r->tp, kv_t, model_b, ds_mla, ss, err);
        if (ns < 0)
            return -1;
        for (int k = 0; k < ns; k++) {
            spec s = ss[k];
            if (any_chunked && (s.kind == KVP_LAYER_SLIDING || s.kind == KVP_LAYER_CHUNKED)) {
                s.kind = KVP_LAYER_FULL; /* chunked attention disables the hybrid manager */
                s.window = 0;
            }
            any_mla |= s.mla;
            if (s.kind == KVP_LAYER_MAMBA) {
                any_mamba = 1;
                if (s.state_bytes > mamba_page)
                    mamba_page = s.state_bytes;
            } else if (!a1) {
                a1 = s.token_bytes;
            }
            size_t i = 0;
            while (i < nb && !same_spec(&b[i].s, &s))
                i++;
            if (i == nb) {
                if (nb == sizeof b / sizeof b[0])
                    return kvp_fail(err, KVP_EINPUT, "%s: too many distinct layer specs",
                                    m->name);
                b[nb].s = s;
                b[nb++].n = 0;
            }
            b[i].n++;
        }
    }
    if (!nb)
        return kvp_fail(err, KVP_EINPUT, "%s: no layer holds a KV cache or state", m->name);
    if (any_chunked)
        KVP_NOTE(r, "chunked local attention disables vLLM's hybrid KV manager: every layer reserves "
                "full-length blocks");
    /* section 4: block size */
    uint32_t bs = p->block_size;
    if (!bs) {
        bs = 16;
        if (any_mla && gpu->sm >= 100)
            bs = 128; /* CUTLASS MLA */
        else if (any_mla && gpu->sm >= 90)
            bs = 64; /* FlashMLA */
    }
    if (sparse) {
        /* the indexer backend (DeepseekV32IndexerBackend) and FlashMLA sparse
         * take 64-token kernel blocks only, FlashInfer sparse 32 or 64 */
        if (p->block_size && p->block_size % 64)
            return kvp_fail(err, KVP_EINPUT, "%s: --block-size %u: DeepSeek sparse attention's "
                            "indexer and sparse MLA kernels take blocks of 64 tokens (a block "
                            "size must be a multiple of 64)", m->name, p->block_size);
        if (!p->block_size)
            bs = 64;
        if (gpu->sm < 90)
            KVP_NOTE(r, "DeepSeek sparse attention: vLLM's sparse MLA backends (FlashMLA sparse, "
                     "FlashInfer sparse) need Hopper or Blackwell; on %s the arithmetic is "
                     "shown, but vLLM may refuse the model", gpu->name);
        if (kv_t == KVP_FP8)
            KVP_NOTE(r, "DeepSeek sparse attention with an fp8 cache: %s", ds_mla
                     ? "FlashMLA sparse stores the latent as fp8_ds_mla, 656 bytes a token (512 "
                       "fp8 values, 4 fp32 scales, 64 bf16 rope values)"
                     : "vLLM prefers FlashInfer sparse on Blackwell, which stores the latent in "
                       "plain fp8 (576 bytes a token)");
        if (n_idx)
            KVP_NOTE(r, "DeepSeek sparse attention: %u layers also cache indexer keys "
                     "(DeepseekV32IndexerCache), %llu bytes a token each (fp8 values and an fp32 "
                     "scale per 128) whatever the cache dtype; vLLM counts them as layers of "
                     "their own", n_idx, (unsigned long long)dsa_indexer_token_bytes(idx_dim));
    }
    r->prefix_caching = p->prefix_caching >= 0 ? p->prefix_caching : 1;
    if (any_mamba) {
        r->mamba_cache_mode = r->prefix_caching ? "align" : "none";
        if (a1) {
            uint64_t k = bs > 16 ? bs : 16, aligned = k * cdiv(mamba_page, k * a1);
            if (aligned > bs) {
                KVP_NOTE(r, "Setting attention block size to %llu tokens to ensure that attention "
                        "page size is >= mamba page size.", (unsigned long long)aligned);
                bs = (uint32_t)aligned;
            }
        }
    }
    r->block_size = bs;
    uint64_t inflight = (p->pp <= 1 ? 2 : (v->v2_runner ? p->pp + 1 : p->pp)) *
                        r->max_num_batched_tokens;
    r->inflight_tokens = inflight;
    /* section 5 rule 3: one kind, one window, different pages */
    int uniform = !any_mamba && nb > 1;
    for (size_t i = 1; uniform && i < nb; i++)
        uniform = b[i].s.kind == b[0].s.kind && b[i].s.window == b[0].s.window &&
                  b[i].s.mla == b[0].s.mla;
    if (uniform) {
        uniform_group(b, nb, bs, inflight, r);
        return 0;
    }
    /* section 5: the unified page P and the group size g */
    uint64_t P = 0;
    uint32_t gmin = UINT32_MAX, gmax = 0;
    for (size_t i = 0; i < nb; i++) {
        uint64_t page = b[i].s.kind == KVP_LAYER_MAMBA ? b[i].s.state_bytes
                                                        : (uint64_t)bs * b[i].s.token_bytes;
        if (page > P)
            P = page;
        if (b[i].n < gmin)
            gmin = b[i].n;
        if (b[i].n > gmax)
            gmax = b[i].n;
    }
    uint32_t g = nb == 1 ? b[0].n : (gmax < 1.5 * gmin ? gmax : gmin);
    r->group_size = g;
    r->page_bytes = P;
    r->pool_block_bytes = (uint64_t)g * P;
    for (size_t i = 0; i < nb; i++) {
        uint64_t page = b[i].s.kind == KVP_LAYER_MAMBA ? b[i].s.state_bytes
                                                        : (uint64_t)bs * b[i].s.token_bytes;
        uint32_t gbs = bs;
        if (b[i].s.kind != KVP_LAYER_MAMBA) {
            if (P % page)
                return kvp_fail(err, KVP_EINPUT, "%s: page sizes %llu and %llu cannot be "
                                "unified (vLLM raises NotImplementedError)", m->name,
                                (unsigned long long)page, (unsigned long long)P);
            gbs = (uint32_t)(bs * (P / page));
        }
        uint32_t n_groups = (b[i].n + g - 1) / g;
        for (uint32_t k = 0; k < n_groups; k++) {
            if (r->n_groups == sizeof r->groups / sizeof r->groups[0])
                return kvp_fail(err, KVP_EINPUT, "%s: too many KV cache groups", m->name);
            kvp_vllm_group *G = &r->groups[r->n_groups++];
            G->kind = b[i].s.mla ? KVP_LAYER_MLA : b[i].s.kind;
            if (b[i].s.kind == KVP_LAYER_MAMBA && kvp_model_count_kind(m, KVP_LAYER_LINEAR))
                G->kind = KVP_LAYER_LINEAR; /* Gated DeltaNet state, sized as Mamba's */
            G->layers = k + 1 < n_groups ? g : b[i].n - k * g;
            G->padding = g - G->layers;
            G->block_size = gbs;
            G->window = b[i].s.window;
            G->page_bytes = P;
            G->blocks_per_request = request_blocks(&b[i].s, gbs, r->max_model_len, inflight,
                                                   r->prefix_caching);
            r->blocks_per_request += G->blocks_per_request;
            if (b[i].s.kind == KVP_LAYER_MAMBA)
                r->fixed_bytes_per_request += G->blocks_per_request * r->pool_block_bytes;
        }
        if (n_groups * g > b[i].n && nb > 1)
            KVP_NOTE(r, "Add %u padding layers, may waste at most %.2f%% KV cache memory",
                 n_groups * g - b[i].n, 100.0 * (n_groups * g - b[i].n) / (double)(n_groups * g));
    }
    r->per_request_bytes = r->blocks_per_request * r->pool_block_bytes;
    return 0;
}

/* ---- section 2: the memory the cache gets ------------------------------------ */

static int resolve_memory(const kvp_model *m, const kvp_vllm_params *p, const kvp_gpu *g,
                          kvp_vllm_result *r, kvp_error *err)
{
    if (p->kv_cache_memory) {
        r->kv_cache_memory_bytes = p->kv_cache_memory;
        return 0;
    }
    return vllm_memory_estimate(m, p, g, vllm_minor_of(r->version), r, err);
}

/* Section 7: the largest L whose reservation fits, by binary search. */
static uint64_t fit_len(const kvp_vllm_result *r, uint64_t avail, uint64_t L)
{
    uint64_t lo = 0, hi = L;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2, blocks = 0;
        for (size_t i = 0; i < r->n_groups; i++) {
            const kvp_vllm_group *G = &r->groups[i];
            spec s = {G->kind == KVP_LAYER_MLA ? KVP_LAYER_FULL
                      : G->kind == KVP_LAYER_LINEAR ? KVP_LAYER_MAMBA : G->kind,
                      G->window, 0, 0, 0};
            blocks += request_blocks(&s, G->block_size, mid, r->inflight_tokens,
                                     r->prefix_caching);
        }
        if (blocks * r->pool_block_bytes <= avail)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static int check_fit(const kvp_model *m, const struct vllm_version *v, kvp_vllm_result *r,
                     kvp_error *err)
{
    uint64_t avail = r->kv_cache_memory_bytes;
    if (v->fit_check_minus_null)
        avail = avail > r->pool_block_bytes ? avail - r->pool_block_bytes : 0;
    if (!avail && r->available_is_estimate) {
        char gib[32];
        vllm_format_gib(vllm_minor_of(r->version), r->available_signed_bytes / GIB, gib,
                        sizeof gib);
        return kvp_fail(err, KVP_EINPUT, "%s: Available KV cache memory: %s GiB (kvplan's "
                        "estimate: weights %.2f GiB and the profiling peak %.2f GiB of %.2f GiB "
                        "requested). No available memory for the cache blocks. Try increasing "
                        "`gpu_memory_utilization` when initializing the engine.", m->name, gib,
                        r->weights_bytes / GIB, r->activation_bytes / GIB,
                        r->requested_bytes / GIB);
    }
    if (!avail)
        return kvp_fail(err, KVP_EINPUT, "%s: No available memory for the cache blocks. Try "
                        "increasing `gpu_memory_utilization` when initializing the engine.",
                        m->name);
    if (r->per_request_bytes <= avail)
        return 0;
    char l[32], e[32], tail[160] = "";
    uint64_t est = fit_len(r, avail, r->max_model_len);
    kvp_format_thousands(r->max_model_len, l, sizeof l);
    kvp_format_thousands(est, e, sizeof e);
    if (est)
        snprintf(tail, sizeof tail, " Based on the available memory, the estimated maximum model "
                 "length is %s.", e);
    return kvp_fail(err, KVP_EINPUT, "%s: To serve at least one request with the model's max seq "
                    "len (%s), (%.2f GiB KV cache is needed, which is larger than the available "
                    "KV cache memory (%.2f GiB).%s Try increasing `gpu_memory_utilization` or "
                    "decreasing `max_model_len` when initializing the engine.", m->name, l,
                    r->per_request_bytes / GIB, avail / GIB, tail);
}

static void format_log(kvp_vllm_result *r)
{
    char mem[32], tok[32], len[32];
    int minor = vllm_minor_of(r->version);
    vllm_format_gib(minor, r->kv_cache_memory_bytes / GIB, mem, sizeof mem);
    if (r->cudagraph_applied && r->gpu_total_bytes) {
        double d = r->cudagraph_bytes / (double)r->gpu_total_bytes, u = r->gpu_memory_utilization;
        snprintf(r->log[r->n_log++], sizeof r->log[0], "CUDA graph memory profiling is enabled "
                 "(default since v0.21.0). The current --gpu-memory-utilization=%.4f is "
                 "equivalent to --gpu-memory-utilization=%.4f without CUDA graph memory "
                 "profiling. To maintain the same effective KV cache size as before, increase "
                 "--gpu-memory-utilization to %.4f. To disable, set "
                 "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.", u, u - d, u + d);
    }
    kvp_format_thousands(r->token_capacity, tok, sizeof tok);
    kvp_format_thousands(r->max_model_len, len, sizeof len);
    snprintf(r->log[r->n_log++], sizeof r->log[0], "Available KV cache memory: %s GiB", mem);
    snprintf(r->log[r->n_log++], sizeof r->log[0],
             "GPU KV cache size: %s tokens, Maximum concurrency for %s tokens per request: %.2fx",
             tok, len, r->max_concurrency);
}

/* One stage's pool: groups, memory, fit check, blocks and capacity. */
static int run_stage(const kvp_model *m, const kvp_vllm_params *p, const kvp_gpu *g,
                     const struct vllm_version *v, kvp_dtype kv_t, kvp_vllm_result *r,
                     kvp_error *err)
{
    if (build_groups(m, p, g, v, kv_t, r, err))
        return -1;
    if (p->reservation_only)
        return 0;
    if (resolve_memory(m, p, g, r, err) || check_fit(m, v, r, err))
        return -1;
    r->num_blocks = r->kv_cache_memory_bytes / r->page_bytes / r->group_size;
    r->max_concurrency = (double)r->num_blocks / (double)r->blocks_per_request;
    r->token_capacity = (uint64_t)(r->max_concurrency * (double)r->max_model_len);
    return 0;
}

void vllm_stage_range(uint32_t n, uint32_t pp, uint32_t s, uint32_t *first, uint32_t *count)
{
    uint32_t base = n / pp, rem = n % pp, start = 0;
    *first = *count = 0;
    for (uint32_t i = 0; i <= s; i++) {
        uint32_t c = base + (rem && i >= pp - 1 - rem && i < pp - 1);
        if (i == s) {
            *first = start;
            *count = c;
        }
        start += c;
    }
}

static int run_stages(const kvp_model *m, const kvp_vllm_params *p, const kvp_gpu *g,
                      const struct vllm_version *v, kvp_dtype kv_t, kvp_vllm_result *r,
                      kvp_error *err)
{
    if (r->pp == 1) {
        r->n_stages = 1;
        r->stages[0].layers = m->n_layers;
        if (run_stage(m, p, g, v, kv_t, r, err))
            return -1;
        r->stages[0].per_request_bytes = r->per_request_bytes;
        r->stages[0].num_blocks = r->num_blocks;
        if (!p->reservation_only)
            format_log(r);
        return 0;
    }
    /* every stage sizes its own pool; the engine keeps the smallest */
    kvp_vllm_result *best = NULL, *tmp = malloc(sizeof *tmp), *base = malloc(sizeof *base);
    if (!tmp || !base) {
        free(tmp);
        free(base);
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    }
    *base = *r; /* the settings every stage starts from */
    int rc = 0;
    for (uint32_t s = 0; s < r->pp && !rc; s++) {
        kvp_model view = *m;
        uint32_t first, count;
        vllm_stage_range(m->n_layers, r->pp, s, &first, &count);
        view.layers = m->layers + first;
        view.n_layers = count;
        *tmp = *base;
        if ((rc = run_stage(&view, p, g, v, kv_t, tmp, err)))
            break;
        r->stages[s] = (struct kvp_vllm_stage){first, count, tmp->per_request_bytes,
                                               tmp->num_blocks};
        if (!best || tmp->per_request_bytes > best->per_request_bytes) {
            uint32_t n = r->n_stages;
            struct kvp_vllm_stage st[64];
            memcpy(st, r->stages, sizeof st);
            *r = *tmp;
            memcpy(r->stages, st, sizeof st);
            r->n_stages = n;
            best = r;
        }
        r->n_stages = s + 1;
    }
    free(tmp);
    free(base);
    if (rc)
        return -1;
    for (uint32_t s = 0; s < r->n_stages && !p->reservation_only; s++)
        if (r->stages[s].num_blocks < r->num_blocks)
            r->num_blocks = r->stages[s].num_blocks;
    if (!p->reservation_only) {
        r->max_concurrency = (double)r->num_blocks / (double)r->blocks_per_request;
        r->token_capacity = (uint64_t)(r->max_concurrency * (double)r->max_model_len);
        format_log(r);
    }
    KVP_NOTE(r, "pipeline parallel: %u stages of %u-%u layers; each GPU's figures are its stage's",
         r->pp, m->n_layers / r->pp, (m->n_layers + r->pp - 1) / r->pp);
    return 0;
}

int kvp_vllm(const kvp_model *m, const kvp_vllm_params *p, kvp_vllm_result *r, kvp_error *err)
{
    memset(r, 0, sizeof *r);
    if (m->vllm_refusal[0])
        return kvp_fail(err, KVP_EINPUT, "%s: %s", m->name, m->vllm_refusal);
    int minor = p->version ? vllm_minor_of(p->version) : 29;
    if (minor < 9 || minor > 29)
        return kvp_fail(err, KVP_EUSAGE, "--vllm-version %s: kvplan knows the releases from "
                        "0.9.1 to 0.29.1", p->version);
    const struct vllm_version *v = minor >= 29 ? &versions[1] : &versions[0];
    const kvp_gpu *g = find_gpu(p->gpu);
    if (!g)
        return kvp_fail(err, KVP_EUSAGE, "--gpu %s: unknown GPU; kvplan knows %s", p->gpu,
                        kvp_vllm_gpus());
    if (p->gpu_memory_utilization < 0 || p->gpu_memory_utilization > 1)
        return kvp_fail(err, KVP_EINPUT, "--gpu-memory-utilization %g: must be in (0, 1]",
                        p->gpu_memory_utilization);
    /* the caller's string (it outlives the result, as the params do), so a
     * result copied or freed never leaves a dangling name behind */
    r->version = p->version ? p->version : v->name;
    r->gpu = g->name;
    r->gpu_total_bytes = (uint64_t)llround(g->torch_total_gib * GIB);
    if (minor < 28)
        KVP_NOTE(r, "vLLM %s: the KV block rules are 0.28.0's (kvplan checks them from 0.28.0 "
                 "on); the memory estimate is this release's", r->version);
    r->tp = p->tp ? p->tp : 1;
    r->pp = p->pp ? p->pp : 1;
    if (r->tp > 1024)
        return kvp_fail(err, KVP_EINPUT, "-tp %u: at most 1024 ranks", r->tp);
    if (r->pp > 64 || r->pp > m->n_layers)
        return kvp_fail(err, KVP_EINPUT, "-pp %u: at most 64 stages, and no more than the %u "
                        "layers", r->pp, m->n_layers);
    const struct kv_type *kt;
    if (resolve_kv_type(p, &kt, err) || resolve_len(m, p, r, err))
        return -1;
    r->kv_cache_dtype = kt->name;
    resolve_batch(p, g, r);
    for (uint32_t il = 0; il < m->n_layers; il++)
        if (m->layers[il].indexer_head_dim && m->layers[il].kind != KVP_LAYER_MLA)
            return kvp_fail(err, KVP_EINPUT, "%s: layer %u keeps a sparse-attention index key "
                            "beside per-head K/V (MiniMax-M3's MSA, Qwen4-Exp's QSA); kvplan's "
                            "vLLM rules do not model that cache yet", m->name, il);
    for (uint32_t il = 0; il < m->n_layers; il++)
        if (m->layers[il].ple_conv_state)
            return kvp_fail(err, KVP_EINPUT, "%s: layer %u keeps Qwen4-Exp's PLE convolution "
                            "history; kvplan's vLLM rules do not model that state yet", m->name,
                            il);
    for (uint32_t il = 0; il < m->n_layers; il++)
        if (m->layers[il].kind == KVP_LAYER_SLIDING && m->layers[il].mla_heads)
            return kvp_fail(err, KVP_EINPUT, "%s: layer %u is a sliding-window MLA layer with a "
                            "latent of its own beside DSA layers (dots.3-note); kvplan's vLLM "
                            "rules do not model that cache yet", m->name, il);
    if (dsa_sparse(m) && (kt->kind == KV_NVFP4 || !strcmp(kt->name, "fp8_e5m2")))
        return kvp_fail(err, KVP_EINPUT, "%s: --kv-cache-dtype %s: vLLM's sparse MLA backends "
                        "for DeepSeek sparse attention take auto, bfloat16 or fp8 (e4m3); "
                        "kvplan does not model their nvfp4_ds_mla layout", m->name, kt->name);
    if (kt->kind == KV_NVFP4 && g->sm < 100)
        KVP_NOTE(r, "nvfp4: vLLM's nvfp4 KV cache kernels target Blackwell GPUs; on %s the "
                 "arithmetic is shown, but vLLM may refuse the setting", g->name);
    if (kt->kind != KV_TURBOQUANT)
        return run_stages(m, p, g, v, cache_elem(m, kt), r, err);
    /* TurboQuant: the arithmetic runs on a copy whose attention layers carry
     * vLLM's packed slot; the boundary layers stay in the model dtype */
    kvp_model *tq;
    if (kvp_vllm_turboquant(m, kt->name, &tq, err))
        return -1;
    uint32_t n = tq_boundary(m), packed = 0, slot = 0;
    for (uint32_t il = 0; il < tq->n_layers; il++)
        if (tq->layers[il].kv_slot_bytes) {
            packed++;
            slot = tq->layers[il].kv_slot_bytes;
        }
    char kept[112] = "";
    if (n == 2)
        snprintf(kept, sizeof kept, "; layers 0-1 and %u-%u stay in the model dtype (boundary "
                 "protection)", m->n_layers - 2, m->n_layers - 1);
    else if (n == 1)
        snprintf(kept, sizeof kept, "; layers 0 and %u stay in the model dtype (boundary "
                 "protection)", m->n_layers - 1);
    for (uint32_t il = 0; il < m->n_layers && !n; il++)
        if (m->layers[il].d_inner) {
            snprintf(kept, sizeof kept, "; a hybrid model keeps no boundary layers in the "
                     "model dtype");
            break;
        }
    if (packed)
        KVP_NOTE(r, "%s: %u attention layers store a packed %u-byte K+V slot per KV head per "
                 "token%s", kt->name, packed, slot, kept);
    else
        KVP_NOTE(r, "%s: no attention layer is packed%s", kt->name, kept);
    int rc = run_stages(tq, p, g, v, cache_elem(m, kt), r, err);
    kvp_model_free(tq);
    return rc;
}
