/* arch.h - the architectures whose reserved graph kvplan rebuilds, one
 * builder per family of llama.cpp's src/models/ files.  To add one: a
 * file arch_<family>.c with a `handles` and a `build`, and a row in
 * compute.c's table. */
#ifndef KVP_GRAPH_ARCH_H
#define KVP_GRAPH_ARCH_H

#include "llm.h"

/* What a build returns for a variant of a handled architecture (a setting,
 * an optional tensor) it cannot rebuild exactly: compute.c falls back to
 * the labelled estimate, never to a wrong "exact" figure. */
enum { ARCH_NOT_MODELLED = 2 };

int arch_dense_handles(const char *arch);
int arch_dense_build(llm *c);
int arch_gemma_handles(const char *arch);
int arch_gemma_build(llm *c);
int arch_decoder_handles(const char *arch);
int arch_decoder_build(llm *c);

int arch_moe_handles(const char *arch);
int arch_moe_build(llm *c);

int arch_mla_handles(const char *arch);
int arch_mla_build(llm *c);
int arch_dsa_handles(const char *arch);
int arch_dsa_build(llm *c);
int arch_dots3_handles(const char *arch);
int arch_dots3_build(llm *c);
int arch_hy4_handles(const char *arch);
int arch_hy4_build(llm *c);
int arch_minicpm3_handles(const char *arch);
int arch_minicpm3_build(llm *c);


int arch_ssm_handles(const char *arch);     /* mamba, mamba2 */
int arch_ssm_build(llm *c);
int arch_deltanet_handles(const char *arch); /* qwen35, qwen35moe, qwen3next */
int arch_deltanet_build(llm *c);
/* falcon-h1, nemotron_h(_moe), granitehybrid, jamba, lfm2(moe), plamo2 */
int arch_hybrid_handles(const char *arch);
int arch_hybrid_build(llm *c);
int arch_rwkv_handles(const char *arch);     /* rwkv6, rwkv6qwen2, rwkv7, arwkv7 */
int arch_rwkv_build(llm *c);
int arch_lightning_handles(const char *arch); /* minimax-01 */
int arch_lightning_build(llm *c);
int arch_kda_handles(const char *arch);       /* kimi-linear */
int arch_kda_build(llm *c);

#endif
