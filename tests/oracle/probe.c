/* probe - load a GGUF with the real llama.cpp (prebuilt libraries of
 * node-llama-cpp) and create one context with exactly the given settings,
 * then print the lines llama.cpp logged about the context and its memory.
 *
 *   probe MODEL.gguf [--n-ctx N] [--n-seq S] [--n-batch B] [--n-ubatch U]
 *                    [--fa on|off|auto] [--type-k T] [--type-v T]
 *                    [--swa-full 0|1] [--kv-unified 0|1]
 *                    [--mode noalloc|mmap] [--all] [--bins DIR]
 *
 * Defaults are llama-server's for an explicit -np 1 (n_ctx 4096, b 2048,
 * ub 512, fa auto, f16/f16, swa_full 0, kv_unified 0).  Every field of
 * llama_context_params is set here: the C API's own defaults differ from
 * llama-server's (swa_full = true there).
 *
 * --mode noalloc (default): llama_model_params.no_alloc with load_mode NONE.
 *   The model's metadata and tensor list are read, no tensor data is read or
 *   allocated, and the KV caches get zero-size dummy buffers, so the "size ="
 *   lines are printed without allocating the KV.  (v0.5.0's recurrent state
 *   ignores no_alloc: it is really allocated and zeroed.)
 * --mode mmap: a normal load with mmap (llama.cpp prefetches the whole file
 *   with MAP_POPULATE); the KV cache is really allocated and cleared.
 *
 * stdout: the selected lines, exactly as llama.cpp logged them (without the
 * trailing newline):
 *   print_info: arch (the llama.cpp architecture of the GGUF)
 *   llama_context: n_seq_max / n_ctx / n_ctx_seq / n_batch / n_ubatch /
 *                  flash_attn / kv_unified / n_rs_seq
 *   every line of llama_kv_cache*: and llama_memory_*: at INFO or WARN level
 *   (in noalloc mode the "buffer size" lines are dropped: they say 0.00)
 *   llama_context: the output buffer line (a real allocation in either mode)
 *   memory_breakdown: host model = N bytes (probe_breakdown.cpp), once the
 *                  context exists
 * With --all, every captured line instead, prefixed by its level.
 *
 *   probe --batch MODEL.gguf [options]      (one line per run on stdin:
 *                                            OUT [options for this run])
 *
 * loads the backends once (the most of a probe's time: every CPU variant is
 * opened to pick the best), then runs each line of stdin as its own probe in
 * a forked child (the model loaded and the context created there, so each
 * run starts from the same state a fresh probe would): its stdout goes to
 * OUT.out, its stderr to OUT.err and its exit status (128 + the signal when
 * it dies of one) to OUT.rc.  Options on a line follow those of the command
 * line.  The batch exits 0 once every line has run, 2 on a bad line.
 * Exit status: 0 context created; 1 llama.cpp refused (could not load the
 * model or create the context: its WARN/ERROR lines go to stderr); 2 usage;
 * 3 llama.cpp aborted (GGML_ABORT/GGML_ASSERT: the lines logged so far on
 * stdout, "llama.cpp aborted: FILE:LINE: message" on stderr).
 */
#define _POSIX_C_SOURCE 200809L
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "llama.h"

/* probe_breakdown.cpp */
void probe_breakdown(const struct llama_context *ctx);

/* ---- log capture ------------------------------------------------------ */

struct line {
    enum ggml_log_level level;
    char *text;
};

static struct line *g_lines;
static size_t g_n, g_cap;
static char *g_cur;           /* the line being assembled */
static size_t g_cur_len, g_cur_cap;
static enum ggml_log_level g_cur_level = GGML_LOG_LEVEL_INFO;

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fputs("probe: out of memory\n", stderr);
        exit(1);
    }
    return q;
}

static void flush_line(void)
{
    if (g_n == g_cap) {
        g_cap = g_cap ? 2 * g_cap : 256;
        g_lines = xrealloc(g_lines, g_cap * sizeof *g_lines);
    }
    char *t = xrealloc(NULL, g_cur_len + 1);
    memcpy(t, g_cur ? g_cur : "", g_cur_len);
    t[g_cur_len] = '\0';
    g_lines[g_n].level = g_cur_level;
    g_lines[g_n].text = t;
    g_n++;
    g_cur_len = 0;
}

