/* cmd_paste.c - `kvplan [OPTIONS] -- COMMAND...`: paste the command you run
 * (llama-server ..., vllm serve ...) and get that runtime's memory for it.
 * The command's flags that change the KV cache or where memory goes (-ngl,
 * -ot, -nkvo, ...) are passed to `kvplan mem` under the same names; every
 * other flag (ports, chat templates) is set aside and listed, so a whole
 * command line can be pasted as is.  The devices are kvplan's own options
 * (--gpu, --device-memory), before the --. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan [--json] [--gpu NAME] [--device-memory SIZE] [--kv-cache-memory SIZE]\n"
    "              -- COMMAND...\n"
    "\n"
    "COMMAND is the command line you run, pasted as is:\n"
    "  llama-server / llama-cli -m MODEL.gguf [flags]   -> --runtime llama.cpp\n"
    "  llama-server -hf ORG/NAME[:QUANT] [-hff FILE]    -> the same, the GGUF's header\n"
    "                                                      read from the Hub by range\n"
    "  vllm serve MODEL [flags]                         -> --runtime vllm (--entry serve)\n"
    "  ollama run|serve MODEL                           -> --runtime llama.cpp with what\n"
    "                                                      Ollama passes llama-server\n"
    "MODEL is resolved as for every kvplan command (GGUF, config.json, catalog name,\n"
    "Hugging Face id, ollama:NAME). Flags that size the cache or place memory (-ngl,\n"
    "-ts, -ot, --cpu-moe, --n-cpu-moe, -nkvo, --no-mmap, --load-mode, --fit) are used;\n"
    "the rest are listed as ignored. The GPUs are kvplan's --gpu / --device-memory\n"
    "before the -- (none: CPU only). For ollama, OLLAMA_CONTEXT_LENGTH,\n"
    "OLLAMA_NUM_PARALLEL, OLLAMA_KV_CACHE_TYPE and OLLAMA_FLASH_ATTENTION are read from\n"
    "the environment, as the Ollama server reads them. Options before -- are kvplan's\n"
    "(`kvplan mem --help`).\n"
    "\n"
    "examples:\n"
    "  kvplan -- llama-server -m qwen3-8b -c 32768 -np 4 -ctk q8_0 -ctv q8_0 -fa on\n"
    "  kvplan --gpu RTX-4090 -- llama-server -m model.gguf -c 32768 -ngl 99 --n-cpu-moe 8\n"
    "  kvplan --gpu H100 -- vllm serve Qwen/Qwen3-8B --max-model-len 40960 "
    "--gpu-memory-utilization 0.9\n"
    "  kvplan -- llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M -c 32768\n"
    "  OLLAMA_NUM_PARALLEL=2 kvplan -- ollama run qwen3:8b\n";

/* The runtime flags kvplan understands, per runtime: whether each takes a
 * value.  Their names are kvplan mem's own, so they pass through. */
static const struct flag {
    const char *name;
    int has_value;
} llama_flags[] = {
    {"-c", 1}, {"--ctx-size", 1}, {"-np", 1}, {"--parallel", 1}, {"-b", 1},
    {"--batch-size", 1}, {"-ub", 1}, {"--ubatch-size", 1}, {"-ctk", 1},
    {"--cache-type-k", 1}, {"-ctv", 1}, {"--cache-type-v", 1}, {"-fa", 1},
    {"--flash-attn", 1}, {"--swa-full", 0}, {"--kv-unified", 0}, {"-kvu", 0},
    {"--no-kv-unified", 0},
    /* placement: where the weights and each layer's cache go */
    {"-ngl", 1}, {"--n-gpu-layers", 1}, {"--gpu-layers", 1}, {"-ts", 1}, {"--tensor-split", 1},
    {"-ot", 1}, {"--override-tensor", 1}, {"-cmoe", 0}, {"--cpu-moe", 0}, {"-ncmoe", 1},
    {"--n-cpu-moe", 1}, {"-nkvo", 0}, {"--no-kv-offload", 0}, {"-kvo", 0}, {"--kv-offload", 0},
    {"--no-mmap", 0}, {"--mmap", 0}, {"-lm", 1}, {"--load-mode", 1}, {"-fit", 1}, {"--fit", 1},
    {NULL, 0}},
  vllm_flags[] = {
    {"--max-model-len", 1}, {"--gpu-memory-utilization", 1}, {"--max-num-batched-tokens", 1},
    {"--max-num-seqs", 1}, {"--block-size", 1}, {"--kv-cache-dtype", 1},
    {"--enable-prefix-caching", 0}, {"--no-enable-prefix-caching", 0}, {"-tp", 1},
    {"--tensor-parallel-size", 1}, {"-pp", 1}, {"--pipeline-parallel-size", 1},
    {"--kv-cache-memory", 1}, {"--kv-cache-memory-bytes", 1}, {"--enforce-eager", 0},
    {NULL, 0}};

