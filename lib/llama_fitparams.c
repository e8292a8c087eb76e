/* llama_fitparams.c - llama.cpp's --fit (common/fit.cpp of v0.5.0,
 * common_params_fit_impl), replayed offline: the same decisions from the
 * same per-device measurements, which kvplan computes instead of loading
 * the model (llamacpp-memory-rules.md 5).  The caller supplies the
 * measurement (weights + KV/state + compute per device for a context, a
 * layer count per device and a set of overrides); this file is only the
 * search: context first, then layers back to front by false position, then,
 * for a MoE whose dense part fits, dense-only layers turned into full ones
 * front to back with one partial layer per device. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kvp_int.h"

#define MIB (1024ll * 1024ll)

enum frac { FRAC_ATTN, FRAC_UP, FRAC_GATE, FRAC_MOE };

typedef struct ngl_t {
    uint32_t n_layer, n_part;
    enum frac overflow;
} ngl_t;

typedef struct fit_run {
    const kvp_fitp_input *in;
    kvp_fitp_measure_fn measure;
    void *ud;
    kvp_fitp_result *out;
    kvp_error *err;
    uint32_t nd;
    int64_t margins[KVP_FITP_MAX_DEV];
    uint64_t n_ctx;
} fit_run;

static void trace(fit_run *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void trace(fit_run *f, const char *fmt, ...)
{
    kvp_fitp_result *o = f->out;
    if (o->n_log >= sizeof o->log / sizeof o->log[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->log[o->n_log++], sizeof o->log[0], fmt, ap);
    va_end(ap);
}

/* one probe: per-device usage (model + context + compute), host last */
static int probe(fit_run *f, const kvp_fitp_config *c, int64_t used[KVP_FITP_MAX_DEV + 1])
{
    uint64_t u[KVP_FITP_MAX_DEV + 1] = {0};
    f->out->n_probes++;
    if (f->measure(f->ud, c, u, f->err))
        return -1;
    for (uint32_t i = 0; i <= f->nd; i++)
        used[i] = u[i] > INT64_MAX ? INT64_MAX : (int64_t)u[i];
    return 0;
}

static void base_config(fit_run *f, kvp_fitp_config *c)
{
    memset(c, 0, sizeof *c);
    c->n_ctx = f->n_ctx;
    c->n_gpu_layers = f->in->n_gpu_layers;
    c->n_devices = f->nd;
}

/* get_overflow_pattern */
static int pattern(char *buf, size_t len, uint32_t il, enum frac lf)
{
    const char *tail = lf == FRAC_ATTN ? "ffn_(gate|up|gate_up|down).*"
                     : lf == FRAC_UP   ? "ffn_(gate|gate_up|down).*"
                     : lf == FRAC_GATE ? "ffn_down.*"
                                       : "ffn_(up|down|gate_up|gate)_(ch|)exps";
    return snprintf(buf, len, "blk\\.%u\\.%s", il, tail) >= (int)len ? -1 : 0;
}

/* set_ngl_tensor_split_tbo: -ngl, -ts and one override per partial layer
 * (the first partial layer of a device overflows to ovf[id]: -1 the host,
 * else a device; the rest keep only their experts off the device) */
static int layers_config(fit_run *f, const ngl_t *ngl, const int *ovf, kvp_fitp_config *c)
{
    base_config(f, c);
    int32_t total = 0;
    for (uint32_t id = 0; id < f->nd; id++) {
        total += (int32_t)ngl[id].n_layer;
        if (f->nd > 1)
            c->tensor_split[id] = (float)ngl[id].n_layer;
    }
    c->n_gpu_layers = total;
    uint32_t il0 = f->in->n_layer + 1 - (uint32_t)total;
    size_t pos = 0;
    c->overrides[0] = 0;
    for (uint32_t id = 0; id < f->nd; id++) {
        il0 += ngl[id].n_layer - ngl[id].n_part;
        for (uint32_t il = il0; il < il0 + ngl[id].n_part; il++) {
            char pat[96];
            if (pattern(pat, sizeof pat, il, il == il0 ? ngl[id].overflow : FRAC_MOE))
                return -1;
            char buft[16] = "CPU";
            if (il == il0 && ovf[id] >= 0)
                snprintf(buft, sizeof buft, "GPU%d", ovf[id]);
            int n = snprintf(c->overrides + pos, sizeof c->overrides - pos, "%s%s=%s",
                             pos ? "," : "", pat, buft);
            if (n < 0 || (size_t)n >= sizeof c->overrides - pos)
                return kvp_fail(f->err, KVP_EUSAGE, "--fit: too many tensor overrides for "
                                "this model");
            pos += (size_t)n;
        }
        il0 += ngl[id].n_part;
    }
    return 0;
}

