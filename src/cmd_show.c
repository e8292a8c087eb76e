/* cmd_show.c - `kvplan show MODEL`: the architecture card.  Layer kinds
 * with counts and indices, the shape of each group, bytes per token and
 * fixed state per sequence, and for every number the config key (or
 * transformers default) it came from. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan show MODEL [-ctk TYPE] [-ctv TYPE] [--family NAME] [--json]\n"
    "\n"
    "MODEL: a catalog name (qwen3-8b), a config.json, a directory or a GGUF file;\n"
    "ORG/NAME (the Hugging Face cache, else the Hub, else the catalog); ORG/NAME:QUANT or\n"
    "ORG/NAME/PATH.gguf and https://.../FILE.gguf (the GGUF's header by range requests);\n"
    "ollama:NAME[:TAG] (the Ollama registry; the runtime and flags Ollama would use).\n"
    "\n"
    "Prints the architecture card: each group of layers (kind, count, which layers,\n"
    "shape), the cache bytes per token and the fixed state per sequence (theory\n"
    "runtime, f16 cache unless -ctk/-ctv say otherwise), and where every number came\n"
    "from in the config.\n"
    "  --revision REV a Hub branch, tag or commit of an ORG/NAME model (default main)\n"
    "  --offline      never use the network: local files, caches and the catalog only\n"
    "  --family NAME  read MODEL's config.json by kvplan's rule set NAME (llama, gemma3,\n"
    "                 ...), for an architecture kvplan cannot name; the output says so\n"
    "\n"
    "examples:\n"
    "  kvplan show qwen3.5-9b\n"
    "  kvplan show ./Qwen3-8B/config.json --json\n"
    "  kvplan show ./MyLlamaClone/config.json --family llama\n";

static void shape_text(const kvp_layer *L, char *b, size_t n)
{
    if (L->d_inner && L->kind != KVP_LAYER_LINEAR && L->kind != KVP_LAYER_MAMBA) {
        /* attention and a state side by side (Falcon-H1) */
        kvp_layer a = *L, s = *L;
        size_t len;
        a.d_inner = 0;
        s.kind = KVP_LAYER_MAMBA;
        shape_text(&a, b, n);
        len = strlen(b);
        if (len + 3 < n) {
            snprintf(b + len, n - len, "; ");
            shape_text(&s, b + len + 2, n - len - 2);
        }
        return;
    }
    switch (L->kind) {
    case KVP_LAYER_FULL:
        snprintf(b, n, "%u kv heads x %u (K) + %u (V)", L->n_kv_heads, L->head_dim_k, L->head_dim_v);
        break;
    case KVP_LAYER_SLIDING:
    case KVP_LAYER_CHUNKED:
        if (L->mla_heads && !L->head_dim_v) { /* a sliding MLA latent (dots.3-note) */
            snprintf(b, n, "latent %u, no V, window %u (expanded: %u heads x %u (K) + %u (V))",
                     L->head_dim_k, L->window, L->mla_heads, L->mla_k_head_dim,
                     L->mla_v_head_dim);
            break;
        }
        snprintf(b, n, "%u kv heads x %u (K) + %u (V), %s %u", L->n_kv_heads, L->head_dim_k,
               L->head_dim_v, L->kind == KVP_LAYER_SLIDING ? "window" : "chunk", L->window);
        break;
    case KVP_LAYER_MLA:
        snprintf(b, n, "latent %u, no V (expanded: %u heads x %u (K) + %u (V))", L->head_dim_k,
               L->mla_heads, L->mla_k_head_dim, L->mla_v_head_dim);
        break;
    case KVP_LAYER_LINEAR:
    case KVP_LAYER_MAMBA:
        snprintf(b, n, "conv %u x %llu %s, state %llu x %u %s", L->d_conv ? L->d_conv - 1 : 0,
               (unsigned long long)(L->d_inner + 2ull * L->n_group * L->d_state),
               kvp_dtype_name(L->conv_dtype), (unsigned long long)L->d_inner, L->d_state,
               kvp_dtype_name(L->ssm_dtype));
        break;
    case KVP_LAYER_CROSS: /* the encoder's tokens, a fixed count per sequence */
        snprintf(b, n, "%u kv heads x %u (K) + %u (V), %u encoder tokens", L->n_kv_heads,
                 L->head_dim_k, L->head_dim_v, L->window);
        break;
    default:
        snprintf(b, n, "no cache");
    }
    size_t len = strlen(b);
    if (L->indexer_head_dim && len < n) /* DSA: the indexer's key beside the cache */
        snprintf(b + len, n - len, "; indexer key %u", L->indexer_head_dim);
    len = strlen(b);
    if (L->ple_conv_state && len < n) /* Qwen4-Exp's PLE layer */
        snprintf(b + len, n - len, "; PLE conv history %llu",
                 (unsigned long long)L->ple_conv_state);
}

