/* tokens.c - kvplan's own JSONL workload (docs/trace-formats.md), the
 * one format users can export their servers' logs into and the one kvplan
 * writes: a request per line with its arrival, conversation, output length
 * and its prompt as token ids, as content chunks, or as prefix block hashes.
 * write.c puts any workload's chunks back out in it. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace_int.h"

#define MAX_BLOCK (1u << 20)       /* a "hashes" line's block_size, as --block-size */

/* ---- conversations: any JSON string or integer, numbered in order ---- */

typedef struct conv_key {
    char *key;                 /* 'i' or 's', then the value's bytes */
    size_t len;
    json_int_t num;            /* the integer, when the key is one */
} conv_key;

typedef struct conv_map {
    uint32_t *slot;            /* open addressing: 1-based index into keys, 0 empty */
    size_t cap;                /* a power of two */
    conv_key *keys;
    size_t n, cap_keys;
    int all_small_ints;        /* every key an integer in [1, WL_MAX_CONVS] */
} conv_map;

static uint64_t bytes_hash(const char *p, size_t n)
{
    uint64_t h = 0x636f6e76ull ^ n;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = 0;
        memcpy(&v, p + i, n - i < 8 ? n - i : 8);
        h = kvp_mix64(h ^ kvp_mix64(v + 0x9e3779b97f4a7c15ull));
    }
    return h;
}

static int conv_grow(conv_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    uint32_t *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < m->n; i++) {
        size_t j = bytes_hash(m->keys[i].key, m->keys[i].len) & (cap - 1);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = (uint32_t)(i + 1);
    }
    free(m->slot);
    m->slot = s, m->cap = cap;
    return 0;
}

/* The 1-based number of a conversation key, in order of first appearance. */
static int conv_number(conv_map *m, json_t *v, const char *where, uint32_t *out,
                       kvp_error *err)
{
    char buf[32];
    const char *p;
    size_t n;
    if (json_is_integer(v)) {
        n = (size_t)snprintf(buf, sizeof buf, "i%lld", (long long)json_integer_value(v));
        p = buf;
    } else if (json_is_string(v)) {
        n = json_string_length(v) + 1;
        p = NULL;
    } else {
        return kvp_fail(err, KVP_EINPUT, "%s: \"conversation\" must be a string or an integer",
                        where);
    }
    char *key = malloc(n ? n : 1);
    if (!key)
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", where);
    if (p)
        memcpy(key, p, n);
    else
        key[0] = 's', memcpy(key + 1, json_string_value(v), n - 1);
    if ((m->n + 1) * 2 > m->cap && conv_grow(m))
        return free(key), kvp_fail(err, KVP_EINPUT, "%s: out of memory", where);
    size_t j = bytes_hash(key, n) & (m->cap - 1);
    for (; m->slot[j]; j = (j + 1) & (m->cap - 1)) {
        conv_key *k = &m->keys[m->slot[j] - 1];
        if (k->len == n && !memcmp(k->key, key, n)) {
            free(key);
            *out = m->slot[j];
            return 0;
        }
    }
    if (m->n >= WL_MAX_CONVS)
        return free(key), kvp_fail(err, KVP_EINPUT, "%s: more than %llu conversations", where,
                                   WL_MAX_CONVS);
    if (m->n == m->cap_keys) {
        size_t cap = m->cap_keys ? m->cap_keys * 2 : 256;
        conv_key *q = realloc(m->keys, cap * sizeof *q);
        if (!q)
            return free(key), kvp_fail(err, KVP_EINPUT, "%s: out of memory", where);
        m->keys = q, m->cap_keys = cap;
    }
    json_int_t num = json_is_integer(v) ? json_integer_value(v) : 0;
    if (!json_is_integer(v) || num < 1 || num > (json_int_t)WL_MAX_CONVS)
        m->all_small_ints = 0;
    m->keys[m->n] = (conv_key){key, n, num};
    m->slot[j] = (uint32_t)++m->n;
    *out = (uint32_t)m->n;
    return 0;
}

static void conv_free(conv_map *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->keys[i].key);
    free(m->keys);
    free(m->slot);
}

/* ---- the reader ---- */

