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
    "usage: kvplan check LOGFILE MODEL [--llama-version V] [placement flags]\n"
    "                    [--vllm-version V --gpu NAME] [-tp N] [--block-size N]\n"
    "                    [--kv-cache-dtype T] [--no-enable-prefix-caching]\n"
    "\n"
    "LOGFILE is what llama.cpp (llama-server, llama-cli, ...) or vLLM printed when it\n"
    "started; MODEL is the model it ran (a GGUF, a config.json, a catalog name).\n"
    "llama.cpp: the settings are read from the log's llama_context lines (n_ctx,\n"
    "n_seq_max, n_ubatch, flash_attn, kv_unified), the cache types from its size lines;\n"
    "kvplan predicts the same run and compares every size line, byte for byte, then\n"
    "every buffer line (model, KV, RS, output, compute) and the memory breakdown table.\n"
    "The placement comes from the log too: the GPUs from its buffer names, -ngl from\n"
    "\"offloaded A/B layers\", mmap from its load_mode, -nkvo when offloaded layers\n"
    "keep their KV on the host; give what the log cannot say (-ts, -ot, --cpu-moe,\n"
    "--n-cpu-moe) as you ran it. Compute buffers are compared where kvplan models them.\n"
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

/* "CUDA0" -> backend "CUDA", index 0; -1 for host buffer types. */
static int device_index(const char *name, char *backend, size_t n)
{
    size_t len = strlen(name), digits = 0;
    while (digits < len && name[len - 1 - digits] >= '0' && name[len - 1 - digits] <= '9')
        digits++;
    if (!digits || digits == len || !strncmp(name, "CPU", 3) || strchr(name, '_'))
        return -1;
    if (backend)
        snprintf(backend, n, "%.*s", (int)(len - digits), name);
    return atoi(name + len - digits);
}

/* What the log says about placement, where the command line did not. */
static void placement_from_log(const kvp_log *L, const cli_opts *o, kvp_llama_placement *pl)
{
    kvp_error e;
    int n_dev = 0, device_kv = 0, any_kv = 0;
    uint64_t mem[8] = {0};
    for (size_t i = 0; i < L->n_buffers; i++) {
        int d = device_index(L->buffers[i].name, pl->backend, sizeof pl->backend);
        if (d >= 0 && d < 8 && d + 1 > n_dev)
            n_dev = d + 1;
        any_kv |= !strcmp(L->buffers[i].kind, "KV");
        device_kv |= d >= 0 && (!strcmp(L->buffers[i].kind, "KV") || !strcmp(L->buffers[i].kind,
                                                                             "RS"));
    }
    for (size_t i = 0; i < L->n_breakdown; i++) {
        int d = device_index(L->breakdown[i].name, pl->backend, sizeof pl->backend);
        if (d >= 0 && d < 8) {
            n_dev = d + 1 > n_dev ? d + 1 : n_dev;
            mem[d] = (uint64_t)L->breakdown[i].total << 20;
        }
    }
    if (!pl->offload.n_devices)
        for (int d = 0; d < n_dev; d++) {
            char size[32];
            snprintf(size, sizeof size, "%lluMiB", (unsigned long long)(mem[d] >> 20));
            if (mem[d])
                kvp_llama_placement_add_memory(pl, size, &e);
            else
                pl->offload.n_devices++; /* memory unknown */
        }
    if (!o->ngl_set && L->offloaded >= 0)
        pl->offload.n_gpu_layers = L->offloaded;
    if (!o->mmap_set && L->load_mode_mmap >= 0)
        pl->no_mmap = !L->load_mode_mmap;
    if (!o->kvo_set && pl->offload.n_devices && any_kv && !device_kv && L->offloaded > 1)
        pl->no_kv_offload = 1;
}

/* Why kvplan does not compare a logged buffer line, or NULL. */
static const char *not_compared(const char *kind, const kvp_model *m, const kvp_log *L,
                                const kvp_llama_devices *d)
{
    if (L->no_alloc && (!strcmp(kind, "model") || !strcmp(kind, "KV")))
        return "a metadata-only run (no_alloc) allocates no model or KV buffer";
    if (!strcmp(kind, "model") && d->weights_computed)
        return "kvplan computes a config.json's weights; give the GGUF that ran";
    if (!strcmp(kind, "model") && !d->weights_known)
        return "kvplan does not know this model's weights";
    if (!strcmp(kind, "output") && !m->tensors)
        return "a config.json's vocab_size may differ from the GGUF's; give the GGUF that ran";
    if (!strcmp(kind, "compute") && !d->compute.modelled)
        return "kvplan does not model this run's compute buffers";
    /* the graph reads n_vocab (the logits rows) and hyperparameters only the
     * GGUF has, as the output buffer does */
    if (!strcmp(kind, "compute") && !m->tensors)
        return "the compute graph reads the GGUF's vocabulary and hyperparameters, which a "
               "config.json may not match; give the GGUF that ran";
    /* only a CPU-only replay is exact; a device split or an estimate is a
     * figure to plan with, not one to hold a log to */
    if (!strcmp(kind, "compute") && !d->compute.exact)
        return d->compute.n_devices ? "kvplan computes compute buffers beside GPUs, it does "
                                      "not claim them exact"
                                    : "kvplan estimates this architecture's compute buffers";
    return NULL;
}

