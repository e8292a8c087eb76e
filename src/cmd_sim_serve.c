/* cmd_sim_serve.c - `kvplan sim --concurrent`: the workload replayed through
 * a serving scheduler (vLLM v1's, or SGLang's radix cache with --policy
 * radix) with requests in flight together, priced by the step-time model
 * when a MODEL is given.  A thin layer over kvp_serve_run: it picks the pool
 * and the scheduler's defaults the way `kvplan sim MODEL` does, runs, and
 * reports.  It lives apart from cmd_sim.c, which keeps the one-at-a-time
 * replay, because the two share the options but not the report. */
#include <jansson.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* One run of the command: the scheduler's config, the capacities to replay
 * and what came back. */
typedef struct serve_job {
    kvp_serve_config c;
    kvp_model *m;              /* NULL: tokens only */
    kvp_vllm_result *vr;       /* the model's vLLM pool, when m */
    uint64_t *caps;            /* capacities in blocks */
    double *rates;             /* --rate-sweep: one Poisson rate per run, else NULL */
    size_t n;
    uint64_t radix_pool;       /* --mem-fraction-static's pool in tokens, or 0 */
    int sweep, compare;        /* compare: caching on, and a second run with it off */
    kvp_serve_result *r;       /* n results; with compare, r[1] is caching off */
} serve_job;

static const char *const arrival_names[] = {"all", "trace", "poisson"};

static int parse_policy(const cli_opts *o, kvp_serve_config *c)
{
    const char *p = o->sim_policy ? o->sim_policy : "vllm";
    if (!strcmp(p, "vllm"))
        c->policy = KVP_SERVE_VLLM;
    else if (!strcmp(p, "radix"))
        c->policy = KVP_SERVE_RADIX;
    else
        return cli_fail(EXIT_USAGE, "--policy %s: vllm (vLLM v1's scheduler) or radix "
                        "(SGLang's radix cache)", p);
    if (o->mem_fraction > 0 && c->policy != KVP_SERVE_RADIX)
        return cli_fail(EXIT_USAGE, "--mem-fraction-static is SGLang's: it needs --policy radix");
    return 0;
}

/* --arrivals all|trace|poisson and --rate: a trace arrives at its own times
 * unless told otherwise, a synthetic workload all at once; --rate alone
 * means Poisson. */
static int parse_arrivals(const cli_opts *o, kvp_serve_config *c)
{
    const char *a = o->sim_arrivals;
    if (!a)
        a = o->sim_rate > 0 ? "poisson" : o->sim_trace ? "trace" : "all";
    size_t k = 0;
    while (k < 3 && strcmp(a, arrival_names[k]))
        k++;
    if (k == 3)
        return cli_fail(EXIT_USAGE, "--arrivals %s: all (at once), trace (the trace's "
                        "timestamps) or poisson (with --rate R)", a);
    if (k == KVP_ARRIVE_TRACE && !o->sim_trace)
        return cli_fail(EXIT_USAGE, "--arrivals trace: a synthetic workload has no timestamps "
                        "(give --trace FILE, or --rate R)");
    if ((k == KVP_ARRIVE_POISSON) != (o->sim_rate > 0))
        return cli_fail(EXIT_USAGE, k == KVP_ARRIVE_POISSON
                        ? "--arrivals poisson: give the rate with --rate R (requests per second)"
                        : "--rate: only Poisson arrivals have a rate (drop --arrivals %s)", a);
    c->arrivals = (kvp_serve_arrivals)k;
    c->rate = o->sim_rate;
    c->seed = o->sim_seed;
    return 0;
}

/* --cpu-tier SIZE [--pcie gen4|gen5]: vLLM's native offloading connector,
 * whose blocks are MODEL's pages. */