static int memory_for_layers(fit_run *f, const ngl_t *ngl, const int *ovf,
                             int64_t mem[KVP_FITP_MAX_DEV + 1])
{
    kvp_fitp_config c;
    if (layers_config(f, ngl, ovf, &c))
        return -1;
    return probe(f, &c, mem);
}

static int64_t total_of(const int64_t *used, uint32_t nd)
{
    int64_t s = 0;
    for (uint32_t i = 0; i < nd; i++)
        s += used[i];
    return s;
}

/* step 2: the context, when it is automatic; returns 1 when that settled it */
static int fit_context(fit_run *f, const int64_t *full, int64_t sum_free, int64_t sum_used,
                       int64_t sum_model, int *done)
{
    const kvp_fitp_input *in = f->in;
    uint32_t nd = f->nd;
    uint32_t n_seq = in->n_seq_max ? in->n_seq_max : 1;
    uint32_t n_streams = in->kv_unified ? 1 : n_seq;
    uint64_t n_ctx_max = (uint64_t)in->n_ctx_train * n_seq;
    if (n_ctx_max > UINT32_MAX)
        n_ctx_max = UINT32_MAX;
    uint64_t n_min = in->n_ctx_min == UINT32_MAX ? UINT32_MAX : (uint64_t)in->n_ctx_min * n_streams;
    if (n_min > UINT32_MAX)
        n_min = UINT32_MAX;
    int64_t margin_sum = 0;
    for (uint32_t id = 0; id < (nd ? nd : 1); id++)
        margin_sum += f->margins[id];
    int64_t surplus = sum_free - sum_used - margin_sum;
    *done = 0;
    if (surplus >= 0)
        return 0;
    if (nd <= 1)
        trace(f, "cannot meet free memory target of %lld MiB, need to reduce device memory by "
              "%lld MiB", (long long)(f->margins[0] / MIB), (long long)(-surplus / MIB));
    else
        trace(f, "cannot meet free memory targets on all devices, need to use %lld MiB less in "
              "total", (long long)(-surplus / MIB));
    if (!in->n_ctx_auto) {
        trace(f, "context size set by user to %llu -> no change", (unsigned long long)f->n_ctx);
        return 0;
    }
    if (n_ctx_max <= n_min) {
        if (in->n_ctx_min == UINT32_MAX)
            trace(f, "user has requested full context size of %llu -> no change",
                  (unsigned long long)n_ctx_max);
        else
            trace(f, "default model context size is %llu which is <= the min. context size of "
                  "%llu -> no change", (unsigned long long)n_ctx_max, (unsigned long long)n_min);
        return 0;
    }
    int64_t target = sum_free - margin_sum;
    if (nd > 1) {
        uint32_t ngl = in->n_gpu_layers < 0 ? UINT32_MAX : (uint32_t)in->n_gpu_layers;
        uint32_t div = ngl < in->n_layer ? ngl : in->n_layer;
        int64_t per_layer = div ? sum_model / div : 0;
        target -= (int64_t)(nd + 1) * per_layer / (in->n_expert == 0 ? 2 : 6);
    }
    f->n_ctx = n_min;
    kvp_fitp_config c;
    base_config(f, &c);
    int64_t min_used[KVP_FITP_MAX_DEV + 1];
    if (probe(f, &c, min_used))
        return -1;
    int64_t sum_min = nd ? total_of(min_used, nd) : min_used[0];
    (void)full;
    if (target > sum_min) {
        f->n_ctx += (uint64_t)((int64_t)(n_ctx_max - n_min) * (target - sum_min) /
                               (sum_used - sum_min));
        uint64_t align = 256ull * n_streams;
        f->n_ctx = f->n_ctx - f->n_ctx % align;
        if (f->n_ctx < n_min)
            f->n_ctx = n_min;
        int64_t per_ctx = (sum_used - sum_min) / (int64_t)(n_ctx_max - n_min);
        trace(f, "context size reduced from %llu to %llu -> need %lld MiB less memory in total",
              (unsigned long long)n_ctx_max, (unsigned long long)f->n_ctx,
              (long long)((int64_t)(n_ctx_max - f->n_ctx) * per_ctx / MIB));
        if (nd <= 1) {
            trace(f, "entire model can be fit by reducing context");
            *done = 1;
            return 0;
        }
        trace(f, "entire model should be fit across devices by reducing context");
    } else {
        trace(f, "context size reduced from %llu to %llu -> need %lld MiB less memory in total",
              (unsigned long long)n_ctx_max, (unsigned long long)f->n_ctx,
              (long long)((sum_used - sum_min) / MIB));
    }
    return 0;
}

