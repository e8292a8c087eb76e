/* test_sched_vllm.c - vLLM v1's scheduler replay (lib/serve/sched_vllm.c)
 * on small cases worked out step by step by hand from
 * serving-sim-rules.md §1, and the two acceptance shapes at token
 * level.  A recording cost function writes each step's batch as
 * "p+q" per slot ('*' when the slot samples), steps separated by '|', so a
 * test states the whole schedule it expects. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "serve/sched_vllm.h"

typedef struct rec {
    char log[1024];
    double step_s;
} rec;

static double record(void *arg, const serve_batch *b)
{
    rec *r = arg;
    size_t n = strlen(r->log);
    if (n)
        n += (size_t)snprintf(r->log + n, sizeof r->log - n, "|");
    for (size_t i = 0; i < b->n && n < sizeof r->log; i++)
        n += (size_t)snprintf(r->log + n, sizeof r->log - n, "%s%llu+%llu%s", i ? " " : "",
                              (unsigned long long)b->slot[i].p,
                              (unsigned long long)b->slot[i].q, b->slot[i].samples ? "*" : "");
    return r->step_s;
}

/* A hand-made workload: up to 8 requests, their block hashes given inline. */
typedef struct hand {
    kvp_sim_request req[8];
    uint64_t hashes[64];
    double at[8];
    kvp_workload w;
} hand;

static void hand_init(hand *h, uint32_t bs)
{
    memset(h, 0, sizeof *h);
    h->w.req = h->req;
    h->w.hashes = h->hashes;
    h->w.block_size = bs;
    snprintf(h->w.name, sizeof h->w.name, "hand");
}

static void hand_add(hand *h, uint64_t prompt, uint64_t out, double at, const uint64_t *hs,
                     size_t n_hs)
{
    kvp_sim_request *q = &h->req[h->w.n_req];
    q->prompt_tokens = prompt;
    q->output_tokens = out;
    q->hash_off = h->w.n_hashes;
    q->n_hashes = n_hs;
    if (n_hs)
        memcpy(h->hashes + h->w.n_hashes, hs, n_hs * sizeof *hs);
    h->w.n_hashes += n_hs;
    h->at[h->w.n_req++] = at;
}

static serve_config small(uint64_t num_blocks, uint32_t bs, uint32_t budget)
{
    return (serve_config){.num_blocks = num_blocks, .block_size = bs,
                          .max_num_batched_tokens = budget, .max_num_seqs = 256,
                          .prefix_caching = 1};
}

static int run(hand *h, const serve_config *c, rec *r, serve_result *o, serve_vllm_extra *x)
{
    kvp_error e;
    r->log[0] = 0;
    int rc = serve_vllm_run_x(&h->w, h->at, c, record, r, o, x, &e);
    if (rc)
        printf("# %s\n", e.msg);
    return rc;
}

static int near(double a, double b)
{
    return fabs(a - b) < 1e-12;
}

/* One prompt of 20 tokens, budget 8: chunks of 8, 8, 4; the chunk that
 * completes the prompt samples the first token, then one decode.  At 1 ms
 * per step: TTFT 3 ms, finish at 4 ms, TPOT (4 - 3) / 1 = 1 ms. */
static void chunked_prefill(void)
{
    hand h;
    rec r = {.step_s = 0.001};
    serve_result o;
    hand_init(&h, 4);
    hand_add(&h, 20, 2, 0, NULL, 0);
    serve_config c = small(100, 4, 8);
    CHECK("chunked: runs", run(&h, &c, &r, &o, NULL) == 0);
    CHECK("chunked: 8, 8, 4 then a decode", !strcmp(r.log, "0+8|8+8|16+4*|20+1*"));
    CHECK("chunked: 4 steps, 20 prefill, 2 outputs",
          o.steps == 4 && o.prefill_tokens_computed == 20 && o.output_tokens == 2);
    CHECK("chunked: TTFT 3 ms, TPOT 1 ms, wall 4 ms",
          near(o.ttft.mean, 0.003) && near(o.tpot.mean, 0.001) && near(o.wall_seconds, 0.004));
    CHECK("chunked: 6 blocks at peak (20 + 1 tokens of 4)", o.peak_blocks == 6);
}

