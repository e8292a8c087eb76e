/* tech.h - the techniques family (kvplan techniques): what the files in
 * lib/tech/ share.  A store-fewer-bytes technique is a list of changes
 * (steps) to the per-layer model and the runtime settings; applying them
 * gives a what-if model that the existing runtimes price, so no figure
 * here repeats a runtime's arithmetic.  The other three kinds of effect
 * (recompute, read, place) each have a file of their own.
 * Reference: ../shared/reference/techniques.md. */
#ifndef KVP_TECH_H
#define KVP_TECH_H

#include "../kvp_int.h"

/* ---- the setting every row is measured at ---------------------------------- */

typedef struct tech_ctx {
    const kvp_model *m;
    const kvp_tech_params *p;
    kvp_tech_result *r;
    uint64_t N;                  /* tokens in total */
    uint32_t S;                  /* sequences */
    uint64_t n;                  /* tokens of one sequence (N / S) */
    uint64_t memory;             /* what the capacity figures are measured on */
    kvp_theory_params theory;    /* the baseline's settings, resolved */
    kvp_llama_params llama;
    kvp_vllm_params vllm;        /* kv_cache_memory fixed to `memory` */
} tech_ctx;

/* ---- changes ------------------------------------------------------------------ */

typedef enum tech_op {
    OP_KV_HEADS,    /* a: KV heads of every per-head attention layer (0: its query heads) */
    OP_UNSHARE,     /* shared-KV layers own a cache again */
    OP_SHARE,       /* a: layers of one kind share each owner's cache in runs of a */
    OP_MLA_EXPAND,  /* MLA layers store per-head K and V */
    OP_MLA,         /* a: kv_lora_rank, b: rope dims; per-head layers store the latent */
    OP_UNWINDOW,    /* sliding and chunked layers attend fully */
    OP_WINDOW,      /* a: window; every b-th full layer stays full, the rest slide */
    OP_UNHYBRID,    /* state layers become attention; parallel mixers drop their state */
    OP_HYBRID,      /* every b-th attention layer stays, the rest hold a GDN state */
    OP_QUANT,       /* s: fp8 q8_0 q4_0 nvfp4 kivi2 turboquant_* */
    OP_EVICT,       /* a + b tokens kept (sinks + recent), or f x n (H2O) */
    OP_COMPRESS     /* a: ratio, b: raw window; s "nsa": NSA keeps raw + compressed */
} tech_op;

typedef struct tech_step {
    tech_op op;
    uint64_t a, b;
    double f;
    const char *s;
} tech_step;

typedef struct tech_variant {
    const char *id;
    char name[96];
    char changes[64];
    char assumptions[480];
    kvp_tech_label label;
    int n_steps;
    tech_step steps[8];
} tech_variant;

/* A variant applied: the what-if model, the settings each runtime gets, and
 * the tokens a sequence still holds (eviction, compression). */
typedef struct tech_applied {
    kvp_model *model;            /* owned */
    kvp_model *theory_model;     /* TurboQuant's slots set (owned), or == model */
    kvp_theory_params theory;
    kvp_llama_params llama;
    kvp_vllm_params vllm;
    int llama_ok, vllm_ok;
    char llama_why[200], vllm_why[200];
    int vllm_model;              /* the vLLM figure is a model (no vLLM implementation) */
    uint64_t evict_budget;       /* 0: none */
    double evict_fraction;       /* 0: none */
    uint32_t comp_ratio, comp_window;
    int comp_nsa;
    uint64_t residual;           /* KIVI: recent tokens kept in full precision, */
    kvp_theory_params residual_types; /* in the baseline's cache types */
} tech_applied;

int tech_apply(const tech_ctx *c, const tech_step *steps, int n_steps, tech_applied *out,
               kvp_error *err);
void tech_applied_free(tech_applied *a);
/* Tokens one sequence of n tokens keeps. */
uint64_t tech_held(const tech_applied *a, uint64_t n);

/* Counts of the model's layers by what they hold. */
typedef struct tech_census {
    uint32_t per_head;           /* full, sliding, chunked */
    uint32_t full, windowed, mla, shared, state, gqa, mha_heads_known;
} tech_census;
void tech_census_of(const kvp_model *m, tech_census *c);

/* ---- evaluation ------------------------------------------------------------------ */

/* Theory bytes of S sequences sharing N tokens under a variant. */
int tech_theory_bytes(const tech_applied *a, uint64_t N, uint32_t S, uint64_t *out,
                      kvp_error *err);
/* Every figure of a store row (and of the baseline, with no steps). */
int tech_eval(const tech_ctx *c, const tech_applied *a, kvp_tech_store *out, kvp_error *err);
/* The multipliers of s against the baseline's figures. */
void tech_relate(const kvp_tech_store *base, kvp_tech_store *s);

/* ---- rows ------------------------------------------------------------------------- */

kvp_tech_row *tech_row_new(tech_ctx *c, const char *id, kvp_tech_kind kind);
/* A store row for a variant: applied, evaluated and related to the baseline. */
int tech_store_variant(tech_ctx *c, const tech_variant *v, int already_used,
                       kvp_tech_row *row, kvp_error *err);
/* The variant `id[=param]` names, for --apply; fails with a one-line reason. */
int tech_variant_parse(const tech_ctx *c, const char *item, tech_variant *v, kvp_error *err);

int tech_store_rows(tech_ctx *c, kvp_error *err);
int tech_recompute_rows(tech_ctx *c, kvp_error *err);
int tech_read_rows(tech_ctx *c, kvp_error *err);
int tech_place_rows(tech_ctx *c, kvp_error *err);
int tech_compose(tech_ctx *c, kvp_error *err);

/* The recompute row in seconds (tech_seconds.c): sets rc's time fields, or
 * timed 0 and the reason; fails only where the workload cannot be read. */
int tech_recompute_seconds(const tech_ctx *c, kvp_tech_recompute *rc, kvp_error *err);

/* The recompute row's workload (--workload, --trace, or DESIGN section 4's)
 * in blocks of bs tokens. */
int tech_load_workload(const tech_ctx *c, uint32_t bs, kvp_workload *w, kvp_error *err);

/* vLLM's pool arithmetic on the setting's memory, for rows that derive
 * from it whatever the chosen runtime: the settings to use. */
void tech_vllm_settings(const tech_ctx *c, kvp_vllm_params *v);

#endif
