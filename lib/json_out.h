/* json_out.h - the pieces of the schema-1 documents that other JSON writers
 * in the library (lib/tech/tech_json.c) embed, so a model reads the same in
 * every document. */
#ifndef KVP_JSON_OUT_H
#define KVP_JSON_OUT_H

#include <jansson.h>

#include "kvplan.h"

/* The "model" object: name, arch, family, source, layer kinds, groups, facts. */
json_t *kvp_json_model(const kvp_model *m);

#endif