static int host_tier(const cli_opts *o, serve_job *j)
{
    if (!o->cpu_tier)
        return o->pcie_gen ? cli_fail(EXIT_USAGE, "--pcie: the host link of --cpu-tier SIZE; "
                                      "give the tier") : 0;
    if (j->c.policy != KVP_SERVE_VLLM)
        return cli_fail(EXIT_USAGE, "--cpu-tier: vLLM's offloading connector; --policy radix "
                        "has no host tier (SGLang's HiCache is not modelled)");
    if (!j->m)
        return cli_fail(EXIT_USAGE, "--cpu-tier: needs a MODEL (one block's KV bytes size the "
                        "tier)");
    j->c.cpu_tier_bytes = o->cpu_tier;
    j->c.kv_block_bytes = j->vr->pool_block_bytes;
    j->c.pcie_gen = o->pcie_gen;
    return 0;
}

/* "A..B[/P]" requests per second: P rates from A to B, evenly spaced */
static int rate_sweep(const char *s, serve_job *j)
{
    char buf[64], *end, *dots = strstr(s, "..");
    double a = 0, b = 0;
    unsigned long p = 5;
    int ok = dots && (size_t)(dots - s) < sizeof buf && dots > s;
    if (ok) { /* strtod would read "1." of "1..16" */
        memcpy(buf, s, (size_t)(dots - s));
        buf[dots - s] = 0;
        a = strtod(buf, &end);
        ok = end != buf && !*end;
    }
    if (ok) {
        b = strtod(dots + 2, &end);
        ok = end != dots + 2;
    }
    if (ok && *end == '/') {
        const char *q = end + 1;
        p = strtoul(q, &end, 10);
        ok = end != q && *q >= '0' && *q <= '9';
    }
    if (!ok || *end || !(a > 0) || !(b > a) || b > 1e9 || p < 2 || p > 64)
        return cli_fail(EXIT_USAGE, "--rate-sweep %s: A..B[/P], 0 < A < B requests per "
                        "second, 2 to 64 points (default 5)", s);
    if (!(j->rates = malloc(p * sizeof *j->rates)))
        return cli_fail(EXIT_INPUT, "sim: out of memory");
    for (unsigned long i = 0; i < p; i++)
        j->rates[i] = a + (b - a) * (double)i / (double)(p - 1);
    j->n = p;
    j->sweep = 1;
    j->c.arrivals = KVP_ARRIVE_POISSON;
    return 0;
}

/* The pool, defaults and time model from MODEL under vLLM. */
static int from_model(const cli_opts *o, serve_job *j)
{
    j->vr = malloc(sizeof *j->vr);
    if (!j->vr)
        return cli_fail(EXIT_INPUT, "sim: out of memory");
    int rc = sim_model_pool(o, &j->m, j->vr);
    if (rc)
        return rc;
    const kvp_vllm_result *r = j->vr;
    if (r->tp > 1 || r->pp > 1)
        return cli_fail(EXIT_USAGE, "sim --concurrent: the step-time model prices one GPU; "
                        "-tp and -pp above 1 are not modelled");
    if (r->max_num_batched_tokens > UINT32_MAX)
        return cli_fail(EXIT_INPUT, "sim: max_num_batched_tokens %llu is too large",
                        (unsigned long long)r->max_num_batched_tokens);
    j->c.block_size = r->block_size;
    if (j->c.policy == KVP_SERVE_VLLM) { /* SGLang keeps its own, unless given */
        j->c.max_num_batched_tokens = (uint32_t)r->max_num_batched_tokens;
        j->c.max_num_seqs = r->max_num_seqs;
    }
    j->c.max_model_len = r->max_model_len;
    j->c.model = j->m;
    j->c.gpu = r->gpu;
    j->c.kv_fp8 = o->kv_fp8;
    return 0;
}

/* SGLang's pool from --mem-fraction-static: what is free after the weights,
 * less the share SGLang leaves, in cells of one token's KV. */
static int radix_fraction_pool(const cli_opts *o, serve_job *j)
{
    const kvp_vllm_result *r = j->vr;
    kvp_error e;
    if (!j->m)
        return cli_fail(EXIT_USAGE, "--mem-fraction-static needs a MODEL (its weights and KV "
                        "size set the pool)");
    uint64_t avail = r->gpu_total_bytes > r->weights_bytes ? r->gpu_total_bytes - r->weights_bytes
                                                           : 0;
    if (kvp_serve_radix_pool(r->gpu_total_bytes, avail, o->mem_fraction,
                             r->pool_block_bytes / r->block_size, &j->radix_pool, &e))
        return cli_fail_err(&e);
    return 0;
}

