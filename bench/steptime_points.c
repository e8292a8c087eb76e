/* steptime_points.c - the step-time model (lib/serve/steptime.c) against the
 * published measurements of serving-sim-rules.md 5 (rows 1-5, 7, 13): each
 * point's workload replayed through a small scheduler of the engine's kind,
 * every step priced by the model, and model vs published per metric with the
 * relative error, then the median and worst |error|.  A check of the model,
 * not a measurement: nothing here runs a GPU.
 *
 * The replay, kept simple on purpose (the real schedulers are elsewhere):
 *  - all N requests arrive at 0; prompt and output lengths are spread around
 *    the published means by exponential quantiles (ShareGPT's lengths are
 *    heavy-tailed; the published totals are kept within rounding), outputs
 *    clamped to max_model_len;
 *  - vLLM 0.5 / 0.6 (rows 1-7): v0's default without chunked prefill:
 *    prefill-first whole prompts up to max(max_model_len, 2,048) tokens and
 *    256 sequences per step, otherwise one decode step of everything running;
 *    0.6.0 multi-step (row 7) runs ten decode steps between two looks at
 *    the queue;
 *  - FasterTransformer (row 13): one request, its prompt then its decodes.
 * Metrics as benchmark_serving.py defines them: TTFT (+ the per-request API
 * cost), TPOT = (e2e - TTFT) / (outputs - 1), ITL = every gap between tokens,
 * output tok/s = outputs / duration.  Runs in well under a second. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve/steptime.h"

typedef struct point {
    const char *row, *model, *gpu;
    serve_engine engine;
    double weight_bytes;
    int fp8_compute;
    unsigned n;                  /* requests */
    double in_tokens, out_tokens; /* totals */
    unsigned max_len;
    /* published; 0: not published for this row */
    double ttft_med, ttft_mean, tpot_med, itl_med, out_tps, duration;
} point;

/* Row 5's table gives one latency per GPU beside the throughput; it is read
 * as the median ITL, the latency column of rows 3-4 in the same table.
 * Row 7 ran Llama-3-8B-Instruct: llama-3.1-8b has the same shapes. */
static const point points[] = {
    {"1", "mistral-7b-v0.3", "H100", SERVE_ENGINE_VLLM_V05, 0, 0, 10, 1585, 2287, 4000,
     61.5e-3, 0, 8.36e-3, 7.98e-3, 321, 0},
    {"2", "mistral-7b-v0.3", "A100-80GB", SERVE_ENGINE_VLLM_V05, 0, 0, 10, 1585, 2287, 2000,
     142.9e-3, 0, 13.79e-3, 13.05e-3, 204, 0},
    {"3", "mistral-7b-v0.3", "H100", SERVE_ENGINE_VLLM_V05, 0, 0, 320, 73671, 71810, 2000, 0,
     1.290, 41.5e-3, 27.2e-3, 3281, 21.89},
    {"4", "mistral-7b-v0.3", "A100-80GB", SERVE_ENGINE_VLLM_V05, 0, 0, 320, 73671, 71810, 2000,
     0, 0, 0, 56.51e-3, 1591.4, 0},
    {"5", "llama-3.1-8b", "H100", SERVE_ENGINE_VLLM_V05, 1, 1, 320, 73671, 71810, 2000, 0, 0, 0,
     19.75e-3, 3400.4, 0},
    {"5", "llama-3.1-8b", "A100-80GB", SERVE_ENGINE_VLLM_V05, 1, 0, 320, 73671, 71810, 2000, 0,
     0, 0, 42.85e-3, 1517.5, 0},
    {"7", "llama-3.1-8b", "H100", SERVE_ENGINE_VLLM_V06_MULTI, 0, 0, 320, 65578, 65331, 2048,
     0, 1.629, 20.0e-3, 0, 6027, 10.84},
    {"13", NULL, "A100-40GB", SERVE_ENGINE_GPU_ONLY, 0, 0, 1, 512, 10, 4096, 63.17e-3, 0,
     22.0e-3, 0, 0, 0},
};

/* kipply's 13B GPT (row 13) is not in the catalog: a Llama-2-13B-shaped
 * stand-in (40 x 5,120, 12.7 B linear parameters against GPT-13B's 12.6 B). */
static const char gpt13b[] =
    "{\"model_type\": \"llama\", \"hidden_size\": 5120, \"intermediate_size\": 13824,"
    " \"num_hidden_layers\": 40, \"num_attention_heads\": 40, \"num_key_value_heads\": 40,"
    " \"vocab_size\": 32000, \"max_position_embeddings\": 4096, \"torch_dtype\": \"float16\","
    " \"tie_word_embeddings\": false}";

