/* load/load.c - a MODEL argument to a model: which form it is, and the
 * local ones (a file, a directory, the catalog).  The order is the
 * documented precedence: an existing path always wins, so a local file is
 * never shadowed by a name that also means something remote. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../arch.h"
#include "../kvp_int.h"
#include "load.h"

#define MAX_CONFIG_BYTES (64u << 20) /* real configs are a few KB */

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

int kvp_config_file(const char *path, const char *family, kvp_model **out, kvp_error *err)
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

int kvp_catalog_load(const kvp_catalog_entry *e, const char *family, kvp_model **out,
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

void load_label(char *dst, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, n, fmt, ap);
    va_end(ap);
}

net_session *load_session(load_ctx *c, kvp_error *err)
{
    if (!c->sess)
        c->sess = net_session_new(err);
    return c->sess;
}

void load_costs(const load_ctx *c, kvp_model *m)
{
    net_session_counts(c->sess, &m->fetch_requests, &m->fetch_bytes, &m->fetch_connections);
}

static int local_path(load_ctx *c, const struct stat *st, kvp_model **out, kvp_error *err)
{
    const char *spec = c->spec;
    if (S_ISDIR(st->st_mode)) {
        char p[4096];
        struct stat cst;
        snprintf(p, sizeof p, "%s/config.json", spec);
        if (stat(p, &cst) != 0)
            return kvp_fail(err, KVP_EINPUT, "%s: directory has no config.json", spec);
        return kvp_config_file(p, c->family, out, err);
    }
    if (is_gguf(spec) && c->family)
        return kvp_fail(err, KVP_EUSAGE, "%s: --family applies to a config.json; a GGUF file "
                        "names its llama.cpp architecture itself", spec);
    if (is_gguf(spec))
        return kvp_model_from_gguf(spec, out, err);
    return kvp_config_file(spec, c->family, out, err);
}

static int starts(const char *s, const char *prefix)
{
    return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

static int ends(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/* ORG/NAME[:QUANT] or ORG/NAME/PATH.gguf: a Hub repo. */
static int hub_form(load_ctx *c, kvp_model **out, kvp_error *err)
{
    const char *spec = c->spec, *slash = strchr(spec, '/');
    char repo[256];
    const char *rest = strchr(slash + 1, '/'), *colon = strchr(slash + 1, ':');
    size_t rlen = rest ? (size_t)(rest - spec) : colon ? (size_t)(colon - spec) : strlen(spec);
    if (rlen >= sizeof repo)
        return kvp_fail(err, KVP_EUSAGE, "%s: not a Hub repo id (org/name)", spec);
    memcpy(repo, spec, rlen);
    repo[rlen] = 0;
    if (rest && colon && colon > rest)
        colon = NULL; /* a ':' inside the path is part of it */
    if (c->family && (rest || colon))
        return kvp_fail(err, KVP_EUSAGE, "%s: --family applies to a config.json; a GGUF names "
                        "its llama.cpp architecture itself", spec);
    if (rest)
        return load_hub_gguf(c, repo, NULL, rest + 1, out, err);
    if (colon) /* "ORG/NAME:" is llama.cpp's default pick too */
        return load_hub_gguf(c, repo, colon[1] ? colon + 1 : NULL, NULL, out, err);
    return load_hub_repo(c, repo, out, err);
}

static int dispatch(load_ctx *c, kvp_model **out, kvp_error *err)
{
    const char *spec = c->spec;
    struct stat st;
    if (stat(spec, &st) == 0)
        return local_path(c, &st, out, err);
    if (starts(spec, "ollama:") || starts(spec, "hf.co/") || starts(spec, "huggingface.co/")) {
        if (c->family)
            return kvp_fail(err, KVP_EUSAGE, "%s: --family applies to a config.json; an Ollama "
                            "model is a GGUF that names its architecture", spec);
        return load_ollama(c, starts(spec, "ollama:") ? spec + 7 : spec, out, err);
    }
    if (starts(spec, "https://") || starts(spec, "http://"))
        return load_url(c, spec, out, err);
    const kvp_catalog_entry *e = kvp_catalog_find(spec);
    if (e && !strchr(spec, '/'))
        return kvp_catalog_load(e, c->family, out, err);
    /* a path-like name that does not exist is a missing file, not a repo */
    const char *slash = strchr(spec, '/');
    int two_parts = slash && !strchr(slash + 1, '/');
    if (spec[0] == '/' || spec[0] == '.' || !slash || slash == spec ||
        (two_parts && (ends(spec, ".json") || ends(spec, ".gguf"))) ||
        (!two_parts && !ends(spec, ".gguf")))
        return kvp_fail(err, KVP_EINPUT,
                        slash || ends(spec, ".json") || ends(spec, ".gguf")
                            ? "%s: no such file"
                            : "%s: no such file or catalog model (`kvplan models` lists the "
                              "catalog; a Hugging Face model is ORG/NAME)", spec);
    return hub_form(c, out, err);
}

int kvp_model_load_opts(const char *spec, const kvp_load_opts *o, kvp_model **out,
                        kvp_error *err)
{
    kvp_load_opts none = {0};
    if (!o)
        o = &none;
    if (!spec || !*spec)
        return kvp_fail(err, KVP_EUSAGE, "no model given");
    if (o->family && *o->family && !arch_find_family(o->family))
        return kvp_fail(err, KVP_EUSAGE,
                        "--family %s: no such rule set (kvplan archs lists them)", o->family);
    const char *off = getenv("HF_HUB_OFFLINE");
    load_ctx c = {spec, o->family && *o->family ? o->family : NULL,
                  o->revision && *o->revision ? o->revision : NULL,
                  o->offline || (off && (!strcmp(off, "1") || !strcasecmp(off, "true") ||
                                         !strcasecmp(off, "yes") || !strcasecmp(off, "on"))),
                  NULL};
    int rc = dispatch(&c, out, err);
    if (rc == 0 && c.sess)
        load_costs(&c, *out);
    net_session_free(c.sess);
    return rc;
}

int kvp_model_load(const char *spec, kvp_model **out, kvp_error *err)
{
    return kvp_model_load_opts(spec, NULL, out, err);
}

int kvp_model_load_family(const char *spec, const char *family, kvp_model **out,
                          kvp_error *err)
{
    kvp_load_opts o = {.family = family};
    return kvp_model_load_opts(spec, &o, out, err);
}

int kvp_model_from_config_file(const char *path, kvp_model **out, kvp_error *err)
{
    return kvp_config_file(path, NULL, out, err);
}
