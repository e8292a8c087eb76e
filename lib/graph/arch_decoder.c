/* arch_decoder.c - the reserved graph of llama.cpp's dense decoders that
 * vary the plain llama block in small ways, one row of a style table each:
 * src/models/ cohere2.cpp, command-r.cpp, exaone.cpp, exaone4.cpp,
 * granite.cpp (and minicpm, which uses its graph), granite-swa.cpp,
 * smollm3.cpp, arcee.cpp, apertus.cpp, seed-oss.cpp, nanbeige.cpp,
 * mistral3.cpp, olmo.cpp, olmo2.cpp, phi2.cpp, phi3.cpp, stablelm.cpp,
 * starcoder.cpp, starcoder2.cpp, internlm2.cpp, orion.cpp, xverse.cpp,
 * baichuan.cpp, ernie4-5.cpp, hunyuan-vl.cpp (hunyuan-dense), jais.cpp,
 * jais2.cpp, chameleon.cpp, bitnet.cpp, codeshell.cpp, refact.cpp,
 * gpt2.cpp, gptneox.cpp, bloom.cpp, mpt.cpp, falcon.cpp, qwen.cpp,
 * qwen2vl.cpp, qwen3vl.cpp, pangu-embed.cpp, maincoder.cpp, talkie.cpp, plm.cpp.
 *
 * What a row chooses: the norm (RMS or LayerNorm, weights and biases where
 * the GGUF has them), how the attention and FFN branches join the residual
 * (a layout), which layers RoPE, where Q and K are normed, an explicit
 * scale on Q, iSWA, learned positions, the FFN's activation.  Projections,
 * biases and optional norms follow the GGUF's tensor list, as llama.cpp's
 * loaders do. */
#include <string.h>

#include "arch.h"
#include "llm_iswa.h"

enum layout {
    SEQ,        /* x += attn(norm(x)); x += ffn(norm(x)) */
    COHERE,     /* h = norm(x); x += ffn(h) then += attn(h) */
    NEOX_PAR,   /* x += ffn(norm2(x)) then += attn(norm(x)) */
    PHI2,       /* h = norm(x); attn(h) + ffn(h) + x */
    FALCON,     /* h = norm(x); ffn(h) + attn(norm_2(x) or h) + x */
};

enum rope {
    R_ALL,
    R_NONE,     /* ALiBi or learned positions: no RoPE */
    R_SWA,      /* only the sliding layers (cohere2) */
    R_SWA_OR_FULL_MODEL, /* the sliding layers, or every layer without iSWA (exaone4) */
    R_NOPE4,    /* every 4th layer without RoPE (smollm3) */
    R_BAICHUAN, /* the 7B (32 layers) only */
};

enum qk {
    QK_NONE,
    QK_PRE,     /* per-head norms before RoPE, where the GGUF has them */
    QK_POST,    /* after RoPE (hunyuan, maincoder, talkie) */
    QK_FLAT,    /* over the whole projection before the reshape (olmo2) */
    QK_MPT,     /* MPT: LayerNorm over the whole projection, reshaped */
    QK_PLM,     /* PLM: K and V from a normed latent, RoPE on a slice */
};

enum {
    F_ISWA = 1 << 0,       /* sliding-window layers through an iSWA cache */
    F_QSCALE = 1 << 1,     /* an explicit scale op on Q after RoPE */
    F_POST_NORMS = 1 << 2, /* norms after attention and FFN instead of before */
    F_POSE = 1 << 3,       /* learned positions added to the embeddings */
    F_TOK_NORM = 1 << 4,   /* LayerNorm on the embeddings (bloom) */
    F_BIAS = 1 << 5,       /* biases (without a tensor list) */
    F_FUSED = 1 << 6,      /* a fused attn_qkv (without a tensor list) */
    F_NOGATE = 1 << 7,     /* no ffn_gate (without a tensor list) */
    F_EMBD_SCALE = 1 << 8, /* granite's embedding scale in build_inp_embd */
    F_SINKS = 1 << 9,      /* attention sinks */
    F_SUBNORM = 1 << 10,   /* bitnet: norms before the output and down projections */
    F_RES_REV = 1 << 11,   /* phi3: the FFN residual added as add(residual, ffn) */
    F_SKIP = 1 << 12,      /* talkie: normed embeddings, a scaled skip into every layer */
    F_STABLELM = 1 << 13,  /* without ffn_norm the FFN reads the attention's norm */
    F_MROPE = 1 << 14,     /* four positions per token (M-RoPE) */
    F_IMG_LOGITS = 1 << 15,/* chameleon: image tokens' logits set to -inf */
    F_POSE_OPT = 1 << 16,  /* learned positions when the GGUF has them (mpt) */
    F_HALF_FF = 1 << 17,   /* FFN width n_ff / 2 (qwen) */
};

