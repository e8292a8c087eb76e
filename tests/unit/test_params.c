/* test_params.c - kvp_model_param_count against published parameter counts.
 *
 * Every golden number below is a public figure, not kvplan's own
 * arithmetic: a Hub checkpoint's model.safetensors.index.json
 * metadata.total_size (bytes; / 2 for a bf16 checkpoint), the Hub's
 * safetensors parameter total, or llama.cpp's n_params /
 * general.parameter_count for a GGUF of the text model.  Each was found
 * quoted in public repositories (searched as the exact integer).  Where only
 * a rounded figure is published, the count must fall inside its rounding.
 * The count covers the language model only: no vision tower, no MTP layers,
 * no quantization scales (see lib/params.c). */
#include <string.h>

#include "check.h"
#include "kvplan.h"

static uint64_t count(const char *name)
{
    kvp_model *m = NULL;
    kvp_error e;
    if (kvp_model_load(name, &m, &e))
        return UINT64_MAX; /* never a golden value: the check fails and says so */
    uint64_t n = kvp_model_param_count(m);
    kvp_model_free(m);
    return n;
}

static uint64_t count_text(const char *json)
{
    kvp_model *m = NULL;
    kvp_error e;
    if (kvp_model_from_config_text(json, strlen(json), "inline", &m, &e))
        return UINT64_MAX;
    uint64_t n = kvp_model_param_count(m);
    kvp_model_free(m);
    return n;
}

#define EXACT(name, golden) CHECK(name " = " #golden, count(name) == golden##ull)

/* Published as "<x>B": [x - half a unit, x + half a unit) of the last digit. */
#define ROUNDED(name, lo, hi, label)                                        \
    do {                                                                    \
        uint64_t n_ = count(name);                                          \
        CHECK(name " within " label, n_ >= (uint64_t)(lo) && n_ < (uint64_t)(hi)); \
    } while (0)

static void dense(void)
{
    /* index total_size 16,381,470,720 B (bf16) */
    EXACT("qwen3-8b", 8190735360);
    /* index total_size 65,524,246,528 B; card "32.8B" */
    EXACT("qwen3-32b", 32762123264);
    /* index total_size 15,231,233,024 B; card "7.61B"; q/k/v biases */
    EXACT("qwen2.5-7b-instruct", 7615616512);
    /* index total_size 16,060,522,496 B; base and instruct share it */
    EXACT("llama-3.1-8b", 8030261248);
    EXACT("llama-3.1-8b-instruct", 8030261248);
    /* index total_size 141,107,412,992 B */
    EXACT("llama-3.1-70b", 70553706496);
    /* Hub safetensors totals; both tie the output head to the embedding */
    EXACT("llama-3.2-1b-instruct", 1235814400);
    EXACT("llama-3.2-3b-instruct", 3212749824);
    /* index total_size 14,496,047,104 B */
    EXACT("mistral-7b-v0.3", 7248023552);
    /* GGUF general.parameter_count (microsoft/phi-4) */
    EXACT("phi-4", 14659507200);
    /* Hub safetensors total (F32 checkpoint); q/k norms over all heads */
    EXACT("olmo-2-1124-7b", 7298617344);
}

static void gemma(void)
{
    /* index total_size 18,483,411,968 B; four norms a layer, tied head
     * (tie_word_embeddings absent: Gemma2Config's default, True) */
    EXACT("gemma-2-9b", 9241705984);
    /* llama.cpp n_params of the text GGUF; the Hub's 4,300,079,472 adds the
     * SigLIP tower and projector.  The hub file omits vocab_size and
     * tie_word_embeddings: Gemma3TextConfig's defaults (262208, True). */
    EXACT("gemma-3-4b-it", 3880263168);
    EXACT("gemma-3-4b-it-effective", 3880263168);
    /* llama.cpp n_params of the text GGUF; Hub total 27,432,406,640 */
    EXACT("gemma-3-27b-it", 27009346304);
}

static void moe(void)
{
    /* Hub safetensors total (Mixtral-8x7B, "46.7B") */
    EXACT("mixtral-8x7b-v0.1", 46702792704);
    /* index total_size 61,064,245,248 B ("30.5B") */
    EXACT("qwen3-30b-a3b", 30532122624);
    /* index total_size 470,187,269,120 B */
    EXACT("qwen3-235b-a22b", 235093634560);
    /* GGUF general.parameter_count ("20.9B" in OpenAI's model card).  The
     * Hub's 21,511,953,984 also counts the MXFP4 block scales: one per 32
     * expert weights, 597,196,800 of them. */
    EXACT("gpt-oss-20b", 20914757184);
    /* GGUF general.parameter_count ("116.83B" in the model card) */
    EXACT("gpt-oss-120b", 116829156672);
    /* llama.cpp n_params of MiniMax-M2 / M2.1 / M2.7, which M2.5 shares
     * shape for shape; Hub "229B".  q/k norms over all heads, router bias. */
    EXACT("minimax-m2.5", 228689764864);
    /* Hub total 108,641,793,536 ("109B") holds the vision tower and
     * projector too; the text model is the total less those 871,932,416.
     * The total matching to the parameter is the published check. */
    EXACT("llama-4-scout-17b-16e-instruct", 107769861120);
}

