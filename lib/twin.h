/* twin.h - llama.cpp's per-architecture facts, shared by the GGUF model
 * reader (gguf_model.c) and the shape-twin writer (twin*.c).
 *
 * Both sides must agree on how llama.cpp turns GGUF metadata into layer
 * kinds: which layers slide (load_swa_pattern and the arch's default
 * period), which are recurrent (the hybrid filters of create_memory), which
 * read the MLA keys, and which reuse another layer's cache.  Keeping those
 * rules in one table (twin_arch.c) means a twin written here reads back as
 * the model it came from, and both match what llama.cpp v0.5.0 does
 * (shared/reference/llamacpp-kv-rules.md sections 5 to 8). */
#ifndef KVP_TWIN_H
#define KVP_TWIN_H

#include <stddef.h>
#include <stdint.h>

#include "gguf.h"
#include "kvp_int.h"

/* How is_swa(il) is derived (reference section 5). */
typedef enum twin_swa_rule {
    SWA_NONE,         /* no sliding window, whatever the metadata says */
    SWA_PERIOD,       /* load_swa_pattern(period, dense_first) */
    SWA_PERIOD_IF_KEY,/* the same, only when attention.sliding_window > 0 */
    SWA_CHUNKED,      /* Llama 4: chunked 8192 unless sliding_window == 0 */
    SWA_ATTN_IF_KEY,  /* LFM2: every attention layer when sliding_window > 0 */
} twin_swa_rule;

/* Which layers are recurrent (reference section 7, hybrid filters). */
typedef enum twin_recr_rule {
    RECR_NONE,
    RECR_ALL,         /* mamba, mamba2, rwkv: every layer */
    RECR_KV0,         /* jamba, granitehybrid, lfm2: head_count_kv(il) == 0 */
    RECR_KV0_FF0,     /* nemotron_h: head_count_kv == 0 and feed_forward_length == 0 */
    RECR_INTERVAL,    /* GDN: recurrent_layers, else (i+1) % full_attention_interval */
    RECR_BOTH,        /* falcon-h1: every layer is attention and Mamba2 */
} twin_recr_rule;

/* Which GGUF keys carry the recurrent state (reference section 7). */
typedef enum twin_state_form {
    STATE_NONE,
    STATE_SSM,        /* ssm.conv_kernel / inner_size / state_size / group_count */
    STATE_SHORTCONV,  /* LFM2: conv of shortconv.l_cache over n_embd, no SSM state */
    STATE_RWKV,       /* token_shift_count x n_embd, n_embd x wkv.head_size */
    STATE_KDA,        /* Kimi Delta Attention: ssm.conv_kernel, kda.head_dim x n_head(0) */
    STATE_LA,         /* MiniMax-01 lightning attention: key_length x n_head(0), no conv */
} twin_state_form;

typedef struct twin_ctx twin_ctx;
typedef struct gguf_rd gguf_rd; /* the GGUF model reader's state (gguf_model.h) */

typedef struct twin_arch {
    const char *gguf;           /* general.architecture, as in src/llama-arch.cpp */
    const char *family;         /* kvplan's rule-set name (lib/arch.c) */
    twin_swa_rule swa;
    uint8_t swa_period, dense_first;
    uint32_t swa_default;       /* n_swa when the key is absent; 0: the key is required */
    twin_recr_rule recr;
    twin_state_form state;
    kvp_layer_kind recr_kind;   /* KVP_LAYER_MAMBA or KVP_LAYER_LINEAR */
    uint8_t mla;                /* reads attention.key_length_mla / value_length_mla */
    uint8_t embd_tied;          /* n_embd is pinned by other shapes: --kv-only keeps it;
                                   2: the vocabulary too (Chameleon's graph slices the
                                   logits of its 8196 image tokens) */
    int32_t kv_from_start;      /* layers >= this reuse an earlier cache; -1: none */
    /* writes the metadata that only this architecture reads; NULL: none */
    void (*meta)(twin_ctx *t);
    /* writes the tensor list of load_arch_tensors; NULL: reader only */
    void (*tensors)(twin_ctx *t);
    /* The reader's own rules for this architecture (gguf_model.h), for what
     * the fields above cannot say: `rules` runs once the generic rules have
     * decided which layers slide and recur (it may change them, n_swa or
     * kv_from), `finish` once the layers are built.  NULL: none. */
    int (*rules)(gguf_rd *r);
    int (*finish)(gguf_rd *r);
} twin_arch;

