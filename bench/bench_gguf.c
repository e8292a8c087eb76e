/* bench_gguf.c - how fast kvplan reads a GGUF header, against llama.cpp's
 * own reader and node-llama-cpp's, on the same file in the same run.
 *
 * The file is a Qwen2.5-7B-like shape twin written by kvplan's writer: a
 * 151,936-token vocabulary (tokens, token types), 151,387 merges and 339
 * tensor infos, with the data section a sparse hole.  Each reader is timed
 * over many calls and the median is reported, so one slow call (a page
 * fault, the scheduler) does not decide the ratio.
 *
 *   bench_gguf DIR [--ggml LIB] [--node "CMD"]
 *   bench_gguf DIR --write-only     (the file alone, for bench/bench_remote.sh)
 *
 * LIB is llama.cpp's libggml-base.so, loaded with dlopen (its
 * gguf_init_from_file with no_alloc and no ggml context: metadata and tensor
 * infos only).  CMD is run as `CMD FILE` and prints "median_ms X"
 * (bench/bench_gguf.mjs).  Either is skipped when not given. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gguf.h"

enum { N_VOCAB = 151936, N_MERGES = 151387, N_LAYERS = 28 };

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* ---- the twin -------------------------------------------------------------- */

/* Byte-level BPE-looking tokens: "Ġ" prefixes and lengths 1 to 12. */
static char *token(unsigned i)
{
    char buf[32];
    int n = 0;
    if (i % 3 == 0)
        n = snprintf(buf, sizeof buf, "\xc4\xa0");
    unsigned len = 1 + (i * 2654435761u >> 16) % 10;
    for (unsigned k = 0, x = i; k < len; k++, x = x / 26 + k * 7)
        buf[n++] = (char)('a' + x % 26);
    buf[n] = '\0';
    return strdup(buf);
}

static void tensor(gguf_writer *w, const char *fmt, int layer, uint64_t ne0, uint64_t ne1,
                   uint32_t type)
{
    char name[64];
    const uint64_t ne[] = {ne0, ne1};
    snprintf(name, sizeof name, fmt, layer);
    kvp_gguf_w_tensor(w, name, ne1 ? 2 : 1, ne, type);
}

static void qwen_tensors(gguf_writer *w)
{
    enum { D = 3584, FF = 18944, KV = 512, F32 = 0, Q4_K = 12, Q6_K = 14 };
    tensor(w, "token_embd.weight", 0, D, 152064, Q4_K);
    for (int l = 0; l < N_LAYERS; l++) {
        tensor(w, "blk.%d.attn_norm.weight", l, D, 0, F32);
        tensor(w, "blk.%d.attn_q.weight", l, D, D, Q4_K);
        tensor(w, "blk.%d.attn_q.bias", l, D, 0, F32);
        tensor(w, "blk.%d.attn_k.weight", l, D, KV, Q4_K);
        tensor(w, "blk.%d.attn_k.bias", l, KV, 0, F32);
        tensor(w, "blk.%d.attn_v.weight", l, D, KV, Q6_K);
        tensor(w, "blk.%d.attn_v.bias", l, KV, 0, F32);
        tensor(w, "blk.%d.attn_output.weight", l, D, D, Q4_K);
        tensor(w, "blk.%d.ffn_norm.weight", l, D, 0, F32);
        tensor(w, "blk.%d.ffn_gate.weight", l, D, FF, Q4_K);
        tensor(w, "blk.%d.ffn_up.weight", l, D, FF, Q4_K);
        tensor(w, "blk.%d.ffn_down.weight", l, FF, D, Q6_K);
    }
    tensor(w, "output_norm.weight", 0, D, 0, F32);
    tensor(w, "output.weight", 0, D, 152064, Q6_K);
}

