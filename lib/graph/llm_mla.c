/* llm_mla.c - multi-head latent attention (llm_mla.h): the K-only cache
 * inputs, its store and read (llama_kv_cache::cpy_k / get_k), build_attn
 * for llm_graph_input_attn_k, build_attn_mha with v_mla, and deepseek2's
 * absorbed attention block. */
#include "llm_mla.h"

void mla_attn_inp_k(llm *c, llm_cache *kv)
{
    kv->k_idxs = gg_input(gg_new_1d(c->g, GG_I64, c->n_tokens), "attn_inp_k_idxs");
    kv->v_idxs = NULL;
    kv->mask = gg_input(gg_new_4d(c->g, c->fa ? GG_F16 : GG_F32, kv->n_kv,
                                  c->n_tokens / kv->n_stream, 1, kv->n_stream),
                        "attn_inp_kq_mask");
    kv->k_rot = kv->v_rot = NULL;
}

/* llama_kv_cache::cpy_k */
static gg_tensor *cpy_k(llm *c, llm_cache *kv, gg_tensor *kc, gg_tensor *k_cur)
{
    int64_t n_embd_gqa = k_cur->ne[0] * k_cur->ne[1];
    gg_tensor *cur = gg_view_2d(c->g, k_cur, n_embd_gqa, k_cur->ne[2], k_cur->nb[2], 0);
    if (kv->n_stream > 1)
        kc = gg_reshape_2d(c->g, kc, n_embd_gqa, kv->kv_size * kv->n_stream);
    return gg_set_rows(c->g, kc, cur, kv->k_idxs);
}

/* llama_kv_cache::get_k: every cell of every stream */
static gg_tensor *get_k(llm *c, llm_cache *kv, gg_tensor *kc, int64_t head, int64_t n_head_kv)
{
    uint64_t row = gg_row_size(kc->type, kc->ne[0]);
    return gg_view_4d(c->g, kc, head, n_head_kv, kv->n_kv, kv->n_stream,
                      gg_row_size(kc->type, head), row, row * (uint64_t)kv->kv_size, 0);
}

gg_tensor *mla_attn_mha(llm *c, gg_tensor *q, gg_tensor *k, gg_tensor *v, gg_tensor *kq_b,
                        gg_tensor *mask, gg_tensor *sinks, gg_tensor *v_mla)
{
    gg_ctx *g = c->g;
    int v_trans = v->nb[1] > v->nb[2];
    int64_t n_stream = k->ne[3];
    q = gg_view_4d(g, q, q->ne[0], q->ne[1], q->ne[2] / n_stream, n_stream, q->nb[1], q->nb[2],
                   q->nb[3] / (uint64_t)n_stream, 0);
    q = gg_permute(g, q, 0, 2, 1, 3);
    k = gg_permute(g, k, 0, 2, 1, 3);
    v = gg_permute(g, v, 0, 2, 1, 3);
    gg_tensor *cur;
    if (c->fa && !kq_b) {
        if (v_trans)
            v = gg_transpose(g, v);
        if (k->type == GG_F32)
            k = gg_cast(g, k, GG_F16);
        if (v->type == GG_F32)
            v = gg_cast(g, v, GG_F16);
        cur = gg_flash_attn_ext(g, q, k, v, mask, sinks);
        if (v_mla) {
            /* as a matrix-matrix product with the tokens in dimension 1 */
            cur = gg_permute(g, cur, 0, 2, 1, 3);
            cur = gg_mul_mat(g, v_mla, cur);
            cur = gg_permute(g, cur, 0, 2, 1, 3);
            cur = gg_cont(g, cur);
        }
        cur = gg_reshape_2d(g, cur, cur->ne[0] * cur->ne[1], cur->ne[2] * cur->ne[3]);
    } else {
        gg_tensor *kq = gg_mul_mat(g, k, q);
        if (kq_b)
            kq = gg_binary(g, GG_ADD, kq, kq_b);
        kq = gg_soft_max_ext(g, kq, mask, sinks);
        if (!v_trans)
            v = gg_cont(g, gg_transpose(g, v));
        gg_tensor *kqv = gg_mul_mat(g, v, kq);
        if (v_mla)
            kqv = gg_mul_mat(g, v_mla, kqv);
        cur = gg_permute(g, kqv, 0, 2, 1, 3);
        cur = gg_cont_4d(g, cur, cur->ne[0] * cur->ne[1], cur->ne[2] * cur->ne[3], 1, 1);
    }
    gg_expand(g, cur);
    return cur;
}

