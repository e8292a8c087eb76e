/* sim_report.c - what `kvplan sim` prints for the one-at-a-time replay: the
 * workload (its working set and, where it has conversations, how much each
 * request re-sends), then each capacity's hit rate for prefix reuse and,
 * asked for, the any-position what-if; a sweep names its cliff.  Text and
 * JSON carry the same figures. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *pct(double x, char *buf, size_t n)
{
    snprintf(buf, n, "%.1f%%", 100 * x);
    return buf;
}

/* the workload, before any pool */
static void print_workload(const sim_job *j)
{
    const kvp_workload_stats *s = &j->st;
    char a[32], b[32], c[32], d[32];
    printf("\nworkload                %15s requests", fmt_int(s->requests, a, sizeof a));
    if (s->conversations)
        printf(" in %s conversations", fmt_int(s->conversations, a, sizeof a));
    if (s->span_seconds > 0)
        printf(" over %s s", fmt_int((uint64_t)(s->span_seconds + 0.5), a, sizeof a));
    printf(" (%s)\n", j->w.format);
    printf("working set             %15s blocks = %s tokens", fmt_int(s->working_blocks, a,
           sizeof a), fmt_int(s->working_tokens, b, sizeof b));
    if (j->block_bytes)
        printf(" = %.2f GiB of %s's KV", (double)s->working_blocks * (double)j->block_bytes /
                                            (1024.0 * 1024 * 1024), j->model);
    printf(": what a cache that never evicts ends up holding (such a pool: %s blocks, "
           "--unbounded)\n", fmt_int(s->unbounded_blocks, c, sizeof c));
    if (j->any)
        printf("any-position set        %15s blocks = %s tokens in distinct chunks\n",
               fmt_int(s->chunk_blocks, a, sizeof a), fmt_int(s->chunk_tokens, b, sizeof b));
    if (s->pairs)
        printf("consecutive requests    %15s with one before in their conversation: %s of a "
               "prompt is the previous request's (mean; median %s, by tokens %s)\n",
               fmt_int(s->pairs, a, sizeof a), pct(s->consecutive_mean, b, sizeof b),
               pct(s->consecutive_median, c, sizeof c), pct(s->consecutive_weighted, d, sizeof d));
}

static void print_result(const kvp_sim_result *r, const char *label)
{
    char a[32];
    if (label)
        printf("\n%s:\n", label);
    printf("hit tokens              %15s   hit rate %.4f%s\n", fmt_int(r->hit_tokens, a, sizeof a),
           r->hit_rate, label ? "" : " (vLLM's: hits / prompt tokens)");
    printf("prefill tokens computed %15s\n", fmt_int(r->computed_tokens, a, sizeof a));
    printf("prefill tokens saved    %15s\n", fmt_int(r->hit_tokens, a, sizeof a));
    printf("evictions               %15s\n", fmt_int(r->evictions, a, sizeof a));
    printf("peak blocks in use      %15s\n", fmt_int(r->peak_blocks, a, sizeof a));
    printf("oversized requests      %15s%s\n", fmt_int(r->oversized, a, sizeof a),
           r->oversized ? "   (larger than the pool: counted as misses)" : "");
}

#define ANY_LABEL "any position (a what-if, CacheBlend-style: chunks reused wherever they " \
                  "occur; no runtime here does this)"

void sim_print_one(const sim_job *j)
{
    const kvp_sim_result *r = j->r;
    char a[32], b[32], c[32];
    printf("sim %s · block %u · %s blocks (%s usable, %s tokens)%s\n\n", j->w.name, j->bs,
           fmt_int(r->num_blocks, a, sizeof a), fmt_int(r->usable_blocks, b, sizeof b),
           fmt_int(r->usable_blocks * j->bs, c, sizeof c), j->caching ? "" : " · prefix caching off");
    printf("requests                %15s\n", fmt_int(r->requests, a, sizeof a));
    printf("prompt tokens           %15s\n", fmt_int(r->prompt_tokens, a, sizeof a));
    print_result(r, NULL);
    if (j->any)
        print_result(j->any, ANY_LABEL);
    print_workload(j);
}

static void print_cliff(const kvp_sim_result *r, size_t n, const char *what)
{
    char a[32], b[32];
    size_t k = kvp_sim_cliff(r, n);
    if (k)
        printf("cliff%s: the hit rate rises most between %s and %s blocks (%.4f -> %.4f)\n", what,
               fmt_int(r[k - 1].num_blocks, a, sizeof a), fmt_int(r[k].num_blocks, b, sizeof b),
               r[k - 1].hit_rate, r[k].hit_rate);
    else
        printf("cliff%s: none (the hit rate does not rise over this range)\n", what);
}

