/* arch_gemma.c - the reserved graph of llama.cpp's Gemma decoders:
 * src/models/gemma.cpp (Gemma 1: one cache, MQA), gemma2.cpp (iSWA,
 * attention logits soft-capped, post-norms after attention and FFN, final
 * logits soft-capped), gemma3.cpp (iSWA when the GGUF has a window, RMS
 * norms on Q and K per head) and gemma4.cpp (below).  The token embeddings are scaled by
 * sqrt(n_embd), Q by the attention scale after RoPE, and the FFN is GeGLU. */
#include <string.h>

#include "arch.h"
#include "llm_iswa.h"

typedef struct gemma_style {
    const char *arch;
    int version;        /* 1, 2 or 3 */
} gemma_style;

static const gemma_style styles[] = {
    {"gemma", 1},
    {"gemma2", 2},
    {"gemma3", 3},
    {"gemma3n", 5},   /* after gemma4: AltUp, LAuReL, per-layer inputs */
    {"gemma4", 4},
};

static const gemma_style *find_style(const char *arch)
{
    for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++)
        if (!strcmp(styles[i].arch, arch))
            return &styles[i];
    return NULL;
}

int arch_gemma_handles(const char *arch)
{
    return find_style(arch) != NULL;
}

/* gemma4's sliding layers, own cache or shared */
static int gemma4_swa(const llm *c, int il)
{
    const kvp_layer *L = &c->m->layers[il];
    return L->kind == KVP_LAYER_SLIDING || (L->kind == KVP_LAYER_SHARED && L->window > 0);
}

/* the first layer of each kind with its own cache: the heads the cache
 * inputs are built for */
static const kvp_layer *gemma4_first(const llm *c, int kind)
{
    for (int il = 0; il < c->n_layer; il++)
        if ((int)c->m->layers[il].kind == kind)
            return &c->m->layers[il];
    return &c->m->layers[0];
}

/* gemma4.cpp: per-layer head sizes (full and sliding layers differ), Q, K
 * and V normed (V without a weight), the last layers reading an earlier
 * layer's cache, every token through every layer (the rows are picked
 * after the output norm, which is an output itself), and E2B/E4B's
 * per-layer input embeddings.  Not rebuilt: MoE layers (26B-A4B). */
/* build_inp_per_layer and project_per_layer_inputs (gemma3n, gemma4):
 * E2B/E4B's per-layer
 * token embeddings (their own token input, expanded at once) plus a
 * projection of the scaled embeddings, as [n_epl, tokens, layers] */
static gg_tensor *per_layer_inputs(llm *c, gg_tensor *inpL, int64_t n_epl)
{
    gg_ctx *g = c->g;
    int64_t nl = c->n_layer, T = c->n_tokens;
    gg_tensor *tokens = gg_input(gg_new_1d(g, GG_I32, T), "inp_tokens");
    gg_tensor *ipl = gg_get_rows(g, llm_weight(c, n_epl * nl, c->n_vocab), tokens);
    ipl = gg_scale(g, gg_reshape_3d(g, ipl, n_epl, nl, T));
    gg_expand(g, ipl);
    gg_tensor *proj = gg_mul_mat(g, llm_weight(c, c->n_embd, n_epl * nl), inpL);
    proj = gg_reshape_3d(g, gg_scale(g, proj), n_epl, nl, T);
    proj = llm_norm_rms(c, proj, llm_weight(c, n_epl, 1));
    ipl = gg_scale(g, gg_binary(g, GG_ADD, proj, ipl));
    return gg_cont(g, gg_permute(g, ipl, 0, 2, 1, 3));
}

