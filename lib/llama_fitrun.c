/* llama_fitrun.c - `kvplan fit` for a whole llama.cpp run: what
 * llama.cpp's --fit would choose for these devices (llama_fitparams.c's
 * search over kvp_llama_plan's per-device figures, the measurement the real
 * fit makes by loading the model), and kvplan's own answers beside it: the
 * largest context with every layer on the devices, the most layers at the
 * context asked for, and what each memory knob saves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvp_int.h"

#define MIB (1024ull * 1024ull)

typedef struct run_ctx {
    const kvp_model *m;
    const kvp_llama_params *p;
    const kvp_llama_placement *pl;
    kvp_llama_result *r;
    kvp_llama_devices *d;
} run_ctx;

/* the probe: weights + KV/state + compute per device (the memory
 * breakdown; the output buffer is not in it), the host last */
static int plan_used(run_ctx *x, const kvp_llama_params *p, const kvp_llama_placement *pl,
                     uint64_t used[KVP_FITP_MAX_DEV + 1], kvp_error *err)
{
    if (kvp_llama_plan(x->m, p, pl, x->r, x->d, err))
        return -1;
    uint32_t nd = pl->offload.n_devices;
    for (uint32_t i = 0; i < x->d->n_rows && i <= KVP_FITP_MAX_DEV; i++) {
        const kvp_device_mem *row = &x->d->rows[i];
        uint64_t u = row->weights_bytes + row->kv_bytes + row->recurrent_bytes +
                     (row->compute_modelled ? row->compute_bytes : 0);
        if (row->is_host)
            used[nd] = u;
        else if (i >= 1 && i - 1 < nd)
            used[i - 1] = u;
    }
    return 0;
}

static int measure(void *ud, const kvp_fitp_config *c, uint64_t used[KVP_FITP_MAX_DEV + 1],
                   kvp_error *err)
{
    run_ctx *x = ud;
    kvp_llama_params p = *x->p;
    kvp_llama_placement pl = *x->pl;
    p.n_ctx = c->n_ctx;
    pl.offload.n_gpu_layers = c->n_gpu_layers < 0 ? -2 : c->n_gpu_layers;
    int ts = 0;
    for (uint32_t i = 0; i < c->n_devices; i++)
        ts |= c->tensor_split[i] != 0;
    if (ts) {
        memcpy(pl.offload.tensor_split, c->tensor_split, sizeof pl.offload.tensor_split);
        pl.tensor_split_given = 1;
    }
    pl.offload.overrides = c->overrides[0] ? c->overrides : NULL;
    return plan_used(x, &p, &pl, used, err);
}

static int fits(run_ctx *x, const kvp_llama_params *p, const kvp_llama_placement *pl,
                const uint64_t *target, int *ok, kvp_error *err)
{
    uint64_t used[KVP_FITP_MAX_DEV + 1] = {0};
    if (plan_used(x, p, pl, used, err))
        return -1;
    *ok = 1;
    for (uint32_t i = 0; i < pl->offload.n_devices; i++)
        if (used[i] > target[i])
            *ok = 0;
    return 0;
}

/* the largest -c (a multiple of 256 per stream) with every layer offloaded */
static int largest_context(run_ctx *x, const uint64_t *target, kvp_fitrun_result *out,
                           kvp_error *err)
{
    kvp_llama_params p = *x->p;
    kvp_llama_placement pl = *x->pl;
    pl.offload.n_gpu_layers = -2;
    uint64_t step = 256ull * (out->n_streams ? out->n_streams : 1);
    uint64_t lo = 0, hi = out->n_ctx_train ? out->n_ctx_train * (out->n_seq ? out->n_seq : 1)
                                           : 1ull << 20;
    hi = (hi + step - 1) / step;
    int ok;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        p.n_ctx = mid * step;
        if (fits(x, &p, &pl, target, &ok, err))
            return -1;
        if (ok)
            lo = mid;
        else
            hi = mid - 1;
    }
    out->max_ctx_full_offload = lo * step;
    return 0;
}

/* the most layers (-ngl) at the context asked for */
static int most_layers(run_ctx *x, const uint64_t *target, kvp_fitrun_result *out,
                       kvp_error *err)
{
    kvp_llama_placement pl = *x->pl;
    int32_t lo = 0, hi = out->n_layer + 1;
    int ok;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo + 1) / 2;
        pl.offload.n_gpu_layers = mid;
        if (fits(x, x->p, &pl, target, &ok, err))
            return -1;
        if (ok)
            lo = mid;
        else
            hi = mid - 1;
    }
    out->max_ngl_at_ctx = lo;
    return 0;
}

static uint64_t device_sum(const uint64_t *used, uint32_t nd)
{
    uint64_t s = 0;
    for (uint32_t i = 0; i < nd; i++)
        s += used[i];
    return s;
}