/* A (12 prompt) and B (6) at once, budget 8.  Step 1: A's first chunk takes
 * the budget.  Step 2: running first, A's last 4 tokens, then B admitted
 * with the 4 left.  Step 3: A's decode (done), B's last 2 (first token).
 * Step 4: B's decode.  1 ms steps: A TTFT 2 ms, B 3 ms; TPOT 1 ms both;
 * wall 4 ms; 18 prompt tokens / 4 ms, 4 outputs / 4 ms. */
static void running_first(void)
{
    hand h;
    rec r = {.step_s = 0.001};
    serve_result o;
    hand_init(&h, 4);
    hand_add(&h, 12, 2, 0, NULL, 0);
    hand_add(&h, 6, 2, 0, NULL, 0);
    serve_config c = small(100, 4, 8);
    CHECK("order: runs", run(&h, &c, &r, &o, NULL) == 0);
    CHECK("order: the running chunk before a new admission",
          !strcmp(r.log, "0+8|8+4* 0+4|12+1* 4+2*|6+1*"));
    CHECK("order: TTFT mean 2.5 ms, p50 2 ms, p90 3 ms",
          near(o.ttft.mean, 0.0025) && near(o.ttft.p50, 0.002) && near(o.ttft.p90, 0.003));
    CHECK("order: TPOT 1 ms, wall 4 ms", near(o.tpot.p99, 0.001) && near(o.wall_seconds, 0.004));
    CHECK("order: throughput 4,500 prompt and 1,000 output tokens/s",
          fabs(o.prompt_tps - 4500) < 1e-6 && fabs(o.output_tps - 1000) < 1e-6);
}

/* The admission gate: 5 usable blocks of 4 (num_blocks 6, the null block
 * included).  A: 12 prompt, 3 outputs (14 tokens stored: 4 blocks).  B: 10
 * prompt.  Step 2: A holds 3 blocks, 2 free; B's first chunk (4 tokens, 1
 * block) would fit, but its whole prompt (3 blocks) does not: refused.
 * Step 3: A's decode takes a 4th block.  Step 4: A finishes; B only from
 * step 5. */
static void admission_gate(void)
{
    hand h;
    rec r = {.step_s = 0};
    serve_result o;
    hand_init(&h, 4);
    hand_add(&h, 12, 3, 0, NULL, 0);
    hand_add(&h, 10, 2, 0, NULL, 0);
    serve_config c = small(6, 4, 8);
    CHECK("gate: runs", run(&h, &c, &r, &o, NULL) == 0);
    CHECK("gate: B waits for a whole prompt's blocks",
          !strcmp(r.log, "0+8|8+4*|12+1*|13+1*|0+8|8+2*|10+1*"));
    CHECK("gate: no preemption, peak 4 blocks (A alone)", o.preemptions == 0 && o.peak_blocks == 4);
}

/* Preemption: 5 usable blocks of 4, budget 16.  A: 8 prompt (hashes a1 a2),
 * 6 outputs; B: 8 prompt (b1 b2), 4 outputs.
 *  1: both admitted, 2 blocks each, both sample; 1 block free.
 *  2: A's decode takes the last block; B needs one: running.pop() is B
 *     itself: preempted (its blocks b2, b1 to the free queue's tail,
 *     still hashed), front of waiting, and no admission this step.
 *  3-5: A decodes.  B (9 tokens now) hits b1 b2 (8 tokens) but the gate
 *     wants 3 blocks net: 1 fresh + 2 hits taken from the free queue > 2
 *     free: refused.
 *  6: A's decode at position 12 needs a 4th block: the free queue's head is
 *     b2's block, evicted.  A finishes and is freed.
 *  7: B hits b1 only (4 tokens), recomputes 4..8 (the last is its newest
 *     token: a decode) and samples; 8, 9: decodes.
 * Prefill computed: 8 + 8 + 4 recomputed = 20.  B's re-admission hit is
 * not in vLLM's hit rate: 0 hit tokens over 16 looked up. */
