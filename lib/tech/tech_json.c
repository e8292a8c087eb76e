/* tech_json.c - `kvplan techniques --json` (schema 1): one object per row with
 * its id, kind, unit, baseline, value, multiplier (where one applies),
 * label, already_used and assumptions, plus the figures of its kind.  Every
 * byte count is an integer; a row's unit says what its value counts, and no
 * field is meant to be compared across kinds. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../json_out.h"
#include "tech.h"

static json_t *u64(uint64_t v) { return json_integer((json_int_t)v); }

static json_t *store_obj(kvp_runtime rt, const kvp_tech_store *s)
{
    json_t *theory = json_object(), *run = json_object();
    json_object_set_new(theory, "bytes", u64(s->theory_bytes));
    json_object_set_new(theory, "multiplier", json_real(s->theory_multiplier));
    json_object_set_new(theory, "tokens",
                        s->theory_tokens_unbounded ? json_null() : u64(s->theory_tokens));
    json_object_set_new(theory, "tokens_unbounded", json_boolean(s->theory_tokens_unbounded));
    json_object_set_new(theory, "sequences", u64(s->theory_seqs));
    json_object_set_new(run, "name", json_string(kvp_runtime_name(rt)));
    json_object_set_new(run, "computed", json_boolean(s->rt_computed));
    if (!s->rt_computed) {
        json_object_set_new(run, "reason", json_string(s->rt_reason));
    } else {
        json_object_set_new(run, "label", json_string(kvp_tech_label_name(s->rt_label)));
        json_object_set_new(run, "bytes", u64(s->rt_bytes));
        if (rt == KVP_RT_VLLM) {
            json_object_set_new(run, "blocks", u64(s->rt_blocks));
            json_object_set_new(run, "block_size", u64(s->rt_block_size));
        }
        json_object_set_new(run, "tokens", rt == KVP_RT_THEORY && s->theory_tokens_unbounded
                                               ? json_null() : u64(s->rt_tokens));
        json_object_set_new(run, "concurrency", json_real(s->rt_concurrency));
        json_object_set_new(run, "tokens_multiplier", json_real(s->rt_tokens_multiplier));
        json_object_set_new(run, "concurrency_multiplier",
                            json_real(s->rt_concurrency_multiplier));
        json_object_set_new(run, "log", json_string(s->rt_log));
    }
    return json_pack("{s:o s:o s:o s:o s:o}", "per_token_bytes", u64(s->per_token_bytes),
                     "fixed_bytes_per_sequence", u64(s->fixed_bytes_per_seq), "held_tokens",
                     u64(s->held_tokens), "theory", theory, "runtime", run);
}

static json_t *recompute_obj(const kvp_tech_recompute *r)
{
    json_t *o = json_pack("{s:o s:o s:o s:o s:f s:o s:o}", "requests", u64(r->requests),
                          "prompt_tokens", u64(r->prompt_tokens), "computed_without_reuse",
                          u64(r->computed_without), "computed_with_reuse",
                          u64(r->computed_with), "shared_fraction", r->shared_fraction,
                          "block_size", u64(r->block_size), "unbounded_pool_blocks",
                          u64(r->unbounded_blocks));
    json_object_set_new(o, "pool", r->pool_computed
        ? json_pack("{s:o s:o s:o s:o}", "blocks", u64(r->pool_blocks), "tokens",
                    u64(r->pool_blocks * r->block_size), "hit_tokens", u64(r->hit_tokens),
                    "evictions", u64(r->evictions))
        : json_null());
    json_object_set_new(o, "cliff", r->cliff_found
        ? json_pack("{s:o s:o s:f s:f s:o}", "from_blocks", u64(r->cliff_from_blocks),
                    "to_blocks", u64(r->cliff_to_blocks), "from_hit_rate",
                    r->cliff_from_hit_rate, "to_hit_rate", r->cliff_to_hit_rate,
                    "half_rise_blocks", u64(r->cliff_half_blocks))
        : json_null());
    return o;
}

/* The recompute row in seconds: a model, in its own unit, or null with why. */
static void seconds_obj(json_t *row, const kvp_tech_recompute *r)
{
    if (!r->timed) {
        json_object_set_new(row, "seconds", json_null());
        json_object_set_new(row, "seconds_reason", json_string(r->time_reason));
        return;
    }
    json_object_set_new(row, "seconds", json_pack(
        "{s:f s:f s:f s:f s:f s:s s:s s:o s:o s:s s:s}", "wall_on", r->wall_on, "wall_off",
        r->wall_off, "ttft_mean_on", r->ttft_mean_on, "ttft_mean_off", r->ttft_mean_off,
        "speedup", r->speedup, "gpu", r->time_gpu, "engine", r->time_engine, "pool_blocks",
        u64(r->pool_blocks), "rejected", u64(r->time_rejected), "label",
        kvp_tech_label_name(KVP_LABEL_MODEL), "model",
        "vLLM v1's scheduler (as kvplan sim --concurrent) with prefix caching on and off, "
        "each step priced by the step-time roofline (FLOPs and bytes against the GPU's "
        "datasheet rates, calibrated efficiencies and overheads): a model, not a "
        "measurement; treat times as +-20% and the ratio as firmer"));
}

