/* sched_radix.c - SGLang's scheduler loop over its radix cache, as
 * serving-sim-rules.md section 2.6-2.7 reads v0.4.x/v0.5.x
 * (scheduler.py get_next_batch_to_run, schedule_policy.py PrefillAdder,
 * schedule_batch.py retract_decode): each iteration runs a prefill batch if
 * the policy can form one (prefill has priority), else one decode step for
 * the whole running batch; no mixed chunks, no overlap scheduling (timing
 * only).  Left out on purpose: batch_is_full, SGLang's shortcut that skips
 * forming a prefill batch until the running batch shrinks (it only saves
 * CPU, except that the ratio's decay may admit a step earlier here).
 *
 * Memory, in tokens: the pool holds the tree (evictable + protected) and each
 * running request's own tokens (`own`: computed KV not, or not yet, in the
 * tree: a chunk's partial block, decoded tokens, a duplicate of a prefix
 * that was capped at fill - 1).  free = pool - tree - sum(own). */
#include <stdlib.h>
#include <string.h>

#include "radix.h"
#include "sched_radix.h"

enum { R_PENDING, R_WAITING, R_RUNNING, R_DONE, R_SKIPPED };
enum { ADD_CONTINUE, ADD_NO_TOKEN, ADD_OTHER };

typedef struct rreq {
    const uint64_t *ids;
    size_t nb;                 /* full prompt blocks: the matchable ids */
    uint64_t prompt, max_new;  /* max_new: output_tokens, at least 1 */
    uint64_t gen, kv, own;     /* sampled tokens; computed KV; of it, not in the tree */
    uint64_t prefix, extend;   /* this admission's match and this step's new tokens */
    uint64_t outputs;          /* output_tokens as the workload gives it */
    uint32_t node;             /* the locked tree node (RADIX_ROOT: none) */
    int state, admitted, inserted, deprio;
    double arrive, first, last;
    uint64_t hit;              /* the match at its first admission */
} rreq;

typedef struct skey {
    uint64_t k[3];
    size_t idx;
} skey;

typedef struct sim {
    const serve_config *c;
    uint32_t bs;
    rreq *r;
    size_t n, next_arrival;
    uint32_t *order;           /* request ids by arrival */
    size_t *wait, n_wait, *run, n_run, *batch, n_batch;
    long chunked;              /* the one request mid-prefill, or -1 */
    radix_tree *tree;          /* NULL: cache disabled (ChunkCache) */
    uint64_t pool, own_total, chunk, max_run, peak;
    double ratio, init_ratio, min_ratio, decay, now;
    serve_slot *slot;
    skey *key;                 /* scratch for sorting the queue or the batch */
    serve_cost_fn cost;
    void *cost_arg;
    serve_result *out;
} sim;

/* the PrefillAdder's budgets for one round */
typedef struct adder {
    double off_total, off_cur;
    int64_t rem_input, rem_chunk;
    long new_chunked;
} adder;

static uint64_t tree_tokens(const sim *s)
{
    return s->tree ? radix_evictable(s->tree) + radix_protected(s->tree) : 0;
}

static uint64_t free_tokens(const sim *s)
{
    uint64_t used = tree_tokens(s) + s->own_total;
    return used < s->pool ? s->pool - used : 0;
}

static uint64_t evictable(const sim *s)
{
    return s->tree ? radix_evictable(s->tree) : 0;
}

static void evict(sim *s, uint64_t n)
{
    if (s->tree)
        radix_evict(s->tree, n);
}

