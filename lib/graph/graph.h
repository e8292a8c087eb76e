/* graph.h - a metadata-only copy of the part of ggml llama.cpp's compute
 * buffers depend on: tensors (type, shape, strides, views, sources, input
 * and output flags), the graph order ggml_build_forward_expand produces,
 * and ggml_gallocr's allocator, replayed to the byte.
 *
 * No data, no kernels: a tensor here is what ggml_new_tensor would create,
 * and gg_alloc_size() is what ggml_gallocr would reserve for a graph on one
 * backend.  The builders in this folder (llm.c and the arch_*.c files)
 * mirror llama.cpp v0.5.0's graph code call by call, so the nodes come out
 * in the same order with the same shapes. */
#ifndef KVP_GRAPH_H
#define KVP_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ggml type ids (ggml.h) for the tensors a graph creates */
enum { GG_F32 = 0, GG_F16 = 1, GG_I32 = 26, GG_I64 = 27 };

typedef enum gg_op {
    GG_NONE,            /* a leaf: weight, cache, input */
    GG_VIEW, GG_RESHAPE, GG_PERMUTE, GG_TRANSPOSE,  /* views */
    GG_SET_ROWS, GG_CPY,                            /* views of their destination */
    /* ops ggml may run in place (ggml_op_can_inplace) */
    GG_ADD, GG_MUL, GG_SCALE, GG_RMS_NORM, GG_ROPE, GG_SOFT_MAX, GG_UNARY,
    GG_CLAMP, GG_SQR, GG_SUB, GG_DIV, GG_SQRT, GG_LOG, GG_FILL, GG_ADD_ID,
    /* ops that always get their own memory */
    GG_GET_ROWS, GG_MUL_MAT, GG_MUL_MAT_ID, GG_NORM, GG_CONT, GG_GLU,
    GG_FLASH_ATTN_EXT, GG_PAD, GG_CONCAT, GG_CAST, GG_ARGSORT, GG_SUM_ROWS,
    GG_REPEAT, GG_SSM_CONV, GG_SSM_SCAN, GG_GATED_DELTA, GG_GROUP_NORM,
    GG_TOP_K, GG_L2_NORM, GG_OTHER
} gg_op;

enum { GG_MAX_SRC = 10 };
enum { GG_FLAG_INPUT = 1, GG_FLAG_OUTPUT = 2, GG_FLAG_EXTERNAL = 4 };

typedef struct gg_tensor gg_tensor;
struct gg_tensor {
    gg_op op;
    int type;                    /* ggml type id */
    int64_t ne[4];
    uint64_t nb[4];
    gg_tensor *src[GG_MAX_SRC];
    gg_tensor *view_src;         /* the root a view (of a view...) reads */
    uint64_t view_offs;
    unsigned flags;
    const char *name;            /* for debugging; may be NULL */
    /* graph and allocator state */
    int visited;
    int own;                     /* holds allocator memory now */
    int n_children, n_views;
    uint64_t offset;
};

typedef struct gg_ctx gg_ctx;

/* A context holds every tensor of one graph; gg_free releases them all. */
gg_ctx *gg_new(void);
void gg_free(gg_ctx *g);
/* Non-zero once an allocation failed (every builder checks at the end). */
int gg_failed(const gg_ctx *g);

