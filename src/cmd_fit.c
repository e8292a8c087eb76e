/* cmd_fit.c - `kvplan fit MODEL --memory SIZE`: the largest context and the
 * most sequences that fit a memory budget, in each runtime's own arithmetic
 * (llama.cpp's padding and windows, vLLM's blocks and null block). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan fit MODEL --memory SIZE [--runtime theory|llama.cpp|vllm|all]\n"
    "                  [-c N] [-np S] [runtime flags] [--json]\n"
    "       kvplan fit MODEL (--gpu NAME | --device-memory SIZE)... [llama.cpp flags] [--json]\n"
    "\n"
    "With GPUs instead of --memory, fit plans the whole llama.cpp run (weights, KV and\n"
    "state, compute buffers per device): what llama.cpp's --fit would choose for -c,\n"
    "-ngl, -ts and -ot (its 1024 MiB margin per device; -c unset lets it pick the\n"
    "context; -ngl, -ts or -ot given make it give up, as llama.cpp does), then the\n"
    "largest context with every layer offloaded, the most layers at the context given,\n"
    "and what q8_0 K/V, a smaller -ub, one slot fewer, --swa-full off, -nkvo and\n"
    "--cpu-moe each save on the GPUs.\n"
    "\n"
    "SIZE is the memory for the KV cache and recurrent state (not the weights):\n"
    "24GiB (binary), 24GB (SI) or bytes. For each runtime, fit answers:\n"
    "  largest context   for -np S sequences (default 1): tokens per sequence; for\n"
    "                    llama.cpp the -c to give (a multiple of 256), for vLLM the\n"
    "                    largest max_model_len one request fits in (vLLM's own estimate)\n"
    "  most sequences    of -c N tokens each (default: the model's max_position_embeddings,\n"
    "                    capped at 32K): llama.cpp's -np (at most 256), vLLM's whole\n"
    "                    requests at max_model_len N (its concurrency, rounded down)\n"
    "The flags of `kvplan mem` for each runtime apply (-ctk/-ctv, -fa, -ub, --swa-full,\n"
    "--kv-cache-dtype, --block-size, -tp, ...). Sizes are binary: MiB = 2^20 bytes.\n"
    "  --revision REV a Hub branch, tag or commit of an ORG/NAME model (default main)\n"
    "  --offline      never use the network: local files, caches and the catalog only\n"
    "  --family NAME  read MODEL's config.json by kvplan's rule set NAME (llama, gemma3,\n"
    "                 ...), for an architecture kvplan cannot name; the output says so\n"
    "\n"
    "examples:\n"
    "  kvplan fit qwen3-8b --memory 24GiB\n"
    "  kvplan fit gemma-3-4b-it --memory 8GiB --runtime llama.cpp -ctk q8_0 -ctv q8_0 -fa on\n"
    "  kvplan fit qwen3.5-9b --memory 40GiB --runtime vllm -c 128k\n"
    "  kvplan fit qwen3-8b.gguf --device-memory 12GiB\n"
    "  kvplan fit qwen3-30b-a3b.gguf --gpu RTX-4090 -c 32768\n";

static void print_row(const kvp_fit_result *r, const kvp_fit_params *p)
{
    char a[32], b[32], c[64], d[96];
    if (!r->max_context)
        snprintf(c, sizeof c, "nothing fits");
    else
        snprintf(c, sizeof c, "%s%s%s (%s MiB)", r->runtime == KVP_RT_LLAMA ? "-c " : "",
                 fmt_int(r->max_context * (r->runtime == KVP_RT_LLAMA ? p->seqs : 1), a,
                         sizeof a),
                 r->context_capped ? " (model limit)" : "",
                 fmt_mib(r->bytes_at_max_context, b, sizeof b));
    if (r->runtime == KVP_RT_VLLM)
        snprintf(d, sizeof d, "%s (concurrency %.2fx)", fmt_int(r->max_seqs, a, sizeof a),
                 r->vllm_concurrency);
    else if (!r->max_seqs)
        snprintf(d, sizeof d, "not one");
    else
        snprintf(d, sizeof d, "%s%s (%s MiB)", r->runtime == KVP_RT_LLAMA ? "-np " : "",
                 fmt_int(r->max_seqs, a, sizeof a), fmt_mib(r->bytes_at_max_seqs, b, sizeof b));
    printf("%-10s %-38s %s\n", kvp_runtime_name(r->runtime), c, d);
}

int cmd_fit(int argc, char **argv)
{
    cli_opts o;
    kvp_model *m;
    kvp_fit_params p;
    kvp_fit_result r[3];
    kvp_error e;
    int n = 0, rc;
    if (cli_wants_help(argc, argv))
        return fputs(help, stdout), 0;
    rc = cli_parse(argc, argv,
                   "memory ctx-size parallel cache-type-k cache-type-v runtime json batch-size "
                   "ubatch-size flash-attn swa-full kv-unified no-kv-unified llama-version vllm "
                   "family llama-place",
                   &o);
    if (rc)
        return rc;
    if (!o.memory && o.place.offload.n_devices) {
        if ((rc = cli_load_model(&o, "fit", &m)))
            return rc;
        rc = fit_run(&o, m);
        kvp_model_free(m);
        return rc;
    }
    if (!o.memory)
        return cli_fail(EXIT_USAGE, "fit: give the memory for the cache (--memory 24GiB), or "
                        "the GPUs for the whole run (--gpu NAME, --device-memory SIZE)");
    int want[3] = {1, 1, 1};
    if (o.runtime_set) {
        want[0] = !strcmp(o.runtime, "theory") || !strcmp(o.runtime, "all");
        want[1] = !strncmp(o.runtime, "llama", 5) || !strcmp(o.runtime, "all");
        want[2] = !strcmp(o.runtime, "vllm") || !strcmp(o.runtime, "all");
        if (!want[0] && !want[1] && !want[2])
            return cli_fail(EXIT_USAGE, "--runtime %s: fit knows theory, llama.cpp, vllm and all",
                            o.runtime);
    }
    if ((rc = cli_load_model(&o, "fit", &m)))
        return rc;
    memset(&p, 0, sizeof p);
    p.budget = o.memory;
    p.seqs = o.np_set ? o.n_seq : 1;
    p.context = o.n_ctx_set ? o.n_ctx
                : m->max_position && m->max_position < 32768 ? m->max_position : 32768;
    cli_theory_params(&o, &p.theory);
    cli_llama_params(&o, &p.llama);
    cli_vllm_params(&o, &p.vllm);
    p.vllm.max_model_len = 0;
    for (int rt = 0; rt < 3; rt++) {
        if (!want[rt])
            continue;
        p.runtime = (kvp_runtime)rt;
        if (kvp_fit(m, &p, &r[n], &e)) {
            kvp_model_free(m);
            return cli_fail_err(&e);
        }
        n++;
    }
    if (o.json) {
        char *js = kvp_fit_json(m, &p, r, (size_t)n);
        rc = js ? (puts(js), 0) : cli_fail(EXIT_INPUT, "out of memory");
        free(js);
    } else {
        char a[32], b[32], h[64];
        printf("%s · fit in %s bytes (%s MiB) of KV cache and state\n\n", m->name,
               fmt_int(p.budget, a, sizeof a), fmt_mib(p.budget, b, sizeof b));
        snprintf(h, sizeof h, "largest context, %u sequence%s", p.seqs, p.seqs == 1 ? "" : "s");
        printf("%-10s %-38s most sequences of %s tokens\n", "runtime", h,
               fmt_int(p.context, a, sizeof a));
        for (int i = 0; i < n; i++)
            print_row(&r[i], &p);
        printf("\nllama.cpp: -c is the total for all sequences (-np); vLLM: one request of the "
               "largest max_model_len, and whole requests of %s tokens at once.\n",
               fmt_int(p.context, a, sizeof a));
    }
    kvp_model_free(m);
    return rc;
}
