/* arch_ssm.c - the reserved graph of llama.cpp's pure state-space models:
 * src/models/mamba.cpp (mamba and mamba2 share its graph; their mixers,
 * src/models/mamba-base.cpp, are in llm_mamba.c).  Every layer: RMS norm,
 * the mixer (input projection, a causal conv over the conv state, the
 * selective scan over the SSM state, the gate, the output projection), a
 * residual; the last layer keeps only the output rows; then the output
 * norm and the logits. */
#include <string.h>

#include "arch.h"
#include "llm_mamba.h"

int arch_ssm_handles(const char *arch)
{
    return !strcmp(arch, "mamba") || !strcmp(arch, "mamba2");
}

int arch_ssm_build(llm *c)
{
    gg_ctx *g = c->g;
    int mamba2 = !strcmp(c->arch, "mamba2");
    int dt_b_c_rms = llm_model_fact(c, "ssm_dt_b_c_rms", 0) != 0;
    /* rollback snapshots (n_rs_seq, speculative decoding) are not in the
     * oracle's settings, and Mamba1's scan cannot take them */
    if (!c->rs_size || c->rs_seq)
        return ARCH_NOT_MODELLED;
    gg_tensor *inpL = llm_inp_embd(c, c->n_embd, 0);
    llm_rs_inp rs;
    llm_rs_inp_build(c, &rs);
    llm_inp_out_ids(c);
    for (int il = 0; il < c->n_layer; il++) {
        gg_tensor *cur = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
        cur = mamba2 ? llm_mamba2_layer(c, &rs, cur, il)
                     : llm_mamba_layer(c, &rs, cur, il, dt_b_c_rms);
        if (il == c->n_layer - 1) {
            cur = gg_get_rows(g, cur, c->inp_out_ids);
            inpL = gg_get_rows(g, inpL, c->inp_out_ids);
        }
        inpL = gg_binary(g, GG_ADD, cur, inpL);
    }
    gg_tensor *norm = llm_norm_rms(c, inpL, llm_weight(c, c->n_embd, 1));
    gg_set_output(norm);
    gg_tensor *logits = gg_mul_mat(g, llm_weight(c, c->n_embd, c->n_vocab), norm);
    gg_set_output(logits);
    gg_expand(g, logits);
    return 0;
}