static int one_capacity(serve_job *j, uint64_t blocks)
{
    if (!(j->caps = malloc(sizeof *j->caps)))
        return cli_fail(EXIT_INPUT, "sim: out of memory");
    j->caps[0] = blocks;
    j->n = 1;
    return 0;
}

/* The capacities: a sweep, a given one, SGLang's fraction or MODEL's pool. */
static int capacities(const cli_opts *o, serve_job *j)
{
    uint32_t bs = j->c.block_size;
    int given = !!o->capacity_blocks + !!o->capacity_tokens + !!o->sim_sweep + (o->mem_fraction > 0);
    if (given > 1)
        return cli_fail(EXIT_USAGE, "sim: give one of --capacity-blocks, --capacity-tokens, "
                        "--sweep or --mem-fraction-static");
    if (!given && !j->m)
        return cli_fail(EXIT_USAGE, "sim: give one of --capacity-blocks, --capacity-tokens, "
                        "--sweep or a MODEL (see kvplan sim --help)");
    if (o->sim_sweep && o->rate_sweep)
        return cli_fail(EXIT_USAGE, "sim: one sweep at a time: --sweep (capacity) or "
                        "--rate-sweep (request rate)");
    if (o->sim_sweep)
        return j->sweep = 1, sim_parse_sweep(o->sim_sweep, &j->caps, &j->n);
    if (o->mem_fraction > 0) {
        int rc = radix_fraction_pool(o, j);
        return rc ? rc : one_capacity(j, (j->radix_pool + bs - 1) / bs);
    }
    if (o->capacity_tokens && j->c.policy == KVP_SERVE_RADIX)
        j->radix_pool = o->capacity_tokens; /* SGLang's pool is in tokens: no rounding */
    uint64_t c = o->capacity_blocks ? o->capacity_blocks
                 : o->capacity_tokens ? o->capacity_tokens / bs : j->vr->num_blocks;
    if (c < 2 || c > (1ull << 24))
        return cli_fail(EXIT_INPUT, "sim: a capacity of %llu blocks of %u tokens: the pool "
                        "needs 2 to 2^24 blocks (the null block and one usable)",
                        (unsigned long long)c, bs);
    int rc = one_capacity(j, c);
    return rc || !o->rate_sweep ? rc : rate_sweep(o->rate_sweep, j);
}

static int setup(const cli_opts *o, serve_job *j)
{
    int rc;
    kvp_serve_defaults(&j->c);
    if ((rc = parse_policy(o, &j->c)))
        return rc;
    if (o->rate_sweep && (o->sim_rate > 0 || (o->sim_arrivals &&
                                                strcmp(o->sim_arrivals, "poisson"))))
        return cli_fail(EXIT_USAGE, "--rate-sweep: Poisson arrivals at each rate; drop --rate "
                        "and --arrivals");
    if (!o->rate_sweep && (rc = parse_arrivals(o, &j->c)))
        return rc;
    j->c.seed = o->sim_seed;
    if (o->plot && !o->sim_sweep)
        return cli_fail(EXIT_USAGE, "--plot %s: draws a capacity sweep; give --sweep A..B[/P]",
                        o->plot);
    /* refused before the replay, not after it (kvp_serve_plot checks again) */
    if (o->plot && !o->force && access(o->plot, F_OK) == 0)
        return cli_fail(EXIT_INPUT, "%s: exists; give --force to overwrite it", o->plot);
    if ((rc = sim_block_size(o, &j->c.block_size)))
        return rc;
    j->c.max_num_batched_tokens = o->max_num_batched_tokens > UINT32_MAX
                                      ? UINT32_MAX : (uint32_t)o->max_num_batched_tokens;
    j->c.max_num_seqs = o->max_num_seqs;
    j->c.max_model_len = o->max_model_len;
    if (o->model && (rc = from_model(o, j)))
        return rc;
    if (j->c.policy == KVP_SERVE_VLLM && !j->c.max_num_batched_tokens)
        j->c.max_num_batched_tokens = KVP_VLLM_DEFAULT_BATCHED_TOKENS;
    if (j->c.policy == KVP_SERVE_VLLM && !j->c.max_num_seqs)
        j->c.max_num_seqs = KVP_VLLM_DEFAULT_MAX_SEQS;
    j->c.prefix_caching = o->prefix_caching != 0;
    j->c.async_scheduling = !o->no_async;
    if ((rc = host_tier(o, j)))
        return rc;
    return capacities(o, j);
}

