/* synthetic.c - the simulator's generated workloads: a shared prefix, a
 * cyclic scan of documents (the LRU cliff) and grouped prompts, as chunks of
 * content; the builder chains their block hashes, so equal hash = equal
 * prefix, as vLLM's hash_block_tokens makes them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_int.h"

/* A generator's requests: a million is past any workload worth replaying
 * one by one, and a spec of a few bytes must not cost seconds to refuse. */
#define MAX_SYNTH_REQUESTS (1ull << 20)
#define MAX_HASHES WL_MAX_HASHES

enum { GEN_PREFIX = 1, GEN_UNIQUE, GEN_DOC, GEN_SUFFIX, GEN_GROUP };
#define GEN_ID(kind, n) wl_chunk_id(WL_NS_GEN, (kind), (n))

static int synth_request(wl_builder *b, const kvp_sim_chunk *s, size_t ns, uint64_t output,
                         kvp_error *err)
{
    return wl_add(b, s, ns, output, 0, 0, err);
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

static int gen_shared_prefix(wl_builder *b, const char *spec, const char *args, kvp_error *err)
{
    kvp_workload *w = b->w;
    uint64_t v[4] = {0, 0, 0, 0};
    if (parse_fields(spec, args, v, 3, 4, NULL, err) ||
        check_size(spec, v[0], v[1] + v[2] + v[3], w->block_size, err))
        return -1;
    for (uint64_t r = 0; r < v[0]; r++) {
        kvp_sim_chunk s[2] = {{GEN_ID(GEN_PREFIX, 0), v[1]}, {GEN_ID(GEN_UNIQUE, r), v[2]}};
        if (synth_request(b, s, 2, v[3], err))
            return -1;
    }
    return 0;
}

static int gen_cyclic(wl_builder *b, const char *spec, const char *args, kvp_error *err)
{
    kvp_workload *w = b->w;
    uint64_t v[5] = {0, 0, 0, 0, 0};
    if (parse_fields(spec, args, v, 3, 5, NULL, err))
        return -1;
    if ((v[0] && v[2] > MAX_SYNTH_REQUESTS / v[0]) ||
        check_size(spec, v[0] * v[2], v[1] + v[3] + v[4], w->block_size, err))
        return kvp_fail(err, KVP_EINPUT, "%s: more than %llu requests or %llu blocks", spec,
                        MAX_SYNTH_REQUESTS, MAX_HASHES);
    for (uint64_t pass = 0; pass < v[2]; pass++)
        for (uint64_t d = 0; d < v[0]; d++) {
            kvp_sim_chunk s[2] = {{GEN_ID(GEN_DOC, d), v[1]},
                                  {GEN_ID(GEN_SUFFIX, pass * v[0] + d), v[3]}};
            if (synth_request(b, s, 2, v[4], err))
                return -1;
            w->req[w->n_req - 1].pass = (uint32_t)(pass < UINT32_MAX ? pass : UINT32_MAX);
        }
    return 0;
}

static int gen_grouped(wl_builder *b, const char *spec, const char *args, kvp_error *err)
{
    kvp_workload *w = b->w;
    uint64_t v[5] = {0, 0, 0, 0, 0};
    const char *order = "cyclic";
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
        kvp_sim_chunk s[2] = {{GEN_ID(GEN_GROUP, g), v[2]}, {GEN_ID(GEN_UNIQUE, g * v[1] + k), v[3]}};
        if (synth_request(b, s, 2, v[4], err))
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
        int (*gen)(wl_builder *, const char *, const char *, kvp_error *);
    } gens[] = {{"shared-prefix", gen_shared_prefix}, {"cyclic", gen_cyclic},
                {"grouped", gen_grouped}};
    wl_builder b;
    wl_init(&b, out, spec, "synthetic", block_size);
    out->hash_output = 1; /* decode blocks are cached (unique content, never hit) */
    if (block_size == 0)
        return kvp_fail(err, KVP_EUSAGE, "%s: the block size must be at least 1", spec);
    const char *colon = strchr(spec, ':');
    for (size_t i = 0; colon && i < sizeof gens / sizeof gens[0]; i++)
        if (strlen(gens[i].name) == (size_t)(colon - spec) &&
            !strncmp(spec, gens[i].name, (size_t)(colon - spec))) {
            int rc = gens[i].gen(&b, spec, colon + 1, err);
            if (!rc && out->n_req == 0)
                rc = kvp_fail(err, KVP_EINPUT, "%s: the workload has no requests", spec);
            return wl_finish(&b, 0, rc, err);
        }
    return kvp_fail(err, KVP_EUSAGE, "%s: unknown workload (known: shared-prefix:N,P,U[,O], "
                    "cyclic:D,T,R[,S[,O]], grouped:G,K,P,U[,O[,cyclic|grouped]])", spec);
}
