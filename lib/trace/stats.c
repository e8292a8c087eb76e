/* stats.c - what a workload is, before any pool: its size, its working set
 * (the blocks an unevicting cache ends up holding, so the pool at which
 * reuse stops being capacity-bound), and, where the format has
 * conversations, how much of each request its conversation's previous
 * request already holds (the agent re-sending its growing history). */
#include <stdlib.h>
#include <string.h>

#include "../sim.h"
#include "trace_int.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_chunk(const void *a, const void *b)
{
    const kvp_sim_chunk *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* distinct block hashes: what an unevicting prefix cache holds at the end */
static int distinct_hashes(const kvp_workload *w, uint64_t *n)
{
    uint64_t *h = malloc((w->n_hashes ? w->n_hashes : 1) * sizeof *h);
    if (!h)
        return -1;
    if (w->n_hashes) /* none: maybe no array at all */
        memcpy(h, w->hashes, w->n_hashes * sizeof *h);
    qsort(h, w->n_hashes, sizeof *h, cmp_u64);
    *n = 0;
    for (size_t i = 0; i < w->n_hashes; i++)
        *n += i == 0 || h[i] != h[i - 1];
    free(h);
    return 0;
}

/* distinct chunks, in tokens and in whole blocks each (the any-position pool) */
static int distinct_chunks(const kvp_workload *w, uint64_t *tokens, uint64_t *blocks)
{
    kvp_sim_chunk *c = malloc((w->n_chunks ? w->n_chunks : 1) * sizeof *c);
    if (!c)
        return -1;
    if (w->n_chunks)
        memcpy(c, w->chunks, w->n_chunks * sizeof *c);
    qsort(c, w->n_chunks, sizeof *c, cmp_chunk);
    *tokens = *blocks = 0;
    for (size_t i = 0; i < w->n_chunks; i++)
        if (i == 0 || c[i].id != c[i - 1].id)
            *tokens += c[i].tokens, *blocks += kvp_blocks_of(c[i].tokens, w->block_size);
    free(c);
    return 0;
}

/* vLLM's hit of request q against its conversation's previous request p
 * alone: the leading prompt blocks they share, the last token never a hit */
static uint64_t consecutive_hit(const kvp_workload *w, const kvp_sim_request *p,
                                const kvp_sim_request *q)
{
    uint64_t bs = w->block_size, limit = (q->prompt_tokens - 1) / bs;
    uint64_t pb = p->prompt_tokens / bs, n = 0;
    const uint64_t *a = w->hashes + p->hash_off, *b = w->hashes + q->hash_off;
    while (n < limit && n < pb && n < q->n_hashes && n < p->n_hashes && a[n] == b[n])
        n++;
    return n * bs;
}

static int conversations(const kvp_workload *w, kvp_workload_stats *s)
{
    size_t *last = malloc(((size_t)w->n_convs + 1) * sizeof *last);
    double *ratio = malloc((w->n_req ? w->n_req : 1) * sizeof *ratio);
    if (!last || !ratio) {
        free(last), free(ratio);
        return -1;
    }
    memset(last, 0xff, ((size_t)w->n_convs + 1) * sizeof *last);
    uint64_t hit = 0, tokens = 0;
    double sum = 0;
    for (size_t i = 0; i < w->n_req; i++) {
        const kvp_sim_request *q = &w->req[i];
        if (!q->conv)
            continue;
        if (last[q->conv] != (size_t)-1) {
            uint64_t h = consecutive_hit(w, &w->req[last[q->conv]], q);
            ratio[s->pairs++] = (double)h / (double)q->prompt_tokens;
            sum += ratio[s->pairs - 1];
            hit += h, tokens += q->prompt_tokens;
        }
        last[q->conv] = i;
    }
    if (s->pairs) {
        qsort(ratio, s->pairs, sizeof *ratio, cmp_double);
        s->consecutive_mean = sum / (double)s->pairs;
        s->consecutive_median = s->pairs % 2 ? ratio[s->pairs / 2]
                                : (ratio[s->pairs / 2 - 1] + ratio[s->pairs / 2]) / 2;
        s->consecutive_weighted = (double)hit / (double)tokens;
    }
    free(last), free(ratio);
    return 0;
}

int kvp_workload_stats_of(const kvp_workload *w, kvp_workload_stats *s, kvp_error *err)
{
    memset(s, 0, sizeof *s);
    uint64_t bs = w->block_size ? w->block_size : 1;
    double t0 = 0, t1 = 0;
    for (size_t i = 0; i < w->n_req; i++) {
        const kvp_sim_request *q = &w->req[i];
        uint64_t dec = q->output_tokens ? q->output_tokens - 1 : 0;
        uint64_t blocks = kvp_blocks_of(q->prompt_tokens + dec, bs);
        uint64_t chunk_blocks = sim_chunks_request_blocks(w, q, (uint32_t)bs);
        s->max_request_blocks = blocks > s->max_request_blocks ? blocks : s->max_request_blocks;
        s->max_chunk_request_blocks = chunk_blocks > s->max_chunk_request_blocks
                                          ? chunk_blocks : s->max_chunk_request_blocks;
        s->prompt_tokens += q->prompt_tokens;
        s->output_tokens += q->output_tokens;
        t0 = i == 0 || q->timestamp < t0 ? q->timestamp : t0;
        t1 = i == 0 || q->timestamp > t1 ? q->timestamp : t1;
    }
    s->requests = w->n_req;
    s->conversations = w->n_convs;
    s->span_seconds = (t1 - t0) / 1000;
    if (distinct_hashes(w, &s->working_blocks) ||
        distinct_chunks(w, &s->chunk_tokens, &s->chunk_blocks) || conversations(w, s))
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", w->name);
    s->working_tokens = s->working_blocks * bs;
    /* never evicts: every block ever cached, the largest request's uncached
     * ones beside them, and the null block */
    s->unbounded_blocks = s->working_blocks + s->max_request_blocks + 1;
    s->unbounded_chunk_blocks = s->chunk_blocks + s->max_chunk_request_blocks + 1;
    return 0;
}
