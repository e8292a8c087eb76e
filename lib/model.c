/* model.c - the normalized per-layer model every reader produces (a
 * config.json, a GGUF, the catalog; see load/ for where a MODEL argument is
 * looked for): its facts, copies, and how its layers group for reporting. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "kvp_int.h"
#include "model_int.h"

const char *kvp_layer_kind_name(kvp_layer_kind k)
{
    static const char *names[KVP_LAYER_KIND_COUNT] = {
        "full", "sliding", "chunked", "mla", "linear", "mamba", "shared", "none", "cross"};
    return (unsigned)k < KVP_LAYER_KIND_COUNT ? names[k] : "?";
}

void kvp_model_fact(kvp_model *m, const char *name, int64_t value, const char *source)
{
    for (size_t i = 0; i < m->n_facts; i++)
        if (strcmp(m->facts[i].name, name) == 0)
            return;
    if (m->n_facts >= sizeof m->facts / sizeof m->facts[0])
        return;
    kvp_fact *f = &m->facts[m->n_facts++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->value = value;
    snprintf(f->source, sizeof f->source, "%s", source);
}

void kvp_model_free(kvp_model *m)
{
    if (m) {
        free(m->layers);
        free(m->tensors);
        free(m);
    }
}

int kvp_model_clone(const kvp_model *m, kvp_model **out, kvp_error *err)
{
    kvp_model *c = malloc(sizeof *c);
    kvp_layer *layers = malloc((m->n_layers ? m->n_layers : 1) * sizeof *layers);
    kvp_tensor *tensors = m->n_tensors ? malloc(m->n_tensors * sizeof *tensors) : NULL;
    if (!c || !layers || (m->n_tensors && !tensors)) {
        free(c);
        free(layers);
        free(tensors);
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", m->name);
    }
    *c = *m;
    memcpy(layers, m->layers, m->n_layers * sizeof *layers);
    if (tensors)
        memcpy(tensors, m->tensors, m->n_tensors * sizeof *tensors);
    c->layers = layers;
    c->tensors = tensors;
    *out = c;
    return 0;
}

/* Layers belong to one group when their kind and every shape field agree. */
static int same_shape(const kvp_layer *a, const kvp_layer *b)
{
    return a->kind == b->kind && a->n_kv_heads == b->n_kv_heads &&
           a->head_dim_k == b->head_dim_k && a->head_dim_v == b->head_dim_v &&
           a->window == b->window && a->d_conv == b->d_conv && a->d_state == b->d_state &&
           a->n_group == b->n_group && a->d_inner == b->d_inner &&
           a->conv_dtype == b->conv_dtype && a->ssm_dtype == b->ssm_dtype &&
           a->mla_heads == b->mla_heads && a->mla_k_head_dim == b->mla_k_head_dim &&
           a->mla_v_head_dim == b->mla_v_head_dim && a->mla_rope_dim == b->mla_rope_dim &&
           a->n_ssm_heads == b->n_ssm_heads && a->kv_slot_bytes == b->kv_slot_bytes &&
           a->indexer_head_dim == b->indexer_head_dim && a->ple_conv_state == b->ple_conv_state;
}

size_t kvp_model_groups(const kvp_model *m, kvp_group *out, size_t cap)
{
    size_t n = 0;
    for (uint32_t i = 0; i < m->n_layers; i++) {
        size_t g = 0;
        while (g < n && !same_shape(&out[g].shape, &m->layers[i]))
            g++;
        if (g == n) {
            if (n == cap)
                continue; /* more shapes than the caller has room for */
            out[n].kind = m->layers[i].kind;
            out[n].n_layers = 0;
            out[n].first = i;
            out[n].shape = m->layers[i];
            n++;
        }
        out[g].n_layers++;
    }
    return n;
}

void kvp_model_group_layers(const kvp_model *m, const kvp_group *g, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (uint32_t i = g->first; i < m->n_layers && len < n; i++) {
        if (!same_shape(&m->layers[i], &g->shape))
            continue;
        uint32_t j = i;
        while (j + 1 < m->n_layers && same_shape(&m->layers[j + 1], &g->shape))
            j++;
        int w = j > i + 1 ? snprintf(buf + len, n - len, "%s%u-%u", len ? "," : "", i, j)
                          : snprintf(buf + len, n - len, "%s%u", len ? "," : "", i);
        if (w < 0 || (size_t)w >= n - len) {
            if (n > 4)
                snprintf(buf + n - 4, 4, "...");
            return;
        }
        len += (size_t)w;
        if (j == i + 1) {
            w = snprintf(buf + len, n - len, ",%u", j);
            if (w < 0 || (size_t)w >= n - len)
                return;
            len += (size_t)w;
        }
        i = j;
    }
}

uint32_t kvp_model_count_kind(const kvp_model *m, kvp_layer_kind k)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        n += m->layers[i].kind == k;
    return n;
}

const char *kvp_families(void)
{
    return arch_family_list();
}
