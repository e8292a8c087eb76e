/* gguf_model.c - a GGUF file's llama.cpp metadata turned into kvplan's
 * per-layer model, the same kvp_model a config.json gives.
 *
 * It reads the keys llama.cpp v0.5.0 reads (llama_model_base::load_hparams
 * and each arch's load_arch_hparams) and applies the same rules to them:
 * head counts and head sizes per layer, the sliding-window pattern of
 * load_swa_pattern, the hybrid filters that decide which layers are
 * recurrent, MLA when both *_mla lengths are set, and Gemma 3n's shared
 * layers.  The per-architecture rules live in twin_arch.c, which the twin
 * writer uses too.  MTP (nextn) layers are not trunk layers and are left
 * out, as llama.cpp's main context leaves them out.  Tensor data is never
 * read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_model.h"

typedef gguf_rd rd;

const char *gguf_rd_key(rd *r, const char *suffix)
{
    snprintf(r->key, sizeof r->key, "%s.%s", r->arch, suffix);
    return r->key;
}
#define key gguf_rd_key

/* ---- typed access to the metadata ------------------------------------------ */

/* An integer key "<arch>.suffix"; absent: dflt.  *found says which. */
int gguf_rd_u(rd *r, const char *suffix, uint64_t dflt, uint64_t hi, uint64_t *out, int *found)
{
    const char *k = key(r, suffix);
    *found = kvp_gguf_find(r->f, k) != NULL;
    if (!*found) {
        *out = dflt;
        return 0;
    }
    if (kvp_gguf_get_uint(r->f, k, out) || *out > hi)
        return kvp_fail(r->err, KVP_EINPUT, "%s: %s must be an integer in [0, %llu]", r->path, k,
                        (unsigned long long)hi);
    return 0;
}

int gguf_rd_opt(rd *r, const char *suffix, uint64_t dflt, uint64_t hi, uint64_t *out)
{
    int found;
    return gguf_rd_u(r, suffix, dflt, hi, out, &found);
}

int gguf_rd_need(rd *r, const char *suffix, uint64_t hi, uint64_t *out)
{
    int found;
    if (gguf_rd_u(r, suffix, 0, hi, out, &found))
        return -1;
    return found ? 0 : kvp_fail(r->err, KVP_EINPUT, "%s: missing required key %s", r->path,
                                key(r, suffix));
}

/* A per-layer key, as llama.cpp's get_key_or_arr reads it: a scalar for
 * every layer or an array of one value per layer (n_all).  Absent: vals
 * are left alone and *found is 0. */
int gguf_rd_layers(rd *r, const char *suffix, uint64_t hi, uint32_t *vals, int *found)
{
    const char *k = key(r, suffix);
    const gguf_kv *kv = kvp_gguf_find(r->f, k);
    uint64_t v;
    *found = kv != NULL;
    if (!kv)
        return 0;
    if (kv->type != GGUF_ARRAY) {
        if (kvp_gguf_get_uint(r->f, k, &v) || v > hi)
            return kvp_fail(r->err, KVP_EINPUT, "%s: %s must be an integer in [0, %llu]", r->path,
                            k, (unsigned long long)hi);
        for (uint32_t i = 0; i < r->n_all; i++)
            vals[i] = (uint32_t)v;
        return 0;
    }
    if (kv->arr_n != r->n_all)
        return kvp_fail(r->err, KVP_EINPUT, "%s: %s has %llu entries for %u layers", r->path, k,
                        (unsigned long long)kv->arr_n, r->n_all);
    for (uint32_t i = 0; i < r->n_all; i++) {
        if (kvp_gguf_arr_uint(kv, i, &v) || v > hi)
            return kvp_fail(r->err, KVP_EINPUT, "%s: %s[%u] must be an integer in [0, %llu]",
                            r->path, k, i, (unsigned long long)hi);
        vals[i] = (uint32_t)v;
    }
    return 0;
}

/* The first non-zero value of a per-layer key (expert counts and FFN
 * widths kept for twins, which llama.cpp may store per layer). */
static int first_nonzero(rd *r, const char *suffix, uint64_t hi, uint64_t *out)
{
    uint32_t *tmp = calloc(r->n_all, sizeof *tmp);
    int found;
    *out = 0;
    if (!tmp)
        return kvp_fail(r->err, KVP_EINPUT, "%s: out of memory", r->path);
    int rc = gguf_rd_layers(r, suffix, hi, tmp, &found);
    for (uint32_t i = 0; rc == 0 && i < r->n_all && !*out; i++)
        *out = tmp[i];
    free(tmp);
    return rc;
}

/* ---- which layers slide, which are recurrent -------------------------------- */

/* llama_model_base::load_swa_pattern: a bool array, else a period key,
 * else the architecture's default period. */
