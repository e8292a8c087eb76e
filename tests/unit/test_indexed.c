/* test_indexed.c - the "indexed" group (DeepSeek / MiniMax / Qwen4-Exp sparse attention,
 * dots.3-note, and Qwen4-Exp's PLE state) through the C API.
 *
 * Every test config of tests/data/configs/indexed/ goes config -> KV twin ->
 * kvp_model_from_gguf, and the layers read back (kinds, latent, which layers
 * carry an indexer key and how wide) must be the config's.  Then the rules the
 * oracle cannot reach from a twin: glm-dsa GGUFs without attention.indexer.types
 * (every layer below a 1M context, GLM-5.2's pattern at 1M), qwen4exp's one
 * linear PLE layer, a llama.cpp
 * architecture without an indexer cache refusing indexer layers, and vLLM's
 * indexer pages (replicated under tensor parallelism, fp8 + scale whatever the
 * cache dtype).  make test runs at the repository root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gguf.h"
#include "kvplan.h"

static char dir[256];

static const char *path_for(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s.gguf", dir, name);
    return p;
}

static kvp_model *load(const char *name)
{
    char path[256];
    kvp_model *m = NULL;
    kvp_error e;
    snprintf(path, sizeof path, "tests/data/configs/indexed/%s.json", name);
    if (kvp_model_load(path, &m, &e)) {
        printf("  %s\n", e.msg);
        return NULL;
    }
    return m;
}

static void round_trip(const char *name)
{
    char label[160];
    kvp_error e;
    kvp_model *m = load(name), *back = NULL;
    snprintf(label, sizeof label, "%s: config reads", name);
    CHECK(label, m != NULL);
    if (!m)
        return;
    int rc = kvp_twin_write(m, path_for(name), 1, 1, &e);
    if (!rc)
        rc = kvp_model_from_gguf(path_for(name), &back, &e);
    snprintf(label, sizeof label, "%s: KV twin written and read back", name);
    CHECK(label, rc == 0);
    if (rc) {
        printf("  %s\n", e.msg);
        kvp_model_free(m);
        return;
    }
    int same = m->n_layers == back->n_layers;
    for (uint32_t i = 0; same && i < m->n_layers; i++) {
        const kvp_layer *a = &m->layers[i], *b = &back->layers[i];
        same = a->kind == b->kind && a->head_dim_k == b->head_dim_k &&
               a->n_kv_heads == b->n_kv_heads && a->indexer_head_dim == b->indexer_head_dim &&
               a->mla_k_head_dim == b->mla_k_head_dim && a->mla_v_head_dim == b->mla_v_head_dim &&
               a->head_dim_v == b->head_dim_v && a->window == b->window &&
               a->d_inner == b->d_inner && a->ple_conv_state == b->ple_conv_state;
        if (!same)
            printf("  layer %u: %s %u idx %u, read back %s %u idx %u\n", i,
                   kvp_layer_kind_name(a->kind), a->head_dim_k, a->indexer_head_dim,
                   kvp_layer_kind_name(b->kind), b->head_dim_k, b->indexer_head_dim);
    }
    snprintf(label, sizeof label, "%s: twin's layers and indexers == the config's", name);
    CHECK(label, same);
    kvp_model_free(back);
    kvp_model_free(m);
}

/* A glm-dsa GGUF with no attention.indexer.types: llama.cpp's default
 * depends on context_length (src/models/glm-dsa.cpp). */
static kvp_model *glm_gguf(const char *name, uint32_t ctx, int types)
{
    gguf_writer *w = kvp_gguf_writer_new();
    kvp_model *m = NULL;
    kvp_error e;
    kvp_gguf_w_str(w, "general.architecture", "glm-dsa");
    kvp_gguf_w_u32(w, "glm-dsa.block_count", 10);
    kvp_gguf_w_u32(w, "glm-dsa.context_length", ctx);
    kvp_gguf_w_u32(w, "glm-dsa.embedding_length", 512);
    kvp_gguf_w_u32(w, "glm-dsa.attention.head_count", 8);
    kvp_gguf_w_u32(w, "glm-dsa.attention.head_count_kv", 1);
    kvp_gguf_w_u32(w, "glm-dsa.attention.key_length", 576);
    kvp_gguf_w_u32(w, "glm-dsa.attention.value_length", 512);
    kvp_gguf_w_u32(w, "glm-dsa.attention.key_length_mla", 256);
    kvp_gguf_w_u32(w, "glm-dsa.attention.value_length_mla", 256);
    kvp_gguf_w_u32(w, "glm-dsa.attention.indexer.head_count", 32);
    kvp_gguf_w_u32(w, "glm-dsa.attention.indexer.key_length", 128);
    kvp_gguf_w_u32(w, "glm-dsa.attention.indexer.top_k", 2048);
    if (types) { /* a scalar: every layer the same */
        kvp_gguf_w_bool(w, "glm-dsa.attention.indexer.types", 0);
    }
    int ok = kvp_gguf_writer_write(w, path_for(name), 1, &e) == 0 &&
             kvp_model_from_gguf(path_for(name), &m, &e) == 0;
    kvp_gguf_writer_free(w);
    if (!ok)
        printf("  %s\n", e.msg);
    return m;
}

