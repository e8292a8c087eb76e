/* llama/indexed.c - llama.cpp v0.5.0 architectures of the "indexed" group (see
 * twin.h): models whose layers keep an indexer key cache beside their attention
 * cache, how the GGUF reader finds which layers have one, and the metadata and
 * tensors their shape twins carry.
 *
 * DeepSeek Sparse Attention (src/models/deepseek32.cpp, glm-dsa.cpp): MLA layers, and
 * a lightning indexer whose keys llama_kv_cache_dsa keeps in a cache of its own
 * (attention.indexer.key_length wide, one head, type_k).  deepseek32 gives every
 * trunk layer an indexer; glm-dsa only the layers attention.indexer.types marks,
 * and without that key every layer when context_length < 1048576 (GLM-5, 5.1),
 * else GLM-5.2's pattern (layers 0, 1, then every 4th from 2).  hy_v4 is the same
 * cache behind independent Hyper-Connections.
 *
 * MiniMax Sparse Attention (src/models/minimax-m3.cpp, llama_kv_cache_msa): an ordinary
 * GQA cache, and an indexer cache over the layers past the leading dense ones whose
 * hparams copy is not MLA, so it keeps a V of the model's value_length beside the key.
 *
 * dots3note (src/models/dots3note.cpp, llama_kv_cache_dsa_iswa): the DSA cache (MLA and
 * indexer) over the full layers, then an SWA cache over the sliding layers, which are MLA
 * with a latent of their own (attention.kv_lora_rank_swa; key_length_swa per cell, no V).
 *
 * qwen4exp (src/models/qwen4exp.cpp, llama_memory_hybrid_idx): Qwen3.5's hybrid memory
 * (attention cache, Gated DeltaNet state, with the PLE layer's conv history as the P
 * row), then an idx_ cache of the QSA indexer keys over the attention layers, K only. */
#include <stdlib.h>
#include <string.h>

#include "../gguf_model.h"

/* ---- the GGUF reader ------------------------------------------------------------- */

/* glm-dsa's default when the GGUF has no attention.indexer.types:
 * GLM_5_2_DEFAULT_INDEXER_TYPES for a 1M-token model (78 entries, zero
 * past them), else every layer. */
static int glm_default_full(const gguf_rd *r, uint32_t il)
{
    if (r->m->max_position < 1048576)
        return 1;
    return il < 78 && (il < 2 || (il - 2) % 4 == 0);
}

/* attention.indexer.types, as get_key_or_arr reads it: a scalar for every
 * trunk layer, or one flag per trunk layer (not n_all: nextn layers have
 * none).  Absent: *found 0. */
static int indexer_types(gguf_rd *r, uint8_t *full, int *found)
{
    const char *k = gguf_rd_key(r, "attention.indexer.types");
    const gguf_kv *kv = kvp_gguf_find(r->f, k);
    uint32_t n = r->m->n_layers;
    uint64_t v;
    *found = kv != NULL;
    if (!kv)
        return 0;
    if (kv->type != GGUF_ARRAY) {
        if (kvp_gguf_get_uint(r->f, k, &v))
            return kvp_fail(r->err, KVP_EINPUT, "%s: %s must be a flag", r->path, k);
        memset(full, v != 0, n);
        return 0;
    }
    if (kv->arr_n != n)
        return kvp_fail(r->err, KVP_EINPUT, "%s: key %s has wrong array length; expected %u, got "
                        "%llu", r->path, k, n, (unsigned long long)kv->arr_n);
    for (uint32_t i = 0; i < n; i++) {
        if (kvp_gguf_arr_uint(kv, i, &v))
            return kvp_fail(r->err, KVP_EINPUT, "%s: %s[%u] is not a flag", r->path, k, i);
        full[i] = v != 0;
    }
    return 0;
}

/* load_arch_hparams' DSA keys (required, except in hy_v4, where a top_k of
 * 0 means a full-attention checkpoint without any indexer), then which
 * trunk layers get a key in the indexer cache (create_memory's filter_lid). */