int gguf_rd_swa_pattern(rd *r)
{
    uint32_t period = r->a->swa_period, n = r->m->n_layers;
    const char *k = key(r, "attention.sliding_window_pattern");
    const gguf_kv *kv = kvp_gguf_find(r->f, k);
    uint64_t v;
    if (kv && kv->type == GGUF_ARRAY) {
        for (uint64_t i = 0; i < kv->arr_n && i < n; i++) {
            if (kvp_gguf_arr_uint(kv, i, &v))
                return kvp_fail(r->err, KVP_EINPUT, "%s: %s[%llu] is not a bool", r->path, k,
                                (unsigned long long)i);
            r->is_swa[i] = v != 0;
        }
        return 0;
    }
    if (kv) {
        if (kvp_gguf_get_uint(r->f, k, &v) || v > KVP_MAX_LAYERS)
            return kvp_fail(r->err, KVP_EINPUT, "%s: %s must be a layer period", r->path, k);
        period = (uint32_t)v;
    }
    for (uint32_t il = 0; il < n; il++)
        r->is_swa[il] = (uint8_t)twin_swa_by_period(il, period, r->a->dense_first);
    return 0;
}

static int swa_layers(rd *r)
{
    const twin_arch *a = r->a;
    int found;
    if (a->swa == SWA_NONE)
        return 0;
    if (gguf_rd_u(r, "attention.sliding_window", a->swa_default, KVP_MAX_TOKENS, &r->n_swa, &found))
        return -1;
    switch (a->swa) {
    case SWA_PERIOD:
        if (!found && !a->swa_default)
            return kvp_fail(r->err, KVP_EINPUT, "%s: missing required key %s", r->path,
                            key(r, "attention.sliding_window"));
        return gguf_rd_swa_pattern(r);
    case SWA_PERIOD_IF_KEY:
        return r->n_swa ? gguf_rd_swa_pattern(r) : 0;
    case SWA_CHUNKED:
        /* llama.cpp hard-codes the chunk; a zero key switches it off */
        if (found && r->n_swa == 0)
            return 0;
        r->n_swa = a->swa_default;
        return gguf_rd_swa_pattern(r);
    case SWA_ATTN_IF_KEY:
        for (uint32_t il = 0; r->n_swa && il < r->m->n_layers; il++)
            r->is_swa[il] = !r->is_recr[il];
        return 0;
    default:
        return 0;
    }
}

/* The hybrid filters of llama_model::create_memory. */
static int recurrent_layers(rd *r)
{
    uint32_t n = r->m->n_layers;
    uint64_t interval;
    int found;
    switch (r->a->recr) {
    case RECR_NONE: return 0;
    case RECR_ALL:
    case RECR_BOTH: memset(r->is_recr, 1, n); return 0;
    case RECR_KV0:
        for (uint32_t i = 0; i < n; i++)
            r->is_recr[i] = r->n_kv[i] == 0;
        return 0;
    case RECR_KV0_FF0:
        for (uint32_t i = 0; i < n; i++)
            r->is_recr[i] = r->n_kv[i] == 0 && r->ff[i] == 0;
        return 0;
    case RECR_INTERVAL: {
        uint32_t *v = calloc(r->n_all, sizeof *v);
        if (!v)
            return kvp_fail(r->err, KVP_EINPUT, "%s: out of memory", r->path);
        if (gguf_rd_layers(r, "attention.recurrent_layers", 1, v, &found)) {
            free(v);
            return -1;
        }
        if (!found && gguf_rd_opt(r, "full_attention_interval", 4, KVP_MAX_LAYERS, &interval)) {
            free(v);
            return -1;
        }
        if (!found && interval == 0) {
            free(v);
            return kvp_fail(r->err, KVP_EINPUT, "%s: %s must not be 0", r->path,
                            key(r, "full_attention_interval"));
        }
        for (uint32_t i = 0; i < n; i++)
            r->is_recr[i] = found ? v[i] != 0 : (i + 1) % interval != 0;
        free(v);
        return 0;
    }
    }
    return 0;
}

/* ---- layer shapes ------------------------------------------------------------ */

/* The recurrent state in kvplan's common form: conv (d_conv-1) x (d_inner +
 * 2 n_group d_state), SSM d_inner x d_state, always f32 in llama.cpp. */
