/* test_modern.c - the "modern" architecture group (lib/hf/modern.c,
 * lib/llama/modern.c): each test config names the llama.cpp architecture
 * its converter writes, and a --kv-only shape twin of it reads back, through
 * the GGUF reader, as the same layers (kinds, KV heads, head sizes), so the
 * two sides of the group agree.  The real llama.cpp checks the twins
 * themselves (tests/oracle/archs.d/modern.list). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gguf.h"
#include "kvplan.h"

#define DIR "tests/data/configs/modern/" /* make check runs at the root */

static const struct {
    const char *file, *gguf;
} cases[] = {
    {"qwen2.5-vl-7b-instruct.json", "qwen2vl"},
    {"olmocr-2-7b-1025.json", "qwen2vl"},
    {"qwen2-vl-7b-instruct.derived.json", "qwen2vl"},
    {"qwen3-vl-8b-instruct.derived.json", "qwen3vl"},
    {"qwen3-vl-235b-a22b-thinking.json", "qwen3vlmoe"},
    {"devstral-small-2-24b-instruct.json", "mistral3"},
    {"devstral-2-123b-instruct.json", "mistral3"},
    {"mistral-small-3.x-24b.json", "mistral3"}, /* text model_type "mistral" */
    {"mistral-small-4-119b.derived.json", "mistral4"},
    {"ernie-4.5-0.3b.derived.json", "ernie4_5"},
    {"ernie-4.5-21b-a3b.derived.json", "ernie4_5-moe"},
    {"paddleocr-vl.derived.json", "paddleocr"},
    {"hunyuan-dense-defaults.derived.json", "hunyuan-dense"},
    {"hunyuan-a13b.derived.json", "hunyuan-moe"},
    {"hunyuan-vl-defaults.derived.json", "hunyuan_vl"},
    {"hy3-preview.derived.json", "hy_v3"},
    {"dots.llm1.derived.json", "dots1"},
    {"ling-lite.standin.json", "bailingmoe"},
    {"ling-mini-2.0.standin.json", "bailingmoe2"}, /* model_type bailing_moe, the V2 class */
    {"grovemoe-inst.standin.json", "grovemoe"},
    {"deepseek-ocr.trimmed.json", "deepseek2-ocr"},
    {"cogvlm-chat.standin.json", "cogvlm"},
    {"hrm-text-1b.derived.json", "hrm_text"},
};

static int same_layers(const kvp_model *a, const kvp_model *b)
{
    if (a->n_layers != b->n_layers)
        return 0;
    for (uint32_t i = 0; i < a->n_layers; i++) {
        const kvp_layer *x = &a->layers[i], *y = &b->layers[i];
        if (x->kind != y->kind || x->n_kv_heads != y->n_kv_heads ||
            x->head_dim_k != y->head_dim_k || x->head_dim_v != y->head_dim_v ||
            x->window != y->window)
            return 0;
    }
    return 1;
}

static void round_trip(const char *file, const char *gguf)
{
    char path[256], name[256], tmp[] = "/tmp/kvplan-test-modern-XXXXXX";
    kvp_model *m = NULL, *g = NULL;
    kvp_error e;
    snprintf(path, sizeof path, DIR "%s", file);
    int fd = mkstemp(tmp);
    if (fd >= 0)
        close(fd);
    int ok = kvp_model_from_config_file(path, &m, &e) == 0;
    snprintf(name, sizeof name, "%s reads", file);
    CHECK(name, ok);
    if (!ok) {
        printf("  %s\n", e.msg);
        unlink(tmp);
        return;
    }
    snprintf(name, sizeof name, "%s is llama.cpp's %s", file, gguf);
    CHECK(name, strcmp(m->gguf_arch, gguf) == 0);
    ok = fd >= 0 && kvp_twin_write(m, tmp, 1, 1, &e) == 0 && kvp_model_from_gguf(tmp, &g, &e) == 0;
    snprintf(name, sizeof name, "%s twin reads back", file);
    CHECK(name, ok);
    if (ok) {
        snprintf(name, sizeof name, "%s twin has the same layers", file);
        CHECK(name, same_layers(m, g) && strcmp(g->gguf_arch, gguf) == 0);
    } else {
        printf("  %s\n", e.msg);
    }
    kvp_model_free(g);
    kvp_model_free(m);
    unlink(tmp);
}

int main(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        round_trip(cases[i].file, cases[i].gguf);

    /* Hunyuan-A13B lists its MoE sizes per layer: layer 0's values */
    kvp_model *m = NULL;
    kvp_error e;
    int ok = kvp_model_from_config_file(DIR "hunyuan-a13b.derived.json", &m, &e) == 0;
    CHECK("hunyuan per-layer lists: top-k 8, experts of 3072, 1 shared",
          ok && m->n_expert == 64 && m->n_expert_used == 8 && m->n_ff_exp == 3072 &&
              m->n_expert_shared == 1);
    kvp_model_free(m);

    /* ERNIE spells its experts moe_*: read through the row's aliases */
    m = NULL;
    ok = kvp_model_from_config_file(DIR "ernie-4.5-21b-a3b.derived.json", &m, &e) == 0;
    CHECK("ernie moe_* keys: 64 experts, 6 active, 2 shared, dense layer 0",
          ok && m->n_expert == 64 && m->n_expert_used == 6 && m->n_expert_shared == 2 &&
              m->n_layer_dense_lead == 1);
    kvp_model_free(m);

    /* Hy3's mlp_layer_types: one dense layer first */
    m = NULL;
    ok = kvp_model_from_config_file(DIR "hy3-preview.derived.json", &m, &e) == 0;
    CHECK("hy_v3 mlp_layer_types: 1 leading dense layer", ok && m->n_layer_dense_lead == 1);
    kvp_model_free(m);

    /* vLLM serves none of GroveMoE, CogVLM, HRM-Text */
    m = NULL;
    ok = kvp_model_from_config_file(DIR "hrm-text-1b.derived.json", &m, &e) == 0;
    CHECK("hrm_text: 128 cache slots, vLLM refuses",
          ok && m->n_layers == 128 && strstr(m->vllm_refusal, "HrmTextForCausalLM") != NULL);
    kvp_model_free(m);

    /* T5 is refused from its GGUF as from its config, in one line */
    char tmp[] = "/tmp/kvplan-test-modern-t5-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd >= 0)
        close(fd);
    gguf_writer *w = kvp_gguf_writer_new();
    kvp_gguf_w_str(w, "general.architecture", "t5");
    kvp_gguf_w_u32(w, "t5.context_length", 512);
    kvp_gguf_w_u32(w, "t5.embedding_length", 512);
    kvp_gguf_w_u32(w, "t5.block_count", 6);
    kvp_gguf_w_u32(w, "t5.attention.head_count", 8);
    kvp_gguf_w_u32(w, "t5.attention.key_length", 64);
    kvp_gguf_w_u32(w, "t5.attention.value_length", 64);
    m = NULL;
    ok = fd >= 0 && kvp_gguf_writer_write(w, tmp, 1, &e) == 0 &&
         kvp_model_from_gguf(tmp, &m, &e) != 0 && strstr(e.msg, "encoder-decoder") != NULL;
    CHECK("t5 GGUF refused: encoder-decoder", ok);
    kvp_gguf_writer_free(w);
    kvp_model_free(m);
    unlink(tmp);
    return check_failures ? 1 : 0;
}
