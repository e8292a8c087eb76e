/* arch_hybrid.c - the reserved graph of llama.cpp's Mamba and short-conv
 * hybrids, whose memory is llama_memory_hybrid (an attention KV cache
 * beside the recurrent state, llm_graph_input_mem_hybrid):
 * src/models/falcon-h1.cpp (attention and Mamba2 side by side in every
 * layer), nemotron-h.cpp (Mamba2, attention or MLP blocks; nemotron_h_moe
 * too), granite-hybrid.cpp, jamba.cpp, plamo2.cpp and lfm2.cpp (lfm2moe
 * too).  Their Mamba mixers are llm_mamba.c's, the MoE FFNs
 * llm_rs_moe.c's, the attention the KV pieces of llm.c. */
#include <string.h>

#include "arch.h"
#include "llm_mamba.h"
#include "llm_rs_moe.h"

int arch_hybrid_handles(const char *arch)
{
    return !strcmp(arch, "falcon-h1") || !strcmp(arch, "nemotron_h") ||
           !strcmp(arch, "nemotron_h_moe") || !strcmp(arch, "lfm2") || !strcmp(arch, "lfm2moe") || !strcmp(arch, "plamo2") ||
           !strcmp(arch, "granitehybrid") || !strcmp(arch, "jamba");
}

/* build_qkv with separate projections (optional biases), reshaped to
 * heads, RoPE on Q and K when rope (build_attn expands Q, V, K in that
 * order) */
static void qkv_proj(llm *c, gg_tensor *cur, const kvp_layer *L, int il, int rope,
                     gg_tensor **q, gg_tensor **k, gg_tensor **v)
{
    gg_ctx *g = c->g;
    int64_t hd = L->head_dim_k, nh = L->n_head, nkv = L->n_kv_heads, hv = L->head_dim_v;
    gg_tensor *Q = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nh), cur);
    if (llm_has_tensor(c, "blk.%d.attn_q.bias", il, 0))
        Q = gg_binary(g, GG_ADD, Q, llm_weight(c, hd * nh, 1));
    gg_tensor *K = gg_mul_mat(g, llm_weight(c, c->n_embd, hd * nkv), cur);
    if (llm_has_tensor(c, "blk.%d.attn_k.bias", il, 0))
        K = gg_binary(g, GG_ADD, K, llm_weight(c, hd * nkv, 1));
    gg_tensor *V = gg_mul_mat(g, llm_weight(c, c->n_embd, hv * nkv), cur);
    if (llm_has_tensor(c, "blk.%d.attn_v.bias", il, 0))
        V = gg_binary(g, GG_ADD, V, llm_weight(c, hv * nkv, 1));
    Q = gg_reshape_3d(g, Q, hd, nh, c->n_tokens);
    K = gg_reshape_3d(g, K, hd, nkv, c->n_tokens);
    *v = gg_reshape_3d(g, V, hv, nkv, c->n_tokens);
    *q = rope ? gg_rope(g, Q, c->inp_pos, NULL) : Q;
    *k = rope ? gg_rope(g, K, c->inp_pos, NULL) : K;
}

static int ffn_biases(const llm *c, int il, int *up, int *gate, int *down)
{
    *up = llm_has_tensor(c, "blk.%d.ffn_up.bias", il, 0);
    *gate = llm_has_tensor(c, "blk.%d.ffn_gate.bias", il, 0);
    *down = llm_has_tensor(c, "blk.%d.ffn_down.bias", il, 0);
    return 0;
}

