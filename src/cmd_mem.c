/* cmd_mem.c - `kvplan mem MODEL`: the memory of the KV cache and state for
 * one context length and one set of settings, as a table or JSON. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan mem MODEL [--runtime theory|llama.cpp] [options] [--json]\n"
    "\n"
    "MODEL: a catalog name (qwen3-8b), a config.json, a directory or a GGUF file;\n"
    "ORG/NAME (the Hugging Face cache, else the Hub, else the catalog); ORG/NAME:QUANT or\n"
    "ORG/NAME/PATH.gguf and https://.../FILE.gguf (the GGUF's header by range requests);\n"
    "ollama:NAME[:TAG] (the Ollama registry; the runtime and flags Ollama would use).\n"
    "\n"
    "  --runtime R           theory (the config arithmetic) or llama.cpp; default theory\n"
    "  -c, --ctx-size N      tokens in total (4096, 32k, 128K); theory default 4096,\n"
    "                        llama.cpp default: the model's training context, as llama-server\n"
    "  -np, --parallel S     sequences sharing them; llama.cpp default: 4 unified slots\n"
    "  -ctk, --cache-type-k  K cache type: f32 f16 bf16 fp8 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl\n"
    "  -ctv, --cache-type-v  V cache type (same list); default f16 for both\n"
    "  --json                JSON schema 1 (every byte count an integer)\n"
    "  --revision REV        a Hub branch, tag or commit of an ORG/NAME model (default main)\n"
    "  --offline             never use the network: local files, caches and the catalog only\n"
    "  --family NAME         read MODEL's config.json by kvplan's rule set NAME (llama,\n"
    "                        gemma3, ...), for an architecture kvplan cannot name; the\n"
    "                        output says so\n"
    "llama.cpp only:\n"
    "  -b, --batch-size N    logical batch, default 2048\n"
    "  -ub, --ubatch-size N  micro-batch, default 512 (sliding-window caches hold W + ub)\n"
    "  -fa, --flash-attn X   on, off or auto (default); off pads every V row to the widest\n"
    "  --swa-full            full-size sliding-window cache\n"
    "  --kv-unified, --no-kv-unified   one stream for all sequences, or one each\n"
    "                        (an explicit -np means not unified, as llama-server)\n"
    "  --llama-version V     rule set: v0.5.0 (= b11146, default) or b11223\n"
    "llama.cpp placement (memory per device, as llama-server places it):\n"
    "  --gpu NAME            one more GPU from kvplan's table (RTX-4090, H100, ...);\n"
    "                        repeat it, or 2xH100 for two; none: CPU only\n"
    "  --device-memory SIZE  one more GPU of this memory (12GiB, 24GB); repeatable\n"
    "  -ngl, --n-gpu-layers N|auto|all  layers on the GPUs, the output layer counted\n"
    "                        (default auto: all of them when a GPU is given)\n"
    "  -ts, --tensor-split A,B,...  shares of the layers per GPU (default: by memory)\n"
    "  -ot, --override-tensor REGEX=BUFT[,...]  tensors whose name matches go to BUFT\n"
    "                        (CPU, CUDA0, ...); repeatable, the first match wins\n"
    "  --cpu-moe, --n-cpu-moe N   every MoE expert tensor (of the first N layers) on\n"
    "                        the CPU\n"
    "  -nkvo, --no-kv-offload  every layer's KV and state in host memory\n"
    "  --no-mmap, --load-mode none  host weights read into memory, not mapped\n"
    "  --fit on|off          llama.cpp's automatic fitting (on by default), for the notes\n"
    "  --weights-type T      a config.json's weights: Q4_K_M (default), Q8_0, F16, BF16,\n"
    "                        ... (computed from the parameter count, not read)\n"
    "\n"
    "theory: sliding-window layers hold min(tokens of a sequence, window) cells, chunked\n"
    "layers min(tokens, chunk); linear-attention and Mamba layers a fixed state per\n"
    "sequence. llama.cpp: byte-exact, with the size lines llama.cpp itself prints.\n"
    "Sizes are binary: MiB = 2^20 bytes.\n"
    "\n"
    "examples:\n"
    "  kvplan mem qwen3-8b -c 32k\n"
    "  kvplan mem gemma-3-4b-it -c 32768 --json\n"
    "  kvplan mem qwen3.5-9b -c 128k -np 4 -ctk q8_0 -ctv q8_0\n"
    "  kvplan mem gemma-3-4b-it --runtime llama.cpp -c 32768 -np 1 -fa on\n"
    "  kvplan mem model.gguf --runtime llama.cpp -c 32k -np 4 --kv-unified -ub 1024\n"
    "  kvplan mem model.gguf --runtime llama.cpp -c 32k --gpu RTX-4090 -ngl 30\n"
    "  kvplan mem qwen3-8b --runtime llama.cpp --device-memory 12GiB --weights-type Q8_0\n";

static void theory_table(const kvp_model *m, const kvp_theory_result *r)
{
    char a[32], b[32], c[32], d[32], e[32];
    const kvp_theory_params *p = &r->params;
    printf("%s · runtime theory · %s tokens · %u sequence%s · K %s, V %s\n\n", m->name,
           fmt_int(p->n_ctx, a, sizeof a), p->n_seq, p->n_seq == 1 ? "" : "s",
           kvp_dtype_name(p->type_k), kvp_dtype_name(p->type_v));
    printf("%-8s %6s %8s %12s %12s %14s %16s %11s\n", "kind", "layers", "window", "B/token",
           "cells", "state B/seq", "bytes", "MiB");
    for (size_t g = 0; g < r->n_groups; g++) {
        const kvp_theory_group *G = &r->groups[g];
        char w[16] = "-";
        if (G->window)
            snprintf(w, sizeof w, "%u", G->window);
        printf("%-8s %6u %8s %12s %12s %14s %16s %11s\n", kvp_layer_kind_name(G->kind),
               G->n_layers, w, fmt_int(G->per_token_bytes, a, sizeof a),
               fmt_int(G->cells, b, sizeof b), fmt_int(G->fixed_bytes_per_seq, c, sizeof c),
               fmt_int(G->bytes, d, sizeof d), fmt_mib(G->bytes, e, sizeof e));
    }
    printf("%-8s %6u %8s %12s %12s %14s %16s %11s\n", "total", m->n_layers, "",
           fmt_int(r->per_token_bytes, a, sizeof a), "", fmt_int(r->fixed_bytes_per_seq, c, sizeof c),
           fmt_int(r->total_bytes, d, sizeof d), fmt_mib(r->total_bytes, e, sizeof e));
    printf("\ntotal: %s MiB (%s bytes; MiB = 2^20 bytes)\n", fmt_mib(r->total_bytes, a, sizeof a),
           fmt_int(r->total_bytes, b, sizeof b));
    if (r->full_equiv_bytes != r->total_bytes)
        printf("with every window/chunk layer as full attention: %s MiB\n",
               fmt_mib(r->full_equiv_bytes, a, sizeof a));
    if (r->indexer_per_token_bytes)
        printf("of which DSA indexer keys (K type, one head per layer): %s B/token\n",
               fmt_int(r->indexer_per_token_bytes, a, sizeof a));
    if (r->has_mla) {
        uint64_t x = r->mla_expanded_per_token_bytes * p->n_ctx;
        printf("MLA stores one latent per token; expanded to per-head K/V it would be %s B/token "
               "(%s MiB here)\n", fmt_int(r->mla_expanded_per_token_bytes, a, sizeof a),
               fmt_mib(x, b, sizeof b));
    }
    if (m->max_position && p->n_ctx / p->n_seq > m->max_position)
        printf("note: %s tokens per sequence is beyond max_position_embeddings (%s)\n",
               fmt_int(p->n_ctx / p->n_seq, a, sizeof a), fmt_int(m->max_position, b, sizeof b));
}

/* "12345.67", or the word that stands in for an unknown figure */
static const char *mib_or(int known, uint64_t bytes, const char *word, char *buf, size_t n)
{
    return known ? fmt_mib(bytes, buf, n) : word;
}