gg_tensor *mla_attn_k(llm *c, llm_cache *kv, gg_tensor *wo, gg_tensor *q, gg_tensor *k,
                      gg_tensor *v, gg_tensor *v_mla)
{
    gg_ctx *g = c->g;
    int64_t head_k = k->ne[0], n_head_kv = k->ne[1];
    gg_expand(g, q);
    gg_expand(g, v);
    gg_expand(g, k);
    int64_t ne[3] = {head_k * n_head_kv, kv->kv_size, kv->n_stream};
    gg_tensor *kc = gg_external(g, kv->type_k, 3, ne);
    gg_expand(g, cpy_k(c, kv, kc, k));
    gg_tensor *kr = get_k(c, kv, kc, head_k, n_head_kv);
    gg_tensor *vr = gg_view_4d(g, kr, v->ne[0], kr->ne[1], kr->ne[2], kr->ne[3], kr->nb[1],
                               kr->nb[2], kr->nb[3], 0);
    gg_tensor *cur = mla_attn_mha(c, q, kr, vr, NULL, kv->mask, NULL, v_mla);
    if (wo)
        cur = gg_mul_mat(g, wo, cur);
    return cur;
}

int mla_layer_dims(const llm *c, const kvp_layer *L, mla_dims *d)
{
    if (L->kind != KVP_LAYER_MLA || !L->mla_k_head_dim || !L->mla_v_head_dim ||
        !L->mla_rope_dim || L->head_dim_k <= L->mla_rope_dim ||
        L->mla_k_head_dim <= L->mla_rope_dim)
        return 0;
    d->n_head = L->n_head;
    d->head_k = L->mla_k_head_dim;
    d->head_v = L->mla_v_head_dim;
    d->rope = L->mla_rope_dim;
    d->kv_lora_rank = (int64_t)L->head_dim_k - L->mla_rope_dim;
    d->q_lora_rank = c->m->q_lora_rank;
    return 1;
}

gg_tensor *mla_self_attn(llm *c, llm_cache *kv, const mla_dims *d, gg_tensor *cur,
                         gg_tensor *attn_scale)
{
    gg_ctx *g = c->g;
    int64_t nt = c->n_tokens, nh = d->n_head, nope = d->head_k - d->rope;
    gg_tensor *q;
    if (d->q_lora_rank) {
        q = gg_mul_mat(g, llm_weight(c, c->n_embd, d->q_lora_rank), cur);
        q = llm_norm_rms(c, q, llm_weight(c, d->q_lora_rank, 1));
        q = gg_mul_mat(g, llm_weight(c, d->q_lora_rank, nh * d->head_k), q);
    } else {
        q = gg_mul_mat(g, llm_weight(c, c->n_embd, nh * d->head_k), cur);
    }
    q = gg_reshape_3d(g, q, d->head_k, nh, nt);

    int64_t latent = d->kv_lora_rank + d->rope;
    gg_tensor *kv_cmpr_pe = gg_mul_mat(g, llm_weight(c, c->n_embd, latent), cur);
    uint64_t row = gg_row_size(kv_cmpr_pe->type, latent);
    gg_tensor *kv_cmpr = gg_view_2d(g, kv_cmpr_pe, d->kv_lora_rank, nt, row, 0);
    gg_tensor *k_pe = gg_view_3d(g, kv_cmpr_pe, d->rope, 1, nt, row, row,
                                 gg_row_size(kv_cmpr_pe->type, d->kv_lora_rank));
    k_pe = gg_rope(g, k_pe, c->inp_pos, NULL);
    kv_cmpr = llm_norm_rms(c, kv_cmpr, llm_weight(c, d->kv_lora_rank, 1));

    gg_tensor *q_nope = gg_view_3d(g, q, nope, nh, nt, q->nb[1], q->nb[2], 0);
    gg_tensor *q_pe = gg_view_3d(g, q, d->rope, nh, nt, q->nb[1], q->nb[2],
                                 gg_row_size(q->type, nope));
    q_pe = gg_rope(g, q_pe, c->inp_pos, NULL);
    q_nope = gg_permute(g, q_nope, 0, 2, 1, 3);
    gg_tensor *q_abs = gg_mul_mat(g, llm_weight_3d(c, nope, d->kv_lora_rank, nh), q_nope);
    q_abs = gg_permute(g, q_abs, 0, 2, 1, 3);
    gg_tensor *Q = gg_concat(g, q_abs, q_pe, 0);
    kv_cmpr = gg_reshape_3d(g, kv_cmpr, d->kv_lora_rank, 1, nt);
    gg_tensor *K = gg_concat(g, kv_cmpr, k_pe, 0);
    gg_tensor *V = kv_cmpr;
    if (attn_scale)
        Q = gg_binary(g, GG_MUL, Q, attn_scale);
    return mla_attn_k(c, kv, llm_weight(c, nh * d->head_v, c->n_embd), Q, K, V,
                      llm_weight_3d(c, d->kv_lora_rank, d->head_v, nh));
}