typedef struct dec_style {
    const char *arch;
    int layout;
    int norm;           /* LLM_RMS or LLM_LN */
    int rope;
    int qk, qk_norm;    /* where Q and K are normed, and how */
    int act;            /* the FFN */
    unsigned flags;
    const char *ffn_norm;   /* its tensor, when not ffn_norm */
} dec_style;

static const dec_style styles[] = {
    {"cohere2", COHERE, LLM_LN, R_SWA, QK_NONE, 0, LLM_SILU, F_ISWA, NULL},
    {"command-r", COHERE, LLM_LN, R_ALL, QK_PRE, LLM_LN, LLM_SILU, 0, NULL},
    {"exaone", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU, 0, NULL},
    {"exaone4", SEQ, LLM_RMS, R_SWA_OR_FULL_MODEL, QK_PRE, LLM_RMS, LLM_SILU,
     F_ISWA | F_POST_NORMS, NULL},
    {"granite", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU, F_EMBD_SCALE, NULL},
    {"minicpm", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU, F_EMBD_SCALE, NULL},
    {"granite_swa", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU,
     F_ISWA | F_EMBD_SCALE | F_SINKS, NULL},
    {"smollm3", SEQ, LLM_RMS, R_NOPE4, QK_NONE, 0, LLM_SILU, 0, NULL},
    {"arcee", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_RELU_SQR, F_NOGATE, NULL},
    {"apertus", SEQ, LLM_RMS, R_ALL, QK_PRE, LLM_RMS, LLM_XIELU, F_NOGATE, NULL},
    {"seed_oss", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU, 0, "blk.%d.post_attention_norm"},
    {"nanbeige", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU, 0, NULL},
    {"mistral3", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU, 0, NULL},
    {"olmo", SEQ, LLM_LN, R_ALL, QK_NONE, 0, LLM_SILU, 0, NULL},
    {"olmo2", SEQ, LLM_RMS, R_ALL, QK_FLAT, LLM_RMS, LLM_SILU, F_ISWA | F_POST_NORMS, NULL},
    {"phi2", PHI2, LLM_LN, R_ALL, QK_NONE, 0, LLM_GELU, F_QSCALE | F_BIAS | F_NOGATE, NULL},
    {"phi3", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SWIGLU,
     F_ISWA | F_QSCALE | F_FUSED | F_NOGATE | F_RES_REV, NULL},
    {"stablelm", SEQ, LLM_LN, R_ALL, QK_PRE, LLM_LN, LLM_SILU, F_STABLELM, NULL},
    {"starcoder", SEQ, LLM_LN, R_NONE, QK_NONE, 0, LLM_GELU,
     F_POSE | F_BIAS | F_FUSED | F_NOGATE, NULL},
    {"starcoder2", SEQ, LLM_LN, R_ALL, QK_NONE, 0, LLM_GELU, F_BIAS | F_NOGATE, NULL},
    {"internlm2", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU, 0, NULL},
    {"orion", SEQ, LLM_LN, R_ALL, QK_NONE, 0, LLM_SILU, 0, NULL},
    {"xverse", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU, 0, NULL},
    {"baichuan", SEQ, LLM_RMS, R_BAICHUAN, QK_NONE, 0, LLM_SILU, 0, NULL},
    {"ernie4_5", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU, 0, NULL},
    {"hunyuan-dense", SEQ, LLM_RMS, R_ALL, QK_POST, LLM_RMS, LLM_SILU, 0, NULL},
    {"jais", SEQ, LLM_LN, R_NONE, QK_NONE, 0, LLM_SILU, F_BIAS | F_FUSED, NULL},
    {"jais2", SEQ, LLM_LN, R_ALL, QK_NONE, 0, LLM_RELU_SQR, F_BIAS | F_NOGATE, NULL},
    {"chameleon", SEQ, LLM_RMS, R_ALL, QK_PRE, LLM_LN, LLM_SILU, F_IMG_LOGITS, NULL},
    {"bitnet", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU, F_SUBNORM, NULL},
    {"codeshell", SEQ, LLM_LN, R_ALL, QK_NONE, 0, LLM_GELU, F_BIAS | F_NOGATE, NULL},
    {"refact", SEQ, LLM_RMS, R_NONE, QK_NONE, 0, LLM_SILU, 0, NULL},
    {"gpt2", SEQ, LLM_LN, R_NONE, QK_NONE, 0, LLM_GELU, F_POSE | F_BIAS | F_FUSED | F_NOGATE,
     NULL},
    {"gptneox", NEOX_PAR, LLM_LN, R_ALL, QK_NONE, 0, LLM_GELU, F_BIAS | F_FUSED | F_NOGATE,
     NULL},
    {"bloom", SEQ, LLM_LN, R_NONE, QK_NONE, 0, LLM_GELU,
     F_TOK_NORM | F_BIAS | F_FUSED | F_NOGATE, NULL},
    {"mpt", SEQ, LLM_LN, R_NONE, QK_MPT, LLM_LN, LLM_GELU, F_POSE_OPT | F_FUSED | F_NOGATE,
     NULL},
    {"falcon", FALCON, LLM_LN, R_ALL, QK_NONE, 0, LLM_GELU, F_FUSED | F_NOGATE, NULL},
    {"qwen", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU, F_FUSED | F_BIAS | F_HALF_FF, NULL},
    {"qwen2vl", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU, F_MROPE, NULL},
    {"qwen3vl", SEQ, LLM_RMS, R_ALL, QK_PRE, LLM_RMS, LLM_SILU, F_MROPE, NULL},
    {"pangu-embedded", SEQ, LLM_RMS, R_ALL, QK_NONE, 0, LLM_SILU, 0, NULL},
    {"maincoder", SEQ, LLM_RMS, R_ALL, QK_POST, LLM_RMS, LLM_SILU, 0, NULL},
    {"talkie", SEQ, LLM_RMS, R_ALL, QK_POST, LLM_RMS, LLM_SILU, F_SKIP, NULL},
    {"plm", SEQ, LLM_RMS, R_ALL, QK_PLM, 0, LLM_RELU_SQR, F_NOGATE, NULL},
};

