/* catalog.c - the built-in model catalog.  The entries are generated at
 * build time from data/models/catalog.list (see tools/embed.c); adding a
 * model is one line there plus its config.json. */
#include <string.h>
#include <strings.h>

#include "kvp_int.h"

extern const kvp_catalog_entry kvp_catalog_entries[];
extern const size_t kvp_catalog_n;

size_t kvp_catalog_count(void) { return kvp_catalog_n; }

const kvp_catalog_entry *kvp_catalog_at(size_t i)
{
    return i < kvp_catalog_n ? &kvp_catalog_entries[i] : NULL;
}

/* Matches the short name, or the Hugging Face id ("Qwen/Qwen3-8B"), in any
 * letter case. */
const kvp_catalog_entry *kvp_catalog_find(const char *name)
{
    for (size_t i = 0; i < kvp_catalog_n; i++)
        if (strcasecmp(kvp_catalog_entries[i].name, name) == 0)
            return &kvp_catalog_entries[i];
    for (size_t i = 0; i < kvp_catalog_n; i++)
        if (strcasecmp(kvp_catalog_entries[i].model_id, name) == 0)
            return &kvp_catalog_entries[i];
    return NULL;
}