static int state_shape(rd *r, kvp_layer *st)
{
    uint64_t conv = 0, inner = 0, state = 0, groups = 0, shift;
    switch (r->a->state) {
    case STATE_SSM:
        if (gguf_rd_need(r, "ssm.conv_kernel", 1024, &conv) ||
            gguf_rd_need(r, "ssm.inner_size", 1ull << 32, &inner) ||
            gguf_rd_need(r, "ssm.state_size", KVP_MAX_DIM, &state) ||
            gguf_rd_opt(r, "ssm.group_count", 0, KVP_MAX_HEADS, &groups))
            return -1;
        kvp_model_fact(r->m, "d_inner", (int64_t)inner, "ssm.inner_size");
        /* FalconMamba: RMS norms on dt, B and C (only the compute graph
         * sees them, lib/graph/llm_mamba.c) */
        uint64_t dt_b_c_rms = 0;
        if (gguf_rd_opt(r, "ssm.dt_b_c_rms", 0, 1, &dt_b_c_rms))
            return -1;
        if (dt_b_c_rms)
            kvp_model_fact(r->m, "ssm_dt_b_c_rms", 1, "ssm.dt_b_c_rms");
        break;
    case STATE_SHORTCONV:
        if (gguf_rd_need(r, "shortconv.l_cache", 1024, &conv))
            return -1;
        inner = r->m->hidden_size; /* the conv runs over n_embd channels */
        kvp_model_fact(r->m, "d_inner", (int64_t)inner, "embedding_length (LFM2 short conv)");
        break;
    case STATE_RWKV:
        if (gguf_rd_opt(r, "token_shift_count", 2, 64, &shift) ||
            gguf_rd_need(r, "wkv.head_size", KVP_MAX_DIM, &state))
            return -1;
        conv = shift + 1; /* token_shift_count x n_embd = (d_conv - 1) x d_inner */
        inner = r->m->hidden_size;
        break;
    case STATE_KDA: /* n_embd_r = 3 (d_conv - 1, or 3) n_head(0) hd, n_embd_s = hd^2 n_head(0) */
        if (gguf_rd_opt(r, "ssm.conv_kernel", 0, 1024, &conv) ||
            gguf_rd_need(r, "kda.head_dim", KVP_MAX_DIM, &state))
            return -1;
        conv = conv ? conv : 4;
        groups = r->n_head[0];
        inner = groups * state;
        kvp_model_fact(r->m, "d_inner", (int64_t)inner, "head_count (layer 0) x kda.head_dim");
        break;
    case STATE_LA: /* no conv; n_embd_s = key_length^2 n_head(0) */
        if (gguf_rd_opt(r, "attention.key_length", r->n_head[0] ? r->m->hidden_size /
                        r->n_head[0] : 0, KVP_MAX_DIM, &state))
            return -1;
        inner = (uint64_t)r->n_head[0] * state;
        conv = 1; /* (d_conv - 1) = 0 */
        kvp_model_fact(r->m, "d_inner", (int64_t)inner, "head_count (layer 0) x key_length");
        break;
    default:
        return 0;
    }
    if (conv == 0 || inner == 0)
        return kvp_fail(r->err, KVP_EINPUT, "%s: the recurrent state of %s has no size", r->path,
                        r->arch);
    st->d_conv = (uint32_t)conv;
    st->d_inner = inner;
    st->d_state = (uint32_t)state;
    st->n_group = (uint32_t)groups;
    /* ssm.time_step_rank is the head count of Mamba2 and Gated DeltaNet
     * (Mamba1 has no groups, and there it is the dt projection's rank) */
    uint64_t heads = 0;
    if (groups && gguf_rd_opt(r, "ssm.time_step_rank", 0, KVP_MAX_HEADS, &heads))
        return -1;
    st->n_ssm_heads = (uint32_t)(r->a->state == STATE_KDA ? groups : heads);
    st->conv_dtype = st->ssm_dtype = KVP_F32;
    if (r->a->state == STATE_LA) { /* the state is heads x key_length^2, kept as d_inner x d_state */
        st->d_conv = 0;
        st->n_ssm_heads = r->n_head[0];
    }
    return 0;
}

typedef struct head_dims {
    uint64_t k, v, k_swa, v_swa, k_mla, v_mla;
} head_dims;

static int read_head_dims(rd *r, head_dims *h)
{
    uint32_t h0 = r->n_head[0];
    uint64_t dflt = h0 ? r->m->hidden_size / h0 : 0;
    h->k_mla = h->v_mla = 0;
    if (gguf_rd_opt(r, "attention.key_length", dflt, KVP_MAX_DIM, &h->k) ||
        gguf_rd_opt(r, "attention.value_length", dflt, KVP_MAX_DIM, &h->v) ||
        gguf_rd_opt(r, "attention.key_length_swa", h->k, KVP_MAX_DIM, &h->k_swa) ||
        gguf_rd_opt(r, "attention.value_length_swa", h->v, KVP_MAX_DIM, &h->v_swa))
        return -1;
    if (r->a->mla && (gguf_rd_opt(r, "attention.key_length_mla", 0, KVP_MAX_DIM, &h->k_mla) ||
                      gguf_rd_opt(r, "attention.value_length_mla", 0, KVP_MAX_DIM, &h->v_mla)))
        return -1;
    if (!h0)
        h->k = h->v = h->k_swa = h->v_swa = 0; /* llama.cpp: no heads, no head size */
    return 0;
}

