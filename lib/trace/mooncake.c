/* mooncake.c - Mooncake's JSONL traces (FAST'25): timestamp (ms),
 * input_length, output_length and hash_ids, one id per 512-token block, each
 * naming the whole prefix up to that block, the last block partial.  Each
 * block becomes a chunk of its id, so the replay can use any block size. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "trace_int.h"

#define MOONCAKE_BLOCK 512u

typedef struct mc_ctx {
    wl_builder b;
    kvp_sim_chunk *c;
    size_t cap;
} mc_ctx;

static int mc_request(void *ctx, void *json, const char *where, kvp_error *err)
{
    mc_ctx *x = ctx;
    json_t *o = json;
    json_t *ts = json_object_get(o, "timestamp"), *ids = json_object_get(o, "hash_ids");
    uint64_t in, out;
    if (!ts || !json_is_number(ts) || json_number_value(ts) < 0)
        return kvp_fail(err, KVP_EINPUT, "%s: %s \"timestamp\" (a number of ms, >= 0)", where,
                        ts ? "bad" : "no");
    if (wl_json_count(o, "input_length", 1, where, &in, err) ||
        wl_json_count(o, "output_length", 0, where, &out, err))
        return -1;
    uint64_t want = (in + MOONCAKE_BLOCK - 1) / MOONCAKE_BLOCK;
    if (!json_is_array(ids))
        return kvp_fail(err, KVP_EINPUT, "%s: %s \"hash_ids\" (an array of block ids)", where,
                        ids ? "bad" : "no");
    if (json_array_size(ids) != want)
        return kvp_fail(err, KVP_EINPUT, "%s: \"hash_ids\" has %zu ids, input_length %llu needs "
                        "%llu (one per 512-token block)", where, json_array_size(ids),
                        (unsigned long long)in, (unsigned long long)want);
    if (want > x->cap) {
        void *q = realloc(x->c, want * sizeof *x->c);
        if (!q)
            return kvp_fail(err, KVP_EINPUT, "%s: out of memory", where);
        x->c = q, x->cap = want;
    }
    for (size_t i = 0; i < want; i++) {
        json_t *v = json_array_get(ids, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return kvp_fail(err, KVP_EINPUT, "%s: hash_ids[%zu] is not a whole number >= 0",
                            where, i);
        uint64_t len = i + 1 < want ? MOONCAKE_BLOCK : in - (want - 1) * MOONCAKE_BLOCK;
        x->c[i] = (kvp_sim_chunk){wl_chunk_id(WL_NS_TRACE, 0, (uint64_t)json_integer_value(v)),
                                  len};
    }
    return wl_add(&x->b, x->c, want, out, json_number_value(ts), 0, err);
}

int wl_read_mooncake(const char *path, uint32_t bs, kvp_workload *w, kvp_error *err)
{
    mc_ctx x = {.c = NULL};
    wl_init(&x.b, w, path, "mooncake", bs);
    int rc = wl_each_json_line(path, NULL, mc_request, &x, err);
    free(x.c);
    /* the trace is in arrival order; a replay keeps the file's order */
    return wl_finish(&x.b, 0, rc, err);
}

int kvp_workload_mooncake(const char *path, kvp_workload *out, kvp_error *err)
{
    return wl_read_mooncake(path, MOONCAKE_BLOCK, out, err);
}
