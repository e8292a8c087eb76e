/* model_int.h - model loading internals shared between model.c and the
 * sources it dispatches to. */
#ifndef KVP_MODEL_INT_H
#define KVP_MODEL_INT_H

#include <stddef.h>

/* The config.json path of an org/name id in the local Hugging Face cache. */
int kvp_hfcache_find(const char *repo_id, char *out, size_t n);

#endif