static int is_attention(const rd *r, uint32_t il)
{
    switch (r->a->recr) {
    case RECR_ALL: return 0;
    case RECR_KV0_FF0: return r->n_kv[il] > 0 && r->ff[il] == 0;
    case RECR_BOTH: return 1;
    default: return !r->is_recr[il];
    }
}

static void attention_layer(rd *r, uint32_t il, const head_dims *h, kvp_layer *L)
{
    int swa = r->is_swa[il];
    L->n_head = r->n_head[il];
    L->n_kv_heads = r->n_kv[il];
    L->head_dim_k = (uint32_t)(swa ? h->k_swa : h->k);
    L->head_dim_v = (uint32_t)(swa ? h->v_swa : h->v);
    L->window = swa ? (uint32_t)(r->n_swa > UINT32_MAX ? UINT32_MAX : r->n_swa) : 0;
    L->kind = swa ? (r->a->swa == SWA_CHUNKED ? KVP_LAYER_CHUNKED : KVP_LAYER_SLIDING)
                  : KVP_LAYER_FULL;
    if (h->k_mla && h->v_mla) {
        /* only the latent is cached: key_length = kv_lora_rank + rope */
        L->kind = KVP_LAYER_MLA;
        L->head_dim_v = 0;
        L->mla_heads = L->n_head;
        L->mla_k_head_dim = (uint32_t)h->k_mla;
        L->mla_v_head_dim = (uint32_t)h->v_mla;
    }
    int32_t from = r->kv_from;
    if (from >= 0 && il >= (uint32_t)from) {
        /* create_memory: reuse(il) = n_layer_kv_from_start - (swa ? 2 : 1);
         * the layer keeps its shape so the runtime knows whether it slid */
        L->kind = KVP_LAYER_SHARED;
        L->shared_from = from - (swa ? 2 : 1);
    }
}

static int build_layers(rd *r)
{
    head_dims h;
    kvp_layer state = {0};
    kvp_model *m = r->m;
    if (read_head_dims(r, &h) || state_shape(r, &state))
        return -1;
    for (uint32_t il = 0; il < m->n_layers; il++) {
        kvp_layer *L = &m->layers[il];
        L->shared_from = -1;
        L->kind = KVP_LAYER_NONE;
        if (is_attention(r, il))
            attention_layer(r, il, &h, L);
        if (r->is_recr[il]) {
            if (r->a->recr != RECR_BOTH)
                L->kind = r->a->recr_kind;
            L->d_conv = state.d_conv;
            L->d_inner = state.d_inner;
            L->d_state = state.d_state;
            L->n_group = state.n_group;
            L->conv_dtype = state.conv_dtype;
            L->ssm_dtype = state.ssm_dtype;
        }
        if (!m->n_heads && L->kind != KVP_LAYER_NONE && L->kind != KVP_LAYER_SHARED)
            m->n_heads = L->n_head;
    }
    if (h.k_mla && h.v_mla) {
        kvp_model_fact(m, "head_dim (latent)", (int64_t)h.k, "attention.key_length (kv_lora_rank + rope)");
        kvp_model_fact(m, "mla k head dim", (int64_t)h.k_mla, "attention.key_length_mla");
        kvp_model_fact(m, "mla v head dim", (int64_t)h.v_mla, "attention.value_length_mla");
    } else if (h.k) {
        kvp_model_fact(m, "head_dim", (int64_t)h.k, "attention.key_length (or embedding_length / heads)");
    }
    if (r->n_swa && r->a->swa != SWA_NONE)
        kvp_model_fact(m, "sliding_window", (int64_t)r->n_swa,
             r->a->swa == SWA_CHUNKED ? "llama.cpp's fixed Llama 4 chunk" :
                                        "attention.sliding_window");
    return 0;
}

/* ---- the model as a whole ------------------------------------------------------ */

static int read_heads(rd *r)
{
    int found, kv_found;
    if (gguf_rd_layers(r, "attention.head_count", KVP_MAX_HEADS, r->n_head, &found))
        return -1;
    memcpy(r->n_kv, r->n_head, r->n_all * sizeof *r->n_kv); /* MHA unless told */
    if (gguf_rd_layers(r, "attention.head_count_kv", KVP_MAX_HEADS, r->n_kv, &kv_found) ||
        gguf_rd_layers(r, "feed_forward_length", 1ull << 32, r->ff, &found))
        return -1;
    kvp_model_fact(r->m, "num_key_value_heads", r->n_kv[0],
         kv_found ? "attention.head_count_kv (layer 0)"
                  : "attention.head_count_kv absent: = attention.head_count (MHA)");
    return 0;
}

/* The MoE routing and attention temperature keys llama.cpp's compute
 * graph depends on. */
