/* fit.c - the inverse question: given the memory for the KV cache and
 * state, the largest context that fits, and the most sequences of a given
 * length.  Each runtime's size is monotone in both, so a binary search over
 * the runtime's own arithmetic answers exactly, with its own rounding
 * (llama.cpp's 256-cell padding, vLLM's blocks) included. */
#include <stdlib.h>
#include <string.h>

#include "kvp_int.h"

/* Bytes of one setting, or -1 when the runtime refuses it (which counts as
 * not fitting). */
typedef int (*cost_fn)(const kvp_model *m, const kvp_fit_params *p, uint64_t ctx,
                       uint32_t seqs, uint64_t *bytes);

static int cost_theory(const kvp_model *m, const kvp_fit_params *p, uint64_t ctx, uint32_t seqs,
                       uint64_t *bytes)
{
    kvp_theory_params t = p->theory;
    kvp_theory_result r;
    kvp_error e;
    if (kvp_mul(ctx, seqs, &t.n_ctx) || t.n_ctx > KVP_MAX_TOKENS)
        return -1;
    t.n_seq = seqs;
    if (kvp_theory(m, &t, &r, &e))
        return -1;
    *bytes = r.total_bytes;
    return 0;
}

/* llama.cpp: -np seqs, each slot ctx tokens (-c = ctx x seqs). */
static int cost_llama(const kvp_model *m, const kvp_fit_params *p, uint64_t ctx, uint32_t seqs,
                      uint64_t *bytes)
{
    kvp_llama_params l = p->llama;
    kvp_llama_result r;
    kvp_error e;
    if (kvp_mul(ctx, seqs, &l.n_ctx) || l.n_ctx > KVP_MAX_TOKENS)
        return -1;
    l.n_seq = (int32_t)seqs;
    if (kvp_llama(m, &l, &r, &e))
        return -1;
    *bytes = r.total_bytes;
    return 0;
}

/* vLLM: what one request of max_model_len ctx reserves. */
static int cost_vllm(const kvp_model *m, const kvp_fit_params *p, uint64_t ctx, uint32_t seqs,
                     uint64_t *bytes)
{
    kvp_vllm_params v = p->vllm;
    kvp_vllm_result *r = malloc(sizeof *r);
    kvp_error e;
    int rc = -1;
    (void)seqs;
    v.max_model_len = ctx;
    v.reservation_only = 1;
    if (r && kvp_vllm(m, &v, r, &e) == 0) {
        *bytes = r->per_request_bytes;
        rc = 0;
    }
    free(r);
    return rc;
}

/* The memory vLLM's fit check compares a request with: since 0.29 it
 * leaves the null block (one pool block) out. */
static uint64_t vllm_check_budget(const kvp_model *m, const kvp_fit_params *p)
{
    kvp_vllm_params v = p->vllm;
    kvp_vllm_result *r = malloc(sizeof *r);
    kvp_error e;
    uint64_t budget = p->budget;
    v.max_model_len = 1;
    v.reservation_only = 1;
    if (r && kvp_vllm(m, &v, r, &e) == 0 && strcmp(r->version, "0.28.0") != 0)
        budget = budget > r->pool_block_bytes ? budget - r->pool_block_bytes : 0;
    free(r);
    return budget;
}

/* The largest x in [lo, hi], a multiple of step, whose cost fits; 0 when
 * none does.  cost must be monotone in x. */
static uint64_t search(uint64_t lo, uint64_t hi, uint64_t step, uint64_t budget,
                       int (*f)(const kvp_model *, const kvp_fit_params *, uint64_t, uint64_t *),
                       const kvp_model *m, const kvp_fit_params *p, uint64_t *bytes)
{
    uint64_t b, best = 0;
    lo = (lo + step - 1) / step, hi /= step; /* search in units of step */
    while (lo <= hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (f(m, p, mid * step, &b) == 0 && b <= budget) {
            best = mid * step;
            *bytes = b;
            lo = mid + 1;
        } else {
            if (!mid)
                break;
            hi = mid - 1;
        }
    }
    return best;
}

