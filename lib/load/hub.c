/* load/hub.c - a Hugging Face Hub repo as a MODEL: ORG/NAME (its
 * config.json: the local Hugging Face cache, else the Hub into that cache,
 * else, offline or unreachable, the catalog) and ORG/NAME:QUANT or
 * ORG/NAME/PATH.gguf (a GGUF's header by range requests; llama.cpp's -hf
 * rules pick the file).  What a name resolved to is pinned in kvplan's
 * cache, so the same command answers offline afterwards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kvp_int.h"
#include "../net/hdrcache.h"
#include "../net/hub.h"
#include "../net/hub_files.h"
#include "load.h"

#define MAX_SHARDS 64

static int settings(load_ctx *c, hub_settings *s, kvp_error *err)
{
    if (hub_settings_from_env(s, err))
        return -1;
    s->offline |= c->offline;
    return 0;
}

/* The commit a snapshot path names (".../snapshots/<commit>/config.json"). */
static void commit_of(const char *path, char *out, size_t n)
{
    const char *p = strstr(path, "/snapshots/");
    snprintf(out, n, "%.40s", p ? p + 11 : "?");
}

static int from_cache(load_ctx *c, const char *repo, const char *path, kvp_model **out,
                      kvp_error *err)
{
    if (kvp_config_file(path, c->family, out, err))
        return -1;
    char commit[48];
    commit_of(path, commit, sizeof commit);
    load_label((*out)->name, sizeof (*out)->name, "%s", repo);
    load_label((*out)->source, sizeof (*out)->source, "Hugging Face cache: %s (commit %s)%s%s%s",
             path, commit, c->family ? " [rules by --family " : "", c->family ? c->family : "",
             c->family ? "]" : "");
    return 0;
}

static int from_catalog(load_ctx *c, const kvp_catalog_entry *e, const char *why,
                        kvp_model **out, kvp_error *err)
{
    if (kvp_catalog_load(e, c->family, out, err))
        return -1;
    size_t len = strlen((*out)->source);
    load_label((*out)->source + len, sizeof (*out)->source - len, " [%s]", why);
    return 0;
}

int load_hub_repo(load_ctx *c, const char *repo, kvp_model **out, kvp_error *err)
{
    char path[4096];
    if (kvp_hfcache_find_rev(repo, c->revision, path, sizeof path) == 0)
        return from_cache(c, repo, path, out, err);
    hub_settings s;
    if (settings(c, &s, err))
        return -1;
    const kvp_catalog_entry *e = kvp_catalog_find(repo);
    if (!hub_valid_repo_id(repo))
        return kvp_fail(err, KVP_EUSAGE, "%s: no such file, and not a Hub repo id (org/name)",
                        repo);
    if (s.offline && e && !c->revision)
        return from_catalog(c, e, "offline: not in the Hugging Face cache", out, err);
    if (s.offline)
        return kvp_fail(err, KVP_EINPUT, "%s: not in the Hugging Face cache (%s)%s, and --offline "
                        "(or HF_HUB_OFFLINE) forbids fetching it", repo, s.cache,
                        c->revision ? " at that revision" : "");
    net_session *sess = load_session(c, err);
    if (!sess)
        return -1;
    hub_failure why;
    kvp_error herr = {0};
    if (hub_fetch_file_why(&s, sess, repo, c->revision, "config.json", 16u << 20, path,
                           sizeof path, &why, &herr) == 0) {
        if (kvp_config_file(path, c->family, out, err))
            return -1;
        char commit[48];
        commit_of(path, commit, sizeof commit);
        load_label((*out)->name, sizeof (*out)->name, "%s", repo);
        load_label((*out)->source, sizeof (*out)->source,
                 "Hugging Face Hub: %s/%s at %s (commit %s), now in the Hugging Face cache: %s%s%s%s",
                 s.endpoint, repo, c->revision ? c->revision : "main", commit, path,
                 c->family ? " [rules by --family " : "", c->family ? c->family : "",
                 c->family ? "]" : "");
        return 0;
    }
    if (why == HUB_FAIL_UNREACHABLE && e && !c->revision)
        return from_catalog(c, e, "the Hub was unreachable; its config.json is in the catalog",
                            out, err);
    if (why == HUB_FAIL_NO_FILE && !c->family) /* a GGUF-only repo: llama.cpp's default pick */
        return load_hub_gguf(c, repo, NULL, NULL, out, err);
    *err = herr;
    return -1;
}

