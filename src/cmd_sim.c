/* cmd_sim.c - `kvplan sim`: replays a workload (a Mooncake trace or a
 * synthetic generator) through vLLM's prefix cache, one request at a time,
 * and reports the token hit rate; --sweep finds the capacity cliff.  The
 * concurrent replay (--concurrent) is in cmd_sim_serve.c. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan sim (--trace FILE | --workload SPEC)\n"
    "                  (--capacity-blocks N | --capacity-tokens T | --sweep A..B[/POINTS]\n"
    "                   | MODEL [vLLM options, as kvplan mem --runtime vllm])\n"
    "                  [--block-size B] [--no-enable-prefix-caching] [--json]\n"
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
    "order, cached ones to the tail (LRU), uncached ones to the head.\n"
    "\n"
    "  --trace FILE          Mooncake JSONL (timestamp, input_length, output_length,\n"
    "                        hash_ids per 512-token block); block size 512; output\n"
    "                        blocks are not cached (the trace has no ids for them)\n"
    "  --workload SPEC       shared-prefix:N,P,U[,O]  N requests: P shared + U unique\n"
    "                                                 prompt tokens, O output\n"
    "                        cyclic:D,T,R[,S[,O]]     D documents of T tokens, R passes\n"
    "                                                 in order, S unique suffix tokens\n"
    "                        grouped:G,K,P,U[,O[,cyclic|grouped]]  G groups of K\n"
    "                                                 prompts, P shared + U unique each\n"
    "  --capacity-blocks N   vLLM's num_gpu_blocks, the null block included (N-1 usable)\n"
    "  --capacity-tokens T   the capacity vLLM logs (\"GPU KV cache size: T tokens\"):\n"
    "                        T / B blocks, the null block included\n"
    "  --sweep A..B[/P]      P capacities (default 11) from A to B blocks; names the\n"
    "                        cliff, where the hit rate rises most\n"
    "  MODEL                 the pool vLLM builds for MODEL (num_gpu_blocks and block\n"
    "                        size, as kvplan mem MODEL --runtime vllm predicts them with\n"
    "                        --gpu, --kv-cache-memory, -tp ...); full-attention and MLA\n"
    "                        models only\n"
    "  --block-size B        tokens per block (default 16; 512 for --trace)\n"
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
    if (w->note[0] && !o->json)
        fprintf(stderr, "kvplan: %s: %s\n", w->name, w->note);
    return 0;
}

static json_t *result_json(const kvp_sim_result *r, uint32_t bs)
{
    return json_pack("{sI sI sI sI sI sI sf sI sI sI sI sI}",
                     "capacity_blocks", (json_int_t)r->num_blocks,
                     "usable_blocks", (json_int_t)r->usable_blocks,
                     "capacity_tokens", (json_int_t)(r->num_blocks * bs),
                     "requests", (json_int_t)r->requests,
                     "prompt_tokens", (json_int_t)r->prompt_tokens,
                     "hit_tokens", (json_int_t)r->hit_tokens,
                     "hit_rate", r->hit_rate,
                     "prefill_tokens_computed", (json_int_t)r->computed_tokens,
                     "prefill_tokens_saved", (json_int_t)r->hit_tokens,
                     "evictions", (json_int_t)r->evictions,
                     "peak_blocks", (json_int_t)r->peak_blocks,
                     "oversized_requests", (json_int_t)r->oversized);
}

static void print_json(const kvp_workload *w, uint32_t bs, const kvp_sim_result *r, size_t n,
                       int sweep, int caching)
{
    json_t *doc = json_pack("{si ss ss si sb}", "schema", KVPLAN_JSON_SCHEMA, "command", "sim",
                            "workload", w->name, "block_size", (int)bs, "prefix_caching",
                            caching);
    if (!sweep) {
        json_t *one = result_json(r, bs);
        json_object_update(doc, one);
        json_decref(one);
    } else {
        json_t *pts = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(pts, result_json(&r[i], bs));
        json_object_set_new(doc, "points", pts);
        size_t c = kvp_sim_cliff(r, n);
        json_object_set_new(doc, "cliff", c ? json_pack("{sI sI sf sf}",
            "from_blocks", (json_int_t)r[c - 1].num_blocks, "to_blocks",
            (json_int_t)r[c].num_blocks, "from_hit_rate", r[c - 1].hit_rate, "to_hit_rate",
            r[c].hit_rate) : json_null());
    }
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s)
        puts(s);
    free(s);
    json_decref(doc);
}

static void print_one(const kvp_workload *w, uint32_t bs, const kvp_sim_result *r, int caching)
{
    char a[32], b[32], c[32];
    printf("sim %s · block %u · %s blocks (%s usable, %s tokens)%s\n\n", w->name, bs,
           fmt_int(r->num_blocks, a, sizeof a), fmt_int(r->usable_blocks, b, sizeof b),
           fmt_int(r->usable_blocks * bs, c, sizeof c), caching ? "" : " · prefix caching off");
    printf("requests                %15s\n", fmt_int(r->requests, a, sizeof a));
    printf("prompt tokens           %15s\n", fmt_int(r->prompt_tokens, a, sizeof a));
    printf("hit tokens              %15s   hit rate %.4f (vLLM's: hits / prompt tokens)\n",
           fmt_int(r->hit_tokens, a, sizeof a), r->hit_rate);
    printf("prefill tokens computed %15s\n", fmt_int(r->computed_tokens, a, sizeof a));
    printf("prefill tokens saved    %15s\n", fmt_int(r->hit_tokens, a, sizeof a));
    printf("evictions               %15s\n", fmt_int(r->evictions, a, sizeof a));
    printf("peak blocks in use      %15s\n", fmt_int(r->peak_blocks, a, sizeof a));
    printf("oversized requests      %15s%s\n", fmt_int(r->oversized, a, sizeof a),
           r->oversized ? "   (larger than the pool: counted as misses)" : "");
}

static void print_sweep(const kvp_workload *w, uint32_t bs, const kvp_sim_result *r, size_t n)
{
    char a[32], b[32], c[32], d[32];
    printf("sim %s · block %u · hit rate vs capacity\n\n", w->name, bs);
    printf("%14s %16s %9s %16s %14s %9s\n", "blocks", "tokens", "hit rate", "hit tokens",
           "evictions", "oversized");
    for (size_t i = 0; i < n; i++)
        printf("%14s %16s %9.4f %16s %14s %9llu\n", fmt_int(r[i].num_blocks, a, sizeof a),
               fmt_int(r[i].num_blocks * bs, b, sizeof b), r[i].hit_rate,
               fmt_int(r[i].hit_tokens, c, sizeof c), fmt_int(r[i].evictions, d, sizeof d),
               (unsigned long long)r[i].oversized);
    size_t k = kvp_sim_cliff(r, n);
    if (k)
        printf("\ncliff: the hit rate rises most between %s and %s blocks (%.4f -> %.4f)\n",
               fmt_int(r[k - 1].num_blocks, a, sizeof a), fmt_int(r[k].num_blocks, b, sizeof b),
               r[k - 1].hit_rate, r[k].hit_rate);
    else
        printf("\ncliff: none (the hit rate does not rise over this range)\n");
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

static int model_pool(const cli_opts *o, uint64_t *blocks, uint32_t *bs)
{
    kvp_vllm_result *r = malloc(sizeof *r);
    if (!r)
        return cli_fail(EXIT_INPUT, "sim: out of memory");
    int rc = sim_model_pool(o, NULL, r);
    if (!rc)
        *blocks = r->num_blocks, *bs = r->block_size;
    free(r);
    return rc;
}

/* The capacities to run: the sweep's, or the one given in blocks or tokens,
 * or the pool of a model under vLLM. */
