/* test_sim.c - the prefix-cache simulator's block pool against vLLM's own
 * worked example (docs/design/prefix_caching.md, "Example"; quoted in
 * traces-and-hitrates.md §4.1), and the replay against derivable counts. */
#include <string.h>

#include "check.h"
#include "sim.h"

static int queue_is(const sim_pool *p, const uint32_t *want, size_t n)
{
    uint32_t got[64];
    size_t k = sim_pool_queue(p, got, 64);
    return k == n && !memcmp(got, want, n * sizeof *want);
}

static int blocks_are(const sim_req *r, const uint32_t *want, size_t n)
{
    return r->n_blocks == n && !memcmp(r->blocks, want, n * sizeof *want);
}

/* Block size 4, 10 blocks, all usable (the example has no null block).
 * Request 0: 15 prompt tokens, decodes into block 4 (17 tokens stored).
 * Request 1: 14 prompt tokens, the first 10 shared with request 0, so only
 * blocks 0-1 (8 tokens) match; block 2 matches only 2 of its 4 tokens.
 * Request 2: 29 prompt tokens, the first 12 shared with request 0.
 * unhashed_to_tail = 1 is the document's rule (every freed block to the
 * tail); 0 is vLLM's rule since #42656 (uncached blocks to the head). */
static void design_doc_example(int unhashed_to_tail)
{
    static const uint64_t h0[] = {10, 11, 12, 13};
    static const uint64_t h1[] = {10, 11, 22};
    static const uint64_t h2[] = {10, 11, 12, 33, 34, 35, 36};
    uint32_t b0[16], b1[16], b2[16];
    sim_req r0 = {.hashes = h0, .n_hashes = 4, .blocks = b0, .cap = 16};
    sim_req r1 = {.hashes = h1, .n_hashes = 3, .blocks = b1, .cap = 16};
    sim_req r2 = {.hashes = h2, .n_hashes = 7, .blocks = b2, .cap = 16};
    sim_pool p;
    kvp_error e;
    const char *t = unhashed_to_tail ? "design doc (freed to tail)"
                                     : "vLLM today (uncached to head)";
    char name[160];
#define NAME(s) (snprintf(name, sizeof name, "%s: %s", t, s), name)

    CHECK(NAME("pool"), sim_pool_init(&p, 10, 4, 0, unhashed_to_tail, &e) == 0 && p.usable == 10);
    /* time 1: request 0 gets 3 full blocks and 1 partial */
    CHECK(NAME("r0 admit"), sim_pool_admit(&p, &r0, 15, &e) == 0 && r0.hit_tokens == 0);
    CHECK(NAME("r0 blocks 0-3"), blocks_are(&r0, (uint32_t[]){0, 1, 2, 3}, 4));
    /* time 2: block 3 fills and is cached; decoding goes on into block 4 */
    CHECK(NAME("r0 decode"), sim_pool_grow(&p, &r0, 16, &e) == 0 &&
                             sim_pool_grow(&p, &r0, 17, &e) == 0);
    CHECK(NAME("r0 blocks 0-4"), blocks_are(&r0, (uint32_t[]){0, 1, 2, 3, 4}, 5));
    CHECK(NAME("block 3 cached"), p.blk[3].hashed && !p.blk[4].hashed);
    /* time 3: request 1 hits blocks 0 and 1, and gets 5 and 6 */
    CHECK(NAME("r1 admit"), sim_pool_admit(&p, &r1, 14, &e) == 0 && r1.hit_tokens == 8);
    CHECK(NAME("r1 blocks 0 1 5 6"), blocks_are(&r1, (uint32_t[]){0, 1, 5, 6}, 4));
    CHECK(NAME("shared ref_cnt 2"), p.blk[0].ref_cnt == 2 && p.blk[1].ref_cnt == 2);
    /* time 4: request 0 finishes: 4 3 2 freed in reverse; 0 and 1 still held */
    sim_pool_free(&p, &r0);
    if (unhashed_to_tail)
        CHECK(NAME("queue after r0"), queue_is(&p, (uint32_t[]){7, 8, 9, 4, 3, 2}, 6));
    else
        CHECK(NAME("queue after r0"), queue_is(&p, (uint32_t[]){4, 7, 8, 9, 3, 2}, 6));
    /* time 5: request 1 finishes */
    sim_pool_free(&p, &r1);
    if (unhashed_to_tail)
        CHECK(NAME("queue 7 8 9 4 3 2 6 5 1 0"),
              queue_is(&p, (uint32_t[]){7, 8, 9, 4, 3, 2, 6, 5, 1, 0}, 10));
    else
        CHECK(NAME("queue 6 4 7 8 9 3 2 5 1 0"),
              queue_is(&p, (uint32_t[]){6, 4, 7, 8, 9, 3, 2, 5, 1, 0}, 10));
    /* time 6: request 2 hits 0 1 2 (lazily kept), then pops 5 blocks; at most
     * 8 blocks were ever held at once (7 by requests 0 and 1, then 8) */
    CHECK(NAME("r2 admit"), sim_pool_admit(&p, &r2, 29, &e) == 0 && r2.hit_tokens == 12);
    if (unhashed_to_tail) {
        CHECK(NAME("r2 blocks 0 1 2 7 8 9 4 3"),
              blocks_are(&r2, (uint32_t[]){0, 1, 2, 7, 8, 9, 4, 3}, 8));
        CHECK(NAME("queue 6 5 left"), queue_is(&p, (uint32_t[]){6, 5}, 2));
        CHECK(NAME("one eviction (block 3)"), p.evictions == 1);
    } else {
        CHECK(NAME("r2 blocks 0 1 2 6 4 7 8 9"),
              blocks_are(&r2, (uint32_t[]){0, 1, 2, 6, 4, 7, 8, 9}, 8));
        CHECK(NAME("queue 3 5 left"), queue_is(&p, (uint32_t[]){3, 5}, 2));
        CHECK(NAME("no eviction"), p.evictions == 0);
    }
    sim_pool_free(&p, &r2);
    CHECK(NAME("all free"), p.n_free == 10 && p.in_use == 0 && p.peak == 8);
    sim_pool_destroy(&p);
#undef NAME
}

