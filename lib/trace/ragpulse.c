/* ragpulse.c - RAGPulse's RAG traces (flashserve/RAGPulse): 0_trace.jsonl
 * names each request's content as chunk ids of five components (system
 * prompt, passages, history, web search, user input) and the files beside it
 * give each chunk's token length.  A request's prompt is its chunks in that
 * order, each namespaced by its component, so prefix caching sees what a
 * server given that template would; the trace's input_length also counts
 * template tokens no chunk names and is only reported (docs/trace-formats.md). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace_int.h"

/* The components in prompt order; file is also the namespace (its number) */
static const struct rp_comp_def {
    const char *list;  /* the list in hash_ids */
    const char *file;  /* the lengths file beside 0_trace.jsonl */
    const char *key;   /* the id's key there */
    unsigned ns;       /* the file's number */
} rp_defs[] = {
    {"sys_prompt", "1_sys_prompt.jsonl", "sys_prompt_id", 1},
    {"passages_ids", "2_passages.jsonl", "passage_id", 2},
    {"history", "3_history.jsonl", "history_id", 3},
    {"web_search", "5_web_search.jsonl", "web_search_id", 5},
    {"user_input", "4_user_input.jsonl", "user_input_id", 4},
};
#define RP_N 5

typedef struct rp_len {
    uint64_t id, tokens;
    size_t line;
} rp_len;

typedef struct rp_table {
    const struct rp_comp_def *def;
    rp_len *v;
    size_t n, cap;
} rp_table;

/* session_id -> conversation, open addressing over strdup'd keys */
typedef struct rp_sessions {
    char **key;
    uint32_t *conv;
    size_t cap, n;
} rp_sessions;

typedef struct rp_ctx {
    wl_builder b;
    rp_table t[RP_N];
    rp_sessions s;
    kvp_sim_chunk *c;
    size_t cap;
    uint64_t chunk_tokens, input_tokens;
    int all_input;                   /* every line had an input_length */
} rp_ctx;

/* ---- the component files ---- */

static int rp_len_line(void *ctx, void *json, const char *where, kvp_error *err)
{
    rp_table *t = ctx;
    json_t *o = json;
    uint64_t id, tokens;
    int rc = 0;
    json_t *v = json_object_get(o, t->def->key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        rc = kvp_fail(err, KVP_EINPUT, "%s: %s \"%s\" (a whole number >= 0)", where,
                      v ? "bad" : "no", t->def->key);
    else if (!(rc = wl_json_count(o, "token_length", 1, where, &tokens, err))) {
        id = (uint64_t)json_integer_value(v);
        if (t->n >= WL_MAX_CHUNKS)
            rc = kvp_fail(err, KVP_EINPUT, "%s: more than %llu chunks", where, WL_MAX_CHUNKS);
        else if (t->n == t->cap) {
            size_t cap = t->cap ? 2 * t->cap : 1024;
            void *q = realloc(t->v, cap * sizeof *t->v);
            if (!q)
                rc = kvp_fail(err, KVP_EINPUT, "%s: out of memory", where);
            else
                t->v = q, t->cap = cap;
        }
        if (!rc) {
            const char *colon = strrchr(where, ':');
            t->v[t->n++] = (rp_len){id, tokens, colon ? strtoul(colon + 1, NULL, 10) : 0};
        }
    }
    return rc;
}

static int by_id(const void *a, const void *b)
{
    const rp_len *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* Reads one component file and sorts it for bsearch; an id twice is an error
 * (which length would the prompt have?) */
static int rp_load_table(rp_table *t, const char *dir, kvp_error *err)
{
    char path[4200], what[96];
    snprintf(path, sizeof path, "%s/%s", dir, t->def->file);
    snprintf(what, sizeof what, "RAGPulse's %s lengths", t->def->list);
    int rc = wl_each_json_line(path, what, rp_len_line, t, err);
    if (rc)
        return rc;
    if (t->n > 1) /* an empty file has no array at all */
        qsort(t->v, t->n, sizeof *t->v, by_id);
    for (size_t i = 1; i < t->n; i++)
        if (t->v[i].id == t->v[i - 1].id)
            return kvp_fail(err, KVP_EINPUT, "%s:%zu: %s %llu again (first on line %zu)", path,
                            t->v[i].line, t->def->key, (unsigned long long)t->v[i].id,
                            t->v[i - 1].line);
    return 0;
}

static const rp_len *rp_find(const rp_table *t, uint64_t id)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) { /* lower bound: the lines are unique, so the only one */
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->v[lo].id == id ? &t->v[lo] : NULL;
}

/* ---- sessions ---- */

static uint64_t rp_str_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static int rp_grow_sessions(rp_sessions *s)
{
    size_t cap = s->cap ? 2 * s->cap : 1024;
    char **key = calloc(cap, sizeof *key);
    uint32_t *conv = calloc(cap, sizeof *conv);
    if (!key || !conv) {
        free(key), free(conv);
        return -1;
    }
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->key[i])
            continue;
        size_t j = rp_str_hash(s->key[i]) & (cap - 1);
        while (key[j])
            j = (j + 1) & (cap - 1);
        key[j] = s->key[i], conv[j] = s->conv[i];
    }
    free(s->key), free(s->conv);
    s->key = key, s->conv = conv, s->cap = cap;
    return 0;
}