static void placement_line(const kvp_llama_devices *d)
{
    if (d->n_rows == 1) {
        printf("CPU only");
    } else {
        char ngl[16];
        snprintf(ngl, sizeof ngl, "%d", (int)d->ngl_given);
        printf("-ngl %s: %d of %d layers on the GPU%s (the output layer counted)",
               d->ngl_given == -1 ? "auto" : d->ngl_given == -2 ? "all" : ngl,
               (int)d->n_gpu_layers, (int)d->n_layer_all + 1, d->n_rows > 2 ? "s" : "");
        printf(", KV %s", d->kv_offload ? "with its layer" : "in host memory (-nkvo)");
    }
    printf(", weights %s", d->use_mmap ? "mapped (mmap)" : "read into memory (no mmap)");
}

/* The run's memory per device: the host first, then each GPU. */
static void devices_table(const kvp_llama_devices *d)
{
    char a[32], b[32], c[32], e[32], f[32], g[32], h[32];
    printf("\nmemory per device (");
    placement_line(d);
    printf("):\n");
    printf("%-20s %11s %11s %11s %13s %9s %11s %11s  %s\n", "device", "weights", "KV", "state",
           "compute", "output", "total", "memory", "exact");
    for (uint32_t i = 0; i < d->n_rows; i++) {
        const kvp_device_mem *r = &d->rows[i];
        char name[48];
        snprintf(name, sizeof name, "%s%s%s", r->name, r->label[0] ? " " : "", r->label);
        printf("%-20s %11s %11s %11s %13s %9s %11s %11s  %s\n", name,
               mib_or(d->weights_known, r->weights_bytes, "unknown", a, sizeof a),
               fmt_mib(r->kv_bytes, b, sizeof b), fmt_mib(r->recurrent_bytes, c, sizeof c),
               mib_or(r->compute_modelled, r->compute_bytes, "not modelled", e, sizeof e),
               fmt_mib(r->output_bytes, f, sizeof f), fmt_mib(r->total_bytes, g, sizeof g),
               mib_or(r->memory_bytes > 0, r->memory_bytes, "-", h, sizeof h),
               r->exact ? "yes" : "no");
    }
    if (d->weights_computed)
        printf("weights: computed, not read (%s, %.3f bits a weight: %s)\n", d->weights_type->name,
               d->weights_type->milli_bits / 1000.0, d->weights_type->basis);
    if (!d->compute.modelled)
        printf("compute buffers: %s; the totals leave them out\n", d->compute.how);
    for (size_t i = 0; i < d->n_over; i++)
        printf("%s\n", d->over[i]);
}

