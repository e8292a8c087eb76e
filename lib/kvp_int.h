/* kvp_int.h - internals shared by the library's files: error reporting and
 * overflow-checked 64-bit arithmetic.  Every size in kvplan passes through
 * these helpers so that an absurd config yields an error, not a wrapped
 * number printed as if it were right. */
#ifndef KVP_INT_H
#define KVP_INT_H

#include "kvplan.h"

#if defined(__GNUC__)
#define KVP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define KVP_PRINTF(a, b)
#endif

/* Sets err (if not NULL) and returns -1, so callers can `return kvp_fail(...)`. */
int kvp_fail(kvp_error *err, int code, const char *fmt, ...) KVP_PRINTF(3, 4);

/* Records where a model number came from; the first reading of a name is
 * the one that counts, and a full table drops the rest. */
void kvp_model_fact(kvp_model *m, const char *name, int64_t value, const char *source);

/* Two series against x (increasing), each on its own y axis from 0: y[0] on
 * the left, y[1] on the right, named by labels[0] and labels[1] (the serving
 * sweep: hit rate and wall time against capacity).  An existing path is kept
 * unless force. */
int kvp_svg_lines2(const char *path, int force, const char *title, const char *xlabel,
                   const double *x, size_t n, const double *const *y,
                   const char *const *labels, kvp_error *err);
/* Up to four series of rates (0 to 1) against x on one axis, labels[0] and
 * labels[1] naming the first two, and a dashed line at mark_x (outside x's
 * range: none): the prefix-cache sweep's hit rates and its cliff. */
int kvp_svg_rates(const char *path, int force, const char *title, const char *xlabel,
                  const double *x, size_t n, const double *const *y,
                  const char *const *labels, size_t n_series, double mark_x,
                  const char *mark_label, kvp_error *err);
/* Writes a stacked-area SVG chart (lib/svg.c). */
int kvp_svg_stacked(const char *path, int force, const char *title, const double *x, size_t n,
                    const double *const *bands, const char *const *labels, size_t n_bands,
                    kvp_error *err);

/* Appends a note to a runtime result's fixed array of note lines (dropped
 * when the array is full). */
void kvp_note_add(char *notes, size_t width, size_t cap, size_t *n, const char *fmt, ...)
    KVP_PRINTF(5, 6);
#define KVP_NOTE(r, ...)                                                                  \
    kvp_note_add(&(r)->notes[0][0], sizeof(r)->notes[0],                                  \
                 sizeof(r)->notes / sizeof(r)->notes[0], &(r)->n_notes, __VA_ARGS__)

/* splitmix64's finalizer: chains the synthetic workloads' block hashes
 * (trace.c) and spreads hashes, which may be small dense integers, over the
 * open-addressing maps of sim.c's pool and the host tier */
static inline uint64_t kvp_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Whole blocks of bs tokens that hold `tokens` (bs >= 1). */
static inline uint64_t kvp_blocks_of(uint64_t tokens, uint64_t bs)
{
    return tokens / bs + (tokens % bs != 0);
}

static inline int kvp_mul(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

static inline int kvp_add(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_add_overflow(a, b, out) ? -1 : 0;
}

/* Upper bounds for config values: far above any real model, low enough that
 * products of them cannot silently wrap before the checked arithmetic. */
#define KVP_MAX_LAYERS 65536u
#define KVP_MAX_HEADS 65536u
#define KVP_MAX_DIM (1u << 20)
#define KVP_MAX_TOKENS (1ull << 40)

/* Reads config.json's quantization_config into m->quant (KVP_QM_UNKNOWN with
 * the reason for what kvplan cannot size) and sets m->encoder when the config
 * has a vision or audio tower (lib/hf/quant.c).  Never fails. */
struct json_t;
int kvp_hf_read_quant(const struct json_t *root, kvp_model *m);

/* One tensor (or a set of n equal ones: experts) of the language model, as
 * lib/params.c counts it, with how vLLM shards it under tensor parallelism:
 * the walk behind kvp_model_param_breakdown and vLLM's weight bytes. */
typedef enum kvp_psplit {
    KVP_PS_REP,   /* replicated on every rank */
    KVP_PS_COL,   /* output split (column-parallel; a vector: split) */
    KVP_PS_ROW,   /* input split (row-parallel) */
    KVP_PS_KV,    /* output split by KV head, one head kept when heads < tp */
    KVP_PS_VOCAB  /* vocabulary rows padded to 64 and split */
} kvp_psplit;
typedef struct kvp_ptensor {
    uint32_t layer;       /* UINT32_MAX outside the layers */
    kvp_wcat cat;
    const char *name;     /* module name: "model.embed_tokens", "lm_head", or the part
                           * after "model.layers.N.": "self_attn.q_proj" */
    uint64_t in, out, n;  /* input and output width, n copies; a vector: in 1 */
    kvp_psplit split;
    uint32_t heads;       /* KVP_PS_KV: the KV heads of out */
    int linear;           /* a linear layer's weight (quantizable), not a vector/conv */
    int tied;             /* embeddings that are the output head too */
} kvp_ptensor;
typedef void (*kvp_ptensor_fn)(void *ctx, const kvp_ptensor *t);
/* Calls fn on every tensor kvp_model_param_count counts; -1 when the count is
 * unknown (fn may have been called for some tensors). */
int kvp_model_param_walk(const kvp_model *m, kvp_ptensor_fn fn, void *ctx);

#endif