static void append(const char *s, size_t n)
{
    if (g_cur_len + n + 1 > g_cur_cap) {
        g_cur_cap = (g_cur_len + n + 1) * 2;
        g_cur = xrealloc(g_cur, g_cur_cap);
    }
    memcpy(g_cur + g_cur_len, s, n);
    g_cur_len += n;
}

/* llama.cpp sends whole lines ending in '\n', sometimes split into pieces
 * (GGML_LOG_LEVEL_CONT continues the previous one).  Reassemble lines. */
static void log_cb(enum ggml_log_level level, const char *text, void *ud)
{
    (void)ud;
    if (level != GGML_LOG_LEVEL_CONT && g_cur_len == 0)
        g_cur_level = level;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        if (!nl) {
            append(p, strlen(p));
            break;
        }
        append(p, (size_t)(nl - p));
        flush_line();
        p = nl + 1;
    }
}

static const char *level_name(enum ggml_log_level l)
{
    switch (l) {
    case GGML_LOG_LEVEL_DEBUG: return "D";
    case GGML_LOG_LEVEL_INFO:  return "I";
    case GGML_LOG_LEVEL_WARN:  return "W";
    case GGML_LOG_LEVEL_ERROR: return "E";
    default:                   return "-";
    }
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool selected(const struct line *l, bool noalloc)
{
    static const char *ctx_keys[] = {
        "llama_context: n_seq_max ", "llama_context: n_ctx ",
        "llama_context: n_ctx_seq ", "llama_context: n_batch ",
        "llama_context: n_ubatch ",  "llama_context: flash_attn ",
        "llama_context: kv_unified ", "llama_context: n_rs_seq ",
        "llama_context: n_ctx is not divisible",
        "print_info: arch ",
    };
    const char *t = l->text;
    if (l->level == GGML_LOG_LEVEL_DEBUG)
        return false;
    for (size_t i = 0; i < sizeof ctx_keys / sizeof *ctx_keys; i++)
        if (starts(t, ctx_keys[i]))
            return true;
    if (starts(t, "llama_context:") && strstr(t, " output buffer size = "))
        return true;
    if (starts(t, "llama_kv_cache") || starts(t, "llama_memory_")) {
        if (noalloc && strstr(t, " buffer size = "))
            return false;
        return true;
    }
    return false;
}

static void dump_problems(void)
{
    for (size_t i = 0; i < g_n; i++)
        if (g_lines[i].level == GGML_LOG_LEVEL_ERROR || g_lines[i].level == GGML_LOG_LEVEL_WARN)
            fprintf(stderr, "%s\n", g_lines[i].text);
}

/* GGML_ABORT / GGML_ASSERT: report what was logged so far, then exit 3
 * instead of abort() (no core dump, no gdb backtrace). */
static bool g_noalloc = true, g_all = false;
static void print_lines(void);

static void on_abort(const char *message)
{
    if (g_cur_len)
        flush_line();
    print_lines();
    dump_problems();
    fprintf(stderr, "llama.cpp aborted: %s\n", message);
    fflush(NULL);
    _Exit(3);
}

static void print_lines(void)
{
    for (size_t i = 0; i < g_n; i++) {
        if (g_all)
            printf("%s %s\n", level_name(g_lines[i].level), g_lines[i].text);
        else if (selected(&g_lines[i], g_noalloc))
            printf("%s\n", g_lines[i].text);
    }
    fflush(stdout);
}

/* ---- arguments -------------------------------------------------------- */

static void usage(void)
{
    fputs("usage: probe MODEL.gguf [--n-ctx N] [--n-seq S] [--n-batch B] [--n-ubatch U]\n"
          "             [--fa on|off|auto] [--type-k T] [--type-v T] [--swa-full 0|1]\n"
          "             [--kv-unified 0|1] [--mode noalloc|mmap] [--all] [--bins DIR]\n",
          stderr);
    exit(2);
}

static uint32_t parse_u32(const char *opt, const char *v)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || x > UINT32_MAX || v[0] == '-') {
        fprintf(stderr, "probe: %s: not a count: %s\n", opt, v);
        exit(2);
    }
    return (uint32_t)x;
}

static bool parse_bool(const char *opt, const char *v)
{
    if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "on"))
        return true;
    if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "off"))
        return false;
    fprintf(stderr, "probe: %s: expected 0 or 1: %s\n", opt, v);
    exit(2);
}

static enum ggml_type parse_type(const char *opt, const char *v)
{
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char *name = ggml_type_name((enum ggml_type)t);
        if (name && !strcmp(name, v))
            return (enum ggml_type)t;
    }
    fprintf(stderr, "probe: %s: unknown ggml type: %s\n", opt, v);
    exit(2);
}

