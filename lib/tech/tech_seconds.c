/* tech_seconds.c - prefix reuse in seconds as well as in tokens: the recompute
 * row's workload replayed through vLLM v1's scheduler (kvp_serve_run, the
 * replay behind kvplan sim --concurrent) on the same pool, once with prefix
 * caching on and once off, each step priced by the step-time model
 * (lib/serve/steptime.c: a roofline over the model's shapes and the GPU's
 * datasheet rates, never a measurement).  The settings are the ones kvplan
 * sim --concurrent takes from the same model under vLLM, so the two agree.
 * Only where that model applies: vLLM's rules, a GPU given, the model's pool
 * simulated, one GPU; elsewhere the row keeps its tokens and says why. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tech.h"

KVP_PRINTF(2, 3) static int untimed(kvp_tech_recompute *rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rc->time_reason, sizeof rc->time_reason, fmt, ap);
    va_end(ap);
    rc->timed = 0;
    return 0;
}

/* The scheduler's settings: vLLM's for this model, GPU and pool. */
static int serve_settings(const tech_ctx *c, const kvp_tech_recompute *rc, kvp_serve_config *sc,
                          char *why, size_t n)
{
    kvp_vllm_params vp = c->vllm;
    kvp_vllm_result *v = malloc(sizeof *v);
    kvp_error e;
    int ok = 0;
    if (!v) {
        snprintf(why, n, "out of memory");
        return 0;
    }
    if (c->p->trace && !vp.block_size)
        vp.block_size = 512; /* as the row's pool */
    if (kvp_vllm(c->m, &vp, v, &e))
        snprintf(why, n, "%.240s", e.msg);
    else if (v->tp > 1 || v->pp > 1)
        snprintf(why, n, "the step-time model prices one GPU; -tp and -pp above 1 are not "
                 "modelled");
    else if (v->max_num_batched_tokens > UINT32_MAX)
        snprintf(why, n, "max_num_batched_tokens %llu is too large for the scheduler",
                 (unsigned long long)v->max_num_batched_tokens);
    else
        ok = 1;
    if (ok) {
        kvp_serve_defaults(sc);
        sc->policy = KVP_SERVE_VLLM;
        sc->num_blocks = rc->pool_blocks;
        sc->block_size = rc->block_size;
        sc->max_num_batched_tokens = v->max_num_batched_tokens
                                         ? (uint32_t)v->max_num_batched_tokens
                                         : KVP_VLLM_DEFAULT_BATCHED_TOKENS;
        sc->max_num_seqs = v->max_num_seqs ? v->max_num_seqs : KVP_VLLM_DEFAULT_MAX_SEQS;
        sc->max_model_len = v->max_model_len;
        sc->arrivals = c->p->trace ? KVP_ARRIVE_TRACE : KVP_ARRIVE_ALL;
        sc->model = c->m;
        sc->gpu = v->gpu;
        sc->kv_fp8 = c->vllm.kv_fp8 ||
                     (v->kv_cache_dtype && !strncmp(v->kv_cache_dtype, "fp8", 3));
    }
    free(v);
    return ok;
}

int tech_recompute_seconds(const tech_ctx *c, kvp_tech_recompute *rc, kvp_error *err)
{
    kvp_serve_config sc;
    kvp_serve_result res[2];
    kvp_workload w;
    kvp_error e;
    char why[sizeof rc->time_reason];
    if (c->r->runtime != KVP_RT_VLLM)
        return untimed(rc, "the step-time model prices vLLM's scheduler: give --runtime vllm "
                       "--gpu NAME");
    if (!rc->pool_computed)
        return untimed(rc, "the replay has no vLLM pool for this model (see the row)");
    if (!serve_settings(c, rc, &sc, why, sizeof why))
        return untimed(rc, "%s", why);
    if (tech_load_workload(c, rc->block_size, &w, err))
        return -1;
    int bad = 0;
    for (int i = 0; i < 2 && !bad; i++) {
        sc.prefix_caching = i == 0;
        bad = kvp_serve_run(&w, &sc, &res[i], &e) != 0;
    }
    kvp_workload_free(&w);
    if (bad)
        return untimed(rc, "%s", e.msg); /* a GPU without rates, say: the tokens stand */
    if (!res[0].timed || !res[1].timed || !(res[0].wall_seconds > 0))
        return untimed(rc, "the step-time model gave no time for this workload");
    rc->timed = 1;
    rc->time_gpu = res[0].gpu;
    rc->time_engine = res[0].engine;
    rc->wall_on = res[0].wall_seconds;
    rc->wall_off = res[1].wall_seconds;
    rc->ttft_mean_on = res[0].ttft.mean;
    rc->ttft_mean_off = res[1].ttft.mean;
    rc->speedup = rc->wall_off / rc->wall_on;
    rc->time_rejected = res[0].rejected > res[1].rejected ? res[0].rejected : res[1].rejected;
    rc->time_reason[0] = 0;
    return 0;
}
