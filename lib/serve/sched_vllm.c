/* sched_vllm.c - vLLM v1's scheduler (vllm/v1/core/sched/scheduler.py) as a
 * discrete-step replay over lib/sim.c's block pool, so that a workload's
 * prefix reuse, preemptions and (with a step-time model) latencies come out
 * of the same decisions vLLM makes.  The step, in order
 * (serving-sim-rules.md §1.2, §1.10): token budget; running requests in
 * admission order, preempting the last admitted when blocks run out;
 * waiting requests only if nothing was preempted; computed counts advance;
 * the step is priced; one token is sampled per request whose prompt is
 * complete; finished requests are freed.  Async scheduling (§1.7) makes
 * frees and arrivals count one step late.
 *
 * Where the reference leaves room:
 * - Token counts do not lag under async scheduling: placeholders make vLLM
 *   schedule every decode again at once, so only frees (after the next
 *   schedule) and arrivals (seen if they came before the previous step
 *   began) move.  A request finished but not yet freed still counts
 *   against max_num_seqs; it is no longer a preemption victim.
 * - Stops are by length only (no EOS), so nothing is over-scheduled.
 * - A workload's hashes are used wherever it gives them: the synthetic
 *   generators hash output blocks too (vLLM caches generated tokens),
 *   Mooncake traces only prompt blocks.
 * - An output length of 0 is taken as 1 (vLLM samples at least one).
 * - prefill_tokens_computed counts every scheduled token but a decode's
 *   newest one, so recomputed outputs after a preemption count. */
#include <stdlib.h>
#include <string.h>

#include "../sim.h"
#include "cpu_tier.h"
#include "sched_vllm.h"

enum { RQ_PENDING, RQ_WAITING, RQ_LOADING, RQ_RUNNING, RQ_DONE, RQ_REJECTED };

typedef struct vreq {
    uint64_t prompt, out;      /* out >= 1: vLLM samples at least one token */
    uint64_t gen;              /* outputs sampled so far */
    uint64_t computed;         /* num_computed_tokens */
    double arrival, first, done;
    double ready;              /* RQ_LOADING: when its host-tier KV has arrived */
    uint64_t loaded_from, loaded_to; /* the blocks that load brings */
    uint64_t hit;              /* both tiers' hit at its first admission */
    sim_req kv;
    int state, admitted;
} vreq;

typedef struct vsim {
    const kvp_workload *w;
    sim_pool pool;
    vreq *rq;
    size_t n;
    uint64_t budget, max_seqs, max_len;
    int caching, async;
    uint32_t *order;           /* request ids by arrival */
    size_t n_order, next_arrival;
    uint32_t *run;             /* running, in admission order */
    size_t n_run;
    uint32_t *wq;              /* waiting: a ring, preempted ones at the front */
    size_t wq_head, wq_len, cap;
    uint32_t *lag;             /* async: finished, blocks freed after the next schedule */
    size_t n_lag;
    cpu_tier *cpu;             /* the host tier, or NULL */
    uint32_t *loading;         /* waiting for host-tier KV, in admission order */
    size_t n_loading;
    double h2d_free, d2h_free; /* when each link finishes its queued transfers */
    double h2d_bps, d2h_bps, latency;
    uint64_t chunk_bytes;      /* one block's KV over all layers */
    serve_done *per_request;   /* each request's outcome, or NULL */
    int timed;                 /* transfers take time only in a timed replay */
    serve_slot *slot;          /* this step's batch, slot_req[i] its request */
    uint32_t *slot_req;
    size_t n_slot;
    double now, visible;       /* clock; arrivals up to `visible` are seen */
    serve_result *out;
    serve_vllm_extra *x;
} vsim;

/* ---- small helpers ---- */

