/* kvplan.h - public API of libkvplan.
 *
 * libkvplan predicts, without loading weights, how much memory an LLM's KV
 * cache and recurrent state take.  A model from any source (config.json, the
 * built-in catalog, the Hugging Face cache) is normalized into one per-layer
 * description (kvp_model); runtimes (theory, and later llama.cpp, vLLM) turn
 * that description plus settings into byte counts.
 *
 * Conventions: every byte count is an exact uint64_t; every function that can
 * fail returns 0 on success and -1 on failure, with a one-line message that
 * names the input in the kvp_error it was given.  The structs below are
 * read-only for callers: build them with the functions, free with *_free. */
#ifndef KVPLAN_H
#define KVPLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KVPLAN_VERSION "0.1.0"
#define KVPLAN_JSON_SCHEMA 1

/* ---- errors -------------------------------------------------------------- */

enum { KVP_OK = 0, KVP_EINPUT = 1, KVP_EUSAGE = 2 };

typedef struct kvp_error {
    int code;          /* KVP_EINPUT (bad input) or KVP_EUSAGE (bad usage) */
    char msg[1024];    /* one line, names the input and the problem */
} kvp_error;

/* ---- cache / state element types ----------------------------------------- */

typedef enum kvp_dtype {
    KVP_F32, KVP_F16, KVP_BF16, KVP_FP8,
    KVP_Q8_0, KVP_Q4_0, KVP_Q4_1, KVP_Q5_0, KVP_Q5_1, KVP_IQ4_NL,
    KVP_NVFP4,   /* 4-bit values + an fp8 scale per 16: 9 bytes per 16 (vLLM's nvfp4) */
    KVP_KIVI2,   /* 2-bit values + fp16 scale and zero per 32: 12 bytes per 32 (KIVI; theory only) */
    KVP_DTYPE_COUNT
} kvp_dtype;

const char *kvp_dtype_name(kvp_dtype t);
/* Accepts the names above (case-insensitive) plus aliases such as
 * fp8_e4m3, fp8_e5m2, float16, bfloat16, float32. */
int kvp_dtype_parse(const char *s, kvp_dtype *out);
unsigned kvp_dtype_block(kvp_dtype t);        /* values per block (1, 16 or 32) */
unsigned kvp_dtype_block_bytes(kvp_dtype t);  /* bytes per block */
/* Bytes of a row of n values; fails if n is not a whole number of blocks. */
int kvp_dtype_row_bytes(kvp_dtype t, uint64_t n, uint64_t *out);

/* ---- the normalized per-layer model -------------------------------------- */

typedef enum kvp_layer_kind {
    KVP_LAYER_FULL,      /* full attention (MHA/GQA/MQA) */
    KVP_LAYER_SLIDING,   /* sliding-window attention, window W */
    KVP_LAYER_CHUNKED,   /* chunked local attention, chunk C */
    KVP_LAYER_MLA,       /* multi-head latent attention: one latent per token */
    KVP_LAYER_LINEAR,    /* linear attention (Gated DeltaNet): fixed state */
    KVP_LAYER_MAMBA,     /* Mamba / Mamba2 SSM: fixed state */
    KVP_LAYER_SHARED,    /* reuses an earlier layer's cache */
    KVP_LAYER_NONE,      /* no cache at all (MLP-only block) */
    KVP_LAYER_CROSS,     /* cross-attention to an encoder's output (Mllama's image
                            tokens): `window` cells per sequence, whatever the text */
    KVP_LAYER_KIND_COUNT
} kvp_layer_kind;

const char *kvp_layer_kind_name(kvp_layer_kind k);

typedef struct kvp_layer {
    kvp_layer_kind kind;
    /* attention kinds (full, sliding, chunked, mla) */
    uint32_t n_head;       /* query heads (0 for layers without attention) */
    uint32_t n_kv_heads;   /* MLA: 1 (the latent) */
    uint32_t head_dim_k;   /* MLA: kv_lora_rank + qk_rope_head_dim */
    uint32_t head_dim_v;   /* MLA: 0 (V is a view of the latent) */
    uint32_t window;       /* sliding window or chunk size; cross-attention: the
                              encoder tokens one sequence attends to; 0 otherwise */
    /* MLA only: what a converter that expands the latent would store, and
     * the rope part of the latent (kv_lora_rank = head_dim_k - mla_rope_dim).
     * A sliding layer with mla_heads set and head_dim_v 0 caches an MLA
     * latent too (dots.3-note's sliding layers, a rank of their own). */
    uint32_t mla_heads, mla_k_head_dim, mla_v_head_dim, mla_rope_dim;
    /* state kinds (linear, mamba): conv state (d_conv-1) x (d_inner +
     * 2 n_group d_state) and SSM state d_inner x d_state, the common form of
     * Mamba1 (n_group 0), Mamba2 and Gated DeltaNet (d_inner = Hv x Dv,
     * n_group = Hk, d_state = Dk).  A layer of another kind may carry a
     * state too (Falcon-H1 runs attention and Mamba2 side by side): the state
     * counts wherever d_inner is non-zero. */
    uint32_t d_conv, d_state, n_group;
    uint64_t d_inner;
    uint32_t n_ssm_heads;  /* SSM / value heads (Mamba2, GDN); 0 when unknown */
    kvp_dtype conv_dtype, ssm_dtype;
    int32_t shared_from;   /* KVP_LAYER_SHARED: source layer; else -1 */
    /* A packed cache layout that fixes the bytes of one KV head's K and V
     * for one token (vLLM's TurboQuant slot, kvp_vllm_turboquant); 0: the
     * runtime's cache types price the rows. */
    uint32_t kv_slot_bytes;
    /* DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5,
     * MiniMax-M3's MSA): the layer also caches one indexer key of this many
     * values per token, a single head, beside its own K/V or latent; 0 when
     * the layer has no indexer.  Theory and llama.cpp price it in the K
     * cache type (llama.cpp keeps it in a cache of its own); vLLM stores it
     * as fp8 values plus an fp32 scale per 128 (DeepseekV32IndexerCache). */
    uint32_t indexer_head_dim;
    /* Qwen4-Exp's per-layer embedding (PLE): the layer also keeps, per
     * sequence, the history of the PLE's dilated convolution, this many
     * values ((ple_conv_kernel_size - 1) x ngram_size x hc_count x
     * hidden_size), in conv_dtype (llama.cpp: the f32 "P" row of its
     * recurrent cache); 0 when the layer has none. */
    uint64_t ple_conv_state;
} kvp_layer;

/* ---- a checkpoint's quantization (config.json quantization_config) ------- */

/* What vLLM keeps in GPU memory depends on it (lib/vllm_weights.c). */
typedef enum kvp_qmethod {
    KVP_QM_NONE, KVP_QM_FP8, KVP_QM_AWQ, KVP_QM_GPTQ, KVP_QM_CT, KVP_QM_MODELOPT,
    KVP_QM_MXFP4, KVP_QM_BNB, KVP_QM_UNKNOWN /* weights unknown: quant.why says why */
} kvp_qmethod;
/* How one quantized weight is stored. */
typedef enum kvp_qformat {
    KVP_QF_NONE,  /* not quantized: the model dtype */
    KVP_QF_INT,   /* bits-wide integers packed in int32; a scale per group or row */
    KVP_QF_FP8,   /* one byte; fp32 scales per tensor, row or block */
    KVP_QF_NVFP4, /* two per byte; an fp8 scale per 16, fp32 global scales */
    KVP_QF_MXFP4, /* two per byte; an e8m0 scale per 32 */
    KVP_QF_BNB4,  /* bitsandbytes nf4/fp4: absmax per 64 */
    KVP_QF_BNB8   /* bitsandbytes LLM.int8: an fp32 scale per row */
} kvp_qformat;
typedef enum kvp_qstrategy { KVP_QS_TENSOR, KVP_QS_CHANNEL, KVP_QS_GROUP, KVP_QS_BLOCK } kvp_qstrategy;
typedef struct kvp_qscheme {
    uint8_t format;      /* kvp_qformat */
    uint8_t bits;        /* KVP_QF_INT: 4 or 8 */
    uint8_t strategy;    /* kvp_qstrategy */
    uint8_t zero_point;  /* asymmetric: zero points stored (AWQ zero_point, GPTQ sym false) */
    uint8_t scale_bytes; /* one group or row scale in the checkpoint */
    uint8_t input_scale; /* a static per-tensor input scale is stored */
    uint32_t group;      /* GROUP: weights per scale along the input; BLOCK: output rows */
    uint32_t block_cols; /* BLOCK: input columns per scale */
} kvp_qscheme;
enum { KVP_QMAX_SCHEMES = 4, KVP_QMAX_PATTERNS = 32 };
/* A module pattern of the config: what stays unquantized (ignore,
 * modules_to_not_convert, exclude_modules, llm_int8_skip_modules) or what a
 * compressed-tensors group targets. */
typedef enum kvp_qpat_kind {
    KVP_QP_NAME,   /* a substring of the module name, '*' matching anything */
    KVP_QP_LAYER,  /* the same with the layer number as '#', for the layers in .layers */
    KVP_QP_REGEX,  /* "re:" pattern, POSIX extended, anchored at the start */
    KVP_QP_LINEAR  /* "Linear": every linear layer */
} kvp_qpat_kind;
typedef struct kvp_qpattern {
    char text[96];
    uint8_t kind;        /* kvp_qpat_kind */
    int8_t scheme;       /* -1: left unquantized; else an index into kvp_quant.scheme */
    uint8_t layers[16];  /* KVP_QP_LAYER: a bit per layer < 128 */
} kvp_qpattern;
typedef struct kvp_quant {
    uint8_t method;      /* kvp_qmethod */
    char name[40];       /* quant_method (and quant_algo / format) as written */
    kvp_qscheme scheme[KVP_QMAX_SCHEMES];
    uint32_t n_schemes;  /* 1 except for compressed-tensors config_groups */
    kvp_qpattern pat[KVP_QMAX_PATTERNS];
    uint32_t n_pat;
    uint8_t lm_head;     /* the output head is quantized too (GPTQ lm_head: true) */
    uint8_t desc_act;    /* GPTQ act-order: g_idx kept after the Marlin repack */
    uint8_t experts_only;/* only MoE experts are quantized (mxfp4) */
    uint8_t inexact;     /* patterns kvplan could not keep: the split is approximate */
    char why[120];       /* KVP_QM_UNKNOWN: what kvplan does not know */
} kvp_quant;

/* One fact about the model and where it came from ("num_key_value_heads",
 * "text_config.head_dim", "transformers default (Gemma3TextConfig)"...). */
typedef struct kvp_fact {
    char name[40];
    int64_t value;
    char source[120];
} kvp_fact;

