/* tensor.c - ggml's tensor constructors, ops and views without data: each
 * function creates what its ggml namesake creates (type, shape, strides,
 * view source and offset, sources in the same slots), because the graph
 * allocator's decisions depend on exactly those.  Shapes follow ggml.c of
 * llama.cpp v0.5.0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gguf.h"
#include "graph.h"

enum { CHUNK = 1024 };

typedef struct gg_chunk {
    struct gg_chunk *next;
    size_t used;
    gg_tensor t[CHUNK];
} gg_chunk;

struct gg_ctx {
    gg_chunk *chunks;
    int failed;
    /* the graph, as ggml_cgraph holds it */
    gg_tensor **nodes, **leafs;
    size_t n_nodes, n_leafs, cap_nodes, cap_leafs;
};

gg_ctx *gg_new(void)
{
    return calloc(1, sizeof(gg_ctx));
}

void gg_free(gg_ctx *g)
{
    if (!g)
        return;
    for (gg_chunk *c = g->chunks, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(g->nodes);
    free(g->leafs);
    free(g);
}

int gg_failed(const gg_ctx *g)
{
    return g->failed;
}

/* a zeroed tensor the context owns; on allocation failure a static dummy
 * keeps builders going and gg_failed() reports it */
static gg_tensor *tensor_new(gg_ctx *g)
{
    static gg_tensor dummy;
    if (!g->chunks || g->chunks->used == CHUNK) {
        gg_chunk *c = calloc(1, sizeof *c);
        if (!c) {
            g->failed = 1;
            memset(&dummy, 0, sizeof dummy);
            return &dummy;
        }
        c->next = g->chunks;
        g->chunks = c;
    }
    return &g->chunks->t[g->chunks->used++];
}

static unsigned type_block(int type)
{
    unsigned b = kvp_ggml_type_block((uint32_t)type);
    return b ? b : 1;
}

uint64_t gg_row_size(int type, int64_t n)
{
    return kvp_ggml_type_block_bytes((uint32_t)type) * (uint64_t)n / type_block(type);
}

static void contiguous_strides(gg_tensor *t)
{
    t->nb[0] = kvp_ggml_type_block_bytes((uint32_t)t->type);
    t->nb[1] = t->nb[0] * (uint64_t)(t->ne[0] / type_block(t->type));
    for (int i = 2; i < 4; i++)
        t->nb[i] = t->nb[i - 1] * (uint64_t)t->ne[i - 1];
}

/* ggml_new_tensor_impl: a view of a view reads the root */
static gg_tensor *new_impl(gg_ctx *g, int type, int n_dims, const int64_t *ne,
                           gg_tensor *view_src, uint64_t view_offs)
{
    gg_tensor *t = tensor_new(g);
    if (view_src && view_src->view_src) {
        view_offs += view_src->view_offs;
        view_src = view_src->view_src;
    }
    t->type = type;
    for (int i = 0; i < 4; i++)
        t->ne[i] = i < n_dims ? ne[i] : 1;
    contiguous_strides(t);
    t->view_src = view_src;
    t->view_offs = view_offs;
    if (view_src && (view_src->flags & GG_FLAG_EXTERNAL))
        t->flags |= GG_FLAG_EXTERNAL;
    return t;
}

gg_tensor *gg_new_tensor(gg_ctx *g, int type, int n_dims, const int64_t *ne)
{
    return new_impl(g, type, n_dims, ne, NULL, 0);
}

gg_tensor *gg_new_1d(gg_ctx *g, int type, int64_t ne0)
{
    return gg_new_tensor(g, type, 1, &ne0);
}

gg_tensor *gg_new_2d(gg_ctx *g, int type, int64_t ne0, int64_t ne1)
{
    int64_t ne[2] = {ne0, ne1};
    return gg_new_tensor(g, type, 2, ne);
}

gg_tensor *gg_new_3d(gg_ctx *g, int type, int64_t ne0, int64_t ne1, int64_t ne2)
{
    int64_t ne[3] = {ne0, ne1, ne2};
    return gg_new_tensor(g, type, 3, ne);
}

gg_tensor *gg_new_4d(gg_ctx *g, int type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return gg_new_tensor(g, type, 4, ne);
}

gg_tensor *gg_external(gg_ctx *g, int type, int n_dims, const int64_t *ne)
{
    gg_tensor *t = gg_new_tensor(g, type, n_dims, ne);
    t->flags |= GG_FLAG_EXTERNAL;
    return t;
}

gg_tensor *gg_input(gg_tensor *t, const char *name)
{
    t->flags |= GG_FLAG_INPUT;
    t->name = name;
    return t;
}

void gg_set_output(gg_tensor *t)
{
    t->flags |= GG_FLAG_OUTPUT;
}

uint64_t gg_nelements(const gg_tensor *t)
{
    return (uint64_t)t->ne[0] * (uint64_t)t->ne[1] * (uint64_t)t->ne[2] * (uint64_t)t->ne[3];
}

/* ggml_nbytes */
uint64_t gg_nbytes(const gg_tensor *t)
{
    for (int i = 0; i < 4; i++)
        if (t->ne[i] <= 0)
            return 0;
    unsigned blck = type_block(t->type);
    uint64_t n;
    if (blck == 1) {
        n = kvp_ggml_type_block_bytes((uint32_t)t->type);
        for (int i = 0; i < 4; i++)
            n += (uint64_t)(t->ne[i] - 1) * t->nb[i];
    } else {
        n = (uint64_t)t->ne[0] * t->nb[0] / blck;
        for (int i = 1; i < 4; i++)
            n += (uint64_t)(t->ne[i] - 1) * t->nb[i];
    }
    return n;
}

int gg_is_contiguous(const gg_tensor *t)
{
    uint64_t next = kvp_ggml_type_block_bytes((uint32_t)t->type);
    if (t->ne[0] != (int64_t)type_block(t->type) && t->nb[0] != next)
        return 0;
    next *= (uint64_t)(t->ne[0] / type_block(t->type));
    for (int i = 1; i < 4; i++) {
        if (t->ne[i] != 1) {
            if (t->nb[i] != next)
                return 0;
            next *= (uint64_t)t->ne[i];
        }
    }
    return 1;
}

/* ---- ops ---- */

gg_tensor *gg_new_op(gg_ctx *g, gg_op op, int type, int n_dims, const int64_t *ne,
                     gg_tensor *s0, gg_tensor *s1, gg_tensor *s2)
{
    gg_tensor *t = gg_new_tensor(g, type, n_dims, ne);
    t->op = op;
    t->src[0] = s0;
    t->src[1] = s1;
    t->src[2] = s2;
    return t;
}

gg_tensor *gg_dup_op(gg_ctx *g, gg_op op, gg_tensor *a)
{
    return gg_new_op(g, op, a->type, 4, a->ne, a, NULL, NULL);
}

gg_tensor *gg_binary(gg_ctx *g, gg_op op, gg_tensor *a, gg_tensor *b)
{
    return gg_new_op(g, op, a->type, 4, a->ne, a, b, NULL);
}

gg_tensor *gg_unary(gg_ctx *g, gg_tensor *a)
{
    return gg_dup_op(g, GG_UNARY, a);
}

gg_tensor *gg_rms_norm(gg_ctx *g, gg_tensor *a)
{
    return gg_dup_op(g, GG_RMS_NORM, a);
}

gg_tensor *gg_norm(gg_ctx *g, gg_tensor *a)
{
    return gg_dup_op(g, GG_NORM, a);
}

gg_tensor *gg_scale(gg_ctx *g, gg_tensor *a)
{
    return gg_dup_op(g, GG_SCALE, a);
}

gg_tensor *gg_rope(gg_ctx *g, gg_tensor *a, gg_tensor *pos, gg_tensor *factors)
{
    return gg_new_op(g, GG_ROPE, a->type, 4, a->ne, a, pos, factors);
}

gg_tensor *gg_mul_mat(gg_ctx *g, gg_tensor *a, gg_tensor *b)
{
    int64_t ne[4] = {a->ne[1], b->ne[1], b->ne[2], b->ne[3]};
    return gg_new_op(g, GG_MUL_MAT, GG_F32, 4, ne, a, b, NULL);
}

gg_tensor *gg_mul_mat_id(gg_ctx *g, gg_tensor *as, gg_tensor *b, gg_tensor *ids)
{
    int64_t ne[4] = {as->ne[1], ids->ne[0], b->ne[2], 1};
    return gg_new_op(g, GG_MUL_MAT_ID, GG_F32, 4, ne, as, b, ids);
}

gg_tensor *gg_get_rows(gg_ctx *g, gg_tensor *a, gg_tensor *rows)
{
    int64_t ne[4] = {a->ne[0], rows->ne[0], rows->ne[1], rows->ne[2]};
    int type = a->type == GG_I32 ? GG_I32 : GG_F32;
    return gg_new_op(g, GG_GET_ROWS, type, 4, ne, a, rows, NULL);
}

gg_tensor *gg_set_rows(gg_ctx *g, gg_tensor *dst, gg_tensor *src, gg_tensor *rows)
{
    gg_tensor *t = gg_view_tensor(g, dst);
    t->op = GG_SET_ROWS;
    /* ggml_set_rows's order (the destination last), which the graph's
     * depth-first order follows */
    t->src[0] = src;
    t->src[1] = rows;
    t->src[2] = dst;
    return t;
}

gg_tensor *gg_soft_max_ext(gg_ctx *g, gg_tensor *a, gg_tensor *mask, gg_tensor *sinks)
{
    gg_tensor *t = gg_new_op(g, GG_SOFT_MAX, a->type, 4, a->ne, a, mask, sinks);
    return t;
}

/* the result is permuted: [head dim of V, heads, tokens, streams] */
gg_tensor *gg_flash_attn_ext(gg_ctx *g, gg_tensor *q, gg_tensor *k, gg_tensor *v,
                             gg_tensor *mask, gg_tensor *sinks)
{
    int64_t ne[4] = {v->ne[0], q->ne[2], q->ne[1], q->ne[3]};
    gg_tensor *t = gg_new_op(g, GG_FLASH_ATTN_EXT, GG_F32, 4, ne, q, k, v);
    t->src[3] = mask;
    t->src[4] = sinks;
    return t;
}

gg_tensor *gg_glu_split(gg_ctx *g, gg_tensor *a, gg_tensor *b)
{
    return gg_new_op(g, GG_GLU, a->type, 4, a->ne, a, b, NULL);
}

gg_tensor *gg_cont_4d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return gg_new_op(g, GG_CONT, a->type, 4, ne, a, NULL, NULL);
}

