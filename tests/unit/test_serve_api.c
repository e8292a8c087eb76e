/* test_serve_api.c - kvp_serve_run, the serving simulator's public entry:
 * its defaults, its refusals, and a tokens-only replay small enough to work
 * out by hand from serving-sim-rules.md 1.2-1.4. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kvplan.h"

static void defaults(void)
{
    kvp_serve_config c;
    kvp_serve_defaults(&c);
    CHECK("defaults: vLLM, burst, caching and async on, block 16",
          c.policy == KVP_SERVE_VLLM && c.arrivals == KVP_ARRIVE_ALL && c.prefix_caching == 1 &&
              c.async_scheduling == 1 && c.block_size == 16 && !c.model);
}

/* Two requests of 32 shared + 16 unique prompt tokens (3 full blocks each)
 * and 2 outputs, both at t = 0, 99 usable blocks, budget 8,192.  Step 1
 * admits request 0 (48 tokens; allocate_slots hashes its 3 full blocks as it
 * takes them, 1.4), then request 1, whose lookup finds the 2 shared blocks:
 * 32 hit tokens of 96, 64 computed. */
static void tiny(void)
{
    kvp_workload w;
    kvp_serve_config c;
    kvp_serve_result r;
    kvp_error e;
    CHECK("tiny: workload", kvp_workload_synthetic("shared-prefix:2,32,16,2", 16, &w, &e) == 0);
    kvp_serve_defaults(&c);
    c.num_blocks = 100;
    CHECK("tiny: runs tokens only", kvp_serve_run(&w, &c, &r, &e) == 0 && !r.timed &&
                                        r.wall_seconds == 0 && !r.gpu);
    CHECK("tiny: 2 requests, 96 prompt and 4 output tokens",
          r.requests == 2 && r.rejected == 0 && r.prompt_tokens == 96 && r.output_tokens == 4);
    CHECK("tiny: the second request hits the 32 shared tokens",
          r.hit_tokens == 32 && r.prefill_tokens_computed == 64 && r.preemptions == 0);
    c.prefix_caching = 0;
    CHECK("tiny: caching off hits nothing", kvp_serve_run(&w, &c, &r, &e) == 0 &&
                                                r.hit_tokens == 0 &&
                                                r.prefill_tokens_computed == 96);
    c.policy = (kvp_serve_policy)7;
    CHECK("an unknown policy is refused",
          kvp_serve_run(&w, &c, &r, &e) != 0 && e.code == KVP_EUSAGE);
    kvp_serve_defaults(&c);
    c.num_blocks = 100;
    c.arrivals = KVP_ARRIVE_POISSON;
    CHECK("Poisson arrivals without a rate are refused",
          kvp_serve_run(&w, &c, &r, &e) != 0 && strstr(e.msg, "--rate"));
    kvp_workload_free(&w);
}

static void plot(void)
{
    kvp_serve_result r[2];
    uint64_t cap[2] = {1600, 3200};
    kvp_error e;
    char path[] = "/tmp/kvplan-test-serve-plot-XXXXXX";
    int fd = mkstemp(path);
    memset(r, 0, sizeof r);
    CHECK("plot: temp file", fd >= 0);
    close(fd);
    CHECK("plot: an existing file is kept without force",
          kvp_serve_plot(path, 0, "t", cap, r, 2, &e) != 0 && strstr(e.msg, "--force"));
    CHECK("plot: one point is refused", kvp_serve_plot(path, 1, "t", cap, r, 1, &e) != 0);
    CHECK("plot: written with force", kvp_serve_plot(path, 1, "t", cap, r, 2, &e) == 0);
    unlink(path);
}

int main(void)
{
    defaults();
    tiny();
    plot();
    return check_failures != 0;
}
