/* llm_rs.c - recurrent-state graph pieces (llm_rs.h). */
#include <stdio.h>
#include <string.h>

#include "llm_rs.h"

gg_tensor *llm_op_cpy(llm *c, gg_tensor *a, gg_tensor *b)
{
    gg_tensor *t = gg_view_tensor(c->g, b);
    t->op = GG_CPY;
    t->src[0] = a;
    t->src[1] = b;
    return t;
}

gg_tensor *llm_op_scale_inplace(llm *c, gg_tensor *a)
{
    gg_tensor *t = gg_view_tensor(c->g, a);
    t->op = GG_SCALE;
    t->src[0] = a;
    return t;
}

gg_tensor *llm_op_ssm_conv(llm *c, gg_tensor *sx, gg_tensor *w)
{
    int64_t ne[3] = {w->ne[1], sx->ne[0] - w->ne[0] + 1, sx->ne[2]};
    return gg_new_op(c->g, GG_SSM_CONV, GG_F32, 3, ne, sx, w, NULL);
}

/* the outputs y, then K snapshots of the final states */
gg_tensor *llm_op_ssm_scan(llm *c, gg_tensor *s, gg_tensor *x, gg_tensor *dt, gg_tensor *A,
                           gg_tensor *B, gg_tensor *C, gg_tensor *ids, int64_t K)
{
    int64_t ne = (int64_t)gg_nelements(x) + K * s->ne[0] * s->ne[1] * s->ne[2] * ids->ne[0];
    gg_tensor *t = gg_new_op(c->g, GG_SSM_SCAN, GG_F32, 1, &ne, s, x, dt);
    t->src[3] = A;
    t->src[4] = B;
    t->src[5] = C;
    t->src[6] = ids;
    return t;
}

int64_t llm_model_fact(const llm *c, const char *name, int64_t dflt)
{
    for (size_t i = 0; i < c->m->n_facts; i++)
        if (!strcmp(c->m->facts[i].name, name))
            return c->m->facts[i].value;
    return dflt;
}

int64_t llm_rs_heads(const llm *c, int il, int64_t dflt)
{
    const kvp_layer *L = &c->m->layers[il];
    int64_t heads = L->n_ssm_heads && L->d_inner % L->n_ssm_heads == 0 ? L->n_ssm_heads : dflt;
    return llm_tensor_ne0(c, "blk.%d.ssm_dt.bias", il, heads);
}

int64_t llm_rs_n_embd_r(const kvp_layer *L)
{
    int64_t conv = L->d_conv > 0 ? (int64_t)L->d_conv - 1 : 0;
    return conv * ((int64_t)L->d_inner + 2 * (int64_t)L->n_group * L->d_state);
}

int64_t llm_rs_n_embd_s(const kvp_layer *L)
{
    return (int64_t)L->d_state * (int64_t)L->d_inner;
}

void llm_rs_inp_build(llm *c, llm_rs_inp *inp)
{
    int64_t n_rs = c->rs_size;
    inp->s_copy = gg_input(gg_new_1d(c->g, GG_I32, n_rs), "rs_s_copy");
    inp->s_copy_main = gg_view_1d(c->g, inp->s_copy, c->n_seqs, 0);
    inp->s_copy_extra = gg_view_1d(c->g, inp->s_copy, n_rs - c->n_seqs,
                                   (uint64_t)c->n_seqs * inp->s_copy->nb[0]);
}

gg_tensor *llm_rs_state(llm *c, int64_t n_embd)
{
    int64_t ne[2] = {n_embd, c->rs_size * (1 + c->rs_seq)};
    return gg_external(c->g, GG_F32, 2, ne);
}

gg_tensor *llm_build_rs(llm *c, llm_rs_inp *inp, gg_tensor *s, int64_t state_size,
                        int64_t n_seqs, llm_rs_rows_fn fn, void *user)
{
    gg_ctx *g = c->g;
    int64_t n_rs = c->rs_size;   /* init_full: every cell, head 0, rs_z 0 */
    gg_tensor *states = gg_reshape_2d(g, s, state_size, s->ne[1]);
    gg_tensor *zero = gg_view_1d(g, states, state_size, 0);
    gg_expand(g, llm_op_scale_inplace(c, zero));
    gg_tensor *out = fn ? fn(c, states, inp->s_copy_main, user)
                        : gg_get_rows(g, states, inp->s_copy_main);
    gg_expand(g, out);
    gg_tensor *extra = gg_get_rows(g, states, inp->s_copy_extra);
    gg_expand(g, llm_op_cpy(c, extra, gg_view_2d(g, s, state_size, n_rs - n_seqs, s->nb[1],
                                                 (uint64_t)n_seqs * s->nb[1])));
    return out;
}

int64_t llm_tensor_ne1(const llm *c, const char *fmt, int il, int64_t dflt)
{
    char name[64];
    snprintf(name, sizeof name, fmt, il);
    for (size_t i = 0; i < c->m->n_tensors; i++) {
        const kvp_tensor *t = &c->m->tensors[i];
        if (strcmp(t->name, name))
            continue;
        uint64_t row = gg_row_size((int)t->type, (int64_t)t->ne0);
        return row ? (int64_t)(t->nbytes / row) : dflt;
    }
    return dflt;
}

gg_tensor *llm_rwkv_shift_load(llm *c, llm_rs_inp *inp, gg_tensor *r_l, int64_t n_embd_r,
                               int64_t shifts)
{
    gg_tensor *t = llm_build_rs(c, inp, r_l, n_embd_r, c->n_seqs, NULL, NULL);
    return gg_reshape_3d(c->g, t, c->n_embd, shifts, c->n_seqs);
}

gg_tensor *llm_rwkv_shift_store(llm *c, gg_tensor *shift, gg_tensor *r_l, int64_t n_embd_r,
                                int64_t shifts)
{
    return llm_op_cpy(c, gg_view_1d(c->g, shift, c->n_embd * c->n_seqs * shifts, 0),
                      gg_view_1d(c->g, r_l, n_embd_r * c->n_seqs, 0));
}