static void llama_table(const kvp_model *m, const kvp_llama_result *r,
                        const kvp_llama_devices *dev)
{
    char a[32], b[32], c[32], d[32], e[32];
    printf("%s · llama.cpp %s rules · n_ctx %s (%s per sequence) · %u seq%s, %u stream%s%s · "
           "ubatch %u · flash attention %s\n\n", m->name, r->version,
           fmt_int(r->n_ctx, a, sizeof a), fmt_int(r->n_ctx_seq, b, sizeof b), r->n_seq,
           r->n_seq == 1 ? "" : "s", r->n_stream, r->n_stream == 1 ? "" : "s",
           r->unified ? " (unified)" : "", r->n_ubatch, r->flash_attn_on ? "on" : "off");
    printf("%-10s %10s %7s %8s %16s %16s %16s %11s\n", "cache", "cells", "layers", "seqs",
           "K/R bytes", "V/S bytes", "bytes", "MiB");
    for (size_t i = 0; i < r->n_caches; i++) {
        const kvp_llama_cache *k = &r->caches[i];
        char s[16];
        snprintf(s, sizeof s, "%u/%u", k->seqs, k->streams);
        printf("%-10s %10s %7u %8s %16s %16s %16s %11s\n", k->name, fmt_int(k->cells, a, sizeof a),
               k->layers, s, fmt_int(k->k_bytes, b, sizeof b), fmt_int(k->v_bytes, c, sizeof c),
               fmt_int(k->bytes, d, sizeof d), fmt_mib(k->bytes, e, sizeof e));
    }
    if (r->has_recurrent) {
        const kvp_llama_recurrent *s = &r->recurrent;
        char q[16];
        snprintf(q, sizeof q, "%u", s->seqs);
        printf("%-10s %10s %7u %8s %16s %16s %16s %11s\n", "recurrent",
               fmt_int(s->cells, a, sizeof a), s->layers, q, fmt_int(s->r_bytes, b, sizeof b),
               fmt_int(s->s_bytes, c, sizeof c), fmt_int(s->bytes, d, sizeof d),
               fmt_mib(s->bytes, e, sizeof e));
    }
    printf("\ntotal: %s MiB (%s bytes; MiB = 2^20 bytes)\n", fmt_mib(r->total_bytes, a, sizeof a),
           fmt_int(r->total_bytes, b, sizeof b));
    devices_table(dev);
    printf("\nllama.cpp prints:\n");
    for (size_t i = 0; i < dev->n_buffers; i++)
        if (strcmp(dev->buffers[i].kind, "KV") && strcmp(dev->buffers[i].kind, "RS"))
            printf("  %s\n", dev->buffers[i].log);
    for (size_t i = 0; i < dev->n_buffers; i++)
        if (!strcmp(dev->buffers[i].kind, "KV") || !strcmp(dev->buffers[i].kind, "RS"))
            printf("  %s\n", dev->buffers[i].log);
    for (size_t i = 0; i < r->n_log; i++)
        printf("  %s\n", r->log[i]);
    for (size_t i = 0; i < r->n_notes + dev->n_notes; i++)
        printf("%s%s\n", i ? "  " : "\nnotes:\n  ",
               i < r->n_notes ? r->notes[i] : dev->notes[i - r->n_notes]);
}

