/* load/load.h - where a MODEL argument is looked for: the loader above the
 * readers (config.json in hfconfig.c, GGUF in gguf_model.c) and the network
 * (net/), so the readers never know where their bytes came from.  One file
 * per kind of source: load.c (dispatch, local files, the catalog), hub.c
 * (a Hub repo: config.json or a GGUF by quant or path), url.c (a GGUF at a
 * URL), ollama.c (the Ollama registry), shards.c (remote GGUF headers ->
 * a model).  Library-internal. */
#ifndef KVP_LOAD_H
#define KVP_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "../model_int.h"
#include "../net/http.h"

typedef struct load_ctx {
    const char *spec;       /* the MODEL argument as given */
    const char *family;     /* --family, NULL: none */
    const char *revision;   /* --revision, NULL: main */
    int offline;            /* --offline or HF_HUB_OFFLINE */
    net_session *sess;      /* made on the first request, freed by the dispatcher */
} load_ctx;

/* snprintf into a fixed field (a model's name or source) where a long path
 * is cut rather than refused: these are labels, not paths to open. */
void load_label(char *dst, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The session, made on first use. */
net_session *load_session(load_ctx *c, kvp_error *err);
/* Copies what the session cost into m (fetch_requests, fetch_bytes). */
void load_costs(const load_ctx *c, kvp_model *m);

/* One remote GGUF file: shard k of a model. */
typedef struct load_shard {
    const char *url;        /* NULL when the header must come from the cache */
    char label[512];        /* for messages: "org/name/FILE.gguf", a redacted URL */
    char sha256[65];        /* "" unknown: not cached */
    int64_t size;           /* -1 unknown */
    int allow_http;
} load_shard;

/* Reads each shard's header (kvplan's header cache first) and builds the
 * model from them with the one GGUF parser; *cached says whether every
 * header came from the cache. */
int load_shards(load_ctx *c, const load_shard *sh, size_t n, kvp_model **out, int *cached,
                kvp_error *err);

/* The forms (each sets the model's name and source). */
int load_hub_repo(load_ctx *c, const char *repo, kvp_model **out, kvp_error *err);
int load_hub_gguf(load_ctx *c, const char *repo, const char *tag, const char *path,
                  kvp_model **out, kvp_error *err);
int load_url(load_ctx *c, const char *url, kvp_model **out, kvp_error *err);
int load_ollama(load_ctx *c, const char *name, kvp_model **out, kvp_error *err);

#endif
