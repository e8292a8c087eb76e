/* test_sched_radix.c - SGLang's scheduler (serving-sim-rules.md 2.6-2.7) on
 * cases worked out by hand: prefill before decode and its times at 1 ms a
 * step, LPM against FCFS, a retraction step by step (and none in a large
 * pool), and the shared-prefix and cyclic workloads with and without reuse.
 * The derivations are in the comments beside each check. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "serve/sched_radix.h"

/* a hand-made workload: request i has prompt[i] tokens whose full blocks
 * are named by ids[i] (0-terminated), out[i] outputs, arriving at[i] s */
typedef struct hand {
    kvp_sim_request req[8];
    uint64_t hashes[64];
    double at[8];
    kvp_workload w;
} hand;

static void hand_add(hand *h, uint64_t prompt, uint64_t out, double at, const uint64_t *ids)
{
    size_t i = h->w.n_req++, n = 0;
    h->req[i] = (kvp_sim_request){.prompt_tokens = prompt, .output_tokens = out,
                                  .hash_off = h->w.n_hashes};
    while (ids && ids[n])
        h->hashes[h->w.n_hashes++] = ids[n++];
    h->req[i].n_hashes = n;
    h->at[i] = at;
}

static void hand_init(hand *h, uint32_t bs)
{
    h->w = (kvp_workload){.req = h->req, .hashes = h->hashes, .block_size = bs, .name = "hand"};
}

static serve_config config(uint32_t bs, uint64_t pool)
{
    return (serve_config){.block_size = bs, .pool_tokens = pool, .prefix_caching = 1};
}

static double one_ms(void *arg, const serve_batch *b)
{
    (void)arg, (void)b;
    return 0.001;
}

/* the steps a replay ran: size and the first slot's (p, q) */
typedef struct trace {
    size_t n, size[64];
    uint64_t p[64], q[64];
} trace;

static double record(void *arg, const serve_batch *b)
{
    trace *t = arg;
    if (t->n < 64) {
        t->size[t->n] = b->n;
        t->p[t->n] = b->slot[0].p;
        t->q[t->n] = b->slot[0].q;
        t->n++;
    }
    return 0.001;
}