/* falcon-h1.cpp */
static int falcon_h1(llm *c)
{
    gg_ctx *g = c->g;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_inp_pos(c, 1);
    llm_rs_inp rs;
    llm_rs_inp_build(c, &rs);
    const kvp_layer *L0 = &c->m->layers[0];
    llm_attn_inp(c, &c->kv, L0->head_dim_k, L0->head_dim_v);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        gg_tensor *q, *k, *v;
        qkv_proj(c, cur, L, il, 1, &q, &k, &v);
        gg_tensor *attn = llm_attn(c, &c->kv, llm_weight(c, L->head_dim_v * L->n_head, c->n_embd),
                                   q, k, v, NULL, NULL, 0);
        cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        gg_tensor *ssm = llm_mamba2_layer(c, &rs, cur, il);
        cur = gg_binary(g, GG_ADD, attn, ssm);
        inpSA = gg_binary(g, GG_ADD, cur, inpSA);
        if (il == c->n_layer - 1)
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        int ub, gb, db;
        ffn_biases(c, il, &ub, &gb, &db);
        cur = llm_norm_rms(c, inpSA, llm_weight(c, c->n_embd, 1));
        cur = llm_ffn_par(c, cur, c->m->n_ff, ub, gb, db);
        inpL = gg_binary(g, GG_ADD, cur, inpSA);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

static const kvp_layer *first_attention(const llm *c)
{
    for (int il = 0; il < c->n_layer; il++)
        if (c->m->layers[il].n_kv_heads)
            return &c->m->layers[il];
    return NULL;
}

/* build_ffn_layer's MoE branch of nemotron-h.cpp (nemotron_h_moe): the
 * router on the block's input, sigmoid gating with a selection bias,
 * squared-ReLU experts (in a smaller latent space when the GGUF has
 * ffn_latent_down), a squared-ReLU shared expert */
static gg_tensor *nemotron_moe(llm *c, gg_tensor *cur, int il)
{
    gg_ctx *g = c->g;
    llm_moe a = {0};
    llm_moe_shapes(c, il, &a);
    a.gating = LLM_MOE_SIGMOID;
    a.probs_b = llm_has_tensor(c, "blk.%d.exp_probs_b.bias", il, 1);
    a.norm_w = llm_model_fact(c, "expert_weights_norm", 0) != 0;
    a.act = LLM_MOE_RELU_SQR;
    gg_tensor *latent = cur;
    int64_t n_lat = llm_tensor_ne1(c, "blk.%d.ffn_latent_down.weight", il, 0);
    if (n_lat)
        latent = gg_mul_mat(g, llm_weight(c, c->n_embd, n_lat), cur);
    gg_tensor *router = gg_mul_mat(g, llm_weight(c, c->n_embd, a.n_expert), cur);
    gg_tensor *moe = llm_rs_moe_ffn(c, latent, &a, router);
    if (n_lat)
        moe = gg_mul_mat(g, llm_weight(c, n_lat, c->n_embd), moe);
    int64_t n_sh = llm_tensor_ne0(c, "blk.%d.ffn_down_shexp.weight", il,
                                  (int64_t)c->m->n_ff_shexp);
    gg_tensor *sh = gg_mul_mat(g, llm_weight(c, c->n_embd, n_sh), cur);
    sh = gg_dup_op(g, GG_SQR, gg_unary(g, sh));
    sh = gg_mul_mat(g, llm_weight(c, n_sh, c->n_embd), sh);
    return gg_binary(g, GG_ADD, moe, sh);
}

/* nemotron-h.cpp: each block is Mamba2, attention (no RoPE) or an MLP
 * with a squared-ReLU; h_nextn over every token, then the output rows */
static int nemotron_h(llm *c)
{
    gg_ctx *g = c->g;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_rs_inp rs;
    llm_rs_inp_build(c, &rs);
    const kvp_layer *A = first_attention(c);
    if (A)
        llm_attn_inp(c, &c->kv, A->head_dim_k, A->head_dim_v);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        if (L->kind == KVP_LAYER_MAMBA) {
            cur = llm_mamba2_layer(c, &rs, cur, il);
        } else if (L->n_kv_heads) {
            gg_tensor *q, *k, *v;
            qkv_proj(c, cur, L, il, 0, &q, &k, &v);
            cur = llm_attn(c, &c->kv, llm_weight(c, L->head_dim_v * L->n_head, c->n_embd), q, k,
                           v, NULL, NULL, 0);
            if (llm_has_tensor(c, "blk.%d.attn_output.bias", il, 0))
                cur = gg_binary(g, GG_ADD, cur, llm_weight(c, c->n_embd, 1));
        } else if (llm_has_tensor(c, "blk.%d.ffn_gate_inp.weight", il, c->m->n_expert > 0)) {
            cur = nemotron_moe(c, cur, il);
        } else {
            int64_t n_ff = llm_tensor_ne0(c, "blk.%d.ffn_down.weight", il, (int64_t)c->m->n_ff);
            cur = gg_mul_mat(g, llm_weight(c, c->n_embd, n_ff), cur);
            if (llm_has_tensor(c, "blk.%d.ffn_up.bias", il, 0))
                cur = gg_binary(g, GG_ADD, cur, llm_weight(c, n_ff, 1));
            cur = gg_dup_op(g, GG_SQR, gg_unary(g, cur));
            cur = gg_mul_mat(g, llm_weight(c, n_ff, c->n_embd), cur);
            if (llm_has_tensor(c, "blk.%d.ffn_down.bias", il, 0))
                cur = gg_binary(g, GG_ADD, cur, llm_weight(c, c->n_embd, 1));
        }
        inpL = gg_binary(g, GG_ADD, cur, inpL);
    }
    gg_tensor *h = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(h);
    gg_tensor *norm = gg_get_rows(g, h, c->inp_out_ids);
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

/* lfm2.cpp's build_shortconv_block: a gated short convolution over the
 * hidden state, its last l_cache - 1 columns kept as the state */
static gg_tensor *shortconv(llm *c, llm_rs_inp *inp, gg_tensor *cur, int il)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t n_seqs = c->n_seqs, n_t = c->n_tokens / c->n_seqs, d_conv = (int64_t)L->d_conv - 1;
    int64_t n_embd_r = llm_rs_n_embd_r(L);
    cur = gg_reshape_3d(g, cur, cur->ne[0], n_t, n_seqs);
    gg_tensor *bcx = gg_mul_mat(g, llm_weight(c, c->n_embd, 3 * c->n_embd), cur);
    int64_t chunk = bcx->ne[0] / 3;
    gg_tensor *b = gg_view_3d(g, bcx, chunk, bcx->ne[1], bcx->ne[2], bcx->nb[1], bcx->nb[2], 0);
    gg_tensor *cc = gg_view_3d(g, bcx, chunk, bcx->ne[1], bcx->ne[2], bcx->nb[1], bcx->nb[2],
                               (uint64_t)chunk * 4);
    gg_tensor *x = gg_view_3d(g, bcx, chunk, bcx->ne[1], bcx->ne[2], bcx->nb[1], bcx->nb[2],
                              (uint64_t)(2 * chunk) * 4);
    gg_tensor *bx = gg_transpose(g, gg_binary(g, GG_MUL, b, x));
    gg_tensor *state = llm_rs_state(c, n_embd_r);
    gg_tensor *conv = llm_build_rs(c, inp, state, n_embd_r, n_seqs, NULL, NULL);
    conv = gg_reshape_3d(g, conv, d_conv, c->n_embd, n_seqs);
    bx = gg_concat(g, conv, bx, 0);
    gg_tensor *snap = gg_view_3d(g, bx, d_conv, bx->ne[1], bx->ne[2], bx->nb[1], bx->nb[2],
                                 (uint64_t)(bx->ne[0] - d_conv) * 4);
    gg_expand(g, llm_op_cpy(c, snap, gg_view_2d(g, state, d_conv * c->n_embd, n_seqs,
                                                state->nb[1], 0)));
    gg_tensor *out = llm_op_ssm_conv(c, bx, llm_weight(c, L->d_conv, c->n_embd));
    gg_tensor *y = gg_binary(g, GG_MUL, cc, out);
    y = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_embd), y);
    return gg_reshape_2d(g, y, y->ne[0], n_t * n_seqs);
}

