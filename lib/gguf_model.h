/* gguf_model.h - the GGUF model reader's state (gguf_model.c), for the
 * per-architecture rules of lib/llama/ (twin_arch.rules and .finish): the
 * metadata, what the generic rules decided per layer, and typed access to
 * "<arch>.<suffix>" keys the way llama.cpp's load_hparams reads them. */
#ifndef KVP_GGUF_MODEL_H
#define KVP_GGUF_MODEL_H

#include "twin.h"

struct gguf_rd {
    const gguf_file *f;
    const twin_arch *a;
    const char *path;
    kvp_error *err;
    kvp_model *m;               /* n_layers (trunk), hidden_size, ... */
    char arch[48];              /* general.architecture */
    char key[160];              /* scratch for gguf_rd_key */
    uint32_t n_all;             /* block_count: trunk + nextn layers */
    uint64_t n_swa;             /* the window (or chunk) of sliding layers */
    int32_t kv_from;            /* layers >= this reuse an earlier cache; -1: none */
    /* per layer, over n_all */
    uint32_t *n_head, *n_kv, *ff;
    uint8_t *is_swa, *is_recr;
};

/* "<arch>.<suffix>", in r->key. */
const char *gguf_rd_key(gguf_rd *r, const char *suffix);
/* An integer key "<arch>.suffix" in [0, hi]; absent: dflt, *found 0. */
int gguf_rd_u(gguf_rd *r, const char *suffix, uint64_t dflt, uint64_t hi, uint64_t *out,
              int *found);
int gguf_rd_opt(gguf_rd *r, const char *suffix, uint64_t dflt, uint64_t hi, uint64_t *out);
int gguf_rd_need(gguf_rd *r, const char *suffix, uint64_t hi, uint64_t *out);
/* A per-layer key as get_key_or_arr reads it: a scalar for every layer or an
 * array of n_all values.  Absent: vals untouched, *found 0. */
int gguf_rd_layers(gguf_rd *r, const char *suffix, uint64_t hi, uint32_t *vals, int *found);
/* load_swa_pattern: the bool array, else the period key, else the
 * architecture's default period, into r->is_swa. */
int gguf_rd_swa_pattern(gguf_rd *r);

#endif