/* {"runtime": NAME, "error": MSG} with MSG escaped for JSON. */
static void json_str_error(const char *name, const char *msg)
{
    printf("{\"runtime\": \"%s\", \"error\": \"", name);
    for (const char *p = msg; *p; p++) {
        if (*p == '"' || *p == '\\')
            putchar('\\');
        if ((unsigned char)*p >= 0x20)
            putchar(*p);
    }
    printf("\"}");
}

static int run_theory(const kvp_model *m, const cli_opts *o)
{
    kvp_theory_params p;
    kvp_theory_result r;
    kvp_error e;
    cli_theory_params(o, &p);
    if (kvp_theory(m, &p, &r, &e))
        return cli_fail_err(&e);
    if (!o->json)
        return theory_table(m, &r), 0;
    char *s = kvp_theory_json(m, &r);
    int rc = s ? (puts(s), 0) : cli_fail(EXIT_INPUT, "out of memory");
    free(s);
    return rc;
}

static int run_llama(const kvp_model *m, const cli_opts *o)
{
    kvp_llama_params p;
    kvp_llama_placement pl;
    kvp_llama_result r;
    kvp_llama_devices *d = malloc(sizeof *d);
    kvp_error e;
    int rc = 0;
    if (!d)
        return cli_fail(EXIT_INPUT, "out of memory");
    cli_llama_params(o, &p);
    cli_llama_placement(o, &pl);
    if (kvp_llama_plan(m, &p, &pl, &r, d, &e)) {
        rc = cli_fail_err(&e);
    } else if (!o->json) {
        llama_table(m, &r, d);
    } else {
        char *s = kvp_llama_plan_json(m, &r, d);
        rc = s ? (puts(s), 0) : cli_fail(EXIT_INPUT, "out of memory");
        free(s);
    }
    free(d);
    return rc;
}

/* "up to 0.42 GiB off on the public logs", or "" when no log prints it */
static const char *band(double gib, char *buf, size_t n)
{
    if (gib > 0)
        snprintf(buf, n, "within %.2f GiB on the public logs", gib);
    else
        snprintf(buf, n, "no public log prints it alone");
    return buf;
}