/* one build: the style and the inputs some layers read */
typedef struct dec {
    llm *c;
    const dec_style *s;
    gg_tensor *attn_scale;      /* mistral3's temperature input, or NULL */
    gg_tensor *inp_embd;        /* the padded input embeddings' view (deepstack), or NULL */
} dec;

static const dec_style *find_style(const char *arch)
{
    for (size_t i = 0; i < sizeof styles / sizeof styles[0]; i++)
        if (!strcmp(styles[i].arch, arch))
            return &styles[i];
    return NULL;
}

int arch_decoder_handles(const char *arch)
{
    return find_style(arch) != NULL;
}

static int uses_rope(const llm *c, const dec_style *s, int il)
{
    switch (s->rope) {
    case R_NONE: return 0;
    case R_SWA: return llm_layer_swa(c, il);
    case R_SWA_OR_FULL_MODEL: return !c->swa.mask || llm_layer_swa(c, il);
    case R_NOPE4: return (il + 1) % 4 != 0;
    case R_BAICHUAN: return c->n_layer == 32;
    default: return 1;
    }
}

static gg_tensor *norm(llm *c, const dec_style *s, gg_tensor *cur, const char *base, int il)
{
    return llm_norm_named(c, cur, s->norm, base, il, !(s->flags & F_SKIP),
                          s->norm == LLM_LN && (s->flags & F_BIAS));
}

/* plm.cpp's attention: Q, and K and V expanded from a normed latent whose
 * last n_rot values are the shared RoPE part of K; V goes to the cache as
 * a flat [heads x head, tokens] view */