/* kvplan's k-th buffer of this kind and name, or NULL. */
static const kvp_llama_buffer *nth_buffer(const kvp_llama_devices *d, const char *kind,
                                          const char *name, size_t k)
{
    for (size_t i = 0; i < d->n_buffers; i++)
        if (!strcmp(d->buffers[i].kind, kind) && !strcmp(d->buffers[i].name, name) && !k--)
            return &d->buffers[i];
    return NULL;
}

/* Each buffer line of the log beside kvplan's; counts compared and equal. */
static void compare_buffers(const kvp_model *m, const kvp_log *L, const kvp_llama_devices *d,
                            size_t *compared, size_t *same)
{
    for (size_t i = 0; i < L->n_buffers; i++) {
        const struct kvp_log_buffer *b = &L->buffers[i];
        size_t k = 0;
        for (size_t j = 0; j < i; j++)
            k += !strcmp(L->buffers[j].kind, b->kind) && !strcmp(L->buffers[j].name, b->name);
        const char *why = not_compared(b->kind, m, L, d);
        if (why) {
            printf("  logged:  %s\n  not compared: %s\n", b->line, why);
            continue;
        }
        const kvp_llama_buffer *mine = nth_buffer(d, b->kind, b->name, k);
        char a[32], c[32];
        snprintf(a, sizeof a, "%.2f", b->mib);
        if (mine)
            snprintf(c, sizeof c, "%.2f", (double)mine->bytes / 1024.0 / 1024.0);
        int ok = mine && !strcmp(a, c);
        ++*compared;
        *same += ok;
        printf("  logged:  %s\n  kvplan:  %s\n  %s\n", b->line, mine ? mine->log : "(no line)",
               ok ? "match" : "DIFFERS");
    }
    /* what kvplan predicts that the log lacks, for the kinds it compared */
    for (size_t i = 0; i < d->n_buffers; i++) {
        const kvp_llama_buffer *mine = &d->buffers[i];
        size_t k = 0, logged = 0, found = 0;
        for (size_t j = 0; j < i; j++)
            k += !strcmp(d->buffers[j].kind, mine->kind) && !strcmp(d->buffers[j].name, mine->name);
        for (size_t j = 0; j < L->n_buffers; j++) {
            if (strcmp(L->buffers[j].kind, mine->kind))
                continue;
            logged++;
            found += !strcmp(L->buffers[j].name, mine->name);
        }
        if (!logged || found > k || not_compared(mine->kind, m, L, d))
            continue;
        ++*compared;
        printf("  logged:  (no line)\n  kvplan:  %s\n  DIFFERS\n", mine->log);
    }
}

/* "17904", or why the figure is not compared */
static const char *mib_floor(const char *why, uint64_t bytes, char *buf, size_t n)
{
    if (why)
        return "(not compared)";
    snprintf(buf, n, "%llu", (unsigned long long)(bytes >> 20));
    return buf;
}

/* The memory breakdown table (integer MiB, rounded down): context (KV and
 * state) per row, model and compute where they are compared. */
