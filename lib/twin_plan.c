/* twin_plan.c - from a kvp_model to the shapes a shape twin is written
 * with: what llama.cpp keeps globally (head sizes, window, state sizes),
 * what it keeps per layer (head counts, FFN widths, which layers slide or
 * recur), and the sizes --kv-only shrinks.
 *
 * A model llama.cpp could not represent is refused here with one line: two
 * different windows, full layers of different head sizes, recurrent layers
 * in an architecture without them, and so on.  Values the model does not
 * carry because they never change the cache (Mamba's dt rank, the split of
 * an MLA latent into rank and rope) take the values real checkpoints use,
 * and the comments say which. */
#include <stdlib.h>
#include <string.h>

#include "twin.h"

/* --kv-only sizes: small, but large enough for every graph llama.cpp
 * builds (top-k over experts, FFN matmuls). */
enum { KVONLY_EMBD = 256, KVONLY_VOCAB = 256, KVONLY_FF = 64 };

static int is_attn_kind(kvp_layer_kind k)
{
    return k == KVP_LAYER_FULL || k == KVP_LAYER_SLIDING || k == KVP_LAYER_CHUNKED ||
           k == KVP_LAYER_MLA || k == KVP_LAYER_SHARED;
}

static int fail(twin_ctx *t, kvp_error *err, const char *what, uint32_t il)
{
    return kvp_fail(err, KVP_EINPUT, "%s: llama.cpp's %s cannot hold this model: %s (layer %u)",
                    t->m->name, t->a->gguf, what, il);
}

static int alloc(twin_ctx *t, kvp_error *err)
{
    uint32_t n = t->n_layer;
    t->n_head = calloc(n, sizeof *t->n_head);
    t->n_kv = calloc(n, sizeof *t->n_kv);
    t->lhk = calloc(n, sizeof *t->lhk);
    t->lhv = calloc(n, sizeof *t->lhv);
    t->ff = calloc(n, sizeof *t->ff);
    t->is_attn = calloc(n, 1);
    t->is_swa = calloc(n, 1);
    t->is_recr = calloc(n, 1);
    t->tmp = calloc(n, sizeof *t->tmp);
    if (!t->tmp || !t->n_head || !t->n_kv || !t->lhk || !t->lhv || !t->ff || !t->is_attn ||
        !t->is_swa || !t->is_recr)
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", t->m->name);
    return 0;
}

void twin_plan_free(twin_ctx *t)
{
    free(t->n_head);
    free(t->n_kv);
    free(t->lhk);
    free(t->lhv);
    free(t->ff);
    free(t->is_attn);
    free(t->is_swa);
    free(t->is_recr);
    free(t->tmp);
}

/* Does the layer's kind fit the architecture's recurrent rule? */
static int check_kind(twin_ctx *t, uint32_t il, kvp_error *err)
{
    const kvp_layer *L = &t->m->layers[il];
    const twin_arch *a = t->a;
    int attn = t->is_attn[il], recr = t->is_recr[il];
    if (recr && a->recr == RECR_NONE)
        return fail(t, err, "a recurrent layer in an attention-only architecture", il);
    if (attn && a->recr == RECR_ALL)
        return fail(t, err, "an attention layer in an attention-free architecture", il);
    if (a->recr == RECR_BOTH && !(attn && recr))
        return fail(t, err, "every layer must run attention and Mamba2 side by side", il);
    /* deci reads its KV-less layers as none (recurrent kind none, no state) */
    if (!attn && !recr && a->recr != RECR_KV0_FF0 && a->recr_kind != KVP_LAYER_NONE)
        return fail(t, err, "a layer without attention or state", il);
    if (attn && !L->n_kv_heads && (a->recr == RECR_KV0 || a->recr == RECR_KV0_FF0))
        return fail(t, err, "an attention layer without KV heads would read as recurrent", il);
    /* dots3note's sliding layers are MLA too: sliding layers of a latent (mla_heads, no V) */
    int mla = L->kind == KVP_LAYER_MLA ||
              (a->mla && L->kind == KVP_LAYER_SLIDING && L->mla_heads && !L->head_dim_v);
    if (mla != (a->mla != 0) && attn && L->kind != KVP_LAYER_SHARED)
        return fail(t, err, a->mla ? "a non-MLA attention layer" : "an MLA layer", il);
    int32_t from = a->kv_from_start == TWIN_KV_FROM_MODEL ? (int32_t)t->kv_from
                                                         : a->kv_from_start;
    int shared_here = from >= 0 && il >= (uint32_t)from;
    if ((L->kind == KVP_LAYER_SHARED) != shared_here)
        return fail(t, err, shared_here ? "llama.cpp shares this layer's cache"
                                        : "a shared-KV layer where llama.cpp keeps its own", il);
    return 0;
}