static void preemption(void)
{
    hand h;
    rec r = {.step_s = 0};
    serve_result o;
    serve_vllm_extra x;
    hand_init(&h, 4);
    hand_add(&h, 8, 6, 0, (uint64_t[]){101, 102}, 2);
    hand_add(&h, 8, 4, 0, (uint64_t[]){201, 202}, 2);
    serve_config c = small(6, 4, 16);
    CHECK("preempt: runs", run(&h, &c, &r, &o, &x) == 0);
    CHECK("preempt: the last admitted goes, comes back, recomputes from its hit",
          !strcmp(r.log, "0+8* 0+8*|8+1*|9+1*|10+1*|11+1*|12+1*|4+5*|9+1*|10+1*"));
    CHECK("preempt: counted once", o.preemptions == 1);
    CHECK("preempt: 20 prefill tokens computed", o.prefill_tokens_computed == 20);
    CHECK("preempt: the re-admission's hit is not counted",
          o.hit_tokens == 0 && x.lookup_tokens == 16 && o.hit_rate == 0);
    CHECK("preempt: 10 outputs, 9 steps", o.output_tokens == 10 && o.steps == 9);

    /* a pool that holds both: no preemption, A decodes 5 more steps */
    c = small(100, 4, 16);
    CHECK("big pool: runs", run(&h, &c, &r, &o, &x) == 0);
    CHECK("big pool: no preemption",
          o.preemptions == 0 && !strcmp(r.log, "0+8* 0+8*|8+1* 8+1*|9+1* 9+1*|10+1* 10+1*|"
                                                "11+1*|12+1*"));
    CHECK("big pool: 16 prefill tokens", o.prefill_tokens_computed == 16 && o.steps == 6);
}

/* Two 9-token prompts sharing their 2 full blocks (block 4), budget 16.  A
 * is admitted first and its blocks are cached as they are allocated, so B,
 * admitted in the same step, hits both (8 tokens) and computes its last
 * token only.  Hit rate 8 / 18.  Prefix caching off: no hits, B gets the 7
 * tokens left in step 1 and its last 2 in step 2; 18 computed. */
static void hits(void)
{
    hand h;
    rec r = {.step_s = 0};
    serve_result o;
    serve_vllm_extra x;
    hand_init(&h, 4);
    hand_add(&h, 9, 1, 0, (uint64_t[]){7, 8}, 2);
    hand_add(&h, 9, 1, 0, (uint64_t[]){7, 8}, 2);
    serve_config c = small(100, 4, 16);
    CHECK("hits: runs", run(&h, &c, &r, &o, &x) == 0);
    CHECK("hits: B starts at its hit", !strcmp(r.log, "0+9* 8+1*"));
    CHECK("hits: 8 of 18 tokens", o.hit_tokens == 8 && x.lookup_tokens == 18 &&
                                      near(o.hit_rate, 8.0 / 18.0));
    CHECK("hits: 10 prefill tokens computed", o.prefill_tokens_computed == 10);
    c.prefix_caching = 0;
    CHECK("caching off: runs", run(&h, &c, &r, &o, &x) == 0);
    CHECK("caching off: no hits, all 18 computed",
          !strcmp(r.log, "0+9* 0+7|7+2*") && o.hit_tokens == 0 && o.hit_rate == 0 &&
              o.prefill_tokens_computed == 18);

    /* a prompt of exactly 2 blocks recomputes its whole last block */
    hand_init(&h, 4);
    hand_add(&h, 8, 1, 0, (uint64_t[]){7, 8}, 2);
    hand_add(&h, 8, 1, 0, (uint64_t[]){7, 8}, 2);
    c.prefix_caching = 1;
    CHECK("hits: the last-token rule, whole blocks",
          run(&h, &c, &r, &o, &x) == 0 && !strcmp(r.log, "0+8* 4+4*") && o.hit_tokens == 4);
}

/* Async scheduling: 5 usable blocks of 4, budget 8.  A: 4 prompt, 2 outputs
 * (2 blocks); C: 4 prompt, 6 outputs (3 blocks); B: 7 prompt, 1 output.
 *  1: A and C admitted (1 block each), the budget spent.  2: both decode
 *     into a 2nd block (1 free); A finishes; B's gate (2 blocks) refuses.
 * Synchronous: A's blocks are back for step 3, B is admitted there.  Async:
 * step 3 is scheduled before step 2's output is processed, so B waits for
 * step 4.  At 1 ms a step: B's TTFT 3 ms vs 4 ms. */