static int run(const kvp_workload *w, serve_job *j)
{
    kvp_error e;
    /* the on/off comparison is in seconds: without a time model it says nothing
     * the hit rate does not */
    j->compare = !j->sweep && j->c.prefix_caching && j->m;
    size_t n = j->compare ? 2 : j->n;
    if (!(j->r = calloc(n, sizeof *j->r)))
        return cli_fail(EXIT_INPUT, "sim: out of memory");
    for (size_t i = 0; i < n; i++) {
        kvp_serve_config c = j->c;
        c.num_blocks = j->caps[j->sweep && !j->rates ? i : 0];
        if (j->rates)
            c.rate = j->rates[i];
        c.pool_tokens = j->radix_pool;
        c.prefix_caching = j->compare ? i == 0 : j->c.prefix_caching;
        if (kvp_serve_run(w, &c, &j->r[i], &e))
            return cli_fail_err(&e);
    }
    return 0;
}

/* ---- JSON ---- */

static json_t *dist_json(const kvp_serve_dist *d, int timed)
{
    if (!timed)
        return json_null();
    return json_pack("{sf sf sf sf}", "mean", d->mean, "p50", d->p50, "p90", d->p90, "p99",
                     d->p99);
}

/* the host tier's figures, or null without one */
static json_t *cpu_tier_json(const kvp_serve_result *r)
{
    if (!r->cpu_blocks)
        return json_null();
    json_t *o = json_pack("{sI sf sI sf sI sI sI sI}",
        "capacity_blocks", (json_int_t)r->cpu_blocks, "pcie_gbs_each_way", r->pcie_gbs,
        "hit_tokens", (json_int_t)r->cpu_hit_tokens, "hit_rate", r->cpu_hit_rate,
        "loads", (json_int_t)r->cpu_loads, "stores", (json_int_t)r->cpu_stores,
        "evictions", (json_int_t)r->cpu_evictions,
        "skipped_stores", (json_int_t)r->cpu_skipped_stores);
    json_t *t = json_pack("{sI sI so so so}",
        "bytes_to_cpu", (json_int_t)r->bytes_to_cpu,
        "bytes_from_cpu", (json_int_t)r->bytes_from_cpu,
        "load_wait_seconds", r->timed ? json_real(r->load_wait_seconds) : json_null(),
        "h2d_busy_seconds", r->timed ? json_real(r->h2d_busy_seconds) : json_null(),
        "d2h_busy_seconds", r->timed ? json_real(r->d2h_busy_seconds) : json_null());
    json_object_update(o, t);
    json_decref(t);
    return o;
}

/* by pass, or null for a one-pass workload */
static json_t *passes_json(const kvp_serve_result *r)
{
    if (!r->n_passes)
        return json_null();
    json_t *a = json_array();
    for (uint32_t k = 0; k < r->n_passes; k++) {
        const struct kvp_serve_pass *p = &r->passes[k];
        json_array_append_new(a, json_pack("{sI sI sI sf so so}",
            "requests", (json_int_t)p->requests, "prompt_tokens", (json_int_t)p->prompt_tokens,
            "hit_tokens", (json_int_t)p->hit_tokens, "hit_rate", p->hit_rate,
            "end_seconds", r->timed ? json_real(p->end_seconds) : json_null(),
            "seconds", r->timed ? json_real(p->seconds) : json_null()));
    }
    return a;
}