static int read_moe_routing(rd *r)
{
    kvp_model *m = r->m;
    uint64_t v;
    double d;
    if (gguf_rd_opt(r, "expert_group_count", 0, KVP_MAX_DIM, &v))
        return -1;
    m->n_expert_groups = (uint32_t)v;
    if (gguf_rd_opt(r, "expert_group_used_count", 0, KVP_MAX_DIM, &v))
        return -1;
    m->n_group_used = (uint32_t)v;
    if (gguf_rd_opt(r, "expert_weights_norm", 0, 1, &v))
        return -1;
    m->expert_weights_norm = (int)v;
    if (gguf_rd_opt(r, "expert_gating_func", 0, 255, &v))
        return -1;
    m->expert_gating_func = (uint32_t)v;
    const char *k = key(r, "expert_weights_scale");
    if (kvp_gguf_find(r->f, k)) {
        if (kvp_gguf_get_float(r->f, k, &d))
            return kvp_fail(r->err, KVP_EINPUT, "%s: %s must be a number", r->path, k);
        m->expert_weights_scale = d;
    }
    k = key(r, "attention.temperature_scale");
    if (kvp_gguf_find(r->f, k)) {
        if (kvp_gguf_get_float(r->f, k, &d))
            return kvp_fail(r->err, KVP_EINPUT, "%s: %s must be a number", r->path, k);
        m->attn_temp_scale = d;
    }
    return 0;
}

/* Dimensions that do not change the cache, kept for shape twins. */
static int read_twin_dims(rd *r)
{
    kvp_model *m = r->m;
    uint64_t v;
    const gguf_kv *tokens = kvp_gguf_find(r->f, "tokenizer.ggml.tokens");
    uint64_t n_tokens = tokens && tokens->type == GGUF_ARRAY ? tokens->arr_n : 0;
    if (gguf_rd_opt(r, "vocab_size", n_tokens, 1ull << 32, &m->n_vocab) ||
        first_nonzero(r, "feed_forward_length", 1ull << 32, &m->n_ff) ||
        first_nonzero(r, "expert_feed_forward_length", 1ull << 32, &m->n_ff_exp) ||
        gguf_rd_opt(r, "expert_shared_feed_forward_length", 0, 1ull << 32, &m->n_ff_shexp) ||
        gguf_rd_opt(r, "expert_count", 0, KVP_MAX_DIM, &v))
        return -1;
    m->n_expert = (uint32_t)v;
    if (first_nonzero(r, "expert_used_count", KVP_MAX_DIM, &v))
        return -1;
    m->n_expert_used = (uint32_t)v;
    if (gguf_rd_opt(r, "expert_shared_count", 0, KVP_MAX_DIM, &v))
        return -1;
    m->n_expert_shared = (uint32_t)v;
    /* MoE routing that only the compute graph sees (lib/graph/) */
    int moe_found = 0;
    if (gguf_rd_u(r, "expert_weights_norm", 0, 1, &v, &moe_found))
        return -1;
    if (moe_found)
        kvp_model_fact(m, "expert_weights_norm", (int64_t)v, "expert_weights_norm");
    if (gguf_rd_u(r, "expert_gating_func", 0, 16, &v, &moe_found))
        return -1;
    if (moe_found)
        kvp_model_fact(m, "expert_gating_func", (int64_t)v, "expert_gating_func");
    if (gguf_rd_opt(r, "leading_dense_block_count", 0, KVP_MAX_LAYERS, &v))
        return -1;
    m->n_layer_dense_lead = (uint32_t)v;
    if (gguf_rd_opt(r, "attention.q_lora_rank", 0, KVP_MAX_DIM, &v))
        return -1;
    m->q_lora_rank = (uint32_t)v;
    if (gguf_rd_opt(r, "rope.dimension_count", 0, KVP_MAX_DIM, &v))
        return -1;
    m->n_rot = (uint32_t)v;
    /* rope.scaling.finetuned false: Granite-4.0-H's attention without RoPE
     * (only the compute graph sees it, lib/graph/arch_hybrid.c) */
    int finetuned_found = 0;
    if (gguf_rd_u(r, "rope.scaling.finetuned", 1, 1, &v, &finetuned_found))
        return -1;
    if (finetuned_found && !v)
        kvp_model_fact(m, "rope_finetuned", 0, "rope.scaling.finetuned");
    if (r->a->mla) {
        /* the latent's split into rank and rope: kv_lora_rank when written,
         * else rope.dimension_count */
        if (gguf_rd_opt(r, "attention.kv_lora_rank", 0, KVP_MAX_DIM, &v))
            return -1;
        if (v)
            kvp_model_fact(m, "kv_lora_rank", (int64_t)v, "attention.kv_lora_rank");
        if (m->n_rot)
            kvp_model_fact(m, "qk_rope_head_dim", m->n_rot, "rope.dimension_count");
        for (uint32_t il = 0; il < m->n_layers; il++) {
            kvp_layer *L = &m->layers[il];
            if (L->kind != KVP_LAYER_MLA)
                continue;
            if (v && v < L->head_dim_k)
                L->mla_rope_dim = L->head_dim_k - (uint32_t)v;
            else if (m->n_rot < L->head_dim_k)
                L->mla_rope_dim = m->n_rot;
        }
    }
    return read_moe_routing(r);
}

