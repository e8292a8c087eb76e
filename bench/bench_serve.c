/* bench_serve.c - scheduler steps per second of the serving simulator on the
 * Mooncake conversation trace, replayed concurrently (kvp_serve_run: vLLM
 * v1's scheduler and SGLang's radix cache, untimed and under the step-time
 * model, arrivals at the trace's timestamps and all at once), against the
 * sequential replay of the same trace through the same pool (kvp_sim_run),
 * measured in the same run.  The concurrent replays refuse what exceeds the
 * model's max_model_len, as vLLM does; the sequential one has no such limit,
 * so it runs twice: over the requests the concurrent replays serve (the
 * reference of every ratio) and over the whole trace.  The concurrent
 * replays are given the whole trace and count what they refuse.  Each time
 * is the median of a few repeats of the replay call alone (the trace is
 * loaded once, outside the clock).
 *
 * The pool is vLLM's for Qwen3-8B on an A100-80GB with the trace's 512-token
 * blocks, as `kvplan sim --concurrent --trace T qwen3-8b --gpu A100-80GB`
 * sizes it; each concurrent variant is that command's configuration, the
 * untimed ones without the model.  No assertion on time: the last line is
 * a verdict, and the exit status says only whether the replays ran.
 *
 *   bench_serve [TRACE]   TRACE, else $BENCH_SERVE_TRACE, else the default
 *   $BENCH_SERVE_REPEATS  repeats per variant (default 7) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kvplan.h"

#define DEFAULT_TRACE "/work/shared/traces/conversation_trace.jsonl"
#define MODEL "qwen3-8b"
#define GPU "A100-80GB"
#define SECONDS_LIMIT 10.0 /* "seconds, not minutes" */
#define MAX_REPEATS 99

typedef struct variant {
    const char *name;
    int concurrent;                 /* 0: kvp_sim_run */
    int whole;                      /* kvp_sim_run over the whole trace, not only
                                       the requests the concurrent replays serve */
    kvp_serve_policy policy;
    kvp_serve_arrivals arrivals;
    int timed;
} variant;

static const variant variants[] = {
    {"sequential (reference)", 0, 0, KVP_SERVE_VLLM, KVP_ARRIVE_ALL, 0},
    {"sequential, whole trace", 0, 1, KVP_SERVE_VLLM, KVP_ARRIVE_ALL, 0},
    {"vLLM   untimed  trace", 1, 0, KVP_SERVE_VLLM, KVP_ARRIVE_TRACE, 0},
    {"vLLM   untimed  all", 1, 0, KVP_SERVE_VLLM, KVP_ARRIVE_ALL, 0},
    {"vLLM   timed    trace", 1, 0, KVP_SERVE_VLLM, KVP_ARRIVE_TRACE, 1},
    {"vLLM   timed    all", 1, 0, KVP_SERVE_VLLM, KVP_ARRIVE_ALL, 1},
    {"radix  untimed  trace", 1, 0, KVP_SERVE_RADIX, KVP_ARRIVE_TRACE, 0},
    {"radix  untimed  all", 1, 0, KVP_SERVE_RADIX, KVP_ARRIVE_ALL, 0},
    {"radix  timed    trace", 1, 0, KVP_SERVE_RADIX, KVP_ARRIVE_TRACE, 1},
    {"radix  timed    all", 1, 0, KVP_SERVE_RADIX, KVP_ARRIVE_ALL, 1},
};
#define N_VARIANTS (sizeof variants / sizeof variants[0])

/* What one variant reports: its counts (the same on every repeat) and the
 * median time of its replay. */
typedef struct outcome {
    uint64_t requests, rejected, steps;
    double hit_rate, model_wall, seconds, cpu_seconds;
} outcome;

