/* serve_api.c - the serving simulator's public entry (kvp_serve_run in
 * include/kvplan.h).  The schedulers and the step-time model stay internal
 * (the headers in lib/serve/); this file turns one public config into their configs,
 * draws the arrivals, builds the time model when a model is given, runs the
 * chosen scheduler and copies the report out, so that the CLI, like any
 * other program, needs nothing beyond kvplan.h. */
#include <stdlib.h>
#include <string.h>

#include "sched_radix.h"
#include "sched_vllm.h"
#include "steptime.h"

/* the public arrival kinds are the internal ones, passed through as they are */
_Static_assert((int)KVP_ARRIVE_ALL == SERVE_ARRIVE_ALL &&
                   (int)KVP_ARRIVE_TRACE == SERVE_ARRIVE_TRACE &&
                   (int)KVP_ARRIVE_POISSON == SERVE_ARRIVE_POISSON,
               "kvp_serve_arrivals and serve.h's SERVE_ARRIVE_* must agree");

void kvp_serve_defaults(kvp_serve_config *c)
{
    memset(c, 0, sizeof *c);
    c->block_size = 16;
    c->prefix_caching = 1;
    c->async_scheduling = 1;
}

int kvp_serve_radix_pool(uint64_t gpu_bytes, uint64_t available_bytes, double fraction,
                         uint64_t cell_bytes, uint64_t *tokens, kvp_error *err)
{
    return serve_radix_pool_tokens(gpu_bytes, available_bytes, fraction, cell_bytes, tokens,
                                   err);
}

static void to_internal(const kvp_serve_config *c, serve_config *s)
{
    memset(s, 0, sizeof *s);
    s->num_blocks = c->num_blocks;
    s->block_size = c->block_size;
    s->pool_tokens = c->pool_tokens;
    if (!s->pool_tokens && c->num_blocks <= UINT64_MAX / (c->block_size ? c->block_size : 1))
        s->pool_tokens = c->num_blocks * c->block_size;
    s->max_num_batched_tokens = c->max_num_batched_tokens;
    s->max_num_seqs = c->max_num_seqs;
    s->max_model_len = c->max_model_len;
    s->prefix_caching = c->prefix_caching;
    s->async_scheduling = c->async_scheduling;
    s->radix_lpm = c->radix_lpm;
    s->cpu_tier_bytes = c->cpu_tier_bytes;
    s->kv_block_bytes = c->kv_block_bytes;
}

/* The host link's sustained rate each way (serving-sim-rules.md 3.5 rule 6:
 * about 80% of PCIe x16's raw rate, measured 25 GB/s on gen4 hosts and
 * 50 GB/s on an H100's gen5) and BLIS's 1 us per transfer. */
static int host_link(const kvp_serve_config *c, serve_config *s, double *gbs, kvp_error *err)
{
    int gen = c->pcie_gen;
    if (!gen) {
        const kvp_gpu *g = kvp_gpu_find(c->gpu ? c->gpu : "A100-80GB");
        gen = g && g->host_link_gbs > 40 ? 5 : 4;
    }
    if (gen != 4 && gen != 5)
        return kvp_fail(err, KVP_EUSAGE, "--pcie gen%d: gen4 or gen5", gen);
    *gbs = gen == 5 ? 50 : 25;
    s->h2d_bytes_per_s = s->d2h_bytes_per_s = *gbs * 1e9;
    s->transfer_latency_s = 1e-6;
    return 0;
}

