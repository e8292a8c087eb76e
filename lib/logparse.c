/* logparse.c - reading what a runtime logged when it started: llama.cpp's
 * context settings and size lines, vLLM's memory and capacity lines.  Lines
 * are found by their function prefix anywhere in a line, so timestamps,
 * level letters and process prefixes (llama-server, Docker, systemd) do not
 * matter.  Only what a prediction needs is kept. */
#include <math.h>
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

/* "...: NAME KIND buffer size = X MiB": llama.cpp prints the buffer type's
 * name right-aligned before the phrase (load_tensors, llama_kv_cache,
 * llama_memory_recurrent, llama_context's output buffer, sched_reserve). */
static int buffer_line(const char *line, kvp_log *L)
{
    static const struct {
        const char *phrase, *kind;
    } kinds[] = {
        {" model buffer size = ", "model"}, {" KV buffer size = ", "KV"},
        {" RS buffer size = ", "RS"}, {" output buffer size = ", "output"},
        {" compute buffer size = ", "compute"},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        const char *p = strstr(line, kinds[k].phrase), *end, *start;
        char *num_end;
        if (!p)
            continue;
        double mib = strtod(p + strlen(kinds[k].phrase), &num_end);
        for (end = p; end > line && end[-1] == ' '; end--)
            ;
        for (start = end; start > line && start[-1] != ' ' && start[-1] != ':'; start--)
            ;
        if (end == start || num_end == p + strlen(kinds[k].phrase) ||
            (size_t)(end - start) >= sizeof L->buffers[0].name)
            return 0;
        if (L->n_buffers == sizeof L->buffers / sizeof L->buffers[0])
            return 1;
        struct kvp_log_buffer *b = &L->buffers[L->n_buffers++];
        snprintf(b->kind, sizeof b->kind, "%s", kinds[k].kind);
        snprintf(b->name, sizeof b->name, "%.*s", (int)(end - start), start);
        b->mib = mib;
        /* from the function name ("llama_kv_cache:") on, as the other kept
         * lines: back over the padding to the colon, then to its word's start */
        const char *from = start;
        while (from > line && from[-1] == ' ')
            from--;
        if (from > line && from[-1] == ':')
            while (from > line && from[-1] != ' ')
                from--;
        else
            from = line;
        snprintf(b->line, sizeof b->line, "%s", from);
        size_t n = strlen(b->line);
        while (n && (b->line[n - 1] == '\r' || b->line[n - 1] == ' '))
            b->line[--n] = 0;
        return 1;
    }
    return 0;
}

/* The memory breakdown table, one row per device, the host and other
 * buffer types:
 *   "|   - CUDA0 (RTX 4090)   | 24077 =  945 + (19187 = 17904 +  384 +  898) +  3945 |"
 *   "|   - Host               |                 58271 = 58259 +    0 +   12         |" */
