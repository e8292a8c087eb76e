/* llm_mamba.c - the Mamba mixers of src/models/mamba-base.cpp
 * (build_mamba_layer, build_mamba2_layer), shared by mamba / mamba2
 * (arch_ssm.c) and the Mamba hybrids (arch_hybrid.c). */
#include "llm_mamba.h"

/* ssm_scan's state rows for Mamba1: {d_state, 1, d_inner, mem_size} */
typedef struct scan_args {
    gg_tensor *x, *dt, *A, *B, *C;
    int64_t d_state, head_dim, n_head, slots, K;
} scan_args;

static gg_tensor *scan_rows(llm *c, gg_tensor *states, gg_tensor *ids, void *user)
{
    scan_args *a = user;
    gg_tensor *ssm = gg_reshape_4d(c->g, states, a->d_state, a->head_dim, a->n_head, a->slots);
    return llm_op_ssm_scan(c, ssm, a->x, a->dt, a->A, a->B, a->C, ids, a->K);
}

/* build_mamba_layer: cur is the normed input {n_embd, n_tokens} */
gg_tensor *llm_mamba_layer(llm *c, llm_rs_inp *inp, gg_tensor *cur, int il, int dt_b_c_norm)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t d_conv = L->d_conv, d_inner = (int64_t)L->d_inner, d_state = L->d_state;
    int64_t dt_rank = llm_tensor_ne0(c, "blk.%d.ssm_dt.weight", il, (c->n_embd + 15) / 16);
    int64_t n_seqs = c->n_seqs, n_seq_tokens = c->n_tokens / c->n_seqs;
    gg_tensor *conv_all = llm_rs_state(c, llm_rs_n_embd_r(L));
    gg_tensor *ssm_all = llm_rs_state(c, llm_rs_n_embd_s(L));

    gg_tensor *conv = llm_build_rs(c, inp, conv_all, llm_rs_n_embd_r(L), n_seqs, NULL, NULL);
    conv = gg_reshape_3d(g, conv, d_conv - 1, d_inner, n_seqs);
    cur = gg_reshape_3d(g, cur, cur->ne[0], n_seq_tokens, n_seqs);
    gg_tensor *xz = gg_mul_mat(g, llm_weight(c, c->n_embd, 2 * d_inner), cur);
    gg_tensor *x = gg_view_3d(g, xz, d_inner, xz->ne[1], xz->ne[2], xz->nb[1], xz->nb[2], 0);
    gg_tensor *z = gg_view_3d(g, xz, d_inner, xz->ne[1], xz->ne[2], xz->nb[1], xz->nb[2],
                              (uint64_t)d_inner * 4);

    gg_tensor *conv_x = gg_concat(g, conv, gg_transpose(g, x), 0);
    gg_tensor *last = gg_view_3d(g, conv_x, d_conv - 1, d_inner, n_seqs, conv_x->nb[1],
                                 conv_x->nb[2], (uint64_t)n_seq_tokens * conv_x->nb[0]);
    gg_expand(g, llm_op_cpy(c, last, gg_view_1d(g, conv_all, (d_conv - 1) * d_inner * n_seqs, 0)));
    x = llm_op_ssm_conv(c, conv_x, llm_weight(c, d_conv, d_inner));
    x = gg_binary(g, GG_ADD, x, llm_weight(c, d_inner, 1));
    x = gg_unary(g, x);

    gg_tensor *x_db = gg_mul_mat(g, llm_weight(c, d_inner, dt_rank + 2 * d_state), x);
    gg_tensor *dt = gg_view_3d(g, x_db, dt_rank, n_seq_tokens, n_seqs, x_db->nb[1], x_db->nb[2], 0);
    gg_tensor *B = gg_view_4d(g, x_db, d_state, 1, n_seq_tokens, n_seqs,
                              (uint64_t)d_state * x_db->nb[0], x_db->nb[1], x_db->nb[2],
                              (uint64_t)dt_rank * 4);
    gg_tensor *C = gg_view_4d(g, x_db, d_state, 1, n_seq_tokens, n_seqs,
                              (uint64_t)d_state * x_db->nb[0], x_db->nb[1], x_db->nb[2],
                              (uint64_t)(dt_rank + d_state) * 4);
    if (dt_b_c_norm) {
        /* Jamba's norms carry weights, FalconMamba's (ssm.dt_b_c_rms) none */
        int w = llm_has_tensor(c, "blk.%d.ssm_dt_norm.weight", il, 0);
        dt = llm_norm_rms(c, dt, w ? llm_weight(c, dt_rank, 1) : NULL);
        B = llm_norm_rms(c, B, w ? llm_weight(c, d_state, 1) : NULL);
        C = llm_norm_rms(c, C, w ? llm_weight(c, d_state, 1) : NULL);
    } else {
        dt = gg_cont(g, dt);
    }
    dt = gg_mul_mat(g, llm_weight(c, dt_rank, d_inner), dt);
    dt = gg_binary(g, GG_ADD, dt, llm_weight(c, d_inner, 1));
    cur = x;
    x = gg_reshape_4d(g, x, 1, d_inner, n_seq_tokens, n_seqs);

    scan_args a = {x, dt, llm_weight(c, d_state, d_inner), B, C, d_state, 1, d_inner, c->rs_size, 1};
    gg_tensor *y_ssm = llm_build_rs(c, inp, ssm_all, llm_rs_n_embd_s(L), n_seqs, scan_rows, &a);
    gg_expand(g, llm_op_cpy(c, gg_view_1d(g, y_ssm, d_state * d_inner * n_seqs,
                                          x->nb[3] * (uint64_t)x->ne[3]),
                            gg_view_1d(g, ssm_all, d_state * d_inner * n_seqs, 0)));
    gg_tensor *y = gg_view_3d(g, y_ssm, d_inner, n_seq_tokens, n_seqs, x->nb[2], x->nb[3], 0);
    y = gg_binary(g, GG_ADD, y, gg_binary(g, GG_MUL, cur, llm_weight(c, d_inner, 1)));
    y = gg_glu_split(g, gg_cont(g, z), y);
    cur = gg_mul_mat(g, llm_weight(c, d_inner, c->n_embd), y);
    return gg_reshape_2d(g, cur, cur->ne[0], n_seq_tokens * n_seqs);
}

