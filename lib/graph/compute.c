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
#include "estimate.h"

enum { CPU_ALIGNMENT = 32 };   /* TENSOR_ALIGNMENT, the CPU buffer type's */
enum { GPU_ALIGNMENT = 128 };  /* CUDA's buffer alignment */
enum { OP_OFFLOAD_MIN_BATCH = 32 };

typedef struct arch_builder {
    int (*handles)(const char *arch);
    int (*build)(llm *c);
} arch_builder;

static const arch_builder builders[] = {
    {arch_dense_handles, arch_dense_build},
    {arch_gemma_handles, arch_gemma_build},
    {arch_decoder_handles, arch_decoder_build},
    {arch_moe_handles, arch_moe_build},
    {arch_mla_handles, arch_mla_build},
    {arch_dsa_handles, arch_dsa_build},
    {arch_dots3_handles, arch_dots3_build},
    {arch_hy4_handles, arch_hy4_build},
    {arch_minicpm3_handles, arch_minicpm3_build},
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
    uint64_t n_out = r->n_outputs_max ? r->n_outputs_max : n_seqs;
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
        llm_cache *kv = !strcmp(r->caches[i].name, "kv_swa") ? &c->swa
                      : !strcmp(r->caches[i].name, "kv_idx") ? &c->idx : &c->kv;
        cache_from(&r->caches[i], r, kv);
        kv->n_embd_v_gqa_max = (int64_t)v_max;
    }
    if (r->has_recurrent) {
        c->rs_size = r->recurrent.cells;
        c->rs_seq = r->recurrent.rs_seq;
    }
}

/* no graph for this architecture: the closed formula, labelled */
static int estimate(const kvp_model *m, const kvp_llama_result *r, const char *arch,
                    const kvp_offload *o, kvp_compute *out)
{
    llm c;
    memset(&c, 0, sizeof c);
    setup(&c, m, r);
    est_shape s = {(uint64_t)c.n_tokens, (uint64_t)c.n_outputs, c.fa, c.v_trans};
    out->modelled = 1;
    out->exact = 0;
    out->host_bytes = est_compute(m, r, &s);
    /* with devices, each one that runs layers gets the same allowance */
    if (o && o->n_devices) {
        out->n_devices = o->n_devices > 8 ? 8 : o->n_devices;
        for (uint32_t d = 0; d < out->n_devices; d++)
            out->device_bytes[d] = o->n_gpu_layers != 0 ? out->host_bytes : 0;
    }
    snprintf(out->how, sizeof out->how,
             "estimate: kvplan does not rebuild llama.cpp's %s graph; inputs plus the largest "
             "of the output, FFN and attention stages (see the README for its measured error)",
             arch);
    return 0;
}

/* The largest weight a host layer holds: with op_offload, a split that
 * runs a host weight's op on the device copies the weight into the device
 * compute buffer (llamacpp-memory-rules.md 3.4). */
static uint64_t largest_host_weight(const kvp_model *m, int32_t i_gpu_start)
{
    uint64_t big = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        const kvp_tensor *t = &m->tensors[i];
        if (t->layer >= 0 && t->layer < i_gpu_start && t->nbytes > big)
            big = t->nbytes;
    }
    return big;
}

/* Devices, computed from the CPU-verified graph (never exact): the host
 * buffer keeps the inputs, the unused embeddings input and the token rows;
 * each device holding layers replays the rest at its alignment, plus, at
 * partial offload, the largest host weight a split copies in; a host that
 * keeps layers needs their peak too, bounded by the CPU-only figure. */
