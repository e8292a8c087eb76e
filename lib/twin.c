/* twin.c - placeholder until the shape-twin writer lands. */
#include "kvp_int.h"

int kvp_twin_write(const kvp_model *m, const char *path, int kv_only, int force, kvp_error *err)
{
    (void)m, (void)kv_only, (void)force;
    return kvp_fail(err, KVP_EINPUT, "%s: shape twins are not supported yet", path);
}
