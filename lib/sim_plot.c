/* sim_plot.c - the prefix-cache sweep as a chart: hit rate against
 * capacity, prefix reuse beside the any-position what-if, the cliff (where
 * the hit rate rises most) marked, so the capacity where reuse collapses is
 * seen, not searched for in a table. */
#include <stdio.h>
#include <stdlib.h>

#include "kvp_int.h"

int kvp_sim_plot(const char *path, int force, const char *title,
                 const uint64_t *capacity_tokens, const kvp_sim_result *prefix,
                 const kvp_sim_result *any, size_t n, kvp_error *err)
{
    double *v = malloc((n ? n : 1) * 3 * sizeof *v);
    if (!v)
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", path);
    for (size_t i = 0; i < n; i++) {
        v[i] = (double)capacity_tokens[i];
        v[n + i] = prefix[i].hit_rate;
        v[2 * n + i] = any ? any[i].hit_rate : 0;
    }
    const double *y[2] = {v + n, v + 2 * n};
    const char *labels[2] = {"prefix (vLLM)", "any position (what-if)"};
    size_t c = kvp_sim_cliff(prefix, n);
    char mark[96] = "";
    double mx = -1;
    if (c) {
        /* the cliff is crossed between two points: the line sits at the upper */
        mx = v[c];
        snprintf(mark, sizeof mark, "cliff: %.3f -> %.3f", prefix[c - 1].hit_rate,
                 prefix[c].hit_rate);
    }
    int rc = kvp_svg_rates(path, force, title, "capacity in tokens (K = 10^3, M = 10^6)", v, n, y, labels,
                           any ? 2 : 1, mx, mark, err);
    free(v);
    return rc;
}
