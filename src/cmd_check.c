/* cmd_check.c - `kvplan check LOGFILE MODEL`: read what llama.cpp or vLLM
 * logged when it started, predict the same run with kvplan, and show where
 * the two differ.  A difference means the model, the settings or kvplan's
 * rules are not what you think: exit 3 says so to scripts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#define EXIT_DIFFERS 3
#define MAX_LOG_BYTES (256u << 20)

static const char help[] =
    "usage: kvplan check LOGFILE MODEL [--llama-version V] [--vllm-version V --gpu NAME]\n"
    "                    [-tp N] [--block-size N] [--kv-cache-dtype T] [--no-enable-prefix-caching]\n"
    "\n"
    "LOGFILE is what llama.cpp (llama-server, llama-cli, ...) or vLLM printed when it\n"
    "started; MODEL is the model it ran (a GGUF, a config.json, a catalog name).\n"
    "llama.cpp: the settings are read from the log's llama_context lines (n_ctx,\n"
    "n_seq_max, n_ubatch, flash_attn, kv_unified), the cache types from its size lines;\n"
    "kvplan predicts the same run and compares every size line, byte for byte.\n"
    "vLLM: from \"Available KV cache memory: X GiB\" (2 decimals, so a range) kvplan\n"
    "predicts the token capacity and concurrency and checks the logged ones fall in it;\n"
    "vLLM's own flags (-tp, --block-size, --kv-cache-dtype, prefix caching) are not in\n"
    "those lines, so give them as you ran.\n"
    "  --revision REV a Hub branch, tag or commit of an ORG/NAME model (default main)\n"
    "  --offline      never use the network: local files, caches and the catalog only\n"
    "  --family NAME  read MODEL's config.json by kvplan's rule set NAME (llama, gemma3,\n"
    "                 ...), for an architecture kvplan cannot name; the output says so\n"
    "Exit status: 0 everything matches, 3 a difference (shown), 1 bad input.\n"
    "\n"
    "examples:\n"
    "  llama-server -m model.gguf -c 32768 2> server.log; kvplan check server.log model.gguf\n"
    "  kvplan check vllm.log Qwen/Qwen3-8B\n";

static char *read_file(const char *path, size_t *len)
{
    struct stat st;
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    if (!f)
        return NULL;
    if (!fstat(fileno(f), &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= MAX_LOG_BYTES &&
        (buf = malloc((size_t)st.st_size + 1)) && fread(buf, 1, (size_t)st.st_size, f) ==
                                                       (size_t)st.st_size) {
        *len = (size_t)st.st_size;
        buf[*len] = 0;
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

static int check_llama(const kvp_model *m, const kvp_log *L, const cli_opts *o)
{
    kvp_llama_params p;
    kvp_llama_result r;
    kvp_error e;
    kvp_llama_defaults(&p);
    p.version = o->llama_version;
    p.n_ctx = L->n_ctx;
    p.n_seq = (int32_t)L->n_seq;
    p.kv_unified = L->kv_unified < 0 ? 0 : L->kv_unified;
    p.n_batch = L->n_batch ? L->n_batch : 2048;
    p.n_ubatch = L->n_ubatch ? L->n_ubatch : 512;
    p.type_k = L->type_k;
    p.type_v = L->type_v;
    p.flash_attn = L->flash_attn;
    p.swa_full = L->swa_full;
    p.n_rs_seq = L->n_rs_seq;
    printf("llama.cpp log: n_ctx %llu, n_ctx_seq %llu, %u seq%s%s, n_ubatch %u, flash_attn %s, "
           "K %s, V %s%s%s%s\n", (unsigned long long)L->n_ctx, (unsigned long long)L->n_ctx_seq,
           L->n_seq, L->n_seq == 1 ? "" : "s", p.kv_unified ? " (unified)" : "", p.n_ubatch,
           L->flash_attn == KVP_FA_ON ? "enabled" : L->flash_attn == KVP_FA_OFF ? "disabled" : "auto",
           kvp_dtype_name(L->type_k), kvp_dtype_name(L->type_v), L->swa_full ? ", --swa-full" : "",
           L->arch[0] ? ", arch " : "", L->arch);
    printf("model: %s (%s)\n\n", m->name, m->gguf_arch[0] ? m->gguf_arch : m->arch);
    if (kvp_llama(m, &p, &r, &e)) {
        printf("kvplan refuses these settings: %s\n", e.msg);
        return EXIT_DIFFERS;
    }
    int differ = r.n_ctx != L->n_ctx || (L->n_ctx_seq && r.n_ctx_seq != L->n_ctx_seq);
    if (differ)
        printf("n_ctx: logged %llu / %llu per sequence, kvplan %llu / %llu\n",
               (unsigned long long)L->n_ctx, (unsigned long long)L->n_ctx_seq,
               (unsigned long long)r.n_ctx, (unsigned long long)r.n_ctx_seq);
    size_t n = L->n_size_lines > r.n_log ? L->n_size_lines : r.n_log, same = 0;
    for (size_t i = 0; i < n; i++) {
        const char *a = i < L->n_size_lines ? L->size_lines[i] : "(no line)";
        const char *b = i < r.n_log ? r.log[i] : "(no line)";
        int ok = !strcmp(a, b);
        same += ok;
        printf("  logged:  %s\n  kvplan:  %s\n  %s\n", a, b, ok ? "match" : "DIFFERS");
    }
    if (L->arch[0] && m->gguf_arch[0] && strcmp(L->arch, m->gguf_arch))
        printf("note: the log's architecture is %s, the model's %s: is this the model that ran?\n",
               L->arch, m->gguf_arch);
    printf("\n%zu of %zu size lines match\n", same, n);
    return differ || same != n ? EXIT_DIFFERS : 0;
}

/* vLLM prints the available memory rounded to 0.01 GiB: every byte count in
 * that interval is a possible truth, and the capacity must fall in the
 * range they give. */
