/* estimate.h - the compute buffer by formula, where no graph is rebuilt. */
#ifndef KVP_GRAPH_ESTIMATE_H
#define KVP_GRAPH_ESTIMATE_H

#include "kvplan.h"

typedef struct est_shape {
    uint64_t n_ub;      /* reserved tokens */
    uint64_t n_out;     /* output rows */
    int fa, v_trans;
} est_shape;

uint64_t est_compute(const kvp_model *m, const kvp_llama_result *r, const est_shape *s);

#endif
