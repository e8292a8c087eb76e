/* test_plot.c - the memory chart: a well-formed SVG with one band per part
 * of the cache, and a user's file is never overwritten unasked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kvplan.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    static char buf[1 << 20];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    return buf;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

int main(void)
{
    char dir[] = "/tmp/kvplan-plot-XXXXXX", path[64];
    kvp_model *g, *q;
    kvp_error e;
    kvp_theory_params tp;
    kvp_llama_params lp;
    if (!mkdtemp(dir) || kvp_model_load("gemma-3-4b-it", &g, &e) ||
        kvp_model_load("qwen3.5-9b", &q, &e))
        return 1;
    snprintf(path, sizeof path, "%s/mem.svg", dir);
    kvp_theory_defaults(&tp);
    kvp_llama_defaults(&lp);

    CHECK("theory chart written", kvp_plot_memory(g, 0, &tp, &lp, 32768, path, 0, &e) == 0);
    char *s = slurp(path);
    CHECK("an SVG document", !strncmp(s, "<?xml", 5) && strstr(s, "<svg ") && strstr(s, "</svg>"));
    CHECK("gemma 3 theory: a sliding and a full band", count(s, "class=\"band\"") == 2 &&
                                                          strstr(s, ">sliding<") &&
                                                          strstr(s, ">full<"));
    CHECK("the x axis is in K tokens", strstr(s, ">30K<") != NULL && strstr(s, ">5K<") != NULL);
    CHECK("an existing file is kept without force",
          kvp_plot_memory(g, 0, &tp, &lp, 32768, path, 0, &e) != 0 && strstr(e.msg, "--force"));
    CHECK("and replaced with force", kvp_plot_memory(g, 1, &tp, &lp, 32768, path, 1, &e) == 0);
    s = slurp(path);
    CHECK("gemma 3 llama.cpp: kv and kv_swa bands", count(s, "class=\"band\"") == 2 &&
                                                        strstr(s, "kv_swa (windowed layers)"));
    CHECK("qwen3.5 llama.cpp: kv and the recurrent state",
          kvp_plot_memory(q, 1, &tp, &lp, 65536, path, 1, &e) == 0 &&
              strstr(slurp(path), "recurrent state (f32)") &&
              count(slurp(path), "class=\"band\"") == 2);
    CHECK("a title with markup is escaped", strstr(slurp(path), "<text") != NULL &&
                                                !strstr(slurp(path), "<qwen"));
    CHECK("too short a range is refused", kvp_plot_memory(g, 0, &tp, &lp, 100, path, 1, &e) != 0);
    unlink(path);
    rmdir(dir);
    kvp_model_free(g);
    kvp_model_free(q);
    return check_failures != 0;
}