static int fail_user(fit_run *f, const char *what)
{
    f->out->status = KVP_FITP_FAILED;
    snprintf(f->out->message, sizeof f->out->message,
             "failed to fit params to free device memory: %s already set by user, abort", what);
    return 0;
}

/* false position between ngl (fits) and high (does not), for device id */
static int search(fit_run *f, uint32_t id, ngl_t *ngl, int64_t *mem, ngl_t *high,
                  int64_t *mem_high, const int64_t *targets, const int *ovf, int moe_last_full)
{
    uint32_t delta = high[id].n_layer - ngl[id].n_layer;
    while (delta > 1) {
        int64_t den = mem_high[id] - mem[id];
        int64_t s = den ? (int64_t)delta * (targets[id] - mem[id]) / den : 1;
        uint32_t step = s < 1 ? 1 : (uint32_t)s;
        if (step > delta - 1)
            step = delta - 1;
        ngl_t test[KVP_FITP_MAX_DEV];
        memcpy(test, ngl, sizeof test);
        test[id].n_layer += step;
        if (f->in->n_expert)
            test[id].n_part += moe_last_full && test[id].n_part == 0 ? step - 1 : step;
        int64_t mt[KVP_FITP_MAX_DEV + 1];
        if (memory_for_layers(f, test, ovf, mt))
            return -1;
        if (mt[id] <= targets[id]) {
            memcpy(ngl, test, sizeof test);
            memcpy(mem, mt, sizeof mt);
        } else {
            memcpy(high, test, sizeof test);
            memcpy(mem_high, mt, sizeof mt);
        }
        delta = high[id].n_layer - ngl[id].n_layer;
    }
    return 0;
}

/* step 3: fill (dense or dense-only) layers from the last device backwards */
static int fill_back_to_front(fit_run *f, ngl_t *ngl, int64_t *mem, const int64_t *targets,
                              const int *ovf, const int64_t *free_dev)
{
    uint32_t nd = f->nd, hp = f->in->n_layer;
    trace(f, f->in->n_expert ? "filling dense-only layers back-to-front:"
                             : "filling dense layers back-to-front:");
    for (int id = (int)nd - 1; id >= 0; id--) {
        uint32_t unassigned = hp + 1;
        for (uint32_t jd = (uint32_t)id + 1; jd < nd; jd++)
            unassigned -= ngl[jd].n_layer;
        ngl_t high[KVP_FITP_MAX_DEV];
        memcpy(high, ngl, sizeof high);
        high[id].n_layer = unassigned;
        if (f->in->n_expert)
            high[id].n_part = (uint32_t)id < nd - 1 ? high[id].n_layer : high[id].n_layer - 1;
        if (high[id].n_layer > 0) {
            int64_t mh[KVP_FITP_MAX_DEV + 1];
            if (memory_for_layers(f, high, ovf, mh))
                return -1;
            if (mh[id] > targets[id]) {
                if (search(f, (uint32_t)id, ngl, mem, high, mh, targets, ovf,
                           (uint32_t)id == nd - 1))
                    return -1;
            } else {
                memcpy(ngl, high, sizeof high);
                memcpy(mem, mh, sizeof mh);
            }
        }
        trace(f, "  - device %d: %2u layers, %6lld MiB used, %6lld MiB free", id,
              ngl[id].n_layer, (long long)(mem[id] / MIB),
              (long long)((free_dev[id] - mem[id]) / MIB));
    }
    return 0;
}

