/* llama_devices.c - the whole memory of a llama.cpp v0.5.0 run, per device:
 * the question "does this GGUF at these settings fit my GPU" needs every
 * buffer on every device, not only the cache (llamacpp-memory-rules.md 0,
 * 1, 2 and 4; the section numbers below refer to it).
 *
 *   weights   kvp_llama_weights_split (1.2-1.4); a config.json has no tensor
 *             list, so its weights are computed from the parameter count
 *   KV, state each layer's tensors on that layer's device, or all on the
 *             host with -nkvo (2.1); a buffer per cache and buffer type, each
 *             tensor padded to the buffer's alignment (CPU 32; CUDA 128 plus
 *             a row for quantized rows not a multiple of 512)
 *   output    the host buffer of the output layer's device (2.3)
 *   compute   kvp_llama_compute (lib/graph/), where it models the run
 *
 * and the buffer lines llama.cpp prints for them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "kvp_int.h"
#include "llama_int.h"

#define MAX_DEVICES 8
#define MAX_CACHES 4
#define CPU_ALIGNMENT 32
#define CUDA_ALIGNMENT 128
#define FIT_MARGIN (1024ull << 20) /* --fit keeps this much free per device (5.1) */

void kvp_llama_placement_defaults(kvp_llama_placement *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->offload.n_gpu_layers = -1;
    pl->offload.cuda_row_padding = -1;
    pl->fit = 1;
}

/* Row 0 is the host, row 1 + d device d. */
static uint32_t row_of(int device) { return device < 0 ? 0 : (uint32_t)device + 1; }

/* ---- the cache, tensor by tensor (kvp_llama_walk) ------------------------ */

typedef struct kv_acc {
    const kvp_offload *o;
    int32_t n_all;
    int no_kv_offload;
    uint64_t cache[MAX_CACHES][MAX_DEVICES + 1];   /* per llama_kv_cache and row */
    unsigned char has[MAX_CACHES][MAX_DEVICES + 1]; /* a buffer exists (a layer is there) */
    uint64_t state[MAX_DEVICES + 1];
    unsigned char has_state[MAX_DEVICES + 1];
    int overflow;
} kv_acc;

/* A cache tensor's bytes in a buffer of device d (-1 the host):
 * ggml_backend_buft_get_alloc_size padded to the alignment. */
static int cache_tensor_bytes(const kvp_cache_tensor *t, int device, const kvp_offload *o,
                              uint64_t *out)
{
    uint64_t size = t->nbytes, align = CPU_ALIGNMENT, pad;
    if (device >= 0) {
        align = o->device_alignment ? o->device_alignment : CUDA_ALIGNMENT;
        if (o->cuda_row_padding && kvp_dtype_block(t->type) > 1 && t->ne0 % 512 &&
            (kvp_dtype_row_bytes(t->type, 512 - t->ne0 % 512, &pad) ||
             kvp_add(size, pad, &size)))
            return -1;
    }
    if (kvp_add(size, align - 1, &size))
        return -1;
    *out = size / align * align;
    return 0;
}

static void on_cache_tensor(void *arg, const kvp_cache_tensor *t)
{
    kv_acc *a = arg;
    int dev = a->no_kv_offload ? -1 : kvp_llama_layer_device(a->o, a->n_all, (int32_t)t->layer);
    uint32_t row = row_of(dev);
    uint64_t b;
    if (cache_tensor_bytes(t, dev, a->o, &b)) {
        a->overflow = 1;
        return;
    }
    if (t->cache < 0) {
        a->has_state[row] = 1;
        a->overflow |= kvp_add(a->state[row], b, &a->state[row]);
    } else if (t->cache < MAX_CACHES) {
        a->has[t->cache][row] = 1;
        a->overflow |= kvp_add(a->cache[t->cache][row], b, &a->cache[t->cache][row]);
    }
}

/* ---- weights ----------------------------------------------------------- */

/* CPU_REPACK takes matrices of these ggml types on a CPU with the kernels
 * for them (ggml-cpu/repack.cpp): q4_0, q8_0, q2_K, q4_K, q5_K, q6_K,
 * iq4_nl, mxfp4, q1_0.  Which ones depends on the CPU, so a CPU-only plan
 * of a model that has them is not exact in the host's buffers. */
