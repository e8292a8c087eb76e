/* twin.c - kvp_twin_write: a sparse "shape twin" GGUF of a model, which
 * the real llama.cpp loads and creates a context for without any weights.
 *
 * The twin has llama.cpp's metadata for the model's architecture and the
 * full tensor list with real shapes; the data section is a hole (the writer
 * extends the file with ftruncate), so a 16 GB twin costs a few KB of disk
 * and, mapped, loads in about a second.  With kv_only the sizes that never
 * change the cache (n_embd where the graph allows, FFN and expert widths,
 * the expert and vocabulary counts) are shrunk; every value that changes
 * the KV cache or the recurrent state stays real.  The steps: resolve the
 * shapes (twin_plan.c), write the metadata (twin_meta.c) and the tensors
 * (twin_tensors*.c), then the file. */
#include <stdio.h>

#include "twin.h"

static const twin_arch *arch_for(const kvp_model *m, kvp_error *err)
{
    const char *name = twin_gguf_name(m);
    const twin_arch *a = name ? twin_arch_find(name) : NULL;
    if (!name)
        kvp_fail(err, KVP_EINPUT, "%s: llama.cpp has no architecture for model_type \"%s\"",
                 m->name, m->arch);
    else if (!a || !a->tensors)
        kvp_fail(err, KVP_EINPUT, "%s: kvplan cannot write twins of llama.cpp's \"%s\" "
                 "architecture (kvplan archs --llama lists those it can)", m->name, name);
    return a && a->tensors ? a : NULL;
}

int kvp_twin_write(const kvp_model *m, const char *path, int kv_only, int force, kvp_error *err)
{
    if (!m || !path || !*path)
        return kvp_fail(err, KVP_EUSAGE, "twin: no model or no output path");
    const twin_arch *a = arch_for(m, err);
    twin_ctx t;
    if (!a || twin_plan(&t, m, a, kv_only, err)) {
        if (a)
            twin_plan_free(&t);
        return -1;
    }
    t.w = kvp_gguf_writer_new();
    if (!t.w) {
        twin_plan_free(&t);
        return kvp_fail(err, KVP_EINPUT, "%s: out of memory", path);
    }
    twin_meta(&t);
    a->tensors(&t);
    int rc = t.heads_vary_at && !t.per_layer_heads
                 ? kvp_fail(err, KVP_EINPUT, "%s: llama.cpp's %s cannot hold this model: attention "
                            "layers with different head counts (layer %u)", m->name, a->gguf,
                            t.heads_vary_at - 1)
                 : kvp_gguf_writer_write(t.w, path, force, err);
    kvp_gguf_writer_free(t.w);
    twin_plan_free(&t);
    return rc;
}
