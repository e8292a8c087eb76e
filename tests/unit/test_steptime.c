/* test_steptime.c - the step-time model (lib/serve/steptime.c) against the
 * worked numbers of serving-sim-rules.md 4.4 and 4.1-4.2, each written out
 * by hand from the reference or the model's config.json, never taken from
 * the code under test; plus the GPU table's rates (4.7) and the model's
 * shape: fp8 KV, sliding windows, recurrent state, MoE experts, monotony. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "serve/steptime.h"

static kvp_model *load(const char *name)
{
    kvp_model *m = NULL;
    kvp_error e;
    return kvp_model_load(name, &m, &e) ? NULL : m;
}

static int near(double got, double want, double rel) { return fabs(got - want) <= rel * fabs(want); }

/* A model on a GPU at peak (efficiency 1, no overhead). */
static int peak(serve_time *t, const kvp_model *m, const char *gpu, int kv_fp8)
{
    serve_time_opts o = {0, 0, kv_fp8, SERVE_ENGINE_VLLM_V1};
    kvp_error e;
    if (!m || serve_time_init(t, m, kvp_gpu_find(gpu), &o, &e))
        return -1;
    serve_time_peak(t);
    return 0;
}

/* n identical slots */
static void cost(const serve_time *t, uint64_t p, uint64_t q, int samples, size_t n,
                 serve_step_cost *c)
{
    static serve_slot s[512];
    for (size_t i = 0; i < n; i++)
        s[i] = (serve_slot){p, q, samples};
    serve_batch b = {s, n, q * n, samples ? (uint32_t)n : 0};
    serve_time_cost(t, &b, c);
}

static void gpu_table(void)
{
    const kvp_gpu *a = kvp_gpu_find("a100-pcie-80gb"), *h = kvp_gpu_find("h100-pcie"),
                  *s = kvp_gpu_find("H100"), *a4 = kvp_gpu_find("A100-40GB-PCIe");
    CHECK("gpus: a100-pcie-80gb is its own row, 1,935 GB/s, 81920 MiB",
          a && !strcmp(a->name, "A100-80GB-PCIe") && a->mem_bw_gbs == 1935 &&
              a->memory_mib == 81920 && a->bf16_tflops == 312 && a->fp8_tflops == 0);
    CHECK("gpus: h100-pcie is its own row, 2,000 GB/s, 756 / 1,513 TFLOPS",
          h && !strcmp(h->name, "H100-PCIe") && h->mem_bw_gbs == 2000 && h->bf16_tflops == 756 &&
              h->fp8_tflops == 1513 && h->memory_mib == 81559);
    CHECK("gpus: H100 SXM 3,350 GB/s, 989 TFLOPS, Gen5", s && s->mem_bw_gbs == 3350 &&
                                                             s->bf16_tflops == 989 &&
                                                             s->host_link_gbs == 63);
    CHECK("gpus: A100 40GB PCIe 1,555 GB/s", a4 && a4->mem_bw_gbs == 1555 && a4->memory_mib == 40960);
    int all = 1;
    for (const char *const *n = (const char *const[]){"a100", "a100-40", "h200", "b200", "l4",
                                                      "l40s", "a10g", "3090", "4090", "5090",
                                                      NULL};
         *n; n++) {
        const kvp_gpu *g = kvp_gpu_find(*n);
        all &= g && g->mem_bw_gbs > 0 && g->bf16_tflops > 0 && g->host_link_gbs > 0;
    }
    CHECK("gpus: every row has its rates", all);
}

