/* sim_chunks.c - reuse beyond the prefix, a what-if: a chunk's KV (a RAG
 * passage, a block of a trace) is reused wherever it occurs in a later
 * prompt, as CacheBlend-style systems do, not only as part of a matching
 * prefix.  No runtime kvplan models does this; the replay exists to show, per
 * workload, how much a prefix-only cache leaves on the table.
 *
 * The pool holds whole chunks in whole blocks of their own (a chunk of t
 * tokens takes ceil(t / block) blocks), least recently used first out; the
 * chunks of the request being served are pinned.  Requests run one at a
 * time, as kvp_sim_run's prefix replay: every prompt chunk cached by an
 * earlier request is a hit of all its tokens, the rest are computed and
 * cached (a chunk a prompt repeats is computed with it: nothing of this
 * prompt's is cached before its prefill); the output takes blocks
 * while it is decoded and is not kept.  The last prompt token is never a hit
 * (the logits need it), as in vLLM. */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define NIL UINT32_MAX

typedef struct chunk_pool {
    uint64_t *key;          /* entry -> chunk id */
    uint64_t *blocks;       /* entry -> blocks it holds */
    uint64_t *stamp;        /* entry -> the request that last used it (1-based) */
    uint64_t *born;         /* entry -> the request that computed it */
    uint32_t *prev, *next;  /* LRU list: head least recent */
    uint32_t head, tail, free_list, n_entries;
    uint32_t *table;        /* open addressing, linear probing: id -> entry */
    uint64_t mask;
    uint64_t usable, used, peak, evictions;   /* peak: blocks a request held */
} chunk_pool;

static uint64_t slot_of(const chunk_pool *p, uint64_t id)
{
    return kvp_mix64(id) & p->mask;
}

static uint32_t find(const chunk_pool *p, uint64_t id)
{
    for (uint64_t s = slot_of(p, id);; s = (s + 1) & p->mask) {
        uint32_t e = p->table[s];
        if (e == NIL || p->key[e] == id)
            return e;
    }
}

/* backward-shift deletion keeps every probe chain unbroken without tombstones */
static void table_remove(chunk_pool *p, uint64_t id)
{
    uint64_t s = slot_of(p, id);
    while (p->key[p->table[s]] != id)
        s = (s + 1) & p->mask;
    for (uint64_t j = (s + 1) & p->mask; p->table[j] != NIL; j = (j + 1) & p->mask) {
        uint64_t home = slot_of(p, p->key[p->table[j]]);
        /* j's entry may move to s when its home is not in (s, j] cyclically */
        if (((j - home) & p->mask) >= ((j - s) & p->mask)) {
            p->table[s] = p->table[j];
            s = j;
        }
    }
    p->table[s] = NIL;
}

static void unlink_entry(chunk_pool *p, uint32_t e)
{
    if (p->prev[e] != NIL)
        p->next[p->prev[e]] = p->next[e];
    else
        p->head = p->next[e];
    if (p->next[e] != NIL)
        p->prev[p->next[e]] = p->prev[e];
    else
        p->tail = p->prev[e];
}

static void append(chunk_pool *p, uint32_t e)
{
    p->prev[e] = p->tail, p->next[e] = NIL;
    if (p->tail != NIL)
        p->next[p->tail] = e;
    else
        p->head = e;
    p->tail = e;
}

/* Evicts least recently used chunks until `blocks` more fit.  The caller has
 * checked that the request fits the pool alone, and the request's own chunks
 * sit at the tail, so the head is never one of them before room is made. */
static void make_room(chunk_pool *p, uint64_t blocks)
{
    while (p->used + blocks > p->usable && p->head != NIL) {
        uint32_t e = p->head;
        unlink_entry(p, e);
        table_remove(p, p->key[e]);
        p->used -= p->blocks[e];
        p->evictions += p->blocks[e];
        p->next[e] = p->free_list, p->free_list = e;
    }
}

static void insert(chunk_pool *p, uint64_t id, uint64_t blocks, uint64_t stamp)
{
    make_room(p, blocks);
    uint32_t e = p->free_list != NIL ? p->free_list : p->n_entries++;
    if (e == p->free_list)
        p->free_list = p->next[e];
    p->key[e] = id, p->blocks[e] = blocks, p->stamp[e] = p->born[e] = stamp;
    uint64_t s = slot_of(p, id);
    while (p->table[s] != NIL)
        s = (s + 1) & p->mask;
    p->table[s] = e;
    append(p, e);
    p->used += blocks;
}