static int dsa_finish(gguf_rd *r)
{
    kvp_model *m = r->m;
    uint64_t dim, heads, topk, hc;
    int glm = !strcmp(r->arch, "glm-dsa"), hy = !strcmp(r->arch, "hy_v4"), found = 0;
    if (hy) {
        if (gguf_rd_need(r, "hyper_connection.count", 64, &hc) ||
            gguf_rd_opt(r, "attention.indexer.head_count", 0, KVP_MAX_HEADS, &heads) ||
            gguf_rd_opt(r, "attention.indexer.key_length", 0, KVP_MAX_DIM, &dim) ||
            gguf_rd_opt(r, "attention.indexer.top_k", 0, KVP_MAX_TOKENS, &topk))
            return -1;
        kvp_model_fact(m, "hc_mult", (int64_t)hc, "hyper_connection.count");
        if (!topk) {
            kvp_model_fact(m, "indexer layers", 0, "attention.indexer.top_k absent or 0: no DSA");
            return 0;
        }
        if (!heads || dim <= m->n_rot)
            return kvp_fail(r->err, KVP_EINPUT, "%s: hy_v4: bad indexer head count / key length",
                            r->path);
    } else if (gguf_rd_need(r, "attention.indexer.head_count", KVP_MAX_HEADS, &heads) ||
               gguf_rd_need(r, "attention.indexer.key_length", KVP_MAX_DIM, &dim) ||
               gguf_rd_need(r, "attention.indexer.top_k", KVP_MAX_TOKENS, &topk)) {
        return -1;
    }
    if (!dim)
        return kvp_fail(r->err, KVP_EINPUT, "%s: %s is 0", r->path,
                        gguf_rd_key(r, "attention.indexer.key_length"));
    uint8_t *full = calloc(m->n_layers, 1);
    if (!full)
        return kvp_fail(r->err, KVP_EINPUT, "%s: out of memory", r->path);
    for (uint32_t il = 0; il < m->n_layers; il++) /* hy_v4: none unless the key says */
        full[il] = glm ? (uint8_t)glm_default_full(r, il) : !hy;
    if ((glm || hy) && indexer_types(r, full, &found)) {
        free(full);
        return -1;
    }
    if (hy && !full[0]) {
        free(full);
        return kvp_fail(r->err, KVP_EINPUT, "%s: hy_v4: layer 0 must own an indexer, nothing "
                        "precedes it to share", r->path);
    }
    uint32_t count = 0;
    for (uint32_t il = 0; il < m->n_layers; il++) {
        if (m->layers[il].kind != KVP_LAYER_MLA) {
            free(full);
            return kvp_fail(r->err, KVP_EINPUT, "%s: %s needs MLA (attention.key_length_mla and "
                            "value_length_mla)", r->path, r->arch);
        }
        m->layers[il].indexer_head_dim = full[il] ? (uint32_t)dim : 0;
        count += full[il];
    }
    free(full);
    kvp_model_fact(m, "index_head_dim", (int64_t)dim, "attention.indexer.key_length");
    kvp_model_fact(m, "index_n_heads", (int64_t)heads, "attention.indexer.head_count");
    kvp_model_fact(m, "index_topk", (int64_t)topk, "attention.indexer.top_k");
    kvp_model_fact(m, "indexer layers", count,
                   hy ? "attention.indexer.types"
                   : !glm ? "every trunk layer (deepseek32)"
                   : found ? "attention.indexer.types"
                   : m->max_position < 1048576
                       ? "attention.indexer.types absent, context_length < 1048576: every layer"
                       : "attention.indexer.types absent: GLM-5.2's default pattern");
    return 0;
}

/* minimax-m3 (llama_kv_cache_msa): the indexer keys are required; every
 * layer from leading_dense_block_count on gets one (create_memory's
 * filter_idx), with the model's V width beside it in llama.cpp's cache. */
static int msa_finish(gguf_rd *r)
{
    kvp_model *m = r->m;
    uint64_t dim, heads, topk, block, local, lead;
    if (gguf_rd_need(r, "attention.indexer.head_count", KVP_MAX_HEADS, &heads) ||
        gguf_rd_need(r, "attention.indexer.key_length", KVP_MAX_DIM, &dim) ||
        gguf_rd_need(r, "attention.indexer.top_k", KVP_MAX_TOKENS, &topk) ||
        gguf_rd_need(r, "attention.indexer.block_size", KVP_MAX_TOKENS, &block) ||
        gguf_rd_need(r, "attention.indexer.local_blocks", KVP_MAX_TOKENS, &local) ||
        gguf_rd_opt(r, "leading_dense_block_count", 0, KVP_MAX_LAYERS, &lead))
        return -1;
    if (!block)
        return kvp_fail(r->err, KVP_EINPUT, "%s: %s is 0", r->path,
                        gguf_rd_key(r, "attention.indexer.block_size"));
    uint32_t count = 0;
    for (uint32_t il = 0; il < m->n_layers; il++) {
        m->layers[il].indexer_head_dim = il >= lead ? (uint32_t)dim : 0;
        count += il >= lead;
    }
    kvp_model_fact(m, "sparse_index_dim", (int64_t)dim, "attention.indexer.key_length");
    kvp_model_fact(m, "sparse_num_index_heads", (int64_t)heads, "attention.indexer.head_count");
    kvp_model_fact(m, "sparse_topk_blocks", (int64_t)topk, "attention.indexer.top_k");
    kvp_model_fact(m, "sparse_block_size", (int64_t)block, "attention.indexer.block_size");
    kvp_model_fact(m, "sparse_local_block", (int64_t)local, "attention.indexer.local_blocks");
    kvp_model_fact(m, "indexer layers", count, "layers from leading_dense_block_count on");
    return 0;
}

/* dots3note (llama_kv_cache_dsa_iswa): load_arch_hparams' required keys,
 * the sliding layers as MLA latents of their own (kv_lora_rank_swa + rope
 * per token, no V: the hparams are MLA), and the DSA indexer on the layers
 * attention.indexer.types marks (an array; past its end, none). */
