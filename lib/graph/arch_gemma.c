/* arch_gemma.c - the reserved graph of llama.cpp's Gemma decoders:
 * src/models/gemma.cpp (Gemma 1: one cache, MQA), gemma2.cpp (iSWA,
 * attention logits soft-capped, post-norms after attention and FFN, final
 * logits soft-capped) and gemma3.cpp (iSWA when the GGUF has a window, RMS
 * norms on Q and K per head).  The token embeddings are scaled by
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

int arch_gemma_build(llm *c)
{
    const gemma_style *s = find_style(c->m->gguf_arch[0] ? c->m->gguf_arch : c->m->arch);
    if (!s)
        return -1;
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