static int near(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

/* A and B (8 tokens, 3 outputs) at 0, C at 1.5 ms.  Step 1 prefills A and
 * B (both fit: 8 + 3 each, pool 1000) -> their first token at 1 ms.  Step 2
 * decodes them (2 ms).  C has arrived: step 3 is its prefill (prefill first)
 * -> C's first token at 3 ms, TTFT 1.5 ms.  Step 4 decodes all three: A and
 * B end with tokens at 1, 2, 4 ms (TPOT 1.5 ms); C's tokens at 3, 4, 5. */
static void times_by_hand(void)
{
    hand h;
    hand_init(&h, 4);
    hand_add(&h, 8, 3, 0, (const uint64_t[]){1, 2, 0});
    hand_add(&h, 8, 3, 0, (const uint64_t[]){3, 4, 0});
    hand_add(&h, 8, 3, 0.0015, (const uint64_t[]){5, 6, 0});
    serve_config c = config(4, 1000);
    serve_result r;
    kvp_error err;
    int rc = serve_radix_run(&h.w, h.at, &c, one_ms, NULL, &r, &err);
    CHECK("times: runs", rc == 0);
    CHECK("times: 5 steps, 5 ms from the first arrival", r.steps == 5 && near(r.wall_seconds, 0.005));
    CHECK("times: TTFT 1, 1, 1.5 ms", near(r.ttft.p50, 0.001) && near(r.ttft.p99, 0.0015) &&
                                          near(r.ttft.mean, 0.0035 / 3));
    CHECK("times: TPOT 1.5, 1.5, 1 ms", near(r.tpot.p50, 0.0015) && near(r.tpot.mean, 0.004 / 3));
    CHECK("times: throughputs over 5 ms", near(r.prompt_tps, 24 / 0.005) &&
                                              near(r.output_tps, 9 / 0.005));
    CHECK("times: 24 prompt tokens computed, no hits, no retraction",
          r.prefill_tokens_computed == 24 && r.hit_tokens == 0 && r.preemptions == 0);
    /* peak: 3 x (8 prompt + 2 decoded) = 30 tokens, 7.5 blocks -> 8 */
    CHECK("times: peak 30 tokens = 8 blocks of 4", r.peak_blocks == 8);
    /* no cost model: steps take 0 s, so A and B are done (3 steps) at 0 and
     * C runs its 3 alone at its arrival, 1.5 ms */
    rc = serve_radix_run(&h.w, h.at, &c, NULL, NULL, &r, &err);
    CHECK("times: no cost model, 0 s a step", rc == 0 && r.steps == 6 &&
                                                  near(r.wall_seconds, 0.0015) && r.ttft.p99 == 0);
}

/* W (ids 1-4, one output) warms the tree, then R1 (ids 5-8) and R2 (ids 1-4
 * and one tail token) arrive together at 1 s, one running at a time.  FCFS
 * prefills R1 first (p 0, q 16); LPM sorts R2 first: its 16 tokens are
 * cached (p 16, q 1). */
static void lpm_and_fcfs(void)
{
    for (int lpm = 0; lpm < 2; lpm++) {
        hand h;
        hand_init(&h, 4);
        hand_add(&h, 16, 1, 0, (const uint64_t[]){1, 2, 3, 4, 0});
        hand_add(&h, 16, 1, 1.0, (const uint64_t[]){5, 6, 7, 8, 0});
        hand_add(&h, 17, 1, 1.0, (const uint64_t[]){1, 2, 3, 4, 0});
        serve_config c = config(4, 1000);
        c.max_num_seqs = 1;
        c.radix_lpm = lpm;
        trace t = {0};
        serve_result r;
        kvp_error err;
        int rc = serve_radix_run(&h.w, h.at, &c, record, &t, &r, &err);
        CHECK("lpm/fcfs: three prefill steps, one request each",
              rc == 0 && t.n == 3 && t.size[1] == 1 && t.size[2] == 1);
        if (lpm)
            CHECK("lpm: the cached R2 first (p 16, q 1), then R1 (p 0, q 16)",
                  t.p[1] == 16 && t.q[1] == 1 && t.p[2] == 0 && t.q[2] == 16);
        else
            CHECK("fcfs: R1 first (p 0, q 16), then R2 (p 16, q 1)",
                  t.p[1] == 0 && t.q[1] == 16 && t.p[2] == 16 && t.q[2] == 1);
        CHECK("lpm/fcfs: 16 hit tokens either way", r.hit_tokens == 16);
    }
}

/* In-batch deduplication.  X1 and X2 share a 64-token prompt (16 blocks of
 * 4) nobody has computed, Y (8 tokens) differs; all at 0 in that order, one
 * output each, two per batch.  LPM: every match is 0 (<= 32), so each is
 * checked against the waiting requests before it: X2 shares 64 >= 32 with
 * X1 and goes to the back -> step 1 runs X1 and Y, step 2 X2 with its
 * prompt cached up to the last token: 63 hit, 1 computed (64 + 8 + 1 = 73).
 * FCFS: X1 and X2 together, both computing all 64 (64 + 64 + 8 = 136). */
static void in_batch_dedup(void)
{
    static const uint64_t x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0};
    for (int lpm = 0; lpm < 2; lpm++) {
        hand h;
        hand_init(&h, 4);
        hand_add(&h, 64, 1, 0, x);
        hand_add(&h, 64, 1, 0, x);
        hand_add(&h, 8, 1, 0, (const uint64_t[]){50, 51, 0});
        serve_config c = config(4, 1000);
        c.max_num_seqs = 2;
        c.radix_lpm = lpm;
        serve_result r;
        kvp_error err;
        int rc = serve_radix_run(&h.w, h.at, &c, one_ms, NULL, &r, &err);
        if (lpm)
            CHECK("dedup, lpm: X2 waits for X1's prefix: 63 hit, 73 computed",
                  rc == 0 && r.steps == 2 && r.hit_tokens == 63 &&
                      r.prefill_tokens_computed == 73);
        else
            CHECK("dedup, fcfs: X1 and X2 both compute 64: 136 computed",
                  rc == 0 && r.steps == 2 && r.hit_tokens == 0 &&
                      r.prefill_tokens_computed == 136);
    }
}

/* A, B, C: 8-token prompts (distinct blocks), 50 outputs, all at 0; pool 150.
 * Step 1: A admitted (8 + 50 = 58 < 150), B (58 < 150 - 58 = 92), C refused
 * (58 >= 34).  Step 2: A and B running reserve 49 x 0.7 each = 68.6; free
 * 150 - 16 = 134; C: 58 < 65.4, prefilled.  All hold 8 tokens and one output.
 * Decodes need 3 tokens a step: free before step s is 126 - 3(s - 3), so
 * steps 3..44 run (gen 43 each) and step 45 finds none: C, the last of equal
 * (outputs, input), is retracted (its 42 decoded tokens freed, 42 >= 2 x 20).
 * A and B decode steps 45..51 (gen 44..50) and finish; C, never admitted
 * meanwhile (rem_total stays under its 43 + 7), is re-prefilled in step 52:
 * its 8 prompt tokens still cached, 43 = 8 + 43 - 8 computed, and decodes
 * steps 53..58.  Prefill computed 8 + 8 + 8 + 43 = 67. */
