/* fuzz_ollama.c - libFuzzer target: any bytes as what an Ollama registry or
 * local store may hand kvplan - a manifest, a params layer, a config blob -
 * and as a model name typed by a user.  These bytes come from the network, so
 * a crash, leak or unbounded allocation is a bug; a one-line error is the
 * expected answer to garbage, and an accepted manifest must hold only the
 * digests and sizes ollama.h promises. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvp_int.h"
#include "net/ollama.h"

static void check_layer(int has, const ollama_layer *l)
{
    if (has && (!ollama_valid_digest(l->digest) || l->size > OLLAMA_LAYER_SIZE_MAX))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    kvp_error e;
    ollama_manifest m;
    if (ollama_parse_manifest(text, size, "ollama:fuzz", &m, &e) == 0) {
        check_layer(m.has_model, &m.model);
        check_layer(m.has_params, &m.params);
        check_layer(m.has_config_json, &m.config_json);
        check_layer(m.has_config, &m.config);
        if (m.n_layers < 0 || m.n_tensor_layers > m.n_layers)
            abort();
    }
    ollama_params p;
    if (ollama_parse_params(text, size, "ollama:fuzz", &p, &e) == 0 &&
        ((p.has_num_ctx && p.num_ctx > KVP_MAX_TOKENS) || (p.has_num_gpu && p.num_gpu < -1)))
        abort();
    ollama_config c;
    ollama_parse_config(text, size, "ollama:fuzz", &c, &e);

    /* the same bytes as a name: whatever is accepted must be safe as path parts */
    char s[1024];
    size_t n = size < sizeof s - 1 ? size : sizeof s - 1;
    memcpy(s, data, n);
    s[n] = 0;
    ollama_name name;
    if (ollama_parse_name(s, &name, &e) == 0) {
        const char *parts[] = {name.host, name.ns, name.model, name.tag};
        for (int i = 0; i < 4; i++)
            if (!parts[i][0] || strstr(parts[i], "..") || strpbrk(parts[i], "/%\\ ?#@"))
                abort();
    }
    return 0;
}
