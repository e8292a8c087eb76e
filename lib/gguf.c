/* gguf.c - the GGUF reader: metadata and tensor infos, never tensor data.
 *
 * The file is mapped read-only and every string, array and name stays a
 * pointer into the map, so a 150K-token vocabulary costs one bounds check per
 * string and no allocation.  Nothing read from the file is trusted: each
 * count and length is checked against the bytes that remain before it is
 * used, arrays grow with what was actually parsed (a sparse twin may be huge
 * without holding much), and every failure is one line naming the file, the
 * item and the problem.
 *
 * Versions: v1 stored counts and lengths as u32 and is refused, as llama.cpp
 * refuses it.  v2 moved them to u64; v3 only added big-endian files, which
 * are told apart by the byte-swapped version and refused.  So v2 and v3 are
 * read by the same code.  The checks follow llama.cpp's gguf.cpp (v0.5.0),
 * which is what a file must pass to be loaded at all; nested arrays, which
 * llama.cpp does not read, are walked and kept as raw pointers.
 *
 * One parser serves three callers: a mapped file (kvp_gguf_read), header
 * bytes fetched over HTTP (kvp_gguf_read_mem, which copies them) and a
 * prefix still arriving (kvp_gguf_header_need).  The last runs the same
 * checks in "prefix mode", where running out of bytes is not an error but
 * a lower bound on the bytes still needed, so the remote reader and the
 * local one can never disagree about what a valid header is. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf.h"
#include "kvp_int.h"

enum {
    MAX_SHARDS = 64,     /* gguf_file keeps this many mappings */
    MAX_NEST = 16,       /* arrays of arrays, deeper is hostile */
    MAX_NAME = 64,       /* ggml's GGML_MAX_NAME, terminator included */
    MIN_KV_BYTES = 14,   /* u64 key length, 1-byte key, u32 type, 1-byte value */
    MIN_TENSOR_BYTES = 33, /* u64 name length, 1-byte name, n_dims, one dim, type, offset */
    /* what a prefix's "bytes needed" counts per tensor info still to come:
     * one name may be empty, and the bound must never pass the real header */
    MIN_TENSOR_REST = 32
};

_Static_assert(MAX_SHARDS == sizeof(((gguf_file *)0)->maps) / sizeof(void *),
               "one mapping per shard");

static const char *const type_names[GGUF_TYPE_COUNT] = {
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
    "bool", "string", "array", "uint64", "int64", "float64"};