/* lfm2.cpp (without a sliding window; lfm2moe shares it): short-conv and
 * attention (per-head Q/K norms, RoPE) blocks, each followed by a SwiGLU
 * FFN, MoE after the leading dense blocks in lfm2moe */
static int lfm2(llm *c)
{
    gg_ctx *g = c->g;
    int moe = !strcmp(c->arch, "lfm2moe");
    int64_t gating = llm_model_fact(c, "expert_gating_func", 2);
    if (moe && gating != 1 && gating != 2)
        return ARCH_NOT_MODELLED;
    gg_tensor *cur = llm_inp_embd(c, c->n_embd, 0);
    llm_rs_inp rs;
    llm_rs_inp_build(c, &rs);
    const kvp_layer *A = first_attention(c);
    if (A)
        llm_attn_inp(c, &c->kv, A->head_dim_k, A->head_dim_v);
    llm_inp_pos(c, 1);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *prev = cur;
        cur = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
        if (L->n_kv_heads) {
            gg_tensor *q, *k, *v;
            qkv_proj(c, cur, L, il, 0, &q, &k, &v);
            q = gg_rope(g, llm_norm_rms(c, q, llm_weight(c, L->head_dim_k, 1)), c->inp_pos, NULL);
            k = gg_rope(g, llm_norm_rms(c, k, llm_weight(c, L->head_dim_k, 1)), c->inp_pos, NULL);
            cur = llm_attn(c, &c->kv, llm_weight(c, L->head_dim_v * L->n_head, c->n_embd), q, k, v,
                           NULL, NULL, 0);
        } else {
            cur = shortconv(c, &rs, cur, il);
        }
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            prev = gg_get_rows(g, prev, c->inp_out_ids);
        }
        cur = gg_binary(g, GG_ADD, prev, cur);
        gg_tensor *ffn = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
        if (moe && il >= (int)c->m->n_layer_dense_lead) {
            /* lfm2moe: expert_gating_func (1 softmax, 2 sigmoid), a
             * selection bias, normalized weights */
            llm_moe a = {0};
            llm_moe_shapes(c, il, &a);
            a.gating = gating == 1 ? LLM_MOE_SOFTMAX : LLM_MOE_SIGMOID;
            a.probs_b = 1;
            a.norm_w = 1;
            a.act = LLM_MOE_SILU;
            ffn = llm_rs_moe_ffn(c, ffn, &a, NULL);
        } else {
            ffn = llm_ffn_par(c, ffn, c->m->n_ff, 0, 0, 0);
        }
        cur = gg_binary(g, GG_ADD, cur, ffn);
    }
    gg_tensor *norm = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

