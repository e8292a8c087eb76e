/* tech_eval.c - the figures of one what-if: theory bytes at the setting and
 * the capacity of the same memory, and the chosen runtime's own figures
 * (llama.cpp's cells and padding through kvp_llama and kvp_fit, vLLM's
 * blocks and capacity line through kvp_vllm).  Nothing here prices a byte
 * itself: it only asks the runtimes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tech.h"

/* One sequence's theory bytes at n tokens, before KIVI's residual. */
static int theory_at(const kvp_model *m, const kvp_theory_params *base, uint64_t held,
                     uint32_t seqs, kvp_theory_result *r, kvp_error *err)
{
    kvp_theory_params t = *base;
    t.n_ctx = held ? held : 1;
    t.n_seq = seqs;
    if (t.n_ctx < seqs)
        t.n_ctx = seqs;
    return kvp_theory(m, &t, r, err);
}

/* KIVI keeps its last R tokens in full precision: what that adds to one
 * sequence of n tokens over pricing them quantized. */
static int residual_bytes(const tech_applied *a, uint64_t n, uint64_t *out, kvp_error *err)
{
    kvp_theory_result q, f;
    uint64_t r = n < a->residual ? n : a->residual;
    *out = 0;
    if (!a->residual || !r)
        return 0;
    if (theory_at(a->theory_model, &a->theory, r, 1, &q, err) ||
        theory_at(a->theory_model, &a->residual_types, r, 1, &f, err))
        return -1;
    *out = f.total_bytes - q.total_bytes;
    return 0;
}

int tech_theory_bytes(const tech_applied *a, uint64_t N, uint32_t S, uint64_t *out,
                      kvp_error *err)
{
    kvp_theory_result r;
    uint64_t q = N / S, rem = N % S, held, extra;
    held = rem * tech_held(a, q + 1) + (S - rem) * tech_held(a, q);
    if (theory_at(a->theory_model, &a->theory, held, S, &r, err) ||
        residual_bytes(a, q, &extra, err))
        return -1;
    if (kvp_mul(extra, S, &extra) || kvp_add(r.total_bytes, extra, out))
        return kvp_fail(err, KVP_EINPUT, "%s: size overflows 64 bits", a->model->name);
    return 0;
}

/* The longest single sequence whose bytes fit `memory`; a length whose size
 * overflows does not fit. */
static void theory_tokens(const tech_applied *a, uint64_t memory, kvp_tech_store *s)
{
    uint64_t lo = 0, hi = KVP_MAX_TOKENS, b;
    kvp_error e;
    if (tech_theory_bytes(a, hi, 1, &b, &e) == 0 && b <= memory) {
        s->theory_tokens_unbounded = 1;
        return;
    }
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (tech_theory_bytes(a, mid, 1, &b, &e) == 0 && b <= memory)
            lo = mid;
        else
            hi = mid - 1;
    }
    s->theory_tokens = lo;
}

static int eval_theory(const tech_ctx *c, const tech_applied *a, kvp_tech_store *s,
                       kvp_error *err)
{
    kvp_theory_result r;
    uint64_t one, extra;
    if (tech_theory_bytes(a, c->N, c->S, &s->theory_bytes, err) ||
        theory_at(a->theory_model, &a->theory, c->n, 1, &r, err) ||
        residual_bytes(a, a->residual, &extra, err) ||
        tech_theory_bytes(a, c->n, 1, &one, err))
        return -1;
    theory_tokens(a, c->memory, s);
    s->per_token_bytes = r.per_token_bytes;
    s->fixed_bytes_per_seq = r.fixed_bytes_per_seq + extra;
    s->held_tokens = tech_held(a, c->n);
    s->theory_seqs = one ? c->memory / one : 0;
    return 0;
}