static int dots3_finish(gguf_rd *r)
{
    kvp_model *m = r->m;
    uint64_t rank_swa, k_mla_swa, v_mla_swa, dim, heads, topk, v;
    const char *pk = gguf_rd_key(r, "attention.sliding_window_pattern");
    const gguf_kv *pat = kvp_gguf_find(r->f, pk);
    if (!pat || pat->type != GGUF_ARRAY)
        return kvp_fail(r->err, KVP_EINPUT, "%s: array key not found in model: %s", r->path, pk);
    if (gguf_rd_need(r, "attention.kv_lora_rank_swa", KVP_MAX_DIM, &rank_swa) ||
        gguf_rd_need(r, "attention.key_length_mla_swa", KVP_MAX_DIM, &k_mla_swa) ||
        gguf_rd_need(r, "attention.value_length_mla_swa", KVP_MAX_DIM, &v_mla_swa) ||
        gguf_rd_need(r, "attention.indexer.head_count", KVP_MAX_HEADS, &heads) ||
        gguf_rd_need(r, "attention.indexer.key_length", KVP_MAX_DIM, &dim) ||
        gguf_rd_need(r, "attention.indexer.top_k", KVP_MAX_TOKENS, &topk))
        return -1;
    const char *tk = gguf_rd_key(r, "attention.indexer.types");
    const gguf_kv *types = kvp_gguf_find(r->f, tk);
    if (!types || types->type != GGUF_ARRAY)
        return kvp_fail(r->err, KVP_EINPUT, "%s: array key not found in model: %s", r->path, tk);
    if (types->arr_n > 512)
        return kvp_fail(r->err, KVP_EINPUT, "%s: %s has %llu entries, above LLAMA_MAX_LAYERS",
                        r->path, tk, (unsigned long long)types->arr_n);
    uint32_t count = 0;
    for (uint32_t il = 0; il < m->n_layers; il++) {
        kvp_layer *L = &m->layers[il];
        int full = 0;
        if (il < types->arr_n && kvp_gguf_arr_uint(types, il, &v))
            return kvp_fail(r->err, KVP_EINPUT, "%s: %s[%u] is not a flag", r->path, tk, il);
        full = il < types->arr_n && v != 0;
        if (L->kind != KVP_LAYER_MLA)
            return kvp_fail(r->err, KVP_EINPUT, "%s: dots3note requires MLA "
                            "(attention.key_length_mla and value_length_mla)", r->path);
        if (r->is_swa[il]) {
            if (full)
                return kvp_fail(r->err, KVP_EINPUT, "%s: layer %u slides and runs the indexer; "
                                "dots3note's indexer belongs to its full layers", r->path, il);
            L->kind = KVP_LAYER_SLIDING;
            L->mla_k_head_dim = (uint32_t)k_mla_swa;
            L->mla_v_head_dim = (uint32_t)v_mla_swa;
            if (rank_swa < L->head_dim_k)
                L->mla_rope_dim = L->head_dim_k - (uint32_t)rank_swa;
        }
        L->indexer_head_dim = full ? (uint32_t)dim : 0;
        count += full;
    }
    kvp_model_fact(m, "swa_kv_lora_rank", (int64_t)rank_swa, "attention.kv_lora_rank_swa");
    kvp_model_fact(m, "index_head_dim", (int64_t)dim, "attention.indexer.key_length");
    kvp_model_fact(m, "index_n_heads", (int64_t)heads, "attention.indexer.head_count");
    kvp_model_fact(m, "index_topk", (int64_t)topk, "attention.indexer.top_k");
    kvp_model_fact(m, "indexer layers", count, "attention.indexer.types");
    return 0;
}

/* qwen4exp (llama_memory_hybrid_idx): load_arch_hparams' required keys;
 * the QSA indexer key on every attention layer (filter_idx: the trunk's
 * non-recurrent layers); the PLE layer (ple.layers, one entry), whose
 * conv history is (conv_kernel - 1) x ngram_size x hc x n_embd values,
 * the P row of the recurrent cache. */
static int q4_finish(gguf_rd *r)
{
    kvp_model *m = r->m;
    uint64_t hc, lr, heads, dim, topk, ngram, hpn, kernel, eos, per_layer, v;
    const char *sk = gguf_rd_key(r, "rope.dimension_sections");
    if (!kvp_gguf_find(r->f, sk))
        return kvp_fail(r->err, KVP_EINPUT, "%s: key not found in model: %s", r->path, sk);
    if (gguf_rd_need(r, "hyper_connection.count", 64, &hc) ||
        gguf_rd_need(r, "hyper_connection.low_rank", KVP_MAX_DIM, &lr) ||
        gguf_rd_need(r, "attention.indexer.head_count", KVP_MAX_HEADS, &heads) ||
        gguf_rd_need(r, "attention.indexer.key_length", KVP_MAX_DIM, &dim) ||
        gguf_rd_need(r, "attention.indexer.top_k", KVP_MAX_TOKENS, &topk))
        return -1;
    if (hc <= 1 || !lr || !heads || !dim || !topk)
        return kvp_fail(r->err, KVP_EINPUT, "%s: qwen4exp needs hyper_connection.count > 1 and "
                        "a low rank, indexer head count, key length and top_k above zero",
                        r->path);
    uint32_t count = 0;
    for (uint32_t il = 0; il < m->n_layers; il++)
        if (!r->is_recr[il]) {
            m->layers[il].indexer_head_dim = (uint32_t)dim;
            count++;
        }
    kvp_model_fact(m, "hc_count", (int64_t)hc, "hyper_connection.count");
    kvp_model_fact(m, "hc_lowrank", (int64_t)lr, "hyper_connection.low_rank");
    kvp_model_fact(m, "indexer_head_dim", (int64_t)dim, "attention.indexer.key_length");
    kvp_model_fact(m, "indexer_n_heads", (int64_t)heads, "attention.indexer.head_count");
    kvp_model_fact(m, "indexer_budget", (int64_t)topk, "attention.indexer.top_k");
    kvp_model_fact(m, "indexer layers", count, "the attention layers");
    const char *pk = gguf_rd_key(r, "ple.layers");
    const gguf_kv *pl = kvp_gguf_find(r->f, pk);
    if (!pl || (pl->type == GGUF_ARRAY && pl->arr_n == 0))
        return 0;
    if (pl->type != GGUF_ARRAY || pl->arr_n != 1)
        return kvp_fail(r->err, KVP_EINPUT, "%s: %s must list one layer (only one PLE layer is "
                        "supported)", r->path, pk);
    if (kvp_gguf_arr_uint(pl, 0, &v) || v >= r->n_all)
        return kvp_fail(r->err, KVP_EINPUT, "%s: PLE layer out of range", r->path);
    if (gguf_rd_need(r, "ple.ngram_size", 8, &ngram) ||
        gguf_rd_need(r, "ple.heads_per_ngram", KVP_MAX_HEADS, &hpn) ||
        gguf_rd_need(r, "ple.conv_kernel", 1024, &kernel) ||
        gguf_rd_need(r, "ple.eos_token_id", UINT32_MAX, &eos) ||
        gguf_rd_need(r, "embedding_length_per_layer_input", KVP_MAX_DIM, &per_layer))
        return -1;
    if (!kernel || !per_layer || ngram < 2 || !hpn)
        return kvp_fail(r->err, KVP_EINPUT, "%s: qwen4exp's PLE keys out of range", r->path);
    if (v >= m->n_layers || !r->is_recr[v])
        return kvp_fail(r->err, KVP_EINPUT, "%s: PLE layer %llu is not a linear attention "
                        "layer", r->path, (unsigned long long)v);
    m->layers[v].ple_conv_state = (kernel - 1) * ngram * hc * m->hidden_size;
    kvp_model_fact(m, "PLE layer", (int64_t)v, "ple.layers");
    kvp_model_fact(m, "ngram_size", (int64_t)ngram, "ple.ngram_size");
    kvp_model_fact(m, "heads_per_ngram", (int64_t)hpn, "ple.heads_per_ngram");
    kvp_model_fact(m, "ple_conv_kernel_size", (int64_t)kernel, "ple.conv_kernel");
    kvp_model_fact(m, "ple_embed_dim", (int64_t)(per_layer * (ngram - 1) * hpn),
                   "embedding_length_per_layer_input x PLE heads");
    kvp_model_fact(m, "PLE conv history", (int64_t)m->layers[v].ple_conv_state,
                   "(ple.conv_kernel - 1) x ple.ngram_size x hyper_connection.count x n_embd");
    return 0;
}

