/* weights_type.c - what a quantization type costs per weight, for the
 * weights of a model known only by its config.json (no tensor list), so a
 * llama.cpp plan can be made before a GGUF exists.  The result is computed,
 * never read: a real GGUF mixes types (llama-quantize keeps norms in f32 and
 * upgrades the output, attn_v and some ffn_down tensors in its _M mixes).
 *
 * For llama-quantize's types the cost is the whole file's bits per weight
 * that its own option table gives for Llama-3-8B (tools/quantize/quantize.cpp
 * QUANT_OPTIONS: "Q4_K_M 4.58G" is GiB; 8,030,261,248 weights), so the mix
 * is priced as llama-quantize makes it; the IQ types by the bits per weight
 * that table states; F16, BF16 and F32 by their element size. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kvp_int.h"

/* milli-bits per weight: round(GiB x 2^33 / 8,030,261,248 x 1000) */
static const kvp_weights_type types[] = {
    {"F32", 32000, "4 bytes a weight"},
    {"F16", 16000, "2 bytes a weight"},
    {"BF16", 16000, "2 bytes a weight"},
    {"Q8_0", 8515, "7.96 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q6_K", 6568, "6.14 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q5_K_M", 5701, "5.33 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q5_K_S", 5573, "5.21 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q5_1", 6044, "5.65 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q5_0", 5573, "5.21 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q4_K_M", 4899, "4.58 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q4_K_S", 4675, "4.37 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q4_1", 5113, "4.78 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q4_0", 4642, "4.34 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q3_K_L", 4311, "4.03 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q3_K_M", 4001, "3.74 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q3_K_S", 3648, "3.41 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q2_K", 3166, "2.96 GiB for Llama-3-8B in llama-quantize's table"},
    {"Q2_K_S", 3166, "2.96 GiB for Llama-3-8B in llama-quantize's table"},
    {"IQ4_NL", 4500, "4.50 bits a weight in llama-quantize's table"},
    {"IQ4_XS", 4250, "4.25 bits a weight in llama-quantize's table"},
    {"IQ3_M", 3660, "3.66 bits a weight in llama-quantize's table"},
    {"IQ3_S", 3440, "3.44 bits a weight in llama-quantize's table"},
    {"IQ3_XXS", 3060, "3.06 bits a weight in llama-quantize's table"},
    {"IQ2_M", 2700, "2.7 bits a weight in llama-quantize's table"},
    {"IQ2_S", 2500, "2.5 bits a weight in llama-quantize's table"},
    {"IQ2_XS", 2310, "2.31 bits a weight in llama-quantize's table"},
    {"IQ2_XXS", 2060, "2.06 bits a weight in llama-quantize's table"},
    {"IQ1_M", 1750, "1.75 bits a weight in llama-quantize's table"},
    {"IQ1_S", 1560, "1.56 bits a weight in llama-quantize's table"},
};
#define N_TYPES (sizeof types / sizeof types[0])

/* llama-quantize's aliases: the K types without a size are the _M mixes */
static const struct {
    const char *alias, *name;
} aliases[] = {{"Q3_K", "Q3_K_M"}, {"Q4_K", "Q4_K_M"}, {"Q5_K", "Q5_K_M"}};

const kvp_weights_type *kvp_weights_type_find(const char *name)
{
    if (!name)
        return kvp_weights_type_find(KVP_WEIGHTS_TYPE_DEFAULT);
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcasecmp(name, aliases[i].alias))
            name = aliases[i].name;
    for (size_t i = 0; i < N_TYPES; i++)
        if (!strcasecmp(name, types[i].name))
            return &types[i];
    return NULL;
}

const char *kvp_weights_type_list(void)
{
    static char buf[512];
    if (!buf[0])
        for (size_t i = 0; i < N_TYPES; i++)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "",
                     types[i].name);
    return buf;
}

int kvp_weights_type_bytes(const kvp_weights_type *t, uint64_t params, uint64_t *out)
{
    uint64_t bits;
    if (kvp_mul(params, t->milli_bits, &bits) || kvp_add(bits, 7999, &bits))
        return -1;
    *out = bits / 8000;
    return 0;
}