static int repackable(const kvp_model *m)
{
    static const uint32_t types[] = {2, 8, 10, 12, 13, 14, 20, 39, 41};
    for (size_t i = 0; i < m->n_tensors; i++)
        for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
            if (m->tensors[i].layer != KVP_TENSOR_INPUT && m->tensors[i].type == types[k])
                return 1;
    return 0;
}

static int add_row(kvp_llama_devices *d, uint32_t row, uint64_t bytes, kvp_error *err)
{
    return kvp_add(d->rows[row].weights_bytes, bytes, &d->rows[row].weights_bytes)
               ? kvp_fail(err, KVP_EINPUT, "weight sizes overflow 64 bits") : 0;
}

static void add_buffer(kvp_llama_devices *d, const char *kind, const char *name, uint32_t row,
                       uint64_t bytes)
{
    static const struct {
        const char *kind, *fmt;
    } lines[] = {
        {"model", "load_tensors: %12s model buffer size = %8.2f MiB"},
        {"KV", "llama_kv_cache: %10s KV buffer size = %8.2f MiB"},
        {"RS", "llama_memory_recurrent: %10s RS buffer size = %8.2f MiB"},
        {"output", "llama_context: %10s  output buffer size = %8.2f MiB"},
        {"compute", "sched_reserve: %10s compute buffer size = %8.2f MiB"},
    };
    if (d->n_buffers == sizeof d->buffers / sizeof d->buffers[0])
        return;
    kvp_llama_buffer *b = &d->buffers[d->n_buffers++];
    snprintf(b->kind, sizeof b->kind, "%s", kind);
    snprintf(b->name, sizeof b->name, "%s", name);
    b->row = row;
    b->bytes = bytes;
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (!strcmp(lines[i].kind, kind))
            snprintf(b->log, sizeof b->log, lines[i].fmt, name,
                     (double)bytes / 1024.0 / 1024.0);
}

/* A GGUF: the tensors placed one by one (llama_place.c). */
static int weights_from_gguf(const kvp_model *m, const kvp_offload *o, kvp_llama_devices *d,
                             kvp_error *err)
{
    kvp_weights_split w;
    if (kvp_llama_weights_split(m, o, &w, err))
        return -1;
    d->weights_known = 1;
    d->tied_copy = w.tied_copy;
    d->rows[0].weights_bytes = w.host;
    if (o->use_mmap) {
        for (uint32_t s = 0; s < w.n_host_maps; s++)
            if (w.host_map[s])
                add_buffer(d, "model", "CPU_Mapped", 0, w.host_map[s]);
    } else if (w.host) {
        add_buffer(d, "model", o->n_devices ? d->pinned : "CPU", 0, w.host);
    }
    for (uint32_t i = 0; i < o->n_devices; i++) {
        d->rows[i + 1].weights_bytes = w.device[i];
        if (w.device[i])
            add_buffer(d, "model", d->rows[i + 1].name, i + 1, w.device[i]);
    }
    if (!o->n_devices && repackable(m) && o->use_mmap)
        KVP_NOTE(d, "CPU only: on a CPU with repack kernels (AVX2, NEON, ...) llama.cpp reads "
                 "the q4_0/q4_K/q8_0-style matrices out of the mapping into a CPU_REPACK "
                 "buffer, which depends on the CPU, so the host's weights are not exact");
    else if (!o->n_devices && repackable(m))
        KVP_NOTE(d, "CPU only: on a CPU with repack kernels (AVX2, NEON, ...) llama.cpp puts "
                 "the q4_0/q4_K/q8_0-style matrices in a CPU_REPACK buffer: the same bytes, "
                 "printed in a line of their own");
    return 0;
}

/* params weights of type t on row `row` */
static int add_part(kvp_llama_devices *d, const kvp_weights_type *t, uint64_t params,
                    uint32_t row, kvp_error *err)
{
    uint64_t b;
    if (kvp_weights_type_bytes(t, params, &b))
        return kvp_fail(err, KVP_EINPUT, "weight sizes overflow 64 bits");
    d->param_count += params; /* below the bytes, which did not overflow */
    return add_row(d, row, b, err);
}

/* A config.json: the parameter count by layer (input, each layer, output)
 * times the type's bits per weight, placed by the same layer map; a tied
 * head is copied to the output device as llama.cpp copies token_embd. */
