/* test_dense.c - the "dense" architecture group (lib/hf/dense.c,
 * lib/llama/dense.c) through the C API.
 *
 * Every test config of tests/data/configs/dense/ goes config -> KV twin ->
 * kvp_model_from_gguf, and the model read back must have the config's
 * layers in every field that sizes the cache.  Nanbeige's loops are checked
 * on the GGUF side too: a 22-block GGUF with nanbeige.num_loops = 2 reads
 * as 44 cache layers, as llama.cpp's load_arch_hparams expands them (the
 * real llama.cpp agreed on such a file, see SOURCES.md).  Run from the
 * repository root (make check does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gguf.h"
#include "kvplan.h"

static char dir[256];

static const char *const configs[] = {
    "smollm3-3b", "granite-3.1-1b-a400m-instruct", "granite-3.1-2b-instruct",
    "olmoe-1b-7b-0924", "olmo-1b-hf", "gemma-2b", "minicpm-2b-sft-bf16", "minicpm3-4b",
    "glm-4-9b-0414", "chatglm3-6b", "glm-4-9b-chat-hf", "phi-3.5-moe-instruct",
    "nemotron-mini-4b-instruct", "starcoder2-7b", "exaone-3.5-2.4b-instruct",
    "deepseek-moe-16b-base", "snowflake-arctic-instruct", "openelm-270m", "afm-4.5b",
    "apertus-8b-instruct-2509", "seed-oss-36b-instruct", "nanbeige4.2-3b",
    "openpangu-embedded-7b", "maincoder-standin", "talkie-standin",
};

/* Layers as llama.cpp holds them: its dense architectures set no window,
 * so a layer the config makes sliding (Starcoder2, Phi-3.5-MoE) is full. */
static int same_layer(const kvp_layer *cfg, const kvp_layer *gguf)
{
    kvp_layer_kind k = cfg->kind == KVP_LAYER_SLIDING ? KVP_LAYER_FULL : cfg->kind;
    return k == gguf->kind && cfg->n_kv_heads == gguf->n_kv_heads &&
           cfg->head_dim_k == gguf->head_dim_k && cfg->head_dim_v == gguf->head_dim_v &&
           gguf->window == 0 && gguf->d_inner == 0;
}

static void round_trip(const char *name)
{
    char path[256], out[512], label[200];
    kvp_model *m = NULL, *back = NULL;
    kvp_error e;
    snprintf(path, sizeof path, "tests/data/configs/dense/%s.json", name);
    snprintf(out, sizeof out, "%s/%s.gguf", dir, name);
    snprintf(label, sizeof label, "%s: config loads", name);
    CHECK(label, kvp_model_load(path, &m, &e) == 0);
    if (!m) {
        printf("  %s\n", e.msg);
        return;
    }
    snprintf(label, sizeof label, "%s: KV twin written and read back", name);
    int rc = kvp_twin_write(m, out, 1, 1, &e) || kvp_model_from_gguf(out, &back, &e);
    CHECK(label, rc == 0);
    if (rc) {
        printf("  %s\n", e.msg);
        kvp_model_free(m);
        return;
    }
    uint32_t bad = m->n_layers == back->n_layers ? UINT32_MAX : 0;
    for (uint32_t i = 0; bad == UINT32_MAX && i < m->n_layers; i++)
        if (!same_layer(&m->layers[i], &back->layers[i]))
            bad = i;
    snprintf(label, sizeof label, "%s: twin's layers == the config's", name);
    CHECK(label, bad == UINT32_MAX);
    if (bad != UINT32_MAX)
        printf("  first difference at layer %u (%u layers, read back %u)\n", bad, m->n_layers,
               back->n_layers);
    snprintf(label, sizeof label, "%s: twin keeps the architecture", name);
    CHECK(label, strcmp(m->gguf_arch, back->gguf_arch) == 0);
    unlink(out);
    kvp_model_free(back);
    kvp_model_free(m);
}

/* A nanbeige GGUF's metadata, block_count physical layers; no tensors (the
 * reader never reads them). */
