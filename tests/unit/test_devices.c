/* test_devices.c - the KV cache and recurrent state of a llama.cpp run,
 * split by device (lib/llama_devices.c), against the rules of
 * reference/llamacpp-memory-rules.md 2.1 (each layer's cache on that layer's
 * device, all on the host with -nkvo, the output layer has no KV, SWA and
 * hybrid sub-caches split by their own layers) and llamacpp-kv-rules.md 10
 * (buffers padded per tensor: CPU 32, CUDA 128 plus a row's worth for
 * quantized rows not a multiple of 512).  Every figure is worked out here by
 * hand from those rules, on models built in this file:
 *
 *   dense   "llama", 4 full layers of 2 KV heads x 64: a K row is 128
 *           values, 256 B in f16; at -c 1024 -np 1 a K or V tensor is
 *           256 x 1024 = 262,144 B, a layer 524,288 B
 *   swa     "gemma3", layers 0-4 sliding (window 4), layer 5 full, 1 KV head
 *           x 8 (16 B rows): at -c 4096 -ub 512 the full layer has 4,096
 *           cells (K 65,536 B), a sliding one PAD(min(4096, 4 + 512), 256) =
 *           768 (K 12,288 B)
 *   hybrid  "qwen35", layers 0-2 Gated DeltaNet (d_conv 4, d_inner 40,
 *           2 groups, d_state 16), layer 3 full like the dense model's: one
 *           sequence's R row is 3 x (40 + 2 x 2 x 16) = 312 floats = 1,248 B
 *           (a multiple of 32, CUDA pads it to 1,280), S is 16 x 40 = 640
 *           floats = 2,560 B
 *
 * With -ngl N the first offloaded layer is n_layer + 1 - N (the output
 * layer is the last one and has no KV). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kvplan.h"

static kvp_layer layers[8];

static void attention(kvp_layer *L, kvp_layer_kind kind, uint32_t kv, uint32_t dim,
                      uint32_t window)
{
    memset(L, 0, sizeof *L);
    L->kind = kind;
    L->n_head = kv * 2;
    L->n_kv_heads = kv;
    L->head_dim_k = L->head_dim_v = dim;
    L->window = window;
    L->shared_from = -1;
}

static void model(kvp_model *m, const char *arch, uint32_t n)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "hand-made %s", arch);
    snprintf(m->arch, sizeof m->arch, "%s", arch);
    snprintf(m->gguf_arch, sizeof m->gguf_arch, "%s", arch);
    m->n_layers = n;
    m->layers = layers;
    m->max_position = 1u << 20;
}

static void dense(kvp_model *m)
{
    model(m, "llama", 4);
    for (int i = 0; i < 4; i++)
        attention(&layers[i], KVP_LAYER_FULL, 2, 64, 0);
}

static void swa(kvp_model *m)
{
    model(m, "gemma3", 6);
    for (int i = 0; i < 6; i++)
        attention(&layers[i], i < 5 ? KVP_LAYER_SLIDING : KVP_LAYER_FULL, 1, 8, i < 5 ? 4 : 0);
}

static void hybrid(kvp_model *m)
{
    model(m, "qwen35", 4);
    for (int i = 0; i < 3; i++) {
        kvp_layer *L = &layers[i];
        memset(L, 0, sizeof *L);
        L->kind = KVP_LAYER_LINEAR;
        L->d_conv = 4, L->d_inner = 40, L->n_group = 2, L->d_state = 16, L->n_ssm_heads = 2;
        L->conv_dtype = L->ssm_dtype = KVP_F32;
        L->shared_from = -1;
    }
    attention(&layers[3], KVP_LAYER_FULL, 2, 64, 0);
}

static kvp_llama_devices dev;
static kvp_llama_result res;

/* the plan at -c ctx -np 1 -fa on, cache type t, with n_dev devices */
static int plan(const kvp_model *m, uint64_t ctx, kvp_dtype t, uint32_t n_dev, int32_t ngl,
                int nkvo)
{
    kvp_llama_params p;
    kvp_llama_placement pl;
    kvp_error e;
    kvp_llama_defaults(&p);
    p.n_ctx = ctx;
    p.n_seq = 1;
    p.flash_attn = KVP_FA_ON;
    p.type_k = p.type_v = t;
    kvp_llama_placement_defaults(&pl);
    for (uint32_t i = 0; i < n_dev; i++)
        kvp_llama_placement_add_memory(&pl, "24GiB", &e);
    pl.offload.n_gpu_layers = ngl;
    pl.no_kv_offload = nkvo;
    if (kvp_llama_plan(m, &p, &pl, &res, &dev, &e)) {
        printf("# %s\n", e.msg);
        return -1;
    }
    return 0;
}

