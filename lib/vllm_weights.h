/* vllm_weights.h - the weights vLLM keeps in GPU memory on one rank, from
 * config.json alone (lib/vllm_weights.c).  The vLLM runtime subtracts them
 * from the memory budget when no startup log gives "Model loading took". */
#ifndef KVP_VLLM_WEIGHTS_H
#define KVP_VLLM_WEIGHTS_H

#include "kvp_int.h"

/* How far a figure can be trusted. */
enum {
    KVP_WX_EXACT,    /* tensor for tensor, as vLLM allocates it */
    KVP_WX_SCALARS,  /* exact but for per-tensor scalars and scale re-layouts (< 0.1 %) */
    KVP_WX_ESTIMATE  /* a kernel re-lays the tensors out: a measured factor (note says) */
};

typedef struct kvp_vllm_weights_t {
    uint64_t bytes;                /* the largest rank's weights and buffers, tower excluded */
    uint64_t cat_bytes[KVP_WC_N];  /* the same rank's, by kind (kvp_wcat) */
    uint8_t cat_exact[KVP_WC_N];   /* KVP_WX_* of each kind */
    int exact;                     /* KVP_WX_* of the total: the worst kind's */
    uint32_t stage;                /* that rank's pipeline stage */
    uint64_t encoder_bytes;        /* the vision/audio tower on that rank (stage 0); 0 when
                                    * none or not counted */
    int encoder_exact;             /* KVP_WX_* of encoder_bytes */
    int encoder_uncounted;         /* the config has a tower kvplan cannot count: vLLM loads
                                    * it (unless text-only mode) and it is not in bytes */
    uint64_t checkpoint_bytes;     /* the language model's weights as the checkpoint stores
                                    * them: one copy, no TP, no padding, no buffers */
    double relayout;               /* factor applied to re-laid-out experts; 1 if none */
    char note[320];                /* what was assumed, one line */
} kvp_vllm_weights_t;

/* The weights on the largest rank of a tp x pp deployment on a GPU of
 * compute capability sm (80 A100, 89 L40S, 90 H100, 100 B200; 0: assume
 * 90).  Fails (KVP_EINPUT, one line) when the weights are unknown: a
 * quantization method kvplan cannot size, an architecture whose tensors
 * params.c cannot list, a GGUF; KVP_EUSAGE for tp or pp out of range. */
int kvp_vllm_weights(const kvp_model *m, uint32_t tp, uint32_t pp, int sm,
                     kvp_vllm_weights_t *out, kvp_error *err);
/* The same for release 0.minor (kvp_vllm_weights: the newest): kernels, and
 * so re-layouts, change between releases. */
int kvp_vllm_weights_at(const kvp_model *m, uint32_t tp, uint32_t pp, int sm, int minor,
                        kvp_vllm_weights_t *out, kvp_error *err);

#endif
