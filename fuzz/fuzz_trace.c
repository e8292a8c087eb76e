/* fuzz_trace.c - libFuzzer target: any bytes as a trace (through a memfd)
 * in each format a single file can be (Mooncake, Azure CSV, kvplan's JSONL,
 * and detected), at a block size the first byte chooses, and as a synthetic
 * workload spec, each replayed through a small pool.  A trace that loads is
 * also written as kvplan's JSONL and read back, which must give the same
 * workload.  Bad input must be a clean error: no crash, hang or huge
 * allocation. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvplan.h"

/* Past these a workload is a load test, not a parser input: it is loaded
 * (the readers' own limits apply) but neither replayed nor written. */
#define SMALL_HASHES 100000
#define SMALL_CHUNKS 100000

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

/* the same content chunk by chunk (the builder keeps no empty chunk, so
 * none is skipped on either side) */
static int same_chunks(const kvp_sim_chunk *a, size_t na, const kvp_sim_chunk *b, size_t nb)
{
    return na == nb && (na == 0 || !memcmp(a, b, na * sizeof *a));
}

/* Arrivals off kvplan's nanosecond grid come back to within half of one
 * (or, past 2^51 ns, to within a part in 2^50); everything else exactly. */
static int same_workload(const kvp_workload *a, const kvp_workload *b)
{
    if (a->n_req != b->n_req || a->n_hashes != b->n_hashes || a->n_convs != b->n_convs ||
        a->hash_output != b->hash_output)
        return 0;
    for (size_t i = 0; i < a->n_req; i++) {
        const kvp_sim_request *x = &a->req[i], *y = &b->req[i];
        double d = x->timestamp - y->timestamp, tol = x->timestamp * 0x1p-50;
        if (d < 0)
            d = -d;
        if ((d > 0.5e-6 && d > tol) || x->prompt_tokens != y->prompt_tokens ||
            x->output_tokens != y->output_tokens || x->conv != y->conv || x->pass != y->pass ||
            x->n_hashes != y->n_hashes ||
            !same_chunks(a->chunks + x->chunk_off, x->n_chunks, b->chunks + y->chunk_off,
                         y->n_chunks) ||
            (x->n_hashes && memcmp(a->hashes + x->hash_off, b->hashes + y->hash_off,
                                   x->n_hashes * sizeof *a->hashes)))
            return 0;
    }
    return 1;
}

/* written with force to a memfd of its own, read back: the same workload */
static void roundtrip(const kvp_workload *w)
{
    if (w->n_chunks > SMALL_CHUNKS || w->n_hashes > SMALL_HASHES)
        return;
    int fd = memfd_create("fuzz-out.jsonl", 0);
    if (fd < 0)
        return;
    char path[64];
    kvp_workload r;
    kvp_error e;
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (kvp_workload_write(w, path, 1, &e) == 0) {
        if (kvp_workload_load(path, "kvplan", w->block_size, &r, &e) != 0) {
            fprintf(stderr, "fuzz_trace: the written workload does not load: %s\n", e.msg);
            abort();
        }
        if (!same_workload(w, &r)) {
            fprintf(stderr, "fuzz_trace: the written workload reads back different\n");
            abort();
        }
        kvp_workload_free(&r);
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint32_t sizes[] = {16, 1, 3, 64, 512};
    static const char *const formats[] = {"mooncake", "azure", "kvplan", NULL};
    kvp_workload w;
    kvp_error e;
    /* the block size from the first byte: the content stays whole, so the
     * test files seed every format as they are */
    uint32_t bs = sizes[size ? data[0] % 5 : 0];
    int fd = memfd_create("fuzz.trace", 0);
    if (fd >= 0 && write(fd, data, size) == (ssize_t)size) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        if (kvp_workload_mooncake(path, &w, &e) == 0) {
            replay(&w);
            kvp_workload_free(&w);
        }
        for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
            if (kvp_workload_load(path, formats[i], bs, &w, &e) != 0)
                continue;
            if (w.n_hashes < SMALL_HASHES)
                replay(&w);
            roundtrip(&w);
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
            if (w.n_hashes < 100000 && w.n_req < 100000) {
                replay(&w);
                roundtrip(&w);
            }
            kvp_workload_free(&w);
        }
    }
    return 0;
}
