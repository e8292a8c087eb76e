/* fuzz_config.c - libFuzzer target: any bytes as a config.json, then every
 * runtime and output over whatever model they describe.  Crashes, hangs,
 * leaks, sanitizer reports and unbounded allocations are bugs; a clean error
 * is the expected answer to garbage. */
#include <stdint.h>
#include <stdlib.h>

#include "kvplan.h"
#include "vllm_weights.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kvp_model *m = NULL;
    kvp_error e;
    if (kvp_model_from_config_text((const char *)data, size, "fuzz.json", &m, &e))
        return 0;
    static const uint64_t lens[] = {1, 4096, 40000, 1ull << 40};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        kvp_theory_params tp;
        kvp_theory_result tr;
        kvp_theory_defaults(&tp);
        tp.n_ctx = lens[i];
        tp.n_seq = (uint32_t)(i + 1);
        tp.type_k = i & 1 ? KVP_Q8_0 : KVP_F16;
        if (kvp_theory(m, &tp, &tr, &e) == 0)
            free(kvp_theory_json(m, &tr));
        kvp_llama_params lp;
        kvp_llama_result lr;
        kvp_llama_defaults(&lp);
        lp.n_ctx = lens[i];
        lp.n_seq = (int32_t)i - 1;
        lp.flash_attn = (kvp_flash_attn)(i % 3);
        lp.swa_full = (int)(i & 1);
        if (kvp_llama(m, &lp, &lr, &e) == 0)
            free(kvp_llama_json(m, &lr));
    }
    /* quantization_config and the weight walk (lib/hf/quant.c, vllm_weights.c) */
    for (uint32_t tp = 1; tp <= 8; tp *= 8) {
        kvp_vllm_weights_t w;
        kvp_vllm_weights(m, tp, tp == 1 ? 1 : 2, tp == 1 ? 80 : 90, &w, &e);
    }
    free(kvp_model_json(m));
    kvp_model_free(m);
    return 0;
}