static void compare_breakdown(const kvp_model *m, const kvp_log *L, const kvp_llama_devices *d,
                              size_t *compared, size_t *same)
{
    for (size_t i = 0; i < L->n_breakdown; i++) {
        const struct kvp_log_breakdown *b = &L->breakdown[i];
        const kvp_device_mem *row = NULL;
        char x[32], y[32];
        for (uint32_t r = 0; r < d->n_rows; r++)
            if (!strcmp(d->rows[r].name, b->name) || (r == 0 && !strcmp(b->name, "Host")))
                row = &d->rows[r];
        ++*compared;
        printf("  logged:  %s\n", b->line);
        if (!row) {
            printf("  kvplan:  (no such device)\n  DIFFERS\n");
            continue;
        }
        const char *why_model = not_compared("model", m, L, d),
                   *why_compute = not_compared("compute", m, L, d);
        uint64_t context = (row->kv_bytes + row->recurrent_bytes) >> 20;
        int ok = (int64_t)context == b->context &&
                 (why_model || (int64_t)(row->weights_bytes >> 20) == b->model) &&
                 (why_compute || (int64_t)(row->compute_bytes >> 20) == b->compute);
        printf("  kvplan:  model %s, context %llu, compute %s\n  %s\n",
               mib_floor(why_model, row->weights_bytes, x, sizeof x),
               (unsigned long long)context, mib_floor(why_compute, row->compute_bytes, y, sizeof y),
               ok ? "match" : "DIFFERS");
        *same += ok;
    }
}

static int check_llama(const kvp_model *m, const kvp_log *L, const cli_opts *o)
{
    kvp_llama_params p;
    kvp_llama_placement pl;
    kvp_llama_result r;
    kvp_llama_devices *d = malloc(sizeof *d);
    kvp_error e;
    if (!d)
        return cli_fail(EXIT_INPUT, "out of memory");
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
    cli_llama_placement(o, &pl);
    placement_from_log(L, o, &pl);
    if (kvp_llama_plan(m, &p, &pl, &r, d, &e)) {
        printf("kvplan refuses these settings: %s\n", e.msg);
        free(d);
        return EXIT_DIFFERS;
    }
    if (pl.offload.n_devices)
        printf("placement: %u %s device%s, -ngl %d%s%s\n\n", pl.offload.n_devices,
               pl.backend[0] ? pl.backend : "CUDA", pl.offload.n_devices == 1 ? "" : "s",
               (int)d->n_gpu_layers, pl.no_mmap ? ", no mmap" : "",
               pl.no_kv_offload ? ", -nkvo" : "");
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
    size_t bufs = 0, bufs_same = 0, rows = 0, rows_same = 0;
    if (L->n_buffers) {
        printf("\nbuffers:\n");
        compare_buffers(m, L, d, &bufs, &bufs_same);
        printf("\n%zu of %zu buffer lines compared match\n", bufs_same, bufs);
    }
    if (L->n_breakdown) {
        printf("\nmemory breakdown (MiB, rounded down):\n");
        compare_breakdown(m, L, d, &rows, &rows_same);
        printf("\n%zu of %zu breakdown rows match\n", rows_same, rows);
    }
    free(d);
    return differ || same != n || bufs_same != bufs || rows_same != rows ? EXIT_DIFFERS : 0;
}

/* vLLM prints the available memory rounded to 0.01 GiB: every byte count in
 * that interval is a possible truth, and the capacity must fall in the
 * range they give. */
/* One row of the profile table: the logged figure ("-" when the log does not
 * print it) beside kvplan's, and the gap kept when it is the largest. */
static void profile_row(const char *term, double logged, double mine, const char **worst,
                        double *gap)
{
    char l[32] = "-";
    if (logged >= 0) {
        snprintf(l, sizeof l, "%.2f", logged);
        if (fabs(mine - logged) > fabs(*gap)) {
            *gap = mine - logged;
            *worst = term;
        }
    }
    printf("  %-28s %9s %9.2f\n", term, l, mine);
}

/* The log's profile lines beside kvplan's estimate of each term (what vLLM
 * measures; kvplan predicts it without a log).  Informational: the exit
 * status is the block arithmetic's. */
