/* tech_place.c - place differently: paged allocation and a host tier.
 *
 * paged    what reserving a request's whole max_model_len (or the next power
 *          of two of its length, the vLLM paper's other contiguous
 *          baseline) wastes against vLLM's blocks, for a length mix, and how
 *          many requests fit at once; all in vLLM's block arithmetic on the
 *          setting's memory (num_blocks = memory // pool block)
 * blocks   vLLM's capacity line at block sizes 8, 16, 32 and 64
 * offload  the tokens a host tier holds and the time to copy one request's
 *          KV back over PCIe (sustained and theoretical x16 rates) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tech.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* What vLLM reserves for one request of `len` tokens (in blocks) and what
 * one block id costs, without asking whether the memory holds it. */
static int reservation(const tech_ctx *c, const kvp_vllm_params *base, uint64_t len,
                       uint64_t *blocks, uint64_t *pool_block, uint32_t *bs, kvp_error *err)
{
    kvp_vllm_params v = *base;
    kvp_vllm_result *r = malloc(sizeof *r);
    if (!r)
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    v.max_model_len = len;
    v.reservation_only = 1;
    v.allow_long_max_model_len = 1;
    int rc = kvp_vllm(c->m, &v, r, err);
    if (!rc) {
        *blocks = r->blocks_per_request;
        *pool_block = r->pool_block_bytes;
        if (bs)
            *bs = r->block_size;
    }
    free(r);
    return rc;
}

/* Theory bytes of one request of len tokens, in the cache layout vLLM runs. */
static int stored_bytes(const tech_ctx *c, const kvp_model *m, const kvp_vllm_params *v,
                        uint64_t len, uint64_t *out, kvp_error *err)
{
    kvp_theory_params t = c->theory;
    kvp_theory_result r;
    const char *d = v->kv_cache_dtype ? v->kv_cache_dtype : v->kv_fp8 ? "fp8" : "auto";
    t.type_k = t.type_v = !strncmp(d, "fp8", 3) ? KVP_FP8 : !strcmp(d, "nvfp4") ? KVP_NVFP4
                                                                                : KVP_F16;
    t.n_ctx = len;
    t.n_seq = 1;
    if (kvp_theory(m, &t, &r, err))
        return -1;
    *out = r.total_bytes;
    return 0;
}

static uint64_t pow2_at_least(uint64_t n)
{
    uint64_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/* The length mix: the workload's requests (prompt + output, at most the
 * max length), or the reference's 1,000-token requests. */
static int length_mix(const tech_ctx *c, uint64_t L, uint64_t **lens, size_t *n, kvp_error *err)
{
    kvp_workload w;
    *n = 0;
    if (!c->p->workload && !c->p->trace) {
        *lens = malloc(sizeof **lens);
        if (!*lens)
            return kvp_fail(err, KVP_EINPUT, "out of memory");
        (*lens)[(*n)++] = L < 1000 ? L : 1000;
        return 0;
    }
    if (tech_load_workload(c, c->p->trace ? 512 : 16, &w, err))
        return -1;
    *lens = malloc(w.n_req * sizeof **lens);
    if (!*lens) {
        kvp_workload_free(&w);
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    }
    for (size_t i = 0; i < w.n_req; i++) {
        uint64_t t = w.req[i].prompt_tokens + w.req[i].output_tokens;
        if (t && t <= L)
            (*lens)[(*n)++] = t;
    }
    kvp_workload_free(&w);
    if (!*n)
        return kvp_fail(err, KVP_EINPUT, "%s: no request of the workload fits %llu tokens",
                        c->m->name, (unsigned long long)L);
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct policy_sum {
    uint64_t blocks, waste;      /* summed over the mix */
} policy_sum;

/* Sums, over the mix, the blocks and wasted bytes of the three policies:
 * reserve L, reserve the next power of two, page (reserve the length). */
static int sum_policies(const tech_ctx *c, const kvp_model *tm, const kvp_vllm_params *v,
                        uint64_t L, const uint64_t *lens, size_t n, policy_sum s[3],
                        kvp_error *err)
{
    uint64_t bL, pool, prev = 0, cost[3] = {0, 0, 0}, waste[3] = {0, 0, 0};
    memset(s, 0, 3 * sizeof *s);
    if (reservation(c, v, L, &bL, &pool, NULL, err))
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || lens[i] != prev) { /* the mix is sorted: price each length once */
            uint64_t b2, bn, stored, p2 = pow2_at_least(lens[i]);
            prev = lens[i];
            if (reservation(c, v, p2 < L ? p2 : L, &b2, &pool, NULL, err) ||
                reservation(c, v, lens[i], &bn, &pool, NULL, err) ||
                stored_bytes(c, tm, v, lens[i], &stored, err))
                return -1;
            cost[0] = bL, cost[1] = b2, cost[2] = bn;
            for (int k = 0; k < 3; k++)
                waste[k] = cost[k] * pool > stored ? cost[k] * pool - stored : 0;
        }
        for (int k = 0; k < 3; k++)
            s[k].blocks += cost[k], s[k].waste += waste[k];
    }
    return 0;
}

