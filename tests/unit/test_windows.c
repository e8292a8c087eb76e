/* test_windows.c - the "windows" group (lib/hf/windows.c, lib/llama/windows.c)
 * through the C API: each test config goes config -> KV twin ->
 * kvp_model_from_gguf and reads back with the same layers, and the rules
 * where llama.cpp reads a GGUF differently from the config are checked on
 * twins built to show them: EXAONE 4 slides only at 64 layers, SmallThinker's
 * window is always 4096, Gemma 4 writes where sharing starts, a Gemma 4
 * drafter is refused, and per-layer head counts still need an architecture
 * whose tensors are sized per layer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gguf.h"
#include "kvplan.h"

#define TEST_DATA "tests/data/configs/windows" /* make check runs at the root */

static char dir[256];

static const char *path_for(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s.gguf", dir, name);
    return p;
}

static kvp_model *load(const char *file)
{
    char path[512];
    kvp_model *m = NULL;
    kvp_error e;
    snprintf(path, sizeof path, "%s/%s", TEST_DATA, file);
    if (kvp_model_from_config_file(path, &m, &e))
        printf("  %s\n", e.msg);
    return m;
}

static kvp_model *parse(const char *json)
{
    kvp_model *m = NULL;
    kvp_error e;
    if (kvp_model_from_config_text(json, strlen(json), "inline", &m, &e))
        printf("  %s\n", e.msg);
    return m;
}

/* m -> KV twin -> model, or NULL (reported) */
static kvp_model *twin_back(const kvp_model *m, const char *name)
{
    kvp_error e;
    kvp_model *back = NULL;
    if (kvp_twin_write(m, path_for(name), 1, 1, &e) ||
        kvp_model_from_gguf(path_for(name), &back, &e)) {
        printf("  %s: %s\n", name, e.msg);
        return NULL;
    }
    return back;
}

static int same_layers(const kvp_model *a, const kvp_model *b)
{
    if (a->n_layers != b->n_layers)
        return 0;
    for (uint32_t i = 0; i < a->n_layers; i++) {
        const kvp_layer *x = &a->layers[i], *y = &b->layers[i];
        if (x->kind != y->kind || x->n_kv_heads != y->n_kv_heads ||
            x->head_dim_k != y->head_dim_k || x->head_dim_v != y->head_dim_v ||
            x->window != y->window || x->shared_from != y->shared_from) {
            printf("  layer %u: %s kv %u hd %u/%u w %u from %d, read back %s kv %u hd %u/%u w %u "
                   "from %d\n", i, kvp_layer_kind_name(x->kind), x->n_kv_heads, x->head_dim_k,
                   x->head_dim_v, x->window, x->shared_from, kvp_layer_kind_name(y->kind),
                   y->n_kv_heads, y->head_dim_k, y->head_dim_v, y->window, y->shared_from);
            return 0;
        }
    }
    return 1;
}

static void round_trips(void)
{
    static const char *const files[] = {
        "olmo-3.1-32b-instruct.json", "exaone-4.0-32b.json", "gemma-4-31b-it.json",
        "gemma-4-e2b-it.json", "mimo-v2-flash.json", "trinity-nano-preview.json",
        "exaone-moe-synthetic.json", "muse-glimmer-synthetic.json", "smallthinker-synthetic.json",
        "laguna-synthetic.json", "plamo3-synthetic.json", "granite-swa-synthetic.json",
        "maple-synthetic.json", "step3p5-synthetic.json", "spark2-5-synthetic.json",
        "mellum-synthetic.json", "cohere2-moe-synthetic.json",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char label[160];
        kvp_model *m = load(files[i]), *back = m ? twin_back(m, files[i]) : NULL;
        snprintf(label, sizeof label, "%s: KV twin reads back with the config's layers", files[i]);
        CHECK(label, back && same_layers(m, back));
        kvp_model_free(back);
        kvp_model_free(m);
    }
}

/* EXAONE 4 at 30 layers with sliding layer_types: llama.cpp's exaone4 has
 * no window below 64 layers, so the twin reads back all full. */
static void exaone4_depth(void)
{
    char json[2048] = "{\"model_type\": \"exaone4\", \"num_hidden_layers\": 30, \"hidden_size\": 256,"
                      " \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 64,"
                      " \"sliding_window\": 128, \"vocab_size\": 256, \"intermediate_size\": 64,"
                      " \"layer_types\": [";
    for (int i = 0; i < 30; i++)
        strcat(json, (i + 1) % 4 ? "\"sliding_attention\"," : "\"full_attention\",");
    json[strlen(json) - 1] = 0;
    strcat(json, "]}");
    kvp_model *m = parse(json), *back = m ? twin_back(m, "exaone4-30") : NULL;
    CHECK("exaone4 at 30 layers: the config has 23 sliding layers",
          m && kvp_model_count_kind(m, KVP_LAYER_SLIDING) == 23);
    CHECK("exaone4 at 30 layers: llama.cpp reads every layer full",
          back && kvp_model_count_kind(back, KVP_LAYER_FULL) == 30);
    kvp_model_free(back);
    kvp_model_free(m);
}

