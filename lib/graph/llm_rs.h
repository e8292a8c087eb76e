/* llm_rs.h - the recurrent-state pieces of llama.cpp's llm_graph_context
 * (src/llama-graph.cpp: build_rs_inp, build_rs, the RWKV token shift; the
 * state tensors of src/llama-memory-recurrent.cpp), and the ggml ops only
 * recurrent layers use (ssm_conv, ssm_scan, in-place scale, cpy).
 *
 * The reserved graph sees the whole recurrent memory (init_full): n_rs =
 * mem_size = n_seq_max cells, head 0, rs_z 0, so the "extra" states to copy
 * are n_rs - n_seqs = 0 rows; the state tensors r_l / s_l live in the
 * recurrent memory's own buffer, never in the compute buffer. */
#ifndef KVP_GRAPH_LLM_RS_H
#define KVP_GRAPH_LLM_RS_H

#include "llm.h"

/* llm_graph_input_rs: the s_copy input and its two views */
typedef struct llm_rs_inp {
    gg_tensor *s_copy, *s_copy_main, *s_copy_extra;
} llm_rs_inp;

/* build_rs_inp */
void llm_rs_inp_build(llm *c, llm_rs_inp *inp);

/* a layer's conv / token-shift state r_l (n_embd_r per row) or SSM / wkv
 * state s_l (n_embd_s per row): external f32 tensors of mem_size x
 * (1 + n_rs_seq) rows */
gg_tensor *llm_rs_state(llm *c, int64_t n_embd);

/* hparams.n_embd_r() / n_embd_s() of a recurrent layer, from kvplan's
 * common form of the state (kvp_layer) */
int64_t llm_rs_n_embd_r(const kvp_layer *L);
int64_t llm_rs_n_embd_s(const kvp_layer *L);

/* ssm.time_step_rank, the SSM / value heads of Mamba2 and Gated DeltaNet
 * layers: the size of the layer's dt bias in a GGUF, else the model's head
 * count when it divides d_inner, else dflt */
int64_t llm_rs_heads(const llm *c, int il, int64_t dflt);

/* the get_state_rows callback of build_rs: NULL is ggml_get_rows */
typedef gg_tensor *(*llm_rs_rows_fn)(llm *c, gg_tensor *states, gg_tensor *ids, void *user);

/* build_rs: clears the zero state, gathers the states of this ubatch's
 * sequences (by fn), copies the other states in place */
gg_tensor *llm_build_rs(llm *c, llm_rs_inp *inp, gg_tensor *s, int64_t state_size,
                        int64_t n_seqs, llm_rs_rows_fn fn, void *user);

/* ---- ops ---- */
gg_tensor *llm_op_cpy(llm *c, gg_tensor *a, gg_tensor *b);         /* a view of b */
gg_tensor *llm_op_scale_inplace(llm *c, gg_tensor *a);             /* a view of a */
gg_tensor *llm_op_ssm_conv(llm *c, gg_tensor *sx, gg_tensor *w);
gg_tensor *llm_op_ssm_scan(llm *c, gg_tensor *s, gg_tensor *x, gg_tensor *dt, gg_tensor *A,
                           gg_tensor *B, gg_tensor *C, gg_tensor *ids, int64_t K);

/* the second dimension of a 2-D weight (from its size and row size), or
 * dflt */
int64_t llm_tensor_ne1(const llm *c, const char *fmt, int il, int64_t dflt);

/* build_rwkv_token_shift_load: the layer's token shifts {n_embd, shifts,
 * n_seqs} from r_l; _store: the cpy of shift back into r_l */
gg_tensor *llm_rwkv_shift_load(llm *c, llm_rs_inp *inp, gg_tensor *r_l, int64_t n_embd_r,
                               int64_t shifts);
gg_tensor *llm_rwkv_shift_store(llm *c, gg_tensor *shift, gg_tensor *r_l, int64_t n_embd_r,
                                int64_t shifts);

/* a fact the model reader recorded (kvp_model.facts), or dflt */
int64_t llm_model_fact(const llm *c, const char *name, int64_t dflt);

#endif
