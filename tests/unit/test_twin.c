/* test_twin.c - shape twins and the GGUF model reader, through the C API.
 *
 * Every catalog model goes config -> KV twin -> kvp_model_from_gguf, and the
 * per-layer model read back must be the config's one in every field that
 * sizes the cache (kinds, KV heads, head sizes, window, MLA, state shape).
 * State dtypes are not compared: a GGUF says f32 because llama.cpp keeps the
 * state in f32, whatever the checkpoint's dtype.  Architectures without a
 * catalog config (gemma3n, cohere2, lfm2, falcon-h1, granitehybrid,
 * qwen35moe) go the same way from a model built here.  A full twin of
 * Qwen3-8B has the real model's F16/F32 tensor bytes as its apparent size
 * and almost nothing on disk.  TWIN_KEEP_DIR=dir keeps the written twins
 * there, with full twins beside the KV ones, to load into the real
 * llama.cpp. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* The fields that size the cache or the state; dtypes excluded (above). */
static int same_layer(const kvp_layer *a, const kvp_layer *b)
{
    return a->kind == b->kind && a->n_kv_heads == b->n_kv_heads &&
           a->head_dim_k == b->head_dim_k && a->head_dim_v == b->head_dim_v &&
           a->window == b->window && a->mla_heads == b->mla_heads &&
           a->mla_k_head_dim == b->mla_k_head_dim && a->mla_v_head_dim == b->mla_v_head_dim &&
           a->d_conv == b->d_conv && a->d_inner == b->d_inner && a->d_state == b->d_state &&
           a->n_group == b->n_group && a->shared_from == b->shared_from;
}

/* Empty when equal, else the first difference. */
static const char *diff(const kvp_model *a, const kvp_model *b)
{
    static char why[256];
    if (a->n_layers != b->n_layers) {
        snprintf(why, sizeof why, "%u layers, read back %u", a->n_layers, b->n_layers);
        return why;
    }
    for (uint32_t i = 0; i < a->n_layers; i++) {
        const kvp_layer *x = &a->layers[i], *y = &b->layers[i];
        if (!same_layer(x, y)) {
            snprintf(why, sizeof why,
                     "layer %u: %s kv %u hd %u/%u w %u inner %llu, read back %s kv %u hd %u/%u "
                     "w %u inner %llu", i, kvp_layer_kind_name(x->kind), x->n_kv_heads,
                     x->head_dim_k, x->head_dim_v, x->window, (unsigned long long)x->d_inner,
                     kvp_layer_kind_name(y->kind), y->n_kv_heads, y->head_dim_k, y->head_dim_v,
                     y->window, (unsigned long long)y->d_inner);
            return why;
        }
    }
    return "";
}

/* m -> KV twin -> model; prints the check. */
static void round_trip(const kvp_model *m, const char *name)
{
    char label[160];
    kvp_error e;
    kvp_model *back = NULL;
    const char *p = path_for(name);
    int rc = kvp_twin_write(m, p, 1, 1, &e);
    snprintf(label, sizeof label, "%s: KV twin written", name);
    CHECK(label, rc == 0);
    if (rc) {
        printf("  %s\n", e.msg);
        return;
    }
    rc = kvp_model_from_gguf(p, &back, &e);
    snprintf(label, sizeof label, "%s: twin reads back", name);
    CHECK(label, rc == 0);
    if (rc) {
        printf("  %s\n", e.msg);
        return;
    }
    const char *d = diff(m, back);
    snprintf(label, sizeof label, "%s: twin's layers == the model's", name);
    CHECK(label, d[0] == 0);
    if (d[0])
        printf("  %s\n", d);
    kvp_model_free(back);
    if (getenv("TWIN_KEEP_DIR")) { /* full twins too, for the real llama.cpp */
        char full[160];
        snprintf(full, sizeof full, "%s-full", name);
        if (kvp_twin_write(m, path_for(full), 0, 1, &e))
            printf("note: no full twin of %s: %s\n", name, e.msg);
    }
}

static void catalog_round_trips(void)
{
    for (size_t i = 0; i < kvp_catalog_count(); i++) {
        const char *name = kvp_catalog_at(i)->name;
        kvp_model *m;
        kvp_error e;
        if (kvp_model_load(name, &m, &e)) {
            CHECK(name, 0);
            continue;
        }
        if (kvp_model_count_kind(m, KVP_LAYER_CROSS)) { /* Mllama: no llama.cpp architecture */
            char label[160];
            snprintf(label, sizeof label, "%s: no twin, llama.cpp has no Mllama", name);
            CHECK(label, kvp_twin_write(m, path_for(name), 1, 1, &e) != 0 &&
                             strstr(e.msg, "no architecture"));
            kvp_model_free(m);
            continue;
        }
        round_trip(m, name);
        kvp_model_free(m);
    }
}