static const char *default_bins(void)
{
    const char *e = getenv("PROBE_BINS");
#ifdef PROBE_BINS_DIR
    if (!e || !*e)
        e = PROBE_BINS_DIR;
#endif
    return e;
}

struct opts {
    const char *model_path, *bins;
    uint32_t n_ctx, n_seq, n_batch, n_ubatch;
    enum llama_flash_attn_type fa;
    enum ggml_type tk, tv;
    bool swa_full, kv_unified, batch;
};

/* argv[from..argc) into o (what is not given keeps its value) */
static void parse_args(struct opts *o, int argc, char **argv, int from)
{
    for (int i = from; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED() do { if (!v) usage(); i++; } while (0)
        if (!strcmp(a, "--n-ctx"))           { NEED(); o->n_ctx = parse_u32(a, v); }
        else if (!strcmp(a, "--n-seq"))      { NEED(); o->n_seq = parse_u32(a, v); }
        else if (!strcmp(a, "--n-batch"))    { NEED(); o->n_batch = parse_u32(a, v); }
        else if (!strcmp(a, "--n-ubatch"))   { NEED(); o->n_ubatch = parse_u32(a, v); }
        else if (!strcmp(a, "--type-k"))     { NEED(); o->tk = parse_type(a, v); }
        else if (!strcmp(a, "--type-v"))     { NEED(); o->tv = parse_type(a, v); }
        else if (!strcmp(a, "--swa-full"))   { NEED(); o->swa_full = parse_bool(a, v); }
        else if (!strcmp(a, "--kv-unified")) { NEED(); o->kv_unified = parse_bool(a, v); }
        else if (!strcmp(a, "--bins"))       { NEED(); o->bins = v; }
        else if (!strcmp(a, "--all"))        { g_all = true; }
        else if (!strcmp(a, "--batch"))      { o->batch = true; }
        else if (!strcmp(a, "--fa")) {
            NEED();
            if (!strcmp(v, "on")) o->fa = LLAMA_FLASH_ATTN_TYPE_ENABLED;
            else if (!strcmp(v, "off")) o->fa = LLAMA_FLASH_ATTN_TYPE_DISABLED;
            else if (!strcmp(v, "auto")) o->fa = LLAMA_FLASH_ATTN_TYPE_AUTO;
            else usage();
        } else if (!strcmp(a, "--mode")) {
            NEED();
            if (!strcmp(v, "noalloc")) g_noalloc = true;
            else if (!strcmp(v, "mmap")) g_noalloc = false;
            else usage();
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
        } else if (a[0] == '-' || o->model_path) {
            fprintf(stderr, "probe: unexpected argument: %s\n", a);
            usage();
        } else {
            o->model_path = a;
        }
#undef NEED
    }
}

