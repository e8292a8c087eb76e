/* arch_rwkv.c - the reserved graph of llama.cpp's RWKV models:
 * src/models/rwkv6.cpp, rwkv6qwen2.cpp (on rwkv6-base.cpp's time and
 * channel mixes) and rwkv7.cpp, arwkv7.cpp (on rwkv7-base.cpp's).  Every
 * layer is recurrent: token shifts (the previous token's normed input,
 * kept in r_l) feed a time mix over the WKV state (s_l) and, for RWKV's
 * own models, a channel mix; the Qwen-derived ones (QRWKV6, ARWKV7) keep
 * one token shift, RMS norms and Qwen's SwiGLU FFN.
 *
 * hparams.rescale_every_n_layers (a GGUF key kvplan does not read) only
 * adds an in-place scale of a residual with one consumer, which moves no
 * offset: it is left out. */
#include <math.h>
#include <string.h>

#include "arch.h"
#include "llm_rs.h"

int arch_rwkv_handles(const char *arch)
{
    return !strcmp(arch, "rwkv6") || !strcmp(arch, "rwkv6qwen2") || !strcmp(arch, "rwkv7") ||
           !strcmp(arch, "arwkv7");
}

typedef struct rwkv {
    llm *c;
    llm_rs_inp rs;
    int qwen;                /* rwkv6qwen2, arwkv7 */
    int64_t hs, n_head, shifts;
    gg_tensor *v_first;      /* RWKV7: layer 0's values */
} rwkv;

static gg_tensor *W1(llm *c, int64_t n)
{
    return llm_weight(c, n, 1);
}

/* build_norm LLM_NORM (layer norm) or LLM_NORM_RMS, the bias when the
 * GGUF has one (name: the bias, one %d or none) */
static gg_tensor *norm(rwkv *r, gg_tensor *cur, int rms, const char *bias, int il, int dflt)
{
    llm *c = r->c;
    int b = llm_has_tensor(c, bias, il, dflt);
    if (rms) {
        cur = llm_norm_rms(c, cur, W1(c, c->n_embd));
        return b ? gg_binary(c->g, GG_ADD, cur, W1(c, c->n_embd)) : cur;
    }
    return llm_norm(c, cur, W1(c, c->n_embd), b ? W1(c, c->n_embd) : NULL);
}

/* the wkv op's result {S H, n_tokens + S n_seqs}: outputs, then states */
static gg_tensor *wkv_op(llm *c, gg_tensor *k, gg_tensor *state, gg_tensor **src, int n_src)
{
    int64_t S = k->ne[0], H = k->ne[1], n_tokens = k->ne[2];
    int64_t ne[2] = {S * H, n_tokens + S * state->ne[1]};
    gg_tensor *t = gg_new_op(c->g, GG_OTHER, GG_F32, 2, ne, NULL, NULL, NULL);
    for (int i = 0; i < n_src; i++)
        t->src[i] = src[i];
    return t;
}

/* the WKV state of layer il: its outputs {n_embd, n_tokens}, the new
 * state copied into s_l */
static gg_tensor *wkv_out(rwkv *r, gg_tensor *out, gg_tensor *s_l, int64_t n_embd_s)
{
    llm *c = r->c;
    gg_ctx *g = c->g;
    gg_tensor *cur = gg_view_1d(g, out, c->n_embd * c->n_tokens, 0);
    gg_tensor *st = gg_view_1d(g, out, c->n_embd * r->hs * c->n_seqs,
                               (uint64_t)(c->n_embd * c->n_tokens) * 4);
    gg_expand(g, llm_op_cpy(c, st, gg_view_1d(g, s_l, n_embd_s * c->n_seqs, 0)));
    return cur;
}

