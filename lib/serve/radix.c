/* radix.c - SGLang's radix prefix tree (radix_cache.py: match_prefix,
 * insert, _split_node, inc/dec_lock_ref, evict) over runs of block hash ids;
 * radix.h says how hash ids stand for tokens.
 *
 * Built for whole Mooncake traces (~20k requests, hundreds of blocks each,
 * eviction before most steps once the pool is full): children live in one
 * open-addressed table keyed by (parent, first id) instead of a dict per
 * node, edges are slices of the workload's own hash array (a split is
 * pointer arithmetic), and eviction keeps one lazy heap of leaf candidates
 * across calls rather than rebuilding SGLang's heap of every evictable leaf
 * on each call: an entry is pushed whenever a node may have become an
 * unlocked leaf or got a new access time, and stale entries are skipped. */
#include <stdlib.h>
#include <string.h>

#include "radix.h"

typedef struct node {
    const uint64_t *ids;   /* the edge into this node (NULL for unique leaves) */
    uint64_t n_ids, uniq;  /* ids on the edge; or never-matchable tokens */
    uint64_t time, serial; /* last_access_time (a logical clock), creation order */
    uint32_t parent, n_children, lock, gen;
    int live;
} node;

typedef struct slot {
    uint64_t id;
    uint32_t parent, child; /* child 0: empty (the root is nobody's child) */
} slot;

typedef struct cand {
    uint64_t time, serial;
    uint32_t node, gen;
} cand;

struct radix_tree {
    uint32_t bs;
    node *nd;
    size_t n_nd, cap_nd, live;
    uint32_t *free_ids;
    size_t n_free;
    slot *map;
    size_t cap_map, n_map;
    cand *heap;
    size_t n_heap, cap_heap;
    uint64_t clock, serial, evictable, protect;
};

/* ---- child table: (parent, first id) -> child, linear probing ---- */

static size_t slot_of(const radix_tree *t, uint32_t parent, uint64_t id)
{
    uint64_t h = id * 0x9e3779b97f4a7c15ull ^ ((uint64_t)parent * 0xc2b2ae3d27d4eb4full);
    h ^= h >> 29;
    return (size_t)(h & (t->cap_map - 1));
}

static uint32_t child_get(const radix_tree *t, uint32_t parent, uint64_t id)
{
    for (size_t i = slot_of(t, parent, id);; i = (i + 1) & (t->cap_map - 1)) {
        const slot *s = &t->map[i];
        if (!s->child)
            return 0;
        if (s->parent == parent && s->id == id)
            return s->child;
    }
}

static void child_put_raw(radix_tree *t, uint32_t parent, uint64_t id, uint32_t child)
{
    size_t i = slot_of(t, parent, id);
    while (t->map[i].child && !(t->map[i].parent == parent && t->map[i].id == id))
        i = (i + 1) & (t->cap_map - 1);
    if (!t->map[i].child)
        t->n_map++;
    t->map[i] = (slot){id, parent, child};
}

static int child_put(radix_tree *t, uint32_t parent, uint64_t id, uint32_t child)
{
    if ((t->n_map + 1) * 2 > t->cap_map) { /* keep the load under one half */
        slot *old = t->map;
        size_t n = t->cap_map;
        slot *m = calloc(n * 2, sizeof *m);
        if (!m)
            return -1;
        t->map = m, t->cap_map = n * 2, t->n_map = 0;
        for (size_t i = 0; i < n; i++)
            if (old[i].child)
                child_put_raw(t, old[i].parent, old[i].id, old[i].child);
        free(old);
    }
    child_put_raw(t, parent, id, child);
    return 0;
}

/* backward-shift deletion: no tombstones, so probes stay short after
 * millions of evictions */
static void child_del(radix_tree *t, uint32_t parent, uint64_t id)
{
    size_t mask = t->cap_map - 1, i = slot_of(t, parent, id);
    while (t->map[i].child && !(t->map[i].parent == parent && t->map[i].id == id))
        i = (i + 1) & mask;
    if (!t->map[i].child)
        return;
    for (size_t j = (i + 1) & mask; t->map[j].child; j = (j + 1) & mask) {
        size_t home = slot_of(t, t->map[j].parent, t->map[j].id);
        /* move j back into the hole at i unless its home lies in (i, j] */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            t->map[i] = t->map[j];
            i = j;
        }
    }
    t->map[i].child = 0;
    t->n_map--;
}

/* ---- the lazy LRU heap of leaf candidates ---- */

static int cand_less(const cand *a, const cand *b)
{
    return a->time != b->time ? a->time < b->time : a->serial < b->serial;
}

static int is_evictable_leaf(const radix_tree *t, uint32_t i)
{
    const node *n = &t->nd[i];
    return i != RADIX_ROOT && n->live && !n->lock && !n->n_children;
}

