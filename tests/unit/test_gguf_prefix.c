/* test_gguf_prefix.c - GGUF headers from memory, as a remote reader gets
 * them: kvp_gguf_header_need on every prefix of a file (is the header there,
 * and if not, how many bytes at least), and kvp_gguf_read_mem on the header
 * bytes alone (no data section), one shard or several.
 *
 * The two share kvp_gguf_read's parser, so the tests hold them to it: the
 * same metadata as the mapped file, the same verdict on a few thousand
 * mutated headers, and a "bytes needed" that is never more than the header
 * really needs (or a remote reader would fetch past it) yet makes progress
 * (or it would ask again and again).  Files come from the GGUF writer into a
 * mkdtemp directory. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t *p = NULL;
    long len;
    *n = 0;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (p = malloc((size_t)len + 1)) && fread(p, 1, (size_t)len, f) == (size_t)len)
        *n = (size_t)len;
    fclose(f);
    return p;
}

static int save(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static int str_eq(gguf_str s, const char *z)
{
    return s.len == strlen(z) && memcmp(s.s, z, s.len) == 0;
}

/* A model-like header: scalars, a vocabulary of n_vocab strings, scores,
 * and a few tensors, in the layout llama.cpp's converters write. */
static int write_model(const char *path, int n_vocab)
{
    char **toks = malloc(sizeof *toks * (size_t)n_vocab);
    float *scores = malloc(sizeof *scores * (size_t)n_vocab);
    const uint64_t ne_emb[] = {64, (uint64_t)n_vocab}, ne_q[] = {64, 64}, ne_n[] = {64};
    if (!toks || !scores)
        return -1;
    for (int i = 0; i < n_vocab; i++) {
        toks[i] = malloc(32);
        snprintf(toks[i], 32, "tok%d%s", i, i % 7 ? "" : "_long_piece");
        scores[i] = (float)-i;
    }
    gguf_writer *w = kvp_gguf_writer_new();
    kvp_gguf_w_str(w, "general.architecture", "llama");
    kvp_gguf_w_u32(w, "llama.block_count", 2);
    kvp_gguf_w_u32(w, "llama.context_length", 4096);
    kvp_gguf_w_u32(w, "llama.embedding_length", 64);
    kvp_gguf_w_u32(w, "llama.attention.head_count", 4);
    kvp_gguf_w_u32(w, "llama.attention.head_count_kv", 2);
    kvp_gguf_w_str(w, "tokenizer.ggml.model", "llama");
    kvp_gguf_w_arr_str(w, "tokenizer.ggml.tokens", (const char *const *)toks, (size_t)n_vocab);
    kvp_gguf_w_arr_f32(w, "tokenizer.ggml.scores", scores, (size_t)n_vocab);
    kvp_gguf_w_tensor(w, "token_embd.weight", 2, ne_emb, GGML_TYPE_F16_ID);
    kvp_gguf_w_tensor(w, "blk.0.attn_q.weight", 2, ne_q, GGML_TYPE_Q8_0_ID);
    kvp_gguf_w_tensor(w, "blk.0.attn_norm.weight", 1, ne_n, GGML_TYPE_F32_ID);
    kvp_gguf_w_tensor(w, "blk.1.attn_q.weight", 2, ne_q, GGML_TYPE_Q8_0_ID);
    kvp_error e;
    int rc = kvp_gguf_writer_write(w, path, 1, &e);
    kvp_gguf_writer_free(w);
    for (int i = 0; i < n_vocab; i++)
        free(toks[i]);
    free(toks);
    free(scores);
    return rc;
}

/* The offset just past the last tensor info: data_offset minus the padding. */
static uint64_t infos_end(const gguf_file *f)
{
    const gguf_tensor *t = &f->tensors[f->n_tensors - 1];
    /* name, n_dims, dims, type, offset */
    return (uint64_t)((const uint8_t *)t->name.s - (const uint8_t *)f->maps[0]) + t->name.len +
           4 + 8 * t->n_dims + 4 + 8;
}

/* ---- how many bytes --------------------------------------------------------- */

