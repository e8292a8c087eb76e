/* cmd_compare.c - `kvplan compare MODEL...`: one table of several models,
 * runtimes, settings and context lengths, so the differences that matter
 * (a window, a latent, a fixed state, a runtime's slack) stand side by side. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan compare MODEL... [-c 4k,32k,128k] [--runtime theory,llama.cpp,vllm]\n"
    "                      [--variants f16,q8_0,q4_0,swa-full] [llama.cpp flags] [--json]\n"
    "\n"
    "One row per model, runtime and variant; one column per context length; MiB\n"
    "(2^20 bytes) of KV cache plus recurrent state. For vLLM a cell is what one\n"
    "request of that length reserves (max_model_len = the length); \"refused\" where\n"
    "vLLM refuses the length.\n"
    "  -c LIST           context lengths, default 4k,32k,128k\n"
    "  --runtime LIST    runtimes, default theory,llama.cpp,vllm\n"
    "  --variants LIST   f16 (the flags as given), q8_0 / q4_0 (K and V cache type),\n"
    "                    swa-full (llama.cpp's --swa-full, for models with windows)\n"
    "The llama.cpp and vLLM flags of `kvplan mem` apply to their cells.\n"
    "  --revision REV a Hub branch, tag or commit of an ORG/NAME model (default main)\n"
    "  --offline      never use the network: local files, caches and the catalog only\n"
    "  --family NAME  read MODEL's config.json by kvplan's rule set NAME (llama, gemma3,\n"
    "                 ...), for an architecture kvplan cannot name; the output says so\n"
    "\n"
    "examples:\n"
    "  kvplan compare qwen3-8b gemma-3-4b-it qwen3.5-9b\n"
    "  kvplan compare qwen3-8b gpt-oss-20b -np 1 -fa on --variants f16,q8_0,swa-full\n";

#define MAX_LENS 16

typedef struct variant {
    const char *name;
    kvp_dtype type;          /* cache type (f16 = as the flags say) */
    int swa_full;
} variant;

static int parse_lens(const char *list, uint64_t *lens, size_t *n)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", list);
    *n = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_LENS || kvp_parse_tokens(t, &lens[*n]))
            return cli_fail(EXIT_INPUT, "-c %s: %s is not a context length (1 to 2^40 tokens)",
                            list, t);
        (*n)++;
    }
    return *n ? 0 : cli_fail(EXIT_INPUT, "-c %s: no lengths", list);
}

static int parse_variants(const char *list, const cli_opts *o, variant *v, size_t *n)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", list);
    *n = 0;
    for (char *t = strtok_r(buf, ",", &save); t && *n < 8; t = strtok_r(NULL, ",", &save)) {
        variant x = {NULL, o->type_k, o->swa_full};
        static const char *names[] = {"f16", "q8_0", "q4_0", "swa-full"};
        for (size_t i = 0; i < 4; i++)
            if (!strcmp(t, names[i]))
                x.name = names[i];
        if (!x.name)
            return cli_fail(EXIT_INPUT, "--variants: %s is not f16, q8_0, q4_0 or swa-full", t);
        if (!strcmp(t, "q8_0"))
            x.type = KVP_Q8_0;
        if (!strcmp(t, "q4_0"))
            x.type = KVP_Q4_0;
        if (!strcmp(t, "swa-full"))
            x.swa_full = 1;
        v[(*n)++] = x;
    }
    return 0;
}

static int has_window(const kvp_model *m)
{
    return kvp_model_count_kind(m, KVP_LAYER_SLIDING) + kvp_model_count_kind(m, KVP_LAYER_CHUNKED);
}

/* Bytes of one cell of the table; 1 when the runtime refuses the setting
 * (the cell shows that), or an exit code with the error printed. */
static int cell(const kvp_model *m, const cli_opts *o, int rt, const variant *v, uint64_t len,
                uint64_t *bytes)
{
    kvp_error e;
    if (rt == 2) {
        kvp_vllm_params p;
        kvp_vllm_result *r = malloc(sizeof *r);
        if (!r)
            return cli_fail(EXIT_INPUT, "out of memory");
        cli_vllm_params(o, &p);
        p.max_model_len = len;
        p.reservation_only = 1;
        p.kv_fp8 = v->type != KVP_F16 || p.kv_fp8; /* vLLM's quantized cache is fp8 */
        int rc = kvp_vllm(m, &p, r, &e);
        *bytes = r->per_request_bytes;
        free(r);
        if (rc && e.code == KVP_EUSAGE)
            return cli_fail_err(&e);
        return rc ? 1 : 0;
    }
    if (!rt) {
        kvp_theory_params p;
        kvp_theory_result r;
        cli_theory_params(o, &p);
        p.n_ctx = len;
        p.type_k = p.type_v = v->type;
        if (kvp_theory(m, &p, &r, &e))
            return cli_fail_err(&e);
        *bytes = r.total_bytes;
        return 0;
    }
    kvp_llama_params p;
    kvp_llama_result r;
    cli_llama_params(o, &p);
    p.n_ctx = len;
    p.type_k = p.type_v = v->type;
    p.swa_full = v->swa_full;
    if (kvp_llama(m, &p, &r, &e))
        return cli_fail_err(&e);
    *bytes = r.total_bytes;
    return 0;
}

