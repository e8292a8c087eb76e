/* test_radix.c - the radix tree against serving-sim-rules.md 2.1-2.4 on
 * trees small enough to draw: a partial match splits the edge, insert
 * reports what was present, lock refs move tokens between evictable and
 * protected, eviction takes the least recently used unlocked leaf and
 * climbs to its parent, locked paths stay. Block size 4: one id = 4 tokens. */
#include "check.h"
#include "serve/radix.h"

static void match_split_insert(void)
{
    static const uint64_t a[] = {1, 2, 3, 4}, b[] = {1, 2, 9}, c[] = {1, 2, 5};
    radix_tree *t = radix_new(4);
    uint32_t last, mid, leaf5;
    uint64_t present;
    CHECK("insert into an empty tree: nothing present",
          radix_insert(t, a, 4, &last, &present) == 0 && present == 0);
    CHECK("the new leaf holds 4 ids = 16 tokens, all evictable",
          radix_evictable(t) == 16 && radix_protected(t) == 0 && radix_nodes(t) == 2);
    CHECK("match 1,2,9: two ids", radix_match(t, b, 3, &mid) == 2);
    CHECK("the match split the edge: a node of 2 ids (8 tokens) above the rest",
          radix_nodes(t) == 3 && radix_node_tokens(t, mid) == 8 &&
              radix_parent(t, last) == mid && radix_node_tokens(t, last) == 8);
    CHECK("a split moves no tokens", radix_evictable(t) == 16);
    CHECK("insert 1,2,5: 2 ids present, one new leaf below the split",
          radix_insert(t, c, 3, &leaf5, &present) == 0 && present == 2 &&
              radix_parent(t, leaf5) == mid && radix_evictable(t) == 20);
    uint32_t whole;
    CHECK("a full match of 1,2,3,4 ends at the first leaf",
          radix_match(t, a, 4, &whole) == 4 && whole == last);
    CHECK("a miss on the first id matches nothing",
          radix_match(t, (const uint64_t[]){7}, 1, &whole) == 0 && whole == RADIX_ROOT);
    uint32_t u;
    CHECK("a unique leaf of 7 tokens adds 7 evictable tokens",
          radix_add_unique(t, leaf5, 7, &u) == 0 && radix_evictable(t) == 27);
    CHECK("...and no lookup enters it: 1,2,5 still ends at its parent",
          radix_match(t, c, 3, &whole) == 3 && whole == leaf5);
    radix_free(t);
}

static void locks_and_eviction(void)
{
    static const uint64_t a[] = {1, 2, 3, 4}, c[] = {1, 2, 5};
    radix_tree *t = radix_new(4);
    uint32_t la, lc;
    uint64_t present;
    radix_insert(t, a, 4, &la, &present);
    radix_insert(t, c, 3, &lc, &present); /* splits: [1,2] -> {[3,4], [5]} */
    radix_lock(t, lc);
    CHECK("locking leaf 5 protects its path: [1,2] (8) + [5] (4)",
          radix_protected(t) == 12 && radix_evictable(t) == 8);
    CHECK("evict(1) takes the whole unlocked leaf [3,4]: 8 tokens", radix_evict(t, 1) == 8);
    CHECK("locked nodes are never evicted", radix_evict(t, 100) == 0 && radix_nodes(t) == 3);
    radix_lock(t, lc);
    radix_unlock(t, lc);
    CHECK("two locks, one unlock: still protected", radix_protected(t) == 12);
    radix_unlock(t, lc);
    CHECK("the last unlock makes the path evictable", radix_evictable(t) == 12);
    CHECK("the leaf goes, then its parent: 12 tokens, only the root left",
          radix_evict(t, 100) == 12 && radix_nodes(t) == 1 && radix_evictable(t) == 0);
    radix_free(t);
}

static void lru_order(void)
{
    static const uint64_t x[] = {10}, y[] = {20}, z[] = {30}, xy[] = {40, 41};
    radix_tree *t = radix_new(4);
    uint32_t nx, ny, nz, n;
    uint64_t present;
    radix_insert(t, x, 1, &nx, &present); /* accessed at 1 */
    radix_insert(t, y, 1, &ny, &present); /* 2 */
    radix_insert(t, z, 1, &nz, &present); /* 3 */
    radix_match(t, x, 1, &n);             /* x refreshed: 4 */
    CHECK("evict(4): the least recent leaf, y", radix_evict(t, 4) == 4 &&
                                                    radix_match(t, y, 1, &n) == 0 &&
                                                    radix_match(t, x, 1, &n) == 1);
    /* now x was touched again (5), z is the oldest (3) */
    CHECK("then z, whose access is older than x's refresh",
          radix_evict(t, 4) == 4 && radix_match(t, z, 1, &n) == 0 &&
              radix_match(t, x, 1, &n) == 1);
    radix_insert(t, xy, 2, &n, &present);
    radix_lock(t, n);
    CHECK("a locked leaf is skipped: only x (4 tokens) can go",
          radix_evict(t, 100) == 4 && radix_match(t, xy, 2, &n) == 2);
    radix_free(t);
}

/* many requests sharing prefixes, evicting as they go: the tree stays
 * consistent (every token either evicted, evictable or protected) */
static void churn(void)
{
    static uint64_t ids[2000][64];
    radix_tree *t = radix_new(16);
    uint64_t in = 0, out = 0, present;
    for (int r = 0; r < 2000; r++) {
        for (int b = 0; b < 64; b++)
            ids[r][b] = b < 8 * (r % 5) ? (uint64_t)(r % 7) * 1000 + (uint64_t)b
                                        : (uint64_t)r * 100000 + (uint64_t)b;
        uint32_t last;
        radix_insert(t, ids[r], 64, &last, &present);
        in += (64 - present) * 16;
        if (radix_evictable(t) > 50000)
            out += radix_evict(t, 20000);
    }
    CHECK("churn: inserted = evicted + still held", in == out + radix_evictable(t));
    out += radix_evict(t, UINT64_MAX);
    CHECK("churn: everything evicts in the end", in == out && radix_nodes(t) == 1);
    radix_free(t);
}

int main(void)
{
    match_split_insert();
    locks_and_eviction();
    lru_order();
    churn();
    return check_failures != 0;
}