/* vLLM's budget, term by term, when kvplan estimates it (lib/vllm_memory.c) */
static void vllm_estimate_table(const kvp_vllm_result *r)
{
    const double gib = 1024.0 * 1024.0 * 1024.0;
    char b[80];
    printf("\nthe estimate, per GPU (GiB; vLLM measures these at startup):\n");
    printf("  %-30s %8.2f\n", "total, as torch sees it", r->gpu_total_bytes / gib);
    printf("  %-30s %8.2f\n", "requested (total x util)", r->requested_bytes / gib);
    printf("  %-30s %8.2f  %s, %s\n", "- weights", r->weights_bytes / gib,
           r->weights_exact ? "exact" : "estimated", band(r->band_weights_gib, b, sizeof b));
    printf("  %-30s %8.2f  %s (forward %.2f, sampler %.2f); %s\n", "- profiling peak",
           r->activation_bytes / gib, r->sampler_bytes >= r->forward_bytes ? "the sampler" :
           "the forward pass", r->forward_bytes / gib, r->sampler_bytes / gib,
           band(r->band_peak_gib, b, sizeof b));
    printf("  %-30s %8.2f\n", "- non-torch", r->non_torch_bytes / gib);
    if (r->cudagraph_applied)
        printf("  %-30s %8.2f  %s\n", "- CUDA graphs", r->cudagraph_bytes / gib,
               band(r->band_graph_gib, b, sizeof b));
    else
        printf("  %-30s %8s  %s\n", "- CUDA graphs", "0", r->cudagraph_bytes ?
               "captured after sizing, outside the budget" : "none (--enforce-eager)");
    printf("  %-30s %8.2f  %s\n", "= available", r->available_signed_bytes / gib,
           band(r->band_available_gib, b, sizeof b));
}

static void vllm_table(const kvp_model *m, const kvp_vllm_result *r)
{
    char a[32], b[32], c[32], d[32], kv[64] = "";
    if (r->kv_cache_dtype && strcmp(r->kv_cache_dtype, "auto"))
        snprintf(kv, sizeof kv, " · kv cache %s", r->kv_cache_dtype);
    printf("%s · vLLM %s rules · %s x%u%s · max_model_len %s · block %u%s · "
           "max_num_batched_tokens %s · prefix caching %s\n\n", m->name, r->version, r->gpu, r->tp,
           r->pp > 1 ? " (pp)" : "", fmt_int(r->max_model_len, a, sizeof a), r->block_size, kv,
           fmt_int(r->max_num_batched_tokens, b, sizeof b), r->prefix_caching ? "on" : "off");
    printf("%-8s %7s %8s %7s %14s %16s\n", "kind", "layers", "padding", "block", "page bytes",
           "blocks/request");
    for (size_t i = 0; i < r->n_groups; i++) {
        const kvp_vllm_group *G = &r->groups[i];
        printf("%-8s %7u %8u %7u %14s %16s\n", kvp_layer_kind_name(G->kind), G->layers,
               G->padding, G->block_size, fmt_int(G->page_bytes, a, sizeof a),
               fmt_int(G->blocks_per_request, b, sizeof b));
    }
    printf("\nKV cache memory: %s bytes (%s)\n", fmt_int(r->kv_cache_memory_bytes, a, sizeof a),
           r->available_is_estimate ? "ESTIMATE, see notes" : "given");
    if (r->uniform_type)
        printf("block pool: %s blocks x %s bytes (one page of each of the %u layers per block "
               "id, UniformTypeKVCacheSpecs)\n", fmt_int(r->num_blocks, a, sizeof a),
               fmt_int(r->pool_block_bytes, b, sizeof b), r->n_groups ? r->groups[0].layers : 0);
    else
        printf("block pool: %s blocks x %s bytes (%u layers x %s-byte pages per block id)\n",
               fmt_int(r->num_blocks, a, sizeof a), fmt_int(r->pool_block_bytes, b, sizeof b),
               r->group_size, fmt_int(r->page_bytes, c, sizeof c));
    printf("one %s-token request ties up %s blocks = %s bytes (%s MiB)", fmt_int(r->max_model_len, a,
           sizeof a), fmt_int(r->blocks_per_request, b, sizeof b),
           fmt_int(r->per_request_bytes, c, sizeof c), fmt_mib(r->per_request_bytes, d, sizeof d));
    if (r->fixed_bytes_per_request)
        printf(", of which %s MiB is fixed state", fmt_mib(r->fixed_bytes_per_request, a, sizeof a));
    putchar('\n');
    if (r->tp > 1 || r->pp > 1)
        printf("per GPU: these figures are one GPU's (tensor parallel %u%s)\n", r->tp,
               r->pp > 1 ? ", its pipeline stage" : "");
    for (uint32_t i = 0; r->n_stages > 1 && i < r->n_stages; i++)
        printf("  stage %u: layers %u-%u, %s MiB per request, %s blocks\n", i,
               r->stages[i].first_layer, r->stages[i].first_layer + r->stages[i].layers - 1,
               fmt_mib(r->stages[i].per_request_bytes, a, sizeof a),
               fmt_int(r->stages[i].num_blocks, b, sizeof b));
    if (r->available_is_estimate)
        vllm_estimate_table(r);
    printf("\nvLLM logs:\n");
    for (size_t i = 0; i < r->n_log; i++)
        printf("  %s\n", r->log[i]);
    for (size_t i = 0; i < r->n_notes; i++)
        printf("%s%s\n", i ? "  " : "\nnotes:\n  ", r->notes[i]);
}