gg_tensor *mla_self_attn_mha(llm *c, llm_cache *kv, const mla_dims *d, gg_tensor *cur,
                             gg_tensor *attn_scale)
{
    gg_ctx *g = c->g;
    int64_t nt = c->n_tokens, nh = d->n_head, nope = d->head_k - d->rope;
    gg_tensor *q;
    if (d->q_lora_rank) {
        q = gg_mul_mat(g, llm_weight(c, c->n_embd, d->q_lora_rank), cur);
        q = llm_norm_rms(c, q, llm_weight(c, d->q_lora_rank, 1));
        q = gg_mul_mat(g, llm_weight(c, d->q_lora_rank, nh * d->head_k), q);
    } else {
        q = gg_mul_mat(g, llm_weight(c, c->n_embd, nh * d->head_k), cur);
    }
    q = gg_reshape_3d(g, q, d->head_k, nh, nt);

    int64_t latent = d->kv_lora_rank + d->rope;
    gg_tensor *kv_cmpr_pe = gg_mul_mat(g, llm_weight(c, c->n_embd, latent), cur);
    uint64_t row = gg_row_size(kv_cmpr_pe->type, latent);
    gg_tensor *kv_cmpr = gg_view_2d(g, kv_cmpr_pe, d->kv_lora_rank, nt, row, 0);
    gg_tensor *k_pe = gg_view_3d(g, kv_cmpr_pe, d->rope, 1, nt, row, row,
                                 gg_row_size(kv_cmpr_pe->type, d->kv_lora_rank));
    k_pe = gg_rope(g, k_pe, c->inp_pos, NULL);
    kv_cmpr = llm_norm_rms(c, kv_cmpr, llm_weight(c, d->kv_lora_rank, 1));

    gg_tensor *kvx = gg_mul_mat(g, llm_weight(c, d->kv_lora_rank, nh * (nope + d->head_v)),
                                kv_cmpr);
    uint64_t r2 = gg_row_size(kvx->type, nope + d->head_v);
    gg_tensor *k_nope = gg_view_3d(g, kvx, nope, nh, nt, r2, r2 * (uint64_t)nh, 0);
    gg_tensor *V = gg_view_3d(g, kvx, d->head_v, nh, nt, r2, r2 * (uint64_t)nh,
                              gg_row_size(kvx->type, nope));
    V = gg_cont(g, V);
    gg_tensor *Q = gg_rope(g, q, c->inp_pos, NULL);   /* the trailing rope dims only */
    gg_tensor *K = gg_concat(g, k_nope, gg_repeat_4d(g, k_pe, d->rope, nh, nt, 1), 0);
    if (attn_scale)
        Q = gg_binary(g, GG_MUL, Q, attn_scale);
    return llm_attn(c, kv, llm_weight(c, nh * d->head_v, c->n_embd), Q, K, V, NULL, NULL, 0);
}

/* ---- DeepSeek Sparse Attention (llama_kv_cache_dsa) ---------------------- */

/* build_attn_inp_k_dsa: the latent cache's K indices and mask, then the
 * indexer cache's, whose mask is f16 (the fused lightning indexer the CPU
 * runs), and the indexer keys' Hadamard rotation */
