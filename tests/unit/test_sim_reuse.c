/* test_sim_reuse.c - reuse beyond the prefix (lib/sim_chunks.c) and the
 * workload's own figures (lib/trace/stats.c) on hand-built workloads whose
 * answers are worked out below, by hand, from the rules each file states. */
#include <string.h>

#include "check.h"
#include "trace/trace_int.h"

enum { A = 1, B, C, D, E, F, S, P1, P2, U1, U2, Z };

/* Builds a workload of block size bs from requests given as chunk lists:
 * each request a run of {id, tokens} pairs ended by {0, 0}, its conversation
 * first. */
static void build(kvp_workload *w, uint32_t bs, const uint64_t (*reqs)[2], size_t n_req_rows)
{
    wl_builder b;
    kvp_error e;
    kvp_sim_chunk c[16];
    size_t n = 0;
    uint32_t conv = 0;
    int start = 1;
    wl_init(&b, w, "hand", "kvplan", bs);
    for (size_t i = 0; i < n_req_rows; i++) {
        if (start) {
            conv = (uint32_t)reqs[i][0]; /* {conv, 0} opens a request */
            start = 0;
            continue;
        }
        if (reqs[i][0] == 0) {
            CHECK("hand workload: request added", wl_add(&b, c, n, 0, (double)i, conv, &e) == 0);
            n = 0, start = 1;
            continue;
        }
        c[n++] = (kvp_sim_chunk){wl_chunk_id(WL_NS_TRACE, 0, reqs[i][0]), reqs[i][1]};
    }
    CHECK("hand workload: finished", wl_finish(&b, 0, 0, &e) == 0);
}

static kvp_sim_result run(const kvp_workload *w, uint64_t num_blocks, int any)
{
    kvp_sim_config c;
    kvp_sim_result r;
    kvp_error e;
    kvp_sim_defaults(&c);
    c.block_size = w->block_size;
    c.num_blocks = num_blocks;
    c.any_position = any;
    memset(&r, 0xff, sizeof r);
    if (kvp_sim_run(w, &c, &r, &e))
        printf("# %s\n", e.msg);
    return r;
}

/* RAG: the same system prompt and passages, the passages in another order.
 * Block 4.  A = S(8) P1(8) P2(8) U1(4), B = S(8) P2(8) P1(8) U2(4).  Prefix
 * reuse: B's prefix matches A's for S only, 2 blocks = 8 tokens.  Any
 * position: S, P2 and P1 are all found, 24 tokens. */
static void rag_order(void)
{
    static const uint64_t reqs[][2] = {
        {0, 0}, {S, 8}, {P1, 8}, {P2, 8}, {U1, 4}, {0, 0},
        {0, 0}, {S, 8}, {P2, 8}, {P1, 8}, {U2, 4}, {0, 0},
    };
    kvp_workload w;
    build(&w, 4, reqs, sizeof reqs / sizeof reqs[0]);
    kvp_sim_result p = run(&w, 100, 0), a = run(&w, 100, 1);
    CHECK("rag order: prefix reuse hits the system prompt only", p.hit_tokens == 8 &&
                                                                   p.prompt_tokens == 56);
    CHECK("rag order: any position hits every passage too", a.hit_tokens == 24 &&
                                                             a.prompt_tokens == 56);
    CHECK("rag order: any position evicts nothing in a large pool", a.evictions == 0);
    kvp_workload_free(&w);
}

/* LRU over chunks, 7 blocks (the null block and 6 usable), block 4.
 * R1 A(8), R2 B(8), R3 C(8): 6 blocks in use.  R4 D(8) evicts A (least
 * recent).  R5 A(8) E(4): A is gone (miss); inserting it evicts B, then E
 * evicts C: the pool holds D A E.  R6 D(8) F(4): D hit (8 tokens), F fits
 * beside (6 blocks).  Hits 8, evictions 2 + 2 + 2 = 6 blocks, peak 3 (R5's
 * and R6's own blocks). */