static json_t *result_json(const kvp_serve_result *r)
{
    json_t *o = json_pack("{sI sI sI sI so so so so}",
        "requests", (json_int_t)r->requests, "rejected", (json_int_t)r->rejected,
        "prompt_tokens", (json_int_t)r->prompt_tokens,
        "output_tokens", (json_int_t)r->output_tokens,
        "wall_seconds", r->timed ? json_real(r->wall_seconds) : json_null(),
        "ttft_seconds", dist_json(&r->ttft, r->timed),
        "tpot_seconds", dist_json(&r->tpot, r->timed),
        "throughput_tokens_per_second", r->timed ? json_pack("{sf sf}", "prompt", r->prompt_tps,
                                                             "output", r->output_tps)
                                                 : json_null());
    json_t *t = json_pack("{sI sI sf sI sI sI sI}",
        "prefill_tokens_computed", (json_int_t)r->prefill_tokens_computed,
        "hit_tokens", (json_int_t)r->hit_tokens, "hit_rate", r->hit_rate,
        "preemptions", (json_int_t)r->preemptions, "peak_blocks", (json_int_t)r->peak_blocks,
        "steps", (json_int_t)r->steps, "max_running", (json_int_t)r->max_running);
    json_object_update(o, t);
    json_decref(t);
    json_object_set_new(o, "hits", json_pack("{sI sI}", "gpu", (json_int_t)r->hit_tokens, "cpu",
                                             (json_int_t)r->cpu_hit_tokens));
    json_object_set_new(o, "cpu_tier", cpu_tier_json(r));
    json_object_set_new(o, "passes", passes_json(r));
    return o;
}

static json_t *time_model_json(const kvp_serve_result *r)
{
    if (!r->timed)
        return json_pack("{ss}", "kind", "none: no MODEL, so times are not modelled (tokens only)");
    return json_pack("{ss ss ss ss}", "kind", "roofline", "gpu", r->gpu, "engine", r->engine,
                     "note", "a step-time model (FLOPs and bytes per step against the GPU's "
                     "datasheet rates, with calibrated efficiencies and overheads), not a "
                     "measurement");
}

static json_t *capacity_json(const serve_job *j, size_t i)
{
    size_t k = j->rates ? 0 : i;
    uint64_t tokens = j->radix_pool ? j->radix_pool : j->caps[k] * j->c.block_size;
    json_t *o = json_pack("{sI sI}", "capacity_blocks", (json_int_t)j->caps[k],
                          "capacity_tokens", (json_int_t)tokens);
    if (j->rates)
        json_object_set_new(o, "rate", json_real(j->rates[i]));
    return o;
}

static json_t *config_json(const serve_job *j)
{
    const kvp_serve_config *c = &j->c;
    return json_pack("{so so sI sb sb ss so sI}",
        "max_num_batched_tokens", c->max_num_batched_tokens
            ? json_integer(c->max_num_batched_tokens) : json_null(),
        "max_num_seqs", c->max_num_seqs ? json_integer(c->max_num_seqs) : json_null(),
        "max_model_len", (json_int_t)c->max_model_len, "prefix_caching", c->prefix_caching,
        "async_scheduling", c->async_scheduling, "arrivals", arrival_names[c->arrivals],
        "rate", c->arrivals == KVP_ARRIVE_POISSON && !j->rates ? json_real(c->rate) : json_null(),
        "seed", (json_int_t)c->seed);
}

/* off / on wall time: how many times faster prefix caching makes the run */
static double speedup(const serve_job *j)
{
    return j->r[0].wall_seconds > 0 ? j->r[1].wall_seconds / j->r[0].wall_seconds : 0;
}

static void add_compare(json_t *doc, const serve_job *j)
{
    json_object_set_new(doc, "prefix_caching_off", result_json(&j->r[1]));
    json_object_set_new(doc, "prefix_caching_speedup",
                        j->r[0].timed && speedup(j) > 0 ? json_real(speedup(j)) : json_null());
}

