/* cli.c - option parsing, messages and formatting shared by the commands.
 * Flags mirror the runtimes' own spellings (llama.cpp's -c, -np, -ctk, -ctv)
 * so users can paste what they run. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

int cli_fail(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("kvplan: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

int cli_fail_err(const kvp_error *e)
{
    return cli_fail(e->code == KVP_EUSAGE ? EXIT_USAGE : EXIT_INPUT, "%s", e->msg);
}

/* Each option: its long name (the key in `accepted`), its spellings, and
 * whether it takes a value. */
static const struct opt {
    const char *key, *spell[4];
    int has_value;
} opts[] = {
    {"ctx-size", {"-c", "--ctx-size", NULL}, 1},
    {"parallel", {"-np", "--parallel", NULL}, 1},
    {"cache-type-k", {"-ctk", "--cache-type-k", NULL}, 1},
    {"cache-type-v", {"-ctv", "--cache-type-v", NULL}, 1},
    {"runtime", {"--runtime", "-r", NULL}, 1},
    {"json", {"--json", NULL}, 0},
    {"batch-size", {"-b", "--batch-size", NULL}, 1},
    {"ubatch-size", {"-ub", "--ubatch-size", NULL}, 1},
    {"flash-attn", {"-fa", "--flash-attn", NULL}, 1},
    {"swa-full", {"--swa-full", NULL}, 0},
    {"kv-unified", {"--kv-unified", "-kvu", NULL}, 0},
    {"no-kv-unified", {"--no-kv-unified", "-no-kvu", NULL}, 0},
    {"llama-version", {"--llama-version", NULL}, 1},
    {"variants", {"--variants", NULL}, 1},
    {"max-model-len", {"--max-model-len", NULL}, 1},
    {"gpu-memory-utilization", {"--gpu-memory-utilization", NULL}, 1},
    {"max-num-batched-tokens", {"--max-num-batched-tokens", NULL}, 1},
    {"max-num-seqs", {"--max-num-seqs", NULL}, 1},
    {"block-size", {"--block-size", NULL}, 1},
    {"kv-cache-dtype", {"--kv-cache-dtype", NULL}, 1},
    {"enable-prefix-caching", {"--enable-prefix-caching", NULL}, 0},
    {"no-enable-prefix-caching", {"--no-enable-prefix-caching", NULL}, 0},
    {"tensor-parallel-size", {"-tp", "--tensor-parallel-size", NULL}, 1},
    {"pipeline-parallel-size", {"-pp", "--pipeline-parallel-size", NULL}, 1},
    {"kv-cache-memory", {"--kv-cache-memory", "--kv-cache-memory-bytes", NULL}, 1},
    {"gpu", {"--gpu", NULL}, 1},
    {"entry", {"--entry", NULL}, 1},
    {"vllm-version", {"--vllm-version", NULL}, 1},
    {"enforce-eager", {"--enforce-eager", NULL}, 0},
    {"output", {"-o", "--output", NULL}, 1},
    {"memory", {"--memory", "-m", NULL}, 1},
    {"kv-only", {"--kv-only", NULL}, 0},
    {"force", {"--force", NULL}, 0},
    {"trace", {"--trace", NULL}, 1},
    {"workload", {"--workload", NULL}, 1},
    {"format", {"--format", NULL}, 1},
    {"export", {"--export", NULL}, 1},
    {"reuse", {"--reuse", NULL}, 1},
    {"unbounded", {"--unbounded", NULL}, 0},
    {"capacity-blocks", {"--capacity-blocks", NULL}, 1},
    {"capacity-tokens", {"--capacity-tokens", NULL}, 1},
    {"sweep", {"--sweep", NULL}, 1},
    {"concurrent", {"--concurrent", NULL}, 0},
    {"policy", {"--policy", NULL}, 1},
    {"arrivals", {"--arrivals", NULL}, 1},
    {"rate", {"--rate", NULL}, 1},
    {"seed", {"--seed", NULL}, 1},
    {"no-async-scheduling", {"--no-async-scheduling", NULL}, 0},
    {"mem-fraction-static", {"--mem-fraction-static", NULL}, 1},
    {"plot", {"--plot", NULL}, 1},
    {"cpu-tier", {"--cpu-tier", NULL}, 1},
    {"pcie", {"--pcie", NULL}, 1},
    {"rate-sweep", {"--rate-sweep", NULL}, 1},
    {"apply", {"--apply", NULL}, 1},
    {"host-memory", {"--host-memory", NULL}, 1},
    {"explain", {"--explain", NULL}, 0},
    {"family", {"--family", NULL}, 1},
    {"offline", {"--offline", NULL}, 0},
    {"revision", {"--revision", NULL}, 1},
    {"llama", {"--llama", NULL}, 0},
    {"n-gpu-layers", {"-ngl", "--n-gpu-layers", "--gpu-layers"}, 1},
    {"tensor-split", {"-ts", "--tensor-split", NULL}, 1},
    {"override-tensor", {"-ot", "--override-tensor", NULL}, 1},
    {"cpu-moe", {"-cmoe", "--cpu-moe", NULL}, 0},
    {"n-cpu-moe", {"-ncmoe", "--n-cpu-moe", NULL}, 1},
    {"no-kv-offload", {"-nkvo", "--no-kv-offload", NULL}, 0},
    {"kv-offload", {"-kvo", "--kv-offload", NULL}, 0},
    {"no-mmap", {"--no-mmap", NULL}, 0},
    {"mmap", {"--mmap", NULL}, 0},
    {"load-mode", {"-lm", "--load-mode", NULL}, 1},
    {"fit", {"-fit", "--fit", NULL}, 1},
    {"device-memory", {"--device-memory", NULL}, 1},
    {"weights-type", {"--weights-type", NULL}, 1},
};

