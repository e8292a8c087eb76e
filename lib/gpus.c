/* gpus.c - the built-in GPU table: each card's total memory as nvidia-smi
 * reports it (memory.total, MiB), the smaller total torch and so vLLM see
 * (cudaMemGetInfo, GiB as vLLM prints it: vllm-memory-profile.md 3; "seen"
 * when a public log shows it, else carried over from the nearest card:
 * the PCIe rows from their SXM siblings, L4 and A10G from a 22.04 GiB log
 * whose card is unnamed, L40S from a 48 GB L20's 44.52, the RTX 4090 from
 * 24 GB cards not always named) and its compute capability.  One table for
 * every runtime: vLLM sizes its budget from the total and picks its MLA
 * backend by the compute capability; llama.cpp's per-device plan (--gpu)
 * compares each device's need with the total; the step-time model
 * (lib/serve/steptime.c) prices a step from the bandwidth and tensor rates
 * (serving-sim-rules.md 4.7: datasheet figures, dense, per GPU).  The PCIe
 * cards are rows of their own: same memory, slower HBM and clocks. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kvp_int.h"

static const struct gpu_row {
    kvp_gpu gpu;
    const char *aliases;
} gpus[] = {
    /* name, MiB, sm, bandwidth GB/s, BF16 / FP8 dense TFLOPS, PCIe GB/s, torch GiB, seen */
    {{"A100-80GB", 81920, 80, 2039, 312, 0, 31.5, 79.25, 1}, "a100 a100-80 a100-80gb a100-sxm4-80gb"},
    {{"A100-40GB", 40960, 80, 1555, 312, 0, 31.5, 39.49, 1}, "a100-40 a100-40gb a100-sxm4-40gb"},
    {{"A100-80GB-PCIe", 81920, 80, 1935, 312, 0, 31.5, 79.25, 0}, "a100-pcie-80gb a100-80gb-pcie"},
    {{"A100-40GB-PCIe", 40960, 80, 1555, 312, 0, 31.5, 39.49, 0}, "a100-pcie-40gb a100-40gb-pcie"},
    {{"H100", 81559, 90, 3350, 989, 1979, 63, 79.19, 1}, "h100 h100-80gb h100-sxm"},
    {{"H100-PCIe", 81559, 90, 2000, 756, 1513, 63, 79.19, 0}, "h100-pcie h100-pcie-80gb"},
    {{"H200", 143771, 90, 4800, 989, 1979, 63, 139.8, 1}, "h200 h200-141gb"},
    {{"B200", 183359, 100, 8000, 2250, 4500, 63, 178.35, 1}, "b200"},
    {{"L4", 23034, 89, 300, 121, 242, 31.5, 22.04, 0}, "l4"},
    {{"L40S", 46068, 89, 864, 362, 733, 31.5, 44.52, 0}, "l40s"},
    /* the A10G's rate is unpublished: llm-analysis's figure; the plain A10
     * (alias) is 125 TFLOPS, so its times come out slower than the card */
    {{"A10G", 23028, 86, 600, 70, 0, 31.5, 22.04, 0}, "a10g a10"},
    {{"RTX-3090", 24576, 86, 936, 71, 0, 31.5, 23.56, 1}, "rtx3090 3090 rtx-3090"},
    {{"RTX-4090", 24564, 89, 1008, 165, 330, 31.5, 23.52, 0}, "rtx4090 4090 rtx-4090"},
    {{"RTX-5090", 32607, 120, 1792, 209.5, 419, 63, 31.4, 1}, "rtx5090 5090 rtx-5090"},
};
#define N_GPUS (sizeof gpus / sizeof gpus[0])

const char *kvp_gpu_list(void)
{
    static char buf[1024];
    if (!buf[0])
        for (size_t i = 0; i < N_GPUS; i++)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s (%llu MiB)", i ? ", " : "",
                     gpus[i].gpu.name, (unsigned long long)gpus[i].gpu.memory_mib);
    return buf;
}

static int word_in(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncasecmp(p, w, n) == 0)
            return 1;
        p += len + (e != NULL);
    }
    return 0;
}

const kvp_gpu *kvp_gpu_find(const char *name)
{
    if (!name || !*name)
        return NULL;
    for (size_t i = 0; i < N_GPUS; i++)
        if (strcasecmp(name, gpus[i].gpu.name) == 0 || word_in(gpus[i].aliases, name))
            return &gpus[i].gpu;
    return NULL;
}