static void test_need(void)
{
    const char *path = at("small.gguf");
    size_t n = 0;
    kvp_error e = {0};
    gguf_file *ref = NULL;
    CHECK("fixture: a small model file", write_model(path, 40) == 0 &&
                                             kvp_gguf_read(path, &ref, &e) == 0);
    uint8_t *p = slurp(path, &n);
    if (!ref || !p) {
        kvp_gguf_free(ref);
        free(p);
        return;
    }
    uint64_t H = ref->data_offset, need = 0;
    int bound = 1, progress = 1, clean = 1;
    for (size_t k = 0; k < H; k++) {
        int rc = kvp_gguf_header_need(p, k, path, &need, &e);
        if (rc != 0)
            clean = 0;
        else if (need > H) /* a remote reader would fetch past the header */
            bound = 0;
        else if (need <= k)
            progress = 0;
    }
    CHECK("need: every shorter prefix is incomplete", clean);
    CHECK("need: the bytes asked for never pass the header's end", bound);
    CHECK("need: always more than what is there", progress);
    int rc = kvp_gguf_header_need(p, (size_t)H, path, &need, &e);
    CHECK("need: the exact header is complete, its length the data offset",
          rc == 1 && need == H && H % 32 == 0);
    rc = kvp_gguf_header_need(p, n, path, &need, &e);
    CHECK("need: the whole file too (data bytes after the header are ignored)",
          rc == 1 && need == H);
    uint64_t ie = infos_end(ref);
    rc = kvp_gguf_header_need(p, (size_t)ie, path, &need, &e);
    CHECK("need: tensor infos complete but the padding missing: asks for the padding",
          ie < H && rc == 0 && need == H);
    rc = kvp_gguf_header_need(p, 2, path, &need, &e);
    CHECK("need: 'GG' may still be a GGUF: at least the 24-byte fixed header",
          rc == 0 && need == 24);
    rc = kvp_gguf_header_need(NULL, 0, path, &need, &e);
    CHECK("need: nothing yet: at least 24", rc == 0 && need == 24);
    kvp_gguf_free(ref);
    free(p);

    /* a vocabulary big enough that the bound matters: count the round trips
     * of a reader that fetches exactly what it is told */
    path = at("vocab.gguf");
    ref = NULL;
    CHECK("fixture: a 20000-token model file", write_model(path, 20000) == 0 &&
                                                   kvp_gguf_read(path, &ref, &e) == 0);
    p = slurp(path, &n);
    if (!ref || !p) {
        kvp_gguf_free(ref);
        free(p);
        return;
    }
    H = ref->data_offset;
    size_t have = 0;
    int steps = 0, ok = 1;
    while ((rc = kvp_gguf_header_need(p, have, path, &need, &e)) == 0 && steps < 100000) {
        ok &= need > have && need <= H;
        have = (size_t)need;
        steps++;
    }
    CHECK("need: a reader fetching what it is told reaches the exact header",
          ok && rc == 1 && need == H && have == H);
    /* each answer counts the strings still to come: far fewer rounds than strings */
    CHECK("need: the bound counts what must follow (rounds << strings)", steps > 1 && steps < 2000);
    printf("# vocab header %llu bytes in %d rounds\n", (unsigned long long)H, steps);
    kvp_gguf_free(ref);
    free(p);
}