/* the idx-th KV buffer line's name and bytes */
static int kv_buffer(size_t idx, const char *name, uint64_t bytes)
{
    for (size_t i = 0, n = 0; i < dev.n_buffers; i++)
        if (!strcmp(dev.buffers[i].kind, "KV") && n++ == idx)
            return !strcmp(dev.buffers[i].name, name) && dev.buffers[i].bytes == bytes;
    return 0;
}

static size_t count_kind(const char *kind)
{
    size_t n = 0;
    for (size_t i = 0; i < dev.n_buffers; i++)
        n += !strcmp(dev.buffers[i].kind, kind);
    return n;
}

int main(void)
{
    kvp_model m;
    const uint64_t layer = 524288;

    dense(&m);
    CHECK("dense, CPU only: every layer's KV on the host, one CPU buffer",
          plan(&m, 1024, KVP_F16, 0, -1, 0) == 0 && dev.n_rows == 1 &&
              !strcmp(dev.rows[0].name, "CPU") && dev.rows[0].kv_bytes == 4 * layer &&
              count_kind("KV") == 1 && kv_buffer(0, "CPU", 4 * layer));
    CHECK("dense, one GPU, -ngl auto: all four layers' KV on CUDA0",
          plan(&m, 1024, KVP_F16, 1, -1, 0) == 0 && dev.n_rows == 2 &&
              !strcmp(dev.rows[0].name, "Host") && dev.rows[0].kv_bytes == 0 &&
              dev.rows[1].kv_bytes == 4 * layer && dev.n_gpu_layers == 5 &&
              count_kind("KV") == 1 && kv_buffer(0, "CUDA0", 4 * layer));
    CHECK("dense, -ngl 4 = n_layer: layer 0's KV stays on the host",
          plan(&m, 1024, KVP_F16, 1, 4, 0) == 0 && dev.rows[0].kv_bytes == layer &&
              dev.rows[1].kv_bytes == 3 * layer && kv_buffer(0, "CPU", layer) &&
              kv_buffer(1, "CUDA0", 3 * layer));
    CHECK("dense, -ngl 1: only the output layer, which has no KV",
          plan(&m, 1024, KVP_F16, 1, 1, 0) == 0 && dev.rows[0].kv_bytes == 4 * layer &&
              dev.rows[1].kv_bytes == 0 && count_kind("KV") == 1);
    CHECK("dense, -ngl 0: nothing offloaded", plan(&m, 1024, KVP_F16, 1, 0, 0) == 0 &&
                                                  dev.rows[0].kv_bytes == 4 * layer &&
                                                  dev.n_gpu_layers == 0);
    CHECK("dense, -nkvo: every layer's KV on the host although the layers are offloaded",
          plan(&m, 1024, KVP_F16, 1, -1, 1) == 0 && dev.rows[0].kv_bytes == 4 * layer &&
              dev.rows[1].kv_bytes == 0 && kv_buffer(0, "CPU", 4 * layer));
    /* equal shares: splits 0.5, 1; layer il at il / 5: 0, .2, .4 -> CUDA0, .6 -> CUDA1 */
    CHECK("dense, two equal GPUs: layers 0-2 on CUDA0, layer 3 on CUDA1",
          plan(&m, 1024, KVP_F16, 2, -1, 0) == 0 && dev.n_rows == 3 &&
              dev.rows[1].kv_bytes == 3 * layer && dev.rows[2].kv_bytes == layer &&
              kv_buffer(0, "CUDA0", 3 * layer) && kv_buffer(1, "CUDA1", layer));
    /* q8_0: a 128-value row is 4 blocks of 34 = 136 B; 1024 cells 139,264 B.
     * CUDA: 128 % 512 = 128, so a row of 384 values more (12 x 34 = 408 B):
     * 139,672, padded to 128: 139,776 per tensor */
    CHECK("dense q8_0, -ngl 4: CPU tensors as they are, CUDA ones padded by a 384-value row",
          plan(&m, 1024, KVP_Q8_0, 1, 4, 0) == 0 && dev.rows[0].kv_bytes == 2 * 139264 &&
              dev.rows[1].kv_bytes == 3 * 2 * 139776);
    CHECK("... while the size line keeps ggml_nbytes: 4 x 2 x 139,264",
          res.total_bytes == 4 * 2 * 139264);

    swa(&m);
    /* -ngl 3 of 7: layers 4 and 5 (and the output) on the device */
    CHECK("SWA, -ngl 3: the full layer 5 and sliding layer 4 on CUDA0, layers 0-3 on the host",
          plan(&m, 4096, KVP_F16, 1, 3, 0) == 0 && dev.rows[1].kv_bytes == 2 * 65536 + 2 * 12288 &&
              dev.rows[0].kv_bytes == 4 * 2 * 12288);
    CHECK("... a buffer per cache and buffer type: base CUDA0, then SWA CPU and CUDA0",
          count_kind("KV") == 3 && kv_buffer(0, "CUDA0", 2 * 65536) &&
              kv_buffer(1, "CPU", 4 * 2 * 12288) && kv_buffer(2, "CUDA0", 2 * 12288));
    CHECK("SWA, -ngl 1: the base cache's only layer stays on the host with the rest",
          plan(&m, 4096, KVP_F16, 1, 1, 0) == 0 && dev.rows[1].kv_bytes == 0 &&
              count_kind("KV") == 2 && kv_buffer(0, "CPU", 2 * 65536) &&
              kv_buffer(1, "CPU", 5 * 2 * 12288));
    CHECK("SWA, -nkvo: both caches on the host",
          plan(&m, 4096, KVP_F16, 1, -1, 1) == 0 && dev.rows[1].kv_bytes == 0 &&
              dev.rows[0].kv_bytes == 2 * 65536 + 5 * 2 * 12288);

    hybrid(&m);
    /* -ngl 2 of 5: layer 3 (full) and the output on the device */
    CHECK("hybrid, -ngl 2: the attention layer's KV on CUDA0, the three states on the host",
          plan(&m, 1024, KVP_F16, 1, 2, 0) == 0 && dev.rows[1].kv_bytes == layer &&
              dev.rows[1].recurrent_bytes == 0 && dev.rows[0].kv_bytes == 0 &&
              dev.rows[0].recurrent_bytes == 3 * (1248 + 2560));
    CHECK("hybrid, -ngl 3: layer 2's state on CUDA0, its R row padded to 128 (1,280)",
          plan(&m, 1024, KVP_F16, 1, 3, 0) == 0 && dev.rows[1].recurrent_bytes == 1280 + 2560 &&
              dev.rows[0].recurrent_bytes == 2 * (1248 + 2560));
    CHECK("... one RS buffer per buffer type", count_kind("RS") == 2);
    CHECK("hybrid, -nkvo: state and KV on the host",
          plan(&m, 1024, KVP_F16, 1, -1, 1) == 0 && dev.rows[1].recurrent_bytes == 0 &&
              dev.rows[1].kv_bytes == 0 && dev.rows[0].recurrent_bytes == 3 * (1248 + 2560) &&
              dev.rows[0].kv_bytes == layer);
    CHECK("hybrid, CPU only: the size line's total is the host's KV + state (32-aligned)",
          plan(&m, 1024, KVP_F16, 0, -1, 0) == 0 &&
              dev.rows[0].kv_bytes + dev.rows[0].recurrent_bytes == res.total_bytes);

    /* weights of a config.json: Qwen3-8B's parameters by layer (8,190,735,360
     * in all, the count vLLM's estimate uses): embed_tokens 151,936 x 4,096 =
     * 622,329,856; a layer 192,946,432 (q 4096^2, k and v 4096 x 1024 each,
     * o 4096^2, q/k norms 2 x 128, MLP 3 x 4096 x 12288, 2 norms of 4096); the
     * head 622,329,856 and the final norm 4,096.  F16: 2 bytes each. */
    kvp_model *q = NULL;
    kvp_error e;
    kvp_llama_params p;
    kvp_llama_placement pl;
    kvp_llama_defaults(&p);
    p.n_ctx = 4096;
    p.n_seq = 1;
    kvp_llama_placement_defaults(&pl);
    pl.weights_type = "F16";
    kvp_llama_placement_add_gpu(&pl, "RTX-4090", &e);
    CHECK("qwen3-8b config.json, F16, -ngl auto: embeddings on the host, the rest on CUDA0",
          kvp_model_load("qwen3-8b", &q, &e) == 0 &&
              kvp_llama_plan(q, &p, &pl, &res, &dev, &e) == 0 && dev.weights_computed &&
              dev.rows[0].weights_bytes == 2ull * 622329856 &&
              dev.rows[1].weights_bytes == 2ull * (36ull * 192946432 + 622329856 + 4096));
    CHECK("... every computed row is marked not exact", !dev.rows[0].exact && !dev.rows[1].exact);
    CHECK("... and the RTX-4090's 24,564 MiB are its memory",
          dev.rows[1].memory_bytes == 24564ull << 20 && !strcmp(dev.rows[1].label, "RTX-4090"));
    pl.offload.n_gpu_layers = 10;
    CHECK("... -ngl 10: layers 27-35 and the head on CUDA0",
          kvp_llama_plan(q, &p, &pl, &res, &dev, &e) == 0 &&
              dev.rows[1].weights_bytes == 2ull * (9ull * 192946432 + 622329856 + 4096) &&
              dev.rows[0].weights_bytes == 2ull * (622329856 + 27ull * 192946432));
    kvp_model_free(q);

    /* tied embeddings: Llama-3.2-1B has no head of its own.  embed_tokens
     * 128,256 x 2,048 = 262,668,288; a layer 60,821,504 (q and o 2048^2, k and
     * v 2048 x 512, MLP 3 x 2048 x 8192, 2 norms); the output layer is the
     * final norm, 2,048.  Offloaded, the GPU gets a copy of the embeddings. */
    pl.offload.n_gpu_layers = -1;
    CHECK("Llama-3.2-1B F16 offloaded: the device holds a copy of the tied embeddings",
          kvp_model_load("llama-3.2-1b-instruct", &q, &e) == 0 &&
              kvp_llama_plan(q, &p, &pl, &res, &dev, &e) == 0 && dev.tied_copy &&
              dev.rows[0].weights_bytes == 2ull * 262668288 &&
              dev.rows[1].weights_bytes == 2ull * (16ull * 60821504 + 2048 + 262668288) &&
              dev.param_count == 1235814400ull);
    pl.offload.n_gpu_layers = 0;
    CHECK("... -ngl 0: the output stays with the embeddings, no copy",
          kvp_llama_plan(q, &p, &pl, &res, &dev, &e) == 0 && !dev.tied_copy &&
              dev.rows[0].weights_bytes == 2ull * 1235814400 && dev.rows[1].weights_bytes == 0);
    kvp_model_free(q);
    return check_failures ? 1 : 0;
}