static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double now(void) { return clock_s(CLOCK_MONOTONIC); }
/* the process's CPU time: what other processes on a busy machine do not add */
static double cpu_now(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *fmt_int(uint64_t v, char *buf, size_t n)
{
    char raw[32];
    int len = snprintf(raw, sizeof raw, "%llu", (unsigned long long)v), o = 0;
    for (int i = 0; i < len && (size_t)o + 2 < n; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[i];
    }
    buf[o] = 0;
    return buf;
}

/* vLLM's pool, batch limits and max_model_len for the model on the GPU,
 * with the trace's block size (as kvplan sim's sim_model_pool asks). */
static int vllm_pool(const kvp_model *m, uint32_t block_size, kvp_vllm_result *r, kvp_error *e)
{
    kvp_vllm_params p;
    kvp_vllm_defaults(&p);
    p.block_size = block_size;
    p.gpu = GPU;
    return kvp_vllm(m, &p, r, e);
}

/* The requests a replay under max_model_len serves (prompt + max(output, 1)
 * within it, as lib/serve's schedulers refuse the rest), sharing w's hashes:
 * free only its req. */
static int admissible(const kvp_workload *w, uint64_t max_model_len, kvp_workload *out)
{
    *out = *w;
    if (!(out->req = malloc((w->n_req ? w->n_req : 1) * sizeof *out->req)))
        return -1;
    out->n_req = 0;
    for (size_t i = 0; i < w->n_req; i++) {
        const kvp_sim_request *q = &w->req[i];
        uint64_t out_tokens = q->output_tokens ? q->output_tokens : 1;
        if (!max_model_len || q->prompt_tokens + out_tokens <= max_model_len)
            out->req[out->n_req++] = *q;
    }
    return 0;
}

static int run_one(const kvp_workload *w, const variant *v, const kvp_sim_config *sc,
                   const kvp_serve_config *base, const kvp_model *m, outcome *o, int repeats,
                   kvp_error *e)
{
    double t[MAX_REPEATS], u[MAX_REPEATS];
    for (int i = 0; i < repeats; i++) {
        double t0, u0;
        if (!v->concurrent) {
            kvp_sim_result r;
            u0 = cpu_now(), t0 = now();
            if (kvp_sim_run(w, sc, &r, e))
                return -1;
            t[i] = now() - t0, u[i] = cpu_now() - u0;
            o->requests = r.requests;
            o->rejected = 0;
            o->steps = 0;
            o->hit_rate = r.hit_rate;
            o->model_wall = 0;
            continue;
        }
        kvp_serve_config c = *base;
        kvp_serve_result r;
        c.policy = v->policy;
        c.arrivals = v->arrivals;
        c.model = v->timed ? m : NULL;
        c.gpu = v->timed ? GPU : NULL;
        if (v->policy == KVP_SERVE_RADIX) /* SGLang keeps its own batch limits */
            c.max_num_batched_tokens = 0, c.max_num_seqs = 0;
        u0 = cpu_now(), t0 = now();
        if (kvp_serve_run(w, &c, &r, e))
            return -1;
        t[i] = now() - t0, u[i] = cpu_now() - u0;
        o->requests = r.requests;
        o->rejected = r.rejected;
        o->steps = r.steps;
        o->hit_rate = r.hit_rate;
        o->model_wall = r.timed ? r.wall_seconds : 0;
    }
    qsort(t, (size_t)repeats, sizeof t[0], cmp);
    qsort(u, (size_t)repeats, sizeof u[0], cmp);
    o->seconds = t[repeats / 2];
    o->cpu_seconds = u[repeats / 2];
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : getenv("BENCH_SERVE_TRACE");
    const char *rep = getenv("BENCH_SERVE_REPEATS");
    int repeats = rep ? atoi(rep) : 7;
    if (!path || !*path)
        path = DEFAULT_TRACE;
    if (repeats < 1 || repeats > MAX_REPEATS)
        return fprintf(stderr, "bench_serve: BENCH_SERVE_REPEATS=%s: give 1 to %d\n", rep,
                       MAX_REPEATS), 2;
    if (access(path, R_OK))
        return fprintf(stderr, "bench_serve: the Mooncake conversation trace is missing: %s\n"
                       "  (give its path as the argument or in BENCH_SERVE_TRACE, e.g. "
                       "make bench-serve TRACE=/path/to/conversation_trace.jsonl)\n", path), 2;

    kvp_workload w;
    kvp_error e;
    kvp_model *m = NULL;
    kvp_vllm_result *vr = malloc(sizeof *vr);
    const kvp_catalog_entry *ce = kvp_catalog_find(MODEL);
    if (!vr)
        return fprintf(stderr, "bench_serve: out of memory\n"), 1;
    if (!ce)
        return fprintf(stderr, "bench_serve: %s is not in the catalog\n", MODEL), 1;
    double t0 = now();
    if (kvp_workload_mooncake(path, &w, &e))
        return fprintf(stderr, "bench_serve: %s\n", e.msg), 1;
    double t_load = now() - t0;
    if (kvp_model_from_config_text(ce->text, ce->len, ce->name, &m, &e) ||
        vllm_pool(m, w.block_size, vr, &e))
        return fprintf(stderr, "bench_serve: %s: %s\n", MODEL, e.msg), 1;

    kvp_workload served;
    if (admissible(&w, vr->max_model_len, &served))
        return fprintf(stderr, "bench_serve: out of memory\n"), 1;
    kvp_sim_config sc;
    kvp_sim_defaults(&sc);
    sc.num_blocks = vr->num_blocks;
    sc.block_size = w.block_size;
    kvp_serve_config base;
    kvp_serve_defaults(&base);
    base.num_blocks = vr->num_blocks;
    base.block_size = w.block_size;
    base.max_num_batched_tokens = (uint32_t)vr->max_num_batched_tokens;
    base.max_num_seqs = vr->max_num_seqs;
    base.max_model_len = vr->max_model_len;

    char b1[32], b2[32], b3[32], b4[32];
    uint64_t prompt = 0;
    for (size_t i = 0; i < w.n_req; i++)
        prompt += w.req[i].prompt_tokens;
    printf("trace %s: %s requests, %s prompt tokens, %.0f s of arrivals (loaded in %.3f s)\n",
           path, fmt_int(w.n_req, b1, sizeof b1), fmt_int(prompt, b2, sizeof b2),
           w.n_req ? (w.req[w.n_req - 1].timestamp - w.req[0].timestamp) / 1e3 : 0.0, t_load);
    printf("pool: vLLM's for %s on %s, %s blocks of %u (%s tokens); max_num_batched_tokens %s, "
           "max_num_seqs %u, max_model_len %s\n", MODEL, GPU,
           fmt_int(vr->num_blocks, b1, sizeof b1), w.block_size,
           fmt_int(vr->num_blocks * w.block_size, b2, sizeof b2),
           fmt_int(vr->max_num_batched_tokens, b3, sizeof b3), vr->max_num_seqs,
           fmt_int(vr->max_model_len, b4, sizeof b4));
    printf("radix: SGLang's own batch limits, the same %s-token pool; timed: the step-time model "
           "(a model, not a measurement)\n", b2);
    printf("time: CLOCK_MONOTONIC around the replay call alone, median of %d (cpu s: the "
           "process's CPU time, steadier on a busy machine)\n\n", repeats);
    printf("%-23s %8s %8s %9s %8s %8s %8s %12s %7s %7s %10s\n", "variant", "requests",
           "rejected", "steps", "hit rate", "median s", "cpu s", "steps/s", "x seq", "cpu x",
           "modelled s");

    outcome o[N_VARIANTS];
    double worst = 0;
    for (size_t i = 0; i < N_VARIANTS; i++) {
        const variant *v = &variants[i];
        if (run_one(v->concurrent || v->whole ? &w : &served, v, &sc, &base, m, &o[i], repeats, &e))
            return fprintf(stderr, "bench_serve: %s: %s\n", v->name, e.msg), 1;
        if (o[i].seconds > worst)
            worst = o[i].seconds;
        char steps[32] = "-", sps[32] = "-", ratio[32], cratio[32], wall[32] = "-";
        snprintf(ratio, sizeof ratio, "%.2f", o[i].seconds / o[0].seconds);
        snprintf(cratio, sizeof cratio, "%.2f", o[i].cpu_seconds / o[0].cpu_seconds);
        if (v->concurrent) {
            fmt_int(o[i].steps, steps, sizeof steps);
            fmt_int((uint64_t)((double)o[i].steps / o[i].seconds), sps, sizeof sps);
        }
        if (v->timed)
            snprintf(wall, sizeof wall, "%.0f", o[i].model_wall);
        printf("%-23s %8s %8s %9s %8.4f %8.4f %8.4f %12s %7s %7s %10s\n", v->name,
               fmt_int(o[i].requests, b1, sizeof b1), fmt_int(o[i].rejected, b2, sizeof b2), steps,
               o[i].hit_rate, o[i].seconds, o[i].cpu_seconds, sps, ratio, cratio, wall);
        fflush(stdout);
    }
    double lo = 0, hi = 0, clo = 0, chi = 0;
    for (size_t i = 0; i < N_VARIANTS; i++)
        if (variants[i].concurrent) {
            double x = o[i].seconds / o[0].seconds, y = o[i].cpu_seconds / o[0].cpu_seconds;
            lo = lo == 0 || x < lo ? x : lo;
            hi = x > hi ? x : hi;
            clo = clo == 0 || y < clo ? y : clo;
            chi = y > chi ? y : chi;
        }
    printf("\nx seq, cpu x: each replay's median time over the sequential replay's of the same %s "
           "requests (%.4f s, %s requests/s)\n", fmt_int(o[0].requests, b2, sizeof b2),
           o[0].seconds, fmt_int((uint64_t)((double)o[0].requests / o[0].seconds), b1, sizeof b1));
    printf("ratio: the concurrent replays take %.1fx to %.1fx the sequential replay's time "
           "(CPU time: %.1fx to %.1fx)\n", lo, hi, clo, chi);
    printf("verdict: the whole trace replays in at most %.3f s per variant: %s (limit %.0f s)\n",
           worst, worst < SECONDS_LIMIT ? "seconds, not minutes" : "TOO SLOW", SECONDS_LIMIT);
    kvp_model_free(m);
    free(served.req);
    free(vr);
    kvp_workload_free(&w);
    return 0;
}