static const struct flag *find_flag(const struct flag *set, const char *arg)
{
    size_t n = strcspn(arg, "=");
    for (; set->name; set++)
        if (strlen(set->name) == n && !strncmp(set->name, arg, n))
            return set;
    return NULL;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

typedef struct pasted {
    const char *argv[256];
    int argc;
    char ignored[512];
    char hf[1024];           /* -hf REPO[:QUANT] with -hff FILE, as a kvplan MODEL */
} pasted;

static int push(pasted *o, const char *a)
{
    if (o->argc == (int)(sizeof o->argv / sizeof o->argv[0]) - 1)
        return cli_fail(EXIT_USAGE, "--: the command is too long");
    o->argv[o->argc++] = a;
    return 0;
}

static void set_aside(pasted *o, const char *a)
{
    size_t len = strlen(o->ignored);
    snprintf(o->ignored + len, sizeof o->ignored - len, "%s%s", len ? " " : "", a);
}

/* -hf REPO[:QUANT] and -hff FILE (either order) as one kvplan MODEL:
 * REPO:QUANT, or REPO/FILE when a file is named (llama.cpp: -hff wins). */
static int hf_model(pasted *o, const char *flag, const char *val)
{
    static char repo[512], file[512];
    if (!strcmp(flag, "-hff") || !strcmp(flag, "--hf-file"))
        snprintf(file, sizeof file, "%s", val);
    else
        snprintf(repo, sizeof repo, "%s", val);
    if (!repo[0]) {
        snprintf(o->hf, sizeof o->hf, "%s", "");
        return 0;
    }
    if (file[0]) {
        size_t r = strcspn(repo, ":");
        if (snprintf(o->hf, sizeof o->hf, "%.*s/%s", (int)r, repo, file) >= (int)sizeof o->hf)
            return cli_fail(EXIT_USAGE, "--: -hf/-hff: too long");
    } else {
        /* "REPO:" when no quant: a GGUF by llama.cpp's default pick, even in a
         * repo that also has a config.json */
        snprintf(o->hf, sizeof o->hf, "%s%s", repo, strchr(repo, ':') ? "" : ":");
    }
    return 0;
}

/* Walks the pasted flags: known ones go to `mem`, the rest are set aside.
 * An unknown flag takes the next word as its value unless it looks like a
 * flag.  Returns 0 or an exit code; *model gets a -m/--model value. */
static int translate(char **args, int n, const struct flag *set, int llama, pasted *o,
                     const char **model)
{
    for (int i = 0; i < n; i++) {
        const char *a = args[i];
        const struct flag *f = find_flag(set, a);
        if (llama && (!strcmp(a, "-m") || !strcmp(a, "--model"))) {
            if (i + 1 >= n)
                return cli_fail(EXIT_USAGE, "--: %s needs a model file", a);
            *model = args[++i];
        } else if (!llama && (!strcmp(a, "--model") || !strncmp(a, "--model=", 8))) {
            *model = a[7] == '=' ? a + 8 : (i + 1 < n ? args[++i] : NULL);
        } else if (llama && (!strcmp(a, "-hf") || !strcmp(a, "--hf-repo") ||
                             !strcmp(a, "-hfr") || !strcmp(a, "-hff") || !strcmp(a, "--hf-file"))) {
            if (i + 1 >= n)
                return cli_fail(EXIT_USAGE, "--: %s needs a value", a);
            if (hf_model(o, a, args[++i]))
                return EXIT_USAGE;
            *model = o->hf;
        } else if (llama && (!strcmp(a, "-mu") || !strcmp(a, "--model-url"))) {
            if (i + 1 >= n)
                return cli_fail(EXIT_USAGE, "--: %s needs a URL", a);
            *model = args[++i];
        } else if (f && llama && (!strcmp(f->name, "-fa") || !strcmp(f->name, "--flash-attn")) &&
                   (i + 1 >= n || args[i + 1][0] == '-')) {
            if (push(o, "-fa") || push(o, "on")) /* older llama.cpp: -fa alone means on */
                return EXIT_USAGE;
        } else if (f) {
            if (push(o, a))
                return EXIT_USAGE;
            if (f->has_value && !strchr(a, '=') && i + 1 < n && push(o, args[++i]))
                return EXIT_USAGE;
        } else if (a[0] == '-') {
            set_aside(o, a);
            if (!strchr(a, '=') && i + 1 < n && args[i + 1][0] != '-')
                set_aside(o, args[++i]);
        } else if (!*model && !llama) {
            *model = a;
        } else {
            set_aside(o, a);
        }
    }
    return 0;
}

/* `ollama run MODEL [flags]`: the model as ollama:MODEL; the flags Ollama
 * passes llama-server follow from the model and the OLLAMA_* variables
 * (cli_load_model), and run's own flags change nothing in the cache. */
static int paste_ollama(int n_kv, char **kv, int argc, char **argv)
{
    pasted o;
    static char model[1024];
    memset(&o, 0, sizeof o);
    push(&o, "mem");
    push(&o, NULL);
    for (int i = 0; i < argc; i++) {
        if (argv[i][0] == '-' || o.argv[1])
            set_aside(&o, argv[i]);
        else if (snprintf(model, sizeof model, "%s%s", strncmp(argv[i], "ollama:", 7) ? "ollama:"
                          : "", argv[i]) >= (int)sizeof model)
            return cli_fail(EXIT_USAGE, "--: ollama run: the model name is too long");
        else
            o.argv[1] = model;
    }
    if (!o.argv[1])
        return cli_fail(EXIT_USAGE, "--: ollama run needs a MODEL");
    for (int i = 0; i < n_kv; i++)
        if (push(&o, kv[i]))
            return EXIT_USAGE;
    if (o.ignored[0])
        fprintf(stderr, "kvplan: set aside (no effect on the cache): %s\n", o.ignored);
    return cmd_mem(o.argc, (char **)o.argv);
}

/* argv: "--" (or nothing) already stripped; kv: kvplan's own options. */
int cmd_paste(int n_kv, char **kv, int argc, char **argv)
{
    pasted o;
    const char *model = NULL;
    int llama, rc;
    memset(&o, 0, sizeof o);
    for (int i = 0; i < n_kv; i++)
        if (!strcmp(kv[i], "-h") || !strcmp(kv[i], "--help"))
            return fputs(help, stdout), 0;
    if (argc < 1)
        return cli_fail(EXIT_USAGE, "--: no command after -- (see kvplan -- --help)");
    const char *prog = base_name(argv[0]);
    if (!strcmp(prog, "--help") || !strcmp(prog, "-h"))
        return fputs(help, stdout), 0;
    if (!strncmp(prog, "llama-", 6) || !strcmp(prog, "main") || !strcmp(prog, "server")) {
        llama = 1;
        argv++, argc--;
    } else if (!strcmp(prog, "vllm") && argc > 1 && !strcmp(argv[1], "serve")) {
        llama = 0;
        argv += 2, argc -= 2;
    } else if (!strcmp(prog, "ollama") && argc > 1 && !strcmp(argv[1], "run")) {
        return paste_ollama(n_kv, kv, argc - 2, argv + 2);
    } else if (!strcmp(prog, "ollama")) {
        return cli_fail(EXIT_USAGE, "--: ollama %s: kvplan reads `ollama run MODEL` (the server's "
                        "OLLAMA_* variables come from the environment)", argc > 1 ? argv[1] : "");
    } else {
        return cli_fail(EXIT_USAGE, "--: %s: kvplan reads llama-server, llama-cli, vllm serve "
                        "and ollama run command lines", argv[0]);
    }
    push(&o, "mem");
    push(&o, NULL); /* the model, once found */
    push(&o, "--runtime");
    push(&o, llama ? "llama.cpp" : "vllm");
    if (!llama) {
        push(&o, "--entry");
        push(&o, "serve");
    }
    if ((rc = translate(argv, argc, llama ? llama_flags : vllm_flags, llama, &o, &model)))
        return rc;
    if (!model)
        return cli_fail(EXIT_USAGE, "--: no model in the command (%s)",
                        llama ? "give -m MODEL.gguf" : "vllm serve MODEL");
    o.argv[1] = model;
    for (int i = 0; i < n_kv; i++)
        if ((rc = push(&o, kv[i])))
            return rc;
    if (o.ignored[0])
        fprintf(stderr, "kvplan: set aside (no effect on the cache): %s\n", o.ignored);
    return cmd_mem(o.argc, (char **)o.argv);
}