/* Where a MODEL is looked for, beside --family (kvp_load_opts). */
#define MODEL_SOURCE_KEYS "offline revision"

/* llama.cpp's placement flags, accepted as a set ("llama-place"); --gpu
 * comes with the vLLM set and names devices for both. */
#define PLACE_KEYS "n-gpu-layers tensor-split override-tensor cpu-moe n-cpu-moe " \
                   "no-kv-offload kv-offload no-mmap mmap load-mode fit device-memory " \
                   "weights-type"

/* vLLM's options, so commands can accept them as a set. */
#define VLLM_KEYS "max-model-len gpu-memory-utilization max-num-batched-tokens max-num-seqs " \
                  "block-size kv-cache-dtype enable-prefix-caching no-enable-prefix-caching " \
                  "tensor-parallel-size pipeline-parallel-size kv-cache-memory gpu entry " \
                  "vllm-version enforce-eager"

static int set_count(const char *arg, const char *val, uint64_t max, uint64_t *out)
{
    if (kvp_parse_tokens(val, out) || *out > max)
        return cli_fail(EXIT_INPUT, "%s %s: must be a whole number in [1, %llu]", arg, val,
                        (unsigned long long)max);
    return 0;
}

static int set_vllm_opt(const char *k, const char *arg, const char *val, cli_opts *o)
{
    uint64_t n;
    if (!strcmp(k, "max-model-len"))
        return set_count(arg, val, 1ull << 40, &o->max_model_len);
    if (!strcmp(k, "max-num-batched-tokens"))
        return set_count(arg, val, 1ull << 32, &o->max_num_batched_tokens);
    if (!strcmp(k, "max-num-seqs") || !strcmp(k, "block-size") ||
        !strcmp(k, "tensor-parallel-size") || !strcmp(k, "pipeline-parallel-size")) {
        if (set_count(arg, val, 1u << 20, &n))
            return EXIT_INPUT;
        *(k[0] == 'm' ? &o->max_num_seqs : k[0] == 'b' ? &o->block_size
          : k[0] == 't' ? &o->tp : &o->pp) = (uint32_t)n;
        return 0;
    }
    if (!strcmp(k, "gpu-memory-utilization")) {
        char *end;
        o->gpu_util = strtod(val, &end);
        if (*end || !(o->gpu_util > 0 && o->gpu_util <= 1))
            return cli_fail(EXIT_INPUT, "%s %s: must be a fraction in (0, 1]", arg, val);
        return 0;
    }
    if (!strcmp(k, "kv-cache-dtype")) {
        kvp_error e;
        if (kvp_vllm_kv_cache_dtype_check(val, &e))
            return cli_fail(EXIT_USAGE, "%s", e.msg);
        o->kv_cache_dtype = val;
        o->kv_fp8 = !strncmp(val, "fp8", 3);
        return 0;
    }
    if (!strcmp(k, "enable-prefix-caching") || !strcmp(k, "no-enable-prefix-caching")) {
        o->prefix_caching = k[0] == 'e';
        return 0;
    }
    if (!strcmp(k, "kv-cache-memory")) {
        if (kvp_parse_bytes(val, &o->kv_cache_memory))
            return cli_fail(EXIT_INPUT, "%s %s: a size such as 58987118592, 54.94GiB or 59GB",
                            arg, val);
        return 0;
    }
    if (!strcmp(k, "entry")) {
        if (strcmp(val, "llm") && strcmp(val, "serve"))
            return cli_fail(EXIT_INPUT, "%s %s: llm (the Python LLM class) or serve (vllm serve)",
                            arg, val);
        o->entry_serve = val[0] == 's';
        return 0;
    }
    if (!strcmp(k, "gpu")) {
        kvp_error e;
        o->gpu = val; /* vLLM: one card; llama.cpp: one more device each time */
        if (kvp_llama_placement_add_gpu(&o->place, val, &e))
            return cli_fail(EXIT_USAGE, "%s", e.msg);
        o->place_set = 1;
    } else if (!strcmp(k, "vllm-version"))
        o->vllm_version = val;
    else if (!strcmp(k, "enforce-eager"))
        o->enforce_eager = 1;
    return 0;
}

