/* bench_sim.c - block operations per second of the prefix-cache simulator,
 * against a reference measured in the same run: the same replay done the
 * obvious way (linear scans for the hash lookup and for the least recently
 * freed block).  Both must report the same hit tokens, so the bench doubles
 * as a cross-check of the free-queue order.  No assertion on time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvplan.h"

typedef struct ref_block {
    uint64_t hash;
    int64_t order;   /* position in the free queue: smallest is the head */
    int hashed, ref;
} ref_block;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int64_t find(const ref_block *b, size_t n, uint64_t h)
{
    for (size_t i = 1; i < n; i++)
        if (b[i].hashed && b[i].hash == h)
            return (int64_t)i;
    return -1;
}

static size_t pop_oldest(ref_block *b, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (b[i].ref == 0 && (best == 0 || b[i].order < b[best].order))
            best = i;
    b[best].hashed = 0; /* evicted, if it had a hash */
    b[best].ref = 1;
    return best;
}

/* The replay, sequential, block 0 reserved as vLLM's null block. */
static uint64_t reference(const kvp_workload *w, size_t n, uint64_t *ops)
{
    ref_block *b = calloc(n, sizeof *b);
    size_t *held = malloc(n * sizeof *held);
    int64_t head = 0, tail = (int64_t)n;
    uint64_t hits = 0, bs = w->block_size;
    for (size_t i = 0; i < n; i++)
        b[i].order = (int64_t)i;
    for (size_t r = 0; r < w->n_req; r++) {
        const kvp_sim_request *q = &w->req[r];
        const uint64_t *h = w->hashes + q->hash_off;
        uint64_t kv = q->prompt_tokens + (q->output_tokens ? q->output_tokens - 1 : 0);
        uint64_t need = (kv + bs - 1) / bs, max_hit = (q->prompt_tokens - 1) / bs, k = 0;
        if (need > n - 1)
            continue;
        for (; k < max_hit && k < q->n_hashes; k++) {
            int64_t id = find(b, n, h[k]);
            if (id < 0)
                break;
            b[id].ref++;
            held[k] = (size_t)id;
        }
        hits += k * bs;
        for (uint64_t j = k; j < need; j++)
            held[j] = pop_oldest(b, n);
        for (uint64_t j = k; j < kv / bs && j < q->n_hashes; j++)
            b[held[j]].hash = h[j], b[held[j]].hashed = 1;
        for (uint64_t j = need; j-- > 0;)
            if (--b[held[j]].ref == 0)
                b[held[j]].order = b[held[j]].hashed ? tail++ : --head;
        *ops += 2 * need;
    }
    free(b);
    free(held);
    return hits;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    /* §4.3's cyclic grouped shape, halved: 32 x 16 prompts of 128 + 8 blocks,
     * a pool halfway up the linear rise (C = 31 x 136 + 64) */
    const char *spec = "grouped:32,16,2048,128";
    const uint64_t blocks = 31 * 136 + 64 + 1;
    kvp_workload w;
    kvp_error e;
    kvp_sim_config c;
    kvp_sim_result r;
    if (kvp_workload_synthetic(spec, 16, &w, &e))
        return fprintf(stderr, "bench_sim: %s\n", e.msg), 1;
    kvp_sim_defaults(&c);
    c.num_blocks = blocks;
    double t[7];
    for (int i = 0; i < 7; i++) {
        double t0 = now();
        if (kvp_sim_run(&w, &c, &r, &e))
            return fprintf(stderr, "bench_sim: %s\n", e.msg), 1;
        t[i] = now() - t0;
    }
    qsort(t, 7, sizeof t[0], cmp);
    uint64_t ops = 0;
    double t0 = now();
    uint64_t ref_hits = reference(&w, blocks, &ops);
    double tref = now() - t0;
    printf("workload %s, %llu blocks of 16, %llu block operations per replay\n", spec,
           (unsigned long long)blocks, (unsigned long long)ops);
    printf("kvplan sim      median %9.3f ms  %8.2f M block ops/s  hit tokens %llu\n",
           t[3] * 1e3, (double)ops / t[3] * 1e-6, (unsigned long long)r.hit_tokens);
    printf("linear-scan ref        %9.3f ms  %8.2f M block ops/s  hit tokens %llu\n",
           tref * 1e3, (double)ops / tref * 1e-6, (unsigned long long)ref_hits);
    printf("ratio: kvplan %.0fx faster; hit tokens %s\n", tref / t[3],
           ref_hits == r.hit_tokens ? "agree" : "DISAGREE");
    kvp_workload_free(&w);
    return ref_hits == r.hit_tokens ? 0 : 1;
}
