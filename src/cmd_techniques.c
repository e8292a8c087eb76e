/* cmd_techniques.c - `kvplan techniques MODEL`: the twelve KV-cache techniques
 * for one model, runtime and workload, in four sections (store fewer bytes,
 * recompute less, read less, place differently), each in its own unit and
 * never ranked against the others.  A thin layer over kvp_techniques. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char help[] =
    "usage: kvplan techniques MODEL [--runtime theory|llama.cpp|vllm] [runtime flags]\n"
    "                         [--memory SIZE] [--workload SPEC | --trace FILE]\n"
    "                         [--apply LIST] [--host-memory SIZE] [--explain] [--json]\n"
    "\n"
    "The twelve KV-cache techniques for MODEL, each in its own unit, in four sections\n"
    "that are not ranked against each other:\n"
    "  A. store fewer bytes   gqa cross-layer mla sliding-window hybrid kv-quant\n"
    "                         token-eviction compressed: bytes per token, fixed bytes per\n"
    "                         sequence, and the capacity of the same memory in tokens and\n"
    "                         sequences, in the runtime's own arithmetic\n"
    "  B. recompute less      prefix-reuse: prefill tokens with and without a prefix cache\n"
    "                         on the workload (kvplan sim on the model's pool), the cliff\n"
    "  C. read less           sparse-read: KV bytes one decode step reads (Quest, NSA)\n"
    "  D. place differently   paged: what reserving max_model_len wastes, block sizes 8-64;\n"
    "                         offload: tokens a host tier holds, reload time over PCIe\n"
    "Each technique is applied as a change to the per-layer model (or the cache type) and\n"
    "priced by the runtime; one the model already uses is shown by taking it away.\n"
    "Labels: exact (a runtime's rule), theory (config arithmetic for a scheme no runtime\n"
    "here ships), model (an assumption about time or behaviour).\n"
    "\n"
    "  --runtime R           theory (default), llama.cpp or vllm\n"
    "  -c N, -np S           the setting: tokens in total and sequences (default: the\n"
    "                        model's context capped at 32K, 1 sequence); with vllm,\n"
    "                        --max-model-len (or -c) as kvplan mem --runtime vllm\n"
    "  --memory SIZE         theory, llama.cpp: the memory capacities are counted on\n"
    "                        (default: what the model needs at the setting); vLLM uses\n"
    "                        its KV cache memory (--kv-cache-memory, else its estimate)\n"
    "  --workload SPEC       prefix-reuse and the paged length mix: shared-prefix:N,P,U[,O],\n"
    "                        cyclic:D,T,R[,S[,O]], grouped:G,K,P,U[,O] (as kvplan sim);\n"
    "                        default shared-prefix:32,16384,256,64 (DESIGN section 4)\n"
    "  --trace FILE          a trace instead: Mooncake, kv-cache-tester (a file or a\n"
    "                        folder), RAGPulse, Azure or kvplan's JSONL, hashed at the\n"
    "                        pool's block size (see kvplan sim --help)\n"
    "  --format NAME         the trace's format, when detection should not choose\n"
    "  --apply LIST          compose store-fewer-bytes techniques, e.g.\n"
    "                        kv-quant=fp8,sliding-window=4096: each alone, together, and the\n"
    "                        product of the single multipliers. Parameters:\n"
    "                          gqa=mha|mqa|HEADS   cross-layer=F|off   mla=RANK+ROPE|off\n"
    "                          sliding-window=W[:K]|off (every K-th layer full, default 6)\n"
    "                          hybrid=K|off (every K-th attention layer stays)\n"
    "                          kv-quant=fp8|q8_0|q4_0|nvfp4|kivi2|turboquant_k8v4|\n"
    "                                   turboquant_4bit_nc|turboquant_k3v4_nc|turboquant_3bit_nc\n"
    "                          token-eviction=B|S+R|P%|streamingllm|snapkv|h2o\n"
    "                          compressed=R[:W]|nsa\n"
    "  --host-memory SIZE    the offload row's host tier (default 128GiB)\n"
    "  --gpu NAME            with --runtime vllm, the card vLLM runs on; it also gives\n"
    "                        prefix-reuse in seconds: the workload through vLLM's\n"
    "                        scheduler with caching on and off, priced by the step-time\n"
    "                        model (as kvplan sim --concurrent; a model, not a measurement;\n"
    "                        default A100-80GB, the card the vLLM rows assume)\n"
    "  --explain             what each row changes and assumes, and its source\n"
    "  --revision REV        a Hub branch, tag or commit of an ORG/NAME model (default main)\n"
    "  --offline             never use the network: local files, caches and the catalog only\n"
    "  --family NAME         read MODEL's config.json by kvplan's rule set NAME (llama,\n"
    "                        gemma3, ...), for an architecture kvplan cannot name; the\n"
    "                        output says so\n"
    "  --json                JSON schema 1: one object per row (id, kind, unit, baseline,\n"
    "                        value, multiplier, label, already_used, assumptions)\n"
    "The flags of kvplan mem for each runtime apply (-ctk/-ctv, -fa, -ub, --gpu,\n"
    "--kv-cache-memory, --max-num-batched-tokens, --kv-cache-dtype, ...).\n"
    "Sizes are binary: MiB = 2^20 bytes, GiB = 2^30 bytes.\n"
    "\n"
    "examples:\n"
    "  kvplan techniques qwen3-8b\n"
    "  kvplan techniques qwen3-8b --runtime vllm --max-model-len 40960 "
    "--kv-cache-memory 58987118592\n"
    "  kvplan techniques gemma-3-4b-it --runtime llama.cpp -c 32k -fa on --memory 8GiB\n"
    "  kvplan techniques qwen3-8b --workload shared-prefix:32,0,256,64\n"
    "  kvplan techniques qwen3.5-9b --runtime vllm --apply kv-quant=fp8,sliding-window=4096\n";

static const char *rt_name(kvp_runtime r)
{
    return r == KVP_RT_LLAMA ? "llama.cpp" : r == KVP_RT_VLLM ? "vLLM" : "theory";
}

static const char *xmul(double x, char *buf, size_t n)
{
    if (x <= 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*fx", x >= 100 ? 1 : 2, x);
    return buf;
}

/* ---- the header: the setting and the model as it is ------------------------------------ */