typedef struct tk_ctx {
    wl_builder b;
    conv_map convs;
    kvp_sim_chunk *c;
    size_t cap;
    uint64_t *ids;             /* a "tokens" line's ids */
    size_t cap_ids;
    int cached;                /* "output_cached" of the first line: -1 not yet seen */
} tk_ctx;

static int reserve(void **p, size_t *cap, size_t need, size_t elem, const char *where,
                   kvp_error *err)
{
    if (need <= *cap)
        return 0;
    if (need > WL_MAX_CHUNKS * 64ull)
        return kvp_fail(err, KVP_EINPUT, "%s: a prompt of more than %llu pieces", where,
                        WL_MAX_CHUNKS * 64ull);
    void *q = realloc(*p, need * elem);
    if (!q)
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", where);
    *p = q, *cap = need;
    return 0;
}

/* Seconds -> ms on a nanosecond grid: a decimal of up to 9 places comes back
 * as the same ms the writer had, which s * 1000 alone would not always give. */
static int arrival_ms(json_t *v, const char *where, double *ms, kvp_error *err)
{
    *ms = 0;
    if (!v)
        return 0;
    double s = json_is_number(v) ? json_number_value(v) : -1;
    if (!(s >= 0 && s <= JSONL_MAX_ARRIVAL_S))
        return kvp_fail(err, KVP_EINPUT, "%s: \"arrival\" must be a number of seconds in "
                        "[0, 1e12]", where);
    long double ns = (long double)s * 1e9L;
    *ms = ns < JSONL_NS_EXACT ? (double)llroundl(ns) / 1e6 : s * 1000;
    return 0;
}

/* the id of a run of token ids: their content and their count */
static uint64_t tokens_id(const uint64_t *t, size_t n)
{
    uint64_t h = 0x746f6b656e73ull ^ n;
    for (size_t i = 0; i < n; i++)
        h = kvp_mix64(h ^ kvp_mix64(t[i] + 0x9e3779b97f4a7c15ull));
    return wl_chunk_id(WL_NS_TOKENS, 0, kvp_mix64(h ^ n));
}

/* "tokens": [ids] -> one chunk per block of the replay, named by its content */
static int form_tokens(tk_ctx *x, json_t *a, const char *where, size_t *nc, kvp_error *err)
{
    size_t n = json_array_size(a);
    uint32_t bs = x->b.w->block_size;
    if (!json_is_array(a) || n == 0)
        return kvp_fail(err, KVP_EINPUT, "%s: \"tokens\" must be a non-empty array of token "
                        "ids", where);
    if ((uint64_t)n > KVP_MAX_TOKENS) /* size_t may be narrower (the browser's) */
        return kvp_fail(err, KVP_EINPUT, "%s: a prompt of more than 2^40 tokens", where);
    if (reserve((void **)&x->ids, &x->cap_ids, n, sizeof *x->ids, where, err) ||
        reserve((void **)&x->c, &x->cap, n / bs + 1, sizeof *x->c, where, err))
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return kvp_fail(err, KVP_EINPUT, "%s: tokens[%zu] is not a token id (a whole "
                            "number >= 0)", where, i);
        x->ids[i] = (uint64_t)json_integer_value(v);
    }
    size_t k = 0;
    for (size_t off = 0; off < n; off += bs, k++) {
        size_t len = n - off < bs ? n - off : bs;
        x->c[k] = (kvp_sim_chunk){tokens_id(x->ids + off, len), len};
    }
    *nc = k;
    return 0;
}

/* "chunks": [[id, tokens], ...], ids in [0, 2^63) */
static int form_chunks(tk_ctx *x, json_t *a, const char *where, size_t *nc, kvp_error *err)
{
    size_t n = json_array_size(a);
    if (!json_is_array(a) || n == 0)
        return kvp_fail(err, KVP_EINPUT, "%s: \"chunks\" must be a non-empty array of [id, "
                        "tokens] pairs", where);
    if (reserve((void **)&x->c, &x->cap, n, sizeof *x->c, where, err))
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *p = json_array_get(a, i), *id = json_array_get(p, 0), *t = json_array_get(p, 1);
        if (!json_is_array(p) || json_array_size(p) != 2)
            return kvp_fail(err, KVP_EINPUT, "%s: chunks[%zu] is not an [id, tokens] pair",
                            where, i);
        if (!json_is_integer(id) || json_integer_value(id) < 0)
            return kvp_fail(err, KVP_EINPUT, "%s: chunks[%zu]'s id is not a whole number in "
                            "[0, 2^63)", where, i);
        if (!json_is_integer(t) || json_integer_value(t) < 1 ||
            (uint64_t)json_integer_value(t) > KVP_MAX_TOKENS)
            return kvp_fail(err, KVP_EINPUT, "%s: chunks[%zu]'s tokens must be a whole number "
                            "in [1, 2^40]", where, i);
        x->c[i] = (kvp_sim_chunk){(uint64_t)json_integer_value(id),
                                  (uint64_t)json_integer_value(t)};
    }
    *nc = n;
    return 0;
}