static int gemma4_build(llm *c)
{
    gg_ctx *g = c->g;
    if (!c->swa.n_stream)
        return ARCH_NOT_MODELLED;
    for (int il = 0; il < c->n_layer; il++)
        if (llm_has_tensor(c, "blk.%d.ffn_gate_inp.weight", il, 0))
            return ARCH_NOT_MODELLED;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    inpL = gg_scale(g, inpL);
    llm_inp_pos(c, 1);
    const kvp_layer *Lf = gemma4_first(c, KVP_LAYER_FULL);
    const kvp_layer *Ls = gemma4_first(c, KVP_LAYER_SLIDING);
    llm_attn_inp(c, &c->kv, Lf->head_dim_k, Lf->head_dim_v);
    llm_attn_inp(c, &c->swa, Ls->head_dim_k, Ls->head_dim_v);
    llm_inp_out_ids(c);
    int64_t n_epl = llm_tensor_ne0(c, "per_layer_proj_norm.weight", 0, 0);
    gg_tensor *inp_per_layer = llm_has_tensor(c, "per_layer_token_embd.weight", 0, 0) && n_epl
        ? per_layer_inputs(c, inpL, n_epl) : NULL;
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        int64_t hd = L->head_dim_k, nh = L->n_head, nkv = L->n_kv_heads, T = c->n_tokens;
        int64_t e_q = hd * nh, e_kv = hd * nkv;
        int own_kv = L->kind != KVP_LAYER_SHARED;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        gg_tensor *qkv = NULL, *q;
        uint64_t es = gg_row_size(GG_F32, 1);
        if (llm_has_tensor(c, "blk.%d.attn_qkv.weight", il, 0)) {
            qkv = gg_mul_mat(g, llm_weight(c, c->n_embd, e_q + 2 * e_kv), cur);
            q = gg_cont(g, gg_view_2d(g, qkv, e_q, T, qkv->nb[1], 0));
        } else {
            q = gg_mul_mat(g, llm_weight(c, c->n_embd, e_q), cur);
        }
        q = gg_reshape_3d(g, q, hd, nh, T);
        q = llm_norm_rms(c, q, llm_weight(c, hd, 1));
        q = gg_rope(g, q, c->inp_pos, NULL);
        gg_tensor *wo = llm_weight(c, e_q, c->n_embd);
        if (own_kv) {
            gg_tensor *k, *v;
            if (qkv) {
                k = gg_cont(g, gg_view_2d(g, qkv, e_kv, T, qkv->nb[1], es * (uint64_t)e_q));
                v = gg_cont(g, gg_view_2d(g, qkv, e_kv, T, qkv->nb[1],
                                          es * (uint64_t)(e_q + e_kv)));
            } else {
                k = gg_mul_mat(g, llm_weight(c, c->n_embd, e_kv), cur);
                /* without v_proj, V is K's projection */
                v = llm_has_tensor(c, "blk.%d.attn_v.weight", il, 1)
                    ? gg_mul_mat(g, llm_weight(c, c->n_embd, e_kv), cur) : k;
            }
            k = gg_reshape_3d(g, k, hd, nkv, T);
            v = gg_reshape_3d(g, v, hd, nkv, T);
            k = llm_norm_rms(c, k, llm_weight(c, hd, 1));
            v = gg_rms_norm(g, v);
            k = gg_rope(g, k, c->inp_pos, NULL);
            cur = llm_attn_il(c, il, wo, q, k, v, NULL, NULL, 0);
        } else {
            cur = llm_attn_read(c, gemma4_swa(c, il), wo, q, hd, L->head_dim_v, nkv, NULL, 0);
        }
        cur = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
        gg_tensor *attn_out = gg_binary(g, GG_ADD, cur, inpL);
        cur = llm_norm_rms(c, attn_out, llm_weight(c, c->n_embd, 1));
        cur = llm_ffn_par(c, cur, llm_ff_width(c, il, (int64_t)c->m->n_ff), 0, 0, 0);
        cur = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
        cur = gg_binary(g, GG_ADD, cur, attn_out);
        if (inp_per_layer) {
            gg_tensor *pe_in = cur;
            cur = gg_unary(g, gg_mul_mat(g, llm_weight(c, c->n_embd, n_epl), cur));
            gg_tensor *slice = gg_view_2d(g, inp_per_layer, n_epl, T, es * (uint64_t)n_epl,
                                          es * (uint64_t)(il * n_epl * T));
            cur = gg_binary(g, GG_MUL, cur, slice);
            cur = gg_mul_mat(g, llm_weight(c, n_epl, c->n_embd), cur);
            cur = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
            cur = gg_binary(g, GG_ADD, pe_in, cur);
        }
        if (llm_has_tensor(c, "blk.%d.layer_output_scale.weight", il, 0))
            cur = gg_binary(g, GG_MUL, cur, llm_weight(c, 1, 1));
        inpL = cur;
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *embd = gg_get_rows(g, norm, c->inp_out_ids);
    gg_set_output(embd);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), embd);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

/* ---- gemma3n.cpp ---------------------------------------------------------- */

static gg_tensor *slice2d(gg_ctx *g, gg_tensor *x, int64_t idx)
{
    return gg_view_2d(g, x, x->ne[0], x->ne[1], gg_row_size(x->type, x->ne[0]),
                      (uint64_t)(idx * x->ne[0] * x->ne[1]) * gg_row_size(x->type, 1));
}

