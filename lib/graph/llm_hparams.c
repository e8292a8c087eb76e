/* llm_hparams.c - GGUF hyperparameters for the graph builders (llm_hparams.h). */
#include <string.h>

#include "llm_hparams.h"

static const kvp_gguf_num *find(const llm *c, const char *key)
{
    for (size_t i = 0; i < c->m->n_gguf_nums; i++)
        if (!strcmp(c->m->gguf_nums[i].key, key))
            return &c->m->gguf_nums[i];
    return NULL;
}

double llm_hparam(const llm *c, const char *key, double dflt)
{
    const kvp_gguf_num *n = find(c, key);
    return n ? n->value : dflt;
}

double llm_hparam_at(const llm *c, const char *key, int i, double dflt)
{
    const kvp_gguf_num *n = find(c, key);
    if (!n || i < 0 || i > 3 || (uint32_t)i >= n->n)
        return dflt;
    return i ? n->next[i - 1] : n->value;
}

int llm_hparam_has(const llm *c, const char *key)
{
    return find(c, key) != NULL;
}

int llm_hparam_varies(const llm *c, const char *key)
{
    const kvp_gguf_num *n = find(c, key);
    return n && !n->uniform;
}

double llm_hparam_layer(const llm *c, const char *key, int il, double dflt, int *exact)
{
    const kvp_gguf_num *n = find(c, key);
    (void)il;
    if (!n)
        return dflt;
    if (!n->uniform) {
        if (exact)
            *exact = 0;
        return dflt;
    }
    return n->value;
}
