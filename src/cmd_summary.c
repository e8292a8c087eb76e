/* cmd_summary.c - `kvplan MODEL`: the answer with no flags.  KV cache and
 * state at 4K, 32K and 128K tokens for one sequence, so the user sees at a
 * glance how the model's memory grows with context. */
#include <stdlib.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan MODEL [-np S] [-ctk TYPE] [-ctv TYPE] [--family NAME]\n"
    "\n"
    "Prints the KV cache and fixed state of MODEL at 4K, 32K and 128K tokens\n"
    "(theory runtime). `kvplan show MODEL` explains each number.\n"
    "  --revision REV a Hub branch, tag or commit of an ORG/NAME model (default main)\n"
    "  --offline      never use the network: local files, caches and the catalog only\n"
    "  --family NAME  read MODEL's config.json by kvplan's rule set NAME (llama, gemma3,\n"
    "                 ...), for an architecture kvplan cannot name; the output says so\n";

int cmd_summary(int argc, char **argv)
{
    static const uint64_t lens[] = {4096, 32768, 131072};
    cli_opts o;
    kvp_model *m;
    char kinds[256], a[32], b[32], c[32], d[32];
    if (cli_wants_help(argc, argv))
        return fputs(help, stdout), 0;
    int rc = cli_parse(argc, argv, "parallel cache-type-k cache-type-v family", &o);
    if (rc || (rc = cli_load_model(&o, "kvplan", &m)))
        return rc;
    printf("%s: %s, %u layers (%s)\n", m->name, m->arch, m->n_layers,
           fmt_kinds(m, kinds, sizeof kinds));
    printf("theory, K %s / V %s, %u sequence%s; MiB = 2^20 bytes\n\n", kvp_dtype_name(o.type_k),
           kvp_dtype_name(o.type_v), o.n_seq, o.n_seq == 1 ? "" : "s");
    printf("%10s %14s %14s %14s\n", "context", "KV MiB", "state MiB", "total MiB");
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        kvp_theory_params p;
        kvp_theory_result r;
        kvp_error e;
        cli_theory_params(&o, &p);
        p.n_ctx = lens[i];
        if (kvp_theory(m, &p, &r, &e)) {
            kvp_model_free(m);
            return cli_fail_err(&e);
        }
        uint64_t state = r.fixed_bytes_per_seq * p.n_seq;
        snprintf(a, sizeof a, "%lluK%s", (unsigned long long)(lens[i] / 1024),
                 m->max_position && lens[i] > m->max_position ? "*" : "");
        printf("%10s %14s %14s %14s\n", a, fmt_mib(r.total_bytes - state, b, sizeof b),
               fmt_mib(state, c, sizeof c), fmt_mib(r.total_bytes, d, sizeof d));
    }
    kvp_theory_params p;
    kvp_theory_result r;
    kvp_error e;
    cli_theory_params(&o, &p);
    p.n_ctx = 1;
    if (!kvp_theory(m, &p, &r, &e))
        printf("\n%s B per token, %s B of fixed state per sequence\n",
               fmt_int(r.per_token_bytes, a, sizeof a), fmt_int(r.fixed_bytes_per_seq, b, sizeof b));
    if (m->max_position && lens[2] > m->max_position)
        printf("* beyond max_position_embeddings (%s)\n", fmt_int(m->max_position, a, sizeof a));
    printf("`kvplan show %s` explains each number; `kvplan mem %s -c N` for any length.\n",
           m->name, m->name);
    kvp_model_free(m);
    return 0;
}
