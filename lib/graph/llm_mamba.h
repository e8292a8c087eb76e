/* llm_mamba.h - the Mamba mixers of src/models/mamba-base.cpp. */
#ifndef KVP_GRAPH_LLM_MAMBA_H
#define KVP_GRAPH_LLM_MAMBA_H

#include "llm_rs.h"

/* build_mamba_layer: cur is the normed input {n_embd, n_tokens}; with
 * dt_b_c_norm, RMS norms on dt, B and C (FalconMamba's ssm.dt_b_c_rms, or
 * Jamba's weighted norms when the layer has them) */
gg_tensor *llm_mamba_layer(llm *c, llm_rs_inp *inp, gg_tensor *cur, int il, int dt_b_c_norm);
/* Mamba2's SSM heads (ssm.time_step_rank) */
int64_t llm_mamba2_heads(const llm *c, int il);
/* build_mamba2_layer (groups, the gated RMS norm when ssm_norm exists) */
gg_tensor *llm_mamba2_layer(llm *c, llm_rs_inp *inp, gg_tensor *cur, int il);

#endif