/* Mamba2's heads: ssm.time_step_rank, else what the twin writer assumes
 * (heads of 64 channels, or of the largest power of two dividing d_inner) */
int64_t llm_mamba2_heads(const llm *c, int il)
{
    const kvp_layer *L = &c->m->layers[il];
    int64_t hd = 64;
    while (hd > 1 && L->d_inner % (uint64_t)hd)
        hd /= 2;
    return llm_rs_heads(c, il, (int64_t)L->d_inner / hd);
}

/* build_mamba2_layer */
gg_tensor *llm_mamba2_layer(llm *c, llm_rs_inp *inp, gg_tensor *cur, int il)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t d_conv = L->d_conv, d_inner = (int64_t)L->d_inner, d_state = L->d_state;
    int64_t n_head = llm_mamba2_heads(c, il), n_group = L->n_group;
    int64_t head_dim = d_inner / n_head;
    int64_t n_seqs = c->n_seqs, n_seq_tokens = c->n_tokens / c->n_seqs;
    int64_t K = c->rs_seq > 0 ? c->rs_seq + 1 : 1;
    int64_t mem_size = c->rs_size, conv_dim = d_inner + 2 * n_group * d_state;
    gg_tensor *conv_all = llm_rs_state(c, llm_rs_n_embd_r(L));
    gg_tensor *ssm_all = llm_rs_state(c, llm_rs_n_embd_s(L));
    int64_t slots = ssm_all->ne[1];

    gg_tensor *conv = llm_build_rs(c, inp, conv_all, llm_rs_n_embd_r(L), n_seqs, NULL, NULL);
    conv = gg_reshape_3d(g, conv, d_conv - 1, conv_dim, n_seqs);
    gg_tensor *zx = gg_mul_mat(g, llm_weight(c, c->n_embd, d_inner + conv_dim + n_head), cur);
    zx = gg_reshape_3d(g, zx, zx->ne[0], n_seq_tokens, n_seqs);
    gg_tensor *z = gg_view_4d(g, zx, head_dim, n_head, n_seq_tokens, n_seqs,
                              (uint64_t)head_dim * zx->nb[0], zx->nb[1], zx->nb[2], 0);
    gg_tensor *xBC = gg_view_3d(g, zx, conv_dim, n_seq_tokens, n_seqs, zx->nb[1], zx->nb[2],
                                (uint64_t)d_inner * 4);
    gg_tensor *dt = gg_view_3d(g, zx, n_head, n_seq_tokens, n_seqs, zx->nb[1], zx->nb[2],
                               (uint64_t)(d_inner + conv_dim) * 4);

    gg_tensor *conv_x = gg_concat(g, conv, gg_transpose(g, xBC), 0);
    uint64_t row_size = gg_row_size(conv_all->type, (d_conv - 1) * conv_dim);
    int64_t n_written = n_seq_tokens < K ? n_seq_tokens : K;
    for (int64_t slot = 0; slot < n_written; slot++) {
        gg_tensor *last = gg_view_3d(g, conv_x, d_conv - 1, conv_dim, n_seqs, conv_x->nb[1],
                                     conv_x->nb[2], (uint64_t)(n_seq_tokens - slot) * conv_x->nb[0]);
        gg_expand(g, llm_op_cpy(c, last, gg_view_2d(g, conv_all, (d_conv - 1) * conv_dim, n_seqs,
                                                    conv_all->nb[1],
                                                    (uint64_t)(slot * mem_size) * row_size)));
    }
    xBC = llm_op_ssm_conv(c, conv_x, llm_weight(c, d_conv, conv_dim));
    xBC = gg_binary(g, GG_ADD, xBC, llm_weight(c, conv_dim, 1));
    xBC = gg_unary(g, xBC);

    gg_tensor *x = gg_view_4d(g, xBC, head_dim, n_head, n_seq_tokens, n_seqs,
                              (uint64_t)head_dim * xBC->nb[0], xBC->nb[1], xBC->nb[2], 0);
    gg_tensor *B = gg_view_4d(g, xBC, d_state, n_group, n_seq_tokens, n_seqs,
                              (uint64_t)d_state * xBC->nb[0], xBC->nb[1], xBC->nb[2],
                              (uint64_t)d_inner * 4);
    gg_tensor *C = gg_view_4d(g, xBC, d_state, n_group, n_seq_tokens, n_seqs,
                              (uint64_t)d_state * xBC->nb[0], xBC->nb[1], xBC->nb[2],
                              (uint64_t)(d_inner + n_group * d_state) * 4);
    dt = gg_binary(g, GG_ADD, gg_cont(g, dt), llm_weight(c, n_head, 1));

    scan_args a = {x, dt, llm_weight(c, 1, n_head), B, C, d_state, head_dim, n_head, slots, K};
    gg_tensor *y_ssm = llm_build_rs(c, inp, ssm_all, llm_rs_n_embd_s(L), n_seqs, scan_rows, &a);
    int64_t D = d_state * d_inner;
    uint64_t srow = gg_row_size(ssm_all->type, D), yrow = gg_row_size(y_ssm->type, D);
    gg_expand(g, llm_op_cpy(c, gg_view_3d(g, y_ssm, D, n_seqs, n_written, yrow,
                                          yrow * (uint64_t)n_seqs, gg_nelements(x) * 4),
                            gg_view_3d(g, ssm_all, D, n_seqs, n_written, ssm_all->nb[1],
                                       (uint64_t)mem_size * srow, 0)));
    gg_tensor *y = gg_view_4d(g, y_ssm, head_dim, n_head, n_seq_tokens, n_seqs, x->nb[1],
                              (uint64_t)n_head * x->nb[1],
                              (uint64_t)(n_seq_tokens * n_head) * x->nb[1], 0);
    y = gg_binary(g, GG_ADD, y, gg_binary(g, GG_MUL, x, llm_weight(c, 1, n_head)));
    y = gg_glu_split(g, gg_cont(g, z), y);
    if (llm_has_tensor(c, "blk.%d.ssm_norm.weight", il, 1)) {
        y = gg_reshape_4d(g, y, d_inner / n_group, n_group, n_seq_tokens, n_seqs);
        y = llm_norm_rms(c, y, llm_weight(c, d_inner / n_group, n_group));
    }
    y = gg_reshape_2d(g, y, d_inner, n_seq_tokens * n_seqs);
    return gg_mul_mat(g, llm_weight(c, d_inner, c->n_embd), y);
}