/* ---- the twin's metadata ------------------------------------------------------------ */

/* A fact the model recorded (the indexer's head count and top-k shape only
 * the weights); dflt when it has none. */
static uint32_t fact_or(const kvp_model *m, const char *name, uint32_t dflt)
{
    for (size_t i = 0; i < m->n_facts; i++)
        if (!strcmp(m->facts[i].name, name) && m->facts[i].value > 0)
            return (uint32_t)m->facts[i].value;
    return dflt;
}

static uint32_t indexer_dim(const twin_ctx *t)
{
    for (uint32_t il = 0; il < t->n_layer; il++)
        if (t->m->layers[il].indexer_head_dim)
            return t->m->layers[il].indexer_head_dim;
    return 128; /* every layer "shared": the key width of every DSA model */
}

static void meta_dsa(twin_ctx *t)
{
    int glm = !strcmp(t->a->gguf, "glm-dsa");
    twin_meta_deepseek2(t);
    kvp_gguf_w_u32(t->w, twin_key(t, "expert_gating_func"), 2); /* sigmoid */
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.head_count"),
                   fact_or(t->m, "index_n_heads", glm ? 32 : 64));
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.key_length"), indexer_dim(t));
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.top_k"),
                   fact_or(t->m, "index_topk", 2048));
    if (glm) { /* always written: without it the default depends on context_length */
        uint8_t flags[512]; /* LLAMA_MAX_LAYERS, which twin_plan enforces */
        for (uint32_t il = 0; il < t->n_layer && il < 512; il++)
            flags[il] = t->m->layers[il].indexer_head_dim != 0;
        kvp_gguf_w_arr_bool(t->w, twin_key(t, "attention.indexer.types"), flags, t->n_layer);
    }
}

/* hy_v4: its iHC keys, and the DSA keys when a layer has an indexer (the
 * converter writes them only then). */
static void meta_hy_v4(twin_ctx *t)
{
    int dsa = 0;
    for (uint32_t il = 0; il < t->n_layer; il++)
        dsa |= t->m->layers[il].indexer_head_dim != 0;
    twin_meta_deepseek2(t);
    kvp_gguf_w_u32(t->w, twin_key(t, "expert_gating_func"), 2); /* sigmoid */
    kvp_gguf_w_u32(t->w, twin_key(t, "hyper_connection.count"), fact_or(t->m, "hc_mult", 4));
    kvp_gguf_w_f32(t->w, twin_key(t, "hyper_connection.epsilon"), 1e-6f);
    kvp_gguf_w_f32(t->w, twin_key(t, "hyper_connection.magnitude"), 2.0f);
    if (!dsa)
        return;
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.head_count"),
                   fact_or(t->m, "index_n_heads", 16));
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.key_length"), indexer_dim(t));
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.top_k"),
                   fact_or(t->m, "index_topk", 2048));
    uint8_t flags[512];
    for (uint32_t il = 0; il < t->n_layer && il < 512; il++)
        flags[il] = t->m->layers[il].indexer_head_dim != 0;
    kvp_gguf_w_arr_bool(t->w, twin_key(t, "attention.indexer.types"), flags, t->n_layer);
}

/* minimax-m3's leading dense layers: those before the first one with an
 * indexer (the layout llama.cpp assumes), unless the model said. */
static uint32_t msa_dense_lead(const twin_ctx *t)
{
    uint32_t lead = 0;
    if (t->n_dense_lead)
        return t->n_dense_lead;
    while (lead < t->n_layer && !t->m->layers[lead].indexer_head_dim)
        lead++;
    return lead;
}

static void meta_msa(twin_ctx *t)
{
    uint32_t dim = 0;
    for (uint32_t il = 0; il < t->n_layer && !dim; il++)
        dim = t->m->layers[il].indexer_head_dim;
    kvp_gguf_w_u32(t->w, twin_key(t, "expert_gating_func"), 2); /* sigmoid */
    if (!t->n_dense_lead) /* twin_meta's ffn() writes it when the model said */
        kvp_gguf_w_u32(t->w, twin_key(t, "leading_dense_block_count"), msa_dense_lead(t));
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.head_count"),
                   fact_or(t->m, "sparse_num_index_heads", 4));
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.key_length"), dim ? dim : 128);
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.top_k"),
                   fact_or(t->m, "sparse_topk_blocks", 16));
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.block_size"),
                   fact_or(t->m, "sparse_block_size", 128));
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.local_blocks"),
                   fact_or(t->m, "sparse_local_block", 1));
}

