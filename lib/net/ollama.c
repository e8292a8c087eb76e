/* net/ollama.c - an Ollama model name to its manifest, params and model blob
 * location (contract in ollama.h; facts in reference/remote-models.md 4).
 *
 * The registry is a Docker distribution registry carrying Ollama's media
 * types.  Only small blobs are downloaded here (params, the config, a
 * safetensors model's config.json), each checked against its sha256 digest:
 * a content-addressed blob's name is the only guarantee there is that a
 * redirect landed on the right bytes.  The GGUF itself is left to the
 * caller's range reads.  Offline, the same comes from the store that `ollama
 * pull` fills, and not one request is made. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kvp_int.h"
#include "ollama.h"
#include "util.h"

#define DEFAULT_HOST "registry.ollama.ai"
#define DEFAULT_NS "library"
#define DEFAULT_TAG "latest"
#define DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MEDIA_PREFIX "application/vnd.ollama.image."
#define MEDIA_MODEL MEDIA_PREFIX "model"
#define MEDIA_PARAMS MEDIA_PREFIX "params"
#define MEDIA_JSON MEDIA_PREFIX "json"
#define MEDIA_TENSOR MEDIA_PREFIX "tensor"
#define NAME_GRAMMAR "[host/][namespace/]model[:tag]"

#if defined(__x86_64__)
#define UA_ARCH "amd64"
#elif defined(__aarch64__)
#define UA_ARCH "arm64"
#else
#define UA_ARCH "unknown"
#endif
#if defined(__APPLE__)
#define UA_OS "darwin"
#elif defined(__linux__)
#define UA_OS "linux"
#else
#define UA_OS "unknown"
#endif
#define DEFAULT_UA "ollama/" OLLAMA_UA_VERSION " (" UA_ARCH " " UA_OS ") Go/" OLLAMA_UA_GO

/* s as a message may show it: printable ASCII, at most n-1 bytes (cut with
 * "..."), so that a hostile string cannot break the one-line rule. */
static void clean(const char *s, char *out, size_t n)
{
    size_t i = 0, len = strlen(s);
    for (; i + 1 < n && s[i]; i++)
        out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    out[i] = 0;
    if (i < len && n > 4)
        memcpy(out + n - 4, "...", 4);
}

static int has_ctl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

/* ---- names -------------------------------------------------------------------- */

enum part_kind { PART_HOST, PART_NS, PART_MODEL, PART_TAG };
static const char *const part_names[] = {"host", "namespace", "model", "tag"};

static int word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* ":port" at the end of a host: 1 to 65535, digits only. */
static int valid_port(const char *p)
{
    unsigned long v = 0;
    size_t i = 0;
    for (; p[i]; i++) {
        if (p[i] < '0' || p[i] > '9' || i >= 5)
            return 0;
        v = v * 10 + (unsigned long)(p[i] - '0');
    }
    return i > 0 && v >= 1 && v <= 65535;
}

/* Why s is not a valid part of kind k (into why), or 0 when it is.  The
 * rules are Ollama's isValidPart, plus "no ..", since parts become path
 * components, and a host's ':' only before a port. */
static int bad_part(enum part_kind k, const char *s, char *why, size_t n)
{
    const char *kind = part_names[k];
    size_t len = strlen(s), max = k == PART_HOST ? 253 : 80;
    if (len == 0)
        return nu_fmt(why, n, "the %s is empty", kind), 1;
    if (len > max)
        return nu_fmt(why, n, "the %s is longer than %zu bytes", kind, max), 1;
    if (!word_char(s[0]))
        return nu_fmt(why, n, "the %s must start with a letter, a digit or '_'", kind), 1;
    if (strstr(s, ".."))
        return nu_fmt(why, n, "'..' is not allowed in the %s", kind), 1;
    for (size_t i = 1; i < len; i++) {
        char c = s[i];
        if (word_char(c) || c == '-' || (c == '.' && k != PART_NS))
            continue;
        if (c == ':' && k == PART_HOST) {
            if (!valid_port(s + i + 1))
                return nu_fmt(why, n, "the host's port must be a number from 1 to 65535"), 1;
            return 0;
        }
        char shown[8];
        if (c >= 0x21 && c < 0x7f)
            nu_fmt(shown, sizeof shown, "'%c'", c);
        else
            nu_fmt(shown, sizeof shown, "0x%02x", (unsigned char)c);
        return nu_fmt(why, n, "%s is not allowed in the %s", shown, kind), 1;
    }
    return 0;
}

/* Ollama's DisplayShortest: the default host and namespace are left out. */
static void display_name(ollama_name *n)
{
    if (strcasecmp(n->host, DEFAULT_HOST) != 0)
        nu_fmt(n->display, sizeof n->display, "%s/%s/%s:%s", n->host, n->ns, n->model, n->tag);
    else if (strcasecmp(n->ns, DEFAULT_NS) != 0)
        nu_fmt(n->display, sizeof n->display, "%s/%s:%s", n->ns, n->model, n->tag);
    else
        nu_fmt(n->display, sizeof n->display, "%s:%s", n->model, n->tag);
}