static int capacities(const cli_opts *o, uint32_t *bs, uint64_t **caps, size_t *n)
{
    int given = !!o->capacity_blocks + !!o->capacity_tokens + !!o->sim_sweep + !!o->model;
    uint64_t c = 0;
    if (given != 1)
        return cli_fail(EXIT_USAGE, "sim: give one of --capacity-blocks, --capacity-tokens, "
                        "--sweep or a MODEL (see kvplan sim --help)");
    if (o->sim_sweep)
        return sim_parse_sweep(o->sim_sweep, caps, n);
    if (o->model) {
        int rc = model_pool(o, &c, bs);
        if (rc)
            return rc;
    } else {
        c = o->capacity_blocks ? o->capacity_blocks : o->capacity_tokens / *bs;
    }
    if (c < 2 || c > (1ull << 24))
        return cli_fail(EXIT_INPUT, "sim: a capacity of %llu blocks of %u tokens: the pool "
                        "needs 2 to 2^24 blocks (the null block and one usable)",
                        (unsigned long long)c, *bs);
    *caps = malloc(sizeof **caps);
    if (!*caps)
        return cli_fail(EXIT_INPUT, "sim: out of memory");
    **caps = c;
    *n = 1;
    return 0;
}

/* The replay of one request at a time has no schedule, no clock and no plot. */
static int sequential_only(const cli_opts *o)
{
    const char *opt = o->sim_policy ? "--policy" : o->sim_arrivals ? "--arrivals"
                      : o->sim_rate > 0 ? "--rate" : o->no_async ? "--no-async-scheduling"
                      : o->mem_fraction > 0 ? "--mem-fraction-static" : o->plot ? "--plot"
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
    if (o.export_path) {
        uint32_t ebs;
        return (rc = sim_block_size(&o, &ebs)) ? rc : sim_export(&o, ebs);
    }
    if (o.sim_concurrent)
        return sim_serve(&o);
    if ((rc = sequential_only(&o)))
        return rc;
    uint32_t bs;
    kvp_workload w;
    uint64_t *caps = NULL;
    size_t n = 0;
    if ((rc = sim_block_size(&o, &bs)))
        return rc;
    if ((rc = capacities(&o, &bs, &caps, &n)) || (rc = sim_load_workload(&o, bs, &w))) {
        free(caps);
        return rc;
    }
    kvp_sim_result *r = calloc(n, sizeof *r);
    kvp_sim_config c;
    kvp_error e;
    kvp_sim_defaults(&c);
    c.block_size = bs;
    c.no_prefix_caching = o.prefix_caching == 0;
    if (!r)
        rc = cli_fail(EXIT_INPUT, "sim: out of memory");
    else if (kvp_sim_sweep(&w, &c, caps, n, r, &e, n > 1 && isatty(2) ? progress : NULL, NULL))
        rc = cli_fail_err(&e);
    else if (o.json)
        print_json(&w, bs, r, n, o.sim_sweep != NULL, !c.no_prefix_caching);
    else if (o.sim_sweep)
        print_sweep(&w, bs, r, n);
    else
        print_one(&w, bs, r, !c.no_prefix_caching);
    free(r);
    free(caps);
    kvp_workload_free(&w);
    return rc;
}