typedef struct plamo2_scan {
    gg_tensor *x, *dt, *A, *B, *C;
    int64_t d_state, head_dim, n_heads, size;
} plamo2_scan;

static gg_tensor *plamo2_rows(llm *c, gg_tensor *states, gg_tensor *ids, void *user)
{
    plamo2_scan *a = user;
    gg_tensor *ssm = gg_reshape_4d(c->g, states, a->d_state, a->head_dim, a->n_heads, a->size);
    return llm_op_ssm_scan(c, ssm, a->x, a->dt, a->A, a->B, a->C, ids, 1);
}

/* plamo2.cpp's build_plamo2_mamba_layer: Mamba2-like heads without
 * groups, RMS-normed dt, B and C */
static gg_tensor *plamo2_mamba(llm *c, llm_rs_inp *inp, gg_tensor *cur, int il)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t d_conv = L->d_conv, d_inner = (int64_t)L->d_inner, d_state = L->d_state;
    int64_t n_heads = llm_rs_heads(c, il, d_inner / 64), head_dim = d_inner / n_heads;
    int64_t n_seqs = c->n_seqs, n_t = c->n_tokens / c->n_seqs;
    int64_t dt_dim = c->n_embd / 16 > 64 ? c->n_embd / 16 : 64;
    int64_t n_embd_r = llm_rs_n_embd_r(L), n_embd_s = llm_rs_n_embd_s(L);
    gg_tensor *conv_all = llm_rs_state(c, n_embd_r);
    gg_tensor *ssm_all = llm_rs_state(c, n_embd_s);

    gg_tensor *conv = llm_build_rs(c, inp, conv_all, n_embd_r, n_seqs, NULL, NULL);
    conv = gg_reshape_3d(g, conv, d_conv - 1, d_inner, n_seqs);
    cur = gg_reshape_3d(g, cur, cur->ne[0], n_t, n_seqs);
    gg_tensor *zx = gg_mul_mat(g, llm_weight(c, c->n_embd, 2 * d_inner), cur);
    zx = gg_permute(g, zx, 0, 2, 1, 3);
    zx = gg_cont_4d(g, zx, head_dim * 2, n_heads, n_t, n_seqs);
    gg_tensor *x = gg_view_4d(g, zx, head_dim, n_heads, n_t, n_seqs, zx->nb[1], zx->nb[2], zx->nb[3],
                              (uint64_t)head_dim * 4);
    x = gg_cont_4d(g, x, head_dim * n_heads, n_t, n_seqs, 1);
    gg_tensor *z = gg_view_4d(g, zx, head_dim, n_heads, n_t, n_seqs, zx->nb[1], zx->nb[2], zx->nb[3], 0);

    gg_tensor *conv_x = gg_concat(g, conv, gg_transpose(g, x), 0);
    gg_tensor *last = gg_view_3d(g, conv_x, d_conv - 1, d_inner, n_seqs, conv_x->nb[1], conv_x->nb[2],
                                 (uint64_t)n_t * conv_x->nb[0]);
    gg_expand(g, llm_op_cpy(c, last, gg_view_1d(g, conv_all, (d_conv - 1) * d_inner * n_seqs, 0)));
    x = llm_op_ssm_conv(c, conv_x, llm_weight(c, d_conv, d_inner));
    x = gg_unary(g, x);

    gg_tensor *xb = gg_mul_mat(g, llm_weight(c, d_inner, dt_dim + 2 * d_state), x);
    gg_tensor *B = gg_view_3d(g, xb, d_state, n_t, n_seqs, xb->nb[1], xb->nb[2], 0);
    gg_tensor *C = gg_view_3d(g, xb, d_state, n_t, n_seqs, xb->nb[1], xb->nb[2], (uint64_t)d_state * 4);
    gg_tensor *dt = gg_view_3d(g, xb, dt_dim, n_t, n_seqs, xb->nb[1], xb->nb[2],
                               (uint64_t)(2 * d_state) * 4);
    B = llm_norm_rms(c, B, llm_weight(c, d_state, 1));
    C = llm_norm_rms(c, C, llm_weight(c, d_state, 1));
    dt = llm_norm_rms(c, dt, llm_weight(c, dt_dim, 1));
    dt = gg_mul_mat(g, llm_weight(c, dt_dim, n_heads), dt);
    dt = gg_binary(g, GG_ADD, dt, llm_weight(c, n_heads, 1));
    gg_tensor *A = gg_reshape_2d(g, llm_weight(c, n_heads, 1), 1, n_heads);
    x = gg_view_4d(g, x, head_dim, n_heads, n_t, n_seqs, (uint64_t)head_dim * 4,
                   (uint64_t)(head_dim * n_heads) * 4, (uint64_t)(head_dim * n_heads * n_t) * 4, 0);
    B = gg_view_4d(g, B, d_state, 1, n_t, n_seqs, (uint64_t)d_state * B->nb[0], B->nb[1], B->nb[2], 0);
    C = gg_view_4d(g, C, d_state, 1, n_t, n_seqs, (uint64_t)d_state * C->nb[0], C->nb[1], C->nb[2], 0);

    plamo2_scan a = {x, dt, A, B, C, d_state, head_dim, n_heads, c->rs_size};
    gg_tensor *y_ssm = llm_build_rs(c, inp, ssm_all, n_embd_s, n_seqs, plamo2_rows, &a);
    gg_expand(g, llm_op_cpy(c, gg_view_1d(g, y_ssm, n_heads * head_dim * d_state * n_seqs,
                                          (uint64_t)(n_heads * head_dim * n_t * n_seqs) * 4),
                            gg_view_1d(g, ssm_all, n_heads * head_dim * d_state * n_seqs, 0)));
    gg_tensor *y = gg_view_4d(g, y_ssm, head_dim, n_heads, n_t, n_seqs, (uint64_t)head_dim * 4,
                              (uint64_t)(head_dim * n_heads) * 4,
                              (uint64_t)(head_dim * n_heads * n_t) * 4, 0);
    gg_tensor *D = gg_reshape_2d(g, llm_weight(c, n_heads, 1), 1, n_heads);
    y = gg_binary(g, GG_ADD, y, gg_binary(g, GG_MUL, x, D));
    y = gg_glu_split(g, gg_cont(g, z), y);
    y = gg_view_3d(g, y, head_dim * n_heads, n_t, n_seqs, y->nb[2], y->nb[3], 0);
    cur = gg_mul_mat(g, llm_weight(c, d_inner, c->n_embd), y);
    return gg_reshape_2d(g, cur, cur->ne[0], n_t * n_seqs);
}