static int write_twin(const char *path)
{
    char **tok = malloc(N_VOCAB * sizeof *tok), **merges = malloc(N_MERGES * sizeof *merges);
    int32_t *types = malloc(N_VOCAB * sizeof *types);
    if (!tok || !merges || !types)
        return -1;
    for (unsigned i = 0; i < N_VOCAB; i++) {
        tok[i] = token(i);
        types[i] = i < N_VOCAB - 200 ? 1 : 3;
    }
    for (unsigned i = 0; i < N_MERGES; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s %s", tok[i % 5000], tok[(i * 7 + 1) % N_VOCAB]);
        merges[i] = strdup(buf);
    }
    gguf_writer *w = kvp_gguf_writer_new();
    kvp_gguf_w_str(w, "general.architecture", "qwen2");
    kvp_gguf_w_str(w, "general.name", "Qwen2.5 7B Instruct (bench twin)");
    kvp_gguf_w_u32(w, "qwen2.block_count", N_LAYERS);
    kvp_gguf_w_u32(w, "qwen2.context_length", 32768);
    kvp_gguf_w_u32(w, "qwen2.embedding_length", 3584);
    kvp_gguf_w_u32(w, "qwen2.feed_forward_length", 18944);
    kvp_gguf_w_u32(w, "qwen2.attention.head_count", 28);
    kvp_gguf_w_u32(w, "qwen2.attention.head_count_kv", 4);
    kvp_gguf_w_f32(w, "qwen2.rope.freq_base", 1000000.0f);
    kvp_gguf_w_f32(w, "qwen2.attention.layer_norm_rms_epsilon", 1e-6f);
    kvp_gguf_w_u32(w, "general.file_type", 15);
    kvp_gguf_w_str(w, "tokenizer.ggml.model", "gpt2");
    kvp_gguf_w_str(w, "tokenizer.ggml.pre", "qwen2");
    kvp_gguf_w_arr_str(w, "tokenizer.ggml.tokens", (const char *const *)tok, N_VOCAB);
    kvp_gguf_w_arr_i32(w, "tokenizer.ggml.token_type", types, N_VOCAB);
    kvp_gguf_w_arr_str(w, "tokenizer.ggml.merges", (const char *const *)merges, N_MERGES);
    kvp_gguf_w_u32(w, "tokenizer.ggml.eos_token_id", 151645);
    kvp_gguf_w_u32(w, "tokenizer.ggml.padding_token_id", 151643);
    kvp_gguf_w_u32(w, "tokenizer.ggml.bos_token_id", 151643);
    kvp_gguf_w_bool(w, "tokenizer.ggml.add_bos_token", 0);
    kvp_gguf_w_str(w, "tokenizer.chat_template", "{% for m in messages %}{{ m.content }}{% endfor %}");
    kvp_gguf_w_u32(w, "general.quantization_version", 2);
    qwen_tensors(w);
    kvp_error err;
    int rc = kvp_gguf_writer_write(w, path, 1, &err);
    if (rc)
        fprintf(stderr, "bench_gguf: %s\n", err.msg);
    kvp_gguf_writer_free(w);
    for (unsigned i = 0; i < N_VOCAB; i++)
        free(tok[i]);
    for (unsigned i = 0; i < N_MERGES; i++)
        free(merges[i]);
    free(tok), free(merges), free(types);
    return rc;
}

/* ---- the readers ----------------------------------------------------------- */

static double time_kvplan(const char *path, int iters)
{
    double *t = malloc(iters * sizeof *t);
    for (int i = -3; i < iters; i++) { /* 3 warm-up calls */
        gguf_file *f;
        kvp_error err;
        double t0 = now_ms();
        if (kvp_gguf_read(path, &f, &err)) {
            fprintf(stderr, "bench_gguf: %s\n", err.msg);
            exit(1);
        }
        kvp_gguf_free(f);
        if (i >= 0)
            t[i] = now_ms() - t0;
    }
    double m = median(t, iters);
    free(t);
    return m;
}

/* ggml's API, declared here: the bench needs no ggml headers. */
struct gguf_init_params {
    bool no_alloc;
    void **ctx;
};
typedef void *(*gguf_init_fn)(const char *, struct gguf_init_params);
typedef void (*gguf_free_fn)(void *);
typedef void (*log_cb)(int, const char *, void *);
typedef void (*log_set_fn)(log_cb, void *);

static void quiet(int level, const char *text, void *user)
{
    (void)level, (void)text, (void)user;
}