/* A numeric "<arch>.*" key of a GGUF's metadata (kvp_model.gguf_nums). */
enum { KVP_MAX_GGUF_NUMS = 96 };
typedef struct kvp_gguf_num {
    char key[56];            /* without the "<arch>." prefix: "expert_weights_scale" */
    double value;            /* a bool is 0 or 1; an array: its first element */
    double next[3];          /* an array's elements 1 to 3 (0 past its end) */
    uint32_t n;              /* 1, or the array's length */
    int uniform;             /* every element of the array equals value */
} kvp_gguf_num;

/* One weight tensor of a GGUF, for placing weights on devices. */
enum { KVP_TENSOR_INPUT = -1, KVP_TENSOR_OUTPUT = -2 };
typedef struct kvp_tensor {
    char name[64];           /* "blk.3.ffn_up_exps.weight" (ggml names are < 64 bytes) */
    uint32_t type;           /* ggml type id */
    uint64_t ne0;            /* row length */
    uint64_t nbytes;         /* ggml_nbytes */
    int32_t layer;           /* its block, or KVP_TENSOR_INPUT / KVP_TENSOR_OUTPUT, as
                              * llama.cpp's tensor table flags it */
    uint32_t shard;          /* the file of a split GGUF that holds it (0 = the first) */
    uint64_t offset;         /* its data's offset in that file's data section (with
                              * mmap, llama.cpp maps the range its host tensors span) */
} kvp_tensor;

typedef struct kvp_model {
    char name[128];          /* catalog name or the config's path */
    char arch[48];           /* model_type as written in the config */
    char family[48];         /* how kvplan reads it, e.g. "gemma3" */
    char gguf_arch[48];      /* llama.cpp's general.architecture ("qwen3"), when known */
    char source[512];        /* where it was read from */
    char note[256];          /* provenance remark, may be empty */
    uint32_t n_layers;
    kvp_layer *layers;
    uint32_t n_heads;        /* query heads (layer 0) */
    uint64_t hidden_size;
    uint64_t max_position;   /* max_position_embeddings, 0 if absent */
    kvp_dtype dtype;         /* weights/activations dtype (torch_dtype) */
    /* Dimensions that do not change the cache, kept so a shape twin (a GGUF
     * with the real tensor shapes) can be written; 0 when unknown. */
    uint64_t n_vocab;        /* vocab_size */
    uint64_t n_ff;           /* dense FFN width (intermediate_size) */
    uint64_t n_ff_exp;       /* one expert's FFN width (moe_intermediate_size) */
    uint64_t n_ff_shexp;     /* shared experts' FFN width, when it differs */
    uint32_t n_expert, n_expert_used, n_expert_shared;
    uint32_t n_layer_dense_lead; /* leading dense (non-MoE) layers */
    uint32_t n_layer_nextn;  /* MTP / next-token-prediction layers after the trunk */
    uint32_t q_lora_rank;    /* MLA query compression, 0 = none */
    int tie_word_embeddings; /* output head shares the embedding: 1, 0, -1 not said */
    int attention_bias;      /* q/k/v projections carry biases (Qwen2, gpt-oss) */
    uint32_t n_rot;          /* rotary dimensions, 0 = head_dim */
    /* RoPE scaling (rope_scaling / rope_parameters): vLLM derives its
     * max_model_len from it */
    char rope_type[24];      /* "yarn", "llama3", "linear"...; "" when absent */
    double rope_factor;      /* 0 when absent */
    uint64_t rope_orig_max;  /* original_max_position_embeddings, 0 when absent */
    size_t n_facts;
    kvp_fact facts[48];
    /* vLLM's derived max_model_len before RoPE scaling, when its rule (the
     * smallest of max_position_embeddings, n_positions, max_seq_len,
     * seq_length, ...; model_max_length wins) gives another length than
     * max_position; 0: max_position (or vLLM's 2048 when that is 0 too) */
    uint64_t vllm_max_len;
    /* Why vLLM cannot serve this model (no implementation of its
     * architecture); "" when it can.  The vLLM runtime refuses with it. */
    char vllm_refusal[160];
    /* A model from the Ollama registry (ollama:NAME, hf.co/...): what its
     * params layer sets, which kvp_ollama_llama_params turns into the
     * llama-server flags Ollama would pass. */
    int from_ollama;
    uint64_t ollama_num_ctx;   /* params num_ctx; 0: not set (Ollama's automatic) */
    uint64_t ollama_num_batch; /* params num_batch; 0: not set */
    char ollama_name[160];     /* "qwen3:8b" */
    /* What reading a remote model cost in this run: HTTP exchanges and body
     * bytes (0 and 0 when it came from a local file or a cache), and the
     * GGUF header bytes it needed (0 for a config.json). */
    uint64_t fetch_requests, fetch_bytes, header_bytes;
    uint64_t fetch_connections; /* new connections among those requests */
    /* From a GGUF's tensor list: the bytes of every weight, each padded to
     * the CPU buffer's 32-byte alignment, i.e. llama.cpp's host model buffer
     * on a CPU-only run in its metadata-only pass (and with --no-mmap); 0
     * when the model came from a config.json (no tensor list). */
    uint64_t weight_bytes;
    /* The same GGUF's tensors (NULL, 0 for a config.json), and whether the
     * output head is the token embedding (no output.weight): 1, llama.cpp
     * copies it onto the output layer's device when that is not the host;
     * 2, it copies it even on the host (gemma3n and gemma4 create the output
     * before the embedding); 0 not tied. */
    kvp_tensor *tensors;
    size_t n_tensors;
    int tied_output;
    /* The same GGUF's numeric "<arch>.*" keys, the first KVP_MAX_GGUF_NUMS
     * in file order: the hyperparameters llama.cpp's graph builders read
     * beyond the shapes above (expert_weights_scale, residual_scale, ...),
     * for rebuilding its compute graph (lib/graph/).  None for a
     * config.json. */
    size_t n_gguf_nums;
    kvp_gguf_num gguf_nums[KVP_MAX_GGUF_NUMS];
    /* MoE routing as llama.cpp reads it from a GGUF (expert_group_count,
     * expert_group_used_count, expert_weights_norm, expert_weights_scale,
     * expert_gating_func: 1 softmax, 2 sigmoid, ...), or from a config.json
     * as convert_hf_to_gguf would write it (n_group, topk_group,
     * norm_topk_prob, routed_scaling_factor, scoring_func); 0 when absent.
     * expert_probs_bias: the router's selection bias (a GGUF's
     * exp_probs_b tensors; a config's topk_method "noaux_tc"): 1 yes, 0 no.
     * llama.cpp's compute graph has more nodes with them (lib/graph/). */
    uint32_t n_expert_groups, n_group_used;
    int expert_weights_norm;
    double expert_weights_scale;
    uint32_t expert_gating_func;
    int expert_probs_bias;
    /* attention.temperature_scale (Llama 4 style temperature tuning of Q,
     * DeepSeek2 / Mistral MLA models); 0 when absent */
    double attn_temp_scale;
    /* GGUF metadata only llama.cpp's compute graph reads (lib/graph/), none
     * of it in the per-layer model above; 0 when the GGUF lacks the keys or
     * the model came from a config.json. */
    uint32_t n_deepstack_layers; /* n_deepstack_layers: Qwen3-VL's extra input embeddings */
    unsigned graph_flags;        /* KVP_GRAPH_* */
    /* config.json's quantization_config (method KVP_QM_NONE when absent) */
    kvp_quant quant;
    /* A vision or audio tower in the config (vision_config, audio_config):
     * 1; its parameter count when kvplan can count it exactly, else 0. */
    int encoder;
    uint64_t encoder_params;
} kvp_model;

/* kvp_model.graph_flags */
enum {
    KVP_GRAPH_SEQ_RESIDUAL = 1, /* use_parallel_residual false (gptneox) */
    KVP_GRAPH_SWIN_NORM = 2,    /* swin_norm true (chameleon) */
    KVP_GRAPH_NOPE_LAYERS = 4,  /* layers without RoPE: rope.scaling.finetuned false,
                                   a 0 in attention.rope_pattern (granite) */
    KVP_GRAPH_DEEPSTACK_MAP = 8 /* deepstack_mapping (Granite 4 Vision) */
};

void kvp_model_free(kvp_model *m);
/* A deep copy, for what-if changes to the layers (kvplan techniques). */
int kvp_model_clone(const kvp_model *m, kvp_model **out, kvp_error *err);

/* Load from a config.json path, a directory holding one, a catalog name or
 * an org/name repo id in the local Hugging Face cache, in that order of
 * precedence when the spec is ambiguous (an existing path wins). */
int kvp_model_load(const char *spec, kvp_model **out, kvp_error *err);

/* Where and how a MODEL argument is looked for (kvp_model_load_opts). */
typedef struct kvp_load_opts {
    const char *family;   /* read a config.json by this rule set (--family); NULL: its own */
    const char *revision; /* a Hub branch, tag or commit (--revision); NULL: main */
    int offline;          /* never use the network (--offline; HF_HUB_OFFLINE=1 also) */
} kvp_load_opts;

/* kvp_model_load with options, and the remote forms: an existing local path
 * wins; then ollama:NAME[:TAG] and hf.co/ORG/REPO[:QUANT] (the Ollama
 * registry, $KVPLAN_OLLAMA_REGISTRY), https://.../FILE.gguf, a catalog name,
 * ORG/NAME:QUANT and ORG/NAME/PATH.gguf (a GGUF's header from the Hub by
 * range requests), and ORG/NAME (the local Hugging Face cache, else its
 * config.json from the Hub ($HF_ENDPOINT) into that cache, else, offline,
 * the catalog).  The model's source says which answered.  o may be NULL. */
int kvp_model_load_opts(const char *spec, const kvp_load_opts *o, kvp_model **out,
                        kvp_error *err);
int kvp_model_from_config_file(const char *path, kvp_model **out, kvp_error *err);
int kvp_model_from_config_text(const char *text, size_t len, const char *label,
                               kvp_model **out, kvp_error *err);

/* A GGUF file (shard 1 of a split model): the same per-layer model, read
 * from the llama.cpp metadata alone; tensor data is never read. */
int kvp_model_from_gguf(const char *path, kvp_model **out, kvp_error *err);

/* Writes a sparse shape-twin GGUF of m: the llama.cpp metadata and the full
 * tensor list with real shapes for its architecture, the data section a hole
 * (ftruncate).  kv_only shrinks embedding, FFN, expert and vocabulary sizes
 * that do not change the cache.  Refuses an existing path unless force. */
int kvp_twin_write(const kvp_model *m, const char *path, int kv_only, int force,
                   kvp_error *err);

/* Layers of one kind with identical per-layer shapes form a group. */
typedef struct kvp_group {
    kvp_layer_kind kind;
    uint32_t n_layers;
    uint32_t first;          /* index of the first layer in the group */
    kvp_layer shape;         /* the shape every layer in the group shares */
} kvp_group;