static int weights_from_config(const kvp_model *m, const kvp_llama_placement *pl,
                               const kvp_offload *o, kvp_llama_devices *d, kvp_error *err)
{
    const kvp_weights_type *t = kvp_weights_type_find(pl->weights_type);
    uint64_t in, out, b, *layers = calloc(m->n_layers ? m->n_layers : 1, sizeof *layers);
    int rc = -1;
    if (!t)
        return free(layers), kvp_fail(err, KVP_EUSAGE, "--weights-type %s: unknown (kvplan "
                                      "knows %s)", pl->weights_type, kvp_weights_type_list());
    if (!layers)
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    if (o->overrides && *o->overrides) {
        kvp_fail(err, KVP_EINPUT, "%s: -ot, --cpu-moe and --n-cpu-moe place tensors by name, "
                 "and a config.json has no tensor list (give a GGUF)", m->name);
        goto done;
    }
    if (kvp_model_param_layers(m, &in, layers, &out)) {
        KVP_NOTE(d, "weights unknown: kvplan cannot count the parameters of %s from its config; "
                 "a GGUF gives them exactly", m->arch);
        rc = 0;
        goto done;
    }
    d->weights_known = 1;
    d->weights_computed = 1;
    d->weights_type = t;
    int out_dev = kvp_llama_layer_device(o, d->n_layer_all, d->n_layer_all);
    rc = add_part(d, t, in, 0, err);
    for (uint32_t il = 0; il < m->n_layers && rc == 0; il++)
        rc = add_part(d, t, layers[il],
                      row_of(kvp_llama_layer_device(o, d->n_layer_all, (int32_t)il)), err);
    if (rc == 0)
        rc = add_part(d, t, out, row_of(out_dev), err);
    /* the head shares the embeddings (the output layer is the final norm
     * alone): the output device gets a copy, which is no more parameters */
    if (rc == 0 && out == m->hidden_size && out_dev >= 0) {
        d->tied_copy = 1;
        rc = kvp_weights_type_bytes(t, in, &b) || add_row(d, row_of(out_dev), b, err)
                 ? kvp_fail(err, KVP_EINPUT, "weight sizes overflow 64 bits") : 0;
    }
done:
    free(layers);
    return rc;
}

/* ---- the rows ----------------------------------------------------------- */

static void name_rows(const kvp_llama_placement *pl, uint32_t n_devices, kvp_llama_devices *d)
{
    const char *backend = pl->backend[0] ? pl->backend : "CUDA";
    d->n_rows = n_devices + 1;
    snprintf(d->pinned, sizeof d->pinned, "%.15s_Host", backend);
    snprintf(d->rows[0].name, sizeof d->rows[0].name, "%s", n_devices ? "Host" : "CPU");
    d->rows[0].is_host = 1;
    for (uint32_t i = 0; i < n_devices; i++) {
        kvp_device_mem *r = &d->rows[i + 1];
        snprintf(r->name, sizeof r->name, "%.15s%u", backend, i);
        snprintf(r->label, sizeof r->label, "%s", pl->device_label[i]);
        r->memory_bytes = pl->device_memory[i];
    }
}

/* -ts not given: llama.cpp shares the layers by each device's free memory
 * at start-up; kvplan by the memory given, which it equals on an idle card. */
static void default_split(const kvp_llama_placement *pl, kvp_offload *o, kvp_llama_devices *d)
{
    int all_known = 1;
    if (pl->tensor_split_given || o->n_devices < 2)
        return;
    for (uint32_t i = 0; i < o->n_devices; i++)
        all_known &= pl->device_memory[i] > 0;
    for (uint32_t i = 0; i < o->n_devices; i++)
        o->tensor_split[i] = all_known ? (float)(pl->device_memory[i] >> 20) : 1.0f;
    KVP_NOTE(d, "no -ts: llama.cpp shares the layers by each device's free memory at start-up; "
             "kvplan shares them by %s, so the devices' figures are not exact",
             all_known ? "the memory given" : "equal parts");
}