/* ---- tensors, as ggml creates them ---- */
gg_tensor *gg_new_tensor(gg_ctx *g, int type, int n_dims, const int64_t *ne);
gg_tensor *gg_new_1d(gg_ctx *g, int type, int64_t ne0);
gg_tensor *gg_new_2d(gg_ctx *g, int type, int64_t ne0, int64_t ne1);
gg_tensor *gg_new_3d(gg_ctx *g, int type, int64_t ne0, int64_t ne1, int64_t ne2);
gg_tensor *gg_new_4d(gg_ctx *g, int type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
/* a weight or cache tensor: memory outside the compute buffer */
gg_tensor *gg_external(gg_ctx *g, int type, int n_dims, const int64_t *ne);
gg_tensor *gg_input(gg_tensor *t, const char *name);   /* ggml_set_input */
void gg_set_output(gg_tensor *t);
uint64_t gg_nbytes(const gg_tensor *t);
uint64_t gg_nelements(const gg_tensor *t);
uint64_t gg_row_size(int type, int64_t n);
int gg_is_contiguous(const gg_tensor *t);

/* ---- ops ---- */
gg_tensor *gg_dup_op(gg_ctx *g, gg_op op, gg_tensor *a);           /* same shape, a as src0 */
gg_tensor *gg_binary(gg_ctx *g, gg_op op, gg_tensor *a, gg_tensor *b); /* add, mul, ... */
gg_tensor *gg_unary(gg_ctx *g, gg_tensor *a);                      /* silu, gelu, ... */
gg_tensor *gg_rms_norm(gg_ctx *g, gg_tensor *a);
gg_tensor *gg_norm(gg_ctx *g, gg_tensor *a);
gg_tensor *gg_scale(gg_ctx *g, gg_tensor *a);
gg_tensor *gg_rope(gg_ctx *g, gg_tensor *a, gg_tensor *pos, gg_tensor *factors);
gg_tensor *gg_mul_mat(gg_ctx *g, gg_tensor *a, gg_tensor *b);
gg_tensor *gg_mul_mat_id(gg_ctx *g, gg_tensor *as, gg_tensor *b, gg_tensor *ids);
gg_tensor *gg_get_rows(gg_ctx *g, gg_tensor *a, gg_tensor *rows);
gg_tensor *gg_set_rows(gg_ctx *g, gg_tensor *dst, gg_tensor *src, gg_tensor *rows);
gg_tensor *gg_soft_max_ext(gg_ctx *g, gg_tensor *a, gg_tensor *mask, gg_tensor *sinks);
gg_tensor *gg_flash_attn_ext(gg_ctx *g, gg_tensor *q, gg_tensor *k, gg_tensor *v,
                             gg_tensor *mask, gg_tensor *sinks);
gg_tensor *gg_glu_split(gg_ctx *g, gg_tensor *a, gg_tensor *b);
gg_tensor *gg_cont(gg_ctx *g, gg_tensor *a);
gg_tensor *gg_cont_4d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
gg_tensor *gg_cast(gg_ctx *g, gg_tensor *a, int type);
gg_tensor *gg_pad(gg_ctx *g, gg_tensor *a, int p0, int p1, int p2, int p3);
gg_tensor *gg_concat(gg_ctx *g, gg_tensor *a, gg_tensor *b, int dim);
gg_tensor *gg_repeat_4d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
gg_tensor *gg_new_op(gg_ctx *g, gg_op op, int type, int n_dims, const int64_t *ne,
                     gg_tensor *s0, gg_tensor *s1, gg_tensor *s2);

/* ---- views ---- */
gg_tensor *gg_view_tensor(gg_ctx *g, gg_tensor *a);
gg_tensor *gg_reshape(gg_ctx *g, gg_tensor *a, int n_dims, const int64_t *ne);
gg_tensor *gg_reshape_2d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1);
gg_tensor *gg_reshape_3d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2);
gg_tensor *gg_reshape_4d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
gg_tensor *gg_view(gg_ctx *g, gg_tensor *a, int n_dims, const int64_t *ne, const uint64_t *nb,
                   uint64_t offset);
gg_tensor *gg_view_1d(gg_ctx *g, gg_tensor *a, int64_t ne0, uint64_t offset);
gg_tensor *gg_view_2d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, uint64_t nb1,
                      uint64_t offset);
gg_tensor *gg_view_3d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2,
                      uint64_t nb1, uint64_t nb2, uint64_t offset);
gg_tensor *gg_view_4d(gg_ctx *g, gg_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2,
                      int64_t ne3, uint64_t nb1, uint64_t nb2, uint64_t nb3, uint64_t offset);
gg_tensor *gg_permute(gg_ctx *g, gg_tensor *a, int ax0, int ax1, int ax2, int ax3);
gg_tensor *gg_transpose(gg_ctx *g, gg_tensor *a);

/* ---- the graph ---- */
/* ggml_build_forward_expand: t and everything it depends on, depth first,
 * sources in order; a tensor is added once. */
void gg_expand(gg_ctx *g, gg_tensor *t);

/* ggml_gallocr's reservation for the graph on one backend: the buffer's
 * size, its peak including the holes fragmentation leaves. */
int gg_alloc_size(gg_ctx *g, uint64_t alignment, uint64_t *size);
/* the bytes of the graph's inputs, each padded to alignment */
uint64_t gg_input_bytes(gg_ctx *g, uint64_t alignment);
/* the graph as the allocator sees it, one line per tensor (debugging) */
void gg_dump(gg_ctx *g, FILE *f);

#endif
