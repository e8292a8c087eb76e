/* steptime.h - the step-time model: what one scheduled forward pass (a
 * serve_batch) costs in seconds on one GPU, from the model's exact shapes,
 * the GPU's datasheet rates and a few calibrated factors.  A roofline
 * (serving-sim-rules.md 4.1-4.3) plus explicit overhead terms (4.8); every
 * figure it returns is a model, never a measurement.  The schedulers call it
 * through serve_cost_fn (serve_time_step); they never see its insides. */
#ifndef KVP_SERVE_STEPTIME_H
#define KVP_SERVE_STEPTIME_H

#include "serve.h"

/* The framework around the GPU, whose cost no roofline sees (4.8).  Each is
 * a versioned overhead profile: the same model and GPU run at very different
 * speeds under vLLM 0.5 and 0.6 (serving-sim-rules.md 5, row 6). */
typedef enum serve_engine {
    SERVE_ENGINE_VLLM_V1,        /* vLLM v1, async scheduling (the default) */
    SERVE_ENGINE_VLLM_V05,       /* vLLM 0.5.x: CPU work serialised with every step */
    SERVE_ENGINE_VLLM_V06_MULTI, /* vLLM 0.6.0 --num-scheduler-steps 10 */
    SERVE_ENGINE_GPU_ONLY,       /* no framework (FasterTransformer's C++ loop) */
    SERVE_ENGINE_COUNT
} serve_engine;

/* Efficiency factors and overhead terms.  serve_time_init fills them from the
 * engine; a caller may overwrite any (serve_time_peak: the bare roofline). */
typedef struct serve_eff {
    double mfu_prefill;   /* share of peak tensor rate: tokens of prompt chunks */
    double mfu_decode;    /* ... and of decode tokens (skinny matmuls) */
    double mbu;           /* share of peak memory bandwidth */
    double step_s;        /* fixed cost per step (launches, scheduling), seconds */
    double req_s;         /* per scheduled request per step (input prep, sampling) */
    double api_s;         /* per request once, added to its TTFT by the caller */
} serve_eff;

/* Decode MFU before Hopper, relative to the engine's (Hopper's) figure: BLIS
 * measured 0.18 on A100 against 0.30 on H100 (serving-sim-rules.md 4.6), and
 * rows 3-4 vs 7 of 5 need the same gap. */
#define SERVE_PRE_HOPPER_DECODE 0.6

/* One attention/state group of layers (kvp_theory's grouping). */
typedef struct serve_time_group {
    uint32_t n_layers;
    uint32_t window;          /* 0: full context */
    int recurrent;            /* a fixed state per request: read and written each step
                                 (cross-attention's encoder KV: read only) */
    int cross;
    double attn_flops;        /* per layer per (query token x context token) */
    double state_flops;       /* recurrent: per layer per token */
    double kv_bytes;          /* per token, all layers of the group */
    double state_bytes;       /* per request, all layers of the group */
} serve_time_group;

typedef struct serve_time {
    const kvp_gpu *gpu;
    serve_engine engine;
    serve_eff eff;
    double peak_flops;        /* FLOP/s: BF16, or FP8 for w8a8 on FP8 tensor cores */
    double peak_bw;           /* bytes/s */
    double weight_bytes;      /* per parameter */
    double dense_params;      /* streamed and multiplied every step: all but the experts */
    double active_params;     /* multiplied per token: dense + top-k experts */
    double head_params;       /* d_model x vocab, for sampled rows only */
    double expert_params;     /* one routed expert, all MoE layers together */
    uint32_t n_expert, n_expert_used;
    size_t n_groups;
    serve_time_group groups[KVP_LAYER_KIND_COUNT * 8];
} serve_time;

typedef struct serve_time_opts {
    double weight_bytes;  /* per parameter: 2 bf16, 1 fp8; 0: the model's dtype */
    int fp8_compute;      /* weights and activations FP8: the FP8 rate where the GPU has one */
    int kv_fp8;           /* --kv-cache-dtype fp8: KV bytes halve, compute does not change */
    serve_engine engine;
} serve_time_opts;

/* One step's cost, broken down. */
typedef struct serve_step_cost {
    double flops_linear, flops_head, flops_attn; /* flops_attn: recurrent updates too */
    double flops_prefill, flops_decode;          /* the same total, by token class */
    double bytes_weights, bytes_kv_read, bytes_kv_write, bytes_state;
    double experts_read;                         /* distinct experts per MoE layer */
    double t_compute, t_memory, t_overhead, seconds;
} serve_step_cost;

/* Builds the model for m on g.  Fails (KVP_EINPUT) when m's parameter count
 * is unknown or g has no rates. */
int serve_time_init(serve_time *t, const kvp_model *m, const kvp_gpu *g,
                    const serve_time_opts *o, kvp_error *err);
/* Efficiencies 1, overheads 0: the peak roofline of 4.4's worked numbers. */
void serve_time_peak(serve_time *t);
void serve_time_cost(const serve_time *t, const serve_batch *b, serve_step_cost *out);
/* serve_cost_fn: seconds of one step (a model). */
double serve_time_step(void *t, const serve_batch *b);
/* The per-request cost outside the steps (API server, tokenisation), seconds. */
double serve_time_request_s(const serve_time *t);
/* Expected distinct experts per MoE layer when T tokens each pick k of E
 * uniformly: E (1 - (1 - k/E)^T). */
double serve_time_distinct_experts(uint32_t E, uint32_t k, uint64_t T);
const char *serve_engine_name(serve_engine e);
/* "vllm-v1", "vllm-0.5", "vllm-0.6-multistep", "gpu-only"; -1 when unknown. */
int serve_engine_parse(const char *name);

#endif
