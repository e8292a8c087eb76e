/* json_out.c - the versioned JSON documents (schema 1).  Every byte count is
 * an integer number of bytes; consumers never parse MiB strings. */
#include <jansson.h>
#include <stdlib.h>

#include "json_out.h"
#include "kvp_int.h"

static void set_uint(json_t *o, const char *k, uint64_t v)
{
    if (v)
        json_object_set_new(o, k, json_integer((json_int_t)v));
}

/* The model's layer groups and their shapes (no bytes: those depend on the
 * runtime and settings). */
static json_t *groups_arr(const kvp_model *m)
{
    kvp_group gs[256];
    size_t n = kvp_model_groups(m, gs, 256);
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        const kvp_layer *L = &gs[i].shape;
        char list[4096];
        json_t *o = json_object();
        kvp_model_group_layers(m, &gs[i], list, sizeof list);
        json_object_set_new(o, "kind", json_string(kvp_layer_kind_name(gs[i].kind)));
        json_object_set_new(o, "layers", json_integer(gs[i].n_layers));
        json_object_set_new(o, "layer_list", json_string(list));
        set_uint(o, "kv_heads", L->n_kv_heads);
        set_uint(o, "head_dim_k", L->head_dim_k);
        set_uint(o, "head_dim_v", L->head_dim_v);
        set_uint(o, "window", L->window);
        set_uint(o, "d_conv", L->d_conv);
        set_uint(o, "d_inner", L->d_inner);
        set_uint(o, "d_state", L->d_state);
        set_uint(o, "n_group", L->n_group);
        set_uint(o, "indexer_head_dim", L->indexer_head_dim);
        set_uint(o, "ple_conv_state", L->ple_conv_state);
        if (L->kind == KVP_LAYER_LINEAR || L->kind == KVP_LAYER_MAMBA) {
            json_object_set_new(o, "conv_dtype", json_string(kvp_dtype_name(L->conv_dtype)));
            json_object_set_new(o, "ssm_dtype", json_string(kvp_dtype_name(L->ssm_dtype)));
        }
        json_array_append_new(a, o);
    }
    return a;
}

json_t *kvp_json_model(const kvp_model *m)
{
    json_t *o = json_object(), *kinds = json_object(), *facts = json_array();
    for (int k = 0; k < KVP_LAYER_KIND_COUNT; k++) {
        uint32_t n = kvp_model_count_kind(m, (kvp_layer_kind)k);
        if (n)
            json_object_set_new(kinds, kvp_layer_kind_name((kvp_layer_kind)k), json_integer(n));
    }
    for (size_t i = 0; i < m->n_facts; i++)
        json_array_append_new(facts, json_pack("{s:s, s:I, s:s}", "name", m->facts[i].name,
                                               "value", (json_int_t)m->facts[i].value, "source",
                                               m->facts[i].source));
    json_object_set_new(o, "name", json_string(m->name));
    json_object_set_new(o, "arch", json_string(m->arch));
    json_object_set_new(o, "family", json_string(m->family));
    json_object_set_new(o, "source", json_string(m->source));
    if (m->note[0]) /* provenance remark: a derived config, a GGUF, --family */
        json_object_set_new(o, "note", json_string(m->note));
    json_object_set_new(o, "layers", json_integer(m->n_layers));
    json_object_set_new(o, "layer_kinds", kinds);
    json_object_set_new(o, "max_position_embeddings",
                        m->max_position ? json_integer((json_int_t)m->max_position) : json_null());
    json_object_set_new(o, "dtype", json_string(kvp_dtype_name(m->dtype)));
    json_object_set_new(o, "groups", groups_arr(m));
    json_object_set_new(o, "facts", facts);
    if (m->fetch_requests || m->header_bytes) /* read over the network, or its cache */
        json_object_set_new(o, "fetch", json_pack("{s:I, s:I, s:I, s:I}", "requests",
                                                  (json_int_t)m->fetch_requests, "connections",
                                                  (json_int_t)m->fetch_connections, "bytes",
                                                  (json_int_t)m->fetch_bytes, "gguf_header_bytes",
                                                  (json_int_t)m->header_bytes));
    if (m->from_ollama)
        json_object_set_new(o, "ollama", json_pack("{s:s, s:o, s:o}", "name", m->ollama_name,
            "num_ctx", m->ollama_num_ctx ? json_integer((json_int_t)m->ollama_num_ctx) : json_null(),
            "num_batch", m->ollama_num_batch ? json_integer((json_int_t)m->ollama_num_batch)
                                             : json_null()));
    return o;
}