/* An architecture whose GGUFs the reader refuses (and says why in full),
 * with the short reason `kvplan archs --llama` prints. */
typedef struct twin_refusal {
    const char *gguf, *why;
} twin_refusal;

/* A family of llama.cpp architectures kept in a file of its own
 * (lib/llama/<group>.c): rows of this table and their writers.  Adding an
 * architecture is a row in one group. */
typedef struct twin_arch_group {
    const twin_arch *arches;
    size_t n;
    const struct twin_refusal *refused; /* {NULL, NULL} ends it; NULL: none */
} twin_arch_group;

extern const twin_arch_group twin_group_classic, twin_group_dense, twin_group_modern,
    twin_group_windows, twin_group_state, twin_group_indexed, twin_group_registry;

const twin_arch *twin_arch_find(const char *gguf_name);
/* The llama.cpp architecture for a model: gguf_arch when set, else mapped
 * from the config's model_type.  NULL when llama.cpp has none. */
const char *twin_gguf_name(const kvp_model *m);

/* Layer il of a model with n_layer trunk layers slides under period p. */
int twin_swa_by_period(uint32_t il, uint32_t period, int dense_first);

/* ---- the twin being written ------------------------------------------------ */

/* Everything the metadata and tensor writers need, resolved once from the
 * kvp_model (twin_plan.c): the shapes as llama.cpp will read them, with the
 * --kv-only shrinking already applied. */
struct twin_ctx {
    const kvp_model *m;
    const twin_arch *a;
    gguf_writer *w;
    int kv_only;
    char key[160];              /* scratch for "<arch>.<suffix>" */
    uint32_t n_layer;
    uint64_t n_embd, n_vocab, n_ff, n_ff_exp, n_ff_shexp;
    uint32_t n_expert, n_expert_used, n_expert_shared, n_dense_lead;
    uint32_t n_rot;
    /* attention, the values llama.cpp keeps globally */
    uint32_t n_head0, n_kv0, hk, hv, hk_swa, hv_swa, n_swa;
    /* MLA */
    uint32_t kv_lora_rank, q_lora_rank, mla_rope, mla_k, mla_v;
    /* recurrent state, shared by every recurrent layer */
    uint32_t d_conv, d_state, n_group, dt_rank;
    uint64_t d_inner;
    /* per layer */
    uint32_t *n_head, *n_kv, *lhk, *lhv;
    uint64_t *ff;               /* per-layer FFN width (nemotron_h MLP layers) */
    uint8_t *is_attn, *is_swa, *is_recr;
    uint32_t *tmp;              /* n_layer scratch values for per-layer keys */
    /* tensor bytes written so far (the data section, unpadded) */
    uint64_t bytes;
    /* Attention layers whose head counts differ from the first one's: the
     * first such layer + 1 (0: none).  Most load_arch_tensors size every
     * layer from layer 0's counts, so kvp_twin_write refuses such a model
     * unless the architecture's meta writer sets per_layer_heads (its
     * tensors are sized from n_head(il) / n_head_kv(il)). */
    uint32_t heads_vary_at;
    uint8_t per_layer_heads;
    /* TWIN_KV_FROM_MODEL architectures: the first layer that reuses an
     * earlier cache (n_layer when none does) */
    uint32_t kv_from;
};

/* twin_plan.c: fills t from m; 0 or -1 with err set. */
int twin_plan(twin_ctx *t, const kvp_model *m, const twin_arch *a, int kv_only, kvp_error *err);
void twin_plan_free(twin_ctx *t);

/* twin_meta.c: the metadata every architecture shares, then a->meta. */
void twin_meta(twin_ctx *t);
/* "<arch>.<suffix>" in t->key */
const char *twin_key(twin_ctx *t, const char *suffix);