static int name_fail(const char *s, const char *why, kvp_error *err)
{
    char shown[128];
    clean(s, shown, sizeof shown);
    return kvp_fail(err, KVP_EUSAGE, "ollama:%s: not a valid Ollama model name: %s (expected "
                    NAME_GRAMMAR ")", shown, why);
}

int ollama_parse_name(const char *s, ollama_name *n, kvp_error *err)
{
    memset(n, 0, sizeof *n);
    if (!s)
        s = "";
    char buf[600], why[160];
    if (!*s)
        return name_fail(s, "it is empty", err);
    if (nu_fmt(buf, sizeof buf, "%s", s))
        return name_fail(s, "it is too long", err);
    if (strstr(buf, "://"))
        return name_fail(s, "give the registry host without a scheme", err);
    /* ParseNameBare: '/' cannot be in a tag, so a ':' after the last '/'
     * starts the tag; a ':' before it belongs to the host's port */
    char *part[4] = {NULL, NULL, NULL, NULL};
    char *colon = strrchr(buf, ':'), *slash = strrchr(buf, '/');
    if (colon && (!slash || colon > slash)) {
        *colon = 0;
        part[PART_TAG] = colon + 1;
    }
    if ((slash = strrchr(buf, '/'))) {
        *slash = 0;
        part[PART_MODEL] = slash + 1;
        if ((slash = strrchr(buf, '/'))) {
            *slash = 0;
            part[PART_NS] = slash + 1;
            part[PART_HOST] = buf; /* a further '/' in it is refused below */
        } else {
            part[PART_NS] = buf;
        }
    } else {
        part[PART_MODEL] = buf;
    }
    for (int k = PART_HOST; k <= PART_TAG; k++)
        if (part[k] && bad_part((enum part_kind)k, part[k], why, sizeof why))
            return name_fail(s, why, err);
    nu_fmt(n->host, sizeof n->host, "%s", part[PART_HOST] ? part[PART_HOST] : DEFAULT_HOST);
    nu_fmt(n->ns, sizeof n->ns, "%s", part[PART_NS] ? part[PART_NS] : DEFAULT_NS);
    nu_fmt(n->model, sizeof n->model, "%s", part[PART_MODEL]);
    nu_fmt(n->tag, sizeof n->tag, "%s", part[PART_TAG] ? part[PART_TAG] : DEFAULT_TAG);
    display_name(n);
    return 0;
}

/* ---- sha256 (the small blobs are checked against their digests) ---------------- */

static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t ror(uint32_t x, int k) { return x >> k | x << (32 - k); }

static void sha256_block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ w[i - 15] >> 3;
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ w[i - 2] >> 10;
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, h, sizeof v);
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = v[7] + (ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25)) +
                      ((v[4] & v[5]) ^ (~v[4] & v[6])) + sha_k[i] + w[i];
        uint32_t t2 = (ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22)) +
                      ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        h[i] += v[i];
}

static void sha256_hex(const void *data, size_t n, char out[65])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const uint8_t *p = data;
    size_t left = n;
    for (; left >= 64; p += 64, left -= 64)
        sha256_block(h, p);
    uint8_t tail[128] = {0};
    memcpy(tail, p, left);
    tail[left] = 0x80;
    size_t end = left < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)n * 8;
    for (int i = 0; i < 8; i++)
        tail[end - 1 - i] = (uint8_t)(bits >> (8 * i));
    sha256_block(h, tail);
    if (end == 128)
        sha256_block(h, tail + 64);
    for (int i = 0; i < 8; i++)
        snprintf(out + 8 * i, 9, "%08x", h[i]);
}

/* ---- JSON: manifest, params, config ------------------------------------------------ */

int ollama_valid_digest(const char *d)
{
    return strncmp(d, "sha256:", 7) == 0 && nu_lower_hex(d + 7, 64);
}

static json_t *load_object(const char *text, size_t n, const char *label, const char *what,
                           kvp_error *err)
{
    json_error_t je;
    /* duplicate keys could make kvplan and Ollama read different values */
    json_t *j = json_loadb(text ? text : "", text ? n : 0, JSON_REJECT_DUPLICATES, &je);
    if (!j) {
        char why[160];
        clean(je.text, why, sizeof why);
        kvp_fail(err, KVP_EINPUT, "%s: the %s is not JSON (line %d: %s)", label, what, je.line,
                 why);
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        kvp_fail(err, KVP_EINPUT, "%s: the %s is not a JSON object", label, what);
        return NULL;
    }
    return j;
}

