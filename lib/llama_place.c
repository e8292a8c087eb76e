/* llama_place.c - which device holds which of a GGUF's weights in llama.cpp
 * v0.5.0, and the bytes of each device's model buffer (reference
 * llamacpp-memory-rules.md 1.2-1.4; src/llama-model.cpp load_tensors,
 * src/llama-model-loader.cpp create_tensor, common/arg.cpp for the
 * override order).  The KV cache's split by layer and the compute buffers
 * build on the same layer-to-device map. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "kvp_int.h"
#include "llama_int.h"

#define MAX_DEVICES 8
#define MAX_OVERRIDES 256
#define CPU_ALIGNMENT 32
#define CUDA_ALIGNMENT 128

/* What --cpu-moe and --n-cpu-moe add (common/common.h LLM_FFN_EXPS_REGEX). */
#define FFN_EXPS "\\.ffn_(up|down|gate|gate_up)_(ch|)exps"

int kvp_offload_cpu_moe(int32_t n, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = 0;
    if (n < 0) {
        int w = snprintf(buf, len, "%s=CPU", FFN_EXPS);
        return w < 0 || (size_t)w >= len ? -1 : 0;
    }
    for (int32_t i = 0; i < n; i++) {
        int w = snprintf(buf + used, len - used, "%sblk\\.%d%s=CPU", i ? "," : "", (int)i,
                         FFN_EXPS);
        if (w < 0 || (size_t)w >= len - used)
            return -1;
        used += (size_t)w;
    }
    return 0;
}

typedef struct override {
    regex_t re;
    int device;          /* -1: the host */
} override;

/* llama.cpp searches with std::regex (ECMAScript); kvplan with POSIX
 * extended expressions, which share the syntax -ot patterns use except the
 * digit class: \d and \D become [0-9] and [^0-9] (0-9 inside brackets).
 * glibc already reads \w, \s and their negations.  Fails when out is too
 * small. */
static int ecma_to_posix(const char *in, char *out, size_t n)
{
    size_t o = 0;
    int in_bracket = 0, repeat = 0; /* repeat: the last thing out was a quantifier */
    for (const char *p = in; *p; p++) {
        const char *add = NULL;
        char one[3] = {p[0], 0, 0};
        if (p[0] == '?' && repeat) { /* ECMAScript's lazy repeat: the same matches */
            repeat = 0;
            continue;
        }
        repeat = !in_bracket && p[0] && strchr("*+?}", p[0]);
        if (p[0] == '\\' && (p[1] == 'd' || p[1] == 'D')) {
            add = in_bracket ? "0-9" : p[1] == 'd' ? "[0-9]" : "[^0-9]";
            p++;
        } else if (p[0] == '\\' && p[1]) {
            one[1] = *++p;
            add = one;
        } else {
            if (p[0] == '[' && !in_bracket)
                in_bracket = 1;
            else if (p[0] == ']' && in_bracket && p[-1] != '[' && !(p[-1] == '^' && p[-2] == '['))
                in_bracket = 0;
            add = one;
        }
        size_t len = strlen(add);
        if (o + len >= n)
            return -1;
        memcpy(out + o, add, len);
        o += len;
    }
    out[o] = 0;
    return 0;
}

/* glibc's regcomp copies a repeated expression: "x+" becomes "xx*" and
 * "x{m,n}" n copies of x, so nested repeats multiply ("((a+)+)+..." doubles
 * with each "+"), and its epsilon closures cost worse than the square of
 * the tree ("()*" 2,000 times takes minutes).  -ot patterns are
 * small (a 48-layer alternation is some 200 nodes); the size of the tree
 * glibc would build is estimated here and capped, so that no pattern makes
 * kvplan allocate or compute without bound. */
#define MAX_REGEX_NODES 1024

typedef struct re_frame {
    uint64_t total, last;    /* the group's nodes so far; the last element's */
} re_frame;