/* ---- GGUF repos ----------------------------------------------------------------- */

/* pins/hf/<org>--<name>/<revision>/<what>: what the name resolved to. */
static int pin_key(const char *repo, const char *rev, const char *tag, const char *path,
                   char *key, size_t n)
{
    const char *slash = strchr(repo, '/');
    int w = snprintf(key, n, "hf/%.*s--%s/%s/%s%s", (int)(slash - repo), repo, slash + 1,
                     rev ? rev : "main", path ? "path/" : "quant/",
                     path ? path : tag && *tag ? tag : "default");
    return w < 0 || (size_t)w >= n || !hub_valid_path(key) ? -1 : 0;
}

/* A pin's text: "commit <40 hex>\n" then "<sha256> <size> <path>\n" per shard. */
static int read_pin(const char *key, const char *repo, load_shard *sh, size_t *n,
                    char *commit, size_t ncommit)
{
    char text[16384];
    if (hdrcache_pin_get(key, text, sizeof text))
        return -1;
    char *save = NULL;
    *n = 0;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char sha[65], path[400];
        long long size;
        if (!strncmp(line, "commit ", 7)) {
            snprintf(commit, ncommit, "%.40s", line + 7);
        } else if (*n < MAX_SHARDS && sscanf(line, "%64s %lld %399s", sha, &size, path) == 3) {
            sh[*n] = (load_shard){.url = NULL, .size = size};
            snprintf(sh[*n].sha256, sizeof sh[*n].sha256, "%s", sha);
            load_label(sh[*n].label, sizeof sh[*n].label, "%s/%s", repo, path);
            ++*n;
        }
    }
    return *n ? 0 : -1;
}

static void write_pin(const char *key, const char *commit, const hub_gguf_pick *p)
{
    char text[16384];
    size_t len = (size_t)snprintf(text, sizeof text, "commit %s\n", commit);
    for (size_t i = 0; i < p->n && len < sizeof text; i++) {
        if (!p->shards[i]->sha256[0])
            return; /* no sha256, nothing cached to point at */
        len += (size_t)snprintf(text + len, sizeof text - len, "%s %lld %s\n",
                                p->shards[i]->sha256, (long long)p->shards[i]->size,
                                p->shards[i]->path);
    }
    if (len < sizeof text)
        hdrcache_pin_put(key, text);
}

static void name_and_source(load_ctx *c, const char *repo, const char *tag, const char *path,
                            const char *commit, const char *why, size_t n, int cached,
                            const char *first, kvp_model *m)
{
    if (path)
        load_label(m->name, sizeof m->name, "%s/%s", repo, path);
    else if (tag && *tag)
        load_label(m->name, sizeof m->name, "%s:%s", repo, tag);
    else
        load_label(m->name, sizeof m->name, "%s", repo);
    load_label(m->source, sizeof m->source, "Hugging Face Hub: %s %s%s at %s (commit %.12s)%s%s; "
             "GGUF header %llu bytes %s", repo, first, n > 1 ? " and its shards" : "",
             c->revision ? c->revision : "main", commit, why && *why ? ", " : "",
             why ? why : "", (unsigned long long)m->header_bytes,
             cached ? "from kvplan's header cache" : "by HTTP range requests");
}

static int gguf_offline(load_ctx *c, const char *repo, const char *tag, const char *path,
                        const char *key, load_shard *sh, kvp_model **out, kvp_error *err)
{
    size_t n;
    char commit[48] = "?";
    if (read_pin(key, repo, sh, &n, commit, sizeof commit))
        return kvp_fail(err, KVP_EINPUT, "%s%s%s: not in kvplan's cache, and --offline (or "
                        "HF_HUB_OFFLINE) forbids fetching it", repo, path ? "/" : tag ? ":" : "",
                        path ? path : tag ? tag : "");
    int cached;
    if (load_shards(c, sh, n, out, &cached, err))
        return -1;
    /* the label is org/name/path: the source line names the path */
    const char *first = sh[0].label + strlen(repo) + 1;
    name_and_source(c, repo, tag, path, commit, "offline", n, 1, first, *out);
    return 0;
}