/* the model and one context, as o says; the exit status */
static int run(const struct opts *o)
{
    const char *model_path = o->model_path;
    struct llama_model_params mp = llama_model_default_params();
    mp.devices = NULL;
    mp.tensor_buft_overrides = NULL;
    mp.n_gpu_layers = -1;
    mp.split_mode = LLAMA_SPLIT_MODE_LAYER;
    mp.load_mode = g_noalloc ? LLAMA_LOAD_MODE_NONE : LLAMA_LOAD_MODE_MMAP;
    mp.lazy_mode = LLAMA_LAZY_MODE_OFF;
    mp.main_gpu = 0;
    mp.tensor_split = NULL;
    mp.progress_callback = NULL;
    mp.progress_callback_user_data = NULL;
    mp.kv_overrides = NULL;
    mp.vocab_only = false;
    mp.check_tensors = false;
    mp.use_extra_bufts = false;   /* no weight repacking: it would read the data */
    mp.no_host = false;
    mp.no_alloc = g_noalloc;
    mp.load_mtp = false;

    struct llama_model *model = llama_model_load_from_file(model_path, mp);
    if (!model) {
        print_lines();
        dump_problems();
        fprintf(stderr, "probe: %s: llama.cpp could not load the model\n", model_path);
        return 1;
    }

    /* Every field, as llama-server (common_context_params_to_llama) would
     * set it for these flags. */
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = o->n_ctx;
    cp.n_batch = o->n_batch;
    cp.n_ubatch = o->n_ubatch;
    cp.n_seq_max = o->n_seq;
    cp.n_rs_seq = 0;
    /* llama-server reserves one output row per slot (server_output_limits:
     * min(n_batch, n_parallel) without speculative decoding), not the C API's
     * whole batch; that decides the compute buffer's logits term. */
    cp.n_outputs_max = o->n_seq < o->n_batch ? o->n_seq : o->n_batch;
    cp.n_outputs_max_per_seq = 1;
    cp.n_threads = 1;
    cp.n_threads_batch = 1;
    cp.ctx_type = LLAMA_CONTEXT_TYPE_DEFAULT;
    cp.rope_scaling_type = LLAMA_ROPE_SCALING_TYPE_UNSPECIFIED;
    cp.pooling_type = LLAMA_POOLING_TYPE_UNSPECIFIED;
    cp.attention_type = LLAMA_ATTENTION_TYPE_UNSPECIFIED;
    cp.flash_attn_type = o->fa;
    cp.rope_freq_base = 0.0f;
    cp.rope_freq_scale = 0.0f;
    cp.yarn_ext_factor = -1.0f;
    cp.yarn_attn_factor = -1.0f;
    cp.yarn_beta_fast = -1.0f;
    cp.yarn_beta_slow = -1.0f;
    cp.yarn_orig_ctx = 0;
    cp.defrag_thold = -1.0f;
    cp.cb_eval = NULL;
    cp.cb_eval_user_data = NULL;
    cp.type_k = o->tk;
    cp.type_v = o->tv;
    cp.abort_callback = NULL;
    cp.abort_callback_data = NULL;
    cp.embeddings = false;
    cp.offload_kqv = true;
    cp.no_perf = true;
    cp.op_offload = true;
    cp.swa_full = o->swa_full;
    cp.kv_unified = o->kv_unified;
    cp.samplers = NULL;
    cp.n_samplers = 0;
    cp.ctx_other = NULL;

    struct llama_context *ctx = llama_init_from_model(model, cp);

    int rc = 0;
    print_lines();
    if (!ctx) {
        dump_problems();
        fprintf(stderr, "probe: %s: llama.cpp could not create the context\n", model_path);
        rc = 1;
    } else {
        if (!g_all)
            probe_breakdown(ctx);
        llama_free(ctx);
    }
    llama_model_free(model);
    return rc;
}

/* --batch: each line of stdin "OUT [options]" run in a child of its own */
static int batch(const struct opts *base)
{
    char buf[4096];
    while (fgets(buf, sizeof buf, stdin)) {
        char *argv[64];
        int argc = 0;
        for (char *tok = strtok(buf, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
            if (argc == 63) {
                fputs("probe: --batch: too many words on a line\n", stderr);
                return 2;
            }
            argv[argc++] = tok;
        }
        if (argc == 0)
            continue;
        argv[argc] = NULL;
        char path[4200];
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            perror("probe: fork");
            return 2;
        }
        if (pid == 0) {
            struct opts o = *base;
            o.batch = false;
            snprintf(path, sizeof path, "%s.out", argv[0]);
            if (!freopen(path, "w", stdout)) _exit(2);
            snprintf(path, sizeof path, "%s.err", argv[0]);
            if (!freopen(path, "w", stderr)) _exit(2);
            parse_args(&o, argc, argv, 1);
            int rc = run(&o);
            fflush(NULL);
            _exit(rc);
        }
        int st;
        while (waitpid(pid, &st, 0) < 0)
            ;
        int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        snprintf(path, sizeof path, "%s.rc", argv[0]);
        FILE *f = fopen(path, "w");
        if (!f || fprintf(f, "%d\n", rc) < 0 || fclose(f)) {
            fprintf(stderr, "probe: cannot write %s\n", path);
            return 2;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {
        .model_path = NULL, .bins = default_bins(),
        .n_ctx = 4096, .n_seq = 1, .n_batch = 2048, .n_ubatch = 512,
        .fa = LLAMA_FLASH_ATTN_TYPE_AUTO, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16,
        .swa_full = false, .kv_unified = false, .batch = false,
    };
    parse_args(&o, argc, argv, 1);
    if (!o.model_path)
        usage();

    setenv("GGML_NO_BACKTRACE", "1", 1);
    ggml_set_abort_callback(on_abort);
    llama_log_set(log_cb, NULL);
    if (o.bins && *o.bins)
        ggml_backend_load_all_from_path(o.bins);
    else
        ggml_backend_load_all();
    llama_backend_init();

    int rc = o.batch ? batch(&o) : run(&o);
    llama_backend_free();
    return rc;
}
