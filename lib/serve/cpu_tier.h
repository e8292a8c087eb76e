/* cpu_tier.h - the host-memory tier behind the GPU prefix cache
 * (serving-sim-rules.md §3.5): an LRU of whole prompt blocks keyed by the
 * workload's block hashes, as vLLM's native OffloadingConnector keeps them
 * (CPUOffloadingManager with its LRU policy).  The schedulers decide when to
 * store and look up; this file only remembers which blocks the host holds,
 * in which order they were last used, and which are pinned by a load. */
#ifndef KVP_CPU_TIER_H
#define KVP_CPU_TIER_H

#include "../kvp_int.h"

typedef struct cpu_chunk {
    uint64_t hash;
    uint32_t prev, next;       /* LRU list, least recently used at the head */
    uint32_t ref;              /* loads in flight that read it: not evictable */
} cpu_chunk;

typedef struct cpu_tier {
    uint64_t capacity;         /* chunks the host memory holds */
    cpu_chunk *c;
    uint32_t n, cap_nodes;     /* nodes in use; nodes allocated at most */
    uint32_t head, tail;
    uint32_t *map;             /* linear probing: hash -> node, CT_NIL empty */
    uint64_t mask;
    uint64_t stores, refreshes, skipped, evictions;
} cpu_tier;

/* A tier of `capacity` chunks for a workload of at most `distinct` block
 * hashes (the tier never holds more than that, so it allocates no more). */
int cpu_tier_init(cpu_tier *t, uint64_t capacity, uint64_t distinct, kvp_error *err);
void cpu_tier_destroy(cpu_tier *t);
/* Consecutive hashes h[from], h[from+1], ... held by the tier, at most
 * to - from; each hit becomes the most recently used. */
uint64_t cpu_tier_match(cpu_tier *t, const uint64_t *h, uint64_t from, uint64_t to);
/* A load reads h[from..to): pin (+1) or release (-1) those chunks. */
void cpu_tier_pin(cpu_tier *t, const uint64_t *h, uint64_t from, uint64_t to, int delta);
/* Stores one block: 1 stored (evicting the least recently used unpinned
 * chunk if full), 0 already held (now most recent), -1 skipped (full of
 * pinned chunks, as vLLM skips a store it cannot make room for). */
int cpu_tier_store(cpu_tier *t, uint64_t hash);

#endif