/* Fills up to cap groups (in order of first appearance); returns the count. */
size_t kvp_model_groups(const kvp_model *m, kvp_group *out, size_t cap);
/* Writes the indices of the group's layers as ranges ("3,7,11" or "0-35"). */
void kvp_model_group_layers(const kvp_model *m, const kvp_group *g, char *buf, size_t n);
uint32_t kvp_model_count_kind(const kvp_model *m, kvp_layer_kind k);

/* ---- the built-in catalog ------------------------------------------------ */

typedef struct kvp_catalog_entry {
    const char *name;        /* short name, e.g. "qwen3-8b" */
    const char *file;        /* file name under data/models/ */
    const char *model_id;    /* Hugging Face id, e.g. "Qwen/Qwen3-8B" */
    const char *text;        /* the config.json bytes */
    size_t len;
} kvp_catalog_entry;

size_t kvp_catalog_count(void);
const kvp_catalog_entry *kvp_catalog_at(size_t i);
const kvp_catalog_entry *kvp_catalog_find(const char *name);

/* ---- theory runtime: the config arithmetic -------------------------------- */

typedef struct kvp_theory_params {
    uint64_t n_ctx;          /* tokens held in total, shared by n_seq sequences */
    uint32_t n_seq;          /* sequences (>= 1) */
    kvp_dtype type_k, type_v;
} kvp_theory_params;

typedef struct kvp_theory_group {
    kvp_layer_kind kind;
    uint32_t n_layers;
    uint32_t first;
    uint32_t window;
    uint64_t per_token_bytes;        /* all layers of the group, per cell */
    uint64_t cells;                  /* cells held, summed over sequences */
    uint64_t fixed_bytes_per_seq;    /* state kinds: all layers, one sequence */
    uint64_t bytes;                  /* total bytes of the group */
} kvp_theory_group;

typedef struct kvp_theory_result {
    kvp_theory_params params;
    size_t n_groups;
    kvp_theory_group groups[KVP_LAYER_KIND_COUNT * 8];
    uint64_t per_token_bytes;         /* sum over groups that grow with length */
    uint64_t fixed_bytes_per_seq;     /* sum over state groups */
    uint64_t total_bytes;
    uint64_t full_equiv_bytes;        /* the same model if every window were full */
    int has_mla;
    uint64_t mla_expanded_per_token_bytes; /* per-head K/V instead of the latent */
    uint64_t indexer_per_token_bytes;  /* the part of per_token_bytes that is
                                          DSA indexer keys (kvp_layer.indexer_head_dim) */
} kvp_theory_result;

void kvp_theory_defaults(kvp_theory_params *p);
int kvp_theory(const kvp_model *m, const kvp_theory_params *p,
               kvp_theory_result *out, kvp_error *err);

/* ---- llama.cpp runtime ---------------------------------------------------- */

typedef enum kvp_flash_attn { KVP_FA_AUTO, KVP_FA_ON, KVP_FA_OFF } kvp_flash_attn;

/* Settings as llama-server takes them.  Zero / -1 mean "the server's
 * default", so a caller sets only what the user typed. */
typedef struct kvp_llama_params {
    const char *version;     /* rule set: "v0.5.0" (b11146), "b11223"; NULL = default */
    uint64_t n_ctx;          /* -c; 0 = the model's training context */
    int32_t n_seq;           /* -np; -1 = auto: 4 slots, unified */
    uint32_t n_batch;        /* -b, default 2048 */
    uint32_t n_ubatch;       /* -ub, default 512 */
    kvp_dtype type_k, type_v;
    kvp_flash_attn flash_attn;
    int swa_full;            /* --swa-full */
    int kv_unified;          /* --kv-unified 1, --no-kv-unified 0, -1 default */
    uint32_t n_rs_seq;       /* recurrent rollback snapshots (speculative MTP), 0 */
    uint32_t n_outputs_max;  /* output rows the compute graph reserves: 0, llama-server's
                                one per slot; else the C API's n_outputs_max (its default,
                                n_batch, is what llama-bench and the completion tools get) */
    int swa_any_arch;        /* what-if: honour every layer's window as an architecture
                                with sliding-window attention does, whatever the model's
                                own llama.cpp architecture (kvplan techniques) */
} kvp_llama_params;

typedef struct kvp_llama_cache {
    char name[16];           /* "kv" (non-SWA layers), "kv_swa", or "kv_idx" (the
                                DSA/MSA indexer keys of llama_kv_cache_dsa / _msa /
                                llama_memory_hybrid_idx) */
    uint32_t cells;          /* per stream, as the log's "cells" */
    uint32_t layers;         /* layers with tensors in this cache */
    uint32_t seqs, streams;
    kvp_dtype k_type, v_type;
    uint64_t k_bytes, v_bytes, bytes;
    int after_recurrent;     /* llama.cpp prints its line after the recurrent state's
                                (qwen4exp's idx_ cache, built after the hybrid memory) */
} kvp_llama_cache;

typedef struct kvp_llama_recurrent {
    uint32_t cells, layers, seqs, rs_seq;
    uint64_t r_bytes, s_bytes, p_bytes, bytes;
} kvp_llama_recurrent;

/* The compute buffers llama.cpp reserves at context creation
 * (llamacpp-memory-rules.md 3): the worst-case graph for min(n_ctx, n_ubatch)
 * tokens with llama-server's output rows (one per slot), sized by ggml's
 * graph allocator.  kvplan rebuilds that graph for the architectures it
 * models and replays the allocator, so the CPU figure is exact where
 * `exact` says so; device figures are computed from the same graph with the
 * device's alignment and are never exact. */
typedef struct kvp_compute {
    int modelled;            /* 0: no graph for this architecture; sizes are 0 */
    int exact;               /* host_bytes is the CPU backend's replayed figure */
    uint64_t host_bytes;     /* "CPU" (or "CUDA_Host" beside a GPU) compute buffer */
    uint32_t n_devices;
    uint64_t device_bytes[8];
    char how[240];           /* one line: how the figure was obtained */
} kvp_compute;

typedef struct kvp_llama_result {
    const char *version;     /* the rule set used */
    uint64_t n_ctx, n_ctx_seq;
    uint32_t n_seq, n_stream, n_batch, n_ubatch;
    uint32_t n_outputs_max;  /* the output rows the compute graph may hold */
    int unified, flash_attn_on, v_trans, swa_full;
    size_t n_caches;
    kvp_llama_cache caches[4];   /* kv, kv_swa, kv_idx (in llama.cpp's order) */
    int has_recurrent;
    kvp_llama_recurrent recurrent;
    uint64_t total_bytes;
    /* Around the cache, on a CPU-only run: the model buffer (the model's
     * weight_bytes; 0 unknown) and the output buffer (logits of n_seq rows,
     * 4 x n_vocab x n_seq; 0 when n_vocab is unknown), with the line
     * llama.cpp prints for the latter ("" when unknown). */
    uint64_t weights_bytes, output_bytes;
    char output_log[96];
    kvp_compute compute;     /* CPU only; compute.modelled 0 where kvplan has no graph */
    size_t n_notes;
    char notes[6][240];      /* what llama.cpp would warn about, and kvplan's caveats */
    size_t n_log;
    char log[6][256];        /* the size lines exactly as llama.cpp prints them */
} kvp_llama_result;

void kvp_llama_defaults(kvp_llama_params *p);
int kvp_llama(const kvp_model *m, const kvp_llama_params *p, kvp_llama_result *out,
              kvp_error *err);
/* The rule sets kvplan knows, newest last, as "name (what it matches)". */
const char *kvp_llama_versions(void);

/* ---- the GPU table ----------------------------------------------------------- */

/* One card of kvplan's built-in table (lib/gpus.c), for vLLM's budget and
 * llama.cpp's per-device plan. */
typedef struct kvp_gpu {
    const char *name;        /* "RTX-4090" */
    uint64_t memory_mib;     /* total memory as nvidia-smi reports it (memory.total) */
    int sm;                  /* compute capability x 10 (89 = 8.9) */
    /* Datasheet rates for the step-time model (lib/serve/steptime.c;
     * serving-sim-rules.md 4.7): peak memory bandwidth, dense (no 2:4
     * sparsity) tensor rates, and the host link's raw rate per direction.
     * fp8_tflops 0: no FP8 tensor cores. */
    double mem_bw_gbs;       /* GB/s (10^9 bytes) */
    double bf16_tflops;      /* dense BF16, FP32 accumulate */
    double fp8_tflops;       /* dense FP8, or 0 */
    double host_link_gbs;    /* PCIe x16 per direction, GB/s */
    /* The total vLLM sees: torch.cuda.mem_get_info's, in GiB as vLLM prints
     * it, 0.4-0.8 GiB under nvidia-smi's (vllm-memory-profile.md 3);
     * torch_total_seen 0: not in a public log, carried over from a sibling */
    double torch_total_gib;
    int torch_total_seen;
} kvp_gpu;
/* By name or alias ("RTX-4090", "4090", "h100"), ignoring case; NULL when
 * the table has no such card. */
const kvp_gpu *kvp_gpu_find(const char *name);
/* "A100-80GB (81920 MiB), A100-40GB (40960 MiB), ...", for messages. */
const char *kvp_gpu_list(void);

/* ---- vLLM runtime (v1 engine) -------------------------------------------- */

typedef struct kvp_vllm_params {
    const char *version;         /* the release, "0.9.1" to "0.29.1" (default): KV rules of
                                    0.28.0 before 0.29, the memory profile of its own era */
    uint64_t max_model_len;      /* --max-model-len; 0 = derived from the config */
    double gpu_memory_utilization; /* 0 = 0.92 */
    uint64_t max_num_batched_tokens; /* 0 = the default for GPU and entry point */
    uint32_t max_num_seqs;       /* 0 = default */
    uint32_t block_size;         /* --block-size; 0 = the attention backend's */
    int kv_fp8;                  /* --kv-cache-dtype fp8 (same as kv_cache_dtype "fp8") */
    const char *kv_cache_dtype;  /* --kv-cache-dtype: auto, bfloat16, float16, fp8,
                                    fp8_e4m3, fp8_e5m2, nvfp4, turboquant_k8v4,
                                    turboquant_4bit_nc, turboquant_k3v4_nc,
                                    turboquant_3bit_nc; NULL = auto (fp8 with kv_fp8) */
    int prefix_caching;          /* -1 default (on), 0 off, 1 on */
    uint32_t tp, pp;             /* 0 = 1 */
    uint64_t kv_cache_memory;    /* --kv-cache-memory bytes; 0 = estimate */
    const char *gpu;             /* --gpu NAME; NULL = A100-80GB */
    int entry_serve;             /* 1: `vllm serve`, 0: the Python LLM class */
    int allow_long_max_model_len;/* VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 */
    int reservation_only;        /* only what one request reserves: no memory, no capacity */
    int enforce_eager;           /* --enforce-eager: no CUDA graphs, nothing reserved for them */
} kvp_vllm_params;

