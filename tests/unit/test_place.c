/* test_place.c - weights per device in llama.cpp v0.5.0 (lib/llama_place.c)
 * against the rules of reference/llamacpp-memory-rules.md 1.2-1.4, on a
 * small hand-made tensor list whose bytes are worked out here:
 *
 *   token_embd.weight      f16, 64 x 100      12,800 B  input: always the host
 *   blk.L.attn_q.weight    q4_0, 576 x 10      3,240 B  (576 % 512 = 64: CUDA pads
 *                                              a row of 448 values = 252 B -> 3,492,
 *                                              then to 128: 3,584; CPU: to 32: 3,264)
 *   blk.L.ffn_up_exps.weight  f16, 64 x 8 x 4   4,096 B  (an expert tensor)
 *   output_norm.weight     f32, 64               256 B  output layer
 *   output.weight          f16, 64 x 100      12,800 B  output layer (absent when tied)
 *
 * for L = 0..3 (four layers).  -ngl N puts layers >= 5 - N (the output layer
 * is number 4) on the device.  In the file the data is packed in this
 * order, each tensor at a multiple of 32: token_embd at 0, layer L's attn_q
 * at 12,800 + 7,360 L and its ffn_up_exps 3,264 further, output_norm at
 * 42,240, output at 42,496, the data ending at 55,296 (for mmap). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gguf.h"
#include "kvplan.h"

#define GGML_F32 0
#define GGML_F16 1
#define GGML_Q4_0 2

static kvp_tensor tensors[32];

static void add(kvp_model *m, const char *name, uint32_t type, uint64_t ne0, uint64_t nbytes,
                int32_t layer)
{
    static uint64_t next; /* the next tensor's offset: this one's end, padded to 32 */
    if (!m->n_tensors)
        next = 0;
    kvp_tensor *t = &tensors[m->n_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->type = type, t->ne0 = ne0, t->nbytes = nbytes, t->layer = layer;
    t->offset = next;
    next += (nbytes + 31) / 32 * 32;
}

static void model(kvp_model *m, int tied)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "hand-made");
    m->n_layers = 4;
    m->tensors = tensors;
    add(m, "token_embd.weight", GGML_F16, 64, 12800, KVP_TENSOR_INPUT);
    for (int l = 0; l < 4; l++) {
        char n[64];
        snprintf(n, sizeof n, "blk.%d.attn_q.weight", l);
        add(m, n, GGML_Q4_0, 576, 3240, l);
        snprintf(n, sizeof n, "blk.%d.ffn_up_exps.weight", l);
        add(m, n, GGML_F16, 64, 4096, l);
    }
    add(m, "output_norm.weight", GGML_F32, 64, 256, KVP_TENSOR_OUTPUT);
    if (!tied)
        add(m, "output.weight", GGML_F16, 64, 12800, KVP_TENSOR_OUTPUT);
    m->tied_output = tied;
}

static int mmap_on;

static kvp_weights_split split(const kvp_model *m, int32_t ngl, uint32_t n_dev,
                               const char *overrides)
{
    kvp_offload o = {.n_gpu_layers = ngl, .n_devices = n_dev, .overrides = overrides,
                     .cuda_row_padding = -1, .use_mmap = mmap_on};
    kvp_weights_split w;
    kvp_error e;
    if (kvp_llama_weights_split(m, &o, &w, &e))
        printf("# %s\n", e.msg);
    return w;
}