gg_tensor *gg_cont(gg_ctx *g, gg_tensor *a)
{
    return gg_cont_4d(g, a, a->ne[0], a->ne[1], a->ne[2], a->ne[3]);
}

gg_tensor *gg_cast(gg_ctx *g, gg_tensor *a, int type)
{
    gg_tensor *t = gg_new_op(g, GG_CAST, type, 4, a->ne, a, NULL, NULL);
    t->src[1] = t;   /* ggml_cast: the result is the copy's destination */
    return t;
}

gg_tensor *gg_pad(gg_ctx *g, gg_tensor *a, int p0, int p1, int p2, int p3)
{
    int64_t ne[4] = {a->ne[0] + p0, a->ne[1] + p1, a->ne[2] + p2, a->ne[3] + p3};
    return gg_new_op(g, GG_PAD, a->type, 4, ne, a, NULL, NULL);
}

gg_tensor *gg_concat(gg_ctx *g, gg_tensor *a, gg_tensor *b, int dim)
{
    int64_t ne[4];
    for (int i = 0; i < 4; i++)
        ne[i] = i == dim ? a->ne[i] + b->ne[i] : a->ne[i];
    return gg_new_op(g, GG_CONCAT, a->type, 4, ne, a, b, NULL);
}

gg_tensor *gg_repeat_4d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return gg_new_op(g, GG_REPEAT, a->type, 4, ne, a, NULL, NULL);
}

