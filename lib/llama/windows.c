/* llama/windows.c - llama.cpp v0.5.0 architectures of the "windows" group (see
 * twin.h): sliding-window models whose layer rules the core rows do not
 * cover (a window only at one depth, a fixed window, a required per-layer
 * pattern), models whose sliding and full layers differ in shape (gemma4,
 * mimo2) or share their cache (gemma4), and the metadata and tensors their
 * shape twins carry.  Sources: src/models/<arch>.cpp (load_arch_hparams,
 * load_arch_tensors) and src/llama-model.cpp (create_memory). */
#include <string.h>

#include "../gguf_model.h"

#define W 0 /* F16 */
#define F 1 /* F32 */

/* ---- reader rules shared by several rows -------------------------------------- */

/* load_arch_hparams reads the per-layer pattern with get_arr, required:
 * a GGUF without the bool array does not load. */
static int need_swa_array(gguf_rd *r)
{
    const gguf_kv *kv = kvp_gguf_find(r->f, gguf_rd_key(r, "attention.sliding_window_pattern"));
    if (!kv || kv->type != GGUF_ARRAY)
        return kvp_fail(r->err, KVP_EINPUT, "%s: missing required key %s (a bool per layer)",
                        r->path, r->key);
    return 0;
}

static int need_key(gguf_rd *r, const char *suffix)
{
    uint64_t v;
    return gguf_rd_need(r, suffix, KVP_MAX_TOKENS, &v);
}

/* ---- tensor building blocks ---------------------------------------------------- */

/* q {n_embd, n_head x head_k}, k and v {n_embd, n_kv x head}, o back to n_embd */
static void qkvo(twin_ctx *t, int il, uint64_t head_k, uint64_t head_v, uint64_t o_in)
{
    uint64_t h = t->n_head[il], kv = t->n_kv[il];
    twin_t_qkvo(t, il, h * head_k, kv * head_k, kv * head_v, o_in);
}

static void norm(twin_ctx *t, int il, const char *name, uint64_t n)
{
    twin_tensor(t, il, name, F, n, 0, 0);
}

/* the routed experts of most MoE rows: router, gate/up/down of n_ff_exp */
static void experts(twin_ctx *t, int il)
{
    twin_t_moe(t, il, t->n_ff_exp);
}

/* A full shape twin keeps the value a fact recorded (config readers put
 * widths the kvp_model has no field for there); --kv-only uses 0. */
static uint64_t fact_value(const twin_ctx *t, const char *name)
{
    for (size_t i = 0; !t->kv_only && i < t->m->n_facts; i++)
        if (!strcmp(t->m->facts[i].name, name) && t->m->facts[i].value > 0)
            return (uint64_t)t->m->facts[i].value;
    return 0;
}

/* ---- exaone4 ------------------------------------------------------------------- */

/* EXAONE 4: sliding layers (pattern 4, window 4096 unless the key says) only
 * in the 64-layer model (32B); every other depth is all full attention. */
static int rules_exaone4(gguf_rd *r)
{
    if (r->m->n_layers == 64)
        return 0;
    memset(r->is_swa, 0, r->n_all);
    r->n_swa = 0;
    return 0;
}

/* post-norm blocks (no attn_norm); wo is {n_embd, n_embd}, so the heads
 * must span n_embd and --kv-only keeps it (embd_tied) */
static void tensors_exaone4(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        qkvo(t, il, t->lhk[0], t->lhv[0], t->n_embd);
        norm(t, il, "blk.%d.post_attention_norm.weight", t->n_embd);
        norm(t, il, "blk.%d.attn_q_norm.weight", t->lhk[0]);
        norm(t, il, "blk.%d.attn_k_norm.weight", t->lhk[0]);
        twin_t_ffn(t, il, t->n_ff);
        norm(t, il, "blk.%d.post_ffw_norm.weight", t->n_embd);
    }
}

/* ---- gemma4 -------------------------------------------------------------------- */

/* Gemma 4: the bool pattern, the window, the sliding head sizes and the
 * per-layer-embedding width are required; the layers from n_layer_all -
 * attention.shared_kv_layers on reuse an earlier cache. */
static int rules_gemma4(gguf_rd *r)
{
    uint64_t shared;
    if (need_swa_array(r) || need_key(r, "attention.key_length_swa") ||
        need_key(r, "attention.value_length_swa") || need_key(r, "embedding_length_per_layer_input") ||
        gguf_rd_opt(r, "attention.shared_kv_layers", 0, r->n_all, &shared))
        return -1;
    r->kv_from = (int32_t)(r->n_all - shared);
    if (shared)
        kvp_model_fact(r->m, "shared-KV layers", (int64_t)shared, "attention.shared_kv_layers");
    return 0;
}

