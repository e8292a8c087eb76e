/* cmd_sim.c - `kvplan sim`: replays a workload (a Mooncake trace or a
 * synthetic generator) through vLLM's prefix cache, one request at a time,
 * and reports the token hit rate; --sweep finds the capacity cliff.  The
 * concurrent replay (--concurrent) is in cmd_sim_serve.c. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan sim (--trace FILE [--format NAME] | --workload SPEC)\n"
    "                  (--capacity-blocks N | --capacity-tokens T | --unbounded\n"
    "                   | --sweep A..B[/POINTS] | --sweep auto[/POINTS]\n"
    "                   | MODEL [vLLM options, as kvplan mem --runtime vllm])\n"
    "                  [--reuse prefix|any-position] [--plot F.svg [--force]]\n"
    "                  [--block-size B] [--no-enable-prefix-caching] [--json]\n"
    "       kvplan sim --trace FILE [--format NAME] --export OUT.jsonl [--force]\n"
    "       kvplan sim --concurrent (--trace FILE | --workload SPEC) [MODEL [vLLM options]]\n"
    "                  [capacity as above | --mem-fraction-static F] [--policy vllm|radix]\n"
    "                  [--arrivals all|trace|poisson] [--rate R] [--seed N]\n"
    "                  [--no-async-scheduling] [--plot F.svg [--force]] [--json]\n"
    "                  [--rate-sweep A..B[/P]] [--cpu-tier SIZE [--pcie gen4|gen5]]\n"
    "\n"
    "Replays a workload through vLLM v1's block pool with prefix caching, one request\n"
    "at a time (admit, prefill, decode, free), and reports the token hit rate (hit\n"
    "tokens / prompt tokens, vLLM's metric), prefill tokens computed and saved,\n"
    "evictions and the peak blocks in use.  The rules: chained hashes over full\n"
    "blocks; the last prompt token is never a hit; allocation pops the head of the\n"
    "free queue and evicts lazily; a finished request's blocks are freed in reverse\n"
    "order, cached ones to the tail (LRU), uncached ones to the head.  It also\n"
    "describes the workload: its working set (the distinct blocks a cache that\n"
    "never evicts ends up holding), and where the trace has conversations, how\n"
    "much of each prompt the conversation's previous request already sent.\n"
    "\n"
    "  --trace FILE          a trace, its format detected (docs/trace-formats.md):\n"
    "                        mooncake   Mooncake JSONL, hash_ids per 512-token block\n"
    "                        kv-cache-tester  a coding agent's conversation (a JSON\n"
    "                                   file, or a folder of them replayed together),\n"
    "                                   hash_ids per 64-token block\n"
    "                        ragpulse   RAGPulse's folder (0_trace.jsonl and the chunk\n"
    "                                   lengths beside it): prompts are their chunks in\n"
    "                                   the order system prompt, passages, history, web\n"
    "                                   search, user input\n"
    "                        azure      Azure LLM inference CSV: arrivals and lengths,\n"
    "                                   no sharing (for --concurrent)\n"
    "                        kvplan     kvplan's JSONL: token ids, chunks or block\n"
    "                                   hashes per request (what --export writes)\n"
    "                        Output blocks are not cached: no trace names their content.\n"
    "  --format NAME         the trace's format, instead of detecting it\n"
    "  --export OUT.jsonl    write the workload as kvplan's JSONL and replay nothing;\n"
    "                        reading it back replays the same (an existing file is\n"
    "                        kept unless --force)\n"
    "  --workload SPEC       shared-prefix:N,P,U[,O]  N requests: P shared + U unique\n"
    "                                                 prompt tokens, O output\n"
    "                        cyclic:D,T,R[,S[,O]]     D documents of T tokens, R passes\n"
    "                                                 in order, S unique suffix tokens\n"
    "                        grouped:G,K,P,U[,O[,cyclic|grouped]]  G groups of K\n"
    "                                                 prompts, P shared + U unique each\n"
    "  --capacity-blocks N   vLLM's num_gpu_blocks, the null block included (N-1 usable)\n"
    "  --capacity-tokens T   the capacity vLLM logs (\"GPU KV cache size: T tokens\"):\n"
    "                        T / B blocks, the null block included\n"
    "  --unbounded           a pool that never evicts: the working set, the largest\n"
    "                        request's blocks beside it, and the null block\n"
    "  --sweep A..B[/P]      P capacities (default 11) from A to B blocks; names the\n"
    "                        cliff, where the hit rate rises most (where reuse\n"
    "                        collapses below it)\n"
    "  --sweep auto[/P]      P capacities (default 11) from the largest request's\n"
    "                        blocks to --unbounded's pool, each a constant factor\n"
    "                        above the one before (a --plot of it is log-scaled)\n"
    "  --reuse any-position  also replay reuse beyond the prefix, a what-if no runtime\n"
    "                        here does (CacheBlend-style): each chunk of content (a\n"
    "                        RAG passage, a trace's block) found wherever it occurs,\n"
    "                        the pool holding whole chunks, least recently used out;\n"
    "                        reported beside prefix reuse (the default, vLLM's)\n"
    "  --plot F.svg          with --sweep: the hit rate against capacity, both reuse\n"
    "                        kinds, the cliff marked (an existing F.svg is kept\n"
    "                        unless --force)\n"
    "  MODEL                 the pool vLLM builds for MODEL (num_gpu_blocks and block\n"
    "                        size, as kvplan mem MODEL --runtime vllm predicts them with\n"
    "                        --gpu, --kv-cache-memory, -tp ...); full-attention and MLA\n"
    "                        models only\n"
    "  --block-size B        tokens per block (default: a MODEL's pool's; else the\n"
    "                        trace's own, 512 for Mooncake and 64 for kv-cache-tester;\n"
    "                        else 16); any trace replays at any block size\n"
    "  --revision REV        a Hub branch, tag or commit of an ORG/NAME model (default main)\n"
    "  --offline             never use the network: local files, caches and the catalog only\n"
    "  --family NAME         read MODEL's config.json by kvplan's rule set NAME (llama,\n"
    "                        gemma3, ...), for an architecture kvplan cannot name; the\n"
    "                        output says so\n"
    "\n"
    "  --no-enable-prefix-caching  nothing is looked up or cached (both modes)\n"
    "\n"
    "A request larger than the pool is counted as a miss (all its prompt computed,\n"
    "the cache untouched) and reported as oversized.\n"
    "\n"
    "Concurrent mode (--concurrent) replays the workload through a serving scheduler,\n"
    "requests in flight together, step by step: vLLM v1's (running requests first,\n"
    "then admissions under the token budget and max_num_seqs, chunked prefill, prefix\n"
    "hits at admission, the whole-prompt gate, recompute preemption of the last\n"
    "admitted, async scheduling's one-step lag) or SGLang's (--policy radix).  With a\n"
    "MODEL each step is priced by kvplan's step-time model (a roofline over the\n"
    "model's shapes and the GPU's datasheet rates with calibrated efficiencies: a\n"
    "model, not a measurement); without one it runs in tokens only.  It reports wall\n"
    "time, TTFT and TPOT (mean, p50, p90, p99), prompt and output tokens/s, prefill\n"
    "tokens computed (recompute included), the hit rate, preemptions, peak blocks and\n"
    "steps; with prefix caching on and a MODEL it also runs with it off and prints\n"
    "both wall times and their ratio.\n"
    "  --concurrent          the serving replay (vLLM's policy unless --policy)\n"
    "  --policy vllm|radix   vLLM v1's scheduler over its block pool, or SGLang's radix\n"
    "                        cache (tokens, LRU leaves) with FCFS prefill batches and\n"
    "                        retraction\n"
    "  MODEL [vLLM options]  the pool (as above), the time model and vLLM's batch\n"
    "                        defaults for --gpu (default A100-80GB) and --entry llm|serve:\n"
    "                        8,192 / 256 (LLM) or 2,048 / 256 (serve) on an A100, L40S\n"
    "                        or smaller; 16,384 / 1,024 (LLM) or 8,192 / 1,024 (serve) on\n"
    "                        an H100 or H200; 16,384 / 1,024 on a B200; one GPU (-tp 1)\n"
    "  --max-num-batched-tokens N, --max-num-seqs N   override those (without a\n"
    "                        MODEL the defaults are 8,192 and 256; SGLang's chunked\n"
    "                        prefill size and max running requests with --policy radix)\n"
    "  --mem-fraction-static F   SGLang's pool: (GPU memory free after MODEL's weights\n"
    "                        - GPU x (1 - F)) / one token's KV; --policy radix only\n"
    "  --arrivals all|trace|poisson   all at once (default for --workload), the\n"
    "                        trace's timestamps (default for --trace) or Poisson\n"
    "  --rate R              Poisson arrivals, R requests per second\n"
    "  --seed N              the Poisson draw's seed (default 0; same seed, same times)\n"
    "  --no-async-scheduling vLLM's synchronous engine: frees and arrivals take effect\n"
    "                        in the next step, not the one after\n"
    "  --sweep A..B[/P]      one run per capacity (with or without a MODEL)\n"
    "  --plot F.svg          with --sweep: hit rate and wall time against capacity; an\n"
    "                        existing F.svg is kept unless --force\n"
    "  --rate-sweep A..B[/P] one Poisson run per rate, P rates (default 5) from A to B\n"
    "                        requests per second, at one capacity\n"
    "  --cpu-tier SIZE       a host-memory tier behind the GPU cache (vLLM's native KV\n"
    "                        offloading, LRU): prompt blocks stored as computed, loaded\n"
    "                        at admission after the GPU hit; needs a MODEL, vLLM policy\n"
    "  --pcie gen4|gen5      its link: 25 or 50 GB/s sustained each way (default: the\n"
    "                        GPU's host link)\n"
    "\n"
    "A cyclic workload (2 to 16 passes) is also reported by pass: each pass's hit rate\n"
    "and its time, from the previous pass's last finish to its own.\n"
    "\n"
    "examples:\n"
    "  kvplan sim --workload shared-prefix:32,16384,256 --capacity-tokens 400032\n"
    "  kvplan sim --workload cyclic:64,8192,2,256 qwen3-8b --kv-cache-memory 54.94GiB\n"
    "  kvplan sim --workload grouped:64,16,2048,128 --sweep 8500..8800/7\n"
    "  kvplan sim --trace conversation_trace.jsonl --capacity-blocks 20000 --json\n"
    "  kvplan sim --trace kv-cache-tester/ --unbounded\n"
    "  kvplan sim --trace ragpulse/ --unbounded --reuse any-position\n"
    "  kvplan sim --trace trace_0001.json --sweep auto --plot agent.svg\n"
    "  kvplan sim --concurrent --workload shared-prefix:32,16384,256,64 qwen3-8b \\\n"
    "      --gpu A100-80GB-PCIe --max-model-len 40960 --kv-cache-memory 58987118592\n"
    "  kvplan sim --concurrent --policy radix --workload cyclic:64,8192,2,256 qwen3-8b \\\n"
    "      --sweep 25002..100000/4 --plot cyclic.svg\n"
    "  kvplan sim --concurrent --trace conversation_trace.jsonl qwen3-8b --gpu H100\n"
    "  kvplan sim --concurrent --workload cyclic:64,8192,2,256 qwen3-8b --cpu-tier 100GiB\n"
    "  kvplan sim --concurrent --workload shared-prefix:64,2048,256,64 qwen3-8b \\\n"
    "      --rate-sweep 1..16/4\n";

/* "A..B[/POINTS]": POINTS capacities from A to B blocks, evenly spaced */
int sim_parse_sweep(const char *s, uint64_t **caps, size_t *n)
{
    char *end;
    const char *p = s;
    uint64_t v[3] = {0, 0, 11};
    for (int i = 0; i < 3 && *p; i++) {
        if (*p < '0' || *p > '9')
            break;
        v[i] = strtoull(p, &end, 10);
        p = end;
        if (i == 0 && !strncmp(p, "..", 2))
            p += 2;
        else if (i == 1 && *p == '/')
            p++;
        else
            break;
    }
    if (*p || p == s || p[-1] == '/' || p[-1] == '.' || v[0] < 2 || v[1] < v[0] ||
        v[1] > (1ull << 24) || v[2] < 2 || v[2] > 1000)
        return cli_fail(EXIT_USAGE, "--sweep %s: expected A..B[/POINTS] with 2 <= A <= B <= "
                        "2^24 blocks and 2 to 1000 points", s);
    *caps = malloc(v[2] * sizeof **caps);
    if (!*caps)
        return cli_fail(EXIT_INPUT, "--sweep %s: out of memory", s);
    *n = 0;
    for (uint64_t i = 0; i < v[2]; i++) {
        uint64_t c = v[0] + (v[1] - v[0]) * i / (v[2] - 1);
        if (*n == 0 || (*caps)[*n - 1] != c)
            (*caps)[(*n)++] = c; /* a narrow range repeats points */
    }
    return 0;
}