static int cache_rows(const kvp_model *m, const kvp_llama_params *p,
                      const kvp_llama_placement *pl, const kvp_offload *o,
                      kvp_llama_result *r, kvp_llama_devices *d, kvp_error *err)
{
    kv_acc a;
    memset(&a, 0, sizeof a);
    a.o = o;
    a.n_all = d->n_layer_all;
    a.no_kv_offload = pl->no_kv_offload;
    kvp_cache_visitor v = {on_cache_tensor, &a};
    if (kvp_llama_walk(m, p, &v, r, err))
        return -1;
    if (a.overflow)
        return kvp_fail(err, KVP_EINPUT, "%s: cache buffer sizes overflow 64 bits", m->name);
    for (size_t c = 0; c < r->n_caches && c < MAX_CACHES; c++)
        for (uint32_t row = 0; row < d->n_rows; row++) {
            if (!a.has[c][row])
                continue;
            if (kvp_add(d->rows[row].kv_bytes, a.cache[c][row], &d->rows[row].kv_bytes))
                return kvp_fail(err, KVP_EINPUT, "%s: KV sizes overflow 64 bits", m->name);
            add_buffer(d, "KV", row ? d->rows[row].name : "CPU", row, a.cache[c][row]);
        }
    for (uint32_t row = 0; row < d->n_rows; row++) {
        if (!a.has_state[row])
            continue;
        d->rows[row].recurrent_bytes = a.state[row];
        add_buffer(d, "RS", row ? d->rows[row].name : "CPU", row, a.state[row]);
    }
    return 0;
}

/* The output buffer: n_seq logit rows in the host buffer type of the output
 * layer's device (2.3).  A config.json's vocab_size may differ from the
 * GGUF's token count, so there it is computed. */
static int output_row(const kvp_model *m, const kvp_llama_result *r, const kvp_offload *o,
                   kvp_llama_devices *d, kvp_error *err)
{
    uint64_t bytes = r->output_bytes;
    if (!bytes && m->n_vocab && kvp_mul(m->n_vocab, 4ull * r->n_seq, &bytes))
        return kvp_fail(err, KVP_EINPUT, "%s: output buffer size overflows 64 bits", m->name);
    d->rows[0].output_bytes = bytes;
    if (r->output_bytes)
        add_buffer(d, "output",
                   kvp_llama_layer_device(o, d->n_layer_all, d->n_layer_all) >= 0 ? d->pinned
                                                                                   : "CPU",
                   0, bytes);
    return 0;
}

static int compute_rows(const kvp_model *m, const kvp_llama_result *r, const kvp_offload *o,
                        kvp_llama_devices *d, kvp_error *err)
{
    if (kvp_llama_compute(m, r, o, &d->compute, err))
        return -1;
    if (!d->compute.modelled)
        return 0;
    d->rows[0].compute_modelled = 1;
    d->rows[0].compute_bytes = d->compute.host_bytes;
    if (d->compute.host_bytes > 1)
        add_buffer(d, "compute", o->n_devices ? d->pinned : "CPU", 0, d->compute.host_bytes);
    for (uint32_t i = 0; i < o->n_devices && i < d->compute.n_devices; i++) {
        d->rows[i + 1].compute_modelled = 1;
        d->rows[i + 1].compute_bytes = d->compute.device_bytes[i];
        if (d->compute.device_bytes[i] > 1)
            add_buffer(d, "compute", d->rows[i + 1].name, i + 1, d->compute.device_bytes[i]);
    }
    return 0;
}

/* Totals, exactness, and each device against its memory. */
static int finish_rows(const kvp_model *m, const kvp_llama_placement *pl, const kvp_offload *o,
                       kvp_llama_devices *d, kvp_error *err)
{
    int split_known = pl->tensor_split_given || o->n_devices < 2;
    for (uint32_t i = 0; i < d->n_rows; i++) {
        kvp_device_mem *r = &d->rows[i];
        if (kvp_add(r->weights_bytes, r->kv_bytes, &r->total_bytes) ||
            kvp_add(r->total_bytes, r->recurrent_bytes, &r->total_bytes) ||
            kvp_add(r->total_bytes, r->compute_bytes, &r->total_bytes) ||
            kvp_add(r->total_bytes, r->output_bytes, &r->total_bytes))
            return kvp_fail(err, KVP_EINPUT, "%s: memory sizes overflow 64 bits", m->name);
        r->exact = d->weights_known && !d->weights_computed && (i == 0 || split_known) &&
                   (!r->compute_modelled || (i == 0 && d->compute.exact));
        if (i == 0 && !o->n_devices && repackable(m) && !pl->no_mmap)
            r->exact = 0;
        if (!r->memory_bytes || r->total_bytes <= r->memory_bytes)
            continue;
        char a[32], b[32];
        r->over_bytes = r->total_bytes - r->memory_bytes;
        snprintf(a, sizeof a, "%.2f", (double)r->total_bytes / 1048576.0);
        snprintf(b, sizeof b, "%.2f", (double)r->over_bytes / 1048576.0);
        if (d->n_over < sizeof d->over / sizeof d->over[0])
            snprintf(d->over[d->n_over++], sizeof d->over[0], "%s%s%s%s does not fit: it needs "
                     "%s MiB of its %llu MiB, %s MiB more%s", r->name, r->label[0] ? " (" : "",
                     r->label, r->label[0] ? ")" : "", a,
                     (unsigned long long)(r->memory_bytes >> 20), b,
                     r->compute_modelled ? "" : ", compute buffers not counted");
    }
    return 0;
}