/* sim --concurrent's own options */
#define SERVE_KEYS "concurrent policy arrivals rate seed no-async-scheduling " \
                   "mem-fraction-static plot cpu-tier pcie rate-sweep"

/* A number in (lo, hi]: the whole text, finite. */
static int set_real(const char *arg, const char *val, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(val, &end);
    if (end == val || *end || !(v > lo && v <= hi))
        return cli_fail(EXIT_USAGE, "%s %s: must be a number in (%g, %g]", arg, val, lo, hi);
    *out = v;
    return 0;
}

static int set_serve_opt(const char *k, const char *arg, const char *val, cli_opts *o)
{
    if (!strcmp(k, "concurrent"))
        o->sim_concurrent = 1;
    else if (!strcmp(k, "no-async-scheduling"))
        o->no_async = 1;
    else if (!strcmp(k, "policy") || !strcmp(k, "arrivals") || !strcmp(k, "plot"))
        *(k[1] == 'o' ? &o->sim_policy : k[0] == 'a' ? &o->sim_arrivals : &o->plot) = val;
    else if (!strcmp(k, "rate"))
        return set_real(arg, val, 0, 1e9, &o->sim_rate);
    else if (!strcmp(k, "rate-sweep"))
        o->rate_sweep = val;
    else if (!strcmp(k, "cpu-tier")) {
        if (kvp_parse_bytes(val, &o->cpu_tier) || !o->cpu_tier)
            return cli_fail(EXIT_USAGE, "%s %s: a size such as 64GiB, 100GB or 68719476736", arg,
                            val);
    } else if (!strcmp(k, "pcie")) {
        if (strcmp(val, "gen4") && strcmp(val, "gen5"))
            return cli_fail(EXIT_USAGE, "%s %s: gen4 (25 GB/s sustained each way) or gen5 "
                            "(50 GB/s)", arg, val);
        o->pcie_gen = val[3] - '0';
    }
    else if (!strcmp(k, "mem-fraction-static"))
        return set_real(arg, val, 0, 1, &o->mem_fraction);
    else if (!strcmp(k, "seed")) {
        char *end;
        if (val[0] < '0' || val[0] > '9' ||
            (o->sim_seed = strtoull(val, &end, 10), *end) || o->sim_seed == UINT64_MAX)
            return cli_fail(EXIT_USAGE, "%s %s: a whole number in [0, 2^64 - 2]", arg, val);
    }
    return 0;
}