static int split_devices(const kvp_model *m, llm *c, const kvp_offload *o, uint64_t cpu_bytes,
                         kvp_compute *out, kvp_error *err)
{
    kvp_weights_split w;
    if (m->n_tensors) {
        if (kvp_llama_weights_split(m, o, &w, err))
            return -1;
    } else {
        memset(&w, 0, sizeof w);
        int32_t n_all = (int32_t)m->n_layers;
        int32_t ngl = o->n_gpu_layers < 0 || o->n_gpu_layers > n_all + 1 ? n_all + 1
                                                                         : o->n_gpu_layers;
        w.i_gpu_start = n_all + 1 - ngl;
        w.act_gpu_layers = ngl;
        for (uint32_t d = 0; d < o->n_devices; d++)
            w.device[d] = ngl > 0;
    }
    uint64_t host = 0;
    gg_tensor *keep[2] = {c->inp_embd, c->tok_rows};
    for (int i = 0; i < 2; i++)
        if (keep[i]) {
            host += (gg_nbytes(keep[i]) + CPU_ALIGNMENT - 1) / CPU_ALIGNMENT * CPU_ALIGNMENT;
            keep[i]->flags |= GG_FLAG_EXTERNAL;
        }
    host += gg_input_bytes(c->g, CPU_ALIGNMENT);
    uint64_t dev = 0;
    if (gg_alloc_size(c->g, GPU_ALIGNMENT, &dev))
        return kvp_fail(err, KVP_EINPUT, "%s: the compute graph could not be replayed", m->name);
    int partial = w.i_gpu_start > 0 && w.act_gpu_layers > 0;
    if (partial && c->n_tokens >= OP_OFFLOAD_MIN_BATCH)
        dev += largest_host_weight(m, w.i_gpu_start);
    if (w.act_gpu_layers == 0 || w.i_gpu_start > 0)
        host = host > cpu_bytes ? host : cpu_bytes;
    out->host_bytes = host;
    out->n_devices = o->n_devices;
    for (uint32_t d = 0; d < o->n_devices && d < 8; d++)
        out->device_bytes[d] = w.act_gpu_layers > 0 && w.device[d] ? dev : 0;
    out->exact = 0;
    return 0;
}

int kvp_llama_compute(const kvp_model *m, const kvp_llama_result *r, const kvp_offload *o,
                      kvp_compute *out, kvp_error *err)
{
    (void)o;
    memset(out, 0, sizeof *out);
    const char *arch = llama_arch(m);
    const arch_builder *b = find_builder(arch);
    if (!m->n_vocab || !m->hidden_size || !m->n_layers) {
        snprintf(out->how, sizeof out->how, "not modelled: the model's dimensions are unknown");
        return 0;
    }
    if (!b)
        return estimate(m, r, arch, o, out);
    llm c;
    memset(&c, 0, sizeof c);
    c.g = gg_new();
    if (!c.g)
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    setup(&c, m, r);
    uint64_t size = 0;
    int rc = b->build(&c);
    if (rc == ARCH_NOT_MODELLED) {
        /* a variant of the architecture the builder cannot rebuild exactly
         * (a setting, an optional tensor): the labelled estimate instead */
        gg_free(c.g);
        return estimate(m, r, arch, o, out);
    }
    if (rc == 0)
        rc = gg_alloc_size(c.g, CPU_ALIGNMENT, &size);
    out->host_bytes = size;
    if (rc == 0 && o && o->n_devices && split_devices(m, &c, o, size, out, err)) {
        gg_free(c.g);
        return -1;
    }
    /* KVPLAN_GRAPH_DEBUG=1: the rebuilt graph on stderr, for builders */
    const char *dbg = getenv("KVPLAN_GRAPH_DEBUG");
    if (rc == 0 && dbg && *dbg == '1')
        gg_dump(c.g, stderr);
    gg_free(c.g);
    if (rc)
        return kvp_fail(err, KVP_EINPUT, "%s: the compute graph could not be replayed", m->name);
    out->modelled = 1;
    if (o && o->n_devices)
        snprintf(out->how, sizeof out->how,
                 "computed from llama.cpp's %s graph (%lld tokens, %lld output rows) split "
                 "between host and devices; exact only on a CPU-only run", arch,
                 (long long)c.n_tokens, (long long)c.n_outputs);
    else {
        out->exact = 1;
        snprintf(out->how, sizeof out->how,
                 "llama.cpp's %s graph for %lld tokens and %lld output rows, ggml's allocator "
                 "replayed", arch, (long long)c.n_tokens, (long long)c.n_outputs);
    }
    size_t used = strlen(out->how);
    if (c.note[0] && used + 2 < sizeof out->how)
        snprintf(out->how + used, sizeof out->how - used, "; %s", c.note);
    return 0;
}