static void glm_defaults(void)
{
    kvp_model *m = glm_gguf("glm-202k", 202752, 0);
    int all = m != NULL;
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        all &= m->layers[i].indexer_head_dim == 128;
    CHECK("glm-dsa, no indexer.types, 202,752 context: every layer has an indexer", all);
    kvp_model_free(m);

    /* GLM_5_2_DEFAULT_INDEXER_TYPES: 1,1, then 1,0,0,0 repeated */
    m = glm_gguf("glm-1m", 1048576, 0);
    static const uint8_t want[10] = {1, 1, 1, 0, 0, 0, 1, 0, 0, 0};
    int pat = m != NULL;
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        pat &= (m->layers[i].indexer_head_dim != 0) == want[i];
    CHECK("glm-dsa, no indexer.types, 1M context: GLM-5.2's default pattern", pat);
    kvp_model_free(m);

    m = glm_gguf("glm-scalar", 1048576, 1);
    int none = m != NULL;
    for (uint32_t i = 0; m && i < m->n_layers; i++)
        none &= m->layers[i].indexer_head_dim == 0;
    CHECK("glm-dsa, indexer.types a scalar false: no layer has an indexer", none);
    kvp_llama_params p;
    kvp_llama_result r;
    kvp_error e;
    kvp_llama_defaults(&p);
    p.n_ctx = 4096;
    p.n_seq = 1;
    int rc = m ? kvp_llama(m, &p, &r, &e) : -1;
    CHECK("no indexer layer: llama.cpp's indexer cache has 0 layers and 0 bytes",
          rc == 0 && r.n_caches == 2 && r.caches[1].layers == 0 && r.caches[1].bytes == 0);
    kvp_model_free(m);
}

static void llama_rules(void)
{
    kvp_model *m = load("deepseek-v3.2");
    kvp_llama_params p;
    kvp_llama_result r;
    kvp_error e;
    if (!m) {
        CHECK("deepseek-v3.2 loads", 0);
        return;
    }
    kvp_llama_defaults(&p);
    p.n_ctx = 4096;
    p.n_seq = 1;
    snprintf(m->gguf_arch, sizeof m->gguf_arch, "deepseek2");
    int rc = kvp_llama(m, &p, &r, &e);
    CHECK("indexer layers in an architecture without an indexer cache are refused",
          rc != 0 && strstr(e.msg, "indexer") && strstr(e.msg, "deepseek2"));
    snprintf(m->gguf_arch, sizeof m->gguf_arch, "deepseek32");
    p.flash_attn = KVP_FA_OFF; /* MLA: no V anywhere, not even padded */
    rc = kvp_llama(m, &p, &r, &e);
    CHECK("-fa off: the indexer cache stays K only (the hparams copy is MLA)",
          rc == 0 && r.caches[1].v_bytes == 0 && r.caches[0].v_bytes == 0);
    kvp_model_free(m);
}

/* qwen4exp's PLE row: one layer, a linear-attention one (load_arch_hparams). */
static void llama_ple_rules(void)
{
    kvp_model *m = load("qwen3.8-flash-next.derived");
    kvp_llama_params p;
    kvp_llama_result r;
    kvp_error e;
    if (!m) {
        CHECK("qwen3.8-flash-next.derived loads", 0);
        return;
    }
    kvp_llama_defaults(&p);
    p.n_ctx = 4096;
    p.n_seq = 1;
    m->layers[5].ple_conv_state = m->layers[1].ple_conv_state;
    int rc = kvp_llama(m, &p, &r, &e);
    CHECK("two PLE layers: llama.cpp's qwen4exp supports one", rc != 0 && strstr(e.msg, "one"));
    m->layers[5].ple_conv_state = 0;
    m->layers[3].ple_conv_state = m->layers[1].ple_conv_state;
    m->layers[1].ple_conv_state = 0;
    rc = kvp_llama(m, &p, &r, &e);
    CHECK("a PLE attention layer: not a linear attention layer",
          rc != 0 && strstr(e.msg, "not a linear attention layer"));
    kvp_model_free(m);
}