static int parse_layer(json_t *o, const char *label, const char *where, ollama_layer *l,
                       kvp_error *err)
{
    memset(l, 0, sizeof *l);
    if (!json_is_object(o))
        return kvp_fail(err, KVP_EINPUT, "%s: the manifest's %s is not an object", label, where);
    const char *mt = json_string_value(json_object_get(o, "mediaType"));
    const char *dg = json_string_value(json_object_get(o, "digest"));
    json_t *sz = json_object_get(o, "size");
    json_t *nm = json_object_get(o, "name");
    if (!mt || nu_fmt(l->media_type, sizeof l->media_type, "%s", mt) || has_ctl(mt))
        return kvp_fail(err, KVP_EINPUT, "%s: the manifest's %s has no usable mediaType", label,
                        where);
    if (!dg || !ollama_valid_digest(dg)) {
        char shown[96];
        clean(dg ? dg : "(none)", shown, sizeof shown);
        return kvp_fail(err, KVP_EINPUT, "%s: the manifest's %s has a bad digest %s (want "
                        "sha256:<64 lower-case hex>)", label, where, shown);
    }
    nu_fmt(l->digest, sizeof l->digest, "%s", dg);
    if (!json_is_integer(sz) || json_integer_value(sz) < 0 ||
        (uint64_t)json_integer_value(sz) > OLLAMA_LAYER_SIZE_MAX)
        return kvp_fail(err, KVP_EINPUT, "%s: the manifest's %s has a bad size (want an "
                        "integer from 0 to %llu)", label, where,
                        (unsigned long long)OLLAMA_LAYER_SIZE_MAX);
    l->size = (uint64_t)json_integer_value(sz);
    /* a name that does not fit cannot be "config.json": leaving it "" is enough */
    const char *name = json_string_value(nm);
    if (name && !has_ctl(name) && nu_fmt(l->name, sizeof l->name, "%s", name))
        l->name[0] = 0;
    return 0;
}

/* Adds a layer type's short name to the list a message shows, once. */
static void note_kind(ollama_manifest *m, const char *media_type)
{
    char kind[128];
    const char *k = media_type;
    if (!strncmp(k, MEDIA_PREFIX, strlen(MEDIA_PREFIX)))
        k += strlen(MEDIA_PREFIX);
    clean(k, kind, sizeof kind);
    size_t kl = strlen(kind);
    for (const char *p = m->layer_kinds; *p;) {
        size_t l = strcspn(p, ",");
        if (l == kl && !strncmp(p, kind, kl))
            return;
        p += l;
        p += strspn(p, ", ");
    }
    size_t used = strlen(m->layer_kinds);
    nu_fmt(m->layer_kinds + used, sizeof m->layer_kinds - used, "%s%s", used ? ", " : "", kind);
}

int ollama_parse_manifest(const char *text, size_t n, const char *label, ollama_manifest *m,
                          kvp_error *err)
{
    memset(m, 0, sizeof *m);
    json_t *j = load_object(text, n, label, "manifest", err);
    if (!j)
        return -1;
    int rc = -1;
    json_t *sv = json_object_get(j, "schemaVersion");
    const char *mt = json_string_value(json_object_get(j, "mediaType"));
    json_t *cfg = json_object_get(j, "config"), *layers = json_object_get(j, "layers");
    if (!json_is_integer(sv) || json_integer_value(sv) != 2) {
        kvp_fail(err, KVP_EINPUT, "%s: the manifest is not a schemaVersion 2 image manifest",
                 label);
        goto out;
    }
    /* a manifest list or an index names other manifests, not layers */
    if (json_object_get(j, "mediaType") &&
        (!mt || (strcmp(mt, DOCKER_MANIFEST) != 0 && strcmp(mt, OCI_MANIFEST) != 0))) {
        char shown[96];
        clean(mt ? mt : "(not a string)", shown, sizeof shown);
        kvp_fail(err, KVP_EINPUT, "%s: the manifest's mediaType is %s, not an image manifest",
                 label, shown);
        goto out;
    }
    if (cfg) {
        if (parse_layer(cfg, label, "config", &m->config, err))
            goto out;
        m->has_config = 1;
    }
    if (!json_is_array(layers)) {
        kvp_fail(err, KVP_EINPUT, "%s: the manifest has no layers array", label);
        goto out;
    }
    size_t count = json_array_size(layers);
    if (count > INT_MAX) {
        kvp_fail(err, KVP_EINPUT, "%s: the manifest has too many layers", label);
        goto out;
    }
    for (size_t i = 0; i < count; i++) {
        ollama_layer l;
        char where[32];
        nu_fmt(where, sizeof where, "layer %zu", i);
        if (parse_layer(json_array_get(layers, i), label, where, &l, err))
            goto out;
        note_kind(m, l.media_type);
        /* of several layers of one type the last wins, as in Ollama's
         * GetModel; config.json is the first, as in ReadConfigJSON */
        if (!strcmp(l.media_type, MEDIA_MODEL))
            m->model = l, m->has_model = 1;
        else if (!strcmp(l.media_type, MEDIA_PARAMS))
            m->params = l, m->has_params = 1;
        else if (!strcmp(l.media_type, MEDIA_TENSOR))
            m->n_tensor_layers++;
        else if (!strcmp(l.media_type, MEDIA_JSON) && !strcmp(l.name, "config.json") &&
                 !m->has_config_json)
            m->config_json = l, m->has_config_json = 1;
    }
    m->n_layers = (int)count;
    rc = 0;
out:
    json_decref(j);
    return rc;
}

