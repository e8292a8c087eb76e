/* llm_hparams.h - the GGUF hyperparameters llama.cpp's graph builders read
 * beyond the model's shapes (expert_weights_scale, residual_scale, ...),
 * looked up in the model's numeric "<arch>.*" keys (kvp_model.gguf_nums).
 * A model from a config.json has none: every lookup answers the default,
 * which is what llama.cpp reads from a shape twin of it (the twin writer
 * does not write these keys). */
#ifndef KVP_GRAPH_LLM_HPARAMS_H
#define KVP_GRAPH_LLM_HPARAMS_H

#include "llm.h"

/* the key's value (an array: its first element), or dflt when absent */
double llm_hparam(const llm *c, const char *key, double dflt);
/* element i (0 to 3) of an array key (a scalar: itself at 0); dflt when
 * absent or shorter */
double llm_hparam_at(const llm *c, const char *key, int i, double dflt);
/* 1 when the key is present */
int llm_hparam_has(const llm *c, const char *key);
/* 1 when the key is an array whose elements differ (per-layer values) */
int llm_hparam_varies(const llm *c, const char *key);
/* element il of a per-layer key (a scalar answers for every layer); dflt
 * when absent, and when the array varies (*exact set to 0: its elements
 * are not kept) */
double llm_hparam_layer(const llm *c, const char *key, int il, double dflt, int *exact);

#endif