typedef struct req {
    uint64_t prompt, out, done;  /* done: outputs produced */
    double first, last, finish;
    int running;
} req;

/* exponential quantile of mean mu at (i + 0.5) / n */
static double spread(double mu, unsigned i, unsigned n)
{
    return n == 1 ? mu : -mu * log(1.0 - (i + 0.5) / n);
}

static void lengths(const point *pt, req *r)
{
    double pm = pt->in_tokens / pt->n, om = pt->out_tokens / pt->n;
    for (unsigned i = 0; i < pt->n; i++) {
        /* prompts in another order than outputs, so long meets short */
        double p = spread(pm, (i * 7919u) % pt->n, pt->n), o = spread(om, i, pt->n);
        r[i].prompt = p < 4 ? 4 : p > pt->max_len / 2 ? pt->max_len / 2 : (uint64_t)llround(p);
        r[i].out = o < 2 ? 2 : (uint64_t)llround(o);
        if (r[i].prompt + r[i].out > pt->max_len)
            r[i].out = pt->max_len - r[i].prompt;
    }
}

typedef struct run {
    double now;
    double *itl;
    size_t n_itl;
} run;

static double step(serve_time *t, serve_slot *s, size_t n)
{
    serve_batch b = {s, n, 0, 0};
    for (size_t i = 0; i < n; i++)
        b.tokens += s[i].q, b.sampled += s[i].samples != 0;
    return serve_time_step(t, &b);
}

/* One prefill step of whole prompts, FCFS, if any waits and fits. */
static int prefill(serve_time *t, const point *pt, req *r, size_t *next, size_t running, run *st,
                   serve_slot *s, size_t *idx)
{
    uint64_t budget = pt->max_len > 2048 ? pt->max_len : 2048, used = 0;
    size_t n = 0;
    while (*next < pt->n && running + n < 256 && used + r[*next].prompt <= budget) {
        used += r[*next].prompt;
        idx[n] = *next;
        s[n++] = (serve_slot){0, r[*next].prompt, 1};
        (*next)++;
    }
    if (!n)
        return 0;
    st->now += step(t, s, n);
    for (size_t i = 0; i < n; i++) {
        req *q = &r[idx[i]];
        q->first = q->last = st->now + serve_time_request_s(t);
        q->done = 1;
        q->running = 1;
    }
    return 1;
}

static void decode(serve_time *t, req *r, unsigned nr, run *st, serve_slot *s, size_t *idx)
{
    size_t n = 0;
    for (unsigned i = 0; i < nr; i++)
        if (r[i].running) {
            idx[n] = i;
            s[n++] = (serve_slot){r[i].prompt + r[i].done - 1, 1, 1};
        }
    st->now += step(t, s, n);
    for (size_t i = 0; i < n; i++) {
        req *q = &r[idx[i]];
        st->itl[st->n_itl++] = st->now + serve_time_request_s(t) - q->last;
        q->last = st->now + serve_time_request_s(t);
        if (++q->done == q->out) {
            q->running = 0;
            q->finish = q->last;
        }
    }
}

static int any(const req *r, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (r[i].running)
            return 1;
    return 0;
}

typedef struct metrics {
    double ttft_med, ttft_mean, tpot_med, itl_med, out_tps, duration;
} metrics;

static void replay(serve_time *t, const point *pt, metrics *mt)
{
    req *r = calloc(pt->n, sizeof *r);
    serve_slot *s = calloc(pt->n, sizeof *s);
    size_t *idx = calloc(pt->n, sizeof *idx), next = 0, running = 0, outs = 0;
    run st = {0, NULL, 0};
    lengths(pt, r);
    for (unsigned i = 0; i < pt->n; i++)
        outs += r[i].out;
    st.itl = calloc(outs, sizeof *st.itl);
    for (;;) {
        running = 0;
        for (unsigned i = 0; i < pt->n; i++)
            running += r[i].running;
        if (prefill(t, pt, r, &next, running, &st, s, idx))
            continue;
        if (!running)
            break;
        /* 0.6.0's --num-scheduler-steps 10: ten decode steps before the
         * scheduler looks at the queue again */
        for (int k = pt->engine == SERVE_ENGINE_VLLM_V06_MULTI ? 10 : 1; k-- && any(r, pt->n);)
            decode(t, r, pt->n, &st, s, idx);
    }
    double *ttft = calloc(pt->n, sizeof *ttft), *tpot = calloc(pt->n, sizeof *tpot);
    for (unsigned i = 0; i < pt->n; i++) {
        ttft[i] = r[i].first;
        tpot[i] = (r[i].finish - r[i].first) / (double)(r[i].out - 1);
        mt->duration = r[i].finish > mt->duration ? r[i].finish : mt->duration;
    }
    serve_dist d;
    serve_dist_of(ttft, pt->n, &d);
    mt->ttft_med = d.p50, mt->ttft_mean = d.mean;
    serve_dist_of(tpot, pt->n, &d);
    mt->tpot_med = d.p50;
    serve_dist_of(st.itl, st.n_itl, &d);
    mt->itl_med = d.p50;
    mt->out_tps = (double)outs / mt->duration;
    free(r), free(s), free(idx), free(st.itl), free(ttft), free(tpot);
}