/* the keys only llama.cpp's graph reads (kvp_model.graph_flags and the
 * fields beside it) */
static int read_graph_meta(rd *r)
{
    kvp_model *m = r->m;
    uint64_t v;
    if (gguf_rd_opt(r, "n_deepstack_layers", 0, KVP_MAX_LAYERS, &v))
        return -1;
    m->n_deepstack_layers = (uint32_t)v;
    if (!kvp_gguf_get_uint(r->f, key(r, "use_parallel_residual"), &v) && !v)
        m->graph_flags |= KVP_GRAPH_SEQ_RESIDUAL;
    if (!kvp_gguf_get_uint(r->f, key(r, "swin_norm"), &v) && v)
        m->graph_flags |= KVP_GRAPH_SWIN_NORM;
    if (!kvp_gguf_get_uint(r->f, key(r, "rope.scaling.finetuned"), &v) && !v)
        m->graph_flags |= KVP_GRAPH_NOPE_LAYERS;
    const gguf_kv *kv = kvp_gguf_find(r->f, key(r, "attention.rope_pattern"));
    for (uint64_t i = 0; kv && kv->type == GGUF_ARRAY && i < kv->arr_n; i++)
        if (!kvp_gguf_arr_uint(kv, i, &v) && !v)
            m->graph_flags |= KVP_GRAPH_NOPE_LAYERS;
    if (kvp_gguf_find(r->f, key(r, "deepstack_mapping")))
        m->graph_flags |= KVP_GRAPH_DEEPSTACK_MAP;
    return 0;
}

/* general.file_type (llama_ftype) as the closest kvplan dtype. */
static kvp_dtype file_dtype(const gguf_file *f)
{
    uint64_t t;
    if (kvp_gguf_get_uint(f, "general.file_type", &t))
        return KVP_F16;
    switch (t) {
    case 0: return KVP_F32;
    case 2: return KVP_Q4_0;
    case 3: return KVP_Q4_1;
    case 7: return KVP_Q8_0;
    case 8: return KVP_Q5_0;
    case 9: return KVP_Q5_1;
    case 32: return KVP_BF16;
    default: return KVP_F16;
    }
}

static int identify(rd *r)
{
    kvp_model *m = r->m;
    if (kvp_gguf_get_str(r->f, "general.architecture", r->arch, sizeof r->arch) || !r->arch[0])
        return kvp_fail(r->err, KVP_EINPUT, "%s: no general.architecture in the GGUF metadata",
                        r->path);
    if (!(r->a = twin_arch_find(r->arch)))
        return kvp_fail(r->err, KVP_EINPUT,
                        "%s: unknown architecture \"%s\" (kvplan archs --llama lists the "
                        "ones kvplan reads)", r->path, r->arch);
    r->kv_from = r->a->kv_from_start;
    snprintf(m->arch, sizeof m->arch, "%s", r->arch);
    snprintf(m->gguf_arch, sizeof m->gguf_arch, "%s", r->arch);
    snprintf(m->family, sizeof m->family, "%s", r->a->family);
    snprintf(m->source, sizeof m->source, "%s", r->path);
    snprintf(m->note, sizeof m->note, "GGUF metadata, read as llama.cpp v0.5.0 reads it");
    if (kvp_gguf_get_str(r->f, "general.name", m->name, sizeof m->name) || !m->name[0]) {
        const char *base = strrchr(r->path, '/');
        snprintf(m->name, sizeof m->name, "%s", base ? base + 1 : r->path);
    }
    m->dtype = file_dtype(r->f);
    return 0;
}

static int read_sizes(rd *r)
{
    kvp_model *m = r->m;
    uint64_t all, nextn;
    if (gguf_rd_need(r, "block_count", KVP_MAX_LAYERS, &all) ||
        gguf_rd_opt(r, "nextn_predict_layers", 0, KVP_MAX_LAYERS, &nextn) ||
        gguf_rd_opt(r, "embedding_length", 0, 1ull << 24, &m->hidden_size) ||
        gguf_rd_opt(r, "context_length", 0, KVP_MAX_TOKENS, &m->max_position))
        return -1;
    if (all == 0 || nextn >= all) /* all nextn: a drafter (gemma4-assistant) */
        return kvp_fail(r->err, KVP_EINPUT, "%s: %s = %llu with %llu nextn layers leaves no trunk%s",
                        r->path, key(r, "block_count"), (unsigned long long)all,
                        (unsigned long long)nextn, all && nextn == all ?
                        ": a drafter whose layers use the target model's KV cache, which kvplan "
                        "does not size from the drafter (size the target model)" : "");
    r->n_all = (uint32_t)all;
    m->n_layers = (uint32_t)(all - nextn);
    m->n_layer_nextn = (uint32_t)nextn;
    kvp_model_fact(m, "layers", m->n_layers, nextn ? "block_count - nextn_predict_layers" : "block_count");
    if (m->hidden_size)
        kvp_model_fact(m, "hidden_size", (int64_t)m->hidden_size, "embedding_length");
    if (m->max_position)
        kvp_model_fact(m, "max_position_embeddings", (int64_t)m->max_position, "context_length");
    return 0;
}