/* SmallThinker: any window > 0 switches SWA on, at 4096 tokens. */
static void smallthinker_window(void)
{
    char json[2048] = "{\"model_type\": \"smallthinker\", \"num_hidden_layers\": 8, \"hidden_size\":"
                      " 256, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 64,"
                      " \"sliding_window_size\": 1024, \"vocab_size\": 256, \"moe_num_primary_experts\":"
                      " 4, \"moe_num_active_primary_experts\": 2, \"moe_ffn_hidden_size\": 64,"
                      " \"sliding_window_layout\": [0, 1, 1, 1, 0, 1, 1, 1]}";
    kvp_model *m = parse(json), *back = m ? twin_back(m, "smallthinker-1024") : NULL;
    CHECK("smallthinker: the config's window is 1024", m && m->layers[1].window == 1024);
    CHECK("smallthinker: llama.cpp slides the same 6 layers",
          back && kvp_model_count_kind(back, KVP_LAYER_SLIDING) == 6);
    CHECK("smallthinker: at its fixed 4096 tokens", back && back->layers[1].window == 4096);
    kvp_model_free(back);
    kvp_model_free(m);
}

/* Gemma 4 E2B's twin says where sharing starts: 35 - 20 = 15. */
static void gemma4_shared_key(void)
{
    kvp_model *m = load("gemma-4-e2b-it.json");
    gguf_file *f = NULL;
    kvp_error e;
    uint64_t v = 0;
    if (m && !kvp_twin_write(m, path_for("gemma4-e2b"), 1, 1, &e))
        kvp_gguf_read(path_for("gemma4-e2b"), &f, &e);
    CHECK("gemma4: the twin writes attention.shared_kv_layers = 20",
          f && !kvp_gguf_get_uint(f, "gemma4.attention.shared_kv_layers", &v) && v == 20);
    CHECK("gemma4: and key_length 512, key_length_swa 256",
          f && !kvp_gguf_get_uint(f, "gemma4.attention.key_length", &v) && v == 512 &&
              !kvp_gguf_get_uint(f, "gemma4.attention.key_length_swa", &v) && v == 256);
    kvp_gguf_free(f);
    kvp_model_free(m);
}

/* A Gemma 4 drafter (every layer nextn) is refused in one line. */
static void gemma4_assistant(void)
{
    gguf_writer *w = kvp_gguf_writer_new();
    kvp_error e;
    kvp_model *m = NULL;
    kvp_gguf_w_str(w, "general.architecture", "gemma4-assistant");
    kvp_gguf_w_u32(w, "gemma4-assistant.block_count", 4);
    kvp_gguf_w_u32(w, "gemma4-assistant.nextn_predict_layers", 4);
    kvp_gguf_w_u32(w, "gemma4-assistant.embedding_length", 256);
    int rc = kvp_gguf_writer_write(w, path_for("gemma4-assistant"), 1, &e);
    kvp_gguf_writer_free(w);
    rc = rc ? rc : kvp_model_from_gguf(path_for("gemma4-assistant"), &m, &e);
    CHECK("gemma4-assistant: refused", rc != 0 && !m);
    CHECK("gemma4-assistant: says the cache is the target model's",
          rc && strstr(e.msg, "target model's KV cache") && !strchr(e.msg, '\n'));
    kvp_model_free(m);
}

/* A llama model with per-layer KV heads is still refused: its tensors
 * take layer 0's counts. */
static void per_layer_heads_refused(void)
{
    const char *json = "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 256,"
                       " \"num_attention_heads\": 4, \"num_key_value_heads\": [2, 4],"
                       " \"vocab_size\": 256, \"intermediate_size\": 64}";
    kvp_model *m = parse(json);
    kvp_error e;
    int rc = m ? kvp_twin_write(m, path_for("llama-per-layer"), 1, 1, &e) : 0;
    CHECK("llama with per-layer KV heads: twin refused",
          m && rc && strstr(e.msg, "different head counts (layer 1)"));
    kvp_model_free(m);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kvplan-test-windows-%d", (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd))
        return 1;
    round_trips();
    exaone4_depth();
    smallthinker_window();
    gemma4_shared_key();
    gemma4_assistant();
    per_layer_heads_refused();
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd))
        return 1;
    return check_failures ? 1 : 0;
}
