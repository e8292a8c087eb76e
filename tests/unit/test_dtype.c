/* test_dtype.c - cache types and ggml row sizes (DESIGN 2: q8_0 34 B per 32
 * values, q4_0 18, q4_1 20, q5_0 22, q5_1 24, iq4_nl 18). */
#include "check.h"
#include "kvplan.h"

static int row(kvp_dtype t, uint64_t n, uint64_t want)
{
    uint64_t v = 0;
    return kvp_dtype_row_bytes(t, n, &v) == 0 && v == want;
}

int main(void)
{
    CHECK("f32 1024", row(KVP_F32, 1024, 4096));
    CHECK("f16 1024", row(KVP_F16, 1024, 2048));
    CHECK("bf16 1024", row(KVP_BF16, 1024, 2048));
    CHECK("fp8 1024", row(KVP_FP8, 1024, 1024));
    CHECK("q8_0 1024 -> 1088", row(KVP_Q8_0, 1024, 1088));
    CHECK("q8_0 576 -> 612 (MLA latent)", row(KVP_Q8_0, 576, 612));
    CHECK("q4_0 1024 -> 576", row(KVP_Q4_0, 1024, 576));
    CHECK("q4_1 1024 -> 640", row(KVP_Q4_1, 1024, 640));
    CHECK("q5_0 1024 -> 704", row(KVP_Q5_0, 1024, 704));
    CHECK("q5_1 1024 -> 768", row(KVP_Q5_1, 1024, 768));
    CHECK("iq4_nl 1024 -> 576", row(KVP_IQ4_NL, 1024, 576));
    /* vLLM's nvfp4: 16 4-bit values + an fp8 scale; KIVI-2: 32 2-bit values + fp16
     * scale and zero (../shared/reference/techniques.md A6) */
    CHECK("nvfp4 128 -> 72", row(KVP_NVFP4, 128, 72));
    CHECK("nvfp4 576 -> 324 (MLA latent)", row(KVP_NVFP4, 576, 324));
    CHECK("kivi2 1024 -> 384 (3 bits a value)", row(KVP_KIVI2, 1024, 384));
    uint64_t v;
    CHECK("nvfp4 rejects 24 values", kvp_dtype_row_bytes(KVP_NVFP4, 24, &v) != 0);
    CHECK("q8_0 rejects 80 values", kvp_dtype_row_bytes(KVP_Q8_0, 80, &v) != 0);
    CHECK("f16 takes 80 values", row(KVP_F16, 80, 160));
    kvp_dtype t;
    CHECK("parse q8_0", kvp_dtype_parse("q8_0", &t) == 0 && t == KVP_Q8_0);
    CHECK("parse Q4_0", kvp_dtype_parse("Q4_0", &t) == 0 && t == KVP_Q4_0);
    CHECK("parse fp8_e4m3", kvp_dtype_parse("fp8_e4m3", &t) == 0 && t == KVP_FP8);
    CHECK("parse fp8_e5m2", kvp_dtype_parse("fp8_e5m2", &t) == 0 && t == KVP_FP8);
    CHECK("parse bfloat16", kvp_dtype_parse("bfloat16", &t) == 0 && t == KVP_BF16);
    CHECK("parse float32", kvp_dtype_parse("float32", &t) == 0 && t == KVP_F32);
    CHECK("parse rejects q3_k", kvp_dtype_parse("q3_k", &t) != 0);
    CHECK("names round-trip", kvp_dtype_parse(kvp_dtype_name(KVP_IQ4_NL), &t) == 0 &&
                                  t == KVP_IQ4_NL);
    return check_failures != 0;
}
