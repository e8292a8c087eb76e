/* hf/indexed.c - config.json architectures of the "indexed" group (see arch.h): their
 * rule sets, transformers defaults and llama.cpp names. */
#include "../hfconfig.h"

static const arch_def defs[] = {
    {NULL, NULL, NULL, LAYOUT_FULL, NULL, NULL, NULL, NULL},
};

static const arch_gguf gguf[] = {
    {NULL, NULL},
};

const arch_group arch_group_indexed = {defs, 0, gguf, 0};
