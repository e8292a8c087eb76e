/* galloc.c - ggml_gallocr's reservation replayed (ggml/src/ggml-alloc.c of
 * llama.cpp v0.5.0), for one backend whose buffer has no size limit (one
 * chunk).  The compute buffer llama.cpp reserves is the highest offset this
 * allocator ever hands out, so every rule that moves an offset is kept:
 * leafs first, then the graph's inputs, then nodes in order; in-place reuse
 * of a parent that dies at this node; best fit among free blocks but the
 * last; freeing at the last consumer (views keep their root alive); outputs
 * never freed. */
#include <stdlib.h>
#include <string.h>

#include "graph.h"

size_t gg_graph_nodes(gg_ctx *g, gg_tensor ***nodes, gg_tensor ***leafs, size_t *n_leafs);

enum { MAX_FREE_BLOCKS = 256 };

typedef struct dyn_alloc {
    uint64_t alignment;
    struct { uint64_t offset, size; } free[MAX_FREE_BLOCKS];
    int n_free;
    uint64_t max_size;
    int failed;
} dyn_alloc;

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

static void remove_block(dyn_alloc *d, int i)
{
    memmove(&d->free[i], &d->free[i + 1], (size_t)(d->n_free - i - 1) * sizeof d->free[0]);
    d->n_free--;
}

/* ggml_dyn_tallocr_alloc with one chunk: the last free block reaches to
 * the end of the address space, so it always fits */
static uint64_t dyn_alloc_bytes(dyn_alloc *d, uint64_t size)
{
    size = align_up(size, d->alignment);
    int best = -1;
    uint64_t best_size = UINT64_MAX;
    for (int i = 0; i < d->n_free - 1; i++)
        if (d->free[i].size >= size && d->free[i].size <= best_size) {
            best = i;
            best_size = d->free[i].size;
        }
    if (best < 0)
        best = d->n_free - 1;
    uint64_t addr = d->free[best].offset;
    d->free[best].offset += size;
    d->free[best].size -= size;
    if (d->free[best].size == 0)
        remove_block(d, best);
    if (addr + size > d->max_size)
        d->max_size = addr + size;
    return addr;
}

/* ggml_dyn_tallocr_free_bytes: merge with a neighbour, else insert sorted */
static void dyn_free_bytes(dyn_alloc *d, uint64_t addr, uint64_t size)
{
    size = align_up(size, d->alignment);
    for (int i = 0; i < d->n_free; i++) {
        if (d->free[i].offset + d->free[i].size == addr) {
            d->free[i].size += size;
            if (i < d->n_free - 1 && d->free[i].offset + d->free[i].size == d->free[i + 1].offset) {
                d->free[i].size += d->free[i + 1].size;
                remove_block(d, i + 1);
            }
            return;
        }
        if (addr + size == d->free[i].offset) {
            d->free[i].offset = addr;
            d->free[i].size += size;
            if (i > 0 && d->free[i - 1].offset + d->free[i - 1].size == d->free[i].offset) {
                d->free[i - 1].size += d->free[i].size;
                remove_block(d, i);
            }
            return;
        }
    }
    if (d->n_free == MAX_FREE_BLOCKS) {
        d->failed = 1;   /* ggml aborts: "out of free blocks" */
        return;
    }
    int pos = 0;
    while (pos < d->n_free && d->free[pos].offset < addr)
        pos++;
    memmove(&d->free[pos + 1], &d->free[pos], (size_t)(d->n_free - pos) * sizeof d->free[0]);
    d->free[pos].offset = addr;
    d->free[pos].size = size;
    d->n_free++;
}

static int can_inplace(gg_op op)
{
    return op >= GG_ADD && op <= GG_ADD_ID;
}

static int is_view(const gg_tensor *t)
{
    return t->view_src != NULL;
}

