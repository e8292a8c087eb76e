/* twin_arch.c - the llama.cpp architecture table: for each
 * general.architecture, how llama.cpp v0.5.0 lays out its layers (sliding
 * window, recurrent filter, MLA, shared KV) and which functions write its
 * metadata and tensors.  The core rows are here, the rest in the groups of
 * lib/llama/ (one file per family).  The GGUF reader and the twin writer
 * both read it, so a rule changes in one place.  Sources:
 * src/llama-arch.cpp (names), src/models/<arch>.cpp (load_arch_hparams,
 * load_arch_tensors). */
#include <stdio.h>
#include <string.h>

#include "arch.h"
#include "twin.h"

#define MAMBA KVP_LAYER_MAMBA
#define LINEAR KVP_LAYER_LINEAR
#define FULL KVP_LAYER_FULL

static const twin_arch arches[] = {
    /* gguf, family, swa, period, dense_first, n_swa default, recurrent, state,
     * recurrent kind, mla, embd_tied, kv_from_start, meta, tensors */
    {"llama", "llama", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     twin_tensors_llama, NULL, NULL},
    {"qwen2", "qwen2", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 1, -1, NULL,
     twin_tensors_qwen2, NULL, NULL},
    {"qwen2moe", "qwen2", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 1, -1, NULL,
     twin_tensors_qwen2moe, NULL, NULL},
    {"qwen3", "qwen2", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     twin_tensors_qwen3, NULL, NULL},
    {"qwen3moe", "qwen2", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     twin_tensors_qwen3moe, NULL, NULL},
    /* phi3 reads sliding_window and then switches SWA off */
    {"phi3", "phi3", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 1, -1, NULL,
     twin_tensors_phi3, NULL, NULL},
    {"gemma2", "gemma2", SWA_PERIOD, 2, 0, 4096, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     twin_tensors_gemma2, NULL, NULL},
    {"gemma3", "gemma3", SWA_PERIOD_IF_KEY, 6, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     twin_tensors_gemma3, NULL, NULL},
    {"gemma3n", "gemma3n", SWA_PERIOD, 5, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, 20, NULL,
     twin_tensors_gemma3n, NULL, NULL},
    {"cohere2", "cohere2", SWA_PERIOD, 4, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 1, -1,
     twin_meta_cohere2, twin_tensors_cohere2, NULL, NULL},
    {"cohere2moe", "cohere2", SWA_PERIOD, 4, 1, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1,
     twin_meta_cohere2moe, twin_tensors_cohere2moe, NULL, NULL}, /* writers: lib/llama/windows.c */
    {"gpt-oss", "gpt-oss", SWA_PERIOD, 2, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     twin_tensors_gpt_oss, NULL, NULL},
    {"llama4", "llama4", SWA_CHUNKED, 4, 0, 8192, RECR_NONE, STATE_NONE, FULL, 0, 0, -1,
     twin_meta_llama4, twin_tensors_llama4, NULL, NULL},
    {"olmo2", "dense", SWA_PERIOD_IF_KEY, 4, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 1, -1, NULL,
     twin_tensors_olmo2, NULL, NULL},
    {"glm4moe", "dense", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1, NULL,
     twin_tensors_glm4moe, NULL, NULL},
    {"minimax-m2", "dense", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 0, 0, -1,
     twin_meta_minimax_m2, twin_tensors_minimax_m2, NULL, NULL},
    {"deepseek2", "deepseek-mla", SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, FULL, 1, 0, -1,
     twin_meta_deepseek2, twin_tensors_deepseek2, NULL, NULL},
    {"qwen3next", "qwen3-gdn", SWA_NONE, 0, 0, 0, RECR_INTERVAL, STATE_SSM, LINEAR, 0, 0, -1,
     NULL, twin_tensors_qwen3next, NULL, NULL},
    {"qwen35", "qwen3-gdn", SWA_NONE, 0, 0, 0, RECR_INTERVAL, STATE_SSM, LINEAR, 0, 0, -1,
     twin_meta_qwen35, twin_tensors_qwen35, NULL, NULL},
    {"qwen35moe", "qwen3-gdn", SWA_NONE, 0, 0, 0, RECR_INTERVAL, STATE_SSM, LINEAR, 0, 0, -1,
     twin_meta_qwen35, twin_tensors_qwen35moe, NULL, NULL},
    /* Mamba1 and Jamba only support d_inner = 2 n_embd */
    {"mamba", "mamba", SWA_NONE, 0, 0, 0, RECR_ALL, STATE_SSM, MAMBA, 0, 1, -1, NULL,
     twin_tensors_mamba, NULL, NULL},
    {"mamba2", "mamba2", SWA_NONE, 0, 0, 0, RECR_ALL, STATE_SSM, MAMBA, 0, 0, -1, NULL,
     twin_tensors_mamba2, NULL, NULL},
    {"jamba", "jamba", SWA_NONE, 0, 0, 0, RECR_KV0, STATE_SSM, MAMBA, 0, 1, -1, NULL,
     twin_tensors_jamba, NULL, NULL},
    {"falcon-h1", "falcon-h1", SWA_NONE, 0, 0, 0, RECR_BOTH, STATE_SSM, MAMBA, 0, 0, -1, NULL,
     twin_tensors_falcon_h1, NULL, NULL},
    {"granitehybrid", "granitehybrid", SWA_NONE, 0, 0, 0, RECR_KV0, STATE_SSM, MAMBA, 0, 1, -1,
     NULL, twin_tensors_granitehybrid, NULL, NULL},
    {"nemotron_h", "nemotron-h", SWA_NONE, 0, 0, 0, RECR_KV0_FF0, STATE_SSM, MAMBA, 0, 0, -1,
     NULL, twin_tensors_nemotron_h, NULL, NULL},
    /* LFM2's conv layers: n_embd x (l_cache - 1) of state, no SSM state */
    {"lfm2", "lfm2", SWA_ATTN_IF_KEY, 0, 0, 0, RECR_KV0, STATE_SHORTCONV, LINEAR, 0, 1, -1,
     twin_meta_lfm2, twin_tensors_lfm2, NULL, NULL},
    /* rwkv6 and rwkv7 are in lib/llama/state.c with their twins */
};