typedef struct kvp_vllm_group {
    kvp_layer_kind kind;         /* full, sliding, chunked, mla, linear, mamba */
    uint32_t layers;             /* real layers in the group */
    uint32_t padding;            /* padding slots (the last group of a bucket) */
    uint32_t block_size;         /* tokens per block for this group */
    uint32_t window;
    uint64_t page_bytes;         /* per layer per block (after unification) */
    uint64_t blocks_per_request;
} kvp_vllm_group;

typedef struct kvp_vllm_result {
    const char *version, *gpu;
    const char *kv_cache_dtype;      /* as resolved: "auto", "fp8", "nvfp4", "turboquant_..." */
    int uniform_type;                /* one group of same-kind layers whose pages differ
                                        (UniformTypeKVCacheSpecs): page_bytes is their sum */
    uint64_t gpu_total_bytes;
    uint64_t max_model_len;
    double derived_max_model_len;
    uint64_t max_num_batched_tokens;
    uint64_t inflight_tokens;        /* tokens in flight (2 batches under async scheduling) */
    uint32_t max_num_seqs, tp, pp, block_size, group_size;
    int prefix_caching;
    const char *mamba_cache_mode;    /* "none", "align" or NULL (no Mamba layers) */
    uint64_t page_bytes;             /* P, the unified page */
    uint64_t pool_block_bytes;       /* group_size x P: what one block id costs */
    uint64_t kv_cache_memory_bytes;
    int available_is_estimate;
    /* The estimate, per GPU (lib/vllm_memory.c): requested = ceil(total x
     * util), less the weights, the profiling run's transient peak (the
     * larger of the forward pass and the sampler), non-torch memory, and the
     * CUDA-graph estimate where the release subtracts it. */
    uint64_t weights_bytes, activation_bytes, cudagraph_bytes;
    uint64_t requested_bytes, forward_bytes, sampler_bytes, non_torch_bytes;
    double gpu_memory_utilization;   /* as used */
    int cudagraph_applied;           /* the graph estimate is subtracted (>= 0.21, graphs on) */
    int weights_exact;               /* the weights figure is the checkpoint's, tensor for tensor */
    int64_t available_signed_bytes;  /* requested - everything else; < 0: vLLM refuses */
    /* each term's error on the public startup logs (tests/vllm-logs), GiB:
     * the largest kvplan makes there; 0 when no log prints that term */
    double band_weights_gib, band_peak_gib, band_graph_gib, band_available_gib;
    uint64_t num_blocks;
    size_t n_groups;
    kvp_vllm_group groups[64];
    uint64_t blocks_per_request, per_request_bytes, fixed_bytes_per_request;
    double max_concurrency;
    uint64_t token_capacity;
    /* Pipeline parallel: what each stage's GPUs hold.  The figures above are
     * the stage that reserves most per request, with the fewest blocks. */
    uint32_t n_stages;
    struct kvp_vllm_stage {
        uint32_t first_layer, layers;
        uint64_t per_request_bytes, num_blocks;
    } stages[64];
    size_t n_log, n_notes;
    char log[4][400];
    char notes[6][300];
} kvp_vllm_result;

void kvp_vllm_defaults(kvp_vllm_params *p);
/* Fails (KVP_EINPUT) where vLLM refuses to start, with vLLM's message. */
int kvp_vllm(const kvp_model *m, const kvp_vllm_params *p, kvp_vllm_result *out, kvp_error *err);
/* 0 when name is a --kv-cache-dtype kvplan's vLLM rules price; else a usage
 * error that lists them. */
int kvp_vllm_kv_cache_dtype_check(const char *name, kvp_error *err);
/* A copy of m with vLLM's TurboQuant layout (preset "turboquant_k8v4",
 * "turboquant_4bit_nc", "turboquant_k3v4_nc" or "turboquant_3bit_nc"): each
 * attention layer's kv_slot_bytes set as vLLM packs it, the boundary layers
 * vLLM protects left in the model dtype.  Fails where vLLM would refuse. */
int kvp_vllm_turboquant(const kvp_model *m, const char *preset, kvp_model **out,
                        kvp_error *err);
/* The built-in GPU table: "A100-80GB (81920 MiB), H100 ..." (kvp_gpu_list). */
const char *kvp_vllm_gpus(void);
/* The parameter count of the model's language model, from the config (0
 * when unknown): what vLLM's weight estimate and llama.cpp's computed
 * weights (a config.json has no tensor list) multiply by a type's size. */
uint64_t kvp_model_param_count(const kvp_model *m);
/* The same count where llama.cpp puts the tensors: the input layer (token
 * embeddings), each of m->n_layers layers (layers[], may be NULL), the
 * output layer (the head unless tied, the final norm).  -1 when unknown. */
int kvp_model_param_layers(const kvp_model *m, uint64_t *input, uint64_t *layers,
                           uint64_t *output);
/* What the weights are, by kind: the count split into these (their sum is
 * kvp_model_param_count; -1 when unknown). */
typedef enum kvp_wcat {
    KVP_WC_EMBED,   /* token embeddings */
    KVP_WC_HEAD,    /* the output head (0 when tied) */
    KVP_WC_ATTN,    /* attention / MLA linears */
    KVP_WC_MLP,     /* dense MLP linears */
    KVP_WC_EXPERTS, /* routed-expert linears */
    KVP_WC_SHARED,  /* shared-expert linears */
    KVP_WC_ROUTER,  /* MoE routers and shared-expert gates */
    KVP_WC_MIXER,   /* Mamba / Gated DeltaNet linears */
    KVP_WC_SMALL,   /* norms, biases, convs, sinks, A_log and other small tensors */
    KVP_WC_BUFFERS, /* not parameters: rotary caches a runtime builds (0 in the count) */
    KVP_WC_N
} kvp_wcat;
const char *kvp_wcat_name(kvp_wcat c);
int kvp_model_param_breakdown(const kvp_model *m, uint64_t count[KVP_WC_N]);

/* ---- fit: the inverse question ---------------------------------------------- */

typedef enum kvp_runtime { KVP_RT_THEORY, KVP_RT_LLAMA, KVP_RT_VLLM } kvp_runtime;

const char *kvp_runtime_name(kvp_runtime r);            /* "theory", "llama.cpp", "vllm" */
/* "theory", "llama.cpp" (or llamacpp, llama-cpp, llama-server), "vllm"; -1 if unknown */
int kvp_runtime_parse(const char *s, kvp_runtime *out);

/* Settings for one runtime; only the one `runtime` names is read.  The
 * context and sequence fields of the settings are what fit varies. */
typedef struct kvp_fit_params {
    kvp_runtime runtime;
    uint64_t budget;           /* bytes for the KV cache and state */
    uint64_t context;          /* tokens per sequence for "most sequences" */
    uint32_t seqs;             /* sequences for "largest context" (>= 1) */
    kvp_theory_params theory;
    kvp_llama_params llama;
    kvp_vllm_params vllm;
} kvp_fit_params;

typedef struct kvp_fit_result {
    kvp_runtime runtime;
    /* the largest context for `seqs` sequences: tokens per sequence (theory,
     * vLLM's max_model_len) or llama.cpp's -c; 0 when nothing fits */
    uint64_t max_context, bytes_at_max_context;
    int context_capped;        /* stopped by the model's (vLLM: derived) limit */
    /* the most sequences of `context` tokens each; 0 when not even one fits */
    uint64_t max_seqs, bytes_at_max_seqs;
    double vllm_concurrency;   /* vLLM: num_blocks / blocks per request */
} kvp_fit_result;

int kvp_fit(const kvp_model *m, const kvp_fit_params *p, kvp_fit_result *out, kvp_error *err);

/* ---- runtime logs ------------------------------------------------------------ */

enum { KVP_LOG_NONE, KVP_LOG_LLAMA, KVP_LOG_VLLM };

/* What a runtime's startup log says about its cache. */
typedef struct kvp_log {
    int kind;                    /* KVP_LOG_LLAMA or KVP_LOG_VLLM */
    /* llama.cpp: the context as it logged it (n_ctx after padding) */
    char arch[48];               /* print_info: arch */
    uint64_t n_ctx, n_ctx_seq;
    uint32_t n_seq, n_batch, n_ubatch, n_rs_seq;
    kvp_flash_attn flash_attn;   /* as resolved: enabled / disabled */
    int kv_unified;              /* -1 when not logged */
    int swa_full;
    kvp_dtype type_k, type_v;    /* from the size lines */
    size_t n_size_lines;
    char size_lines[6][300];     /* "llama_kv_cache: size = ..." as logged */
    /* The buffers it printed ("load_tensors: CUDA0 model buffer size = X MiB",
     * "... KV buffer size", "... RS buffer size", "... output buffer size",
     * "... compute buffer size"), in order. */
    size_t n_buffers;
    struct kvp_log_buffer {
        char kind[8];            /* "model", "KV", "RS", "output", "compute" */
        char name[24];           /* buffer type: "CPU", "CPU_Mapped", "CUDA0", "CUDA_Host" */
        double mib;              /* as printed, 2 decimals */
        char line[200];
    } buffers[48];
    int no_alloc;                /* print_info: no_alloc = 1 (a metadata-only run: its model
                                    and KV buffers are empty stand-ins) */
    int load_mode_mmap;          /* load_tensors' load_mode: 1 mmap, 0 none, -1 not logged */
    int32_t offloaded, offload_of; /* "offloaded A/B layers to GPU"; -1 when not logged */
    /* The memory breakdown table (common_memory_breakdown_print, MiB). */
    size_t n_breakdown;
    struct kvp_log_breakdown {
        char name[48];           /* "CUDA0", "Host", or a buffer type ("CPU_REPACK") */
        char desc[48];           /* a device's description ("RTX 4090"); "" */
        int device;              /* 1: a device row with total, free and unaccounted */
        int64_t total, free, self, model, context, compute, unaccounted;
        char line[300];
    } breakdown[10];
    /* vLLM */
    double vllm_avail_gib;       /* "Available KV cache memory", 2 decimals */
    uint64_t vllm_tokens, vllm_max_len;
    double vllm_concurrency;
    /* vLLM's profile lines (vllm-memory-profile.md 6); < 0 when not logged */
    double vllm_weights_gib;     /* "Model loading took X GiB" */
    double vllm_total_gib;       /* "Free memory on device (F/T GiB)" */
    double vllm_util;            /* "Desired GPU memory utilization is (U, R GiB)", or the
                                    "current --gpu-memory-utilization=U" of the graph line */
    double vllm_requested_gib;   /* R of the same line */
    double vllm_graph_est_gib;   /* "Estimated CUDA graph memory: X GiB total", or
                                    (U - E) x T from "is equivalent to ...=E" when T is known */
    double vllm_util_equiv;      /* E of "is equivalent to --gpu-memory-utilization=E" */
    double vllm_peak_gib;        /* "A GiB for peak activation" */
    double vllm_non_torch_gib;   /* "N GiB for non-torch memory" (0.10-0.2x) */
    double vllm_consumed_gib;    /* "C GiB for consumed memory (weights + non-torch)" (0.27-) */
    double vllm_graph_gib;       /* "G GiB for CUDAGraph memory" (measured, after capture) */
} kvp_log;