static int same_layout(const gg_tensor *a, const gg_tensor *b)
{
    if (a->type != b->type)
        return 0;
    for (int i = 0; i < 4; i++)
        if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i])
            return 0;
    return 1;
}

/* ggml_gallocr_allocate_node (views and external memory are skipped; a
 * view never "owns" memory, so only a real parent is reused in place) */
static void allocate_node(dyn_alloc *d, gg_tensor *t)
{
    if ((t->flags & GG_FLAG_EXTERNAL) || t->own || is_view(t))
        return;
    t->own = 1;
    if (can_inplace(t->op))
        for (int i = 0; i < GG_MAX_SRC; i++) {
            gg_tensor *p = t->src[i];
            if (!p || !p->own || (p->flags & GG_FLAG_OUTPUT) || !same_layout(t, p))
                continue;
            if (p->n_children == 1 && p->n_views == 0) {
                t->offset = p->offset;
                p->own = 0;
                uint64_t ps = align_up(gg_nbytes(p), d->alignment);
                uint64_t ts = align_up(gg_nbytes(t), d->alignment);
                if (ps > ts)
                    dyn_free_bytes(d, p->offset + ts, ps - ts);
                return;
            }
        }
    t->offset = dyn_alloc_bytes(d, gg_nbytes(t));
}

static void free_node(dyn_alloc *d, gg_tensor *t)
{
    if (t->flags & GG_FLAG_OUTPUT)
        return;
    dyn_free_bytes(d, t->offset, gg_nbytes(t));
    t->own = 0;
}

static void release_parent(dyn_alloc *d, gg_tensor *p)
{
    p->n_children--;
    if (p->n_children != 0 || p->n_views != 0)
        return;
    if (is_view(p)) {
        gg_tensor *v = p->view_src;
        v->n_views--;
        if (v->n_views == 0 && v->n_children == 0 && v->own)
            free_node(d, v);
    } else if (p->own) {
        free_node(d, p);
    }
}

int gg_alloc_size(gg_ctx *g, uint64_t alignment, uint64_t *size)
{
    gg_tensor **nodes, **leafs;
    size_t n_leafs, n_nodes = gg_graph_nodes(g, &nodes, &leafs, &n_leafs);
    dyn_alloc *d = calloc(1, sizeof *d);
    if (!d || gg_failed(g)) {
        free(d);
        return -1;
    }
    d->alignment = alignment;
    d->n_free = 1;
    d->free[0].offset = 0;
    d->free[0].size = UINT64_MAX / 2;

    for (size_t i = 0; i < n_leafs; i++) {
        leafs[i]->own = 0;
        leafs[i]->n_children = leafs[i]->n_views = 0;
    }
    for (size_t i = 0; i < n_nodes; i++) {
        nodes[i]->own = 0;
        nodes[i]->n_children = nodes[i]->n_views = 0;
    }
    for (size_t i = 0; i < n_leafs; i++)
        allocate_node(d, leafs[i]);
    for (size_t i = 0; i < n_nodes; i++) {
        gg_tensor *t = nodes[i];
        if (is_view(t))
            t->view_src->n_views++;
        if (t->flags & GG_FLAG_INPUT)
            allocate_node(d, t);
        for (int j = 0; j < GG_MAX_SRC; j++) {
            gg_tensor *s = t->src[j];
            if (!s)
                continue;
            s->n_children++;
            if (s->flags & GG_FLAG_INPUT)
                allocate_node(d, s);
        }
    }
    for (size_t i = 0; i < n_nodes; i++) {
        gg_tensor *t = nodes[i];
        for (int j = 0; j < GG_MAX_SRC; j++)
            if (t->src[j])
                allocate_node(d, t->src[j]);
        allocate_node(d, t);
        for (int j = 0; j < GG_MAX_SRC; j++)
            if (t->src[j])
                release_parent(d, t->src[j]);
    }
    int failed = d->failed;
    *size = d->max_size;
    free(d);
    return failed ? -1 : 0;
}