static int run_vllm(const kvp_model *m, const cli_opts *o)
{
    kvp_vllm_params p;
    kvp_vllm_result *r = malloc(sizeof *r);
    kvp_error e;
    int rc;
    if (!r)
        return cli_fail(EXIT_INPUT, "out of memory");
    cli_vllm_params(o, &p);
    if (kvp_vllm(m, &p, r, &e)) {
        rc = cli_fail_err(&e);
    } else if (!o->json) {
        vllm_table(m, r);
        rc = 0;
    } else {
        char *s = kvp_vllm_json(m, r);
        rc = s ? (puts(s), 0) : cli_fail(EXIT_INPUT, "out of memory");
        free(s);
    }
    free(r);
    return rc;
}

/* --runtime all: the three side by side; one runtime refusing (vLLM above
 * the model's length, llama.cpp's type checks) does not hide the others. */
static int run_all(const kvp_model *m, const cli_opts *o)
{
    kvp_theory_params tp;
    kvp_theory_result tr;
    kvp_llama_params lp;
    kvp_llama_result lr;
    kvp_vllm_params vp;
    kvp_vllm_result *vr = malloc(sizeof *vr);
    kvp_error te, le, ve;
    char a[32], b[32];
    if (!vr)
        return cli_fail(EXIT_INPUT, "out of memory");
    cli_theory_params(o, &tp);
    cli_llama_params(o, &lp);
    cli_vllm_params(o, &vp);
    if (!o->n_ctx_set && !o->max_model_len) {
        tp.n_ctx = m->max_position ? m->max_position : 4096;
        lp.n_ctx = tp.n_ctx;
    }
    int t_ok = !kvp_theory(m, &tp, &tr, &te), l_ok = !kvp_llama(m, &lp, &lr, &le),
        v_ok = !kvp_vllm(m, &vp, vr, &ve);
    if (o->json) {
        char *ts = t_ok ? kvp_theory_json(m, &tr) : NULL, *ls = l_ok ? kvp_llama_json(m, &lr) : NULL,
             *vs = v_ok ? kvp_vllm_json(m, vr) : NULL;
        printf("{\n\"schema\": %d,\n\"runtime\": \"all\",\n\"results\": [\n", KVPLAN_JSON_SCHEMA);
        const char *docs[3] = {ts, ls, vs}, *names[3] = {"theory", "llama.cpp", "vllm"};
        const kvp_error *errs[3] = {&te, &le, &ve};
        for (int i = 0; i < 3; i++) {
            if (docs[i]) {
                fputs(docs[i], stdout);
            } else {
                json_str_error(names[i], errs[i]->msg);
            }
            fputs(i < 2 ? ",\n" : "\n", stdout);
        }
        printf("]\n}\n");
        free(ts), free(ls), free(vs);
        free(vr);
        return 0;
    }
    printf("%s · every runtime · MiB = 2^20 bytes\n\n", m->name);
    printf("%-10s %-44s %16s %11s\n", "runtime", "what", "bytes", "MiB");
    if (t_ok) {
        char what[64];
        snprintf(what, sizeof what, "%s tokens, %u sequence%s", fmt_int(tp.n_ctx, a, sizeof a),
                 tp.n_seq, tp.n_seq == 1 ? "" : "s");
        printf("%-10s %-44s %16s %11s\n", "theory", what, fmt_int(tr.total_bytes, a, sizeof a),
               fmt_mib(tr.total_bytes, b, sizeof b));
    } else {
        printf("%-10s error: %s\n", "theory", te.msg);
    }
    if (l_ok) {
        char what[80];
        snprintf(what, sizeof what, "n_ctx %s, %u seq%s%s (%s)", fmt_int(lr.n_ctx, a, sizeof a),
                 lr.n_seq, lr.n_seq == 1 ? "" : "s", lr.unified ? " unified" : "", lr.version);
        printf("%-10s %-44s %16s %11s\n", "llama.cpp", what, fmt_int(lr.total_bytes, a, sizeof a),
               fmt_mib(lr.total_bytes, b, sizeof b));
    } else {
        printf("%-10s error: %s\n", "llama.cpp", le.msg);
    }
    if (v_ok) {
        char what[80];
        snprintf(what, sizeof what, "one %s-token request (%s)", fmt_int(vr->max_model_len, a,
                 sizeof a), vr->version);
        printf("%-10s %-44s %16s %11s\n", "vllm", what, fmt_int(vr->per_request_bytes, a, sizeof a),
               fmt_mib(vr->per_request_bytes, b, sizeof b));
        printf("%-10s %s\n", "", vr->log[1]);
    } else {
        printf("%-10s error: %s\n", "vllm", ve.msg);
    }
    free(vr);
    return 0;
}

