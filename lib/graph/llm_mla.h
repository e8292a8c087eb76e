/* llm_mla.h - multi-head latent attention as llama.cpp builds it
 * (src/llama-graph.cpp, src/models/deepseek2.cpp of llama.cpp v0.5.0):
 * the K-only cache that holds one latent row per token (kv_lora_rank plus
 * the rope part), V a view of that latent, attention as MQA over it, and
 * the absorbed V projection (v_mla) applied after the attention.  Also
 * DeepSeek's expert FFN (llm_moe_ds.c), which the MLA architectures share. */
#ifndef KVP_GRAPH_LLM_MLA_H
#define KVP_GRAPH_LLM_MLA_H

#include "llm.h"

/* build_attn_inp_k: the K scatter indices and the KQ mask of a K-only
 * cache (no V indices, no Hadamard rotations) */
void mla_attn_inp_k(llm *c, llm_cache *kv);

/* build_attn_mha with v_mla: the attention over the latent, then (when
 * v_mla is not NULL) the per-head decompression by v_mla */
gg_tensor *mla_attn_mha(llm *c, gg_tensor *q, gg_tensor *k, gg_tensor *v, gg_tensor *kq_b,
                        gg_tensor *mask, gg_tensor *sinks, gg_tensor *v_mla);

/* build_attn for llm_graph_input_attn_k: stores K, reads the whole cache,
 * V is the first v->ne[0] values of each K row; projects by wo */
gg_tensor *mla_attn_k(llm *c, llm_cache *kv, gg_tensor *wo, gg_tensor *q, gg_tensor *k,
                      gg_tensor *v, gg_tensor *v_mla);

/* the shapes of one MLA layer */
typedef struct mla_dims {
    int64_t n_head;
    int64_t head_k;       /* n_embd_head_k_mla: nope + rope (192) */
    int64_t head_v;       /* n_embd_head_v_mla (128) */
    int64_t rope;         /* n_rot: the rope part of K and Q (64) */
    int64_t kv_lora_rank; /* the latent without its rope part (512) */
    int64_t q_lora_rank;  /* 0: one Q projection (the "lite" models) */
} mla_dims;

/* the layer's MLA dimensions from the model (0 when it is not MLA) */
int mla_layer_dims(const llm *c, const kvp_layer *L, mla_dims *d);

/* deepseek2's absorbed self-attention of one layer, from the attention
 * norm's output to the output projection: Q (one projection or the LoRA
 * pair with its norm), the compressed KV and its rope part, Q's nope part
 * absorbed by wk_b, attention over the K-only cache, wv_b, wo.
 * attn_scale: the temperature-tuning input (or NULL). */
gg_tensor *mla_self_attn(llm *c, llm_cache *kv, const mla_dims *d, gg_tensor *cur,
                         gg_tensor *attn_scale);

/* the same without the absorption (legacy GGUFs with the unsplit wkv_b):
 * wkv_b expands the latent into per-head K and V, K's rope part is
 * repeated for every head, and an ordinary K/V cache holds them
 * (build_attn over llm_graph_input_attn_kv) */
gg_tensor *mla_self_attn_mha(llm *c, llm_cache *kv, const mla_dims *d, gg_tensor *cur,
                             gg_tensor *attn_scale);

/* DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): a lightning indexer
 * scores every cached token with keys of its own (the "kv_idx" cache) and
 * the MLA attention keeps only the top-k of them (a mask built per layer) */
typedef struct dsa_dims {
    int64_t n_head;   /* indexer heads */
    int64_t head;     /* indexer key length */
    int64_t top_k;
    int no_rot;       /* hy_v4: no Hadamard rotation of the indexer's Q and K */
} dsa_dims;

/* build_attn_inp_k_dsa: the latent cache's inputs, then the indexer's */
void dsa_attn_inp(llm *c, llm_cache *kv, llm_cache *idx, int64_t idx_head);
/* the lightning indexer of one layer (fused, as on the CPU): the top-k
 * cells per token */
gg_tensor *dsa_indexer(llm *c, llm_cache *idx, const dsa_dims *d, gg_tensor *qr,
                       gg_tensor *cur);
/* build_attn for llm_graph_input_attn_k_dsa: the mask keeps top_k's cells */
gg_tensor *dsa_attn_k(llm *c, llm_cache *kv, gg_tensor *wo, gg_tensor *q, gg_tensor *k,
                      gg_tensor *v, gg_tensor *v_mla, gg_tensor *top_k);
/* deepseek32's (and glm-dsa's) attention block: Q's LoRA, the indexer when
 * x is not NULL (a full indexer layer; *top_k is set), MLA over the cache
 * with the top-k mask (*top_k, a previous layer's for a shared layer) */
gg_tensor *dsa_self_attn(llm *c, const mla_dims *d, const dsa_dims *x, gg_tensor *cur,
                         gg_tensor **top_k);

/* DeepSeek's routed experts (build_moe_ffn with the options the MLA
 * architectures use).  Another builder has the generic build_moe_ffn;
 * this is the same function, to be unified with it. */
typedef struct ds_moe {
    int64_t n_expert, n_expert_used, n_ff_exp;
    int gating;             /* llama_expert_gating_func_type: 1 softmax, 2 sigmoid,
                               3 softmax on the selected weights */
    int probs_b;            /* exp_probs_b: a selection bias (DeepSeek V3) */
    int64_t n_groups;       /* expert groups (> 1: group-limited routing) */
    int64_t n_group_used;
    int norm_w;             /* normalise the selected weights */
    int scale_w;            /* expert_weights_scale is neither 0 nor 1 */
    int gate_up;            /* one fused gate_up_exps tensor */
} ds_moe;

gg_tensor *ds_moe_ffn(llm *c, gg_tensor *cur, const ds_moe *p);

#endif
