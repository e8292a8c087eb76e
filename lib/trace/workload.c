/* workload.c - the request model every trace reader fills: prompts as
 * chunks of content, hashed here into vLLM-style chained block hashes at the
 * replay's block size; the format table, detection and kvp_workload_load. */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace_int.h"

static uint64_t fold(uint64_t h, uint64_t v)
{
    return kvp_mix64(h ^ kvp_mix64(v + 0x9e3779b97f4a7c15ull));
}

uint64_t wl_chunk_id(unsigned ns, uint64_t scope, uint64_t local)
{
    return fold(fold(ns, scope), local) & 0x7fffffffffffffffull;
}

void wl_init(wl_builder *b, kvp_workload *w, const char *name, const char *format,
             uint32_t block_size)
{
    memset(b, 0, sizeof *b);
    memset(w, 0, sizeof *w);
    b->w = w;
    snprintf(w->name, sizeof w->name, "%s", name);
    snprintf(w->format, sizeof w->format, "%s", format);
    w->block_size = block_size;
}

uint64_t wl_unique(wl_builder *b)
{
    return wl_chunk_id(WL_NS_UNIQUE, 0, b->next_unique++);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : first;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q, *cap = n;
    return 0;
}

/* h_i = H(h_{i-1}, the tokens of block i), the tokens named by their chunks */
static void hash_blocks(const kvp_sim_chunk *c, size_t nc, uint32_t bs, uint64_t *out,
                        uint64_t n_blocks)
{
    uint64_t h = 0x6b7670 /* the chain's seed */, ci = 0, off = 0;
    for (uint64_t b = 0; b < n_blocks; b++) {
        uint64_t left = bs;
        h = fold(h, 0x424c4f434bull); /* block boundary */
        while (left) {
            while (off == c[ci].tokens && ci + 1 < nc)
                ci++, off = 0;
            uint64_t take = c[ci].tokens - off < left ? c[ci].tokens - off : left;
            h = fold(fold(fold(h, c[ci].id), off), take);
            off += take;
            left -= take;
        }
        out[b] = h;
    }
}

int wl_add(wl_builder *b, const kvp_sim_chunk *c, size_t n, uint64_t output,
           double timestamp_ms, uint32_t conv, kvp_error *err)
{
    kvp_workload *w = b->w;
    uint64_t prompt = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].tokens > KVP_MAX_TOKENS - prompt)
            return kvp_fail(err, KVP_EINPUT, "%s: a prompt of more than 2^40 tokens", w->name);
        prompt += c[i].tokens;
    }
    if (prompt == 0)
        return kvp_fail(err, KVP_EINPUT, "%s: a request has no prompt tokens", w->name);
    if (output > KVP_MAX_TOKENS)
        return kvp_fail(err, KVP_EINPUT, "%s: an output of more than 2^40 tokens", w->name);
    uint64_t hashed = w->hash_output ? prompt + output : prompt;
    uint64_t nh = hashed / w->block_size;
    if (w->n_req >= WL_MAX_REQUESTS || nh > WL_MAX_HASHES - w->n_hashes ||
        n + 1 > WL_MAX_CHUNKS - w->n_chunks)
        return kvp_fail(err, KVP_EINPUT, "%s: more than %llu requests, %llu blocks or %llu "
                        "chunks", w->name, WL_MAX_REQUESTS, WL_MAX_HASHES, WL_MAX_CHUNKS);
    /* the output chunk, when hashed, sits after the prompt's (n + 1) */
    if (grow((void **)&w->req, &b->cap_req, w->n_req + 1, sizeof *w->req, 256) ||
        grow((void **)&w->hashes, &b->cap_h, w->n_hashes + nh, sizeof *w->hashes, 4096) ||
        grow((void **)&w->chunks, &b->cap_c, w->n_chunks + n + 1, sizeof *w->chunks, 4096))
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", w->name);
    kvp_sim_request *r = &w->req[w->n_req++];
    memset(r, 0, sizeof *r);
    r->timestamp = timestamp_ms;
    r->prompt_tokens = prompt;
    r->output_tokens = output;
    r->conv = conv;
    r->chunk_off = w->n_chunks;
    /* a chunk of no tokens (a generator's empty suffix) names nothing */
    kvp_sim_chunk *all = w->chunks + w->n_chunks;
    size_t nall = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i].tokens)
            all[nall++] = c[i];
    n = nall;
    if (w->hash_output && output)
        all[nall++] = (kvp_sim_chunk){wl_unique(b), output};
    r->n_chunks = n;
    r->hash_off = w->n_hashes;
    r->n_hashes = (size_t)nh;
    if (nh) /* no full block: no hashes, and maybe no array yet */
        hash_blocks(all, nall, w->block_size, w->hashes + r->hash_off, nh);
    w->n_hashes += (size_t)nh;
    w->n_chunks += n; /* the output chunk is not part of the prompt */
    if (conv > w->n_convs)
        w->n_convs = conv;
    return 0;
}