/* plamo2.cpp's build_plamo2_attn_layer: one QKV projection, per-head
 * Q/K norms, RoPE */
static gg_tensor *plamo2_attn(llm *c, gg_tensor *cur, int il)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t hk = L->head_dim_k, hv = L->head_dim_v, nh = L->n_head, nkv = L->n_kv_heads;
    int64_t n_tokens = c->n_tokens;
    gg_tensor *qkv = gg_mul_mat(g, llm_weight(c, c->n_embd, hk * nh + hk * nkv + hv * nkv), cur);
    gg_tensor *Q = gg_view_3d(g, qkv, hk, nh, n_tokens, (uint64_t)hk * 4, qkv->nb[1], 0);
    gg_tensor *K = gg_view_3d(g, qkv, hk, nkv, n_tokens, (uint64_t)hk * 4, qkv->nb[1],
                              (uint64_t)(hk * nh) * 4);
    gg_tensor *V = gg_view_3d(g, qkv, hv, nkv, n_tokens, (uint64_t)hv * 4, qkv->nb[1],
                              (uint64_t)(hk * nh + hk * nkv) * 4);
    Q = gg_rope(g, llm_norm_rms(c, Q, llm_weight(c, hk, nh)), c->inp_pos, NULL);
    K = gg_rope(g, llm_norm_rms(c, K, llm_weight(c, hk, nkv)), c->inp_pos, NULL);
    return llm_attn(c, &c->kv, llm_weight(c, hv * nh, c->n_embd), Q, K, V, NULL, NULL, 0);
}