static cost_fn runtime_cost(kvp_runtime rt)
{
    return rt == KVP_RT_LLAMA ? cost_llama : rt == KVP_RT_VLLM ? cost_vllm : cost_theory;
}

/* Adapters: vary the context with the sequences fixed, and the reverse. */
static int by_context(const kvp_model *m, const kvp_fit_params *p, uint64_t x, uint64_t *b)
{
    return runtime_cost(p->runtime)(m, p, x, p->seqs, b);
}

static int by_seqs(const kvp_model *m, const kvp_fit_params *p, uint64_t x, uint64_t *b)
{
    return runtime_cost(p->runtime)(m, p, p->context, (uint32_t)x, b);
}

/* The longest context the runtime accepts at all. */
static uint64_t context_limit(const kvp_model *m, const kvp_fit_params *p)
{
    if (p->runtime != KVP_RT_VLLM || p->vllm.allow_long_max_model_len)
        return KVP_MAX_TOKENS / (p->seqs ? p->seqs : 1);
    kvp_vllm_params v = p->vllm;
    kvp_vllm_result *r = malloc(sizeof *r);
    kvp_error e;
    uint64_t lim = 0;
    v.max_model_len = 0;
    v.reservation_only = 1;
    if (r && kvp_vllm(m, &v, r, &e) == 0)
        lim = r->max_model_len;
    free(r);
    return lim;
}

static void vllm_concurrency(const kvp_model *m, const kvp_fit_params *p, kvp_fit_result *out)
{
    kvp_vllm_params v = p->vllm;
    kvp_vllm_result *r = malloc(sizeof *r);
    kvp_error e;
    v.max_model_len = p->context;
    v.kv_cache_memory = p->budget;
    if (r && kvp_vllm(m, &v, r, &e) == 0) {
        out->vllm_concurrency = r->max_concurrency;
        out->max_seqs = (uint64_t)r->max_concurrency; /* whole requests at full length */
        out->bytes_at_max_seqs = out->max_seqs * r->per_request_bytes;
    }
    free(r);
}

int kvp_fit(const kvp_model *m, const kvp_fit_params *p, kvp_fit_result *out, kvp_error *err)
{
    memset(out, 0, sizeof *out);
    out->runtime = p->runtime;
    if (!p->budget)
        return kvp_fail(err, KVP_EUSAGE, "fit: the memory budget must be more than 0 bytes");
    if (!p->seqs || p->seqs > 1u << 20 || !p->context || p->context > KVP_MAX_TOKENS)
        return kvp_fail(err, KVP_EUSAGE, "fit: sequences must be in [1, 2^20] and the context "
                        "in [1, 2^40]");
    kvp_fit_params q = *p;
    /* llama.cpp pads -c to 256 cells per stream: search in those steps */
    uint64_t step = p->runtime == KVP_RT_LLAMA ? 256 : 1;
    uint64_t limit = context_limit(m, &q);
    if (!limit)
        return kvp_fail(err, KVP_EINPUT, "%s: the runtime refuses every context length",
                        m->name);
    uint64_t budget = p->runtime == KVP_RT_VLLM ? vllm_check_budget(m, &q) : p->budget;
    out->max_context = search(1, limit, step, budget, by_context, m, &q,
                              &out->bytes_at_max_context);
    out->context_capped = out->max_context && out->max_context + step > limit;
    if (p->runtime == KVP_RT_VLLM) {
        vllm_concurrency(m, &q, out);
        return 0;
    }
    uint64_t max_seqs = p->runtime == KVP_RT_LLAMA ? 256 : 1u << 20;
    out->max_seqs = search(1, max_seqs, 1, p->budget, by_seqs, m, &q, &out->bytes_at_max_seqs);
    return 0;
}
