/* cmd_plot.c - `kvplan plot MODEL -o mem.svg`: memory against context
 * length as an SVG chart, one band per part of the cache. */
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan plot MODEL -o OUT.svg [--runtime theory|llama.cpp] [-c MAX] [flags] [--force]\n"
    "\n"
    "Draws the KV cache and state against context length, from 0 to MAX tokens\n"
    "(default: the model's max_position_embeddings, at most 128K), as a stacked-area\n"
    "SVG: one band per layer kind and the fixed state (theory), or per cache as\n"
    "llama.cpp prints them. The runtime flags of `kvplan mem` apply (-np, -ctk/-ctv,\n"
    "-ub, --swa-full, ...). An existing OUT.svg is kept unless --force.\n"
    "  --revision REV a Hub branch, tag or commit of an ORG/NAME model (default main)\n"
    "  --offline      never use the network: local files, caches and the catalog only\n"
    "  --family NAME  read MODEL's config.json by kvplan's rule set NAME (llama, gemma3,\n"
    "                 ...), for an architecture kvplan cannot name; the output says so\n"
    "\n"
    "examples:\n"
    "  kvplan plot gemma-3-4b-it -o gemma.svg\n"
    "  kvplan plot qwen3.5-9b --runtime llama.cpp -np 4 -c 256k -o qwen35.svg\n";

int cmd_plot(int argc, char **argv)
{
    cli_opts o;
    kvp_model *m;
    kvp_error e;
    kvp_theory_params tp;
    kvp_llama_params lp;
    if (cli_wants_help(argc, argv))
        return fputs(help, stdout), 0;
    int rc = cli_parse(argc, argv,
                       "output force ctx-size parallel cache-type-k cache-type-v runtime "
                       "batch-size ubatch-size flash-attn swa-full kv-unified no-kv-unified "
                       "llama-version family",
                       &o);
    if (rc)
        return rc;
    int llama = !strncmp(o.runtime, "llama", 5);
    if (!llama && strcmp(o.runtime, "theory"))
        return cli_fail(EXIT_USAGE, "--runtime %s: plot draws theory or llama.cpp", o.runtime);
    if (!o.out)
        return cli_fail(EXIT_USAGE, "plot: no output file: give -o OUT.svg");
    if ((rc = cli_load_model(&o, "plot", &m)))
        return rc;
    uint64_t max = o.n_ctx_set ? o.n_ctx
                   : m->max_position && m->max_position < 131072 ? m->max_position : 131072;
    cli_theory_params(&o, &tp);
    cli_llama_params(&o, &lp);
    rc = kvp_plot_memory(m, llama, &tp, &lp, max, o.out, o.force, &e) ? cli_fail_err(&e) : 0;
    if (!rc)
        printf("%s: %s memory of %s from 0 to %llu tokens\n", o.out, llama ? "llama.cpp" : "theory",
               m->name, (unsigned long long)max);
    kvp_model_free(m);
    return rc;
}