int kvp_log_parse(const char *text, size_t len, const char *label, kvp_log *out, kvp_error *err);

/* ---- prefix-cache simulator (vLLM v1 block pool) ---------------------------- */

/* A run of a prompt's content: equal id = equal tokens (ids are 63-bit). */
typedef struct kvp_sim_chunk {
    uint64_t id, tokens;
} kvp_sim_chunk;

/* One request of a workload: its prompt and output lengths, the prompt as
 * chunks of content in order (chunks[chunk_off .. chunk_off + n_chunks) of
 * the workload) and the hashes of its full blocks at the workload's block
 * size (hashes[hash_off .. hash_off + n_hashes)).  Equal hash = equal prefix
 * up to and including that block. */
typedef struct kvp_sim_request {
    double timestamp;               /* arrival in ms from the trace's first (0 for generators) */
    uint64_t prompt_tokens, output_tokens;
    size_t hash_off, n_hashes;
    size_t chunk_off, n_chunks;     /* none in a hand-built workload */
    uint32_t conv;                  /* its conversation, 1-based; 0: the format has none */
    uint32_t pass;                  /* a generator's pass over its prompts (cyclic:
                                       R passes, grouped's cyclic order: K), from 0 */
} kvp_sim_request;

typedef struct kvp_workload {
    kvp_sim_request *req;
    size_t n_req;
    uint64_t *hashes;
    size_t n_hashes;
    kvp_sim_chunk *chunks;
    size_t n_chunks;
    uint32_t block_size;            /* the block size the hashes are for */
    uint32_t n_convs;               /* conversations (0: the format has none) */
    int hash_output;                /* generators: output blocks are hashed (cached) */
    char name[160];
    char format[24];                /* mooncake, kv-cache-tester, ragpulse, azure, kvplan, synthetic */
    char note[240];                 /* what the reader assumed, said beside the results ("" none) */
} kvp_workload;

/* The trace formats kvp_workload_load reads (NULL-terminated), and the block
 * size a format's ids are for (0: any, its chunks are content). */
extern const char *const kvp_trace_formats[];
uint32_t kvp_trace_native_block(const char *format);
/* The format of PATH, from its content (a folder: RAGPulse's 0_trace.jsonl
 * or kv-cache-tester conversations); NULL with err set when none fits. */
const char *kvp_trace_detect(const char *path, kvp_error *err);
/* Reads a trace (format NULL: detected) with its blocks hashed at block_size
 * (0: the format's own, else 16).  Malformed input is an error naming the
 * file and line. */
int kvp_workload_load(const char *path, const char *format, uint32_t block_size,
                      kvp_workload *out, kvp_error *err);
/* Writes the workload as kvplan's own JSONL (docs/trace-formats.md), which
 * kvp_workload_load reads back to the same replay; an existing path is kept
 * unless force. */
int kvp_workload_write(const kvp_workload *w, const char *path, int force, kvp_error *err);
/* A Mooncake JSONL trace (timestamp, input_length, output_length, hash_ids;
 * 512-token blocks) at its own block size. */
int kvp_workload_mooncake(const char *path, kvp_workload *out, kvp_error *err);
/* shared-prefix:N,P,U[,O]   cyclic:D,T,R[,S[,O]]   grouped:G,K,P,U[,O[,cyclic|grouped]] */
int kvp_workload_synthetic(const char *spec, uint32_t block_size, kvp_workload *out,
                           kvp_error *err);
void kvp_workload_free(kvp_workload *w);

/* What a workload is before any pool (lib/trace/stats.c). */
typedef struct kvp_workload_stats {
    uint64_t requests, conversations, prompt_tokens, output_tokens;
    double span_seconds;            /* first to last arrival */
    /* the working set: the distinct blocks an unevicting prefix cache ends up
     * holding (at the workload's block size), and in tokens */
    uint64_t working_blocks, working_tokens;
    uint64_t max_request_blocks;    /* the largest request's prompt and decode */
    uint64_t unbounded_blocks;      /* a pool that never evicts, the null block included */
    /* the same for reuse at any position: distinct chunks, each in whole blocks */
    uint64_t chunk_tokens, chunk_blocks, max_chunk_request_blocks, unbounded_chunk_blocks;
    /* requests whose conversation sent one before: the share of the prompt the
     * previous request alone holds (vLLM's rule: full blocks, not the last token) */
    uint64_t pairs;
    double consecutive_mean, consecutive_median, consecutive_weighted;
} kvp_workload_stats;

int kvp_workload_stats_of(const kvp_workload *w, kvp_workload_stats *s, kvp_error *err);

typedef struct kvp_sim_config {
    uint64_t num_blocks;            /* vLLM's num_gpu_blocks, the null block included */
    uint32_t block_size;            /* must equal the workload's */
    int null_block;                 /* 1 (vLLM): block 0 is never allocated */
    int free_unhashed_to_tail;      /* 0 (vLLM today): unhashed blocks go to the head */
    int no_prefix_caching;          /* 1: --no-enable-prefix-caching, nothing is hit or cached */
    int any_position;               /* 1: the what-if of reusing chunks wherever they occur
                                       (CacheBlend-style; lib/sim_chunks.c), not a runtime's */
} kvp_sim_config;

typedef struct kvp_sim_result {
    uint64_t num_blocks, usable_blocks;
    uint64_t requests, oversized;   /* oversized: larger than the pool, counted as misses */
    uint64_t prompt_tokens, hit_tokens;
    uint64_t computed_tokens;       /* prefill tokens computed = prompt - hit */
    uint64_t evictions, peak_blocks;
    double hit_rate;                /* hit_tokens / prompt_tokens, as vLLM's metric */
} kvp_sim_result;

void kvp_sim_defaults(kvp_sim_config *c);
/* Sequential replay: each request is admitted, prefilled, decoded and freed
 * before the next one. */
int kvp_sim_run(const kvp_workload *w, const kvp_sim_config *c, kvp_sim_result *out,
                kvp_error *err);
/* The replay at each of n capacities (num_blocks); progress may be NULL. */
int kvp_sim_sweep(const kvp_workload *w, const kvp_sim_config *c, const uint64_t *num_blocks,
                  size_t n, kvp_sim_result *out, kvp_error *err,
                  void (*progress)(size_t done, size_t n, void *arg), void *arg);
/* The index i >= 1 where hit_rate rises most from point i-1 (0 if none rises). */
size_t kvp_sim_cliff(const kvp_sim_result *r, size_t n);
/* An SVG of a sweep (n >= 2 capacities, increasing): the hit rate against
 * capacity in tokens, the any-position what-if beside it (any may be NULL),
 * the cliff marked.  An existing path is kept unless force. */
int kvp_sim_plot(const char *path, int force, const char *title,
                 const uint64_t *capacity_tokens, const kvp_sim_result *prefix,
                 const kvp_sim_result *any, size_t n, kvp_error *err);

/* ---- serving simulator: a concurrent replay with time ----------------------- */

/* Whose scheduler replays the workload (serving-sim-rules.md 1 and 2). */
typedef enum kvp_serve_policy {
    KVP_SERVE_VLLM,      /* vLLM v1: token budget, chunked prefill, recompute preemption */
    KVP_SERVE_RADIX      /* SGLang: radix cache, LPM/FCFS prefill batches, retraction */
} kvp_serve_policy;

/* When requests arrive. */
typedef enum kvp_serve_arrivals {
    KVP_ARRIVE_ALL,      /* all at t = 0 (a burst, --request-rate inf) */
    KVP_ARRIVE_TRACE,    /* at the trace's timestamps */
    KVP_ARRIVE_POISSON   /* a Poisson process of `rate` per second from `seed` */
} kvp_serve_arrivals;

/* vLLM's scheduler limits where nothing sets them: its LLM class on an A100
 * (serving-sim-rules.md 1.8); a zero in kvp_serve_config takes these. */
#define KVP_VLLM_DEFAULT_BATCHED_TOKENS 8192u
#define KVP_VLLM_DEFAULT_MAX_SEQS 256u

typedef struct kvp_serve_config {
    kvp_serve_policy policy;
    uint64_t num_blocks;            /* vLLM: num_gpu_blocks, the null block included */
    uint64_t pool_tokens;           /* SGLang: the token pool (0: num_blocks x block_size) */
    uint32_t block_size;            /* must equal the workload's */
    uint32_t max_num_batched_tokens;/* 0: 8,192 (vLLM's LLM class on an A100; SGLang's
                                       chunked_prefill_size) */
    uint32_t max_num_seqs;          /* 0: 256 (vLLM), SGLang's req-pool size (radix) */
    uint64_t max_model_len;         /* 0: no limit */
    int prefix_caching;             /* 1 on (both engines' default), 0 off */
    int async_scheduling;           /* 1 on (vLLM's default): frees and arrivals a step late */
    int radix_lpm;                  /* SGLang: 1 longest prefix match, 0 FCFS (its default) */
    kvp_serve_arrivals arrivals;
    double rate;                    /* KVP_ARRIVE_POISSON: requests per second */
    uint64_t seed;
    /* The step-time model (lib/serve/steptime.c): a roofline over the model's
     * shapes and the GPU's datasheet rates, never a measurement.  model NULL:
     * no times, tokens only (every time field 0, `timed` 0). */
    const kvp_model *model;
    const char *gpu;                /* NULL: A100-80GB */
    const char *engine;             /* vllm-v1 (NULL), vllm-0.5, vllm-0.6-multistep, gpu-only */
    int kv_fp8;                     /* --kv-cache-dtype fp8: KV bytes halve */
    /* A host-memory tier behind the GPU cache (serving-sim-rules.md 3.5, vLLM's
     * native OffloadingConnector, policy KVP_SERVE_VLLM): an LRU of whole prompt
     * blocks, stored as they are computed, loaded back at admission after the
     * GPU hit.  Transfers cost time in a timed replay: a latency plus the bytes
     * over the link's sustained rate, one transfer at a time each way. */
    uint64_t cpu_tier_bytes;        /* 0: no host tier */
    uint64_t kv_block_bytes;        /* one block's KV over all layers (vLLM's page) */
    int pcie_gen;                   /* 4 or 5: 25 / 50 GB/s sustained each way; 0: the GPU's */
} kvp_serve_config;

typedef struct kvp_serve_dist {
    double mean, p50, p90, p99;     /* seconds; nearest-rank percentiles */
} kvp_serve_dist;