/* Appends one override ("REGEX=BUFT", or several joined by commas) in the
 * order given: llama.cpp takes the first pattern that matches. */
static int add_override(cli_opts *o, const char *arg, const char *text)
{
    size_t len = strlen(o->overrides);
    if (snprintf(o->overrides + len, sizeof o->overrides - len, "%s%s", len ? "," : "", text) >=
        (int)(sizeof o->overrides - len))
        return cli_fail(EXIT_USAGE, "%s: too many tensor overrides", arg);
    return 0;
}

/* is_truthy / is_falsey of common/arg.cpp */
static int on_off(const char *v)
{
    if (!strcmp(v, "on") || !strcmp(v, "enabled") || !strcmp(v, "true") || !strcmp(v, "1"))
        return 1;
    if (!strcmp(v, "off") || !strcmp(v, "disabled") || !strcmp(v, "false") || !strcmp(v, "0"))
        return 0;
    return -1;
}

static int set_place_opt(const char *k, const char *arg, const char *val, cli_opts *o)
{
    kvp_llama_placement *pl = &o->place;
    kvp_error e;
    uint32_t n;
    o->place_set = 1;
    if (!strcmp(k, "n-gpu-layers")) {
        o->ngl_set = 1;
        return kvp_llama_parse_ngl(val, &pl->offload.n_gpu_layers, &e) ? cli_fail_err(&e) : 0;
    }
    if (!strcmp(k, "tensor-split")) {
        memset(pl->offload.tensor_split, 0, sizeof pl->offload.tensor_split);
        if (kvp_llama_parse_tensor_split(val, pl->offload.tensor_split, 8, &n, &e))
            return cli_fail_err(&e);
        for (uint32_t i = 0; i < n; i++)
            pl->tensor_split_given |= pl->offload.tensor_split[i] > 0;
        return 0;
    }
    if (!strcmp(k, "override-tensor"))
        return add_override(o, arg, val);
    if (!strcmp(k, "cpu-moe") || !strcmp(k, "n-cpu-moe")) {
        char text[16384];
        uint64_t count = 0;
        if (k[0] == 'n' && (strspn(val, "0123456789") != strlen(val) || !*val ||
                            (count = strtoull(val, NULL, 10)) > 256))
            return cli_fail(EXIT_USAGE, "%s %s: want a number of layers, 0 to 256", arg, val);
        if (k[0] == 'n' && !count)
            return 0;
        if (kvp_offload_cpu_moe(k[0] == 'n' ? (int32_t)count : -1, text, sizeof text))
            return cli_fail(EXIT_USAGE, "%s: too many tensor overrides", arg);
        return add_override(o, arg, text);
    }
    if (!strcmp(k, "no-kv-offload") || !strcmp(k, "kv-offload")) {
        o->kvo_set = 1;
        pl->no_kv_offload = k[0] == 'n';
        return 0;
    }
    if (!strcmp(k, "no-mmap") || !strcmp(k, "mmap")) {
        o->mmap_set = 1;
        pl->no_mmap = k[0] == 'n';
        return 0;
    }
    if (!strcmp(k, "load-mode")) {
        o->mmap_set = 1;
        /* auto, mmap and mmap+mlock map the file; none, mlock and dio read it */
        if (!strcmp(val, "auto") || !strcmp(val, "mmap") || !strcmp(val, "mmap+mlock"))
            pl->no_mmap = 0;
        else if (!strcmp(val, "none") || !strcmp(val, "mlock") || !strcmp(val, "dio"))
            pl->no_mmap = 1;
        else
            return cli_fail(EXIT_USAGE, "%s %s: auto, none, mmap, mlock, mmap+mlock or dio", arg,
                            val);
        return 0;
    }
    if (!strcmp(k, "fit")) {
        if ((pl->fit = on_off(val)) < 0)
            return cli_fail(EXIT_USAGE, "%s %s: on or off", arg, val);
        return 0;
    }
    if (!strcmp(k, "device-memory"))
        return kvp_llama_placement_add_memory(pl, val, &e) ? cli_fail_err(&e) : 0;
    if (!strcmp(k, "weights-type")) {
        if (!kvp_weights_type_find(val))
            return cli_fail(EXIT_USAGE, "%s %s: unknown; kvplan knows %s", arg, val,
                            kvp_weights_type_list());
        pl->weights_type = val;
    }
    return 0;
}