static int pool_init(chunk_pool *p, size_t n_chunks, uint64_t usable)
{
    memset(p, 0, sizeof *p);
    size_t n = n_chunks ? n_chunks : 1, slots = 2;
    while (slots < 2 * n)
        slots *= 2;
    p->key = malloc(n * sizeof *p->key);
    p->blocks = malloc(n * sizeof *p->blocks);
    p->stamp = malloc(n * sizeof *p->stamp);
    p->born = malloc(n * sizeof *p->born);
    p->prev = malloc(n * sizeof *p->prev);
    p->next = malloc(n * sizeof *p->next);
    p->table = malloc(slots * sizeof *p->table);
    if (!p->key || !p->blocks || !p->stamp || !p->born || !p->prev || !p->next || !p->table)
        return -1;
    memset(p->table, 0xff, slots * sizeof *p->table);
    p->mask = slots - 1;
    p->head = p->tail = p->free_list = NIL;
    p->usable = usable;
    return 0;
}

static void pool_free(chunk_pool *p)
{
    free(p->key), free(p->blocks), free(p->stamp), free(p->born);
    free(p->prev), free(p->next), free(p->table);
}

uint64_t sim_chunks_request_blocks(const kvp_workload *w, const kvp_sim_request *q, uint32_t bs)
{
    uint64_t n = kvp_blocks_of(q->output_tokens ? q->output_tokens - 1 : 0, bs);
    const kvp_sim_chunk *c = w->chunks + q->chunk_off;
    for (size_t k = 0; k < q->n_chunks; k++)
        n += kvp_blocks_of(c[k].tokens, bs);
    return n;
}

static uint64_t serve(chunk_pool *p, const kvp_workload *w, const kvp_sim_request *q,
                      uint32_t bs, uint64_t stamp, int caching)
{
    uint64_t hit = 0;
    const kvp_sim_chunk *c = w->chunks + q->chunk_off;
    for (size_t k = 0; caching && k < q->n_chunks; k++) {
        uint32_t e = find(p, c[k].id);
        if (e == NIL) {
            insert(p, c[k].id, kvp_blocks_of(c[k].tokens, bs), stamp);
            continue;
        }
        /* a chunk this prompt already computed is computed again: its KV
         * exists only once the prefill that makes it has run */
        if (p->born[e] != stamp)
            hit += c[k].tokens;
        p->stamp[e] = stamp; /* pinned for this request, and the most recent */
        unlink_entry(p, e);
        append(p, e);
    }
    /* the decode's blocks, held while it runs */
    make_room(p, kvp_blocks_of(q->output_tokens ? q->output_tokens - 1 : 0, bs));
    return hit < q->prompt_tokens ? hit : q->prompt_tokens - 1;
}

int sim_chunks_run(const kvp_workload *w, const kvp_sim_config *c, kvp_sim_result *out,
                   kvp_error *err)
{
    chunk_pool p;
    uint64_t usable = c->num_blocks - (c->null_block ? 1 : 0);
    if (w->n_req && !w->n_chunks)
        return kvp_fail(err, KVP_EUSAGE, "%s: the workload has no chunks to reuse at any "
                        "position", w->name);
    if (pool_init(&p, w->n_chunks, usable)) {
        pool_free(&p);
        return kvp_fail(err, KVP_EINPUT, "sim: out of memory");
    }
    for (size_t i = 0; i < w->n_req; i++) {
        const kvp_sim_request *q = &w->req[i];
        out->requests++;
        out->prompt_tokens += q->prompt_tokens;
        uint64_t held = sim_chunks_request_blocks(w, q, c->block_size);
        if (held > usable) {
            out->oversized++; /* all computed, the cache untouched */
            continue;
        }
        /* in use, as the prefix replay counts it: the running request's blocks */
        p.peak = held > p.peak ? held : p.peak;
        out->hit_tokens += serve(&p, w, q, c->block_size, i + 1, !c->no_prefix_caching);
    }
    out->num_blocks = c->num_blocks;
    out->usable_blocks = usable;
    out->evictions = p.evictions;
    out->peak_blocks = p.peak;
    out->computed_tokens = out->prompt_tokens - out->hit_tokens;
    out->hit_rate = out->prompt_tokens ? (double)out->hit_tokens / (double)out->prompt_tokens : 0;
    pool_free(&p);
    return 0;
}