static gg_tensor *attention_plm(llm *c, gg_tensor *cur, int il)
{
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t hd_k = L->head_dim_k, hd_v = L->head_dim_v, nh = L->n_head, T = c->n_tokens;
    int64_t n_rot = c->m->n_rot ? c->m->n_rot : hd_k, nope = hd_k - n_rot;
    int64_t rank = llm_tensor_ne0(c, "blk.%d.attn_kv_a_norm.weight", il, 512);
    uint64_t es = gg_row_size(GG_F32, 1);
    gg_tensor *q = gg_mul_mat(g, llm_weight(c, c->n_embd, hd_k * nh), cur);
    q = gg_reshape_3d(g, q, hd_k, nh, T);
    gg_tensor *kvpc = gg_mul_mat(g, llm_weight(c, c->n_embd, rank + n_rot), cur);
    gg_tensor *kv_c = gg_view_2d(g, kvpc, rank, T, kvpc->nb[1], 0);
    gg_tensor *k_pe = gg_view_3d(g, kvpc, n_rot, 1, T, kvpc->nb[1], kvpc->nb[1], es * (uint64_t)rank);
    kv_c = llm_norm_rms(c, kv_c, llm_weight(c, rank, 1));
    gg_tensor *kv = gg_mul_mat(g, llm_weight(c, rank, nh * (nope + hd_v)), kv_c);
    gg_tensor *k_nope = gg_view_3d(g, kv, nope, nh, T, es * (uint64_t)(nope + hd_v),
                                   es * (uint64_t)(nh * (nope + hd_v)), 0);
    gg_tensor *v = gg_view_3d(g, kv, hd_v, nh, T, es * (uint64_t)(nope + hd_v),
                              es * (uint64_t)(nh * (nope + hd_v)), es * (uint64_t)nope);
    v = gg_cont(g, v);
    v = gg_view_2d(g, v, hd_v * nh, T, es * (uint64_t)(hd_v * nh), 0);
    q = gg_rope(g, q, c->inp_pos, NULL);
    k_pe = gg_rope(g, k_pe, c->inp_pos, NULL);
    gg_tensor *k = gg_concat(g, k_nope, gg_repeat_4d(g, k_pe, n_rot, nh, T, 1), 0);
    /* llama.cpp reads the cached V by the layer's head size, llm_attn by
     * V's first dimension: a [head, heads, tokens] view of the same data,
     * which cpy_v stores through views just the same (transposed V: the
     * only case llama.cpp runs) */
    v = gg_reshape_3d(g, v, hd_v, nh, T);
    return llm_attn_il(c, il, llm_weight(c, hd_v * nh, c->n_embd), q, k, v, NULL, NULL, 0);
}

/* the attention branch of layer il on the normed input cur: Q, K, V, their
 * norms and RoPE as the model orders them, the cache, the output
 * projection and its bias */