/* 4.4: Mistral-7B-v0.3 14.2 GB per step; decode at B=1 4.25 / 6.98 / 2.96 ms. */
static void mistral(void)
{
    kvp_model *m = load("mistral-7b-v0.3");
    serve_time t;
    serve_step_cost c;
    CHECK("mistral: loads", m && peak(&t, m, "H100", 0) == 0);
    if (!m)
        return;
    cost(&t, 1, 1, 1, 1, &c);
    /* 32 x 218.1 M + 4,096 x 32,768 = 7.113 G params x 2 bytes */
    CHECK("mistral: weight bytes per step 14.2 GB", near(c.bytes_weights, 14.23e9, 0.005));
    CHECK("mistral: B=1 decode on H100 SXM 4.25 ms", near(c.seconds, 4.25e-3, 0.005));
    peak(&t, m, "A100-80GB", 0);
    cost(&t, 1, 1, 1, 1, &c);
    CHECK("mistral: B=1 decode on A100 80GB 6.98 ms", near(c.seconds, 6.98e-3, 0.005));
    peak(&t, m, "H200", 0);
    cost(&t, 1, 1, 1, 1, &c);
    CHECK("mistral: B=1 decode on H200 2.96 ms", near(c.seconds, 2.96e-3, 0.005));
    peak(&t, m, "A100-80GB-PCIe", 0);
    cost(&t, 1, 1, 1, 1, &c);
    CHECK("mistral: the PCIe A100 is slower by 2,039 / 1,935", near(c.seconds, 14.23 / 1935, 0.005));
    /* efficiency below 1 and overheads make any step slower than the peak */
    serve_time_opts o = {0, 0, 0, SERVE_ENGINE_VLLM_V05};
    kvp_error e;
    serve_time d;
    serve_time_init(&d, m, kvp_gpu_find("H100"), &o, &e);
    peak(&t, m, "H100", 0);
    double tp = serve_time_step(&t, &(serve_batch){&(serve_slot){100, 1, 1}, 1, 1, 1});
    double td = serve_time_step(&d, &(serve_batch){&(serve_slot){100, 1, 1}, 1, 1, 1});
    CHECK("mistral: a calibrated engine is slower than the peak", td > tp * 1.2);
    kvp_model_free(m);
}

/* 4.1, 4.4: Llama-3.1-8B 14.0 GFLOP per token, LM head 1.05 GFLOP per
 * sample, attention 0.52 MFLOP per token per context token, 15.0 GB per
 * step, 4.48 / 7.36 / 3.13 ms at B=1, 70.8 k / 22.3 k prefill tokens/s. */
static void llama(void)
{
    kvp_model *m = load("llama-3.1-8b");
    serve_time t;
    serve_step_cost c, c2;
    CHECK("llama: loads", m && peak(&t, m, "H100", 0) == 0);
    if (!m)
        return;
    cost(&t, 1, 1, 1, 1, &c);
    CHECK("llama: 15.0 GB per step", near(c.bytes_weights, 15.0e9, 0.005));
    CHECK("llama: 14.0 GFLOP per token (linear)", near(c.flops_linear, 14.0e9, 0.005));
    CHECK("llama: LM head 1.05 GFLOP per sampled token", near(c.flops_head, 1.05e9, 0.005));
    CHECK("llama: B=1 decode on H100 4.48 ms", near(c.seconds, 4.48e-3, 0.005));
    peak(&t, m, "A100-80GB", 0);
    cost(&t, 1, 1, 1, 1, &c);
    CHECK("llama: B=1 decode on A100 7.36 ms", near(c.seconds, 7.36e-3, 0.005));
    peak(&t, m, "H200", 0);
    cost(&t, 1, 1, 1, 1, &c);
    CHECK("llama: B=1 decode on H200 3.13 ms", near(c.seconds, 3.13e-3, 0.005));
    /* a decode at context 4,096: 4 x 32 heads x 128 x 32 layers = 524,288
     * FLOPs per context token, 2.1 GFLOP in all */
    cost(&t, 4095, 1, 1, 1, &c);
    CHECK("llama: attention 0.52 MFLOP per context token", near(c.flops_attn / 4096, 524288, 1e-9));
    CHECK("llama: 2.1 GFLOP at 4K context", near(c.flops_attn, 2.1e9, 0.03));
    /* a prompt chunk: the causal mean context p + (q+1)/2, exactly */
    cost(&t, 1000, 100, 0, 1, &c);
    CHECK("llama: a chunk sees p + (q+1)/2 on average",
          near(c.flops_attn, 524288.0 * 100 * (1000 + 101 / 2.0), 1e-9));
    CHECK("llama: no LM head for a chunk that does not sample", c.flops_head == 0);
    /* prefill at peak: 512 tokens, attention adds ~1 % */
    peak(&t, m, "H100", 0);
    cost(&t, 0, 512, 0, 1, &c);
    CHECK("llama: prefill 70.8 k tokens/s on H100 at peak", near(512 / c.seconds, 70.8e3, 0.02));
    peak(&t, m, "A100-80GB", 0);
    cost(&t, 0, 512, 0, 1, &c);
    CHECK("llama: prefill 22.3 k tokens/s on A100 at peak", near(512 / c.seconds, 22.3e3, 0.02));
    /* 4.4: 256 sequences x 2,000 tokens read 67 GB, 20 ms on H100 at peak */
    peak(&t, m, "H100", 0);
    cost(&t, 1999, 1, 1, 256, &c);
    CHECK("llama: KV read 67 GB for 256 x 2,000", near(c.bytes_kv_read, 256.0 * 2000 * 131072, 1e-9));
    CHECK("llama: ... 20 ms on H100", near(c.bytes_kv_read / 3.35e12, 20e-3, 0.01));
    CHECK("llama: KV write 128 KiB per new token", c.bytes_kv_write == 256.0 * 131072);
    CHECK("llama: that step is memory-bound", c.t_memory > c.t_compute);
    /* prompt chunks read the context before them, not their own K/V */
    cost(&t, 3000, 500, 0, 1, &c);
    CHECK("llama: a chunk reads p tokens of KV", c.bytes_kv_read == 3000.0 * 131072);
    /* fp8 KV: half the KV bytes, the same FLOPs and weights */
    serve_time f;
    peak(&f, m, "H100", 1);
    cost(&f, 1999, 1, 1, 256, &c2);
    cost(&t, 1999, 1, 1, 256, &c);
    CHECK("llama: fp8 KV halves the KV read and write",
          c2.bytes_kv_read * 2 == c.bytes_kv_read && c2.bytes_kv_write * 2 == c.bytes_kv_write);
    CHECK("llama: fp8 KV leaves FLOPs and weights alone",
          c2.flops_attn == c.flops_attn && c2.bytes_weights == c.bytes_weights &&
              c2.seconds < c.seconds);
    kvp_model_free(m);
}

