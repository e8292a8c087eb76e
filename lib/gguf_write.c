/* gguf_write.c - the GGUF v3 writer for sparse "shape twins": real metadata
 * and tensor infos, with the data section left as a hole.
 *
 * Metadata is serialized as it is added; tensors are kept as shapes and laid
 * out at write time, when the alignment is final.  A failure while building
 * (out of memory, a bad shape, a repeated key) is remembered and reported by
 * kvp_gguf_writer_write, so callers can add everything and check once.  The file
 * is written so that the reader's checks (and llama.cpp's) pass: keys unique,
 * tensors packed in order at aligned offsets, data inside the file. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf.h"
#include "kvp_int.h"

typedef struct wbuf {
    uint8_t *p;
    size_t n, cap;
} wbuf;

typedef struct wtensor {
    char *name;
    uint32_t n_dims, type;
    uint64_t ne[4], nbytes;
} wtensor;

struct gguf_writer {
    wbuf kv;             /* the serialized KV pairs */
    uint64_t n_kv;
    char **keys;         /* for the duplicate check */
    wtensor *tensors;
    uint64_t n_tensors;
    size_t cap_keys, cap_tensors;
    uint64_t alignment;
    char failed[400];    /* the first error, without the path */
};

KVP_PRINTF(2, 3) static void fail(gguf_writer *w, const char *fmt, ...)
{
    if (w->failed[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->failed, sizeof w->failed, fmt, ap);
    va_end(ap);
}

gguf_writer *kvp_gguf_writer_new(void)
{
    gguf_writer *w = calloc(1, sizeof *w);
    if (w)
        w->alignment = 32;
    return w;
}

void kvp_gguf_writer_free(gguf_writer *w)
{
    if (!w)
        return;
    for (uint64_t i = 0; i < w->n_kv; i++)
        free(w->keys[i]);
    for (uint64_t i = 0; i < w->n_tensors; i++)
        free(w->tensors[i].name);
    free(w->keys);
    free(w->tensors);
    free(w->kv.p);
    free(w);
}

/* ---- bytes ----------------------------------------------------------------- */

static int reserve(gguf_writer *w, wbuf *b, size_t more)
{
    if (more <= b->cap - b->n)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->n < more) {
        if (cap > SIZE_MAX / 2) {
            fail(w, "metadata too large");
            return -1;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        fail(w, "out of memory");
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static void put(gguf_writer *w, wbuf *b, const void *src, size_t n)
{
    if (n && reserve(w, b, n) == 0) {
        memcpy(b->p + b->n, src, n);
        b->n += n;
    }
}

static void put_le(gguf_writer *w, wbuf *b, uint64_t v, unsigned n)
{
    uint8_t le[8];
    for (unsigned i = 0; i < n; i++)
        le[i] = (uint8_t)(v >> (8 * i));
    put(w, b, le, n);
}

static void put_str(gguf_writer *w, wbuf *b, const char *s)
{
    size_t n = strlen(s);
    put_le(w, b, n, 8);
    put(w, b, s, n);
}

/* ---- metadata -------------------------------------------------------------- */

static int key_taken(const gguf_writer *w, const char *key)
{
    for (uint64_t i = 0; i < w->n_kv; i++)
        if (strcmp(w->keys[i], key) == 0)
            return 1;
    return 0;
}

/* Starts a pair: key and value type.  0 if the value may follow. */
static int begin(gguf_writer *w, const char *key, gguf_type t)
{
    if (!w || w->failed[0])
        return -1;
    if (!key || !*key) {
        fail(w, "empty metadata key");
        return -1;
    }
    if (key_taken(w, key)) {
        fail(w, "duplicate key '%s'", key);
        return -1;
    }
    if (w->n_kv == w->cap_keys) {
        size_t cap = w->cap_keys * 2 + 16;
        char **p = cap < SIZE_MAX / sizeof *p ? realloc(w->keys, cap * sizeof *p) : NULL;
        if (!p) {
            fail(w, "out of memory");
            return -1;
        }
        w->keys = p;
        w->cap_keys = cap;
    }
    if (!(w->keys[w->n_kv] = strdup(key))) {
        fail(w, "out of memory");
        return -1;
    }
    w->n_kv++;
    put_str(w, &w->kv, key);
    put_le(w, &w->kv, t, 4);
    return w->failed[0] ? -1 : 0;
}

static void arr_header(gguf_writer *w, gguf_type t, size_t n)
{
    put_le(w, &w->kv, t, 4);
    put_le(w, &w->kv, n, 8);
}

void kvp_gguf_w_u32(gguf_writer *w, const char *key, uint32_t v)
{
    if (begin(w, key, GGUF_UINT32))
        return;
    put_le(w, &w->kv, v, 4);
    if (strcmp(key, "general.alignment") == 0) {
        if (v == 0 || (v & (v - 1)))
            fail(w, "general.alignment %u is not a power of two", v);
        w->alignment = v;
    }
}

void kvp_gguf_w_i32(gguf_writer *w, const char *key, int32_t v)
{
    if (begin(w, key, GGUF_INT32) == 0)
        put_le(w, &w->kv, (uint32_t)v, 4);
}

void kvp_gguf_w_u64(gguf_writer *w, const char *key, uint64_t v)
{
    if (begin(w, key, GGUF_UINT64) == 0)
        put_le(w, &w->kv, v, 8);
}

static uint32_t f32_bits(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

void kvp_gguf_w_f32(gguf_writer *w, const char *key, float v)
{
    if (begin(w, key, GGUF_FLOAT32) == 0)
        put_le(w, &w->kv, f32_bits(v), 4);
}

void kvp_gguf_w_bool(gguf_writer *w, const char *key, int v)
{
    if (begin(w, key, GGUF_BOOL) == 0)
        put_le(w, &w->kv, v != 0, 1);
}

void kvp_gguf_w_str(gguf_writer *w, const char *key, const char *v)
{
    if (begin(w, key, GGUF_STRING) == 0)
        put_str(w, &w->kv, v);
}

void kvp_gguf_w_arr_i32(gguf_writer *w, const char *key, const int32_t *v, size_t n)
{
    if (begin(w, key, GGUF_ARRAY))
        return;
    arr_header(w, GGUF_INT32, n);
    for (size_t i = 0; i < n; i++)
        put_le(w, &w->kv, (uint32_t)v[i], 4);
}

void kvp_gguf_w_arr_u32(gguf_writer *w, const char *key, const uint32_t *v, size_t n)
{
    if (begin(w, key, GGUF_ARRAY))
        return;
    arr_header(w, GGUF_UINT32, n);
    for (size_t i = 0; i < n; i++)
        put_le(w, &w->kv, v[i], 4);
}

void kvp_gguf_w_arr_u64(gguf_writer *w, const char *key, const uint64_t *v, size_t n)
{
    if (begin(w, key, GGUF_ARRAY))
        return;
    arr_header(w, GGUF_UINT64, n);
    for (size_t i = 0; i < n; i++)
        put_le(w, &w->kv, v[i], 8);
}

void kvp_gguf_w_arr_f32(gguf_writer *w, const char *key, const float *v, size_t n)
{
    if (begin(w, key, GGUF_ARRAY))
        return;
    arr_header(w, GGUF_FLOAT32, n);
    for (size_t i = 0; i < n; i++)
        put_le(w, &w->kv, f32_bits(v[i]), 4);
}

void kvp_gguf_w_arr_bool(gguf_writer *w, const char *key, const uint8_t *v, size_t n)
{
    if (begin(w, key, GGUF_ARRAY))
        return;
    arr_header(w, GGUF_BOOL, n);
    for (size_t i = 0; i < n; i++)
        put_le(w, &w->kv, v[i] != 0, 1);
}

void kvp_gguf_w_arr_str(gguf_writer *w, const char *key, const char *const *v, size_t n)
{
    if (begin(w, key, GGUF_ARRAY))
        return;
    arr_header(w, GGUF_STRING, n);
    for (size_t i = 0; i < n; i++)
        put_str(w, &w->kv, v[i]);
}

/* ---- tensors --------------------------------------------------------------- */

static int shape_ok(gguf_writer *w, const char *name, uint32_t n_dims, const uint64_t *ne,
                    uint32_t type, wtensor *t)
{
    if (strlen(name) >= 64) {
        fail(w, "tensor '%s': name longer than ggml's limit of 63 bytes", name);
        return 0;
    }
    if (n_dims < 1 || n_dims > 4) {
        fail(w, "tensor '%s': n_dims %u is not in 1..4", name, n_dims);
        return 0;
    }
    for (uint32_t j = 0; j < 4; j++) {
        t->ne[j] = j < n_dims ? ne[j] : 1;
        if (t->ne[j] == 0 || t->ne[j] > (uint64_t)INT64_MAX) {
            fail(w, "tensor '%s': dimension %u is %llu", name, j, (unsigned long long)t->ne[j]);
            return 0;
        }
    }
    switch (kvp_gguf_tensor_nbytes(type, t->ne, &t->nbytes)) {
    case 0: return 1;
    case GGUF_NB_TYPE: fail(w, "tensor '%s': unknown ggml type %u", name, type); return 0;
    case GGUF_NB_BLOCK:
        fail(w, "tensor '%s': %llu values per row is not a multiple of %s's block of %u", name,
             (unsigned long long)t->ne[0], kvp_ggml_type_name(type), kvp_ggml_type_block(type));
        return 0;
    default: fail(w, "tensor '%s': 2^63 elements or bytes or more", name); return 0;
    }
}

void kvp_gguf_w_tensor(gguf_writer *w, const char *name, uint32_t n_dims, const uint64_t *ne,
                   uint32_t type)
{
    wtensor t = {.n_dims = n_dims, .type = type};
    if (!w || w->failed[0] || !shape_ok(w, name, n_dims, ne, type, &t))
        return;
    for (uint64_t i = 0; i < w->n_tensors; i++)
        if (strcmp(w->tensors[i].name, name) == 0) {
            fail(w, "duplicate tensor name '%s'", name);
            return;
        }
    if (w->n_tensors == w->cap_tensors) {
        size_t cap = w->cap_tensors * 2 + 64;
        wtensor *p = cap < SIZE_MAX / sizeof *p ? realloc(w->tensors, cap * sizeof *p) : NULL;
        if (!p) {
            fail(w, "out of memory");
            return;
        }
        w->tensors = p;
        w->cap_tensors = cap;
    }
    if (!(t.name = strdup(name))) {
        fail(w, "out of memory");
        return;
    }
    w->tensors[w->n_tensors++] = t;
}

/* ---- the file -------------------------------------------------------------- */

static uint64_t pad(uint64_t x, uint64_t align)
{
    return x + (align - x % align) % align;
}

/* Header, KV pairs, tensor infos with packed aligned offsets, padding.
 * *total is the whole file: header plus the padded data section. */
static int layout(gguf_writer *w, wbuf *h, uint64_t *total)
{
    uint64_t off = 0;
    put(w, h, "GGUF", 4);
    put_le(w, h, 3, 4);
    put_le(w, h, w->n_tensors, 8);
    put_le(w, h, w->n_kv, 8);
    put(w, h, w->kv.p, w->kv.n);
    for (uint64_t i = 0; i < w->n_tensors; i++) {
        const wtensor *t = &w->tensors[i];
        put_str(w, h, t->name);
        put_le(w, h, t->n_dims, 4);
        for (uint32_t j = 0; j < t->n_dims; j++)
            put_le(w, h, t->ne[j], 8);
        put_le(w, h, t->type, 4);
        put_le(w, h, off, 8);
        if (kvp_add(off, pad(t->nbytes, w->alignment), &off)) {
            fail(w, "tensor data passes 2^64 bytes");
            return -1;
        }
    }
    if (w->n_tensors) {
        size_t n = (size_t)(pad(h->n, w->alignment) - h->n);
        if (reserve(w, h, n) == 0) {
            memset(h->p + h->n, 0, n);
            h->n += n;
        }
    }
    if (w->failed[0])
        return -1;
    if (kvp_add(h->n, off, total) || *total > (uint64_t)INT64_MAX) {
        fail(w, "file size passes 2^63 bytes");
        return -1;
    }
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* O_EXCL first, so we know whether the file is ours to remove on failure. */
static int open_out(const char *path, int force, int *created, kvp_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    *created = fd >= 0;
    if (fd < 0 && errno == EEXIST && force)
        fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0 && errno == EEXIST)
        return kvp_fail(err, KVP_EINPUT, "%s: already exists; refusing to overwrite it", path);
    if (fd < 0)
        return kvp_fail(err, KVP_EINPUT, "%s: cannot create: %s", path, strerror(errno));
    return fd;
}

int kvp_gguf_writer_write(gguf_writer *w, const char *path, int force, kvp_error *err)
{
    if (!w)
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", path);
    wbuf h = {0};
    uint64_t total = 0;
    if (layout(w, &h, &total)) {
        free(h.p);
        return kvp_fail(err, KVP_EINPUT, "%s: %s", path, w->failed);
    }
    int created, rc = 0;
    int fd = open_out(path, force, &created, err);
    if (fd < 0) {
        free(h.p);
        return -1;
    }
    if (write_all(fd, h.p, h.n))
        rc = kvp_fail(err, KVP_EINPUT, "%s: write failed: %s", path, strerror(errno));
    else if (ftruncate(fd, (off_t)total))
        rc = kvp_fail(err, KVP_EINPUT, "%s: cannot extend to %llu bytes: %s", path,
                      (unsigned long long)total, strerror(errno));
    if (close(fd) && rc == 0)
        rc = kvp_fail(err, KVP_EINPUT, "%s: write failed: %s", path, strerror(errno));
    if (rc && created)
        unlink(path);
    free(h.p);
    return rc;
}
