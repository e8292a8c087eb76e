/* load/ollama.c - ollama:NAME[:TAG] and hf.co/ORG/REPO[:QUANT] as a MODEL:
 * the registry's manifest (net/ollama.c), then the model layer's GGUF
 * header by range, or the blob itself when `ollama pull` already put it in
 * the local Ollama store.  The params layer's num_ctx and num_batch travel
 * with the model, for the llama-server flags Ollama would pass
 * (rt_ollama.c).  What a name resolved to is pinned in kvplan's cache, so it
 * answers offline afterwards even when it was never pulled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kvp_int.h"
#include "../net/hdrcache.h"
#include "../net/ollama.h"
#include "load.h"

/* pins/ollama/<host>/<ns>/<model>/<tag>: "<sha256> <size> <num_ctx> <num_batch>". */
static int pin_key(const ollama_name *n, char *key, size_t len)
{
    int w = snprintf(key, len, "ollama/%s/%s/%s/%s", n->host, n->ns, n->model, n->tag);
    return w < 0 || (size_t)w >= len ? -1 : 0;
}

static void finish(const ollama_name *n, uint64_t num_ctx, uint64_t num_batch, kvp_model *m)
{
    m->from_ollama = 1;
    m->ollama_num_ctx = num_ctx;
    m->ollama_num_batch = num_batch;
    load_label(m->ollama_name, sizeof m->ollama_name, "%s", n->display);
    load_label(m->name, sizeof m->name, "ollama:%s", n->display);
}

/* Offline and not in the local store: what an earlier run pinned. */
static int from_pin(load_ctx *c, const ollama_name *n, kvp_model **out, kvp_error *err)
{
    char key[1200], text[256];
    load_shard sh = {.url = NULL, .size = -1};
    unsigned long long size, num_ctx, num_batch;
    if (pin_key(n, key, sizeof key) || hdrcache_pin_get(key, text, sizeof text) ||
        sscanf(text, "%64s %llu %llu %llu", sh.sha256, &size, &num_ctx, &num_batch) != 4)
        return -1;
    sh.size = (int64_t)size;
    load_label(sh.label, sizeof sh.label, "ollama:%s", n->display);
    int cached;
    if (load_shards(c, &sh, 1, out, &cached, err))
        return -1;
    finish(n, num_ctx, num_batch, *out);
    load_label((*out)->source, sizeof (*out)->source, "Ollama registry (offline): %s, model "
               "layer sha256:%.12s; GGUF header %llu bytes from kvplan's header cache",
               n->display, sh.sha256, (unsigned long long)(*out)->header_bytes);
    return 0;
}

/* A safetensors model (the MLX runner's): its config.json layer. */
static int from_config(load_ctx *c, const ollama_model *om, kvp_model **out, kvp_error *err)
{
    char label[800];
    load_label(label, sizeof label, "ollama:%s (config.json layer)", om->name.display);
    if (hf_model_from_text(om->config_json, om->config_json_len, label, c->family, out, err))
        return -1;
    load_label((*out)->name, sizeof (*out)->name, "ollama:%s", om->name.display);
    load_label((*out)->source, sizeof (*out)->source, "Ollama registry: %s %s, its config.json "
               "layer (a safetensors model: Ollama runs it in its MLX runner, not llama-server, "
               "so no Ollama defaults apply)", om->base, om->name.display);
    return 0;
}

static int from_layer(load_ctx *c, const ollama_model *om, kvp_model **out, kvp_error *err)
{
    int local = om->local_blob[0] != '\0', cached = 0;
    if (local) {
        if (kvp_model_from_gguf(om->local_blob, out, err))
            return -1;
    } else {
        load_shard sh = {.url = om->model_url[0] ? om->model_url : NULL,
                         .size = (int64_t)om->model_size, .allow_http = om->allow_http};
        snprintf(sh.sha256, sizeof sh.sha256, "%s", om->model_sha256);
        load_label(sh.label, sizeof sh.label, "ollama:%s", om->name.display);
        if (load_shards(c, &sh, 1, out, &cached, err))
            return -1;
    }
    const ollama_params *p = &om->params;
    finish(&om->name, p->has_num_ctx ? p->num_ctx : 0, p->has_num_batch ? p->num_batch : 0,
           *out);
    char tail[4200];
    if (local)
        load_label(tail, sizeof tail, "the local Ollama store: %s", om->local_blob);
    else
        load_label(tail, sizeof tail, "GGUF header %llu bytes %s",
                   (unsigned long long)(*out)->header_bytes,
                   cached ? "from kvplan's header cache" : "by HTTP range requests");
    load_label((*out)->source, sizeof (*out)->source, "Ollama registry%s: %s %s (model layer "
               "sha256:%.12s%s%s%s%s); %s", om->offline ? " (offline)" : "",
               om->offline ? "" : om->base, om->name.display, om->model_sha256,
               om->family[0] ? ", " : "", om->family, om->file_type[0] ? " " : "", om->file_type,
               tail);
    char key[1200], text[256];
    if (pin_key(&om->name, key, sizeof key) == 0 && om->model_sha256[0]) {
        snprintf(text, sizeof text, "%s %llu %llu %llu\n", om->model_sha256,
                 (unsigned long long)om->model_size, (unsigned long long)(*out)->ollama_num_ctx,
                 (unsigned long long)(*out)->ollama_num_batch);
        hdrcache_pin_put(key, text);
    }
    return 0;
}

int load_ollama(load_ctx *c, const char *name, kvp_model **out, kvp_error *err)
{
    ollama_name n;
    if (ollama_parse_name(name, &n, err))
        return -1;
    if (c->revision)
        return kvp_fail(err, KVP_EUSAGE, "ollama:%s: --revision applies to a Hub repo; an "
                        "Ollama name takes a :TAG", n.display);
    net_session *sess = NULL;
    if (!c->offline && !(sess = load_session(c, err)))
        return -1;
    ollama_model om;
    kvp_error ferr = {0};
    if (ollama_fetch(sess, &n, c->offline, &om, &ferr)) {
        if (c->offline && from_pin(c, &n, out, err) == 0)
            return 0;
        *err = ferr;
        return -1;
    }
    int rc = om.config_json && !om.manifest.has_model ? from_config(c, &om, out, err)
                                                      : from_layer(c, &om, out, err);
    ollama_model_free(&om);
    return rc;
}
