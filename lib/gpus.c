/* gpus.c - the built-in GPU table: each card's total memory as nvidia-smi
 * reports it (memory.total, MiB) and its compute capability.  One table for
 * every runtime: vLLM sizes its budget from the total and picks its MLA
 * backend by the compute capability; llama.cpp's per-device plan (--gpu)
 * compares each device's need with the total. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kvp_int.h"

static const struct gpu_row {
    kvp_gpu gpu;
    const char *aliases;
} gpus[] = {
    {{"A100-80GB", 81920, 80}, "a100 a100-80 a100-80gb a100-sxm4-80gb a100-pcie-80gb"},
    {{"A100-40GB", 40960, 80}, "a100-40 a100-40gb a100-sxm4-40gb"},
    {{"H100", 81559, 90}, "h100 h100-80gb h100-sxm h100-pcie"},
    {{"H200", 143771, 90}, "h200 h200-141gb"},
    {{"B200", 183359, 100}, "b200"},
    {{"L4", 23034, 89}, "l4"},
    {{"L40S", 46068, 89}, "l40s"},
    {{"A10G", 23028, 86}, "a10g a10"},
    {{"RTX-3090", 24576, 86}, "rtx3090 3090 rtx-3090"},
    {{"RTX-4090", 24564, 89}, "rtx4090 4090 rtx-4090"},
    {{"RTX-5090", 32607, 120}, "rtx5090 5090 rtx-5090"},
};
#define N_GPUS (sizeof gpus / sizeof gpus[0])

const char *kvp_gpu_list(void)
{
    static char buf[512];
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