static void check_vllm_profile(const kvp_model *m, const kvp_log *L, const kvp_vllm_params *given)
{
    const double gib = 1024.0 * 1024.0 * 1024.0;
    kvp_vllm_params p = *given;
    kvp_vllm_result *r = malloc(sizeof *r);
    kvp_error e;
    if (!r)
        return;
    p.kv_cache_memory = 0;
    if (p.gpu_memory_utilization <= 0 && L->vllm_util > 0)
        p.gpu_memory_utilization = L->vllm_util;
    printf("\nmemory profile: the log beside kvplan's estimate (GiB, per GPU; utilization %s)\n",
           given->gpu_memory_utilization > 0 ? "as given" : L->vllm_util > 0 ? "as logged"
                                                                             : "the release's default");
    if (kvp_vllm(m, &p, r, &e) && !r->requested_bytes) {
        printf("  kvplan cannot estimate it: %s\n", e.msg);
        free(r);
        return;
    }
    const char *worst = NULL;
    double gap = 0, graph = r->cudagraph_applied ? r->cudagraph_bytes / gib : 0;
    double total = L->vllm_total_gib > 0 ? L->vllm_total_gib : r->gpu_total_bytes / gib;
    double est = L->vllm_graph_est_gib; /* from the "equivalent to" line: (U - E) x total */
    if (est < 0 && L->vllm_util_equiv >= 0 && L->vllm_util > 0)
        est = (L->vllm_util - L->vllm_util_equiv) * total;
    printf("  %-28s %9s %9s\n", "term", "logged", "kvplan");
    profile_row("total (as torch sees it)", L->vllm_total_gib, r->gpu_total_bytes / gib, &worst, &gap);
    profile_row("requested (total x util)", L->vllm_requested_gib, r->requested_bytes / gib, &worst,
                &gap);
    profile_row("weights", L->vllm_weights_gib, r->weights_bytes / gib, &worst, &gap);
    if (L->vllm_consumed_gib >= 0)
        profile_row("consumed (weights + non-torch)", L->vllm_consumed_gib,
                    (r->weights_bytes + r->non_torch_bytes) / gib, &worst, &gap);
    /* from 0.27 the printed peak holds the applied graph estimate */
    profile_row(L->vllm_consumed_gib >= 0 ? "peak activation (+ graphs)" : "peak activation",
                L->vllm_peak_gib, r->activation_bytes / gib + (L->vllm_consumed_gib >= 0 ? graph : 0),
                &worst, &gap);
    if (L->vllm_consumed_gib < 0)
        profile_row("non-torch", L->vllm_non_torch_gib, r->non_torch_bytes / gib, &worst, &gap);
    profile_row(r->cudagraph_applied ? "CUDA graphs (subtracted)" : "CUDA graphs (not subtracted)",
                est, r->cudagraph_bytes / gib, &worst, &gap);
    const char *w = worst;
    double g = gap;
    profile_row("available", L->vllm_avail_gib, r->available_signed_bytes / gib, &worst, &gap);
    worst = w, gap = g;
    if (worst)
        printf("  the term that differs most: %s, kvplan %.2f GiB %s\n", worst, fabs(gap),
               gap > 0 ? "higher" : "lower");
    free(r);
}

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
    /* a log cut before "Maximum concurrency" leaves max_model_len to the user */
    if (!L->vllm_max_len && !p.max_model_len) {
        free(lo), free(hi);
        return cli_fail(EXIT_INPUT, "the log has no \"Maximum concurrency for N tokens\" line; "
                        "give --max-model-len as vLLM ran");
    }
    if (L->vllm_max_len)
        p.max_model_len = L->vllm_max_len;
    p.kv_cache_memory = (uint64_t)ceil((L->vllm_avail_gib - 0.005) * gib);
    if (L->vllm_max_len)
        printf("vLLM log: %.2f GiB available, %llu tokens, %.2fx for %llu tokens per request\n",
               L->vllm_avail_gib, (unsigned long long)L->vllm_tokens, L->vllm_concurrency,
               (unsigned long long)p.max_model_len);
    else
        printf("vLLM log: %.2f GiB available, %llu tokens (max_model_len %llu as given)\n",
               L->vllm_avail_gib, (unsigned long long)L->vllm_tokens,
               (unsigned long long)p.max_model_len);
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
            int conc = !L->vllm_max_len ||
                       (L->vllm_concurrency >= floor(lo->max_concurrency * 100) / 100 - 1e-9 &&
                        L->vllm_concurrency <= ceil(hi->max_concurrency * 100) / 100 + 1e-9);
            printf("  tokens:       logged %llu, kvplan %llu..%llu  %s\n",
                   (unsigned long long)L->vllm_tokens, (unsigned long long)lo->token_capacity,
                   (unsigned long long)hi->token_capacity, tok ? "match" : "DIFFERS");
            if (L->vllm_max_len)
                printf("  concurrency:  logged %.2fx, kvplan %.2fx..%.2fx  %s\n",
                       L->vllm_concurrency, lo->max_concurrency, hi->max_concurrency,
                       conc ? "match" : "DIFFERS");
            printf("  (blocks of %u tokens, %llu bytes a block id, %llu..%llu blocks)\n",
                   lo->block_size, (unsigned long long)lo->pool_block_bytes,
                   (unsigned long long)lo->num_blocks, (unsigned long long)hi->num_blocks);
            rc = tok && conc ? 0 : EXIT_DIFFERS;
        }
    }
    check_vllm_profile(m, L, &p);
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
    int rc = cli_parse(argc, argv, "models llama-version vllm family llama-place", &o);
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