/* ---- views ---- */

gg_tensor *gg_view_tensor(gg_ctx *g, gg_tensor *a)
{
    gg_tensor *t = new_impl(g, a->type, 4, a->ne, a, 0);
    for (int i = 0; i < 4; i++)
        t->nb[i] = a->nb[i];
    return t;
}

gg_tensor *gg_reshape(gg_ctx *g, gg_tensor *a, int n_dims, const int64_t *ne)
{
    gg_tensor *t = new_impl(g, a->type, n_dims, ne, a, 0);
    t->op = GG_RESHAPE;
    t->src[0] = a;
    return t;
}

gg_tensor *gg_reshape_2d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1)
{
    int64_t ne[2] = {ne0, ne1};
    return gg_reshape(g, a, 2, ne);
}

gg_tensor *gg_reshape_3d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2)
{
    int64_t ne[3] = {ne0, ne1, ne2};
    return gg_reshape(g, a, 3, ne);
}

gg_tensor *gg_reshape_4d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return gg_reshape(g, a, 4, ne);
}

gg_tensor *gg_view(gg_ctx *g, gg_tensor *a, int n_dims, const int64_t *ne, const uint64_t *nb,
                   uint64_t offset)
{
    gg_tensor *t = new_impl(g, a->type, n_dims, ne, a, offset);
    for (int i = 1; i < n_dims; i++)
        t->nb[i] = nb[i - 1];
    for (int i = n_dims; i < 4; i++)
        t->nb[i] = t->nb[i - 1] * (uint64_t)t->ne[i - 1];
    t->op = GG_VIEW;
    t->src[0] = a;
    return t;
}

