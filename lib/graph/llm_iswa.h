/* llm_iswa.h - llm_graph_context pieces shared by the sliding-window
 * (iSWA) architectures and the dense decoders built like them
 * (src/llama-graph.cpp of llama.cpp v0.5.0): build_attn_inp_kv_iswa, the
 * iSWA build_attn (also without K and V, for shared-KV layers), build_qkv
 * with its fused and biased forms, build_norm and build_ffn driven by the
 * GGUF's tensor list, and the tensor shapes a graph needs from it. */
#ifndef KVP_GRAPH_LLM_ISWA_H
#define KVP_GRAPH_LLM_ISWA_H

#include "llm.h"

/* build_attn_inp_kv_iswa: the inputs of the base cache (c->kv) and of the
 * SWA cache (c->swa); afterwards c->swa.mask is set */
void llm_iswa_inp(llm *c, int64_t head_dim_k, int64_t head_dim_v);
/* whether layer il attends through the SWA cache (hparams.is_swa) */
int llm_layer_swa(const llm *c, int il);

/* build_attn for layer il: after llm_iswa_inp the iSWA form (the layer's
 * cache, Q, K, V expanded in that order), else llm_attn on c->kv.  Projects
 * by wo when it is not NULL. */
gg_tensor *llm_attn_il(llm *c, int il, gg_tensor *wo, gg_tensor *q, gg_tensor *k, gg_tensor *v,
                       gg_tensor *kq_b, gg_tensor *sinks, int soft_cap);

/* the iSWA build_attn without K and V (a layer reading another layer's
 * cache, gemma4's shared KV): Q against the whole cache of the layer's
 * kind, head_k x n_head_kv keys and head_v values per cell */
gg_tensor *llm_attn_read(llm *c, int swa, gg_tensor *wo, gg_tensor *q, int64_t head_k,
                         int64_t head_v, int64_t n_head_kv, gg_tensor *sinks, int soft_cap);

/* build_qkv: Q, K and V of layer il ([head, heads, tokens]).  A fused
 * attn_qkv.weight gives views of one product (its bias, or the three
 * separate biases concatenated); else three products, each with its bias
 * when the GGUF has one.  Without a tensor list (a config.json), `fused`
 * and `bias` say what the architecture has. */
void llm_qkv(llm *c, gg_tensor *cur, int il, int fused, int bias, gg_tensor **q,
             gg_tensor **k, gg_tensor **v);
/* build_qkv(..., reshape = false): [n_embd_q, tokens] and so on, the fused
 * product's views made contiguous */
void llm_qkv_flat(llm *c, gg_tensor *cur, int il, int fused, int bias, gg_tensor **q,
                  gg_tensor **k, gg_tensor **v);

/* build_norm with the weight and bias named BASE.weight and BASE.bias
 * ("blk.%d.attn_norm"), each where the GGUF has it; without a tensor list
 * (a config.json) w_dflt and b_dflt say whether they exist */
enum { LLM_RMS, LLM_LN };
gg_tensor *llm_norm_named(llm *c, gg_tensor *cur, int kind, const char *base, int il,
                          int w_dflt, int b_dflt);

/* build_ffn: up (and its bias), a parallel gate when the GGUF has
 * ffn_gate.weight (gate_dflt without a tensor list), the activation (a GLU
 * with a gate), down (skipped when !down) and its bias; biases where the
 * GGUF has them (bias_dflt) */
enum { LLM_SILU, LLM_GELU, LLM_RELU, LLM_RELU_SQR, LLM_SWIGLU, LLM_XIELU };
gg_tensor *llm_ffn(llm *c, gg_tensor *cur, int il, int64_t n_ff, int act, int gate_dflt,
                   int bias_dflt, int down);
/* the rows (ne1) of a 2-D GGUF tensor, 0 without one */
int64_t llm_tensor_rows(const llm *c, const char *fmt, int il);
/* layer il's FFN width: the row length of its ffn_down.weight, else dflt */
int64_t llm_ff_width(const llm *c, int il, int64_t dflt);

#endif