static int alloc_layers(rd *r)
{
    r->m->layers = calloc(r->m->n_layers, sizeof *r->m->layers);
    r->n_head = calloc(r->n_all, sizeof *r->n_head);
    r->n_kv = calloc(r->n_all, sizeof *r->n_kv);
    r->ff = calloc(r->n_all, sizeof *r->ff);
    r->is_swa = calloc(r->n_all, 1);
    r->is_recr = calloc(r->n_all, 1);
    if (!r->m->layers || !r->n_head || !r->n_kv || !r->ff || !r->is_swa || !r->is_recr)
        return kvp_fail(r->err, KVP_EINPUT, "%s: out of memory for %u layers", r->path, r->n_all);
    return 0;
}

static void rd_free(rd *r)
{
    free(r->n_head);
    free(r->n_kv);
    free(r->ff);
    free(r->is_swa);
    free(r->is_recr);
}

/* Tensors llama.cpp's table (llama-arch.cpp, LLM_TENSOR_LAYER_INPUT and
 * _OUTPUT) keeps off the repeating layers, by GGUF name without ".weight". */
static const char *const input_tensors[] = {
    "token_embd", "position_embd", "token_types", "hrm.z_l_init", "per_layer_token_embd",
    "masked_embd_centroids", "masked_embd_ordering", NULL};
static const char *const output_tensors[] = {
    "output", "cls", "cls.output", "cls.norm", "dense_2", "dense_3", "output_norm",
    "dec.output_norm", "enc.output_norm", "output_hc_fn", "output_hc_base", "output_hc_scale",
    "output_hc_norm", "output_hc_down", "output_hc_up", "output_res_score", "altup_proj",
    "altup_unembd_proj", "nextn.post_projection", "fc", "d2t", "markov_w1", "markov_w2",
    "conf_proj", "selector_predecessor", "selector_successor", "selector_hidden", NULL};

static int named(const char *name, const char *const *list)
{
    for (; *list; list++) {
        size_t n = strlen(*list);
        if (!strncmp(name, *list, n) && name[n] == '.')
            return 1;
    }
    return 0;
}

/* The layer a tensor belongs to: "blk.N." is block N; a tensor of neither
 * list and no block (rope_freqs) is created with layer 0. */
static int32_t tensor_layer(const rd *r, const char *name)
{
    unsigned long b;
    char *end;
    if (!strncmp(name, "blk.", 4) && (b = strtoul(name + 4, &end, 10), *end == '.') &&
        b < r->n_all)
        return (int32_t)b;
    if (named(name, input_tensors))
        return KVP_TENSOR_INPUT;
    /* LFM2 names its output norm token_embd_norm (llama-arch.cpp's "fix for
     * wrong tensor name"); elsewhere that is the input's norm */
    if (named(name, output_tensors) ||
        (!strncmp(name, "token_embd_norm.", 16) && !strncmp(r->arch, "lfm2", 4)))
        return KVP_TENSOR_OUTPUT;
    if (!strncmp(name, "token_embd_norm.", 16))
        return KVP_TENSOR_INPUT;
    return 0;
}

/* llama.cpp's metadata-only model buffer on the CPU: every tensor's bytes
 * padded to the buffer's 32-byte alignment (llamacpp-memory-rules.md 1.2);
 * and the tensor table that places them on devices (llama_place.c). */
static int weight_bytes(rd *r)
{
    uint64_t sum = 0, padded;
    kvp_model *m = r->m;
    int has_output = 0;
    m->tensors = calloc(r->f->n_tensors ? r->f->n_tensors : 1, sizeof *m->tensors);
    if (!m->tensors)
        return kvp_fail(r->err, KVP_EINPUT, "%s: out of memory for the tensor list", r->path);
    for (uint64_t i = 0; i < r->f->n_tensors; i++) {
        const gguf_tensor *t = &r->f->tensors[i];
        kvp_tensor *k = &m->tensors[m->n_tensors++];
        snprintf(k->name, sizeof k->name, "%.*s", (int)(t->name.len < 63 ? t->name.len : 63),
                 t->name.s);
        k->type = t->type;
        k->ne0 = t->ne[0];
        k->nbytes = t->nbytes;
        k->layer = tensor_layer(r, k->name);
        k->shard = t->shard;
        k->offset = t->offset;
        has_output |= !strcmp(k->name, "output.weight");
        if (kvp_add(t->nbytes, 31, &padded) || kvp_add(sum, padded & ~(uint64_t)31, &sum))
            return kvp_fail(r->err, KVP_EINPUT, "%s: tensor sizes overflow 64 bits", r->path);
    }
    m->tied_output = !has_output;
    /* gemma3n and gemma4 create the duplicated output before token_embd
     * itself, so the reuse check finds nothing and a copy is made even in
     * the same buffer (src/models/gemma3n.cpp, gemma4.cpp) */
    if (m->tied_output && (!strcmp(r->arch, "gemma3n") || !strcmp(r->arch, "gemma4"))) {
        m->tied_output = 2;
        for (size_t i = 0; i < m->n_tensors; i++)
            if (!strcmp(m->tensors[i].name, "token_embd.weight") &&
                (kvp_add(m->tensors[i].nbytes, 31, &padded) ||
                 kvp_add(sum, padded & ~(uint64_t)31, &sum)))
                return kvp_fail(r->err, KVP_EINPUT, "%s: tensor sizes overflow 64 bits",
                                r->path);
    }
    m->weight_bytes = sum;
    return 0;
}