/* ---- refusals ----------------------------------------------------------------- */

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void test_refusals(void)
{
    uint64_t need = 0;
    kvp_error e = {0};
    static const uint8_t html[] = "<!DOCTYPE html><html><body>Sign in</body></html>";
    int rc = kvp_gguf_header_need(html, sizeof html - 1, "https://cdn.example/x", &need, &e);
    CHECK("refused: an HTML page, named as such, naming the URL",
          rc == -1 && strstr(e.msg, "not a GGUF file") && strstr(e.msg, "HTML") &&
              strstr(e.msg, "https://cdn.example/x") == e.msg);
    rc = kvp_gguf_header_need("GX", 2, "x", &need, &e);
    CHECK("refused: a wrong magic before 4 bytes have arrived", rc == -1);

    uint8_t h[64] = {'G', 'G', 'U', 'F', 1, 0, 0, 0};
    rc = kvp_gguf_header_need(h, 24, "x", &need, &e);
    CHECK("refused: GGUF v1", rc == -1 && strstr(e.msg, "v1 is not supported"));

    h[4] = 3;
    put64(h + 8, 0);
    put64(h + 16, 1ull << 40); /* 2^40 keys */
    rc = kvp_gguf_header_need(h, 24, "x", &need, &e);
    CHECK("refused: a key count no 64 MiB header can hold",
          rc == -1 && strstr(e.msg, "cannot fit in a header of 64 MiB"));

    put64(h + 8, 3000000); /* 3M tensor infos of >= 33 bytes: 99 MB */
    put64(h + 16, 0);
    rc = kvp_gguf_header_need(h, 24, "x", &need, &e);
    CHECK("refused: a tensor count no 64 MiB header can hold", rc == -1);

    put64(h + 8, 0);
    put64(h + 16, 1);
    put64(h + 24, 70ull << 20); /* one key of 70 MiB */
    rc = kvp_gguf_header_need(h, 32, "x", &need, &e);
    CHECK("refused: a string that would take the header past 64 MiB",
          rc == -1 && strstr(e.msg, "would pass 64 MiB"));

    put64(h + 24, 1);
    h[32] = 'k';
    h[33] = GGUF_ARRAY, h[34] = h[35] = h[36] = 0;
    h[37] = GGUF_UINT64, h[38] = h[39] = h[40] = 0;
    put64(h + 41, 1ull << 30); /* 8 GiB of uint64 */
    rc = kvp_gguf_header_need(h, 49, "x", &need, &e);
    CHECK("refused: an array that cannot fit in 64 MiB", rc == -1 && strstr(e.msg, "array of"));
    put64(h + 41, 1000);
    rc = kvp_gguf_header_need(h, 49, "x", &need, &e);
    CHECK("need: an array that fits asks for all of it at once", rc == 0 && need == 49 + 8000);
}

/* ---- reading from memory --------------------------------------------------------- */