/* x without its first [n_embd, tokens] slice */
static gg_tensor *slice_rest(gg_ctx *g, gg_tensor *x, int64_t n_altup)
{
    uint64_t es = gg_row_size(x->type, 1);
    return gg_view_3d(g, x, x->ne[0], x->ne[1], n_altup - 1, es * (uint64_t)x->ne[0],
                      es * (uint64_t)(x->ne[0] * x->ne[1]), es * (uint64_t)(x->ne[0] * x->ne[1]));
}

static gg_tensor *sum_rows(gg_ctx *g, gg_tensor *x)
{
    int64_t ne[4] = {1, x->ne[1], x->ne[2], x->ne[3]};
    return gg_new_op(g, GG_SUM_ROWS, x->type, 4, ne, x, NULL, NULL);
}

/* calc_magnitude: sqrt(sum_rows(x^2)) */
static gg_tensor *magnitude(gg_ctx *g, gg_tensor *x)
{
    return gg_dup_op(g, GG_SQRT, sum_rows(g, gg_dup_op(g, GG_SQR, x)));
}

/* gaussian_topk: relu(x - (mean + k std)) */
static gg_tensor *gaussian_topk(gg_ctx *g, gg_tensor *x)
{
    int64_t ne[4] = {1, x->ne[1], x->ne[2], x->ne[3]};
    gg_tensor *mean = gg_new_op(g, GG_OTHER, GG_F32, 4, ne, x, NULL, NULL);   /* ggml_mean */
    gg_tensor *sq = gg_dup_op(g, GG_SQR, gg_binary(g, GG_SUB, x, mean));
    gg_tensor *std = gg_dup_op(g, GG_SQRT, gg_scale(g, sum_rows(g, sq)));
    gg_tensor *cutoff = gg_binary(g, GG_ADD, mean, gg_scale(g, std));
    return gg_unary(g, gg_binary(g, GG_SUB, x, cutoff));
}

/* altup_compute_router_modalities: [n_altup, tokens] */
static gg_tensor *altup_router(llm *c, gg_tensor *x, int64_t n_altup)
{
    gg_tensor *r = gg_scale(c->g, llm_norm_rms(c, x, llm_weight(c, c->n_embd, 1)));
    return gg_unary(c->g, gg_mul_mat(c->g, llm_weight(c, c->n_embd, n_altup), r));
}

static gg_tensor *altup_predict(llm *c, gg_tensor *cur, int64_t n_altup)
{
    gg_ctx *g = c->g;
    gg_tensor *modalities = altup_router(c, slice2d(g, cur, 0), n_altup);
    gg_tensor *coefs = gg_mul_mat(g, llm_weight(c, n_altup, n_altup * n_altup), modalities);
    coefs = gg_reshape_3d(g, coefs, n_altup, n_altup, c->n_tokens);
    gg_tensor *perm = gg_cont(g, gg_permute(g, cur, 1, 2, 0, 3));
    gg_tensor *pred = gg_mul_mat(g, perm, coefs);
    pred = gg_cont(g, gg_permute(g, pred, 0, 2, 1, 3));
    return gg_binary(g, GG_ADD, pred, cur);
}

static gg_tensor *altup_correct(llm *c, gg_tensor *pred, gg_tensor *activated, int64_t n_altup)
{
    gg_ctx *g = c->g;
    gg_tensor *modalities = altup_router(c, activated, n_altup);
    gg_tensor *innovation = gg_binary(g, GG_SUB, activated, slice2d(g, pred, 0));
    gg_tensor *coefs = gg_scale(g, gg_mul_mat(g, llm_weight(c, n_altup, n_altup), modalities));
    coefs = gg_cont_4d(g, gg_transpose(g, coefs), 1, c->n_tokens, n_altup, 1);
    innovation = gg_repeat_4d(g, innovation, c->n_embd, c->n_tokens, n_altup, 1);
    gg_tensor *corrected = gg_binary(g, GG_MUL, innovation, coefs);
    return gg_binary(g, GG_ADD, corrected, pred);
}

/* gemma3n.cpp: AltUp (n_altup copies of the stream, predicted and
 * corrected around each layer), LAuReL beside attention, the first layers'
 * sparse gate, per-layer inputs, the last layers reading an earlier
 * layer's cache; every token through every layer */