static void meta_gemma4(twin_ctx *t)
{
    t->per_layer_heads = 1; /* load_arch_tensors sizes each layer from n_head(il), n_head_kv(il) */
    kvp_gguf_w_u32(t->w, twin_key(t, "attention.shared_kv_layers"), t->n_layer - t->kv_from);
    kvp_gguf_w_u32(t->w, twin_key(t, "embedding_length_per_layer_input"),
                   (uint32_t)fact_value(t, "per-layer input width"));
    if (t->hk_swa == t->hk && t->hv_swa == t->hv) { /* required, even when equal */
        kvp_gguf_w_u32(t->w, twin_key(t, "attention.key_length_swa"), t->hk_swa);
        kvp_gguf_w_u32(t->w, twin_key(t, "attention.value_length_swa"), t->hv_swa);
    }
}

/* Gemma 4 blocks: per-layer head size and heads; the shared layers have no
 * K projection or K norm of their own; rope_freqs (one tensor, the full
 * layers' proportional RoPE) comes with the first full layer; experts run
 * beside the MLP; per-layer embeddings when their width is not 0. */
static void tensors_gemma4(twin_ctx *t)
{
    uint64_t E = t->n_embd, ple = fact_value(t, "per-layer input width");
    int rope_done = 0;
    twin_t_embd(t, TW_NO_OUTPUT, NULL);
    if (ple) {
        twin_tensor(t, -1, "per_layer_token_embd.weight", W, ple * t->n_layer, t->n_vocab, 0);
        twin_tensor(t, -1, "per_layer_model_proj.weight", W, E, ple * t->n_layer, 0);
        twin_tensor(t, -1, "per_layer_proj_norm.weight", F, ple, 0, 0);
    }
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t hd = t->lhk[il], h = t->n_head[il], kv = t->n_kv[il];
        int own_kv = (uint32_t)il < t->kv_from;
        norm(t, il, "blk.%d.attn_norm.weight", E);
        twin_tensor(t, il, "blk.%d.attn_q.weight", W, E, h * hd, 0);
        if (own_kv) {
            twin_tensor(t, il, "blk.%d.attn_k.weight", W, E, kv * hd, 0);
            twin_tensor(t, il, "blk.%d.attn_v.weight", W, E, kv * t->lhv[il], 0);
        }
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, h * hd, E, 0);
        norm(t, il, "blk.%d.attn_q_norm.weight", hd);
        if (own_kv)
            norm(t, il, "blk.%d.attn_k_norm.weight", hd);
        norm(t, il, "blk.%d.post_attention_norm.weight", E);
        if (!t->is_swa[il] && !rope_done) {
            twin_tensor(t, -1, "rope_freqs.weight", F, hd / 2, 0, 0);
            rope_done = 1;
        }
        norm(t, il, "blk.%d.ffn_norm.weight", E);
        twin_t_ffn(t, il, t->n_ff);
        norm(t, il, "blk.%d.post_ffw_norm.weight", E);
        if (t->n_expert) {
            twin_tensor(t, il, "blk.%d.ffn_gate_inp.weight", W, E, t->n_expert, 0);
            norm(t, il, "blk.%d.ffn_gate_inp.scale", E);
            norm(t, il, "blk.%d.pre_ffw_norm_2.weight", E);
            norm(t, il, "blk.%d.post_ffw_norm_1.weight", E);
            norm(t, il, "blk.%d.post_ffw_norm_2.weight", E);
            twin_tensor(t, il, "blk.%d.ffn_gate_exps.weight", W, E, t->n_ff_exp, t->n_expert);
            twin_tensor(t, il, "blk.%d.ffn_up_exps.weight", W, E, t->n_ff_exp, t->n_expert);
            twin_tensor(t, il, "blk.%d.ffn_down_exps.weight", W, t->n_ff_exp, E, t->n_expert);
        }
        if (ple) {
            twin_tensor(t, il, "blk.%d.inp_gate.weight", W, E, ple, 0);
            twin_tensor(t, il, "blk.%d.proj.weight", W, ple, E, 0);
            norm(t, il, "blk.%d.post_norm.weight", E);
        }
    }
}

/* ---- mimo2 --------------------------------------------------------------------- */

