/* gguf.h - the GGUF container: a reader that never touches tensor data, and
 * a writer for sparse "shape twins".
 *
 * GGUF (v2 and v3) is: magic "GGUF", u32 version, u64 tensor count, u64 KV
 * count, the KV pairs (u64-length strings, typed values, typed arrays that
 * may nest), the tensor infos (name, u32 n_dims, u64 dims, u32 ggml type,
 * u64 offset), padding to general.alignment (default 32), then the data.
 *
 * The reader maps the file and keeps pointers into it: a 150K-entry vocabulary
 * costs no allocation per string.  Every count and length is checked against
 * the bytes that remain, so a hostile file is an error, never a crash or a
 * huge allocation.  Split models (name-00001-of-0000N.gguf) are read as one:
 * metadata from shard 1, tensors summed over every shard. */
#ifndef KVP_GGUF_H
#define KVP_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "kvplan.h"

typedef enum gguf_type {
    GGUF_UINT8 = 0, GGUF_INT8 = 1, GGUF_UINT16 = 2, GGUF_INT16 = 3,
    GGUF_UINT32 = 4, GGUF_INT32 = 5, GGUF_FLOAT32 = 6, GGUF_BOOL = 7,
    GGUF_STRING = 8, GGUF_ARRAY = 9, GGUF_UINT64 = 10, GGUF_INT64 = 11,
    GGUF_FLOAT64 = 12, GGUF_TYPE_COUNT
} gguf_type;

typedef struct gguf_str {
    const char *s;           /* points into the mapped file: NOT NUL-terminated */
    uint64_t len;
} gguf_str;

typedef struct gguf_kv {
    gguf_str key;
    gguf_type type;
    /* scalars */
    union {
        uint64_t u;          /* UINT8..UINT64, BOOL */
        int64_t i;           /* INT8..INT64 */
        double f;            /* FLOAT32, FLOAT64 */
        gguf_str str;        /* STRING */
    } v;
    /* arrays (type == GGUF_ARRAY) */
    gguf_type arr_type;      /* element type; GGUF_ARRAY for nested arrays */
    uint64_t arr_n;          /* element count */
    const uint8_t *arr_data; /* first element, in the mapped file */
} gguf_kv;

typedef struct gguf_tensor {
    gguf_str name;
    uint32_t n_dims;         /* 1..4 */
    uint64_t ne[4];          /* dims, unused ones 1 */
    uint32_t type;           /* ggml type id */
    uint64_t offset;         /* relative to the data section of its shard */
    uint64_t nbytes;         /* ggml_nbytes for a contiguous tensor */
    uint32_t shard;          /* 0-based shard index */
} gguf_tensor;

typedef struct gguf_file {
    char path[1024];
    uint32_t version;
    uint64_t n_kv, n_tensors;
    gguf_kv *kv;
    gguf_tensor *tensors;    /* over all shards */
    uint64_t alignment;
    uint64_t data_offset;    /* of shard 1 */
    uint64_t file_size;      /* of shard 1; 0 when read from memory without a size */
    uint32_t n_shards;
    /* private: the mappings, or the copies of kvp_gguf_read_mem's bytes */
    void *maps[64];
    size_t map_sizes[64];
    int in_memory;
} gguf_file;

/* Reads path (shard 1 of a split model brings the others).  On failure the
 * error names the file and the problem in one line. */
int kvp_gguf_read(const char *path, gguf_file **out, kvp_error *err);
void kvp_gguf_free(gguf_file *f);

/* ---- headers from memory (remote files: the header bytes only) ------------- */

/* The largest header kvplan reads: far above any real tokenizer (~10 MB),
 * small enough that a hostile server cannot make it buffer gigabytes. */
#define KVP_GGUF_HEADER_MAX (64ull << 20)

/* Given the first n bytes of a GGUF file: 1 when they hold the whole header
 * (magic, version, KV pairs, tensor infos, up to the aligned start of the
 * data section), *need = its length; 0 when they do not, *need = the least
 * total length that could complete it (always > n; fetch at least that
 * much before asking again); -1 (err names `name`) when no more bytes could
 * make them a GGUF kvplan reads: wrong magic or version, counts or lengths
 * that cannot fit, any check kvp_gguf_read makes on the header, or a header
 * longer than KVP_GGUF_HEADER_MAX.  Data-section checks that need the file
 * size are left to kvp_gguf_read_mem.  Each call parses from the start, so
 * call it when *need bytes have arrived rather than on every chunk. */
int kvp_gguf_header_need(const void *buf, size_t n, const char *name, uint64_t *need,
                         kvp_error *err);

/* One shard's header bytes: data[0..size) is a prefix of the file holding at
 * least the tensor infos; file_size is the whole file's (Content-Range total,
 * X-Linked-Size), 0 if unknown, when the check that tensor data lies inside
 * the file is skipped.  name (a repo path or a URL without its query) is
 * used in messages only: split shards are not found by name here. */
