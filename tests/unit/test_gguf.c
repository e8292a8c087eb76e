/* test_gguf.c - the GGUF reader and writer: every value type round-trips,
 * nested arrays are walked, v2 reads as v3 does, split models are read as
 * one, and a hostile corpus (every truncation, patched counts, lengths,
 * shapes, types, keys, alignment, random byte flips) yields one clean line
 * each, never a crash or a huge allocation.
 *
 * Files the writer cannot produce (other scalar types, nested arrays, v2,
 * hostile bytes) are built byte by byte here, so the test holds no binary
 * files.  Everything is written into a mkdtemp directory. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "gguf.h"

static char dir[256];

static const char *at(const char *name)
{
    static char paths[8][512];
    static int k;
    char *p = paths[k++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

static int has(const kvp_error *e, const char *sub)
{
    return strstr(e->msg, sub) != NULL;
}

/* One line, naming the file. */
static int clean_error(const kvp_error *e, const char *path)
{
    return e->msg[0] && strstr(e->msg, path) == e->msg && !strchr(e->msg, '\n');
}

/* ---- a byte builder for hand-made files ------------------------------------ */

typedef struct tb {
    uint8_t p[1 << 16];
    size_t n;
} tb;

static size_t le(tb *b, uint64_t v, unsigned n)
{
    size_t off = b->n;
    for (unsigned i = 0; i < n; i++)
        b->p[b->n++] = (uint8_t)(v >> (8 * i));
    return off;
}

static size_t u32(tb *b, uint32_t v) { return le(b, v, 4); }
static size_t u64(tb *b, uint64_t v) { return le(b, v, 8); }

/* Returns the offset of the length field. */
static size_t str(tb *b, const char *s)
{
    size_t off = u64(b, strlen(s));
    memcpy(b->p + b->n, s, strlen(s));
    b->n += strlen(s);
    return off;
}

static void header(tb *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
    b->n = 0;
    memcpy(b->p, "GGUF", 4);
    b->n = 4;
    u32(b, version);
    u64(b, n_tensors);
    u64(b, n_kv);
}

static void pad32(tb *b)
{
    while (b->n % 32)
        b->p[b->n++] = 0;
}

