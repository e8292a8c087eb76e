/* test_buffers.c - the buffers llama.cpp allocates beside the KV cache on a
 * CPU-only run, through the C API: the model buffer (the GGUF's tensors,
 * each padded to 32 bytes) and the output buffer (4 x n_vocab x n_seq).
 *
 * Golden numbers: the full shape twin of Qwen3-8B (written here, a sparse
 * file) is the twin the real llama.cpp v0.5.0 was measured on: its
 * llama_get_memory_breakdown in metadata-only mode gives a CPU model buffer
 * of 16,382,087,168 bytes (the same probe as tests/oracle, which checks
 * every architecture's twin); reference/llamacpp-memory-rules.md 2.3
 * publishes the output buffer for a 151,936-token vocabulary: 0.58 MiB for
 * one sequence, 2.32 MiB for four.  A config.json (no tensor list, a
 * vocab_size a converter may pad) gives neither. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kvplan.h"

static int llama_at(const kvp_model *m, int32_t n_seq, kvp_llama_result *r)
{
    kvp_llama_params p;
    kvp_error e;
    kvp_llama_defaults(&p);
    p.n_ctx = 4096;
    p.n_seq = n_seq;
    return kvp_llama(m, &p, r, &e);
}

int main(void)
{
    char dir[] = "/tmp/kvplan-buffers-XXXXXX", path[64];
    kvp_model *cfg = NULL, *m = NULL;
    kvp_error e;
    kvp_llama_result *r = malloc(sizeof *r);
    CHECK("setup", r && mkdtemp(dir) && kvp_model_load("qwen3-8b", &cfg, &e) == 0);
    if (!r || !cfg)
        return 1;
    snprintf(path, sizeof path, "%s/qwen3-8b.gguf", dir);
    CHECK("full twin of Qwen3-8B written and read back",
          kvp_twin_write(cfg, path, 0, 0, &e) == 0 && kvp_model_from_gguf(path, &m, &e) == 0);
    if (m) {
        CHECK("model buffer: 16,382,087,168 bytes, as llama.cpp's memory breakdown says",
              m->weight_bytes == 16382087168ull);
        CHECK("llama.cpp result carries it", llama_at(m, 1, r) == 0 &&
                                                 r->weights_bytes == 16382087168ull);
        CHECK("output buffer, one sequence: 151,936 x 4 bytes",
              r->output_bytes == 151936ull * 4);
        CHECK("output buffer line: 0.58 MiB, as published",
              !strcmp(r->output_log, "llama_context:        CPU  output buffer size =     0.58 MiB"));
        CHECK("four sequences: 2.32 MiB", llama_at(m, 4, r) == 0 &&
                                              strstr(r->output_log, "=     2.32 MiB") != NULL);
    }
    CHECK("a config.json: no model buffer", cfg->weight_bytes == 0);
    CHECK("... and no output buffer", llama_at(cfg, 1, r) == 0 && r->output_bytes == 0 &&
                                          r->output_log[0] == '\0');
    unlink(path);
    rmdir(dir);
    kvp_model_free(m);
    kvp_model_free(cfg);
    free(r);
    return check_failures ? 1 : 0;
}