void dsa_attn_inp(llm *c, llm_cache *kv, llm_cache *idx, int64_t idx_head)
{
    mla_attn_inp_k(c, kv);
    idx->k_idxs = gg_input(gg_new_1d(c->g, GG_I64, c->n_tokens), "attn_inp_k_idxs");
    idx->v_idxs = NULL;
    idx->mask = gg_input(gg_new_4d(c->g, GG_F16, idx->n_kv, c->n_tokens / idx->n_stream, 1,
                                   idx->n_stream), "attn_inp_kq_mask");
    int64_t n = 64;
    do
        n *= 2;
    while (idx_head % n == 0);
    idx->k_rot = gg_input(gg_new_2d(c->g, GG_F32, n / 2, n / 2), "attn_inp_k_rot");
    idx->v_rot = NULL;
}

gg_tensor *dsa_indexer(llm *c, llm_cache *idx, const dsa_dims *d, gg_tensor *qr,
                       gg_tensor *cur)
{
    gg_ctx *g = c->g;
    int64_t nt = c->n_tokens, hd = d->head, nh = d->n_head;
    gg_tensor *q = gg_mul_mat(g, llm_weight(c, qr->ne[0], hd * nh), qr);
    q = gg_reshape_3d(g, q, hd, nh, nt);
    q = gg_rope(g, q, c->inp_pos, NULL);
    gg_tensor *k = gg_mul_mat(g, llm_weight(c, c->n_embd, hd), cur);
    k = llm_norm(c, k, llm_weight(c, hd, 1), llm_weight(c, hd, 1));
    k = gg_reshape_3d(g, k, hd, 1, nt);
    k = gg_rope(g, k, c->inp_pos, NULL);
    if (!d->no_rot) {
        q = gg_mul_mat(g, idx->k_rot, q);
        k = gg_mul_mat(g, idx->k_rot, k);
    }
    int64_t ne[3] = {hd, idx->kv_size, idx->n_stream};
    gg_tensor *kc = gg_external(g, idx->type_k, 3, ne);
    gg_expand(g, cpy_k(c, idx, kc, k));
    gg_tensor *w = gg_mul_mat(g, llm_weight(c, c->n_embd, nh), cur);
    k = get_k(c, idx, kc, hd, 1);
    int64_t ns = k->ne[3];
    q = gg_view_4d(g, q, q->ne[0], q->ne[1], q->ne[2] / ns, ns, q->nb[1], q->nb[2],
                   q->nb[3] / (uint64_t)ns, 0);
    w = gg_view_4d(g, w, w->ne[0], w->ne[1] / ns, w->ne[2], ns, w->nb[1],
                   w->nb[2] / (uint64_t)ns, w->nb[3] / (uint64_t)ns, 0);
    w = gg_scale(g, w);
    /* ggml_lightning_indexer: the scores [n_kv, tokens, 1, streams] */
    int64_t sne[4] = {k->ne[2], q->ne[2], 1, q->ne[3]};
    gg_tensor *score = gg_new_op(g, GG_OTHER, GG_F32, 4, sne, q, k, w);
    score->src[3] = idx->mask;
    int64_t n_top_k = score->ne[0] < d->top_k ? score->ne[0] : d->top_k;
    int64_t tne[4] = {n_top_k, score->ne[1], score->ne[2], score->ne[3]};
    gg_tensor *top_k = gg_new_op(g, GG_TOP_K, GG_I32, 4, tne, score, NULL, NULL);
    return gg_cont(g, top_k);
}