static kvp_sim_result run(const char *spec, uint32_t bs, uint64_t blocks)
{
    kvp_workload w;
    kvp_sim_config c;
    kvp_sim_result r;
    kvp_error e;
    memset(&r, 0xff, sizeof r);
    kvp_sim_defaults(&c);
    c.block_size = bs;
    c.num_blocks = blocks;
    if (kvp_workload_synthetic(spec, bs, &w, &e) == 0) {
        if (kvp_sim_run(&w, &c, &r, &e))
            memset(&r, 0xff, sizeof r);
        kvp_workload_free(&w);
    }
    return r;
}

/* ---- a randomized cross-check against the obvious implementation ---- */

/* The same replay done by linear scans: a lookup takes the hashed block
 * cached first, allocation takes the free block with the smallest queue
 * position, and a freed block gets a position past the tail (cached) or
 * before the head (uncached). */
typedef struct ref_block {
    uint64_t hash, seq;
    int64_t pos;
    int hashed, ref;
} ref_block;

static uint64_t ref_replay(const kvp_workload *w, uint32_t n, uint64_t *evictions)
{
    ref_block b[64] = {{0}};
    uint32_t held[64];
    int64_t head = 0, tail = n;
    uint64_t hits = 0, bs = w->block_size, seq = 0;
    for (uint32_t i = 0; i < n; i++)
        b[i].pos = i;
    for (size_t r = 0; r < w->n_req; r++) {
        const kvp_sim_request *q = &w->req[r];
        const uint64_t *h = w->hashes + q->hash_off;
        uint64_t kv = q->prompt_tokens + (q->output_tokens ? q->output_tokens - 1 : 0);
        uint64_t need = (kv + bs - 1) / bs, k = 0;
        if (need > n - 1)
            continue;
        for (; k < (q->prompt_tokens - 1) / bs && k < q->n_hashes; k++) {
            uint32_t best = 0;
            for (uint32_t i = 1; i < n; i++)
                if (b[i].hashed && b[i].hash == h[k] && (!best || b[i].seq < b[best].seq))
                    best = i;
            if (!best)
                break;
            b[best].ref++;
            held[k] = best;
        }
        hits += k * bs;
        for (uint64_t j = k; j < need; j++) {
            uint32_t best = 0;
            for (uint32_t i = 1; i < n; i++)
                if (!b[i].ref && (!best || b[i].pos < b[best].pos))
                    best = i;
            *evictions += b[best].hashed;
            b[best].hashed = 0;
            b[best].ref = 1;
            held[j] = best;
        }
        for (uint64_t j = k; j < kv / bs && j < q->n_hashes; j++)
            b[held[j]].hash = h[j], b[held[j]].hashed = 1, b[held[j]].seq = seq++;
        for (uint64_t j = need; j-- > 0;)
            if (--b[held[j]].ref == 0)
                b[held[j]].pos = b[held[j]].hashed ? tail++ : --head;
    }
    return hits;
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(uint64_t n)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return rng_state % n;
}