static void async_lag(void)
{
    hand h;
    rec r = {.step_s = 0.001};
    serve_result o;
    hand_init(&h, 4);
    hand_add(&h, 4, 2, 0, NULL, 0);
    hand_add(&h, 4, 6, 0, NULL, 0);
    hand_add(&h, 7, 1, 0, NULL, 0);
    serve_config c = small(6, 4, 8);
    CHECK("sync: runs", run(&h, &c, &r, &o, NULL) == 0);
    CHECK("sync: A's blocks free for the next step",
          !strcmp(r.log, "0+4* 0+4*|4+1* 4+1*|5+1* 0+7*|6+1*|7+1*|8+1*"));
    /* TTFT: A 1, C 1, B 3 ms; wall: C's 6th token at 6 ms */
    CHECK("sync: TTFT p99 3 ms, wall 6 ms", near(o.ttft.p99, 0.003) && near(o.wall_seconds, 0.006));
    c.async_scheduling = 1;
    CHECK("async: runs", run(&h, &c, &r, &o, NULL) == 0);
    CHECK("async: the free counts one step late",
          !strcmp(r.log, "0+4* 0+4*|4+1* 4+1*|5+1*|6+1* 0+7*|7+1*|8+1*"));
    CHECK("async: B's TTFT 4 ms", near(o.ttft.p99, 0.004) && near(o.wall_seconds, 0.006));

    /* arrivals: B (4 prompt, 1 output) arrives at 1.5 ms while A decodes.
     * Synchronous: seen when step 3 is scheduled (2 ms), done at 3 ms.
     * Async: step 3 was scheduled at step 2's start (1 ms), so B waits
     * for step 4: done at 4 ms. */
    hand_init(&h, 4);
    hand_add(&h, 4, 4, 0, NULL, 0);
    hand_add(&h, 4, 1, 0.0015, NULL, 0);
    c = small(100, 4, 8);
    CHECK("arrival sync", run(&h, &c, &r, &o, NULL) == 0 &&
                              !strcmp(r.log, "0+4*|4+1*|5+1* 0+4*|6+1*") &&
                              near(o.ttft.p99, 0.0015));
    c.async_scheduling = 1;
    CHECK("arrival async: a step late", run(&h, &c, &r, &o, NULL) == 0 &&
                                            !strcmp(r.log, "0+4*|4+1*|5+1*|6+1* 0+4*") &&
                                            near(o.ttft.p99, 0.0025));
}

static double broken(void *arg, const serve_batch *b)
{
    (void)arg;
    (void)b;
    return -1;
}

/* Requests that can never run are refused, not looped on; a broken price
 * is an error. */
static void oversized(void)
{
    hand h;
    rec r = {.step_s = 0};
    serve_result o;
    serve_vllm_extra x;
    hand_init(&h, 4);
    hand_add(&h, 30, 1, 0, NULL, 0);  /* 30 tokens: 8 blocks > 5 usable */
    hand_add(&h, 8, 4, 0, NULL, 0);   /* 11 stored tokens: 3 blocks */
    hand_add(&h, 12, 10, 0, NULL, 0); /* 22 > max_model_len 20 */
    serve_config c = small(6, 4, 8);
    c.max_model_len = 20;
    CHECK("oversized: runs", run(&h, &c, &r, &o, &x) == 0);
    CHECK("oversized: two refused, one served",
          x.rejected == 2 && o.requests == 1 && o.prompt_tokens == 8 && o.output_tokens == 4);
    hand_init(&h, 4);
    hand_add(&h, 30, 1, 0, NULL, 0);
    CHECK("oversized: all refused, an empty run",
          run(&h, &c, &r, &o, &x) == 0 && x.rejected == 1 && o.steps == 0 && o.requests == 0);
    hand_add(&h, 8, 1, 0, NULL, 0);
    kvp_error e;
    CHECK("a negative step time is an error",
          serve_vllm_run(&h.w, h.at, &c, broken, NULL, &o, &e) != 0);
    c.block_size = 16;
    CHECK("a block size other than the workload's is refused",
          serve_vllm_run(&h.w, h.at, &c, NULL, NULL, &o, &e) != 0);
}

/* A simple linear step price: 10 ms a step plus 1/9,000 s a token (about
 * the A100's uncached prefill rate quoted in the issue). */
static double linear(void *arg, const serve_batch *b)
{
    (void)arg;
    return 0.010 + (double)b->tokens / 9000.0;
}