/* what each knob saves on the devices, every layer offloaded */
static int knobs(run_ctx *x, kvp_fitrun_result *out, kvp_error *err)
{
    uint32_t nd = x->pl->offload.n_devices;
    kvp_llama_params base = *x->p;
    kvp_llama_placement bpl = *x->pl;
    bpl.offload.n_gpu_layers = -2;
    uint64_t used[KVP_FITP_MAX_DEV + 1] = {0};
    if (plan_used(x, &base, &bpl, used, err))
        return -1;
    uint64_t ref = device_sum(used, nd);
    out->devices_at_full = ref;
    char moe[64];
    for (int k = 0; k < 6; k++) {
        kvp_llama_params p = base;
        kvp_llama_placement pl = bpl;
        const char *name;
        switch (k) {
        case 0:
            name = "-ctk q8_0 -ctv q8_0 (with -fa on)";
            p.type_k = p.type_v = KVP_Q8_0;
            p.flash_attn = KVP_FA_ON;
            break;
        case 1:
            name = "-ub 256 (half the micro-batch)";
            p.n_ubatch = (x->r->n_ubatch > 1 ? x->r->n_ubatch : 2) / 2;
            break;
        case 2:
            name = "-np one slot fewer";
            if (x->r->n_seq <= 1)
                continue;
            p.n_seq = (int32_t)x->r->n_seq - 1;
            if (x->p->n_ctx)
                p.n_ctx = x->p->n_ctx / x->r->n_seq * (x->r->n_seq - 1);
            break;
        case 3:
            name = "--swa-full off";
            if (!x->p->swa_full)
                continue;
            p.swa_full = 0;
            break;
        case 4:
            name = "-nkvo (KV cache in host memory)";
            pl.no_kv_offload = 1;
            break;
        default:
            if (!x->m->n_expert || kvp_offload_cpu_moe(-1, moe, sizeof moe))
                continue;
            name = "--cpu-moe (experts in host memory)";
            pl.offload.overrides = moe;
            break;
        }
        uint64_t u[KVP_FITP_MAX_DEV + 1] = {0};
        kvp_error e2;
        kvp_fitrun_knob *kn = &out->knobs[out->n_knobs];
        snprintf(kn->name, sizeof kn->name, "%s", name);
        if (plan_used(x, &p, &pl, u, &e2)) {
            snprintf(kn->why, sizeof kn->why, "%.200s", e2.msg);
            out->n_knobs++;
            continue;
        }
        uint64_t s = device_sum(u, nd);
        kn->saved_bytes = s < ref ? ref - s : 0;
        kn->device_bytes = s;
        out->n_knobs++;
    }
    return 0;
}

int kvp_llama_fit_run(const kvp_model *m, const kvp_llama_params *p,
                      const kvp_llama_placement *pl, const uint64_t *margins,
                      kvp_fitrun_result *out, kvp_error *err)
{
    memset(out, 0, sizeof *out);
    uint32_t nd = pl->offload.n_devices;
    if (nd == 0)
        return kvp_fail(err, KVP_EUSAGE, "fit: give the GPUs: --gpu NAME or --device-memory SIZE");
    for (uint32_t i = 0; i < nd; i++)
        if (!pl->device_memory[i])
            return kvp_fail(err, KVP_EUSAGE, "fit: device %u has no memory size", i);
    run_ctx x = {m, p, pl, malloc(sizeof(kvp_llama_result)), malloc(sizeof(kvp_llama_devices))};
    if (!x.r || !x.d) {
        free(x.r);
        free(x.d);
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    }
    int rc = -1;
    /* the settings as given: context, slots, streams, layer count */
    uint64_t used[KVP_FITP_MAX_DEV + 1];
    if (plan_used(&x, p, pl, used, err))
        goto done;
    out->n_layer = (uint32_t)x.d->n_layer_all;
    out->n_seq = x.r->n_seq;
    out->n_streams = x.r->n_stream;
    out->n_ctx_train = m->max_position;
    out->n_ctx_given = x.r->n_ctx;
    kvp_fitp_input in;
    memset(&in, 0, sizeof in);
    in.n_devices = nd;
    uint64_t target[KVP_FITP_MAX_DEV];
    for (uint32_t i = 0; i < nd; i++) {
        in.free[i] = pl->device_memory[i];
        in.margin[i] = margins && margins[i] ? margins[i] : 1024 * MIB;
        in.model_bytes[i] = x.d->rows[i + 1].weights_bytes;
        target[i] = in.free[i] > in.margin[i] ? in.free[i] - in.margin[i] : 0;
    }
    in.n_ctx = x.r->n_ctx;
    in.n_ctx_auto = p->n_ctx == 0;
    in.n_ctx_min = 4096;
    in.n_seq_max = x.r->n_seq;
    in.kv_unified = x.r->unified;
    in.n_layer = out->n_layer;
    in.n_ctx_train = (uint32_t)(m->max_position > UINT32_MAX ? UINT32_MAX : m->max_position);
    in.n_expert = m->n_expert;
    in.n_gpu_layers = pl->offload.n_gpu_layers >= 0 ? pl->offload.n_gpu_layers : -1;
    in.user_ngl = pl->offload.n_gpu_layers >= 0 || pl->offload.n_gpu_layers == -2;
    in.user_tensor_split = pl->tensor_split_given;
    in.user_overrides = pl->offload.overrides && pl->offload.overrides[0];
    if (kvp_llama_fit_params(&in, measure, &x, &out->fit, err))
        goto done;
    if (largest_context(&x, target, out, err) || most_layers(&x, target, out, err) ||
        knobs(&x, out, err))
        goto done;
    rc = 0;
done:
    free(x.r);
    free(x.d);
    return rc;
}