static int gemma3n_build(llm *c)
{
    gg_ctx *g = c->g;
    if (!c->swa.n_stream)
        return ARCH_NOT_MODELLED;
    int64_t T = c->n_tokens, E = c->n_embd;
    int64_t n_altup = llm_tensor_ne0(c, "blk.%d.altup_correct_coef.weight", 0, 4);
    int64_t n_epl = llm_tensor_ne0(c, "per_layer_proj_norm.weight", 0, 256);
    int64_t rank = llm_tensor_ne0(c, "blk.%d.laurel_r.weight", 0, 64);
    gg_tensor *inpL = llm_inp_embd(c, E, 0);
    inpL = gg_scale(g, inpL);
    llm_inp_pos(c, 1);
    const kvp_layer *L0 = &c->m->layers[0];
    llm_iswa_inp(c, L0->head_dim_k, L0->head_dim_v);
    gg_tensor *ipl = per_layer_inputs(c, inpL, n_epl);
    {
        gg_tensor *target = magnitude(g, inpL);
        gg_tensor *rep = gg_repeat_4d(g, inpL, E, T, n_altup - 1, 1);
        gg_tensor *added = gg_mul_mat(g, llm_weight_3d(c, E, E, n_altup - 1), rep);
        gg_tensor *newm = magnitude(g, added);
        added = gg_binary(g, GG_DIV, gg_binary(g, GG_MUL, added, target), newm);
        inpL = gg_concat(g, inpL, added, 2);
    }
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        int64_t hd = L->head_dim_k, nh = L->n_head, nkv = L->n_kv_heads;
        gg_tensor *pred = altup_predict(c, inpL, n_altup);
        gg_tensor *active = slice2d(g, pred, 0);
        gg_tensor *cur = llm_norm_rms(c, active, llm_weight(c, E, 1));
        /* laurel */
        gg_tensor *lau = gg_mul_mat(g, llm_weight(c, E, rank), cur);
        lau = gg_mul_mat(g, llm_weight(c, rank, E), lau);
        lau = llm_norm_rms(c, lau, llm_weight(c, E, 1));
        lau = gg_binary(g, GG_ADD, lau, cur);
        gg_tensor *wo = llm_weight(c, hd * nh, E);
        if (L->kind != KVP_LAYER_SHARED) {
            gg_tensor *q, *k, *v;
            llm_qkv(c, cur, il, 0, 0, &q, &k, &v);
            q = llm_norm_rms(c, q, llm_weight(c, hd, 1));
            k = llm_norm_rms(c, k, llm_weight(c, hd, 1));
            v = gg_rms_norm(g, v);
            q = gg_rope(g, q, c->inp_pos, NULL);
            k = gg_rope(g, k, c->inp_pos, NULL);
            cur = llm_attn_il(c, il, wo, q, k, v, NULL, NULL, 0);
        } else {
            gg_tensor *q;
            if (llm_has_tensor(c, "blk.%d.attn_qkv.weight", il, 0)) {
                gg_tensor *qkv = gg_mul_mat(g, llm_weight(c, E, hd * (nh + 2 * nkv)), cur);
                q = gg_cont(g, gg_view_2d(g, qkv, hd * nh, T, qkv->nb[1], 0));
            } else {
                q = gg_mul_mat(g, llm_weight(c, E, hd * nh), cur);
            }
            q = gg_reshape_3d(g, q, hd, nh, T);
            q = llm_norm_rms(c, q, llm_weight(c, hd, 1));
            q = gg_rope(g, q, c->inp_pos, NULL);
            cur = llm_attn_read(c, L->window > 0, wo, q, hd, L->head_dim_v, nkv, NULL, 0);
        }
        cur = llm_norm_rms(c, cur, llm_weight(c, E, 1));
        cur = gg_binary(g, GG_ADD, cur, active);
        gg_tensor *attn_laurel = gg_scale(g, gg_binary(g, GG_ADD, cur, lau));
        cur = llm_norm_rms(c, attn_laurel, llm_weight(c, E, 1));
        int64_t n_ff = llm_ff_width(c, il, (int64_t)c->m->n_ff);
        gg_tensor *up = gg_mul_mat(g, llm_weight(c, E, n_ff), cur);
        gg_tensor *gate = gg_mul_mat(g, llm_weight(c, E, n_ff), cur);
        if (il < 10)   /* n_layer_sparsity */
            gate = gaussian_topk(g, gate);
        gate = gg_unary(g, gate);
        cur = gg_binary(g, GG_MUL, up, gate);
        cur = gg_mul_mat(g, llm_weight(c, n_ff, E), cur);
        cur = llm_norm_rms(c, cur, llm_weight(c, E, 1));
        gg_tensor *afl = gg_binary(g, GG_ADD, cur, attn_laurel);
        gg_tensor *corrected = altup_correct(c, pred, afl, n_altup);
        gg_tensor *fp = gg_binary(g, GG_MUL, slice2d(g, corrected, 0), llm_weight(c, E, 1));
        fp = gg_unary(g, gg_mul_mat(g, llm_weight(c, E, n_epl), fp));
        fp = gg_binary(g, GG_MUL, fp, slice2d(g, ipl, il));
        fp = gg_mul_mat(g, llm_weight(c, n_epl, E), fp);
        fp = llm_norm_rms(c, fp, llm_weight(c, E, 1));
        gg_tensor *tmp = gg_binary(g, GG_ADD, slice_rest(g, corrected, n_altup), fp);
        inpL = gg_concat(g, slice2d(g, corrected, 0), tmp, 2);
    }
    gg_tensor *target = magnitude(g, slice2d(g, inpL, 0));
    gg_tensor *unembd = gg_mul_mat(g, llm_weight_3d(c, E, E, n_altup - 1),
                                   slice_rest(g, inpL, n_altup));
    gg_tensor *newm = magnitude(g, unembd);
    unembd = gg_binary(g, GG_DIV, gg_binary(g, GG_MUL, unembd, target), newm);
    gg_tensor *cur = slice2d(g, inpL, 0);
    for (int64_t i = 0; i < n_altup - 1; i++)
        cur = gg_binary(g, GG_ADD, cur, slice2d(g, unembd, i));
    cur = gg_scale(g, cur);
    llm_inp_out_ids(c);
    cur = gg_get_rows(g, cur, c->inp_out_ids);
    cur = llm_norm_rms(c, cur, llm_weight(c, E, 1));
    gg_set_output(cur);
    cur = gg_mul_mat(g, llm_weight(c, E, c->n_vocab), cur);
    cur = gg_scale(g, gg_unary(g, gg_scale(g, cur)));
    gg_set_output(cur);
    gg_expand(g, cur);
    return 0;
}

