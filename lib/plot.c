/* plot.c - memory against context length as an SVG chart, one band per
 * part of the cache, from the theory or llama.cpp runtime.  What grows with
 * length (full layers), what stops growing (windows), and what never grew
 * (recurrent state) is the point of the picture. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvp_int.h"

#define POINTS 65
#define MIB (1024.0 * 1024.0)

/* Theory: a band per layer kind (groups of one kind add up), state last. */
static int theory_bands(const kvp_model *m, const kvp_theory_params *base, const double *x,
                        double bands[][POINTS], const char **labels, size_t *nb, kvp_error *err)
{
    int slot[KVP_LAYER_KIND_COUNT + 1];
    memset(slot, -1, sizeof slot);
    *nb = 0;
    for (size_t i = 0; i < POINTS; i++) {
        kvp_theory_params p = *base;
        kvp_theory_result r;
        p.n_ctx = x[i] < 1 ? 1 : (uint64_t)x[i];
        if (kvp_theory(m, &p, &r, err))
            return -1;
        for (size_t g = 0; g < r.n_groups; g++) {
            const kvp_theory_group *G = &r.groups[g];
            uint64_t fixed = G->fixed_bytes_per_seq * p.n_seq;
            int k = G->kind, parts[2] = {k, KVP_LAYER_KIND_COUNT};
            double val[2] = {(double)(G->bytes - fixed), (double)fixed};
            for (int j = 0; j < 2; j++) {
                if (!val[j] && slot[parts[j]] < 0)
                    continue;
                if (slot[parts[j]] < 0) {
                    slot[parts[j]] = (int)(*nb)++;
                    labels[slot[parts[j]]] = j ? "fixed state" : kvp_layer_kind_name((kvp_layer_kind)k);
                }
                bands[slot[parts[j]]][i] += val[j] / MIB;
            }
        }
    }
    return 0;
}

/* llama.cpp: its caches as it prints them (kv, kv_swa) and the recurrent
 * state; -c steps of 256 cells. */
static int llama_bands(const kvp_model *m, const kvp_llama_params *base, const double *x,
                       double bands[][POINTS], const char **labels, size_t *nb, kvp_error *err)
{
    *nb = 0;
    for (size_t i = 0; i < POINTS; i++) {
        kvp_llama_params p = *base;
        kvp_llama_result r;
        p.n_ctx = x[i] < 256 ? 256 : (uint64_t)x[i];
        if (kvp_llama(m, &p, &r, err))
            return -1;
        size_t b = 0;
        for (size_t c = 0; c < r.n_caches; c++, b++) {
            labels[b] = !strcmp(r.caches[c].name, "kv_idx") ? "kv_idx (DSA indexer keys)"
                        : r.caches[c].name[3] ? "kv_swa (windowed layers)" : "kv (full layers)";
            bands[b][i] = (double)r.caches[c].bytes / MIB;
        }
        if (r.has_recurrent) {
            labels[b] = "recurrent state (f32)";
            bands[b++][i] = (double)r.recurrent.bytes / MIB;
        }
        *nb = b;
    }
    return 0;
}

int kvp_plot_memory(const kvp_model *m, int llama, const kvp_theory_params *tp,
                    const kvp_llama_params *lp, uint64_t max_ctx, const char *path, int force,
                    kvp_error *err)
{
    double x[POINTS], (*bands)[POINTS] = calloc(KVP_LAYER_KIND_COUNT + 2, sizeof *bands);
    const char *labels[KVP_LAYER_KIND_COUNT + 2];
    const double *rows[KVP_LAYER_KIND_COUNT + 2];
    size_t nb;
    char title[256];
    if (!bands)
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    if (max_ctx < 256 || max_ctx > KVP_MAX_TOKENS) {
        free(bands);
        return kvp_fail(err, KVP_EUSAGE, "plot: the longest context must be in [256, 2^40]");
    }
    for (size_t i = 0; i < POINTS; i++)
        x[i] = (double)max_ctx * (double)i / (POINTS - 1);
    int rc = llama ? llama_bands(m, lp, x, bands, labels, &nb, err)
                   : theory_bands(m, tp, x, bands, labels, &nb, err);
    if (!rc) {
        for (size_t b = 0; b < nb; b++)
            rows[b] = bands[b];
        snprintf(title, sizeof title, "%s: KV cache and state, %s", m->name,
                 llama ? "llama.cpp" : "theory");
        rc = kvp_svg_stacked(path, force, title, x, POINTS, rows, labels, nb, err);
    }
    free(bands);
    return rc;
}