gg_tensor *gg_view_1d(gg_ctx *g, gg_tensor *a, int64_t ne0, uint64_t offset)
{
    return gg_view(g, a, 1, &ne0, NULL, offset);
}

gg_tensor *gg_view_2d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, uint64_t nb1,
                      uint64_t offset)
{
    int64_t ne[2] = {ne0, ne1};
    uint64_t nb[1] = {nb1};
    return gg_view(g, a, 2, ne, nb, offset);
}

gg_tensor *gg_view_3d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2,
                      uint64_t nb1, uint64_t nb2, uint64_t offset)
{
    int64_t ne[3] = {ne0, ne1, ne2};
    uint64_t nb[2] = {nb1, nb2};
    return gg_view(g, a, 3, ne, nb, offset);
}

gg_tensor *gg_view_4d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2,
                      int64_t ne3, uint64_t nb1, uint64_t nb2, uint64_t nb3, uint64_t offset)
{
    int64_t ne[4] = {ne0, ne1, ne2, ne3};
    uint64_t nb[3] = {nb1, nb2, nb3};
    return gg_view(g, a, 4, ne, nb, offset);
}

gg_tensor *gg_permute(gg_ctx *g, gg_tensor *a, int ax0, int ax1, int ax2, int ax3)
{
    gg_tensor *t = gg_view_tensor(g, a);
    int ax[4] = {ax0, ax1, ax2, ax3};
    for (int i = 0; i < 4; i++) {
        t->ne[ax[i]] = a->ne[i];
        t->nb[ax[i]] = a->nb[i];
    }
    t->op = GG_PERMUTE;
    t->src[0] = a;
    return t;
}

gg_tensor *gg_transpose(gg_ctx *g, gg_tensor *a)
{
    gg_tensor *t = gg_view_tensor(g, a);
    t->ne[0] = a->ne[1];
    t->ne[1] = a->ne[0];
    t->nb[0] = a->nb[1];
    t->nb[1] = a->nb[0];
    t->op = GG_TRANSPOSE;
    t->src[0] = a;
    return t;
}

/* ---- the graph ---- */

static int push(gg_ctx *g, gg_tensor ***arr, size_t *n, size_t *cap, gg_tensor *t)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        gg_tensor **a = realloc(*arr, c * sizeof *a);
        if (!a) {
            g->failed = 1;
            return -1;
        }
        *arr = a;
        *cap = c;
    }
    (*arr)[(*n)++] = t;
    return 0;
}