typedef struct gguf_mem {
    const void *data;
    size_t size;
    uint64_t file_size;
    const char *name;
} gguf_mem;

/* Reads n shards (1 <= n <= 64) from memory with the same parser and checks
 * as kvp_gguf_read, copying the bytes (the caller's buffers may go).  n must
 * be shard 1's split.count, or 1: shard 1 alone gives all the metadata and
 * its own tensors, and split.count says how many shards to fetch. */
int kvp_gguf_read_mem(const gguf_mem *shards, uint32_t n, gguf_file **out, kvp_error *err);

/* Lookups by key (exact match); NULL when absent. */
const gguf_kv *kvp_gguf_find(const gguf_file *f, const char *key);
/* Integer-valued scalars of any integer or bool type; -1 if absent or not
 * an integer, or negative. */
int kvp_gguf_get_uint(const gguf_file *f, const char *key, uint64_t *out);
int kvp_gguf_get_float(const gguf_file *f, const char *key, double *out);
/* A string value copied into buf (NUL-terminated, truncated to n-1). */
int kvp_gguf_get_str(const gguf_file *f, const char *key, char *buf, size_t n);
/* Element idx of a numeric (or bool) array as an unsigned / a double. */
int kvp_gguf_arr_uint(const gguf_kv *kv, uint64_t idx, uint64_t *out);
int kvp_gguf_arr_float(const gguf_kv *kv, uint64_t idx, double *out);
/* Element idx of a string array (walks from the start: O(idx)). */
int kvp_gguf_arr_str(const gguf_kv *kv, uint64_t idx, gguf_str *out);
const gguf_tensor *kvp_gguf_find_tensor(const gguf_file *f, const char *name);

/* ggml type traits for tensor sizes: values per block and bytes per block;
 * 0 for ids ggml does not define. */
unsigned kvp_ggml_type_block(uint32_t type);
unsigned kvp_ggml_type_block_bytes(uint32_t type);
const char *kvp_ggml_type_name(uint32_t type);
/* Bytes of a contiguous tensor of a ggml type and dims ne[0..3] (all >= 1):
 * ne[0] / block * block_bytes * ne[1] * ne[2] * ne[3].  Returns 0, or
 * GGUF_NB_TYPE (type undefined), GGUF_NB_BLOCK (ne[0] not a multiple of the
 * block) or GGUF_NB_BIG (2^63 elements or bytes or more). */
enum { GGUF_NB_TYPE = 1, GGUF_NB_BLOCK = 2, GGUF_NB_BIG = 3 };
int kvp_gguf_tensor_nbytes(uint32_t type, const uint64_t ne[4], uint64_t *out);
enum { GGML_TYPE_F32_ID = 0, GGML_TYPE_F16_ID = 1, GGML_TYPE_Q8_0_ID = 8 };

/* ---- writer ---------------------------------------------------------------- */

typedef struct gguf_writer gguf_writer;

gguf_writer *kvp_gguf_writer_new(void);
void kvp_gguf_writer_free(gguf_writer *w);
/* Metadata, in the order written. */
void kvp_gguf_w_u32(gguf_writer *w, const char *key, uint32_t v);
void kvp_gguf_w_i32(gguf_writer *w, const char *key, int32_t v);
void kvp_gguf_w_u64(gguf_writer *w, const char *key, uint64_t v);
void kvp_gguf_w_f32(gguf_writer *w, const char *key, float v);
void kvp_gguf_w_bool(gguf_writer *w, const char *key, int v);
void kvp_gguf_w_str(gguf_writer *w, const char *key, const char *v);
void kvp_gguf_w_arr_i32(gguf_writer *w, const char *key, const int32_t *v, size_t n);
void kvp_gguf_w_arr_u32(gguf_writer *w, const char *key, const uint32_t *v, size_t n);
void kvp_gguf_w_arr_u64(gguf_writer *w, const char *key, const uint64_t *v, size_t n);
void kvp_gguf_w_arr_f32(gguf_writer *w, const char *key, const float *v, size_t n);
void kvp_gguf_w_arr_bool(gguf_writer *w, const char *key, const uint8_t *v, size_t n);
void kvp_gguf_w_arr_str(gguf_writer *w, const char *key, const char *const *v, size_t n);
/* A tensor of n_dims dims (ne[0] fastest) and ggml type; its data is a hole. */
void kvp_gguf_w_tensor(gguf_writer *w, const char *name, uint32_t n_dims, const uint64_t *ne,
                   uint32_t type);
/* Writes the header and tensor infos, then extends the file with ftruncate
 * to its full size (a sparse hole).  Refuses an existing file unless force.
 * Any earlier failure (out of memory, overflow) is reported here. */
int kvp_gguf_writer_write(gguf_writer *w, const char *path, int force, kvp_error *err);

#endif