/* plamo2.cpp: Mamba or attention, post-mixer norm, a SwiGLU FFN (one
 * up projection split in two), post-FFN norm */
static int plamo2(llm *c)
{
    gg_ctx *g = c->g;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_inp_pos(c, 1);
    llm_rs_inp rs;
    llm_rs_inp_build(c, &rs);
    const kvp_layer *A = first_attention(c);
    if (A)
        llm_attn_inp(c, &c->kv, A->head_dim_k, A->head_dim_v);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *res = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        cur = L->n_kv_heads ? plamo2_attn(c, cur, il) : plamo2_mamba(c, &rs, cur, il);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            res = gg_get_rows(g, res, c->inp_out_ids);
        }
        cur = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
        cur = gg_binary(g, GG_ADD, cur, res);
        res = cur;
        cur = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
        int64_t n_ff = llm_tensor_ne0(c, "blk.%d.ffn_down.weight", il, (int64_t)c->m->n_ff);
        cur = gg_mul_mat(g, llm_weight(c, c->n_embd, 2 * n_ff), cur);
        int64_t ne[4] = {cur->ne[0] / 2, cur->ne[1], cur->ne[2], cur->ne[3]};
        cur = gg_new_op(g, GG_GLU, GG_F32, 4, ne, cur, NULL, NULL);
        cur = gg_mul_mat(g, llm_weight(c, n_ff, c->n_embd), cur);
        cur = llm_norm_rms(c, cur, llm_weight(c, c->n_embd, 1));
        inpL = gg_binary(g, GG_ADD, cur, res);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

/* granite-hybrid.cpp: Mamba2 or attention (RoPE unless
 * rope.scaling.finetuned is false), Granite's residual and logit scales.
 * The scales are in-place on a tensor with one consumer, so they move no
 * offset whether the GGUF sets them or not; they are always built. */
static int granite_hybrid(llm *c)
{
    gg_ctx *g = c->g;
    int rope = llm_model_fact(c, "rope_finetuned", 1) != 0;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_rs_inp rs;
    llm_rs_inp_build(c, &rs);
    const kvp_layer *A = first_attention(c);
    if (A)
        llm_attn_inp(c, &c->kv, A->head_dim_k, A->head_dim_v);
    llm_inp_out_ids(c);
    if (rope)
        llm_inp_pos(c, 1);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *inpSA = inpL;
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        if (L->kind == KVP_LAYER_MAMBA) {
            cur = llm_mamba2_layer(c, &rs, cur, il);
        } else {
            gg_tensor *q, *k, *v;
            qkv_proj(c, cur, L, il, rope, &q, &k, &v);
            cur = llm_attn(c, &c->kv, llm_weight(c, L->head_dim_v * L->n_head, c->n_embd), q, k,
                           v, NULL, NULL, 0);
            if (llm_has_tensor(c, "blk.%d.attn_output.bias", il, 0))
                cur = gg_binary(g, GG_ADD, cur, llm_weight(c, c->n_embd, 1));
        }
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpSA = gg_get_rows(g, inpSA, c->inp_out_ids);
        }
        cur = gg_scale(g, cur);
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
        cur = llm_norm_rms(c, ffn_inp, llm_weight(c, c->n_embd, 1));
        if (llm_has_tensor(c, "blk.%d.ffn_gate_inp.weight", il, c->m->n_expert > 0)) {
            llm_moe a = {0};
            llm_moe_shapes(c, il, &a);
            a.gating = LLM_MOE_SOFTMAX;
            a.norm_w = 1;
            a.act = LLM_MOE_SILU;
            gg_tensor *moe = llm_rs_moe_ffn(c, cur, &a, NULL);
            int64_t n_sh = llm_tensor_ne0(c, "blk.%d.ffn_down_shexp.weight", il,
                                          (int64_t)c->m->n_ff_shexp);
            cur = n_sh > 0 ? gg_binary(g, GG_ADD, moe, llm_ffn_par(c, cur, n_sh, 0, 0, 0)) : moe;
        } else {
            int ub, gb, db;
            ffn_biases(c, il, &ub, &gb, &db);
            cur = llm_ffn_par(c, cur, c->m->n_ff, ub, gb, db);
        }
        cur = gg_scale(g, cur);
        inpL = gg_binary(g, GG_ADD, cur, ffn_inp);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *logits = gg_scale(g, gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm));
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

