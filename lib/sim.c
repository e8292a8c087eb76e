/* sim.c - the prefix-cache simulator: vLLM v1's block pool (block_pool.py,
 * kv_cache_utils.py FreeKVCacheBlockQueue) replayed one request at a time.
 * The rules it mirrors are in ../shared/reference/vllm-kv-rules.md §11: only
 * full blocks are cached, the last prompt token is never a hit, allocation
 * pops the free queue's head and evicts lazily, and a finished request's
 * blocks are freed in reverse order, hashed ones to the tail (LRU). */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* Upper bound on the pool: 2^24 blocks (268M tokens at 16) of 20 B plus the
 * map is ~450 MB, far above any real GPU pool. */
#define SIM_MAX_BLOCKS (1ull << 24)

/* ---- the hash -> block map (linear probing, backward-shift deletion) ---- */

static uint64_t map_slot(const sim_pool *p, uint64_t hash)
{
    uint64_t i = kvp_mix64(hash) & p->map_mask;
    while (p->map[i] != SIM_NIL && p->blk[p->map[i]].hash != hash)
        i = (i + 1) & p->map_mask;
    return i;
}

static uint32_t map_find(const sim_pool *p, uint64_t hash)
{
    return p->map[map_slot(p, hash)];
}

/* Identical content is not de-duplicated: vLLM keeps every block cached
 * under a hash, in insertion order, and a lookup returns the first.  The map
 * points at that first block; the others hang off it through `dup`. */
static void map_insert(sim_pool *p, uint32_t id)
{
    uint64_t i = map_slot(p, p->blk[id].hash);
    p->blk[id].dup = SIM_NIL;
    if (p->map[i] == SIM_NIL) {
        p->map[i] = id;
        return;
    }
    uint32_t last = p->map[i];
    while (p->blk[last].dup != SIM_NIL)
        last = p->blk[last].dup;
    p->blk[last].dup = id;
}

static void map_remove(sim_pool *p, uint32_t id)
{
    uint64_t i = map_slot(p, p->blk[id].hash);
    if (p->map[i] != id) { /* a later duplicate: unlink it from the chain */
        uint32_t b = p->map[i];
        while (p->blk[b].dup != id)
            b = p->blk[b].dup;
        p->blk[b].dup = p->blk[id].dup;
        return;
    }
    if (p->blk[id].dup != SIM_NIL) { /* the next duplicate takes the slot */
        p->map[i] = p->blk[id].dup;
        return;
    }
    p->map[i] = SIM_NIL;
    for (uint64_t j = (i + 1) & p->map_mask; p->map[j] != SIM_NIL; j = (j + 1) & p->map_mask) {
        uint64_t home = kvp_mix64(p->blk[p->map[j]].hash) & p->map_mask;
        /* move j back into the hole unless its home lies in (i, j] */
        if (((j - home) & p->map_mask) >= ((j - i) & p->map_mask)) {
            p->map[i] = p->map[j];
            p->map[j] = SIM_NIL;
            i = j;
        }
    }
}

/* ---- the free queue (doubly linked, head = next to allocate) ---- */

static void q_unlink(sim_pool *p, uint32_t id)
{
    sim_block *b = &p->blk[id];
    if (b->prev != SIM_NIL) p->blk[b->prev].next = b->next; else p->head = b->next;
    if (b->next != SIM_NIL) p->blk[b->next].prev = b->prev; else p->tail = b->prev;
    b->prev = b->next = SIM_NIL;
    b->in_queue = 0;
    p->n_free--;
}

static void q_append(sim_pool *p, uint32_t id)
{
    sim_block *b = &p->blk[id];
    b->prev = p->tail;
    b->next = SIM_NIL;
    if (p->tail != SIM_NIL) p->blk[p->tail].next = id; else p->head = id;
    p->tail = id;
    b->in_queue = 1;
    p->n_free++;
}

static void q_prepend(sim_pool *p, uint32_t id)
{
    sim_block *b = &p->blk[id];
    b->next = p->head;
    b->prev = SIM_NIL;
    if (p->head != SIM_NIL) p->blk[p->head].prev = id; else p->tail = id;
    p->head = id;
    b->in_queue = 1;
    p->n_free++;
}