typedef struct kvp_serve_result {
    int timed;                      /* 0: no model, every time is 0 */
    const char *gpu, *engine;       /* the time model's, when timed */
    double wall_seconds;            /* first arrival to last finish (a model) */
    kvp_serve_dist ttft, tpot;      /* tpot over requests with 2+ outputs */
    double prompt_tps, output_tps;  /* prompt and output tokens per wall second */
    uint64_t requests, rejected;    /* rejected: never schedulable (too long, or larger
                                       than the pool); in no other figure */
    uint64_t prompt_tokens, output_tokens;
    uint64_t prefill_tokens_computed; /* recomputation after preemption included */
    uint64_t hit_tokens;
    double hit_rate;                /* vLLM's metric: hits / prompt tokens, first admissions */
    uint64_t preemptions;           /* vLLM's preemptions, SGLang's retractions */
    uint64_t peak_blocks, steps, max_running;
    /* the host tier (cpu_blocks 0: none) */
    uint64_t cpu_blocks;            /* its capacity in blocks */
    uint64_t cpu_hit_tokens;        /* loaded from the host at first admissions */
    double cpu_hit_rate;            /* cpu_hit_tokens / prompt tokens, first admissions */
    uint64_t cpu_loads, cpu_stores, cpu_evictions, cpu_skipped_stores;
    uint64_t bytes_to_cpu, bytes_from_cpu;
    double pcie_gbs;                /* the sustained rate each way the transfers used */
    double load_wait_seconds;       /* summed over loads: admission to KV arrived */
    double h2d_busy_seconds, d2h_busy_seconds;
    /* A workload of 2 to KVP_SERVE_MAX_PASSES passes (cyclic, grouped in cyclic
     * order), each pass's share: its requests' prompt and hit tokens (both
     * tiers, first admissions) and when its last request finished.  Passes
     * overlap in a concurrent run, so a pass's time is from the previous pass's
     * last finish (the first pass: from the first arrival) to its own. */
    uint32_t n_passes;              /* 0: one pass, or more than the maximum */
    struct kvp_serve_pass {
        uint64_t requests, prompt_tokens, hit_tokens;
        double hit_rate, end_seconds, seconds;
    } passes[16];
} kvp_serve_result;
#define KVP_SERVE_MAX_PASSES 16

/* prefix caching and async scheduling on, burst arrivals, vLLM's policy */
void kvp_serve_defaults(kvp_serve_config *c);
int kvp_serve_run(const kvp_workload *w, const kvp_serve_config *c, kvp_serve_result *out,
                  kvp_error *err);
/* SGLang's token pool from --mem-fraction-static (ModelRunner.profile_max_num_token):
 * (available - gpu x (1 - fraction)) / cell_bytes, available the memory free after
 * the weights load, cell_bytes one token's KV over all layers. */
/* An SVG of a capacity sweep: the hit rate (left axis) and the modelled wall
 * time (right axis) against capacity in tokens, n >= 2 points in increasing
 * order; an untimed sweep draws the wall time as 0.  An existing path is
 * kept unless force. */
int kvp_serve_plot(const char *path, int force, const char *title,
                   const uint64_t *capacity_tokens, const kvp_serve_result *r, size_t n,
                   kvp_error *err);
int kvp_serve_radix_pool(uint64_t gpu_bytes, uint64_t available_bytes, double fraction,
                         uint64_t cell_bytes, uint64_t *tokens, kvp_error *err);

/* ---- techniques: the twelve KV techniques, each in its own unit ------------ */

/* Four kinds of effect, measured in four units; never ranked against each
 * other (../shared/reference/techniques.md). */
typedef enum kvp_tech_kind {
    KVP_TECH_STORE,      /* store fewer bytes: bytes/token, capacity on the same memory */
    KVP_TECH_RECOMPUTE,  /* recompute less: prefill tokens, with and without reuse */
    KVP_TECH_READ,       /* read less: KV bytes read per decode step */
    KVP_TECH_PLACE       /* place differently: bytes wasted; host-tier tokens, reload time */
} kvp_tech_kind;

/* How a figure was obtained. */
typedef enum kvp_tech_label {
    KVP_LABEL_EXACT,     /* a runtime rule kvplan implements, byte-exact */
    KVP_LABEL_THEORY,    /* config arithmetic for a scheme no runtime here ships */
    KVP_LABEL_MODEL,     /* needs an assumption (time, bandwidth, behaviour): an estimate */
    KVP_LABEL_MEASURED   /* a public measurement, quoted */
} kvp_tech_label;

const char *kvp_tech_kind_name(kvp_tech_kind k);   /* "store", "recompute", "read", "place" */
const char *kvp_tech_label_name(kvp_tech_label l); /* "exact", "theory", "model", "measured" */

typedef struct kvp_tech_params {
    kvp_runtime runtime;         /* whose arithmetic the capacity figures use */
    uint64_t context;            /* tokens in total (-c, or vLLM's max_model_len); 0 = default */
    uint32_t seqs;               /* sequences sharing them (-np); 0 = 1 */
    kvp_theory_params theory;    /* cache types (n_ctx and n_seq are set from the above) */
    kvp_llama_params llama;
    kvp_vllm_params vllm;        /* vllm.gpu set: prefix reuse also in seconds (a model) */
    /* theory and llama.cpp: the memory the capacity figures are measured on;
     * 0 = what the model needs at this setting (vLLM: its KV cache memory) */
    uint64_t memory;
    const char *workload;        /* a synthetic workload spec (kvp_workload_synthetic) */
    const char *trace;           /* or a trace (kvp_workload_load); neither: the DESIGN section 4
                                    workload */
    const char *trace_format;    /* the trace's format; NULL: detected */
    const char *apply;           /* "kv-quant=fp8,sliding-window=4096": compose these */
    uint64_t host_memory;        /* the offload row's host tier; 0 = 128 GiB */
} kvp_tech_params;

/* Figures of one store-fewer-bytes variant (and of the model as it is). */
typedef struct kvp_tech_store {
    uint64_t per_token_bytes;    /* bytes one token costs in the layers that grow */
    uint64_t fixed_bytes_per_seq;/* state (and other per-sequence terms) */
    uint64_t held_tokens;        /* tokens per sequence the cache holds at the setting */
    uint64_t theory_bytes;       /* theory, at the setting */
    double theory_multiplier;    /* model's theory bytes / these */
    uint64_t theory_tokens;      /* the longest single sequence the memory holds */
    int theory_tokens_unbounded; /* nothing grows without bound (windows, eviction) */
    uint64_t theory_seqs;        /* sequences of the setting's length the memory holds */
    int rt_computed;             /* the chosen runtime (llama.cpp, vLLM) has a figure */
    kvp_tech_label rt_label;
    char rt_reason[1024];        /* why not, when it has none */
    uint64_t rt_bytes;           /* llama.cpp: total at -c; vLLM: one request's reservation */
    uint64_t rt_blocks;          /* vLLM: num_gpu_blocks */
    uint32_t rt_block_size;      /* vLLM: tokens per block */
    uint64_t rt_tokens;          /* vLLM: its logged token capacity; llama.cpp: largest -c, one slot */
    double rt_concurrency;       /* vLLM: its logged concurrency; llama.cpp: most -np */
    double rt_tokens_multiplier, rt_concurrency_multiplier;
    char rt_log[400];            /* the runtime's own line */
} kvp_tech_store;

typedef struct kvp_tech_recompute {
    uint64_t requests, prompt_tokens;
    uint64_t computed_without, computed_with; /* prefill tokens */
    double shared_fraction;      /* prompt tokens an unbounded cache would hit */
    int pool_computed;           /* the model's pool was simulated */
    uint64_t pool_blocks;        /* num_gpu_blocks, the null block included */
    uint32_t block_size;
    uint64_t hit_tokens, evictions;
    int cliff_found;             /* the sweep's steepest rise of the hit rate: */
    uint64_t cliff_from_blocks, cliff_to_blocks;
    double cliff_from_hit_rate, cliff_to_hit_rate;
    uint64_t cliff_half_blocks;  /* the smallest pool there with half of that rise */
    uint64_t unbounded_blocks;   /* a pool that never evicts */
    /* The same workload in seconds: replayed through vLLM v1's scheduler
     * (kvp_serve_run, as kvplan sim --concurrent) on the same pool with
     * prefix caching on and off, each step priced by the step-time model
     * (a roofline, not a measurement).  Only with vLLM's rules, a GPU given
     * (vllm.gpu) and the pool simulated; else timed is 0 and time_reason
     * says why.  Its own unit: never ranked against the capacity rows. */
    int timed;
    const char *time_gpu, *time_engine;
    double wall_on, wall_off;    /* seconds, caching on and off */
    double ttft_mean_on, ttft_mean_off;
    double speedup;              /* wall_off / wall_on */
    uint64_t time_rejected;      /* requests never schedulable (in neither run's times) */
    char time_reason[256];
} kvp_tech_recompute;

typedef struct kvp_tech_read {
    uint64_t context;            /* tokens of the sequence being decoded */
    uint64_t dense_bytes, sparse_bytes;
    uint64_t storage_added_bytes;/* page metadata kept beside the cache */
    uint32_t page, budget, dense_layers;
} kvp_tech_read;

typedef struct kvp_tech_place {
    /* paged: a length mix in vLLM's arithmetic */
    uint64_t mean_tokens, max_model_len, pool_blocks;
    uint32_t block_size;
    uint64_t fit_contiguous, fit_pow2, fit_paged;        /* requests that fit at once */
    uint64_t waste_contiguous, waste_pow2, waste_paged;  /* bytes per request, mean */
    double waste_contiguous_fraction, waste_paged_fraction;
    /* block-size effect */
    uint32_t n_sizes;
    struct { uint32_t block_size; uint64_t blocks, tokens; double concurrency; } sizes[4];
    /* offload */
    uint64_t host_bytes, host_tokens_theory, host_tokens_blocks, host_tokens_chunks;
    uint64_t reload_tokens, reload_bytes;
    double reload_s[4];          /* gen4 and gen5 sustained, gen4 and gen5 theoretical */
} kvp_tech_place;

typedef struct kvp_tech_row {
    const char *id;              /* gqa cross-layer mla sliding-window hybrid kv-quant
                                    token-eviction compressed prefix-reuse sparse-read
                                    paged offload */
    kvp_tech_kind kind;
    char variant[200];           /* the setting this row measures */
    char changes[64];            /* the factor of the memory formula it changes */
    const char *unit;
    int computed;                /* 0: refused, reason says why */
    char reason[1024];
    int already_used;            /* the model already uses the technique */
    kvp_tech_label label;
    char assumptions[480];
    uint64_t value, baseline;    /* the figure in its unit, and what it is measured against */
    double multiplier;           /* where one applies; 0 when none does */
    union {
        kvp_tech_store store;
        kvp_tech_recompute recompute;
        kvp_tech_read read;
        kvp_tech_place place;
    } u;
} kvp_tech_row;