/* The step-time model for c->model on c->gpu; *t stays unused without a model. */
static int time_model(const kvp_serve_config *c, serve_time *t, kvp_error *err)
{
    const char *gname = c->gpu ? c->gpu : "A100-80GB";
    const kvp_gpu *g = kvp_gpu_find(gname);
    int eng = c->engine ? serve_engine_parse(c->engine) : SERVE_ENGINE_VLLM_V1;
    if (!g)
        return kvp_fail(err, KVP_EUSAGE, "--gpu %s: not in kvplan's GPU table (%s)", gname,
                        kvp_gpu_list());
    if (eng < 0)
        return kvp_fail(err, KVP_EUSAGE, "engine %s: one of vllm-v1, vllm-0.5, "
                        "vllm-0.6-multistep, gpu-only", c->engine);
    serve_time_opts o = {.kv_fp8 = c->kv_fp8, .engine = (serve_engine)eng};
    return serve_time_init(t, c->model, g, &o, err);
}

static void copy_dist(const serve_dist *d, double shift, kvp_serve_dist *o)
{
    o->mean = d->mean + shift;
    o->p50 = d->p50 + shift;
    o->p90 = d->p90 + shift;
    o->p99 = d->p99 + shift;
}

/* api_s: the per-request cost outside the steps, which every TTFT carries
 * once (steptime.h); a constant shift moves the mean and each percentile
 * alike. */
static void copy_result(const serve_result *r, double api_s, kvp_serve_result *o)
{
    o->wall_seconds = r->wall_seconds;
    copy_dist(&r->ttft, r->requests > 0 ? api_s : 0, &o->ttft);
    copy_dist(&r->tpot, 0, &o->tpot);
    o->prompt_tps = r->prompt_tps;
    o->output_tps = r->output_tps;
    o->requests = r->requests;
    o->prompt_tokens = r->prompt_tokens;
    o->output_tokens = r->output_tokens;
    o->prefill_tokens_computed = r->prefill_tokens_computed;
    o->hit_tokens = r->hit_tokens;
    o->hit_rate = r->hit_rate;
    o->preemptions = r->preemptions;
    o->peak_blocks = r->peak_blocks;
    o->steps = r->steps;
    o->cpu_blocks = r->cpu_blocks;
    o->cpu_hit_tokens = r->cpu_hit_tokens;
    o->cpu_hit_rate = r->cpu_hit_rate;
    o->cpu_loads = r->cpu_loads;
    o->cpu_stores = r->cpu_stores;
    o->cpu_evictions = r->cpu_evictions;
    o->cpu_skipped_stores = r->cpu_skipped_stores;
    o->bytes_to_cpu = r->bytes_to_cpu;
    o->bytes_from_cpu = r->bytes_from_cpu;
    o->load_wait_seconds = r->load_wait_seconds;
    o->h2d_busy_seconds = r->h2d_busy_seconds;
    o->d2h_busy_seconds = r->d2h_busy_seconds;
}

static int run_policy(const kvp_workload *w, const double *at, const kvp_serve_config *c,
                      serve_done *done, serve_cost_fn cost, void *arg, serve_result *r,
                      kvp_serve_result *out, kvp_error *err)
{
    serve_config s;
    to_internal(c, &s);
    s.per_request = done;
    if (c->cpu_tier_bytes && host_link(c, &s, &out->pcie_gbs, err))
        return -1;
    if (c->policy == KVP_SERVE_RADIX) {
        if (c->cpu_tier_bytes)
            return kvp_fail(err, KVP_EUSAGE, "sim: the host tier is vLLM's offloading "
                            "connector; --policy radix has none (SGLang's HiCache is not "
                            "modelled)");
        if (serve_radix_run(w, at, &s, cost, arg, r, err))
            return -1;
        out->rejected = w->n_req - r->requests; /* the radix replay skips them */
        return 0;
    }
    serve_vllm_extra x;
    if (serve_vllm_run_x(w, at, &s, cost, arg, r, &x, err))
        return -1;
    out->rejected = x.rejected;
    out->max_running = x.max_running;
    return 0;
}

/* passes in w, when 2 to KVP_SERVE_MAX_PASSES; else 0 */
static uint32_t count_passes(const kvp_workload *w)
{
    uint32_t most = 0;
    for (size_t i = 0; i < w->n_req; i++)
        if (w->req[i].pass > most)
            most = w->req[i].pass;
    return most >= 1 && most < KVP_SERVE_MAX_PASSES ? most + 1 : 0;
}