static int by_time(const void *a, const void *b)
{
    const kvp_sim_request *x = a, *y = b;
    if (x->timestamp != y->timestamp)
        return x->timestamp < y->timestamp ? -1 : 1;
    /* stable: the offsets grow in file order */
    return x->chunk_off < y->chunk_off ? -1 : x->chunk_off > y->chunk_off;
}

int wl_finish(wl_builder *b, int sort, int rc, kvp_error *err)
{
    kvp_workload *w = b->w;
    if (!rc && w->n_req == 0)
        rc = kvp_fail(err, KVP_EINPUT, "%s: no requests in the trace", w->name);
    if (rc) {
        kvp_workload_free(w);
        return rc;
    }
    if (sort && w->n_req > 1)
        qsort(w->req, w->n_req, sizeof *w->req, by_time);
    return 0;
}

void kvp_workload_free(kvp_workload *w)
{
    free(w->req);
    free(w->hashes);
    free(w->chunks);
    memset(w, 0, sizeof *w);
}

/* ---- what the readers share ---- */

int wl_each_line(const char *path, const char *what, wl_line_fn fn, void *ctx,
                 kvp_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return what ? kvp_fail(err, KVP_EINPUT, "%s: %s (%s)", path, strerror(errno), what)
                    : kvp_fail(err, KVP_EINPUT, "%s: %s", path, strerror(errno));
    char *line = NULL, where[1100];
    size_t n = 0, lineno = 0;
    ssize_t len;
    int rc = 0;
    while (!rc && (len = getline(&line, &n, f)) >= 0) {
        lineno++;
        if (strspn(line, " \t\r\n") == (size_t)len)
            continue; /* blank line */
        snprintf(where, sizeof where, "%s:%zu", path, lineno);
        rc = fn(ctx, line, (size_t)len, where, err);
    }
    free(line);
    if (!rc && ferror(f))
        rc = kvp_fail(err, KVP_EINPUT, "%s: read error: %s", path, strerror(errno));
    fclose(f);
    return rc;
}

typedef struct json_lines {
    wl_json_fn fn;
    void *ctx;
} json_lines;

static int json_line(void *ctx, char *line, size_t len, const char *where, kvp_error *err)
{
    json_lines *j = ctx;
    json_error_t je;
    if (len >= 3 && !memcmp(line, "\xef\xbb\xbf", 3)) /* a UTF-8 byte-order mark */
        line += 3, len -= 3;
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    if (!o)
        return kvp_fail(err, KVP_EINPUT, "%s: bad JSON at column %d: %s", where, je.column,
                        je.text);
    int rc = json_is_object(o) ? j->fn(j->ctx, o, where, err)
                               : kvp_fail(err, KVP_EINPUT, "%s: not a JSON object", where);
    json_decref(o);
    return rc;
}

int wl_each_json_line(const char *path, const char *what, wl_json_fn fn, void *ctx,
                      kvp_error *err)
{
    json_lines j = {fn, ctx};
    return wl_each_line(path, what, json_line, &j, err);
}

int wl_json_count(void *json_object, const char *key, uint64_t min, const char *where,
                  uint64_t *out, kvp_error *err)
{
    json_t *v = json_object_get(json_object, key);
    if (!v)
        return kvp_fail(err, KVP_EINPUT, "%s: no \"%s\"", where, key);
    if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)min ||
        (uint64_t)json_integer_value(v) > KVP_MAX_TOKENS)
        return kvp_fail(err, KVP_EINPUT, "%s: \"%s\" must be a whole number in [%llu, 2^40]",
                        where, key, (unsigned long long)min);
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* ---- the formats ---- */