static void meta_mimo2(twin_ctx *t)
{
    t->per_layer_heads = 1; /* per-layer KV heads (sliding 8, full 4 in V2-Flash) */
}

/* MiMo-V2: K and V heads of different sizes, leading dense layers, then
 * sigmoid-routed experts with a selection bias */
static void tensors_mimo2(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm(t, il, "blk.%d.attn_norm.weight", t->n_embd);
        qkvo(t, il, t->lhk[0], t->lhv[0], t->n_head[il] * t->lhv[0]);
        norm(t, il, "blk.%d.ffn_norm.weight", t->n_embd);
        if ((uint32_t)il < t->n_dense_lead || !t->n_expert) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        experts(t, il);
        twin_tensor(t, il, "blk.%d.exp_probs_b.bias", F, t->n_expert, 0, 0);
    }
}

/* ---- exaone-moe ---------------------------------------------------------------- */

/* K-EXAONE: EXAONE 4 attention (pre-norm here) over a DeepSeek-style MoE:
 * leading dense layers, sigmoid routing with a selection bias, shared
 * experts.  expert_gating_func has no default: llama.cpp requires it. */
static void meta_exaone_moe(twin_ctx *t)
{
    kvp_gguf_w_u32(t->w, twin_key(t, "expert_gating_func"), 2); /* sigmoid */
}

static void tensors_exaone_moe(twin_ctx *t)
{
    uint64_t hd = t->lhk[0], shexp = t->n_ff_shexp ? t->n_ff_shexp : t->n_ff_exp;
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        qkvo(t, il, hd, hd, t->n_head[il] * hd);
        norm(t, il, "blk.%d.attn_norm.weight", t->n_embd);
        norm(t, il, "blk.%d.attn_q_norm.weight", hd);
        norm(t, il, "blk.%d.attn_k_norm.weight", hd);
        norm(t, il, "blk.%d.ffn_norm.weight", t->n_embd);
        if ((uint32_t)il < t->n_dense_lead || !t->n_expert) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        experts(t, il);
        twin_t_shexp(t, il, shexp);
    }
}

/* ---- afmoe, muse-glimmer ---------------------------------------------------------- */

/* the sandwich-normed, gated attention block both share */
static void gated_attention(twin_ctx *t, int il)
{
    uint64_t hd = t->lhk[0];
    norm(t, il, "blk.%d.attn_norm.weight", t->n_embd);
    norm(t, il, "blk.%d.post_attention_norm.weight", t->n_embd);
    qkvo(t, il, hd, t->lhv[0], t->n_head[il] * hd);
    norm(t, il, "blk.%d.attn_q_norm.weight", hd);
    norm(t, il, "blk.%d.attn_k_norm.weight", hd);
    twin_tensor(t, il, "blk.%d.attn_gate.weight", W, t->n_embd, t->n_head[il] * hd, 0);
    norm(t, il, "blk.%d.ffn_norm.weight", t->n_embd);
    norm(t, il, "blk.%d.post_ffw_norm.weight", t->n_embd);
}

/* AFMoE (Arcee Trinity): leading dense layers, then experts with a
 * selection bias and n_expert_shared shared experts of the expert width */
static void tensors_afmoe(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        gated_attention(t, il);
        if ((uint32_t)il < t->n_dense_lead || !t->n_expert) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        experts(t, il);
        twin_tensor(t, il, "blk.%d.exp_probs_b.bias", F, t->n_expert, 0, 0);
        if (t->n_expert_shared)
            twin_t_shexp(t, il, t->n_ff_exp * t->n_expert_shared);
    }
}

/* logit_scale has no default in muse-glimmer (and granite_swa, cohere2moe) */
static void meta_logit_scale(twin_ctx *t)
{
    kvp_gguf_w_f32(t->w, twin_key(t, "logit_scale"), 1.0f);
}

static void tensors_muse_glimmer(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        gated_attention(t, il);
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* ---- smallthinker ------------------------------------------------------------------ */

/* SmallThinker: a window whenever the key is > 0, but always 4096 tokens */
static int rules_smallthinker(gguf_rd *r)
{
    if (r->n_swa)
        r->n_swa = 4096;
    return 0;
}

/* the converter always writes the router's function (softmax or sigmoid);
 * without it llama.cpp's MoE graph aborts */
static void meta_smallthinker(twin_ctx *t)
{
    kvp_gguf_w_u32(t->w, twin_key(t, "expert_gating_func"), 2); /* sigmoid */
}

/* every layer MoE (primary experts only) */
static void tensors_smallthinker(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm(t, il, "blk.%d.attn_norm.weight", t->n_embd);
        qkvo(t, il, t->lhk[0], t->lhv[0], t->n_head[il] * t->lhk[0]);
        norm(t, il, "blk.%d.ffn_norm.weight", t->n_embd);
        experts(t, il);
    }
}