/* The first sliding layer: its latent, as dots3note's *_swa keys say it. */
static const kvp_layer *dots3_swa(const twin_ctx *t)
{
    for (uint32_t il = 0; il < t->n_layer; il++)
        if (t->is_swa[il])
            return &t->m->layers[il];
    return NULL; /* twin_plan made sure a layer slides */
}

/* dots3note: deepseek2's MLA keys, the sliding layers' MLA keys, the SWA
 * rope base, and the DSA keys with the indexer on the full layers. */
static void meta_dots3(twin_ctx *t)
{
    const kvp_layer *S = dots3_swa(t);
    uint8_t flags[512]; /* LLAMA_MAX_LAYERS, which twin_plan enforces */
    twin_meta_deepseek2(t);
    t->per_layer_heads = 1; /* load_arch_tensors sizes each layer from n_head(il) */
    kvp_gguf_w_u32(t->w, twin_key(t, "expert_gating_func"), 2); /* sigmoid */
    if (!t->n_dense_lead) /* required; twin_meta's ffn() writes it when not 0 */
        kvp_gguf_w_u32(t->w, twin_key(t, "leading_dense_block_count"), 0);
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.kv_lora_rank_swa"),
                   S ? t->hk_swa - t->mla_rope : t->kv_lora_rank);
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.key_length_mla_swa"),
                   S ? S->mla_k_head_dim : t->mla_k);
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.value_length_mla_swa"),
                   S ? S->mla_v_head_dim : t->mla_v);
    kvp_gguf_w_f32(t->w, twin_key(t, "rope.freq_base_swa"), 50000.0f);
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.head_count"),
                   fact_or(t->m, "index_n_heads", 64));
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.key_length"), indexer_dim(t));
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.top_k"),
                   fact_or(t->m, "index_topk", 2048));
    for (uint32_t il = 0; il < t->n_layer && il < 512; il++)
        flags[il] = t->m->layers[il].indexer_head_dim != 0;
    kvp_gguf_w_arr_bool(t->w, twin_key(t, "attention.indexer.types"), flags, t->n_layer);
}

/* The PLE layer and its n-gram heads ((ngram_size - 1) x heads_per_ngram). */
static int q4_ple_layer(const twin_ctx *t)
{
    for (uint32_t il = 0; il < t->n_layer; il++)
        if (t->m->layers[il].ple_conv_state)
            return (int)il;
    return -1;
}

static uint32_t q4_ple_heads(const twin_ctx *t)
{
    return (fact_or(t->m, "ngram_size", 3) - 1) * fact_or(t->m, "heads_per_ngram", 8);
}

/* qwen4exp: the M-RoPE sections, hyper-connections, the QSA keys with
 * compress_ratios on the attention layers (as the converter writes them),
 * and the PLE keys.  The PLE hash constants only address the n-gram table,
 * never the cache: the twin writes placeholders (head h at offset h, one row
 * each, multipliers 1..n), so its table has one row per head. */
static void meta_qwen4exp(twin_ctx *t)
{
    int ple = q4_ple_layer(t);
    twin_meta_qwen35(t);
    kvp_gguf_w_u32(t->w, twin_key(t, "hyper_connection.count"), fact_or(t->m, "hc_count", 4));
    kvp_gguf_w_u32(t->w, twin_key(t, "hyper_connection.low_rank"),
                   fact_or(t->m, "hc_lowrank", 320));
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.head_count"),
                   fact_or(t->m, "indexer_n_heads", 4));
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.key_length"), indexer_dim(t));
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.indexer.top_k"),
                   fact_or(t->m, "indexer_budget", 2048));
    for (uint32_t il = 0; il < t->n_layer; il++)
        t->tmp[il] = t->is_recr[il] ? 0 : fact_or(t->m, "indexer_compress_ratio", 4);
    kvp_gguf_w_arr_u32(t->w, twin_key(t, "attention.compress_ratios"), t->tmp, t->n_layer);
    if (ple < 0)
        return;
    uint32_t ngram = fact_or(t->m, "ngram_size", 3), heads = q4_ple_heads(t);
    uint32_t lid = (uint32_t)ple, kernel = fact_or(t->m, "ple_conv_kernel_size", 4);
    uint64_t mult[64], off[64], size[64];
    for (uint32_t i = 0; i < 64; i++) {
        mult[i] = i + 1;
        off[i] = i;
        size[i] = 1;
    }
    kvp_gguf_w_arr_u32(t->w, twin_key(t, "ple.layers"), &lid, 1);
    kvp_gguf_w_u32(t->w, twin_key(t, "ple.ngram_size"), ngram);
    kvp_gguf_w_u32(t->w, twin_key(t, "ple.heads_per_ngram"), fact_or(t->m, "heads_per_ngram", 8));
    kvp_gguf_w_u32(t->w, twin_key(t, "ple.conv_kernel"), kernel);
    kvp_gguf_w_u32(t->w, twin_key(t, "ple.eos_token_id"), 0);
    kvp_gguf_w_u32(t->w, twin_key(t, "embedding_length_per_layer_input"),
                   fact_or(t->m, "ple_embed_dim", (uint32_t)t->n_embd) / (heads ? heads : 1));
    kvp_gguf_w_arr_u64(t->w, twin_key(t, "ple.layer_multipliers"), mult, ngram < 64 ? ngram : 64);
    kvp_gguf_w_arr_u64(t->w, twin_key(t, "ple.head_offsets"), off, heads < 64 ? heads : 64);
    kvp_gguf_w_arr_u64(t->w, twin_key(t, "ple.head_vocab_sizes"), size, heads < 64 ? heads : 64);
}

/* ---- the twin's tensors ------------------------------------------------------------- */

#define W 0 /* F16 */
#define F 1 /* F32 */