static void print_json(const kvp_workload *w, const serve_job *j)
{
    json_t *doc = json_pack("{si ss ss ss ss si so so}", "schema", KVPLAN_JSON_SCHEMA,
        "command", "sim", "mode", "concurrent",
        "policy", j->c.policy == KVP_SERVE_RADIX ? "radix" : "vllm", "workload", w->name,
        "block_size", (int)j->c.block_size, "scheduler", config_json(j),
        "time_model", time_model_json(&j->r[0]));
    if (j->sweep)
        json_object_set_new(doc, "sweep", json_string(j->rates ? "rate" : "capacity"));
    if (j->sweep) {
        json_t *pts = json_array();
        for (size_t i = 0; i < j->n; i++) {
            json_t *p = capacity_json(j, i), *r = result_json(&j->r[i]);
            json_object_update(p, r);
            json_decref(r);
            json_array_append_new(pts, p);
        }
        json_object_set_new(doc, "points", pts);
    } else {
        json_t *p = capacity_json(j, 0), *r = result_json(&j->r[0]);
        json_object_update(doc, p);
        json_object_update(doc, r);
        json_decref(p);
        json_decref(r);
        if (j->compare)
            add_compare(doc, j);
    }
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s)
        puts(s);
    free(s);
    json_decref(doc);
}

/* ---- text ---- */

static void print_header(const kvp_workload *w, const serve_job *j)
{
    const kvp_serve_config *c = &j->c;
    char a[32], b[32];
    printf("sim --concurrent %s · %s · block %u\n", w->name,
           c->policy == KVP_SERVE_RADIX ? "SGLang's radix cache and scheduler"
                                        : "vLLM v1's scheduler", c->block_size);
    if (c->max_num_batched_tokens)
        printf("max_num_batched_tokens %s · ", fmt_int(c->max_num_batched_tokens, a, sizeof a));
    if (c->max_num_seqs)
        printf("max_num_seqs %s · ", fmt_int(c->max_num_seqs, b, sizeof b));
    if (c->max_model_len)
        printf("max_model_len %s · ", fmt_int(c->max_model_len, a, sizeof a));
    if (c->policy == KVP_SERVE_VLLM)
        printf("async scheduling %s · ", c->async_scheduling ? "on" : "off");
    printf("prefix caching %s · arrivals %s", c->prefix_caching ? "on" : "off",
           arrival_names[c->arrivals]);
    if (j->rates)
        printf(" (each rate below, seed %llu)", (unsigned long long)c->seed);
    else if (c->arrivals == KVP_ARRIVE_POISSON)
        printf(" (%g/s, seed %llu)", c->rate, (unsigned long long)c->seed);
    const kvp_serve_result *r = &j->r[0];
    if (r->timed)
        printf("\ntimes: a roofline step-time model for %s (engine %s), not a measurement\n\n",
               r->gpu, r->engine);
    else
        printf("\ntimes: not modelled (no MODEL: tokens only)\n\n");
}

/* one row of the report, a column per result */
typedef struct row {
    const char *label;
    int kind; /* 0 count, 1 seconds, 2 rate, 3 tokens/s */
    size_t off;
} row;

#define ROW(l, k, f) {l, k, offsetof(kvp_serve_result, f)}

static const row rows[] = {
    ROW("requests", 0, requests), ROW("rejected (never schedulable)", 0, rejected),
    ROW("wall time (s)", 1, wall_seconds),
    ROW("TTFT mean (s)", 1, ttft.mean), ROW("TTFT p50 (s)", 1, ttft.p50),
    ROW("TTFT p90 (s)", 1, ttft.p90), ROW("TTFT p99 (s)", 1, ttft.p99),
    ROW("TPOT mean (s)", 1, tpot.mean), ROW("TPOT p50 (s)", 1, tpot.p50),
    ROW("TPOT p90 (s)", 1, tpot.p90), ROW("TPOT p99 (s)", 1, tpot.p99),
    ROW("prompt tokens/s", 3, prompt_tps), ROW("output tokens/s", 3, output_tps),
    ROW("prompt tokens", 0, prompt_tokens), ROW("prefill tokens computed", 0,
                                                prefill_tokens_computed),
    ROW("hit tokens", 0, hit_tokens), ROW("hit rate", 2, hit_rate),
    ROW("preemptions", 0, preemptions), ROW("peak blocks in use", 0, peak_blocks),
    ROW("steps", 0, steps),
};

