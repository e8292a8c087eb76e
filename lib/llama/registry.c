/* llama/registry.c - llama.cpp v0.5.0 architectures of the "registry" group
 * (see twin.h): deci (DeciLM-7B, Nemotron-NAS: Llama-3.1-Nemotron-51B,
 * Llama-3.3-Nemotron-Super-49B, Llama-3.1-Nemotron-Ultra-253B), how it lays
 * out its layers, and the metadata and tensors its shape twin carries.
 * Source: src/models/deci.cpp (load_arch_tensors, the graph) and
 * conversion/deci.py of tests/oracle/.work/llama-src. */
#include "../gguf_model.h"

#define F 1 /* F32 */
#define W 0 /* F16 */

/* ---- deci ----------------------------------------------------------------------- */

/* Per layer, by its head counts (which the converter writes per layer):
 *   n_head_kv > 0            attention (q, k, v, o of that layer's heads);
 *   n_head > 0, n_head_kv 0  a linear map in place of attention (o only,
 *                            n_embd x n_embd; Nemotron-51B);
 *   n_head 0                 no attention at all (Super-49B, Ultra-253B).
 * The twin writes every KV-less layer as the second form, as the metadata
 * (twin_meta.c, RECR_KV0 layout) gives them layer 0's head count; the cache
 * is the same: zero-sized K and V.  Every layer gets the FFN of the widest
 * block: per-block widths never change the cache. */
static void deci_tensors(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        twin_t_norm(t, il, "blk.%d.attn_norm.weight");
        if (t->is_attn[il]) {
            uint64_t h = t->n_head[il], kv = t->n_kv[il];
            twin_t_qkvo(t, il, h * t->lhk[il], kv * t->lhk[il], kv * t->lhv[il], h * t->lhk[il]);
        } else {
            twin_tensor(t, il, "blk.%d.attn_output.weight", W, t->n_embd, t->n_embd, 0);
        }
        twin_t_norm(t, il, "blk.%d.ffn_norm.weight");
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* ---- the group's rows ------------------------------------------------------------ */

static const twin_arch arches[] = {
    /* gguf, family, swa, period, dense_first, n_swa default, recurrent, state,
     * recurrent kind, mla, embd_tied, kv_from_start, meta, tensors, rules, finish */
    /* deci: a layer with head_count_kv 0 holds no cache (RECR_KV0 with kind
     * none and no state: it reads as none); llama.cpp still gives it
     * zero-sized K and V in the one KV cache (rt_llamacpp.c counts it) */
    {"deci", "nemotron-nas", SWA_NONE, 0, 0, 0, RECR_KV0, STATE_NONE, KVP_LAYER_NONE, 0, 0, -1,
     NULL, deci_tensors, NULL, NULL},
};

const twin_arch_group twin_group_registry = {.arches = arches, .n = sizeof arches / sizeof arches[0],};