static void print_header(const kvp_model *m, const kvp_tech_result *r, const cli_opts *o)
{
    char a[32], b[32], c[32];
    const kvp_tech_store *s = &r->base;
    printf("%s · techniques · %s", m->name, rt_name(r->runtime));
    if (r->runtime_version)
        printf(" %s rules", r->runtime_version);
    if (r->runtime == KVP_RT_VLLM)
        printf(" · %s · max_model_len %s", r->gpu, fmt_int(r->context, a, sizeof a));
    else
        printf(" · %s tokens, %u sequence%s · K %s, V %s", fmt_int(r->context, a, sizeof a),
               r->seqs, r->seqs == 1 ? "" : "s", kvp_dtype_name(o->type_k),
               kvp_dtype_name(o->type_v));
    printf("\nmemory for the capacity figures: %s MiB = %.2f GiB (%s bytes; %s)\n",
           fmt_mib(r->memory, a, sizeof a), r->memory / (1024.0 * 1024.0 * 1024.0),
           fmt_int(r->memory, b, sizeof b), r->memory_source);
    printf("the model as it is: %s B/token", fmt_int(s->per_token_bytes, a, sizeof a));
    if (s->fixed_bytes_per_seq)
        printf(" + %s B/sequence of state", fmt_int(s->fixed_bytes_per_seq, b, sizeof b));
    printf(", %s MiB at this setting (theory)", fmt_mib(s->theory_bytes, a, sizeof a));
    if (r->runtime == KVP_RT_VLLM)
        printf("; %s blocks of %u tokens, %s tokens, %.2fx", fmt_int(s->rt_blocks, a, sizeof a),
               s->rt_block_size, fmt_int(s->rt_tokens, b, sizeof b), s->rt_concurrency);
    else if (r->runtime == KVP_RT_LLAMA)
        printf("; llama.cpp %s MiB", fmt_mib(s->rt_bytes, c, sizeof c));
    putchar('\n');
    if (r->runtime != KVP_RT_THEORY && s->rt_log[0]) {
        printf("%s prints:\n", rt_name(r->runtime));
        for (const char *p = s->rt_log; *p;) {
            const char *e = strchr(p, '\n');
            int len = e ? (int)(e - p) : (int)strlen(p);
            printf("  %.*s\n", len, p);
            p += len + (e != NULL);
        }
    }
    printf("\nFour kinds of effect, each in its own unit: the sections are not ranked against "
           "each other.\n");
}

/* ---- A: store fewer bytes --------------------------------------------------------------- */