static void retraction(void)
{
    hand h;
    hand_init(&h, 4);
    hand_add(&h, 8, 50, 0, (const uint64_t[]){1, 2, 0});
    hand_add(&h, 8, 50, 0, (const uint64_t[]){3, 4, 0});
    hand_add(&h, 8, 50, 0, (const uint64_t[]){5, 6, 0});
    serve_config c = config(4, 150);
    serve_result r;
    kvp_error err;
    int rc = serve_radix_run(&h.w, h.at, &c, one_ms, NULL, &r, &err);
    CHECK("retraction: runs", rc == 0);
    CHECK("retraction: exactly one, at step 45", r.preemptions == 1);
    CHECK("retraction: 58 steps", r.steps == 58 && near(r.wall_seconds, 0.058));
    CHECK("retraction: 67 prefill tokens, the re-prefill's 43 included",
          r.prefill_tokens_computed == 67);
    CHECK("retraction: first admissions found nothing cached", r.hit_tokens == 0);
    CHECK("retraction: all 150 outputs", r.requests == 3 && r.output_tokens == 150);
    /* a pool of 1,000: all three in step 1, 49 decodes, nobody retracted */
    c.pool_tokens = 1000;
    rc = serve_radix_run(&h.w, h.at, &c, one_ms, NULL, &r, &err);
    CHECK("large pool: no retraction, 50 steps", rc == 0 && r.preemptions == 0 && r.steps == 50);
    /* without the cache the re-prefill recomputes the prompt too: 8 + 43 */
    c.pool_tokens = 150;
    c.prefix_caching = 0;
    rc = serve_radix_run(&h.w, h.at, &c, one_ms, NULL, &r, &err);
    CHECK("no cache: one retraction, 75 tokens computed",
          rc == 0 && r.preemptions == 1 && r.prefill_tokens_computed == 75);
}

/* a request that cannot fit alone (prompt + output >= pool) is skipped */
static void too_big(void)
{
    hand h;
    hand_init(&h, 4);
    hand_add(&h, 8, 2, 0, (const uint64_t[]){1, 2, 0});
    hand_add(&h, 96, 4, 0, NULL);
    serve_config c = config(4, 100);
    serve_result r;
    kvp_error err;
    int rc = serve_radix_run(&h.w, h.at, &c, one_ms, NULL, &r, &err);
    CHECK("too big: 96 + 4 >= 100 skipped, the other served",
          rc == 0 && r.requests == 1 && r.prompt_tokens == 8 && r.steps == 2);
    c.block_size = 16;
    CHECK("a block size other than the workload's is refused",
          serve_radix_run(&h.w, h.at, &c, one_ms, NULL, &r, &err) != 0);
}

static int run_synthetic(const char *spec, uint64_t pool, int caching, int lpm, serve_result *r)
{
    kvp_workload w;
    kvp_error err;
    if (kvp_workload_synthetic(spec, 16, &w, &err))
        return -1;
    double *at = calloc(w.n_req, sizeof *at);
    serve_config c = config(16, pool);
    c.prefix_caching = caching, c.radix_lpm = lpm;
    int rc = at ? serve_radix_run(&w, at, &c, one_ms, NULL, r, &err) : -1;
    free(at);
    kvp_workload_free(&w);
    return rc;
}

/* 32 x (16,384 shared + 256 unique), 64 outputs, at once, chunks of 8,192.
 * With the cache: request 0 is prefilled in chunks 8,192 + 8,192 + 256; the
 * others wait on the input budget (8,448 > 16,384 - 8,192) until the whole
 * prefix is in the tree, then each computes its 256: 16,640 + 31 x 256 =
 * 24,576, and 31 x 16,384 = 507,904 tokens hit.  Without: 32 x 16,640. */
