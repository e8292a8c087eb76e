/* fuzz_trace.c - libFuzzer target: any bytes as a Mooncake trace (through a
 * memfd) and as a synthetic workload spec, each replayed through a small
 * pool.  Bad input must be a clean error: no crash, hang or huge allocation. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvplan.h"

static void replay(const kvp_workload *w)
{
    kvp_sim_config c;
    kvp_sim_result r;
    kvp_error e;
    kvp_sim_defaults(&c);
    c.num_blocks = 64;
    c.block_size = w->block_size;
    kvp_sim_run(w, &c, &r, &e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kvp_workload w;
    kvp_error e;
    int fd = memfd_create("fuzz.jsonl", 0);
    if (fd >= 0 && write(fd, data, size) == (ssize_t)size) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        if (kvp_workload_mooncake(path, &w, &e) == 0) {
            replay(&w);
            kvp_workload_free(&w);
        }
    }
    if (fd >= 0)
        close(fd);
    /* as a spec: short inputs only, and small workloads only (the spec can
     * ask for any size; the fuzzer is not a load test) */
    char spec[64];
    if (size < sizeof spec) {
        memcpy(spec, data, size);
        spec[size] = 0;
        if (kvp_workload_synthetic(spec, 16, &w, &e) == 0) {
            if (w.n_hashes < 100000 && w.n_req < 100000)
                replay(&w);
            kvp_workload_free(&w);
        }
    }
    return 0;
}