static double errs[64];
static size_t n_errs;

static void show(const char *row, const char *what, double model, double pub, double scale,
                 const char *unit)
{
    if (pub <= 0)
        return;
    double e = (model - pub) / pub;
    errs[n_errs++] = fabs(e);
    printf("  %-4s %-14s model %10.2f %-6s published %10.2f %-6s error %+6.1f%%\n", row, what,
           model * scale, unit, pub * scale, unit, 100 * e);
}

static kvp_model *model_for(const point *pt)
{
    kvp_model *m = NULL;
    kvp_error e;
    if (pt->model)
        return kvp_model_load(pt->model, &m, &e) ? NULL : m;
    char path[] = "/tmp/kvplan-gpt13b-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    fputs(gpt13b, f);
    fclose(f);
    int rc = kvp_model_load(path, &m, &e);
    unlink(path);
    return rc ? NULL : m;
}

static void one(const point *pt)
{
    kvp_model *m = model_for(pt);
    serve_time t;
    serve_time_opts o = {pt->weight_bytes, pt->fp8_compute, 0, pt->engine};
    kvp_error e;
    if (!m || serve_time_init(&t, m, kvp_gpu_find(pt->gpu), &o, &e)) {
        printf("  %-4s cannot model (%s)\n", pt->row, m ? e.msg : "model not loaded");
        kvp_model_free(m);
        return;
    }
    /* STEPTIME_EFF="mfu_prefill mfu_decode mbu step_s req_s api_s" overrides
     * the vLLM engines' factors: for recalibrating, not for the record */
    const char *env = getenv("STEPTIME_EFF");
    serve_eff *f = &t.eff;
    if (env && pt->engine != SERVE_ENGINE_GPU_ONLY)
        sscanf(env, "%lf %lf %lf %lf %lf %lf", &f->mfu_prefill, &f->mfu_decode, &f->mbu,
               &f->step_s, &f->req_s, &f->api_s);
    if (env && pt->engine != SERVE_ENGINE_GPU_ONLY && t.gpu->sm < 90)
        f->mfu_decode *= SERVE_PRE_HOPPER_DECODE;
    metrics mt = {0};
    replay(&t, pt, &mt);
    printf("row %s: %s on %s, %u requests, %s%s\n", pt->row, pt->model ? pt->model : "13B GPT",
           pt->gpu, pt->n, serve_engine_name(pt->engine),
           pt->weight_bytes == 1 ? (pt->fp8_compute ? ", fp8 w8a8" : ", fp8 weight-only") : "");
    show(pt->row, "TTFT median", mt.ttft_med, pt->ttft_med, 1e3, "ms");
    show(pt->row, "TTFT mean", mt.ttft_mean, pt->ttft_mean, 1e3, "ms");
    show(pt->row, "TPOT median", mt.tpot_med, pt->tpot_med, 1e3, "ms");
    show(pt->row, "ITL median", mt.itl_med, pt->itl_med, 1e3, "ms");
    show(pt->row, "output tok/s", mt.out_tps, pt->out_tps, 1, "tok/s");
    show(pt->row, "duration", mt.duration, pt->duration, 1, "s");
    kvp_model_free(m);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    printf("step-time model vs serving-sim-rules.md 5 (a model, not a measurement)\n");
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++)
        one(&points[i]);
    if (!n_errs)
        return 1;
    qsort(errs, n_errs, sizeof *errs, cmp);
    double med = n_errs % 2 ? errs[n_errs / 2] : (errs[n_errs / 2 - 1] + errs[n_errs / 2]) / 2;
    printf("summary: %zu figures, median |error| %.1f%%, worst |error| %.1f%%\n", n_errs,
           100 * med, 100 * errs[n_errs - 1]);
    return 0;
}