static void heap_up(cand *h, size_t i)
{
    while (i && cand_less(&h[i], &h[(i - 1) / 2])) {
        cand c = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = c;
        i = (i - 1) / 2;
    }
}

static void heap_down(cand *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && cand_less(&h[l], &h[m]))
            m = l;
        if (l + 1 < n && cand_less(&h[l + 1], &h[m]))
            m = l + 1;
        if (m == i)
            return;
        cand c = h[i];
        h[i] = h[m];
        h[m] = c;
        i = m;
    }
}

static int cand_valid(const radix_tree *t, const cand *c)
{
    return is_evictable_leaf(t, c->node) && t->nd[c->node].gen == c->gen &&
           t->nd[c->node].time == c->time;
}

/* drops stale entries once they outnumber the live nodes, so the heap stays
 * O(nodes) however often access times change */
static void heap_compact(radix_tree *t)
{
    size_t k = 0;
    for (size_t i = 0; i < t->n_heap; i++)
        if (cand_valid(t, &t->heap[i]))
            t->heap[k++] = t->heap[i];
    t->n_heap = k;
    for (size_t i = k / 2 + 1; i-- > 0;)
        heap_down(t->heap, t->n_heap, i);
}

/* pushes node i if it is now an unlocked leaf (stale entries are dropped
 * first when they crowd the heap) */
static void offer(radix_tree *t, uint32_t i)
{
    if (!is_evictable_leaf(t, i))
        return;
    if (t->n_heap == t->cap_heap) {
        if (t->n_heap > 2 * t->live + 64)
            heap_compact(t);
        if (t->n_heap == t->cap_heap) {
            size_t cap = t->cap_heap ? t->cap_heap * 2 : 256;
            cand *h = realloc(t->heap, cap * sizeof *h);
            if (!h)
                return;
            t->heap = h, t->cap_heap = cap;
        }
    }
    t->heap[t->n_heap] = (cand){t->nd[i].time, t->nd[i].serial, i, t->nd[i].gen};
    heap_up(t->heap, t->n_heap++);
}

/* ---- nodes ---- */

static uint64_t tokens_of(const radix_tree *t, const node *n)
{
    return n->ids ? n->n_ids * t->bs : n->uniq;
}

static int64_t node_new(radix_tree *t, uint32_t parent)
{
    uint32_t i;
    if (t->n_free) {
        i = t->free_ids[--t->n_free];
    } else {
        if (t->n_nd == t->cap_nd) {
            size_t cap = t->cap_nd * 2;
            node *nd = realloc(t->nd, cap * sizeof *nd);
            uint32_t *fr = nd ? realloc(t->free_ids, cap * sizeof *fr) : NULL;
            if (nd)
                t->nd = nd;
            if (!fr || cap > UINT32_MAX)
                return -1;
            t->free_ids = fr, t->cap_nd = cap;
        }
        i = (uint32_t)t->n_nd++;
        t->nd[i].gen = 0;
    }
    uint32_t gen = t->nd[i].gen;
    t->nd[i] = (node){.parent = parent, .gen = gen, .live = 1, .time = t->clock,
                      .serial = ++t->serial};
    t->live++;
    return i;
}

radix_tree *radix_new(uint32_t block_size)
{
    radix_tree *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->bs = block_size ? block_size : 1;
    t->cap_nd = 64, t->cap_map = 64;
    t->nd = calloc(t->cap_nd, sizeof *t->nd);
    t->free_ids = calloc(t->cap_nd, sizeof *t->free_ids);
    t->map = calloc(t->cap_map, sizeof *t->map);
    if (!t->nd || !t->free_ids || !t->map) {
        radix_free(t);
        return NULL;
    }
    node_new(t, RADIX_ROOT);
    t->nd[RADIX_ROOT].lock = 1; /* SGLang's root: lock_ref 1, never evicted */
    return t;
}

void radix_free(radix_tree *t)
{
    if (!t)
        return;
    free(t->nd);
    free(t->free_ids);
    free(t->map);
    free(t->heap);
    free(t);
}

/* _split_node: a new parent takes the first k ids and inherits lock_ref,
 * the child keeps the rest (tokens and their evictable/protected share are
 * unchanged) */
static int64_t split(radix_tree *t, uint32_t c, uint64_t k)
{
    int64_t m = node_new(t, t->nd[c].parent);
    if (m < 0)
        return -1;
    node *cn = &t->nd[c], *mn = &t->nd[m];
    mn->ids = cn->ids, mn->n_ids = k, mn->lock = cn->lock, mn->n_children = 1;
    cn->ids += k, cn->n_ids -= k, cn->parent = (uint32_t)m;
    child_put_raw(t, mn->parent, mn->ids[0], (uint32_t)m); /* replaces c's entry */
    if (child_put(t, (uint32_t)m, cn->ids[0], c))
        return -1;
    return m;
}

