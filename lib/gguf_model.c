/* gguf_model.c - placeholder until the GGUF metadata reader lands. */
#include "kvp_int.h"

int kvp_model_from_gguf(const char *path, kvp_model **out, kvp_error *err)
{
    (void)out;
    return kvp_fail(err, KVP_EINPUT, "%s: GGUF input is not supported yet", path);
}
