/* azure.c - placeholder: the azure reader is being written. */
#include <string.h>

#include "trace_int.h"

int wl_read_azure(const char *path, uint32_t bs, kvp_workload *w, kvp_error *err)
{
    (void)bs;
    memset(w, 0, sizeof *w);
    return kvp_fail(err, KVP_EINPUT, "%s: the azure reader is not written yet", path);
}