static double time_llamacpp(const char *lib, const char *path, int iters)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "bench_gguf: %s\n", dlerror());
        return -1;
    }
    gguf_init_fn init = (gguf_init_fn)dlsym(h, "gguf_init_from_file");
    gguf_free_fn gfree = (gguf_free_fn)dlsym(h, "gguf_free");
    log_set_fn log_set = (log_set_fn)dlsym(h, "ggml_log_set");
    if (!init || !gfree) {
        fprintf(stderr, "bench_gguf: %s has no gguf_init_from_file\n", lib);
        return -1;
    }
    if (log_set)
        log_set(quiet, NULL);
    double *t = malloc(iters * sizeof *t);
    for (int i = -2; i < iters; i++) {
        double t0 = now_ms();
        void *ctx = init(path, (struct gguf_init_params){.no_alloc = true, .ctx = NULL});
        if (!ctx) {
            fprintf(stderr, "bench_gguf: llama.cpp could not read %s\n", path);
            exit(1);
        }
        gfree(ctx);
        if (i >= 0)
            t[i] = now_ms() - t0;
    }
    double m = median(t, iters);
    free(t);
    return m;
}

static double time_node(const char *cmd, const char *path)
{
    char line[256], *full = malloc(strlen(cmd) + strlen(path) + 8);
    double ms = -1;
    sprintf(full, "%s '%s'", cmd, path);
    FILE *p = popen(full, "r");
    while (p && fgets(line, sizeof line, p))
        if (sscanf(line, "median_ms %lf", &ms) != 1)
            fputs(line, stderr);
    if (!p || pclose(p) != 0)
        ms = -1;
    free(full);
    return ms;
}

int main(int argc, char **argv)
{
    const char *ggml = NULL, *node = NULL;
    if (argc < 2) {
        fprintf(stderr, "usage: bench_gguf DIR [--ggml LIB] [--node CMD]\n");
        return 2;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--ggml") == 0)
            ggml = argv[i + 1];
        else if (strcmp(argv[i], "--node") == 0)
            node = argv[i + 1];
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/bench-twin.gguf", argv[1]);
    if (write_twin(path))
        return 1;
    if (argc > 2 && strcmp(argv[2], "--write-only") == 0)
        return 0;

    gguf_file *f;
    kvp_error err;
    struct stat st;
    if (kvp_gguf_read(path, &f, &err) || stat(path, &st)) {
        fprintf(stderr, "bench_gguf: %s\n", err.msg);
        return 1;
    }
    printf("GGUF header read: %llu keys (151,936-token vocabulary, 151,387 merges), %llu tensors;\n"
           "header %.2f MiB, file %.2f GiB (sparse, %.2f MiB on disk)\n\n",
           (unsigned long long)f->n_kv, (unsigned long long)f->n_tensors,
           f->data_offset / 1048576.0, st.st_size / 1073741824.0, st.st_blocks * 512 / 1048576.0);
    kvp_gguf_free(f);

    enum { IT_KVP = 300, IT_LLAMA = 40 };
    double kvp = time_kvplan(path, IT_KVP);
    double llama = ggml ? time_llamacpp(ggml, path, IT_LLAMA) : -1;
    double nd = node ? time_node(node, path) : -1;
    printf("  %-40s %9.3f ms  (median of %d)\n", "kvplan kvp_gguf_read", kvp, IT_KVP);
    if (llama > 0)
        printf("  %-40s %9.3f ms  (median of %d)\n", "llama.cpp gguf_init_from_file", llama, IT_LLAMA);
    else
        printf("  %-40s %9s\n", "llama.cpp gguf_init_from_file", "skipped");
    if (nd > 0)
        printf("  %-40s %9.3f ms  (median, one node process)\n", "node-llama-cpp readGgufFileInfo", nd);
    else
        printf("  %-40s %9s\n", "node-llama-cpp readGgufFileInfo", "skipped");
    printf("\n");
    if (llama > 0)
        printf("kvplan is %.1fx faster than llama.cpp's gguf reader\n", llama / kvp);
    if (nd > 0)
        printf("kvplan is %.1fx faster than node-llama-cpp's readGgufFileInfo\n", nd / kvp);
    remove(path);
    return 0;
}