/* shown when a host tier is configured */
static const row cpu_rows[] = {
    ROW("host tier (blocks)", 0, cpu_blocks),
    ROW("host hit tokens", 0, cpu_hit_tokens), ROW("host hit rate", 2, cpu_hit_rate),
    ROW("host loads", 0, cpu_loads), ROW("host stores", 0, cpu_stores),
    ROW("host evictions", 0, cpu_evictions), ROW("bytes to host", 0, bytes_to_cpu),
    ROW("bytes from host", 0, bytes_from_cpu), ROW("load wait, summed (s)", 1,
                                                   load_wait_seconds),
    ROW("host-to-GPU busy (s)", 1, h2d_busy_seconds),
    ROW("GPU-to-host busy (s)", 1, d2h_busy_seconds),
};

static void print_cell(const row *rw, const kvp_serve_result *r)
{
    const char *p = (const char *)r + rw->off;
    char a[32];
    double v;
    if (rw->kind == 0) {
        uint64_t u;
        memcpy(&u, p, sizeof u);
        printf(" %18s", fmt_int(u, a, sizeof a));
        return;
    }
    memcpy(&v, p, sizeof v);
    if (rw->kind != 2 && !r->timed)
        printf(" %18s", "-");
    else
        printf(rw->kind == 1 ? " %18.4f" : rw->kind == 2 ? " %18.4f" : " %18.1f", v);
}

static void print_rows(const row *rs, size_t n, const serve_job *j)
{
    for (size_t k = 0; k < n; k++) {
        printf("%-30s", rs[k].label);
        for (size_t i = 0; i < (j->compare ? 2u : 1u); i++)
            print_cell(&rs[k], &j->r[i]);
        putchar('\n');
    }
}

/* Requests of all passes are in flight together, so a pass's time runs
 * from the previous pass's last finish to its own. */
static void print_passes(const serve_job *j)
{
    const kvp_serve_result *r = &j->r[0];
    size_t cols = j->compare ? 2 : 1;
    if (!r->n_passes)
        return;
    printf("\nby pass (a pass's time: from the previous pass's last finish to its own)\n");
    printf("%6s %10s %10s", "pass", "requests", "hit rate");
    for (size_t i = 0; i < cols; i++)
        printf(" %16s", !r->timed ? "" : cols == 1 ? "seconds" : i ? "seconds (off)" : "seconds (on)");
    putchar('\n');
    for (uint32_t k = 0; k < r->n_passes; k++) {
        printf("%6u %10llu %10.4f", k + 1, (unsigned long long)r->passes[k].requests,
               r->passes[k].hit_rate);
        for (size_t i = 0; i < cols && r->timed; i++)
            printf(" %16.4f", j->r[i].passes[k].seconds);
        putchar('\n');
    }
}

static void print_table(const kvp_workload *w, const serve_job *j)
{
    char a[32], b[32], c[32];
    print_header(w, j);
    uint64_t tokens = j->radix_pool ? j->radix_pool : j->caps[0] * j->c.block_size;
    printf("pool: %s blocks (%s tokens)\n\n", fmt_int(j->caps[0], a, sizeof a),
           fmt_int(tokens, b, sizeof b));
    printf("%-30s %18s%s\n", "", j->c.prefix_caching ? "prefix caching on" : "prefix caching off",
           j->compare ? "  prefix caching off" : "");
    print_rows(rows, sizeof rows / sizeof rows[0], j);
    if (j->c.cpu_tier_bytes) {
        printf("\nhost tier: %s bytes, %s blocks of %s bytes, PCIe %.0f GB/s each way "
               "(sustained; a model)\n", fmt_int(j->c.cpu_tier_bytes, a, sizeof a),
               fmt_int(j->r[0].cpu_blocks, b, sizeof b), fmt_int(j->c.kv_block_bytes, c,
                                                                 sizeof c), j->r[0].pcie_gbs);
        print_rows(cpu_rows, sizeof cpu_rows / sizeof cpu_rows[0], j);
        if (j->r[0].timed && j->r[0].d2h_busy_seconds > j->r[0].wall_seconds)
            printf("note: the stores keep the GPU-to-host link busier than the run is long; "
                   "vLLM would hold blocks until they are copied, which this model does not\n");
    }
    print_passes(j);
    if (j->compare && j->r[0].timed)
        printf("\nprefix caching: wall time %.4f s on, %.4f s off: %.2fx as fast (a model)\n",
               j->r[0].wall_seconds, j->r[1].wall_seconds, speedup(j));
}