static json_t *read_obj(const kvp_tech_read *r)
{
    json_t *o = json_pack("{s:o s:o s:o s:o}", "context", u64(r->context), "dense_bytes",
                          u64(r->dense_bytes), "sparse_bytes", u64(r->sparse_bytes),
                          "storage_added_bytes", u64(r->storage_added_bytes));
    if (r->page)
        json_object_update_new(o, json_pack("{s:i s:i s:i}", "page", (int)r->page, "budget",
                                            (int)r->budget, "dense_layers",
                                            (int)r->dense_layers));
    return o;
}

static json_t *place_obj(const kvp_tech_row *row)
{
    const kvp_tech_place *p = &row->u.place;
    if (!strcmp(row->id, "offload")) {
        return json_pack("{s:o s:o s:o s:o s:o s:o s:{s:f s:f s:f s:f}}", "host_bytes",
                         u64(p->host_bytes), "tokens", u64(p->host_tokens_theory),
                         "tokens_in_blocks", u64(p->host_tokens_blocks), "tokens_in_256_chunks",
                         u64(p->host_tokens_chunks), "reload_tokens", u64(p->reload_tokens),
                         "reload_bytes", u64(p->reload_bytes), "reload_seconds",
                         "pcie_gen4_sustained", p->reload_s[0], "pcie_gen5_sustained",
                         p->reload_s[1], "pcie_gen4_theoretical", p->reload_s[2],
                         "pcie_gen5_theoretical", p->reload_s[3]);
    }
    if (p->n_sizes) {
        json_t *a = json_array();
        for (uint32_t i = 0; i < p->n_sizes; i++)
            json_array_append_new(a, json_pack("{s:i s:o s:o s:f}", "block_size",
                                               (int)p->sizes[i].block_size, "blocks",
                                               u64(p->sizes[i].blocks), "tokens",
                                               u64(p->sizes[i].tokens), "concurrency",
                                               p->sizes[i].concurrency));
        return json_pack("{s:o s:o}", "max_model_len", u64(p->max_model_len), "block_sizes", a);
    }
    return json_pack("{s:o s:o s:i s:o s:{s:o s:o s:f} s:{s:o s:o} s:{s:o s:o s:f}}",
                     "mean_tokens", u64(p->mean_tokens), "max_model_len", u64(p->max_model_len),
                     "block_size", (int)p->block_size, "pool_blocks", u64(p->pool_blocks),
                     "contiguous", "requests_fit", u64(p->fit_contiguous),
                     "waste_bytes_per_request", u64(p->waste_contiguous), "waste_fraction",
                     p->waste_contiguous_fraction, "power_of_two", "requests_fit",
                     u64(p->fit_pow2), "waste_bytes_per_request", u64(p->waste_pow2), "paged",
                     "requests_fit", u64(p->fit_paged), "waste_bytes_per_request",
                     u64(p->waste_paged), "waste_fraction", p->waste_paged_fraction);
}