static char *dump(json_t *doc)
{
    char *s = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    return s;
}

char *kvp_model_json(const kvp_model *m)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_integer(KVPLAN_JSON_SCHEMA));
    json_object_set_new(doc, "model", kvp_json_model(m));
    return dump(doc);
}

char *kvp_theory_json(const kvp_model *m, const kvp_theory_result *r)
{
    json_t *doc = json_object(), *groups = json_array();
    for (size_t g = 0; g < r->n_groups; g++) {
        const kvp_theory_group *G = &r->groups[g];
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(kvp_layer_kind_name(G->kind)));
        json_object_set_new(o, "layers", json_integer(G->n_layers));
        json_object_set_new(o, "first_layer", json_integer(G->first));
        if (G->window)
            json_object_set_new(o, "window", json_integer(G->window));
        json_object_set_new(o, "per_token_bytes", json_integer((json_int_t)G->per_token_bytes));
        json_object_set_new(o, "cells", json_integer((json_int_t)G->cells));
        json_object_set_new(o, "fixed_bytes_per_sequence",
                            json_integer((json_int_t)G->fixed_bytes_per_seq));
        json_object_set_new(o, "bytes", json_integer((json_int_t)G->bytes));
        json_array_append_new(groups, o);
    }
    json_object_set_new(doc, "schema", json_integer(KVPLAN_JSON_SCHEMA));
    json_object_set_new(doc, "runtime", json_string("theory"));
    json_object_set_new(doc, "model", kvp_json_model(m));
    json_object_set_new(doc, "n_ctx", json_integer((json_int_t)r->params.n_ctx));
    json_object_set_new(doc, "n_seq", json_integer(r->params.n_seq));
    json_object_set_new(doc, "type_k", json_string(kvp_dtype_name(r->params.type_k)));
    json_object_set_new(doc, "type_v", json_string(kvp_dtype_name(r->params.type_v)));
    json_object_set_new(doc, "groups", groups);
    json_object_set_new(doc, "per_token_bytes", json_integer((json_int_t)r->per_token_bytes));
    json_object_set_new(doc, "fixed_bytes_per_sequence",
                        json_integer((json_int_t)r->fixed_bytes_per_seq));
    json_object_set_new(doc, "total_bytes", json_integer((json_int_t)r->total_bytes));
    json_object_set_new(doc, "all_full_bytes", json_integer((json_int_t)r->full_equiv_bytes));
    json_object_set_new(doc, "mla_expanded_per_token_bytes",
                        r->has_mla ? json_integer((json_int_t)r->mla_expanded_per_token_bytes)
                                   : json_null());
    if (r->indexer_per_token_bytes) /* DSA indexer keys, a part of per_token_bytes */
        json_object_set_new(doc, "indexer_per_token_bytes",
                            json_integer((json_int_t)r->indexer_per_token_bytes));
    return dump(doc);
}

static json_t *llama_cache_obj(const kvp_llama_cache *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(c->name));
    json_object_set_new(o, "cells", json_integer(c->cells));
    json_object_set_new(o, "layers", json_integer(c->layers));
    json_object_set_new(o, "seqs", json_integer(c->seqs));
    json_object_set_new(o, "streams", json_integer(c->streams));
    json_object_set_new(o, "k_type", json_string(kvp_dtype_name(c->k_type)));
    json_object_set_new(o, "v_type", json_string(kvp_dtype_name(c->v_type)));
    json_object_set_new(o, "k_bytes", json_integer((json_int_t)c->k_bytes));
    json_object_set_new(o, "v_bytes", json_integer((json_int_t)c->v_bytes));
    json_object_set_new(o, "bytes", json_integer((json_int_t)c->bytes));
    return o;
}