/* The indexer of one layer (deepseek32, glm-dsa, hy_v4 name them alike). */
static void indexer_tensors(twin_ctx *t, int il, uint64_t heads)
{
    uint64_t idx = t->m->layers[il].indexer_head_dim;
    if (!idx)
        return;
    twin_tensor(t, il, "blk.%d.indexer.k_norm.weight", F, idx, 0, 0);
    twin_tensor(t, il, "blk.%d.indexer.k_norm.bias", F, idx, 0, 0);
    twin_tensor(t, il, "blk.%d.indexer.proj.weight", W, t->n_embd, heads, 0);
    twin_tensor(t, il, "blk.%d.indexer.attn_k.weight", W, t->n_embd, idx, 0);
    twin_tensor(t, il, "blk.%d.indexer.attn_q_b.weight", W, t->q_lora_rank, heads * idx, 0);
}

/* deepseek32 / glm-dsa (load_arch_tensors): DeepSeek-V3's MLA with a q
 * LoRA, the indexer of the layers that run one, leading dense layers, then
 * routed and shared experts. */
static void tensors_dsa(twin_ctx *t)
{
    const uint64_t kvr = t->kv_lora_rank, rope = t->mla_rope, qr = t->q_lora_rank;
    const uint64_t nope = t->mla_k - rope, E = t->n_embd;
    const uint64_t idx_heads = fact_or(t->m, "index_n_heads",
                                       strcmp(t->a->gguf, "glm-dsa") ? 64 : 32);
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t h = t->n_head[il];
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_tensor(t, il, "blk.%d.attn_q_a_norm.weight", F, qr, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_kv_a_norm.weight", F, kvr, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_q_a.weight", W, E, qr, 0);
        twin_tensor(t, il, "blk.%d.attn_q_b.weight", W, qr, h * t->mla_k, 0);
        twin_tensor(t, il, "blk.%d.attn_kv_a_mqa.weight", W, E, kvr + rope, 0);
        twin_tensor(t, il, "blk.%d.attn_k_b.weight", W, nope, kvr, h);
        twin_tensor(t, il, "blk.%d.attn_v_b.weight", W, kvr, t->mla_v, h);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, h * t->mla_v, E, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        indexer_tensors(t, il, idx_heads);
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_t_moe(t, il, t->n_ff_exp);
        twin_t_shexp(t, il, t->n_ff_exp * t->n_expert_shared);
    }
}

/* hy_v4 (load_arch_tensors): DeepSeek-V3's MLA with an output gate and a
 * learnable sink per head, independent Hyper-Connections (hc streams) around
 * attention and FFN and at the output, and the indexer of its "full" layers. */
