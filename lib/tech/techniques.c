/* techniques.c - kvp_techniques: the twelve KV-cache techniques for one
 * model, in four sections that are never ranked against each other.  This
 * file fixes the setting every row is measured at (the context, the
 * sequences, the memory capacities are counted on) and prices the model as
 * it is; each section's rows come from its own file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tech.h"

const char *kvp_tech_kind_name(kvp_tech_kind k)
{
    static const char *names[] = {"store", "recompute", "read", "place"};
    return (unsigned)k < 4 ? names[k] : "?";
}

const char *kvp_tech_label_name(kvp_tech_label l)
{
    static const char *names[] = {"exact", "theory", "model", "measured"};
    return (unsigned)l < 4 ? names[l] : "?";
}

kvp_tech_row *tech_row_new(tech_ctx *c, const char *id, kvp_tech_kind kind)
{
    kvp_tech_result *r = c->r;
    if (r->n_rows == sizeof r->rows / sizeof r->rows[0])
        return NULL;
    kvp_tech_row *row = &r->rows[r->n_rows++];
    memset(row, 0, sizeof *row);
    row->id = id;
    row->kind = kind;
    return row;
}

void tech_vllm_settings(const tech_ctx *c, kvp_vllm_params *v)
{
    if (c->r->runtime == KVP_RT_VLLM) {
        *v = c->vllm;
        return;
    }
    kvp_vllm_defaults(v);
    v->kv_cache_memory = c->memory;
    v->max_model_len = c->n;
    v->allow_long_max_model_len = 1;
    if (c->theory.type_k == KVP_FP8 || c->theory.type_k == KVP_NVFP4)
        v->kv_cache_dtype = kvp_dtype_name(c->theory.type_k);
}

/* vLLM fixes the length (derived when not given) and the memory (given or
 * its estimate) that every variant is then priced on. */
static int resolve_vllm(tech_ctx *c, kvp_error *err)
{
    kvp_vllm_result *v = malloc(sizeof *v);
    if (!v)
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    c->vllm = c->p->vllm;
    c->vllm.max_model_len = c->p->context;
    int rc = kvp_vllm(c->m, &c->vllm, v, err);
    if (!rc) {
        c->N = c->n = v->max_model_len;
        c->r->runtime_version = v->version;
        c->r->gpu = v->gpu;
        c->r->kv_cache_dtype = v->kv_cache_dtype;
        c->memory = v->kv_cache_memory_bytes;
        c->r->memory_is_estimate = v->available_is_estimate;
        c->r->memory_source = v->available_is_estimate ? "vLLM's estimate (see kvplan mem)"
                                                       : "given (--kv-cache-memory)";
        c->vllm.max_model_len = c->N;
        c->vllm.kv_cache_memory = c->memory;
    }
    free(v);
    return rc;
}

static int resolve_setting(tech_ctx *c, kvp_error *err)
{
    const kvp_tech_params *p = c->p;
    c->theory = p->theory;
    c->llama = p->llama;
    c->S = p->seqs ? p->seqs : 1;
    if (p->runtime == KVP_RT_VLLM) {
        if (c->S != 1)
            return kvp_fail(err, KVP_EUSAGE, "techniques: -np is llama.cpp's; vLLM's "
                            "concurrency is one of the figures");
        return resolve_vllm(c, err);
    }
    c->N = p->context;
    if (!c->N)
        c->N = c->m->max_position && c->m->max_position < 32768 ? c->m->max_position : 32768;
    if (c->N < c->S || c->N > KVP_MAX_TOKENS)
        return kvp_fail(err, KVP_EUSAGE, "techniques: %u sequences need at least as many "
                        "tokens, and the context is at most 2^40", c->S);
    c->n = c->N / c->S;
    if (p->runtime == KVP_RT_LLAMA) {
        kvp_llama_result l;
        c->llama.n_ctx = c->N;
        c->llama.n_seq = (int32_t)c->S;
        if (kvp_llama(c->m, &c->llama, &l, err))
            return -1;
        c->r->runtime_version = l.version;
        if (!p->memory)
            c->memory = l.total_bytes;
    }
    if (p->memory) {
        c->memory = p->memory;
        c->r->memory_source = "given (--memory)";
        return 0;
    }
    /* the memory the model needs at this setting, in the runtime's arithmetic */
    c->r->memory_source = "what the model needs at this setting";
    if (p->runtime == KVP_RT_LLAMA)
        return 0;
    kvp_theory_result t;
    kvp_theory_params tp = c->theory;
    tp.n_ctx = c->N;
    tp.n_seq = c->S;
    if (kvp_theory(c->m, &tp, &t, err))
        return -1;
    c->memory = t.total_bytes;
    return 0;
}

static int price_model(tech_ctx *c, kvp_error *err)
{
    tech_applied a;
    if (tech_apply(c, NULL, 0, &a, err))
        return -1;
    int rc = tech_eval(c, &a, &c->r->base, err);
    tech_applied_free(&a);
    if (!rc && !c->r->base.rt_computed)
        rc = kvp_fail(err, KVP_EINPUT, "%s", c->r->base.rt_reason);
    if (!rc)
        tech_relate(&c->r->base, &c->r->base);
    return rc;
}

int kvp_techniques(const kvp_model *m, const kvp_tech_params *p, kvp_tech_result *r,
                   kvp_error *err)
{
    tech_ctx c;
    memset(r, 0, sizeof *r);
    memset(&c, 0, sizeof c);
    c.m = m;
    c.p = p;
    c.r = r;
    r->runtime = p->runtime;
    r->type_k = p->theory.type_k;
    r->type_v = p->theory.type_v;
    if (resolve_setting(&c, err) || price_model(&c, err))
        return -1;
    r->context = c.N;
    r->seqs = c.S;
    r->memory = c.memory;
    if (tech_store_rows(&c, err) || tech_recompute_rows(&c, err) || tech_read_rows(&c, err) ||
        tech_place_rows(&c, err))
        return -1;
    return p->apply && *p->apply ? tech_compose(&c, err) : 0;
}