/* ---- laguna -------------------------------------------------------------------------- */

static void meta_laguna(twin_ctx *t)
{
    t->per_layer_heads = 1; /* n_head varies between full and sliding layers */
    if (!t->n_dense_lead) /* required; twin_meta writes it when not 0 */
        kvp_gguf_w_u32(t->w, twin_key(t, "leading_dense_block_count"), 0);
    if (!t->n_expert) /* expert_feed_forward_length is required */
        kvp_gguf_w_u32(t->w, twin_key(t, "expert_feed_forward_length"), (uint32_t)t->n_ff_exp);
}

/* Laguna: per-layer query heads, a per-head attention gate, leading dense
 * layers, then experts with a bias and one always-on shared expert */
static void tensors_laguna(twin_ctx *t)
{
    uint64_t hd = t->lhk[0];
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm(t, il, "blk.%d.attn_norm.weight", t->n_embd);
        qkvo(t, il, hd, t->lhv[0], t->n_head[il] * hd);
        norm(t, il, "blk.%d.attn_q_norm.weight", hd);
        norm(t, il, "blk.%d.attn_k_norm.weight", hd);
        twin_tensor(t, il, "blk.%d.attn_gate.weight", W, t->n_embd, t->n_head[il], 0);
        norm(t, il, "blk.%d.ffn_norm.weight", t->n_embd);
        if ((uint32_t)il < t->n_dense_lead || !t->n_expert) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        experts(t, il);
        twin_tensor(t, il, "blk.%d.exp_probs_b.bias", F, t->n_expert, 0, 0);
        twin_t_shexp(t, il, t->n_ff_shexp ? t->n_ff_shexp : t->n_ff_exp);
    }
}

/* ---- plamo3 ------------------------------------------------------------------------- */

static void meta_plamo3(twin_ctx *t)
{
    t->per_layer_heads = 1; /* load_arch_tensors reads n_head(il), n_head_kv(il) */
}

/* PLaMo 3: fused QKV, sandwich norms (the post norms have no .weight
 * suffix), ffn_up holding gate and up */
static void tensors_plamo3(twin_ctx *t)
{
    uint64_t hk = t->lhk[0], hv = t->lhv[0];
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t h = t->n_head[il], kv = t->n_kv[il];
        norm(t, il, "blk.%d.attn_norm.weight", t->n_embd);
        twin_tensor(t, il, "blk.%d.attn_qkv.weight", W, t->n_embd, h * hk + kv * hk + kv * hv, 0);
        norm(t, il, "blk.%d.attn_q_norm.weight", hk);
        norm(t, il, "blk.%d.attn_k_norm.weight", hk);
        twin_tensor(t, il, "blk.%d.attn_output.weight", W, h * hv, t->n_embd, 0);
        norm(t, il, "blk.%d.post_attention_norm", t->n_embd);
        norm(t, il, "blk.%d.ffn_norm.weight", t->n_embd);
        norm(t, il, "blk.%d.post_ffw_norm", t->n_embd);
        twin_tensor(t, il, "blk.%d.ffn_up.weight", W, t->n_embd, 2 * t->n_ff, 0);
        twin_tensor(t, il, "blk.%d.ffn_down.weight", W, t->n_ff, t->n_embd, 0);
    }
}

/* ---- granite_swa ----------------------------------------------------------------------- */

static int rules_array(gguf_rd *r) { return need_swa_array(r); }

/* Granite with sliding layers: attention sinks on every layer, a dense
 * FFN, or experts of feed_forward_length (granite's spelling) */
static void tensors_granite_swa(twin_ctx *t)
{
    uint64_t hd = t->lhk[0];
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm(t, il, "blk.%d.attn_norm.weight", t->n_embd);
        qkvo(t, il, hd, t->lhv[0], t->n_head[il] * hd);
        twin_tensor(t, il, "blk.%d.attn_sinks.weight", F, t->n_head[il], 0, 0);
        norm(t, il, "blk.%d.ffn_norm.weight", t->n_embd);
        if (t->n_expert)
            twin_t_moe(t, il, t->n_ff);
        else
            twin_t_ffn(t, il, t->n_ff);
    }
}