static void progress(size_t done, size_t n, void *arg)
{
    (void)arg;
    fprintf(stderr, "\rsim: %zu/%zu capacities%s", done, n, done == n ? "\n" : "");
}

/* The block size a replay without a MODEL uses: --block-size, else the
 * trace format's own (Mooncake 512, kv-cache-tester 64), else vLLM's 16. */
int sim_block_size(const cli_opts *o, uint32_t *bs)
{
    kvp_error e;
    const char *fmt = o->trace_format;
    if (o->block_size) {
        *bs = o->block_size;
        return 0;
    }
    if (o->sim_trace && !fmt && !(fmt = kvp_trace_detect(o->sim_trace, &e)))
        return cli_fail_err(&e);
    *bs = o->sim_trace && kvp_trace_native_block(fmt) ? kvp_trace_native_block(fmt) : 16;
    return 0;
}

int sim_load_workload(const cli_opts *o, uint32_t bs, kvp_workload *w)
{
    kvp_error e;
    if (o->sim_trace ? kvp_workload_load(o->sim_trace, o->trace_format, bs, w, &e)
                     : kvp_workload_synthetic(o->sim_workload, bs, w, &e))
        return cli_fail_err(&e);
    if (w->note[0] && !o->json && !o->export_path)
        fprintf(stderr, "kvplan: %s: %s\n", w->name, w->note);
    return 0;
}

