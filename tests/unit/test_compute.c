/* test_compute.c - llama.cpp's CPU compute buffer, rebuilt graph and
 * replayed allocator (lib/graph/), against the worked examples of
 * reference/llamacpp-memory-rules.md 3.3, measured on the real llama.cpp
 * with the full-size models (f16 cache, n_batch 2048):
 *
 *   1. Llama-3.2-1B, -c 4096 -ub 512 -fa on, one sequence, C API outputs
 *      (n_outputs_max = n_batch):            271,058,944 B
 *   2. Qwen3-8B, -c 32768 -ub 512 -fa off, one sequence, C API outputs:
 *                                          2,260,740,096 B
 *   3. Llama-3.2-1B, -c 4096 -fa on -np 4 -kvu, llama-server's outputs:
 *                                             71,315,488 B
 *
 * and, from 3.4 (a Vulkan device, full offload), the host compute buffer:
 * exactly the inputs plus the two embedding tensors, Llama-3.2-1B 12 MiB
 * at 4K and 40 MiB at 32K (as printed, two decimals).  Every catalog model's
 * figure is labelled: exact only where the graph was replayed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kvplan.h"

static uint64_t compute_at(const kvp_model *m, uint64_t n_ctx, int32_t n_seq, int unified,
                           kvp_flash_attn fa, uint32_t n_outputs_max, int *exact)
{
    kvp_llama_params p;
    kvp_llama_result *r = malloc(sizeof *r);
    kvp_error e;
    kvp_llama_defaults(&p);
    p.n_ctx = n_ctx;
    p.n_seq = n_seq;
    p.kv_unified = unified;
    p.flash_attn = fa;
    p.n_outputs_max = n_outputs_max;
    uint64_t v = 0;
    if (r && kvp_llama(m, &p, r, &e) == 0 && r->compute.modelled) {
        v = r->compute.host_bytes;
        *exact = r->compute.exact;
    }
    free(r);
    return v;
}

static uint64_t host_at_full_offload(const kvp_model *m, uint64_t n_ctx)
{
    kvp_llama_params p;
    kvp_llama_result *r = malloc(sizeof *r);
    kvp_error e;
    kvp_compute c;
    kvp_offload o = {.n_gpu_layers = -1, .n_devices = 1};
    kvp_llama_defaults(&p);
    p.n_ctx = n_ctx;
    p.n_seq = 1;
    p.flash_attn = KVP_FA_ON;
    uint64_t v = 0;
    if (r && kvp_llama(m, &p, r, &e) == 0 && kvp_llama_compute(m, r, &o, &c, &e) == 0 &&
        c.modelled && !c.exact && c.n_devices == 1 && c.device_bytes[0] > 0 &&
        c.device_bytes[0] < r->compute.host_bytes)
        v = c.host_bytes;
    free(r);
    return v;
}

int main(void)
{
    kvp_model *llama = NULL, *qwen = NULL, *each = NULL;
    kvp_error e;
    CHECK("load", kvp_model_load("llama-3.2-1b-instruct", &llama, &e) == 0 &&
                      kvp_model_load("qwen3-8b", &qwen, &e) == 0);
    if (!llama || !qwen)
        return 1;
    int exact = 0;
    CHECK("example 1: Llama-3.2-1B FA on, C API outputs",
          compute_at(llama, 4096, 1, -1, KVP_FA_ON, 2048, &exact) == 271058944ull && exact);
    exact = 0;
    CHECK("example 2: Qwen3-8B 32K FA off, C API outputs",
          compute_at(qwen, 32768, 1, -1, KVP_FA_OFF, 2048, &exact) == 2260740096ull && exact);
    exact = 0;
    CHECK("example 3: Llama-3.2-1B -np 4 -kvu, server outputs",
          compute_at(llama, 4096, 4, 1, KVP_FA_ON, 0, &exact) == 71315488ull && exact);
    /* the server's one row against the C API's 512: the logits term goes */
    CHECK("server outputs remove the logits term",
          compute_at(llama, 4096, 1, -1, KVP_FA_ON, 0, &exact) < 100000000ull);

    uint64_t h4 = host_at_full_offload(llama, 4096), h32 = host_at_full_offload(llama, 32768);
    CHECK("full offload: host 12 MiB at 4K", h4 >= 12ull << 20 && h4 < (12ull << 20) + 5 * 10486);
    CHECK("full offload: host 40 MiB at 32K",
          h32 >= 40ull << 20 && h32 < (40ull << 20) + 5 * 10486);

    /* every catalog model's figure says what it is: a replayed graph is
     * exact, anything else is labelled an estimate (or not modelled) */
    int labelled = 1, estimates = 0, n = 0;
    for (size_t k = 0; k < kvp_catalog_count(); k++) {
        if (kvp_model_load(kvp_catalog_at(k)->name, &each, &e))
            continue;
        kvp_llama_params p;
        kvp_llama_result *r = malloc(sizeof *r);
        kvp_llama_defaults(&p);
        p.n_ctx = 4096;
        p.n_seq = 1;
        if (r && kvp_llama(each, &p, r, &e) == 0) {
            const kvp_compute *c = &r->compute;
            n++;
            if (c->exact != (strstr(c->how, "replayed") != NULL) ||
                (!c->exact && strncmp(c->how, "estimate", 8) && strncmp(c->how, "not modelled", 12)))
                labelled = 0;
            estimates += c->modelled && !c->exact;
        }
        free(r);
        kvp_model_free(each);
    }
    CHECK("catalog: every compute figure labelled exact or estimate", n > 20 && labelled);
    printf("# %d catalog models, %d compute estimates\n", n, estimates);
    kvp_model_free(llama);
    kvp_model_free(qwen);
    return check_failures != 0;
}