/* One head size (or window) for all layers of a class: llama.cpp keeps it
 * globally.  *slot == 0 means not seen yet. */
static int same(twin_ctx *t, kvp_error *err, uint32_t *slot, uint32_t v, const char *what,
                uint32_t il)
{
    if (*slot && *slot != v)
        return fail(t, err, what, il);
    *slot = v;
    return 0;
}

static int plan_attention(twin_ctx *t, uint32_t il, kvp_error *err)
{
    const kvp_layer *L = &t->m->layers[il];
    t->n_kv[il] = L->n_kv_heads;
    t->n_head[il] = L->n_head ? L->n_head : (L->n_kv_heads ? L->n_kv_heads : 1);
    t->lhk[il] = L->head_dim_k;
    t->lhv[il] = L->head_dim_v;
    if (!t->n_head0) {
        t->n_head0 = t->n_head[il];
        t->n_kv0 = t->n_kv[il];
    }
    /* most load_arch_tensors size every layer's projections from layer 0's
     * head counts; only the hybrids with per-layer KV read them per layer */
    int per_layer_ok = t->a->recr == RECR_KV0 || t->a->recr == RECR_KV0_FF0;
    if (!per_layer_ok && !t->heads_vary_at &&
        (t->n_head[il] != t->n_head0 || t->n_kv[il] != t->n_kv0))
        t->heads_vary_at = il + 1; /* kvp_twin_write decides, once the writer has said */
    if (L->kind == KVP_LAYER_MLA)
        return same(t, err, &t->hk, L->head_dim_k, "MLA layers of different latent sizes", il) ||
               same(t, err, &t->mla_k, L->mla_k_head_dim, "MLA layers of different heads", il) ||
               same(t, err, &t->mla_v, L->mla_v_head_dim, "MLA layers of different heads", il);
    if (t->is_swa[il])
        return same(t, err, &t->hk_swa, L->head_dim_k, "sliding layers of different head sizes",
                    il) ||
               same(t, err, &t->hv_swa, L->head_dim_v, "sliding layers of different head sizes",
                    il) ||
               same(t, err, &t->n_swa, L->window, "sliding layers of different windows", il);
    return same(t, err, &t->hk, L->head_dim_k, "full layers of different head sizes", il) ||
           same(t, err, &t->hv, L->head_dim_v, "full layers of different head sizes", il);
}

static int plan_state(twin_ctx *t, uint32_t il, kvp_error *err)
{
    const kvp_layer *L = &t->m->layers[il];
    if (t->d_inner && (t->d_inner != L->d_inner || t->d_conv != L->d_conv ||
                       t->d_state != L->d_state || t->n_group != L->n_group))
        return fail(t, err, "recurrent layers of different state sizes", il);
    t->d_inner = L->d_inner;
    t->d_conv = L->d_conv;
    t->d_state = L->d_state;
    t->n_group = L->n_group;
    return 0;
}

static int plan_layers(twin_ctx *t, kvp_error *err)
{
    t->kv_from = t->n_layer;
    for (uint32_t il = t->n_layer; il-- > 0 && t->m->layers[il].kind == KVP_LAYER_SHARED;)
        t->kv_from = il; /* the trailing run of shared layers */
    for (uint32_t il = 0; il < t->n_layer; il++) {
        const kvp_layer *L = &t->m->layers[il];
        t->is_attn[il] = (uint8_t)is_attn_kind(L->kind);
        t->is_recr[il] = L->kind == KVP_LAYER_LINEAR || L->kind == KVP_LAYER_MAMBA || L->d_inner;
        t->is_swa[il] = t->a->swa != SWA_NONE &&
                        (L->kind == KVP_LAYER_SLIDING || L->kind == KVP_LAYER_CHUNKED ||
                         (L->kind == KVP_LAYER_SHARED && L->window));
        if (check_kind(t, il, err) || (t->is_attn[il] && plan_attention(t, il, err)) ||
            (t->is_recr[il] && plan_state(t, il, err)))
            return -1;
        if (!t->is_attn[il] && !t->is_recr[il])
            t->ff[il] = 1; /* an MLP-only block: its FFN width is set below */
    }
    if (t->a->swa == SWA_PERIOD && !t->n_swa) /* create_memory asserts is_swa_any() */
        return kvp_fail(err, KVP_EINPUT, "%s: llama.cpp's %s needs at least one sliding-window "
                        "layer", t->m->name, t->a->gguf);
    if (!t->hk) { /* every attention layer slides */
        t->hk = t->hk_swa;
        t->hv = t->hv_swa;
    }
    if (!t->hk_swa) {
        t->hk_swa = t->hk;
        t->hv_swa = t->hv;
    }
    return 0;
}