static void lru_chunks(void)
{
    static const uint64_t reqs[][2] = {
        {0, 0}, {A, 8}, {0, 0}, {0, 0}, {B, 8}, {0, 0}, {0, 0}, {C, 8}, {0, 0},
        {0, 0}, {D, 8}, {0, 0}, {0, 0}, {A, 8}, {E, 4}, {0, 0}, {0, 0}, {D, 8}, {F, 4}, {0, 0},
    };
    kvp_workload w;
    build(&w, 4, reqs, sizeof reqs / sizeof reqs[0]);
    kvp_sim_result a = run(&w, 7, 1);
    CHECK("lru chunks: only D is found again", a.hit_tokens == 8);
    CHECK("lru chunks: three chunks of 2 blocks evicted", a.evictions == 6);
    CHECK("lru chunks: peak is one request's blocks", a.peak_blocks == 3 && a.oversized == 0);
    /* 3 blocks usable: R5 and R6 (3 blocks each) still fit, R1-R4 too */
    a = run(&w, 4, 1);
    CHECK("lru chunks: a request the size of the pool is served", a.oversized == 0);
    /* 1 usable: every request needs 2 or 3 */
    a = run(&w, 2, 1);
    CHECK("lru chunks: requests larger than the pool are oversized", a.oversized == 6 &&
                                                                    a.hit_tokens == 0);
    kvp_workload_free(&w);
}

/* The last prompt token is never a hit, at any position too: a prompt that
 * is one chunk seen before hits all but one token. */
static void last_token(void)
{
    static const uint64_t reqs[][2] = {{0, 0}, {A, 8}, {0, 0}, {0, 0}, {A, 8}, {0, 0}};
    kvp_workload w;
    build(&w, 4, reqs, sizeof reqs / sizeof reqs[0]);
    kvp_sim_result a = run(&w, 10, 1), p = run(&w, 10, 0);
    CHECK("last token: any position hits 7 of 8", a.hit_tokens == 7);
    CHECK("last token: prefix reuse hits 1 of 2 blocks (vLLM)", p.hit_tokens == 4);
    kvp_workload_free(&w);
}

/* A chunk a prompt repeats: X's second copy follows X's own prefill, so it is
 * computed again (nothing of a prompt is cached before it runs); A, cached by
 * the first request, is a hit both times the third request names it.
 * Block 4: R1 A(8); R2 X(4) X(4) A(8): hit 8; R3 A(8) A(8) Z(4): hit 16. */
static void repeats(void)
{
    static const uint64_t reqs[][2] = {
        {0, 0}, {A, 8}, {0, 0},
        {0, 0}, {U1, 4}, {U1, 4}, {A, 8}, {0, 0},
        {0, 0}, {A, 8}, {A, 8}, {Z, 4}, {0, 0},
    };
    kvp_workload w;
    build(&w, 4, reqs, sizeof reqs / sizeof reqs[0]);
    kvp_sim_result a = run(&w, 100, 1);
    CHECK("repeats: a chunk repeated after its own prefill is not a hit, a cached one is twice",
          a.hit_tokens == 8 + 16);
    kvp_workload_free(&w);
}

/* Conversation 1 sends a(8) b(4), then a(8) b(4) c(8); conversation 2
 * z(8).  Block 4.  The second request's previous one holds 3 full blocks,
 * and it may hit (20 - 1) / 4 = 4: 12 of its 20 tokens, 0.6.  Distinct
 * blocks: 3, then 2 more (c), then 2 (z): 7, 28 tokens; the largest request
 * is 5 blocks, so a pool of 7 + 5 + 1 = 13 never evicts. */
static void stats(void)
{
    static const uint64_t reqs[][2] = {
        {1, 0}, {A, 8}, {B, 4}, {0, 0},
        {1, 0}, {A, 8}, {B, 4}, {C, 8}, {0, 0},
        {2, 0}, {Z, 8}, {0, 0},
    };
    kvp_workload w;
    kvp_workload_stats s;
    kvp_error e;
    build(&w, 4, reqs, sizeof reqs / sizeof reqs[0]);
    CHECK("stats: computed", kvp_workload_stats_of(&w, &s, &e) == 0);
    CHECK("stats: two conversations, one consecutive pair", s.conversations == 2 && s.pairs == 1);
    CHECK("stats: the previous request holds 0.6 of the prompt",
          s.consecutive_mean > 0.5999 && s.consecutive_mean < 0.6001 &&
          s.consecutive_median == s.consecutive_mean && s.consecutive_weighted == s.consecutive_mean);
    CHECK("stats: working set 7 blocks, 28 tokens", s.working_blocks == 7 && s.working_tokens == 28);
    CHECK("stats: a pool of 13 blocks never evicts", s.unbounded_blocks == 13);
    kvp_sim_result p = run(&w, s.unbounded_blocks, 0);
    CHECK("stats: the unbounded pool evicts nothing", p.evictions == 0 && p.hit_tokens == 12);
    kvp_workload_free(&w);
}

int main(void)
{
    rag_order();
    lru_chunks();
    last_token();
    repeats();
    stats();
    return check_failures != 0;
}