static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }
static uint64_t sat_mul(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

/* an element of `cost` nodes follows in frame f */
static void re_element(re_frame *f, uint64_t cost)
{
    f->last = cost;
    f->total = sat_add(f->total, cost);
}

/* the last element repeated into `copies` copies */
static void re_repeat(re_frame *f, uint64_t copies)
{
    uint64_t more = sat_mul(f->last, copies ? copies - 1 : 0);
    f->total = sat_add(sat_add(f->total, more), 1);
    f->last = sat_add(sat_mul(f->last, copies ? copies : 1), 1);
}

/* 1 when glibc may compile re within the cap.  A quantifier straight after
 * another is refused: ECMAScript rejects it too (std::regex throws, so
 * llama.cpp would not start), and glibc's epsilon closures over stacked
 * repeats grow exponentially ("a+??????..." takes minutes). */
static int regex_small(const char *re)
{
    re_frame stack[64] = {{0, 0}};
    int depth = 0, quantified = 0;
    for (const char *p = re; *p; p++) {
        re_frame *f = &stack[depth];
        int quantifier = *p == '*' || *p == '?' || *p == '+' || *p == '{';
        if (quantifier && quantified)
            return 0;
        quantified = quantifier;
        if (*p == '\\' && p[1]) {
            p++;
            re_element(f, 1);
        } else if (*p == '[') {
            p += p[1] == '^';
            p += p[1] == ']';
            while (p[1] && p[1] != ']')
                p++;
            if (p[1])
                p++;
            re_element(f, 1);
        } else if (*p == '(') {
            if (++depth == 64)
                return 0;
            stack[depth].total = stack[depth].last = 0;
        } else if (*p == ')' && depth > 0) {
            uint64_t group = sat_add(stack[depth--].total, 1);
            re_element(&stack[depth], group);
        } else if (*p == '|') {
            re_element(f, 1); /* glibc's alternation node */
            f->last = 0;
        } else if (*p == '*' || *p == '?') {
            re_repeat(f, 1);
        } else if (*p == '+') {
            re_repeat(f, 2);
        } else if (*p == '{') {
            char *end;
            unsigned long lo = strtoul(p + 1, &end, 10), hi = lo;
            if (*end == ',' && end[1] == '}')
                hi = lo + 1, end++;
            else if (*end == ',')
                hi = strtoul(end + 1, &end, 10);
            if (*end == '}')
                p = end;
            re_repeat(f, hi > lo ? hi : lo);
        } else {
            re_element(f, 1);
        }
        if (stack[depth].total > MAX_REGEX_NODES || stack[depth].last > MAX_REGEX_NODES)
            return 0;
    }
    uint64_t total = 0;
    for (int i = 0; i <= depth; i++)
        total = sat_add(total, stack[i].total);
    return total <= MAX_REGEX_NODES;
}

/* A device's buffer type as llama.cpp names it, a backend and its index
 * ("CUDA0", "ROCm1", "Vulkan0"; "GPU0" too): the index, or UINT32_MAX. */
static uint32_t device_number(const char *buft)
{
    size_t letters = 0;
    while ((buft[letters] >= 'A' && buft[letters] <= 'Z') ||
           (buft[letters] >= 'a' && buft[letters] <= 'z'))
        letters++;
    const char *digits = buft + letters;
    if (!letters || !*digits || strspn(digits, "0123456789") != strlen(digits) ||
        strlen(digits) > 3)
        return UINT32_MAX;
    return (uint32_t)atoi(digits);
}

/* "REGEX=BUFT,..." into compiled patterns, in order.  A comma inside a
 * pattern would be ambiguous, as it is in llama.cpp's own parser. */
static int parse_overrides(const char *text, uint32_t n_devices, override *ov, size_t *n,
                           kvp_error *err)
{
    *n = 0;
    if (!text || !*text)
        return 0;
    char *copy = strdup(text), *save = NULL;
    if (!copy)
        return kvp_fail(err, KVP_EUSAGE, "out of memory");
    int rc = 0;
    for (char *item = strtok_r(copy, ",", &save); item && rc == 0;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '='), pattern[1024]; /* llama.cpp: the first '=' */
        uint32_t d;
        if (*n == MAX_OVERRIDES) {
            rc = kvp_fail(err, KVP_EUSAGE, "-ot: more than %d tensor overrides", MAX_OVERRIDES);
            break;
        }
        if (!eq || eq == item) {
            rc = kvp_fail(err, KVP_EUSAGE, "-ot %s: want PATTERN=BUFFER_TYPE", item);
            break;
        }
        *eq = 0;
        const char *buft = eq + 1;
        int device;
        if (!strcmp(buft, "CPU"))
            device = -1;
        else if ((d = device_number(buft)) < n_devices)
            device = (int)d;
        else {
            if (n_devices)
                rc = kvp_fail(err, KVP_EUSAGE, "-ot %s=%s: unknown buffer type (CPU, or CUDA0.."
                              "CUDA%u for the devices given)", item, buft, n_devices - 1);
            else
                rc = kvp_fail(err, KVP_EUSAGE, "-ot %s=%s: unknown buffer type (CPU; no GPU "
                              "given)", item, buft);
            break;
        }
        if (ecma_to_posix(item, pattern, sizeof pattern) || !regex_small(pattern) ||
            regcomp(&ov[*n].re, pattern, REG_EXTENDED | REG_NOSUB)) {
            rc = kvp_fail(err, KVP_EUSAGE, "-ot %.64s%s: not a regular expression kvplan can "
                          "read (POSIX extended, plus \\d; repeats expanding to at most %d nodes)",
                          item, strlen(item) > 64 ? "..." : "", MAX_REGEX_NODES);
            break;
        }
        ov[(*n)++].device = device;
    }
    free(copy);
    if (rc)
        for (size_t i = 0; i < *n; i++)
            regfree(&ov[i].re);
    return rc;
}