static void store_head(kvp_runtime rt)
{
    printf("%-14s %-42s %-4s %9s %12s %11s %7s %13s", "id", "variant", "used", "B/token",
           "state B/seq", "theory MiB", "x", "tokens");
    if (rt == KVP_RT_THEORY)
        printf(" %6s", "seqs");
    else if (rt == KVP_RT_LLAMA)
        printf(" | %11s %7s %11s %7s", "llama MiB", "x", "max -c", "max -np");
    else
        printf(" | %8s %12s %8s %7s", "blocks", "tokens", "concurr.", "x");
    printf("  %s\n", "label");
}

/* Rows the chosen runtime cannot price, grouped by why. */
typedef struct store_notes {
    size_t n;
    struct { char why[1024], rows[400]; } note[12];
} store_notes;

static void note_row(store_notes *sn, const kvp_tech_row *row)
{
    size_t i = 0;
    while (i < sn->n && strcmp(sn->note[i].why, row->u.store.rt_reason))
        i++;
    if (i == sn->n) {
        if (sn->n == sizeof sn->note / sizeof sn->note[0])
            return;
        snprintf(sn->note[sn->n].why, sizeof sn->note[0].why, "%s", row->u.store.rt_reason);
        sn->note[sn->n++].rows[0] = 0;
    }
    /* "kv-quant fp8, nvfp4, KIVI-2": the id once, each variant by its first words */
    char *rows = sn->note[i].rows, *last = strrchr(rows, ';');
    size_t len = strlen(rows), id = strlen(row->id);
    const char *from = last ? last + 2 : rows;
    int same_id = len && !strncmp(from, row->id, id) && from[id] == ' ';
    size_t short_len = strcspn(row->variant, ":(");
    while (short_len && row->variant[short_len - 1] == ' ')
        short_len--;
    snprintf(rows + len, sizeof sn->note[0].rows - len, "%s%s%s%.*s",
             same_id ? ", " : len ? "; " : "", same_id ? "" : row->id, same_id ? "" : " ",
             (int)short_len, row->variant);
}

static void store_line(kvp_runtime rt, const kvp_tech_row *row, store_notes *sn)
{
    char a[32], b[32], c[32], d[32], e[32];
    const kvp_tech_store *s = &row->u.store;
    printf("%-14s %-42.42s %-4s ", row->id, row->variant, row->already_used ? "yes" : "");
    if (!row->computed) {
        printf("not computed: %s\n", row->reason);
        return;
    }
    printf("%9s %12s %11s %7s %13s", fmt_int(s->per_token_bytes, a, sizeof a),
           fmt_int(s->fixed_bytes_per_seq, b, sizeof b), fmt_mib(s->theory_bytes, c, sizeof c),
           xmul(s->theory_multiplier, d, sizeof d),
           s->theory_tokens_unbounded ? "unbounded" : fmt_int(s->theory_tokens, e, sizeof e));
    if (rt == KVP_RT_THEORY) {
        printf(" %6s", fmt_int(s->theory_seqs, b, sizeof b));
    } else if (!s->rt_computed) {
        printf(rt == KVP_RT_LLAMA ? " | %11s %7s %11s %7s" : " | %8s %12s %8s %7s", "-", "-",
               "-", "-");
        if (sn)
            note_row(sn, row);
    } else if (rt == KVP_RT_LLAMA) {
        printf(" | %11s %7s %11s %7.0f", fmt_mib(s->rt_bytes, a, sizeof a),
               xmul(row->multiplier, b, sizeof b), fmt_int(s->rt_tokens, c, sizeof c),
               s->rt_concurrency);
    } else {
        snprintf(e, sizeof e, "%.2fx", s->rt_concurrency);
        printf(" | %8s %12s %8s %7s", fmt_int(s->rt_blocks, a, sizeof a),
               fmt_int(s->rt_tokens, b, sizeof b), e, xmul(s->rt_tokens_multiplier, d, sizeof d));
    }
    printf("  %s\n", kvp_tech_label_name(row->label));
}

/* What each technique changes, once per id and change, wrapped. */
static void print_changes(const kvp_tech_result *r)
{
    const char *seen[16][2];
    size_t n = 0, col = 0;
    for (size_t i = 0; i < r->n_rows; i++) {
        const kvp_tech_row *row = &r->rows[i];
        size_t k = 0;
        if (row->kind != KVP_TECH_STORE || !row->changes[0])
            continue;
        while (k < n && (strcmp(seen[k][0], row->id) || strcmp(seen[k][1], row->changes)))
            k++;
        if (k < n || n == 16)
            continue;
        seen[n][0] = row->id, seen[n++][1] = row->changes;
        size_t w = strlen(row->id) + strlen(row->changes) + 4;
        if (!col || col + w > 100) {
            printf("%s%s", col ? "\n" : "what each changes: ", col ? "  " : "");
            col = col ? 2 : 19;
        } else {
            printf(" · ");
        }
        printf("%s: %s", row->id, row->changes);
        col += w;
    }
    if (col)
        putchar('\n');
}

