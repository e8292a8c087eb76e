/* main.c - the kvplan command line: dispatches to one cmd_*.c per
 * subcommand.  `kvplan MODEL` alone prints the default summary. */
#include <string.h>

#include "cli.h"

static const char usage[] =
    "kvplan " KVPLAN_VERSION " - exact KV-cache and state memory for LLMs, before you load them\n"
    "\n"
    "usage: kvplan COMMAND [options]\n"
    "       kvplan MODEL                 summary at 4K / 32K / 128K\n"
    "\n"
    "commands:\n"
    "  models                 the built-in model catalog\n"
    "  archs [WORD]           the architectures kvplan reads (config.json and GGUF)\n"
    "  show MODEL             architecture card: layer kinds, bytes/token, state, provenance\n"
    "  mem MODEL [options]    memory for a context length and settings\n"
    "  compare MODEL...       several models, runtimes and lengths in one table\n"
    "  fit MODEL --memory M   largest context / most sequences that fit M bytes of cache\n"
    "  check LOG MODEL        compare a llama.cpp or vLLM startup log with kvplan's prediction\n"
    "  plot MODEL -o F.svg    memory against context length, one band per part of the cache\n"
    "  -- COMMAND...          a pasted llama-server / vllm serve command line\n"
    "  twin MODEL -o OUT      sparse shape-twin GGUF (real shapes, no weights) for llama.cpp\n"
    "  sim --workload SPEC    replay a workload through vLLM's prefix cache: hit rate, cliff\n"
    "  techniques MODEL       the twelve KV techniques, each in its own unit\n"
    "\n"
    "MODEL is a catalog name (qwen3-8b), a config.json or a directory holding one, a GGUF\n"
    "file, or an org/name repo id in the local Hugging Face cache.\n"
    "All sizes are binary: MiB = 2^20 bytes, GiB = 2^30 bytes.\n"
    "\n"
    "examples:\n"
    "  kvplan qwen3-8b\n"
    "  kvplan show gemma-3-4b-it\n"
    "  kvplan mem qwen3-8b --runtime theory -c 32k --json\n"
    "  kvplan mem ./config.json -c 128k -np 4 -ctk q8_0 -ctv q8_0\n"
    "  kvplan -- llama-server -m model.gguf -c 32768 -np 4 -ctk q8_0 -ctv q8_0 -fa on\n"
    "  kvplan -- vllm serve Qwen/Qwen3-8B --max-model-len 40960 --gpu-memory-utilization 0.9\n"
    "\n"
    "`kvplan COMMAND --help` describes each command.\n";

/* vLLM's KV block rule sets and the releases its memory estimate covers
 * (lib/rt_vllm.c's versions[], lib/vllm_memory.c's eras). */
#define VLLM_KV_RULES "0.28.0, 0.29.1"
#define VLLM_MEMORY_RELEASES "0.9.1-0.29.1"

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {{"models", cmd_models}, {"show", cmd_show},   {"mem", cmd_mem},
                {"compare", cmd_compare}, {"twin", cmd_twin},  {"fit", cmd_fit},
                {"check", cmd_check},     {"plot", cmd_plot}, {"sim", cmd_sim},
                {"techniques", cmd_techniques}, {"archs", cmd_archs}};
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "help")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        /* The first line stays "kvplan VERSION (JSON schema N)": the web page
         * shows it.  The llama.cpp rule sets come from the library; vLLM's
         * are stated here (the library has no accessor for them), and
         * tests/cases/version-*.case hold them to what --vllm-version takes. */
        printf("kvplan %s (JSON schema %d)\n", KVPLAN_VERSION, KVPLAN_JSON_SCHEMA);
        printf("llama.cpp rules: %s\n", kvp_llama_versions());
        printf("vLLM rules: %s (memory profile %s)\n", VLLM_KV_RULES, VLLM_MEMORY_RELEASES);
        return 0;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(argv[1], cmds[i].name))
            return cmds[i].fn(argc - 1, argv + 1);
    if (argv[1][0] == '-') {
        /* kvplan [OPTIONS] -- COMMAND...: a pasted runtime command line */
        for (int i = 1; i < argc; i++)
            if (!strcmp(argv[i], "--"))
                return cmd_paste(i - 1, argv + 1, argc - i - 1, argv + i + 1);
        return cli_fail(EXIT_USAGE, "%s: unknown option (see kvplan --help)", argv[1]);
    }
    return cmd_summary(argc, argv);
}