static json_t *llama_doc(const kvp_model *m, const kvp_llama_result *r)
{
    json_t *doc = json_object(), *caches = json_array(), *log = json_array(),
           *notes = json_array(), *rec = json_null();
    for (size_t i = 0; i < r->n_caches; i++)
        json_array_append_new(caches, llama_cache_obj(&r->caches[i]));
    for (size_t i = 0; i < r->n_log; i++)
        json_array_append_new(log, json_string(r->log[i]));
    for (size_t i = 0; i < r->n_notes; i++)
        json_array_append_new(notes, json_string(r->notes[i]));
    if (r->has_recurrent) {
        const kvp_llama_recurrent *s = &r->recurrent;
        rec = json_pack("{s:i, s:i, s:i, s:i, s:s, s:I, s:I, s:I, s:I}", "cells", (int)s->cells,
                        "layers", (int)s->layers, "seqs", (int)s->seqs, "rs_seq", (int)s->rs_seq,
                        "type", "f32", "r_bytes", (json_int_t)s->r_bytes, "s_bytes",
                        (json_int_t)s->s_bytes, "p_bytes", (json_int_t)s->p_bytes, "bytes",
                        (json_int_t)s->bytes);
    }
    json_object_set_new(doc, "schema", json_integer(KVPLAN_JSON_SCHEMA));
    json_object_set_new(doc, "runtime", json_string("llama.cpp"));
    json_object_set_new(doc, "runtime_version", json_string(r->version));
    json_object_set_new(doc, "model", kvp_json_model(m));
    json_object_set_new(doc, "n_ctx", json_integer((json_int_t)r->n_ctx));
    json_object_set_new(doc, "n_ctx_seq", json_integer((json_int_t)r->n_ctx_seq));
    json_object_set_new(doc, "n_seq", json_integer(r->n_seq));
    json_object_set_new(doc, "n_stream", json_integer(r->n_stream));
    json_object_set_new(doc, "kv_unified", json_boolean(r->unified));
    json_object_set_new(doc, "n_batch", json_integer(r->n_batch));
    json_object_set_new(doc, "n_ubatch", json_integer(r->n_ubatch));
    json_object_set_new(doc, "flash_attn", json_boolean(r->flash_attn_on));
    json_object_set_new(doc, "v_trans", json_boolean(r->v_trans));
    json_object_set_new(doc, "swa_full", json_boolean(r->swa_full));
    json_object_set_new(doc, "caches", caches);
    json_object_set_new(doc, "recurrent", rec);
    json_object_set_new(doc, "total_bytes", json_integer((json_int_t)r->total_bytes));
    json_object_set_new(doc, "weights_bytes",
                        r->weights_bytes ? json_integer((json_int_t)r->weights_bytes) : json_null());
    json_object_set_new(doc, "output_bytes",
                        r->output_bytes ? json_integer((json_int_t)r->output_bytes) : json_null());
    json_object_set_new(doc, "output_log",
                        r->output_log[0] ? json_string(r->output_log) : json_null());
    /* the CPU compute buffer; null where kvplan has no graph for the
     * architecture (compute.how says so) */
    json_object_set_new(doc, "compute",
                        json_pack("{s:o, s:b, s:s}", "host_bytes",
                                  r->compute.modelled ? json_integer((json_int_t)r->compute.host_bytes)
                                                      : json_null(),
                                  "exact", r->compute.exact, "how", r->compute.how));
    json_object_set_new(doc, "log", log);
    json_object_set_new(doc, "notes", notes);
    return doc;
}

char *kvp_llama_json(const kvp_model *m, const kvp_llama_result *r)
{
    return dump(llama_doc(m, r));
}

static json_t *bytes_or_null(int known, uint64_t v)
{
    return known ? json_integer((json_int_t)v) : json_null();
}

