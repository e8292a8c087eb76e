/* cli.h - what the kvplan subcommands share: option parsing, messages and
 * number formatting.  Each subcommand lives in its own cmd_*.c file and is
 * a thin layer over libkvplan. */
#ifndef KVPLAN_CLI_H
#define KVPLAN_CLI_H

#include <stdio.h>

#include "kvplan.h"

/* Exit codes: 1 bad input, 2 bad usage. */
#define EXIT_INPUT 1
#define EXIT_USAGE 2

/* Settings shared by the commands; each command reads the ones it needs. */
typedef struct cli_opts {
    const char *accepted;    /* the option keys the command takes */
    char accepted_buf[1024];
    const char *model;       /* the first positional argument */
    const char *models[64];  /* all of them, for commands that take "models" */
    int n_models;
    const char *ctx_list;    /* -c 4k,32k,128k, for commands that take "ctx-list" */
    const char *variants;    /* compare --variants */
    int runtime_set;
    const char *runtime;     /* "theory" */
    uint64_t n_ctx;
    int n_ctx_set;
    uint32_t n_seq;
    kvp_dtype type_k, type_v;
    int json;
    /* llama.cpp */
    int np_set;              /* -np given (else llama-server's auto: 4 unified) */
    uint32_t n_batch, n_ubatch;
    kvp_flash_attn flash_attn;
    int swa_full, kv_unified;
    const char *llama_version;
    /* llama.cpp placement (-ngl, -ts, -ot, --cpu-moe, -nkvo, --no-mmap, --fit, the
     * devices): built as the flags come, overrides in the order given */
    kvp_llama_placement place;
    char overrides[16384];
    int place_set;           /* a placement flag or a device was given */
    int ngl_set, mmap_set, kvo_set; /* -ngl, --no-mmap / --load-mode, -nkvo / -kvo given */
    /* vLLM */
    uint64_t max_model_len, max_num_batched_tokens, kv_cache_memory;
    uint32_t max_num_seqs, block_size, tp, pp;
    double gpu_util;
    int kv_fp8, prefix_caching, entry_serve;
    const char *gpu, *vllm_version;
    const char *kv_cache_dtype; /* --kv-cache-dtype as typed; NULL = auto */
    /* fit */
    uint64_t memory;
    /* twin */
    const char *out;
    int kv_only, force;
    /* sim, techniques */
    const char *sim_trace, *sim_workload, *sim_sweep;
    const char *trace_format;    /* --format NAME (NULL: detected) */
    const char *export_path;     /* sim --export FILE: kvplan's JSONL */
    int reuse_any;               /* sim --reuse any-position: the chunk-reuse what-if too */
    int unbounded;               /* sim --unbounded: a pool that never evicts */
    const char *apply;       /* techniques --apply LIST */
    uint64_t host_memory;    /* techniques --host-memory */
    int explain;
    uint64_t capacity_blocks, capacity_tokens;
    /* sim --concurrent */
    int sim_concurrent, no_async;
    int enforce_eager;           /* vLLM --enforce-eager */
    const char *sim_policy, *sim_arrivals, *plot;
    double sim_rate, mem_fraction;   /* 0: not given */
    const char *rate_sweep;          /* --rate-sweep A..B[/P], requests per second */
    uint64_t cpu_tier;               /* --cpu-tier SIZE, bytes (0: none) */
    int pcie_gen;                    /* --pcie gen4|gen5 (0: the GPU's) */
    uint64_t sim_seed;
    const char *family;      /* --family NAME: read the config.json by this rule set */
    const char *revision;    /* --revision REV: a Hub branch, tag or commit */
    int offline;             /* --offline: no network */
    int type_k_set, type_v_set, fa_set, batch_set, ubatch_set; /* given, not defaults */
    int llama_archs;         /* archs --llama */
} cli_opts;

/* Prints "kvplan: msg" on stderr and returns code. */
int cli_fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int cli_fail_err(const kvp_error *e);

/* Parses the options listed in `accepted` (space-separated long names such
 * as "ctx-size parallel cache-type-k cache-type-v runtime json"); the first
 * non-option argument is the model.  Returns 0, or an exit code after
 * printing the problem. */
int cli_parse(int argc, char **argv, const char *accepted, cli_opts *o);
int cli_wants_help(int argc, char **argv);

/* "4,831,838,208" */
const char *fmt_int(uint64_t v, char *buf, size_t n);
/* "4608.00" (MiB = 2^20 bytes) */
const char *fmt_mib(uint64_t bytes, char *buf, size_t n);

/* Loads the model named on the command line; returns 0 or an exit code. */
/* A model from Ollama (ollama:NAME) also sets, where the command line did
 * not, the runtime (llama.cpp) and the flags Ollama would pass llama-server,
 * said in one line on stderr. */
int cli_load_model(cli_opts *o, const char *cmd, kvp_model **m);
/* Runtime settings from the options. */
void cli_theory_params(const cli_opts *o, kvp_theory_params *p);
void cli_llama_params(const cli_opts *o, kvp_llama_params *p);
void cli_vllm_params(const cli_opts *o, kvp_vllm_params *p);
/* llama.cpp's placement from the options (overrides point into o). */
void cli_llama_placement(const cli_opts *o, kvp_llama_placement *pl);
/* "5 full + 29 sliding" */
const char *fmt_kinds(const kvp_model *m, char *buf, size_t n);

int cmd_models(int argc, char **argv);
int cmd_archs(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_mem(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_plot(int argc, char **argv);
/* kv: kvplan's own options before "--"; argv: the pasted command. */
int cmd_paste(int n_kv, char **kv, int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_twin(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_techniques(int argc, char **argv);

/* cmd_sim.c: the pool vLLM builds for o->model (its num_gpu_blocks, block size
 * and batch defaults in *r), the model kept in *m for the time model (NULL m:
 * freed); full-attention and MLA models only.  Returns 0 or an exit code. */
int sim_model_pool(const cli_opts *o, kvp_model **m, kvp_vllm_result *r);
/* "A..B[/POINTS]": the capacities in blocks (malloc'd) */
int sim_parse_sweep(const char *s, uint64_t **caps, size_t *n);
/* --trace or --workload, for blocks of bs tokens */
int sim_block_size(const cli_opts *o, uint32_t *bs);
uint64_t *sim_caps_tokens(const uint64_t *caps, size_t n, uint32_t bs);
int sim_load_workload(const cli_opts *o, uint32_t bs, kvp_workload *w);
/* the one-at-a-time replay's run, for its report (sim_report.c) */
typedef struct sim_job {
    kvp_workload w;
    kvp_workload_stats st;
    uint32_t bs;
    uint64_t *caps;             /* num_blocks per run */
    size_t n;
    kvp_sim_result *r;          /* prefix reuse, per capacity */
    kvp_sim_result *any;        /* the any-position what-if (NULL: not asked) */
    int sweep, caching;
    uint64_t model_blocks;      /* with a MODEL: vLLM's num_gpu_blocks for it */
    uint64_t block_bytes;       /* with a MODEL: one block's KV over all layers (else 0) */
    const char *model;
} sim_job;
void sim_print_one(const sim_job *j);
void sim_print_sweep(const sim_job *j);
void sim_print_json(const sim_job *j);
/* cmd_sim_serve.c: `kvplan sim --concurrent`, with the options parsed */
int sim_serve(const cli_opts *o);

/* fit_run.c: kvplan fit for a whole llama.cpp run on GPUs */
int fit_run(const cli_opts *o, kvp_model *m);

#endif