static void test_read_mem(void)
{
    const char *path = at("vocab.gguf");
    size_t n = 0;
    kvp_error e = {0};
    gguf_file *ref = NULL, *f = NULL;
    if (kvp_gguf_read(path, &ref, &e)) {
        CHECK("read_mem: fixture", 0);
        return;
    }
    uint8_t *p = slurp(path, &n);
    uint64_t H = ref->data_offset;
    uint8_t *hdr = malloc((size_t)H);
    memcpy(hdr, p, (size_t)H);
    gguf_mem m = {.data = hdr, .size = (size_t)H, .file_size = n, .name = "org/repo/m.gguf"};
    int rc = kvp_gguf_read_mem(&m, 1, &f, &e);
    memset(hdr, 0xee, (size_t)H); /* the reader copied what it keeps */
    free(hdr);
    int same = rc == 0 && f->n_kv == ref->n_kv && f->n_tensors == ref->n_tensors &&
               f->version == ref->version && f->alignment == ref->alignment &&
               f->data_offset == ref->data_offset && f->file_size == n && f->n_shards == 1;
    for (uint64_t i = 0; same && i < ref->n_tensors; i++) {
        const gguf_tensor *a = &f->tensors[i], *b = &ref->tensors[i];
        same = a->name.len == b->name.len && memcmp(a->name.s, b->name.s, a->name.len) == 0 &&
               a->type == b->type && a->offset == b->offset && a->nbytes == b->nbytes &&
               memcmp(a->ne, b->ne, sizeof a->ne) == 0;
    }
    CHECK("read_mem: the header alone gives what the mapped file gives", same);
    char arch[16];
    gguf_str tok;
    double sc = 0;
    const gguf_kv *toks = rc == 0 ? kvp_gguf_find(f, "tokenizer.ggml.tokens") : NULL;
    const gguf_kv *scores = rc == 0 ? kvp_gguf_find(f, "tokenizer.ggml.scores") : NULL;
    CHECK("read_mem: values readable after the caller's buffer is gone",
          rc == 0 && kvp_gguf_get_str(f, "general.architecture", arch, sizeof arch) == 0 &&
              strcmp(arch, "llama") == 0 && toks && kvp_gguf_arr_str(toks, 19998, &tok) == 0 &&
              str_eq(tok, "tok19998") && scores && kvp_gguf_arr_float(scores, 7, &sc) == 0 &&
              sc == -7.0 && strcmp(f->path, "org/repo/m.gguf") == 0);
    kvp_gguf_free(f);
    f = NULL;

    uint64_t ie = infos_end(ref);
    m = (gguf_mem){.data = p, .size = (size_t)ie, .file_size = n, .name = "m"};
    rc = kvp_gguf_read_mem(&m, 1, &f, &e);
    CHECK("read_mem: bytes up to the last tensor info are enough (padding not needed)",
          rc == 0 && f->data_offset == H);
    kvp_gguf_free(f);
    f = NULL;

    m.size = (size_t)ie - 1;
    rc = kvp_gguf_read_mem(&m, 1, &f, &e);
    CHECK("read_mem: one byte short: truncated, naming the buffer",
          rc == -1 && !f && strstr(e.msg, "truncated") && strncmp(e.msg, "m: ", 3) == 0);

    m = (gguf_mem){.data = p, .size = (size_t)H, .file_size = 0, .name = "m"};
    rc = kvp_gguf_read_mem(&m, 1, &f, &e);
    CHECK("read_mem: file size unknown: read, file_size 0", rc == 0 && f->file_size == 0);
    kvp_gguf_free(f);
    f = NULL;

    m.file_size = n - 1;
    rc = kvp_gguf_read_mem(&m, 1, &f, &e);
    CHECK("read_mem: a file size too small for the tensor data: refused",
          rc == -1 && strstr(e.msg, "data ends past the end of the file"));

    m.file_size = H - 10;
    rc = kvp_gguf_read_mem(&m, 1, &f, &e);
    CHECK("read_mem: more bytes than the file has: refused", rc == -1 && strstr(e.msg, "but the file has"));

    static const uint8_t html[] = "<html>";
    m = (gguf_mem){.data = html, .size = 6, .file_size = 0, .name = "u"};
    rc = kvp_gguf_read_mem(&m, 1, &f, &e);
    CHECK("read_mem: HTML refused", rc == -1 && strstr(e.msg, "not a GGUF file"));
    rc = kvp_gguf_read_mem(&m, 0, &f, &e);
    CHECK("read_mem: no shard: a usage error", rc == -1 && e.code == KVP_EUSAGE);
    kvp_gguf_free(ref);
    free(p);
}

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
    const char *t1[] = {"a", "b"}, *t2[] = {"c"}, *t3[] = {"d", "e"}, *dup[] = {"a"};
    uint8_t *b[4];
    size_t n[4];
    gguf_mem m[4];
    write_shard("s1.gguf", 0, 3, 5, t1, 2);
    write_shard("s2.gguf", 1, 3, 5, t2, 1);
    write_shard("s3.gguf", 2, 3, 5, t3, 2);
    write_shard("s2dup.gguf", 1, 3, 5, dup, 1);
    const char *names[] = {"s1.gguf", "s2.gguf", "s3.gguf", "s2dup.gguf"};
    for (int i = 0; i < 4; i++) {
        b[i] = slurp(at(names[i]), &n[i]);
        /* a URL, not a shard name: shards are matched by split.no, not by name */
        m[i] = (gguf_mem){.data = b[i], .size = n[i], .file_size = n[i],
                          .name = i == 0 ? "https://cdn.example/blob?sig=1" : names[i]};
    }
    gguf_file *f = NULL;
    kvp_error e = {0};
    int rc = kvp_gguf_read_mem(m, 3, &f, &e);
    uint64_t sc = 0;
    CHECK("split: three shards from memory read as one",
          rc == 0 && f->n_shards == 3 && f->n_tensors == 5 && f->tensors[4].shard == 2 &&
              kvp_gguf_find_tensor(f, "c") && kvp_gguf_find_tensor(f, "c")->shard == 1);
    kvp_gguf_free(f);
    f = NULL;
    rc = kvp_gguf_read_mem(m, 1, &f, &e);
    CHECK("split: shard 1 alone: its metadata and tensors, split.count says 3",
          rc == 0 && f->n_shards == 1 && f->n_tensors == 2 &&
              kvp_gguf_get_uint(f, "split.count", &sc) == 0 && sc == 3);
    kvp_gguf_free(f);
    f = NULL;
    rc = kvp_gguf_read_mem(m, 2, &f, &e);
    CHECK("split: two of three shards refused",
          rc == -1 && strstr(e.msg, "split.count is 3 but 2 shards were given"));
    gguf_mem swapped[3] = {m[0], m[2], m[1]};
    rc = kvp_gguf_read_mem(swapped, 3, &f, &e);
    CHECK("split: shards out of order refused", rc == -1 && strstr(e.msg, "split.no should be 1"));
    gguf_mem dupl[3] = {m[0], m[3], m[2]};
    rc = kvp_gguf_read_mem(dupl, 3, &f, &e);
    CHECK("split: a tensor name in two shards refused",
          rc == -1 && strstr(e.msg, "duplicate tensor name"));
    gguf_mem second[1] = {m[1]};
    rc = kvp_gguf_read_mem(second, 1, &f, &e);
    CHECK("split: shard 2 given as the first refused", rc == -1 && strstr(e.msg, "split.no"));
    for (int i = 0; i < 4; i++)
        free(b[i]);
}

