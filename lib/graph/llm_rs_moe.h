/* llm_rs_moe.h - llm_graph_context::build_moe_ffn (src/llama-graph.cpp) for
 * the MoE FFNs of the recurrent hybrids (qwen3next, qwen35moe, jamba,
 * granitehybrid, nemotron_h_moe, lfm2moe).  A general MoE builder is
 * written on a parallel branch (llm_moe.c); this one covers what these
 * architectures call: softmax or sigmoid gating, an optional selection
 * bias, normalized weights, gated SiLU or ungated squared-ReLU experts,
 * separate or merged gate/up experts.  No expert groups, no weights
 * before the FFN (Llama 4), no expert biases.
 *
 * The weights' scale (expert_weights_scale) is an in-place scale of a
 * tensor with one consumer: it moves no offset and is left out. */
#ifndef KVP_GRAPH_LLM_RS_MOE_H
#define KVP_GRAPH_LLM_RS_MOE_H

#include "llm.h"

enum { LLM_MOE_SOFTMAX, LLM_MOE_SIGMOID };
enum { LLM_MOE_SILU, LLM_MOE_RELU_SQR };

typedef struct llm_moe {
    int64_t n_expert, n_expert_used, n_ff;
    int gating;          /* LLM_MOE_SOFTMAX / _SIGMOID */
    int probs_b;         /* exp_probs_b: a selection bias */
    int norm_w;          /* normalize the selected weights */
    int act;             /* LLM_MOE_SILU (with gate experts) / _RELU_SQR (no gate) */
    int gate_up;         /* one merged gate_up expert tensor */
} llm_moe;

/* the shapes of layer il's experts from the GGUF's tensor list, else the
 * model's (n_expert, n_expert_used, n_ff_exp); gating etc. are the
 * caller's */
void llm_moe_shapes(const llm *c, int il, llm_moe *a);

/* build_moe_ffn over cur {n_embd, n_tokens}; probs_in: router logits the
 * caller computed (NULL: the gate_inp projection here) */
gg_tensor *llm_rs_moe_ffn(llm *c, gg_tensor *cur, const llm_moe *a, gg_tensor *probs_in);

#endif
