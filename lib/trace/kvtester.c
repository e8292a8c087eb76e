/* kvtester.c - kv-cache-tester's conversation traces (callanjfox/kv-cache-tester,
 * recorded from Claude Code): one JSON document per conversation with a
 * block_size, a hash_id_scope and requests[] of t, in, out and hash_ids, one
 * id per block_size block of the prompt.  A file is one conversation, a
 * folder of *.json files replays them side by side, each keeping its own
 * timing from 0.  Each id becomes a chunk of block_size tokens, so the replay
 * can use any block size (docs/trace-formats.md). */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace_int.h"

#define KVT_MAX_BLOCK (1u << 20)

typedef struct kvt_ctx {
    wl_builder b;
    kvp_sim_chunk *c;
    size_t cap;
    uint32_t block;   /* the block size the ids were made at (the last file's) */
    int mixed_block;  /* files disagree on it */
    int global;       /* some file has hash_id_scope "global" */
    int partial;      /* some request names its last, partial block */
} kvt_ctx;

/* The prompt of one request: its ids as chunks, then the tokens past them */
static int kvt_chunks(kvt_ctx *x, json_t *ids, uint64_t in, uint64_t bs, uint64_t ns,
                      uint64_t scope, const char *where, size_t *n_out, kvp_error *err)
{
    size_t n = json_array_size(ids);
    uint64_t full = in / bs, ceil = (in + bs - 1) / bs;
    if (n != full && n != ceil)
        return kvp_fail(err, KVP_EINPUT, "%s: \"hash_ids\" has %zu ids; \"in\" %llu needs %llu "
                        "(one per full %llu-token block)%s", where, n, (unsigned long long)in,
                        (unsigned long long)full, (unsigned long long)bs,
                        ceil != full ? " or one more for the partial last block" : "");
    if (n + 1 > x->cap) {
        void *q = realloc(x->c, (n + 1) * sizeof *x->c);
        if (!q)
            return kvp_fail(err, KVP_EINPUT, "%s: out of memory", where);
        x->c = q, x->cap = n + 1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(ids, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return kvp_fail(err, KVP_EINPUT, "%s: hash_ids[%zu] is not a whole number >= 0",
                            where, i);
        /* n <= in / bs + 1, so i * bs < in <= 2^40: no overflow */
        uint64_t len = (uint64_t)(i + 1) * bs <= in ? bs : in - (uint64_t)i * bs;
        x->c[i] = (kvp_sim_chunk){wl_chunk_id((unsigned)ns, scope,
                                              (uint64_t)json_integer_value(v)), len};
    }
    if (n == ceil && ceil != full)
        x->partial = 1;
    size_t nc = n;
    if ((uint64_t)n * bs < in) /* the tail no id names: content of its own */
        x->c[nc++] = (kvp_sim_chunk){wl_unique(&x->b), in - (uint64_t)n * bs};
    *n_out = nc;
    return 0;
}

static int kvt_request(kvt_ctx *x, json_t *r, uint64_t bs, int global, uint32_t conv,
                       const char *where, kvp_error *err)
{
    if (!json_is_object(r))
        return kvp_fail(err, KVP_EINPUT, "%s: not a JSON object", where);
    json_t *type = json_object_get(r, "type");
    /* kv-cache-tester replays a sub-agent as a user of its own, with its own
     * nested history; reading it as a request would invent a prompt */
    if (json_is_string(type) && !strcmp(json_string_value(type), "subagent"))
        return kvp_fail(err, KVP_EINPUT, "%s: a sub-agent entry (\"type\": \"subagent\"): not "
                        "read yet, only flat conversations", where);
    json_t *t = json_object_get(r, "t"), *ids = json_object_get(r, "hash_ids");
    if (!t || !json_is_number(t) || !isfinite(json_number_value(t)) ||
        json_number_value(t) < 0 || json_number_value(t) > 1e12)
        return kvp_fail(err, KVP_EINPUT, "%s: %s \"t\" (seconds from the conversation's start, "
                        "a number >= 0)", where, t ? "bad" : "no");
    uint64_t in, out;
    if (wl_json_count(r, "in", 1, where, &in, err) ||
        wl_json_count(r, "out", 0, where, &out, err))
        return -1;
    if (!json_is_array(ids))
        return kvp_fail(err, KVP_EINPUT, "%s: %s \"hash_ids\" (an array of block ids)", where,
                        ids ? "bad" : "no");
    size_t nc = 0;
    uint64_t ns = global ? WL_NS_TRACE : WL_NS_CONV, scope = global ? 0 : conv;
    if (kvt_chunks(x, ids, in, bs, ns, scope, where, &nc, err))
        return -1;
    return wl_add(&x->b, x->c, nc, out, json_number_value(t) * 1000.0, conv, err);
}

/* block_size and hash_id_scope: what the ids mean */
static int kvt_header(json_t *doc, const char *path, uint64_t *bs, int *global, kvp_error *err)
{
    json_t *b = json_object_get(doc, "block_size"), *s = json_object_get(doc, "hash_id_scope");
    if (!b || !json_is_integer(b) || json_integer_value(b) < 1 ||
        json_integer_value(b) > KVT_MAX_BLOCK)
        return kvp_fail(err, KVP_EINPUT, "%s: %s \"block_size\" (the tokens per hash id, a whole "
                        "number in [1, 2^20])", path, b ? "bad" : "no");
    *bs = (uint64_t)json_integer_value(b);
    /* older traces have no scope: their ids were per conversation */
    *global = 0;
    if (s && !(json_is_string(s) && (!strcmp(json_string_value(s), "local") ||
                                     (*global = !strcmp(json_string_value(s), "global")))))
        return kvp_fail(err, KVP_EINPUT, "%s: \"hash_id_scope\" must be \"local\" or \"global\"",
                        path);
    return 0;
}

/* One conversation file */
static int kvt_file(kvt_ctx *x, const char *path, uint32_t conv, kvp_error *err)
{
    json_error_t je;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!doc) {
        if (je.line < 1) /* not a syntax error: the file itself */
            return kvp_fail(err, KVP_EINPUT, "%s: %s", path, je.text);
        return kvp_fail(err, KVP_EINPUT, "%s:%d: bad JSON at column %d: %s", path, je.line,
                        je.column, je.text);
    }
    uint64_t bs = 0;
    int global = 0, rc = 0;
    json_t *reqs = json_object_get(doc, "requests");
    if (!json_is_object(doc))
        rc = kvp_fail(err, KVP_EINPUT, "%s: not a kv-cache-tester conversation (a JSON object "
                      "with block_size and requests)", path);
    else if (!(rc = kvt_header(doc, path, &bs, &global, err)) && !json_is_array(reqs))
        rc = kvp_fail(err, KVP_EINPUT, "%s: %s \"requests\" (an array)", path,
                      reqs ? "bad" : "no");
    if (!rc) {
        if (x->block && x->block != bs)
            x->mixed_block = 1;
        x->block = (uint32_t)bs;
        x->global |= global;
    }
    char where[1100];
    for (size_t i = 0; !rc && i < json_array_size(reqs); i++) {
        snprintf(where, sizeof where, "%s: requests[%zu]", path, i);
        rc = kvt_request(x, json_array_get(reqs, i), bs, global, conv, where, err);
    }
    json_decref(doc);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.json names of a folder, sorted (the conversations' order) */
static int kvt_list(const char *dir, char ***names, size_t *n, kvp_error *err)
{
    *names = NULL, *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return kvp_fail(err, KVP_EINPUT, "%s: %s", dir, strerror(errno));
    size_t cap = 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        if (*n >= WL_MAX_CONVS)
            rc = kvp_fail(err, KVP_EINPUT, "%s: more than %llu conversations", dir, WL_MAX_CONVS);
        else if (*n == cap) {
            void *q = realloc(*names, (cap = cap ? 2 * cap : 64) * sizeof **names);
            if (!q)
                rc = kvp_fail(err, KVP_EINPUT, "%s: out of memory", dir);
            else
                *names = q;
        }
        if (!rc && !((*names)[*n] = strdup(e->d_name)))
            rc = kvp_fail(err, KVP_EINPUT, "%s: out of memory", dir);
        else if (!rc)
            (*n)++;
    }
    closedir(d);
    if (!rc && *n == 0)
        rc = kvp_fail(err, KVP_EINPUT, "%s: no *.json conversations in the folder", dir);
    if (!rc)
        qsort(*names, *n, sizeof **names, by_name);
    return rc;
}

static int kvt_dir(kvt_ctx *x, const char *dir, uint32_t *convs, kvp_error *err)
{
    char **names, path[4096];
    size_t n;
    int rc = kvt_list(dir, &names, &n, err);
    for (size_t i = 0; !rc && i < n; i++) {
        int len = snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (len < 0 || (size_t)len >= sizeof path)
            rc = kvp_fail(err, KVP_EINPUT, "%s/%s: path too long", dir, names[i]);
        else
            rc = kvt_file(x, path, (uint32_t)(i + 1), err);
    }
    for (size_t i = 0; i < n && names; i++)
        free(names[i]);
    free(names);
    *convs = (uint32_t)n;
    return rc;
}

int wl_read_kvtester(const char *path, uint32_t bs, kvp_workload *w, kvp_error *err)
{
    kvt_ctx x = {.c = NULL};
    wl_init(&x.b, w, path, "kv-cache-tester", bs);
    struct stat st;
    uint32_t convs = 1;
    int rc;
    if (stat(path, &st) != 0)
        rc = kvp_fail(err, KVP_EINPUT, "%s: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        rc = kvt_dir(&x, path, &convs, err);
    else
        rc = kvt_file(&x, path, 1, err);
    free(x.c);
    if (!rc) {
        char blk[48];
        snprintf(blk, sizeof blk, x.mixed_block ? "each file's block_size" : "%u-token block",
                 x.block);
        snprintf(w->note, sizeof w->note, "%u conversation%s; hash_ids per %s%s, scoped %s; "
                 "arrivals at each request's t, every conversation starting at 0",
                 convs, convs == 1 ? "" : "s", blk, x.partial ? " (a last partial block named)" : "",
                 x.global ? "across conversations" : "per conversation");
    }
    /* conversations interleave by time; equal times keep file order */
    return wl_finish(&x.b, 1, rc, err);
}