/* ---- one parser: the same verdicts on mutated headers -------------------------------- */

static void test_agree(void)
{
    const char *path = at("small.gguf"), *mut = at("mut.gguf");
    size_t n = 0;
    uint8_t *orig = slurp(path, &n);
    gguf_file *ref = NULL;
    kvp_error e = {0};
    if (!orig || kvp_gguf_read(path, &ref, &e)) {
        CHECK("agree: fixture", 0);
        free(orig);
        return;
    }
    uint64_t H = ref->data_offset;
    kvp_gguf_free(ref);
    uint8_t *p = malloc(n);
    uint64_t seed = 777;
    int agree = 1, need_ok = 1, same_msg = 1, failed = 0;
    for (int i = 0; i < 3000; i++) {
        memcpy(p, orig, n);
        for (int k = 0; k < 1 + i % 4; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            p[(size_t)(seed >> 33) % H] = (uint8_t)(seed >> 20);
        }
        save(mut, p, n);
        gguf_file *a = NULL, *b = NULL;
        kvp_error ea = {0}, eb = {0}, en = {0};
        int ra = kvp_gguf_read(mut, &a, &ea);
        gguf_mem m = {.data = p, .size = n, .file_size = n, .name = mut};
        int rb = kvp_gguf_read_mem(&m, 1, &b, &eb);
        uint64_t need = 0;
        int rn = kvp_gguf_header_need(p, n, mut, &need, &en);
        if (ra != rb)
            agree = 0;
        else if (ra && strcmp(ea.msg, eb.msg) != 0)
            same_msg = 0;
        /* a readable file has a complete header; a refused prefix is no file */
        if ((ra == 0 && !(rn == 1 && need == a->data_offset)) || (rn == -1 && ra == 0))
            need_ok = 0;
        failed += ra != 0;
        kvp_gguf_free(a);
        kvp_gguf_free(b);
    }
    CHECK("agree: 3000 mutated headers: the file and the memory reader agree", agree);
    CHECK("agree: and fail with the same message", same_msg);
    CHECK("agree: header_need says complete exactly when the file reads (or refuses it)",
          need_ok && failed > 1000);
    free(p);
    free(orig);
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
    snprintf(dir, sizeof dir, "%s/kvplan-gguf-prefix-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_need();
    test_refusals();
    test_read_mem();
    test_split();
    test_agree();
    cleanup();
    return check_failures != 0;
}