gg_tensor *dsa_attn_k(llm *c, llm_cache *kv, gg_tensor *wo, gg_tensor *q, gg_tensor *k,
                      gg_tensor *v, gg_tensor *v_mla, gg_tensor *top_k)
{
    gg_ctx *g = c->g;
    int64_t head_k = k->ne[0], n_head_kv = k->ne[1];
    gg_expand(g, q);
    gg_expand(g, v);
    gg_expand(g, k);
    int64_t ne[3] = {head_k * n_head_kv, kv->kv_size, kv->n_stream};
    gg_tensor *kc = gg_external(g, kv->type_k, 3, ne);
    gg_expand(g, cpy_k(c, kv, kc, k));

    gg_tensor *mask = kv->mask;
    gg_tensor *all = gg_dup_op(g, GG_FILL, mask);   /* -INFINITY */
    all = gg_view_4d(g, all, 1, all->ne[0], all->ne[1], all->ne[3], all->nb[0], all->nb[1],
                     all->nb[2], 0);
    gg_tensor *top3 = gg_view_4d(g, top_k, top_k->ne[0], top_k->ne[1], top_k->ne[3], 1,
                                 top_k->nb[1], top_k->nb[2],
                                 (uint64_t)top_k->ne[3] * top_k->nb[3], 0);
    gg_tensor *zeros = gg_new_4d(g, GG_F32, 1, top3->ne[0], top3->ne[1], top3->ne[2]);
    zeros = gg_dup_op(g, GG_FILL, zeros);
    gg_tensor *m = gg_set_rows(g, all, zeros, top3);
    m = gg_view_4d(g, m, m->ne[1], m->ne[2], 1, m->ne[3], m->nb[2], m->nb[3], m->nb[3], 0);
    m = gg_binary(g, GG_ADD, m, mask);

    gg_tensor *kr = get_k(c, kv, kc, head_k, n_head_kv);
    gg_tensor *vr = gg_view_4d(g, kr, v->ne[0], kr->ne[1], kr->ne[2], kr->ne[3], kr->nb[1],
                               kr->nb[2], kr->nb[3], 0);
    gg_tensor *cur = mla_attn_mha(c, q, kr, vr, NULL, m, NULL, v_mla);
    if (wo)
        cur = gg_mul_mat(g, wo, cur);
    return cur;
}

gg_tensor *dsa_self_attn(llm *c, const mla_dims *d, const dsa_dims *x, gg_tensor *cur,
                         gg_tensor **top_k)
{
    gg_ctx *g = c->g;
    int64_t nt = c->n_tokens, nh = d->n_head, nope = d->head_k - d->rope;
    gg_tensor *qr = gg_mul_mat(g, llm_weight(c, c->n_embd, d->q_lora_rank), cur);
    qr = llm_norm_rms(c, qr, llm_weight(c, d->q_lora_rank, 1));
    if (x)   /* a full indexer layer: its own top-k, else the previous one's */
        *top_k = dsa_indexer(c, &c->idx, x, qr, cur);
    gg_tensor *q = gg_mul_mat(g, llm_weight(c, d->q_lora_rank, nh * d->head_k), qr);
    uint64_t qrow = gg_row_size(q->type, d->head_k);
    gg_tensor *q_nope = gg_view_3d(g, q, nope, nh, nt, qrow, qrow * (uint64_t)nh, 0);
    gg_tensor *q_pe = gg_view_3d(g, q, d->rope, nh, nt, qrow, qrow * (uint64_t)nh,
                                 gg_row_size(q->type, nope));
    int64_t latent = d->kv_lora_rank + d->rope;
    gg_tensor *kv_cmpr_pe = gg_mul_mat(g, llm_weight(c, c->n_embd, latent), cur);
    uint64_t row = gg_row_size(kv_cmpr_pe->type, latent);
    gg_tensor *kv_cmpr = gg_view_2d(g, kv_cmpr_pe, d->kv_lora_rank, nt, row, 0);
    gg_tensor *k_pe = gg_view_3d(g, kv_cmpr_pe, d->rope, 1, nt, row, row,
                                 gg_row_size(kv_cmpr_pe->type, d->kv_lora_rank));
    q_pe = gg_rope(g, q_pe, c->inp_pos, NULL);
    k_pe = gg_rope(g, k_pe, c->inp_pos, NULL);
    kv_cmpr = llm_norm_rms(c, kv_cmpr, llm_weight(c, d->kv_lora_rank, 1));
    q_nope = gg_permute(g, q_nope, 0, 2, 1, 3);
    gg_tensor *q_abs = gg_mul_mat(g, llm_weight_3d(c, nope, d->kv_lora_rank, nh), q_nope);
    q_abs = gg_permute(g, q_abs, 0, 2, 1, 3);
    gg_tensor *Q = gg_concat(g, q_abs, q_pe, 0);
    kv_cmpr = gg_reshape_3d(g, kv_cmpr, d->kv_lora_rank, 1, nt);
    gg_tensor *K = gg_concat(g, kv_cmpr, k_pe, 0);
    return dsa_attn_k(c, &c->kv, llm_weight(c, nh * d->head_v, c->n_embd), Q, K, kv_cmpr,
                      llm_weight_3d(c, d->kv_lora_rank, d->head_v, nh), *top_k);
}
