/* cmd_mem.c - `kvplan mem MODEL`: the memory of the KV cache and state for
 * one context length and one set of settings, as a table or JSON. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan mem MODEL [--runtime theory] [-c N] [-np S] [-ctk TYPE] [-ctv TYPE] [--json]\n"
    "\n"
    "  --runtime R           theory (the config arithmetic); default theory\n"
    "  -c, --ctx-size N      tokens held in total (4096, 32k, 128K); default 4096\n"
    "  -np, --parallel S     sequences sharing them, as llama.cpp's -np; default 1\n"
    "  -ctk, --cache-type-k  K cache type: f32 f16 bf16 fp8 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl\n"
    "  -ctv, --cache-type-v  V cache type (same list); default f16 for both\n"
    "  --json                JSON schema 1 (every byte count an integer)\n"
    "\n"
    "Sliding-window layers hold min(tokens of a sequence, window) cells, chunked layers\n"
    "min(tokens, chunk); linear-attention and Mamba layers hold a fixed state per\n"
    "sequence. Sizes are binary: MiB = 2^20 bytes.\n"
    "\n"
    "examples:\n"
    "  kvplan mem qwen3-8b -c 32k\n"
    "  kvplan mem gemma-3-4b-it -c 32768 --json\n"
    "  kvplan mem qwen3.5-9b -c 128k -np 4 -ctk q8_0 -ctv q8_0\n";

static void table(const kvp_model *m, const kvp_theory_result *r)
{
    char a[32], b[32], c[32], d[32], e[32];
    const kvp_theory_params *p = &r->params;
    printf("%s · runtime theory · %s tokens · %u sequence%s · K %s, V %s\n\n", m->name,
           fmt_int(p->n_ctx, a, sizeof a), p->n_seq, p->n_seq == 1 ? "" : "s",
           kvp_dtype_name(p->type_k), kvp_dtype_name(p->type_v));
    printf("%-8s %6s %8s %12s %12s %14s %16s %11s\n", "kind", "layers", "window", "B/token",
           "cells", "state B/seq", "bytes", "MiB");
    for (size_t g = 0; g < r->n_groups; g++) {
        const kvp_theory_group *G = &r->groups[g];
        char w[16] = "-";
        if (G->window)
            snprintf(w, sizeof w, "%u", G->window);
        printf("%-8s %6u %8s %12s %12s %14s %16s %11s\n", kvp_layer_kind_name(G->kind),
               G->n_layers, w, fmt_int(G->per_token_bytes, a, sizeof a),
               fmt_int(G->cells, b, sizeof b), fmt_int(G->fixed_bytes_per_seq, c, sizeof c),
               fmt_int(G->bytes, d, sizeof d), fmt_mib(G->bytes, e, sizeof e));
    }
    printf("%-8s %6u %8s %12s %12s %14s %16s %11s\n", "total", m->n_layers, "",
           fmt_int(r->per_token_bytes, a, sizeof a), "", fmt_int(r->fixed_bytes_per_seq, c, sizeof c),
           fmt_int(r->total_bytes, d, sizeof d), fmt_mib(r->total_bytes, e, sizeof e));
    printf("\ntotal: %s MiB (%s bytes; MiB = 2^20 bytes)\n", fmt_mib(r->total_bytes, a, sizeof a),
           fmt_int(r->total_bytes, b, sizeof b));
    if (r->full_equiv_bytes != r->total_bytes)
        printf("with every window/chunk layer as full attention: %s MiB\n",
               fmt_mib(r->full_equiv_bytes, a, sizeof a));
    if (r->has_mla) {
        uint64_t x = r->mla_expanded_per_token_bytes * p->n_ctx;
        printf("MLA stores one latent per token; expanded to per-head K/V it would be %s B/token "
               "(%s MiB here)\n", fmt_int(r->mla_expanded_per_token_bytes, a, sizeof a),
               fmt_mib(x, b, sizeof b));
    }
    if (m->max_position && p->n_ctx / p->n_seq > m->max_position)
        printf("note: %s tokens per sequence is beyond max_position_embeddings (%s)\n",
               fmt_int(p->n_ctx / p->n_seq, a, sizeof a), fmt_int(m->max_position, b, sizeof b));
}

int cmd_mem(int argc, char **argv)
{
    cli_opts o;
    kvp_model *m;
    kvp_error e;
    kvp_theory_params p;
    kvp_theory_result r;
    if (cli_wants_help(argc, argv))
        return fputs(help, stdout), 0;
    int rc = cli_parse(argc, argv, "ctx-size parallel cache-type-k cache-type-v runtime json", &o);
    if (rc)
        return rc;
    if (strcmp(o.runtime, "theory") != 0)
        return cli_fail(EXIT_USAGE, "--runtime %s: unknown runtime (this build knows: theory)",
                        o.runtime);
    if ((rc = cli_load_model(&o, "mem", &m)))
        return rc;
    cli_theory_params(&o, &p);
    if (kvp_theory(m, &p, &r, &e)) {
        kvp_model_free(m);
        return cli_fail_err(&e);
    }
    if (o.json) {
        char *s = kvp_theory_json(m, &r);
        rc = s ? (puts(s), 0) : cli_fail(EXIT_INPUT, "out of memory");
        free(s);
    } else {
        table(m, &r);
    }
    kvp_model_free(m);
    return rc;
}
