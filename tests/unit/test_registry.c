/* test_registry.c - the "registry" group: a config read with a chosen rule
 * set (kvp_model_load_family), and Nemotron-NAS's attention-free layers
 * read the same from config.json and from its shape twin.  Figures from
 * the configs' arithmetic (tests/cases/registry-*.case say how). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kvplan.h"

#define DIR "tests/data/configs/registry/" /* make check runs at the root */

static void family(void)
{
    kvp_model *m = NULL;
    kvp_error e;
    CHECK("families name the group's rule sets",
          strstr(kvp_families(), "mllama") && strstr(kvp_families(), "nemotron-nas") &&
              strstr(kvp_families(), "llama "));
    CHECK("an unknown model_type is refused without --family",
          kvp_model_load(DIR "unknown-arch-llama-shaped.json", &m, &e) != 0 &&
              strstr(e.msg, "kvplan archs lists the known ones") && strstr(e.msg, "--family NAME"));
    CHECK("an unknown family is bad usage",
          kvp_model_load_family(DIR "unknown-arch-llama-shaped.json", "frob", &m, &e) != 0 &&
              e.code == KVP_EUSAGE && strstr(e.msg, "no such rule set"));
    CHECK("an empty family is kvp_model_load",
          kvp_model_load_family("qwen3-8b", "", &m, &e) == 0 && !strcmp(m->family, "qwen2"));
    kvp_model_free(m);
    m = NULL;
    CHECK("--family llama reads it",
          kvp_model_load_family(DIR "unknown-arch-llama-shaped.json", "llama", &m, &e) == 0);
    if (!m)
        return;
    CHECK("the model says whose rules", !strcmp(m->family, "llama") &&
                                            !strcmp(m->arch, "frobnicator") &&
                                            strstr(m->source, "[rules by --family llama]") &&
                                            strstr(m->note, "read with --family llama"));
    kvp_theory_params p;
    kvp_theory_result r;
    kvp_theory_defaults(&p);
    CHECK("and prices it as Llama: 32 x 8 x 128 x 2 x 2 = 131,072 B/token",
          kvp_theory(m, &p, &r, &e) == 0 && r.per_token_bytes == 131072);
    kvp_model_free(m);
}

/* The twin of a config reads back as the same layers, and llama.cpp's
 * prediction is the same from both (80 layers, 49 of them with bytes). */
static void deci_round_trip(void)
{
    kvp_model *c = NULL, *g = NULL;
    kvp_error e;
    char path[] = "/tmp/kvplan-test-registry-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    CHECK("Super-49B loads", kvp_model_load(DIR "llama-3.3-nemotron-super-49b-v1.json", &c, &e) == 0);
    CHECK("its twin is written", c && kvp_twin_write(c, path, 1, 1, &e) == 0);
    CHECK("and read back", kvp_model_from_gguf(path, &g, &e) == 0);
    unlink(path);
    if (!c || !g)
        return;
    int same = c->n_layers == g->n_layers;
    for (uint32_t i = 0; same && i < c->n_layers; i++)
        same = c->layers[i].kind == g->layers[i].kind &&
               c->layers[i].n_kv_heads == g->layers[i].n_kv_heads;
    CHECK("every layer's kind and KV heads agree", same);
    CHECK("31 layers none, 49 full",
          kvp_model_count_kind(g, KVP_LAYER_NONE) == 31 &&
              kvp_model_count_kind(g, KVP_LAYER_FULL) == 49);
    kvp_llama_params lp;
    kvp_llama_result a, b;
    kvp_llama_defaults(&lp);
    lp.n_ctx = 4096;
    lp.n_seq = 1;
    CHECK("llama.cpp: the same bytes and log from config and twin",
          kvp_llama(c, &lp, &a, &e) == 0 && kvp_llama(g, &lp, &b, &e) == 0 &&
              a.total_bytes == 822083584ull && b.total_bytes == a.total_bytes &&
              a.caches[0].layers == 80 && !strcmp(a.log[0], b.log[0]));
    kvp_model_free(c);
    kvp_model_free(g);
}

int main(void)
{
    family();
    deci_round_trip();
    return check_failures != 0;
}
