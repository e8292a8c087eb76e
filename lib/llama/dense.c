/* llama/dense.c - llama.cpp v0.5.0 architectures of the "dense" group (see
 * twin.h): how each lays out its layers, and the metadata and tensors its
 * shape twin carries. */
#include "../gguf_model.h"

static const twin_arch arches[] = {
    {"", NULL, SWA_NONE, 0, 0, 0, RECR_NONE, STATE_NONE, KVP_LAYER_FULL, 0, 0, -1, NULL, NULL,
     NULL, NULL},
};

const twin_arch_group twin_group_dense = {arches, 0};
