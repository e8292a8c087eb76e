/* trace_int.h - what the workload readers share: one request model (a prompt
 * as chunks of content, an output length, an arrival, a conversation) and
 * the builder that turns it into the chained block hashes the simulators
 * key on.  A reader parses its format into chunks and never hashes itself,
 * so every format is replayable at any block size. */
#ifndef KVP_TRACE_INT_H
#define KVP_TRACE_INT_H

#include <stdio.h>

#include "../kvp_int.h"

/* More requests or blocks than this is past any trace worth replaying one by
 * one, and refusing early keeps a hostile file from costing gigabytes. */
#define WL_MAX_REQUESTS (1ull << 24)
#define WL_MAX_HASHES (1ull << 25)
#define WL_MAX_CHUNKS (1ull << 25)
#define WL_MAX_CONVS (1ull << 24)

typedef struct wl_builder {
    kvp_workload *w;
    size_t cap_req, cap_h, cap_c;
    uint64_t next_unique;
} wl_builder;

/* Namespaces of chunk ids, so that ids from different sources never meet:
 * a trace's own ids (per conversation where the format scopes them so),
 * content only this request has, and the generators' kinds. */
enum {
    WL_NS_TRACE = 1,  /* a trace's global ids (Mooncake's hash_ids, RAGPulse's chunks) */
    WL_NS_CONV,       /* ids scoped to one conversation (kv-cache-tester "local") */
    WL_NS_UNIQUE,     /* content seen once: a partial block with no id, an Azure prompt */
    WL_NS_TOKENS,     /* a block of token ids, named by its content */
    WL_NS_GEN         /* synthetic generators (their own sub-kinds) */
};

/* The id of `local` in namespace `ns` (scope: a conversation, or 0): 63 bits,
 * so that kvplan's own JSONL can write it as a JSON integer. */
uint64_t wl_chunk_id(unsigned ns, uint64_t scope, uint64_t local);

void wl_init(wl_builder *b, kvp_workload *w, const char *name, const char *format,
             uint32_t block_size);
/* Adds a request: its prompt as n chunks (at least one token in all), its
 * output length, arrival in ms and conversation (1-based, 0 none).  Its full
 * prompt blocks are hashed at w->block_size, each hash naming the whole
 * prefix (vLLM's hash_block_tokens); with w->hash_output the output is unique
 * content hashed too (generators: decode blocks are cached, never hit). */
int wl_add(wl_builder *b, const kvp_sim_chunk *c, size_t n, uint64_t output,
           double timestamp_ms, uint32_t conv, kvp_error *err);
/* A chunk id nothing else in the workload has. */
uint64_t wl_unique(wl_builder *b);
/* Orders the requests by arrival (stable: equal times keep file order),
 * refuses an empty workload; on error the workload is freed. */
int wl_finish(wl_builder *b, int sort, int rc, kvp_error *err);

/* Line by line over the text file PATH: calls fn for each non-blank line
 * with "PATH:LINE" as where; stops at the first error.  A file that will not
 * open is "PATH: reason" (and " (what)" when what names the file's role). */
typedef int (*wl_line_fn)(void *ctx, char *line, size_t len, const char *where,
                          kvp_error *err);
int wl_each_line(const char *path, const char *what, wl_line_fn fn, void *ctx,
                 kvp_error *err);
/* JSON Lines: each non-blank line parsed as a JSON object (a UTF-8
 * byte-order mark before it skipped) and passed to fn as a json_t *; a line
 * that is not one is an error naming PATH:LINE. */
typedef int (*wl_json_fn)(void *ctx, void *json_object, const char *where, kvp_error *err);
int wl_each_json_line(const char *path, const char *what, wl_json_fn fn, void *ctx,
                      kvp_error *err);
/* A whole-number field of a JSON object in [min, 2^40]. */
int wl_json_count(void *json_object, const char *key, uint64_t min, const char *where,
                  uint64_t *out, kvp_error *err);

/* kvplan's JSONL (tokens.c reads it, write.c writes it): arrivals in
 * seconds up to 1e12 (31,000 years: past any trace, still exact in ms), kept
 * to the nanosecond below 2^51 ns; chunk ids below 2^63 (JSON integers) */
#define JSONL_MAX_ARRIVAL_S 1e12
#define JSONL_NS_EXACT 0x1p51
#define JSONL_ID_MAX 0x7fffffffffffffffull

/* the readers, one per format (lib/trace/<format>.c) */
int wl_read_mooncake(const char *path, uint32_t bs, kvp_workload *w, kvp_error *err);
int wl_read_kvtester(const char *path, uint32_t bs, kvp_workload *w, kvp_error *err);
int wl_read_ragpulse(const char *path, uint32_t bs, kvp_workload *w, kvp_error *err);
int wl_read_azure(const char *path, uint32_t bs, kvp_workload *w, kvp_error *err);
int wl_read_tokens(const char *path, uint32_t bs, kvp_workload *w, kvp_error *err);

#endif
