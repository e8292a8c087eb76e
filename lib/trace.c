/* trace.c - workloads for the prefix-cache simulator: Mooncake JSONL traces
 * (hash_ids per 512-token block, each id naming the whole prefix up to that
 * block) and synthetic generators whose block hashes are chained here, so
 * equal hash = equal prefix, as vLLM's hash_block_tokens makes them. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvp_int.h"

#define MOONCAKE_BLOCK 512u
#define MAX_REQUESTS (1ull << 24)
/* A generator's requests: a million is past any workload worth replaying
 * one by one, and a spec of a few bytes must not cost seconds to refuse. */
#define MAX_SYNTH_REQUESTS (1ull << 20)
#define MAX_HASHES (1ull << 25)

/* ---- growing the workload ---- */

static int add_request(kvp_workload *w, size_t *cap_req, size_t *cap_h, uint64_t n_hashes,
                       kvp_error *err)
{
    if (w->n_req >= MAX_REQUESTS || n_hashes > MAX_HASHES - w->n_hashes)
        return kvp_fail(err, KVP_EINPUT, "%s: more than %llu requests or %llu blocks", w->name,
                        MAX_REQUESTS, MAX_HASHES);
    if (w->n_req == *cap_req) {
        size_t n = *cap_req ? *cap_req * 2 : 256;
        void *q = realloc(w->req, n * sizeof *w->req);
        if (!q)
            return kvp_fail(err, KVP_EINPUT, "%s: out of memory", w->name);
        w->req = q, *cap_req = n;
    }
    if (w->n_hashes + n_hashes > *cap_h) {
        size_t n = *cap_h ? *cap_h : 4096;
        while (n < w->n_hashes + n_hashes)
            n *= 2;
        void *q = realloc(w->hashes, n * sizeof *w->hashes);
        if (!q)
            return kvp_fail(err, KVP_EINPUT, "%s: out of memory", w->name);
        w->hashes = q, *cap_h = n;
    }
    kvp_sim_request *r = &w->req[w->n_req++];
    memset(r, 0, sizeof *r);
    r->hash_off = w->n_hashes;
    r->n_hashes = (size_t)n_hashes;
    w->n_hashes += (size_t)n_hashes;
    return 0;
}

void kvp_workload_free(kvp_workload *w)
{
    free(w->req);
    free(w->hashes);
    memset(w, 0, sizeof *w);
}

/* ---- Mooncake JSONL ---- */

static int get_count(json_t *o, const char *key, uint64_t min, const char *where, kvp_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        return kvp_fail(err, KVP_EINPUT, "%s: no \"%s\"", where, key);
    if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)min ||
        (uint64_t)json_integer_value(v) > KVP_MAX_TOKENS)
        return kvp_fail(err, KVP_EINPUT, "%s: \"%s\" must be a whole number in [%llu, 2^40]",
                        where, key, (unsigned long long)min);
    return 0;
}