static const struct format {
    const char *name;
    uint32_t native_block;     /* the block its ids are for; 0: content chunks */
    int (*read)(const char *, uint32_t, kvp_workload *, kvp_error *);
} formats[] = {
    {"mooncake", 512, wl_read_mooncake},
    {"kv-cache-tester", 64, wl_read_kvtester},
    {"ragpulse", 0, wl_read_ragpulse},
    {"azure", 0, wl_read_azure},
    {"kvplan", 0, wl_read_tokens},
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

const char *const kvp_trace_formats[] = {"mooncake", "kv-cache-tester", "ragpulse", "azure",
                                         "kvplan", NULL};

static const struct format *format_named(const char *name)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (!strcmp(formats[i].name, name))
            return &formats[i];
    return NULL;
}

uint32_t kvp_trace_native_block(const char *format)
{
    const struct format *f = format ? format_named(format) : NULL;
    return f ? f->native_block : 0;
}

/* A folder: RAGPulse's (0_trace.jsonl inside) or kv-cache-tester's (*.json) */
static const char *detect_dir(const char *path, kvp_error *err)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/0_trace.jsonl", path);
    if (stat(p, &st) == 0)
        return "ragpulse";
    DIR *d = opendir(path);
    if (!d) {
        kvp_fail(err, KVP_EINPUT, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct dirent *e;
    int json = 0;
    while (!json && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        json = n > 5 && !strcmp(e->d_name + n - 5, ".json");
    }
    closedir(d);
    if (json)
        return "kv-cache-tester";
    kvp_fail(err, KVP_EINPUT, "%s: a folder with neither 0_trace.jsonl (RAGPulse) nor *.json "
             "conversations (kv-cache-tester)", path);
    return NULL;
}

/* A file, from its first bytes: a CSV header, a JSON document, a JSONL line */
const char *kvp_trace_detect(const char *path, kvp_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        kvp_fail(err, KVP_EINPUT, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode))
        return detect_dir(path, err);
    FILE *f = fopen(path, "r");
    if (!f) {
        kvp_fail(err, KVP_EINPUT, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char head[4096];
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = 0;
    const char *p = head + strspn(head, " \t\r\n\xef\xbb\xbf");
    const char *eol = strchr(p, '\n');
    size_t first = eol ? (size_t)(eol - p) : strlen(p), rest = strlen(p);
    if (!*p) {
        kvp_fail(err, KVP_EINPUT, "%s: no requests in the trace (the file is empty)", path);
        return NULL;
    }
#define HAS(s) (memmem(p, first, (s), strlen(s)) != NULL)
    /* kv-cache-tester: one document, maybe over many lines */
    int doc = *p == '{' && (memmem(p, rest, "\"hash_id_scope\"", 15) ||
                            (memmem(p, rest, "\"requests\"", 10) && memmem(p, rest, "\"block_size\"", 12)));
    if (!strncmp(p, "TIMESTAMP,", 10))
        return "azure";
    if (doc && !HAS("\"input_length\"") && !HAS("\"tokens\"") && !HAS("\"chunks\"") &&
        !HAS("\"hashes\""))
        return "kv-cache-tester";
    if (*p == '{' && HAS("\"session_id\"") && HAS("\"passages_ids\""))
        return "ragpulse";
    if (*p == '{' && HAS("\"input_length\"") && HAS("\"hash_ids\""))
        return "mooncake";
    if (*p == '{' && (HAS("\"tokens\"") || HAS("\"chunks\"") || HAS("\"hashes\"")))
        return "kvplan";
#undef HAS
    kvp_fail(err, KVP_EINPUT, "%s: not a trace kvplan knows (mooncake, kv-cache-tester, "
             "ragpulse, azure, kvplan; --format NAME chooses one)", path);
    return NULL;
}

int kvp_workload_load(const char *path, const char *format, uint32_t block_size,
                      kvp_workload *out, kvp_error *err)
{
    memset(out, 0, sizeof *out);
    if (!format && !(format = kvp_trace_detect(path, err)))
        return -1;
    const struct format *f = format_named(format);
    if (!f)
        return kvp_fail(err, KVP_EUSAGE, "--format %s: unknown (mooncake, kv-cache-tester, "
                        "ragpulse, azure, kvplan)", format);
    uint32_t bs = block_size ? block_size : f->native_block ? f->native_block : 16;
    if (bs > (1u << 20))
        return kvp_fail(err, KVP_EUSAGE, "a block of %u tokens: at most 2^20", bs);
    return f->read(path, bs, out, err);
}
