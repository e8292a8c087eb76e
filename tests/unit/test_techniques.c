/* test_techniques.c - kvplan techniques against the worked Qwen3-8B rows of
 * ../shared/reference/techniques.md (sections A-F: theory at 32K, and vLLM
 * on the published 54.94 GiB = 58,987,118,592 bytes at max_model_len 40,960,
 * whose baseline is vLLM 0.28.0's logged 25,002 blocks / 400,032 tokens /
 * 9.77x), the Qwen3.5-9B hybrid anchor, and every catalog model in every
 * runtime (each of the twelve ids present, every row priced or refused with
 * a reason). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kvplan.h"

#define MIB (1024ull * 1024ull)
#define A_VLLM 58987118592ull

static const kvp_tech_row *row(const kvp_tech_result *r, const char *id, const char *variant)
{
    for (size_t i = 0; i < r->n_rows; i++)
        if (!strcmp(r->rows[i].id, id) &&
            (!variant || !strncmp(r->rows[i].variant, variant, strlen(variant))))
            return &r->rows[i];
    return NULL;
}

static int near(double a, double b, double tol) { return fabs(a - b) <= tol; }

static kvp_tech_result *run(const char *model, kvp_runtime rt, uint64_t ctx,
                            void (*tweak)(kvp_tech_params *))
{
    kvp_model *m;
    kvp_error e;
    kvp_tech_params p;
    kvp_tech_result *r = malloc(sizeof *r);
    if (!r || kvp_model_load(model, &m, &e)) {
        free(r);
        return NULL;
    }
    memset(&p, 0, sizeof p);
    p.runtime = rt;
    p.context = ctx;
    kvp_theory_defaults(&p.theory);
    kvp_llama_defaults(&p.llama);
    kvp_vllm_defaults(&p.vllm);
    if (rt == KVP_RT_VLLM) {
        p.vllm.max_model_len = ctx;
        p.vllm.kv_cache_memory = A_VLLM;
    }
    if (tweak)
        tweak(&p);
    int rc = kvp_techniques(m, &p, r, &e);
    if (rc)
        printf("# %s: %s\n", model, e.msg);
    kvp_model_free(m);
    if (rc) {
        free(r);
        return NULL;
    }
    return r;
}

static void qwen3_theory(void)
{
    kvp_tech_result *r = run("qwen3-8b", KVP_RT_THEORY, 32768, NULL);
    const kvp_tech_row *x;
    CHECK("theory: runs", r != NULL);
    if (!r)
        return;
    CHECK("baseline 4,608 MiB", r->base.theory_bytes == 4608 * MIB);
    x = row(r, "gqa", "MHA");
    CHECK("A1 MHA 589,824 B/token, 18,432 MiB, x0.25, already GQA",
          x && x->computed && x->value == 589824 && x->u.store.theory_bytes == 18432 * MIB &&
              x->multiplier == 0.25 && x->already_used);
    x = row(r, "gqa", "MQA");
    CHECK("A1 MQA 18,432 B/token, 576 MiB", x && x->value == 18432 &&
                                                x->u.store.theory_bytes == 576 * MIB);
    x = row(r, "cross-layer", "CLA2");
    CHECK("A2 CLA2 73,728 B/token, 2,304 MiB, x2", x && x->value == 73728 &&
          x->u.store.theory_bytes == 2304 * MIB && x->multiplier == 2.0 && !x->already_used);
    x = row(r, "mla", NULL);
    CHECK("A3 MLA 512+64: 41,472 B/token, 1,358,954,496 B, x32/9",
          x && x->value == 41472 && x->u.store.theory_bytes == 1358954496ull &&
              near(x->multiplier, 32.0 / 9.0, 1e-12));
    x = row(r, "sliding-window", "W 1,024");
    CHECK("A4 30 sliding W 1,024 + 6 full: 931,135,488 B (x5.19)",
          x && x->u.store.theory_bytes == 931135488ull && near(x->multiplier, 5.19, 0.005));
    x = row(r, "sliding-window", "W 4,096");
    CHECK("A4 27 sliding W 4,096 + 9 full: 1,660,944,384 B (x2.91)",
          x && x->u.store.theory_bytes == 1660944384ull && near(x->multiplier, 2.91, 0.005));
    x = row(r, "hybrid", NULL);
    CHECK("A5 27 GDN + 9 attention: 36,864 B/token + 57,950,208 B/seq = 1,265,909,760 B",
          x && x->value == 36864 && x->u.store.fixed_bytes_per_seq == 57950208ull &&
              x->u.store.theory_bytes == 1265909760ull && near(x->multiplier, 3.82, 0.005));
    static const struct { const char *v; uint64_t tok, mib100; } q[] = {
        {"fp8", 73728, 230400}, {"q8_0", 78336, 244800}, {"q4_0", 41472, 129600},
        {"nvfp4", 41472, 129600}, {"turboquant_k8v4", 66560, 208000},
        {"turboquant_4bit_nc", 50688, 158400}, {"turboquant_k3v4_nc", 46592, 145600},
        {"turboquant_3bit_nc", 42496, 132800},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        char name[96];
        x = row(r, "kv-quant", q[i].v);
        snprintf(name, sizeof name, "A6 %s: %llu B/token, %.2f MiB", q[i].v,
                 (unsigned long long)q[i].tok, q[i].mib100 / 100.0);
        CHECK(name, x && x->value == q[i].tok &&
                        x->u.store.theory_bytes * 100 == q[i].mib100 * MIB);
    }
    x = row(r, "kv-quant", "KIVI");
    CHECK("A6 KIVI-2: 27,648 B/token, 878.63 MiB with a full residual (x5.24), theory",
          x && x->value == 27648 && x->u.store.theory_bytes == 921305088ull &&
              near(x->multiplier, 5.24, 0.005) && x->label == KVP_LABEL_THEORY);
    x = row(r, "token-eviction", "StreamingLLM");
    CHECK("A7 StreamingLLM 4 + 2000: 295,501,824 B, x16.35",
          x && x->u.store.theory_bytes == 295501824ull && near(x->multiplier, 16.35, 0.005));
    x = row(r, "token-eviction", "SnapKV");
    CHECK("A7 SnapKV 2,048: 301,989,888 B, x16", x && x->u.store.theory_bytes == 301989888ull &&
                                                     x->multiplier == 16.0);
    x = row(r, "token-eviction", "H2O");
    CHECK("A7 H2O 20%: x5.0", x && near(x->multiplier, 5.0, 0.005));
    x = row(r, "compressed", "r 4 w");
    CHECK("A8 r 4 w 128: 1,226,833,920 B (x3.94)",
          x && x->u.store.theory_bytes == 1226833920ull && near(x->multiplier, 3.94, 0.005));
    x = row(r, "compressed", "r 128");
    CHECK("A8 r 128 w 128: 56,623,104 B (x85.3)",
          x && x->u.store.theory_bytes == 56623104ull && near(x->multiplier, 85.33, 0.005));
    x = row(r, "compressed", "NSA");
    CHECK("A8 NSA stores 34,815 entries per layer (x0.94)",
          x && x->u.store.theory_bytes == 34815ull * 147456 && near(x->multiplier, 0.94, 0.005));
    x = row(r, "prefix-reuse", NULL);
    CHECK("B 32 x (16K shared + 256): 532,480 -> 24,576 prefill tokens",
          x && x->baseline == 532480 && x->value == 24576 && x->u.recompute.cliff_found);
    x = row(r, "sparse-read", "Quest");
    CHECK("C Quest P 16 B 2,048: 838,860,800 B read per step (x5.76), +5.9% stored",
          x && x->value == 838860800ull && x->baseline == 4608 * MIB &&
              near(x->multiplier, 5.76, 0.005) &&
              near((double)x->u.read.storage_added_bytes / x->baseline, 0.059, 0.0005));
    x = row(r, "sparse-read", "NSA");
    CHECK("C NSA reads 3,583 tokens per layer at 32K (x9.15)",
          x && x->value == 3583ull * 147456 && near(x->multiplier, 9.15, 0.005));
    x = row(r, "offload", NULL);
    CHECK("D 128 GiB host: 932,064 tokens in 16-token blocks, 932,067 in theory, 931,840 in "
          "256-token chunks; 32K reload 0.193 s gen4, 0.097 s gen5",
          x && x->u.place.host_tokens_blocks == 932064 && x->u.place.host_tokens_theory == 932067 &&
              x->u.place.host_tokens_chunks == 931840 &&
              near(x->u.place.reload_s[0], 0.193, 0.0005) &&
              near(x->u.place.reload_s[1], 0.0966, 0.0005) &&
              near(x->u.place.reload_s[2], 0.153, 0.0005) &&
              near(x->u.place.reload_s[3], 0.0767, 0.0005));
    free(r);
}

static void qwen3_vllm(void)
{
    kvp_tech_result *r = run("qwen3-8b", KVP_RT_VLLM, 40960, NULL);
    const kvp_tech_row *x;
    CHECK("vllm: runs", r != NULL);
    if (!r)
        return;
    CHECK("vllm baseline 25,002 blocks, 400,032 tokens, 9.77x",
          r->base.rt_blocks == 25002 && r->base.rt_tokens == 400032 &&
              near(r->base.rt_concurrency, 9.77, 0.005));
    x = row(r, "gqa", "MHA");
    CHECK("MHA: 100,008 tokens in theory; 6,250 blocks, 100,000 tokens, 2.44x in vLLM",
          x && x->u.store.theory_tokens == 100008 && x->u.store.rt_blocks == 6250 &&
              x->u.store.rt_tokens == 100000 && near(x->u.store.rt_concurrency, 2.44, 0.005));
    x = row(r, "gqa", "MQA");
    CHECK("MQA: 200,016 blocks, 3,200,256 tokens, 78.13x",
          x && x->u.store.rt_blocks == 200016 && x->u.store.rt_tokens == 3200256 &&
              near(x->u.store.rt_concurrency, 78.13, 0.005));
    x = row(r, "cross-layer", "CLA2");
    CHECK("CLA2: 50,004 blocks, 800,064 tokens, 19.53x", x && x->u.store.rt_blocks == 50004 &&
          x->u.store.rt_tokens == 800064 && near(x->u.store.rt_concurrency, 19.53, 0.005));
    x = row(r, "mla", NULL);
    CHECK("MLA: 88,896 blocks, 1,422,336 tokens, 34.73x", x && x->u.store.rt_blocks == 88896 &&
          x->u.store.rt_tokens == 1422336 && near(x->u.store.rt_concurrency, 34.73, 0.005));
    x = row(r, "sliding-window", "W 1,024");
    CHECK("W 1,024 (LLM class): 150,012 blocks, 767,581 tokens, 18.74x",
          x && x->u.store.rt_blocks == 150012 && x->u.store.rt_tokens == 767581 &&
              near(x->u.store.rt_concurrency, 18.74, 0.005));
    x = row(r, "sliding-window", "W 4,096");
    CHECK("W 4,096: 100,008 blocks, 639,751 tokens, 15.62x", x &&
          x->u.store.rt_blocks == 100008 && x->u.store.rt_tokens == 639751);
    x = row(r, "hybrid", NULL);
    CHECK("hybrid: 3,030 blocks, 1,477,485 tokens, 36.07x", x && x->u.store.rt_blocks == 3030 &&
          x->u.store.rt_tokens == 1477485 && near(x->u.store.rt_concurrency, 36.07, 0.005));
    x = row(r, "kv-quant", "fp8");
    CHECK("fp8: 50,004 blocks, 800,064 tokens, exactly 2.0x", x &&
          x->u.store.rt_blocks == 50004 && x->u.store.rt_tokens == 800064 &&
          x->multiplier == 2.0);
    x = row(r, "kv-quant", "turboquant_3bit_nc");
    CHECK("turboquant_3bit_nc: 86,753 blocks, 1,388,048 tokens, 33.89x",
          x && x->u.store.rt_blocks == 86753 && x->u.store.rt_tokens == 1388048);
    x = row(r, "kv-quant", "q8_0");
    CHECK("q8_0 is not vLLM's: theory only, with a reason", x && x->computed &&
          !x->u.store.rt_computed && x->u.store.rt_reason[0] && x->label == KVP_LABEL_THEORY);
    x = row(r, "token-eviction", "SnapKV");
    CHECK("SnapKV as 128 blocks a request: 195.33x, a model",
          x && near(x->u.store.rt_concurrency, 195.33, 0.005) && x->label == KVP_LABEL_MODEL);
    x = row(r, "paged", "16-token");
    CHECK("paged: 1,000-token requests, 9 fit reserving 40,960, 396 paged (x44)",
          x && x->u.place.fit_contiguous == 9 && x->u.place.fit_paged == 396 &&
              x->u.place.waste_contiguous == 5892341760ull &&
              x->u.place.waste_paged == 1179648 && x->multiplier == 44.0);
    x = row(r, "paged", "block size");
    CHECK("block sizes 8/16/32/64: 400,032 x3 and 400,000 tokens, within 1%",
          x && x->u.place.n_sizes == 4 && x->u.place.sizes[0].tokens == 400032 &&
              x->u.place.sizes[1].tokens == 400032 && x->u.place.sizes[2].tokens == 400032 &&
              x->u.place.sizes[3].tokens == 400000 && x->multiplier > 0.99);
    x = row(r, "offload", NULL);
    CHECK("offload: a 40,960-token request reloads in 0.242 s (gen4), 0.121 s (gen5)",
          x && near(x->u.place.reload_s[0], 0.2416, 0.0005) &&
              near(x->u.place.reload_s[1], 0.1208, 0.0005));
    free(r);
}

static void serve_entry(kvp_tech_params *p) { p->vllm.entry_serve = 1; }
static void no_prefix_caching(kvp_tech_params *p) { p->vllm.prefix_caching = 0; }
static void apply_fp8_cla(kvp_tech_params *p) { p->apply = "kv-quant=fp8,cross-layer=2"; }

static void qwen3_vllm_settings(void)
{
    kvp_tech_result *r = run("qwen3-8b", KVP_RT_VLLM, 40960, serve_entry);
    const kvp_tech_row *x = r ? row(r, "sliding-window", "W 1,024") : NULL;
    CHECK("vllm serve (2,048 batched): W 1,024 gives 1,475,268 tokens, 36.02x",
          x && x->u.store.rt_tokens == 1475268 && near(x->u.store.rt_concurrency, 36.02, 0.005));
    x = r ? row(r, "sliding-window", "W 4,096") : NULL;
    CHECK("vllm serve: W 4,096 gives 999,348 tokens, 24.40x",
          x && x->u.store.rt_tokens == 999348 && near(x->u.store.rt_concurrency, 24.40, 0.005));
    free(r);
    r = run("qwen3-8b", KVP_RT_VLLM, 40960, no_prefix_caching);
    x = r ? row(r, "hybrid", NULL) : NULL;
    CHECK("prefix caching off: the hybrid reserves 1 state block a group, 37.41x",
          x && near(x->u.store.rt_concurrency, 37.41, 0.005));
    free(r);
    r = run("qwen3-8b", KVP_RT_VLLM, 40960, apply_fp8_cla);
    CHECK("--apply kv-quant=fp8,cross-layer=2: x4 in theory and exactly in vLLM blocks",
          r && r->has_combined && r->n_applied == 2 &&
              r->combined.u.store.theory_multiplier == 4.0 &&
              r->combined.u.store.rt_blocks == 100008 && r->product_theory == 4.0);
    free(r);
    r = run("qwen3.5-9b", KVP_RT_VLLM, 40960, NULL);
    x = r ? row(r, "hybrid", NULL) : NULL;
    CHECK("Qwen3.5-9B on the same memory: 3,409 blocks, 40.58x; hybrid already used",
          r && r->base.rt_blocks == 3409 && near(r->base.rt_concurrency, 40.58, 0.005) && x &&
              x->already_used && x->multiplier < 1);
    free(r);
}

static void a100_pcie(kvp_tech_params *p) { p->vllm.gpu = "A100-80GB-PCIe"; }

/* kvplan sim --concurrent's replay of one workload on a model's vLLM pool,
 * set up as that command sets it up (src/cmd_sim_serve.c: the pool, the
 * batch limits and the GPU from kvp_vllm), with prefix caching on and off. */