/* Requests that copy a random prefix of an earlier one's hashes (so a
 * lookup can stop early and a later block be cached twice), with fewer
 * hashes than full blocks at random (output blocks uncached, as Mooncake). */
static void random_workload(kvp_workload *w, kvp_sim_request *req, uint64_t *hashes)
{
    static uint64_t fresh = 1000;
    memset(w, 0, sizeof *w);
    w->req = req, w->hashes = hashes, w->block_size = 1 + (uint32_t)rnd(4);
    snprintf(w->name, sizeof w->name, "random");
    for (size_t r = 0; r < 40; r++) {
        kvp_sim_request *q = &req[r];
        q->prompt_tokens = 1 + rnd(10 * w->block_size);
        q->output_tokens = rnd(3 * w->block_size);
        q->hash_off = w->n_hashes;
        uint64_t full = (q->prompt_tokens + q->output_tokens) / w->block_size;
        q->n_hashes = (size_t)(rnd(2) ? full : rnd(full + 1));
        const kvp_sim_request *par = r ? &req[rnd(r)] : NULL;
        uint64_t share = par ? rnd(par->n_hashes + 1) : 0;
        for (size_t i = 0; i < q->n_hashes; i++)
            hashes[w->n_hashes++] = i < share ? hashes[par->hash_off + i] : fresh++;
        w->n_req++;
    }
}

static void cross_check(void)
{
    kvp_sim_request req[40];
    uint64_t hashes[40 * 14];
    int same = 1;
    for (int t = 0; t < 3000 && same; t++) {
        kvp_workload w;
        kvp_sim_config c;
        kvp_sim_result r;
        kvp_error e;
        uint64_t ev = 0;
        random_workload(&w, req, hashes);
        kvp_sim_defaults(&c);
        c.block_size = w.block_size;
        c.num_blocks = 2 + rnd(40);
        uint64_t hits = ref_replay(&w, (uint32_t)c.num_blocks, &ev);
        same = kvp_sim_run(&w, &c, &r, &e) == 0 && r.hit_tokens == hits && r.evictions == ev;
        if (!same)
            printf("# trial %d: %llu blocks of %u: hits %llu vs %llu, evictions %llu vs %llu\n",
                   t, (unsigned long long)c.num_blocks, c.block_size,
                   (unsigned long long)r.hit_tokens, (unsigned long long)hits,
                   (unsigned long long)r.evictions, (unsigned long long)ev);
    }
    CHECK("3,000 random replays match the linear-scan reference", same);
}

/* The step-by-step calls (sim_pool_lookup, sim_pool_allocate) on 5 usable
 * blocks of 4.  Request a (hashes 1 2 3) allocates its 10-token prompt in
 * two chunks, 6 then 10 tokens: block 0 is cached after the first chunk
 * (6 tokens: one full block), block 1 after the second; the partial third
 * block is not.  Request b (hashes 1 2 9, 12 tokens) looks up: 2 blocks
 * (at most (12 - 1) / 4 = 2), none in the free queue (a holds them).  Its
 * gate for 12 tokens needs 1 fresh block, 2 free: admitted.  After a is
 * freed (reverse order: its unhashed block 3 to the head, 2 and 1 stay
 * held by b), c (hashes 1 2) asks for 12 of its 24 tokens: its gate needs
 * 6 - 2 hit = 4 blocks, 2 free: refused with nothing changed; without the
 * gate the chunk fits (1 fresh block). */