static gg_tensor *attention(dec *d, gg_tensor *cur, int il)
{
    llm *c = d->c;
    const dec_style *s = d->s;
    gg_ctx *g = c->g;
    const kvp_layer *L = &c->m->layers[il];
    int64_t hd = L->head_dim_k;
    int fused = !!(s->flags & F_FUSED), bias = !!(s->flags & F_BIAS);
    gg_tensor *q, *k, *v;
    if (s->qk == QK_PLM)
        return attention_plm(c, cur, il);
    if (s->qk == QK_FLAT) {
        llm_qkv_flat(c, cur, il, fused, bias, &q, &k, &v);
        q = llm_norm_named(c, q, s->qk_norm, "blk.%d.attn_q_norm", il, 1, 0);
        k = llm_norm_named(c, k, s->qk_norm, "blk.%d.attn_k_norm", il, 1, 0);
        q = gg_reshape_3d(g, q, hd, L->n_head, c->n_tokens);
        k = gg_reshape_3d(g, k, hd, L->n_kv_heads, c->n_tokens);
        v = gg_reshape_3d(g, v, L->head_dim_v, L->n_kv_heads, c->n_tokens);
    } else {
        llm_qkv(c, cur, il, fused, bias, &q, &k, &v);
    }
    if (s->qk == QK_MPT && llm_has_tensor(c, "blk.%d.attn_q_norm.weight", il, 0)) {
        q = gg_reshape_2d(g, q, hd * L->n_head, c->n_tokens);
        k = gg_reshape_2d(g, k, hd * L->n_kv_heads, c->n_tokens);
        q = llm_norm_named(c, q, LLM_LN, "blk.%d.attn_q_norm", il, 1, 0);
        k = llm_norm_named(c, k, LLM_LN, "blk.%d.attn_k_norm", il, 1, 0);
        q = gg_reshape_3d(g, q, hd, L->n_head, c->n_tokens);
        k = gg_reshape_3d(g, k, hd, L->n_kv_heads, c->n_tokens);
    }
    int rope = uses_rope(c, s, il);
    int pre = s->qk == QK_PRE, post = s->qk == QK_POST;
    /* an optional norm (command-r, stablelm, chameleon) only where the
     * GGUF has it; the others' loaders require theirs */
    int dflt = s->qk == QK_PRE || s->qk == QK_POST;
    if (pre && llm_has_tensor(c, "blk.%d.attn_q_norm.weight", il, dflt))
        q = llm_norm_named(c, q, s->qk_norm, "blk.%d.attn_q_norm", il, 1, 0);
    if (rope)
        q = gg_rope(g, q, c->inp_pos, NULL);
    if (post)
        q = llm_norm_named(c, q, s->qk_norm, "blk.%d.attn_q_norm", il, 1, 0);
    if (pre && llm_has_tensor(c, "blk.%d.attn_k_norm.weight", il, dflt))
        k = llm_norm_named(c, k, s->qk_norm, "blk.%d.attn_k_norm", il, 1, 0);
    if (rope)
        k = gg_rope(g, k, c->inp_pos, NULL);
    if (post)
        k = llm_norm_named(c, k, s->qk_norm, "blk.%d.attn_k_norm", il, 1, 0);
    if (s->flags & F_QSCALE)
        q = gg_scale(g, q);
    if (d->attn_scale)
        q = gg_binary(g, GG_MUL, q, d->attn_scale);
    gg_tensor *sinks = (s->flags & F_SINKS) && llm_has_tensor(c, "blk.%d.attn_sinks.weight", il, 0)
        ? llm_weight(c, L->n_head, 1) : NULL;
    gg_tensor *wo = llm_weight(c, L->head_dim_v * L->n_head, c->n_embd);
    if (s->flags & F_SUBNORM) {
        cur = llm_attn_il(c, il, NULL, q, k, v, NULL, sinks, 0);
        cur = llm_norm_named(c, cur, LLM_RMS, "blk.%d.attn_sub_norm", il, 1, 0);
        cur = gg_mul_mat(g, wo, cur);
    } else {
        cur = llm_attn_il(c, il, wo, q, k, v, NULL, sinks, 0);
    }
    if (llm_has_tensor(c, "blk.%d.attn_output.bias", il, !!(s->flags & F_BIAS)))
        cur = gg_binary(g, GG_ADD, cur, llm_weight(c, c->n_embd, 1));
    return cur;
}

static gg_tensor *ffn(llm *c, const dec_style *s, gg_tensor *cur, int il)
{
    int gate = !(s->flags & F_NOGATE), bias = !!(s->flags & F_BIAS);
    int64_t n_ff = (int64_t)c->m->n_ff / (s->flags & F_HALF_FF ? 2 : 1);
    n_ff = llm_ff_width(c, il, n_ff);
    if (s->flags & F_SUBNORM) {
        cur = llm_ffn(c, cur, il, n_ff, s->act, gate, bias, 0);
        cur = llm_norm_named(c, cur, LLM_RMS, "blk.%d.ffn_sub_norm", il, 1, 0);
        return gg_mul_mat(c->g, llm_weight(c, n_ff, c->n_embd), cur);
    }
    return llm_ffn(c, cur, il, n_ff, s->act, gate, bias, 1);
}

static gg_tensor *rows(llm *c, gg_tensor *t)
{
    return gg_get_rows(c->g, t, c->inp_out_ids);
}