static void breakdown_line(const char *line, kvp_log *L)
{
    const char *p = strstr(line, "memory_breakdown_print: |");
    long long v[7];
    if (!p || !(p = strstr(p, "|   - ")) || L->n_breakdown == sizeof L->breakdown /
                                                                sizeof L->breakdown[0])
        return;
    p += 6;
    const char *bar = strchr(p, '|');
    if (!bar)
        return;
    struct kvp_log_breakdown *b = &L->breakdown[L->n_breakdown];
    memset(b, 0, sizeof *b);
    size_t name_len = strcspn(p, " |");
    if (!name_len || name_len >= sizeof b->name)
        return;
    snprintf(b->name, sizeof b->name, "%.*s", (int)name_len, p);
    const char *paren = p + name_len;
    while (*paren == ' ')
        paren++;
    if (*paren == '(' && paren < bar) {
        const char *close = strchr(paren, ')');
        if (close && close < bar && (size_t)(close - paren - 1) < sizeof b->desc)
            snprintf(b->desc, sizeof b->desc, "%.*s", (int)(close - paren - 1), paren + 1);
    }
    if (sscanf(bar + 1, " %lld = %lld + ( %lld = %lld + %lld + %lld ) + %lld", &v[0], &v[1],
               &v[2], &v[3], &v[4], &v[5], &v[6]) == 7) {
        b->device = 1;
        b->total = v[0], b->free = v[1], b->self = v[2], b->model = v[3];
        b->context = v[4], b->compute = v[5], b->unaccounted = v[6];
    } else if (sscanf(bar + 1, " %lld = %lld + %lld + %lld", &v[0], &v[1], &v[2], &v[3]) == 4) {
        b->self = v[0], b->model = v[1], b->context = v[2], b->compute = v[3];
    } else {
        return;
    }
    const char *fn = strstr(line, "memory_breakdown_print: |");
    while (fn > line && fn[-1] != ' ')
        fn--;
    snprintf(b->line, sizeof b->line, "%s", fn);
    L->n_breakdown++;
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
    else if ((p = strstr(line, "print_info: no_alloc")) && (v = strchr(p, '=')))
        L->no_alloc = atoi(v + 1) != 0;
    else if ((p = strstr(line, "(load_mode = ")))
        L->load_mode_mmap = !strncmp(p + 13, "mmap", 4) || !strncmp(p + 13, "auto", 4);
    else if ((p = strstr(line, "load_tensors: offloaded ")))
        sscanf(p + 24, "%d/%d", &L->offloaded, &L->offload_of);
    else if (strstr(line, "memory_breakdown_print: |"))
        breakdown_line(line, L);
    else if (buffer_line(line, L))
        ;
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

/* The number after `key` in line, or keep *out. */
static void number_after(const char *line, const char *key, double *out)
{
    const char *p = strstr(line, key);
    char *end;
    if (!p)
        return;
    double v = strtod(p + strlen(key), &end);
    if (end != p + strlen(key) && isfinite(v))
        *out = v;
}

/* The profile's lines: weights, the budget, the graph estimate and the
 * suggestion line's terms (both wordings). */
static void vllm_profile_line(const char *line, kvp_log *L)
{
    number_after(line, "Model loading took ", &L->vllm_weights_gib);
    const char *p = strstr(line, "Free memory on device (");
    if (p) {
        const char *slash = strchr(p, '/');
        if (slash)
            L->vllm_total_gib = strtod(slash + 1, NULL);
    }
    number_after(line, "Desired GPU memory utilization is (", &L->vllm_util);
    p = strstr(line, "Desired GPU memory utilization is (");
    if (p && (p = strchr(p, ',')))
        L->vllm_requested_gib = strtod(p + 1, NULL);
    number_after(line, "Estimated CUDA graph memory: ", &L->vllm_graph_est_gib);
    if (strstr(line, "is equivalent to --gpu-memory-utilization=")) {
        number_after(line, "The current --gpu-memory-utilization=", &L->vllm_util);
        number_after(line, "is equivalent to --gpu-memory-utilization=", &L->vllm_util_equiv);
    }
    p = strstr(line, "Actual usage is ");
    if (p) {
        double a = strtod(p + 16, NULL);
        if (strstr(p, "for consumed memory"))
            L->vllm_consumed_gib = a;
        else if (strstr(p, "for weight"))
            L->vllm_weights_gib = a;
        number_after(p, "for weight, ", &L->vllm_peak_gib);
        number_after(p, "for consumed memory (weights + non-torch), ", &L->vllm_peak_gib);
        number_after(p, "peak activation, ", &L->vllm_non_torch_gib);
        if (!strstr(p, "non-torch memory,"))
            L->vllm_non_torch_gib = -1;
        number_after(p, "non-torch memory, and ", &L->vllm_graph_gib);
        number_after(p, "peak activation, and ", &L->vllm_graph_gib);
    }
}

static void vllm_line(const char *line, kvp_log *L)
{
    const char *p;
    vllm_profile_line(line, L);
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
    L->load_mode_mmap = -1;
    L->offloaded = L->offload_of = -1;
    L->vllm_weights_gib = L->vllm_total_gib = L->vllm_util = L->vllm_requested_gib = -1;
    L->vllm_graph_est_gib = L->vllm_util_equiv = L->vllm_peak_gib = -1;
    L->vllm_non_torch_gib = L->vllm_consumed_gib = L->vllm_graph_gib = -1;
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
    if (L->vllm_graph_est_gib < 0 && L->vllm_util_equiv >= 0 && L->vllm_util >= 0 &&
        L->vllm_total_gib > 0)
        L->vllm_graph_est_gib = (L->vllm_util - L->vllm_util_equiv) * L->vllm_total_gib;
    if (L->kind == KVP_LOG_VLLM && !L->vllm_tokens)
        return kvp_fail(err, KVP_EINPUT, "%s: a vLLM log, but without its \"GPU KV cache size\" "
                        "line", label);
    if (L->kind == KVP_LOG_NONE)
        return kvp_fail(err, KVP_EINPUT, "%s: neither a llama.cpp nor a vLLM startup log (no "
                        "llama_context or \"GPU KV cache size\" lines)", label);
    return 0;
}