static void step_calls(void)
{
    static const uint64_t ha[] = {1, 2, 3}, hb[] = {1, 2, 9}, hc[] = {1, 2};
    uint32_t ba[8], bb[8], bc[8];
    sim_req a = {.hashes = ha, .n_hashes = 3, .blocks = ba, .cap = 8};
    sim_req b = {.hashes = hb, .n_hashes = 3, .blocks = bb, .cap = 8};
    sim_req c = {.hashes = hc, .n_hashes = 2, .blocks = bc, .cap = 8};
    sim_pool p;
    kvp_error e;
    CHECK("step: pool", sim_pool_init(&p, 6, 4, 1, 0, &e) == 0 && p.usable == 5);
    sim_hit h = sim_pool_lookup(&p, &a, 10);
    CHECK("step: a misses", h.blocks == 0 && h.in_queue == 0);
    CHECK("step: a's first chunk", sim_pool_allocate(&p, &a, &h, 6, 10, &e) == 0 &&
                                       blocks_are(&a, (uint32_t[]){1, 2}, 2) &&
                                       p.blk[1].hashed && !p.blk[2].hashed);
    CHECK("step: a's second chunk", sim_pool_allocate(&p, &a, NULL, 10, 0, &e) == 0 &&
                                        blocks_are(&a, (uint32_t[]){1, 2, 3}, 3) &&
                                        p.blk[2].hashed && !p.blk[3].hashed && p.n_free == 2);
    h = sim_pool_lookup(&p, &b, 12);
    CHECK("step: b hits 2 held blocks", h.blocks == 2 && h.in_queue == 0 && p.n_free == 2);
    CHECK("step: b admitted past its hit",
          sim_pool_allocate(&p, &b, &h, 12, 12, &e) == 0 &&
              blocks_are(&b, (uint32_t[]){1, 2, 4}, 3) && b.hit_tokens == 8 &&
              p.blk[1].ref_cnt == 2 && p.blk[4].hashed && p.n_free == 1);
    sim_pool_free(&p, &a);
    CHECK("step: a freed, its partial block first", queue_is(&p, (uint32_t[]){3, 5}, 2));
    h = sim_pool_lookup(&p, &c, 24);
    CHECK("step: c's gate refuses, nothing taken",
          h.blocks == 2 && sim_pool_allocate(&p, &c, &h, 12, 24, &e) == 1 && c.n_blocks == 0 &&
              p.n_free == 2 && p.blk[1].ref_cnt == 1);
    CHECK("step: c's chunk alone fits without the gate",
          sim_pool_allocate(&p, &c, &h, 12, 0, &e) == 0 &&
              blocks_are(&c, (uint32_t[]){1, 2, 3}, 3) && p.n_free == 1);
    sim_pool_free(&p, &b);
    sim_pool_free(&p, &c);
    CHECK("step: all free", p.n_free == 5 && p.in_use == 0);
    sim_pool_destroy(&p);
}

/* The generators number their passes: cyclic's R passes over D documents,
 * grouped's K rounds in cyclic order (one pass in grouped order). */
static void passes(void)
{
    kvp_workload w;
    kvp_error e;
    int ok = kvp_workload_synthetic("cyclic:4,64,3", 16, &w, &e) == 0 && w.n_req == 12;
    for (size_t i = 0; ok && i < w.n_req; i++)
        ok = w.req[i].pass == i / 4;
    CHECK("passes: cyclic 4 documents x 3 passes", ok);
    kvp_workload_free(&w);
    ok = kvp_workload_synthetic("grouped:3,2,64,16", 16, &w, &e) == 0 && w.n_req == 6;
    for (size_t i = 0; ok && i < w.n_req; i++)
        ok = w.req[i].pass == i / 3;
    CHECK("passes: grouped in cyclic order, a pass per round", ok);
    kvp_workload_free(&w);
    ok = kvp_workload_synthetic("grouped:3,2,64,16,0,grouped", 16, &w, &e) == 0;
    for (size_t i = 0; ok && i < w.n_req; i++)
        ok = w.req[i].pass == 0;
    CHECK("passes: grouped order is one pass", ok);
    kvp_workload_free(&w);
}