/* the group norm over heads after the WKV, when the layer has time_mix_ln */
static gg_tensor *wkv_ln(rwkv *r, gg_tensor *cur, int il, int dflt)
{
    llm *c = r->c;
    gg_ctx *g = c->g;
    if (llm_has_tensor(c, "blk.%d.time_mix_ln.weight", il, dflt)) {
        cur = gg_reshape_3d(g, cur, c->n_embd / r->n_head, r->n_head, c->n_tokens);
        cur = gg_norm(g, cur);
        cur = gg_reshape_2d(g, cur, c->n_embd, c->n_tokens);
        return gg_binary(g, GG_ADD, gg_binary(g, GG_MUL, cur, W1(c, c->n_embd)), W1(c, c->n_embd));
    }
    return gg_reshape_2d(g, cur, c->n_embd, c->n_tokens);
}

/* build_rwkv6_time_mix */
static gg_tensor *time_mix6(rwkv *r, gg_tensor *cur, gg_tensor *x_prev, int il)
{
    llm *c = r->c;
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t E = c->n_embd, n_tokens = c->n_tokens, hs = r->hs, n_head = r->n_head;
    int64_t mx = llm_tensor_ne0(c, "blk.%d.time_mix_w2.weight", il, E >= 4096 ? 64 : 32);
    int64_t dx = llm_tensor_ne0(c, "blk.%d.time_mix_decay_w2.weight", il, E >= 4096 ? 128 : 64);
    int64_t kd = llm_tensor_ne1(c, "blk.%d.time_mix_key.weight", il, E);
    int64_t n_head_kv = kd / hs;
    int qrwkv = !llm_has_tensor(c, "blk.%d.time_mix_first.weight", il, !r->qwen);

    gg_tensor *sx = gg_binary(g, GG_SUB, x_prev, cur);
    sx = gg_reshape_2d(g, sx, E, n_tokens);
    cur = gg_reshape_2d(g, cur, E, n_tokens);
    gg_tensor *xxx = gg_binary(g, GG_ADD, gg_binary(g, GG_MUL, sx, W1(c, E)), cur);
    xxx = gg_unary(g, gg_mul_mat(g, llm_weight(c, E, mx * 5), xxx));
    xxx = gg_reshape_4d(g, xxx, mx, 1, 5, n_tokens);
    xxx = gg_cont(g, gg_permute(g, xxx, 0, 1, 3, 2));
    xxx = gg_mul_mat(g, gg_reshape_4d(g, llm_weight_3d(c, mx, E, 5), mx, E, 1, 5), xxx);
    gg_tensor *x[5];
    if (llm_has_tensor(c, "blk.%d.time_mix_lerp_fused.weight", il, 1)) {
        sx = gg_reshape_3d(g, sx, E, 1, n_tokens);
        cur = gg_reshape_3d(g, cur, E, 1, n_tokens);
        int64_t ne[4] = {E, 1, 1, 5};
        gg_tensor *fused = gg_external(g, GG_F32, 4, ne);
        xxx = gg_binary(g, GG_ADD, gg_binary(g, GG_MUL, gg_binary(g, GG_ADD, xxx, fused), sx), cur);
        for (int i = 0; i < 5; i++)
            x[i] = gg_view_2d(g, xxx, E, n_tokens, xxx->nb[1], (uint64_t)(i * E * n_tokens) * 4);
    } else {
        for (int i = 0; i < 5; i++) {
            x[i] = gg_view_2d(g, xxx, E, n_tokens, xxx->nb[1], (uint64_t)(i * E * n_tokens) * 4);
            x[i] = gg_binary(g, GG_ADD, gg_binary(g, GG_MUL, gg_binary(g, GG_ADD, x[i], W1(c, E)),
                                                  sx), cur);
        }
    }
    /* xw, xk, xv, xr, xg */
    gg_tensor *R = gg_mul_mat(g, llm_weight(c, E, E), x[3]);
    gg_tensor *K = gg_mul_mat(g, llm_weight(c, E, kd), x[1]);
    gg_tensor *V = gg_mul_mat(g, llm_weight(c, E, kd), x[2]);
    if (llm_has_tensor(c, "blk.%d.time_mix_receptance.bias", il, 0))
        R = gg_binary(g, GG_ADD, R, W1(c, E));
    if (llm_has_tensor(c, "blk.%d.time_mix_key.bias", il, 0))
        K = gg_binary(g, GG_ADD, K, W1(c, kd));
    if (llm_has_tensor(c, "blk.%d.time_mix_value.bias", il, 0))
        V = gg_binary(g, GG_ADD, V, W1(c, kd));
    gg_tensor *G = gg_unary(g, gg_mul_mat(g, llm_weight(c, E, E), x[4]));
    if (n_head_kv != 0 && n_head_kv != n_head) {
        K = gg_reshape_4d(g, K, hs, 1, n_head_kv, n_tokens);
        V = gg_reshape_4d(g, V, hs, 1, n_head_kv, n_tokens);
        K = gg_repeat_4d(g, K, hs, n_head / n_head_kv, n_head_kv, n_tokens);
        V = gg_repeat_4d(g, V, hs, n_head / n_head_kv, n_head_kv, n_tokens);
    }
    K = gg_reshape_3d(g, K, hs, n_head, n_tokens);
    V = gg_reshape_3d(g, V, hs, n_head, n_tokens);
    R = gg_reshape_3d(g, R, hs, n_head, n_tokens);
    gg_tensor *w = gg_mul_mat(g, llm_weight(c, dx, E),
                              gg_unary(g, gg_mul_mat(g, llm_weight(c, E, dx), x[0])));
    w = gg_binary(g, GG_ADD, w, W1(c, E));
    w = gg_unary(g, gg_unary(g, gg_unary(g, w)));
    w = gg_reshape_3d(g, w, hs, n_head, n_tokens);
    if (qrwkv)
        K = gg_binary(g, GG_SUB, K, gg_binary(g, GG_MUL, K, w));
    int64_t n_embd_s = llm_rs_n_embd_s(L);
    gg_tensor *s_l = llm_rs_state(c, n_embd_s);
    gg_tensor *state = llm_build_rs(c, &r->rs, s_l, n_embd_s, c->n_seqs, NULL, NULL);
    gg_tensor *out;
    if (qrwkv) {
        gg_tensor *src[5] = {K, V, R, w, state};
        out = wkv_op(c, K, state, src, 5);
    } else {
        gg_tensor *src[6] = {K, V, R, llm_weight(c, hs, n_head), w, state};
        out = wkv_op(c, K, state, src, 6);
    }
    cur = wkv_out(r, out, s_l, n_embd_s);
    cur = qrwkv ? gg_reshape_2d(g, cur, E, n_tokens) : wkv_ln(r, cur, il, 1);
    cur = gg_binary(g, GG_MUL, cur, G);
    cur = gg_mul_mat(g, llm_weight(c, E, E), cur);
    return gg_reshape_3d(g, cur, E, n_tokens / c->n_seqs, c->n_seqs);
}

