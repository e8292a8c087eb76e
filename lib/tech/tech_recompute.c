/* tech_recompute.c - prefix reuse: the prefill tokens a workload computes with
 * and without a prefix cache, replayed through vLLM's block pool (the same
 * simulator as kvplan sim) on this model's pool, the share of the prompt an
 * unbounded cache would hit, and the capacity below which reuse collapses
 * (the cliff), found by sweeping the pool.  Where the step-time model applies,
 * tech_seconds.c adds the same workload's effect in seconds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tech.h"

#define SIM_CAP (1ull << 24)

/* DESIGN section 4's workload: 32 requests sharing a 16K prefix with 256
 * unique tokens and 64 out each, shrunk to fit a shorter context (a
 * request longer than max_model_len would be refused). */
static void default_workload(const tech_ctx *c, char *buf, size_t n)
{
    uint64_t p = 16384, u = 256, o = 64;
    if (c->n < p + u + o) {
        u = c->n / 8 ? c->n / 8 : 1;
        o = c->n / 16;
        p = (c->n - u - o) / 16 * 16;
    }
    snprintf(buf, n, "shared-prefix:32,%llu,%llu,%llu", (unsigned long long)p,
             (unsigned long long)u, (unsigned long long)o);
}

int tech_load_workload(const tech_ctx *c, uint32_t bs, kvp_workload *w, kvp_error *err)
{
    char spec[96];
    if (c->p->trace) /* any format kvplan reads, hashed at the pool's block */
        return kvp_workload_load(c->p->trace, c->p->trace_format, bs, w, err);
    default_workload(c, spec, sizeof spec);
    return kvp_workload_synthetic(c->p->workload ? c->p->workload : spec, bs, w, err);
}

/* The pool the model gets: vLLM's, or on the setting's memory a pool of
 * bs-token blocks of the model's bytes per token (a model of a paged
 * runtime).  The simulator keeps one block group of full attention. */
static int model_pool(const tech_ctx *c, kvp_tech_recompute *rc, char *why, size_t n,
                      kvp_error *err)
{
    tech_census k;
    tech_census_of(c->m, &k);
    rc->block_size = 16; /* vLLM's default; its own pool may say otherwise */
    if (c->r->runtime == KVP_RT_VLLM) {
        kvp_vllm_params v = c->vllm;
        kvp_vllm_result *r = malloc(sizeof *r);
        kvp_error e;
        if (!r)
            return kvp_fail(err, KVP_EINPUT, "out of memory");
        if (kvp_vllm(c->m, &v, r, &e)) {
            snprintf(why, n, "%s", e.msg);
        } else {
            rc->block_size = r->block_size;
            rc->pool_blocks = r->num_blocks;
            rc->pool_computed = 1;
            for (size_t g = 0; g < r->n_groups; g++)
                if (r->groups[g].kind != KVP_LAYER_FULL && r->groups[g].kind != KVP_LAYER_MLA) {
                    snprintf(why, n, "vLLM keeps this model's %s layers in a block group of "
                             "their own; the simulator models one full-attention group",
                             kvp_layer_kind_name(r->groups[g].kind));
                    rc->pool_computed = 0;
                    break;
                }
        }
        free(r);
        return 0;
    }
    if (k.windowed || k.state) {
        snprintf(why, n, "the model's %s layers would need block groups of their own; the "
                 "simulator models one full-attention group", k.state ? "state" : "sliding");
        return 0;
    }
    uint64_t block = (uint64_t)rc->block_size * c->r->base.per_token_bytes;
    rc->pool_blocks = block ? c->memory / block : 0;
    if (rc->pool_blocks < 2) {
        snprintf(why, n, "the memory holds fewer than two %u-token blocks", rc->block_size);
        return 0;
    }
    rc->pool_computed = 1;
    return 0;
}

static int replay(const kvp_workload *w, uint64_t blocks, kvp_sim_result *out, kvp_error *err);

/* The cliff: a sweep of the pool finds the steepest rise of the hit rate
 * (kvp_sim_cliff), then bisection finds the smallest pool in that step that
 * has half of the rise: one block, for a step as sharp as a shared prefix
 * that no longer fits. */
