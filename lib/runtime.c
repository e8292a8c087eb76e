/* runtime.c - the names of the runtimes kvplan prices, as commands take them
 * (--runtime) and as JSON documents name them, in one place. */
#include <string.h>
#include <strings.h>

#include "kvp_int.h"

const char *kvp_runtime_name(kvp_runtime r)
{
    return r == KVP_RT_LLAMA ? "llama.cpp" : r == KVP_RT_VLLM ? "vllm" : "theory";
}

int kvp_runtime_parse(const char *s, kvp_runtime *out)
{
    static const struct {
        const char *name;
        kvp_runtime rt;
    } names[] = {{"theory", KVP_RT_THEORY},   {"llama.cpp", KVP_RT_LLAMA},
                 {"llamacpp", KVP_RT_LLAMA},  {"llama-cpp", KVP_RT_LLAMA},
                 {"llama-server", KVP_RT_LLAMA}, {"vllm", KVP_RT_VLLM}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(s, names[i].name)) {
            *out = names[i].rt;
            return 0;
        }
    return -1;
}