/* ggml_visit_parents_graph, iteratively: deep graphs (a hundred layers of
 * a few dozen nodes) would otherwise recurse thousands of frames deep */
void gg_expand(gg_ctx *g, gg_tensor *root)
{
    if (!root || root->visited)
        return;
    typedef struct { gg_tensor *t; int next; } frame;
    size_t cap = 256, n = 0;
    frame *st = malloc(cap * sizeof *st);
    if (!st) {
        g->failed = 1;
        return;
    }
    root->visited = 1;
    st[n++] = (frame){root, 0};
    while (n) {
        frame *f = &st[n - 1];
        if (f->next < GG_MAX_SRC) {
            gg_tensor *s = f->t->src[f->next++];
            if (!s || s->visited)
                continue;
            s->visited = 1;
            if (n == cap) {
                frame *b = realloc(st, cap * 2 * sizeof *st);
                if (!b) {
                    g->failed = 1;
                    break;
                }
                st = b;
                cap *= 2;
            }
            st[n++] = (frame){s, 0};
            continue;
        }
        gg_tensor *t = f->t;
        n--;
        if (t->op == GG_NONE)
            push(g, &g->leafs, &g->n_leafs, &g->cap_leafs, t);
        else
            push(g, &g->nodes, &g->n_nodes, &g->cap_nodes, t);
    }
    free(st);
}

/* for galloc.c */
size_t gg_graph_nodes(gg_ctx *g, gg_tensor ***nodes, gg_tensor ***leafs, size_t *n_leafs);
size_t gg_graph_nodes(gg_ctx *g, gg_tensor ***nodes, gg_tensor ***leafs, size_t *n_leafs)
{
    *nodes = g->nodes;
    *leafs = g->leafs;
    *n_leafs = g->n_leafs;
    return g->n_nodes;
}

static const char *op_name(gg_op op)
{
    static const char *names[] = {
        "NONE", "VIEW", "RESHAPE", "PERMUTE", "TRANSPOSE", "SET_ROWS", "CPY",
        "ADD", "MUL", "SCALE", "RMS_NORM", "ROPE", "SOFT_MAX", "UNARY", "CLAMP", "SQR",
        "SUB", "DIV", "SQRT", "LOG", "FILL", "ADD_ID", "GET_ROWS", "MUL_MAT", "MUL_MAT_ID",
        "NORM", "CONT", "GLU", "FLASH_ATTN", "PAD", "CONCAT", "CAST", "ARGSORT", "SUM_ROWS",
        "REPEAT", "SSM_CONV", "SSM_SCAN", "GATED_DELTA", "GROUP_NORM", "TOP_K", "L2_NORM",
        "OTHER"};
    return (size_t)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

/* The graph's leafs that take memory, then every node, one line each, in
 * the order the allocator visits them; compare with the real graph's
 * (GGML_SCHED_DEBUG=2 on the oracle's probe prints it) to find where a
 * builder departs from llama.cpp.  Views print with their root's index. */
void gg_dump(gg_ctx *g, FILE *f)
{
    for (size_t i = 0; i < g->n_leafs; i++) {
        gg_tensor *t = g->leafs[i];
        if (!(t->flags & GG_FLAG_EXTERNAL))
            fprintf(f, "leaf %4zu %-10s %-18s [%lld %lld %lld %lld] %llu\n", i, op_name(t->op),
                    t->name ? t->name : "", (long long)t->ne[0], (long long)t->ne[1],
                    (long long)t->ne[2], (long long)t->ne[3], (unsigned long long)gg_nbytes(t));
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        gg_tensor *t = g->nodes[i];
        if (t->view_src)
            continue;
        fprintf(f, "node %4zu %-10s %-18s [%lld %lld %lld %lld] %llu%s\n", i, op_name(t->op),
                t->name ? t->name : "", (long long)t->ne[0], (long long)t->ne[1],
                (long long)t->ne[2], (long long)t->ne[3], (unsigned long long)gg_nbytes(t),
                t->flags & GG_FLAG_OUTPUT ? " output" : "");
    }
}
