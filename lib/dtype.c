/* dtype.c - cache and state element types, and ggml's row sizes.
 *
 * Block-quantized types store 32 values per block with their scales
 * (q8_0: 34 bytes, q4_0: 18, ...), so a row's bytes are blocks x block size,
 * exactly as ggml_row_size computes them; a row that is not a whole number
 * of blocks cannot be stored in that type at all.  Two block types come
 * from outside ggml: vLLM's nvfp4 (16 4-bit values and one fp8 scale) and
 * KIVI's 2-bit groups (32 values with an fp16 scale and zero), which the
 * techniques table prices; llama.cpp refuses both. */
#include <string.h>
#include <strings.h>

#include "kvp_int.h"

static const struct {
    const char *name;
    unsigned block, bytes;
} types[KVP_DTYPE_COUNT] = {
    [KVP_F32] = {"f32", 1, 4},      [KVP_F16] = {"f16", 1, 2},
    [KVP_BF16] = {"bf16", 1, 2},    [KVP_FP8] = {"fp8", 1, 1},
    [KVP_Q8_0] = {"q8_0", 32, 34},  [KVP_Q4_0] = {"q4_0", 32, 18},
    [KVP_Q4_1] = {"q4_1", 32, 20},  [KVP_Q5_0] = {"q5_0", 32, 22},
    [KVP_Q5_1] = {"q5_1", 32, 24},  [KVP_IQ4_NL] = {"iq4_nl", 32, 18},
    [KVP_NVFP4] = {"nvfp4", 16, 9}, [KVP_KIVI2] = {"kivi2", 32, 12},
};

static const struct {
    const char *alias;
    kvp_dtype type;
} aliases[] = {
    {"float32", KVP_F32},   {"float", KVP_F32},      {"float16", KVP_F16},
    {"half", KVP_F16},      {"bfloat16", KVP_BF16},  {"fp8_e4m3", KVP_FP8},
    {"fp8_e5m2", KVP_FP8},  {"float8_e4m3fn", KVP_FP8},
    {"torch.float32", KVP_F32}, {"torch.float16", KVP_F16},
    {"torch.bfloat16", KVP_BF16},
};

const char *kvp_dtype_name(kvp_dtype t)
{
    return (unsigned)t < KVP_DTYPE_COUNT ? types[t].name : "?";
}

int kvp_dtype_parse(const char *s, kvp_dtype *out)
{
    for (unsigned i = 0; i < KVP_DTYPE_COUNT; i++)
        if (strcasecmp(s, types[i].name) == 0) {
            *out = (kvp_dtype)i;
            return 0;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcasecmp(s, aliases[i].alias) == 0) {
            *out = aliases[i].type;
            return 0;
        }
    return -1;
}

unsigned kvp_dtype_block(kvp_dtype t) { return types[t].block; }
unsigned kvp_dtype_block_bytes(kvp_dtype t) { return types[t].bytes; }

int kvp_dtype_row_bytes(kvp_dtype t, uint64_t n, uint64_t *out)
{
    if ((unsigned)t >= KVP_DTYPE_COUNT || n % types[t].block)
        return -1;
    return kvp_mul(n / types[t].block, types[t].bytes, out);
}