/* the converter's low-rank sizes (conversion/rwkv.py), for a model
 * without a tensor list */
static int64_t rank7(int64_t n_embd, double e, double mult)
{
    double r = round(pow((double)n_embd, e) * mult / 32);
    return (r < 1 ? 1 : (int64_t)r) * 32;
}

/* W2 @ act(W1 @ x) with W2 {rank, n_embd} */
static gg_tensor *lora(llm *c, gg_tensor *x, int64_t rank, int act)
{
    gg_tensor *t = gg_mul_mat(c->g, llm_weight(c, c->n_embd, rank), x);
    if (act)
        t = gg_unary(c->g, t);
    return gg_mul_mat(c->g, llm_weight(c, rank, c->n_embd), t);
}

/* build_rwkv7_time_mix */
static gg_tensor *time_mix7(rwkv *r, gg_tensor *cur, gg_tensor *x_prev, int il)
{
    llm *c = r->c;
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t E = c->n_embd, n_tokens = c->n_tokens, hs = r->hs, hc = r->n_head;
    int64_t n_t = n_tokens / c->n_seqs;
    int64_t dr = llm_tensor_ne0(c, "blk.%d.time_mix_w2.weight", il, rank7(E, 0.5, 1.8));
    int64_t ir = llm_tensor_ne0(c, "blk.%d.time_mix_a2.weight", il, rank7(E, 0.5, 1.8));
    int64_t vr = llm_tensor_ne0(c, "blk.%d.time_mix_v2.weight", il, rank7(E, 0.5, 1.3));
    int64_t gr = llm_tensor_ne0(c, "blk.%d.time_mix_g2.weight", il, rank7(E, 0.8, 0.6));
    int gating = llm_has_tensor(c, "blk.%d.time_mix_g1.weight", il, 1) &&
                 llm_has_tensor(c, "blk.%d.time_mix_g2.weight", il, 1);

    gg_tensor *sx = gg_binary(g, GG_SUB, x_prev, cur);
    sx = gg_repeat_4d(g, sx, E, n_t, c->n_seqs, gating ? 6 : 5);
    int64_t ne[4] = {E, 1, 1, gating ? 6 : 5};
    gg_tensor *xxx = gg_binary(g, GG_ADD, gg_binary(g, GG_MUL, sx, gg_external(g, GG_F32, 4, ne)),
                               cur);
    gg_tensor *x[6];
    for (int i = 0; i < (gating ? 6 : 5); i++)
        x[i] = gg_view_2d(g, xxx, E, n_tokens, xxx->nb[1], (uint64_t)(i * E * n_tokens) * 4);
    /* xr, xw, xk, xv, xa, xg */
    gg_tensor *R = gg_mul_mat(g, llm_weight(c, E, E), x[0]);
    gg_tensor *w = gg_binary(g, GG_ADD, lora(c, x[1], dr, 1), W1(c, E));
    w = gg_unary(g, gg_scale(g, gg_unary(g, w)));
    gg_tensor *K = gg_mul_mat(g, llm_weight(c, E, E), x[2]);
    gg_tensor *V = gg_mul_mat(g, llm_weight(c, E, E), x[3]);
    if (!r->v_first) {
        r->v_first = V;
    } else {
        gg_tensor *mix = gg_unary(g, gg_binary(g, GG_ADD, lora(c, x[3], vr, 0), W1(c, E)));
        V = gg_binary(g, GG_ADD, V,
                      gg_binary(g, GG_MUL, gg_binary(g, GG_SUB, r->v_first, V), mix));
    }
    gg_tensor *G = gating ? lora(c, x[5], gr, 1) : NULL;
    gg_tensor *A = gg_unary(g, gg_binary(g, GG_ADD, lora(c, x[4], ir, 0), W1(c, E)));
    gg_tensor *kk = gg_reshape_3d(g, gg_binary(g, GG_MUL, K, W1(c, E)), hs, hc, n_tokens);
    kk = gg_dup_op(g, GG_L2_NORM, kk);
    gg_tensor *ka = gg_binary(g, GG_MUL, K, W1(c, E));
    K = gg_binary(g, GG_ADD, K, gg_binary(g, GG_SUB, gg_binary(g, GG_MUL, A, ka), ka));
    R = gg_reshape_3d(g, R, hs, hc, n_tokens);
    w = gg_reshape_3d(g, w, hs, hc, n_tokens);
    K = gg_reshape_3d(g, K, hs, hc, n_tokens);
    V = gg_reshape_3d(g, V, hs, hc, n_tokens);
    A = gg_reshape_3d(g, A, hs, hc, n_tokens);
    int64_t n_embd_s = llm_rs_n_embd_s(L);
    gg_tensor *s_l = llm_rs_state(c, n_embd_s);
    gg_tensor *state = llm_build_rs(c, &r->rs, s_l, n_embd_s, c->n_seqs, NULL, NULL);
    gg_tensor *src[7] = {R, w, K, V, gg_unary(g, kk), gg_binary(g, GG_MUL, kk, A), state};
    gg_tensor *out = wkv_op(c, K, state, src, 7);
    cur = wkv_out(r, out, s_l, n_embd_s);
    cur = wkv_ln(r, cur, il, !r->qwen);
    gg_tensor *rk = gg_binary(g, GG_MUL, gg_binary(g, GG_MUL, K, R),
                              gg_reshape_2d(g, W1(c, E), hs, hc));
    int64_t rne[4] = {1, rk->ne[1], rk->ne[2], rk->ne[3]};
    rk = gg_new_op(g, GG_SUM_ROWS, GG_F32, 4, rne, rk, NULL, NULL);
    cur = gg_binary(g, GG_ADD, cur, gg_reshape_2d(g, gg_binary(g, GG_MUL, V, rk), E, n_tokens));
    if (G)
        cur = gg_binary(g, GG_MUL, cur, G);
    cur = gg_mul_mat(g, llm_weight(c, E, E), cur);
    return gg_reshape_3d(g, cur, E, n_t, c->n_seqs);
}

