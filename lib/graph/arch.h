/* arch.h - the architectures whose reserved graph kvplan rebuilds, one
 * builder per family of llama.cpp's src/models/ files.  To add one: a
 * file arch_<family>.c with a `handles` and a `build`, and a row in
 * compute.c's table. */
#ifndef KVP_GRAPH_ARCH_H
#define KVP_GRAPH_ARCH_H

#include "llm.h"

int arch_dense_handles(const char *arch);
int arch_dense_build(llm *c);

/* A build may return this for a variant of a handled architecture it
 * cannot rebuild exactly: compute.c reports "not modelled". */
enum { ARCH_NOT_MODELLED = 2 };

int arch_moe_handles(const char *arch);
int arch_moe_build(llm *c);

#endif
