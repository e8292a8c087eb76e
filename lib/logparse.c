/* logparse.c - reading what a runtime logged when it started: llama.cpp's
 * context settings and size lines, vLLM's memory and capacity lines.  Lines
 * are found by their function prefix anywhere in a line, so timestamps,
 * level letters and process prefixes (llama-server, Docker, systemd) do not
 * matter.  Only what a prediction needs is kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvp_int.h"

/* The value after "key<spaces>= " in a llama_context line, or NULL. */
static const char *ctx_value(const char *line, const char *key)
{
    const char *p = strstr(line, "llama_context: ");
    size_t n = strlen(key);
    if (!p)
        return NULL;
    p += 15;
    if (strncmp(p, key, n) != 0 || (p[n] != ' ' && p[n] != '='))
        return NULL;
    p += n;
    while (*p == ' ')
        p++;
    return *p == '=' ? p + 1 + (p[1] == ' ') : NULL;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    *out = v;
    return 0;
}

/* "... K (q8_0): ..., V (q8_0): ..." -> the two types. */
static void size_line_types(const char *line, kvp_log *L)
{
    char k[16], v[16];
    const char *p = strstr(line, " K ("), *q = strstr(line, " V (");
    if (p && q && sscanf(p, " K (%15[^)])", k) == 1 && sscanf(q, " V (%15[^)])", v) == 1) {
        kvp_dtype t;
        if (!kvp_dtype_parse(k, &t))
            L->type_k = t;
        if (!kvp_dtype_parse(v, &t))
            L->type_v = t;
    }
}

static void keep_size_line(kvp_log *L, const char *start, size_t len)
{
    if (L->n_size_lines == sizeof L->size_lines / sizeof L->size_lines[0])
        return;
    while (len && (start[len - 1] == '\r' || start[len - 1] == ' '))
        len--;
    snprintf(L->size_lines[L->n_size_lines++], sizeof L->size_lines[0], "%.*s", (int)len, start);
}

static void llama_line(const char *line, size_t len, kvp_log *L)
{
    const char *v, *p;
    uint64_t x;
    if ((v = ctx_value(line, "n_seq_max")) && !parse_u64(v, &x))
        L->n_seq = (uint32_t)x, L->kind = KVP_LOG_LLAMA;
    else if ((v = ctx_value(line, "n_ctx")) && !parse_u64(v, &x))
        L->n_ctx = x, L->kind = KVP_LOG_LLAMA;
    else if ((v = ctx_value(line, "n_ctx_seq")) && !parse_u64(v, &x))
        L->n_ctx_seq = x;
    else if ((v = ctx_value(line, "n_batch")) && !parse_u64(v, &x))
        L->n_batch = (uint32_t)x;
    else if ((v = ctx_value(line, "n_ubatch")) && !parse_u64(v, &x))
        L->n_ubatch = (uint32_t)x;
    else if ((v = ctx_value(line, "n_rs_seq")) && !parse_u64(v, &x))
        L->n_rs_seq = (uint32_t)x;
    else if ((v = ctx_value(line, "flash_attn")))
        L->flash_attn = !strncmp(v, "enabled", 7) ? KVP_FA_ON
                        : !strncmp(v, "disabled", 8) ? KVP_FA_OFF : KVP_FA_AUTO;
    else if ((v = ctx_value(line, "kv_unified")))
        L->kv_unified = !strncmp(v, "true", 4);
    else if (strstr(line, "llama_kv_cache_iswa: using full-size SWA cache"))
        L->swa_full = 1;
    else if ((p = strstr(line, "print_info: arch")) && (v = strchr(p, '=')))
        sscanf(v + 1, " %47s", L->arch);
    else if ((p = strstr(line, "llama_kv_cache: size = ")) ||
             (p = strstr(line, "llama_memory_recurrent: size = "))) {
        keep_size_line(L, p, len - (size_t)(p - line));
        if (strstr(p, " K ("))
            size_line_types(p, L);
    }
}

/* vLLM: "Available KV cache memory: 54.94 GiB", "GPU KV cache size: 400,032
 * tokens" and "Maximum concurrency for 40,960 tokens per request: 9.77x" (one
 * line or two, as releases differ). */
static uint64_t digits(const char *s)
{
    uint64_t v = 0;
    for (; (*s >= '0' && *s <= '9') || *s == ','; s++)
        if (*s != ',')
            v = v * 10 + (uint64_t)(*s - '0');
    return v;
}

static void vllm_line(const char *line, kvp_log *L)
{
    const char *p;
    if ((p = strstr(line, "Available KV cache memory: "))) {
        L->vllm_avail_gib = strtod(p + 27, NULL);
        L->kind = KVP_LOG_VLLM;
    }
    if ((p = strstr(line, "GPU KV cache size: "))) {
        L->vllm_tokens = digits(p + 19);
        L->kind = KVP_LOG_VLLM;
    }
    if ((p = strstr(line, "Maximum concurrency for "))) {
        L->vllm_max_len = digits(p + 24);
        const char *c = strstr(p, "per request: ");
        if (c)
            L->vllm_concurrency = strtod(c + 13, NULL);
    }
}

int kvp_log_parse(const char *text, size_t len, const char *label, kvp_log *L, kvp_error *err)
{
    memset(L, 0, sizeof *L);
    L->flash_attn = KVP_FA_AUTO;
    L->type_k = L->type_v = KVP_F16;
    L->kv_unified = -1;
    char line[1024];
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        size_t n = j - i < sizeof line - 1 ? j - i : sizeof line - 1;
        memcpy(line, text + i, n);
        line[n] = 0;
        if (memchr(line, 0, n) == NULL) { /* binary junk ends a line early: skip it */
            llama_line(line, n, L);
            vllm_line(line, L);
        }
        i = j + 1;
    }
    if (L->kind == KVP_LOG_LLAMA && (!L->n_ctx || !L->n_seq || !L->n_size_lines))
        return kvp_fail(err, KVP_EINPUT, "%s: a llama.cpp log, but without its llama_context "
                        "settings or size lines (was the context created?)", label);
    if (L->kind == KVP_LOG_VLLM && (!L->vllm_tokens || !L->vllm_max_len))
        return kvp_fail(err, KVP_EINPUT, "%s: a vLLM log, but without its \"GPU KV cache size\" "
                        "and \"Maximum concurrency\" lines", label);
    if (L->kind == KVP_LOG_NONE)
        return kvp_fail(err, KVP_EINPUT, "%s: neither a llama.cpp nor a vLLM startup log (no "
                        "llama_context or \"GPU KV cache size\" lines)", label);
    return 0;
}