static int accepts(const char *accepted, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = accepted; (p = strstr(p, key)) != NULL; p += n)
        if ((p == accepted || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
            return 1;
    return 0;
}

static int set_opt(const struct opt *op, const char *arg, const char *val, cli_opts *o)
{
    const char *k = op->key;
    if (!strcmp(k, "ctx-size")) {
        if (strchr(val, ',') || accepts(o->accepted, "ctx-list")) {
            o->ctx_list = val; /* a list of lengths, checked by the command */
            return 0;
        }
        if (kvp_parse_tokens(val, &o->n_ctx))
            return cli_fail(EXIT_INPUT, "%s %s: the context length must be a number of tokens "
                            "in [1, 2^40], like 4096, 32k or 128K", arg, val);
        o->n_ctx_set = 1;
    } else if (!strcmp(k, "parallel")) {
        uint64_t n;
        if (kvp_parse_tokens(val, &n) || n > 1u << 20)
            return cli_fail(EXIT_INPUT, "%s %s: the sequence count must be in [1, 1048576]", arg,
                            val);
        o->n_seq = (uint32_t)n;
        o->np_set = 1;
    } else if (!strcmp(k, "batch-size") || !strcmp(k, "ubatch-size")) {
        uint64_t n;
        if (kvp_parse_tokens(val, &n) || n > 1u << 24)
            return cli_fail(EXIT_INPUT, "%s %s: the batch size must be in [1, 16777216]", arg, val);
        *(k[0] == 'b' ? &o->n_batch : &o->n_ubatch) = (uint32_t)n;
        *(k[0] == 'b' ? &o->batch_set : &o->ubatch_set) = 1;
    } else if (!strcmp(k, "flash-attn")) {
        if (!strcmp(val, "on") || !strcmp(val, "1") || !strcmp(val, "true"))
            o->flash_attn = KVP_FA_ON;
        else if (!strcmp(val, "off") || !strcmp(val, "0") || !strcmp(val, "false"))
            o->flash_attn = KVP_FA_OFF;
        else if (!strcmp(val, "auto"))
            o->flash_attn = KVP_FA_AUTO;
        else
            return cli_fail(EXIT_INPUT, "%s %s: flash attention is on, off or auto", arg, val);
        o->fa_set = 1;
    } else if (!strcmp(k, "swa-full")) {
        o->swa_full = 1;
    } else if (!strcmp(k, "kv-unified") || !strcmp(k, "no-kv-unified")) {
        o->kv_unified = k[0] == 'k';
    } else if (!strcmp(k, "llama-version")) {
        o->llama_version = val;
    } else if (!strcmp(k, "cache-type-k") || !strcmp(k, "cache-type-v")) {
        kvp_dtype t;
        if (kvp_dtype_parse(val, &t))
            return cli_fail(EXIT_INPUT, "%s %s: unknown cache type (known: f32 f16 bf16 fp8 "
                            "q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl nvfp4 kivi2)", arg, val);
        *(k[11] == 'k' ? &o->type_k : &o->type_v) = t;
        *(k[11] == 'k' ? &o->type_k_set : &o->type_v_set) = 1;
    } else if (!strcmp(k, "runtime")) {
        o->runtime = val;
        o->runtime_set = 1;
    } else if (!strcmp(k, "variants")) {
        o->variants = val;
    } else if (!strcmp(k, "memory") || !strcmp(k, "host-memory")) {
        if (kvp_parse_bytes(val, k[0] == 'm' ? &o->memory : &o->host_memory) ||
            !(k[0] == 'm' ? o->memory : o->host_memory))
            return cli_fail(EXIT_INPUT, "%s %s: a size such as 24GiB, 24GB or 25769803776", arg,
                            val);
    } else if (!strcmp(k, "apply")) {
        o->apply = val;
    } else if (!strcmp(k, "explain")) {
        o->explain = 1;
    } else if (!strcmp(k, "family")) {
        o->family = val;
    } else if (!strcmp(k, "offline")) {
        o->offline = 1;
    } else if (!strcmp(k, "revision")) {
        o->revision = val;
    } else if (!strcmp(k, "output")) {
        o->out = val;
    } else if (!strcmp(k, "kv-only")) {
        o->kv_only = 1;
    } else if (!strcmp(k, "force")) {
        o->force = 1;
    } else if (accepts(SERVE_KEYS, k)) {
        return set_serve_opt(k, arg, val, o);
    } else if (!strcmp(k, "format")) {
        o->trace_format = val;
    } else if (!strcmp(k, "export")) {
        o->export_path = val;
    } else if (!strcmp(k, "reuse")) {
        if (strcmp(val, "prefix") && strcmp(val, "any-position"))
            return cli_fail(EXIT_USAGE, "%s %s: prefix or any-position", arg, val);
        o->reuse_any = !strcmp(val, "any-position");
    } else if (!strcmp(k, "unbounded")) {
        o->unbounded = 1;
    } else if (!strcmp(k, "trace") || !strcmp(k, "workload") || !strcmp(k, "sweep")) {
        *(k[0] == 't' ? &o->sim_trace : k[0] == 'w' ? &o->sim_workload : &o->sim_sweep) = val;
    } else if (!strcmp(k, "capacity-blocks") || !strcmp(k, "capacity-tokens")) {
        return set_count(arg, val, 1ull << 40,
                         k[9] == 'b' ? &o->capacity_blocks : &o->capacity_tokens);
    } else if (accepts(VLLM_KEYS, k)) {
        return set_vllm_opt(k, arg, val, o);
    } else if (accepts(PLACE_KEYS, k)) {
        return set_place_opt(k, arg, val, o);
    } else if (!strcmp(k, "json")) {
        o->json = 1;
    } else if (!strcmp(k, "llama")) {
        o->llama_archs = 1;
    }
    return 0;
}

int cli_parse(int argc, char **argv, const char *accepted, cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->accepted = accepted;
    o->runtime = "theory";
    o->n_ctx = 4096;
    o->n_seq = 1;
    o->type_k = o->type_v = KVP_F16;
    o->n_batch = 2048;
    o->n_ubatch = 512;
    o->flash_attn = KVP_FA_AUTO;
    o->kv_unified = -1;
    o->prefix_caching = -1;
    kvp_llama_placement_defaults(&o->place);
    /* where MODEL comes from: every command that reads one takes these */
    if (accepts(accepted, "family") || accepts(accepted, "vllm") ||
        accepts(accepted, "llama-place"))
        accepted = o->accepted_buf,
        snprintf(o->accepted_buf, sizeof o->accepted_buf, "%s%s%s%s", o->accepted,
                 accepts(o->accepted, "vllm") ? " " VLLM_KEYS : "",
                 accepts(o->accepted, "family") ? " " MODEL_SOURCE_KEYS : "",
                 accepts(o->accepted, "llama-place") ? " " PLACE_KEYS : "");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '=');
        if (a[0] != '-' || !a[1]) {
            if (o->model && !accepts(accepted, "models"))
                return cli_fail(EXIT_USAGE, "%s: unexpected argument (model is %s)", a, o->model);
            if (o->n_models == sizeof o->models / sizeof o->models[0])
                return cli_fail(EXIT_USAGE, "%s: too many models", a);
            if (!o->model)
                o->model = a;
            o->models[o->n_models++] = a;
            continue;
        }
        size_t alen = eq && a[1] == '-' ? (size_t)(eq - a) : strlen(a);
        const struct opt *op = NULL;
        for (size_t j = 0; !op && j < sizeof opts / sizeof opts[0]; j++)
            for (int s = 0; opts[j].spell[s]; s++)
                if (strlen(opts[j].spell[s]) == alen && !strncmp(opts[j].spell[s], a, alen))
                    op = &opts[j];
        if (!op || !accepts(accepted, op->key))
            return cli_fail(EXIT_USAGE, "%s: unknown option for %s (see %s --help)", a, argv[0],
                            argv[0]);
        const char *val = NULL;
        if (op->has_value) {
            if (alen < strlen(a))
                val = a + alen + 1;
            else if (i + 1 < argc)
                val = argv[++i];
            else
                return cli_fail(EXIT_USAGE, "%s needs a value", a);
        } else if (alen < strlen(a)) {
            return cli_fail(EXIT_USAGE, "%s takes no value", a);
        }
        int rc = set_opt(op, a, val, o);
        if (rc)
            return rc;
    }
    return 0;
}

int cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return 1;
    return 0;
}

const char *fmt_int(uint64_t v, char *buf, size_t n)
{
    kvp_format_thousands(v, buf, n);
    return buf;
}

const char *fmt_mib(uint64_t bytes, char *buf, size_t n)
{
    /* exact to the cent: integer MiB plus rounded hundredths */
    uint64_t whole = bytes >> 20, rem = bytes & ((1u << 20) - 1);
    uint64_t cents = (rem * 100 + (1u << 19)) >> 20;
    if (cents == 100)
        whole++, cents = 0;
    snprintf(buf, n, "%llu.%02llu", (unsigned long long)whole, (unsigned long long)cents);
    return buf;
}

/* The flags Ollama would pass, where the command line gave none. */
static int ollama_defaults(cli_opts *o, const kvp_model *m)
{
    kvp_ollama_env env;
    kvp_ollama_settings s;
    kvp_error e;
    kvp_ollama_env_read(&env);
    if (kvp_ollama_settings_for(m, &env, &s, &e))
        return cli_fail_err(&e);
    if (!o->runtime_set)
        o->runtime = "llama.cpp";
    if (!o->n_ctx_set)
        o->n_ctx = s.n_ctx, o->n_ctx_set = 1;
    if (!o->np_set)
        o->n_seq = s.n_seq, o->np_set = 1;
    if (s.has_type && !o->type_k_set)
        o->type_k = s.type;
    if (s.has_type && !o->type_v_set)
        o->type_v = s.type;
    if (!o->fa_set)
        o->flash_attn = s.flash_attn;
    if (!o->batch_set)
        o->n_batch = s.n_batch;
    if (!o->ubatch_set)
        o->n_ubatch = s.n_batch;
    char line[1200];
    size_t len = (size_t)snprintf(line, sizeof line, "as Ollama runs %s: llama-server -c %llu "
                                  "-np %u -b %u -ub %u%s%s%s%s", m->ollama_name,
                                  (unsigned long long)o->n_ctx, o->n_seq, o->n_batch,
                                  o->n_ubatch, s.has_type ? " -ctk/-ctv " : "",
                                  s.has_type ? kvp_dtype_name(s.type) : "",
                                  o->flash_attn == KVP_FA_ON ? " -fa on"
                                  : o->flash_attn == KVP_FA_OFF ? " -fa off" : " -fa auto",
                                  " (");
    for (size_t i = 0; i < s.n_why && len < sizeof line; i++)
        len += (size_t)snprintf(line + len, sizeof line - len, "%s%s", i ? "; " : "", s.why[i]);
    if (len < sizeof line)
        snprintf(line + len, sizeof line - len, "; given flags win)");
    fprintf(stderr, "kvplan: %s\n", line);
    return 0;
}