static void monotone(void)
{
    kvp_model *m = load("qwen3-8b");
    serve_time t;
    serve_time_opts o = {0, 0, 0, SERVE_ENGINE_VLLM_V1};
    kvp_error e;
    CHECK("monotone: qwen3-8b loads",
          m && serve_time_init(&t, m, kvp_gpu_find("A100-80GB-PCIe"), &o, &e) == 0);
    if (!m)
        return;
    serve_step_cost a, b;
    int ok = 1;
    for (uint64_t p = 0; p < 40000; p += 997) {
        cost(&t, p, 1, 1, 64, &a);
        cost(&t, p + 997, 1, 1, 64, &b);
        ok &= b.seconds > a.seconds;
    }
    CHECK("monotone: longer context, slower decode", ok);
    ok = 1;
    for (size_t n = 1; n < 400; n += 7) {
        cost(&t, 2000, 1, 1, n, &a);
        cost(&t, 2000, 1, 1, n + 1, &b);
        ok &= b.seconds > a.seconds;
    }
    CHECK("monotone: more requests, slower step", ok);
    ok = 1;
    for (uint64_t q = 1; q < 16384; q = q * 2 + 1) {
        cost(&t, 0, q, 0, 1, &a);
        cost(&t, 0, q * 2 + 1, 0, 1, &b);
        ok &= b.seconds > a.seconds;
    }
    CHECK("monotone: bigger chunk, slower step", ok);
    /* a big chunk is compute-bound, a small decode memory-bound (4.3) */
    cost(&t, 0, 8192, 0, 1, &a);
    cost(&t, 100, 1, 1, 1, &b);
    CHECK("regimes: 8,192-token chunk compute-bound, B=1 decode memory-bound",
          a.t_compute > a.t_memory && b.t_memory > b.t_compute);
    CHECK("engines: names round-trip", serve_engine_parse("vllm-0.5") == SERVE_ENGINE_VLLM_V05 &&
                                           serve_engine_parse("tgi") == -1 &&
                                           !strcmp(serve_engine_name(SERVE_ENGINE_VLLM_V1),
                                                   "vllm-v1"));
    CHECK("empty batch: 0 s", serve_time_step(&t, &(serve_batch){NULL, 0, 0, 0}) == 0);
    kvp_model_free(m);
}