/* The shared-prefix shape at token level: 32 requests of 16,384
 * shared + 256 unique prompt tokens, 64 outputs, at once; the 400,032-token
 * pool (25,002 blocks of 16, the null block included), budget 8,192
 * (A100, LLM class), 256 sequences.  On: request 0 computes its prompt in
 * 8,192 + 8,192 + 256 tokens; in step 3 the other 31 hit the 1,024 shared
 * blocks and compute their 256 each, filling the budget exactly: 16,640 +
 * 31 x 256 = 24,576 computed, 31 x 16,384 hit.  Off: every prompt is
 * computed, 32 x 16,640 = 532,480: the gate admits at most 24 prompts of
 * 1,040 blocks at a time, and as prefill admits about one request per two
 * steps while each decodes for 64, the early ones finish before the decodes
 * outgrow the pool: no preemption.  The control (no shared prefix, 16,640
 * unique tokens each) computes the same 532,480 with caching on and off. */
static void shared_prefix(void)
{
    kvp_workload w;
    kvp_error e;
    double at[64];
    serve_result on, off, x_on, x_off;
    serve_config c = {.num_blocks = 25002, .block_size = 16, .max_num_batched_tokens = 8192,
                      .max_num_seqs = 256, .max_model_len = 40960, .prefix_caching = 1,
                      .async_scheduling = 1};
    CHECK("shared-prefix: generated",
          kvp_workload_synthetic("shared-prefix:32,16384,256,64", 16, &w, &e) == 0);
    serve_arrivals(&w, SERVE_ARRIVE_ALL, 0, 0, at, &e);
    CHECK("shared-prefix on: runs", serve_vllm_run(&w, at, &c, linear, NULL, &on, &e) == 0);
    c.prefix_caching = 0;
    CHECK("shared-prefix off: runs", serve_vllm_run(&w, at, &c, linear, NULL, &off, &e) == 0);
    printf("# shared-prefix: computed on %llu off %llu; wall on %.3f s off %.3f s (x%.2f)\n",
           (unsigned long long)on.prefill_tokens_computed,
           (unsigned long long)off.prefill_tokens_computed, on.wall_seconds, off.wall_seconds,
           off.wall_seconds / on.wall_seconds);
    CHECK("shared-prefix on: 24,576 computed, 507,904 hit",
          on.prefill_tokens_computed == 24576 && on.hit_tokens == 507904 &&
              on.preemptions == 0 && on.requests == 32 && on.output_tokens == 32 * 64);
    CHECK("shared-prefix on: hit rate 507,904 / 532,480",
          near(on.hit_rate, 507904.0 / 532480.0));
    CHECK("shared-prefix off: every prompt computed, 21.7x the tokens",
          off.prefill_tokens_computed == 532480 && off.hit_tokens == 0 && off.preemptions == 0 &&
              off.requests == 32);
    CHECK("shared-prefix: caching at least 3x faster with the linear price",
          on.wall_seconds > 0 && off.wall_seconds > 3 * on.wall_seconds);
    kvp_workload_free(&w);

    /* the control: no shared prefix, the unique part as long */
    CHECK("control: generated",
          kvp_workload_synthetic("shared-prefix:32,0,16640,64", 16, &w, &e) == 0);
    c.prefix_caching = 1;
    CHECK("control on: runs", serve_vllm_run(&w, at, &c, linear, NULL, &x_on, &e) == 0);
    c.prefix_caching = 0;
    CHECK("control off: runs", serve_vllm_run(&w, at, &c, linear, NULL, &x_off, &e) == 0);
    printf("# control: computed on %llu off %llu; wall on %.3f s off %.3f s\n",
           (unsigned long long)x_on.prefill_tokens_computed,
           (unsigned long long)x_off.prefill_tokens_computed, x_on.wall_seconds,
           x_off.wall_seconds);
    CHECK("control: no hits, 532,480 computed either way",
          x_on.hit_tokens == 0 && x_off.hit_tokens == 0 &&
              x_on.prefill_tokens_computed == 532480 && x_off.prefill_tokens_computed == 532480);
    CHECK("control: wall times within 2%",
          x_on.wall_seconds > 0 && fabs(x_on.wall_seconds / x_off.wall_seconds - 1) < 0.02);
    kvp_workload_free(&w);
}

