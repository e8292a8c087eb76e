/* llm_moe.h - llama.cpp's mixture-of-experts FFN (build_moe_ffn in
 * src/llama-graph.cpp of llama.cpp v0.5.0): the router's logits, the
 * gating (softmax, sigmoid, ...), top-k by argsort, the selected weights
 * (normalised, scaled), the experts' up/gate/down by mul_mat_id, the
 * weighting and the view-and-add reduction over the used experts.  The
 * shared-expert FFNs architectures add around it are plain build_ffn
 * calls (llm.h). */
#ifndef KVP_GRAPH_LLM_MOE_H
#define KVP_GRAPH_LLM_MOE_H

#include "llm.h"

enum { LLM_MOE_MAX_USED = 256 };   /* experts summed per token that are modelled */

/* llama_expert_gating_func_type (src/llama-hparams.h) */
typedef enum llm_moe_gating {
    LLM_MOE_GATING_NONE = 0,
    LLM_MOE_SOFTMAX = 1,
    LLM_MOE_SIGMOID = 2,
    LLM_MOE_SOFTMAX_WEIGHT = 3,   /* softmax over the selected weights only */
    LLM_MOE_SQRT_SOFTPLUS = 4
} llm_moe_gating;

/* the experts' activation (llm_ffn_op_type) */
typedef enum llm_moe_act {
    LLM_MOE_SILU, LLM_MOE_GELU, LLM_MOE_RELU, LLM_MOE_RELU_SQR, LLM_MOE_SWIGLU_OAI
} llm_moe_act;

typedef struct llm_moe {
    int64_t n_expert, n_expert_used;
    int64_t n_ff;             /* one expert's FFN width */
    llm_moe_gating gating;
    llm_moe_act act;
    int norm_w;               /* the selected weights divided by their sum */
    int scale_w;              /* a weight scale other than 0 and 1 */
    int gate_inp_b;           /* a bias on the router's logits */
    int exp_probs_b;          /* a selection bias on the probabilities */
    int gate_exps;            /* separate gate experts; 0: up only (no GLU) */
    int gate_up_exps;         /* merged gate+up experts */
    int up_b, gate_b, down_b; /* per-expert biases (add_id) */
    int64_t n_groups, n_group_used; /* group-limited routing when n_groups > 1 */
    int clamp;                /* swiglu_clamp_exp of this layer is set */
    int weight_before_ffn;    /* Llama 4: weights applied to the input */
    int64_t n_used_sum;       /* experts summed in the reduction (per-layer
                                 n_expert_used); 0: n_expert_used */
    gg_tensor *probs_in;      /* router logits computed by the caller (no router matmul) */
    int grove;                /* GroveMoE: selection by sigmoid(logits); chunk experts
                                 (n_expert below n_expert_full) map the selection back */
    int64_t n_expert_full;    /* the model's n_expert, for GroveMoE's chunk experts */
} llm_moe;

/* build_moe_ffn on cur [n_embd, n_tokens]: the reduced expert output */
gg_tensor *llm_moe_ffn(llm *c, gg_tensor *cur, const llm_moe *p);

/* ops build_moe_ffn uses that llm.h does not */
gg_tensor *llm_argsort_top_k(llm *c, gg_tensor *a, int64_t k);
gg_tensor *llm_sum_rows(llm *c, gg_tensor *a);

#endif
