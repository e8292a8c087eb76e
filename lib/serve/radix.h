/* radix.h - SGLang's RadixAttention prefix tree (radix_cache.py) over a
 * kvplan workload's block hashes, for the serving simulator's --policy radix.
 *
 * Token granularity, mapped onto hash ids: SGLang keys its tree by token ids
 * with page_size 1.  A kvplan workload names a prompt only by the hashes of
 * its full blocks of block_size tokens (equal hash = equal prefix through that
 * block) and says nothing of the tokens after the last full block.  So an edge
 * here is a run of hash ids, each standing for block_size tokens, and a
 * request's tokens past its last full block (prompt tail, and outputs when it
 * finishes) hang below as a "unique" leaf that no lookup ever enters.  Every
 * size is in TOKENS, as SGLang's pool counts them: a node's value is its
 * token count (ids x block_size, or the unique leaf's length).
 * Rules: ../shared/reference/serving-sim-rules.md section 2.1-2.5. */
#ifndef KVP_SERVE_RADIX_H
#define KVP_SERVE_RADIX_H

#include "../kvp_int.h"

typedef struct radix_tree radix_tree;

/* node handles; the root is 0 and is never evicted */
#define RADIX_ROOT 0u

/* The tree keeps pointers into the id arrays it is given (its edges are
 * slices of them): they must outlive it. */
radix_tree *radix_new(uint32_t block_size);
void radix_free(radix_tree *t);

/* Walks ids[0..n) from the root, splitting the edge where a match ends
 * inside it, and refreshes last_access_time on every node of the path.
 * Returns the ids matched; *last is the deepest matched node (RADIX_ROOT if
 * none).  -1 only when memory runs out (the split needs a node). */
int64_t radix_match(radix_tree *t, const uint64_t *ids, size_t n, uint32_t *last);

/* Inserts ids[0..n) (walking and splitting like radix_match, one new leaf
 * for the unmatched rest); *last is the node ending the run and *present
 * the ids that were already in the tree.  -1 when memory runs out. */
int radix_insert(radix_tree *t, const uint64_t *ids, size_t n, uint32_t *last, uint64_t *present);

/* Hangs a leaf of `tokens` never-matchable tokens below `parent`. */
int radix_add_unique(radix_tree *t, uint32_t parent, uint64_t tokens, uint32_t *leaf);

/* A new last_access_time for node and every ancestor. */
void radix_touch(radix_tree *t, uint32_t node);

/* lock_ref +1 / -1 on node and every ancestor; a node's tokens move between
 * evictable and protected as its count leaves or reaches 0. */
void radix_lock(radix_tree *t, uint32_t node);
void radix_unlock(radix_tree *t, uint32_t node);

/* Evicts least-recently-used unlocked leaves (ties: the older node first),
 * a parent joining the candidates once its last child goes, until at least
 * `tokens` are freed or none is left.  Returns the tokens freed. */
uint64_t radix_evict(radix_tree *t, uint64_t tokens);

uint64_t radix_evictable(const radix_tree *t);
uint64_t radix_protected(const radix_tree *t);
uint64_t radix_node_tokens(const radix_tree *t, uint32_t node);
uint32_t radix_parent(const radix_tree *t, uint32_t node);
size_t radix_nodes(const radix_tree *t); /* live nodes, the root included */

#endif