static int mooncake_line(kvp_workload *w, json_t *o, const char *where, size_t *cap_req,
                         size_t *cap_h, kvp_error *err)
{
    json_t *ts = json_object_get(o, "timestamp"), *ids = json_object_get(o, "hash_ids");
    if (!json_is_object(o))
        return kvp_fail(err, KVP_EINPUT, "%s: not a JSON object", where);
    if (!ts || !json_is_number(ts) || json_number_value(ts) < 0)
        return kvp_fail(err, KVP_EINPUT, "%s: %s \"timestamp\" (a number of ms, >= 0)", where,
                        ts ? "bad" : "no");
    if (get_count(o, "input_length", 1, where, err) || get_count(o, "output_length", 0, where, err))
        return -1;
    uint64_t in = (uint64_t)json_integer_value(json_object_get(o, "input_length"));
    uint64_t want = (in + MOONCAKE_BLOCK - 1) / MOONCAKE_BLOCK;
    if (!json_is_array(ids))
        return kvp_fail(err, KVP_EINPUT, "%s: %s \"hash_ids\" (an array of block ids)", where,
                        ids ? "bad" : "no");
    if (json_array_size(ids) != want)
        return kvp_fail(err, KVP_EINPUT, "%s: \"hash_ids\" has %zu ids, input_length %llu needs "
                        "%llu (one per 512-token block)", where, json_array_size(ids),
                        (unsigned long long)in, (unsigned long long)want);
    /* only full blocks are cached: the partial last block's id is never a key */
    if (add_request(w, cap_req, cap_h, in / MOONCAKE_BLOCK, err))
        return -1;
    kvp_sim_request *r = &w->req[w->n_req - 1];
    r->timestamp = json_number_value(ts);
    r->prompt_tokens = in;
    r->output_tokens = (uint64_t)json_integer_value(json_object_get(o, "output_length"));
    for (size_t i = 0; i < want; i++) {
        json_t *v = json_array_get(ids, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return kvp_fail(err, KVP_EINPUT, "%s: hash_ids[%zu] is not a whole number >= 0",
                            where, i);
        if (i < r->n_hashes)
            w->hashes[r->hash_off + i] = (uint64_t)json_integer_value(v);
    }
    return 0;
}

static int mooncake_read(FILE *f, kvp_workload *w, const char *path, kvp_error *err)
{
    char *line = NULL, where[1100];
    size_t n = 0, cap_req = 0, cap_h = 0, lineno = 0;
    ssize_t len;
    int rc = 0;
    while (!rc && (len = getline(&line, &n, f)) >= 0) {
        lineno++;
        snprintf(where, sizeof where, "%s:%zu", path, lineno);
        if (strspn(line, " \t\r\n") == (size_t)len)
            continue; /* blank line */
        json_error_t je;
        json_t *o = json_loadb(line, (size_t)len, JSON_REJECT_DUPLICATES, &je);
        if (!o)
            rc = kvp_fail(err, KVP_EINPUT, "%s: bad JSON at column %d: %s", where, je.column,
                          je.text);
        else
            rc = mooncake_line(w, o, where, &cap_req, &cap_h, err);
        json_decref(o);
    }
    free(line);
    if (!rc && ferror(f))
        rc = kvp_fail(err, KVP_EINPUT, "%s: read error: %s", path, strerror(errno));
    if (!rc && w->n_req == 0)
        rc = kvp_fail(err, KVP_EINPUT, "%s: no requests in the trace", path);
    return rc;
}

int kvp_workload_mooncake(const char *path, kvp_workload *out, kvp_error *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", path);
    out->block_size = MOONCAKE_BLOCK;
    FILE *f = fopen(path, "r");
    if (!f)
        return kvp_fail(err, KVP_EINPUT, "%s: %s", path, strerror(errno));
    int rc = mooncake_read(f, out, path, err);
    fclose(f);
    if (rc)
        kvp_workload_free(out);
    return rc;
}

/* ---- synthetic workloads ---- */

/* A request's tokens as runs of content: equal (id, offset) = equal token. */
typedef struct seg {
    uint64_t id, len;
} seg;

enum { SEG_PREFIX = 1, SEG_UNIQUE, SEG_OUTPUT, SEG_DOC, SEG_SUFFIX, SEG_GROUP };
#define SEG_ID(kind, n) (((uint64_t)(kind) << 56) | (uint64_t)(n))

static uint64_t fold(uint64_t h, uint64_t v)
{
    return kvp_mix64(h ^ kvp_mix64(v + 0x9e3779b97f4a7c15ull));
}

/* h_i = H(h_{i-1}, the tokens of block i), the tokens named by their runs */
static void hash_blocks(const seg *s, size_t ns, uint32_t bs, uint64_t *out, uint64_t n_blocks)
{
    uint64_t h = 0x6b7670 /* the chain's seed */, si = 0, off = 0;
    for (uint64_t b = 0; b < n_blocks; b++) {
        uint64_t left = bs;
        h = fold(h, 0x424c4f434bull); /* block boundary */
        while (left) {
            while (off == s[si].len && si + 1 < ns)
                si++, off = 0;
            uint64_t take = s[si].len - off < left ? s[si].len - off : left;
            h = fold(fold(fold(h, s[si].id), off), take);
            off += take;
            left -= take;
        }
        out[b] = h;
    }
}

static int synth_request(kvp_workload *w, size_t *cr, size_t *ch, const seg *s, size_t ns,
                         uint64_t output, kvp_error *err)
{
    uint64_t prompt = 0;
    for (size_t i = 0; i < ns; i++)
        prompt += s[i].len;
    if (prompt == 0)
        return kvp_fail(err, KVP_EINPUT, "%s: a request has no prompt tokens", w->name);
    uint64_t n = (prompt + output) / w->block_size;
    if (add_request(w, cr, ch, n, err))
        return -1;
    kvp_sim_request *r = &w->req[w->n_req - 1];
    r->prompt_tokens = prompt;
    r->output_tokens = output;
    seg all[4];
    if (ns > 3)
        return kvp_fail(err, KVP_EINPUT, "%s: too many runs in a request", w->name);
    memcpy(all, s, ns * sizeof *s);
    all[ns] = (seg){SEG_ID(SEG_OUTPUT, w->n_req), output};
    if (n) /* no full block: no hashes, and maybe no array yet */
        hash_blocks(all, ns + 1, w->block_size, w->hashes + r->hash_off, n);
    return 0;
}

/* "N,P,U" -> numbers; fields past `need` are optional and keep their defaults */
static int parse_fields(const char *spec, const char *args, uint64_t *v, int need, int max,
                        const char **word, kvp_error *err)
{
    const char *p = args;
    int n = 0;
    while (*p) {
        char *end;
        if (word && n >= need && (*p < '0' || *p > '9')) {
            *word = p; /* a trailing keyword, such as grouped's order */
            return 0;
        }
        if (n == max)
            break;
        errno = 0;
        unsigned long long x = strtoull(p, &end, 10);
        if (end == p || *p == '-' || errno || x > KVP_MAX_TOKENS || (*end && *end != ','))
            return kvp_fail(err, KVP_EUSAGE, "%s: field %d must be a whole number in [0, 2^40]",
                            spec, n + 1);
        v[n++] = x;
        p = *end ? end + 1 : end;
    }
    if (*p || n < need)
        return kvp_fail(err, KVP_EUSAGE, "%s: expected %d to %d comma-separated fields", spec,
                        need, max);
    return 0;
}

/* Refuses a generator whose hashes would pass MAX_HASHES before making any. */
static int check_size(const char *spec, uint64_t n_req, uint64_t tokens, uint32_t bs,
                      kvp_error *err)
{
    uint64_t blocks = tokens / bs;
    if (n_req > MAX_SYNTH_REQUESTS || (blocks && n_req > MAX_HASHES / blocks))
        return kvp_fail(err, KVP_EINPUT, "%s: more than %llu requests or %llu blocks", spec,
                        MAX_SYNTH_REQUESTS, MAX_HASHES);
    return 0;
}

static int gen_shared_prefix(kvp_workload *w, const char *spec, const char *args, kvp_error *err)
{
    uint64_t v[4] = {0, 0, 0, 0};
    size_t cr = 0, ch = 0;
    if (parse_fields(spec, args, v, 3, 4, NULL, err) ||
        check_size(spec, v[0], v[1] + v[2] + v[3], w->block_size, err))
        return -1;
    for (uint64_t r = 0; r < v[0]; r++) {
        seg s[2] = {{SEG_ID(SEG_PREFIX, 0), v[1]}, {SEG_ID(SEG_UNIQUE, r), v[2]}};
        if (synth_request(w, &cr, &ch, s, 2, v[3], err))
            return -1;
    }
    return 0;
}

static int gen_cyclic(kvp_workload *w, const char *spec, const char *args, kvp_error *err)
{
    uint64_t v[5] = {0, 0, 0, 0, 0};
    size_t cr = 0, ch = 0;
    if (parse_fields(spec, args, v, 3, 5, NULL, err))
        return -1;
    if ((v[0] && v[2] > MAX_SYNTH_REQUESTS / v[0]) ||
        check_size(spec, v[0] * v[2], v[1] + v[3] + v[4], w->block_size, err))
        return kvp_fail(err, KVP_EINPUT, "%s: more than %llu requests or %llu blocks", spec,
                        MAX_SYNTH_REQUESTS, MAX_HASHES);
    for (uint64_t pass = 0; pass < v[2]; pass++)
        for (uint64_t d = 0; d < v[0]; d++) {
            seg s[2] = {{SEG_ID(SEG_DOC, d), v[1]}, {SEG_ID(SEG_SUFFIX, pass * v[0] + d), v[3]}};
            if (synth_request(w, &cr, &ch, s, 2, v[4], err))
                return -1;
            w->req[w->n_req - 1].pass = (uint32_t)(pass < UINT32_MAX ? pass : UINT32_MAX);
        }
    return 0;
}

static int gen_grouped(kvp_workload *w, const char *spec, const char *args, kvp_error *err)
{
    uint64_t v[5] = {0, 0, 0, 0, 0};
    const char *order = "cyclic";
    size_t cr = 0, ch = 0;
    if (parse_fields(spec, args, v, 4, 5, &order, err))
        return -1;
    int cyclic = !strcmp(order, "cyclic");
    if (!cyclic && strcmp(order, "grouped"))
        return kvp_fail(err, KVP_EUSAGE, "%s: the order is cyclic or grouped", spec);
    if ((v[0] && v[1] > MAX_SYNTH_REQUESTS / v[0]) ||
        check_size(spec, v[0] * v[1], v[2] + v[3] + v[4], w->block_size, err))
        return kvp_fail(err, KVP_EINPUT, "%s: more than %llu requests or %llu blocks", spec,
                        MAX_SYNTH_REQUESTS, MAX_HASHES);
    /* cyclic: g0 g1 ... g(G-1), K times over; grouped: each group's K in a row */
    for (uint64_t i = 0; i < v[0] * v[1]; i++) {
        uint64_t g = cyclic ? i % v[0] : i / v[1], k = cyclic ? i / v[0] : i % v[1];
        seg s[2] = {{SEG_ID(SEG_GROUP, g), v[2]}, {SEG_ID(SEG_UNIQUE, g * v[1] + k), v[3]}};
        if (synth_request(w, &cr, &ch, s, 2, v[4], err))
            return -1;
        w->req[w->n_req - 1].pass = cyclic ? (uint32_t)(k < UINT32_MAX ? k : UINT32_MAX) : 0;
    }
    return 0;
}

int kvp_workload_synthetic(const char *spec, uint32_t block_size, kvp_workload *out,
                           kvp_error *err)
{
    static const struct {
        const char *name;
        int (*gen)(kvp_workload *, const char *, const char *, kvp_error *);
    } gens[] = {{"shared-prefix", gen_shared_prefix}, {"cyclic", gen_cyclic},
                {"grouped", gen_grouped}};
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", spec);
    out->block_size = block_size;
    if (block_size == 0)
        return kvp_fail(err, KVP_EUSAGE, "%s: the block size must be at least 1", spec);
    const char *colon = strchr(spec, ':');
    for (size_t i = 0; colon && i < sizeof gens / sizeof gens[0]; i++)
        if (strlen(gens[i].name) == (size_t)(colon - spec) &&
            !strncmp(spec, gens[i].name, (size_t)(colon - spec))) {
            int rc = gens[i].gen(out, spec, colon + 1, err);
            if (!rc && out->n_req == 0)
                rc = kvp_fail(err, KVP_EINPUT, "%s: the workload has no requests", spec);
            if (rc)
                kvp_workload_free(out);
            else
                snprintf(out->name, sizeof out->name, "%s", spec);
            return rc;
        }
    return kvp_fail(err, KVP_EUSAGE, "%s: unknown workload (known: shared-prefix:N,P,U[,O], "
                    "cyclic:D,T,R[,S[,O]], grouped:G,K,P,U[,O[,cyclic|grouped]])", spec);
}