/* Gemma-3-4B (DESIGN 2): 5 full + 29 sliding layers of W = 1,024, 4,096 B
 * per token per layer; at context 8,192 a decode reads 5 x 8,192 x 4,096 +
 * 29 x 1,024 x 4,096 bytes. */
static void windows(void)
{
    kvp_model *m = load("gemma-3-4b-it");
    serve_time t;
    serve_step_cost c, d;
    CHECK("window: gemma-3-4b loads", m && peak(&t, m, "H100", 0) == 0);
    if (!m)
        return;
    cost(&t, 8191, 1, 1, 1, &c);
    CHECK("window: sliding layers read at most W", c.bytes_kv_read == 5.0 * 8192 * 4096 +
                                                                         29.0 * 1024 * 4096);
    cost(&t, 16383, 1, 1, 1, &d);
    CHECK("window: only the full layers grow", d.bytes_kv_read - c.bytes_kv_read ==
                                                   5.0 * 8192 * 4096);
    kvp_model_free(m);
}

/* Qwen3.5-9B (DESIGN 2): 8 full-attention layers, 24 Gated DeltaNet layers
 * with a fixed state per sequence: the state traffic does not grow. */
static void recurrent(void)
{
    kvp_model *m = load("qwen3.5-9b");
    serve_time t;
    serve_step_cost c, d;
    CHECK("recurrent: qwen3.5-9b loads", m && peak(&t, m, "H100", 0) == 0);
    if (!m)
        return;
    cost(&t, 100, 1, 1, 1, &c);
    cost(&t, 10000, 1, 1, 1, &d);
    CHECK("recurrent: state read + write per request, whatever the context",
          c.bytes_state > 0 && c.bytes_state == d.bytes_state);
    /* 8 layers x 4 KV heads x 256 x 2 x 2 bytes = 32 KiB per token */
    CHECK("recurrent: only the attention layers' KV grows",
          d.bytes_kv_read - c.bytes_kv_read == 9900.0 * 32768);
    kvp_model_free(m);
}

/* MoE: distinct experts E (1 - (1 - k/E)^T), 4.2; Mixtral-8x7B by hand from
 * its config (hidden 4,096, 32 layers, 8 experts of 14,336, top 2, GQA 8). */
static void moe(void)
{
    CHECK("moe: T=1 reads k experts", serve_time_distinct_experts(8, 2, 1) == 2);
    CHECK("moe: T=4 reads 8 (1 - 0.75^4) = 5.46875",
          near(serve_time_distinct_experts(8, 2, 4), 5.46875, 1e-12));
    CHECK("moe: many tokens read all E", near(serve_time_distinct_experts(8, 2, 1000), 8, 1e-9));
    CHECK("moe: T=0 reads none", serve_time_distinct_experts(8, 2, 0) == 0);
    kvp_model *m = load("mixtral-8x7b-v0.1");
    serve_time t;
    serve_step_cost c, d;
    CHECK("moe: mixtral loads", m && peak(&t, m, "H100", 0) == 0);
    if (!m)
        return;
    /* per layer: attention 41,943,040 + router 32,768 + 2 norms 8,192;
     * one expert 3 x 4,096 x 14,336 = 176,160,768; head 32,000 x 4,096 */
    double dense = 32 * (41943040.0 + 32768 + 8192) + 131072000.0, expert = 32 * 176160768.0;
    cost(&t, 100, 1, 1, 1, &c);
    CHECK("moe: one token reads 2 experts' weights", near(c.bytes_weights, 2 * (dense + 2 * expert), 1e-9));
    CHECK("moe: ... and computes with 2", near(c.flops_linear, 2 * (dense - 131072000.0 + 2 * expert), 1e-9));
    cost(&t, 0, 4096, 0, 1, &d);
    CHECK("moe: a 4,096-token chunk reads all 8", near(d.bytes_weights, 2 * (dense + 8 * expert), 1e-6));
    kvp_model_free(m);
}

int main(void)
{
    gpu_table();
    mistral();
    llama();
    monotone();
    windows();
    recurrent();
    moe();
    return check_failures != 0;
}