/* ---- models of architectures the catalog has no config for ------------------ */

static kvp_model *new_model(const char *gguf_arch, uint32_t n_layers, uint64_t hidden,
                            uint64_t vocab, uint64_t ff)
{
    kvp_model *m = calloc(1, sizeof *m);
    m->layers = calloc(n_layers, sizeof *m->layers);
    m->n_layers = n_layers;
    snprintf(m->name, sizeof m->name, "test-%s", gguf_arch);
    snprintf(m->arch, sizeof m->arch, "%s", gguf_arch);
    snprintf(m->gguf_arch, sizeof m->gguf_arch, "%s", gguf_arch);
    m->hidden_size = hidden;
    m->n_vocab = vocab;
    m->n_ff = ff;
    m->max_position = 32768;
    m->dtype = KVP_BF16;
    for (uint32_t i = 0; i < n_layers; i++)
        m->layers[i].shared_from = -1;
    return m;
}

static void attn(kvp_layer *L, kvp_layer_kind kind, uint32_t heads, uint32_t kv, uint32_t hd,
                 uint32_t window)
{
    L->kind = kind;
    L->n_head = heads;
    L->n_kv_heads = kv;
    L->head_dim_k = L->head_dim_v = hd;
    L->window = kind == KVP_LAYER_SLIDING ? window : 0;
}

static void state(kvp_layer *L, kvp_layer_kind kind, uint32_t conv, uint64_t inner,
                  uint32_t dstate, uint32_t groups)
{
    L->kind = kind;
    L->d_conv = conv;
    L->d_inner = inner;
    L->d_state = dstate;
    L->n_group = groups;
    L->conv_dtype = L->ssm_dtype = KVP_F32;
}

/* Gemma 3n E2B: 30 layers, every 5th full, layers >= 20 reuse 18 (SWA) or 19 */
static kvp_model *gemma3n(void)
{
    kvp_model *m = new_model("gemma3n", 30, 2048, 262144, 8192);
    for (uint32_t i = 0; i < 30; i++) {
        int swa = i % 5 < 4;
        attn(&m->layers[i], swa ? KVP_LAYER_SLIDING : KVP_LAYER_FULL, 8, 2, 256, 512);
        if (i >= 20) {
            m->layers[i].kind = KVP_LAYER_SHARED;
            m->layers[i].shared_from = swa ? 18 : 19;
        }
    }
    return m;
}

/* Command R7B: every 4th layer full, window 4096 */
static kvp_model *cohere2(void)
{
    kvp_model *m = new_model("cohere2", 32, 4096, 256000, 14336);
    for (uint32_t i = 0; i < 32; i++)
        attn(&m->layers[i], (i + 1) % 4 ? KVP_LAYER_SLIDING : KVP_LAYER_FULL, 32, 8, 128, 4096);
    return m;
}

/* LFM2-1.2B: short convs (L_cache 3) and six attention layers */
static kvp_model *lfm2(void)
{
    static const int attn_at[] = {2, 5, 8, 10, 12, 14};
    kvp_model *m = new_model("lfm2", 16, 2048, 65536, 8192);
    for (uint32_t i = 0; i < 16; i++)
        state(&m->layers[i], KVP_LAYER_LINEAR, 3, 2048, 0, 0);
    for (size_t j = 0; j < sizeof attn_at / sizeof attn_at[0]; j++) {
        kvp_layer *L = &m->layers[attn_at[j]];
        memset(L, 0, sizeof *L);
        L->shared_from = -1;
        attn(L, KVP_LAYER_FULL, 32, 8, 64, 0);
    }
    return m;
}

/* Falcon-H1 style: attention and a Mamba2 mixer in every layer */
static kvp_model *falcon_h1(void)
{
    kvp_model *m = new_model("falcon-h1", 36, 1024, 32784, 2048);
    for (uint32_t i = 0; i < 36; i++) {
        state(&m->layers[i], KVP_LAYER_FULL, 4, 1536, 128, 1);
        attn(&m->layers[i], KVP_LAYER_FULL, 8, 2, 64, 0);
    }
    return m;
}

/* Granite 4.0-H-Tiny style: Mamba2 with four attention layers, MoE FFN */
static kvp_model *granitehybrid(void)
{
    kvp_model *m = new_model("granitehybrid", 40, 1536, 100352, 512);
    m->n_expert = 64;
    m->n_expert_used = 6;
    m->n_ff_shexp = 1024;
    for (uint32_t i = 0; i < 40; i++) {
        if (i % 10 == 5)
            attn(&m->layers[i], KVP_LAYER_FULL, 12, 4, 128, 0);
        else
            state(&m->layers[i], KVP_LAYER_MAMBA, 4, 3072, 128, 1);
    }
    return m;
}