/* Each pass's requests, tokens, hits and last finish; its time runs from
 * the previous pass's last finish (the first: from the first arrival). */
static void pass_figures(const kvp_workload *w, const serve_done *d, uint32_t n,
                         kvp_serve_result *o)
{
    double t0 = -1;
    for (size_t i = 0; i < w->n_req; i++)
        if (d[i].finish >= 0 && (t0 < 0 || d[i].arrival < t0))
            t0 = d[i].arrival;
    for (size_t i = 0; i < w->n_req; i++) {
        struct kvp_serve_pass *p = &o->passes[w->req[i].pass];
        if (d[i].finish < 0)
            continue;
        p->requests++;
        p->prompt_tokens += w->req[i].prompt_tokens;
        p->hit_tokens += d[i].hit;
        if (d[i].finish - t0 > p->end_seconds)
            p->end_seconds = d[i].finish - t0;
    }
    for (uint32_t k = 0; k < n; k++) {
        struct kvp_serve_pass *p = &o->passes[k];
        p->hit_rate = p->prompt_tokens ? (double)p->hit_tokens / (double)p->prompt_tokens : 0;
        p->seconds = p->end_seconds - (k ? o->passes[k - 1].end_seconds : 0);
    }
    o->n_passes = n;
}

int kvp_serve_run(const kvp_workload *w, const kvp_serve_config *c, kvp_serve_result *out,
                  kvp_error *err)
{
    memset(out, 0, sizeof *out);
    if (c->policy != KVP_SERVE_VLLM && c->policy != KVP_SERVE_RADIX)
        return kvp_fail(err, KVP_EUSAGE, "serve: unknown scheduling policy %d", (int)c->policy);
    serve_time *t = c->model ? calloc(1, sizeof *t) : NULL;
    double *at = malloc((w->n_req ? w->n_req : 1) * sizeof *at);
    uint32_t passes = count_passes(w);
    serve_done *done = passes ? malloc(w->n_req * sizeof *done) : NULL;
    serve_result r;
    int rc = -1;
    if (!at || (c->model && !t) || (passes && !done))
        kvp_fail(err, KVP_EINPUT, "serve: out of memory");
    else if (t && time_model(c, t, err))
        ;
    else if (!serve_arrivals(w, (int)c->arrivals, c->rate, c->seed, at, err) &&
             !run_policy(w, at, c, done, t ? serve_time_step : NULL, t, &r, out, err)) {
        copy_result(&r, t ? serve_time_request_s(t) : 0, out);
        if (passes)
            pass_figures(w, done, passes, out);
        out->timed = t != NULL;
        out->gpu = t ? t->gpu->name : NULL;
        out->engine = t ? serve_engine_name(t->engine) : NULL;
        rc = 0;
    }
    free(at);
    free(t);
    free(done);
    return rc;
}

int kvp_serve_plot(const char *path, int force, const char *title,
                   const uint64_t *capacity_tokens, const kvp_serve_result *r, size_t n,
                   kvp_error *err)
{
    double *v = malloc((n ? n : 1) * 3 * sizeof *v);
    if (!v)
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", path);
    for (size_t i = 0; i < n; i++) {
        v[i] = (double)capacity_tokens[i];
        v[n + i] = r[i].hit_rate;
        v[2 * n + i] = r[i].wall_seconds;
    }
    const double *y[2] = {v + n, v + 2 * n};
    const char *labels[2] = {"hit rate", r[0].timed ? "wall time, s (a model)" : "wall time: not modelled"};
    int rc = kvp_svg_lines2(path, force, title, "capacity in tokens (K = 10^3, M = 10^6)", v, n, y, labels, err);
    free(v);
    return rc;
}
