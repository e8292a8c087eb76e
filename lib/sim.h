/* sim.h - the simulator's block pool, exposed inside the library so that the
 * unit test can drive it step by step (vLLM's design-doc example interleaves
 * two requests) and inspect the free queue. */
#ifndef KVP_SIM_H
#define KVP_SIM_H

#include "kvp_int.h"

typedef struct sim_block {
    uint64_t hash;
    uint32_t prev, next;  /* free-queue links; SIM_NIL at the ends */
    uint32_t dup;         /* the next block cached with the same hash, or SIM_NIL */
    uint32_t ref_cnt;
    uint8_t hashed, in_queue;
} sim_block;

#define SIM_NIL UINT32_MAX

typedef struct sim_pool {
    sim_block *blk;
    uint32_t n_blocks, block_size;
    uint32_t head, tail, n_free, usable;
    int unhashed_to_tail;
    uint32_t *map;        /* open addressing: hash -> block id, SIM_NIL empty */
    uint64_t map_mask;
    uint64_t evictions, in_use, peak;
} sim_pool;

/* A request in flight: the blocks it holds (in a caller-owned array of cap
 * ids) and the tokens whose KV they store. */
typedef struct sim_req {
    const uint64_t *hashes;
    size_t n_hashes;
    uint32_t *blocks;
    size_t n_blocks, cap;
    uint64_t kv_tokens;
    uint64_t hit_tokens;
} sim_req;

/* The pool's limits: a usable block beside the null one, at most SIM_MAX_BLOCKS. */
int sim_pool_check(uint64_t n_blocks, uint32_t block_size, int null_block, kvp_error *err);
int sim_pool_init(sim_pool *p, uint64_t n_blocks, uint32_t block_size, int null_block,
                  int unhashed_to_tail, kvp_error *err);
void sim_pool_destroy(sim_pool *p);
/* Lookup (the last-token rule), touch the hits, allocate and cache the prompt. */
int sim_pool_admit(sim_pool *p, sim_req *r, uint64_t prompt_tokens, kvp_error *err);
/* Decode: the request now stores kv_tokens tokens; new blocks, full ones cached. */
int sim_pool_grow(sim_pool *p, sim_req *r, uint64_t kv_tokens, kvp_error *err);
/* Frees the request's blocks in reverse order; the request then holds none. */
void sim_pool_free(sim_pool *p, sim_req *r);
/* ---- what a step-by-step scheduler needs (lib/serve/sched_vllm.c) ---- */

/* A prefix hit found by sim_pool_lookup and not yet taken: whole blocks, and
 * how many of them sit in the free queue (taking those shrinks the pool). */
typedef struct sim_hit {
    uint64_t blocks, in_queue;
} sim_hit;

/* get_computed_blocks: the request's cached leading blocks for num_tokens
 * tokens, at most (num_tokens - 1) / block_size (the last token is always
 * recomputed), stopping at the first miss.  Changes nothing. */
sim_hit sim_pool_lookup(const sim_pool *p, const sim_req *r, uint64_t num_tokens);
/* allocate_slots: the request (holding blocks for r->kv_tokens tokens, or
 * none and then taking `hit` first) will store `tokens` tokens.  Blocks
 * needed net of those held and hit, plus hit blocks taken from the free
 * queue, must fit the free queue; with reserve_tokens > 0 (a waiting
 * request's admission gate) so must the blocks for reserve_tokens.  Full
 * blocks up to `tokens` are cached where the request has hashes.  Returns
 * 0, 1 when it does not fit (nothing changed), -1 on error. */
int sim_pool_allocate(sim_pool *p, sim_req *r, const sim_hit *hit, uint64_t tokens,
                      uint64_t reserve_tokens, kvp_error *err);

/* Caches the request's blocks [from, to) under its hashes: blocks allocated
 * for KV still being loaded from another tier become hittable only once it
 * has arrived (vLLM's delay_cache_blocks). */
void sim_pool_cache(sim_pool *p, sim_req *r, uint64_t from, uint64_t to);

/* The any-position what-if (lib/sim_chunks.c): kvp_sim_run with
 * c->any_position set. */
int sim_chunks_run(const kvp_workload *w, const kvp_sim_config *c, kvp_sim_result *out,
                   kvp_error *err);
/* The blocks a request holds at its peak there: its prompt chunks, each in
 * whole blocks (a chunk the prompt repeats counted each time, which can only
 * overstate it), and its decode (every output token but the last is fed back). */
uint64_t sim_chunks_request_blocks(const kvp_workload *w, const kvp_sim_request *q, uint32_t bs);

/* Copies the free queue, head first; returns its length. */
size_t sim_pool_queue(const sim_pool *p, uint32_t *out, size_t cap);

#endif
