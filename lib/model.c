/* model.c - the normalized per-layer model: where a MODEL argument is
 * loaded from (a config.json, a directory, the catalog, the Hugging Face
 * cache), and how its layers group for reporting. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arch.h"
#include "kvp_int.h"
#include "model_int.h"

#define MAX_CONFIG_BYTES (64u << 20) /* real configs are a few KB */

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
        free(m);
    }
}

int kvp_model_clone(const kvp_model *m, kvp_model **out, kvp_error *err)
{
    kvp_model *c = malloc(sizeof *c);
    kvp_layer *layers = malloc((m->n_layers ? m->n_layers : 1) * sizeof *layers);
    if (!c || !layers) {
        free(c);
        free(layers);
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", m->name);
    }
    *c = *m;
    memcpy(layers, m->layers, m->n_layers * sizeof *layers);
    c->layers = layers;
    *out = c;
    return 0;
}

/* A GGUF file announces itself by its first four bytes. */
static int is_gguf(const char *path)
{
    char magic[4];
    FILE *f = fopen(path, "rb");
    int yes = f && fread(magic, 1, 4, f) == 4 && memcmp(magic, "GGUF", 4) == 0;
    if (f)
        fclose(f);
    return yes;
}

/* A config.json file, read by its own rule set or by `family` (--family). */
static int config_file(const char *path, const char *family, kvp_model **out, kvp_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return kvp_fail(err, KVP_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || st.st_size > MAX_CONFIG_BYTES) {
        fclose(f);
        return kvp_fail(err, KVP_EINPUT, "%s: not a regular file of at most %u bytes", path,
                        MAX_CONFIG_BYTES);
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf || fread(buf, 1, n, f) != n) {
        free(buf);
        fclose(f);
        return kvp_fail(err, KVP_EINPUT, "%s: read failed", path);
    }
    fclose(f);
    int rc = hf_model_from_text(buf, n, path, family, out, err);
    free(buf);
    return rc;
}

static int load_catalog(const kvp_catalog_entry *e, const char *family, kvp_model **out,
                        kvp_error *err)
{
    char label[256];
    snprintf(label, sizeof label, "%s (catalog: data/models/%s)", e->name, e->file);
    if (hf_model_from_text(e->text, e->len, label, family, out, err))
        return -1;
    snprintf((*out)->name, sizeof (*out)->name, "%s", e->name);
    snprintf((*out)->source, sizeof (*out)->source, "catalog: data/models/%s (%s)%s%s%s", e->file,
             e->model_id, family ? " [rules by --family " : "", family ? family : "",
             family ? "]" : "");
    return 0;
}

/* kvp_model_load, with every config.json read by `family` when not NULL. */
static int load(const char *spec, const char *family, kvp_model **out, kvp_error *err)
{
    struct stat st;
    if (!spec || !*spec)
        return kvp_fail(err, KVP_EUSAGE, "no model given");
    if (stat(spec, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            char p[4096];
            snprintf(p, sizeof p, "%s/config.json", spec);
            if (stat(p, &st) != 0)
                return kvp_fail(err, KVP_EINPUT, "%s: directory has no config.json", spec);
            return config_file(p, family, out, err);
        }
        if (is_gguf(spec) && family)
            return kvp_fail(err, KVP_EUSAGE, "%s: --family applies to a config.json; a GGUF "
                            "file names its llama.cpp architecture itself", spec);
        if (is_gguf(spec))
            return kvp_model_from_gguf(spec, out, err);
        return config_file(spec, family, out, err);
    }
    const kvp_catalog_entry *e = kvp_catalog_find(spec);
    if (e && !strchr(spec, '/'))
        return load_catalog(e, family, out, err);
    char path[4096];
    if (kvp_hfcache_find(spec, path, sizeof path) == 0) {
        if (config_file(path, family, out, err))
            return -1;
        snprintf((*out)->name, sizeof (*out)->name, "%s", spec);
        return 0;
    }
    if (e)
        return load_catalog(e, family, out, err);
    size_t n = strlen(spec);
    if (spec[0] == '/' || spec[0] == '.' || (n > 5 && !strcmp(spec + n - 5, ".json")) ||
        (n > 5 && !strcmp(spec + n - 5, ".gguf")))
        return kvp_fail(err, KVP_EINPUT, "%s: no such file", spec);
    return kvp_fail(err, KVP_EINPUT,
                    "%s: no such file, catalog model or Hugging Face cache entry "
                    "(`kvplan models` lists the catalog)", spec);
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

/* ---- loading with a chosen rule set (--family) --------------------------------- */

int kvp_model_from_config_file(const char *path, kvp_model **out, kvp_error *err)
{
    return config_file(path, NULL, out, err);
}

int kvp_model_load(const char *spec, kvp_model **out, kvp_error *err)
{
    return load(spec, NULL, out, err);
}

int kvp_model_load_family(const char *spec, const char *family, kvp_model **out,
                          kvp_error *err)
{
    if (!family || !*family)
        return load(spec, NULL, out, err);
    if (!arch_find_family(family))
        return kvp_fail(err, KVP_EUSAGE,
                        "--family %s: no such rule set (kvplan archs lists them)", family);
    return load(spec, family, out, err);
}

const char *kvp_families(void)
{
    return arch_family_list();
}