/* A deepseek4 GGUF: refused in one line naming DeepSeek-V4's cache. */
static void dsv4_refused(void)
{
    gguf_writer *w = kvp_gguf_writer_new();
    kvp_model *m = NULL;
    kvp_error e;
    kvp_gguf_w_str(w, "general.architecture", "deepseek4");
    kvp_gguf_w_u32(w, "deepseek4.block_count", 4);
    kvp_gguf_w_u32(w, "deepseek4.embedding_length", 512);
    kvp_gguf_w_u32(w, "deepseek4.attention.head_count", 8);
    int written = kvp_gguf_writer_write(w, path_for("dsv4"), 1, &e) == 0;
    kvp_gguf_writer_free(w);
    CHECK("deepseek4 GGUF refused, naming DeepSeek-V4's cache",
          written && kvp_model_from_gguf(path_for("dsv4"), &m, &e) != 0 && m == NULL &&
              strstr(e.msg, "DeepSeek-V4's llama_kv_cache_dsv4") && !strchr(e.msg, '\n'));
}

static void vllm_rules(void)
{
    kvp_model *m = load("deepseek-v3.2");
    kvp_vllm_params p;
    kvp_vllm_result *r1 = malloc(sizeof *r1), *r8 = malloc(sizeof *r8);
    kvp_error e;
    if (!m || !r1 || !r8) {
        CHECK("deepseek-v3.2 loads", 0);
        free(r1);
        free(r8);
        kvp_model_free(m);
        return;
    }
    kvp_vllm_defaults(&p);
    p.gpu = "H100";
    p.max_model_len = 32768;
    p.kv_cache_memory = 40ull << 30;
    int rc = kvp_vllm(m, &p, r1, &e);
    p.tp = 8;
    rc |= kvp_vllm(m, &p, r8, &e);
    /* the latent and the indexer key are replicated on every TP rank */
    CHECK("-tp 8: the same 5,012,736-byte page on every rank",
          rc == 0 && r1->page_bytes == 5012736 && r8->page_bytes == 5012736);
    p.tp = 1;
    p.kv_cache_dtype = "fp8";
    p.gpu = "A100-80GB";
    rc = kvp_vllm(m, &p, r1, &e);
    int noted = 0;
    for (size_t i = 0; rc == 0 && i < r1->n_notes; i++)
        noted |= strstr(r1->notes[i], "Hopper or Blackwell") != NULL;
    CHECK("A100: block 64 and the fp8_ds_mla page, with a note that vLLM needs sm90+",
          rc == 0 && r1->block_size == 64 && r1->page_bytes == 61ull * 64 * (656 + 132) && noted);
    free(r1);
    free(r8);
    kvp_model_free(m);
}

static void theory_rules(void)
{
    kvp_model *m = load("glm-5");
    kvp_theory_params p;
    kvp_theory_result r;
    kvp_error e;
    kvp_theory_defaults(&p);
    p.type_k = p.type_v = KVP_Q8_0;
    int rc = m ? kvp_theory(m, &p, &r, &e) : -1;
    /* q8_0: the 576 latent in 612 B, the 128 key in 136 B */
    CHECK("theory q8_0: 78 x (612 + 136) B a token, 78 x 136 of it indexer keys",
          rc == 0 && r.per_token_bytes == 78 * (612 + 136) && r.indexer_per_token_bytes == 78 * 136);
    kvp_model_free(m);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/kvplan-indexed-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        CHECK("mkdtemp", 0);
        return 1;
    }
    round_trip("deepseek-v3.2");
    round_trip("glm-5");
    round_trip("glm-5.2.derived");
    round_trip("hy4-preview.derived");
    round_trip("minimax-m3.derived");
    round_trip("dots3-note-prev.derived");
    round_trip("qwen3.8-flash-next.derived");
    glm_defaults();
    llama_rules();
    llama_ple_rules();
    dsv4_refused();
    vllm_rules();
    theory_rules();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", dir);
    return check_failures != 0;
}