/* The rope dimensions of an MLA latent: the layers say, when the model
 * knew; else qk_rope_head_dim = 64, as in every DeepSeek-V2/V3 and Kimi K2. */
static int plan_mla(twin_ctx *t, kvp_error *err)
{
    if (!t->a->mla)
        return 0;
    uint64_t rope = 0;
    for (uint32_t il = 0; il < t->m->n_layers && !rope; il++)
        rope = t->m->layers[il].kind == KVP_LAYER_MLA ? t->m->layers[il].mla_rope_dim : 0;
    if (!rope)
        rope = t->m->n_rot ? t->m->n_rot : 64;
    if (rope >= t->hk || t->mla_k <= rope)
        return kvp_fail(err, KVP_EINPUT, "%s: the MLA latent (%u) and head size (%u) leave no room "
                        "for %llu rope dimensions", t->m->name, t->hk, t->mla_k,
                        (unsigned long long)rope);
    t->mla_rope = (uint32_t)rope;
    t->kv_lora_rank = t->hk - t->mla_rope;
    t->q_lora_rank = t->m->q_lora_rank;
    t->n_rot = t->mla_rope;
    return 0;
}

/* ssm.time_step_rank never enters the state: the model's SSM head count
 * when it knows it; else the Gated DeltaNet value heads (d_inner / head
 * size, llama.cpp assumes key and value heads of one size), Mamba2's heads
 * of 64 channels, Mamba1's ceil(n_embd / 16). */
static int plan_dt_rank(twin_ctx *t, uint64_t n_embd, kvp_error *err)
{
    uint32_t heads = 0;
    if (!t->d_inner || t->a->state != STATE_SSM)
        return 0;
    for (uint32_t il = 0; il < t->m->n_layers && !heads; il++)
        heads = t->m->layers[il].d_inner ? t->m->layers[il].n_ssm_heads : 0;
    if (heads && t->d_inner % heads == 0) {
        t->dt_rank = heads; /* the config's own head count (PLaMo2: with no groups) */
    } else if (t->a->recr == RECR_INTERVAL) {
        if (!t->d_state || t->d_inner % t->d_state)
            return kvp_fail(err, KVP_EINPUT, "%s: Gated DeltaNet d_inner %llu is not a whole "
                            "number of %u-wide heads", t->m->name,
                            (unsigned long long)t->d_inner, t->d_state);
        t->dt_rank = (uint32_t)(t->d_inner / t->d_state);
    } else if (t->n_group) {
        uint32_t hd = 64;
        while (hd > 1 && t->d_inner % hd)
            hd /= 2;
        t->dt_rank = (uint32_t)(t->d_inner / hd);
        if (t->d_inner % t->n_group)
            return kvp_fail(err, KVP_EINPUT, "%s: Mamba2 d_inner %llu is not divisible by its %u "
                            "groups", t->m->name, (unsigned long long)t->d_inner, t->n_group);
    } else {
        t->dt_rank = (uint32_t)((n_embd + 15) / 16);
    }
    /* a Mamba mixer sized from n_embd (qwen4exp pins n_embd for its PLE row, not this) */
    if (t->a->embd_tied && t->a->state == STATE_SSM && t->a->recr_kind == KVP_LAYER_MAMBA &&
        t->d_inner != 2 * n_embd)
        return kvp_fail(err, KVP_EINPUT, "%s: llama.cpp's %s needs d_inner = 2 x hidden_size "
                        "(%llu != 2 x %llu)", t->m->name, t->a->gguf,
                        (unsigned long long)t->d_inner, (unsigned long long)n_embd);
    return 0;
}