/* The conversation of a session: 1-based in order of first appearance */
static int rp_session(rp_sessions *s, const char *id, const char *where, uint32_t *conv,
                      kvp_error *err)
{
    if (2 * (s->n + 1) > s->cap && rp_grow_sessions(s))
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", where);
    size_t j = rp_str_hash(id) & (s->cap - 1);
    while (s->key[j] && strcmp(s->key[j], id))
        j = (j + 1) & (s->cap - 1);
    if (!s->key[j]) {
        if (s->n >= WL_MAX_CONVS)
            return kvp_fail(err, KVP_EINPUT, "%s: more than %llu sessions", where, WL_MAX_CONVS);
        if (!(s->key[j] = strdup(id)))
            return kvp_fail(err, KVP_EINPUT, "%s: out of memory", where);
        s->conv[j] = (uint32_t)++s->n;
    }
    *conv = s->conv[j];
    return 0;
}

static void rp_free_sessions(rp_sessions *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->key[i]);
    free(s->key), free(s->conv);
}

/* ---- the trace ---- */

/* "timestamp": seconds, a string in the published file, a number accepted */
static int rp_timestamp(json_t *o, const char *where, double *ms, kvp_error *err)
{
    json_t *v = json_object_get(o, "timestamp");
    double s = NAN;
    if (json_is_number(v))
        s = json_number_value(v);
    else if (json_is_string(v) && json_string_length(v) > 0) {
        char *end;
        const char *str = json_string_value(v);
        s = strtod(str, &end);
        if (*end || end == str || str[0] == ' ')
            s = NAN;
    }
    if (!isfinite(s) || s < 0 || s > 1e12)
        return kvp_fail(err, KVP_EINPUT, "%s: %s \"timestamp\" (seconds >= 0, a number or a "
                        "string of one)", where, v ? "bad" : "no");
    *ms = s * 1000.0;
    return 0;
}

/* Appends one component's chunks to x->c[*n..] */
static int rp_component(rp_ctx *x, const rp_table *t, json_t *list, const char *where,
                        size_t *n, kvp_error *err)
{
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *v = json_array_get(list, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return kvp_fail(err, KVP_EINPUT, "%s: hash_ids.%s[%zu] is not a whole number >= 0",
                            where, t->def->list, i);
        uint64_t id = (uint64_t)json_integer_value(v);
        const rp_len *l = rp_find(t, id);
        if (!l)
            return kvp_fail(err, KVP_EINPUT, "%s: hash_ids.%s[%zu]: %s %llu is not in %s", where,
                            t->def->list, i, t->def->key, (unsigned long long)id, t->def->file);
        x->c[(*n)++] = (kvp_sim_chunk){wl_chunk_id(WL_NS_TRACE, t->def->ns, id), l->tokens};
    }
    return 0;
}

/* The five lists, checked, and room for their chunks */
static int rp_lists(rp_ctx *x, json_t *o, json_t *lists[RP_N], const char *where,
                    kvp_error *err)
{
    json_t *h = json_object_get(o, "hash_ids");
    if (!json_is_object(h))
        return kvp_fail(err, KVP_EINPUT, "%s: %s \"hash_ids\" (an object of the components' "
                        "chunk id lists)", where, h ? "bad" : "no");
    size_t total = 0;
    for (int k = 0; k < RP_N; k++) {
        lists[k] = json_object_get(h, rp_defs[k].list);
        if (!json_is_array(lists[k]))
            return kvp_fail(err, KVP_EINPUT, "%s: %s \"hash_ids\".\"%s\" (an array of chunk ids)",
                            where, lists[k] ? "bad" : "no", rp_defs[k].list);
        total += json_array_size(lists[k]); /* each bounded by the line's length */
    }
    if (total == 0)
        return kvp_fail(err, KVP_EINPUT, "%s: no chunks: every hash_ids list is empty", where);
    if (total > x->cap) {
        void *q = realloc(x->c, total * sizeof *x->c);
        if (!q)
            return kvp_fail(err, KVP_EINPUT, "%s: out of memory", where);
        x->c = q, x->cap = total;
    }
    return 0;
}