/* ---- maple --------------------------------------------------------------------------- */

/* swiglu_clamp_exp is required (get_key_or_arr): the reference's 7.0 */
static void meta_maple(twin_ctx *t)
{
    kvp_gguf_w_f32(t->w, twin_key(t, "swiglu_clamp_exp"), 7.0f);
}

/* every layer MoE, QK norms */
static void tensors_maple(twin_ctx *t)
{
    uint64_t hd = t->lhk[0];
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm(t, il, "blk.%d.attn_norm.weight", t->n_embd);
        qkvo(t, il, hd, hd, t->n_head[il] * hd);
        norm(t, il, "blk.%d.attn_q_norm.weight", hd);
        norm(t, il, "blk.%d.attn_k_norm.weight", hd);
        norm(t, il, "blk.%d.ffn_norm.weight", t->n_embd);
        experts(t, il);
    }
}

/* ---- step35 ------------------------------------------------------------------------- */

static void meta_step35(twin_ctx *t)
{
    t->per_layer_heads = 1; /* sliding layers have their own head and group counts */
    if (!t->n_expert) /* expert_feed_forward_length is required */
        kvp_gguf_w_u32(t->w, twin_key(t, "expert_feed_forward_length"), (uint32_t)t->n_ff_exp);
}

/* Step 3.5: per-layer heads; the FFN is optional tensor by tensor, so the
 * leading layers are dense and the rest experts with a bias and a shared
 * expert, as the checkpoint has them */
static void tensors_step35(twin_ctx *t)
{
    uint64_t hk = t->lhk[0], hv = t->lhv[0];
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm(t, il, "blk.%d.attn_norm.weight", t->n_embd);
        qkvo(t, il, hk, hv, t->n_head[il] * hv);
        norm(t, il, "blk.%d.ffn_norm.weight", t->n_embd);
        if ((uint32_t)il < t->n_dense_lead || !t->n_expert) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        experts(t, il);
        twin_tensor(t, il, "blk.%d.exp_probs_b.bias", F, t->n_expert, 0, 0);
        if (t->n_ff_shexp)
            twin_t_shexp(t, il, t->n_ff_shexp);
    }
}

/* ---- spark2_5 ------------------------------------------------------------------------- */

static void meta_spark2_5(twin_ctx *t)
{
    t->per_layer_heads = 1; /* n_head(il), n_head_kv(il), head sizes by layer type */
}

/* Spark 2.5: per-layer heads and head sizes, a per-head attention gate */
static void tensors_spark2_5(twin_ctx *t)
{
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        uint64_t hk = t->lhk[il], h = t->n_head[il];
        norm(t, il, "blk.%d.attn_norm.weight", t->n_embd);
        qkvo(t, il, hk, t->lhv[il], h * hk);
        twin_tensor(t, il, "blk.%d.attn_gate.weight", W, t->n_embd, h, 0);
        norm(t, il, "blk.%d.ffn_norm.weight", t->n_embd);
        twin_t_ffn(t, il, t->n_ff);
    }
}

/* ---- mellum ----------------------------------------------------------------------------- */

/* Mellum: every layer MoE, QK norms */
static void tensors_mellum(twin_ctx *t)
{
    uint64_t hd = t->lhk[0];
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm(t, il, "blk.%d.attn_norm.weight", t->n_embd);
        qkvo(t, il, hd, t->lhv[0], t->n_head[il] * hd);
        norm(t, il, "blk.%d.attn_k_norm.weight", hd);
        norm(t, il, "blk.%d.attn_q_norm.weight", hd);
        norm(t, il, "blk.%d.ffn_norm.weight", t->n_embd);
        experts(t, il);
    }
}

/* ---- cohere2moe (the reader row is the core one, lib/twin_arch.c) ----------------------- */

void twin_meta_cohere2moe(twin_ctx *t)
{
    meta_logit_scale(t);
    /* leading_dense_block_count is required (twin_meta writes it when not 0) */
    if (!t->n_dense_lead)
        kvp_gguf_w_u32(t->w, twin_key(t, "leading_dense_block_count"), 0);
}

/* Cohere2 MoE: parallel attention and FFN after one norm, leading dense
 * layers, then experts and n_expert_shared shared experts */
