/* net/ollama.h - what kvplan needs from an Ollama model name: the manifest
 * (from the registry, or from the local Ollama store when offline), the
 * params layer that can change num_ctx, and where the GGUF model blob is, so
 * that the caller can range-read its header (reference/remote-models.md
 * section 4).  Library-internal; every request goes through net/http.h. */
#ifndef KVP_NET_OLLAMA_H
#define KVP_NET_OLLAMA_H

#include <stddef.h>
#include <stdint.h>

#include "kvplan.h"
#include "http.h"

/* The user agent sent when KVPLAN_OLLAMA_USER_AGENT is unset: the registry
 * answers 412 to agents it does not take for a new enough Ollama. */
#define OLLAMA_UA_VERSION "0.33.0"
#define OLLAMA_UA_GO "go1.24.0"

/* Caps on what is read: far above real answers (a safetensors model's
 * manifest lists one layer per tensor), low enough to bound memory. */
#define OLLAMA_MANIFEST_MAX (16u << 20)
#define OLLAMA_PARAMS_MAX (1u << 20)
#define OLLAMA_CONFIG_MAX (1u << 20)
#define OLLAMA_CONFIG_JSON_MAX (8u << 20)
/* A layer size above this is a hostile or broken manifest (1 PiB). */
#define OLLAMA_LAYER_SIZE_MAX (1ull << 50)

typedef struct ollama_name {
    char host[256];     /* "registry.ollama.ai" (default), "hf.co", "localhost:5000" ... */
    char ns[128];       /* "library" (default), a user, or the HF org */
    char model[256];
    char tag[128];      /* "latest" (default) */
    char display[640];  /* as Ollama shows it: "qwen3:8b", "user/m:tag", "hf.co/org/repo:Q4_K_M" */
} ollama_name;

/* Ollama's grammar [host/][namespace/]model[:tag] (types/model/name.go); s
 * has no "ollama:" prefix.  Every part becomes part of URLs and local paths,
 * so each is checked: a letter, digit or '_' first, then those and '-', '.'
 * (not in a namespace), ':' only in a host as ":port"; no "..", no empty
 * part; model, namespace and tag at most 80 bytes, the host 253.  No scheme
 * and no "@digest".  -1 (KVP_EUSAGE) with one line otherwise. */
int ollama_parse_name(const char *s, ollama_name *n, kvp_error *err);

typedef struct ollama_layer {
    char media_type[128];
    char digest[72];    /* "sha256:<64 lower-case hex>", validated */
    uint64_t size;      /* <= OLLAMA_LAYER_SIZE_MAX */
    char name[128];     /* "" when absent (or too long to be one kvplan looks for) */
} ollama_layer;

typedef struct ollama_manifest {
    int has_model; ollama_layer model;             /* application/vnd.ollama.image.model */
    int has_params; ollama_layer params;           /* application/vnd.ollama.image.params */
    int has_config_json; ollama_layer config_json; /* application/vnd.ollama.image.json named
                                                    * config.json (safetensors/MLX models) */
    int n_tensor_layers;                           /* application/vnd.ollama.image.tensor */
    int has_config; ollama_layer config;           /* the manifest's config blob */
    int n_layers;
    char layer_kinds[256]; /* the distinct layer types, short ("model, template, params"),
                            * for messages that say what a manifest holds */
} ollama_manifest;

/* A Docker v2 / OCI image manifest: schemaVersion 2, every digest valid,
 * every size an integer in [0, OLLAMA_LAYER_SIZE_MAX].  Of several layers of
 * one type the last counts, as in Ollama's GetModel.  label names the input
 * in messages.  -1 (KVP_EINPUT) with one line otherwise. */
int ollama_parse_manifest(const char *text, size_t n, const char *label, ollama_manifest *m,
                          kvp_error *err);
/* 1 when d is "sha256:<64 lower-case hex>", the only digest a layer may hold. */
int ollama_valid_digest(const char *d);

typedef struct ollama_params {
    int has_num_ctx; uint64_t num_ctx;       /* 0: automatic, as Ollama reads it */
    int has_num_batch; uint64_t num_batch;
    int has_num_gpu; int64_t num_gpu;        /* -1: decided by Ollama */
} ollama_params;