static void print_store(const kvp_tech_result *r)
{
    static store_notes sn;
    char a[32], b[32];
    sn.n = 0;
    printf("\nA. store fewer bytes: bytes per token, and the capacity of %s MiB (theory MiB at "
           "%s tokens; x against the model)\n", fmt_mib(r->memory, b, sizeof b),
           fmt_int(r->context, a, sizeof a));
    store_head(r->runtime);
    for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].kind == KVP_TECH_STORE)
            store_line(r->runtime, &r->rows[i], &sn);
    for (size_t i = 0; i < sn.n; i++)
        printf("%s%s: %s: theory figures only\n", i ? "  " : "not priced by the runtime:\n  ",
               sn.note[i].rows, sn.note[i].why);
    print_changes(r);
}

/* ---- B: recompute less -------------------------------------------------------------------- */

/* The same workload in seconds, where the step-time model applies: its own
 * unit, a model, and never ranked against the capacity rows. */
static void print_seconds(const kvp_tech_recompute *rc)
{
    char a[32];
    if (!rc->timed) {
        printf("  in seconds: not modelled: %s\n", rc->time_reason);
        return;
    }
    printf("  in seconds, a model: vLLM v1's scheduler, each step priced by a roofline for %s "
           "(engine %s)\n", rc->time_gpu, rc->time_engine);
    printf("    wall time %.4f s with reuse, %.4f s without: %.2fx as fast; mean TTFT %.4f s "
           "with, %.4f s without\n", rc->wall_on, rc->wall_off, rc->speedup, rc->ttft_mean_on,
           rc->ttft_mean_off);
    if (rc->time_rejected)
        printf("    %s request(s) never schedulable on this pool are in neither time\n",
               fmt_int(rc->time_rejected, a, sizeof a));
    printf("    not a measurement: treat times as ±20%% and the ratio as firmer (kvplan sim "
           "--concurrent)\n");
}

static void print_recompute(const kvp_tech_row *row)
{
    char a[32], b[32], c[32], d[32];
    const kvp_tech_recompute *rc = &row->u.recompute;
    printf("\nB. recompute less: prefill tokens computed on %s\n", row->variant);
    printf("%-14s %14s %14s %8s %8s  %-34s %s\n", "id", "without reuse", "with reuse", "x",
           "shared", "pool", "label");
    char pool[64] = "unbounded (see below)";
    if (rc->pool_computed)
        snprintf(pool, sizeof pool, "%s blocks of %u (%s tokens)",
                 fmt_int(rc->pool_blocks, a, sizeof a), rc->block_size,
                 fmt_int(rc->pool_blocks * rc->block_size, b, sizeof b));
    printf("%-14s %14s %14s %8s %7.1f%%  %-34s %s\n", row->id,
           fmt_int(rc->computed_without, c, sizeof c), fmt_int(rc->computed_with, d, sizeof d),
           xmul(row->multiplier, a, sizeof a), 100.0 * rc->shared_fraction, pool,
           kvp_tech_label_name(row->label));
    if (!rc->pool_computed)
        printf("  %s\n", row->assumptions);
    if (rc->cliff_found) {
        printf("  cliff: the hit rate rises most between %s and %s blocks (%.3f -> %.3f); half "
               "of that rise at %s blocks (%s tokens)",
               fmt_int(rc->cliff_from_blocks, a, sizeof a),
               fmt_int(rc->cliff_to_blocks, b, sizeof b), rc->cliff_from_hit_rate,
               rc->cliff_to_hit_rate, fmt_int(rc->cliff_half_blocks, c, sizeof c),
               fmt_int(rc->cliff_half_blocks * rc->block_size, d, sizeof d));
        if (rc->pool_computed)
            printf("; the pool is %s it", rc->pool_blocks >= rc->cliff_half_blocks ? "above"
                                                                                    : "below");
        putchar('\n');
    } else {
        printf("  no cliff: %s\n", rc->shared_fraction > 0 ? "reuse holds at every capacity"
                                                            : "nothing is shared");
    }
    print_seconds(rc);
}