static int save(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static gguf_file *read_ok(const char *path)
{
    gguf_file *f = NULL;
    kvp_error e = {0};
    if (kvp_gguf_read(path, &f, &e)) {
        printf("# %s\n", e.msg);
        return NULL;
    }
    return f;
}

/* Reads a file that must fail; returns the error. */
static kvp_error read_bad(const char *path)
{
    gguf_file *f = NULL;
    kvp_error e = {0};
    if (kvp_gguf_read(path, &f, &e) == 0) {
        kvp_gguf_free(f);
        snprintf(e.msg, sizeof e.msg, "(read succeeded)");
    }
    return e;
}

static int str_eq(gguf_str s, const char *z)
{
    return s.len == strlen(z) && memcmp(s.s, z, s.len) == 0;
}

static int uint_is(const gguf_file *f, const char *key, uint64_t want)
{
    uint64_t v = ~want;
    return kvp_gguf_get_uint(f, key, &v) == 0 && v == want;
}

static int float_is(const gguf_file *f, const char *key, double want)
{
    double v = -want - 1;
    return kvp_gguf_get_float(f, key, &v) == 0 && v == want;
}

/* ---- writer -> reader ------------------------------------------------------ */

static void test_roundtrip(void)
{
    const int32_t i32s[] = {-1, 2, 2147483647};
    const uint32_t u32s[] = {4, 4294967295u};
    const float f32s[] = {0.25f, -2.0f};
    const uint8_t bools[] = {1, 0, 7};
    const char *strs[] = {"x", "", "yz"};
    const uint64_t ne_a[] = {8, 2}, ne_b[] = {64, 3}, ne_c[] = {256}, ne_d[] = {2, 3, 4, 5};
    gguf_writer *w = kvp_gguf_writer_new();
    kvp_gguf_w_str(w, "general.architecture", "llama");
    kvp_gguf_w_u32(w, "a.u32", 7);
    kvp_gguf_w_i32(w, "a.i32", -5);
    kvp_gguf_w_i32(w, "a.i32pos", 12);
    kvp_gguf_w_u64(w, "a.u64", 1ull << 40);
    kvp_gguf_w_f32(w, "a.f32", 1.5f);
    kvp_gguf_w_bool(w, "a.bool", 1);
    kvp_gguf_w_arr_i32(w, "a.ai32", i32s, 3);
    kvp_gguf_w_arr_u32(w, "a.au32", u32s, 2);
    kvp_gguf_w_arr_f32(w, "a.af32", f32s, 2);
    kvp_gguf_w_arr_bool(w, "a.abool", bools, 3);
    kvp_gguf_w_arr_str(w, "a.astr", strs, 3);
    kvp_gguf_w_arr_str(w, "a.empty", NULL, 0);
    kvp_gguf_w_tensor(w, "t.f32", 2, ne_a, GGML_TYPE_F32_ID);
    kvp_gguf_w_tensor(w, "t.q8", 2, ne_b, GGML_TYPE_Q8_0_ID);
    kvp_gguf_w_tensor(w, "t.q4k", 1, ne_c, 12);
    kvp_gguf_w_tensor(w, "t.4d", 4, ne_d, GGML_TYPE_F16_ID);
    kvp_error e = {0};
    const char *path = at("rt.gguf");
    CHECK("writer: writes", kvp_gguf_writer_write(w, path, 0, &e) == 0);
    kvp_gguf_writer_free(w);

    gguf_file *f = read_ok(path);
    CHECK("roundtrip: reads", f != NULL);
    if (!f)
        return;
    CHECK("roundtrip: version 3, 13 keys, 4 tensors",
          f->version == 3 && f->n_kv == 13 && f->n_tensors == 4);
    CHECK("roundtrip: keys in insertion order",
          str_eq(f->kv[0].key, "general.architecture") && str_eq(f->kv[6].key, "a.bool") &&
          str_eq(f->kv[12].key, "a.empty"));
    char buf[16];
    CHECK("roundtrip: string", kvp_gguf_get_str(f, "general.architecture", buf, sizeof buf) == 0 &&
                                   strcmp(buf, "llama") == 0);
    CHECK("roundtrip: string truncated to the buffer",
          kvp_gguf_get_str(f, "general.architecture", buf, 3) == 0 && strcmp(buf, "ll") == 0);
    CHECK("roundtrip: u32", uint_is(f, "a.u32", 7) && kvp_gguf_find(f, "a.u32")->type == GGUF_UINT32);
    CHECK("roundtrip: u64", uint_is(f, "a.u64", 1ull << 40));
    CHECK("roundtrip: i32", kvp_gguf_find(f, "a.i32")->v.i == -5 && float_is(f, "a.i32", -5));
    CHECK("roundtrip: negative i32 is not a uint", kvp_gguf_get_uint(f, "a.i32", &(uint64_t){0}) == -1);
    CHECK("roundtrip: positive i32 is a uint", uint_is(f, "a.i32pos", 12));
    CHECK("roundtrip: f32", float_is(f, "a.f32", 1.5) && kvp_gguf_get_uint(f, "a.f32", &(uint64_t){0}));
    CHECK("roundtrip: bool is a uint", uint_is(f, "a.bool", 1));
    CHECK("roundtrip: u32 is a float", float_is(f, "a.u32", 7));
    CHECK("roundtrip: absent key", !kvp_gguf_find(f, "nope") && kvp_gguf_get_uint(f, "nope", &(uint64_t){0}));
    CHECK("roundtrip: string is not a number",
          kvp_gguf_get_uint(f, "general.architecture", &(uint64_t){0}) == -1);

    const gguf_kv *kv = kvp_gguf_find(f, "a.ai32");
    uint64_t u = 0;
    double d = 0;
    CHECK("roundtrip: i32 array", kv && kv->arr_type == GGUF_INT32 && kv->arr_n == 3 &&
                                      kvp_gguf_arr_float(kv, 0, &d) == 0 && d == -1 &&
                                      kvp_gguf_arr_uint(kv, 0, &u) == -1 &&
                                      kvp_gguf_arr_uint(kv, 2, &u) == 0 && u == 2147483647);
    CHECK("roundtrip: index past the end", kv && kvp_gguf_arr_uint(kv, 3, &u) == -1);
    kv = kvp_gguf_find(f, "a.au32");
    CHECK("roundtrip: u32 array", kv && kv->arr_type == GGUF_UINT32 &&
                                      kvp_gguf_arr_uint(kv, 1, &u) == 0 && u == 4294967295u);
    kv = kvp_gguf_find(f, "a.af32");
    CHECK("roundtrip: f32 array", kv && kvp_gguf_arr_float(kv, 1, &d) == 0 && d == -2.0 &&
                                      kvp_gguf_arr_uint(kv, 0, &u) == -1);
    kv = kvp_gguf_find(f, "a.abool");
    CHECK("roundtrip: bool array", kv && kv->arr_type == GGUF_BOOL &&
                                       kvp_gguf_arr_uint(kv, 2, &u) == 0 && u == 1 &&
                                       kvp_gguf_arr_uint(kv, 1, &u) == 0 && u == 0);
    kv = kvp_gguf_find(f, "a.astr");
    gguf_str s = {0};
    CHECK("roundtrip: string array", kv && kv->arr_type == GGUF_STRING && kv->arr_n == 3 &&
                                         kvp_gguf_arr_str(kv, 2, &s) == 0 && str_eq(s, "yz") &&
                                         kvp_gguf_arr_str(kv, 1, &s) == 0 && s.len == 0 &&
                                         kvp_gguf_arr_str(kv, 3, &s) == -1);
    kv = kvp_gguf_find(f, "a.empty");
    CHECK("roundtrip: empty array", kv && kv->arr_n == 0 && kvp_gguf_arr_str(kv, 0, &s) == -1);

    const gguf_tensor *t = kvp_gguf_find_tensor(f, "t.q8");
    CHECK("roundtrip: q8_0 tensor: 2 x 3 blocks of 34 bytes at offset 64",
          t && t->n_dims == 2 && t->ne[0] == 64 && t->ne[1] == 3 && t->ne[2] == 1 &&
          t->type == GGML_TYPE_Q8_0_ID && t->nbytes == 204 && t->offset == 64 && t->shard == 0);
    t = kvp_gguf_find_tensor(f, "t.q4k");
    CHECK("roundtrip: q4_K tensor: 144 bytes, aligned offset", t && t->nbytes == 144 && t->offset == 288);
    t = kvp_gguf_find_tensor(f, "t.4d");
    CHECK("roundtrip: 4-d f16 tensor", t && t->n_dims == 4 && t->ne[3] == 5 && t->nbytes == 240 &&
                                           t->offset == 448);
    struct stat st;
    CHECK("roundtrip: data aligned to 32, file = data offset + padded data",
          f->alignment == 32 && f->data_offset % 32 == 0 && stat(path, &st) == 0 &&
          (uint64_t)st.st_size == f->data_offset + 448 + 256 && f->file_size == (uint64_t)st.st_size);
    kvp_gguf_free(f);
}

static void test_writer_errors(void)
{
    const uint64_t ne[] = {33, 2}, big[] = {1ull << 40, 1ull << 30}, ok[] = {8};
    kvp_error e = {0};
    gguf_writer *w = kvp_gguf_writer_new();
    kvp_gguf_w_u32(w, "k", 1);
    kvp_gguf_w_u32(w, "k", 2);
    CHECK("writer: duplicate key refused at write",
          kvp_gguf_writer_write(w, at("dup.gguf"), 0, &e) == -1 && has(&e, "duplicate key 'k'") &&
              clean_error(&e, at("dup.gguf")) && access(at("dup.gguf"), F_OK) != 0);
    kvp_gguf_writer_free(w);

    w = kvp_gguf_writer_new();
    kvp_gguf_w_tensor(w, "q", 2, ne, GGML_TYPE_Q8_0_ID);
    CHECK("writer: row not a multiple of the block",
          kvp_gguf_writer_write(w, at("blk.gguf"), 0, &e) == -1 && has(&e, "block of 32"));
    kvp_gguf_writer_free(w);

    w = kvp_gguf_writer_new();
    kvp_gguf_w_tensor(w, "q", 2, big, GGML_TYPE_F32_ID);
    kvp_gguf_w_tensor(w, "r", 2, big, GGML_TYPE_F32_ID);
    kvp_gguf_w_tensor(w, "s", 2, big, 99);
    CHECK("writer: 2^70 elements refused (first error kept)",
          kvp_gguf_writer_write(w, at("big.gguf"), 0, &e) == -1 && has(&e, "2^63") && has(&e, "'q'"));
    kvp_gguf_writer_free(w);

    w = kvp_gguf_writer_new();
    kvp_gguf_w_u32(w, "general.alignment", 48);
    CHECK("writer: alignment 48 refused",
          kvp_gguf_writer_write(w, at("al.gguf"), 0, &e) == -1 && has(&e, "power of two"));
    kvp_gguf_writer_free(w);

    w = kvp_gguf_writer_new();
    kvp_gguf_w_u32(w, "general.alignment", 64);
    kvp_gguf_w_tensor(w, "a", 1, ok, GGML_TYPE_F32_ID);
    kvp_gguf_w_tensor(w, "b", 1, ok, GGML_TYPE_F32_ID);
    const char *path = at("al64.gguf");
    CHECK("writer: alignment 64", kvp_gguf_writer_write(w, path, 0, &e) == 0);
    gguf_file *f = read_ok(path);
    CHECK("writer: alignment 64 read back: 32 bytes of data padded to 64",
          f && f->alignment == 64 && f->data_offset % 64 == 0 && f->tensors[1].offset == 64);
    kvp_gguf_free(f);
    struct stat before, after;
    stat(path, &before);
    CHECK("writer: an existing file is refused without force",
          kvp_gguf_writer_write(w, path, 0, &e) == -1 && has(&e, "already exists") &&
              stat(path, &after) == 0 && after.st_size == before.st_size);
    CHECK("writer: force overwrites", kvp_gguf_writer_write(w, path, 1, &e) == 0 && (f = read_ok(path)));
    kvp_gguf_free(f);
    CHECK("writer: missing directory", kvp_gguf_writer_write(w, at("no/such/dir.gguf"), 0, &e) == -1 &&
                                           has(&e, "cannot create"));
    kvp_gguf_writer_free(w);
    CHECK("writer: NULL writer (out of memory) reported",
          kvp_gguf_writer_write(NULL, at("null.gguf"), 0, &e) == -1 && has(&e, "out of memory"));
}

/* A 7B-sized tensor occupies no disk: the data is a hole. */
static void test_sparse(void)
{
    const uint64_t ne[] = {4096, 4096, 8};
    gguf_writer *w = kvp_gguf_writer_new();
    kvp_gguf_w_tensor(w, "big", 3, ne, GGML_TYPE_F32_ID);
    kvp_error e;
    const char *path = at("sparse.gguf");
    CHECK("sparse: writes", kvp_gguf_writer_write(w, path, 0, &e) == 0);
    kvp_gguf_writer_free(w);
    struct stat st;
    CHECK("sparse: 512 MiB file, under 1 MiB on disk",
          stat(path, &st) == 0 && st.st_size > (512ll << 20) && st.st_blocks * 512ll < (1ll << 20));
    gguf_file *f = read_ok(path);
    CHECK("sparse: reads", f && f->tensors[0].nbytes == 512ull << 20);
    kvp_gguf_free(f);
    unlink(path);
}

/* ---- hand-built files ------------------------------------------------------ */

/* Every scalar type and every array element type, nested arrays included. */
static size_t build_all_types(tb *b, uint32_t version)
{
    header(b, version, 0, 26);
    static const uint64_t vals[] = {200, (uint8_t)-100, 60000, (uint16_t)-30000, 4000000000u,
                                    (uint32_t)-2000000000};
    static const char *names[] = {"s.u8", "s.i8", "s.u16", "s.i16", "s.u32", "s.i32"};
    static const unsigned sizes[] = {1, 1, 2, 2, 4, 4};
    for (int i = 0; i < 6; i++) {
        str(b, names[i]);
        u32(b, (uint32_t)i);
        le(b, vals[i], sizes[i]);
    }
    str(b, "s.f32"), u32(b, GGUF_FLOAT32), u32(b, 0x40490fdb); /* 3.14159274 */
    str(b, "s.bool"), u32(b, GGUF_BOOL), le(b, 1, 1);
    str(b, "s.str"), u32(b, GGUF_STRING), str(b, "héllo");
    str(b, "s.u64"), u32(b, GGUF_UINT64), u64(b, 18446744073709551615ull);
    str(b, "s.i64"), u32(b, GGUF_INT64), u64(b, (uint64_t)-5000000000ll);
    str(b, "s.f64"), u32(b, GGUF_FLOAT64), u64(b, 0x3fd5555555555555ull); /* 1/3 */
    /* arrays of each fixed-size type: two elements, 1 and the max (or -1) */
    static const unsigned fixed[] = {GGUF_UINT8, GGUF_INT8, GGUF_UINT16, GGUF_INT16, GGUF_UINT32,
                                     GGUF_INT32, GGUF_FLOAT32, GGUF_BOOL, GGUF_UINT64, GGUF_INT64,
                                     GGUF_FLOAT64};
    static const unsigned fsz[] = {1, 1, 2, 2, 4, 4, 4, 1, 8, 8, 8};
    for (int i = 0; i < 11; i++) {
        char key[16];
        snprintf(key, sizeof key, "a.%u", fixed[i]);
        str(b, key);
        u32(b, GGUF_ARRAY);
        u32(b, fixed[i]);
        u64(b, 2);
        uint64_t one = fixed[i] == GGUF_FLOAT32 ? 0x3f800000 : fixed[i] == GGUF_FLOAT64 ? 0x3ff0000000000000ull : 1;
        le(b, one, fsz[i]);
        le(b, ~0ull, fsz[i]);
    }
    str(b, "a.str"), u32(b, GGUF_ARRAY), u32(b, GGUF_STRING), u64(b, 2), str(b, "ab"), str(b, "");
    /* an array of arrays: [[1, 2, 3] (i32), ["a", "bc"], [[7 (u8)]]] */
    str(b, "a.nested"), u32(b, GGUF_ARRAY), u32(b, GGUF_ARRAY), u64(b, 3);
    size_t first = b->n;
    u32(b, GGUF_INT32), u64(b, 3), u32(b, 1), u32(b, 2), u32(b, 3);
    u32(b, GGUF_STRING), u64(b, 2), str(b, "a"), str(b, "bc");
    u32(b, GGUF_ARRAY), u64(b, 1), u32(b, GGUF_UINT8), u64(b, 1), le(b, 7, 1);
    str(b, "after"), u32(b, GGUF_UINT32), u32(b, 9);
    return first;
}

static void test_all_types(void)
{
    tb *b = calloc(1, sizeof *b);
    size_t first = build_all_types(b, 3);
    const char *path = at("types.gguf");
    save(path, b->p, b->n);
    gguf_file *f = read_ok(path);
    CHECK("types: reads", f && f->n_kv == 26 && f->n_tensors == 0);
    if (f) {
        CHECK("types: u8", uint_is(f, "s.u8", 200) && kvp_gguf_find(f, "s.u8")->type == GGUF_UINT8);
        CHECK("types: i8", kvp_gguf_find(f, "s.i8")->v.i == -100 && float_is(f, "s.i8", -100));
        CHECK("types: u16", uint_is(f, "s.u16", 60000));
        CHECK("types: i16", kvp_gguf_find(f, "s.i16")->v.i == -30000);
        CHECK("types: u32", uint_is(f, "s.u32", 4000000000u));
        CHECK("types: i32", kvp_gguf_find(f, "s.i32")->v.i == -2000000000);
        CHECK("types: f32", float_is(f, "s.f32", (double)3.14159274f));
        CHECK("types: bool", uint_is(f, "s.bool", 1) && kvp_gguf_get_float(f, "s.bool", &(double){0}));
        CHECK("types: string", str_eq(kvp_gguf_find(f, "s.str")->v.str, "héllo"));
        CHECK("types: u64 max", uint_is(f, "s.u64", 18446744073709551615ull));
        CHECK("types: i64", kvp_gguf_find(f, "s.i64")->v.i == -5000000000ll &&
                                kvp_gguf_get_uint(f, "s.i64", &(uint64_t){0}) == -1);
        CHECK("types: f64", float_is(f, "s.f64", 1.0 / 3));
        int arrays_ok = 1;
        for (unsigned t = 0; t < GGUF_TYPE_COUNT; t++) {
            char key[16];
            snprintf(key, sizeof key, "a.%u", t);
            const gguf_kv *kv = kvp_gguf_find(f, key);
            if (t == GGUF_STRING || t == GGUF_ARRAY)
                continue;
            double d0 = 0, d1 = 0;
            uint64_t u0 = 0, u1 = 0;
            int sgn = t == GGUF_INT8 || t == GGUF_INT16 || t == GGUF_INT32 || t == GGUF_INT64;
            int flt = t == GGUF_FLOAT32 || t == GGUF_FLOAT64;
            arrays_ok &= kv && kv->arr_type == t && kv->arr_n == 2 && kvp_gguf_arr_float(kv, 0, &d0) == (t == GGUF_BOOL ? -1 : 0);
            if (!kv)
                continue;
            if (flt)
                arrays_ok &= d0 == 1 && kvp_gguf_arr_float(kv, 1, &d1) == 0 && d1 != d1; /* ~0: NaN */
            else if (sgn)
                arrays_ok &= d0 == 1 && kvp_gguf_arr_float(kv, 1, &d1) == 0 && d1 == -1 &&
                             kvp_gguf_arr_uint(kv, 1, &u1) == -1;
            else
                arrays_ok &= kvp_gguf_arr_uint(kv, 0, &u0) == 0 && u0 == 1 &&
                             kvp_gguf_arr_uint(kv, 1, &u1) == 0 &&
                             u1 == (t == GGUF_BOOL ? 1 : t == GGUF_UINT64 ? ~0ull : (1ull << (8 * (t == GGUF_UINT8 ? 1 : t == GGUF_UINT16 ? 2 : 4))) - 1);
        }
        CHECK("types: arrays of all 11 fixed-size types", arrays_ok);
        gguf_str s = {0};
        const gguf_kv *kv = kvp_gguf_find(f, "a.str");
        CHECK("types: string array", kv && kvp_gguf_arr_str(kv, 0, &s) == 0 && str_eq(s, "ab"));
        kv = kvp_gguf_find(f, "a.nested");
        CHECK("nested: array of 3 arrays, data at the first element",
              kv && kv->type == GGUF_ARRAY && kv->arr_type == GGUF_ARRAY && kv->arr_n == 3 &&
                  kv->arr_data == (const uint8_t *)f->maps[0] + first &&
                  kv->arr_data[0] == GGUF_INT32);
        CHECK("nested: not readable as numbers or strings",
              kv && kvp_gguf_arr_uint(kv, 0, &(uint64_t){0}) == -1 && kvp_gguf_arr_str(kv, 0, &s) == -1);
        CHECK("nested: the key after it is read", uint_is(f, "after", 9));
    }
    kvp_gguf_free(f);

    build_all_types(b, 2);
    path = at("v2.gguf");
    save(path, b->p, b->n);
    f = read_ok(path);
    CHECK("v2: read as v3 (same layout: u64 counts and lengths)",
          f && f->version == 2 && f->n_kv == 26 && uint_is(f, "after", 9));
    kvp_gguf_free(f);

    /* 20 levels of arrays of one array */
    header(b, 3, 0, 1);
    str(b, "deep"), u32(b, GGUF_ARRAY);
    for (int i = 0; i < 20; i++)
        u32(b, GGUF_ARRAY), u64(b, 1);
    u32(b, GGUF_UINT8), u64(b, 0);
    path = at("deep.gguf");
    save(path, b->p, b->n);
    kvp_error e = read_bad(path);
    CHECK("nested: 20 deep refused", has(&e, "nested more than 16 deep") && clean_error(&e, path));
    free(b);
}

/* ---- split models ---------------------------------------------------------- */

static int write_shard(const char *name, uint32_t no, uint32_t count, int32_t total,
                       const char *const *tensors, int n)
{
    const uint64_t ne[] = {32, 2};
    gguf_writer *w = kvp_gguf_writer_new();
    if (no == 0)
        kvp_gguf_w_str(w, "general.architecture", "llama");
    kvp_gguf_w_u32(w, "split.no", no);
    kvp_gguf_w_u32(w, "split.count", count);
    kvp_gguf_w_i32(w, "split.tensors.count", total);
    for (int i = 0; i < n; i++)
        kvp_gguf_w_tensor(w, tensors[i], 2, ne, GGML_TYPE_F16_ID);
    kvp_error e;
    int rc = kvp_gguf_writer_write(w, at(name), 1, &e);
    kvp_gguf_writer_free(w);
    return rc;
}

static void test_split(void)
{
    const char *t1[] = {"a", "b"}, *t2[] = {"c"}, *dup[] = {"b"};
    write_shard("m-00001-of-00002.gguf", 0, 2, 3, t1, 2);
    write_shard("m-00002-of-00002.gguf", 1, 2, 3, t2, 1);
    gguf_file *f = read_ok(at("m-00001-of-00002.gguf"));
    CHECK("split: 2 shards read as one", f && f->n_shards == 2 && f->n_tensors == 3);
    const gguf_tensor *t = f ? kvp_gguf_find_tensor(f, "c") : NULL;
    CHECK("split: tensor of shard 2", t && t->shard == 1 && t->offset == 0 && t->nbytes == 128);
    CHECK("split: metadata from shard 1", f && kvp_gguf_find(f, "general.architecture") &&
                                              f->tensors[1].shard == 0);
    kvp_gguf_free(f);

    kvp_error e = read_bad(at("m-00002-of-00002.gguf"));
    CHECK("split: shard 2 given", has(&e, "give the first shard (") && has(&e, "m-00001-of-00002.gguf)"));

    write_shard("x-00001-of-00003.gguf", 0, 3, 3, t1, 2);
    write_shard("x-00003-of-00003.gguf", 2, 3, 3, t2, 1);
    e = read_bad(at("x-00001-of-00003.gguf"));
    CHECK("split: missing shard named", has(&e, "shard 2 of 3 is missing") &&
                                            has(&e, "x-00002-of-00003.gguf") &&
                                            clean_error(&e, at("x-00001-of-00003.gguf")));

    write_shard("y-00001-of-00002.gguf", 0, 3, 3, t1, 2);
    e = read_bad(at("y-00001-of-00002.gguf"));
    CHECK("split: split.count disagrees with the name", has(&e, "split.count is 3 but the name says 2"));

    write_shard("z.gguf", 0, 2, 3, t1, 2);
    e = read_bad(at("z.gguf"));
    CHECK("split: split.count 2 on an unsplit name", has(&e, "does not end in -00001-of-00002.gguf"));

    write_shard("d-00001-of-00002.gguf", 0, 2, 3, t1, 2);
    write_shard("d-00002-of-00002.gguf", 1, 2, 3, dup, 1);
    e = read_bad(at("d-00001-of-00002.gguf"));
    CHECK("split: a tensor in two shards", has(&e, "duplicate tensor name") &&
                                               clean_error(&e, at("d-00002-of-00002.gguf")));

    write_shard("n-00001-of-00002.gguf", 0, 2, 4, t1, 2);
    write_shard("n-00002-of-00002.gguf", 1, 2, 4, t2, 1);
    e = read_bad(at("n-00001-of-00002.gguf"));
    CHECK("split: split.tensors.count disagrees", has(&e, "split.tensors.count is 4 but the 2 shards hold 3"));

    write_shard("s-00001-of-00002.gguf", 0, 2, 3, t1, 2);
    write_shard("s-00002-of-00002.gguf", 0, 2, 3, t2, 1);
    e = read_bad(at("s-00001-of-00002.gguf"));
    CHECK("split: wrong split.no in shard 2", has(&e, "split.no should be 1"));
}

/* ---- the hostile corpus ---------------------------------------------------- */

/* A small valid file and where its fields are. */
typedef struct base {
    tb b;
    size_t n_tensors, n_kv, align_type, align_val, str_len, sarr_n, iarr_type, iarr_n,
        key4_len, type4, key5, t0_name_len, t0_ndims, t0_ne0, t0_ne1, t0_type, t1_name,
        t1_ne0, t1_type, t1_off, data, size;
} base;

static void build_base(base *h)
{
    tb *b = &h->b;
    header(b, 3, 2, 6);
    h->n_tensors = 8, h->n_kv = 16;
    str(b, "general.alignment"), h->align_type = u32(b, GGUF_UINT32), h->align_val = u32(b, 32);
    str(b, "k.str"), u32(b, GGUF_STRING), h->str_len = str(b, "hello");
    str(b, "k.arr"), u32(b, GGUF_ARRAY), u32(b, GGUF_STRING), h->sarr_n = u64(b, 3);
    str(b, "one"), str(b, "two"), str(b, "three");
    str(b, "k.i32s"), u32(b, GGUF_ARRAY), h->iarr_type = u32(b, GGUF_INT32), h->iarr_n = u64(b, 4);
    for (int i = 0; i < 4; i++)
        u32(b, (uint32_t)i);
    h->key4_len = str(b, "k.aaa"), h->type4 = u32(b, GGUF_UINT32), u32(b, 1);
    h->key5 = str(b, "k.bbb") + 8, u32(b, GGUF_UINT32), u32(b, 2);
    h->t0_name_len = str(b, "w0"), h->t0_ndims = u32(b, 2);
    h->t0_ne0 = u64(b, 32), h->t0_ne1 = u64(b, 4), h->t0_type = u32(b, GGML_TYPE_F32_ID), u64(b, 0);
    h->t1_name = str(b, "w1") + 8, u32(b, 1);
    h->t1_ne0 = u64(b, 64), h->t1_type = u32(b, GGML_TYPE_Q8_0_ID), h->t1_off = u64(b, 512);
    pad32(b);
    h->data = b->n;
    memset(b->p + b->n, 0xab, 512 + 96);
    b->n += 512 + 96;
    h->size = b->n;
}

static void put_at(uint8_t *p, size_t off, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[off + i] = (uint8_t)(v >> (8 * i));
}

static int bad_case(const base *h, const char *name, size_t off, uint64_t v, unsigned width,
                    size_t off2, uint64_t v2, const char *want)
{
    static uint8_t p[sizeof h->b.p];
    memcpy(p, h->b.p, h->size);
    put_at(p, off, v, width);
    if (off2)
        put_at(p, off2, v2, width);
    const char *path = at("hostile.gguf");
    save(path, p, h->size);
    kvp_error e = read_bad(path);
    int ok = has(&e, want) && clean_error(&e, path);
    if (!ok)
        printf("# %s: got \"%s\", want \"%s\"\n", name, e.msg, want);
    return ok;
}

#define BAD(name, off, v, w, want) CHECK("hostile: " name, bad_case(&h, name, off, v, w, 0, 0, want))

static void test_hostile(void)
{
    static base h;
    build_base(&h);
    const char *path = at("base.gguf");
    save(path, h.b.p, h.size);
    gguf_file *f = read_ok(path);
    CHECK("hostile: the base file is valid",
          f && f->n_kv == 6 && f->n_tensors == 2 && f->data_offset == h.data &&
              f->tensors[1].nbytes == 68 && kvp_gguf_find(f, "k.arr")->arr_n == 3);
    kvp_gguf_free(f);

    /* (a) every truncation */
    int all = 1;
    for (size_t n = 0; n < h.size; n++) {
        /* the last tensor needs 68 bytes, the rest of the file is padding */
        if (n >= h.data + 512 + 68)
            continue;
        path = at("cut.gguf");
        save(path, h.b.p, n);
        kvp_error e = read_bad(path);
        int ok = clean_error(&e, path) &&
                 (n < 4 ? has(&e, "not a GGUF file")
                        : has(&e, "truncated: ") || has(&e, "cannot fit in the"));
        if (!ok && all)
            printf("# cut at %zu: %s\n", n, e.msg);
        all &= ok;
    }
    CHECK("hostile: truncated at every byte offset: one clean line each", all);
    save(at("cut.gguf"), h.b.p, h.data + 16);
    kvp_error e = read_bad(at("cut.gguf"));
    CHECK("hostile: tensor data past the end of the file",
          has(&e, "truncated: tensor 0 of 2 'w0': data ends past the end of the file"));
    save(at("cut.gguf"), h.b.p, h.t0_ne1 + 3);
    e = read_bad(at("cut.gguf"));
    CHECK("hostile: cut inside a tensor info names it",
          has(&e, "truncated: tensor info 0 of 2 'w0' ends past the end of the file"));

    /* (b) patched fields */
    BAD("tensor count 2^63", h.n_tensors, 1ull << 63, 8, "tensor count 9223372036854775808 cannot fit");
    BAD("tensor count 2^32", h.n_tensors, 1ull << 32, 8, "tensor count 4294967296 cannot fit");
    BAD("key count 2^63", h.n_kv, 1ull << 63, 8, "key count 9223372036854775808 cannot fit");
    BAD("key count 2^32", h.n_kv, 1ull << 32, 8, "key count 4294967296 cannot fit");
    BAD("key count 2^64-1", h.n_kv, ~0ull, 8, "key count");
    BAD("key count 7 (one more than there are)", h.n_kv, 7, 8, "past the end of the file");
    BAD("string length past EOF", h.str_len, 1ull << 40, 8,
        "key 1 of 6 'k.str' ends past the end of the file (needs 1099511627776 bytes");
    BAD("string length 2^64-1", h.str_len, ~0ull, 8, "past the end of the file");
    BAD("string array count 2^63", h.sarr_n, 1ull << 63, 8, "array of 9223372036854775808 string values cannot fit");
    BAD("string array count 2^32", h.sarr_n, 1ull << 32, 8, "cannot fit");
    BAD("string array count 4 (one more)", h.sarr_n, 4, 8, "past the end of the file");
    BAD("i32 array count 2^62 (count x 4 wraps)", h.iarr_n, 1ull << 62, 8, "array of 4611686018427387904 int32");
    BAD("i32 array count 2^32", h.iarr_n, 1ull << 32, 8, "cannot fit");
    BAD("array element type 99", h.iarr_type, 99, 4, "unknown value type 99 for array elements");
    BAD("value type 99", h.type4, 99, 4, "key 4 of 6 'k.aaa': unknown value type 99");
    BAD("value type 2^32-1", h.type4, 0xffffffffu, 4, "unknown value type 4294967295");
    BAD("duplicate key", h.key5 + 2, 0x616161, 3, "key 5 of 6 'k.aaa': duplicate key (also key 4)");
    BAD("empty key", h.key4_len, 0, 8, "empty key");
    BAD("alignment 3", h.align_val, 3, 4, "alignment 3 is not a power of two");
    BAD("alignment 0", h.align_val, 0, 4, "alignment 0 is not a power of two");
    BAD("alignment of type int32", h.align_type, GGUF_INT32, 4, "must be a uint32, not int32");
    BAD("n_dims 5", h.t0_ndims, 5, 4, "tensor info 0 of 2 'w0': n_dims 5 is not in 1..4");
    BAD("n_dims 0", h.t0_ndims, 0, 4, "n_dims 0 is not in 1..4");
    BAD("n_dims 2^32-1", h.t0_ndims, 0xffffffffu, 4, "n_dims 4294967295");
    BAD("dim 0", h.t0_ne1, 0, 8, "dimension 1 is 0");
    BAD("dim negative", h.t0_ne1, ~0ull, 8, "dimension 1 is negative (-1)");
    CHECK("hostile: dims 2^32 x 2^32 (2^64 elements)",
          bad_case(&h, "dims overflow", h.t0_ne0, 1ull << 32, 8, h.t0_ne1, 1ull << 32, "2^63"));
    CHECK("hostile: dims 2^31 x 2^32 (2^63 elements)",
          bad_case(&h, "dims 2^63", h.t0_ne0, 1ull << 31, 8, h.t0_ne1, 1ull << 32, "2^63"));
    CHECK("hostile: dims 2^31 x 2^31 f32 (2^64 bytes)",
          bad_case(&h, "bytes 2^64", h.t0_ne0, 1ull << 31, 8, h.t0_ne1, 1ull << 31, "2^63"));
    BAD("dim 2^40 (data far past the end)", h.t0_ne1, 1ull << 40, 8, "data ends past the end of the file");
    BAD("ggml type 99", h.t0_type, 99, 4, "unknown ggml type 99");
    BAD("ggml type 4 (removed from ggml)", h.t0_type, 4, 4, "unknown ggml type 4");
    BAD("ggml type 31 (repacked, never in a file)", h.t0_type, 31, 4, "unknown ggml type 31");
    BAD("q8_0 row of 48 values", h.t1_ne0, 48, 8, "48 values per row is not a multiple of q8_0's block of 32");
    BAD("tensor offset not aligned", h.t1_off, 513, 8, "data offset 513 is not a multiple of the alignment 32");
    BAD("tensor offset leaves a gap", h.t1_off, 544, 8, "data offset 544, expected 512");
    BAD("tensor offset 2^63", h.t1_off, 1ull << 63, 8, "expected 512");
    BAD("tensor name too long", h.t0_name_len, 70, 8, "longer than ggml's limit of 63");
    BAD("duplicate tensor name", h.t1_name + 1, '0', 1, "'w0': duplicate tensor name (also tensor 0");
    BAD("bad magic", 0, 'X', 1, "not a GGUF file");
    BAD("version 1", 4, 1, 4, "GGUF v1 is not supported");
    BAD("version 0", 4, 0, 4, "GGUF version 0 is not supported");
    BAD("version 4", 4, 4, 4, "GGUF version 4 is not supported");
    BAD("big-endian", 4, 0x03000000u, 4, "big-endian");

    /* a huge sparse file claiming 50M keys and 30M tensors: rejected at the
     * first key, without allocating for the claimed counts */
    tb *b = calloc(1, sizeof *b);
    header(b, 3, 30000000, 50000000);
    path = at("sparse-hostile.gguf");
    save(path, b->p, b->n);
    CHECK("hostile: 2 GiB sparse file with 50M claimed keys",
          truncate(path, 2ll << 30) == 0 && has((e = read_bad(path), &e), "key 0 of 50000000: empty key"));
    unlink(path);
    free(b);

    e = read_bad(at("does-not-exist.gguf"));
    CHECK("hostile: missing file", has(&e, "cannot open") && clean_error(&e, at("does-not-exist.gguf")));
    e = read_bad(dir);
    CHECK("hostile: a directory", has(&e, "is a directory"));
    save(at("empty.gguf"), "", 0);
    e = read_bad(at("empty.gguf"));
    CHECK("hostile: empty file", has(&e, "not a GGUF file (0 bytes)"));
}

/* (c) random byte flips in the header: never a crash, always a clean line
 * or a successful read.  Deterministic: a fixed LCG seed. */
static void test_flips(void)
{
    static base h;
    static uint8_t p[sizeof h.b.p];
    build_base(&h);
    uint64_t seed = 12345;
    int clean = 1, failed = 0;
    const char *path = at("flip.gguf");
    for (int i = 0; i < 3000; i++) {
        memcpy(p, h.b.p, h.size);
        for (int k = 0; k < 1 + i % 4; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            size_t off = (size_t)(seed >> 33) % h.data;
            p[off] = (uint8_t)(seed >> 20);
        }
        save(path, p, h.size);
        gguf_file *f = NULL;
        kvp_error e = {0};
        if (kvp_gguf_read(path, &f, &e) == 0)
            kvp_gguf_free(f);
        else if (!clean_error(&e, path))
            clean = 0;
        else
            failed++;
    }
    CHECK("hostile: 3000 random header mutations: each reads or fails in one clean line",
          clean && failed > 1000);
}

static void cleanup(void)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.')
            unlink(at(de->d_name));
    if (d)
        closedir(d);
    rmdir(dir);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/kvplan-gguf-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    CHECK("ggml types: q4_K 256 values in 144 bytes, iq4_nl 32 in 18, mxfp4 32 in 17",
          kvp_ggml_type_block(12) == 256 && kvp_ggml_type_block_bytes(12) == 144 &&
              kvp_ggml_type_block_bytes(20) == 18 && kvp_ggml_type_block_bytes(39) == 17 &&
              strcmp(kvp_ggml_type_name(30), "bf16") == 0);
    CHECK("ggml types: removed and unknown ids", kvp_ggml_type_block(4) == 0 && kvp_ggml_type_block(33) == 0 &&
                                                     kvp_ggml_type_block(43) == 0 &&
                                                     strcmp(kvp_ggml_type_name(99), "unknown") == 0);
    test_roundtrip();
    test_writer_errors();
    test_sparse();
    test_all_types();
    test_split();
    test_hostile();
    test_flips();
    cleanup();
    return check_failures != 0;
}