/* load_tensors' split points: cumulative shares normalised, in float. */
static void split_points(const kvp_offload *o, float *splits)
{
    float sum = 0.0f;
    int given = 0;
    for (uint32_t i = 0; i < o->n_devices; i++)
        given |= o->tensor_split[i] > 0.0f;
    for (uint32_t i = 0; i < o->n_devices; i++) {
        sum += given ? o->tensor_split[i] : 1.0f;
        splits[i] = sum;
    }
    for (uint32_t i = 0; i < o->n_devices; i++)
        splits[i] /= sum;
}

/* The device of layer il (n_all: the output layer): -1 the host. */
static int layer_device(int32_t il, int32_t start, int32_t act, const float *splits,
                        uint32_t n_devices)
{
    if (!n_devices || il < start || il - start >= act)
        return -1;
    float at = (float)(il - start) / (float)act;
    uint32_t d = 0;
    while (d < n_devices && !(splits[d] > at)) /* std::upper_bound */
        d++;
    return d < n_devices ? (int)d : (int)n_devices - 1;
}

/* -ngl as llama.cpp resolves it: negative (auto, all) or more than there
 * are layers means every layer, the output layer counted. */
static int32_t resolve_ngl(const kvp_offload *o, int32_t n_all)
{
    return o->n_gpu_layers < 0 || o->n_gpu_layers > n_all + 1 ? n_all + 1 : o->n_gpu_layers;
}

int kvp_llama_layer_device(const kvp_offload *o, int32_t n_all, int32_t il)
{
    float splits[MAX_DEVICES];
    if (!o->n_devices || o->n_devices > MAX_DEVICES)
        return -1;
    int32_t ngl = resolve_ngl(o, n_all), start = n_all + 1 - ngl > 0 ? n_all + 1 - ngl : 0;
    split_points(o, splits);
    return layer_device(il, start, ngl, splits, o->n_devices);
}

/* A tensor's bytes in a buffer of device d (-1 host): padded to the
 * alignment; CUDA adds a row's worth for quantized rows not a multiple of
 * 512 (ggml_backend_cuda_buffer_type_get_alloc_size). */
static int tensor_bytes(const kvp_tensor *t, int device, const kvp_offload *o, uint64_t *out)
{
    uint64_t size = t->nbytes, align = CPU_ALIGNMENT;
    if (device >= 0) {
        align = o->device_alignment ? o->device_alignment : CUDA_ALIGNMENT;
        unsigned blk = kvp_ggml_type_block(t->type);
        if (o->cuda_row_padding && blk > 1 && t->ne0 % 512) {
            uint64_t pad_elems = 512 - t->ne0 % 512;
            uint64_t row = pad_elems / blk * kvp_ggml_type_block_bytes(t->type);
            if (kvp_add(size, row, &size))
                return -1;
        }
    }
    if (kvp_add(size, align - 1, &size))
        return -1;
    *out = size / align * align;
    return 0;
}

/* With mmap, the host weights are views of the file: per file, one buffer
 * from the first host tensor's offset to the last one's end, the file's
 * padding and any offloaded tensor in between included
 * (llama_model_loader::get_mapping_range).  A duplicated tensor (the tied
 * output) maps the same bytes again, so it adds nothing. */
typedef struct host_maps {
    uint64_t lo[KVP_MAX_SHARD_MAPS], hi[KVP_MAX_SHARD_MAPS];
    unsigned char seen[KVP_MAX_SHARD_MAPS];
    uint32_t n;              /* 1 + the highest shard seen */
} host_maps;

static int map_tensor(host_maps *h, const kvp_tensor *t)
{
    uint64_t end;
    uint32_t s = t->shard;
    if (s >= KVP_MAX_SHARD_MAPS || kvp_add(t->offset, t->nbytes, &end))
        return -1;
    if (!h->seen[s]) {
        h->seen[s] = 1;
        h->lo[s] = t->offset;
        h->hi[s] = end;
    }
    if (t->offset < h->lo[s])
        h->lo[s] = t->offset;
    if (end > h->hi[s])
        h->hi[s] = end;
    if (s >= h->n)
        h->n = s + 1;
    return 0;
}