static void note_peak(sim *s)
{
    uint64_t used = tree_tokens(s) + s->own_total;
    if (used > s->peak)
        s->peak = used;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* ---- the tree side of a request ---- */

static void lock_node(sim *s, rreq *r, uint32_t node)
{
    if (s->tree) {
        radix_lock(s->tree, node);
        radix_unlock(s->tree, r->node);
    }
    r->node = node;
}

/* init_next_round_input: the fill is prompt + outputs so far; the usable
 * hit stops one token short of it (_compute_max_prefix_len) */
static int match_req(sim *s, rreq *r)
{
    uint64_t fill = r->prompt + r->gen;
    r->prefix = 0, r->node = RADIX_ROOT;
    if (s->tree) {
        int64_t k = radix_match(s->tree, r->ids, r->nb, &r->node);
        if (k < 0)
            return -1;
        r->prefix = min_u64((uint64_t)k * s->bs, fill - 1);
    }
    r->extend = fill - r->prefix;
    return 0;
}

/* cache_unfinished_req: the computed full blocks enter the tree (the whole
 * computed fill, its tail as a unique leaf, once prefill is complete), the
 * lock moves to the new last node and duplicates of what was there go */
static int insert_computed(sim *s, rreq *r)
{
    if (!s->tree)
        return 0;
    uint64_t nbk = min_u64(r->nb, r->kv / s->bs), present, depth = nbk * s->bs;
    uint32_t last;
    if (radix_insert(s->tree, r->ids, nbk, &last, &present))
        return -1;
    if (r->kv == r->prompt + r->gen && r->kv > depth) {
        if (radix_add_unique(s->tree, last, r->kv - depth, &last))
            return -1;
        depth = r->kv;
        r->inserted = 1;
    } else if (r->kv == r->prompt + r->gen) {
        r->inserted = 1;
    }
    lock_node(s, r, last);
    s->own_total -= r->own;
    r->own = r->kv - depth;
    s->own_total += r->own;
    return 0;
}

/* cache_finished_req: prompt + outputs[:-1] stay in the tree, the outputs as
 * a unique leaf below the prompt, the path's access time refreshed; the
 * lock is dropped.  Without a tree every token is freed. */
static int finish_req(sim *s, rreq *r)
{
    if (s->tree) {
        if (!r->inserted && insert_computed(s, r))
            return -1;
        uint32_t at = r->node;
        if (r->own && radix_add_unique(s->tree, r->node, r->own, &at))
            return -1;
        s->own_total -= r->own;
        r->own = 0;
        radix_touch(s->tree, at); /* insert's walk refreshes the whole path */
        radix_unlock(s->tree, r->node);
    } else {
        s->own_total -= r->own;
        r->own = 0;
    }
    r->node = RADIX_ROOT;
    r->state = R_DONE;
    return 0;
}

/* ---- prefill batch formation (PrefillAdder) ---- */

static double rem_total(const sim *s, const adder *a)
{
    return (double)free_tokens(s) + (double)evictable(s) - a->off_total;
}

static double cur_rem(const sim *s, const adder *a)
{
    return (double)free_tokens(s) + (double)evictable(s) - a->off_cur;
}

static void reserve(adder *a, uint64_t extend, uint64_t future)
{
    a->off_total += (double)extend + (double)future;
    a->off_cur += (double)extend;
    a->rem_input -= (int64_t)extend;
    a->rem_chunk -= (int64_t)extend;
}

static int budget_state(const sim *s, const adder *a)
{
    if (rem_total(s, a) <= 0 || cur_rem(s, a) <= 0)
        return ADD_NO_TOKEN;
    if (a->rem_input <= 0 || a->rem_chunk <= 0)
        return ADD_OTHER;
    return ADD_CONTINUE;
}

static void adder_init(const sim *s, adder *a)
{
    *a = (adder){.rem_input = RADIX_MAX_PREFILL_TOKENS, .rem_chunk = (int64_t)s->chunk,
                 .new_chunked = -1};
    for (size_t i = 0; i < s->n_run; i++) {
        const rreq *r = &s->r[s->run[i]];
        a->off_total += (double)min_u64(r->max_new - r->gen, RADIX_CLIP_MAX_NEW) * s->ratio;
    }
}

/* add_chunked_req: the request mid-prefill goes first, without a memory check */
static void add_chunked(sim *s, adder *a)
{
    rreq *r = &s->r[s->chunked];
    uint64_t left = r->prompt + r->gen - r->kv;
    int truncated = a->rem_chunk < 0 || left > (uint64_t)a->rem_chunk;
    r->extend = truncated ? (a->rem_chunk > 0 ? (uint64_t)a->rem_chunk : 0) : left;
    s->batch[s->n_batch++] = (size_t)s->chunked;
    reserve(a, r->extend, truncated ? 0 : min_u64(r->max_new - r->gen, RADIX_CLIP_MAX_NEW));
    if (truncated)
        a->new_chunked = s->chunked;
}

/* add_one_req: the forecast (extend + clipped max_new) must fit what is free
 * or evictable once its prefix is locked; a request longer than the chunk
 * budget is cut to it and becomes the round's chunked request */
static int add_one(sim *s, adder *a, size_t i)
{
    rreq *r = &s->r[i];
    uint64_t future = min_u64(r->max_new - r->gen, RADIX_CLIP_MAX_NEW);
    uint64_t total = r->extend + future;
    if ((double)total >= rem_total(s, a))
        return ADD_NO_TOKEN;
    if ((int64_t)r->extend > a->rem_input && s->n_batch)
        return ADD_OTHER;
    if (s->tree)
        radix_lock(s->tree, r->node);
    if ((double)total > rem_total(s, a)) {
        if (s->tree)
            radix_unlock(s->tree, r->node);
        return ADD_NO_TOKEN;
    }
    if ((int64_t)r->extend <= a->rem_chunk) {
        reserve(a, r->extend, future);
    } else {
        if (a->rem_chunk <= 0) {
            if (s->tree)
                radix_unlock(s->tree, r->node);
            return ADD_OTHER;
        }
        r->extend = (uint64_t)a->rem_chunk;
        a->new_chunked = (long)i;
        reserve(a, r->extend, 0);
    }
    s->batch[s->n_batch++] = i;
    return budget_state(s, a);
}

/* sorts idx[0..n) by a key of three numbers, smallest first */
static int cmp_key(const void *x, const void *y)
{
    const skey *a = x, *b = y;
    if (a->k[0] != b->k[0])
        return a->k[0] < b->k[0] ? -1 : 1;
    if (a->k[1] != b->k[1])
        return a->k[1] < b->k[1] ? -1 : 1;
    return (a->k[2] > b->k[2]) - (a->k[2] < b->k[2]);
}

static void sort_by_key(skey *key, size_t *idx, size_t n)
{
    qsort(key, n, sizeof *key, cmp_key);
    for (size_t k = 0; k < n; k++)
        idx[k] = key[k].idx;
}

/* calc_priority for lpm: match every waiting request against the tree; one
 * whose match is <= 32 tokens but which shares >= 32 with a request ahead of
 * it in the queue waits at the back, so one representative computes the
 * new shared prefix first */
static int sort_lpm(sim *s)
{
    radix_tree *scratch = radix_new(s->bs);
    int rc = scratch ? 0 : -1;
    for (size_t k = 0; k < s->n_wait && !rc; k++) {
        rreq *r = &s->r[s->wait[k]];
        rc = match_req(s, r);
        r->deprio = 0;
        if (!rc && r->prefix <= RADIX_IN_BATCH_THRESHOLD) {
            uint32_t last;
            uint64_t present;
            int64_t m = radix_match(scratch, r->ids, r->nb, &last);
            uint64_t cap = r->prompt + r->gen - 1;
            if (m >= 0 && min_u64((uint64_t)m * s->bs, cap) >= RADIX_IN_BATCH_THRESHOLD)
                r->deprio = 1;
            else
                rc = radix_insert(scratch, r->ids, r->nb, &last, &present);
        }
        /* longest match first, the deprioritised last; Python's sort is
         * stable, so ties keep the queue's order */
        s->key[k] = (skey){{(uint64_t)r->deprio, r->deprio ? 0 : UINT64_MAX - r->prefix, k},
                           s->wait[k]};
    }
    radix_free(scratch);
    if (!rc)
        sort_by_key(s->key, s->wait, s->n_wait);
    return rc;
}

/* get_new_batch_prefill: the chunked request first, then waiting requests
 * in policy order until a budget stops admission */
static int form_prefill(sim *s)
{
    s->n_batch = 0;
    if (s->n_run >= s->max_run || (!s->n_wait && s->chunked < 0))
        return 0;
    int lpm = s->tree && s->c->radix_lpm && s->n_wait <= RADIX_LPM_FALLBACK;
    if (lpm && sort_lpm(s))
        return -1;
    adder a;
    adder_init(s, &a);
    long was_chunked = s->chunked;
    if (s->chunked >= 0)
        add_chunked(s, &a);
    for (size_t k = 0; k < s->n_wait; k++) {
        if (s->n_run + s->n_batch >= s->max_run)
            break;
        if (!lpm && match_req(s, &s->r[s->wait[k]]))
            return -1;
        if (add_one(s, &a, s->wait[k]) != ADD_CONTINUE)
            break;
    }
    /* admission stops at the first refusal: the admitted head the queue */
    size_t admitted = s->n_batch - (was_chunked >= 0);
    memmove(s->wait, s->wait + admitted, (s->n_wait - admitted) * sizeof *s->wait);
    s->n_wait -= admitted;
    s->chunked = a.new_chunked;
    for (size_t k = 0; k < s->n_batch; k++) {
        rreq *r = &s->r[s->batch[k]];
        if ((long)s->batch[k] == was_chunked)
            continue;
        r->kv = r->prefix; /* the prefix is the tree's (locked), not the request's */
        r->state = R_RUNNING;
        if (!r->admitted) {
            r->admitted = 1;
            r->hit = r->prefix;
            s->out->hit_tokens += r->prefix;
        }
    }
    return 0;
}

/* ---- running a step ---- */

static int step_cost(sim *s, size_t n, uint64_t tokens, uint32_t sampled)
{
    serve_batch b = {s->slot, n, tokens, sampled};
    double dt = s->cost ? s->cost(s->cost_arg, &b) : 0;
    if (!(dt >= 0))
        return -1;
    s->now += dt;
    s->out->steps++;
    return 0;
}

static void sampled(sim *s, rreq *r)
{
    r->gen++;
    if (r->gen == 1)
        r->first = s->now;
    r->last = s->now;
}

/* alloc_token_slots: evict as much as asked when the free slots are short */
static int alloc(sim *s, uint64_t n)
{
    if (free_tokens(s) < n)
        evict(s, n);
    return free_tokens(s) < n ? -1 : 0;
}

static int run_prefill(sim *s, kvp_error *err)
{
    uint64_t need = 0;
    uint32_t nsamp = 0;
    for (size_t k = 0; k < s->n_batch; k++) {
        rreq *r = &s->r[s->batch[k]];
        int done = r->kv + r->extend == r->prompt + r->gen;
        s->slot[k] = (serve_slot){r->kv, r->extend, done};
        need += r->extend;
        nsamp += (uint32_t)done;
    }
    if (alloc(s, need))
        return kvp_fail(err, KVP_EINPUT, "radix replay: the pool ran out of tokens for a "
                        "prefill batch (SGLang would stop with an out-of-memory error)");
    s->own_total += need;
    note_peak(s);
    if (step_cost(s, s->n_batch, need, nsamp))
        return kvp_fail(err, KVP_EINPUT, "radix replay: the step cost is not a time");
    s->out->prefill_tokens_computed += need;
    for (size_t k = 0; k < s->n_batch; k++) {
        size_t i = s->batch[k];
        rreq *r = &s->r[i];
        r->kv += r->extend, r->own += r->extend;
        if (r->kv < r->prompt + r->gen) { /* a chunk: what is computed is shareable */
            if (insert_computed(s, r))
                return kvp_fail(err, KVP_EINPUT, "radix replay: out of memory");
            continue;
        }
        sampled(s, r);
        int rc = r->gen >= r->max_new ? finish_req(s, r) : insert_computed(s, r);
        if (rc)
            return kvp_fail(err, KVP_EINPUT, "radix replay: out of memory");
        if (r->state != R_DONE) {
            r->state = R_RUNNING;
            s->run[s->n_run++] = i;
        }
    }
    return 0;
}

/* check_decode_mem: one slot per request, evicting that many if short */
static int decode_fits(sim *s, uint64_t n)
{
    return alloc(s, n) == 0;
}

/* retract_decode's order, (outputs, -input) descending: the request with
 * the fewest outputs (ties: longest input, then the later in the batch)
 * sits last and goes first */
static void sort_for_retraction(sim *s)
{
    for (size_t k = 0; k < s->n_run; k++) {
        const rreq *r = &s->r[s->run[k]];
        s->key[k] = (skey){{UINT64_MAX - r->gen, r->prompt, k}, s->run[k]};
    }
    sort_by_key(s->key, s->run, s->n_run);
}

/* release the request's own tokens and its lock; it waits again, at the
 * back, to be re-prefilled with whatever prefix the tree still holds */
static void retract_one(sim *s, size_t i)
{
    rreq *r = &s->r[i];
    s->own_total -= r->own;
    if (s->tree)
        radix_unlock(s->tree, r->node);
    r->own = 0, r->kv = 0, r->node = RADIX_ROOT, r->inserted = 0;
    r->state = R_WAITING;
    s->wait[s->n_wait++] = i;
    s->out->preemptions++;
}

/* v0.5.x retract_decode: at least one, then until the rest fit their next
 * decode, evicting 20 steps' headroom after each release; the ratio then
 * jumps to what the rest have decoded plus that headroom */
static int retract(sim *s, kvp_error *err)
{
    sort_for_retraction(s);
    for (int first = 1; first || !decode_fits(s, s->n_run); first = 0) {
        if (s->n_run == 1)
            break;
        retract_one(s, s->run[--s->n_run]);
        uint64_t want = (uint64_t)RADIX_RETRACT_DECODE_STEPS * s->n_run, fr = free_tokens(s);
        if (want > fr)
            evict(s, want - fr);
    }
    if (!decode_fits(s, s->n_run))
        return kvp_fail(err, KVP_EINPUT, "radix replay: one request alone outgrew the pool");
    double dec = 0, max_new = 0;
    for (size_t k = 0; k < s->n_run; k++)
        dec += (double)s->r[s->run[k]].gen, max_new += (double)s->r[s->run[k]].max_new;
    double ratio = (dec + RADIX_RETRACT_DECODE_STEPS * (double)s->n_run) / max_new;
    s->ratio = ratio < 1 ? ratio : 1;
    return 0;
}

static int run_decode(sim *s, kvp_error *err)
{
    if (!decode_fits(s, s->n_run)) {
        if (retract(s, err))
            return -1;
    } else {
        s->ratio = s->ratio - s->decay > s->min_ratio ? s->ratio - s->decay : s->min_ratio;
    }
    for (size_t k = 0; k < s->n_run; k++) {
        rreq *r = &s->r[s->run[k]];
        s->slot[k] = (serve_slot){r->kv, 1, 1};
    }
    s->own_total += s->n_run;
    note_peak(s);
    if (step_cost(s, s->n_run, s->n_run, (uint32_t)s->n_run))
        return kvp_fail(err, KVP_EINPUT, "radix replay: the step cost is not a time");
    size_t kept = 0;
    for (size_t k = 0; k < s->n_run; k++) {
        rreq *r = &s->r[s->run[k]];
        r->kv++, r->own++;
        sampled(s, r);
        if (r->gen >= r->max_new) {
            if (finish_req(s, r))
                return kvp_fail(err, KVP_EINPUT, "radix replay: out of memory");
        } else {
            s->run[kept++] = s->run[k];
        }
    }
    s->n_run = kept;
    return 0;
}

/* ---- setup and the loop ---- */

static int too_big(const sim *s, const kvp_sim_request *q, uint64_t max_new)
{
    uint64_t need;
    if (kvp_add(q->prompt_tokens, max_new, &need))
        return 1;
    return need >= s->pool || (s->c->max_model_len && need > s->c->max_model_len);
}

static int setup(sim *s, const kvp_workload *w, const double *arrival_s, kvp_error *err)
{
    s->r = calloc(w->n_req ? w->n_req : 1, sizeof *s->r);
    s->order = calloc(w->n_req + 1, sizeof *s->order);
    s->wait = calloc(w->n_req + 1, sizeof *s->wait);
    s->run = calloc(w->n_req + 1, sizeof *s->run);
    s->batch = calloc(w->n_req + 1, sizeof *s->batch);
    s->slot = calloc(w->n_req + 1, sizeof *s->slot);
    s->key = calloc(w->n_req + 1, sizeof *s->key);
    if (!s->r || !s->order || !s->wait || !s->run || !s->batch || !s->slot || !s->key)
        return kvp_fail(err, KVP_EINPUT, "radix replay: out of memory");
    s->n = w->n_req;
    for (size_t i = 0; i < w->n_req; i++) {
        const kvp_sim_request *q = &w->req[i];
        rreq *r = &s->r[i];
        r->ids = q->n_hashes ? w->hashes + q->hash_off : NULL;
        r->nb = min_u64(q->n_hashes, q->prompt_tokens / s->bs);
        r->prompt = q->prompt_tokens;
        r->max_new = q->output_tokens ? q->output_tokens : 1;
        r->outputs = q->output_tokens;
        r->arrive = arrival_s[i];
        r->state = too_big(s, q, r->max_new) || !q->prompt_tokens ? R_SKIPPED : R_PENDING;
        s->order[i] = (uint32_t)i;
    }
    if (serve_sort_by_arrival(arrival_s, s->order, s->n))
        return kvp_fail(err, KVP_EINPUT, "radix replay: out of memory");
    return 0;
}

static void arrive(sim *s)
{
    while (s->next_arrival < s->n && s->r[s->order[s->next_arrival]].arrive <= s->now) {
        size_t i = s->order[s->next_arrival++];
        if (s->r[i].state == R_PENDING) {
            s->r[i].state = R_WAITING;
            s->wait[s->n_wait++] = i;
        }
    }
}

static int next_arrival(sim *s)
{
    while (s->next_arrival < s->n && s->r[s->order[s->next_arrival]].state == R_SKIPPED)
        s->next_arrival++;
    if (s->next_arrival == s->n)
        return 0;
    double t = s->r[s->order[s->next_arrival]].arrive;
    if (t > s->now)
        s->now = t;
    return 1;
}

static int loop(sim *s, uint64_t guard, kvp_error *err)
{
    int rc = 0;
    for (uint64_t it = 0; rc == 0; it++) {
        if (it > guard) {
            rc = kvp_fail(err, KVP_EINPUT, "radix replay: no end after %llu iterations "
                          "(retraction thrashing?)", (unsigned long long)guard);
            break;
        }
        arrive(s);
        if (form_prefill(s)) {
            rc = kvp_fail(err, KVP_EINPUT, "radix replay: out of memory");
        } else if (s->n_batch) {
            rc = run_prefill(s, err);
        } else if (s->n_run) {
            rc = run_decode(s, err);
        } else {
            s->ratio = s->init_ratio; /* idle */
            if (s->n_wait || s->chunked >= 0) {
                if (!next_arrival(s) || s->r[s->order[s->next_arrival]].arrive <= s->now)
                    rc = kvp_fail(err, KVP_EINPUT, "radix replay: a waiting request can never "
                                  "be admitted");
            } else if (!next_arrival(s)) {
                break;
            }
        }
    }
    return rc;
}

static void report(const sim *s, serve_result *out, kvp_error *err)
{
    double *ttft = calloc(s->n + 1, sizeof *ttft), *tpot = calloc(s->n + 1, sizeof *tpot);
    size_t nt = 0, np = 0;
    double t0 = 0, end = 0;
    int any = 0;
    for (size_t i = 0; i < s->n; i++) {
        const rreq *r = &s->r[i];
        if (s->c->per_request)
            s->c->per_request[i] = (serve_done){r->arrive, r->state == R_DONE ? r->last : -1,
                                               r->hit};
        if (r->state != R_DONE)
            continue;
        out->requests++;
        out->prompt_tokens += r->prompt;
        out->output_tokens += r->outputs;
        if (!any || r->arrive < t0)
            t0 = r->arrive;
        if (!any || r->last > end)
            end = r->last;
        any = 1;
        if (ttft)
            ttft[nt++] = r->first - r->arrive;
        if (tpot && r->gen >= 2)
            tpot[np++] = (r->last - r->first) / (double)(r->gen - 1);
    }
    (void)err;
    out->wall_seconds = any ? end - t0 : 0;
    serve_dist_of(ttft, nt, &out->ttft);
    serve_dist_of(tpot, np, &out->tpot);
    free(ttft);
    free(tpot);
    if (out->wall_seconds > 0) {
        out->prompt_tps = (double)out->prompt_tokens / out->wall_seconds;
        out->output_tps = (double)out->output_tokens / out->wall_seconds;
    }
    out->hit_rate = out->prompt_tokens ? (double)out->hit_tokens / (double)out->prompt_tokens : 0;
    out->peak_blocks = (s->peak + s->bs - 1) / s->bs;
}

static uint64_t default_max_run(const serve_config *c)
{
    if (c->max_num_seqs)
        return c->max_num_seqs;
    if (!c->max_model_len)
        return 4096;
    uint64_t n = c->pool_tokens / c->max_model_len * 512; /* model_runner.py max_num_reqs */
    return n < 2048 ? 2048 : n > 4096 ? 4096 : n;
}

/* the loop's bound: every prompt and output token recomputed many times over */
static uint64_t iteration_guard(const kvp_workload *w)
{
    uint64_t g = 1000000;
    for (size_t i = 0; i < w->n_req; i++)
        if (kvp_add(g, (w->req[i].prompt_tokens + w->req[i].output_tokens + 1) * 64, &g))
            return UINT64_MAX;
    return g;
}

int serve_radix_pool_tokens(uint64_t gpu_bytes, uint64_t available_bytes,
                            double mem_fraction_static, uint64_t cell_bytes, uint64_t *tokens,
                            kvp_error *err)
{
    if (!(mem_fraction_static > 0 && mem_fraction_static <= 1))
        return kvp_fail(err, KVP_EUSAGE, "--mem-fraction-static must be in (0, 1]");
    if (!cell_bytes)
        return kvp_fail(err, KVP_EINPUT, "radix pool: a token's KV has no bytes");
    double rest = (double)available_bytes - (double)gpu_bytes * (1 - mem_fraction_static);
    double n = rest / (double)cell_bytes;
    if (!(n >= 1))
        return kvp_fail(err, KVP_EINPUT, "radix pool: after the weights and the %.0f%% SGLang "
                        "leaves free, no memory is left for the KV pool",
                        100 * (1 - mem_fraction_static));
    *tokens = n >= (double)KVP_MAX_TOKENS ? KVP_MAX_TOKENS : (uint64_t)n;
    return 0;
}

int serve_radix_run(const kvp_workload *w, const double *arrival_s, const serve_config *c,
                    serve_cost_fn cost, void *cost_arg, serve_result *out, kvp_error *err)
{
    memset(out, 0, sizeof *out);
    if (c->block_size != w->block_size || !c->block_size)
        return kvp_fail(err, KVP_EUSAGE, "radix replay: the block size %u is not the workload's "
                        "%u", c->block_size, w->block_size);
    if (!c->pool_tokens)
        return kvp_fail(err, KVP_EUSAGE, "radix replay: the token pool is empty");
    sim s = {.c = c, .bs = c->block_size, .chunked = -1, .pool = c->pool_tokens,
             .chunk = c->max_num_batched_tokens ? c->max_num_batched_tokens
                                                : RADIX_CHUNKED_PREFILL,
             .max_run = default_max_run(c), .cost = cost, .cost_arg = cost_arg, .out = out};
    /* NewTokenRatioTracker: schedule_conservativeness 1 */
    s.init_ratio = s.ratio = 0.7;
    s.min_ratio = 0.14 * s.init_ratio;
    s.decay = (s.init_ratio - s.min_ratio) / 600;
    int rc = setup(&s, w, arrival_s, err);
    if (!rc && c->prefix_caching && !(s.tree = radix_new(s.bs)))
        rc = kvp_fail(err, KVP_EINPUT, "radix replay: out of memory");
    if (!rc)
        rc = loop(&s, iteration_guard(w), err);
    if (!rc)
        report(&s, out, err);
    radix_free(s.tree);
    free(s.r), free(s.order), free(s.wait), free(s.run), free(s.batch), free(s.slot), free(s.key);
    return rc;
}
