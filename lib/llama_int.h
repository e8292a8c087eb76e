/* llama_int.h - what the llama.cpp files share inside the library: the
 * layer-to-device map of -ngl / -ts (llama_place.c), and a walk over every
 * cache tensor kvp_llama() creates (rt_llamacpp.c), which the per-device
 * plan (llama_devices.c) places layer by layer as llama.cpp does
 * (llamacpp-memory-rules.md 2.1). */
#ifndef KVP_LLAMA_INT_H
#define KVP_LLAMA_INT_H

#include "kvplan.h"

/* The device of layer il (n_all: the output layer), 0-based, or -1 for the
 * host: -ngl offloads the last layers, -ts shares them out. */
int kvp_llama_layer_device(const kvp_offload *o, int32_t n_all, int32_t il);

/* One tensor of the memory module: a K or V of a llama_kv_cache, or an R,
 * S or P row of llama_memory_recurrent. */
typedef struct kvp_cache_tensor {
    int cache;               /* index in kvp_llama_result.caches; -1: the recurrent state */
    uint32_t layer;
    char what;               /* 'K', 'V', 'R', 'S', 'P' */
    kvp_dtype type;
    uint64_t ne0;            /* values in a row (CUDA pads quantized rows by it) */
    uint64_t nbytes;         /* ggml_nbytes: every row of every stream */
} kvp_cache_tensor;

typedef struct kvp_cache_visitor {
    void (*fn)(void *arg, const kvp_cache_tensor *t);
    void *arg;
} kvp_cache_visitor;

/* kvp_llama, telling v (may be NULL) about each tensor as it is sized. */
int kvp_llama_walk(const kvp_model *m, const kvp_llama_params *p, const kvp_cache_visitor *v,
                   kvp_llama_result *r, kvp_error *err);

#endif