static void join_lines(char *out, size_t n, const char (*lines)[256], size_t k)
{
    size_t len = 0;
    out[0] = 0;
    for (size_t i = 0; i < k && len < n; i++) {
        int w = snprintf(out + len, n - len, "%s%s", i ? "\n" : "", lines[i]);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

static int eval_llama(const tech_ctx *c, const tech_applied *a, kvp_tech_store *s)
{
    kvp_llama_params l = a->llama;
    kvp_llama_result r;
    kvp_fit_params fp;
    kvp_fit_result fr;
    kvp_error e;
    l.n_ctx = c->N;
    l.n_seq = (int32_t)c->S;
    if (kvp_llama(a->model, &l, &r, &e)) {
        snprintf(s->rt_reason, sizeof s->rt_reason, "%s", e.msg);
        return 0;
    }
    memset(&fp, 0, sizeof fp);
    fp.runtime = KVP_RT_LLAMA;
    fp.budget = c->memory;
    fp.seqs = 1;
    fp.context = c->n;
    fp.llama = l;
    if (kvp_fit(a->model, &fp, &fr, &e)) {
        snprintf(s->rt_reason, sizeof s->rt_reason, "%s", e.msg);
        return 0;
    }
    s->rt_computed = 1;
    s->rt_label = KVP_LABEL_EXACT;
    s->rt_bytes = r.total_bytes;
    s->rt_tokens = fr.max_context;
    s->rt_concurrency = (double)fr.max_seqs;
    join_lines(s->rt_log, sizeof s->rt_log, r.log, r.n_log);
    return 0;
}

/* vLLM; with eviction (which vLLM does not implement) a request of L tokens
 * is priced as vLLM would price one of the tokens it keeps: a model. */
static int eval_vllm(const tech_ctx *c, const tech_applied *a, kvp_tech_store *s,
                     kvp_error *err)
{
    kvp_vllm_params v = a->vllm;
    kvp_vllm_result *r = malloc(sizeof *r);
    kvp_error e;
    if (!r)
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    v.max_model_len = a->vllm_model ? tech_held(a, c->N) : c->N;
    if (kvp_vllm(a->model, &v, r, &e)) {
        snprintf(s->rt_reason, sizeof s->rt_reason, "%s", e.msg);
    } else {
        s->rt_computed = 1;
        s->rt_label = a->vllm_model ? KVP_LABEL_MODEL : KVP_LABEL_EXACT;
        s->rt_bytes = r->per_request_bytes;
        s->rt_blocks = r->num_blocks;
        s->rt_block_size = r->block_size;
        s->rt_concurrency = r->max_concurrency;
        s->rt_tokens = a->vllm_model ? (uint64_t)(r->max_concurrency * (double)c->N)
                                     : r->token_capacity;
        snprintf(s->rt_log, sizeof s->rt_log, "%s", r->n_log > 1 ? r->log[1] : "");
    }
    free(r);
    return 0;
}

int tech_eval(const tech_ctx *c, const tech_applied *a, kvp_tech_store *s, kvp_error *err)
{
    memset(s, 0, sizeof *s);
    if (eval_theory(c, a, s, err))
        return -1;
    switch (c->r->runtime) {
    case KVP_RT_THEORY:
        s->rt_computed = 1;
        s->rt_label = KVP_LABEL_EXACT;
        s->rt_bytes = s->theory_bytes;
        s->rt_tokens = s->theory_tokens;
        s->rt_concurrency = (double)s->theory_seqs;
        return 0;
    case KVP_RT_LLAMA:
        if (!a->llama_ok) {
            snprintf(s->rt_reason, sizeof s->rt_reason, "%s", a->llama_why);
            return 0;
        }
        return eval_llama(c, a, s);
    case KVP_RT_VLLM:
        if (!a->vllm_ok) {
            snprintf(s->rt_reason, sizeof s->rt_reason, "%s", a->vllm_why);
            return 0;
        }
        return eval_vllm(c, a, s, err);
    }
    return 0;
}

static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

void tech_relate(const kvp_tech_store *base, kvp_tech_store *s)
{
    s->theory_multiplier = ratio((double)base->theory_bytes, (double)s->theory_bytes);
    if (!s->rt_computed || !base->rt_computed)
        return;
    s->rt_tokens_multiplier = s->theory_tokens_unbounded && !s->rt_tokens
                                  ? 0 : ratio((double)s->rt_tokens, (double)base->rt_tokens);
    s->rt_concurrency_multiplier = ratio(s->rt_concurrency, base->rt_concurrency);
}
