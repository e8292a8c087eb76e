/* cmd_models.c - `kvplan models`: the built-in catalog, one line a model. */
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan models [--json]\n"
    "\n"
    "Lists the built-in catalog: short name, architecture, layer kinds, KV bytes per\n"
    "token (f16 cache) and fixed state per sequence, by the theory runtime.\n"
    "Any name here works as MODEL, as does its Hugging Face id (Qwen/Qwen3-8B).\n";

int cmd_models(int argc, char **argv)
{
    cli_opts o;
    if (cli_wants_help(argc, argv))
        return fputs(help, stdout), 0;
    int rc = cli_parse(argc, argv, "json", &o);
    if (rc)
        return rc;
    if (o.model)
        return cli_fail(EXIT_USAGE, "models: takes no model argument");
    if (!o.json)
        printf("%-32s %-18s %6s  %-32s %14s %14s  %s\n", "name", "arch", "layers", "layer kinds",
               "KV B/token", "state B/seq", "model id");
    else
        printf("{\n  \"schema\": %d,\n  \"models\": [\n", KVPLAN_JSON_SCHEMA);
    int status = 0;
    for (size_t i = 0; i < kvp_catalog_count(); i++) {
        const kvp_catalog_entry *e = kvp_catalog_at(i);
        kvp_model *m;
        kvp_error err;
        kvp_theory_params p;
        kvp_theory_result r;
        char kinds[256], a[32], b[32];
        kvp_theory_defaults(&p);
        if (kvp_model_load(e->name, &m, &err) || kvp_theory(m, &p, &r, &err)) {
            status = cli_fail_err(&err); /* a catalog bug: report it, list the rest */
            continue;
        }
        if (o.json)
            printf("    {\"name\": \"%s\", \"model_id\": \"%s\", \"arch\": \"%s\", \"layers\": %u, "
                   "\"per_token_bytes\": %llu, \"fixed_bytes_per_sequence\": %llu}%s\n",
                   e->name, e->model_id, m->arch, m->n_layers,
                   (unsigned long long)r.per_token_bytes,
                   (unsigned long long)r.fixed_bytes_per_seq,
                   i + 1 < kvp_catalog_count() ? "," : "");
        else
            printf("%-32s %-18s %6u  %-32s %14s %14s  %s\n", e->name, m->arch, m->n_layers,
                   fmt_kinds(m, kinds, sizeof kinds), fmt_int(r.per_token_bytes, a, sizeof a),
                   fmt_int(r.fixed_bytes_per_seq, b, sizeof b), e->model_id);
        kvp_model_free(m);
    }
    if (o.json)
        printf("  ]\n}\n");
    return status;
}