int arch_gemma_build(llm *c)
{
    const gemma_style *s = find_style(c->arch);
    if (!s)
        return ARCH_NOT_MODELLED;
    if (s->version == 4)
        return gemma4_build(c);
    if (s->version == 5)
        return gemma3n_build(c);
    gg_ctx *g = c->g;
    int iswa = s->version >= 2 && c->swa.n_stream > 0;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    inpL = gg_scale(g, inpL);
    llm_inp_pos(c, 1);
    const kvp_layer *L0 = &c->m->layers[0];
    if (iswa)
        llm_iswa_inp(c, L0->head_dim_k, L0->head_dim_v);
    else
        llm_attn_inp(c, &c->kv, L0->head_dim_k, L0->head_dim_v);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        int64_t hd = L->head_dim_k;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        gg_tensor *q, *k, *v;
        llm_qkv(c, cur, il, 0, 0, &q, &k, &v);
        if (s->version == 3)
            q = llm_norm_rms(c, q, llm_weight(c, hd, 1));
        q = gg_rope(g, q, c->inp_pos, NULL);
        if (s->version == 3)
            k = llm_norm_rms(c, k, llm_weight(c, hd, 1));
        k = gg_rope(g, k, c->inp_pos, NULL);
        q = gg_scale(g, q);
        cur = llm_attn_il(c, il, llm_weight(c, L->head_dim_v * L->n_head, c->n_embd), q, k, v,
                          NULL, NULL, s->version == 2);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpL = gg_get_rows(g, inpL, c->inp_out_ids);
        }
        if (s->version >= 2)
            cur = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
        gg_tensor *sa_out = gg_binary(g, GG_ADD, cur, inpL);
        cur = llm_norm_rms(c, sa_out, llm_weight(c, c->n_embd, 1));
        cur = llm_ffn_par(c, cur, c->m->n_ff, 0, 0, 0);
        if (s->version >= 2)
            cur = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
        inpL = gg_binary(g, GG_ADD, cur, sa_out);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    if (s->version == 2) {
        /* final soft-capping: the scales and tanh run in place */
        logits = gg_scale(g, logits);
        logits = gg_unary(g, logits);
        logits = gg_scale(g, logits);
    }
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}
