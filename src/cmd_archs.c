/* cmd_archs.c - `kvplan archs [WORD]`: the architectures kvplan reads.  A
 * config.json is read by a rule set (its family) chosen by model_type or
 * `architectures` class; a GGUF file by llama.cpp's general.architecture.
 * Error messages about an unknown architecture point here rather than list
 * two hundred names in one line. */
#include <ctype.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan archs [WORD] [--llama] [--json]\n"
    "\n"
    "Lists kvplan's rule sets for config.json files: each family (the name --family\n"
    "takes), the model_type values it reads and the name llama.cpp's converter gives\n"
    "them.  --llama lists instead the llama.cpp architectures (general.architecture)\n"
    "whose GGUF files kvplan reads, and whether `kvplan twin` can write one.\n"
    "WORD keeps the rows that mention it (a family, model_type, class or llama.cpp\n"
    "name, case-insensitive).\n"
    "\n"
    "examples:\n"
    "  kvplan archs\n"
    "  kvplan archs gemma\n"
    "  kvplan archs --llama --json\n"
    "\n"
    "A row marked refused is one kvplan recognises and declines, in one line that\n"
    "says why, rather than print a wrong number.\n";

static int contains_nocase(const char *hay, const char *word)
{
    size_t n = strlen(word);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)word[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

static int mentions(const char *word, const char *const *fields, int n)
{
    if (!word)
        return 1;
    for (int i = 0; i < n; i++)
        if (fields[i] && contains_nocase(fields[i], word))
            return 1;
    return 0;
}

static void json_str_field(const char *key, const char *v, const char *sep)
{
    printf("\"%s\": \"%s\"%s", key, v, sep); /* table strings: no quotes or escapes */
}

static int list_rule_sets(const cli_opts *o)
{
    size_t shown = 0;
    if (o->json)
        printf("{\n  \"schema\": %d,\n  \"rule_sets\": [", KVPLAN_JSON_SCHEMA);
    else
        printf("%-18s %-44s %s\n", "family", "model_type", "llama.cpp");
    for (size_t i = 0; i < kvp_arch_count(); i++) {
        kvp_arch_info a;
        kvp_arch_at(i, &a);
        const char *f[] = {a.family, a.model_types, a.classes, a.llama_archs};
        if (!mentions(o->model, f, 4))
            continue;
        if (o->json) {
            printf("%s\n    {", shown ? "," : "");
            json_str_field("family", a.family, ", ");
            json_str_field("model_types", a.model_types, ", ");
            json_str_field("classes", a.classes, ", ");
            json_str_field("defaults_from", a.defaults_from, ", ");
            json_str_field("llama_archs", a.llama_archs, ", ");
            if (a.refused)
                json_str_field("refused", a.refused, "}");
            else
                printf("\"refused\": null}");
        } else {
            printf("%-18s %-44s %s%s%s\n", a.family, a.model_types,
                   a.llama_archs[0] ? a.llama_archs : "-", a.refused ? "  refused: " : "",
                   a.refused ? a.refused : "");
        }
        shown++;
    }
    if (o->json)
        printf("\n  ]\n}\n");
    else
        printf("\n%zu of %zu rule sets; kvplan archs --llama lists the GGUF architectures\n",
               shown, kvp_arch_count());
    return shown ? 0 : cli_fail(EXIT_INPUT, "archs: no rule set mentions \"%s\"", o->model);
}

static int list_llama(const cli_opts *o)
{
    size_t shown = 0;
    if (o->json)
        printf("{\n  \"schema\": %d,\n  \"llama_archs\": [", KVPLAN_JSON_SCHEMA);
    else
        printf("%-22s %-18s %s\n", "general.architecture", "family", "twin");
    for (size_t i = 0; i < kvp_llama_arch_count(); i++) {
        kvp_llama_arch_info a;
        kvp_llama_arch_at(i, &a);
        const char *f[] = {a.name, a.family};
        if (!mentions(o->model, f, 2))
            continue;
        if (o->json) {
            printf("%s\n    {", shown ? "," : "");
            json_str_field("name", a.name, ", ");
            json_str_field("family", a.family, ", ");
            printf("\"twin\": %s, ", a.twin ? "true" : "false");
            if (a.refused)
                json_str_field("refused", a.refused, "}");
            else
                printf("\"refused\": null}");
        } else {
            printf("%-22s %-18s %s%s%s\n", a.name, a.family[0] ? a.family : "-",
                   a.twin ? "yes" : "no", a.refused ? "   refused: " : "",
                   a.refused ? a.refused : "");
        }
        shown++;
    }
    if (o->json)
        printf("\n  ]\n}\n");
    else
        printf("\n%zu of %zu llama.cpp architectures\n", shown, kvp_llama_arch_count());
    return shown ? 0
                 : cli_fail(EXIT_INPUT, "archs: no llama.cpp architecture mentions \"%s\"",
                            o->model);
}

int cmd_archs(int argc, char **argv)
{
    cli_opts o;
    if (cli_wants_help(argc, argv))
        return fputs(help, stdout), 0;
    int rc = cli_parse(argc, argv, "json llama", &o);
    if (rc)
        return rc;
    return o.llama_archs ? list_llama(&o) : list_rule_sets(&o);
}