static void shared_prefix(void)
{
    const char *spec = "shared-prefix:32,16384,256,64";
    serve_result on, off, lpm;
    CHECK("shared prefix: runs", run_synthetic(spec, 400032, 1, 0, &on) == 0 &&
                                     run_synthetic(spec, 400032, 0, 0, &off) == 0 &&
                                     run_synthetic(spec, 400032, 1, 1, &lpm) == 0);
    CHECK("shared prefix, cache: 24,576 prefill tokens", on.prefill_tokens_computed == 24576);
    CHECK("shared prefix, cache: 507,904 hit tokens",
          on.hit_tokens == 507904 && near(on.hit_rate, 507904.0 / 532480));
    CHECK("shared prefix, lpm: the same 24,576", lpm.prefill_tokens_computed == 24576);
    CHECK("shared prefix, no cache: 532,480 prefill tokens, no hits",
          off.prefill_tokens_computed == 532480 && off.hit_tokens == 0);
    CHECK("shared prefix: the cache takes fewer steps", on.steps < off.steps);
}

/* 64 documents of 8,192 + 256 tokens, twice, all at once (working set
 * 64 x 8,448 = 540,672 tokens).  In 400,032 tokens LRU under FCFS has
 * evicted each document before the second pass asks for it: no hits.  With
 * 600,000 tokens all documents stay: the second pass hits 64 x 8,192. */
static void cyclic(void)
{
    const char *spec = "cyclic:64,8192,2,256";
    serve_result small, big;
    CHECK("cyclic: runs", run_synthetic(spec, 400032, 1, 0, &small) == 0 &&
                              run_synthetic(spec, 600000, 1, 0, &big) == 0);
    CHECK("cyclic, 400,032 tokens: no hits", small.hit_tokens == 0);
    CHECK("cyclic, 600,000 tokens: the second pass hits 524,288", big.hit_tokens == 524288);
    CHECK("cyclic, 600,000 tokens: that much less computed",
          big.prefill_tokens_computed == small.prefill_tokens_computed - 524288);
}

/* an 80 GiB card with 69e9 bytes free after the weights, fraction 0.88,
 * Qwen3-8B's 8 x 128 x 36 x 2 x 2 = 147,456 bytes a token:
 * (69e9 - 85,899,345,920 x 0.12) / 147,456 = 398,031.1 -> 398,031 */
static void pool_size(void)
{
    uint64_t n = 0;
    kvp_error err;
    CHECK("pool: 398,031 tokens", serve_radix_pool_tokens(85899345920ull, 69000000000ull, 0.88,
                                                          147456, &n, &err) == 0 &&
                                      n == 398031);
    CHECK("pool: nothing left is refused",
          serve_radix_pool_tokens(85899345920ull, 5000000000ull, 0.88, 147456, &n, &err) != 0);
    CHECK("pool: a fraction above 1 is refused",
          serve_radix_pool_tokens(85899345920ull, 69000000000ull, 1.5, 147456, &n, &err) != 0);
}

/* The first 50 Mooncake conversation requests (tests/data/sim/SOURCES.md:
 * all begin with block 0, nothing else shared), at their timestamps, in an
 * unbounded pool.  Requests 1 and 2 arrive together at 0 and share step 1
 * (6,758 tokens, then 7,322 cut to the 1,434 left of the 8,192 chunk)
 * before block 0 is in the tree; request 3 (also at 0) comes in step 2,
 * after request 1 inserted it.  So 48 of the 50 hit one 512-token block. */
static void mooncake_head(void)
{
    kvp_workload w;
    kvp_error err;
    serve_result r;
    if (kvp_workload_mooncake("tests/data/sim/mooncake-conversation-50.jsonl", &w, &err)) {
        CHECK("mooncake: the trace loads", 0);
        return;
    }
    double *at = calloc(w.n_req, sizeof *at);
    serve_config c = config(512, 100000000);
    int rc = at ? serve_arrivals(&w, SERVE_ARRIVE_TRACE, 0, 0, at, &err) : -1;
    if (!rc)
        rc = serve_radix_run(&w, at, &c, one_ms, NULL, &r, &err);
    CHECK("mooncake: 50 served, 48 x 512 = 24,576 hit tokens",
          rc == 0 && r.requests == 50 && r.hit_tokens == 24576 && r.preemptions == 0);
    CHECK("mooncake: prompt tokens 601,420, outputs 18,175 (SOURCES.md)",
          rc == 0 && r.prompt_tokens == 601420 && r.output_tokens == 18175);
    free(at);
    kvp_workload_free(&w);
}

int main(void)
{
    mooncake_head();
    pool_size();
    times_by_hand();
    lpm_and_fcfs();
    in_batch_dedup();
    retraction();
    too_big();
    shared_prefix();
    cyclic();
    return check_failures != 0;
}