/* ---- C: read less -------------------------------------------------------------------------- */

static void print_read(const kvp_tech_result *r)
{
    char a[32], b[32];
    int first = 1;
    for (size_t i = 0; i < r->n_rows; i++) {
        const kvp_tech_row *row = &r->rows[i];
        if (row->kind != KVP_TECH_READ)
            continue;
        const kvp_tech_read *rd = &row->u.read;
        if (first) {
            printf("\nC. read less: KV bytes read per decode step, one sequence of %s tokens "
                   "(dense: %s MiB)\n", fmt_int(rd->context, a, sizeof a),
                   fmt_mib(rd->dense_bytes, b, sizeof b));
            printf("%-14s %-60s %12s %8s %15s  %s\n", "id", "variant", "read MiB", "x",
                   "storage added", "label");
            first = 0;
        }
        if (!row->computed) {
            printf("%-14s %-60s not computed: %s\n", row->id, row->variant, row->reason);
            continue;
        }
        printf("%-14s %-60.60s %12s %8s %14.1f%%  %s\n", row->id, row->variant,
               fmt_mib(rd->sparse_bytes, a, sizeof a), xmul(row->multiplier, b, sizeof b),
               rd->dense_bytes ? 100.0 * rd->storage_added_bytes / rd->dense_bytes : 0,
               kvp_tech_label_name(row->label));
    }
}

/* ---- D: place differently ------------------------------------------------------------------ */

static void print_paged(const kvp_tech_row *row)
{
    char a[32], b[32], c[32], d[32];
    const kvp_tech_place *p = &row->u.place;
    if (p->n_sizes) {
        printf("%-10s block size 8 / 16 / 32 / 64 on the same memory (max_model_len %s)  [%s]\n%10s",
               row->id, fmt_int(p->max_model_len, a, sizeof a), kvp_tech_label_name(row->label),
               "");
        for (uint32_t i = 0; i < p->n_sizes; i++)
            printf("%s %u: %s tokens, %.2fx", i ? ";" : "", p->sizes[i].block_size,
                   fmt_int(p->sizes[i].tokens, b, sizeof b), p->sizes[i].concurrency);
        printf("\n%10s the smallest is %.3f%% below the largest\n", "",
               100.0 * (1.0 - row->multiplier));
        return;
    }
    printf("%-10s %s, on %s blocks  [%s]\n", row->id, row->variant,
           fmt_int(p->pool_blocks, a, sizeof a), kvp_tech_label_name(row->label));
    printf("%10s reserve max_model_len (%s): %s request(s) fit, %s B wasted each (%.1f%%)\n", "",
           fmt_int(p->max_model_len, a, sizeof a), fmt_int(p->fit_contiguous, b, sizeof b),
           fmt_int(p->waste_contiguous, c, sizeof c), 100.0 * p->waste_contiguous_fraction);
    printf("%10s reserve the next power of two: %s request(s) fit, %s B wasted each\n", "",
           fmt_int(p->fit_pow2, b, sizeof b), fmt_int(p->waste_pow2, c, sizeof c));
    printf("%10s paged (%u-token blocks): %s request(s) fit (%s), %s B wasted each (%.1f%%)\n",
           "", p->block_size, fmt_int(p->fit_paged, b, sizeof b),
           xmul(row->multiplier, d, sizeof d), fmt_int(p->waste_paged, c, sizeof c),
           100.0 * p->waste_paged_fraction);
}

static void print_offload(const kvp_tech_row *row)
{
    char a[32], b[32], c[32], d[32];
    const kvp_tech_place *p = &row->u.place;
    printf("%-10s %s  [count exact, time %s]\n", row->id, row->variant,
           kvp_tech_label_name(row->label));
    if (!row->computed) {
        printf("%10s %s\n", "", row->reason);
        return;
    }
    printf("%10s holds %s tokens in %u-token blocks (%s in theory, %s in 256-token chunks)\n",
           "", fmt_int(p->host_tokens_blocks, a, sizeof a), p->block_size,
           fmt_int(p->host_tokens_theory, b, sizeof b),
           fmt_int(p->host_tokens_chunks, c, sizeof c));
    printf("%10s reloading one %s-token request (%s MiB): %.3f s gen4, %.3f s gen5 "
           "(sustained); %.3f / %.3f s at the theoretical rates\n", "",
           fmt_int(p->reload_tokens, a, sizeof a), fmt_mib(p->reload_bytes, d, sizeof d),
           p->reload_s[0], p->reload_s[1], p->reload_s[2], p->reload_s[3]);
}