/* Bytes of one value of a fixed-size type; 0 for string and array. */
static const uint8_t type_sizes[GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

/* ---- the cursor and its error messages ------------------------------------ */

typedef struct cursor {
    const uint8_t *base;
    uint64_t size, pos;
    const char *path;
    kvp_error *err;
    /* what is being read, for messages: "header", "key", "tensor info" */
    const char *what;
    uint64_t idx, count;
    gguf_str name;
    /* prefix mode: size is what has arrived so far, not the file's size */
    int prefix;
    int short_;        /* set when a prefix ran out: need holds the bound */
    uint64_t need;     /* prefix: total bytes the header needs, at least */
    uint64_t rest;     /* prefix: least bytes of the items after this one */
} cursor;

static void where(const cursor *c, char *buf, size_t n)
{
    if (!c->idx && !c->count) {
        snprintf(buf, n, "%s", c->what);
        return;
    }
    int len = snprintf(buf, n, "%s %llu of %llu", c->what, (unsigned long long)c->idx,
                       (unsigned long long)c->count);
    if (c->name.s && len > 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, " '%.*s'",
                 (int)(c->name.len > 80 ? 80 : c->name.len), c->name.s);
}

/* "path: where: message" */
KVP_PRINTF(2, 3) static int bad(const cursor *c, const char *fmt, ...)
{
    char at[160], msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    where(c, at, sizeof at);
    return kvp_fail(c->err, KVP_EINPUT, "%s: %s: %s", c->path, at, msg);
}

static int too_big(const cursor *c)
{
    char at[160];
    where(c, at, sizeof at);
    return kvp_fail(c->err, KVP_EINPUT,
                    "%s: %s: the header would pass %llu MiB (kvplan's cap on a GGUF header)",
                    c->path, at, (unsigned long long)(KVP_GGUF_HEADER_MAX >> 20));
}

/* In prefix mode a shortage is the answer, not an error: the item needs
 * `need` bytes at pos and `extra` more follow it inside the same value. */
#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static int short_of(cursor *c, uint64_t need, uint64_t extra)
{
    char at[160];
    if (c->prefix) {
        uint64_t total;
        if (kvp_add(c->pos, need, &total) || kvp_add(total, extra, &total) ||
            kvp_add(total, c->rest, &total) || total > KVP_GGUF_HEADER_MAX)
            return too_big(c);
        c->short_ = 1;
        c->need = total;
        return -1;
    }
    where(c, at, sizeof at);
    return kvp_fail(c->err, KVP_EINPUT,
                    "%s: truncated: %s ends past the end of the file "
                    "(needs %llu bytes at offset %llu, file %llu bytes)",
                    c->path, at, (unsigned long long)need, (unsigned long long)c->pos,
                    (unsigned long long)c->size);
}

static int truncated(cursor *c, uint64_t need)
{
    return short_of(c, need, 0);
}

static int oom(const cursor *c)
{
    return kvp_fail(c->err, KVP_EINPUT, "%s: out of memory", c->path);
}

/* ---- primitives: little-endian whatever the host ---------------------------- */

static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* The hot path: one load on a little-endian host (the byte loop above is not
 * merged into one by the compiler, and a vocabulary has 150K lengths). */
static inline uint64_t le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static uint64_t left(const cursor *c)
{
    return c->size - c->pos;
}

static inline int take(cursor *c, uint64_t n, const uint8_t **p)
{
    *p = c->base + c->pos; /* pos <= size: at most one past the end */
    if (n > left(c))
        return truncated(c, n);
    c->pos += n;
    return 0;
}

static int rd_u32(cursor *c, uint32_t *v)
{
    const uint8_t *p;
    if (take(c, 4, &p))
        return -1;
    *v = (uint32_t)le(p, 4);
    return 0;
}

static int rd_u64(cursor *c, uint64_t *v)
{
    const uint8_t *p;
    if (take(c, 8, &p))
        return -1;
    *v = le64(p);
    return 0;
}

static int rd_str(cursor *c, gguf_str *s)
{
    const uint8_t *p = NULL;
    if (rd_u64(c, &s->len) || take(c, s->len, &p))
        return -1;
    s->s = (const char *)p;
    return 0;
}

/* ---- growable arrays and a set of names ------------------------------------ */

static int grow(void **arr, uint64_t *cap, uint64_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint64_t n = *cap ? *cap : 16, bytes;
    while (n < need)
        if (kvp_mul(n, 2, &n))
            return -1;
    if (kvp_mul(n, elem, &bytes) || bytes > SIZE_MAX)
        return -1;
    void *p = realloc(*arr, (size_t)bytes);
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

/* Open addressing over names that live in the maps; finds duplicates in
 * linear time however many keys a hostile file holds. */
typedef struct slot {
    gguf_str name;
    uint64_t idx;
} slot;

typedef struct nameset {
    slot *slots;
    uint64_t cap, n; /* cap a power of two, or 0 */
} nameset;

static uint64_t hash(gguf_str s)
{
    uint64_t h = 1469598103934665603ull;
    for (uint64_t i = 0; i < s.len; i++)
        h = (h ^ (uint8_t)s.s[i]) * 1099511628211ull;
    return h;
}

static slot *probe(slot *slots, uint64_t cap, gguf_str s)
{
    for (uint64_t i = hash(s) & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!slots[i].name.s ||
            (slots[i].name.len == s.len && memcmp(slots[i].name.s, s.s, s.len) == 0))
            return &slots[i];
}

static int set_rehash(nameset *set)
{
    uint64_t cap = set->cap ? set->cap * 2 : 64;
    if (cap > SIZE_MAX / sizeof(slot))
        return -1;
    slot *slots = calloc((size_t)cap, sizeof(slot));
    if (!slots)
        return -1;
    for (uint64_t i = 0; i < set->cap; i++)
        if (set->slots[i].name.s)
            *probe(slots, cap, set->slots[i].name) = set->slots[i];
    free(set->slots);
    set->slots = slots;
    set->cap = cap;
    return 0;
}

/* 0: added; 1: already there (*prev its index); -1: out of memory.  A name of
 * length 0 has a non-NULL pointer too (it points into the map). */
static int set_add(nameset *set, gguf_str s, uint64_t idx, uint64_t *prev)
{
    if ((set->n + 1) * 2 > set->cap && set_rehash(set))
        return -1;
    slot *sl = probe(set->slots, set->cap, s);
    if (sl->name.s) {
        *prev = sl->idx;
        return 1;
    }
    sl->name = s;
    sl->idx = idx;
    set->n++;
    return 0;
}

/* ---- values ---------------------------------------------------------------- */

static int rd_scalar(cursor *c, gguf_type t, gguf_kv *kv)
{
    const uint8_t *p;
    if (t == GGUF_STRING)
        return rd_str(c, &kv->v.str);
    if (take(c, type_sizes[t], &p))
        return -1;
    uint64_t raw = le(p, type_sizes[t]);
    switch (t) {
    case GGUF_INT8: kv->v.i = (int8_t)raw; break;
    case GGUF_INT16: kv->v.i = (int16_t)raw; break;
    case GGUF_INT32: kv->v.i = (int32_t)raw; break;
    case GGUF_INT64: kv->v.i = (int64_t)raw; break;
    case GGUF_FLOAT32: {
        uint32_t bits = (uint32_t)raw;
        float f;
        memcpy(&f, &bits, sizeof f);
        kv->v.f = f;
        break;
    }
    case GGUF_FLOAT64: memcpy(&kv->v.f, &raw, sizeof kv->v.f); break;
    case GGUF_BOOL: kv->v.u = raw != 0; break;
    default: kv->v.u = raw; break;
    }
    return 0;
}

/* A vocabulary: the loop keeps the position in a register. */
static int skip_strings(cursor *c, uint64_t n)
{
    const uint8_t *b = c->base;
    uint64_t pos = c->pos, size = c->size;
    for (uint64_t i = 0; i < n; i++) {
        if (size - pos < 8) {
            c->pos = pos;
            return short_of(c, 8, (n - i - 1) * 8);
        }
        uint64_t len = le64(b + pos);
        pos += 8;
        if (len > size - pos) {
            c->pos = pos;
            return short_of(c, len, (n - i - 1) * 8);
        }
        pos += len;
    }
    c->pos = pos;
    return 0;
}

/* Walks n elements of type t: the bytes they need are checked before the
 * walk, so a count of 2^63 fails at once and a walk is linear in the file. */
static int skip_array(cursor *c, uint32_t t, uint64_t n, unsigned depth)
{
    if (t >= GGUF_TYPE_COUNT)
        return bad(c, "unknown value type %u for array elements", t);
    uint64_t min = type_sizes[t] ? type_sizes[t] : t == GGUF_STRING ? 8 : 12;
    if (c->prefix && n > left(c) / min) {
        if (n > (KVP_GGUF_HEADER_MAX - c->pos) / min)
            return bad(c, "array of %llu %s values cannot fit in a header of %llu MiB",
                       (unsigned long long)n, type_names[t],
                       (unsigned long long)(KVP_GGUF_HEADER_MAX >> 20));
        return truncated(c, n * min);
    }
    if (n > left(c) / min)
        return bad(c, "array of %llu %s values cannot fit in the %llu bytes left at offset %llu",
                   (unsigned long long)n, type_names[t], (unsigned long long)left(c),
                   (unsigned long long)c->pos);
    if (type_sizes[t]) {
        c->pos += n * type_sizes[t];
        return 0;
    }
    if (t == GGUF_STRING)
        return skip_strings(c, n);
    if (t == GGUF_ARRAY && depth >= MAX_NEST)
        return bad(c, "arrays nested more than %d deep", MAX_NEST);
    for (uint64_t i = 0; i < n; i++) {
        uint32_t et;
        uint64_t en;
        if (rd_u32(c, &et) || rd_u64(c, &en) || skip_array(c, et, en, depth + 1))
            return -1;
    }
    return 0;
}

static int rd_value(cursor *c, gguf_kv *kv)
{
    uint32_t t;
    if (rd_u32(c, &t))
        return -1;
    if (t >= GGUF_TYPE_COUNT)
        return bad(c, "unknown value type %u", t);
    kv->type = (gguf_type)t;
    if (t != GGUF_ARRAY)
        return rd_scalar(c, kv->type, kv);
    uint32_t et;
    if (rd_u32(c, &et) || rd_u64(c, &kv->arr_n))
        return -1;
    kv->arr_data = c->base + c->pos;
    if (skip_array(c, et, kv->arr_n, 1))
        return -1;
    kv->arr_type = (gguf_type)et;
    return 0;
}

/* ---- one shard ------------------------------------------------------------- */

/* What parsing one shard yields besides its tensors. */
typedef struct shard {
    uint32_t version;
    gguf_kv *kv;
    uint64_t n_kv, cap_kv;
    uint64_t alignment, data_offset, size;
} shard;

/* Tensors accumulate over shards, with one name set so a name repeated in
 * another shard is caught too. */
typedef struct reader {
    gguf_file *f;
    uint64_t cap_tensors;
    nameset tensor_names;
} reader;

/* Opens a file that could be a GGUF: a regular file of at least 4 bytes. */
static int open_gguf(const char *path, int *fd, struct stat *st, kvp_error *err)
{
    if ((*fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return kvp_fail(err, KVP_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    int rc = -1;
    if (fstat(*fd, st))
        kvp_fail(err, KVP_EINPUT, "%s: cannot stat: %s", path, strerror(errno));
    else if (S_ISDIR(st->st_mode))
        kvp_fail(err, KVP_EINPUT, "%s: is a directory, not a GGUF file", path);
    else if (!S_ISREG(st->st_mode))
        kvp_fail(err, KVP_EINPUT, "%s: not a regular file", path);
    else if (st->st_size < 4)
        kvp_fail(err, KVP_EINPUT, "%s: not a GGUF file (%lld bytes)", path, (long long)st->st_size);
    else
        rc = 0;
    if (rc)
        close(*fd);
    return rc;
}

#ifdef KVP_NO_MMAP
/* The WebAssembly build reads the header only, growing a buffer as
 * kvp_gguf_header_need asks: a page has no room to map a 4 GiB file, and
 * the header is all kvplan reads.  A file that ends inside its header is
 * read whole, so the parser says where it ends, as with a mapping. */
static int read_header(const char *path, gguf_file *f, uint32_t idx, uint64_t *file_size,
                       kvp_error *err)
{
    int fd;
    struct stat st;
    if (open_gguf(path, &fd, &st, err))
        return -1;
    uint64_t size = (uint64_t)st.st_size, need = 1u << 20;
    uint8_t *buf = NULL;
    size_t have = 0;
    int rc = -1;
    for (;;) {
        size_t want = (size_t)(need < size ? need : size);
        uint8_t *nb = realloc(buf, want ? want : 1);
        if (!nb) {
            kvp_fail(err, KVP_EINPUT, "%s: out of memory", path);
            break;
        }
        buf = nb;
        ssize_t got = 1;
        while (have < want && (got = pread(fd, buf + have, want - have, (off_t)have)) > 0)
            have += (size_t)got;
        if (got < 0) {
            kvp_fail(err, KVP_EINPUT, "%s: cannot read: %s", path, strerror(errno));
            break;
        }
        /* an end before the size: a page's file holds the header alone */
        kvp_error why;
        int whole = kvp_gguf_header_need(buf, have, path, &need, &why);
        if (whole != 0 || have == size || got == 0) { /* the parser names what is wrong */
            rc = 0;
            break;
        }
        if (need < 2 * (uint64_t)have)
            need = 2 * (uint64_t)have;
    }
    close(fd);
    if (rc) {
        free(buf);
        return -1;
    }
    f->in_memory = 1;
    f->maps[idx] = buf;
    f->map_sizes[idx] = have;
    *file_size = size;
    return 0;
}
#else
static int map_file(const char *path, gguf_file *f, uint32_t idx, kvp_error *err)
{
    int fd;
    struct stat st;
    if (open_gguf(path, &fd, &st, err))
        return -1;
    int rc = -1;
    if ((uint64_t)st.st_size > SIZE_MAX) {
        kvp_fail(err, KVP_EINPUT, "%s: too large to map", path);
    } else {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED)
            kvp_fail(err, KVP_EINPUT, "%s: cannot map: %s", path, strerror(errno));
        else {
            f->maps[idx] = m;
            f->map_sizes[idx] = (size_t)st.st_size;
            rc = 0;
        }
    }
    close(fd);
    return rc;
}
#endif

static int rd_header(cursor *c, shard *sh, uint64_t *n_tensors, uint64_t *n_kv)
{
    c->what = "header";
    /* the mapped path refuses files under 4 bytes before getting here */
    size_t m = c->size < 4 ? (size_t)c->size : 4;
    if (memcmp(c->base, "GGUF", m) != 0) {
        uint8_t b[4] = {0};
        memcpy(b, c->base, m);
        /* a captive portal or a login page answers with HTML */
        return kvp_fail(c->err, KVP_EINPUT, "%s: not a GGUF file (it starts with %02x %02x %02x %02x%s)",
                        c->path, b[0], b[1], b[2], b[3], b[0] == '<' ? ": an HTML page?" : "");
    }
    if (c->size < 4) {
        if (c->prefix)
            return truncated(c, 24);
        return kvp_fail(c->err, KVP_EINPUT, "%s: not a GGUF file (%llu bytes)", c->path,
                        (unsigned long long)c->size);
    }
    c->pos = 4;
    c->rest = 16; /* in prefix mode: the two counts still to come */
    if (rd_u32(c, &sh->version))
        return -1;
    if (sh->version && !(sh->version & 0xffff))
        return bad(c, "version 0x%08x: a big-endian GGUF file, which is not supported",
                   sh->version);
    if (sh->version == 1)
        return bad(c, "GGUF v1 is not supported (it used 32-bit counts; llama.cpp refuses it too)");
    if (sh->version < 2 || sh->version > 3)
        return bad(c, "GGUF version %u is not supported (only v2 and v3)", sh->version);
    c->rest = 8;
    if (rd_u64(c, n_tensors))
        return -1;
    c->rest = 0;
    if (rd_u64(c, n_kv))
        return -1;
    if (c->prefix) {
        /* what has arrived says nothing yet: only the cap bounds the counts */
        uint64_t room = KVP_GGUF_HEADER_MAX - c->pos;
        if (*n_kv > room / MIN_KV_BYTES || *n_tensors > room / MIN_TENSOR_BYTES ||
            *n_kv * MIN_KV_BYTES + *n_tensors * MIN_TENSOR_BYTES > room)
            return bad(c, "%llu keys and %llu tensor infos cannot fit in a header of %llu MiB",
                       (unsigned long long)*n_kv, (unsigned long long)*n_tensors,
                       (unsigned long long)(KVP_GGUF_HEADER_MAX >> 20));
        return 0;
    }
    if (*n_kv > left(c) / MIN_KV_BYTES)
        return bad(c, "key count %llu cannot fit in the %llu bytes left (a key takes at least %d)",
                   (unsigned long long)*n_kv, (unsigned long long)left(c), MIN_KV_BYTES);
    if (*n_tensors > left(c) / MIN_TENSOR_BYTES)
        return bad(c, "tensor count %llu cannot fit in the %llu bytes left "
                      "(a tensor info takes at least %d)",
                   (unsigned long long)*n_tensors, (unsigned long long)left(c), MIN_TENSOR_BYTES);
    return 0;
}

static int rd_kvs(cursor *c, shard *sh, uint64_t n_kv, uint64_t n_tensors)
{
    nameset keys = {0};
    int rc = 0;
    c->what = "key";
    c->count = n_kv;
    for (uint64_t i = 0; i < n_kv && rc == 0; i++) {
        gguf_kv kv = {0};
        uint64_t prev;
        c->idx = i;
        /* both counts were checked against the bytes (or the cap): no wrap */
        c->rest = (n_kv - i - 1) * MIN_KV_BYTES + n_tensors * MIN_TENSOR_REST;
        c->name.s = NULL;
        if (rd_str(c, &kv.key)) {
            rc = -1;
        } else if (kv.key.len == 0) {
            rc = bad(c, "empty key");
        } else {
            c->name = kv.key;
            int dup = set_add(&keys, kv.key, i, &prev);
            if (dup < 0)
                rc = oom(c);
            else if (dup)
                rc = bad(c, "duplicate key (also key %llu); llama.cpp refuses it",
                         (unsigned long long)prev);
            else if (rd_value(c, &kv))
                rc = -1;
            else if (grow((void **)&sh->kv, &sh->cap_kv, i + 1, sizeof kv))
                rc = oom(c);
            else
                sh->kv[sh->n_kv++] = kv;
        }
    }
    free(keys.slots);
    return rc;
}

/* llama.cpp insists on a uint32 power of two; default 32. */
static int rd_alignment(cursor *c, shard *sh)
{
    sh->alignment = 32;
    for (uint64_t i = 0; i < sh->n_kv; i++) {
        const gguf_kv *kv = &sh->kv[i];
        if (kv->key.len != 17 || memcmp(kv->key.s, "general.alignment", 17) != 0)
            continue;
        c->what = "key";
        c->idx = i;
        c->name = kv->key;
        if (kv->type != GGUF_UINT32)
            return bad(c, "must be a uint32, not %s", type_names[kv->type]);
        if (kv->v.u == 0 || (kv->v.u & (kv->v.u - 1)))
            return bad(c, "alignment %llu is not a power of two", (unsigned long long)kv->v.u);
        sh->alignment = kv->v.u;
    }
    return 0;
}

static int rd_shape(cursor *c, gguf_tensor *t)
{
    if (rd_u32(c, &t->n_dims))
        return -1;
    if (t->n_dims < 1 || t->n_dims > 4)
        return bad(c, "n_dims %u is not in 1..4", t->n_dims);
    for (uint32_t j = 0; j < 4; j++) {
        t->ne[j] = 1;
        if (j < t->n_dims && rd_u64(c, &t->ne[j]))
            return -1;
        if ((int64_t)t->ne[j] < 0)
            return bad(c, "dimension %u is negative (%lld)", j, (long long)(int64_t)t->ne[j]);
        if (t->ne[j] == 0)
            return bad(c, "dimension %u is 0", j);
    }
    if (rd_u32(c, &t->type))
        return -1;
    switch (kvp_gguf_tensor_nbytes(t->type, t->ne, &t->nbytes)) {
    case 0: return 0;
    case GGUF_NB_TYPE: return bad(c, "unknown ggml type %u", t->type);
    case GGUF_NB_BLOCK:
        return bad(c, "%llu values per row is not a multiple of %s's block of %u",
                   (unsigned long long)t->ne[0], kvp_ggml_type_name(t->type),
                   kvp_ggml_type_block(t->type));
    default:
        return bad(c, "shape %llu x %llu x %llu x %llu of %s is 2^63 elements or bytes or more",
                   (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
                   (unsigned long long)t->ne[2], (unsigned long long)t->ne[3],
                   kvp_ggml_type_name(t->type));
    }
}

static int rd_tensors(cursor *c, reader *r, uint32_t shard_idx, uint64_t n)
{
    gguf_file *f = r->f;
    c->what = "tensor info";
    c->count = n;
    for (uint64_t i = 0; i < n; i++) {
        gguf_tensor t = {.shard = shard_idx};
        uint64_t prev;
        c->idx = i;
        c->rest = (n - i - 1) * MIN_TENSOR_REST;
        c->name.s = NULL;
        if (rd_str(c, &t.name))
            return -1;
        c->name = t.name;
        if (t.name.len >= MAX_NAME)
            return bad(c, "name of %llu bytes is longer than ggml's limit of %d",
                       (unsigned long long)t.name.len, MAX_NAME - 1);
        int dup = set_add(&r->tensor_names, t.name, f->n_tensors, &prev);
        if (dup < 0)
            return oom(c);
        if (dup)
            return bad(c, "duplicate tensor name (also tensor %llu of shard %u)",
                       (unsigned long long)prev, f->tensors[prev].shard + 1);
        if (rd_shape(c, &t) || rd_u64(c, &t.offset))
            return -1;
        if (grow((void **)&f->tensors, &r->cap_tensors, f->n_tensors + 1, sizeof t))
            return oom(c);
        f->tensors[f->n_tensors++] = t;
    }
    return 0;
}

static uint64_t pad(uint64_t x, uint64_t align)
{
    return x + (align - x % align) % align;
}

/* As llama.cpp: each tensor starts where the previous one's padded data
 * ends, and the data must lie inside the file (a sparse twin's does).
 * file_size 0: not known (a prefix, or a server that did not say). */
static int check_data(cursor *c, shard *sh, const gguf_tensor *t, uint64_t n, uint64_t file_size)
{
    uint64_t expect = 0;
    c->what = "tensor";
    c->count = n;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t end;
        c->idx = i;
        c->name = t[i].name;
        if (t[i].offset % sh->alignment)
            return bad(c, "data offset %llu is not a multiple of the alignment %llu",
                       (unsigned long long)t[i].offset, (unsigned long long)sh->alignment);
        if (t[i].offset != expect)
            return bad(c, "data offset %llu, expected %llu (llama.cpp wants tensor data packed in order)",
                       (unsigned long long)t[i].offset, (unsigned long long)expect);
        if (kvp_add(sh->data_offset, t[i].offset, &end) || kvp_add(end, t[i].nbytes, &end) ||
            (file_size && end > file_size)) {
            char at[160];
            where(c, at, sizeof at);
            return kvp_fail(c->err, KVP_EINPUT,
                            "%s: truncated: %s: data ends past the end of the file "
                            "(%llu bytes at offset %llu, file %llu bytes)",
                            c->path, at, (unsigned long long)t[i].nbytes,
                            (unsigned long long)(sh->data_offset + t[i].offset),
                            (unsigned long long)file_size);
        }
        if (kvp_add(expect, pad(t[i].nbytes, sh->alignment), &expect))
            return bad(c, "data section passes 2^64 bytes");
    }
    return 0;
}

/* The one parser: header, KV pairs, tensor infos, then the data layout
 * against file_size (0: unknown).  c holds the bytes, which may stop anywhere
 * after the tensor infos. */
static int parse_shard(reader *r, uint32_t idx, cursor *c, uint64_t file_size, shard *sh)
{
    gguf_file *f = r->f;
    uint64_t n_tensors = 0, n_kv = 0, first = f->n_tensors;
    sh->size = file_size;
    if (rd_header(c, sh, &n_tensors, &n_kv) || rd_kvs(c, sh, n_kv, n_tensors) ||
        rd_alignment(c, sh) || rd_tensors(c, r, idx, n_tensors))
        return -1;
    /* llama.cpp pads to the data section only when there are tensors */
    sh->data_offset = n_tensors ? pad(c->pos, sh->alignment) : c->pos;
    c->what = "header";
    c->idx = c->count = 0;
    if (c->prefix && sh->data_offset > KVP_GGUF_HEADER_MAX)
        return too_big(c);
    return check_data(c, sh, n_tensors ? f->tensors + first : NULL, n_tensors, file_size);
}

static int rd_shard(reader *r, uint32_t idx, const char *path, shard *sh, kvp_error *err)
{
    gguf_file *f = r->f;
#ifdef KVP_NO_MMAP
    uint64_t file_size;
    if (read_header(path, f, idx, &file_size, err))
        return -1;
#else
    if (map_file(path, f, idx, err))
        return -1;
    uint64_t file_size = f->map_sizes[idx];
#endif
    cursor c = {.base = f->maps[idx], .size = f->map_sizes[idx], .path = path, .err = err};
    return parse_shard(r, idx, &c, file_size, sh);
}

/* ---- split models ---------------------------------------------------------- */

/* "<prefix>-NNNNN-of-MMMMM.gguf", llama_split_path's format: 1 with the
 * shard number, the count and the prefix length, else 0. */
static int split_name(const char *path, unsigned *no, unsigned *count, size_t *prefix)
{
    static const char shape[] = "-ddddd-of-ddddd.gguf";
    size_t n = strlen(path), k = sizeof shape - 1;
    if (n <= k)
        return 0;
    const char *s = path + n - k;
    unsigned a = 0, b = 0;
    for (size_t i = 0; i < k; i++) {
        if (shape[i] != 'd') {
            if (s[i] != shape[i])
                return 0;
        } else if (s[i] < '0' || s[i] > '9') {
            return 0;
        } else if (i < 6) {
            a = a * 10 + (unsigned)(s[i] - '0');
        } else {
            b = b * 10 + (unsigned)(s[i] - '0');
        }
    }
    *no = a;
    *count = b;
    *prefix = n - k;
    return 1;
}

static int meta_uint(const gguf_kv *kv, uint64_t n, const char *key, uint64_t *out)
{
    gguf_file tmp = {.n_kv = n, .kv = (gguf_kv *)kv};
    return kvp_gguf_find(&tmp, key) ? kvp_gguf_get_uint(&tmp, key, out) == 0 ? 1 : -1 : 0;
}

/* How many shards: from split.count, checked against the file name when
 * there is one (by_name; a buffer's name may be a URL). */
static int split_count(const char *path, int by_name, const shard *sh, uint32_t *n, kvp_error *err)
{
    unsigned no = 0, count = 0;
    size_t prefix;
    uint64_t sc = 0, sno = 0;
    int named = by_name && split_name(path, &no, &count, &prefix);
    int has = meta_uint(sh->kv, sh->n_kv, "split.count", &sc);
    if (has < 0)
        return kvp_fail(err, KVP_EINPUT, "%s: split.count is not an unsigned integer", path);
    if (named && no != 1)
        return kvp_fail(err, KVP_EINPUT,
                        "%s: shard %u of a split model: give the first shard "
                        "(%.*s-00001-of-%05u.gguf)", path, no, (int)prefix, path, count);
    if (named && count > 1 && !has)
        return kvp_fail(err, KVP_EINPUT, "%s: the name says %u shards but there is no split.count",
                        path, count);
    if (named && has && sc != count && !(count == 1 && sc == 0))
        return kvp_fail(err, KVP_EINPUT, "%s: split.count is %llu but the name says %u shards",
                        path, (unsigned long long)sc, count);
    if (by_name && !named && sc > 1)
        return kvp_fail(err, KVP_EINPUT,
                        "%s: split.count is %llu but the name does not end in -00001-of-%05llu.gguf",
                        path, (unsigned long long)sc, (unsigned long long)sc);
    if (sc > MAX_SHARDS)
        return kvp_fail(err, KVP_EINPUT, "%s: split into %llu shards; at most %d are supported",
                        path, (unsigned long long)sc, MAX_SHARDS);
    if (sc > 1 && meta_uint(sh->kv, sh->n_kv, "split.no", &sno) == 1 && sno != 0)
        return kvp_fail(err, KVP_EINPUT, "%s: split.no is %llu in the first shard, expected 0",
                        path, (unsigned long long)sno);
    *n = sc > 1 ? (uint32_t)sc : 1;
    return 0;
}

static int rd_other_shards(reader *r, const char *path, kvp_error *err)
{
    gguf_file *f = r->f;
    unsigned no, count;
    size_t prefix;
    split_name(path, &no, &count, &prefix);
    size_t n = prefix + 32;
    char *spath = malloc(n);
    if (!spath)
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", path);
    int rc = 0;
    for (uint32_t k = 1; k < f->n_shards && rc == 0; k++) {
        shard sh = {0};
        uint64_t sno = 0;
        snprintf(spath, n, "%.*s-%05u-of-%05u.gguf", (int)prefix, path, k + 1, f->n_shards);
        if (access(spath, F_OK) != 0)
            rc = kvp_fail(err, KVP_EINPUT, "%s: split model: shard %u of %u is missing: %s",
                          path, k + 1, f->n_shards, spath);
        else if (rd_shard(r, k, spath, &sh, err))
            rc = -1;
        else if (meta_uint(sh.kv, sh.n_kv, "split.no", &sno) != 1 || sno != k)
            rc = kvp_fail(err, KVP_EINPUT, "%s: split.no should be %u (this is shard %u of %u)",
                          spath, k, k + 1, f->n_shards);
        free(sh.kv);
    }
    free(spath);
    return rc;
}

static int check_tensor_count(const gguf_file *f, kvp_error *err)
{
    uint64_t want;
    if (f->n_shards < 2 || meta_uint(f->kv, f->n_kv, "split.tensors.count", &want) != 1 ||
        want == f->n_tensors)
        return 0;
    return kvp_fail(err, KVP_EINPUT, "%s: split.tensors.count is %llu but the %u shards hold %llu tensors",
                    f->path, (unsigned long long)want, f->n_shards,
                    (unsigned long long)f->n_tensors);
}

/* ---- the public reader ----------------------------------------------------- */

int kvp_gguf_read(const char *path, gguf_file **out, kvp_error *err)
{
    *out = NULL;
    gguf_file *f = calloc(1, sizeof *f);
    if (!f)
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", path);
    snprintf(f->path, sizeof f->path, "%s", path);
    reader r = {.f = f};
    shard first = {0};
    int rc = rd_shard(&r, 0, path, &first, err);
    f->version = first.version;
    f->kv = first.kv;
    f->n_kv = first.n_kv;
    f->alignment = first.alignment;
    f->data_offset = first.data_offset;
    f->file_size = first.size;
    f->n_shards = 1;
    if (rc == 0)
        rc = split_count(path, 1, &first, &f->n_shards, err);
    if (rc == 0 && f->n_shards > 1)
        rc = rd_other_shards(&r, path, err) || check_tensor_count(f, err) ? -1 : 0;
    free(r.tensor_names.slots);
    if (rc) {
        f->n_shards = MAX_SHARDS; /* unmap whatever was mapped */
        kvp_gguf_free(f);
        return -1;
    }
    *out = f;
    return 0;
}

/* ---- header bytes from memory (a remote file's prefix) ----------------------- */

int kvp_gguf_header_need(const void *buf, size_t n, const char *name, uint64_t *need,
                         kvp_error *err)
{
    static const uint8_t none[1];
    gguf_file f = {0};
    reader r = {.f = &f};
    shard sh = {0};
    *need = 0;
    /* past the cap nothing counts: every bound below stays under it */
    uint64_t size = n < KVP_GGUF_HEADER_MAX ? n : KVP_GGUF_HEADER_MAX;
    cursor c = {.base = buf && n ? buf : none, .size = size, .path = name ? name : "GGUF",
                .err = err, .prefix = 1};
    int rc = parse_shard(&r, 0, &c, 0, &sh);
    free(sh.kv);
    free(f.tensors);
    free(r.tensor_names.slots);
    if (rc == 0 && sh.data_offset <= size) {
        *need = sh.data_offset;
        return 1;
    }
    if (rc == 0) { /* all parsed; the padding before the data has not arrived */
        *need = sh.data_offset;
        return 0;
    }
    if (!c.short_)
        return -1;
    *need = c.need > size ? c.need : size + 1; /* more than has arrived, always */
    return 0;
}

int kvp_gguf_read_mem(const gguf_mem *shards, uint32_t n, gguf_file **out, kvp_error *err)
{
    static const uint8_t none[1];
    *out = NULL;
    const char *name0 = n && shards[0].name ? shards[0].name : "GGUF";
    if (n < 1 || n > MAX_SHARDS)
        return kvp_fail(err, KVP_EUSAGE, "%s: %u shards given (1 to %d)", name0, n, MAX_SHARDS);
    gguf_file *f = calloc(1, sizeof *f);
    if (!f)
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", name0);
    snprintf(f->path, sizeof f->path, "%s", name0);
    f->in_memory = 1;
    f->n_shards = n;
    reader r = {.f = f};
    int rc = 0;
    for (uint32_t k = 0; k < n && rc == 0; k++) {
        const gguf_mem *m = &shards[k];
        const char *name = m->name ? m->name : "GGUF";
        shard sh = {0};
        uint64_t sno = 0;
        /* the header lies within the cap: bytes past it are data, never read */
        size_t len = m->size < KVP_GGUF_HEADER_MAX ? m->size : (size_t)KVP_GGUF_HEADER_MAX;
        if (m->size && !m->data) {
            rc = kvp_fail(err, KVP_EUSAGE, "%s: no bytes given", name);
            break;
        }
        if (m->file_size && m->size > m->file_size) {
            rc = kvp_fail(err, KVP_EINPUT, "%s: %zu bytes given but the file has %llu", name,
                          m->size, (unsigned long long)m->file_size);
            break;
        }
        if (!(f->maps[k] = malloc(len ? len : 1))) {
            rc = kvp_fail(err, KVP_EINPUT, "%s: out of memory", name);
            break;
        }
        if (len)
            memcpy(f->maps[k], m->data, len);
        f->map_sizes[k] = len;
        cursor c = {.base = len ? f->maps[k] : none, .size = len, .path = name, .err = err};
        if (parse_shard(&r, k, &c, m->file_size, &sh)) {
            rc = -1;
        } else if (sh.data_offset > KVP_GGUF_HEADER_MAX) {
            c.what = "header";
            c.idx = c.count = 0;
            rc = too_big(&c);
        } else if (k == 0) {
            uint32_t count = 1;
            rc = split_count(name, 0, &sh, &count, err);
            /* shard 1 alone is allowed: it is how a reader learns split.count */
            if (rc == 0 && n > 1 && count != n)
                rc = kvp_fail(err, KVP_EINPUT, "%s: split.count is %u but %u shards were given",
                              name, count, n);
            f->version = sh.version;
            f->kv = sh.kv;
            f->n_kv = sh.n_kv;
            f->alignment = sh.alignment;
            f->data_offset = sh.data_offset;
            f->file_size = sh.size;
            sh.kv = NULL;
        } else if (meta_uint(sh.kv, sh.n_kv, "split.no", &sno) != 1 || sno != k) {
            rc = kvp_fail(err, KVP_EINPUT, "%s: split.no should be %u (this is shard %u of %u)",
                          name, k, k + 1, n);
        }
        free(sh.kv);
    }
    if (rc == 0 && n > 1)
        rc = check_tensor_count(f, err);
    free(r.tensor_names.slots);
    if (rc) {
        f->n_shards = MAX_SHARDS; /* free whatever was copied */
        kvp_gguf_free(f);
        return -1;
    }
    *out = f;
    return 0;
}

void kvp_gguf_free(gguf_file *f)
{
    if (!f)
        return;
    for (uint32_t i = 0; i < f->n_shards && i < MAX_SHARDS; i++)
        if (f->maps[i] && f->in_memory)
            free(f->maps[i]);
        else if (f->maps[i])
            munmap(f->maps[i], f->map_sizes[i]);
    free(f->kv);
    free(f->tensors);
    free(f);
}

/* ---- lookups --------------------------------------------------------------- */

static int str_is(gguf_str s, const char *z)
{
    size_t n = strlen(z);
    return s.len == n && memcmp(s.s, z, n) == 0;
}

const gguf_kv *kvp_gguf_find(const gguf_file *f, const char *key)
{
    for (uint64_t i = 0; i < f->n_kv; i++)
        if (str_is(f->kv[i].key, key))
            return &f->kv[i];
    return NULL;
}

const gguf_tensor *kvp_gguf_find_tensor(const gguf_file *f, const char *name)
{
    for (uint64_t i = 0; i < f->n_tensors; i++)
        if (str_is(f->tensors[i].name, name))
            return &f->tensors[i];
    return NULL;
}

static int is_uint_type(gguf_type t)
{
    return t == GGUF_UINT8 || t == GGUF_UINT16 || t == GGUF_UINT32 || t == GGUF_UINT64 ||
           t == GGUF_BOOL;
}

static int is_int_type(gguf_type t)
{
    return t == GGUF_INT8 || t == GGUF_INT16 || t == GGUF_INT32 || t == GGUF_INT64;
}

int kvp_gguf_get_uint(const gguf_file *f, const char *key, uint64_t *out)
{
    const gguf_kv *kv = kvp_gguf_find(f, key);
    if (!kv)
        return -1;
    if (is_uint_type(kv->type))
        *out = kv->v.u;
    else if (is_int_type(kv->type) && kv->v.i >= 0)
        *out = (uint64_t)kv->v.i;
    else
        return -1;
    return 0;
}

int kvp_gguf_get_float(const gguf_file *f, const char *key, double *out)
{
    const gguf_kv *kv = kvp_gguf_find(f, key);
    if (!kv)
        return -1;
    if (kv->type == GGUF_FLOAT32 || kv->type == GGUF_FLOAT64)
        *out = kv->v.f;
    else if (is_uint_type(kv->type) && kv->type != GGUF_BOOL)
        *out = (double)kv->v.u;
    else if (is_int_type(kv->type))
        *out = (double)kv->v.i;
    else
        return -1;
    return 0;
}

int kvp_gguf_get_str(const gguf_file *f, const char *key, char *buf, size_t n)
{
    const gguf_kv *kv = kvp_gguf_find(f, key);
    if (!kv || kv->type != GGUF_STRING || n == 0)
        return -1;
    size_t len = kv->v.str.len < n - 1 ? (size_t)kv->v.str.len : n - 1;
    memcpy(buf, kv->v.str.s, len);
    buf[len] = '\0';
    return 0;
}

/* Element idx of a fixed-size array, decoded as a scalar kv of its type. */
static int arr_elem(const gguf_kv *kv, uint64_t idx, gguf_kv *e)
{
    if (kv->type != GGUF_ARRAY || idx >= kv->arr_n || !type_sizes[kv->arr_type])
        return -1;
    cursor c = {.base = kv->arr_data + idx * type_sizes[kv->arr_type],
                .size = type_sizes[kv->arr_type]};
    return rd_scalar(&c, kv->arr_type, e);
}

int kvp_gguf_arr_uint(const gguf_kv *kv, uint64_t idx, uint64_t *out)
{
    gguf_kv e = {0};
    if (arr_elem(kv, idx, &e))
        return -1;
    if (is_uint_type(kv->arr_type))
        *out = e.v.u;
    else if (is_int_type(kv->arr_type) && e.v.i >= 0)
        *out = (uint64_t)e.v.i;
    else
        return -1;
    return 0;
}

int kvp_gguf_arr_float(const gguf_kv *kv, uint64_t idx, double *out)
{
    gguf_kv e = {0};
    if (arr_elem(kv, idx, &e))
        return -1;
    if (kv->arr_type == GGUF_FLOAT32 || kv->arr_type == GGUF_FLOAT64)
        *out = e.v.f;
    else if (is_uint_type(kv->arr_type) && kv->arr_type != GGUF_BOOL)
        *out = (double)e.v.u;
    else if (is_int_type(kv->arr_type))
        *out = (double)e.v.i;
    else
        return -1;
    return 0;
}

/* The array was walked when read, so every length here is known good. */
int kvp_gguf_arr_str(const gguf_kv *kv, uint64_t idx, gguf_str *out)
{
    if (kv->type != GGUF_ARRAY || kv->arr_type != GGUF_STRING || idx >= kv->arr_n)
        return -1;
    const uint8_t *p = kv->arr_data;
    for (uint64_t i = 0; i < idx; i++)
        p += 8 + le64(p);
    out->len = le64(p);
    out->s = (const char *)p + 8;
    return 0;
}
