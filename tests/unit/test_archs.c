/* test_archs.c - the listing behind `kvplan archs`: the two tables (config
 * rule sets, llama.cpp architectures) agree with each other and with what
 * the loaders accept. */
#include <string.h>

#include "check.h"
#include "kvplan.h"

static int llama_row(const char *name, kvp_llama_arch_info *out)
{
    for (size_t i = 0; i < kvp_llama_arch_count(); i++)
        if (kvp_llama_arch_at(i, out) == 0 && strcmp(out->name, name) == 0)
            return 1;
    return 0;
}

/* Every llama.cpp name a rule set converts to has a row of llama.cpp's
 * table: a config kvplan reads can be sized for llama.cpp too. */
static int every_gguf_name_has_a_llama_row(void)
{
    for (size_t i = 0; i < kvp_arch_count(); i++) {
        kvp_arch_info a;
        kvp_llama_arch_info l;
        char names[256], *save = NULL;
        kvp_arch_at(i, &a);
        snprintf(names, sizeof names, "%s", a.llama_archs);
        for (char *w = strtok_r(names, " ", &save); w; w = strtok_r(NULL, " ", &save))
            if (!llama_row(w, &l)) {
                printf("# %s converts to %s, which llama.cpp's table lacks\n", a.family, w);
                return 0;
            }
    }
    return 1;
}

/* Every family the listing names is one --family accepts. */
static int every_family_loads_by_name(void)
{
    for (size_t i = 0; i < kvp_arch_count(); i++) {
        kvp_arch_info a;
        kvp_arch_at(i, &a);
        const char *all = kvp_families(), *p = strstr(all, a.family);
        size_t n = strlen(a.family);
        while (p && !((p == all || p[-1] == ' ') && (p[n] == ' ' || !p[n])))
            p = strstr(p + 1, a.family);
        if (!p) {
            printf("# family %s is not in kvp_families()\n", a.family);
            return 0;
        }
    }
    return 1;
}

int main(void)
{
    kvp_arch_info a;
    kvp_llama_arch_info l;
    CHECK("there are rule sets and llama.cpp architectures",
          kvp_arch_count() > 100 && kvp_llama_arch_count() > 100);
    CHECK("past the end is -1", kvp_arch_at(kvp_arch_count(), &a) == -1 &&
                                    kvp_llama_arch_at(kvp_llama_arch_count(), &l) == -1);
    CHECK("the first rule set is llama, converted to llama",
          kvp_arch_at(0, &a) == 0 && !strcmp(a.family, "llama") &&
              !strcmp(a.llama_archs, "llama") && a.refused == NULL);
    CHECK("every converted name has a llama.cpp row", every_gguf_name_has_a_llama_row());
    CHECK("every listed family is a --family name", every_family_loads_by_name());
    CHECK("llama.cpp's llama row writes twins",
          llama_row("llama", &l) && l.twin && l.refused == NULL);
    CHECK("DeepSeek-V4's GGUFs are refused, with a reason",
          llama_row("deepseek4", &l) && !l.twin && l.refused && strstr(l.refused, "CSA"));
    CHECK("T5's GGUFs are refused as an encoder-decoder",
          llama_row("t5", &l) && l.refused && strstr(l.refused, "encoder-decoder"));
    CHECK("Gemma 4's drafter is refused; Gemma 4 is read",
          llama_row("gemma4-assistant", &l) && l.refused && llama_row("gemma4", &l) &&
              !l.refused && l.twin);
    return check_failures;
}