int sim_pool_check(uint64_t n_blocks, uint32_t block_size, int null_block, kvp_error *err)
{
    if (block_size == 0)
        return kvp_fail(err, KVP_EUSAGE, "sim: the block size must be at least 1");
    if (n_blocks <= (uint64_t)(null_block ? 1 : 0) || n_blocks > SIM_MAX_BLOCKS)
        return kvp_fail(err, KVP_EINPUT, "sim: %llu blocks: the pool needs %s1 usable block "
                        "and at most %llu blocks", (unsigned long long)n_blocks,
                        null_block ? "the null block plus " : "", SIM_MAX_BLOCKS);
    return 0;
}

int sim_pool_init(sim_pool *p, uint64_t n_blocks, uint32_t block_size, int null_block,
                  int unhashed_to_tail, kvp_error *err)
{
    memset(p, 0, sizeof *p);
    if (sim_pool_check(n_blocks, block_size, null_block, err))
        return -1;
    uint64_t map_n = 16;
    while (map_n < 2 * n_blocks)
        map_n <<= 1;
    p->blk = calloc(n_blocks, sizeof *p->blk);
    p->map = malloc(map_n * sizeof *p->map);
    if (!p->blk || !p->map) {
        sim_pool_destroy(p);
        return kvp_fail(err, KVP_EINPUT, "sim: %llu blocks: out of memory",
                        (unsigned long long)n_blocks);
    }
    memset(p->map, 0xff, map_n * sizeof *p->map);
    p->map_mask = map_n - 1;
    p->n_blocks = (uint32_t)n_blocks;
    p->block_size = block_size;
    p->unhashed_to_tail = unhashed_to_tail;
    p->head = p->tail = SIM_NIL;
    /* initially in id order; vLLM pops block 0 at once as the null block */
    for (uint32_t i = null_block ? 1 : 0; i < p->n_blocks; i++)
        q_append(p, i);
    p->usable = p->n_free;
    return 0;
}

void sim_pool_destroy(sim_pool *p)
{
    free(p->blk);
    free(p->map);
    p->blk = NULL;
    p->map = NULL;
}

static int push_block(sim_req *r, uint32_t id, kvp_error *err)
{
    if (r->n_blocks == r->cap)
        return kvp_fail(err, KVP_EINPUT, "sim: a request holds more than %zu blocks", r->cap);
    r->blocks[r->n_blocks++] = id;
    return 0;
}

/* A hit: the block leaves the free queue if no running request held it. */
static void touch(sim_pool *p, uint32_t id)
{
    if (p->blk[id].ref_cnt++ == 0) {
        q_unlink(p, id);
        if (++p->in_use > p->peak)
            p->peak = p->in_use;
    }
}

/* Pops the head; a block that still has a hash loses it now (lazy eviction). */
static uint32_t pop_head(sim_pool *p)
{
    uint32_t id = p->head;
    q_unlink(p, id);
    sim_block *b = &p->blk[id];
    if (b->hashed) {
        map_remove(p, id);
        b->hashed = 0;
        p->evictions++;
    }
    b->ref_cnt = 1;
    if (++p->in_use > p->peak)
        p->peak = p->in_use;
    return id;
}

/* Blocks [from, to) of the request are full: register their hashes, where
 * the workload gives one. */
static void cache_blocks(sim_pool *p, sim_req *r, uint64_t from, uint64_t to)
{
    if (to > r->n_hashes)
        to = r->n_hashes;
    for (uint64_t i = from; i < to; i++) {
        sim_block *b = &p->blk[r->blocks[i]];
        b->hash = r->hashes[i];
        b->hashed = 1;
        map_insert(p, r->blocks[i]);
    }
}

void sim_pool_cache(sim_pool *p, sim_req *r, uint64_t from, uint64_t to)
{
    cache_blocks(p, r, from, to < r->n_blocks ? to : r->n_blocks);
}