/* One integer option: absent or null leaves *has 0; a number is taken the
 * way Ollama's FromMap takes it (a float is truncated toward zero). */
static int read_option(json_t *o, const char *key, int64_t lo, int64_t hi, const char *label,
                       int *has, int64_t *out, kvp_error *err)
{
    json_t *v = json_object_get(o, key);
    *has = 0;
    if (!v || json_is_null(v))
        return 0;
    int64_t x;
    if (json_is_integer(v)) {
        x = (int64_t)json_integer_value(v);
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!(d > (double)lo - 1 && d < (double)hi + 1))
            return kvp_fail(err, KVP_EINPUT, "%s: params %s = %g is out of range (%lld to %lld)",
                            label, key, d, (long long)lo, (long long)hi);
        x = (int64_t)d;
    } else {
        return kvp_fail(err, KVP_EINPUT, "%s: params %s must be a number, not %s", label, key,
                        json_is_string(v) ? "a string" : json_is_boolean(v) ? "a boolean"
                        : json_is_array(v) ? "an array" : "an object");
    }
    if (x < lo || x > hi)
        return kvp_fail(err, KVP_EINPUT, "%s: params %s = %lld is out of range (%lld to %lld)",
                        label, key, (long long)x, (long long)lo, (long long)hi);
    *has = 1;
    *out = x;
    return 0;
}

int ollama_parse_params(const char *text, size_t n, const char *label, ollama_params *p,
                        kvp_error *err)
{
    memset(p, 0, sizeof *p);
    json_t *j = load_object(text, n, label, "params layer", err);
    if (!j)
        return -1;
    int64_t ctx = 0, batch = 0, gpu = 0;
    int rc = read_option(j, "num_ctx", 0, (int64_t)KVP_MAX_TOKENS, label, &p->has_num_ctx, &ctx,
                         err);
    if (!rc)
        rc = read_option(j, "num_batch", 0, (int64_t)KVP_MAX_TOKENS, label, &p->has_num_batch,
                         &batch, err);
    if (!rc)
        rc = read_option(j, "num_gpu", -1, INT32_MAX, label, &p->has_num_gpu, &gpu, err);
    json_decref(j);
    if (rc) {
        memset(p, 0, sizeof *p);
        return -1;
    }
    p->num_ctx = (uint64_t)ctx;
    p->num_batch = (uint64_t)batch;
    p->num_gpu = gpu;
    return 0;
}

static void take_string(json_t *o, const char *key, char *out, size_t n)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (!s || has_ctl(s) || nu_fmt(out, n, "%s", s))
        out[0] = 0;
}

int ollama_parse_config(const char *text, size_t n, const char *label, ollama_config *c,
                        kvp_error *err)
{
    memset(c, 0, sizeof *c);
    json_t *j = load_object(text, n, label, "config blob", err);
    if (!j)
        return -1;
    take_string(j, "model_format", c->model_format, sizeof c->model_format);
    take_string(j, "model_family", c->family, sizeof c->family);
    take_string(j, "file_type", c->file_type, sizeof c->file_type);
    take_string(j, "model_type", c->model_type, sizeof c->model_type);
    take_string(j, "remote_host", c->remote_host, sizeof c->remote_host);
    const char *rh = json_string_value(json_object_get(j, "remote_host"));
    c->is_remote = rh && *rh;
    json_decref(j);
    return 0;
}

/* ---- settings ------------------------------------------------------------------------ */

/* An endpoint from a variable (else dflt), without trailing '/'; http only
 * when the user asked for it. */
static int endpoint(const char *var, const char *dflt, char *buf, size_t len, int *allow_http,
                    kvp_error *err)
{
    const char *v = getenv(var);
    int from_env = v && *v;
    if (nu_fmt(buf, len, "%s", from_env ? v : dflt))
        return kvp_fail(err, KVP_EUSAGE, "%s is too long", var);
    for (size_t l = strlen(buf); l && buf[l - 1] == '/'; l--)
        buf[l - 1] = 0;
    int http = !strncasecmp(buf, "http://", 7);
    char origin[600];
    /* no user:password@ either: the base is shown in messages */
    if ((!http && strncasecmp(buf, "https://", 8) != 0) || has_ctl(buf) ||
        strpbrk(buf, "?#@ ") || net_origin(buf, origin, sizeof origin))
        return kvp_fail(err, KVP_EUSAGE, "%s: not an http(s) URL without credentials", var);
    *allow_http = http && from_env;
    return 0;
}