/* The cliff: 64 documents of 8,192 + 256 tokens (528 blocks each), two
 * passes, through 25,001 usable blocks: the working set (33,792 blocks)
 * does not fit, LRU evicts each document before its second pass: no hits.
 * A pool of 40,000 blocks holds it: the second pass hits every document
 * (8,192 tokens each; the suffix differs). */
static void cyclic(void)
{
    kvp_workload w;
    kvp_error e;
    static double at[128];
    serve_result small_pool, big_pool;
    serve_config c = {.num_blocks = 25002, .block_size = 16, .max_num_batched_tokens = 8192,
                      .max_num_seqs = 256, .max_model_len = 40960, .prefix_caching = 1,
                      .async_scheduling = 1};
    CHECK("cyclic: generated", kvp_workload_synthetic("cyclic:64,8192,2,256", 16, &w, &e) == 0);
    serve_arrivals(&w, SERVE_ARRIVE_ALL, 0, 0, at, &e);
    CHECK("cyclic 400,032: runs", serve_vllm_run(&w, at, &c, NULL, NULL, &small_pool, &e) == 0);
    CHECK("cyclic 400,032: no second-pass hits, every prompt computed",
          small_pool.hit_tokens == 0 && small_pool.prefill_tokens_computed == 128ull * 8448);
    c.num_blocks = 40000;
    CHECK("cyclic 640,000: runs", serve_vllm_run(&w, at, &c, NULL, NULL, &big_pool, &e) == 0);
    CHECK("cyclic 640,000: the second pass hits every document",
          big_pool.hit_tokens == 64ull * 8192 &&
              big_pool.prefill_tokens_computed == 128ull * 8448 - 64ull * 8192);
    kvp_workload_free(&w);
}

/* Preemption at scale: 16 requests of 1,024 prompt tokens (64 blocks) and
 * 1,024 outputs (2,047 stored tokens: 128 blocks), at once, budget 8,192.
 * 1,025 usable blocks: the gate admits all 16 prompts (1,024 blocks) in two
 * steps, and their first decodes need a 65th block each: preemptions, and
 * every request still finishes, its recompute counted.  2,049 usable
 * blocks hold all 16 whole: none. */
static void preemption_at_scale(void)
{
    kvp_workload w;
    kvp_error e;
    double at[16];
    serve_result o;
    serve_config c = {.num_blocks = 1026, .block_size = 16, .max_num_batched_tokens = 8192,
                      .max_num_seqs = 256, .prefix_caching = 1};
    CHECK("outgrow: generated",
          kvp_workload_synthetic("shared-prefix:16,0,1024,1024", 16, &w, &e) == 0);
    serve_arrivals(&w, SERVE_ARRIVE_ALL, 0, 0, at, &e);
    CHECK("outgrow: runs", serve_vllm_run(&w, at, &c, NULL, NULL, &o, &e) == 0);
    printf("# outgrow: %llu preemptions, %llu prefill tokens, peak %llu blocks\n",
           (unsigned long long)o.preemptions, (unsigned long long)o.prefill_tokens_computed,
           (unsigned long long)o.peak_blocks);
    CHECK("outgrow: preemptions counted, all finish",
          o.preemptions > 0 && o.requests == 16 && o.output_tokens == 16 * 1024 &&
              o.prefill_tokens_computed > 16 * 1024 && o.peak_blocks == 1025);
    c.async_scheduling = 1;
    CHECK("outgrow async: runs, preempts, all finish",
          serve_vllm_run(&w, at, &c, NULL, NULL, &o, &e) == 0 && o.preemptions > 0 &&
              o.requests == 16 && o.output_tokens == 16 * 1024);
    c.num_blocks = 2050;
    CHECK("outgrow: a pool that holds them all: no preemption",
          serve_vllm_run(&w, at, &c, NULL, NULL, &o, &e) == 0 && o.preemptions == 0 &&
              o.prefill_tokens_computed == 16 * 1024 && o.peak_blocks == 16 * 128);
    kvp_workload_free(&w);
}