/* The numeric "<arch>.*" keys, scalars and arrays, for the graph builders
 * (kvp_model.gguf_nums); an array's uniformity is checked over its first
 * 4096 elements (per-layer arrays hold at most 512). */
#undef key /* gguf_kv.key and kvp_gguf_num.key below */

static int arr_num(const gguf_kv *kv, uint64_t i, double *v)
{
    uint64_t u;
    if (!kvp_gguf_arr_float(kv, i, v))
        return 0;
    if (kv->arr_type != GGUF_BOOL || kvp_gguf_arr_uint(kv, i, &u))
        return -1;
    *v = (double)u;
    return 0;
}

static void read_nums(rd *r)
{
    kvp_model *m = r->m;
    size_t plen = strlen(r->arch);
    for (uint64_t i = 0; i < r->f->n_kv && m->n_gguf_nums < KVP_MAX_GGUF_NUMS; i++) {
        const gguf_kv *kv = &r->f->kv[i];
        if (kv->key.len <= plen + 1 || kv->key.len - plen - 1 >= sizeof m->gguf_nums[0].key ||
            memcmp(kv->key.s, r->arch, plen) || kv->key.s[plen] != '.')
            continue;
        kvp_gguf_num *n = &m->gguf_nums[m->n_gguf_nums];
        double v, first;
        if (kv->type == GGUF_ARRAY) {
            if (!kv->arr_n || kv->arr_n > UINT32_MAX || arr_num(kv, 0, &first))
                continue;
            n->n = (uint32_t)kv->arr_n;
            for (uint64_t j = 1; j < 4 && j < kv->arr_n; j++)
                if (arr_num(kv, j, &n->next[j - 1]))
                    n->next[j - 1] = 0;
            n->uniform = kv->arr_n <= 4096;
            for (uint64_t j = 1; n->uniform && j < kv->arr_n; j++)
                n->uniform = !arr_num(kv, j, &v) && v == first;
        } else {
            char k[128];
            snprintf(k, sizeof k, "%.*s", (int)kv->key.len, kv->key.s);
            if (kv->type == GGUF_BOOL)
                first = (double)kv->v.u;
            else if (kvp_gguf_get_float(r->f, k, &first))
                continue;
            n->n = 1;
            n->uniform = 1;
        }
        n->value = first;
        snprintf(n->key, sizeof n->key, "%.*s", (int)(kv->key.len - plen - 1),
                 kv->key.s + plen + 1);
        m->n_gguf_nums++;
    }
}
#define key gguf_rd_key

int kvp_model_from_gguf_file(const gguf_file *f, const char *path, kvp_model **out,
                             kvp_error *err)
{
    kvp_model *m = calloc(1, sizeof *m);
    rd r = {.f = f, .path = path, .err = err, .m = m};
    int rc = !m ? kvp_fail(err, KVP_EINPUT, "%s: out of memory", path)
                : identify(&r) || read_sizes(&r) || alloc_layers(&r) || read_heads(&r) ||
                          recurrent_layers(&r) || swa_layers(&r) ||
                          (r.a->rules && r.a->rules(&r)) || build_layers(&r) ||
                          read_twin_dims(&r) || read_graph_meta(&r) || (r.a->finish && r.a->finish(&r)) ||
                          weight_bytes(&r)
                      ? -1 : 0;
    if (rc == 0)
        read_nums(&r);
    rd_free(&r);
    if (rc) {
        kvp_model_free(m);
        return -1;
    }
    *out = m;
    return 0;
}

int kvp_model_from_gguf(const char *path, kvp_model **out, kvp_error *err)
{
    gguf_file *f;
    if (kvp_gguf_read(path, &f, err))
        return -1;
    int rc = kvp_model_from_gguf_file(f, path, out, err);
    kvp_gguf_free(f);
    return rc;
}