static int check_vllm(const kvp_model *m, const kvp_log *L, const cli_opts *o)
{
    kvp_vllm_params p;
    kvp_vllm_result *lo = malloc(sizeof *lo), *hi = malloc(sizeof *hi);
    kvp_error e;
    int rc = EXIT_DIFFERS;
    const double gib = 1024.0 * 1024.0 * 1024.0;
    if (!lo || !hi) {
        free(lo), free(hi);
        return cli_fail(EXIT_INPUT, "out of memory");
    }
    cli_vllm_params(o, &p);
    p.max_model_len = L->vllm_max_len;
    p.kv_cache_memory = (uint64_t)ceil((L->vllm_avail_gib - 0.005) * gib);
    printf("vLLM log: %.2f GiB available, %llu tokens, %.2fx for %llu tokens per request\n",
           L->vllm_avail_gib, (unsigned long long)L->vllm_tokens, L->vllm_concurrency,
           (unsigned long long)L->vllm_max_len);
    printf("model: %s\n\n", m->name);
    if (L->vllm_avail_gib <= 0.005 || kvp_vllm(m, &p, lo, &e)) {
        printf("kvplan refuses these settings: %s\n", L->vllm_avail_gib > 0.005 ? e.msg :
               "no available memory in the log");
    } else {
        p.kv_cache_memory = (uint64_t)floor((L->vllm_avail_gib + 0.005) * gib) - 1;
        if (kvp_vllm(m, &p, hi, &e)) {
            printf("kvplan refuses these settings: %s\n", e.msg);
        } else {
            int tok = L->vllm_tokens >= lo->token_capacity && L->vllm_tokens <= hi->token_capacity;
            int conc = L->vllm_concurrency >= floor(lo->max_concurrency * 100) / 100 - 1e-9 &&
                       L->vllm_concurrency <= ceil(hi->max_concurrency * 100) / 100 + 1e-9;
            printf("  tokens:       logged %llu, kvplan %llu..%llu  %s\n",
                   (unsigned long long)L->vllm_tokens, (unsigned long long)lo->token_capacity,
                   (unsigned long long)hi->token_capacity, tok ? "match" : "DIFFERS");
            printf("  concurrency:  logged %.2fx, kvplan %.2fx..%.2fx  %s\n", L->vllm_concurrency,
                   lo->max_concurrency, hi->max_concurrency, conc ? "match" : "DIFFERS");
            printf("  (blocks of %u tokens, %llu bytes a block id, %llu..%llu blocks)\n",
                   lo->block_size, (unsigned long long)lo->pool_block_bytes,
                   (unsigned long long)lo->num_blocks, (unsigned long long)hi->num_blocks);
            rc = tok && conc ? 0 : EXIT_DIFFERS;
        }
    }
    free(lo);
    free(hi);
    return rc;
}

int cmd_check(int argc, char **argv)
{
    cli_opts o;
    kvp_model *m;
    kvp_log L;
    kvp_error e;
    size_t len;
    if (cli_wants_help(argc, argv))
        return fputs(help, stdout), 0;
    int rc = cli_parse(argc, argv, "models llama-version vllm family", &o);
    if (rc)
        return rc;
    if (o.n_models != 2)
        return cli_fail(EXIT_USAGE, "check: give the log and the model (see kvplan check --help)");
    char *text = read_file(o.models[0], &len);
    if (!text)
        return cli_fail(EXIT_INPUT, "%s: cannot read (a regular file of at most 256 MiB)",
                        o.models[0]);
    rc = kvp_log_parse(text, len, o.models[0], &L, &e);
    free(text);
    if (rc)
        return cli_fail_err(&e);
    o.model = o.models[1];
    if ((rc = cli_load_model(&o, "check", &m)))
        return rc;
    rc = L.kind == KVP_LOG_LLAMA ? check_llama(m, &L, &o) : check_vllm(m, &L, &o);
    kvp_model_free(m);
    return rc;
}