static int sim_concurrent(const char *model, const char *gpu, uint64_t max_model_len,
                          uint64_t kv_memory, const char *spec, kvp_serve_result out[2])
{
    kvp_model *m;
    kvp_error e;
    kvp_vllm_params vp;
    kvp_vllm_result *v = malloc(sizeof *v);
    kvp_workload w;
    int rc = -1;
    if (!v || kvp_model_load(model, &m, &e)) {
        free(v);
        return -1;
    }
    kvp_vllm_defaults(&vp);
    vp.max_model_len = max_model_len;
    vp.kv_cache_memory = kv_memory;
    vp.gpu = gpu;
    if (!kvp_vllm(m, &vp, v, &e) && !kvp_workload_synthetic(spec, v->block_size, &w, &e)) {
        kvp_serve_config c;
        kvp_serve_defaults(&c);
        c.num_blocks = v->num_blocks;
        c.block_size = v->block_size;
        c.max_num_batched_tokens = (uint32_t)v->max_num_batched_tokens;
        c.max_num_seqs = v->max_num_seqs;
        c.max_model_len = v->max_model_len;
        c.model = m;
        c.gpu = v->gpu;
        rc = 0;
        for (int i = 0; i < 2 && !rc; i++) {
            c.prefix_caching = i == 0;
            rc = kvp_serve_run(&w, &c, &out[i], &e);
        }
        kvp_workload_free(&w);
    }
    if (rc)
        printf("# sim --concurrent %s: %s\n", model, e.msg);
    kvp_model_free(m);
    free(v);
    return rc;
}

