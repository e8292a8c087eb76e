/* model_int.h - model loading internals shared between model.c and the
 * sources it dispatches to. */
#ifndef KVP_MODEL_INT_H
#define KVP_MODEL_INT_H

#include <stddef.h>

#include "kvplan.h"

/* A config.json's text turned into a model (hfconfig.c): by the rule set
 * its model_type or architectures name, or by `family` (one of
 * arch_family_list) when not NULL, which the model's note and source say. */
int hf_model_from_text(const char *text, size_t len, const char *label, const char *family,
                       kvp_model **out, kvp_error *err);

/* The config.json path of an org/name id in the local Hugging Face cache. */
int kvp_hfcache_find(const char *repo_id, char *out, size_t n);

#endif