/* one layer of the SEQ layout */
static gg_tensor *layer_seq(dec *d, gg_tensor *inpL, gg_tensor *skip, int il)
{
    llm *c = d->c;
    const dec_style *s = d->s;
    gg_ctx *g = c->g;
    int last = il == c->n_layer - 1;
    /* chameleon's swin_norm: its attn_norm and ffn_norm after the branches */
    int swin = !!(c->m->graph_flags & KVP_GRAPH_SWIN_NORM) && !strcmp(s->arch, "chameleon");
    int post = !!(s->flags & F_POST_NORMS) || swin;
    gg_tensor *inpSA = inpL;
    gg_tensor *cur = post ? inpL : norm(c, s, inpL, "blk.%d.attn_norm", il);
    gg_tensor *attn_norm = cur;
    cur = attention(d, cur, il);
    if (last) {
        cur = rows(c, cur);
        inpSA = rows(c, inpSA);
        if (skip)
            skip = rows(c, skip);
    }
    if (post)
        cur = norm(c, s, cur, swin ? "blk.%d.attn_norm" : "blk.%d.post_attention_norm", il);
    gg_tensor *ffn_inp = gg_binary(g, GG_ADD, cur, inpSA);
    /* (swin_norm: the FFN reads the normed attention output, not the sum) */
    if (post && !swin)
        cur = ffn_inp;
    else if ((s->flags & F_STABLELM) && !llm_has_tensor(c, "blk.%d.ffn_norm.weight", il, 1))
        cur = last ? rows(c, attn_norm) : attn_norm;
    else if (!post)
        cur = norm(c, s, ffn_inp, s->ffn_norm ? s->ffn_norm : "blk.%d.ffn_norm", il);
    cur = ffn(c, s, cur, il);
    if (post)
        cur = norm(c, s, cur, swin ? "blk.%d.ffn_norm" : "blk.%d.post_ffw_norm", il);
    cur = s->flags & F_RES_REV ? gg_binary(g, GG_ADD, ffn_inp, cur)
                               : gg_binary(g, GG_ADD, cur, ffn_inp);
    if (skip)
        cur = gg_binary(g, GG_ADD, cur,
                        gg_binary(g, GG_MUL, skip, llm_weight(c, c->n_embd, 1)));
    /* Qwen3-VL's deepstack: the first layers add their slice of the input
     * embeddings (a view of the padded token embeddings) */
    if (il < (int)c->m->n_deepstack_layers && d->inp_embd)
        cur = gg_binary(g, GG_ADD, cur,
                        gg_view_2d(g, d->inp_embd, c->n_embd, c->n_tokens, d->inp_embd->nb[1],
                                   (uint64_t)(il + 1) * (uint64_t)c->n_embd * 4));
    return cur;
}

/* the parallel layouts: both branches read the layer's input */
static gg_tensor *layer_par(dec *d, gg_tensor *inpL, int il)
{
    llm *c = d->c;
    const dec_style *s = d->s;
    gg_ctx *g = c->g;
    int last = il == c->n_layer - 1;
    gg_tensor *h = norm(c, s, inpL, "blk.%d.attn_norm", il);
    gg_tensor *cur = h;
    if (s->layout == FALCON && llm_has_tensor(c, "blk.%d.attn_norm_2.weight", il, 0))
        cur = norm(c, s, inpL, "blk.%d.attn_norm_2", il);
    cur = attention(d, cur, il);
    if (last) {
        cur = rows(c, cur);
        inpL = rows(c, inpL);
        if (s->layout != NEOX_PAR)
            h = rows(c, h);
    }
    gg_tensor *attn_out = cur;
    switch (s->layout) {
    case COHERE:
        cur = ffn(c, s, h, il);
        cur = gg_binary(g, GG_ADD, cur, inpL);
        return gg_binary(g, GG_ADD, cur, attn_out);
    case NEOX_PAR:
        cur = norm(c, s, inpL, "blk.%d.ffn_norm", il);
        cur = ffn(c, s, cur, il);
        cur = gg_binary(g, GG_ADD, cur, inpL);
        return gg_binary(g, GG_ADD, cur, attn_out);
    case PHI2:
        cur = gg_binary(g, GG_ADD, attn_out, ffn(c, s, h, il));
        return gg_binary(g, GG_ADD, cur, inpL);
    default: /* FALCON */
        cur = ffn(c, s, h, il);
        cur = gg_binary(g, GG_ADD, cur, attn_out);
        return gg_binary(g, GG_ADD, cur, inpL);
    }
}

/* what the table does not rebuild: MoE layers (granite, granite_swa,
 * mistral3 and phi3 take build_moe_ffn where a layer has a router), the
 * granite family's RoPE-less layers and deepstack inputs, and Qwen3-VL's
 * output padded to a larger input vocabulary */