void sim_print_sweep(const sim_job *j)
{
    const kvp_sim_result *r = j->r;
    char a[32], b[32], c[32], d[32];
    printf("sim %s · block %u · hit rate vs capacity\n\n", j->w.name, j->bs);
    printf("%14s %16s %9s %16s %14s %9s%s\n", "blocks", "tokens", "hit rate", "hit tokens",
           "evictions", "oversized", j->any ? "  any pos." : "");
    for (size_t i = 0; i < j->n; i++) {
        printf("%14s %16s %9.4f %16s %14s %9llu", fmt_int(r[i].num_blocks, a, sizeof a),
               fmt_int(r[i].num_blocks * j->bs, b, sizeof b), r[i].hit_rate,
               fmt_int(r[i].hit_tokens, c, sizeof c), fmt_int(r[i].evictions, d, sizeof d),
               (unsigned long long)r[i].oversized);
        if (j->any)
            printf("  %9.4f", j->any[i].hit_rate);
        printf("\n");
    }
    printf("\n");
    print_cliff(r, j->n, "");
    if (j->any)
        print_cliff(j->any, j->n, " (any position)");
    print_workload(j);
}

/* ---- JSON ---- */

static json_t *result_json(const kvp_sim_result *r, uint32_t bs)
{
    return json_pack("{sI sI sI sI sI sI sf sI sI sI sI sI}",
                     "capacity_blocks", (json_int_t)r->num_blocks,
                     "usable_blocks", (json_int_t)r->usable_blocks,
                     "capacity_tokens", (json_int_t)(r->num_blocks * bs),
                     "requests", (json_int_t)r->requests,
                     "prompt_tokens", (json_int_t)r->prompt_tokens,
                     "hit_tokens", (json_int_t)r->hit_tokens,
                     "hit_rate", r->hit_rate,
                     "prefill_tokens_computed", (json_int_t)r->computed_tokens,
                     "prefill_tokens_saved", (json_int_t)r->hit_tokens,
                     "evictions", (json_int_t)r->evictions,
                     "peak_blocks", (json_int_t)r->peak_blocks,
                     "oversized_requests", (json_int_t)r->oversized);
}

static json_t *stats_json(const sim_job *j)
{
    const kvp_workload_stats *s = &j->st;
    json_t *o = json_pack("{sI sI sI sI sf sI sI sI sI sI sI sI}",
                          "requests", (json_int_t)s->requests,
                          "conversations", (json_int_t)s->conversations,
                          "prompt_tokens", (json_int_t)s->prompt_tokens,
                          "output_tokens", (json_int_t)s->output_tokens,
                          "span_seconds", s->span_seconds,
                          "working_set_blocks", (json_int_t)s->working_blocks,
                          "working_set_tokens", (json_int_t)s->working_tokens,
                          "max_request_blocks", (json_int_t)s->max_request_blocks,
                          "unbounded_blocks", (json_int_t)s->unbounded_blocks,
                          "chunk_tokens", (json_int_t)s->chunk_tokens,
                          "chunk_blocks", (json_int_t)s->chunk_blocks,
                          "unbounded_chunk_blocks", (json_int_t)s->unbounded_chunk_blocks);
    json_object_set_new(o, "working_set_bytes", j->block_bytes
                        ? json_integer((json_int_t)(s->working_blocks * j->block_bytes))
                        : json_null());
    json_object_set_new(o, "consecutive", s->pairs ? json_pack("{sI sf sf sf}",
                        "requests", (json_int_t)s->pairs, "mean", s->consecutive_mean,
                        "median", s->consecutive_median, "by_tokens", s->consecutive_weighted)
                        : json_null());
    return o;
}

static json_t *cliff_json(const kvp_sim_result *r, size_t n)
{
    size_t c = kvp_sim_cliff(r, n);
    return c ? json_pack("{sI sI sf sf}", "from_blocks", (json_int_t)r[c - 1].num_blocks,
                         "to_blocks", (json_int_t)r[c].num_blocks, "from_hit_rate",
                         r[c - 1].hit_rate, "to_hit_rate", r[c].hit_rate) : json_null();
}

void sim_print_json(const sim_job *j)
{
    json_t *doc = json_pack("{si ss ss ss si sb}", "schema", KVPLAN_JSON_SCHEMA, "command", "sim",
                            "workload", j->w.name, "format", j->w.format, "block_size",
                            (int)j->bs, "prefix_caching", j->caching);
    json_object_set_new(doc, "note", j->w.note[0] ? json_string(j->w.note) : json_null());
    if (!j->sweep) {
        json_t *one = result_json(j->r, j->bs);
        json_object_update(doc, one);
        json_decref(one);
        if (j->any)
            json_object_set_new(doc, "any_position", result_json(j->any, j->bs));
    } else {
        json_t *pts = json_array();
        for (size_t i = 0; i < j->n; i++) {
            json_t *p = result_json(&j->r[i], j->bs);
            if (j->any)
                json_object_set_new(p, "any_position", result_json(&j->any[i], j->bs));
            json_array_append_new(pts, p);
        }
        json_object_set_new(doc, "points", pts);
        json_object_set_new(doc, "cliff", cliff_json(j->r, j->n));
        if (j->any)
            json_object_set_new(doc, "cliff_any_position", cliff_json(j->any, j->n));
    }
    json_object_set_new(doc, "workload_stats", stats_json(j));
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s)
        puts(s);
    free(s);
    json_decref(doc);
}