/* RWKV's own channel mix (rwkv6 adds a receptance) */
static gg_tensor *channel_mix(rwkv *r, gg_tensor *cur, gg_tensor *x_prev, int il, int v7)
{
    llm *c = r->c;
    gg_ctx *g = c->g;
    int64_t E = c->n_embd;
    int64_t n_ff = llm_tensor_ne1(c, "blk.%d.channel_mix_key.weight", il, (int64_t)c->m->n_ff);
    gg_tensor *sx = gg_binary(g, GG_SUB, x_prev, cur);
    gg_tensor *xk = gg_binary(g, GG_ADD, gg_binary(g, GG_MUL, sx, W1(c, E)), cur);
    gg_tensor *R = NULL;
    if (!v7) {
        gg_tensor *xr = gg_binary(g, GG_ADD, gg_binary(g, GG_MUL, sx, W1(c, E)), cur);
        R = gg_unary(g, gg_mul_mat(g, llm_weight(c, E, E), xr));
    }
    gg_tensor *K = gg_dup_op(g, GG_SQR, gg_unary(g, gg_mul_mat(g, llm_weight(c, E, n_ff), xk)));
    gg_tensor *V = gg_mul_mat(g, llm_weight(c, n_ff, E), K);
    return v7 ? V : gg_binary(g, GG_MUL, R, V);
}

