/* tech_compose.c - --apply: several store-fewer-bytes techniques at once.
 * Each is priced alone, then all of their changes are applied to one model
 * and priced together, beside the product of the single multipliers: they
 * multiply when they change different factors of the same bytes, and they
 * do not where a term is fixed (a recurrent state, KIVI's residual), where
 * two of them cap the same tokens (windows, eviction, compression) or where
 * a runtime rounds (vLLM's blocks, its in-flight window reservation). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tech.h"

static int has_op(const tech_variant *v, tech_op op)
{
    for (int i = 0; i < v->n_steps; i++)
        if (v->steps[i].op == op)
            return 1;
    return 0;
}

/* Splits "a=1,b=2" into items; fails on an empty or repeated technique. */
static int split(const char *list, char items[8][64], size_t *n, kvp_error *err)
{
    const char *p = list;
    *n = 0;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (!len || len >= 64)
            return kvp_fail(err, KVP_EUSAGE, "--apply %s: expected ID[=PARAM] items separated "
                            "by commas", list);
        if (*n == 8)
            return kvp_fail(err, KVP_EUSAGE, "--apply %s: at most 8 techniques", list);
        memcpy(items[*n], p, len);
        items[*n][len] = 0;
        size_t id = strcspn(items[*n], "=");
        for (size_t i = 0; i < *n; i++)
            if (strcspn(items[i], "=") == id && !strncmp(items[i], items[*n], id))
                return kvp_fail(err, KVP_EUSAGE, "--apply %s: %.*s is given twice", list,
                                (int)id, items[*n]);
        (*n)++;
        p += len + (e != NULL);
    }
    if (!*n)
        return kvp_fail(err, KVP_EUSAGE, "--apply: no technique given");
    return 0;
}

static void explain(tech_ctx *c, const tech_variant *v, size_t n, const kvp_tech_row *all)
{
    kvp_tech_result *r = c->r;
    const kvp_tech_store *s = &all->u.store;
    const char *why[4];
    size_t nw = 0, len = 0, cap = sizeof r->combined_note;
    char *out = r->combined_note;
    int caps = 0, quant = 0;
    double dev = r->product_theory > 0 ? s->theory_multiplier / r->product_theory : 1;
    for (size_t i = 0; i < n; i++) {
        caps += has_op(&v[i], OP_WINDOW) || has_op(&v[i], OP_EVICT) ||
                has_op(&v[i], OP_COMPRESS) || has_op(&v[i], OP_HYBRID);
        quant += has_op(&v[i], OP_QUANT);
    }
    if (caps > 1)
        why[nw++] = "two of them cap the same tokens, so the smaller cap wins";
    if (r->base.fixed_bytes_per_seq || s->fixed_bytes_per_seq)
        why[nw++] = "a fixed term per sequence (a recurrent state, KIVI's residual) shrinks "
                    "with none of them";
    if (caps == 1 && n > 1)
        why[nw++] = "a capped layer holds fewer tokens, so a per-token saving there is worth less";
    if (quant && caps)
        why[nw++] = "quantization only shrinks what the capped layers still hold";
#define SAY(...) (len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, __VA_ARGS__))
    if (dev > 0.995 && dev < 1.005)
        SAY("in theory they multiply: each changes a different factor of the bytes per token");
    else
        SAY("in theory they do not multiply (%.2fx together against %.2fx)",
            s->theory_multiplier, r->product_theory);
    for (size_t i = 0; i < nw && !(dev > 0.995 && dev < 1.005); i++)
        SAY("%s%s", i ? "; " : ": ", why[i]);
    if (r->runtime != KVP_RT_THEORY && s->rt_computed && r->product_rt_tokens > 0) {
        double rd = s->rt_tokens_multiplier / r->product_rt_tokens;
        if (rd < 0.995 || rd > 1.005)
            SAY(". %s's figure (%.2fx against %.2fx) has its own rounding too: %s",
                r->runtime == KVP_RT_VLLM ? "vLLM" : "llama.cpp", s->rt_tokens_multiplier,
                r->product_rt_tokens,
                r->runtime == KVP_RT_VLLM ? "whole blocks, windows reserving W - 1 + the "
                                            "in-flight tokens, whole state blocks"
                                          : "256-cell padding, windows reserving W + ubatch");
        else
            SAY(". In %s's arithmetic too", r->runtime == KVP_RT_VLLM ? "vLLM" : "llama.cpp");
    }
#undef SAY
}

int tech_compose(tech_ctx *c, kvp_error *err)
{
    kvp_tech_result *r = c->r;
    char items[8][64];
    size_t n;
    tech_variant v[8], all;
    if (split(c->p->apply, items, &n, err))
        return -1;
    memset(&all, 0, sizeof all);
    all.id = "combined";
    all.label = KVP_LABEL_EXACT;
    r->product_theory = r->product_rt_tokens = 1;
    for (size_t i = 0; i < n; i++) {
        if (tech_variant_parse(c, items[i], &v[i], err))
            return -1;
        kvp_tech_row *row = &r->applied[r->n_applied++];
        memset(row, 0, sizeof *row);
        row->id = v[i].id;
        row->kind = KVP_TECH_STORE;
        if (tech_store_variant(c, &v[i], 0, row, err))
            return -1;
        if (!row->computed)
            return kvp_fail(err, KVP_EINPUT, "--apply %s: %s", items[i], row->reason);
        r->product_theory *= row->u.store.theory_multiplier;
        r->product_rt_tokens = row->u.store.rt_computed && r->product_rt_tokens > 0
                                   ? r->product_rt_tokens * row->u.store.rt_tokens_multiplier
                                   : 0;
        if (all.n_steps + v[i].n_steps > (int)(sizeof all.steps / sizeof all.steps[0]))
            return kvp_fail(err, KVP_EUSAGE, "--apply: too many changes at once");
        memcpy(all.steps + all.n_steps, v[i].steps, v[i].n_steps * sizeof v[i].steps[0]);
        all.n_steps += v[i].n_steps;
        if (v[i].label == KVP_LABEL_THEORY)
            all.label = KVP_LABEL_THEORY;
        size_t len = strlen(all.name);
        snprintf(all.name + len, sizeof all.name - len, "%s%s", i ? " + " : "", items[i]);
        len = strlen(all.changes);
        snprintf(all.changes + len, sizeof all.changes - len, "%s%s", i ? ", " : "",
                 v[i].changes);
    }
    snprintf(all.assumptions, sizeof all.assumptions, "all the changes applied to one model, "
             "priced once; the assumptions of each row above apply");
    kvp_tech_row *row = &r->combined;
    memset(row, 0, sizeof *row);
    row->id = "combined";
    row->kind = KVP_TECH_STORE;
    if (tech_store_variant(c, &all, 0, row, err))
        return -1;
    if (!row->computed)
        return kvp_fail(err, KVP_EINPUT, "--apply %s: %s", c->p->apply, row->reason);
    r->has_combined = 1;
    explain(c, v, n, row);
    return 0;
}