int ollama_base_url(const ollama_name *n, char *buf, size_t len, int *allow_http,
                    kvp_error *err)
{
    *allow_http = 0;
    if (!strcasecmp(n->host, DEFAULT_HOST))
        return endpoint("KVPLAN_OLLAMA_REGISTRY", "https://" DEFAULT_HOST, buf, len, allow_http,
                        err);
    if (!strcasecmp(n->host, "hf.co") || !strcasecmp(n->host, "huggingface.co"))
        return endpoint("HF_ENDPOINT", "https://huggingface.co", buf, len, allow_http, err);
    char origin[600];
    if (nu_fmt(buf, len, "https://%s", n->host) || net_origin(buf, origin, sizeof origin))
        return kvp_fail(err, KVP_EUSAGE, "ollama host %s: not usable in a URL", n->host);
    return 0;
}

int ollama_store_dir(char *buf, size_t len)
{
    /* envconfig.Var: blanks, then quotes, trimmed */
    const char *v = getenv("OLLAMA_MODELS");
    if (v) {
        size_t a = strspn(v, " \t\r\n"), b = strlen(v);
        while (b > a && strchr(" \t\r\n", v[b - 1]))
            b--;
        while (a < b && strchr("\"'", v[a]))
            a++;
        while (b > a && strchr("\"'", v[b - 1]))
            b--;
        if (b > a)
            return nu_fmt(buf, len, "%.*s", (int)(b - a), v + a);
    }
    const char *home = getenv("HOME");
    if (!home || !*home)
        return -1;
    return nu_fmt(buf, len, "%s/.ollama/models", home);
}

int ollama_user_agent(char *buf, size_t len, kvp_error *err)
{
    const char *v = getenv("KVPLAN_OLLAMA_USER_AGENT");
    if (v && *v) {
        if (has_ctl(v) || nu_fmt(buf, len, "%s", v))
            return kvp_fail(err, KVP_EUSAGE, "KVPLAN_OLLAMA_USER_AGENT holds a control "
                            "character or is too long");
        return 0;
    }
    if (nu_fmt(buf, len, "%s", DEFAULT_UA))
        return kvp_fail(err, KVP_EUSAGE, "no room for the user agent");
    return 0;
}

/* ---- the fetch -------------------------------------------------------------------------- */

typedef struct ctx {
    net_session *sess;
    ollama_model *m;
    int offline;
    char label[700];     /* "ollama:<display>", what every message starts with */
    char store[4096];    /* the local Ollama store, "" when unknown */
    char ua[512];
    char repo_url[1024]; /* {base}/v2/{ns}/{model} */
} ctx;

/* Prefixes a message that does not name the model yet. */
static int relabel(const ctx *c, const kvp_error *in, kvp_error *err)
{
    char msg[sizeof in->msg];
    nu_fmt(msg, sizeof msg, "%s", in->msg);
    return kvp_fail(err, in->code, "%s: %s", c->label, msg);
}

/* <tag>text</tag> of an XML error body into out; 1 when found. */
static int xml_field(const net_result *r, const char *tag, char *out, size_t n)
{
    char open_[32], close_[32], text[256];
    nu_fmt(open_, sizeof open_, "<%s>", tag);
    nu_fmt(close_, sizeof close_, "</%s>", tag);
    const char *a = strstr((const char *)r->body, open_), *b;
    if (!a || !(b = strstr(a += strlen(open_), close_)))
        return 0;
    nu_fmt(text, sizeof text, "%.*s", (int)(b - a < 255 ? b - a : 255), a);
    clean(text, out, n);
    return 1;
}

/* A registry error's code and message: {"errors":[{"code","message"}]},
 * {"error": "..."}, or a plain-text first line (the 412's body). */
static void registry_error(const net_result *r, char *code, size_t cn, char *msg, size_t mn)
{
    code[0] = msg[0] = 0;
    if (!r->body || !r->body_len)
        return;
    json_t *j = json_loadb((const char *)r->body, r->body_len, 0, NULL);
    if (j) {
        json_t *e = json_array_get(json_object_get(j, "errors"), 0);
        const char *c = json_string_value(json_object_get(e, "code"));
        const char *s = json_string_value(json_object_get(e, "message"));
        if (!s)
            s = json_string_value(json_object_get(j, "error"));
        if (c)
            clean(c, code, cn);
        if (s)
            clean(s, msg, mn);
        json_decref(j);
        return;
    }
    /* an S3-style blob store: <Code>AccessDenied</Code><Message>... */
    int xml = xml_field(r, "Code", code, cn);
    xml += xml_field(r, "Message", msg, mn);
    if (!xml && !strncasecmp(r->h.content_type, "text/plain", 10)) {
        char line[256];
        nu_fmt(line, sizeof line, "%.*s", (int)strcspn((const char *)r->body, "\r\n"),
               (const char *)r->body);
        clean(line, msg, mn);
    }
}