/* a prefix hash: an integer (Mooncake's ids, Python's signed hash()) or a
 * string (a hex digest); integers share Mooncake's namespace on purpose */
static int hash_chunk_id(json_t *v, uint64_t *id)
{
    if (json_is_integer(v))
        *id = wl_chunk_id(WL_NS_TRACE, 0, (uint64_t)json_integer_value(v));
    else if (json_is_string(v) && json_string_length(v))
        *id = wl_chunk_id(WL_NS_TRACE, 1, bytes_hash(json_string_value(v),
                                                     json_string_length(v)));
    else
        return -1;
    return 0;
}

/* "hashes" + "block_size" + "input": one id per block of the prefix, the last
 * maybe partial (ceil), or only full blocks hashed (floor, the rest unique) */
static int form_hashes(tk_ctx *x, json_t *o, json_t *a, const char *where, size_t *nc,
                       kvp_error *err)
{
    uint64_t bsz, in;
    if (!json_is_array(a))
        return kvp_fail(err, KVP_EINPUT, "%s: \"hashes\" must be an array of block hashes",
                        where);
    if (wl_json_count(o, "block_size", 1, where, &bsz, err) ||
        wl_json_count(o, "input", 1, where, &in, err))
        return -1;
    if (bsz > MAX_BLOCK)
        return kvp_fail(err, KVP_EINPUT, "%s: \"block_size\" %llu: at most 2^20", where,
                        (unsigned long long)bsz);
    size_t n = json_array_size(a);
    uint64_t ceil = (in + bsz - 1) / bsz, floor = in / bsz;
    if (n != ceil && n != floor) {
        char alt[64] = "";
        if (floor != ceil)
            snprintf(alt, sizeof alt, " (or %llu, full blocks only)", (unsigned long long)floor);
        return kvp_fail(err, KVP_EINPUT, "%s: \"hashes\" has %zu ids, input %llu at block_size "
                        "%llu needs %llu%s", where, n, (unsigned long long)in,
                        (unsigned long long)bsz, (unsigned long long)ceil, alt);
    }
    if (reserve((void **)&x->c, &x->cap, n + 1, sizeof *x->c, where, err))
        return -1;
    for (size_t i = 0; i < n; i++) {
        uint64_t id;
        if (hash_chunk_id(json_array_get(a, i), &id))
            return kvp_fail(err, KVP_EINPUT, "%s: hashes[%zu] is not an integer or a non-empty "
                            "string", where, i);
        x->c[i] = (kvp_sim_chunk){id, i + 1 < ceil ? bsz : in - i * bsz};
    }
    *nc = n;
    if (n < ceil) /* the tail no hash names: content of this request alone */
        x->c[(*nc)++] = (kvp_sim_chunk){wl_unique(&x->b), in - n * bsz};
    return 0;
}

static const char *const known_keys[] = {"arrival", "conversation", "output", "tokens",
                                         "chunks", "hashes", "block_size", "input",
                                         "output_cached", "pass", "id", "meta", NULL};

static int check_keys(json_t *o, const char *where, kvp_error *err)
{
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        size_t i = 0;
        while (known_keys[i] && strcmp(known_keys[i], k))
            i++;
        if (!known_keys[i])
            return kvp_fail(err, KVP_EINPUT, "%s: unknown key \"%.60s\" (a typo? your own "
                            "fields go under \"meta\")", where, k);
    }
    int forms = !!json_object_get(o, "tokens") + !!json_object_get(o, "chunks") +
                !!json_object_get(o, "hashes");
    if (forms != 1)
        return kvp_fail(err, KVP_EINPUT, "%s: %s of \"tokens\", \"chunks\" or \"hashes\" (the "
                        "prompt)", where, forms ? "more than one" : "none");
    if (!json_object_get(o, "hashes") &&
        (json_object_get(o, "block_size") || json_object_get(o, "input")))
        return kvp_fail(err, KVP_EINPUT, "%s: \"block_size\" and \"input\" go with \"hashes\" "
                        "only", where);
    return 0;
}