static int card(const kvp_model *m, const cli_opts *o)
{
    kvp_theory_params p;
    kvp_theory_result r;
    kvp_error e;
    kvp_group gs[64];
    char a[32], b[32], list[512];
    kvp_theory_defaults(&p);
    p.type_k = o->type_k;
    p.type_v = o->type_v;
    if (kvp_theory(m, &p, &r, &e))
        return cli_fail_err(&e);
    printf("%s\n", m->name);
    printf("  source:  %s\n", m->source);
    printf("  arch:    %s (kvplan rules: %s), %u layers, %s weights\n", m->arch, m->family,
           m->n_layers, kvp_dtype_name(m->dtype));
    if (m->max_position)
        printf("  max_position_embeddings: %s\n", fmt_int(m->max_position, a, sizeof a));
    if (m->note[0])
        printf("  note:    %.200s%s\n", m->note, strlen(m->note) > 200 ? "..." : "");
    size_t ng = kvp_model_groups(m, gs, 64);
    printf("\n  %-8s %6s  %-52s %s\n", "kind", "layers", "shape (per layer)", "which layers");
    for (size_t g = 0; g < ng; g++) {
        char shape[160];
        kvp_model_group_layers(m, &gs[g], list, sizeof list);
        shape_text(&gs[g].shape, shape, sizeof shape);
        printf("  %-8s %6u  %-52s %s\n", kvp_layer_kind_name(gs[g].kind), gs[g].n_layers, shape,
               list);
    }
    printf("\n  cache bytes per token (K %s, V %s): %s B", kvp_dtype_name(p.type_k),
           kvp_dtype_name(p.type_v), fmt_int(r.per_token_bytes, a, sizeof a));
    printf(" (%.2f KiB)\n", (double)r.per_token_bytes / 1024.0);
    if (r.indexer_per_token_bytes)
        printf("  of which DSA indexer keys (in the K type): %s B per token\n",
               fmt_int(r.indexer_per_token_bytes, a, sizeof a));
    if (r.has_mla)
        printf("  if a converter expanded MLA to per-head K/V: %s B per token\n",
               fmt_int(r.mla_expanded_per_token_bytes, a, sizeof a));
    printf("  fixed state per sequence: %s B (%s MiB)\n",
           fmt_int(r.fixed_bytes_per_seq, a, sizeof a), fmt_mib(r.fixed_bytes_per_seq, b, sizeof b));
    printf("\n  where the numbers came from:\n");
    for (size_t i = 0; i < m->n_facts; i++) {
        const kvp_fact *f = &m->facts[i];
        if (f->value >= 0)
            printf("    %-26s %12lld  %s\n", f->name, (long long)f->value, f->source);
        else
            printf("    %-26s %12s  %s\n", f->name, "per layer", f->source);
    }
    return 0;
}

int cmd_show(int argc, char **argv)
{
    cli_opts o;
    kvp_model *m;
    if (cli_wants_help(argc, argv))
        return fputs(help, stdout), 0;
    int rc = cli_parse(argc, argv, "cache-type-k cache-type-v json family", &o);
    if (rc || (rc = cli_load_model(&o, "show", &m)))
        return rc;
    if (o.json) {
        char *s = kvp_model_json(m);
        rc = s ? (puts(s), 0) : cli_fail(EXIT_INPUT, "out of memory");
        free(s);
    } else {
        rc = card(m, &o);
    }
    kvp_model_free(m);
    return rc;
}
