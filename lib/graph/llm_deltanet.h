/* llm_deltanet.h - the linear-attention pieces of src/models/delta-net-base.cpp
 * (llm_build_delta_net_base) and models.h's build_gdn_l2_norm, shared by
 * the Gated DeltaNet hybrids (arch_deltanet.c).
 *
 * On the CPU backend llama.cpp resolves cparams.fused_gdn_ar / _ch to true
 * (resolve_fused_ops: the fused op runs where its layer runs), so the delta
 * rule is one GATED_DELTA_NET node, never the chunked or autoregressive
 * graphs. */
#ifndef KVP_GRAPH_LLM_DELTANET_H
#define KVP_GRAPH_LLM_DELTANET_H

#include "llm_rs.h"

/* ggml_gated_delta_net: {S_v H, n_tokens n_seqs + K S_v n_seqs}, the
 * outputs then K snapshots of the state */
gg_tensor *llm_op_gated_delta_net(llm *c, gg_tensor *q, gg_tensor *k, gg_tensor *v, gg_tensor *g,
                                  gg_tensor *beta, gg_tensor *state, int64_t K);

/* build_gdn_l2_norm: scale(rms_norm(x)) */
gg_tensor *llm_gdn_l2_norm(llm *c, gg_tensor *x);

/* build_conv_state: the layer's conv state (build_rs) before the mixed
 * projection qkv {channels, n_seq_tokens, n_seqs}, the last kernel - 1
 * columns copied back; returns the conv input */
gg_tensor *llm_dn_conv_state(llm *c, llm_rs_inp *inp, gg_tensor *conv_all, gg_tensor *qkv,
                             int64_t kernel, int64_t channels, int64_t n_embd_r);

/* build_recurrent_attn without rollback snapshots (n_rs_seq 0): the fused
 * delta rule over the state s {S_v, S_v, H_v, n_seqs}, the new state copied
 * into ssm_all; returns the output {S_v, H_v, n_seq_tokens, n_seqs} */
gg_tensor *llm_dn_recurrent_attn(llm *c, gg_tensor *ssm_all, gg_tensor *q, gg_tensor *k,
                                 gg_tensor *v, gg_tensor *g, gg_tensor *b, gg_tensor *s,
                                 int64_t n_embd_s);

#endif