/* What llama.cpp's --fit would do about it (5.1-5.3), in words. */
static void fit_notes(const kvp_llama_devices *d, const kvp_llama_placement *pl,
                      kvp_llama_devices *out)
{
    int over = 0, tight = 0;
    for (uint32_t i = 1; i < d->n_rows; i++) {
        const kvp_device_mem *r = &d->rows[i];
        over |= r->over_bytes > 0;
        tight |= r->memory_bytes && !r->over_bytes && r->memory_bytes - r->total_bytes < FIT_MARGIN;
    }
    if (!over && !tight)
        return;
    const char *why = over ? "a device is over its memory"
                           : "a device keeps less than 1024 MiB free, --fit's margin";
    if (!pl->fit)
        KVP_NOTE(out, "%s; with --fit off llama.cpp loads this placement as given%s", why,
                 over ? " and fails to allocate" : "");
    else if (d->ngl_auto && !pl->offload.overrides && !pl->tensor_split_given)
        KVP_NOTE(out, "%s: llama.cpp's --fit (on by default) would offload fewer layers (and "
                 "shrink -c when it is not given) than shown here", why);
    else
        KVP_NOTE(out, "%s, but llama.cpp's --fit leaves the placement alone when -ngl, -ts or "
                 "-ot is given (\"already set by user, abort\") and loads it as given", why);
}

int kvp_llama_plan(const kvp_model *m, const kvp_llama_params *p,
                   const kvp_llama_placement *pl, kvp_llama_result *r,
                   kvp_llama_devices *d, kvp_error *err)
{
    memset(d, 0, sizeof *d);
    kvp_offload o = pl->offload;
    if (o.n_devices > MAX_DEVICES)
        return kvp_fail(err, KVP_EUSAGE, "%u devices: kvplan plans at most %d", o.n_devices,
                        MAX_DEVICES);
    if (o.cuda_row_padding < 0)
        o.cuda_row_padding = 1;
    o.use_mmap = !pl->no_mmap;
    d->n_layer_all = (int32_t)(m->n_layers + m->n_layer_nextn);
    d->ngl_given = o.n_gpu_layers;
    d->ngl_auto = o.n_gpu_layers == -1;
    d->use_mmap = o.use_mmap;
    d->kv_offload = !pl->no_kv_offload;
    d->fit = pl->fit;
    if (o.n_devices)
        d->n_gpu_layers = o.n_gpu_layers < 0 || o.n_gpu_layers > d->n_layer_all + 1
                              ? d->n_layer_all + 1 : o.n_gpu_layers;
    else if (o.n_gpu_layers > 0)
        KVP_NOTE(d, "-ngl %d: no GPU given (--gpu or --device-memory), so every layer stays in "
                 "host memory, as llama.cpp without a usable GPU", (int)o.n_gpu_layers);
    name_rows(pl, o.n_devices, d);
    default_split(pl, &o, d);
    int rc = m->tensors ? weights_from_gguf(m, &o, d, err)
                        : weights_from_config(m, pl, &o, d, err);
    if (rc || cache_rows(m, p, pl, &o, r, d, err) || output_row(m, r, &o, d, err) ||
        compute_rows(m, r, &o, d, err) || finish_rows(m, pl, &o, d, err))
        return -1;
    if (pl->no_kv_offload && o.n_devices)
        KVP_NOTE(d, "-nkvo: every layer's KV and state in host memory; with -fa off the "
                 "attention of offloaded layers runs on the CPU too");
    fit_notes(d, pl, d);
    return 0;
}