static void mla(void)
{
    /* index total_size 31,412,968,448 B; "15.7B" (q_lora_rank null) */
    EXACT("deepseek-v2-lite", 15706484224);
    /* "671B + 14B MTP" (DeepSeek-V3 README); 671,026,419,200 is the main
     * model counted from the checkpoint headers, FP8 scales and layer 61
     * (MTP) left out.  R1 has the same shapes. */
    EXACT("deepseek-v3", 671026419200);
    EXACT("deepseek-r1", 671026419200);
    /* checkpoint-header count (FP8 scales left out), "1T" / "1.03T" */
    EXACT("kimi-k2-instruct", 1026408232448);
}

static void hybrid(void)
{
    /* llama.cpp n_params of the text GGUF (no vision tower, no MTP) */
    EXACT("qwen3.5-9b", 8953803264);
    /* llama.cpp n_params of Qwen3-Coder-Next, the same shape; the Hub's
     * 81,324,862,720 for Qwen3-Next-80B-A3B adds the MTP block */
    EXACT("qwen3-next-80b-a3b-thinking", 79674391296);
    /* index total_size 103,140,646,656 B; MoE on odd layers, Mamba dt/B/C
     * norms, dt_rank auto (256) */
    EXACT("jamba-v0.1", 51570323328);
    /* only "56B model parameters" is published (model card) */
    ROUNDED("nemotron-h-56b-base-8k", 55.5e9, 56.5e9, "56B");
}

/* Records that name too little to count: unknown (0), never a guess. */
static void unknown(void)
{
    /* vLLM resolved-architecture records: no SSM sizes, tying or FFN width */
    CHECK("falcon-mamba-7b-instruct (vLLM record) is unknown",
          count("falcon-mamba-7b-instruct") == 0);
    CHECK("mamba-codestral-7b-v0.1 (vLLM record) is unknown",
          count("mamba-codestral-7b-v0.1") == 0);
    CHECK("glm-4.5 (vLLM record) is unknown", count("glm-4.5") == 0);
    /* DeepSeek's inference format: inter_dim / moe_inter_dim not read */
    CHECK("deepseek-v2-lite-inference is unknown", count("deepseek-v2-lite-inference") == 0);
    CHECK("no model: 0", kvp_model_param_count(NULL) == 0);
    /* Starcoder2's biases (use_bias) are not in the model */
    CHECK("starcoder2 is unknown",
          count_text("{\"model_type\":\"starcoder2\",\"num_hidden_layers\":2,\"hidden_size\":64,"
                     "\"num_attention_heads\":4,\"intermediate_size\":256,"
                     "\"vocab_size\":100}") == 0);
    /* 65536 layers of 3 x 2^24 x 2^32 weights: overflow is unknown, not wrapped */
    CHECK("overflow is unknown",
          count_text("{\"model_type\":\"llama\",\"num_hidden_layers\":65536,"
                     "\"hidden_size\":16777216,\"num_attention_heads\":128,\"head_dim\":128,"
                     "\"intermediate_size\":4294967296,\"vocab_size\":32000}") == 0);
}

/* Hub configs given inline: the fields of the real config.json that matter. */
static void inline_configs(void)
{
    /* state-spaces/mamba-130m-hf: Hub safetensors total 129,135,360.  The
     * file says nothing of tying: MambaConfig keeps PretrainedConfig's True. */
    CHECK("mamba-130m-hf = 129135360",
          count_text("{\"architectures\":[\"MambaForCausalLM\"],\"model_type\":\"mamba\","
                     "\"hidden_size\":768,\"num_hidden_layers\":24,\"intermediate_size\":1536,"
                     "\"state_size\":16,\"conv_kernel\":4,\"expand\":2,\"time_step_rank\":48,"
                     "\"use_bias\":false,\"use_conv_bias\":true,\"vocab_size\":50280,"
                     "\"torch_dtype\":\"float32\"}") == 129135360ull);
    /* state-spaces/mamba-2.8b-hf: Hub safetensors total 2,768,345,600 */
    CHECK("mamba-2.8b-hf = 2768345600",
          count_text("{\"architectures\":[\"MambaForCausalLM\"],\"model_type\":\"mamba\","
                     "\"hidden_size\":2560,\"num_hidden_layers\":64,\"intermediate_size\":5120,"
                     "\"state_size\":16,\"conv_kernel\":4,\"expand\":2,\"time_step_rank\":160,"
                     "\"use_bias\":false,\"use_conv_bias\":true,\"vocab_size\":50280}") ==
              2768345600ull);
    /* A Llama config that omits tie_word_embeddings is untied (LlamaConfig's
     * default False): Llama-3.2-1B's count plus one 128256 x 2048 head. */
    CHECK("llama without tie_word_embeddings: untied",
          count_text("{\"model_type\":\"llama\",\"num_hidden_layers\":16,\"hidden_size\":2048,"
                     "\"num_attention_heads\":32,\"num_key_value_heads\":8,\"head_dim\":64,"
                     "\"intermediate_size\":8192,\"vocab_size\":128256}") ==
              1235814400ull + 128256ull * 2048);
}

int main(void)
{
    dense();
    gemma();
    moe();
    mla();
    hybrid();
    unknown();
    inline_configs();
    return check_failures ? 1 : 0;
}