/* Prefix reuse in seconds: the same wall times and TTFTs as kvplan sim
 * --concurrent on the same pool (not numbers copied from either), faster with
 * the cache, and none where the step-time model does not apply. */
static void qwen3_seconds(void)
{
    kvp_serve_result s[2];
    kvp_tech_result *r = run("qwen3-8b", KVP_RT_VLLM, 40960, a100_pcie);
    const kvp_tech_row *x = r ? row(r, "prefix-reuse", NULL) : NULL;
    const kvp_tech_recompute *rc = x ? &x->u.recompute : NULL;
    CHECK("seconds: timed on vLLM with a GPU, tokens unchanged (532,480 -> 24,576)",
          rc && rc->timed && x->baseline == 532480 && x->value == 24576 &&
              x->label == KVP_LABEL_EXACT && !strcmp(rc->time_gpu, "A100-80GB-PCIe"));
    CHECK("seconds: the cache is faster (wall and mean TTFT), speedup = off / on",
          rc && rc->wall_on > 0 && rc->wall_on < rc->wall_off &&
              rc->ttft_mean_on < rc->ttft_mean_off && rc->speedup > 1 &&
              near(rc->speedup, rc->wall_off / rc->wall_on, 1e-12));
    int sim = sim_concurrent("qwen3-8b", "A100-80GB-PCIe", 40960, A_VLLM,
                             "shared-prefix:32,16384,256,64", s);
    CHECK("seconds: the same wall times and mean TTFTs as sim --concurrent, on and off",
          rc && !sim && s[0].timed && s[1].timed && rc->wall_on == s[0].wall_seconds &&
              rc->wall_off == s[1].wall_seconds && rc->ttft_mean_on == s[0].ttft.mean &&
              rc->ttft_mean_off == s[1].ttft.mean && !s[0].rejected);
    free(r);
    r = run("qwen3-8b", KVP_RT_VLLM, 40960, NULL);
    x = r ? row(r, "prefix-reuse", NULL) : NULL;
    CHECK("seconds: without --gpu, on the A100-80GB the vLLM rows assume; tokens unchanged",
          x && x->u.recompute.timed && !strcmp(x->u.recompute.time_gpu, "A100-80GB") &&
              x->value == 24576 && x->baseline == 532480);
    free(r);
    r = run("qwen3-8b", KVP_RT_THEORY, 32768, a100_pcie);
    x = r ? row(r, "prefix-reuse", NULL) : NULL;
    CHECK("seconds: none for theory, even with a GPU: the model prices vLLM's scheduler",
          x && !x->u.recompute.timed && strstr(x->u.recompute.time_reason, "vLLM"));
    free(r);
    r = run("qwen3.5-9b", KVP_RT_VLLM, 40960, a100_pcie);
    x = r ? row(r, "prefix-reuse", NULL) : NULL;
    CHECK("seconds: none for a hybrid whose pool the replay cannot hold, with a reason",
          x && !x->u.recompute.pool_computed && !x->u.recompute.timed &&
              x->u.recompute.time_reason[0]);
    free(r);
}

