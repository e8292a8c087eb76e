/* fuzz_placement.c - libFuzzer target: any bytes as the values of
 * llama-server's placement flags, which come from the command line and from
 * pasted commands: -ngl, -ts, --gpu NAME / NxNAME, --device-memory SIZE,
 * --weights-type, and -ot patterns, which are translated to POSIX and
 * compiled (a pattern whose repeats would make glibc's regcomp blow up must
 * be refused, not compiled).  A one-line error is the expected answer to
 * garbage; an accepted value must stay within the documented ranges. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvp_int.h"

static kvp_tensor tensors[4] = {
    {"token_embd.weight", 1, 64, 8192, KVP_TENSOR_INPUT, 0, 0},
    {"blk.0.attn_q.weight", 8, 64, 4352, 0, 0, 8192},
    {"blk.1.ffn_up_exps.weight", 8, 64, 8704, 1, 0, 12544},
    {"output.weight", 8, 64, 4352, KVP_TENSOR_OUTPUT, 0, 21248},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    kvp_error e;
    int32_t ngl;
    float split[8];
    uint32_t n;
    if (kvp_llama_parse_ngl(text, &ngl, &e) == 0 && ngl < -2)
        abort();
    if (kvp_llama_parse_tensor_split(text, split, 8, &n, &e) == 0 && (n < 1 || n > 8))
        abort();
    kvp_llama_placement pl;
    kvp_llama_placement_defaults(&pl);
    if (kvp_llama_placement_add_gpu(&pl, text, &e) == 0 &&
        (pl.offload.n_devices < 1 || pl.offload.n_devices > 8 || !pl.device_memory[0]))
        abort();
    kvp_llama_placement_defaults(&pl);
    if (kvp_llama_placement_add_memory(&pl, text, &e) == 0 && !pl.device_memory[0])
        abort();
    kvp_weights_type_find(text);
    /* the bytes as -ot text, on a four-tensor model with two devices */
    kvp_model m;
    memset(&m, 0, sizeof m);
    m.n_layers = 2;
    m.tensors = tensors;
    m.n_tensors = 4;
    kvp_offload o = {.n_gpu_layers = -1, .n_devices = 2, .overrides = text,
                     .cuda_row_padding = -1, .use_mmap = (int)(size & 1)};
    kvp_weights_split w;
    kvp_llama_weights_split(&m, &o, &w, &e);
    free(text);
    return 0;
}