static int alloc_blocks(sim_pool *p, sim_req *r, uint64_t n, kvp_error *err)
{
    if (n > p->n_free)
        return kvp_fail(err, KVP_EINPUT, "sim: the pool has %u free blocks, a request needs "
                        "%llu more", p->n_free, (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++)
        if (push_block(r, pop_head(p), err))
            return -1;
    return 0;
}

int sim_pool_admit(sim_pool *p, sim_req *r, uint64_t prompt_tokens, kvp_error *err)
{
    uint64_t bs = p->block_size, need = (prompt_tokens + bs - 1) / bs;
    /* the last prompt token is recomputed for its logits: at most (n-1)/bs hits */
    uint64_t max_hit = prompt_tokens ? (prompt_tokens - 1) / bs : 0, hits = 0, free_hits = 0;
    r->n_blocks = 0;
    r->hit_tokens = 0;
    if (max_hit > r->n_hashes)
        max_hit = r->n_hashes;
    for (; hits < max_hit; hits++) {
        uint32_t id = map_find(p, r->hashes[hits]);
        if (id == SIM_NIL)
            break;
        free_hits += p->blk[id].ref_cnt == 0;
    }
    if (need - hits + free_hits > p->n_free)
        return kvp_fail(err, KVP_EINPUT, "sim: the pool has %u free blocks, a request needs "
                        "%llu", p->n_free, (unsigned long long)(need - hits + free_hits));
    for (uint64_t i = 0; i < hits; i++) {
        uint32_t id = map_find(p, r->hashes[i]);
        touch(p, id);
        if (push_block(r, id, err))
            return -1;
    }
    r->hit_tokens = hits * bs;
    if (alloc_blocks(p, r, need - hits, err))
        return -1;
    r->kv_tokens = prompt_tokens;
    cache_blocks(p, r, hits, prompt_tokens / bs);
    return 0;
}

int sim_pool_grow(sim_pool *p, sim_req *r, uint64_t kv_tokens, kvp_error *err)
{
    uint64_t bs = p->block_size, need = (kv_tokens + bs - 1) / bs;
    if (kv_tokens <= r->kv_tokens)
        return 0;
    if (alloc_blocks(p, r, need - r->n_blocks, err))
        return -1;
    cache_blocks(p, r, r->kv_tokens / bs, kv_tokens / bs);
    r->kv_tokens = kv_tokens;
    return 0;
}

sim_hit sim_pool_lookup(const sim_pool *p, const sim_req *r, uint64_t num_tokens)
{
    sim_hit h = {0, 0};
    uint64_t max_hit = num_tokens ? (num_tokens - 1) / p->block_size : 0;
    if (max_hit > r->n_hashes)
        max_hit = r->n_hashes;
    for (; h.blocks < max_hit; h.blocks++) {
        uint32_t id = map_find(p, r->hashes[h.blocks]);
        if (id == SIM_NIL)
            break;
        h.in_queue += p->blk[id].ref_cnt == 0;
    }
    return h;
}

/* get_num_blocks_to_allocate: blocks for `tokens` beyond those held and
 * hit, plus the hit blocks that would leave the free queue */
static uint64_t blocks_to_allocate(const sim_pool *p, const sim_req *r, uint64_t hits,
                                   uint64_t hits_in_queue, uint64_t tokens)
{
    uint64_t need = tokens / p->block_size + (tokens % p->block_size != 0);
    uint64_t have = r->n_blocks + hits;
    return (need > have ? need - have : 0) + hits_in_queue;
}

int sim_pool_allocate(sim_pool *p, sim_req *r, const sim_hit *hit, uint64_t tokens,
                      uint64_t reserve_tokens, kvp_error *err)
{
    uint64_t bs = p->block_size, hits = hit ? hit->blocks : 0, hq = hit ? hit->in_queue : 0;
    if (hits && r->n_blocks)
        return kvp_fail(err, KVP_EINPUT, "sim: a prefix hit for a request that holds blocks");
    if (blocks_to_allocate(p, r, hits, hq, tokens) > p->n_free ||
        (reserve_tokens && blocks_to_allocate(p, r, hits, hq, reserve_tokens) > p->n_free))
        return 1;
    for (uint64_t i = 0; i < hits; i++) {
        uint32_t id = map_find(p, r->hashes[i]);
        touch(p, id);
        if (push_block(r, id, err))
            return -1;
    }
    if (hits) {
        r->kv_tokens = hits * bs;
        r->hit_tokens = hits * bs;
    }
    uint64_t fresh = blocks_to_allocate(p, r, 0, 0, tokens);
    if (alloc_blocks(p, r, fresh, err))
        return -1;
    if (tokens > r->kv_tokens) {
        cache_blocks(p, r, r->kv_tokens / bs, tokens / bs);
        r->kv_tokens = tokens;
    }
    return 0;
}

void sim_pool_free(sim_pool *p, sim_req *r)
{
    /* tail of the chain first, so the longest prefix is evicted first */
    for (size_t i = r->n_blocks; i-- > 0;) {
        uint32_t id = r->blocks[i];
        sim_block *b = &p->blk[id];
        if (--b->ref_cnt)
            continue;
        p->in_use--;
        if (b->hashed || p->unhashed_to_tail)
            q_append(p, id);
        else
            q_prepend(p, id); /* nothing to reuse in it: allocate it first */
    }
    r->n_blocks = 0;
    r->kv_tokens = 0;
}

size_t sim_pool_queue(const sim_pool *p, uint32_t *out, size_t cap)
{
    size_t n = 0;
    for (uint32_t id = p->head; id != SIM_NIL && n < cap; id = p->blk[id].next)
        out[n++] = id;
    return n;
}

/* ---- the public replay ---- */

void kvp_sim_defaults(kvp_sim_config *c)
{
    memset(c, 0, sizeof *c);
    c->block_size = 16;
    c->null_block = 1;
}

/* KV slots one request fills: the prompt, then every output token but the
 * last, which is sampled and never fed back. */
static uint64_t kv_total(const kvp_sim_request *q)
{
    return q->prompt_tokens + (q->output_tokens ? q->output_tokens - 1 : 0);
}

/* caching off: the request has no hashes, so nothing is looked up or cached
 * (vLLM's --no-enable-prefix-caching allocates plain blocks) */
static int replay(const kvp_workload *w, sim_pool *p, uint32_t *buf, int caching,
                  kvp_sim_result *out, kvp_error *err)
{
    for (size_t i = 0; i < w->n_req; i++) {
        const kvp_sim_request *q = &w->req[i];
        uint64_t kv = kv_total(q), need = (kv + p->block_size - 1) / p->block_size;
        out->requests++;
        out->prompt_tokens += q->prompt_tokens;
        if (need > p->usable) {
            out->oversized++; /* vLLM would refuse it; here it is all computed */
            continue;
        }
        /* a trace whose prompts never fill a block has no hashes at all */
        sim_req r = {.hashes = caching && q->n_hashes ? w->hashes + q->hash_off : NULL,
                     .n_hashes = caching ? q->n_hashes : 0,
                     .blocks = buf, .cap = p->usable};
        kvp_error why;
        if (sim_pool_admit(p, &r, q->prompt_tokens, &why) || sim_pool_grow(p, &r, kv, &why))
            return kvp_fail(err, KVP_EINPUT, "%s: request %zu: %s", w->name, i + 1, why.msg);
        out->hit_tokens += r.hit_tokens;
        sim_pool_free(p, &r);
    }
    return 0;
}

int kvp_sim_run(const kvp_workload *w, const kvp_sim_config *c, kvp_sim_result *out,
                kvp_error *err)
{
    sim_pool p;
    memset(out, 0, sizeof *out);
    if (c->block_size != w->block_size)
        return kvp_fail(err, KVP_EUSAGE, "%s: its hashes are for %u-token blocks, not %u",
                        w->name, w->block_size, c->block_size);
    if (c->any_position) /* the pool's limits, the chunks' own replay */
        return sim_pool_check(c->num_blocks, c->block_size, c->null_block, err) ? -1
               : sim_chunks_run(w, c, out, err);
    if (sim_pool_init(&p, c->num_blocks, c->block_size, c->null_block,
                      c->free_unhashed_to_tail, err))
        return -1;
    uint32_t *buf = malloc((size_t)p.usable * sizeof *buf);
    if (!buf) {
        sim_pool_destroy(&p);
        return kvp_fail(err, KVP_EINPUT, "sim: out of memory");
    }
    int rc = replay(w, &p, buf, !c->no_prefix_caching, out, err);
    out->num_blocks = c->num_blocks;
    out->usable_blocks = p.usable;
    out->evictions = p.evictions;
    out->peak_blocks = p.peak;
    out->computed_tokens = out->prompt_tokens - out->hit_tokens;
    out->hit_rate = out->prompt_tokens ? (double)out->hit_tokens / (double)out->prompt_tokens : 0;
    free(buf);
    sim_pool_destroy(&p);
    return rc;
}

int kvp_sim_sweep(const kvp_workload *w, const kvp_sim_config *c, const uint64_t *num_blocks,
                  size_t n, kvp_sim_result *out, kvp_error *err,
                  void (*progress)(size_t done, size_t n, void *arg), void *arg)
{
    for (size_t i = 0; i < n; i++) {
        kvp_sim_config ci = *c;
        ci.num_blocks = num_blocks[i];
        if (kvp_sim_run(w, &ci, &out[i], err))
            return -1;
        if (progress)
            progress(i + 1, n, arg);
    }
    return 0;
}

size_t kvp_sim_cliff(const kvp_sim_result *r, size_t n)
{
    size_t best = 0;
    double jump = 0;
    for (size_t i = 1; i < n; i++)
        if (r[i].hit_rate - r[i - 1].hit_rate > jump)
            jump = r[i].hit_rate - r[i - 1].hit_rate, best = i;
    return best;
}