/* The dimensions that never change the cache, real or shrunk. */
static int plan_dims(twin_ctx *t, kvp_error *err)
{
    const kvp_model *m = t->m;
    if (!m->hidden_size)
        return kvp_fail(err, KVP_EINPUT, "%s: hidden_size is unknown; a twin needs it",
                        m->name);
    if (t->a->state == STATE_SHORTCONV && t->d_inner && t->d_inner != m->hidden_size)
        return kvp_fail(err, KVP_EINPUT, "%s: LFM2's conv state spans hidden_size", m->name);
    /* KDA and lightning attention states are sized by layer 0's head count
     * (n_embd_r, n_embd_s in llama-hparams.cpp) */
    if (t->a->state == STATE_KDA && t->d_inner &&
        (t->n_group != t->n_head0 || t->d_inner != (uint64_t)t->n_group * t->d_state))
        return kvp_fail(err, KVP_EINPUT, "%s: llama.cpp's %s sizes the KDA state by the attention "
                        "head count (%u), and this model's KDA has %u heads", m->name,
                        t->a->gguf, t->n_head0, t->n_group);
    if (t->a->state == STATE_LA && t->d_inner &&
        (t->d_conv > 1 || t->d_state != t->hk || t->d_inner != (uint64_t)t->n_head0 * t->hk))
        return kvp_fail(err, KVP_EINPUT, "%s: llama.cpp's %s keeps a lightning-attention state "
                        "of heads x head_dim^2 of the attention layers' shape", m->name,
                        t->a->gguf);
    if (plan_dt_rank(t, m->hidden_size, err))
        return -1;
    t->n_embd = m->hidden_size;
    if (t->kv_only && !t->a->embd_tied && t->n_embd > KVONLY_EMBD)
        t->n_embd = KVONLY_EMBD;
    t->n_vocab = t->kv_only && t->a->embd_tied < 2 && (!m->n_vocab || m->n_vocab > KVONLY_VOCAB)
                     ? KVONLY_VOCAB
                     : m->n_vocab;
    if (!t->n_vocab)
        return kvp_fail(err, KVP_EINPUT, "%s: vocab_size is unknown; a full twin needs it "
                        "(--kv-only does not)", m->name);
    t->n_ff = m->n_ff ? m->n_ff : m->n_ff_exp;
    t->n_ff_exp = m->n_ff_exp ? m->n_ff_exp : t->n_ff;
    t->n_ff_shexp = m->n_ff_shexp;
    t->n_expert = m->n_expert;
    t->n_expert_used = m->n_expert_used ? m->n_expert_used : (m->n_expert ? 1 : 0);
    t->n_expert_shared = m->n_expert_shared;
    t->n_dense_lead = m->n_layer_dense_lead;
    if (!t->n_rot)
        t->n_rot = m->n_rot;
    if (t->kv_only) { /* never grow a small model */
        t->n_ff = !t->n_ff || t->n_ff > KVONLY_FF ? KVONLY_FF : t->n_ff;
        t->n_ff_exp = !t->n_ff_exp || t->n_ff_exp > KVONLY_FF ? KVONLY_FF : t->n_ff_exp;
        t->n_ff_shexp = t->n_ff_shexp > KVONLY_FF ? KVONLY_FF : t->n_ff_shexp;
        if (t->n_expert) {
            t->n_expert_used = t->n_expert_used < 2 ? t->n_expert_used : 2;
            t->n_expert = t->n_expert_used + 1 < t->n_expert ? t->n_expert_used + 1 : t->n_expert;
        }
    }
    if (!t->n_ff && t->a->recr != RECR_ALL) /* Mamba blocks have no FFN */
        return kvp_fail(err, KVP_EINPUT, "%s: intermediate_size is unknown; a full twin needs it "
                        "(--kv-only does not)", m->name);
    for (uint32_t il = 0; il < t->n_layer; il++)
        t->ff[il] = t->ff[il] ? t->n_ff : 0;
    return 0;
}

int twin_plan(twin_ctx *t, const kvp_model *m, const twin_arch *a, int kv_only, kvp_error *err)
{
    memset(t, 0, sizeof *t);
    t->m = m;
    t->a = a;
    t->kv_only = kv_only;
    t->n_layer = m->n_layers;
    if (m->n_layers == 0 || m->n_layers > 512) /* LLAMA_MAX_LAYERS */
        return kvp_fail(err, KVP_EINPUT, "%s: %u layers; llama.cpp loads 1 to 512", m->name,
                        m->n_layers);
    return alloc(t, err) || plan_layers(t, err) || plan_mla(t, err) || plan_dims(t, err) ? -1
                                                                                          : 0;
}