/* Qwen3.5-35B-A3B style: Gated DeltaNet, every 4th layer full, MoE */
static kvp_model *qwen35moe(void)
{
    kvp_model *m = new_model("qwen35moe", 40, 2048, 248320, 512);
    m->n_expert = 256;
    m->n_expert_used = 8;
    m->n_ff_exp = 512;
    m->n_ff_shexp = 512;
    m->n_rot = 64;
    for (uint32_t i = 0; i < 40; i++) {
        if ((i + 1) % 4 == 0)
            attn(&m->layers[i], KVP_LAYER_FULL, 16, 2, 256, 0);
        else
            state(&m->layers[i], KVP_LAYER_LINEAR, 4, 32 * 128, 128, 16);
    }
    return m;
}

static void built_round_trips(void)
{
    static const struct {
        const char *name;
        kvp_model *(*make)(void);
    } built[] = {{"gemma3n", gemma3n},         {"cohere2", cohere2},
                 {"lfm2", lfm2},               {"falcon-h1", falcon_h1},
                 {"granitehybrid", granitehybrid}, {"qwen35moe", qwen35moe}};
    for (size_t i = 0; i < sizeof built / sizeof built[0]; i++) {
        kvp_model *m = built[i].make();
        round_trip(m, built[i].name);
        kvp_model_free(m);
    }
}

/* ---- a full twin: real sizes, a hole on disk -------------------------------- */

static void full_qwen3_8b(void)
{
    kvp_model *m;
    kvp_error e;
    struct stat st;
    gguf_file *f;
    const char *p = path_for("qwen3-8b-full");
    if (kvp_model_load("qwen3-8b", &m, &e) || kvp_twin_write(m, p, 0, 1, &e)) {
        CHECK("qwen3-8b full twin written", 0);
        return;
    }
    kvp_model_free(m);
    /* Qwen3-8B: 151,936-token embedding and output, 36 layers of q/o 4096x4096,
     * k/v 4096x1024, three 4096x12288 FFN matrices (F16), norms in F32 */
    uint64_t mats = 2ull * 4096 * 151936 +
                    36ull * (2ull * 4096 * 4096 + 2ull * 4096 * 1024 + 3ull * 4096 * 12288);
    uint64_t norms = 4096 + 36ull * (2 * 4096 + 2 * 128);
    uint64_t want = mats * 2 + norms * 4, sum = 0;
    CHECK("qwen3-8b full twin reads", kvp_gguf_read(p, &f, &e) == 0);
    for (uint64_t i = 0; i < f->n_tensors; i++)
        sum += f->tensors[i].nbytes;
    CHECK("qwen3-8b full twin: 399 tensors", f->n_tensors == 3 + 36 * 11);
    CHECK("qwen3-8b full twin: tensor bytes = the model's F16/F32 bytes", sum == want);
    CHECK("qwen3-8b full twin: stat", stat(p, &st) == 0);
    CHECK("qwen3-8b full twin: apparent size = header + tensor bytes",
          (uint64_t)st.st_size == f->data_offset + want);
    CHECK("qwen3-8b full twin: under 1 MiB on disk", (uint64_t)st.st_blocks * 512 < (1u << 20));
    kvp_gguf_free(f);
}

/* ---- errors --------------------------------------------------------------------- */

static void errors(void)
{
    kvp_model *m;
    kvp_error e;
    struct stat a, b;
    const char *p = path_for("qwen3-8b");
    /* an existing file is refused and left alone */
    CHECK("existing twin present", stat(p, &a) == 0);
    CHECK("kvp_model_load qwen3-8b", kvp_model_load("qwen3-8b", &m, &e) == 0);
    CHECK("existing path refused without force", kvp_twin_write(m, p, 0, 0, &e) != 0);
    CHECK("refusal names the path", strstr(e.msg, p) != NULL);
    CHECK("refused file unchanged", stat(p, &b) == 0 && a.st_size == b.st_size &&
                                        a.st_mtime == b.st_mtime && a.st_ino == b.st_ino);
    /* two windows cannot be one llama.cpp n_swa */
    kvp_model *c = cohere2();
    c->layers[1].window = 1024;
    CHECK("two windows refused", kvp_twin_write(c, path_for("bad"), 1, 1, &e) != 0);
    CHECK("two windows: message says why", strstr(e.msg, "windows") != NULL);
    kvp_model_free(c);
    /* an architecture llama.cpp does not have */
    snprintf(m->arch, sizeof m->arch, "frobnicator");
    m->gguf_arch[0] = 0;
    CHECK("unknown model_type refused", kvp_twin_write(m, path_for("bad"), 1, 1, &e) != 0);
    CHECK("unknown model_type named", strstr(e.msg, "frobnicator") != NULL);
    kvp_model_free(m);
    /* a GGUF of an architecture kvplan does not know */
    const char *unknown = "tests/data/twin/unknown-arch.gguf"; /* make test runs at the root */
    CHECK("unknown GGUF architecture refused", kvp_model_from_gguf(unknown, &m, &e) != 0);
    CHECK("unknown GGUF architecture named", strstr(e.msg, "frobnicator") != NULL);
}