static int paged_row(tech_ctx *c, const kvp_vllm_params *v, kvp_error *err)
{
    kvp_tech_row *row = tech_row_new(c, "paged", KVP_TECH_PLACE);
    if (!row)
        return kvp_fail(err, KVP_EINPUT, "too many technique rows");
    kvp_tech_place *pl = &row->u.place;
    uint64_t L = v->max_model_len, *lens = NULL, bL, pool, total = 0;
    size_t n = 0;
    policy_sum s[3];
    kvp_model *tm = (kvp_model *)c->m;
    const char *d = v->kv_cache_dtype;
    row->unit = "bytes wasted per request";
    row->label = KVP_LABEL_EXACT;
    snprintf(row->changes, sizeof row->changes, "reservation per request");
    int rc = reservation(c, v, L, &bL, &pool, &pl->block_size, err) ||
             length_mix(c, L, &lens, &n, err) ||
             (d && !strncmp(d, "turboquant_", 11) && kvp_vllm_turboquant(c->m, d, &tm, err));
    if (!rc) {
        qsort(lens, n, sizeof *lens, cmp_u64);
        rc = sum_policies(c, tm, v, L, lens, n, s, err);
    }
    for (size_t i = 0; i < n; i++)
        total += lens[i];
    free(lens);
    if (tm != c->m)
        kvp_model_free(tm);
    if (rc)
        return -1;
    pl->mean_tokens = total / n;
    pl->max_model_len = L;
    pl->pool_blocks = v->kv_cache_memory / pool;
    /* mean blocks per request: requests fit = pool * n / sum */
    pl->fit_contiguous = s[0].blocks ? pl->pool_blocks * n / s[0].blocks : 0;
    pl->fit_pow2 = s[1].blocks ? pl->pool_blocks * n / s[1].blocks : 0;
    pl->fit_paged = s[2].blocks ? pl->pool_blocks * n / s[2].blocks : 0;
    pl->waste_contiguous = s[0].waste / n;
    pl->waste_pow2 = s[1].waste / n;
    pl->waste_paged = s[2].waste / n;
    pl->waste_contiguous_fraction = s[0].blocks ? (double)s[0].waste / (s[0].blocks * pool) : 0;
    pl->waste_paged_fraction = s[2].blocks ? (double)s[2].waste / (s[2].blocks * pool) : 0;
    char a[32];
    kvp_format_thousands(pl->mean_tokens, a, sizeof a);
    snprintf(row->variant, sizeof row->variant, "%u-token blocks vs reserving max_model_len; "
             "%s%s-token requests", pl->block_size, n > 1 ? "a mix, mean " : "", a);
    snprintf(row->assumptions, sizeof row->assumptions, "vLLM's block arithmetic on the "
             "setting's memory; a contiguous system reserves max_model_len per request (the "
             "vLLM paper's Orca baselines also reserve the next power of two); measured: "
             "60-80%% of KV memory wasted before paging, under 4%% with it (Kwon et al. 2023)");
    row->computed = 1;
    row->value = pl->waste_paged;
    row->baseline = pl->waste_contiguous;
    row->multiplier = pl->fit_contiguous ? (double)pl->fit_paged / pl->fit_contiguous : 0;
    return 0;
}

static int block_size_row(tech_ctx *c, const kvp_vllm_params *base, kvp_error *err)
{
    static const uint32_t sizes[4] = {8, 16, 32, 64};
    kvp_tech_row *row = tech_row_new(c, "paged", KVP_TECH_PLACE);
    if (!row)
        return kvp_fail(err, KVP_EINPUT, "too many technique rows");
    kvp_tech_place *pl = &row->u.place;
    uint64_t L = base->max_model_len, lo = UINT64_MAX, hi = 0;
    row->unit = "tokens of capacity";
    row->label = KVP_LABEL_EXACT;
    snprintf(row->changes, sizeof row->changes, "tokens per block");
    snprintf(row->variant, sizeof row->variant, "block size 8 / 16 / 32 / 64");
    for (int i = 0; i < 4; i++) {
        kvp_vllm_params v = *base;
        uint64_t blocks, pool;
        uint32_t bs;
        v.block_size = sizes[i];
        if (reservation(c, &v, L, &blocks, &pool, &bs, err)) {
            /* vLLM refuses this block size for the model (DeepSeek sparse
             * attention takes multiples of 64): say so instead of a sweep */
            snprintf(row->reason, sizeof row->reason, "%s", err->msg);
            return 0;
        }
        if (bs != sizes[i]) {
            snprintf(row->reason, sizeof row->reason, "vLLM sets this model's block size "
                     "itself (%u tokens: an attention page must hold a whole state), so "
                     "--block-size changes nothing", bs);
            return 0;
        }
        uint64_t nb = base->kv_cache_memory / pool;
        double conc = (double)nb / (double)blocks;
        pl->sizes[i].block_size = bs;
        pl->sizes[i].blocks = nb;
        pl->sizes[i].concurrency = conc;
        pl->sizes[i].tokens = (uint64_t)(conc * (double)L);
        lo = pl->sizes[i].tokens < lo ? pl->sizes[i].tokens : lo;
        hi = pl->sizes[i].tokens > hi ? pl->sizes[i].tokens : hi;
    }
    pl->n_sizes = 4;
    pl->max_model_len = L;
    row->computed = 1;
    row->value = lo;
    row->baseline = hi;
    row->multiplier = hi ? (double)lo / (double)hi : 0;
    snprintf(row->assumptions, sizeof row->assumptions, "vLLM's capacity line at each block "
             "size on the same memory: the loss is at most one block of the pool plus the "
             "rounding of one request to whole blocks (none when the block divides "
             "max_model_len); each live sequence also wastes (block - 1) / 2 tokens on "
             "average in its last block");
    return 0;
}

