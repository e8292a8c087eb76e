/* compute.c - kvp_llama_compute: llama.cpp's compute buffers for a run.
 *
 * llama.cpp sizes them by building the worst-case graph and running ggml's
 * graph allocator over it (llamacpp-memory-rules.md 3); no closed formula
 * reproduces that peak, fragmentation included, so this file sets up the
 * reserved ubatch as llama_context::sched_reserve does, has the
 * architecture's builder (arch_*.c) rebuild the graph, and replays the
 * allocator (galloc.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kvp_int.h"
#include "../twin.h"
#include "arch.h"

enum { CPU_ALIGNMENT = 32 };   /* TENSOR_ALIGNMENT, the CPU buffer type's */

typedef struct arch_builder {
    int (*handles)(const char *arch);
    int (*build)(llm *c);
} arch_builder;

static const arch_builder builders[] = {
    {arch_dense_handles, arch_dense_build},
    {arch_ssm_handles, arch_ssm_build},
    {arch_deltanet_handles, arch_deltanet_build},
    {arch_hybrid_handles, arch_hybrid_build},
    {arch_rwkv_handles, arch_rwkv_build},
    {arch_lightning_handles, arch_lightning_build},
    {arch_kda_handles, arch_kda_build},
};

static const char *llama_arch(const kvp_model *m)
{
    if (m->gguf_arch[0])
        return m->gguf_arch;
    const char *t = twin_gguf_name(m);
    return t ? t : m->arch;
}

static const arch_builder *find_builder(const char *arch)
{
    for (size_t i = 0; i < sizeof builders / sizeof builders[0]; i++)
        if (builders[i].handles(arch))
            return &builders[i];
    return NULL;
}

static void cache_from(const kvp_llama_cache *lc, const kvp_llama_result *r, llm_cache *kv)
{
    kv->n_kv = lc->cells;
    kv->kv_size = lc->cells;
    kv->n_stream = lc->streams ? lc->streams : 1;
    kv->type_k = llm_ggml_type(lc->k_type);
    kv->type_v = llm_ggml_type(lc->v_type);
    (void)r;
}

/* sched_reserve: min(n_ctx, n_ubatch) tokens over n_seq_max sequences
 * (rounded up to a multiple of them), llama-server's output rows */
static void setup(llm *c, const kvp_model *m, const kvp_llama_result *r)
{
    uint64_t n_tokens = r->n_ctx < r->n_ubatch ? r->n_ctx : r->n_ubatch;
    uint64_t n_seqs = r->n_seq ? r->n_seq : 1;
    uint64_t n_out = n_seqs < r->n_batch ? n_seqs : r->n_batch;
    if (n_out > n_tokens)
        n_out = n_tokens;
    c->n_tokens_max = (int64_t)n_tokens;
    if (n_tokens % n_seqs)
        n_tokens = (n_tokens + n_seqs - 1) / n_seqs * n_seqs;
    c->m = m;
    c->arch = llama_arch(m);
    c->n_embd = (int64_t)m->hidden_size;
    c->n_vocab = (int64_t)m->n_vocab;
    c->n_layer = m->n_layers;
    c->n_tokens = (int64_t)n_tokens;
    c->n_outputs = (int64_t)n_out;
    c->n_seqs = (int64_t)n_seqs;
    c->fa = r->flash_attn_on;
    c->v_trans = r->v_trans;
    uint64_t v_max = 0;
    for (uint32_t il = 0; il < m->n_layers; il++) {
        uint64_t v = (uint64_t)m->layers[il].head_dim_v * m->layers[il].n_kv_heads;
        if (v > v_max)
            v_max = v;
    }
    for (size_t i = 0; i < r->n_caches; i++) {
        llm_cache *kv = !strcmp(r->caches[i].name, "kv_swa") ? &c->swa : &c->kv;
        cache_from(&r->caches[i], r, kv);
        kv->n_embd_v_gqa_max = (int64_t)v_max;
    }
    if (r->has_recurrent) {
        c->rs_size = r->recurrent.cells;
        c->rs_seq = r->recurrent.rs_seq;
    }
}

int kvp_llama_compute(const kvp_model *m, const kvp_llama_result *r, const kvp_offload *o,
                      kvp_compute *out, kvp_error *err)
{
    (void)o;
    memset(out, 0, sizeof *out);
    const char *arch = llama_arch(m);
    const arch_builder *b = find_builder(arch);
    if (!b || !m->n_vocab || !m->hidden_size || !m->n_layers) {
        snprintf(out->how, sizeof out->how,
                 "not modelled: kvplan does not rebuild llama.cpp's %s graph yet", arch);
        return 0;
    }
    llm c;
    memset(&c, 0, sizeof c);
    c.g = gg_new();
    if (!c.g)
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    setup(&c, m, r);
    uint64_t size = 0;
    int rc = b->build(&c);
    if (rc == ARCH_NOT_MODELLED) {
        gg_free(c.g);
        snprintf(out->how, sizeof out->how,
                 "not modelled: kvplan does not rebuild this variant of llama.cpp's %s graph",
                 arch);
        return 0;
    }
    if (rc == 0)
        rc = gg_alloc_size(c.g, CPU_ALIGNMENT, &size);
    /* KVPLAN_GRAPH_DEBUG=1: the rebuilt graph on stderr, for builders */
    const char *dbg = getenv("KVPLAN_GRAPH_DEBUG");
    if (rc == 0 && dbg && *dbg == '1')
        gg_dump(c.g, stderr);
    gg_free(c.g);
    if (rc)
        return kvp_fail(err, KVP_EINPUT, "%s: the compute graph could not be replayed", m->name);
    out->modelled = 1;
    out->exact = 1;
    out->host_bytes = size;
    snprintf(out->how, sizeof out->how,
             "llama.cpp's %s graph for %lld tokens and %lld output rows, ggml's allocator "
             "replayed", arch, (long long)c.n_tokens, (long long)c.n_outputs);
    size_t used = strlen(out->how);
    if (c.note[0] && used + 2 < sizeof out->how)
        snprintf(out->how + used, sizeof out->how - used, "; %s", c.note);
    return 0;
}
