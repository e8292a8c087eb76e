/* model_int.h - model loading internals shared between model.c and the
 * sources it dispatches to. */
#ifndef KVP_MODEL_INT_H
#define KVP_MODEL_INT_H

#include <stddef.h>

#include "gguf.h"
#include "kvplan.h"

/* A config.json's text turned into a model (hfconfig.c): by the rule set
 * its model_type or architectures name, or by `family` (one of
 * arch_family_list) when not NULL, which the model's note and source say. */
int hf_model_from_text(const char *text, size_t len, const char *label, const char *family,
                       kvp_model **out, kvp_error *err);

/* A GGUF already parsed (a local file, or header bytes from the network):
 * the model its llama.cpp metadata describes; label names it in messages
 * and becomes its source. */
int kvp_model_from_gguf_file(const gguf_file *f, const char *label, kvp_model **out,
                             kvp_error *err);

/* The config.json path of an org/name id in the local Hugging Face cache. */
int kvp_hfcache_find(const char *repo_id, char *out, size_t n);
/* The same at a revision (a branch, tag or commit; NULL: refs/main, else the
 * newest snapshot). */
int kvp_hfcache_find_rev(const char *repo_id, const char *rev, char *out, size_t n);
/* A config.json file, read by its own rule set or by family (NULL: own). */
int kvp_config_file(const char *path, const char *family, kvp_model **out, kvp_error *err);
/* A catalog entry, likewise. */
int kvp_catalog_load(const kvp_catalog_entry *e, const char *family, kvp_model **out,
                     kvp_error *err);

#endif