static json_t *row_obj(kvp_runtime rt, const kvp_tech_row *row)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(row->id));
    json_object_set_new(o, "kind", json_string(kvp_tech_kind_name(row->kind)));
    json_object_set_new(o, "variant", json_string(row->variant));
    json_object_set_new(o, "changes", json_string(row->changes));
    json_object_set_new(o, "unit", json_string(row->unit));
    json_object_set_new(o, "computed", json_boolean(row->computed));
    json_object_set_new(o, "already_used", json_boolean(row->already_used));
    if (!row->computed) {
        json_object_set_new(o, "reason", json_string(row->reason));
        return o;
    }
    json_object_set_new(o, "label", json_string(kvp_tech_label_name(row->label)));
    json_object_set_new(o, "value", u64(row->value));
    json_object_set_new(o, "baseline", u64(row->baseline));
    json_object_set_new(o, "multiplier", row->multiplier > 0 ? json_real(row->multiplier)
                                                             : json_null());
    json_object_set_new(o, "assumptions", json_string(row->assumptions));
    json_t *fig = row->kind == KVP_TECH_STORE       ? store_obj(rt, &row->u.store)
                  : row->kind == KVP_TECH_RECOMPUTE ? recompute_obj(&row->u.recompute)
                  : row->kind == KVP_TECH_READ      ? read_obj(&row->u.read)
                                                    : place_obj(row);
    json_object_set_new(o, kvp_tech_kind_name(row->kind), fig);
    if (row->kind == KVP_TECH_RECOMPUTE)
        seconds_obj(o, &row->u.recompute);
    return o;
}

static json_t *apply_obj(const kvp_tech_result *r)
{
    if (!r->has_combined)
        return json_null();
    json_t *items = json_array();
    for (size_t i = 0; i < r->n_applied; i++)
        json_array_append_new(items, row_obj(r->runtime, &r->applied[i]));
    json_t *o = json_pack("{s:o s:o s:f s:s}", "items", items, "combined",
                          row_obj(r->runtime, &r->combined), "product_of_theory_multipliers",
                          r->product_theory, "note", r->combined_note);
    json_object_set_new(o, "product_of_runtime_token_multipliers",
                        r->product_rt_tokens > 0 ? json_real(r->product_rt_tokens)
                                                 : json_null());
    return o;
}

char *kvp_techniques_json(const kvp_model *m, const kvp_tech_result *r)
{
    json_t *rows = json_array();
    for (size_t i = 0; i < r->n_rows; i++)
        json_array_append_new(rows, row_obj(r->runtime, &r->rows[i]));
    json_t *setting = json_pack("{s:o s:i s:o s:s s:b s:s s:s}", "context", u64(r->context),
                                "sequences", (int)r->seqs, "memory_bytes", u64(r->memory),
                                "memory_source", r->memory_source, "memory_is_estimate",
                                r->memory_is_estimate, "type_k", kvp_dtype_name(r->type_k),
                                "type_v", kvp_dtype_name(r->type_v));
    if (r->runtime_version)
        json_object_set_new(setting, "runtime_version", json_string(r->runtime_version));
    if (r->gpu)
        json_object_set_new(setting, "gpu", json_string(r->gpu));
    if (r->kv_cache_dtype)
        json_object_set_new(setting, "kv_cache_dtype", json_string(r->kv_cache_dtype));
    json_t *doc = json_pack("{s:i s:s s:o s:s s:o s:o s:s s:o s:o}", "schema",
                            KVPLAN_JSON_SCHEMA, "command", "techniques", "model",
                            kvp_json_model(m), "runtime", kvp_runtime_name(r->runtime), "setting",
                            setting, "baseline", store_obj(r->runtime, &r->base), "workload",
                            r->workload, "rows", rows, "apply", apply_obj(r));
    char *s = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    return s;
}