/* The pool vLLM would build for MODEL with these settings (as `kvplan mem
 * --runtime vllm` predicts it).  The simulator has one group of
 * full-attention blocks, so models whose layers vLLM splits into other kinds
 * of groups are refused. */
int sim_model_pool(const cli_opts *o, kvp_model **keep, kvp_vllm_result *r)
{
    kvp_model *m;
    kvp_vllm_params p;
    kvp_error e;
    cli_opts mo = *o; /* the model's defaults must not leak into the workload's options */
    int rc = cli_load_model(&mo, "sim", &m);
    if (rc)
        return rc;
    cli_vllm_params(o, &p); /* a trace is hashed at the pool's block size */
    if (kvp_vllm(m, &p, r, &e))
        rc = cli_fail_err(&e);
    for (size_t g = 0; !rc && g < r->n_groups; g++)
        if (r->groups[g].kind != KVP_LAYER_FULL && r->groups[g].kind != KVP_LAYER_MLA)
            rc = cli_fail(EXIT_INPUT, "sim: %s: vLLM keeps its %s layers in a block group of "
                          "their own; the simulator models full attention only", o->model,
                          kvp_layer_kind_name(r->groups[g].kind));
    if (rc || !keep)
        kvp_model_free(m);
    else
        *keep = m;
    return rc;
}