static void tensors_hy_v4(twin_ctx *t)
{
    const uint64_t kvr = t->kv_lora_rank, rope = t->mla_rope, qr = t->q_lora_rank;
    const uint64_t nope = t->mla_k - rope, E = t->n_embd, hc = fact_or(t->m, "hc_mult", 4);
    const uint64_t idx_heads = fact_or(t->m, "index_n_heads", 16);
    twin_t_embd(t, TW_OUTPUT, NULL);
    twin_tensor(t, -1, "output_hc_fn.weight", W, hc * E, hc, 0);
    twin_tensor(t, -1, "output_hc_base.weight", F, hc, 0, 0);
    twin_tensor(t, -1, "output_hc_scale.weight", F, 1, 0, 0);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t h = t->n_head[il];
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_tensor(t, il, "blk.%d.attn_sinks.weight", F, h, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_q_a.weight", W, E, qr, 0);
        twin_tensor(t, il, "blk.%d.attn_q_a_norm.weight", F, qr, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_q_b.weight", W, qr, h * t->mla_k, 0);
        twin_tensor(t, il, "blk.%d.attn_kv_a_mqa.weight", W, E, kvr + rope, 0);
        twin_tensor(t, il, "blk.%d.attn_kv_a_norm.weight", F, kvr, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_k_b.weight", W, nope, kvr, h);
        twin_tensor(t, il, "blk.%d.attn_v_b.weight", W, kvr, t->mla_v, h);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, h * t->mla_v, E, 0);
        twin_tensor(t, il, "blk.%d.attn_gate.weight", W, E, h * t->mla_v, 0);
        indexer_tensors(t, il, idx_heads);
        twin_tensor(t, il, "blk.%d.hc_attn_fn.weight", W, hc * E, 2 * hc, 0);
        twin_tensor(t, il, "blk.%d.hc_attn_base.weight", F, 2 * hc, 0, 0);
        twin_tensor(t, il, "blk.%d.hc_attn_scale.weight", F, 2, 0, 0);
        twin_tensor(t, il, "blk.%d.hc_ffn_fn.weight", W, hc * E, 2 * hc, 0);
        twin_tensor(t, il, "blk.%d.hc_ffn_base.weight", F, 2 * hc, 0, 0);
        twin_tensor(t, il, "blk.%d.hc_ffn_scale.weight", F, 2, 0, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_t_moe(t, il, t->n_ff_exp);
        twin_t_shexp(t, il, t->n_ff_exp * t->n_expert_shared);
    }
}

/* minimax-m3 (load_arch_tensors): MiniMax-M2's GQA with per-head q/k norms,
 * leading dense layers, then routed experts (with their probability bias)
 * and a shared expert, and on those MoE layers the MSA indexer. */
static void tensors_msa(twin_ctx *t)
{
    const uint64_t E = t->n_embd, lead = msa_dense_lead(t);
    const uint64_t idx_heads = fact_or(t->m, "sparse_num_index_heads", 4);
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t h = t->n_head[il], kv = t->n_kv[il], hk = t->lhk[il], hv = t->lhv[il];
        uint64_t idx = t->m->layers[il].indexer_head_dim;
        twin_t_qkvo(t, il, h * hk, kv * hk, kv * hv, h * hk);
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_tensor(t, il, "blk.%d.attn_q_norm.weight", F, hk, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_k_norm.weight", F, hk, 0, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        if ((uint64_t)il < lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_t_moe(t, il, t->n_ff_exp);
        twin_tensor(t, il, "blk.%d.exp_probs_b.bias", F, t->n_expert, 0, 0);
        twin_t_shexp(t, il, t->n_ff_exp * t->n_expert_shared);
        idx = idx ? idx : 128; /* llama.cpp sizes every MoE layer's indexer alike */
        twin_tensor(t, il, "blk.%d.indexer.q_proj.weight", W, E, idx_heads * idx, 0);
        twin_tensor(t, il, "blk.%d.indexer.k_proj.weight", W, E, idx, 0);
        twin_tensor(t, il, "blk.%d.indexer.q_norm.weight", F, idx, 0, 0);
        twin_tensor(t, il, "blk.%d.indexer.k_norm.weight", F, idx, 0, 0);
    }
}

/* dots3note (load_arch_tensors): MLA on every layer, sized by the layer's
 * kind (the sliding layers have their own latent and heads), a norm on the
 * rope key, a head-wise output gate, the indexer of the full layers, a
 * leading dense layer, then routed experts with their bias and shared ones. */
static void tensors_dots3(twin_ctx *t)
{
    const uint64_t rope = t->mla_rope, qr = t->q_lora_rank, E = t->n_embd;
    const uint64_t idx_heads = fact_or(t->m, "index_n_heads", 64);
    const kvp_layer *S = dots3_swa(t);
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t h = t->n_head[il];
        int swa = t->is_swa[il] && S;
        uint64_t kvr = swa ? t->hk_swa - rope : t->kv_lora_rank;
        uint64_t mk = swa ? S->mla_k_head_dim : t->mla_k;
        uint64_t mv = swa ? S->mla_v_head_dim : t->mla_v;
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        twin_tensor(t, il, "blk.%d.attn_q_a_norm.weight", F, qr, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_kv_a_norm.weight", F, kvr, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_k_norm.weight", F, rope, 0, 0);
        twin_tensor(t, il, "blk.%d.attn_q_a.weight", W, E, qr, 0);
        twin_tensor(t, il, "blk.%d.attn_q_b.weight", W, qr, h * mk, 0);
        twin_tensor(t, il, "blk.%d.attn_kv_a_mqa.weight", W, E, kvr + rope, 0);
        twin_tensor(t, il, "blk.%d.attn_k_b.weight", W, mk - rope, kvr, h);
        twin_tensor(t, il, "blk.%d.attn_v_b.weight", W, kvr, mv, h);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, h * mv, E, 0);
        twin_tensor(t, il, "blk.%d.attn_gate.weight", W, E, h, 0);
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        indexer_tensors(t, il, idx_heads);
        if ((uint32_t)il < t->n_dense_lead) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        twin_tensor(t, il, "blk.%d.ffn_gate_inp.weight", W, E, t->n_expert, 0);
        twin_tensor(t, il, "blk.%d.exp_probs_b.bias", F, t->n_expert, 0, 0);
        twin_tensor(t, il, "blk.%d.ffn_gate_exps.weight", W, E, t->n_ff_exp, t->n_expert);
        twin_tensor(t, il, "blk.%d.ffn_down_exps.weight", W, t->n_ff_exp, E, t->n_expert);
        twin_tensor(t, il, "blk.%d.ffn_up_exps.weight", W, E, t->n_ff_exp, t->n_expert);
        twin_t_shexp(t, il, t->n_ff_exp * t->n_expert_shared);
    }
}

/* qwen4exp (load_arch_tensors): no layer norms, hyper-connections (low-rank
 * input mixers) around every token mixer and MoE and at the output; the
 * Gated DeltaNet mixer, or gated attention with the QSA indexer; the PLE
 * module on its layer; routed experts and a gated shared expert. */