int cli_load_model(cli_opts *o, const char *cmd, kvp_model **m)
{
    kvp_error e;
    if (!o->model)
        return cli_fail(EXIT_USAGE, "%s: no model given (see kvplan %s --help)", cmd, cmd);
    kvp_load_opts lo = {o->family, o->revision, o->offline};
    if (kvp_model_load_opts(o->model, &lo, m, &e))
        return cli_fail_err(&e);
    int rc = (*m)->from_ollama ? ollama_defaults(o, *m) : 0;
    if (rc) {
        kvp_model_free(*m);
        *m = NULL;
    }
    return rc;
}

const char *fmt_kinds(const kvp_model *m, char *buf, size_t n)
{
    kvp_group gs[64];
    size_t ng = kvp_model_groups(m, gs, 64), len = 0;
    uint32_t counted[KVP_LAYER_KIND_COUNT] = {0};
    buf[0] = 0;
    for (size_t g = 0; g < ng; g++) {
        kvp_layer_kind k = gs[g].kind;
        if (counted[k]++)
            continue; /* one entry per kind, however many shapes */
        int w = snprintf(buf + len, n - len, "%s%u %s", len ? " + " : "",
                         kvp_model_count_kind(m, k), kvp_layer_kind_name(k));
        if (w < 0 || (size_t)w >= n - len)
            break;
        len += (size_t)w;
    }
    return buf;
}