static int find_cliff(const kvp_workload *w, uint64_t hi_cap, kvp_tech_recompute *rc,
                      kvp_error *err)
{
    enum { POINTS = 16 };
    uint64_t caps[POINTS];
    kvp_sim_result res[POINTS], mid;
    kvp_sim_config cfg;
    size_t n = 0;
    kvp_sim_defaults(&cfg);
    cfg.block_size = w->block_size;
    for (uint64_t i = 0; i < POINTS; i++) {
        uint64_t cap = 2 + (hi_cap - 2) * i / (POINTS - 1);
        if (!n || caps[n - 1] != cap)
            caps[n++] = cap;
    }
    if (kvp_sim_sweep(w, &cfg, caps, n, res, err, NULL, NULL))
        return -1;
    size_t k = kvp_sim_cliff(res, n);
    if (!k)
        return 0;
    rc->cliff_found = 1;
    rc->cliff_from_blocks = caps[k - 1];
    rc->cliff_to_blocks = caps[k];
    rc->cliff_from_hit_rate = res[k - 1].hit_rate;
    rc->cliff_to_hit_rate = res[k].hit_rate;
    uint64_t lo = caps[k - 1], hi = caps[k];
    double target = (res[k - 1].hit_rate + res[k].hit_rate) / 2;
    while (hi - lo > 1) {
        uint64_t m = lo + (hi - lo) / 2;
        if (replay(w, m, &mid, err))
            return -1;
        if (mid.hit_rate >= target)
            hi = m;
        else
            lo = m;
    }
    rc->cliff_half_blocks = hi;
    return 0;
}

static int replay(const kvp_workload *w, uint64_t blocks, kvp_sim_result *out, kvp_error *err)
{
    kvp_sim_config cfg;
    kvp_sim_defaults(&cfg);
    cfg.block_size = w->block_size;
    cfg.num_blocks = blocks;
    return kvp_sim_run(w, &cfg, out, err);
}

static int simulate(const tech_ctx *c, kvp_tech_row *row, kvp_error *err)
{
    kvp_tech_recompute *rc = &row->u.recompute;
    kvp_workload w;
    kvp_sim_result full, pool;
    if (tech_load_workload(c, rc->block_size, &w, err))
        return -1;
    snprintf(c->r->workload, sizeof c->r->workload, "%s%s", w.name,
             c->p->trace || c->p->workload ? "" : " (the default, after DESIGN section 4)");
    kvp_workload_stats st;
    int r = kvp_workload_stats_of(&w, &st, err);
    /* a pool that never evicts (kvp_workload_stats), within the simulator's limit */
    rc->unbounded_blocks = st.unbounded_blocks < SIM_CAP ? st.unbounded_blocks : SIM_CAP;
    if (!r)
        r = replay(&w, rc->unbounded_blocks, &full, err);
    if (!r && rc->pool_computed)
        r = replay(&w, rc->pool_blocks < rc->unbounded_blocks ? rc->pool_blocks
                                                               : rc->unbounded_blocks, &pool, err);
    if (!r && full.hit_tokens)
        r = find_cliff(&w, rc->unbounded_blocks, rc, err);
    kvp_workload_free(&w);
    if (r)
        return -1;
    const kvp_sim_result *used = rc->pool_computed ? &pool : &full;
    rc->requests = full.requests;
    rc->prompt_tokens = full.prompt_tokens;
    rc->computed_without = full.prompt_tokens;
    rc->computed_with = used->computed_tokens;
    rc->hit_tokens = used->hit_tokens;
    rc->evictions = used->evictions;
    rc->shared_fraction = full.hit_rate;
    return 0;
}

int tech_recompute_rows(tech_ctx *c, kvp_error *err)
{
    kvp_tech_row *row = tech_row_new(c, "prefix-reuse", KVP_TECH_RECOMPUTE);
    char why[1024] = "";
    if (!row)
        return kvp_fail(err, KVP_EINPUT, "too many technique rows");
    kvp_tech_recompute *rc = &row->u.recompute;
    row->unit = "prefill tokens";
    snprintf(row->changes, sizeof row->changes, "prefill tokens computed");
    if (model_pool(c, rc, why, sizeof why, err) || simulate(c, row, err) ||
        tech_recompute_seconds(c, rc, err))
        return -1;
    snprintf(row->variant, sizeof row->variant, "%s", c->r->workload);
    row->computed = 1;
    row->value = rc->computed_with;
    row->baseline = rc->computed_without;
    row->multiplier = rc->computed_with ? (double)rc->computed_without / rc->computed_with : 0;
    row->label = rc->pool_computed && c->r->runtime == KVP_RT_VLLM ? KVP_LABEL_EXACT
                                                                    : KVP_LABEL_MODEL;
    if (!rc->pool_computed)
        snprintf(row->assumptions, sizeof row->assumptions, "with an unbounded cache: %.400s",
                 why); /* why is a one-line reason; the row keeps its gist */
    else
        snprintf(row->assumptions, sizeof row->assumptions, "vLLM's prefix cache replayed one "
                 "request at a time (kvplan sim) on %s: chained hashes over full blocks, the "
                 "last prompt token never a hit, LRU eviction; no accuracy cost; a workload "
                 "with no shared prefix computes the same either way",
                 c->r->runtime == KVP_RT_VLLM ? "vLLM's pool"
                                              : "a paged pool of this memory (a model)");
    return 0;
}