static int rp_request(void *ctx, void *json, const char *where, kvp_error *err)
{
    rp_ctx *x = ctx;
    json_t *o = json;
    double ms = 0;
    uint64_t out, in = 0;
    json_t *sid = json_object_get(o, "session_id"), *lists[RP_N];
    if (rp_timestamp(o, where, &ms, err) ||
        wl_json_count(o, "output_length", 0, where, &out, err))
        return -1;
    if (!json_object_get(o, "input_length"))
        x->all_input = 0;
    else if (wl_json_count(o, "input_length", 0, where, &in, err))
        return -1;
    if (!json_is_string(sid))
        return kvp_fail(err, KVP_EINPUT, "%s: %s \"session_id\" (a string)", where,
                        sid ? "bad" : "no");
    uint32_t conv = 0;
    size_t n = 0;
    if (rp_lists(x, o, lists, where, err) ||
        rp_session(&x->s, json_string_value(sid), where, &conv, err))
        return -1;
    for (int k = 0; k < RP_N; k++)
        if (rp_component(x, &x->t[k], lists[k], where, &n, err))
            return -1;
    size_t before = x->b.w->n_req;
    if (wl_add(&x->b, x->c, n, out, ms, conv, err))
        return -1;
    /* 2^24 requests of 2^40 tokens would reach 2^64: saturate (only said) */
    uint64_t p = x->b.w->req[before].prompt_tokens;
    x->chunk_tokens = p > UINT64_MAX - x->chunk_tokens ? UINT64_MAX : x->chunk_tokens + p;
    x->input_tokens = in > UINT64_MAX - x->input_tokens ? UINT64_MAX : x->input_tokens + in;
    return 0;
}

/* PATH is the folder or its 0_trace.jsonl: the folder and the trace file */
static int rp_paths(const char *path, char *dir, size_t dn, char *trace, size_t tn,
                    kvp_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return kvp_fail(err, KVP_EINPUT, "%s: %s", path, strerror(errno));
    int n;
    if (S_ISDIR(st.st_mode)) {
        snprintf(dir, dn, "%s", path);
        n = snprintf(trace, tn, "%s/0_trace.jsonl", path);
    } else {
        const char *slash = strrchr(path, '/');
        size_t len = slash ? (size_t)(slash - path) : 0;
        if (!slash)
            snprintf(dir, dn, ".");
        else /* "/0_trace.jsonl" is in "/" */
            snprintf(dir, dn, "%.*s", (int)(len ? len : 1), path);
        n = snprintf(trace, tn, "%s", path);
    }
    if (strlen(path) >= dn || n < 0 || (size_t)n >= tn)
        return kvp_fail(err, KVP_EINPUT, "%s: path too long", path);
    return 0;
}

static void rp_note(rp_ctx *x, kvp_workload *w)
{
    char a[32], b[32];
    kvp_format_thousands(x->chunk_tokens, a, sizeof a);
    kvp_format_thousands(x->input_tokens, b, sizeof b);
    int n = snprintf(w->note, sizeof w->note, "%zu sessions; prompts are the chunks in the order "
                     "system prompt, passages, history, web search, user input (%s tokens)",
                     x->s.n, a);
    if (x->all_input && n > 0 && (size_t)n < sizeof w->note)
        snprintf(w->note + n, sizeof w->note - (size_t)n, "; the trace's input_length (%s) "
                 "also counts template tokens no chunk names", b);
}

int wl_read_ragpulse(const char *path, uint32_t bs, kvp_workload *w, kvp_error *err)
{
    rp_ctx x = {.all_input = 1};
    char dir[4096], trace[4200];
    wl_init(&x.b, w, path, "ragpulse", bs);
    for (int k = 0; k < RP_N; k++)
        x.t[k].def = &rp_defs[k];
    int rc = rp_paths(path, dir, sizeof dir, trace, sizeof trace, err);
    for (int k = 0; !rc && k < RP_N; k++)
        rc = rp_load_table(&x.t[k], dir, err);
    if (!rc)
        rc = wl_each_json_line(trace, NULL, rp_request, &x, err);
    if (!rc)
        rp_note(&x, w);
    for (int k = 0; k < RP_N; k++)
        free(x.t[k].v);
    rp_free_sessions(&x.s);
    free(x.c);
    /* the published file is not in time order */
    return wl_finish(&x.b, 1, rc, err);
}