/* twin_tensors.c: one tensor; name may hold one %d (the layer, il >= 0).
 * 1-D tensors and those marked f32 are F32, the rest F16. */
void twin_tensor(twin_ctx *t, int il, const char *name, int f32, uint64_t ne0, uint64_t ne1,
                 uint64_t ne2);
/* Building blocks most architectures share (twin_tensors.c). */
enum { TW_NO_OUTPUT, TW_OUTPUT };
void twin_t_embd(twin_ctx *t, int output, const char *output_norm);
void twin_t_norm(twin_ctx *t, int il, const char *name);
void twin_t_qkvo(twin_ctx *t, int il, uint64_t q, uint64_t k, uint64_t v, uint64_t o_in);
void twin_t_ffn(twin_ctx *t, int il, uint64_t ff);
void twin_t_moe(twin_ctx *t, int il, uint64_t ff_exp);
void twin_t_shexp(twin_ctx *t, int il, uint64_t ff_shexp);
/* q and o of n_head x head_k, k and v of n_kv x head */
void twin_t_gqa(twin_ctx *t, int il);
/* the same with q and o pinned to n_embd (rows that set embd_tied) */
void twin_t_gqa_embd(twin_ctx *t, int il);
/* per-head q and k RMS norms */
void twin_t_qk_norm(twin_ctx *t, int il);

/* The per-architecture metadata (twin_meta.c) and tensor lists
 * (twin_tensors*.c) the table refers to. */
void twin_meta_qwen35(twin_ctx *t);
void twin_meta_llama4(twin_ctx *t);
void twin_meta_cohere2(twin_ctx *t);
void twin_meta_deepseek2(twin_ctx *t);
void twin_meta_lfm2(twin_ctx *t);
void twin_meta_minimax_m2(twin_ctx *t);

void twin_tensors_llama(twin_ctx *t);
void twin_tensors_qwen2(twin_ctx *t);
void twin_tensors_qwen3(twin_ctx *t);
void twin_tensors_qwen3moe(twin_ctx *t);
void twin_tensors_qwen2moe(twin_ctx *t);
void twin_tensors_gemma2(twin_ctx *t);
void twin_tensors_gemma3(twin_ctx *t);
void twin_tensors_gemma3n(twin_ctx *t);
void twin_tensors_cohere2(twin_ctx *t);
void twin_tensors_gpt_oss(twin_ctx *t);
void twin_tensors_llama4(twin_ctx *t);
void twin_tensors_phi3(twin_ctx *t);
void twin_tensors_olmo2(twin_ctx *t);
void twin_tensors_glm4moe(twin_ctx *t);
void twin_tensors_minimax_m2(twin_ctx *t);
void twin_tensors_deepseek2(twin_ctx *t);
void twin_tensors_qwen3next(twin_ctx *t);
void twin_tensors_qwen35(twin_ctx *t);
void twin_tensors_qwen35moe(twin_ctx *t);
void twin_tensors_mamba(twin_ctx *t);
void twin_tensors_mamba2(twin_ctx *t);
void twin_tensors_jamba(twin_ctx *t);
void twin_tensors_falcon_h1(twin_ctx *t);
void twin_tensors_granitehybrid(twin_ctx *t);
void twin_tensors_nemotron_h(twin_ctx *t);
void twin_tensors_lfm2(twin_ctx *t);

/* twin_tensors_ssm.c: one Mamba2 mixer (ssm_in, conv, dt, A, D, norm, out),
 * for the state group's writers (lib/llama/state.c). */
void twin_t_mamba2(twin_ctx *t, int il);

/* twin_arch.kv_from_start for an architecture that reads where sharing
 * starts from its metadata (gemma4: n_layer - attention.shared_kv_layers):
 * the reader's `rules` hook sets gguf_rd.kv_from, and the twin's first
 * shared layer (twin_ctx.kv_from) is what its meta writer writes. */
#define TWIN_KV_FROM_MODEL (-2)

/* lib/llama/windows.c: the writers of the core cohere2moe row */
void twin_meta_cohere2moe(twin_ctx *t);
void twin_tensors_cohere2moe(twin_ctx *t);

#endif
