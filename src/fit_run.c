/* fit_run.c - `kvplan fit MODEL --gpu NAME` (or --device-memory SIZE):
 * the whole llama.cpp run against the GPUs, as kvp_llama_fit_run answers
 * it: llama.cpp's own --fit decision, then kvplan's alternatives and what
 * each knob saves.  Part of cmd_fit, which keeps the KV-budget form. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

static void print_fit(const kvp_fitrun_result *r, const kvp_llama_placement *pl)
{
    const kvp_fitp_result *f = &r->fit;
    char a[32], b[32];
    printf("llama.cpp's --fit (margin 1024 MiB per device):\n");
    if (f->status != KVP_FITP_OK) {
        printf("  warning: %s\n  (loading then continues with the settings as given)\n",
               f->message);
    } else {
        printf("  -c %s -ngl %d", fmt_int(f->config.n_ctx, a, sizeof a),
               f->config.n_gpu_layers < 0 ? (int)r->n_layer + 1 : f->config.n_gpu_layers);
        if (pl->offload.n_devices > 1 && f->config.tensor_split[0] + f->config.tensor_split[1] > 0) {
            printf(" -ts ");
            for (uint32_t i = 0; i < pl->offload.n_devices; i++)
                printf("%s%g", i ? "," : "", f->config.tensor_split[i]);
        }
        if (f->config.overrides[0])
            printf(" -ot \"%s\"", f->config.overrides);
        printf("\n");
    }
    for (size_t i = 0; i < f->n_log; i++)
        printf("  | %s\n", f->log[i]);
    printf("  (%u measurements; llama.cpp loads the model for each)\n", f->n_probes);
    (void)b;
}

static void print_alternatives(const kvp_fitrun_result *r)
{
    char a[32], b[32];
    printf("\nkvplan's answers (each device within its memory minus 1024 MiB):\n");
    if (r->max_ctx_full_offload)
        printf("  largest context with all %u layers on the GPU: -c %s\n", r->n_layer + 1,
               fmt_int(r->max_ctx_full_offload, a, sizeof a));
    else
        printf("  largest context with all %u layers on the GPU: none fits\n", r->n_layer + 1);
    printf("  most layers at -c %s: -ngl %d of %u\n", fmt_int(r->n_ctx_given, a, sizeof a),
           r->max_ngl_at_ctx, r->n_layer + 1);
    printf("\nwhat each knob saves on the GPUs (all layers offloaded, %s MiB as given):\n",
           fmt_mib(r->devices_at_full, a, sizeof a));
    for (size_t i = 0; i < r->n_knobs; i++) {
        const kvp_fitrun_knob *k = &r->knobs[i];
        if (k->why[0])
            printf("  %-38s refused: %s\n", k->name, k->why);
        else
            printf("  %-38s %10s MiB saved\n", k->name, fmt_mib(k->saved_bytes, b, sizeof b));
    }
}

static char *fit_json(const kvp_model *m, const kvp_fitrun_result *r)
{
    const kvp_fitp_result *f = &r->fit;
    json_t *log = json_array(), *knobs = json_array(), *ts = json_array();
    for (size_t i = 0; i < f->n_log; i++)
        json_array_append_new(log, json_string(f->log[i]));
    for (uint32_t i = 0; i < f->config.n_devices; i++)
        json_array_append_new(ts, json_real(f->config.tensor_split[i]));
    for (size_t i = 0; i < r->n_knobs; i++) {
        const kvp_fitrun_knob *k = &r->knobs[i];
        json_array_append_new(knobs, k->why[0]
            ? json_pack("{s:s, s:s}", "knob", k->name, "refused", k->why)
            : json_pack("{s:s, s:I, s:I}", "knob", k->name, "device_bytes",
                        (json_int_t)k->device_bytes, "saved_bytes", (json_int_t)k->saved_bytes));
    }
    json_t *doc = json_pack(
        "{s:i, s:s, s:s, s:{s:b, s:s?, s:I, s:i, s:o, s:s?, s:i, s:o}, s:I, s:i, s:I, s:I, s:o}",
        "schema", 1, "runtime", "llama.cpp", "model", m->name,
        "llama_fit", "fits", f->status == KVP_FITP_OK, "warning",
        f->status == KVP_FITP_OK ? NULL : f->message, "n_ctx", (json_int_t)f->config.n_ctx,
        "n_gpu_layers", f->config.n_gpu_layers < 0 ? (int)r->n_layer + 1 : f->config.n_gpu_layers,
        "tensor_split", ts, "overrides", f->config.overrides[0] ? f->config.overrides : NULL,
        "measurements", (int)f->n_probes, "trace", log,
        "max_ctx_full_offload", (json_int_t)r->max_ctx_full_offload,
        "max_ngl_at_ctx", r->max_ngl_at_ctx, "n_ctx_given", (json_int_t)r->n_ctx_given,
        "devices_bytes_full_offload",
        (json_int_t)r->devices_at_full, "knobs", knobs);
    char *s = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
    json_decref(doc);
    return s;
}

int fit_run(const cli_opts *o, kvp_model *m)
{
    kvp_llama_params p;
    kvp_llama_placement pl;
    kvp_fitrun_result *r = malloc(sizeof *r);
    kvp_error e;
    if (!r)
        return cli_fail(EXIT_INPUT, "out of memory");
    cli_llama_params(o, &p);
    cli_llama_placement(o, &pl);
    int rc = 0;
    if (kvp_llama_fit_run(m, &p, &pl, NULL, r, &e)) {
        rc = cli_fail_err(&e);
    } else if (o->json) {
        char *js = fit_json(m, r);
        rc = js ? (puts(js), 0) : cli_fail(EXIT_INPUT, "out of memory");
        free(js);
    } else {
        char a[32];
        printf("%s · llama.cpp v0.5.0 · %u device%s:", m->name, pl.offload.n_devices,
               pl.offload.n_devices == 1 ? "" : "s");
        for (uint32_t i = 0; i < pl.offload.n_devices; i++)
            printf(" %s (%s MiB)", pl.device_label[i][0] ? pl.device_label[i] : "GPU",
                   fmt_mib(pl.device_memory[i], a, sizeof a));
        printf("\nfree memory is taken as the size given; a real card reports less (its CUDA "
               "context, other processes)\n\n");
        print_fit(r, &pl);
        print_alternatives(r);
    }
    free(r);
    return rc;
}