static int fail_status(const ctx *c, const char *what, const net_result *r, kvp_error *err)
{
    char code[64], msg[200];
    const char *base = c->m->base;
    registry_error(r, code, sizeof code, msg, sizeof msg);
    /* the registry's own answer, not its blob store's (a CDN's 403 is an
     * expired signature, not a private model) */
    int registry = r->url && net_same_origin(r->url, base);
    long st = r->status;
    if (st == 404 && (!strcmp(code, "NAME_UNKNOWN") || !strcmp(code, "MANIFEST_UNKNOWN") ||
                      (registry && !strcmp(what, "manifest"))))
        return kvp_fail(err, KVP_EINPUT, "%s: no such model or tag on %s", c->label, base);
    if (st == 412)
        return kvp_fail(err, KVP_EINPUT, "%s: %s answered 412: the model needs a newer Ollama "
                        "than the user agent kvplan sent (\"%s\"); KVPLAN_OLLAMA_USER_AGENT sets "
                        "the agent kvplan sends (unset, it is \"" DEFAULT_UA "\")", c->label,
                        base, c->ua);
    if ((st == 401 || st == 403) && registry)
        return kvp_fail(err, KVP_EINPUT, "%s: %s refused access (HTTP %ld): private models are "
                        "not supported (kvplan does no registry authentication)", c->label, base,
                        st);
    if (st == 429) {
        if (r->h.retry_after >= 0)
            return kvp_fail(err, KVP_EINPUT, "%s: rate limited by %s (HTTP 429); retry in %ld s",
                            c->label, base, r->h.retry_after);
        return kvp_fail(err, KVP_EINPUT, "%s: rate limited by %s (HTTP 429); retry later",
                        c->label, base);
    }
    return kvp_fail(err, KVP_EINPUT, "%s: HTTP %ld from %s for the %s%s%s%s%s", c->label, st,
                    registry ? base : "the registry's blob store", what, code[0] ? ": " : "",
                    code, msg[0] ? ": " : "", msg);
}

static int fail_net(const ctx *c, const net_result *r, const kvp_error *nerr, kvp_error *err)
{
    switch (r->error) {
    case NET_ERESOLVE: case NET_EUNREACHABLE: case NET_ECONNECT: case NET_ETIMEOUT:
        return kvp_fail(err, KVP_EINPUT, "%s: cannot reach %s (%s); pass --offline to use models "
                        "pulled with ollama", c->label, c->m->base, nerr->msg);
    default:
        return kvp_fail(err, nerr->code == KVP_EUSAGE ? KVP_EUSAGE : KVP_EINPUT, "%s: %s",
                        c->label, nerr->msg);
    }
}

/* A whole small document into r (status 200); on -1 r is already freed. */
static int get(const ctx *c, const char *url, const char *what, const char *accept, uint64_t cap,
               net_result *r, kvp_error *err)
{
    net_request q = {0};
    q.url = url;
    q.max_bytes = cap;
    q.allow_http = c->m->allow_http;
    q.redirects = NET_REDIR_FOLLOW; /* blobs: 307/302 to the blob store */
    q.timeout = 60;
    q.accept = accept;
    q.user_agent = c->ua;
    kvp_error nerr = {0};
    int rc = net_fetch(c->sess, &q, r, &nerr);
    if (rc && r->error == NET_ETOOBIG)
        kvp_fail(err, KVP_EINPUT, "%s: the %s is larger than the %llu bytes kvplan reads",
                 c->label, what, (unsigned long long)cap);
    else if (rc)
        fail_net(c, r, &nerr, err);
    else if (r->status != 200)
        rc = fail_status(c, what, r, err);
    if (rc)
        net_result_free(r);
    return rc;
}

/* A local file of at most cap bytes, NUL-terminated; -1 with errno set
 * (EFBIG: over the cap, EINVAL: not a regular file). */
static int read_file(const char *path, uint64_t cap, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int e = 0;
    char *buf = NULL;
    size_t got = 0;
    if (fstat(fd, &st))
        e = errno;
    else if (!S_ISREG(st.st_mode))
        e = EINVAL;
    else if (st.st_size < 0 || (uint64_t)st.st_size > cap)
        e = EFBIG;
    else if (!(buf = malloc((size_t)st.st_size + 1)))
        e = ENOMEM;
    while (!e && got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            e = r < 0 ? errno : EIO; /* shrank while read */
        else
            got += (size_t)r;
    }
    close(fd);
    if (e) {
        free(buf);
        errno = e;
        return -1;
    }
    buf[got] = 0;
    *out = buf;
    *len = got;
    return 0;
}