/* The params layer is a JSON object of options; the other keys are ignored
 * and a null is "not set" (as Ollama's Options.FromMap).  A known key of
 * another type than a number is an error; a fractional number is truncated
 * like Ollama does; num_ctx and num_batch must be in [0, KVP_MAX_TOKENS]. */
int ollama_parse_params(const char *text, size_t n, const char *label, ollama_params *p,
                        kvp_error *err);

/* The config blob (types/model/config.go ConfigV2), the fields kvplan shows
 * or acts on; strings that do not fit or hold control characters are left
 * "".  remote_host set means a cloud model. */
typedef struct ollama_config {
    char model_format[32];
    char family[64], file_type[64], model_type[64];
    char remote_host[256];
    int is_remote;
} ollama_config;
int ollama_parse_config(const char *text, size_t n, const char *label, ollama_config *c,
                        kvp_error *err);

typedef struct ollama_model {
    ollama_name name;
    ollama_manifest manifest;
    ollama_params params;           /* zeroes when the manifest has no params layer */
    char base[512];                 /* the registry base URL used, no trailing '/' */
    char model_url[1024];           /* {base}/v2/{ns}/{model}/blobs/{digest} of the model layer:
                                     * a GET with Range there is redirected (307/302) to a
                                     * CDN; the caller range-reads it.  "" without a model layer */
    char model_sha256[65];          /* the digest's hex: the header cache key */
    uint64_t model_size;
    char local_blob[4096];          /* the model blob in the local Ollama store when present
                                     * (a regular file of the layer's size), else "" */
    char family[64], file_type[64], model_type[64]; /* from the config blob when fetched
                                                     * (model_family, file_type, model_type);
                                                     * "" otherwise */
    char *config_json; size_t config_json_len; /* a safetensors model's config.json text
                                                * (malloc'd, NUL-terminated), else NULL */
    int allow_http;
    int offline;                    /* the answer came from the local store */
} ollama_model;
void ollama_model_free(ollama_model *m);

/* The registry base for a name: host registry.ollama.ai -> $KVPLAN_OLLAMA_REGISTRY,
 * else https://registry.ollama.ai; host hf.co or huggingface.co -> $HF_ENDPOINT,
 * else https://huggingface.co (the Hub runs the registry for GGUF repos); any
 * other host -> https://host.  http:// only when the user set that variable
 * to an http URL (*allow_http = 1 then).  -1 (KVP_EUSAGE) for a variable that
 * is not an http(s) URL, or that holds credentials (user:password@). */
int ollama_base_url(const ollama_name *n, char *buf, size_t len, int *allow_http,
                    kvp_error *err);

/* The local Ollama store: $OLLAMA_MODELS (quotes and blanks trimmed, as
 * Ollama's envconfig does), else $HOME/.ollama/models.  -1 when neither is
 * known or the path does not fit. */
int ollama_store_dir(char *buf, size_t len);

/* The User-Agent sent to the registry: $KVPLAN_OLLAMA_USER_AGENT, else
 * "ollama/<OLLAMA_UA_VERSION> (<arch> <os>) Go/<OLLAMA_UA_GO>".  -1 (KVP_EUSAGE)
 * when the variable holds control characters or is too long. */
int ollama_user_agent(char *buf, size_t len, kvp_error *err);

/* Online (offline == 0): GET the manifest (Accept: Docker manifest v2, the
 * user agent above), then the params blob (cap OLLAMA_PARAMS_MAX), the config
 * blob (best effort) and a safetensors model's config.json layer, each
 * following the registry's redirect to its blob store and checked against
 * its digest; local_blob is filled when the local store has the model blob.
 * Offline: no request at all; the same from the local store's
 * manifests/{host}/{ns}/{model}/{tag} and blobs/sha256-{hex} (local_blob ""
 * when the model blob itself is missing: the caller may still have its
 * header cached by model_sha256).  sess NULL: a session for this call.
 * -1: err holds one line naming "ollama:<display>" (KVP_EINPUT; KVP_EUSAGE
 * for bad settings): an unknown model or tag, a 412 (says
 * KVPLAN_OLLAMA_USER_AGENT), a private model, a rate limit, an unreachable
 * registry (says --offline), a broken manifest, a cloud model, a model with
 * neither a GGUF nor a config.json layer, or not pulled locally (offline).
 * out is initialised either way: free it with ollama_model_free. */
int ollama_fetch(net_session *sess, const ollama_name *n, int offline, ollama_model *out,
                 kvp_error *err);

#endif