typedef struct kvp_tech_result {
    kvp_runtime runtime;
    const char *runtime_version; /* the rule set ("v0.5.0", "0.29.1"); NULL for theory */
    const char *gpu;             /* vLLM's GPU */
    kvp_dtype type_k, type_v;    /* the theory cache types */
    const char *kv_cache_dtype;  /* vLLM's, as resolved */
    uint64_t context;            /* tokens in total at the setting */
    uint32_t seqs;
    uint64_t memory;             /* the memory capacities are measured on */
    int memory_is_estimate;      /* vLLM's estimate of its KV cache memory */
    const char *memory_source;   /* "given", "the model's need at this setting", "vLLM estimate" */
    kvp_tech_store base;         /* the model as it is */
    char workload[200];          /* the workload of the recompute row */
    size_t n_rows;
    kvp_tech_row rows[40];
    /* --apply: each technique alone, then all of them together */
    size_t n_applied;
    kvp_tech_row applied[8];
    int has_combined;
    kvp_tech_row combined;
    double product_theory, product_rt_tokens;
    char combined_note[1024];    /* where and why the figures do not multiply */
} kvp_tech_result;

/* The twelve techniques for m.  Fails (one line) where the model cannot be
 * computed at all; a technique that does not apply gets a row with a reason. */
int kvp_techniques(const kvp_model *m, const kvp_tech_params *p, kvp_tech_result *out,
                   kvp_error *err);
char *kvp_techniques_json(const kvp_model *m, const kvp_tech_result *r);

/* ---- plots ------------------------------------------------------------------- */

/* Memory against context length, 0 to max_ctx, as an SVG stacked-area chart:
 * one band per layer kind and the fixed state (theory), or per cache as
 * llama.cpp prints them (llama = 1).  Refuses an existing path unless force. */
int kvp_plot_memory(const kvp_model *m, int llama, const kvp_theory_params *tp,
                    const kvp_llama_params *lp, uint64_t max_ctx, const char *path, int force,
                    kvp_error *err);

/* ---- llama.cpp: weights per device (-ngl, -ts, -ot, --cpu-moe) ----------- */

/* How llama.cpp v0.5.0 spreads a GGUF's weights (llamacpp-memory-rules.md
 * 1.2-1.4): the input layer stays on the host; -ngl N offloads the last N-1
 * repeating layers and the output layer; several devices share them by -ts
 * (equal shares here when none is given; llama.cpp takes free memory);
 * overrides (-ot, then --cpu-moe / --n-cpu-moe in the order given) move
 * tensors whose names match, first match wins. */
typedef struct kvp_offload {
    int32_t n_gpu_layers;       /* -ngl; < 0: all */
    uint32_t n_devices;         /* 0: CPU only; at most 8 */
    float tensor_split[8];      /* -ts; all 0: equal shares */
    const char *overrides;      /* "REGEX=BUFT,..." (POSIX extended regex searched in the
                                 * name; BUFT "CPU" or a device "GPU0".."GPU7"); NULL none */
    uint32_t device_alignment;  /* 0: 128 (CUDA) */
    int cuda_row_padding;       /* CUDA's extra row for quantized ne0 % 512 != 0; -1: on */
    int use_mmap;               /* 1: host weights are a mapping of the file (llama.cpp's
                                 * default load mode): per file, the range its host tensors
                                 * span; 0: allocated, each padded to 32 (--no-mmap,
                                 * --load-mode none, and --fit's metadata-only pass) */
} kvp_offload;
/* --cpu-moe (n < 0) or --n-cpu-moe n as override text for kvp_offload. */
int kvp_offload_cpu_moe(int32_t n, char *buf, size_t len);

#define KVP_MAX_SHARD_MAPS 64
typedef struct kvp_weights_split {
    uint64_t host;              /* host buffers: every host tensor padded to 32, or with
                                 * use_mmap the mapped ranges, host_map[] summed */
    uint32_t n_host_maps;       /* use_mmap: files with a mapping ("CPU_Mapped" buffers) */
    uint64_t host_map[KVP_MAX_SHARD_MAPS]; /* bytes mapped per file (0: none in it) */
    uint32_t n_devices;
    uint64_t device[8];         /* each device's buffer */
    int32_t i_gpu_start;        /* first offloaded layer (n_layer_all + 1: none) */
    int32_t act_gpu_layers;     /* offloaded layers, the output layer counted */
    int tied_copy;              /* a device holds a second copy of token_embd */
} kvp_weights_split;
/* -1 (KVP_EUSAGE) for bad settings or a bad override; KVP_EINPUT when the
 * model has no tensor list (a config.json). */
int kvp_llama_weights_split(const kvp_model *m, const kvp_offload *o, kvp_weights_split *out,
                            kvp_error *err);

/* ---- llama.cpp: weights of a config.json model ----------------------------- */

/* A config.json lists no tensors, so its weights are computed: the
 * parameter count times a quantization type's bits per weight (for
 * llama-quantize's types, its whole-file figure for Llama-3-8B, so the
 * type mix is priced as llama-quantize makes it).  Never exact. */
typedef struct kvp_weights_type {
    const char *name;        /* "Q4_K_M", as llama-quantize spells it */
    uint32_t milli_bits;     /* bits per weight x 1000 */
    const char *basis;       /* where the figure comes from */
} kvp_weights_type;
#define KVP_WEIGHTS_TYPE_DEFAULT "Q4_K_M"
/* By name, ignoring case (Q4_K = Q4_K_M, as llama-quantize); NULL:
 * KVP_WEIGHTS_TYPE_DEFAULT.  NULL when unknown. */
const kvp_weights_type *kvp_weights_type_find(const char *name);
const char *kvp_weights_type_list(void);     /* "F32 F16 BF16 Q8_0 ..." */
/* params weights of type t, rounded up to a byte; -1 on overflow. */
int kvp_weights_type_bytes(const kvp_weights_type *t, uint64_t params, uint64_t *out);

/* ---- llama.cpp: compute buffers (lib/graph/) ----------------------------- */

/* Compute buffers for a run kvp_llama() resolved (r: context, ubatch, slots,
 * caches, flash attention).  o NULL or o->n_devices 0: CPU only. */
int kvp_llama_compute(const kvp_model *m, const kvp_llama_result *r, const kvp_offload *o,
                      kvp_compute *out, kvp_error *err);

/* ---- llama.cpp's --fit, replayed (llamacpp-memory-rules.md 5) ------------- */

enum { KVP_FITP_MAX_DEV = 8 };
enum { KVP_FITP_OK = 0, KVP_FITP_FAILED = 1 };

/* One configuration the fit measures: what llama.cpp's probe would load. */
typedef struct kvp_fitp_config {
    uint64_t n_ctx;
    int32_t n_gpu_layers;        /* -1: all */
    uint32_t n_devices;
    float tensor_split[KVP_FITP_MAX_DEV];  /* all 0: llama.cpp's own split */
    char overrides[4096];        /* "REGEX=CPU|GPUn,..." as -ot takes them */
} kvp_fitp_config;

/* The measurement: each device's model + context + compute bytes (the
 * memory breakdown of a metadata-only load), the host's in used[n_devices]. */
typedef int (*kvp_fitp_measure_fn)(void *ud, const kvp_fitp_config *c,
                                   uint64_t used[KVP_FITP_MAX_DEV + 1], kvp_error *err);

typedef struct kvp_fitp_input {
    uint32_t n_devices;          /* 0: CPU only (the host's total is compared) */
    uint64_t free[KVP_FITP_MAX_DEV];    /* each device's free memory */
    uint64_t margin[KVP_FITP_MAX_DEV];  /* --fit-target; 0: 1024 MiB */
    uint64_t model_bytes[KVP_FITP_MAX_DEV]; /* weights per device at the initial settings */
    uint64_t host_total;         /* CPU only: the host's total memory */
    uint64_t n_ctx;              /* -c; used when not automatic */
    int n_ctx_auto;              /* -c 0 / unset: the fit may choose it */
    uint32_t n_ctx_min;          /* --fit-ctx, default 4096; UINT32_MAX: full */
    uint32_t n_seq_max;
    int kv_unified;
    uint32_t n_layer;            /* repeating layers */
    uint32_t n_ctx_train, n_expert;
    int32_t n_gpu_layers;        /* -1 unless the user set it */
    int user_ngl, user_tensor_split, user_overrides;  /* set by the user: the fit gives up */
} kvp_fitp_input;

typedef struct kvp_fitp_result {
    int status;                  /* KVP_FITP_OK or KVP_FITP_FAILED (a warning; the run goes on
                                    with the settings as they were) */
    char message[240];           /* llama.cpp's warning when it fails */
    uint64_t n_ctx;              /* the context chosen */
    kvp_fitp_config config;      /* -c, -ngl, -ts, -ot as the fit leaves them */
    uint32_t layers[KVP_FITP_MAX_DEV], partial[KVP_FITP_MAX_DEV];
    uint64_t used[KVP_FITP_MAX_DEV];  /* the last measurement per device */
    uint32_t n_probes;           /* measurements made (llama.cpp loads the model each time) */
    size_t n_log;
    char log[48][200];           /* the trace lines (-lv 4), without the function prefix */
} kvp_fitp_result;

/* common_params_fit_impl's decisions from the caller's measurements. */
int kvp_llama_fit_params(const kvp_fitp_input *in, kvp_fitp_measure_fn measure, void *ud,
                         kvp_fitp_result *out, kvp_error *err);

/* ---- llama.cpp: the whole run per device ----------------------------------- */

/* llama-server's placement flags (llamacpp-memory-rules.md 1.2-1.5, 2, 4),
 * beside the cache settings of kvp_llama_params. */
typedef struct kvp_llama_placement {
    kvp_offload offload;        /* -ngl (-1 auto, -2 all, N), -ts, -ot / --cpu-moe and the
                                 * devices (n_devices 0: CPU only); use_mmap is set from
                                 * no_mmap below */
    int no_kv_offload;          /* -nkvo: every layer's cache in host memory */
    int no_mmap;                /* --no-mmap, --load-mode none: host weights allocated */
    int fit;                    /* --fit: 1 on (llama-server's default), 0 off */
    int tensor_split_given;     /* -ts given; else devices share by memory_bytes (llama.cpp:
                                 * by free memory at start-up) */
    uint64_t device_memory[8];  /* each device's memory in bytes; 0 not known */
    char device_label[8][32];   /* what the user named it ("RTX-4090", "12GiB"); "" */
    const char *weights_type;   /* a config.json's weights: a kvp_weights_type name;
                                 * NULL KVP_WEIGHTS_TYPE_DEFAULT */
    char backend[16];           /* the devices' ggml backend as it names them ("CUDA",
                                 * "ROCm"); "": CUDA.  Only the names change: the buffer
                                 * rules are CUDA's (HIP shares them) */
} kvp_llama_placement;
/* CPU only, -ngl auto, mmap, KV offloaded, --fit on. */
void kvp_llama_placement_defaults(kvp_llama_placement *pl);

/* The flags' values as llama.cpp v0.5.0's common/arg.cpp reads them; each
 * fails (KVP_EUSAGE) with one line naming the flag.  -ngl: a number, "auto"
 * (-1) or "all" (-2).  -ts: proportions split at ',' or '/', at most cap. */