static int blob_path(const ctx *c, const char *digest, char *buf, size_t n)
{
    return c->store[0] ? nu_fmt(buf, n, "%s/blobs/sha256-%s", c->store, digest + 7) : -1;
}

/* A small blob's bytes (malloc'd, NUL-terminated), from the registry or the
 * local store, checked against the layer's size and digest. */
static int blob_bytes(const ctx *c, const ollama_layer *l, const char *what, uint64_t cap,
                      char **out, size_t *len, kvp_error *err)
{
    *out = NULL;
    *len = 0;
    if (l->size > cap)
        return kvp_fail(err, KVP_EINPUT, "%s: the %s is %llu bytes, more than the %llu kvplan "
                        "reads", c->label, what, (unsigned long long)l->size,
                        (unsigned long long)cap);
    if (c->offline) {
        char p[4400];
        if (blob_path(c, l->digest, p, sizeof p) || read_file(p, cap, out, len))
            return kvp_fail(err, KVP_EINPUT, "%s: the %s (sha256-%.12s...) is missing from the "
                            "local Ollama store %s; pull the model again with ollama", c->label,
                            what, l->digest + 7, c->store);
    } else {
        char url[1200];
        net_result r;
        if (nu_fmt(url, sizeof url, "%s/blobs/%s", c->repo_url, l->digest))
            return kvp_fail(err, KVP_EUSAGE, "%s: the blob URL is too long", c->label);
        if (get(c, url, what, NULL, cap, &r, err))
            return -1;
        *out = r.body ? (char *)r.body : strdup("");
        *len = r.body ? r.body_len : 0;
        r.body = NULL;
        net_result_free(&r);
        if (!*out)
            return kvp_fail(err, KVP_EINPUT, "%s: out of memory", c->label);
    }
    char hex[65];
    sha256_hex(*out, *len, hex);
    if (*len != l->size || strcmp(hex, l->digest + 7) != 0) {
        size_t got = *len;
        free(*out);
        *out = NULL;
        *len = 0;
        return kvp_fail(err, KVP_EINPUT, "%s: the %s does not match its digest sha256:%.12s... "
                        "(%zu bytes, the manifest says %llu)", c->label, what, l->digest + 7, got,
                        (unsigned long long)l->size);
    }
    return 0;
}

static int manifest_text(const ctx *c, char **out, size_t *len, kvp_error *err)
{
    const ollama_name *n = &c->m->name;
    if (c->offline) {
        char p[4600];
        if (!c->store[0] || nu_fmt(p, sizeof p, "%s/manifests/%s/%s/%s/%s", c->store, n->host,
                                   n->ns, n->model, n->tag))
            return kvp_fail(err, KVP_EINPUT, "%s: offline, and the local Ollama store is "
                            "unknown (set OLLAMA_MODELS or HOME)", c->label);
        if (read_file(p, OLLAMA_MANIFEST_MAX, out, len) == 0)
            return 0;
        if (errno == ENOENT || errno == ENOTDIR)
            return kvp_fail(err, KVP_EINPUT, "%s: not pulled locally (no manifest in %s/"
                            "manifests) and not fetchable offline: run `ollama pull %s`, or drop "
                            "--offline", c->label, c->store, n->display);
        return kvp_fail(err, KVP_EINPUT, "%s: cannot read the local manifest %s: %s", c->label, p,
                        errno == EFBIG ? "larger than kvplan reads" : strerror(errno));
    }
    char url[1200];
    net_result r;
    if (nu_fmt(url, sizeof url, "%s/manifests/%s", c->repo_url, n->tag))
        return kvp_fail(err, KVP_EUSAGE, "%s: the manifest URL is too long", c->label);
    if (get(c, url, "manifest", DOCKER_MANIFEST, OLLAMA_MANIFEST_MAX, &r, err))
        return -1;
    *out = r.body ? (char *)r.body : strdup("");
    *len = r.body ? r.body_len : 0;
    r.body = NULL;
    net_result_free(&r);
    return *out ? 0 : kvp_fail(err, KVP_EINPUT, "%s: out of memory", c->label);
}

/* The config blob is only informative (and says whether a model is a cloud
 * model), so a failure to read it is not an error. */
static void read_config(const ctx *c, ollama_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    const ollama_manifest *mf = &c->m->manifest;
    char *text;
    size_t len;
    kvp_error ignored;
    if (!mf->has_config ||
        blob_bytes(c, &mf->config, "config blob", OLLAMA_CONFIG_MAX, &text, &len, &ignored))
        return;
    ollama_parse_config(text, len, c->label, cfg, &ignored);
    free(text);
}