static const struct runtime {
    const char *names;
    int (*run)(const kvp_model *, const cli_opts *);
} runtimes[] = {
    {"theory", run_theory},
    {"llama.cpp llamacpp llama-cpp llama-server", run_llama},
    {"vllm", run_vllm},
    {"all", run_all},
};

static const struct runtime *find_runtime(const char *name)
{
    for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++) {
        const char *n = runtimes[i].names;
        size_t len = strlen(name);
        for (const char *p = n; (p = strstr(p, name)) != NULL; p += len)
            if ((p == n || p[-1] == ' ') && (p[len] == ' ' || !p[len]))
                return &runtimes[i];
    }
    return NULL;
}

int cmd_mem(int argc, char **argv)
{
    cli_opts o;
    kvp_model *m;
    if (cli_wants_help(argc, argv))
        return fputs(help, stdout), 0;
    int rc = cli_parse(argc, argv,
                       "ctx-size parallel cache-type-k cache-type-v runtime json batch-size "
                       "ubatch-size flash-attn swa-full kv-unified no-kv-unified llama-version "
                       "vllm family llama-place",
                       &o);
    if (rc)
        return rc;
    const struct runtime *rt = find_runtime(o.runtime);
    if (!rt)
        return cli_fail(EXIT_USAGE, "--runtime %s: unknown runtime (kvplan knows theory, "
                        "llama.cpp, vllm and all)", o.runtime);
    if ((rc = cli_load_model(&o, "mem", &m)))
        return rc;
    rt = find_runtime(o.runtime); /* an Ollama model defaults to llama.cpp */
    rc = rt->run(m, &o);
    kvp_model_free(m);
    return rc;
}