int main(void)
{
    passes();
    step_calls();
    cross_check();

    design_doc_example(1);
    design_doc_example(0);

    /* The null block: vLLM pops block 0 first, so 10 blocks give 9. */
    sim_pool p;
    kvp_error e;
    uint32_t q[16];
    CHECK("null block never allocated", sim_pool_init(&p, 10, 4, 1, 0, &e) == 0 && p.usable == 9 &&
                                            sim_pool_queue(&p, q, 16) == 9 && q[0] == 1);
    sim_pool_destroy(&p);

    /* The last-token rule: a 16-token prompt fully cached in 4-token blocks
     * hits only floor(15/4) = 3 blocks. */
    kvp_sim_result r = run("shared-prefix:2,16,0", 4, 64);
    CHECK("last prompt token never a hit", r.hit_tokens == 12 && r.computed_tokens == 20);

    /* DESIGN §4: 16K shared prefix, 32 requests, 256-token tails: 24,576. */
    r = run("shared-prefix:32,16384,256", 16, 25002);
    CHECK("shared prefix 16K x 32: 24,576 computed", r.computed_tokens == 24576 &&
                                                       r.prompt_tokens == 532480);
    /* With no tails, the rule costs each later request its last block:
     * 16,384 + 31 x 16 = 16,880. */
    r = run("shared-prefix:32,16384,0", 16, 25002);
    CHECK("shared prefix without tails: 16,880 computed", r.computed_tokens == 16880);

    /* traces-and-hitrates.md §4.3: cyclic 64 x (128 + 8) blocks, C usable
     * blocks (num_blocks = C + 1): 0 at C <= 8,568, then 15,360 hit tokens
     * per extra block, up to 0.882 at C = 8,696. */
    CHECK("cliff: C 8,568 -> 0", run("grouped:64,16,2048,128", 16, 8569).hit_tokens == 0);
    CHECK("cliff: C 8,632 -> 64 x 15,360",
          run("grouped:64,16,2048,128", 16, 8633).hit_tokens == 983040);
    CHECK("cliff: C 8,696 -> 0.882",
          run("grouped:64,16,2048,128", 16, 8697).hit_tokens == 1966080);
    CHECK("grouped order: 0.882 at C = 136",
          run("grouped:64,16,2048,128,0,grouped", 16, 137).hit_tokens == 1966080);

    /* DESIGN §5: 64 x (8,192 + 256) twice through 400,032 tokens: no reuse;
     * the same argument as §4.3 puts full reuse at C >= 63 x 528 + 512. */
    CHECK("cyclic 64 docs, 400,032 tokens: 0",
          run("cyclic:64,8192,2,256", 16, 25002).hit_tokens == 0);
    CHECK("cyclic 64 docs, C 33,264: 0", run("cyclic:64,8192,2,256", 16, 33265).hit_tokens == 0);
    CHECK("cyclic 64 docs, C 33,776: full",
          run("cyclic:64,8192,2,256", 16, 33777).hit_tokens == 64 * 8192);

    /* A request larger than the pool is a miss and leaves the pool alone. */
    r = run("shared-prefix:3,64,0", 4, 10);
    CHECK("oversized counted as miss", r.oversized == 3 && r.hit_tokens == 0 &&
                                           r.computed_tokens == 192 && r.peak_blocks == 0);

    kvp_workload w;
    CHECK("unknown workload", kvp_workload_synthetic("zipf:1,2", 16, &w, &e) != 0 &&
                                  e.code == KVP_EUSAGE);
    CHECK("bad field", kvp_workload_synthetic("cyclic:4,x,2", 16, &w, &e) != 0 &&
                           strstr(e.msg, "field 2"));
    CHECK("empty workload", kvp_workload_synthetic("cyclic:0,16,2", 16, &w, &e) != 0);
    return check_failures != 0;
}
