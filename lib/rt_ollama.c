/* rt_ollama.c - the llama-server flags Ollama (v0.30 and later) passes for
 * a model, so its KV cache is llama.cpp's for those flags.  Ollama's own
 * rules, from reference/remote-models.md 4.3 (server/routes.go,
 * server/sched.go, llm/llama_server.go of v0.33.0-rc2): num_ctx is the
 * request's, else the params layer's, else OLLAMA_CONTEXT_LENGTH, else an
 * automatic tier by VRAM; -c is num_ctx times the parallel count. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kvp_int.h"

/* Architectures Ollama loads with one sequence whatever OLLAMA_NUM_PARALLEL
 * says (load() in server/sched.go), by GGUF general.architecture. */
static const char *const one_at_a_time[] = {
    "mllama", "qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe", "qwen3next", "lfm2", "lfm2moe",
    "nemotron_h", "nemotron_h_moe", "nemotron_h_omni", NULL};

#define AUTO_NUM_CTX 4096      /* the automatic tier below 23 GiB of VRAM */
#define DEFAULT_NUM_BATCH 512  /* num_batch's default, passed as -b and -ub */

void kvp_ollama_env_read(kvp_ollama_env *e)
{
    e->context_length = getenv("OLLAMA_CONTEXT_LENGTH");
    e->num_parallel = getenv("OLLAMA_NUM_PARALLEL");
    e->kv_cache_type = getenv("OLLAMA_KV_CACHE_TYPE");
    e->flash_attention = getenv("OLLAMA_FLASH_ATTENTION");
}

static void why(kvp_ollama_settings *s, const char *fmt, ...) KVP_PRINTF(2, 3);
static void why(kvp_ollama_settings *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (s->n_why < sizeof s->why / sizeof s->why[0])
        vsnprintf(s->why[s->n_why++], sizeof s->why[0], fmt, ap);
    va_end(ap);
}

static int env_count(const char *name, const char *val, uint64_t max, uint64_t *out,
                     kvp_error *err)
{
    char *end;
    unsigned long long v = strtoull(val, &end, 10);
    if (end == val || *end || val[0] == '-' || v > max)
        return kvp_fail(err, KVP_EUSAGE, "%s=%s: a whole number in [0, %llu] is expected",
                        name, val, (unsigned long long)max);
    *out = v;
    return 0;
}

static int pick_num_ctx(const kvp_model *m, const kvp_ollama_env *env, kvp_ollama_settings *s,
                        kvp_error *err)
{
    uint64_t v = 0;
    if (m->ollama_num_ctx) {
        s->num_ctx = m->ollama_num_ctx;
        why(s, "num_ctx %llu from the model's params layer", (unsigned long long)s->num_ctx);
    } else if (env->context_length && *env->context_length &&
               (env_count("OLLAMA_CONTEXT_LENGTH", env->context_length, 1ull << 40, &v, err) ||
                v)) {
        if (!v)
            return -1;
        s->num_ctx = v;
        why(s, "num_ctx %llu from OLLAMA_CONTEXT_LENGTH", (unsigned long long)v);
    } else {
        s->num_ctx = AUTO_NUM_CTX;
        why(s, "num_ctx %llu: Ollama's automatic choice below 23 GiB of VRAM (32768 from "
               "23 GiB, 262144 from 47 GiB: set OLLAMA_CONTEXT_LENGTH or -c)",
            (unsigned long long)s->num_ctx);
    }
    if (m->max_position && s->num_ctx > m->max_position) {
        s->num_ctx = m->max_position;
        why(s, "num_ctx lowered to the training context %llu, as Ollama does",
            (unsigned long long)s->num_ctx);
    }
    return 0;
}

static int pick_parallel(const kvp_model *m, const kvp_ollama_env *env, kvp_ollama_settings *s,
                         kvp_error *err)
{
    uint64_t np = 1;
    if (env->num_parallel && *env->num_parallel &&
        env_count("OLLAMA_NUM_PARALLEL", env->num_parallel, 1u << 16, &np, err))
        return -1;
    if (np == 0)
        np = 1;
    for (const char *const *a = one_at_a_time; *a && np > 1; a++)
        if (!strcmp(m->gguf_arch, *a)) {
            why(s, "-np 1: Ollama serves %s models one sequence at a time", *a);
            np = 1;
        }
    s->n_seq = (uint32_t)np;
    return kvp_mul(s->num_ctx, np, &s->n_ctx) || s->n_ctx > 1ull << 40
               ? kvp_fail(err, KVP_EUSAGE, "num_ctx %llu x %llu sequences is too large",
                          (unsigned long long)s->num_ctx, (unsigned long long)np)
               : 0;
}

int kvp_ollama_settings_for(const kvp_model *m, const kvp_ollama_env *env,
                            kvp_ollama_settings *s, kvp_error *err)
{
    kvp_ollama_env none = {0};
    memset(s, 0, sizeof *s);
    if (!env)
        env = &none;
    if (pick_num_ctx(m, env, s, err) || pick_parallel(m, env, s, err))
        return -1;
    if (env->kv_cache_type && *env->kv_cache_type) {
        char lower[32];
        size_t i = 0;
        for (; env->kv_cache_type[i] && i + 1 < sizeof lower; i++)
            lower[i] = (char)(env->kv_cache_type[i] | (env->kv_cache_type[i] >= 'A' &&
                                                        env->kv_cache_type[i] <= 'Z' ? 32 : 0));
        lower[i] = 0;
        if (kvp_dtype_parse(lower, &s->type))
            return kvp_fail(err, KVP_EUSAGE, "OLLAMA_KV_CACHE_TYPE=%s: not a cache type "
                            "llama-server takes (f16, q8_0, q4_0, ...)", env->kv_cache_type);
        s->has_type = 1;
    }
    s->flash_attn = KVP_FA_AUTO;
    if (env->flash_attention && *env->flash_attention) {
        const char *v = env->flash_attention;
        int on = !strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "on") ||
                 !strcasecmp(v, "yes");
        s->flash_attn = on ? KVP_FA_ON : KVP_FA_OFF;
    }
    s->n_batch = m->ollama_num_batch && m->ollama_num_batch <= 1u << 24
                     ? (uint32_t)m->ollama_num_batch : DEFAULT_NUM_BATCH;
    return 0;
}