int main(void)
{
    kvp_model m;
    kvp_error e;
    model(&m, 0);
    /* host sizes: 12,800 + 4 x (3,264 + 4,096) + 256 + 12,800 */
    kvp_weights_split w = split(&m, 0, 1, NULL);
    CHECK("-ngl 0: everything on the host", w.host == 12800 + 4 * (3264 + 4096) + 256 + 12800 &&
                                              w.device[0] == 0);
    w = split(&m, -1, 0, NULL);
    CHECK("no device: everything on the host whatever -ngl",
          w.host == 12800 + 4 * (3264 + 4096) + 256 + 12800);
    w = split(&m, -1, 1, NULL);
    CHECK("-ngl all: the input layer stays on the host", w.host == 12800);
    CHECK("... the rest on the device, CUDA-padded (3,584 per q4_0 tensor)",
          w.device[0] == 4 * (3584 + 4096) + 256 + 12800);
    w = split(&m, 4, 1, NULL);
    CHECK("-ngl 4 = n_layer: layer 0 stays on the host", w.i_gpu_start == 1 &&
          w.host == 12800 + 3264 + 4096 && w.device[0] == 3 * (3584 + 4096) + 256 + 12800);
    w = split(&m, 1, 1, NULL);
    CHECK("-ngl 1: only the output layer", w.device[0] == 256 + 12800 &&
                                            w.host == 12800 + 4 * (3264 + 4096));
    model(&m, 1);
    w = split(&m, -1, 1, NULL);
    CHECK("tied embeddings offloaded: the device gets a copy of token_embd", w.tied_copy &&
          w.host == 12800 && w.device[0] == 4 * (3584 + 4096) + 256 + 12800);
    w = split(&m, 0, 1, NULL);
    CHECK("tied embeddings with -ngl 0: no copy", !w.tied_copy &&
          w.host == 12800 + 4 * (3264 + 4096) + 256);
    m.tied_output = 2; /* gemma3n, gemma4: the output created before the embedding */
    w = split(&m, 0, 1, NULL);
    CHECK("... but a copy on the host where the output is created first", w.tied_copy &&
          w.host == 2 * 12800 + 4 * (3264 + 4096) + 256);
    model(&m, 0);
    char moe[512];
    CHECK("--cpu-moe text", kvp_offload_cpu_moe(-1, moe, sizeof moe) == 0 &&
                                !strcmp(moe, "\\.ffn_(up|down|gate|gate_up)_(ch|)exps=CPU"));
    w = split(&m, -1, 1, moe);
    CHECK("--cpu-moe: every expert tensor back on the host", w.host == 12800 + 4 * 4096 &&
                                                              w.device[0] == 4 * 3584 + 256 + 12800);
    CHECK("--n-cpu-moe 2 text", kvp_offload_cpu_moe(2, moe, sizeof moe) == 0 &&
                                    strstr(moe, "blk\\.1\\.ffn_") && !strstr(moe, "blk\\.2"));
    w = split(&m, -1, 1, moe);
    CHECK("--n-cpu-moe 2: the experts of blocks 0 and 1 only", w.host == 12800 + 2 * 4096 &&
          w.device[0] == 4 * 3584 + 2 * 4096 + 256 + 12800);
    w = split(&m, 0, 1, "attn_q=GPU0");
    CHECK("-ot moves matching tensors whatever -ngl", w.device[0] == 4 * 3584);
    w = split(&m, -1, 1, "blk\\.3\\.=CPU,attn_q=GPU0");
    CHECK("-ot: the first match wins", w.host == 12800 + 3264 + 4096);
    w = split(&m, -1, 2, NULL);
    /* splits 0.5, 1; layer il sits at il / 5 (five offloaded, the output one of them):
     * 0, 0.2, 0.4 -> GPU0; 0.6 and the output's 0.8 -> GPU1 */
    CHECK("two devices, equal shares: layers 0-2 on GPU0, layer 3 and the output on GPU1",
          w.device[0] == 3 * (3584 + 4096) && w.device[1] == (3584 + 4096) + 256 + 12800);
    kvp_offload o = {.n_gpu_layers = -1, .n_devices = 2, .tensor_split = {3, 1},
                     .cuda_row_padding = -1};
    CHECK("-ts 3,1: layers 0-3 on GPU0 (splits 0.75, 1; layer 3 at 0.6), output on GPU1",
          kvp_llama_weights_split(&m, &o, &w, &e) == 0 && w.device[0] == 4 * (3584 + 4096) &&
              w.device[1] == 256 + 12800);
    o.overrides = "attn_q=GPU5";
    CHECK("an override to a device not given is refused",
          kvp_llama_weights_split(&m, &o, &w, &e) == -1 && e.code == KVP_EUSAGE);
    o.overrides = "attn_q(=CPU";
    CHECK("a bad pattern is refused", kvp_llama_weights_split(&m, &o, &w, &e) == -1);
    o.overrides = "blk\\.\\d\\.attn_q=CPU";
    CHECK("-ot reads \\d as a digit, as std::regex does",
          kvp_llama_weights_split(&m, &o, &w, &e) == 0 && w.host == 12800 + 4 * 3264);
    o.overrides = "blk\\.[\\d]\\.attn_q=CPU";
    CHECK("... inside brackets too", kvp_llama_weights_split(&m, &o, &w, &e) == 0 &&
                                         w.host == 12800 + 4 * 3264);
    o.overrides = "output\\D=CPU";
    CHECK("... and \\D as a non-digit (output_norm, output.weight)",
          kvp_llama_weights_split(&m, &o, &w, &e) == 0 && w.host == 12800 + 256 + 12800);
    /* with mmap the host buffer is the file range its tensors span */
    mmap_on = 1;
    w = split(&m, -1, 0, NULL);
    CHECK("mmap, CPU only: one mapping of the whole data, 55,296 bytes",
          w.host == 55296 && w.n_host_maps == 1 && w.host_map[0] == 55296);
    w = split(&m, -1, 1, NULL);
    CHECK("mmap, all offloaded: token_embd alone is mapped", w.host == 12800 &&
          w.device[0] == 4 * (3584 + 4096) + 256 + 12800);
    w = split(&m, 4, 1, NULL);
    CHECK("mmap, -ngl 4: token_embd and layer 0, 0 to 20,160", w.host == 20160);
    kvp_offload_cpu_moe(-1, moe, sizeof moe);
    w = split(&m, -1, 1, moe);
    CHECK("mmap, --cpu-moe: 0 to layer 3's expert end (42,240), offloaded attn_q included",
          w.host == 42240 && w.device[0] == 4 * 3584 + 256 + 12800);
    model(&m, 1);
    m.tied_output = 2;
    w = split(&m, 0, 1, NULL);
    CHECK("mmap: a duplicated tied output maps the same bytes (0 to 42,496)",
          w.tied_copy && w.host == 42496);
    mmap_on = 0;
    model(&m, 0);
    kvp_model *cfg;
    CHECK("a config.json has no tensor list: refused",
          kvp_model_load("qwen3-8b", &cfg, &e) == 0 &&
              kvp_llama_weights_split(cfg, &o, &w, &e) == -1 && e.code == KVP_EINPUT);
    kvp_model_free(cfg);
    return check_failures ? 1 : 0;
}
