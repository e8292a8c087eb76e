/* test_cross.c - the cross-attention layer kind (an encoder's tokens, e.g.
 * Mllama's image tokens): fixed per sequence in theory, CrossAttentionSpec's
 * cdiv(encoder tokens, block) in vLLM, refused by llama.cpp (v0.5.0 has no
 * such cache).  The figures follow from the rules in
 * ../shared/reference/vllm-kv-rules.md section 3 ("Cross-attention:
 * cdiv(max_num_encoder_input_tokens, bs) x page"). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kvplan.h"

static kvp_model *two_layers(void)
{
    kvp_model *m = calloc(1, sizeof *m);
    m->layers = calloc(2, sizeof *m->layers);
    snprintf(m->name, sizeof m->name, "cross-test");
    m->n_layers = 2;
    m->dtype = KVP_BF16;
    m->max_position = 131072;
    for (int i = 0; i < 2; i++) {
        kvp_layer *L = &m->layers[i];
        L->kind = i ? KVP_LAYER_CROSS : KVP_LAYER_FULL;
        L->n_head = 32;
        L->n_kv_heads = 8;
        L->head_dim_k = L->head_dim_v = 128;
        L->shared_from = -1;
    }
    m->layers[1].window = 1601; /* one image: 1,600 patches + CLS */
    return m;
}

int main(void)
{
    kvp_model *m = two_layers();
    kvp_error e;
    kvp_theory_params tp;
    kvp_theory_result tr;
    kvp_theory_defaults(&tp);
    tp.n_ctx = 2000;
    tp.n_seq = 2;
    CHECK("theory runs", kvp_theory(m, &tp, &tr, &e) == 0);
    CHECK("theory: the cross layer is 1,601 x 4,096 B per sequence, not per token",
          tr.per_token_bytes == 4096 && tr.fixed_bytes_per_seq == 1601ull * 4096 &&
              tr.total_bytes == 2000ull * 4096 + 2 * 1601ull * 4096);
    kvp_vllm_params vp;
    kvp_vllm_result *vr = malloc(sizeof *vr);
    kvp_vllm_defaults(&vp);
    vp.max_model_len = 1000;
    vp.kv_cache_memory = 1ull << 30;
    CHECK("vLLM runs", kvp_vllm(m, &vp, vr, &e) == 0);
    CHECK("vLLM: 63 full blocks + cdiv(1,601, 16) = 101 cross blocks per request",
          vr->blocks_per_request == 63 + 101 && vr->n_groups == 2);
    kvp_llama_params lp;
    kvp_llama_result lr;
    kvp_llama_defaults(&lp);
    lp.n_ctx = 4096;
    CHECK("llama.cpp refuses cross-attention in one line",
          kvp_llama(m, &lp, &lr, &e) != 0 && strstr(e.msg, "cross-attention") &&
              !strchr(e.msg, '\n'));
    free(vr);
    kvp_model_free(m);
    return check_failures != 0;
}