/* GGUF metadata the reader must refuse, each with one line naming the key. */
static void reader_errors(void)
{
    static const struct {
        const char *name, *want;
        int drop_blocks, kv_len, nextn, mamba;
    } cases[] = {
        {"no block_count", "missing required key llama.block_count", 1, 0, 0, 0},
        {"short head_count_kv array", "llama.attention.head_count_kv has 3 entries for 4 layers",
         0, 3, 0, 0},
        {"every layer nextn", "leaves no trunk", 0, 0, 4, 0},
        {"mamba without ssm.inner_size", "missing required key mamba.ssm.inner_size", 0, 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *arch = cases[i].mamba ? "mamba" : "llama";
        char k[64], label[160];
        kvp_model *m = NULL;
        kvp_error e;
        gguf_writer *w = kvp_gguf_writer_new();
        kvp_gguf_w_str(w, "general.architecture", arch);
        if (!cases[i].drop_blocks) {
            snprintf(k, sizeof k, "%s.block_count", arch);
            kvp_gguf_w_u32(w, k, 4);
        }
        snprintf(k, sizeof k, "%s.attention.head_count", arch);
        kvp_gguf_w_u32(w, k, cases[i].mamba ? 0 : 8);
        if (cases[i].kv_len) {
            uint32_t kv[3] = {2, 2, 2};
            snprintf(k, sizeof k, "%s.attention.head_count_kv", arch);
            kvp_gguf_w_arr_u32(w, k, kv, cases[i].kv_len);
        }
        if (cases[i].nextn) {
            snprintf(k, sizeof k, "%s.nextn_predict_layers", arch);
            kvp_gguf_w_u32(w, k, cases[i].nextn);
        }
        if (cases[i].mamba) {
            kvp_gguf_w_u32(w, "mamba.ssm.conv_kernel", 4);
            kvp_gguf_w_u32(w, "mamba.ssm.state_size", 16);
        }
        const char *p = path_for("hostile");
        int written = kvp_gguf_writer_write(w, p, 1, &e) == 0;
        kvp_gguf_writer_free(w);
        snprintf(label, sizeof label, "reader refuses %s", cases[i].name);
        CHECK(label, written && kvp_model_from_gguf(p, &m, &e) != 0 && m == NULL);
        snprintf(label, sizeof label, "reader names the problem: %s", cases[i].name);
        CHECK(label, strstr(e.msg, cases[i].want) != NULL && strstr(e.msg, p) != NULL);
    }
}

/* MTP layers are not trunk layers; head size defaults to n_embd / heads. */
static void reader_nextn(void)
{
    kvp_model *m = NULL;
    kvp_error e;
    gguf_writer *w = kvp_gguf_writer_new();
    kvp_gguf_w_str(w, "general.architecture", "glm4moe");
    kvp_gguf_w_u32(w, "glm4moe.block_count", 5);
    kvp_gguf_w_u32(w, "glm4moe.nextn_predict_layers", 1);
    kvp_gguf_w_u32(w, "glm4moe.embedding_length", 512);
    kvp_gguf_w_u32(w, "glm4moe.attention.head_count", 8);
    kvp_gguf_w_u32(w, "glm4moe.attention.head_count_kv", 2);
    const char *p = path_for("nextn");
    int ok = kvp_gguf_writer_write(w, p, 1, &e) == 0 && kvp_model_from_gguf(p, &m, &e) == 0;
    kvp_gguf_writer_free(w);
    CHECK("nextn GGUF reads", ok);
    CHECK("nextn layers left out of the trunk", ok && m->n_layers == 4 && m->n_layer_nextn == 1);
    CHECK("head size = embedding_length / head_count", ok && m->layers[3].head_dim_k == 64 &&
                                                           m->layers[3].n_kv_heads == 2);
    kvp_model_free(m);
}

static void cleanup(void)
{
    if (getenv("TWIN_KEEP_DIR"))
        return;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", dir);
}

int main(void)
{
    const char *keep = getenv("TWIN_KEEP_DIR");
    if (keep) {
        snprintf(dir, sizeof dir, "%s", keep);
        mkdir(dir, 0755);
    } else {
        snprintf(dir, sizeof dir, "%s/kvplan-twin-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
                                                                              : "/tmp");
        if (!mkdtemp(dir)) {
            CHECK("mkdtemp", 0);
            return 1;
        }
    }
    catalog_round_trips();
    built_round_trips();
    full_qwen3_8b();
    errors();
    reader_errors();
    reader_nextn();
    cleanup();
    return check_failures != 0;
}
