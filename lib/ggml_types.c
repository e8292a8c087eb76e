/* ggml_types.c - the ggml tensor types a GGUF file may name: values per
 * block, bytes per block and name.  A tensor's size follows from these alone,
 * so the reader can check a shape against the file without ggml.
 *
 * The table is ggml's type_traits as of llama.cpp v0.5.0 (GGML_TYPE_COUNT
 * 43).  Ids ggml removed (4, 5: q4_2/q4_3; 31-33, 36-38: the repacked
 * variants, which ggml never accepts in a file) have a zero block, so a file
 * using them is rejected exactly as llama.cpp rejects it. */
#include "gguf.h"
#include "kvp_int.h"

typedef struct ggml_type_info {
    const char *name;
    unsigned block;       /* values per block */
    unsigned block_bytes; /* bytes per block */
} ggml_type_info;

static const ggml_type_info types[] = {
    [0] = {"f32", 1, 4},        [1] = {"f16", 1, 2},
    [2] = {"q4_0", 32, 18},     [3] = {"q4_1", 32, 20},
    [6] = {"q5_0", 32, 22},     [7] = {"q5_1", 32, 24},
    [8] = {"q8_0", 32, 34},     [9] = {"q8_1", 32, 36},
    [10] = {"q2_K", 256, 84},   [11] = {"q3_K", 256, 110},
    [12] = {"q4_K", 256, 144},  [13] = {"q5_K", 256, 176},
    [14] = {"q6_K", 256, 210},  [15] = {"q8_K", 256, 292},
    [16] = {"iq2_xxs", 256, 66}, [17] = {"iq2_xs", 256, 74},
    [18] = {"iq3_xxs", 256, 98}, [19] = {"iq1_s", 256, 50},
    [20] = {"iq4_nl", 32, 18},  [21] = {"iq3_s", 256, 110},
    [22] = {"iq2_s", 256, 82},  [23] = {"iq4_xs", 256, 136},
    [24] = {"i8", 1, 1},        [25] = {"i16", 1, 2},
    [26] = {"i32", 1, 4},       [27] = {"i64", 1, 8},
    [28] = {"f64", 1, 8},       [29] = {"iq1_m", 256, 56},
    [30] = {"bf16", 1, 2},
    [34] = {"tq1_0", 256, 54},  [35] = {"tq2_0", 256, 66},
    [39] = {"mxfp4", 32, 17},   [40] = {"nvfp4", 64, 36},
    [41] = {"q1_0", 128, 18},   [42] = {"q2_0", 64, 18},
};

enum { N_TYPES = sizeof types / sizeof types[0] };

static const ggml_type_info *lookup(uint32_t type)
{
    return type < N_TYPES && types[type].block ? &types[type] : NULL;
}

unsigned kvp_ggml_type_block(uint32_t type)
{
    const ggml_type_info *t = lookup(type);
    return t ? t->block : 0;
}

unsigned kvp_ggml_type_block_bytes(uint32_t type)
{
    const ggml_type_info *t = lookup(type);
    return t ? t->block_bytes : 0;
}

/* Never NULL, so a caller may print it for any id. */
const char *kvp_ggml_type_name(uint32_t type)
{
    const ggml_type_info *t = lookup(type);
    return t ? t->name : "unknown";
}

/* The element count is checked too, not only the bytes: llama.cpp refuses a
 * shape of 2^63 elements even in a type that packs them into fewer bytes. */
int kvp_gguf_tensor_nbytes(uint32_t type, const uint64_t ne[4], uint64_t *out)
{
    const ggml_type_info *t = lookup(type);
    if (!t)
        return GGUF_NB_TYPE;
    if (ne[0] % t->block)
        return GGUF_NB_BLOCK;
    uint64_t elems = 1, bytes;
    if (kvp_mul(ne[0] / t->block, t->block_bytes, &bytes))
        return GGUF_NB_BIG;
    for (int i = 0; i < 4; i++)
        if (kvp_mul(elems, ne[i], &elems))
            return GGUF_NB_BIG;
    for (int i = 1; i < 4; i++)
        if (kvp_mul(bytes, ne[i], &bytes))
            return GGUF_NB_BIG;
    if (elems > (uint64_t)INT64_MAX || bytes > (uint64_t)INT64_MAX)
        return GGUF_NB_BIG;
    *out = bytes;
    return 0;
}