static int offload_row(tech_ctx *c, const kvp_vllm_params *v, kvp_error *err)
{
    /* sustained x16 host-to-device rates (nvbandwidth on A100 / H100), then
     * the theoretical ones */
    static const double bw[4] = {25e9, 50e9, 31.5e9, 63e9};
    kvp_tech_row *row = tech_row_new(c, "offload", KVP_TECH_PLACE);
    if (!row)
        return kvp_fail(err, KVP_EINPUT, "too many technique rows");
    kvp_tech_place *pl = &row->u.place;
    uint64_t ct = c->r->base.per_token_bytes, bs = 16, blocks, pool;
    uint32_t vbs;
    pl->host_bytes = c->p->host_memory ? c->p->host_memory : 128ull << 30;
    row->unit = "tokens in the host tier";
    row->label = KVP_LABEL_MODEL;
    snprintf(row->changes, sizeof row->changes, "where blocks live");
    snprintf(row->variant, sizeof row->variant, "host tier of %.2f GiB, PCIe gen4 / gen5 x16",
             pl->host_bytes / GIB);
    if (reservation(c, v, v->max_model_len, &blocks, &pool, &vbs, err))
        return -1;
    bs = vbs;
    pl->block_size = vbs;
    pl->reload_tokens = c->n;
    pl->reload_bytes = c->r->base.theory_bytes / c->S;
    for (int i = 0; i < 4; i++)
        pl->reload_s[i] = (double)pl->reload_bytes / bw[i];
    snprintf(row->assumptions, sizeof row->assumptions, "the count is exact (vLLM's native "
             "offloading works in its blocks, LMCache in 256-token chunks); the time is a "
             "model: one request's KV over PCIe gen4 at 25 GB/s and gen5 at 50 GB/s sustained "
             "(31.5 / 63 GB/s theoretical), no per-transfer latency; --cpu-offload-gb moves "
             "weights, not KV");
    if (!ct) {
        snprintf(row->reason, sizeof row->reason, "nothing grows per token: the host tier "
                 "holds whole states (%llu sequences)", (unsigned long long)(
                 c->r->base.fixed_bytes_per_seq ? pl->host_bytes / c->r->base.fixed_bytes_per_seq
                                                : 0));
        return 0;
    }
    pl->host_tokens_theory = pl->host_bytes / ct;
    pl->host_tokens_blocks = pl->host_bytes / (bs * ct) * bs;
    pl->host_tokens_chunks = pl->host_bytes / (256 * ct) * 256;
    row->computed = 1;
    row->value = pl->host_tokens_blocks;
    row->baseline = 0;
    return 0;
}

/* A model vLLM cannot serve at all (it has no class for it, or removed it)
 * has no paged pool to place: the section's rows say why, and the other
 * sections, which need no vLLM, still stand. */
static int refused_rows(tech_ctx *c, const char *why, kvp_error *err)
{
    static const char *const ids[3] = {"paged", "paged", "offload"};
    static const char *const variants[3] = {"reservation per request",
                                            "block size 8 / 16 / 32 / 64", "host tier"};
    for (int i = 0; i < 3; i++) {
        kvp_tech_row *row = tech_row_new(c, ids[i], KVP_TECH_PLACE);
        if (!row)
            return kvp_fail(err, KVP_EINPUT, "too many technique rows");
        snprintf(row->variant, sizeof row->variant, "%s", variants[i]);
        snprintf(row->reason, sizeof row->reason, "vLLM's block pool: %s", why);
    }
    return 0;
}

int tech_place_rows(tech_ctx *c, kvp_error *err)
{
    kvp_vllm_params v;
    tech_vllm_settings(c, &v);
    if (c->m->vllm_refusal[0])
        return refused_rows(c, c->m->vllm_refusal, err);
    return paged_row(c, &v, err) || block_size_row(c, &v, err) || offload_row(c, &v, err) ? -1
                                                                                          : 0;
}