static json_t *device_obj(const kvp_device_mem *r, int weights_known)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(r->name));
    if (r->label[0])
        json_object_set_new(o, "label", json_string(r->label));
    json_object_set_new(o, "host", json_boolean(r->is_host));
    json_object_set_new(o, "memory_bytes", bytes_or_null(r->memory_bytes > 0, r->memory_bytes));
    json_object_set_new(o, "weights_bytes", bytes_or_null(weights_known, r->weights_bytes));
    json_object_set_new(o, "kv_bytes", json_integer((json_int_t)r->kv_bytes));
    json_object_set_new(o, "recurrent_bytes", json_integer((json_int_t)r->recurrent_bytes));
    json_object_set_new(o, "compute_bytes", bytes_or_null(r->compute_modelled, r->compute_bytes));
    json_object_set_new(o, "output_bytes", json_integer((json_int_t)r->output_bytes));
    json_object_set_new(o, "total_bytes", json_integer((json_int_t)r->total_bytes));
    json_object_set_new(o, "exact", json_boolean(r->exact));
    if (r->memory_bytes)
        json_object_set_new(o, "over_bytes", json_integer((json_int_t)r->over_bytes));
    return o;
}


/* vLLM's memory estimate, term by term (lib/vllm_memory.c), per GPU */
static json_t *vllm_estimate_json(const kvp_vllm_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "gpu_memory_utilization", json_real(r->gpu_memory_utilization));
    json_object_set_new(o, "requested_bytes", json_integer((json_int_t)r->requested_bytes));
    json_object_set_new(o, "weights_bytes", json_integer((json_int_t)r->weights_bytes));
    json_object_set_new(o, "weights_exact", json_boolean(r->weights_exact));
    json_object_set_new(o, "activation_bytes", json_integer((json_int_t)r->activation_bytes));
    json_object_set_new(o, "forward_bytes", json_integer((json_int_t)r->forward_bytes));
    json_object_set_new(o, "sampler_bytes", json_integer((json_int_t)r->sampler_bytes));
    json_object_set_new(o, "non_torch_bytes", json_integer((json_int_t)r->non_torch_bytes));
    json_object_set_new(o, "cudagraph_bytes", json_integer((json_int_t)r->cudagraph_bytes));
    json_object_set_new(o, "cudagraph_subtracted", json_boolean(r->cudagraph_applied));
    json_object_set_new(o, "cudagraph_and_runtime_bytes",
                        json_integer((json_int_t)(r->non_torch_bytes +
                                                  (r->cudagraph_applied ? r->cudagraph_bytes : 0))));
    json_object_set_new(o, "available_bytes", json_integer((json_int_t)r->available_signed_bytes));
    json_object_set_new(o, "error_band_gib",
                        json_pack("{s:f, s:f, s:f, s:f}", "weights", r->band_weights_gib,
                                  "profiling_peak", r->band_peak_gib, "cuda_graphs",
                                  r->band_graph_gib, "available", r->band_available_gib));
    return o;
}

static json_t *placement_obj(const kvp_llama_devices *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "n_gpu_layers", json_integer(d->n_gpu_layers));
    json_object_set_new(o, "ngl_auto", json_boolean(d->ngl_auto));
    json_object_set_new(o, "n_layer_all", json_integer(d->n_layer_all));
    json_object_set_new(o, "mmap", json_boolean(d->use_mmap));
    json_object_set_new(o, "kv_offload", json_boolean(d->kv_offload));
    json_object_set_new(o, "fit", json_boolean(d->fit));
    json_object_set_new(o, "weights", json_string(!d->weights_known     ? "unknown"
                                                  : d->weights_computed ? "computed, not read"
                                                                        : "read"));
    json_object_set_new(o, "weights_type", d->weights_type ? json_string(d->weights_type->name)
                                                           : json_null());
    json_object_set_new(o, "weights_basis", d->weights_type ? json_string(d->weights_type->basis)
                                                            : json_null());
    json_object_set_new(o, "param_count", bytes_or_null(d->weights_computed, d->param_count));
    json_object_set_new(o, "tied_copy", json_boolean(d->tied_copy));
    json_object_set_new(o, "compute", json_string(d->compute.how));
    return o;
}