static void tensors_qwen4exp(twin_ctx *t)
{
    const uint64_t E = t->n_embd, hc = fact_or(t->m, "hc_count", 4), hcd = hc * E;
    const uint64_t lr = fact_or(t->m, "hc_lowrank", 320);
    const uint64_t idx = indexer_dim(t), idx_heads = fact_or(t->m, "indexer_n_heads", 4);
    const uint64_t heads = q4_ple_heads(t);
    const uint64_t ff_exp = t->n_ff_exp ? t->n_ff_exp : t->n_ff / (t->n_expert_used ? t->n_expert_used : 1);
    const uint64_t ff_sh = t->n_ff_shexp ? t->n_ff_shexp : t->n_ff;
    const int ple = q4_ple_layer(t);
    twin_tensor(t, -1, "token_embd.weight", W, E, t->n_vocab, 0);
    twin_tensor(t, -1, "output_hc_norm.weight", F, E, hc, 0);
    twin_tensor(t, -1, "output_hc_down.weight", W, hcd, lr, 0);
    twin_tensor(t, -1, "output_hc_up.weight", W, lr, hcd, 0);
    twin_tensor(t, -1, "output.weight", W, E, t->n_vocab, 0);
    if (ple >= 0)
        twin_tensor(t, -1, "per_layer_token_embd.weight", W,
                    fact_or(t->m, "ple_embed_dim", (uint32_t)E) / (heads ? heads : 1), heads, 0);
    for (int il = 0; il < (int)t->n_layer; il++) {
        static const char *const hcn[2][4] = {
            {"blk.%d.hc_attn_norm.weight", "blk.%d.hc_attn_down.weight", "blk.%d.hc_attn_up.weight",
             "blk.%d.hc_attn_inject.weight"},
            {"blk.%d.hc_ffn_norm.weight", "blk.%d.hc_ffn_down.weight", "blk.%d.hc_ffn_up.weight",
             "blk.%d.hc_ffn_inject.weight"}};
        for (int k = 0; k < 2; k++) {
            twin_tensor(t, il, hcn[k][0], F, E, hc, 0);
            twin_tensor(t, il, hcn[k][1], W, hcd, lr, 0);
            twin_tensor(t, il, hcn[k][2], W, lr, hcd, 0);
            twin_tensor(t, il, hcn[k][3], W, hcd, hc, 0);
        }
        if (!t->is_recr[il]) {
            uint64_t h = t->n_head[il], kv = t->n_kv[il], hk = t->lhk[il];
            twin_t_qkvo(t, il, 2 * h * hk, kv * hk, kv * t->lhv[il], h * hk);
            twin_tensor(t, il, "blk.%d.attn_q_norm.weight", F, hk, 0, 0);
            twin_tensor(t, il, "blk.%d.attn_k_norm.weight", F, hk, 0, 0);
            twin_tensor(t, il, "blk.%d.indexer.q_proj.weight", W, E, idx_heads * idx, 0);
            twin_tensor(t, il, "blk.%d.indexer.k_proj.weight", W, E, idx, 0);
            twin_tensor(t, il, "blk.%d.indexer.q_norm.weight", F, idx, 0, 0);
            twin_tensor(t, il, "blk.%d.indexer.k_norm.weight", F, idx, 0, 0);
        } else {
            uint64_t key_dim = (uint64_t)t->n_group * t->d_state, value_dim = t->d_inner;
            uint64_t conv_dim = 2 * key_dim + value_dim;
            twin_tensor(t, il, "blk.%d.attn_qkv.weight", W, E, conv_dim, 0);
            twin_tensor(t, il, "blk.%d.attn_gate.weight", W, E, value_dim, 0);
            twin_tensor(t, il, "blk.%d.ssm_conv1d.weight", F, t->d_conv, conv_dim, 0);
            twin_tensor(t, il, "blk.%d.ssm_dt.bias", F, t->dt_rank, 0, 0);
            twin_tensor(t, il, "blk.%d.ssm_a", F, t->dt_rank, 0, 0);
            twin_tensor(t, il, "blk.%d.ssm_beta.weight", W, E, t->dt_rank, 0);
            twin_tensor(t, il, "blk.%d.ssm_alpha.weight", W, E, t->dt_rank, 0);
            twin_tensor(t, il, "blk.%d.ssm_norm.weight", F, t->d_state, 0, 0);
            twin_tensor(t, il, "blk.%d.ssm_out.weight", W, value_dim, E, 0);
        }
        if (il == ple) {
            twin_tensor(t, il, "blk.%d.ple_key.weight", W, E, hcd, 0);
            twin_tensor(t, il, "blk.%d.ple_value.weight", W, E, E, 0);
            twin_tensor(t, il, "blk.%d.ple_norm_key.weight", F, E, hc, 0);
            twin_tensor(t, il, "blk.%d.ple_norm_query.weight", F, E, hc, 0);
            twin_tensor(t, il, "blk.%d.ple_norm_conv.weight", F, E, hc, 0);
            twin_tensor(t, il, "blk.%d.ple_conv1d.weight", F,
                        fact_or(t->m, "ple_conv_kernel_size", 4), hcd, 0);
        }
        twin_t_moe(t, il, ff_exp);
        twin_tensor(t, il, "blk.%d.ffn_gate_inp_shexp.weight", F, E, 0, 0);
        twin_t_shexp(t, il, ff_sh);
    }
}

/* The architecture of section 9 whose cache kvplan does not model yet:
 * its GGUFs are refused in one line. */
static int refuse(gguf_rd *r)
{
    const char *why =
        "DeepSeek-V4's llama_kv_cache_dsv4 (a raw sliding-window cache, CSA and HCA caches "
        "compressed 4x and 128x, a lightning-indexer cache, three compressor states)";
    return kvp_fail(r->err, KVP_EINPUT, "%s: %s is not in kvplan's per-layer model yet", r->path,
                    why);
}

#define FULL KVP_LAYER_FULL

static const twin_arch arches[] = {
    /* gguf, family, swa, period, dense_first, n_swa default, recurrent, state,
     * recurrent kind, mla, embd_tied, kv_from_start, meta, tensors, rules, finish */
    {"deepseek32", "deepseek-dsa", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 1, 0, -1,
     meta_dsa, tensors_dsa, NULL, dsa_finish},
    {"glm-dsa", "glm-dsa", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 1, 0, -1, meta_dsa,
     tensors_dsa, NULL, dsa_finish},
    {"hy_v4", "hy-v4", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 1, 0, -1, meta_hy_v4,
     tensors_hy_v4, NULL, dsa_finish},
    {"minimax-m3", "minimax-m3", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1,
     meta_msa, tensors_msa, NULL, msa_finish},
    /* n_embd pinned: the PLE row is hc x n_embd wide */
    {"qwen4exp", "qwen4-exp", SWA_NONE, 0, 0, 0, RECR_INTERVAL, STATE_SSM, KVP_LAYER_LINEAR, 0, 1,
     -1, meta_qwen4exp, tensors_qwen4exp, NULL, q4_finish},
    /* sliding_window_pattern required (period 0: the array says it all) */
    {"dots3note", "dots3-note", SWA_PERIOD, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 1, 0, -1,
     meta_dots3, tensors_dots3, NULL, dots3_finish},
    /* refused (reader rows only, so the message says why) */
    {"deepseek4", "deepseek-v4", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     NULL, refuse, NULL},

};

static const twin_refusal refused[] = {
    {"deepseek4", "compressed CSA/HCA caches not modelled yet"},
    {NULL, NULL},
};

const twin_arch_group twin_group_indexed = {.arches = arches, .n = sizeof arches / sizeof arches[0], .refused = refused,};