static int fits_both(const int64_t *m, const int64_t *targets, uint32_t id, uint32_t nd)
{
    return m[id] < targets[id] && (id + 1 == nd || m[id + 1] < targets[id + 1]);
}

/* step 4, for one device: turn dense-only layers at the back into full
 * layers here, then try one more layer partly (UP, then GATE; else ATTN) */
static int convert_device(fit_run *f, uint32_t id, ngl_t *ngl, int64_t *mem, int *ovf,
                          size_t *dense_start, const int64_t *targets)
{
    uint32_t nd = f->nd;
    ngl_t high[KVP_FITP_MAX_DEV];
    memcpy(high, ngl, sizeof high);
    for (size_t jd = *dense_start; jd < nd; jd++) {
        uint32_t move = jd < nd - 1 ? high[jd].n_layer : high[jd].n_layer - 1;
        high[id].n_layer += move;
        high[jd].n_layer -= move;
        high[jd].n_part = 0;
    }
    size_t dense_start_high = nd - 1;
    int64_t mh[KVP_FITP_MAX_DEV + 1];
    if (memory_for_layers(f, high, ovf, mh))
        return -1;
    if (mh[id] > targets[id]) {
        uint32_t delta = (high[id].n_layer - high[id].n_part) - (ngl[id].n_layer - ngl[id].n_part);
        while (delta > 1) {
            int64_t den = mh[id] - mem[id];
            int64_t s = den ? (int64_t)delta * (targets[id] - mem[id]) / den : 1;
            uint32_t step = s < 1 ? 1 : (uint32_t)s;
            if (step > delta - 1)
                step = delta - 1;
            ngl_t test[KVP_FITP_MAX_DEV];
            memcpy(test, ngl, sizeof test);
            size_t ds = *dense_start;
            uint32_t converted = 0;
            for (; ds < nd; ds++) {
                uint32_t n = step - converted < test[ds].n_part ? step - converted : test[ds].n_part;
                test[ds].n_layer -= n;
                test[ds].n_part -= n;
                test[id].n_layer += n;
                converted += n;
                if (test[ds].n_part > 0)
                    break;
            }
            int64_t mt[KVP_FITP_MAX_DEV + 1];
            if (memory_for_layers(f, test, ovf, mt))
                return -1;
            if (mt[id] <= targets[id]) {
                memcpy(ngl, test, sizeof test);
                memcpy(mem, mt, sizeof mt);
                *dense_start = ds;
            } else {
                memcpy(high, test, sizeof test);
                memcpy(mh, mt, sizeof mt);
                dense_start_high = ds;
            }
            delta = (high[id].n_layer - high[id].n_part) - (ngl[id].n_layer - ngl[id].n_part);
        }
    } else {
        memcpy(ngl, high, sizeof high);
        memcpy(mem, mh, sizeof mh);
        *dense_start = dense_start_high;
    }
    if (*dense_start < nd && ngl[*dense_start].n_layer > (id < nd - 1 ? 0u : 1u)) {
        ngl_t test[KVP_FITP_MAX_DEV];
        memcpy(test, ngl, sizeof test);
        size_t ds = *dense_start;
        test[ds].n_layer--;
        test[ds].n_part--;
        test[id].n_layer++;
        test[id].n_part++;
        if (test[ds].n_part == 0)
            ds++;
        int ovf_test[KVP_FITP_MAX_DEV];
        memcpy(ovf_test, ovf, sizeof ovf_test);
        if (id < nd - 1)
            ovf_test[id] = (int)id + 1;
        int64_t mt[KVP_FITP_MAX_DEV + 1];
        test[id].overflow = FRAC_UP;
        trace(f, "trying to fit one extra layer with overflow_type=LAYER_FRACTION_UP");
        if (memory_for_layers(f, test, ovf_test, mt))
            return -1;
        if (fits_both(mt, targets, id, nd)) {
            memcpy(ngl, test, sizeof test);
            memcpy(ovf, ovf_test, sizeof ovf_test);
            memcpy(mem, mt, sizeof mt);
            *dense_start = ds;
            test[id].overflow = FRAC_GATE;
            trace(f, "trying to fit one extra layer with overflow_type=LAYER_FRACTION_GATE");
            if (memory_for_layers(f, test, ovf_test, mt))
                return -1;
            if (fits_both(mt, targets, id, nd)) {
                memcpy(ngl, test, sizeof test);
                memcpy(mem, mt, sizeof mt);
            }
        } else {
            test[id].overflow = FRAC_ATTN;
            trace(f, "trying to fit one extra layer with overflow_type=LAYER_FRACTION_ATTN");
            if (memory_for_layers(f, test, ovf_test, mt))
                return -1;
            if (fits_both(mt, targets, id, nd)) {
                memcpy(ngl, test, sizeof test);
                memcpy(ovf, ovf_test, sizeof ovf_test);
                memcpy(mem, mt, sizeof mt);
                *dense_start = ds;
            }
        }
    }
    return 0;
}

