/* fuzz_trace_conv.c - libFuzzer target for the conversation-shaped readers:
 * any bytes as a kv-cache-tester conversation file, and, split at 0xff bytes,
 * as a RAGPulse folder (0_trace.jsonl, then 1_sys_prompt.jsonl ...
 * 5_web_search.jsonl; missing parts are empty files).  Both readers take
 * paths, not buffers, so the input goes through a private temporary folder,
 * emptied after each input.  Each workload that loads is replayed through a
 * small pool.  Bad input must be a clean error: no crash, hang or huge
 * allocation. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvplan.h"

static const char *const rp_files[] = {"0_trace.jsonl", "1_sys_prompt.jsonl",
                                       "2_passages.jsonl", "3_history.jsonl",
                                       "4_user_input.jsonl", "5_web_search.jsonl"};
#define RP_FILES 6

static char dir[64], rp_dir[80];

static void cleanup(void)
{
    char p[128];
    for (int i = 0; i < RP_FILES; i++) {
        snprintf(p, sizeof p, "%s/%s", rp_dir, rp_files[i]);
        unlink(p);
    }
    rmdir(rp_dir);
    snprintf(p, sizeof p, "%s/conv.json", dir);
    unlink(p);
    rmdir(dir);
}

/* the folders, once per process (the fuzzer runs inputs one after another) */
static int setup(void)
{
    if (dir[0])
        return 0;
    snprintf(dir, sizeof dir, "/tmp/kvplan-fuzz-conv-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(rp_dir, sizeof rp_dir, "%s/rp", dir);
    if (mkdir(rp_dir, 0700) != 0)
        return -1;
    atexit(cleanup);
    return 0;
}

static int write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static void load_and_replay(const char *path, const char *format)
{
    kvp_workload w;
    kvp_error e;
    if (kvp_workload_load(path, format, 16, &w, &e) != 0)
        return;
    /* a valid trace can ask for any size; the fuzzer is not a load test */
    if (w.n_hashes < 100000 && w.n_req < 100000) {
        kvp_sim_config c;
        kvp_sim_result r;
        kvp_sim_defaults(&c);
        c.num_blocks = 64;
        c.block_size = w.block_size;
        kvp_sim_run(&w, &c, &r, &e);
    }
    kvp_workload_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char p[128];
    if (setup() != 0)
        return 0;
    snprintf(p, sizeof p, "%s/conv.json", dir);
    if (write_file(p, data, size) == 0)
        load_and_replay(p, "kv-cache-tester");
    unlink(p);

    /* the RAGPulse folder: part i up to the next 0xff is file i */
    const uint8_t *at = data, *end = data + size;
    int ok = 1;
    for (int i = 0; i < RP_FILES; i++) {
        const uint8_t *ff = at < end ? memchr(at, 0xff, (size_t)(end - at)) : NULL;
        const uint8_t *stop = ff ? ff : end;
        snprintf(p, sizeof p, "%s/%s", rp_dir, rp_files[i]);
        ok &= write_file(p, at, (size_t)(stop - at)) == 0;
        at = ff ? ff + 1 : end;
    }
    if (ok)
        load_and_replay(rp_dir, "ragpulse");
    for (int i = 0; i < RP_FILES; i++) {
        snprintf(p, sizeof p, "%s/%s", rp_dir, rp_files[i]);
        unlink(p);
    }
    return 0;
}