static const char *const ids[12] = {"gqa", "cross-layer", "mla", "sliding-window", "hybrid",
                                    "kv-quant", "token-eviction", "compressed",
                                    "prefix-reuse", "sparse-read", "paged", "offload"};

static void vllm_small(kvp_tech_params *p)
{
    p->vllm.kv_cache_memory = 80ull << 30;
    p->vllm.gpu = "H100"; /* prefix reuse in seconds too */
}

/* The prefix-reuse row in seconds, where timed: positive, the cache no
 * slower on a shared prefix, the speedup their ratio; else a reason. */
static int seconds_ok(const kvp_tech_row *x)
{
    const kvp_tech_recompute *rc = &x->u.recompute;
    if (x->kind != KVP_TECH_RECOMPUTE)
        return 1;
    if (!rc->timed)
        return rc->time_reason[0] != 0;
    return rc->wall_on > 0 && rc->wall_on <= rc->wall_off && rc->ttft_mean_on > 0 &&
           near(rc->speedup, rc->wall_off / rc->wall_on, 1e-12);
}

/* Every catalog model in every runtime: the twelve ids, each row priced or
 * refused with a reason, never a zero figure passed off as a result. */
static void catalog(void)
{
    static const kvp_runtime rts[3] = {KVP_RT_THEORY, KVP_RT_LLAMA, KVP_RT_VLLM};
    int all_ok = 1, ids_ok = 1, rows_ok = 1, seconds_good = 1, timed = 0;
    for (size_t i = 0; i < kvp_catalog_count(); i++) {
        const kvp_catalog_entry *e = kvp_catalog_at(i);
        for (int k = 0; k < 3; k++) {
            kvp_tech_result *r = run(e->name, rts[k], rts[k] == KVP_RT_VLLM ? 2048 : 4096,
                                     rts[k] == KVP_RT_VLLM ? vllm_small : NULL);
            /* Mllama: llama.cpp v0.5.0 has no such architecture and vLLM
             * removed it in v0.11.0; both refuse it, theory prices it */
            int refused = !strcmp(e->name, "llama-3.2-90b-vision-instruct") && k > 0;
            if (refused) {
                if (r) {
                    printf("# %s runtime %d should refuse\n", e->name, k);
                    all_ok = 0;
                }
                free(r);
                continue;
            }
            if (!r) {
                printf("# %s runtime %d failed\n", e->name, k);
                all_ok = 0;
                continue;
            }
            for (int j = 0; j < 12; j++)
                if (!row(r, ids[j], NULL)) {
                    printf("# %s: no %s row\n", e->name, ids[j]);
                    ids_ok = 0;
                }
            for (size_t j = 0; j < r->n_rows; j++) {
                const kvp_tech_row *x = &r->rows[j];
                int good = x->computed ? x->unit && x->label <= KVP_LABEL_MEASURED &&
                                             (x->kind != KVP_TECH_STORE ||
                                              x->u.store.theory_bytes > 0)
                                       : x->reason[0] != 0;
                if (!good) {
                    printf("# %s: %s %s neither priced nor refused\n", e->name, x->id,
                           x->variant);
                    rows_ok = 0;
                }
                if (!seconds_ok(x)) {
                    printf("# %s: prefix-reuse seconds on %.4f, off %.4f, x%.4f, %s\n",
                           e->name, x->u.recompute.wall_on, x->u.recompute.wall_off,
                           x->u.recompute.speedup, x->u.recompute.time_reason);
                    seconds_good = 0;
                }
                timed += x->kind == KVP_TECH_RECOMPUTE && x->u.recompute.timed;
                if (x->kind == KVP_TECH_RECOMPUTE && x->u.recompute.timed && rts[k] != KVP_RT_VLLM)
                    seconds_good = 0;
            }
            free(r);
        }
    }
    CHECK("every catalog model runs in theory, llama.cpp and vLLM (Mllama refused by both)", all_ok);
    CHECK("every run has the twelve ids", ids_ok);
    CHECK("every row is priced or refused with a reason", rows_ok);
    CHECK("prefix reuse in seconds: only on vLLM; the cache no slower, or a reason", seconds_good);
    CHECK("prefix reuse in seconds: timed for some catalog models on an H100", timed > 0);
}

int main(void)
{
    qwen3_theory();
    qwen3_vllm();
    qwen3_vllm_settings();
    qwen3_seconds();
    catalog();
    return check_failures != 0;
}
