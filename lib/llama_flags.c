/* llama_flags.c - the values of llama-server's placement flags, read as
 * llama.cpp v0.5.0's common/arg.cpp reads them, into a kvp_llama_placement:
 * -ngl N|auto|all, -ts a,b,... and the devices a plan is made for (--gpu
 * NAME or NxNAME from the GPU table, --device-memory SIZE).  They come from
 * the command line and from pasted commands, so every error is one line
 * naming the flag and the value. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvp_int.h"

#define MAX_DEVICES 8

int kvp_llama_parse_ngl(const char *s, int32_t *out, kvp_error *err)
{
    uint64_t v = 0;
    if (!strcmp(s, "auto"))
        return *out = -1, 0;
    if (!strcmp(s, "all"))
        return *out = -2, 0;
    /* std::stoi would take "12abc" as 12; a plan should not guess */
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p) || (v = v * 10 + (uint64_t)(*p - '0')) > INT32_MAX)
            return kvp_fail(err, KVP_EUSAGE, "-ngl %s: want a number of layers (0 or more), "
                            "auto or all", s);
    if (!*s)
        return kvp_fail(err, KVP_EUSAGE, "-ngl: want a number of layers, auto or all");
    *out = (int32_t)v;
    return 0;
}

/* "3,1" or "3/1": proportions, split at runs of ',' and '/' as arg.cpp's
 * regex [,/]+ splits them. */
int kvp_llama_parse_tensor_split(const char *s, float *out, uint32_t cap, uint32_t *n,
                                 kvp_error *err)
{
    *n = 0;
    for (const char *p = s;;) {
        size_t len = strcspn(p, ",/");
        char item[64], *end;
        if (!len || len >= sizeof item)
            return kvp_fail(err, KVP_EUSAGE, "-ts %s: want proportions such as 3,1", s);
        memcpy(item, p, len);
        item[len] = 0;
        float v = strtof(item, &end);
        if (*end || !isfinite(v) || v < 0)
            return kvp_fail(err, KVP_EUSAGE, "-ts %s: %s is not a proportion (a number, 0 or "
                            "more)", s, item);
        if (*n == cap)
            return kvp_fail(err, KVP_EUSAGE, "-ts %s: more than %u devices", s, cap);
        out[(*n)++] = v;
        p += len;
        if (!*p)
            return 0;
        p += strspn(p, ",/");
        if (!*p)
            return 0; /* a trailing separator ends the list */
    }
}

static int add_device(kvp_llama_placement *pl, uint64_t bytes, const char *label,
                      const char *flag, const char *value, kvp_error *err)
{
    uint32_t i = pl->offload.n_devices;
    if (i == MAX_DEVICES)
        return kvp_fail(err, KVP_EUSAGE, "%s %s: kvplan plans at most %d devices", flag, value,
                        MAX_DEVICES);
    pl->device_memory[i] = bytes;
    snprintf(pl->device_label[i], sizeof pl->device_label[i], "%s", label);
    pl->offload.n_devices = i + 1;
    return 0;
}

int kvp_llama_placement_add_gpu(kvp_llama_placement *pl, const char *spec, kvp_error *err)
{
    unsigned count = 1;
    const char *name = spec, *x = strchr(spec, 'x');
    /* "2xH100": a count, then the card */
    if (x && x > spec && (size_t)(x - spec) == strspn(spec, "0123456789")) {
        unsigned long c = strtoul(spec, NULL, 10);
        count = c <= MAX_DEVICES ? (unsigned)c : 0;
        name = x + 1;
        if (count < 1)
            return kvp_fail(err, KVP_EUSAGE, "--gpu %s: want 1 to %d cards", spec, MAX_DEVICES);
    }
    const kvp_gpu *g = kvp_gpu_find(name);
    if (!g)
        return kvp_fail(err, KVP_EUSAGE, "--gpu %s: unknown GPU; kvplan knows %s (or give "
                        "--device-memory SIZE)", name, kvp_gpu_list());
    for (unsigned i = 0; i < count; i++)
        if (add_device(pl, g->memory_mib << 20, g->name, "--gpu", spec, err))
            return -1;
    return 0;
}

int kvp_llama_placement_add_memory(kvp_llama_placement *pl, const char *size, kvp_error *err)
{
    uint64_t bytes;
    if (kvp_parse_bytes(size, &bytes))
        return kvp_fail(err, KVP_EUSAGE, "--device-memory %s: a size such as 12GiB, 24GB or "
                        "25769803776", size);
    return add_device(pl, bytes, size, "--device-memory", size, err);
}
