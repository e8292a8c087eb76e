/* test_fitparams.c - llama.cpp's --fit search (lib/llama_fitparams.c)
 * against synthetic measurements whose outcome follows by hand from the
 * rules in reference/llamacpp-memory-rules.md 5 (common/fit.cpp):
 *
 * 1. CPU only, context automatic, 4 sequences (4 streams), n_ctx_train
 *    32768: the first probe is at 4 x 32768 = 131072; usage 4 GiB + 128 KiB
 *    per token against 16 GiB total and a 1024 MiB margin: target 15 GiB,
 *    minimum context 4 x 4096 = 16384 uses 6 GiB, the maximum 20 GiB, so
 *    n_ctx = 16384 + 114688 x 9/14 = 90112, already a multiple of 1024.
 * 2. One device of 12288 MiB, 36 layers plus the output layer, 400 MiB
 *    each and 512 MiB of compute once a layer is there; -c set by the
 *    user.  Target 11264 MiB; all 37 use 15312; false position: 37 x
 *    11264 / 15312 = 27 (11312, too much), then 27 x 11264 / 11312 = 26
 *    (10912, fits): -ngl 26.
 * 3. The same with -ngl given: the fit gives up with llama.cpp's warning.
 * 4. A MoE model first measures all experts on the host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kvplan.h"

#define MIB (1024ull * 1024ull)
#define GIB (1024ull * MIB)

static int cpu_measure(void *ud, const kvp_fitp_config *c, uint64_t used[], kvp_error *err)
{
    (void)ud; (void)err;
    used[0] = 4 * GIB + c->n_ctx * 128 * 1024;
    return 0;
}

typedef struct seen { int n; int saw_cpu_moe; } seen;

static int dev_measure(void *ud, const kvp_fitp_config *c, uint64_t used[], kvp_error *err)
{
    (void)err;
    seen *s = ud;
    s->n++;
    if (strstr(c->overrides, "_(ch|)exps=CPU"))
        s->saw_cpu_moe = 1;
    int32_t ngl = c->n_gpu_layers < 0 ? 37 : c->n_gpu_layers;
    used[0] = ngl ? 512 * MIB + (uint64_t)ngl * 400 * MIB : 0;
    used[1] = 1 * GIB;
    return 0;
}

static void device_input(kvp_fitp_input *in)
{
    memset(in, 0, sizeof *in);
    in->n_devices = 1;
    in->free[0] = 12288 * MIB;
    in->n_ctx = 4096;
    in->n_ctx_min = 4096;
    in->n_seq_max = 1;
    in->n_layer = 36;
    in->n_ctx_train = 40960;
    in->n_gpu_layers = -1;
}

int main(void)
{
    kvp_fitp_input in;
    kvp_fitp_result *r = malloc(sizeof *r);
    kvp_error e;
    if (!r)
        return 1;

    memset(&in, 0, sizeof in);
    in.host_total = 16 * GIB;
    in.n_ctx_auto = 1;
    in.n_ctx_min = 4096;
    in.n_seq_max = 4;
    in.n_ctx_train = 32768;
    in.n_layer = 36;
    in.n_gpu_layers = -1;
    CHECK("cpu: runs", kvp_llama_fit_params(&in, cpu_measure, NULL, r, &e) == 0);
    CHECK("cpu: context interpolated to 90112", r->status == KVP_FITP_OK && r->n_ctx == 90112 &&
                                                    r->config.n_ctx == 90112);
    CHECK("cpu: three probes (initial, 4 x n_ctx_train, minimum)", r->n_probes == 3);

    seen s = {0, 0};
    device_input(&in);
    CHECK("device: runs", kvp_llama_fit_params(&in, dev_measure, &s, r, &e) == 0);
    CHECK("device: -ngl 26", r->status == KVP_FITP_OK && r->config.n_gpu_layers == 26 &&
                                 r->layers[0] == 26 && r->n_ctx == 4096);
    CHECK("device: one device, no -ts and no overrides",
          r->config.tensor_split[0] == 0 && r->config.overrides[0] == 0);
    CHECK("device: last measurement 10912 MiB", r->used[0] == 10912 * MIB);

    in.user_ngl = 1;
    in.n_gpu_layers = 30;
    CHECK("user -ngl: runs", kvp_llama_fit_params(&in, dev_measure, &s, r, &e) == 0);
    CHECK("user -ngl: gives up with llama.cpp's warning",
          r->status == KVP_FITP_FAILED &&
              strstr(r->message, "n_gpu_layers already set by user, abort") != NULL);

    device_input(&in);
    in.n_expert = 128;
    s.saw_cpu_moe = 0;
    CHECK("moe: runs", kvp_llama_fit_params(&in, dev_measure, &s, r, &e) == 0);
    CHECK("moe: measures all experts on the host first", s.saw_cpu_moe);
    free(r);
    return check_failures != 0;
}