static void print_place(const kvp_tech_result *r)
{
    printf("\nD. place differently: memory wasted by reservation (vLLM's block arithmetic); "
           "a host tier\n");
    for (size_t i = 0; i < r->n_rows; i++) {
        const kvp_tech_row *row = &r->rows[i];
        if (row->kind != KVP_TECH_PLACE)
            continue;
        if (!strcmp(row->id, "offload"))
            print_offload(row);
        else if (!row->computed)
            printf("%-10s %s: not computed: %s\n", row->id, row->variant, row->reason);
        else
            print_paged(row);
    }
}

/* ---- --apply and --explain ------------------------------------------------------------------ */

static void print_apply(const kvp_tech_result *r, const cli_opts *o)
{
    char a[32], b[32];
    printf("\nE. --apply %s: each alone, the product of their multipliers, and all together\n",
           o->apply);
    store_head(r->runtime);
    for (size_t i = 0; i < r->n_applied; i++)
        store_line(r->runtime, &r->applied[i], NULL);
    store_line(r->runtime, &r->combined, NULL);
    printf("product of the single multipliers: %s in theory",
           xmul(r->product_theory, a, sizeof a));
    if (r->runtime != KVP_RT_THEORY)
        printf(", %s in %s tokens", xmul(r->product_rt_tokens, b, sizeof b),
               rt_name(r->runtime));
    printf("\n%s\n", r->combined_note);
}

static void print_explain(const kvp_tech_result *r)
{
    printf("\nwhat each row changes and assumes:\n");
    for (size_t i = 0; i < r->n_rows; i++) {
        const kvp_tech_row *row = &r->rows[i];
        printf("  %s (%s) %s: changes %s; %s\n", row->id, kvp_tech_kind_name(row->kind),
               row->variant, row->changes[0] ? row->changes : "-",
               row->computed ? row->assumptions : row->reason);
    }
}

int cmd_techniques(int argc, char **argv)
{
    cli_opts o;
    kvp_model *m;
    kvp_tech_params p;
    kvp_error e;
    if (cli_wants_help(argc, argv))
        return fputs(help, stdout), 0;
    int rc = cli_parse(argc, argv,
                       "ctx-size parallel cache-type-k cache-type-v runtime json batch-size "
                       "ubatch-size flash-attn swa-full kv-unified no-kv-unified llama-version "
                       "memory workload trace format apply host-memory explain vllm family",
                       &o);
    if (rc)
        return rc;
    memset(&p, 0, sizeof p);
    if (kvp_runtime_parse(o.runtime, &p.runtime))
        return cli_fail(EXIT_USAGE, "--runtime %s: techniques runs theory, llama.cpp or vllm",
                        o.runtime);
    if (o.sim_trace && o.sim_workload)
        return cli_fail(EXIT_USAGE, "techniques: give --workload or --trace, not both");
    if ((rc = cli_load_model(&o, "techniques", &m)))
        return rc;
    cli_theory_params(&o, &p.theory);
    cli_llama_params(&o, &p.llama);
    cli_vllm_params(&o, &p.vllm);
    p.context = p.runtime == KVP_RT_VLLM ? p.vllm.max_model_len : o.n_ctx_set ? o.n_ctx : 0;
    p.seqs = o.np_set ? o.n_seq : 1;
    p.memory = o.memory;
    p.workload = o.sim_workload;
    p.trace = o.sim_trace;
    p.trace_format = o.trace_format;
    p.apply = o.apply;
    p.host_memory = o.host_memory;
    kvp_tech_result *r = malloc(sizeof *r);
    if (!r) {
        kvp_model_free(m);
        return cli_fail(EXIT_INPUT, "out of memory");
    }
    if (kvp_techniques(m, &p, r, &e)) {
        rc = cli_fail_err(&e);
    } else if (o.json) {
        char *s = kvp_techniques_json(m, r);
        rc = s ? (puts(s), 0) : cli_fail(EXIT_INPUT, "out of memory");
        free(s);
    } else {
        print_header(m, r, &o);
        print_store(r);
        for (size_t i = 0; i < r->n_rows; i++)
            if (r->rows[i].kind == KVP_TECH_RECOMPUTE)
                print_recompute(&r->rows[i]);
        print_read(r);
        print_place(r);
        if (r->has_combined)
            print_apply(r, &o);
        if (o.explain)
            print_explain(r);
    }
    free(r);
    kvp_model_free(m);
    return rc;
}