/* Something local to plan from: a GGUF, or a safetensors model's config.json. */
static int check_plannable(const ctx *c, const ollama_config *cfg, kvp_error *err)
{
    const ollama_manifest *mf = &c->m->manifest;
    if (mf->has_model || mf->has_config_json)
        return 0;
    if (cfg->is_remote && !mf->n_tensor_layers)
        return kvp_fail(err, KVP_EINPUT, "%s is an Ollama cloud model: it runs on ollama.com, "
                        "there is no local KV cache to plan", c->label);
    if (mf->n_tensor_layers)
        return kvp_fail(err, KVP_EINPUT, "%s: %d tensor layers but no config.json layer to plan "
                        "from", c->label, mf->n_tensor_layers);
    return kvp_fail(err, KVP_EINPUT, "%s: neither a GGUF model layer nor a config.json layer to "
                    "plan from; the manifest has %d layer%s%s%s%s", c->label, mf->n_layers,
                    mf->n_layers == 1 ? "" : "s", mf->n_layers ? " (" : "", mf->layer_kinds,
                    mf->n_layers ? ")" : "");
}

static int read_params(const ctx *c, kvp_error *err)
{
    char *text;
    size_t len;
    if (blob_bytes(c, &c->m->manifest.params, "params layer", OLLAMA_PARAMS_MAX, &text, &len,
                   err))
        return -1;
    int rc = ollama_parse_params(text, len, c->label, &c->m->params, err);
    free(text);
    return rc;
}

static int read_config_json(const ctx *c, kvp_error *err)
{
    ollama_model *m = c->m;
    return blob_bytes(c, &m->manifest.config_json, "config.json layer", OLLAMA_CONFIG_JSON_MAX,
                      &m->config_json, &m->config_json_len, err);
}

static int locate_model(const ctx *c, kvp_error *err)
{
    ollama_model *m = c->m;
    const ollama_layer *l = &m->manifest.model;
    if (nu_fmt(m->model_url, sizeof m->model_url, "%s/blobs/%s", c->repo_url, l->digest))
        return kvp_fail(err, KVP_EUSAGE, "%s: the model blob URL is too long", c->label);
    nu_fmt(m->model_sha256, sizeof m->model_sha256, "%s", l->digest + 7);
    m->model_size = l->size;
    /* a partial pull would be sha256-<hex>-partial; a wrong size is not the blob */
    char p[4400];
    struct stat st;
    if (!blob_path(c, l->digest, p, sizeof p) && !stat(p, &st) && S_ISREG(st.st_mode) &&
        (uint64_t)st.st_size == l->size)
        nu_fmt(m->local_blob, sizeof m->local_blob, "%s", p);
    return 0;
}

int ollama_fetch(net_session *sess, const ollama_name *n, int offline, ollama_model *out,
                 kvp_error *err)
{
    memset(out, 0, sizeof *out);
    out->name = *n;
    out->offline = offline != 0;
    ctx c = {.sess = sess, .m = out, .offline = offline != 0};
    nu_fmt(c.label, sizeof c.label, "ollama:%s", n->display);
    kvp_error e = {0};
    if (ollama_base_url(n, out->base, sizeof out->base, &out->allow_http, &e))
        return relabel(&c, &e, err);
    if (ollama_store_dir(c.store, sizeof c.store))
        c.store[0] = 0;
    if (nu_fmt(c.repo_url, sizeof c.repo_url, "%s/v2/%s/%s", out->base, n->ns, n->model))
        return kvp_fail(err, KVP_EUSAGE, "%s: the registry URL is too long", c.label);
    if (!offline && ollama_user_agent(c.ua, sizeof c.ua, &e))
        return relabel(&c, &e, err);

    char *text;
    size_t len;
    if (manifest_text(&c, &text, &len, err))
        return -1;
    int rc = ollama_parse_manifest(text, len, c.label, &out->manifest, err);
    free(text);
    if (rc)
        return -1;
    ollama_config cfg;
    read_config(&c, &cfg);
    nu_fmt(out->family, sizeof out->family, "%s", cfg.family);
    nu_fmt(out->file_type, sizeof out->file_type, "%s", cfg.file_type);
    nu_fmt(out->model_type, sizeof out->model_type, "%s", cfg.model_type);
    if (check_plannable(&c, &cfg, err))
        return -1;
    if (out->manifest.has_params && read_params(&c, err))
        return -1;
    if (out->manifest.has_model)
        return locate_model(&c, err);
    return read_config_json(&c, err);
}

void ollama_model_free(ollama_model *m)
{
    if (!m)
        return;
    free(m->config_json);
    m->config_json = NULL;
    m->config_json_len = 0;
}