/* jamba.cpp: Mamba (with weighted RMS norms on dt, B and C) or attention
 * without RoPE, then a dense or MoE FFN */
static int jamba(llm *c)
{
    gg_ctx *g = c->g;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_rs_inp rs;
    llm_rs_inp_build(c, &rs);
    const kvp_layer *A = first_attention(c);
    if (A)
        llm_attn_inp(c, &c->kv, A->head_dim_k, A->head_dim_v);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        const kvp_layer *L = &c->m->layers[il];
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        if (!L->n_kv_heads) {
            int norms = llm_has_tensor(c, "blk.%d.ssm_dt_norm.weight", il, 1) &&
                        llm_has_tensor(c, "blk.%d.ssm_b_norm.weight", il, 1) &&
                        llm_has_tensor(c, "blk.%d.ssm_c_norm.weight", il, 1);
            cur = llm_mamba_layer(c, &rs, cur, il, norms);
        } else {
            gg_tensor *q, *k, *v;
            qkv_proj(c, cur, L, il, 0, &q, &k, &v);
            cur = llm_attn(c, &c->kv, llm_weight(c, L->head_dim_v * L->n_head, c->n_embd), q, k,
                           v, NULL, NULL, 0);
        }
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpL = gg_get_rows(g, inpL, c->inp_out_ids);
        }
        gg_tensor *ffn_inp = gg_binary(g, GG_ADD, inpL, cur);
        cur = llm_norm_rms(c, ffn_inp, llm_weight(c, c->n_embd, 1));
        if (llm_has_tensor(c, "blk.%d.ffn_gate_inp.weight", il, 0)) {
            llm_moe a = {0};
            llm_moe_shapes(c, il, &a);
            a.gating = LLM_MOE_SOFTMAX;
            a.act = LLM_MOE_SILU;
            cur = llm_rs_moe_ffn(c, cur, &a, NULL);
        } else {
            cur = llm_ffn_par(c, cur, c->m->n_ff, 0, 0, 0);
        }
        inpL = gg_binary(g, GG_ADD, ffn_inp, cur);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}

int arch_hybrid_build(llm *c)
{
    if (!c->rs_size || c->rs_seq)
        return ARCH_NOT_MODELLED;
    if (!strcmp(c->arch, "plamo2"))
        return plamo2(c);
    for (int il = 0; il < c->n_layer; il++)
        if (llm_has_tensor(c, "blk.%d.attn_qkv.weight", il, 0))
            return ARCH_NOT_MODELLED;   /* a fused QKV projection: another graph */
    if (!strcmp(c->arch, "falcon-h1"))
        return falcon_h1(c);
    if (!strcmp(c->arch, "nemotron_h") || !strcmp(c->arch, "nemotron_h_moe"))
        return nemotron_h(c);
    /* Jamba from a config.json: which layers are MoE is not known here */
    if (!strcmp(c->arch, "jamba") && c->m->n_tensors)
        return jamba(c);
    if (!strcmp(c->arch, "granitehybrid"))
        return granite_hybrid(c);
    /* LFM2 with a sliding window reads a hybrid-iSWA memory: not modelled */
    if ((!strcmp(c->arch, "lfm2") || !strcmp(c->arch, "lfm2moe")) && !c->swa.n_stream)
        return lfm2(c);
    return ARCH_NOT_MODELLED;
}