void twin_tensors_cohere2moe(twin_ctx *t)
{
    uint64_t hd = t->lhk[0];
    twin_t_embd(t, TW_OUTPUT, NULL);
    for (int il = 0; il < (int)t->n_layer; il++) {
        norm(t, il, "blk.%d.attn_norm.weight", t->n_embd);
        qkvo(t, il, hd, t->lhv[0], t->n_head[il] * hd);
        if ((uint32_t)il < t->n_dense_lead || !t->n_expert) {
            twin_t_ffn(t, il, t->n_ff);
            continue;
        }
        experts(t, il);
        if (t->n_expert_shared)
            twin_t_shexp(t, il, t->n_ff_shexp ? t->n_ff_shexp : t->n_ff_exp * t->n_expert_shared);
    }
}

/* ---- the table ------------------------------------------------------------------- */

#define NONE_ RECR_NONE, STATE_NONE, KVP_LAYER_FULL

static const twin_arch arches[] = {
    /* gguf, family, swa, period, dense_first, n_swa default, recurrent, state,
     * recurrent kind, mla, embd_tied, kv_from_start, meta, tensors, rules, finish */
    {"exaone4", "exaone4", SWA_PERIOD_IF_KEY, 4, 0, 4096, NONE_, 0, 1, -1, NULL, tensors_exaone4,
     rules_exaone4, NULL},
    {"gemma4", "gemma4", SWA_PERIOD, 0, 0, 0, NONE_, 0, 0, TWIN_KV_FROM_MODEL, meta_gemma4,
     tensors_gemma4, rules_gemma4, NULL},
    {"mimo2", "mimo2", SWA_PERIOD, 0, 0, 0, NONE_, 0, 0, -1, meta_mimo2, tensors_mimo2,
     rules_array, NULL},
    {"exaone-moe", "exaone-moe", SWA_PERIOD, 4, 0, 0, NONE_, 0, 0, -1, meta_exaone_moe,
     tensors_exaone_moe, NULL, NULL},
    {"afmoe", "afmoe", SWA_PERIOD_IF_KEY, 4, 0, 0, NONE_, 0, 0, -1, NULL, tensors_afmoe, NULL,
     NULL},
    {"muse-glimmer", "muse-glimmer", SWA_PERIOD, 4, 0, 0, NONE_, 0, 0, -1, meta_logit_scale,
     tensors_muse_glimmer, NULL, NULL},
    {"smallthinker", "smallthinker", SWA_PERIOD_IF_KEY, 4, 1, 0, NONE_, 0, 0, -1,
     meta_smallthinker, tensors_smallthinker, rules_smallthinker, NULL},
    {"laguna", "laguna", SWA_PERIOD_IF_KEY, 4, 1, 0, NONE_, 0, 0, -1, meta_laguna,
     tensors_laguna, NULL, NULL},
    {"plamo3", "plamo3", SWA_PERIOD_IF_KEY, 8, 0, 0, NONE_, 0, 0, -1, meta_plamo3,
     tensors_plamo3, NULL, NULL},
    {"granite_swa", "granite-swa", SWA_PERIOD, 0, 0, 0, NONE_, 0, 0, -1, meta_logit_scale,
     tensors_granite_swa, rules_array, NULL},
    {"maple", "maple", SWA_PERIOD, 0, 0, 0, NONE_, 0, 0, -1, meta_maple, tensors_maple,
     rules_array, NULL},
    {"step35", "step35", SWA_PERIOD, 0, 0, 0, NONE_, 0, 0, -1, meta_step35, tensors_step35,
     rules_array, NULL},
    {"spark2_5", "spark2_5", SWA_PERIOD, 0, 0, 0, NONE_, 0, 0, -1, meta_spark2_5,
     tensors_spark2_5, rules_array, NULL},
    {"mellum", "mellum", SWA_PERIOD_IF_KEY, 4, 0, 0, NONE_, 0, 0, -1, NULL, tensors_mellum, NULL,
     NULL},
    /* Gemma 4's drafter: every layer is a nextn layer whose cache entries are
     * the target context's (create_memory's share callback), so the reader
     * refuses it and no twin is written */
    {"gemma4-assistant", "gemma4", SWA_PERIOD, 0, 0, 0, NONE_, 0, 0, -1, NULL, NULL, NULL, NULL},
};

static const twin_refusal refused[] = {
    {"gemma4-assistant", "a drafter sharing its target's cache"},
    {NULL, NULL},
};

const twin_arch_group twin_group_windows = {.arches = arches, .n = sizeof arches / sizeof arches[0], .refused = refused,};
