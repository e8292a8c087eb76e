/* fuzz_gguf.c - libFuzzer target: any bytes as a GGUF file (through a
 * memfd, since the reader maps files), then the GGUF -> model reader and
 * the runtimes over whatever model it yields.  The reader must answer
 * garbage with a clean error: no crash, hang, leak or huge allocation. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gguf.h"
#include "kvplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz.gguf", 0);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    kvp_error e;
    gguf_file *f = NULL;
    if (kvp_gguf_read(path, &f, &e) == 0)
        kvp_gguf_free(f);
    kvp_model *m = NULL;
    if (kvp_model_from_gguf(path, &m, &e) == 0) {
        kvp_theory_params tp;
        kvp_theory_result tr;
        kvp_llama_params lp;
        kvp_llama_result lr;
        kvp_theory_defaults(&tp);
        kvp_llama_defaults(&lp);
        lp.n_ctx = 4096;
        if (kvp_theory(m, &tp, &tr, &e) == 0)
            free(kvp_theory_json(m, &tr));
        if (kvp_llama(m, &lp, &lr, &e) == 0)
            free(kvp_llama_json(m, &lr));
        kvp_model_free(m);
    }
    close(fd);
    return 0;
}