int cmd_compare(int argc, char **argv)
{
    cli_opts o;
    uint64_t lens[MAX_LENS];
    size_t n_lens, n_var;
    variant vars[8];
    if (cli_wants_help(argc, argv))
        return fputs(help, stdout), 0;
    int rc = cli_parse(argc, argv,
                       "models ctx-list ctx-size parallel cache-type-k cache-type-v runtime json "
                       "batch-size ubatch-size flash-attn swa-full kv-unified no-kv-unified "
                       "llama-version variants vllm family",
                       &o);
    if (rc)
        return rc;
    if (!o.n_models)
        return cli_fail(EXIT_USAGE, "compare: no model given (see kvplan compare --help)");
    if (!o.runtime_set) /* cli_parse's default is theory alone; compare shows all */
        o.runtime = "theory,llama.cpp,vllm";
    int want[3] = {strstr(o.runtime, "theory") != NULL, strstr(o.runtime, "llama") != NULL,
                   strstr(o.runtime, "vllm") != NULL};
    if (!want[0] && !want[1] && !want[2])
        return cli_fail(EXIT_USAGE, "--runtime %s: compare knows theory, llama.cpp and vllm",
                        o.runtime);
    if ((rc = parse_lens(o.ctx_list ? o.ctx_list : "4k,32k,128k", lens, &n_lens)) ||
        (rc = parse_variants(o.variants ? o.variants : "f16", &o, vars, &n_var)))
        return rc;
    if (!o.json) {
        printf("%-28s %-10s %-9s", "model", "runtime", "variant");
        for (size_t i = 0; i < n_lens; i++) {
            char h[32];
            snprintf(h, sizeof h, lens[i] % 1024 ? "%llu" : "%lluK",
                     (unsigned long long)(lens[i] % 1024 ? lens[i] : lens[i] / 1024));
            printf(" %11s", h);
        }
        printf("   (MiB = 2^20 bytes)\n");
    } else {
        printf("{\n  \"schema\": %d,\n  \"rows\": [", KVPLAN_JSON_SCHEMA);
    }
    int first = 1;
    for (int mi = 0; mi < o.n_models; mi++) {
        kvp_model *m;
        cli_opts one = o;
        one.model = o.models[mi];
        if ((rc = cli_load_model(&one, "compare", &m)))
            return rc;
        static const char *rt_names[3] = {"theory", "llama.cpp", "vllm"};
        for (int rt = 0; rt < 3; rt++) {
            if (!want[rt])
                continue;
            for (size_t vi = 0; vi < n_var; vi++) {
                if (vars[vi].swa_full && (rt != 1 || !has_window(m)))
                    continue; /* --swa-full is a llama.cpp setting for windowed models */
                if (rt == 2 && vars[vi].type == KVP_Q4_0)
                    continue; /* vLLM has no 4-bit KV cache type */
                uint64_t b[MAX_LENS];
                int refused[MAX_LENS];
                for (size_t li = 0; li < n_lens; li++) {
                    rc = cell(m, &o, rt, &vars[vi], lens[li], &b[li]);
                    refused[li] = rc == 1;
                    if (rc > 1) {
                        kvp_model_free(m);
                        return rc;
                    }
                }
                const char *vname = rt == 2 && vars[vi].type == KVP_Q8_0 ? "fp8" : vars[vi].name;
                if (o.json) {
                    printf("%s\n    {\"model\": \"%s\", \"runtime\": \"%s\", \"variant\": \"%s\", "
                           "\"bytes\": {", first ? "" : ",", m->name, rt_names[rt], vname);
                    for (size_t li = 0; li < n_lens; li++) {
                        if (refused[li])
                            printf("%s\"%llu\": null", li ? ", " : "", (unsigned long long)lens[li]);
                        else
                            printf("%s\"%llu\": %llu", li ? ", " : "",
                                   (unsigned long long)lens[li], (unsigned long long)b[li]);
                    }
                    printf("}}");
                    first = 0;
                    continue;
                }
                printf("%-28s %-10s %-9s", m->name, rt_names[rt], vname);
                for (size_t li = 0; li < n_lens; li++) {
                    char mb[32];
                    printf(" %11s", refused[li] ? "refused" : fmt_mib(b[li], mb, sizeof mb));
                }
                putchar('\n');
            }
        }
        kvp_model_free(m);
    }
    if (o.json)
        printf("\n  ]\n}\n");
    return 0;
}