char *kvp_llama_plan_json(const kvp_model *m, const kvp_llama_result *r,
                          const kvp_llama_devices *d)
{
    json_t *doc = llama_doc(m, r), *devs = json_array(), *bufs = json_array(),
           *over = json_array(), *notes = json_object_get(doc, "notes");
    for (uint32_t i = 0; i < d->n_rows; i++)
        json_array_append_new(devs, device_obj(&d->rows[i], d->weights_known));
    for (size_t i = 0; i < d->n_buffers; i++) {
        const kvp_llama_buffer *b = &d->buffers[i];
        json_array_append_new(bufs, json_pack("{s:s, s:s, s:s, s:I, s:s}", "kind", b->kind,
                                              "name", b->name, "device", d->rows[b->row].name,
                                              "bytes", (json_int_t)b->bytes, "log", b->log));
    }
    for (size_t i = 0; i < d->n_over; i++)
        json_array_append_new(over, json_string(d->over[i]));
    for (size_t i = 0; i < d->n_notes; i++)
        json_array_append_new(notes, json_string(d->notes[i]));
    json_object_set_new(doc, "placement", placement_obj(d));
    json_object_set_new(doc, "devices", devs);
    json_object_set_new(doc, "buffers", bufs);
    json_object_set_new(doc, "over_budget", over);
    return dump(doc);
}