int kvp_llama_parse_ngl(const char *s, int32_t *out, kvp_error *err);
int kvp_llama_parse_tensor_split(const char *s, float *out, uint32_t cap, uint32_t *n,
                                 kvp_error *err);
/* One more device (at most 8): a card of the GPU table, "NxCARD" for N of
 * them (--gpu), or any device of this much memory (--device-memory). */
int kvp_llama_placement_add_gpu(kvp_llama_placement *pl, const char *spec, kvp_error *err);
int kvp_llama_placement_add_memory(kvp_llama_placement *pl, const char *size, kvp_error *err);

/* One device's memory: the host first, then each GPU.  total_bytes is the
 * sum of the figures known; compute_bytes counts only where compute_modelled. */
typedef struct kvp_device_mem {
    char name[24];              /* "CPU" (CPU only), "Host" (beside GPUs), "CUDA0", ... */
    char label[32];             /* the device as the user named it; "" */
    int is_host;
    uint64_t memory_bytes;      /* given (--gpu, --device-memory); 0 not known */
    uint64_t weights_bytes, kv_bytes, recurrent_bytes, compute_bytes, output_bytes;
    uint64_t total_bytes;
    int compute_modelled;       /* 0: kvplan has no compute figure for this run */
    int exact;                  /* every figure known is exact (llama.cpp's own rule);
                                 * 0 where one is computed: device compute, a config.json's
                                 * weights, a split by free memory */
    uint64_t over_bytes;        /* total_bytes - memory_bytes when above; else 0 */
} kvp_device_mem;

/* One buffer llama.cpp allocates and prints at start-up. */
typedef struct kvp_llama_buffer {
    char kind[8];               /* "model", "KV", "RS", "output", "compute" */
    char name[24];              /* buffer type: "CPU", "CPU_Mapped", "CUDA_Host", "CUDA0" */
    uint32_t row;               /* the kvp_device_mem it belongs to */
    uint64_t bytes;
    char log[128];              /* the line as llama.cpp prints it */
} kvp_llama_buffer;

typedef struct kvp_llama_devices {
    uint32_t n_rows;
    kvp_device_mem rows[9];     /* the host, then each device */
    int32_t n_layer_all;        /* repeating layers (MTP blocks included) */
    int32_t n_gpu_layers;       /* offloaded, the output layer counted: 0 .. n_layer_all + 1 */
    int32_t ngl_given;          /* -ngl as given: -1 auto (the default; --fit may lower
                                 * it), -2 all, or the number */
    int ngl_auto;               /* ngl_given == -1 */
    int use_mmap, kv_offload, fit;  /* the placement's flags as applied */
    char pinned[24];            /* the devices' host buffer type ("CUDA_Host") */
    int weights_known;          /* 0: a config.json whose parameters kvplan cannot count
                                 * (weights_bytes 0 and not in the totals) */
    int weights_computed;       /* a config.json: parameter count x weights_type */
    const kvp_weights_type *weights_type;
    uint64_t param_count;
    int tied_copy;              /* a device holds a second copy of the token embeddings */
    kvp_compute compute;        /* kvp_llama_compute for this placement */
    size_t n_buffers;
    kvp_llama_buffer buffers[64];  /* in the order llama.cpp prints each kind */
    size_t n_over;
    char over[8][240];          /* one line per device over its memory */
    size_t n_notes;
    char notes[8][300];
} kvp_llama_devices;

/* kvp_llama (into r) and the run's memory per device: weights by
 * kvp_llama_weights_split (or, for a config.json, computed), KV and state
 * by each layer's device (host with -nkvo; CUDA's alignment and padding on
 * a device), the output buffer on the host, compute buffers where
 * kvp_llama_compute models them. */
int kvp_llama_plan(const kvp_model *m, const kvp_llama_params *p,
                   const kvp_llama_placement *pl, kvp_llama_result *r,
                   kvp_llama_devices *out, kvp_error *err);

/* ---- kvplan fit for a whole llama.cpp run ---------------------------------- */

typedef struct kvp_fitrun_knob {
    char name[48];               /* "-ctk q8_0 -ctv q8_0 (with -fa on)" */
    uint64_t device_bytes;       /* all devices, every layer offloaded, with the knob */
    uint64_t saved_bytes;        /* against the settings as given */
    char why[240];               /* when llama.cpp refuses the knob for this model */
} kvp_fitrun_knob;

typedef struct kvp_fitrun_result {
    kvp_fitp_result fit;         /* what llama.cpp's --fit would do */
    uint32_t n_layer, n_seq, n_streams;
    uint64_t n_ctx_train;
    uint64_t max_ctx_full_offload;  /* largest -c with every layer on the devices, each
                                       device within its memory minus the margin; 0 none */
    uint64_t n_ctx_given;        /* -c as given (unset: n_ctx_train x slots) */
    int32_t max_ngl_at_ctx;      /* most -ngl at that context */
    uint64_t devices_at_full;    /* all devices' bytes, every layer offloaded */
    size_t n_knobs;
    kvp_fitrun_knob knobs[8];
} kvp_fitrun_result;

/* pl names the devices and their memory (--gpu, --device-memory); margins
 * per device (NULL: llama.cpp's 1024 MiB each). */
int kvp_llama_fit_run(const kvp_model *m, const kvp_llama_params *p,
                      const kvp_llama_placement *pl, const uint64_t *margins,
                      kvp_fitrun_result *out, kvp_error *err);

/* ---- Ollama: the llama-server flags it passes (v0.30+) -------------------- */

/* Since v0.30 Ollama runs every GGUF model in upstream llama-server, so its
 * KV cache is llama.cpp's for the flags Ollama chooses (remote-models.md
 * 4.3).  These are the server's environment variables, NULL when unset. */
typedef struct kvp_ollama_env {
    const char *context_length;  /* OLLAMA_CONTEXT_LENGTH: num_ctx per sequence */
    const char *num_parallel;    /* OLLAMA_NUM_PARALLEL, default 1 */
    const char *kv_cache_type;   /* OLLAMA_KV_CACHE_TYPE (-ctk and -ctv) */
    const char *flash_attention; /* OLLAMA_FLASH_ATTENTION (on/off; unset: auto) */
} kvp_ollama_env;
/* The four from getenv(). */
void kvp_ollama_env_read(kvp_ollama_env *e);

typedef struct kvp_ollama_settings {
    uint64_t num_ctx;            /* per sequence, after the cap at the training context */
    uint32_t n_seq;              /* -np */
    uint64_t n_ctx;              /* -c: num_ctx x np */
    int has_type;                /* OLLAMA_KV_CACHE_TYPE was set: */
    kvp_dtype type;              /* -ctk and -ctv */
    kvp_flash_attn flash_attn;   /* -fa */
    uint32_t n_batch;            /* -b and -ub */
    size_t n_why;
    char why[6][160];            /* how each setting was decided */
} kvp_ollama_settings;

/* What Ollama passes llama-server for m (a model with from_ollama set, or
 * any model as a GGUF Ollama would run): num_ctx from the params layer, else
 * OLLAMA_CONTEXT_LENGTH, else its automatic 4096 (the tier below 23 GiB of
 * VRAM), capped at the training context; np from OLLAMA_NUM_PARALLEL (1,
 * and forced to 1 for the architectures Ollama serves one at a time).  A
 * malformed variable is an error naming it. */
int kvp_ollama_settings_for(const kvp_model *m, const kvp_ollama_env *env,
                            kvp_ollama_settings *out, kvp_error *err);

/* ---- JSON output (schema KVPLAN_JSON_SCHEMA) ------------------------------ */

/* Each returns a malloc'd, indented JSON document (free with free()), or
 * NULL when out of memory. */
char *kvp_model_json(const kvp_model *m);
char *kvp_theory_json(const kvp_model *m, const kvp_theory_result *r);
char *kvp_llama_json(const kvp_model *m, const kvp_llama_result *r);
/* The same, with "placement" and the "devices" array of kvp_llama_devices. */
char *kvp_llama_plan_json(const kvp_model *m, const kvp_llama_result *r,
                          const kvp_llama_devices *d);
char *kvp_vllm_json(const kvp_model *m, const kvp_vllm_result *r);
char *kvp_fit_json(const kvp_model *m, const kvp_fit_params *p, const kvp_fit_result *r,
                   size_t n);

/* ---- units --------------------------------------------------------------- */

/* Token counts: "32768", "32k", "32K", "128k", "1m" (k = 1024).  Rejects 0
 * and anything above 2^40. */
int kvp_parse_tokens(const char *s, uint64_t *out);
/* Sizes: "24GiB" (binary), "24GB" (SI), "58987118592" (bytes), "54.94GiB". */
int kvp_parse_bytes(const char *s, uint64_t *out);
/* "400,032", as the runtimes print counts. */
void kvp_format_thousands(uint64_t v, char *buf, size_t n);

/* ---- a known rule set for a config kvplan cannot name (--family) ---------- */

/* kvp_model_load, with the config.json read by the rule set `family` (one
 * of kvp_families(): "llama", "gemma3", ...) whatever its model_type or
 * architectures say; the model's note and source say so.  An unknown
 * family and a GGUF file (whose metadata names its architecture) are
 * refused (KVP_EUSAGE).  NULL or "": as kvp_model_load. */
int kvp_model_load_family(const char *spec, const char *family, kvp_model **out,
                          kvp_error *err);
/* Space-separated names of kvplan's rule sets. */
const char *kvp_families(void);

/* ---- the architectures kvplan reads (kvplan archs) ------------------------- */

/* One rule set: the config.json model_type values and `architectures`
 * classes it reads, and the names llama.cpp's converter gives them. */
typedef struct kvp_arch_info {
    const char *family;        /* the rule set's name, for --family */
    const char *model_types;   /* space-separated config model_type values */
    const char *classes;       /* space-separated `architectures` classes; "" none */
    const char *defaults_from; /* transformers class whose defaults apply; "" none */
    char llama_archs[256];     /* llama.cpp general.architecture names; "" none */
    const char *refused;       /* why kvplan refuses it (its reader says in full); NULL: read */
} kvp_arch_info;

size_t kvp_arch_count(void);
/* The i-th rule set, in lookup order (0 <= i < kvp_arch_count()); -1 past
 * the end. */
int kvp_arch_at(size_t i, kvp_arch_info *out);

/* One llama.cpp architecture (general.architecture) whose GGUF files kvplan
 * reads with llama.cpp's own rules. */
typedef struct kvp_llama_arch_info {
    const char *name;   /* "llama", "gemma3", ... as src/llama-arch.cpp spells it */
    const char *family; /* kvplan's rule set for its configs; "" none */
    int twin;           /* 1: kvplan twin can write a shape twin of it */
    const char *refused; /* why kvplan refuses its GGUFs; NULL: read */
} kvp_llama_arch_info;

size_t kvp_llama_arch_count(void);
int kvp_llama_arch_at(size_t i, kvp_llama_arch_info *out);

#ifdef __cplusplus
}
#endif
#endif