static int model_pool(const cli_opts *o, uint64_t *blocks, uint32_t *bs, uint64_t *bytes)
{
    kvp_vllm_result *r = malloc(sizeof *r);
    if (!r)
        return cli_fail(EXIT_INPUT, "sim: out of memory");
    int rc = sim_model_pool(o, NULL, r);
    if (!rc)
        *blocks = r->num_blocks, *bs = r->block_size, *bytes = r->pool_block_bytes;
    free(r);
    return rc;
}

/* "auto[/P]": P capacities from the largest request's blocks (below it some
 * request cannot run at all) to a pool that never evicts, spaced by a
 * constant factor: a workload's cliff may sit anywhere from a system prompt's
 * size to its whole working set, and even steps would pass over the small end */
static int auto_sweep(const char *spec, int any, const sim_job *j, uint64_t **caps, size_t *n)
{
    uint64_t lo = (any ? j->st.max_chunk_request_blocks : j->st.max_request_blocks) + 1;
    uint64_t hi = any && j->st.unbounded_chunk_blocks > j->st.unbounded_blocks
                      ? j->st.unbounded_chunk_blocks : j->st.unbounded_blocks;
    char *end;
    unsigned long pts = spec[4] == '/' ? strtoul(spec + 5, &end, 10) : 11;
    if ((spec[4] && spec[4] != '/') || (spec[4] == '/' && (*end || end == spec + 5)) ||
        pts < 2 || pts > 1000)
        return cli_fail(EXIT_USAGE, "--sweep %s: expected A..B[/POINTS] or auto[/POINTS], 2 to "
                        "1000 points", spec);
    lo = lo < 2 ? 2 : lo;
    hi = hi > lo ? hi : lo + 1;
    if (hi > (1ull << 24))
        return cli_fail(EXIT_INPUT, "sim: the workload needs a pool of %llu blocks; the "
                        "simulator's limit is 2^24 (a larger --block-size needs fewer)",
                        (unsigned long long)hi);
    if (!(*caps = malloc(pts * sizeof **caps)))
        return cli_fail(EXIT_INPUT, "sim: out of memory");
    *n = 0;
    for (unsigned long i = 0; i < pts; i++) {
        uint64_t c = i + 1 == pts ? hi
                     : (uint64_t)((double)lo * pow((double)hi / (double)lo, (double)i / (pts - 1)));
        if (*n == 0 || (*caps)[*n - 1] < c)
            (*caps)[(*n)++] = c; /* a narrow range repeats points */
    }
    return 0;
}