char *kvp_vllm_json(const kvp_model *m, const kvp_vllm_result *r)
{
    json_t *doc = json_object(), *groups = json_array(), *log = json_array(),
           *notes = json_array();
    for (size_t i = 0; i < r->n_groups; i++) {
        const kvp_vllm_group *G = &r->groups[i];
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(kvp_layer_kind_name(G->kind)));
        json_object_set_new(o, "layers", json_integer(G->layers));
        json_object_set_new(o, "padding_layers", json_integer(G->padding));
        json_object_set_new(o, "block_size", json_integer(G->block_size));
        if (G->window)
            json_object_set_new(o, "window", json_integer(G->window));
        json_object_set_new(o, "page_bytes", json_integer((json_int_t)G->page_bytes));
        json_object_set_new(o, "blocks_per_request", json_integer((json_int_t)G->blocks_per_request));
        json_array_append_new(groups, o);
    }
    for (size_t i = 0; i < r->n_log; i++)
        json_array_append_new(log, json_string(r->log[i]));
    for (size_t i = 0; i < r->n_notes; i++)
        json_array_append_new(notes, json_string(r->notes[i]));
    json_object_set_new(doc, "schema", json_integer(KVPLAN_JSON_SCHEMA));
    json_object_set_new(doc, "runtime", json_string("vllm"));
    json_object_set_new(doc, "runtime_version", json_string(r->version));
    json_object_set_new(doc, "model", kvp_json_model(m));
    json_object_set_new(doc, "gpu", json_string(r->gpu));
    json_object_set_new(doc, "gpu_total_bytes", json_integer((json_int_t)r->gpu_total_bytes));
    json_object_set_new(doc, "tensor_parallel_size", json_integer(r->tp));
    json_object_set_new(doc, "pipeline_parallel_size", json_integer(r->pp));
    json_object_set_new(doc, "max_model_len", json_integer((json_int_t)r->max_model_len));
    json_object_set_new(doc, "derived_max_model_len", json_real(r->derived_max_model_len));
    json_object_set_new(doc, "max_num_batched_tokens",
                        json_integer((json_int_t)r->max_num_batched_tokens));
    json_object_set_new(doc, "max_num_seqs", json_integer(r->max_num_seqs));
    json_object_set_new(doc, "inflight_tokens", json_integer((json_int_t)r->inflight_tokens));
    json_object_set_new(doc, "prefix_caching", json_boolean(r->prefix_caching));
    json_object_set_new(doc, "mamba_cache_mode",
                        r->mamba_cache_mode ? json_string(r->mamba_cache_mode) : json_null());
    json_object_set_new(doc, "kv_cache_dtype",
                        json_string(r->kv_cache_dtype ? r->kv_cache_dtype : "auto"));
    json_object_set_new(doc, "block_size", json_integer(r->block_size));
    json_object_set_new(doc, "uniform_type", json_boolean(r->uniform_type));
    json_object_set_new(doc, "layers_per_group", json_integer(r->group_size));
    json_object_set_new(doc, "page_bytes", json_integer((json_int_t)r->page_bytes));
    json_object_set_new(doc, "pool_block_bytes", json_integer((json_int_t)r->pool_block_bytes));
    json_object_set_new(doc, "kv_cache_memory_bytes",
                        json_integer((json_int_t)r->kv_cache_memory_bytes));
    json_object_set_new(doc, "available_is_estimate", json_boolean(r->available_is_estimate));
    if (r->available_is_estimate)
        json_object_set_new(doc, "estimate", vllm_estimate_json(r));
    json_object_set_new(doc, "num_blocks", json_integer((json_int_t)r->num_blocks));
    json_object_set_new(doc, "groups", groups);
    json_object_set_new(doc, "blocks_per_request", json_integer((json_int_t)r->blocks_per_request));
    json_object_set_new(doc, "per_request_bytes", json_integer((json_int_t)r->per_request_bytes));
    json_object_set_new(doc, "fixed_bytes_per_request",
                        json_integer((json_int_t)r->fixed_bytes_per_request));
    json_object_set_new(doc, "max_concurrency", json_real(r->max_concurrency));
    json_object_set_new(doc, "token_capacity", json_integer((json_int_t)r->token_capacity));
    json_t *stages = json_array();
    for (uint32_t i = 0; i < r->n_stages; i++)
        json_array_append_new(stages, json_pack("{s:i, s:i, s:I, s:I}", "first_layer",
                                                (int)r->stages[i].first_layer, "layers",
                                                (int)r->stages[i].layers, "per_request_bytes",
                                                (json_int_t)r->stages[i].per_request_bytes,
                                                "num_blocks", (json_int_t)r->stages[i].num_blocks));
    json_object_set_new(doc, "stages", stages);
    json_object_set_new(doc, "log", log);
    json_object_set_new(doc, "notes", notes);
    return dump(doc);
}

char *kvp_fit_json(const kvp_model *m, const kvp_fit_params *p, const kvp_fit_result *r,
                   size_t n)
{
    static const char *names[] = {"theory", "llama.cpp", "vllm"};
    json_t *doc = json_object(), *results = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "runtime", json_string(names[r[i].runtime]));
        json_object_set_new(o, "max_context", json_integer((json_int_t)r[i].max_context));
        json_object_set_new(o, "context_capped", json_boolean(r[i].context_capped));
        json_object_set_new(o, "bytes_at_max_context",
                            json_integer((json_int_t)r[i].bytes_at_max_context));
        json_object_set_new(o, "max_sequences", json_integer((json_int_t)r[i].max_seqs));
        json_object_set_new(o, "bytes_at_max_sequences",
                            json_integer((json_int_t)r[i].bytes_at_max_seqs));
        if (r[i].runtime == KVP_RT_VLLM)
            json_object_set_new(o, "max_concurrency", json_real(r[i].vllm_concurrency));
        json_array_append_new(results, o);
    }
    json_object_set_new(doc, "schema", json_integer(KVPLAN_JSON_SCHEMA));
    json_object_set_new(doc, "model", kvp_json_model(m));
    json_object_set_new(doc, "memory_bytes", json_integer((json_int_t)p->budget));
    json_object_set_new(doc, "sequences", json_integer(p->seqs));
    json_object_set_new(doc, "context", json_integer((json_int_t)p->context));
    json_object_set_new(doc, "results", results);
    return dump(doc);
}
