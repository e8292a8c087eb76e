/* arch_moe.h - what the MoE family's files (arch_moe*.c) share: the
 * layer pieces their llama.cpp graphs have in common (inputs, build_qkv,
 * build_attn, the output) and the routing settings read from the GGUF,
 * and each file's builders for arch_moe.c's table.  Internal to
 * lib/graph/. */
#ifndef KVP_GRAPH_ARCH_MOE_H
#define KVP_GRAPH_ARCH_MOE_H

#include "arch.h"
#include "llm_hparams.h"
#include "llm_moe.h"

/* a 1-d weight (norm weights, biases) */
gg_tensor *moe_vec(llm *c, int64_t n);
/* whether the GGUF has the tensor; dflt for a config.json */
int moe_has(llm *c, const char *fmt, int il, int dflt);
const char *moe_arch_of(const llm *c);
/* build_inp_embd, build_inp_pos, build_attn_inp_kv, build_inp_out_ids */
gg_tensor *moe_begin(llm *c);
/* the output RMS norm and the logits, both outputs */
int moe_finish(llm *c, gg_tensor *cur);
/* build_qkv (fused or separate, biases where the GGUF has them), reshaped
 * to heads unless flat; moe_qkv_clamp with f_clamp_kqv set */
void moe_qkv(llm *c, gg_tensor *cur, int il, int flat, gg_tensor **q, gg_tensor **k,
             gg_tensor **v);
void moe_qkv_clamp(llm *c, gg_tensor *cur, int il, int flat, int clamp, gg_tensor **q,
                   gg_tensor **k, gg_tensor **v);
/* build_attn and the output projection, with its bias where the GGUF has
 * one (moe_attn) or only when wo_b (moe_attn_b: graphs that pass NULL) */
gg_tensor *moe_attn(llm *c, int il, gg_tensor *q, gg_tensor *k, gg_tensor *v);
gg_tensor *moe_attn_b(llm *c, int il, gg_tensor *q, gg_tensor *k, gg_tensor *v, int wo_b);
/* build_moe_ffn's arguments most graphs pass: SwiGLU experts n_ff_exp wide
 * (else n_ff / n_expert_used), softmax, the model's group routing */
void moe_defaults(llm *c, llm_moe *p);
/* expert_weights_norm, expert_weights_scale, expert_gating_func */
void moe_keys(llm *c, llm_moe *p);
llm_moe_gating moe_gating_key(const llm *c);
int moe_gating_ok(const llm_moe *p);
/* what every MoE builder needs (experts, no NVFP4 scales, no per-layer
 * expert counts or widths) */
int moe_fits(const llm *c);

/* arch_moe_qwen.c */
int moe_build_qwen(llm *c);
/* arch_moe_shared.c */
int moe_build_ernie(llm *c);
int moe_build_deepseek(llm *c);
int moe_build_dots1(llm *c);
int moe_build_bailingmoe(llm *c);
int moe_build_bailingmoe2(llm *c);
int moe_build_glm4moe(llm *c);
int moe_build_hunyuan_moe(llm *c);
/* arch_moe_other.c */
int moe_build_granitemoe(llm *c);
int moe_build_phimoe(llm *c);
int moe_build_grovemoe(llm *c);
int moe_build_arctic(llm *c);
int moe_build_dbrx(llm *c);
int moe_build_smallthinker(llm *c);
int moe_build_llama4(llm *c);
int moe_build_grok(llm *c);

#endif