/* The capacities to run: the sweep's, or the one given in blocks or tokens,
 * or a pool that never evicts, or the pool of a model under vLLM. */
static int capacities(const cli_opts *o, sim_job *j)
{
    int given = !!o->capacity_blocks + !!o->capacity_tokens + !!o->sim_sweep + !!o->model +
                !!o->unbounded;
    uint64_t c = 0;
    if (given != 1)
        return cli_fail(EXIT_USAGE, "sim: give one of --capacity-blocks, --capacity-tokens, "
                        "--sweep, --unbounded or a MODEL (see kvplan sim --help)");
    if (o->sim_sweep && !strncmp(o->sim_sweep, "auto", 4))
        return j->sweep = 1, auto_sweep(o->sim_sweep, o->reuse_any, j, &j->caps, &j->n);
    if (o->sim_sweep)
        return j->sweep = 1, sim_parse_sweep(o->sim_sweep, &j->caps, &j->n);
    if (o->model)
        c = j->model_blocks; /* vLLM's own pool: its limits are the simulator's */
    else if (o->unbounded)
        c = o->reuse_any && j->st.unbounded_chunk_blocks > j->st.unbounded_blocks
                ? j->st.unbounded_chunk_blocks : j->st.unbounded_blocks;
    else
        c = o->capacity_blocks ? o->capacity_blocks : o->capacity_tokens / j->bs;
    if (!o->model && (c < 2 || c > (1ull << 24)))
        return cli_fail(EXIT_INPUT, "sim: a capacity of %llu blocks of %u tokens: the pool "
                        "needs 2 to 2^24 blocks (the null block and one usable)",
                        (unsigned long long)c, j->bs);
    if (!(j->caps = malloc(sizeof *j->caps)))
        return cli_fail(EXIT_INPUT, "sim: out of memory");
    j->caps[0] = c;
    j->n = 1;
    return 0;
}

/* The replay of one request at a time has no schedule, no clock and no plot. */
static int sequential_only(const cli_opts *o)
{
    const char *opt = o->sim_policy ? "--policy" : o->sim_arrivals ? "--arrivals"
                      : o->sim_rate > 0 ? "--rate" : o->no_async ? "--no-async-scheduling"
                      : o->mem_fraction > 0 ? "--mem-fraction-static"
                      : o->cpu_tier ? "--cpu-tier" : o->pcie_gen ? "--pcie"
                      : o->rate_sweep ? "--rate-sweep" : NULL;
    if (opt)
        return cli_fail(EXIT_USAGE, "sim: %s needs --concurrent (the sequential replay has no "
                        "scheduler or clock)", opt);
    return 0;
}

/* --export FILE: the workload as kvplan's own JSONL, nothing replayed */
static int sim_export(const cli_opts *o, uint32_t bs)
{
    kvp_workload w;
    kvp_error e;
    int rc = sim_load_workload(o, bs, &w);
    if (rc)
        return rc;
    if (kvp_workload_write(&w, o->export_path, o->force, &e))
        rc = cli_fail_err(&e);
    else
        printf("%s: %zu requests of %s (%zu chunks), kvplan's JSONL\n", o->export_path,
               w.n_req, w.name, w.n_chunks);
    kvp_workload_free(&w);
    return rc;
}

/* The replays: prefix reuse at each capacity, and the what-if beside it. */
static int replay(const cli_opts *o, sim_job *j)
{
    kvp_sim_config c;
    kvp_error e;
    kvp_sim_defaults(&c);
    c.block_size = j->bs;
    c.no_prefix_caching = !j->caching;
    j->r = calloc(j->n, sizeof *j->r);
    if (o->reuse_any)
        j->any = calloc(j->n, sizeof *j->any);
    if (!j->r || (o->reuse_any && !j->any))
        return cli_fail(EXIT_INPUT, "sim: out of memory");
    int tty = j->n > 1 && isatty(2);
    if (kvp_sim_sweep(&j->w, &c, j->caps, j->n, j->r, &e, tty ? progress : NULL, NULL))
        return cli_fail_err(&e);
    c.any_position = 1;
    if (j->any && kvp_sim_sweep(&j->w, &c, j->caps, j->n, j->any, &e, tty ? progress : NULL, NULL))
        return cli_fail_err(&e);
    return 0;
}

