/* llm.h - llama.cpp's llm_graph_context, the pieces every architecture's
 * graph is built from (src/llama-graph.cpp, src/llama-kv-cache.cpp of
 * llama.cpp v0.5.0): the token input, positions, the attention inputs and
 * the cache writes and reads, norms, the attention block, the FFN.  Each
 * function creates the same tensors in the same order as its llama.cpp
 * namesake, because the allocator's result depends on both. */
#ifndef KVP_GRAPH_LLM_H
#define KVP_GRAPH_LLM_H

#include "kvplan.h"
#include "graph.h"

/* one attention cache as the reserved graph sees it (init_full: every cell) */
typedef struct llm_cache {
    int64_t n_kv;            /* cells per stream */
    int64_t n_stream;
    int type_k, type_v;      /* ggml type ids */
    int64_t kv_size;         /* cells per stream in the tensor */
    int64_t n_embd_v_gqa_max;
    gg_tensor *k_idxs, *v_idxs, *mask, *k_rot, *v_rot;
} llm_cache;

typedef struct llm {
    gg_ctx *g;
    const kvp_model *m;
    const char *arch;        /* llama.cpp's architecture name ("mamba2") */
    int64_t n_embd, n_vocab, n_layer;
    int64_t n_tokens, n_outputs, n_seqs;
    int64_t n_tokens_max;    /* min(n_ctx, n_ubatch), before rounding to n_seqs */
    int fa, v_trans;
    llm_cache kv, swa;       /* swa used by iSWA architectures */
    llm_cache idx;           /* DSA indexer keys (the "kv_idx" cache) */
    gg_tensor *inp_pos, *inp_out_ids;
    /* what stays on the host when layers are offloaded: the unused
     * embeddings input and the token rows (get_rows never leaves the CPU) */
    gg_tensor *inp_embd, *tok_rows;
    /* the recurrent memory (llama_memory_recurrent): its cells (mem_size,
     * n_seq_max) and the rollback snapshots each keeps (n_rs_seq) */
    int64_t rs_size, rs_seq;
    /* a builder's remark, appended to kvp_compute.how ("" for none) */
    char note[120];
} llm;

/* a weight: memory in the model buffer, never the compute buffer */
gg_tensor *llm_weight(llm *c, int64_t ne0, int64_t ne1);
gg_tensor *llm_weight_3d(llm *c, int64_t ne0, int64_t ne1, int64_t ne2);
/* whether the GGUF has this tensor ("blk.%d.attn_q.bias"); a config.json
 * (no tensor list) answers `dflt` */
int llm_has_tensor(const llm *c, const char *fmt, int il, int dflt);
/* the row length of that tensor, or dflt when the model has no such tensor */
int64_t llm_tensor_ne0(const llm *c, const char *fmt, int il, int64_t dflt);

gg_tensor *llm_inp_embd(llm *c, int64_t n_embd_inp, int scaled);
gg_tensor *llm_inp_pos(llm *c, int n_pos_per_embd);
gg_tensor *llm_inp_out_ids(llm *c);
/* the KQ mask, K/V scatter indices and rotations of one cache */
void llm_attn_inp(llm *c, llm_cache *kv, int64_t head_dim_k, int64_t head_dim_v);

gg_tensor *llm_norm_rms(llm *c, gg_tensor *cur, gg_tensor *w);
gg_tensor *llm_norm(llm *c, gg_tensor *cur, gg_tensor *w, gg_tensor *b);

/* build_attn for a layer whose cache is kv: stores K/V, reads the whole
 * cache, attends, projects by wo (when not NULL) */
gg_tensor *llm_attn(llm *c, llm_cache *kv, gg_tensor *wo, gg_tensor *q, gg_tensor *k,
                    gg_tensor *v, gg_tensor *kq_b, gg_tensor *sinks, int soft_cap);
gg_tensor *llm_attn_mha(llm *c, gg_tensor *q, gg_tensor *k, gg_tensor *v, gg_tensor *kq_b,
                        gg_tensor *mask, gg_tensor *sinks, int soft_cap);

/* build_ffn with a parallel gate (SwiGLU / GeGLU): up, gate, glu, down */
gg_tensor *llm_ffn_par(llm *c, gg_tensor *cur, int64_t n_ff, int up_b, int gate_b, int down_b);
/* build_ffn without a gate (up, activation, down) */
gg_tensor *llm_ffn_seq(llm *c, gg_tensor *cur, int64_t n_ff, int up_b, int down_b);

int llm_ggml_type(kvp_dtype t);

#endif