static int write_nanbeige(const char *path, uint32_t blocks, int loops, kvp_error *e)
{
    gguf_writer *w = kvp_gguf_writer_new();
    if (!w)
        return -1;
    kvp_gguf_w_str(w, "general.architecture", "nanbeige");
    kvp_gguf_w_u32(w, "nanbeige.context_length", 262144);
    kvp_gguf_w_u32(w, "nanbeige.embedding_length", 3072);
    kvp_gguf_w_u32(w, "nanbeige.block_count", blocks);
    kvp_gguf_w_u32(w, "nanbeige.feed_forward_length", 10752);
    kvp_gguf_w_u32(w, "nanbeige.attention.head_count", 48);
    kvp_gguf_w_u32(w, "nanbeige.attention.head_count_kv", 8);
    kvp_gguf_w_u32(w, "nanbeige.attention.key_length", 128);
    kvp_gguf_w_u32(w, "nanbeige.attention.value_length", 128);
    if (loops)
        kvp_gguf_w_u32(w, "nanbeige.num_loops", (uint32_t)loops);
    int rc = kvp_gguf_writer_write(w, path, 1, e);
    kvp_gguf_writer_free(w);
    return rc;
}

static void nanbeige_loops(void)
{
    char path[512];
    kvp_model *m = NULL;
    kvp_error e;
    snprintf(path, sizeof path, "%s/nanbeige-loops.gguf", dir);
    int rc = write_nanbeige(path, 22, 2, &e) || kvp_model_from_gguf(path, &m, &e);
    CHECK("nanbeige GGUF with num_loops 2 reads", rc == 0);
    if (rc) {
        printf("  %s\n", e.msg);
        return;
    }
    /* 22 blocks x 2 loops, each 8 KV heads x 128: 44 x 2 x 1024 x 2 B */
    CHECK("nanbeige: 22 blocks x 2 loops = 44 cache layers", m->n_layers == 44);
    CHECK("nanbeige: the last loop's layers keep the shape",
          m->layers[43].kind == KVP_LAYER_FULL && m->layers[43].n_kv_heads == 8 &&
              m->layers[43].head_dim_k == 128 && m->layers[43].head_dim_v == 128);
    kvp_model_free(m);
    m = NULL;
    rc = write_nanbeige(path, 22, 0, &e) || kvp_model_from_gguf(path, &m, &e);
    CHECK("nanbeige: num_loops absent = 1 pass", rc == 0 && m && m->n_layers == 22);
    kvp_model_free(m);
    unlink(path);
}

/* llama-embed: llama's keys under its own prefix; llama.cpp allocates a
 * full KV cache for it (checked on the real llama.cpp, SOURCES.md). */
static void llama_embed(void)
{
    char path[512];
    kvp_model *m = NULL;
    kvp_error e;
    gguf_writer *w = kvp_gguf_writer_new();
    snprintf(path, sizeof path, "%s/llama-embed.gguf", dir);
    kvp_gguf_w_str(w, "general.architecture", "llama-embed");
    kvp_gguf_w_u32(w, "llama-embed.context_length", 131072);
    kvp_gguf_w_u32(w, "llama-embed.embedding_length", 2048);
    kvp_gguf_w_u32(w, "llama-embed.block_count", 16);
    kvp_gguf_w_u32(w, "llama-embed.attention.head_count", 32);
    kvp_gguf_w_u32(w, "llama-embed.attention.head_count_kv", 8);
    int rc = kvp_gguf_writer_write(w, path, 1, &e) || kvp_model_from_gguf(path, &m, &e);
    kvp_gguf_writer_free(w);
    CHECK("llama-embed GGUF reads", rc == 0);
    if (rc) {
        printf("  %s\n", e.msg);
        return;
    }
    /* 16 full layers of 8 KV heads x (2048 / 32 = 64) */
    CHECK("llama-embed: 16 full layers of 8 x 64",
          m->n_layers == 16 && m->layers[15].kind == KVP_LAYER_FULL &&
              m->layers[15].n_kv_heads == 8 && m->layers[15].head_dim_k == 64);
    kvp_model_free(m);
    unlink(path);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/kvplan-dense-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
                                                                            : "/tmp");
    if (!mkdtemp(dir)) {
        CHECK("mkdtemp", 0);
        return 1;
    }
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
        round_trip(configs[i]);
    nanbeige_loops();
    llama_embed();
    rmdir(dir);
    return check_failures != 0;
}