/* Where each shard's bytes are: the CDN URL hub_resolve returns (kept in
 * urls[i]), or none when kvplan's header cache has the file. */
static int locate(load_ctx *c, const hub_settings *s, const char *repo,
                  const hub_file_list *list, const hub_gguf_pick *pick, load_shard *sh,
                  char (*urls)[4096], kvp_error *err)
{
    for (size_t i = 0; i < pick->n; i++) {
        const hub_file *f = pick->shards[i];
        sh[i] = (load_shard){.url = NULL, .size = f->size, .allow_http = s->allow_http};
        load_label(sh[i].label, sizeof sh[i].label, "%s/%s", repo, f->path);
        snprintf(sh[i].sha256, sizeof sh[i].sha256, "%s", f->sha256);
        uint8_t *d;
        size_t dn;
        uint64_t fs;
        if (f->sha256[0] && hdrcache_get(f->sha256, &d, &dn, &fs) == 1) {
            free(d); /* cached: no need to ask the Hub where the bytes are */
            continue;
        }
        hub_resolved r;
        if (hub_resolve(s, c->sess, repo, list->commit, f->path, &r, err))
            return -1;
        if (f->sha256[0] && r.sha256[0] && strcmp(f->sha256, r.sha256))
            return kvp_fail(err, KVP_EINPUT, "%s/%s changed on the Hub while kvplan read it; "
                            "run again", repo, f->path);
        snprintf(urls[i], sizeof urls[i], "%s", r.url);
        sh[i].url = urls[i]; /* the CDN's URL came from the Hub: http only if the Hub was */
        if (!sh[i].sha256[0])
            snprintf(sh[i].sha256, sizeof sh[i].sha256, "%s", r.sha256);
        if (sh[i].size < 0)
            sh[i].size = r.size;
    }
    return 0;
}

int load_hub_gguf(load_ctx *c, const char *repo, const char *tag, const char *path,
                  kvp_model **out, kvp_error *err)
{
    char key[1200];
    hub_settings s;
    if (settings(c, &s, err))
        return -1;
    if (!hub_valid_repo_id(repo) || (path && !hub_valid_path(path)) ||
        pin_key(repo, c->revision, tag, path, key, sizeof key))
        return kvp_fail(err, KVP_EUSAGE, "%s: not a Hub repo id with a quant or a file path "
                        "(ORG/NAME:QUANT, ORG/NAME/PATH.gguf)", c->spec);
    if (s.offline) {
        load_shard *sh = calloc(MAX_SHARDS, sizeof *sh);
        int rc = sh ? gguf_offline(c, repo, tag, path, key, sh, out, err)
                    : kvp_fail(err, KVP_EINPUT, "%s: out of memory", repo);
        free(sh);
        return rc;
    }
    net_session *sess = load_session(c, err);
    hub_file_list list;
    hub_gguf_pick pick;
    if (!sess || hub_list_files(&s, sess, repo, c->revision, &list, err))
        return -1;
    int rc = path ? hub_pick_path(&list, repo, path, &pick, err)
                  : hub_pick_gguf(&list, repo, tag, &pick, err);
    load_shard *sh = calloc(MAX_SHARDS, sizeof *sh);
    char (*urls)[4096] = calloc(MAX_SHARDS, sizeof *urls);
    if (rc == 0 && (!sh || !urls))
        rc = kvp_fail(err, KVP_EINPUT, "%s: out of memory", repo);
    if (rc == 0 && pick.n > MAX_SHARDS)
        rc = kvp_fail(err, KVP_EINPUT, "%s: %zu shards (kvplan reads at most %d)", repo, pick.n,
                      MAX_SHARDS);
    if (rc == 0)
        rc = locate(c, &s, repo, &list, &pick, sh, urls, err);
    int cached = 0;
    if (rc == 0)
        rc = load_shards(c, sh, pick.n, out, &cached, err);
    if (rc == 0) {
        write_pin(key, list.commit, &pick);
        name_and_source(c, repo, tag, path, list.commit, pick.why, pick.n, cached,
                        pick.shards[0]->path, *out);
    }
    hub_file_list_free(&list);
    free(sh);
    free(urls);
    return rc;
}
