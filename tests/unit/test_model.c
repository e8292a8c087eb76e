/* test_model.c - the per-layer model through the C API: two descriptions
 * of one model give identical layers, errors name their input, groups list
 * their layers, and the theory runtime refuses to wrap. */
#include <string.h>

#include "check.h"
#include "kvplan.h"

static int same_layers(const kvp_model *a, const kvp_model *b)
{
    return a->n_layers == b->n_layers &&
           memcmp(a->layers, b->layers, a->n_layers * sizeof *a->layers) == 0;
}

static kvp_model *load(const char *name)
{
    kvp_model *m = NULL;
    kvp_error e;
    return kvp_model_load(name, &m, &e) ? NULL : m;
}

int main(void)
{
    /* the hub file (defaults omitted) and the derived file (defaults spelled
     * out) describe the same Gemma 3 layers */
    kvp_model *a = load("gemma-3-4b-it"), *b = load("gemma-3-4b-it-effective");
    CHECK("gemma-3-4b-it loads", a != NULL);
    CHECK("gemma-3-4b-it-effective loads", b != NULL);
    CHECK("gemma 3: hub file == file with defaults filled in", a && b && same_layers(a, b));
    kvp_model_free(b);

    /* DeepSeek-V2-Lite in HF and in DeepSeek's inference format */
    kvp_model *c = load("deepseek-v2-lite"), *d = load("deepseek-v2-lite-inference");
    CHECK("deepseek-v2-lite: HF config == inference config", c && d && same_layers(c, d));
    kvp_model_free(c);
    kvp_model_free(d);

    /* Llama-3.1-8B base and instruct share their shape */
    c = load("llama-3.1-8b");
    d = load("Meta-Llama/Llama-3.1-8B-Instruct");
    CHECK("llama-3.1-8b base == instruct (id lookup is case-insensitive)",
          c && d && same_layers(c, d));
    kvp_model_free(c);
    kvp_model_free(d);

    if (a) {
        kvp_group g[8];
        char buf[128];
        size_t n = kvp_model_groups(a, g, 8);
        CHECK("gemma 3: two groups", n == 2);
        kvp_model_group_layers(a, &g[1], buf, sizeof buf);
        CHECK("gemma 3: full layers listed", strcmp(buf, "5,11,17,23,29") == 0);
        kvp_model_group_layers(a, &g[0], buf, sizeof buf);
        CHECK("gemma 3: sliding layers as ranges",
              strcmp(buf, "0-4,6-10,12-16,18-22,24-28,30-33") == 0);
        kvp_model_free(a);
    }

    /* every catalog entry loads and has at least one layer */
    size_t ok = 0;
    for (size_t i = 0; i < kvp_catalog_count(); i++) {
        kvp_model *m = load(kvp_catalog_at(i)->name);
        ok += m && m->n_layers > 0;
        kvp_model_free(m);
    }
    CHECK("every catalog entry loads", ok == kvp_catalog_count() && ok >= 34);

    /* errors name their input */
    kvp_model *m = NULL;
    kvp_error e;
    const char bad[] = "{\"model_type\": \"llama\", \"num_hidden_layers\": 4,}";
    CHECK("broken text fails", kvp_model_from_config_text(bad, sizeof bad - 1, "x.json", &m, &e));
    CHECK("error names the input and position", strncmp(e.msg, "x.json:1:", 9) == 0);
    CHECK("error code is bad input", e.code == KVP_EINPUT);
    CHECK("no model on failure", m == NULL);

    const char inf[] = "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64,"
                       " \"num_attention_heads\": 2, \"limit\": [0.0, Infinity, -Infinity, NaN],"
                       " \"name\": \"Infinity\"}";
    CHECK("bare Infinity/NaN accepted", kvp_model_from_config_text(inf, sizeof inf - 1, "inf.json",
                                                                   &m, &e) == 0);
    kvp_model_free(m);

    /* the theory runtime checks every product */
    const char huge[] = "{\"model_type\": \"llama\", \"num_hidden_layers\": 65536,"
                        " \"num_attention_heads\": 65536, \"head_dim\": 1048576}";
    CHECK("huge model loads", kvp_model_from_config_text(huge, sizeof huge - 1, "huge.json", &m,
                                                         &e) == 0);
    if (m) {
        kvp_theory_params p;
        kvp_theory_result r;
        kvp_theory_defaults(&p);
        p.n_ctx = 1ull << 40;
        CHECK("overflow is an error", kvp_theory(m, &p, &r, &e) != 0);
        CHECK("overflow message names the model", strstr(e.msg, "huge.json") != NULL);
        p.n_ctx = 0;
        CHECK("zero length is an error", kvp_theory(m, &p, &r, &e) != 0);
        kvp_model_free(m);
    }
    return check_failures != 0;
}