/* rwkv6.cpp and rwkv7.cpp: two token shifts, layer norms */
static void block_rwkv(rwkv *r, gg_tensor **inpL, int il, int v7)
{
    llm *c = r->c;
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t E = c->n_embd, n_t = c->n_tokens / c->n_seqs, n_seqs = c->n_seqs;
    int64_t n_embd_r = llm_rs_n_embd_r(L);
    gg_tensor *in = gg_reshape_3d(g, *inpL, E, n_t, n_seqs);
    gg_tensor *r_l = llm_rs_state(c, n_embd_r);
    gg_tensor *shift = llm_rwkv_shift_load(c, &r->rs, r_l, n_embd_r, 2);
    gg_tensor *att_shift = gg_view_3d(g, shift, E, 1, n_seqs, shift->nb[1], shift->nb[2], 0);
    gg_tensor *ffn_shift = gg_view_3d(g, shift, E, 1, n_seqs, shift->nb[1], shift->nb[2],
                                      (uint64_t)E * 4);
    gg_tensor *att_norm = norm(r, in, 0, "blk.%d.attn_norm.bias", il, 1);
    gg_tensor *x_prev = gg_concat(g, att_shift, gg_view_3d(g, att_norm, E, n_t - 1, n_seqs,
                                                           att_norm->nb[1], att_norm->nb[2], 0), 1);
    gg_tensor *cur = v7 ? time_mix7(r, att_norm, x_prev, il) : time_mix6(r, att_norm, x_prev, il);
    gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, in);
    gg_tensor *ffn_norm = norm(r, ffn_inp, 0, "blk.%d.attn_norm_2.bias", il, 1);
    x_prev = gg_concat(g, ffn_shift, gg_view_3d(g, ffn_norm, E, n_t - 1, n_seqs, ffn_norm->nb[1],
                                                ffn_norm->nb[2], 0), 1);
    uint64_t last = (uint64_t)((n_t - 1) * E) * 4;
    shift = gg_concat(g, gg_view_3d(g, att_norm, E, 1, n_seqs, att_norm->nb[1], att_norm->nb[2], last),
                      gg_view_3d(g, ffn_norm, E, 1, n_seqs, ffn_norm->nb[1], ffn_norm->nb[2], last),
                      1);
    gg_expand(g, llm_rwkv_shift_store(c, shift, r_l, n_embd_r, 2));
    ffn_inp = gg_reshape_2d(g, ffn_inp, E, c->n_tokens);
    ffn_norm = gg_reshape_2d(g, ffn_norm, E, c->n_tokens);
    x_prev = gg_reshape_2d(g, x_prev, E, c->n_tokens);
    if (il == c->n_layer - 1) {
        ffn_inp = gg_get_rows(g, ffn_inp, c->inp_out_ids);
        ffn_norm = gg_get_rows(g, ffn_norm, c->inp_out_ids);
        x_prev = gg_get_rows(g, x_prev, c->inp_out_ids);
    }
    cur = channel_mix(r, ffn_norm, x_prev, il, v7);
    *inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
}

