/* hfconfig.h - the building blocks of hfconfig.c (config.json -> per-layer
 * model), for the architectures in lib/hf/ whose layout no rule of arch.h
 * describes: such an architecture sets arch_def.read, and its reader calls
 * these in the order hfconfig.c does (layer count, kinds, shapes).  Every
 * function records where its numbers came from, and returns 0 or -1 with
 * c->err set. */
#ifndef KVP_HFCONFIG_H
#define KVP_HFCONFIG_H

#include "cfg.h"

/* Sets the layer count and allocates the layers (each shared_from = -1). */
int hf_layers(cfg *c, uint32_t n);

/* layer_types, when the config has it ("full_attention", "sliding_attention",
 * "linear_attention", "mamba", ...): *found says whether it did. */
int hf_kinds_from_layer_types(cfg *c, int *found);
int hf_kind_from_name(const char *s, kvp_layer_kind *k);
/* layer i full iff (i+1) % period == 0, else `other`; the period from key
 * (or alt); rule is the provenance text. */
int hf_kinds_every(cfg *c, const char *key, const char *alt, kvp_layer_kind other,
                   const char *rule);
/* The kinds by c->arch->layout (layer_types first), as for a standard row. */
int hf_kinds(cfg *c);

/* One layer's shape, read as the standard rows read it: attention heads,
 * KV heads and head dim (per-layer arrays allowed) with its window; the MLA
 * latent; a Gated DeltaNet state; a Mamba state by c->arch->layout; the
 * state dtypes (mamba_ssm_dtype). */
int hf_read_attention(cfg *c, uint32_t il, kvp_layer *L);
int hf_read_mla(cfg *c, kvp_layer *L);
int hf_read_gdn(cfg *c, kvp_layer *L);
int hf_read_mamba(cfg *c, kvp_layer *L);
int hf_state_dtypes(cfg *c, kvp_layer *L);
/* Every layer's shape by its kind, as for a standard row. */
int hf_shapes(cfg *c);

#endif