static int mapped_host(const host_maps *h, kvp_weights_split *w)
{
    w->host = 0;
    w->n_host_maps = h->n;
    for (uint32_t s = 0; s < h->n; s++) {
        w->host_map[s] = h->hi[s] - h->lo[s];
        if (kvp_add(w->host, w->host_map[s], &w->host))
            return -1;
    }
    return 0;
}

static int add_to(kvp_weights_split *w, int device, uint64_t bytes)
{
    return kvp_add(device < 0 ? w->host : w->device[device], bytes,
                   device < 0 ? &w->host : &w->device[device]);
}

int kvp_llama_weights_split(const kvp_model *m, const kvp_offload *o, kvp_weights_split *w,
                            kvp_error *err)
{
    memset(w, 0, sizeof *w);
    if (!m->tensors)
        return kvp_fail(err, KVP_EINPUT, "%s: no tensor list (a config.json): weights per "
                        "device need a GGUF", m->name);
    if (o->n_devices > MAX_DEVICES)
        return kvp_fail(err, KVP_EUSAGE, "%u devices: kvplan places weights on at most %d",
                        o->n_devices, MAX_DEVICES);
    kvp_offload opt = *o;
    if (opt.cuda_row_padding < 0)
        opt.cuda_row_padding = 1;
    int32_t n_all = (int32_t)(m->n_layers + m->n_layer_nextn);
    int32_t ngl = resolve_ngl(o, n_all);
    w->n_devices = o->n_devices;
    w->i_gpu_start = n_all + 1 - ngl > 0 ? n_all + 1 - ngl : 0;
    w->act_gpu_layers = o->n_devices ? ngl : 0;
    float splits[MAX_DEVICES];
    split_points(o, splits);
    override *ov = calloc(MAX_OVERRIDES, sizeof *ov);
    size_t n_ov = 0;
    if (!ov)
        return kvp_fail(err, KVP_EUSAGE, "out of memory");
    if (parse_overrides(o->overrides, o->n_devices, ov, &n_ov, err)) {
        free(ov);
        return -1;
    }
    int out_dev = layer_device(n_all, w->i_gpu_start, w->act_gpu_layers, splits, o->n_devices);
    int rc = 0;
    uint64_t embd_bytes = 0;
    const kvp_tensor *embd = NULL;
    host_maps maps;
    memset(&maps, 0, sizeof maps);
    for (size_t i = 0; i < m->n_tensors && rc == 0; i++) {
        const kvp_tensor *t = &m->tensors[i];
        int dev = t->layer == KVP_TENSOR_INPUT ? -1
                  : t->layer == KVP_TENSOR_OUTPUT ? out_dev
                  : layer_device(t->layer, w->i_gpu_start, w->act_gpu_layers, splits,
                                 o->n_devices);
        for (size_t k = 0; k < n_ov; k++)
            if (regexec(&ov[k].re, t->name, 0, NULL, 0) == 0) {
                dev = ov[k].device;
                break;
            }
        uint64_t b;
        if (!strcmp(t->name, "token_embd.weight"))
            embd = t;
        rc = tensor_bytes(t, dev, &opt, &b) || add_to(w, dev, b) ||
                     (dev < 0 && map_tensor(&maps, t))
                 ? kvp_fail(err, KVP_EINPUT, "%s: weight sizes overflow 64 bits", m->name) : 0;
    }
    /* no output.weight: the output layer reads token_embd; on another buffer
     * type than the input's it gets a full copy (TENSOR_DUPLICATED), and
     * always where the output is created first (tied_output 2) */
    if (rc == 0 && m->tied_output && embd && (out_dev >= 0 || m->tied_output == 2)) {
        w->tied_copy = 1;
        rc = tensor_bytes(embd, out_dev, &opt, &embd_bytes) || add_to(w, out_dev, embd_bytes)
                 ? kvp_fail(err, KVP_EINPUT, "%s: weight sizes overflow 64 bits", m->name) : 0;
    }
    for (size_t k = 0; k < n_ov; k++)
        regfree(&ov[k].re);
    free(ov);
    if (rc == 0 && o->use_mmap && mapped_host(&maps, w))
        rc = kvp_fail(err, KVP_EINPUT, "%s: weight sizes overflow 64 bits", m->name);
    return rc;
}