void cli_theory_params(const cli_opts *o, kvp_theory_params *p)
{
    kvp_theory_defaults(p);
    p->n_ctx = o->n_ctx;
    p->n_seq = o->n_seq;
    p->type_k = o->type_k;
    p->type_v = o->type_v;
}

void cli_llama_params(const cli_opts *o, kvp_llama_params *p)
{
    kvp_llama_defaults(p);
    p->version = o->llama_version;
    p->n_ctx = o->n_ctx_set ? o->n_ctx : 0;
    p->n_seq = o->np_set ? (int32_t)o->n_seq : -1;
    p->n_batch = o->n_batch;
    p->n_ubatch = o->n_ubatch;
    p->type_k = o->type_k;
    p->type_v = o->type_v;
    p->flash_attn = o->flash_attn;
    p->swa_full = o->swa_full;
    p->kv_unified = o->kv_unified;
}

void cli_vllm_params(const cli_opts *o, kvp_vllm_params *p)
{
    kvp_vllm_defaults(p);
    p->version = o->vllm_version;
    /* --max-model-len, else -c when given, else vLLM derives it */
    p->max_model_len = o->max_model_len ? o->max_model_len : o->n_ctx_set ? o->n_ctx : 0;
    p->gpu_memory_utilization = o->gpu_util;
    p->max_num_batched_tokens = o->max_num_batched_tokens;
    p->max_num_seqs = o->max_num_seqs;
    p->block_size = o->block_size;
    p->kv_fp8 = o->kv_fp8;
    p->kv_cache_dtype = o->kv_cache_dtype;
    p->prefix_caching = o->prefix_caching;
    p->tp = o->tp;
    p->pp = o->pp;
    p->kv_cache_memory = o->kv_cache_memory;
    p->gpu = o->gpu;
    p->entry_serve = o->entry_serve;
    p->enforce_eager = o->enforce_eager;
    const char *e = getenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN");
    p->allow_long_max_model_len = e && (!strcmp(e, "1") || !strcasecmp(e, "true"));
}

void cli_llama_placement(const cli_opts *o, kvp_llama_placement *pl)
{
    *pl = o->place;
    pl->offload.overrides = o->overrides[0] ? o->overrides : NULL;
}