/* A sweep's capacities in tokens, for a plot's x axis (NULL: out of memory) */
uint64_t *sim_caps_tokens(const uint64_t *caps, size_t n, uint32_t bs)
{
    uint64_t *tok = malloc((n ? n : 1) * sizeof *tok);
    for (size_t i = 0; tok && i < n; i++)
        tok[i] = caps[i] * bs;
    return tok;
}

/* --plot F.svg: the sweep's hit rates against capacity, the cliff marked */
static int plot(const cli_opts *o, const sim_job *j)
{
    kvp_error e;
    char title[256];
    uint64_t *tok = sim_caps_tokens(j->caps, j->n, j->bs);
    if (!tok)
        return cli_fail(EXIT_INPUT, "sim: out of memory");
    snprintf(title, sizeof title, "%s · hit rate vs capacity (block %u)", j->w.name, j->bs);
    int rc = kvp_sim_plot(o->plot, o->force, title, tok, j->r, j->any, j->n, &e)
                 ? cli_fail_err(&e) : 0;
    free(tok);
    if (!rc && !o->json)
        printf("\n%s: hit rate against capacity, the cliff marked\n", o->plot);
    return rc;
}

static int sequential(const cli_opts *o)
{
    sim_job j;
    kvp_error e;
    memset(&j, 0, sizeof j);
    j.caching = o->prefix_caching != 0;
    j.model = o->model;
    int rc = sim_block_size(o, &j.bs);
    if (!rc && o->model) /* the model's pool sets the block size the trace is hashed at */
        rc = model_pool(o, &j.model_blocks, &j.bs, &j.block_bytes);
    if (o->plot && !o->sim_sweep && !rc)
        rc = cli_fail(EXIT_USAGE, "--plot %s: draws a capacity sweep; give --sweep A..B[/P] or "
                      "--sweep auto", o->plot);
    if (o->plot && !o->force && !rc && access(o->plot, F_OK) == 0)
        rc = cli_fail(EXIT_INPUT, "%s: exists; give --force to overwrite it", o->plot);
    if (rc || (rc = sim_load_workload(o, j.bs, &j.w)))
        return rc;
    if (kvp_workload_stats_of(&j.w, &j.st, &e))
        rc = cli_fail_err(&e);
    else
        rc = capacities(o, &j);
    if (!rc && !(rc = replay(o, &j))) {
        if (o->json)
            sim_print_json(&j);
        else
            j.sweep ? sim_print_sweep(&j) : sim_print_one(&j);
        if (o->plot)
            rc = plot(o, &j);
    }
    free(j.r);
    free(j.any);
    free(j.caps);
    kvp_workload_free(&j.w);
    return rc;
}

int cmd_sim(int argc, char **argv)
{
    cli_opts o;
    if (cli_wants_help(argc, argv))
        return fputs(help, stdout), 0;
    int rc = cli_parse(argc, argv, "trace workload capacity-blocks capacity-tokens sweep "
                       "block-size json vllm family concurrent policy arrivals rate seed "
                       "no-async-scheduling mem-fraction-static plot force cpu-tier pcie "
                       "rate-sweep format export reuse unbounded", &o);
    if (rc)
        return rc;
    if (!o.sim_trace == !o.sim_workload)
        return cli_fail(EXIT_USAGE, "sim: give one of --trace FILE or --workload SPEC "
                        "(see kvplan sim --help)");
    if (o.trace_format && !o.sim_trace)
        return cli_fail(EXIT_USAGE, "--format %s: names a --trace file's format",
                        o.trace_format);
    if (o.export_path) {
        uint32_t ebs;
        return (rc = sim_block_size(&o, &ebs)) ? rc : sim_export(&o, ebs);
    }
    if (o.sim_concurrent && (o.reuse_any || o.unbounded))
        return cli_fail(EXIT_USAGE, "sim: %s is for the one-at-a-time replay, not --concurrent",
                        o.reuse_any ? "--reuse any-position" : "--unbounded");
    if (o.sim_concurrent)
        return sim_serve(&o);
    if ((rc = sequential_only(&o)))
        return rc;
    return sequential(&o);
}