static uint64_t common_ids(const uint64_t *a, uint64_t na, const uint64_t *b, uint64_t nb)
{
    uint64_t k = 0;
    while (k < na && k < nb && a[k] == b[k])
        k++;
    return k;
}

/* the shared walk of match_prefix and insert; *done is the ids matched */
static int walk(radix_tree *t, const uint64_t *ids, size_t n, uint32_t *last, uint64_t *done)
{
    uint32_t at = RADIX_ROOT;
    uint64_t k = 0;
    t->nd[at].time = ++t->clock;
    while (k < n) {
        uint32_t c = child_get(t, at, ids[k]);
        if (!c)
            break;
        t->nd[c].time = t->clock;
        offer(t, c); /* a new time makes its old heap entry stale */
        uint64_t m = common_ids(t->nd[c].ids, t->nd[c].n_ids, ids + k, n - k);
        k += m;
        if (m < t->nd[c].n_ids) {
            int64_t s = split(t, c, m);
            if (s < 0)
                return -1;
            at = (uint32_t)s;
            break;
        }
        at = c;
    }
    *last = at;
    *done = k;
    return 0;
}

int64_t radix_match(radix_tree *t, const uint64_t *ids, size_t n, uint32_t *last)
{
    uint64_t k;
    if (walk(t, ids, n, last, &k))
        return -1;
    return (int64_t)k;
}

int radix_insert(radix_tree *t, const uint64_t *ids, size_t n, uint32_t *last, uint64_t *present)
{
    uint64_t k;
    if (walk(t, ids, n, last, &k))
        return -1;
    *present = k;
    if (k == n)
        return 0;
    int64_t leaf = node_new(t, *last);
    if (leaf < 0 || child_put(t, *last, ids[k], (uint32_t)leaf))
        return -1;
    t->nd[leaf].ids = ids + k, t->nd[leaf].n_ids = n - k;
    t->nd[*last].n_children++;
    t->evictable += (n - k) * t->bs;
    *last = (uint32_t)leaf;
    offer(t, (uint32_t)leaf);
    return 0;
}

int radix_add_unique(radix_tree *t, uint32_t parent, uint64_t tokens, uint32_t *leaf)
{
    int64_t u = node_new(t, parent);
    if (u < 0)
        return -1;
    t->nd[u].uniq = tokens;
    t->nd[parent].n_children++;
    t->evictable += tokens;
    *leaf = (uint32_t)u;
    offer(t, (uint32_t)u);
    return 0;
}

void radix_touch(radix_tree *t, uint32_t i)
{
    t->clock++;
    for (;; i = t->nd[i].parent) {
        t->nd[i].time = t->clock;
        offer(t, i);
        if (i == RADIX_ROOT)
            return;
    }
}

void radix_lock(radix_tree *t, uint32_t i)
{
    for (; i != RADIX_ROOT; i = t->nd[i].parent)
        if (t->nd[i].lock++ == 0) {
            uint64_t n = tokens_of(t, &t->nd[i]);
            t->evictable -= n;
            t->protect += n;
        }
}

void radix_unlock(radix_tree *t, uint32_t i)
{
    for (; i != RADIX_ROOT; i = t->nd[i].parent)
        if (t->nd[i].lock && --t->nd[i].lock == 0) {
            uint64_t n = tokens_of(t, &t->nd[i]);
            t->evictable += n;
            t->protect -= n;
            offer(t, i);
        }
}

static void remove_leaf(radix_tree *t, uint32_t i)
{
    node *n = &t->nd[i];
    uint32_t p = n->parent;
    if (n->ids)
        child_del(t, p, n->ids[0]);
    t->nd[p].n_children--;
    t->evictable -= tokens_of(t, n);
    n->live = 0;
    n->gen++;
    t->free_ids[t->n_free++] = i;
    t->live--;
    offer(t, p);
}

uint64_t radix_evict(radix_tree *t, uint64_t tokens)
{
    uint64_t freed = 0;
    while (freed < tokens && t->n_heap) {
        cand c = t->heap[0];
        t->heap[0] = t->heap[--t->n_heap];
        heap_down(t->heap, t->n_heap, 0);
        if (!cand_valid(t, &c))
            continue;
        freed += tokens_of(t, &t->nd[c.node]);
        remove_leaf(t, c.node);
    }
    return freed;
}

uint64_t radix_evictable(const radix_tree *t) { return t->evictable; }
uint64_t radix_protected(const radix_tree *t) { return t->protect; }
uint64_t radix_node_tokens(const radix_tree *t, uint32_t i) { return tokens_of(t, &t->nd[i]); }
uint32_t radix_parent(const radix_tree *t, uint32_t i) { return t->nd[i].parent; }
size_t radix_nodes(const radix_tree *t) { return t->live; }
