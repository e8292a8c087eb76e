// probe_breakdown.cpp - the probe's one C++ part: llama_get_memory_breakdown
// (src/llama-ext.h) returns a std::map, so it cannot be called from C.  It
// prints the model bytes llama.cpp's metadata-only pass sizes for the host
// (every buffer type named CPU...), the figure its --fit works from, and the
// compute buffer its metadata-only pass reserves for the CPU backend.
#include <cstdio>
#include <cstring>

#include "llama.h"
#include "llama-ext.h"

extern "C" void probe_breakdown(const struct llama_context *ctx)
{
    size_t host_model = 0, host_compute = 0;
    for (const auto &kv : llama_get_memory_breakdown(ctx))
        if (std::strncmp(ggml_backend_buft_name(kv.first), "CPU", 3) == 0) {
            host_model += kv.second.model;
            host_compute += kv.second.compute;
        }
    std::printf("memory_breakdown: host model = %zu bytes\n", host_model);
    std::printf("memory_breakdown: host compute = %zu bytes\n", host_compute);
}