/* The host tier (serving-sim-rules.md 3.5), block 4, 3 usable blocks,
 * 1 ms steps, synchronous; a block is 1,000 bytes and each link moves
 * 1,000 bytes/s (one block a second), no latency; the tier holds 10 blocks.
 *  1 (t 0): A (9 tokens: a1 a2 + 1) computes 0+9 and finishes; its two
 *     full prompt blocks go to the host (2,000 bytes).  Freed.
 *  2 (t 1 ms): B (b1 b2 + 1) takes all 3 blocks, evicting a1 a2 on the
 *     GPU; b1 b2 stored.
 *  3 (t 2 ms): C (a1 a2 + 1): no GPU hit; the host holds a1 a2: C takes
 *     blocks for 8 tokens (under the gate for 9) and waits 2 s for 2,000
 *     bytes; nothing runs.
 *  4 (t 2.002 s): the load is in; C computes its last token: 8+1.
 * TTFT: A 1 ms, B 1 ms, C 2.001 s.  Without the tier C computes all 9. */
static void host_tier(void)
{
    hand h;
    rec r = {.step_s = 0.001};
    serve_result o;
    serve_vllm_extra x;
    hand_init(&h, 4);
    hand_add(&h, 9, 1, 0, (uint64_t[]){101, 102}, 2);
    hand_add(&h, 9, 1, 0.001, (uint64_t[]){201, 202}, 2);
    hand_add(&h, 9, 1, 0.002, (uint64_t[]){101, 102}, 2);
    serve_config c = small(4, 4, 16);
    c.cpu_tier_bytes = 10000;
    c.kv_block_bytes = 1000;
    c.h2d_bytes_per_s = c.d2h_bytes_per_s = 1000;
    CHECK("host: runs", run(&h, &c, &r, &o, &x) == 0);
    CHECK("host: C loads a1 a2 and computes its last token", !strcmp(r.log, "0+9*|0+9*|8+1*"));
    CHECK("host: 8 tokens from the host, none from the GPU",
          o.cpu_hit_tokens == 8 && o.hit_tokens == 0 && near(o.cpu_hit_rate, 8.0 / 27));
    CHECK("host: 4 blocks stored, 1 load; 4,000 bytes out, 2,000 back",
          o.cpu_stores == 4 && o.cpu_loads == 1 && o.bytes_to_cpu == 4000 &&
              o.bytes_from_cpu == 2000 && o.cpu_blocks == 10);
    CHECK("host: the load waits 2 s; the links were busy 2 s and 4 s",
          near(o.load_wait_seconds, 2.0) && near(o.h2d_busy_seconds, 2.0) &&
              near(o.d2h_busy_seconds, 4.0));
    CHECK("host: C's TTFT 2.001 s, wall 2.003 s, 19 tokens computed",
          fabs(o.ttft.p99 - 2.001) < 1e-9 && fabs(o.wall_seconds - 2.003) < 1e-9 &&
              o.prefill_tokens_computed == 19);
    c.cpu_tier_bytes = 0;
    CHECK("no host: C computes all 9", run(&h, &c, &r, &o, &x) == 0 &&
                                           !strcmp(r.log, "0+9*|0+9*|0+9*") &&
                                           o.cpu_hit_tokens == 0 && o.bytes_to_cpu == 0);
    c.cpu_tier_bytes = 1999; /* one block: each store but the first evicts */
    CHECK("a one-block host: a2 evicted a1, the match stops at once",
          run(&h, &c, &r, &o, &x) == 0 && !strcmp(r.log, "0+9*|0+9*|0+9*") &&
              o.cpu_stores == 6 && o.cpu_evictions == 5 && o.cpu_hit_tokens == 0);
    c.cpu_tier_bytes = 999;
    kvp_error e;
    CHECK("a host smaller than a block is refused",
          serve_vllm_run(&h.w, h.at, &c, NULL, NULL, &o, &e) != 0 && strstr(e.msg, "holds no"));
    c.cpu_tier_bytes = 10000;
    c.prefix_caching = 0;
    CHECK("caching off: no tier either", run(&h, &c, &r, &o, &x) == 0 && o.cpu_blocks == 0 &&
                                             o.bytes_to_cpu == 0);
}

int main(void)
{
    chunked_prefill();
    running_first();
    admission_gate();
    preemption();
    hits();
    async_lag();
    oversized();
    preemption_at_scale();
    shared_prefix();
    cyclic();
    host_tier();
    return check_failures != 0;
}