static uint64_t cdiv(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* num_tokens: the prompt plus the outputs sampled so far */
static uint64_t num_tokens(const vreq *r)
{
    return r->prompt + r->gen;
}

static void wq_push_back(vsim *s, uint32_t id)
{
    s->wq[(s->wq_head + s->wq_len++) % s->cap] = id;
    s->rq[id].state = RQ_WAITING;
}

/* a preempted request goes back to the front of the queue */
static void wq_push_front(vsim *s, uint32_t id)
{
    s->wq_head = (s->wq_head + s->cap - 1) % s->cap;
    s->wq[s->wq_head] = id;
    s->wq_len++;
    s->rq[id].state = RQ_WAITING;
}

static void wq_pop_front(vsim *s)
{
    s->wq_head = (s->wq_head + 1) % s->cap;
    s->wq_len--;
}

/* ---- setup ---- */

/* vLLM refuses a prompt + max_tokens beyond max_model_len; a sequence
 * larger than the pool could never finish (vLLM's startup check rules it
 * out for max_model_len, a replay must refuse it itself). */
static int is_oversized(const vsim *s, const vreq *r)
{
    uint64_t total = r->prompt + r->out;
    if (s->max_len && total > s->max_len)
        return 1;
    return cdiv(total - 1, s->pool.block_size) > s->pool.usable;
}

static int init_requests(vsim *s, const double *arrival_s, kvp_error *err)
{
    for (size_t i = 0; i < s->n; i++) {
        const kvp_sim_request *q = &s->w->req[i];
        vreq *r = &s->rq[i];
        uint64_t total;
        r->prompt = q->prompt_tokens;
        r->out = q->output_tokens ? q->output_tokens : 1;
        r->arrival = arrival_s[i];
        if (r->prompt == 0 || kvp_add(r->prompt, r->out, &total) || total > KVP_MAX_TOKENS)
            return kvp_fail(err, KVP_EINPUT, "%s: request %zu: %llu prompt tokens: a request "
                            "needs 1 to 2^40 tokens", s->w->name, i + 1,
                            (unsigned long long)r->prompt);
        if (!(arrival_s[i] >= 0))
            return kvp_fail(err, KVP_EINPUT, "%s: request %zu: arrival time %g s", s->w->name,
                            i + 1, arrival_s[i]);
        r->kv.hashes = s->caching && q->n_hashes ? s->w->hashes + q->hash_off : NULL;
        r->kv.n_hashes = s->caching ? q->n_hashes : 0;
        if (is_oversized(s, r)) {
            r->state = RQ_REJECTED;
            s->x->rejected++;
            continue;
        }
        s->order[s->n_order++] = (uint32_t)i;
    }
    if (serve_sort_by_arrival(arrival_s, s->order, s->n_order))
        return kvp_fail(err, KVP_EINPUT, "sim: out of memory");
    return 0;
}

static void admit_arrivals(vsim *s)
{
    while (s->next_arrival < s->n_order && s->rq[s->order[s->next_arrival]].arrival <= s->visible)
        wq_push_back(s, s->order[s->next_arrival++]);
}

/* ---- the host tier (serving-sim-rules.md §3.5) ---- */

/* A transfer queued on a link of `bps` bytes per second: it starts when the
 * link is free and ends after the latency plus its bytes; returns the end. */
static double transfer(vsim *s, double *link_free, double bps, uint64_t bytes, double *busy)
{
    if (!s->timed || !(bps > 0))
        return s->now;
    double t = s->latency + (double)bytes / bps;
    *link_free = (*link_free > s->now ? *link_free : s->now) + t;
    *busy += t;
    return *link_free;
}

/* The host's consecutive blocks after the GPU hit, capped as the GPU hit is
 * (the last prompt token is always computed). */
static uint64_t host_hit(vsim *s, const vreq *r, const sim_hit *hit)
{
    if (!s->cpu || !r->kv.n_hashes)
        return 0;
    uint64_t limit = (num_tokens(r) - 1) / s->pool.block_size;
    if (limit > r->kv.n_hashes)
        limit = r->kv.n_hashes;
    return hit->blocks < limit ? cpu_tier_match(s->cpu, r->kv.hashes, hit->blocks, limit) : 0;
}

/* WAITING_FOR_REMOTE_KVS: blocks for the GPU hit and the loaded ones (under
 * the whole-prompt gate), the loaded ones cached only when they arrive; the
 * request leaves the queue until then.  0, 1 when it does not fit, -1. */
static int start_load(vsim *s, uint32_t id, const sim_hit *hit, uint64_t h_c, kvp_error *err)
{
    vreq *r = &s->rq[id];
    uint64_t g = hit->blocks;
    size_t n_hashes = r->kv.n_hashes;
    r->kv.n_hashes = g;
    int rc = sim_pool_allocate(&s->pool, &r->kv, hit, (g + h_c) * s->pool.block_size,
                               num_tokens(r), err);
    r->kv.n_hashes = n_hashes;
    if (rc)
        return rc;
    r->computed = (g + h_c) * s->pool.block_size;
    r->loaded_from = g;
    r->loaded_to = g + h_c;
    cpu_tier_pin(s->cpu, r->kv.hashes, g, g + h_c, 1);
    uint64_t bytes = h_c * s->chunk_bytes;
    r->ready = transfer(s, &s->h2d_free, s->h2d_bps, bytes, &s->out->h2d_busy_seconds);
    s->out->bytes_from_cpu += bytes;
    s->out->cpu_loads++;
    s->out->load_wait_seconds += r->ready - s->now;
    r->state = RQ_LOADING;
    s->loading[s->n_loading++] = id;
    return 0;
}

/* Arrived loads rejoin the front of the queue, the earliest admitted first
 * (vLLM re-prepends the requests it skipped); their blocks become hits. */
static void finish_loads(vsim *s)
{
    size_t k = 0;
    for (size_t i = s->n_loading; i-- > 0;) {
        uint32_t id = s->loading[i];
        vreq *r = &s->rq[id];
        if (r->ready > s->now)
            continue;
        sim_pool_cache(&s->pool, &r->kv, r->loaded_from, r->loaded_to);
        cpu_tier_pin(s->cpu, r->kv.hashes, r->loaded_from, r->loaded_to, -1);
        wq_push_front(s, id);
        s->loading[i] = UINT32_MAX;
    }
    for (size_t i = 0; i < s->n_loading; i++)
        if (s->loading[i] != UINT32_MAX)
            s->loading[k++] = s->loading[i];
    s->n_loading = k;
}

/* Eager store (offload_prompt_only): the prompt blocks this step completed
 * go to the host, queued on the device-to-host link. */
static void store_blocks(vsim *s, const vreq *r, const serve_slot *sl)
{
    uint64_t bs = s->pool.block_size, end = sl->p + sl->q, n = 0;
    if (!s->cpu || !r->kv.n_hashes)
        return;
    if (end > r->prompt)
        end = r->prompt;
    uint64_t to = end / bs < r->kv.n_hashes ? end / bs : r->kv.n_hashes;
    for (uint64_t i = sl->p / bs; i < to; i++)
        n += cpu_tier_store(s->cpu, r->kv.hashes[i]) == 1;
    if (n) {
        s->out->bytes_to_cpu += n * s->chunk_bytes;
        transfer(s, &s->d2h_free, s->d2h_bps, n * s->chunk_bytes, &s->out->d2h_busy_seconds);
    }
}

/* ---- one schedule ---- */

static void add_slot(vsim *s, uint32_t id, uint64_t q)
{
    vreq *r = &s->rq[id];
    s->slot[s->n_slot] = (serve_slot){.p = r->computed, .q = q,
                                      .samples = r->computed + q == num_tokens(r)};
    s->slot_req[s->n_slot++] = id;
}

/* num_new_tokens: catch up with num_tokens, within the budget and below
 * max_model_len */
static uint64_t new_tokens(const vsim *s, const vreq *r, uint64_t budget)
{
    uint64_t n = num_tokens(r) - r->computed;
    if (n > budget)
        n = budget;
    if (s->max_len) {
        uint64_t room = s->max_len - 1 > r->computed ? s->max_len - 1 - r->computed : 0;
        if (n > room)
            n = room;
    }
    return n;
}

/* _preempt_request: recompute from scratch later; blocks freed in reverse
 * order, hashed ones stay hittable at the free queue's tail */
static void preempt(vsim *s, uint32_t id)
{
    vreq *r = &s->rq[id];
    sim_pool_free(&s->pool, &r->kv);
    r->computed = 0;
    wq_push_front(s, id);
    s->out->preemptions++;
}

/* The running loop.  Returns 1 if anything was preempted, -1 on error. */
static int schedule_running(vsim *s, uint64_t *budget, kvp_error *err)
{
    int preempted = 0;
    for (size_t i = 0; i < s->n_run && *budget > 0; i++) {
        uint32_t id = s->run[i];
        vreq *r = &s->rq[id];
        uint64_t q = new_tokens(s, r, *budget);
        if (q == 0)
            continue; /* skipped, not blocking the rest */
        int rc;
        while ((rc = sim_pool_allocate(&s->pool, &r->kv, NULL, r->computed + q, 0, err)) == 1) {
            uint32_t victim = s->run[--s->n_run]; /* FCFS: the last admitted */
            preempt(s, victim);
            preempted = 1;
            if (victim == id)
                return 1; /* it preempted itself: the running loop ends */
        }
        if (rc < 0)
            return -1;
        add_slot(s, id, q);
        *budget -= q;
    }
    return preempted;
}

/* vLLM's hit rate counts a request's first admission only (§1.9) */
static void count_first_admission(vsim *s, vreq *r, uint64_t gpu_hit, uint64_t host_hit)
{
    if (r->admitted)
        return;
    r->admitted = 1;
    s->x->lookup_tokens += r->prompt;
    s->out->hit_tokens += gpu_hit;
    s->out->cpu_hit_tokens += host_hit;
    r->hit = gpu_hit + host_hit;
}

/* The waiting loop: FCFS from the head, head-of-line blocking. */
static int schedule_waiting(vsim *s, uint64_t *budget, size_t lingering, kvp_error *err)
{
    while (s->wq_len && *budget > 0 && s->n_run + lingering < s->max_seqs) {
        uint32_t id = s->wq[s->wq_head];
        vreq *r = &s->rq[id];
        if (!r->kv.blocks) {
            uint64_t cap = cdiv(r->prompt + r->out - 1, s->pool.block_size);
            r->kv.blocks = malloc(cap * sizeof *r->kv.blocks);
            r->kv.cap = cap;
            if (!r->kv.blocks)
                return kvp_fail(err, KVP_EINPUT, "sim: out of memory");
        }
        /* the lookup runs at every attempt: the cache as it is at admission;
         * a request back from a load holds its blocks and looks up nothing */
        sim_hit hit = {0, 0};
        uint64_t h_c = 0;
        if (!r->kv.n_blocks) {
            hit = sim_pool_lookup(&s->pool, &r->kv, num_tokens(r));
            r->computed = hit.blocks * s->pool.block_size;
            h_c = host_hit(s, r, &hit);
        }
        uint64_t q = new_tokens(s, r, *budget);
        int rc = h_c ? start_load(s, id, &hit, h_c, err)
                 : q ? sim_pool_allocate(&s->pool, &r->kv, &hit, r->computed + q, num_tokens(r),
                                         err)
                     : 1;
        if (rc) {
            if (!r->kv.n_blocks)
                r->computed = 0;
            return rc < 0 ? -1 : 0;
        }
        wq_pop_front(s);
        count_first_admission(s, r, hit.blocks * s->pool.block_size,
                              h_c * s->pool.block_size);
        if (h_c)
            continue; /* parked until its KV arrives; takes no budget */
        s->run[s->n_run++] = id;
        r->state = RQ_RUNNING;
        add_slot(s, id, q);
        *budget -= q;
    }
    return 0;
}

/* ---- after the forward pass ---- */

static void release(vsim *s, uint32_t id)
{
    vreq *r = &s->rq[id];
    sim_pool_free(&s->pool, &r->kv);
    free(r->kv.blocks);
    r->kv.blocks = NULL;
}

static void free_lagged(vsim *s)
{
    for (size_t i = 0; i < s->n_lag; i++)
        release(s, s->lag[i]);
    s->n_lag = 0;
}

/* A prefill token is one whose KV is computed for a prompt position or
 * recomputed for an earlier output; the newest token of a decode is not. */
static uint64_t prefill_part(const vreq *r, const serve_slot *sl)
{
    int decodes = r->gen > 0 && sl->p + sl->q == num_tokens(r);
    return sl->q - (uint64_t)decodes;
}

/* _update_after_schedule and update_from_output: computed counts advance,
 * complete prompts sample, requests that reach their length finish. */
static void finish_step(vsim *s)
{
    for (size_t i = 0; i < s->n_slot; i++) {
        vreq *r = &s->rq[s->slot_req[i]];
        s->out->prefill_tokens_computed += prefill_part(r, &s->slot[i]);
        store_blocks(s, r, &s->slot[i]);
        r->computed += s->slot[i].q;
        if (!s->slot[i].samples)
            continue;
        s->out->output_tokens++;
        if (r->gen++ == 0)
            r->first = s->now;
        if (r->gen == r->out) {
            r->done = s->now;
            r->state = RQ_DONE;
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < s->n_run; i++) {
        uint32_t id = s->run[i];
        if (s->rq[id].state != RQ_DONE)
            s->run[k++] = id;
        else if (s->async)
            s->lag[s->n_lag++] = id;
        else
            release(s, id);
    }
    s->n_run = k;
}

static int price_step(vsim *s, serve_cost_fn cost, void *arg, double *dt, kvp_error *err)
{
    serve_batch b = {.slot = s->slot, .n = s->n_slot};
    for (size_t i = 0; i < s->n_slot; i++) {
        b.tokens += s->slot[i].q;
        b.sampled += s->slot[i].samples != 0;
    }
    *dt = cost ? cost(arg, &b) : 0;
    if (!(*dt >= 0 && *dt < 1e9))
        return kvp_fail(err, KVP_EINPUT, "sim: the step-time model priced a step at %g s", *dt);
    return 0;
}

/* ---- the loop ---- */

/* Nothing was scheduled: wait for the next arrival, or end the replay (1)
 * when nobody is left; anyone left who cannot run is an error, not a loop. */
static int idle(vsim *s, kvp_error *err)
{
    double t = -1;
    if (s->next_arrival < s->n_order)
        t = s->rq[s->order[s->next_arrival]].arrival;
    for (size_t i = 0; i < s->n_loading; i++)
        if (t < 0 || s->rq[s->loading[i]].ready < t)
            t = s->rq[s->loading[i]].ready;
    if (t >= 0) {
        if (t > s->now)
            s->now = t;
        s->visible = s->now;
        return 0;
    }
    if (!s->n_run && !s->wq_len)
        return 1;
    return kvp_fail(err, KVP_EINPUT, "sim: step %llu schedules nothing: %zu running, "
                    "%zu waiting, %u blocks free", (unsigned long long)s->out->steps, s->n_run,
                    s->wq_len, s->pool.n_free);
}

/* One iteration: schedule, run, sample.  Returns 1 when the replay is over,
 * 0 to go on, -1 on error. */
static int step(vsim *s, serve_cost_fn cost, void *arg, kvp_error *err)
{
    uint64_t budget = s->budget;
    size_t lingering = s->n_lag; /* async: finished, still in vLLM's running list */
    s->n_slot = 0;
    admit_arrivals(s);
    finish_loads(s);
    int pre = schedule_running(s, &budget, err);
    if (pre < 0 || (!pre && schedule_waiting(s, &budget, lingering, err)))
        return -1;
    int freed = s->n_lag > 0;
    free_lagged(s); /* async: last step's finishes are seen only now */
    if (s->n_slot == 0)
        return freed ? 0 /* schedule again now, with those blocks back */ : idle(s, err);
    double dt, start = s->now;
    if (price_step(s, cost, arg, &dt, err))
        return -1;
    s->now += dt;
    s->visible = s->async ? start : s->now; /* async: the next schedule ran during this step */
    if (s->n_run > s->x->max_running)
        s->x->max_running = s->n_run;
    s->out->steps++;
    finish_step(s);
    return 0;
}

/* Steps in a row that sample nothing: in the synchronous engine the first
 * running request always advances, so its prompt completes within
 * prompt + output steps; beyond twice the longest, the replay is stuck. */
static uint64_t stall_limit(const vsim *s)
{
    uint64_t longest = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->rq[i].prompt + s->rq[i].out > longest)
            longest = s->rq[i].prompt + s->rq[i].out;
    return 2 * longest + 64;
}

static int replay(vsim *s, serve_cost_fn cost, void *arg, kvp_error *err)
{
    uint64_t limit = stall_limit(s), stalled = 0, sampled = 0;
    s->now = s->visible = s->n_order ? s->rq[s->order[0]].arrival : 0;
    for (;;) {
        int rc = step(s, cost, arg, err);
        if (rc)
            return rc < 0 ? -1 : 0;
        uint64_t now_sampled = s->out->output_tokens;
        stalled = now_sampled > sampled || s->n_slot == 0 ? 0 : stalled + 1;
        sampled = now_sampled;
        if (stalled > limit)
            return kvp_fail(err, KVP_EINPUT, "sim: %llu steps without a token sampled "
                            "(%zu running, %zu waiting): the schedule is stuck",
                            (unsigned long long)stalled, s->n_run, s->wq_len);
    }
}

/* ---- the report ---- */

static int report(vsim *s, kvp_error *err)
{
    serve_result *o = s->out;
    double *ttft = malloc((s->n ? s->n : 1) * sizeof *ttft);
    double *tpot = malloc((s->n ? s->n : 1) * sizeof *tpot);
    if (!ttft || !tpot) {
        free(ttft);
        free(tpot);
        return kvp_fail(err, KVP_EINPUT, "sim: out of memory");
    }
    size_t n_ttft = 0, n_tpot = 0;
    double t0 = 0, t1 = 0;
    for (size_t i = 0; i < s->n; i++) {
        const vreq *r = &s->rq[i];
        if (s->per_request)
            s->per_request[i] = (serve_done){r->arrival, r->state == RQ_DONE ? r->done : -1,
                                             r->hit};
        if (r->state != RQ_DONE)
            continue;
        if (n_ttft == 0 || r->arrival < t0)
            t0 = r->arrival;
        if (n_ttft == 0 || r->done > t1)
            t1 = r->done;
        o->requests++;
        o->prompt_tokens += r->prompt;
        ttft[n_ttft++] = r->first - r->arrival;
        if (r->out >= 2)
            tpot[n_tpot++] = (r->done - r->first) / (double)(r->out - 1);
    }
    o->wall_seconds = t1 - t0;
    serve_dist_of(ttft, n_ttft, &o->ttft);
    serve_dist_of(tpot, n_tpot, &o->tpot);
    if (o->wall_seconds > 0) {
        o->prompt_tps = (double)o->prompt_tokens / o->wall_seconds;
        o->output_tps = (double)o->output_tokens / o->wall_seconds;
    }
    o->hit_rate = s->x->lookup_tokens ? (double)o->hit_tokens / (double)s->x->lookup_tokens : 0;
    if (s->cpu) {
        o->cpu_hit_rate = s->x->lookup_tokens
                              ? (double)o->cpu_hit_tokens / (double)s->x->lookup_tokens
                              : 0;
        o->cpu_blocks = s->cpu->capacity;
        o->cpu_stores = s->cpu->stores;
        o->cpu_evictions = s->cpu->evictions;
        o->cpu_skipped_stores = s->cpu->skipped;
    }
    o->peak_blocks = s->pool.peak;
    free(ttft);
    free(tpot);
    return 0;
}

/* ---- setup and teardown ---- */

/* The host tier holds whole blocks: floor(bytes / one block's KV).  With
 * prefix caching off there are no block hashes, so no tier either. */
static int configure_host_tier(vsim *s, const serve_config *c, kvp_error *err)
{
    if (!c->cpu_tier_bytes || !s->caching)
        return 0;
    if (!(s->chunk_bytes = c->kv_block_bytes))
        return kvp_fail(err, KVP_EUSAGE, "sim: a host tier needs one block's KV bytes "
                        "(a MODEL)");
    if (c->cpu_tier_bytes < s->chunk_bytes)
        return kvp_fail(err, KVP_EUSAGE, "sim: a host tier of %llu bytes holds no %llu-byte "
                        "block", (unsigned long long)c->cpu_tier_bytes,
                        (unsigned long long)s->chunk_bytes);
    s->h2d_bps = c->h2d_bytes_per_s;
    s->d2h_bps = c->d2h_bytes_per_s;
    s->latency = c->transfer_latency_s;
    s->cpu = calloc(1, sizeof *s->cpu);
    if (!s->cpu)
        return kvp_fail(err, KVP_EINPUT, "sim: out of memory");
    return cpu_tier_init(s->cpu, c->cpu_tier_bytes / s->chunk_bytes, s->w->n_hashes, err);
}

static int configure(vsim *s, const kvp_workload *w, const serve_config *c, kvp_error *err)
{
    uint32_t bs = c->block_size ? c->block_size : w->block_size;
    if (bs != w->block_size)
        return kvp_fail(err, KVP_EUSAGE, "%s: its hashes are for %u-token blocks, not %u",
                        w->name, w->block_size, bs);
    s->w = w;
    s->n = w->n_req;
    s->per_request = c->per_request;
    s->budget = c->max_num_batched_tokens ? c->max_num_batched_tokens
                                          : KVP_VLLM_DEFAULT_BATCHED_TOKENS;
    s->max_seqs = c->max_num_seqs ? c->max_num_seqs : KVP_VLLM_DEFAULT_MAX_SEQS;
    s->max_len = c->max_model_len;
    s->caching = c->prefix_caching != 0;
    s->async = c->async_scheduling != 0;
    s->cap = s->n ? s->n : 1;
    if (sim_pool_init(&s->pool, c->num_blocks, bs, 1, 0, err))
        return -1;
    s->rq = calloc(s->cap, sizeof *s->rq);
    s->order = malloc(s->cap * sizeof *s->order);
    s->run = malloc(s->cap * sizeof *s->run);
    s->wq = malloc(s->cap * sizeof *s->wq);
    s->lag = malloc(s->cap * sizeof *s->lag);
    s->slot = malloc(s->cap * sizeof *s->slot);
    s->slot_req = malloc(s->cap * sizeof *s->slot_req);
    s->loading = malloc(s->cap * sizeof *s->loading);
    if (!s->rq || !s->order || !s->run || !s->wq || !s->lag || !s->slot || !s->slot_req ||
        !s->loading)
        return kvp_fail(err, KVP_EINPUT, "sim: %zu requests: out of memory", s->n);
    return configure_host_tier(s, c, err);
}

static void teardown(vsim *s)
{
    for (size_t i = 0; s->rq && i < s->n; i++)
        free(s->rq[i].kv.blocks);
    free(s->rq);
    free(s->order);
    free(s->run);
    free(s->wq);
    free(s->lag);
    free(s->slot);
    free(s->slot_req);
    free(s->loading);
    if (s->cpu)
        cpu_tier_destroy(s->cpu);
    free(s->cpu);
    sim_pool_destroy(&s->pool);
}

int serve_vllm_run_x(const kvp_workload *w, const double *arrival_s, const serve_config *c,
                     serve_cost_fn cost, void *cost_arg, serve_result *out,
                     serve_vllm_extra *extra, kvp_error *err)
{
    vsim s;
    serve_vllm_extra x;
    memset(&s, 0, sizeof s);
    memset(out, 0, sizeof *out);
    memset(&x, 0, sizeof x);
    s.out = out;
    s.x = &x;
    s.timed = cost != NULL;
    int rc = configure(&s, w, c, err);
    if (!rc)
        rc = init_requests(&s, arrival_s, err);
    if (!rc)
        rc = replay(&s, cost, cost_arg, err);
    if (!rc)
        rc = report(&s, err);
    teardown(&s);
    if (extra)
        *extra = x;
    return rc;
}

int serve_vllm_run(const kvp_workload *w, const double *arrival_s, const serve_config *c,
                   serve_cost_fn cost, void *cost_arg, serve_result *out, kvp_error *err)
{
    return serve_vllm_run_x(w, arrival_s, c, cost, cost_arg, out, NULL, err);
}