static int supported(const llm *c, const dec_style *s)
{
    for (int il = 0; il < c->n_layer; il++)
        if (llm_has_tensor(c, "blk.%d.ffn_gate_inp.weight", il, 0))
            return 0;
    if (!strncmp(s->arch, "granite", 7) &&
        (c->m->graph_flags & (KVP_GRAPH_NOPE_LAYERS | KVP_GRAPH_DEEPSTACK_MAP)))
        return 0;
    if (!strcmp(s->arch, "qwen3vl") && llm_has_tensor(c, "output.weight", 0, 0) &&
        llm_tensor_rows(c, "token_embd.weight", 0) != llm_tensor_rows(c, "output.weight", 0))
        return 0;
    return 1;
}

int arch_decoder_build(llm *c)
{
    const dec_style *s = find_style(c->arch);
    if (!s)
        return ARCH_NOT_MODELLED;
    /* plm's V (a flat view) cannot be stored untransposed: llama.cpp
     * aborts reserving its graph with flash attention */
    if (s->qk == QK_PLM && c->fa)
        return ARCH_NOT_MODELLED;
    if (!supported(c, s))
        return ARCH_NOT_MODELLED;
    gg_ctx *g = c->g;
    const kvp_layer *L0 = &c->m->layers[0];
    int64_t n_embd_inp = c->n_embd;
    if (!strcmp(s->arch, "qwen3vl"))
        n_embd_inp += c->n_embd * (int64_t)c->m->n_deepstack_layers;
    gg_tensor *inpL = llm_inp_embd(c, n_embd_inp, !!(s->flags & F_EMBD_SCALE));
    dec d = {c, s, NULL, n_embd_inp != c->n_embd ? inpL : NULL};
    if (s->flags & F_TOK_NORM)
        inpL = llm_norm_named(c, inpL, LLM_LN, "token_embd_norm", 0, 1, 1);
    int pose = (s->flags & F_POSE) ||
               ((s->flags & F_POSE_OPT) && llm_has_tensor(c, "position_embd.weight", 0, 0));
    if (s->rope != R_NONE || pose)
        llm_inp_pos(c, s->flags & F_MROPE ? 4 : 1);
    /* mistral3's attention temperature: an input, one scale per token */
    d.attn_scale = !strcmp(s->arch, "mistral3") && c->m->attn_temp_scale != 0.0f
        ? gg_input(gg_new_3d(g, GG_F32, 1, 1, c->n_tokens), "inp_attn_scale") : NULL;
    if ((s->flags & F_ISWA) && c->swa.n_stream > 0)
        llm_iswa_inp(c, L0->head_dim_k, L0->head_dim_v);
    else
        llm_attn_inp(c, &c->kv, L0->head_dim_k, L0->head_dim_v);
    if (pose) {
        int64_t n_pos = (int64_t)(c->m->max_position ? c->m->max_position : 1);
        gg_tensor *pos = gg_get_rows(g, llm_weight(c, c->n_embd, n_pos), c->inp_pos);
        inpL = gg_binary(g, GG_ADD, inpL, pos);
    }
    gg_tensor *skip = NULL;
    if (s->flags & F_SKIP) {
        inpL = gg_rms_norm(g, inpL);
        skip = inpL;
    }
    llm_inp_out_ids(c);
    int seq = s->layout == SEQ ||
              (s->layout == NEOX_PAR && (c->m->graph_flags & KVP_GRAPH_SEQ_RESIDUAL));
    for (int il = 0; il < c->n_layer; il++)
        inpL = seq ? layer_seq(&d, inpL, skip, il) : layer_par(&d, inpL, il);
    gg_tensor *cur = norm(c, s, inpL, "output_norm", 0);
    gg_set_output(cur);
    cur = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), cur);
    if (llm_has_tensor(c, "output.bias", 0, 0))
        cur = gg_binary(g, GG_ADD, cur, llm_weight(c, c->n_vocab, 1));
    if (s->flags & F_IMG_LOGITS) {
        /* a leaf of 8192 -inf logits, clamped, set into the logits (SET is
         * not in place: a copy) */
        gg_tensor *img = gg_dup_op(g, GG_CLAMP, gg_new_1d(g, GG_F32, 8196 - 4));
        cur = gg_new_op(g, GG_OTHER, cur->type, 4, cur->ne, cur, img, NULL);
    }
    gg_set_output(cur);
    gg_expand(g, cur);
    return 0;
}