/* output_cached: the same on every line (the workload's decode blocks are
 * cached or not, as kvplan's generators make them) */
static int tk_cached(tk_ctx *x, json_t *o, const char *where, kvp_error *err)
{
    json_t *v = json_object_get(o, "output_cached");
    if (v && !json_is_boolean(v))
        return kvp_fail(err, KVP_EINPUT, "%s: \"output_cached\" must be true or false", where);
    int c = v && json_is_true(v);
    if (x->cached < 0)
        x->b.w->hash_output = x->cached = c;
    else if (c != x->cached)
        return kvp_fail(err, KVP_EINPUT, "%s: \"output_cached\" differs from the first "
                        "request's (it is the same for the whole workload)", where);
    return 0;
}

static int tk_request(void *ctx, void *json, const char *where, kvp_error *err)
{
    tk_ctx *x = ctx;
    json_t *o = json;
    double ms;
    uint64_t out, pass = 0;
    uint32_t conv = 0;
    size_t nc = 0;
    json_t *cv = json_object_get(o, "conversation");
    if (check_keys(o, where, err) || arrival_ms(json_object_get(o, "arrival"), where, &ms, err) ||
        wl_json_count(o, "output", 0, where, &out, err) || tk_cached(x, o, where, err) ||
        (json_object_get(o, "pass") && wl_json_count(o, "pass", 0, where, &pass, err)) ||
        (cv && conv_number(&x->convs, cv, where, &conv, err)))
        return -1;
    if (pass > UINT32_MAX)
        return kvp_fail(err, KVP_EINPUT, "%s: \"pass\" must be below 2^32", where);
    json_t *a;
    int rc = (a = json_object_get(o, "tokens")) ? form_tokens(x, a, where, &nc, err)
             : (a = json_object_get(o, "chunks")) ? form_chunks(x, a, where, &nc, err)
                                                  : form_hashes(x, o, json_object_get(o, "hashes"),
                                                                where, &nc, err);
    if (rc)
        return rc;
    kvp_error e;
    if (wl_add(&x->b, x->c, nc, out, ms, conv, &e)) { /* its message names the file alone */
        size_t skip = strlen(x->b.w->name);
        const char *why = !strncmp(e.msg, x->b.w->name, skip) && e.msg[skip] == ':'
                              ? e.msg + skip + 2 : e.msg;
        return kvp_fail(err, KVP_EINPUT, "%s: %s", where, why);
    }
    x->b.w->req[x->b.w->n_req - 1].pass = (uint32_t)pass;
    return 0;
}

/* Integers 1..2^24 name themselves (so a written file reads back to the same
 * numbers); any other key makes every conversation numbered by appearance. */
static void tk_number_convs(tk_ctx *x)
{
    kvp_workload *w = x->b.w;
    if (!x->convs.all_small_ints)
        return;
    w->n_convs = 0;
    for (size_t i = 0; i < w->n_req; i++) {
        if (!w->req[i].conv)
            continue;
        w->req[i].conv = (uint32_t)x->convs.keys[w->req[i].conv - 1].num;
        if (w->req[i].conv > w->n_convs)
            w->n_convs = w->req[i].conv;
    }
}

int wl_read_tokens(const char *path, uint32_t bs, kvp_workload *w, kvp_error *err)
{
    tk_ctx x = {.cached = -1, .convs = {.all_small_ints = 1}};
    wl_init(&x.b, w, path, "kvplan", bs);
    int rc = wl_each_json_line(path, NULL, tk_request, &x, err);
    if (!rc)
        tk_number_convs(&x);
    conv_free(&x.convs);
    free(x.c);
    free(x.ids);
    /* file order is the replay's order, as Mooncake's: a written file reads
     * back to the same sequence */
    return wl_finish(&x.b, 0, rc, err);
}