#define N_ARCHES (sizeof arches / sizeof arches[0])

static const twin_arch_group core = {.arches = arches, .n = N_ARCHES};

/* Every group, core first. */
static const twin_arch_group *const groups[] = {
    &core, &twin_group_classic, &twin_group_dense, &twin_group_modern, &twin_group_windows,
    &twin_group_state, &twin_group_indexed, &twin_group_registry,
};
#define N_GROUPS (sizeof groups / sizeof groups[0])

const twin_arch *twin_arch_find(const char *gguf_name)
{
    for (size_t g = 0; gguf_name && g < N_GROUPS; g++)
        for (size_t i = 0; i < groups[g]->n; i++)
            if (strcmp(groups[g]->arches[i].gguf, gguf_name) == 0)
                return &groups[g]->arches[i];
    return NULL;
}

size_t kvp_llama_arch_count(void)
{
    size_t n = 0;
    for (size_t g = 0; g < N_GROUPS; g++)
        n += groups[g]->n;
    return n;
}

int kvp_llama_arch_at(size_t i, kvp_llama_arch_info *out)
{
    for (size_t g = 0; g < N_GROUPS; g++) {
        if (i < groups[g]->n) {
            const twin_arch *a = &groups[g]->arches[i];
            out->name = a->gguf;
            out->family = a->family ? a->family : "";
            out->twin = a->tensors != NULL;
            out->refused = NULL;
            for (const twin_refusal *f = groups[g]->refused; f && f->gguf; f++)
                if (strcmp(f->gguf, a->gguf) == 0)
                    out->refused = f->why;
            return 0;
        }
        i -= groups[g]->n;
    }
    return -1;
}

/* model_types that lib/arch.c does not map (architectures kvplan reads from
 * GGUF files before it reads their config.json). */
static const struct {
    const char *model_type, *gguf;
} extra_names[] = {
    {"gemma3n", "gemma3n"},          {"gemma3n_text", "gemma3n"},
    {"falcon_h1", "falcon-h1"},      {"granitemoehybrid", "granitehybrid"},
    {"lfm2", "lfm2"},                {"qwen2_moe", "qwen2moe"},
};

const char *twin_gguf_name(const kvp_model *m)
{
    if (m->gguf_arch[0])
        return m->gguf_arch;
    for (size_t i = 0; i < sizeof extra_names / sizeof extra_names[0]; i++)
        if (strcmp(extra_names[i].model_type, m->arch) == 0)
            return extra_names[i].gguf;
    const char *g = arch_gguf_name(m->arch, NULL);
    return g[0] ? g : NULL;
}

int twin_swa_by_period(uint32_t il, uint32_t period, int dense_first)
{
    if (period == 0)
        return 1;
    return dense_first ? il % period != 0 : il % period < period - 1;
}