static int finish(fit_run *f, const ngl_t *ngl, const int *ovf, const int64_t *mem)
{
    kvp_fitp_config c;
    if (layers_config(f, ngl, ovf, &c))
        return -1;
    kvp_fitp_result *o = f->out;
    o->config = c;
    for (uint32_t id = 0; id < f->nd; id++) {
        o->layers[id] = ngl[id].n_layer;
        o->partial[id] = ngl[id].n_part;
        o->used[id] = (uint64_t)mem[id];
    }
    return 0;
}

int kvp_llama_fit_params(const kvp_fitp_input *in, kvp_fitp_measure_fn measure, void *ud,
                         kvp_fitp_result *out, kvp_error *err)
{
    memset(out, 0, sizeof *out);
    if (in->n_devices > KVP_FITP_MAX_DEV)
        return kvp_fail(err, KVP_EUSAGE, "--fit: at most %d devices", KVP_FITP_MAX_DEV);
    fit_run f = {in, measure, ud, out, err, in->n_devices, {0}, in->n_ctx};
    for (uint32_t id = 0; id < (f.nd ? f.nd : 1); id++)
        f.margins[id] = in->margin[id] ? (int64_t)in->margin[id] : 1024 * MIB;
    uint32_t nd = f.nd;
    kvp_fitp_config c;
    base_config(&f, &c);
    int64_t full[KVP_FITP_MAX_DEV + 1];
    if (probe(&f, &c, full))
        return -1;
    if (in->n_ctx_auto) {
        uint32_t n_seq = in->n_seq_max ? in->n_seq_max : 1;
        uint64_t mx = (uint64_t)in->n_ctx_train * n_seq;
        f.n_ctx = mx > UINT32_MAX ? UINT32_MAX : mx;
        if (n_seq > 1) {
            trace(&f, "context size unset -> using %llu for %u sequences:",
                  (unsigned long long)f.n_ctx, n_seq);
            base_config(&f, &c);
            if (probe(&f, &c, full))
                return -1;
        }
    }
    int64_t sum_free = 0, sum_used = 0, sum_model = 0;
    int64_t free_dev[KVP_FITP_MAX_DEV] = {0};
    out->n_ctx = f.n_ctx;
    if (nd == 0) {
        sum_used = full[0];
        sum_free = (int64_t)in->host_total;
        trace(&f, "projected to use %lld MiB of host memory vs. %lld MiB of total host memory",
              (long long)(sum_used / MIB), (long long)(sum_free / MIB));
        if (sum_free - sum_used >= f.margins[0]) {
            trace(&f, "will leave %lld >= %lld MiB of system memory, no changes needed",
                  (long long)((sum_free - sum_used) / MIB), (long long)(f.margins[0] / MIB));
            out->config = c;
            out->config.n_ctx = f.n_ctx;
            return 0;
        }
    } else {
        int changes = 0;
        for (uint32_t id = 0; id < nd; id++) {
            free_dev[id] = in->free[id] > INT64_MAX ? INT64_MAX : (int64_t)in->free[id];
            sum_free += free_dev[id];
            sum_used += full[id];
            sum_model += (int64_t)in->model_bytes[id];
            if (free_dev[id] - full[id] < f.margins[id])
                changes = 1;
        }
        trace(&f, "projected to use %lld MiB of device memory vs. %lld MiB of free device memory",
              (long long)(sum_used / MIB), (long long)(sum_free / MIB));
        if (!changes) {
            trace(&f, nd == 1 ? "will leave enough free device memory, no changes needed"
                              : "targets for free memory can be met on all devices, no changes "
                                "needed");
            out->config = c;
            out->config.n_ctx = f.n_ctx;
            for (uint32_t id = 0; id < nd; id++)
                out->used[id] = (uint64_t)full[id];
            return 0;
        }
    }
    int done = 0;
    if (fit_context(&f, full, sum_free, sum_used, sum_model, &done))
        return -1;
    out->n_ctx = f.n_ctx;
    if (done) {
        base_config(&f, &out->config);
        return 0;
    }
    if (nd == 0) {
        out->status = KVP_FITP_FAILED;
        snprintf(out->message, sizeof out->message, "failed to fit params to free device memory: "
                 "was unable to fit model into system memory by reducing context, abort");
        base_config(&f, &out->config);
        return 0;
    }
    base_config(&f, &out->config);
    if (in->user_ngl)
        return fail_user(&f, "n_gpu_layers");
    if (nd > 1 && in->user_tensor_split)
        return fail_user(&f, "model_params::tensor_split");
    if (in->user_overrides)
        return fail_user(&f, "model_params::tensor_buft_overrides");

    int64_t surplus_moe = 0;
    if (in->n_expert) {
        base_config(&f, &c);
        snprintf(c.overrides, sizeof c.overrides, "blk\\.\\d+\\.ffn_(up|down|gate_up|gate)_(ch|)exps=CPU");
        int64_t m[KVP_FITP_MAX_DEV + 1];
        if (probe(&f, &c, m))
            return -1;
        for (uint32_t id = 0; id < nd; id++)
            surplus_moe += free_dev[id] - m[id] - f.margins[id];
        if (surplus_moe > 0)
            trace(&f, "with only dense weights in device memory there is a total surplus of "
                  "%lld MiB", (long long)(surplus_moe / MIB));
        else
            trace(&f, "with only dense weights in device memory there is still a total deficit "
                  "of %lld MiB", (long long)(-surplus_moe / MIB));
    }
    int64_t targets[KVP_FITP_MAX_DEV];
    int ovf[KVP_FITP_MAX_DEV];
    ngl_t ngl[KVP_FITP_MAX_DEV];
    memset(ngl, 0, sizeof ngl);
    for (uint32_t id = 0; id < nd; id++) {
        targets[id] = free_dev[id] - f.margins[id];
        ovf[id] = -1;
        ngl[id].overflow = FRAC_MOE;
    }
    int64_t mem[KVP_FITP_MAX_DEV + 1];
    if (memory_for_layers(&f, ngl, ovf, mem) ||
        fill_back_to_front(&f, ngl, mem, targets, ovf, free_dev))
        return -1;
    if (in->n_expert == 0 || surplus_moe <= 0)
        return finish(&f, ngl, ovf, mem);

    size_t dense_start = nd;
    for (int id = (int)nd - 1; id >= 0; id--) {
        if (ngl[id].n_layer > 0) {
            dense_start = (size_t)id;
            continue;
        }
        break;
    }
    trace(&f, "converting dense-only layers to full layers and filling them front-to-back with "
          "overflow to next device/system memory:");
    for (uint32_t id = 0; id <= dense_start && dense_start < nd; id++) {
        if (convert_device(&f, id, ngl, mem, ovf, &dense_start, targets))
            return -1;
        trace(&f, "  - device %u: %2u layers (%2u overflowing), %6lld MiB used, %6lld MiB free",
              id, ngl[id].n_layer, ngl[id].n_part, (long long)(mem[id] / MIB),
              (long long)((free_dev[id] - mem[id]) / MIB));
    }
    return finish(&f, ngl, ovf, mem);
}