static void print_sweep(const kvp_workload *w, const serve_job *j)
{
    char a[32], b[32], c[32];
    print_header(w, j);
    if (j->rates)
        printf("pool: %s blocks (%s tokens)\n\n%12s %14s", fmt_int(j->caps[0], a, sizeof a),
               fmt_int(j->caps[0] * j->c.block_size, b, sizeof b), "rate /s", "output tok/s");
    else
        printf("%12s %14s", "blocks", "tokens");
    printf(" %9s %12s %10s %10s %10s %11s %12s\n", "hit rate", "wall s", "TTFT p50", "TTFT p99",
           "TPOT p50", "preemptions", "peak blocks");
    for (size_t i = 0; i < j->n; i++) {
        const kvp_serve_result *r = &j->r[i];
        if (j->rates && r->timed)
            printf("%12.3f %14.1f", j->rates[i], r->output_tps);
        else if (j->rates)
            printf("%12.3f %14s", j->rates[i], "-");
        else
            printf("%12s %14s", fmt_int(j->caps[i], a, sizeof a),
                   fmt_int(j->caps[i] * j->c.block_size, b, sizeof b));
        printf(" %9.4f", r->hit_rate);
        if (r->timed)
            printf(" %12.4f %10.4f %10.4f %10.4f", r->wall_seconds, r->ttft.p50, r->ttft.p99,
                   r->tpot.p50);
        else
            printf(" %12s %10s %10s %10s", "-", "-", "-", "-");
        printf(" %11llu %12s\n", (unsigned long long)r->preemptions,
               fmt_int(r->peak_blocks, c, sizeof c));
    }
}

/* --plot F.svg: the sweep's hit rate and wall time against capacity */
static int plot(const cli_opts *o, const kvp_workload *w, const serve_job *j)
{
    kvp_error e;
    char title[256];
    uint64_t *tok = sim_caps_tokens(j->caps, j->n, j->c.block_size);
    if (!tok)
        return cli_fail(EXIT_INPUT, "sim: out of memory");
    snprintf(title, sizeof title, "%s · %s · hit rate and wall time vs capacity", w->name,
             j->c.policy == KVP_SERVE_RADIX ? "SGLang radix" : "vLLM v1");
    int rc = kvp_serve_plot(o->plot, o->force, title, tok, j->r, j->n, &e) ? cli_fail_err(&e) : 0;
    free(tok);
    if (!rc && !o->json)
        printf("\n%s: hit rate and wall time against capacity\n", o->plot);
    return rc;
}

int sim_serve(const cli_opts *o)
{
    serve_job j;
    kvp_workload w;
    memset(&j, 0, sizeof j);
    int rc = setup(o, &j);
    if (!rc && !(rc = sim_load_workload(o, j.c.block_size, &w))) {
        if (!(rc = run(&w, &j)) && o->json)
            print_json(&w, &j);
        else if (!rc)
            j.sweep ? print_sweep(&w, &j) : print_table(&w, &j);
        if (!rc && o->plot)
            rc = plot(o, &w, &j);
        kvp_workload_free(&w);
    }
    free(j.r);
    free(j.caps);
    free(j.rates);
    free(j.vr);
    kvp_model_free(j.m);
    return rc;
}