/* rwkv6qwen2.cpp and arwkv7.cpp: one token shift, RMS norms, Qwen's FFN */
static void block_qwen(rwkv *r, gg_tensor **inpL, int il, int v7)
{
    llm *c = r->c;
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t E = c->n_embd, n_t = c->n_tokens / c->n_seqs, n_seqs = c->n_seqs;
    int64_t n_embd_r = llm_rs_n_embd_r(L);
    gg_tensor *in = gg_reshape_3d(g, *inpL, E, n_t, n_seqs);
    gg_tensor *r_l = llm_rs_state(c, n_embd_r);
    gg_tensor *shift = llm_rwkv_shift_load(c, &r->rs, r_l, n_embd_r, 1);
    gg_tensor *att_norm = norm(r, in, 1, "blk.%d.attn_norm.bias", il, 0);
    gg_tensor *x_prev = gg_concat(g, shift, gg_view_3d(g, att_norm, E, n_t - 1, n_seqs,
                                                       att_norm->nb[1], att_norm->nb[2], 0), 1);
    gg_tensor *cur = v7 ? time_mix7(r, att_norm, x_prev, il) : time_mix6(r, att_norm, x_prev, il);
    shift = gg_view_3d(g, att_norm, E, 1, n_seqs, att_norm->nb[1], att_norm->nb[2],
                       (uint64_t)((n_t - 1) * E) * 4);
    gg_expand(g, llm_rwkv_shift_store(c, shift, r_l, n_embd_r, 1));
    gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, in);
    ffn_inp = gg_reshape_2d(g, ffn_inp, E, c->n_tokens);
    if (il == c->n_layer - 1)
        ffn_inp = gg_get_rows(g, ffn_inp, c->inp_out_ids);
    cur = llm_norm_rms(c, ffn_inp, W1(c, E));
    cur = llm_ffn_par(c, cur, c->m->n_ff, 0, 0, 0);
    *inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
}

int arch_rwkv_build(llm *c)
{
    gg_ctx *g = c->g;
    if (!c->rs_size || c->rs_seq)
        return ARCH_NOT_MODELLED;
    rwkv r = {0};
    r.c = c;
    r.qwen = !strcmp(c->arch, "rwkv6qwen2") || !strcmp(c->arch, "arwkv7");
    int v7 = !strcmp(c->arch, "rwkv7") || !strcmp(c->arch, "arwkv7");
    r.hs = c->m->layers[0].d_state;
    if (!r.hs || c->n_embd % r.hs)
        return ARCH_NOT_MODELLED;
    r.n_head = c->n_embd / r.hs;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    if (!r.qwen)
        inpL = norm(&r, inpL, 0, "token_embd_norm.bias", 0, 1);
    llm_rs_inp_build(c, &r.rs);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        if (r.qwen)
            block_qwen(&r, &inpL, il, v7);
        else
            block_rwkv(&r, &inpL, il, v7);
    }
    gg_tensor *out = norm(&r, inpL, r.qwen, "output_norm.bias", 0, !r.qwen);
    gg_set_output(out);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), out);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}
