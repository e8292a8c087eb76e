/* cmd_twin.c - `kvplan twin MODEL -o out.gguf`: a sparse shape-twin GGUF
 * that the real llama.cpp loads without weights, so its KV cache and state
 * sizes can be checked against kvplan's.  A thin layer over
 * kvp_model_load and kvp_twin_write. */
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan twin MODEL -o OUT.gguf [--kv-only] [--force]\n"
    "\n"
    "Writes a shape twin of MODEL: a GGUF with llama.cpp's metadata for the model's\n"
    "architecture and the full tensor list with real shapes, whose data section is a\n"
    "sparse hole, so it costs a few KB of disk. llama.cpp loads it and creates a\n"
    "context (instantly in its metadata-only no_alloc mode; with mmap it prefetches\n"
    "the sparse file), printing the KV cache and state sizes; compare them with\n"
    "`kvplan mem MODEL --runtime llama.cpp`. The tokenizer is \"none\" with\n"
    "<arch>.vocab_size dummy tokens, enough for llama.cpp's C API.\n"
    "\n"
    "  -o, --output PATH  the GGUF to write (required)\n"
    "  --kv-only          shrink what never changes the cache (embedding width where\n"
    "                     the graph allows, FFN and expert widths, expert count,\n"
    "                     vocabulary) and keep every value that does\n"
    "  --force            overwrite PATH if it exists\n"
    "  --revision REV     a Hub branch, tag or commit of an ORG/NAME model (default main)\n"
    "  --offline          never use the network: local files, caches and the catalog only\n"
    "  --family NAME      read MODEL's config.json by kvplan's rule set NAME, for an\n"
    "                     architecture kvplan cannot name\n"
    "\n"
    "MTP (nextn) layers are left out, as llama.cpp's main context leaves them out.\n"
    "\n"
    "examples:\n"
    "  kvplan twin qwen3-8b -o qwen3-8b.twin.gguf\n"
    "  kvplan twin gemma-3-4b-it --kv-only -o gemma3.gguf --force\n"
    "  kvplan twin ./config.json -o model.twin.gguf && kvplan show model.twin.gguf\n";

/* What was written: the architecture as llama.cpp will read it, and the
 * apparent size next to the disk actually used. */
static int report(const cli_opts *o, const kvp_model *src)
{
    kvp_model *t;
    kvp_error e;
    struct stat st;
    char a[32], b[32], k[160];
    if (kvp_model_from_gguf(o->out, &t, &e))
        return cli_fail_err(&e);
    if (stat(o->out, &st)) {
        kvp_model_free(t);
        return cli_fail(EXIT_INPUT, "%s: written, but cannot stat it", o->out);
    }
    printf("%s: %s twin of %s, general.architecture %s, %s\n", o->out,
           o->kv_only ? "KV" : "shape", src->name, t->gguf_arch, fmt_kinds(t, k, sizeof k));
    printf("  %s bytes apparent, %s bytes on disk\n", fmt_int((uint64_t)st.st_size, a, sizeof a),
           fmt_int((uint64_t)st.st_blocks * 512, b, sizeof b));
    char s[160];
    if (strcmp(fmt_kinds(src, s, sizeof s), k) != 0) /* e.g. a window llama.cpp ignores */
        printf("note: llama.cpp reads this model as %s, not %s as configured\n", k, s);
    kvp_model_free(t);
    return 0;
}

int cmd_twin(int argc, char **argv)
{
    cli_opts o;
    kvp_model *m;
    kvp_error e;
    if (cli_wants_help(argc, argv))
        return fputs(help, stdout), 0;
    int rc = cli_parse(argc, argv, "output kv-only force family", &o);
    if (rc)
        return rc;
    if (!o.out || !*o.out) {
        if (!o.model)
            return cli_fail(EXIT_USAGE, "twin: no model given (see kvplan twin --help)");
        return cli_fail(EXIT_USAGE, "twin: no output file: give -o OUT.gguf");
    }
    if ((rc = cli_load_model(&o, "twin", &m)))
        return rc;
    rc = kvp_twin_write(m, o.out, o.kv_only, o.force, &e) ? cli_fail_err(&e) : report(&o, m);
    kvp_model_free(m);
    return rc;
}
